#!/usr/bin/env bash
# Install the Debian 12 packages cordon needs, and nothing else.
#
#   scripts/deps.sh run    build and run cordon
#   scripts/deps.sh test   also run every test (unit, integration, browser,
#                          fuzz, sanitizers)
#
# Quiet and exit 0 when everything is present.  Otherwise, as root: apt-get
# update and install the missing packages without recommends.  Not root:
# print the exact command to run and exit 1.
set -euo pipefail

usage() {
	echo "usage: $0 run|test" >&2
	exit 2
}

[ $# -eq 1 ] || usage
mode=$1

run_pkgs=(
	meson ninja-build pkg-config gcc libc6-dev python3
	libevent-dev libyaml-dev libjson-c-dev libseccomp-dev libcap-ng-dev
	libssl-dev
	ca-certificates          # egressd's CA store for credential routes
)
test_pkgs=(
	libcmocka-dev            # unit tests
	clang libclang-rt-14-dev # libFuzzer and clang's sanitizer runtimes
	clang-format             # the format check (.clang-format)
	python3-pytest           # integration tests (run by /usr/bin/python3)
	chromium                 # browser tests
	util-linux               # setpriv
	passwd                   # useradd, for the unprivileged-user tests
	procps                   # ps, pgrep
	git                      # the sandbox test agent runs `git status`
	systemd                  # systemd-analyze, -sysusers, -tmpfiles,
	                         # -socket-activate (SU-4 unit tests)
	cmark                    # the vault note test parses notes (VA-5)
	groff-base               # groff: the installed man pages lint clean
	curl
	openssl                  # the egress route tests' test CA
	jq                       # the admin docs' jq recipes run on a trail
	e2fsprogs                # mkfs.ext4: the full-disk tests' loop image
)

case $mode in
run) want=("${run_pkgs[@]}") ;;
test)
	want=("${run_pkgs[@]}" "${test_pkgs[@]}")
	# Keep a node/npm that is already installed (from any source);
	# Debian's packages only when the commands are missing.
	command -v node >/dev/null 2>&1 || want+=(nodejs)
	command -v npm >/dev/null 2>&1 || want+=(npm)
	;;
*) usage ;;
esac

missing=()
for p in "${want[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "cordon: missing Debian packages: ${missing[*]}" >&2
	echo "cordon: install them with:" >&2
	echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
	exit 1
fi

echo "cordon: installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt/dpkg run to finish instead of failing at once.
apt_opts=(-q -o DPkg::Lock::Timeout=600)
if ! apt-get "${apt_opts[@]}" update; then
	echo "cordon: apt-get update failed; retrying once" >&2
	sleep 5
	apt-get "${apt_opts[@]}" update
fi
apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}"
