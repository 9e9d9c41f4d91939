#!/usr/bin/env bash
# Prove the README's two commands on a really fresh Debian 12: make a
# Debian 12 root with debootstrap in a temp dir, put a clean `git clone`
# of this repo (its committed HEAD) in it, and run, as root inside it,
#
#   bash scripts/demo                          until it prints the login URL
#   CORDON_FUZZ_SECONDS=5 bash scripts/test    bounded by a timeout
#
# The root is entered with systemd-nspawn when it is installed, else with
# `unshare --mount --pid --fork` and pivot_root (/proc, /dev, /sys bound
# in a private mount namespace, so nothing stays mounted on the host).  Run by
# hand, as root; it takes a while (packages, builds, every suite).  Not
# part of .ci/run.
#
# Environment: CORDON_FRESH_DIR (parent of the temp dir, /var/tmp),
# CORDON_FRESH_MIRROR (http://deb.debian.org/debian), CORDON_FRESH_TIMEOUT
# (seconds for scripts/test, 14400), CORDON_FRESH_KEEP=1 keeps the root.
# Logs: debootstrap.log, demo.log, test.log stay in the temp dir; the
# root itself is removed unless kept.  Exit status 0 iff both commands passed.
set -uo pipefail

# The whole script is one block, read before any of it runs: editing the
# file while a check runs cannot change what that check does.
{

cd "$(dirname "$0")/.." || exit 1
SRC=$PWD
MIRROR=${CORDON_FRESH_MIRROR:-http://deb.debian.org/debian}
TEST_TIMEOUT=${CORDON_FRESH_TIMEOUT:-14400}
DEMO_TIMEOUT=3600 # packages and the build come first

say() { echo "fresh-check: $*"; }
die() {
	say "$*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, chroot)"
if ! command -v debootstrap >/dev/null 2>&1; then
	say "installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=600 \
		install -y --no-install-recommends debootstrap ||
		die "apt-get install debootstrap failed"
fi

WORK=$(mktemp -d "${CORDON_FRESH_DIR:-/var/tmp}/cordon-fresh.XXXXXX") ||
	die "mktemp failed"
ROOTFS=$WORK/root
CG=
cleanup() {
	if [ -n "$CG" ]; then # empty by now: every process in it has ended
		find "$CG" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
		rmdir "$CG" 2>/dev/null || say "left $CG in place (not empty)"
	fi
	if [ "${CORDON_FRESH_KEEP:-0}" = 1 ]; then
		say "kept $WORK"
	else
		# Mounts lived only in the entered namespace: nothing to unmount.
		rm -rf --one-file-system "$ROOTFS"
	fi
}
trap cleanup EXIT

say "debootstrap bookworm into $ROOTFS ($MIRROR)"
if ! debootstrap bookworm "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
	tail -n 30 "$WORK/debootstrap.log"
	die "debootstrap failed (log: $WORK/debootstrap.log)"
fi
# What a fresh installation has: the point release, updates and security.
cat >"$ROOTFS/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://security.debian.org/debian-security bookworm-security main
EOF
cp -L /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
# The network's, not the project's: local CAs this host trusts (a proxy's)
# are trusted in the root too, by apt's ca-certificates and by npm.
extra_ca=
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
	mkdir -p "$ROOTFS/usr/local/share/ca-certificates"
	cat /usr/local/share/ca-certificates/*.crt \
		>"$ROOTFS/usr/local/share/ca-certificates/host-local.crt"
	extra_ca=/usr/local/share/ca-certificates/host-local.crt
fi

say "cloning $(git -C "$SRC" rev-parse --short HEAD) into /root/cordon"
git clone -q --no-hardlinks "$SRC" "$ROOTFS/root/cordon" ||
	die "git clone failed"
git -C "$ROOTFS/root/cordon" log -1 --format='fresh-check: commit %h %s'

# Run inside the root, as root, from a login-like environment.
cat >"$ROOTFS/root/fresh-run.sh" <<EOF
#!/bin/bash
set -uo pipefail
export HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
[ -n "$extra_ca" ] && export NODE_EXTRA_CA_CERTS=$extra_ca
cd /root/cordon
# 1. the demo, until it prints the login URL (into a log only root reads:
#    cordon prints no login code into output others can read)
(umask 077 && exec timeout --kill-after=10 $DEMO_TIMEOUT bash scripts/demo >/root/demo.log 2>&1) &
demo=\$!
while kill -0 "\$demo" 2>/dev/null; do
	grep -q '^cordon: dashboard http://127.0.0.1:[0-9]*/ui/login?code=' \
		/root/demo.log && break
	sleep 1
done
if grep -q '^cordon: dashboard http://' /root/demo.log; then
	echo demo-pass >/root/result
else
	echo demo-fail >/root/result
fi
kill -TERM "\$demo" 2>/dev/null # timeout passes it on to cordon
wait "\$demo"
# 2. every test
CORDON_FUZZ_SECONDS=5 timeout --kill-after=60 $TEST_TIMEOUT \
	bash scripts/test >/root/test.log 2>&1
echo "test-rc \$?" >>/root/result
EOF

# With a v1 pids hierarchy shared with this host, the root's processes
# get a group of their own: what the check starts stays apart from the
# host's cordons and is removed with the check.
v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)pids(,|$)/ { print $2; exit }' \
	/proc/self/mounts)
if [ -n "$v1" ] && [ -d "$v1" ]; then
	CG=$v1/fresh-check.$$
	mkdir "$CG" || CG=
fi
# in_cg CMD...: run CMD in that group (its descendants stay there).
in_cg() {
	if [ -n "$CG" ]; then
		sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
	else
		"$@"
	fi
}

if command -v systemd-nspawn >/dev/null 2>&1; then
	say "entering with systemd-nspawn"
	in_cg systemd-nspawn -q -D "$ROOTFS" --as-pid2 /bin/bash /root/fresh-run.sh
else
	# pivot_root, not chroot alone: the kernel refuses new user
	# namespaces (which cordon's sandbox makes) inside a chroot.
	say "entering with unshare --mount --pid --fork + pivot_root"
	in_cg unshare --mount --pid --fork --propagation private /bin/sh -ec '
		r=$1
		mount --bind "$r" "$r"
		mount --rbind /dev "$r/dev"
		mount --rbind /sys "$r/sys"
		mount -t proc proc "$r/proc"
		mount -t tmpfs -o mode=0755 tmpfs "$r/run"
		cd "$r"
		mkdir -p .oldroot
		pivot_root . .oldroot
		exec /bin/bash -c "umount -l /.oldroot && rmdir /.oldroot &&
			cd / && exec /bin/bash /root/fresh-run.sh"' sh "$ROOTFS"
fi

cp "$ROOTFS/root/demo.log" "$ROOTFS/root/test.log" "$WORK/" 2>/dev/null
result=$(cat "$ROOTFS/root/result" 2>/dev/null)
summary=$(tail -n 1 "$WORK/test.log" 2>/dev/null)
echo "---- demo.log (last lines)"
tail -n 5 "$WORK/demo.log" 2>/dev/null
echo "---- test.log (summary)"
sed -n '/^==== summary ====/,$p' "$WORK/test.log" 2>/dev/null
demo_ok=0 test_ok=0
case $result in *demo-pass*) demo_ok=1 ;; esac
case $result in *"test-rc 0"*) test_ok=1 ;; esac
say "demo: $([ $demo_ok = 1 ] && echo pass || echo FAIL);" \
	"test: $([ $test_ok = 1 ] && echo pass || echo FAIL) ($summary)"
say "logs in $WORK"
[ $demo_ok = 1 ] && [ $test_ok = 1 ]
exit
}
