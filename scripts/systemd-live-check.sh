#!/bin/bash
# cordon under a live systemd (SU-4): boots a Debian 12 root in
# systemd-nspawn, installs this tree with `meson install` into it, follows
# docs/admin-guide.md "Running under systemd" as written, and checks the
# result live, every unit (auditd, vaultd, egressd, gated@, spawner@,
# broker, sched): status, chat runs, the per-run sandbox under the spawner
# unit, a run's `cordon gate` answered by gated, a `network: proxy` run
# through egressd (the test-only --test-egress by drop-ins, removed
# after), a cron mission fired by sched, audit, vault, restarts, refused
# strangers, the dashboard's login, the journal.
#
# NOT run by CI: it downloads a Debian root with debootstrap (about 150 MB,
# a few minutes) from the mirror the host's apt is configured with.  Run
# it by hand, as root, on a Debian 12 host (the binaries are built here and
# copied into the root, so the glibc must match):
#
#	apt-get install debootstrap systemd-container
#	scripts/systemd-live-check.sh
#
# Environment:
#	CORDON_LIVE_ROOT    the container root (default /var/tmp/cordon-live-root;
#	                    a pristine copy is kept beside it, ROOT.base, and
#	                    every run starts from a fresh copy of that)
#	CORDON_LIVE_BUILD   the build dir (default build-live in this tree)
#	CORDON_LIVE_MIRROR  the Debian mirror (default: the host's apt source)
#	CORDON_LIVE_KEEP=1  leave the container root in place afterwards
#
# It prints PASS/FAIL/KNOWN lines and ends with "N passed, N failed"; the
# exit status is 0 only when nothing failed.  KNOWN lines are documented
# limits (docs/threat-model.md), reported, not failed.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${CORDON_LIVE_ROOT:-/var/tmp/cordon-live-root}
BASE=$ROOT.base
BUILD=${CORDON_LIVE_BUILD:-$SRC/build-live}
SUITE=bookworm
PKGS=systemd,systemd-sysv,dbus,libevent-2.1-7,libyaml-0-2,libjson-c5
PKGS=$PKGS,libseccomp2,libcap-ng0,libssl3,libevent-openssl-2.1-7
PKGS=$PKGS,ca-certificates,jq,curl,git
LOG=$(mktemp -d /tmp/cordon-live-log.XXXXXX)
# systemd 252's nspawn runs the whole container under its own syscall
# allowlist, which answers landlock_*, bpf and pkey_* with EPERM: the
# daemons would refuse to start ("landlock unavailable") and the spawner's
# ptrace/bpf notifications would be outranked.  A host systemd has no
# such filter, so let them through to see what the units themselves do.
NSPAWN_SYSCALLS="landlock_create_ruleset landlock_add_rule"
NSPAWN_SYSCALLS="$NSPAWN_SYSCALLS landlock_restrict_self seccomp bpf"
NSPAWN_SYSCALLS="$NSPAWN_SYSCALLS pkey_alloc pkey_free pkey_mprotect"
NSPAWN_PID=
INIT_PID=

die() {
	echo "systemd-live-check: $*" >&2
	exit 2
}

[ "$(id -u)" -eq 0 ] || die "must run as root"
for t in debootstrap systemd-nspawn nsenter meson ninja cc openssl; do
	command -v "$t" >/dev/null || die "$t is missing"
done
. /etc/os-release
[ "${VERSION_CODENAME:-}" = "$SUITE" ] ||
	die "the host is not Debian 12 ($SUITE): the binaries would not fit"

mirror() {
	local f u
	if [ -n "${CORDON_LIVE_MIRROR:-}" ]; then
		echo "$CORDON_LIVE_MIRROR"
		return
	fi
	# The first non-security Debian source of the host's apt.
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		u=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' "$f" |
			grep -v -- -security | head -n 1)
		[ -n "$u" ] && echo "$u" && return
	done
	u=$(awk '$1 == "deb" && $3 == "'$SUITE'" { print $2; exit }' \
		/etc/apt/sources.list 2>/dev/null || true)
	[ -n "$u" ] && echo "$u" && return
	die "no Debian mirror found: set CORDON_LIVE_MIRROR"
}

stop_container() {
	local i
	if [ -n "$NSPAWN_PID" ] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
		# SIGTERM makes nspawn power the container off cleanly; a
		# container still booting may miss it, so ask again, then kill.
		for i in $(seq 60); do
			kill -0 "$NSPAWN_PID" 2>/dev/null || break
			if [ $((i % 10)) -eq 1 ]; then
				kill -TERM "$NSPAWN_PID" 2>/dev/null || true
			fi
			sleep 0.5
		done
		kill -KILL "$NSPAWN_PID" 2>/dev/null || true
		wait "$NSPAWN_PID" 2>/dev/null || true
	fi
	NSPAWN_PID=
	INIT_PID=
}

cleanup() {
	stop_container
	if [ "${CORDON_LIVE_KEEP:-0}" != 1 ]; then
		rm -rf "$ROOT"
	fi
}
trap cleanup EXIT

inside() {
	nsenter -t "$INIT_PID" -a env -i \
		PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C TZ=UTC "$@"
}

boot() {
	local i
	# --register=no --keep-unit: no machined, no system bus needed on the
	# host; --private-network: the broker's 127.0.0.1:8777 is the
	# container's own loopback.
	systemd-nspawn -D "$ROOT" -b --register=no --keep-unit \
		--private-network --console=passive \
		--system-call-filter="$NSPAWN_SYSCALLS" \
		>"$LOG/nspawn-$1.log" 2>&1 &
	NSPAWN_PID=$!
	for i in $(seq 100); do
		# The container's PID 1, once it is systemd (nspawn's first
		# child is a set-up process that exits).
		INIT_PID=$(pgrep -P "$NSPAWN_PID" -x systemd | head -n 1 || true)
		[ -n "$INIT_PID" ] && break
		sleep 0.2
	done
	[ -n "$INIT_PID" ] || die "the container did not boot: $LOG/nspawn-$1.log"
	for i in $(seq 100); do
		# systemctl needs PID 1's private socket.
		inside test -S /run/systemd/private 2>/dev/null && break
		sleep 0.2
	done
	inside timeout 90 systemctl is-system-running --wait >/dev/null || {
		inside systemctl --failed --no-pager || true
		die "the container's systemd did not come up"
	}
}

# 1. A pristine Debian root, downloaded once, and again when the package
# list changed (the list it was made with is kept in it).
if [ ! -e "$BASE/etc/os-release" ] ||
	[ "$(cat "$BASE/.cordon-live-pkgs" 2>/dev/null)" != "$PKGS" ]; then
	rm -rf "$BASE"
	debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$BASE" \
		"$(mirror)" >"$LOG/debootstrap.log" 2>&1 ||
		die "debootstrap failed: $LOG/debootstrap.log"
	echo cordonlive >"$BASE/etc/hostname"
	echo "$PKGS" >"$BASE/.cordon-live-pkgs"
fi
rm -rf "$ROOT"
cp -a "$BASE" "$ROOT"

# 2. Build and install this tree into it, as the admin guide says.
if [ ! -e "$BUILD/build.ninja" ]; then
	meson setup --prefix=/usr "$BUILD" "$SRC" >"$LOG/meson.log" 2>&1 ||
		die "meson setup failed: $LOG/meson.log"
fi
ninja -C "$BUILD" >"$LOG/ninja.log" 2>&1 || die "build failed: $LOG/ninja.log"
meson install -C "$BUILD" --destdir "$ROOT" >"$LOG/install.log" 2>&1 ||
	die "meson install failed: $LOG/install.log"
for b in "$ROOT"/usr/bin/cordon "$ROOT"/usr/libexec/cordon/*; do
	if chroot "$ROOT" ldd "${b#"$ROOT"}" | grep -q 'not found'; then
		die "${b#"$ROOT"} misses a library in the root"
	fi
done

# 3. Probes the checks use: a unix-socket client, an agent that calls
# ptrace or bpf, and an agent that reports the sandbox it finds.
install -d "$ROOT/usr/local/bin"
cat >"$LOG/unixconnect.c" <<'EOF'
/* Connects to a unix socket, sends 64 zero bytes, says what happened. */
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct sockaddr_un sa;
	struct timeval tv = {5, 0};
	char buf[64];
	ssize_t n;
	int s;

	if (argc != 2)
		return 2;
	memset(&sa, 0, sizeof(sa));
	memset(buf, 0, sizeof(buf));
	sa.sun_family = AF_UNIX;
	strncpy(sa.sun_path, argv[1], sizeof(sa.sun_path) - 1);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1) {
		printf("socket: %s\n", strerror(errno));
		return 1;
	}
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		printf("connect: %s\n", strerror(errno));
		return 1;
	}
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)send(s, buf, sizeof(buf), MSG_NOSIGNAL);
	n = recv(s, buf, sizeof(buf), 0);
	if (n == 0 || (n == -1 && errno == ECONNRESET)) {
		printf("connected, then closed by the server\n");
		return 0;
	}
	printf("connected, still open\n");
	return 3;
}
EOF
cat >"$LOG/ptprobe.c" <<'EOF'
/* Calls ptrace(PTRACE_TRACEME), or bpf() with "bpf": both are refused to
 * agents by a seccomp notification that ends the run. */
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	long r;

	printf("calling %s\n", argc > 1 ? argv[1] : "ptrace");
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "bpf") == 0)
		r = syscall(SYS_bpf, 0, NULL, 0);
	else
		r = ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	printf("returned %ld (%s)\n", r, r == -1 ? strerror(errno) : "ok");
	return 0;
}
EOF
cat >"$LOG/upstream.c" <<'EOF'
/* The egress checks' upstream: listens on ADDR:PORT and answers every
 * HTTP request with 200 and a fixed body, one connection at a time. */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	static const char ans[] = "HTTP/1.1 200 OK\r\nContent-Length: 21\r\n"
				  "Connection: close\r\n\r\n"
				  "cordon-live-upstream\n";
	struct sockaddr_in sa;
	char buf[4096];
	size_t have;
	ssize_t n;
	int s, c, one = 1;

	if (argc != 3)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1)
		return 2;
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(s, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(s, 16) == -1)
		return 1;
	for (;;) {
		if ((c = accept(s, NULL, NULL)) == -1)
			continue;
		have = 0;
		while (have < sizeof(buf) - 1 &&
		    (n = read(c, buf + have, sizeof(buf) - 1 - have)) > 0) {
			have += n;
			buf[have] = '\0';
			if (strstr(buf, "\r\n\r\n") != NULL)
				break;
		}
		(void)!write(c, ans, sizeof(ans) - 1);
		close(c);
	}
}
EOF
cc -O2 -Wall -Werror -o "$ROOT/usr/local/bin/unixconnect" "$LOG/unixconnect.c"
cat >"$LOG/tlsmock.c" <<'EOF'
/* The credential route's upstream: TLS on ADDR:PORT with CERT and KEY;
 * for every request it appends to LOG whether its x-api-key header was
 * KEY ("key: real"), another value ("key: other") or absent ("key:
 * none"), and answers 200 with a fixed body, one connection at a time. */
#define _GNU_SOURCE
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/ssl.h>

static const char *
verdict(const char *head, const char *key)
{
	const char *h = strcasestr(head, "\r\nx-api-key:");
	size_t n;

	if (h == NULL)
		return "none";
	h += strlen("\r\nx-api-key:");
	while (*h == ' ')
		h++;
	n = strcspn(h, "\r");
	return n == strlen(key) && strncmp(h, key, n) == 0 ? "real" : "other";
}

int
main(int argc, char **argv)
{
	static const char ans[] = "HTTP/1.1 200 OK\r\nContent-Length: 17\r\n"
				  "Connection: close\r\n\r\n"
				  "cordon-live-mock\n";
	struct sockaddr_in sa;
	char buf[16384], *end, *cl;
	size_t have, want;
	SSL_CTX *ctx;
	SSL *ssl;
	FILE *log;
	int s, c, n, one = 1;

	if (argc != 7)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL ||
	    SSL_CTX_use_certificate_chain_file(ctx, argv[3]) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, argv[4], SSL_FILETYPE_PEM) != 1)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1)
		return 2;
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(s, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(s, 16) == -1)
		return 1;
	for (;;) {
		if ((c = accept(s, NULL, NULL)) == -1)
			continue;
		ssl = SSL_new(ctx);
		SSL_set_fd(ssl, c);
		have = 0;
		end = NULL;
		if (SSL_accept(ssl) == 1) {
			while (have < sizeof(buf) - 1 &&
			    (n = SSL_read(ssl, buf + have,
				 (int)(sizeof(buf) - 1 - have))) > 0) {
				have += (size_t)n;
				buf[have] = '\0';
				if (end == NULL &&
				    (end = strstr(buf, "\r\n\r\n")) == NULL)
					continue;
				cl = strcasestr(buf, "\r\ncontent-length:");
				want = cl != NULL && cl < end
					   ? strtoul(cl + 17, NULL, 10)
					   : 0;
				if (have >= (size_t)(end + 4 - buf) + want)
					break;
			}
			if (end != NULL) {
				*end = '\0';
				if ((log = fopen(argv[5], "a")) != NULL) {
					fprintf(log, "key: %s\n",
					    verdict(buf, argv[6]));
					fclose(log);
				}
				SSL_write(ssl, ans, sizeof(ans) - 1);
			}
			SSL_shutdown(ssl);
		}
		SSL_free(ssl);
		close(c);
	}
}
EOF
cc -O2 -Wall -Werror -o "$ROOT/usr/local/bin/upstream" "$LOG/upstream.c"
cc -O2 -Wall -Werror -o "$ROOT/usr/local/bin/tlsmock" "$LOG/tlsmock.c" \
	-lssl -lcrypto
# A test CA and the mock's certificate for mock.test: egressd trusts the
# CA through its test-only --test-ca during the egress checks.
pki=$ROOT/etc/cordon-live
install -d -m 0755 "$pki"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout "$LOG/ca.key" -out "$pki/ca.pem" -subj "/CN=cordon live CA" \
	-days 2 -addext basicConstraints=critical,CA:TRUE \
	-addext keyUsage=critical,keyCertSign >/dev/null 2>&1
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout "$pki/mock.key" -out "$LOG/mock.csr" -subj /CN=mock.test \
	>/dev/null 2>&1
echo subjectAltName=DNS:mock.test >"$LOG/mock.ext"
openssl x509 -req -in "$LOG/mock.csr" -CA "$pki/ca.pem" -CAkey "$LOG/ca.key" \
	-CAcreateserial -out "$pki/mock.pem" -days 2 -extfile "$LOG/mock.ext" \
	>/dev/null 2>&1
chmod 0644 "$pki/ca.pem" "$pki/mock.pem"
chmod 0600 "$pki/mock.key"
cc -O2 -Wall -Werror -o "$ROOT/usr/local/bin/ptprobe" "$LOG/ptprobe.c"
cat >"$ROOT/usr/local/bin/cordon-probe-agent" <<'EOF'
#!/bin/sh
# An agent that reports the sandbox it runs in, one "key: value" a line.
echo "id: $(id -u)"
grep -E '^(NoNewPrivs|Seccomp|CapEff):' /proc/self/status | sed 's/:\t*/: /'
for n in user mnt pid net ipc; do echo "ns $n: $(readlink /proc/self/ns/$n)"; done
echo "pid: $$"
echo "pid1: $(tr '\0' ' ' </proc/1/cmdline 2>/dev/null)"
echo "tmpdir: $TMPDIR"
# Only whether it is there: the output scrubber masks secret-like lines.
echo "mapped: $([ -n "${PROBE_KEY:-}" ] && echo yes || echo no)"
t() { if "$@" >/dev/null 2>&1; then echo yes; else echo no; fi; }
echo "read config: $(t ls /home/alice/.config/cordon)"
echo "read audit: $(t ls /var/log/cordon/audit)"
echo "read vault: $(t ls /var/lib/cordon/vault)"
echo "read root: $(t ls /root)"
echo "read other home: $(t ls /home/bob)"
echo "write etc: $(t touch /etc/cordon-probe)"
echo "write home: $(t touch /home/alice/.cordon-probe)"
echo "write cwd: $(t touch ./.cordon-probe)"
rm -f ./.cordon-probe
for s in auditd vaultd spawner; do
	echo "connect $s: $(/usr/local/bin/unixconnect /run/cordon/$s.sock)"
done
echo "tcp: $(curl -s -o /dev/null -w '%{http_code}' --max-time 3 \
	http://127.0.0.1:8777/api/health)"
EOF
chmod 0755 "$ROOT/usr/local/bin/cordon-probe-agent"
cat >"$ROOT/usr/local/bin/cordon-egress-agent" <<'EOF'
#!/bin/sh
# A `network: proxy` agent: one request through its run's proxy to the
# upstream (allowed), one to a host not listed (refused), one around the
# proxy (no route: the run's network namespace has only its loopback).
p=http://127.0.0.1:3128
echo "upstream: $(curl -s -p -x $p --max-time 10 http://up.test:8780/)"
echo "unlisted: $(curl -s -o /dev/null -w '%{http_connect}' -p -x $p \
	--max-time 10 http://evil.example:443/)"
echo "direct: $(curl -s -o /dev/null -w '%{http_code}' --noproxy '*' --max-time 3 \
	http://127.0.0.2:8780/)"
# EG-3: the credential route.  $1 is the SHA-256 of the real key: how many
# values of the env hash as it (none may), whether the route's variable
# holds the placeholder, and the routed request's answer.
echo "placeholder: $([ "$ANTHROPIC_API_KEY" = cordon-egress-placeholder ] &&
	echo yes || echo no)"
if [ ${#1} -eq 64 ]; then
	echo "real in env: $(env | sed 's/^[^=]*=//' | while IFS= read -r v; do
		printf %s "$v" | sha256sum; done | grep -c "^$1 ")"
else
	echo "real in env: no hash given"
fi
echo "route: $(curl -s --noproxy '*' --max-time 10 -X POST \
	-H "x-api-key: $ANTHROPIC_API_KEY" -d '{}' "$ANTHROPIC_BASE_URL/v1/messages")"
EOF
cat >"$ROOT/usr/local/bin/cordon-gate-agent" <<'EOF'
#!/bin/sh
# Asks the run's gate, in its plain form, about a command in its
# workspace (allowed) and one reading a protected path (refused).
cordon gate -- ls -l >/dev/null 2>&1
echo "gate ls: $?"
cordon gate -- cat /home/alice/.ssh/id_rsa >/dev/null 2>&1
echo "gate key: $?"
EOF
cat >"$ROOT/usr/local/bin/cordon-wt-agent" <<'EOF'
#!/bin/sh
# A worktree run's agent: commits one new file in its checkout.
echo cordon-live >live.txt
if git add live.txt && git -c user.name=probe -c user.email=probe@invalid \
	commit -q -m live; then echo "committed: yes"; else echo "committed: no"; fi
EOF
chmod 0755 "$ROOT/usr/local/bin/cordon-egress-agent" \
	"$ROOT/usr/local/bin/cordon-gate-agent" "$ROOT/usr/local/bin/cordon-wt-agent"

# 4. The checks, run inside the booted container.
cat >"$ROOT/root/cordon-live-inside.sh" <<'INSIDE'
#!/bin/bash
# Runs inside the container: $1 is "first" (install as the admin guide
# says, then check everything) or "reboot" (check what came up by itself).
MODE=$1
PASSED=0
FAILED=0
pass() { echo "PASS $1"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $1: $2"; FAILED=$((FAILED + 1)); }
known() { echo "KNOWN $1: $2"; }
expect() { # NAME GOT WANT
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi
}
TOKEN_FILE=/etc/cordon/token
# The credential route's key: only egressd and the mock may see it.
REAL_KEY=sk-ant-live-5eed5eed5eed5eed5eed
URL=http://127.0.0.1:8777
api() { curl -sS --max-time 30 -H "Authorization: Bearer $(cat $TOKEN_FILE)" "$@"; }
run_agent() { # AGENT PROMPT -> NDJSON events
	api -N -H 'Content-Type: application/json' \
		-d "{\"prompt\":\"$2\"}" "$URL/api/agents/$1/run"
}
health_ok() {
	local i
	for i in $(seq 100); do
		[ "$(api "$URL/api/health" 2>/dev/null | jq -r .status 2>/dev/null)" = ok ] &&
			return 0
		sleep 0.2
	done
	return 1
}
pid_of() { systemctl show -P MainPID "$1"; }
audit_file() { echo /var/log/cordon/audit/$(date -u +%F).jsonl; }
journal_clean() {
	local n
	n=$(journalctl -b --no-pager | grep -c -E 'SIGSYS|status=31/SYS|Bad system call')
	expect "journal: no seccomp kill (SIGSYS)" "$n" 0
	expect "no failed units" "$(systemctl --failed --plain --no-legend | wc -l)" 0
	n=$(journalctl -b --no-pager -u cordon-vaultd.service | grep -c 'openat2 missing')
	expect "journal: vaultd has openat2" "$n" 0
}
chat_run() { # NAME AGENT
	local ev
	ev=$(run_agent "$2" "hello live systemd")
	expect "$1: done, exit 0" \
		"$(echo "$ev" | jq -r 'select(.kind=="done").exitCode')" 0
	local path
	path=$(echo "$ev" | jq -r 'select(.kind=="saved").path')
	if [ -n "$path" ] && [ -f "/var/lib/cordon/vault/$path" ]; then
		expect "$1: note saved by cordon-vaultd" \
			"$(stat -c %U "/var/lib/cordon/vault/$path")" cordon-vaultd
	else
		fail "$1: note saved" "no saved event or no file: $ev"
	fi
	expect "$1: streamed tokens" \
		"$(echo "$ev" | jq -r 'select(.kind=="token")' | grep -c text | \
		awk '{ print ($1 > 1) ? "yes" : "no" }')" yes
}

mkdir -p /root/probes
if [ "$MODE" = first ]; then
	echo "== install, as docs/admin-guide.md says"
	useradd -m -s /bin/bash alice
	useradd -m -s /bin/bash bob
	systemd-sysusers
	systemd-tmpfiles --create /usr/lib/tmpfiles.d/cordon.conf
	echo CORDON_OPERATOR=alice | tee /etc/cordon/operator.env >/dev/null
	cordon token /etc/cordon/token
	runuser -u alice -- install -d -m 0700 ~alice/.config/cordon/agents \
		~alice/.config/cordon/missions
	printf 'probe:\n  key: not-a-real-key\nanthropic:\n  apiKey: %s\n' \
		"$REAL_KEY" >/tmp/secrets.yaml
	chmod 0644 /tmp/secrets.yaml
	runuser -u alice -- install -m 0600 /tmp/secrets.yaml \
		~alice/.config/cordon/secrets.yaml
	runuser -u alice -- install -d -m 0700 ~alice/work
	demo=/usr/libexec/cordon/cordon-demo-agent
	manifest() { # NAME BIN TOP-LEVEL-YAML [TRANSPORTCONFIG-YAML]
		printf 'name: %s\ntransport: subprocess\ntransportConfig:\n  bin: %s\n  args: ["{prompt}"]\n  timeoutMs: 30000\n%s%s' \
			"$1" "$2" "${4:-}" "$3" >/tmp/m.yaml
		chmod 0644 /tmp/m.yaml
		runuser -u alice -- install -m 0600 /tmp/m.yaml \
			~alice/.config/cordon/agents/"$1".yaml
	}
	manifest demo $demo 'healthProbe:
  type: command
  command: ["/usr/libexec/cordon/cordon-demo-agent", "--version"]
  timeoutMs: 2000
'
	manifest demons $demo 'sandbox:
  isolation: namespace
'
	manifest probe-landlock /usr/local/bin/cordon-probe-agent 'secrets:
  PROBE_KEY: probe.key
'
	manifest probe-namespace /usr/local/bin/cordon-probe-agent 'sandbox:
  isolation: namespace
'
	manifest probe-net /usr/local/bin/cordon-probe-agent 'sandbox:
  isolation: namespace
  network: allow
  writeRoots: [~/work]
' '  cwd: /home/alice/work
'
	manifest probe-llnet /usr/local/bin/cordon-probe-agent 'sandbox:
  network: allow
'
	manifest probe-syscall /usr/local/bin/ptprobe ''
	manifest probe-wt /usr/local/bin/cordon-wt-agent 'sandbox:
  writeRoots: [~/work]
  worktrees: true
'
	repo=/home/alice/work/repo
	runuser -u alice -- git init -q -b main $repo
	runuser -u alice -- sh -c "echo base >$repo/base.txt"
	runuser -u alice -- git -C $repo add base.txt
	runuser -u alice -- git -C $repo -c user.name=alice \
		-c user.email=alice@invalid commit -q -m base
	manifest probe-gate /usr/local/bin/cordon-gate-agent '' \
		'  cwd: /home/alice/work
'
	runuser -u alice -- install -d -m 0700 ~alice/.ssh
	expect "cordon check (as alice)" \
		"$(runuser -u alice -- cordon check --home /home/alice/.config/cordon | head -n 1)" \
		"ok 9 agents"
	systemctl daemon-reload
	systemctl enable --now cordon-auditd.socket cordon-vaultd.socket \
		cordon-egressd.socket cordon-gated@alice.socket \
		cordon-spawner@alice.socket cordon-broker.socket 2>/dev/null
	systemctl enable --now cordon-sched.service 2>/dev/null

	echo "== sockets"
	for s in auditd vaultd egressd gated spawner; do
		expect "/run/cordon/$s.sock mode and owner" \
			"$(stat -c '%a %U %G' /run/cordon/$s.sock)" \
			"660 root cordon-to-$s"
	done
fi

echo "== status ($MODE)"
if health_ok; then pass "health ok"; else fail "health ok" "$(api $URL/api/health)"; fi
st=$(cordon status --port 8777 --token-file $TOKEN_FILE --json)
expect "cordon status exits 0" "$?" 0
h=$(echo "$st" | jq .health)
expect "supervisor is systemd" "$(echo "$h" | jq -r .supervisor)" systemd
for d in auditd:cordon-auditd:on vaultd:cordon-vaultd:on \
	egressd:cordon-egressd:on gated:alice:on spawner:alice:off \
	broker:cordon-broker:on; do
	IFS=: read -r name user ll <<<"$d"
	s=$(echo "$h" | jq -c ".daemons[] | select(.name==\"$name\")")
	expect "$name up" "$(echo "$s" | jq -r .up)" true
	expect "$name runs as $user" "$(echo "$s" | jq -r .status.uid)" "$(id -u "$user")"
	expect "$name: no capabilities, no_new_privs, seccomp filter" \
		"$(echo "$s" | jq -r '[.status.capEff, .status.noNewPrivs, .status.seccomp] | join(" ")')" \
		"0000000000000000 1 2"
	expect "$name: landlock $ll" "$(echo "$s" | jq -r .status.landlock)" "$ll"
done
expect "vaultd resolves with openat2" \
	"$(echo "$h" | jq -r '.daemons[] | select(.name=="vaultd") | .status.vaultResolve')" \
	openat2
expect "every agent's sandbox enforced" \
	"$(echo "$st" | jq -r '[.agents.agents[].sandbox.enforced] | unique | join(",")')" true
# The clients reach the sockets through SupplementaryGroups= only.
for d in cordon-broker.service:cordon-to-spawner,cordon-to-vaultd,cordon-to-auditd,cordon-to-egressd,cordon-to-gated \
	cordon-vaultd.service:cordon-to-auditd \
	cordon-egressd.service:cordon-to-auditd \
	cordon-gated@alice.service:cordon-to-auditd \
	cordon-spawner@alice.service:cordon-to-vaultd,cordon-to-auditd,cordon-to-egressd,cordon-to-gated \
	cordon-sched.service:cordon-to-spawner \
	cordon-auditd.service:; do
	IFS=: read -r unit groups <<<"$d"
	want=""
	for g in ${groups//,/ }; do want="$want $(getent group "$g" | cut -d: -f3)"; done
	got=$(awk '/^Groups:/ { for (i = 2; i <= NF; i++) print $i }' \
		/proc/$(pid_of "$unit")/status | sort -n | tr '\n' ' ')
	want=$( (for g in $want; do echo "$g"; done
		g=$(systemctl show -P Group "$unit")
		if [ -n "$g" ]; then getent group "$g" | cut -d: -f3
		else id -g "$(systemctl show -P User "$unit")"; fi) |
		sort -n -u | tr '\n' ' ')
	expect "$unit groups" "$got" "$want"
done

echo "== chat runs ($MODE)"
chat_run "chat run, landlock isolation" demo
chat_run "chat run, namespace isolation" demons
af=$(audit_file)
expect "audit file owner and mode" "$(stat -c '%U %a' "$af")" "cordon-auditd 600"
kinds=$(jq -r .kind "$af" | sort -u | tr '\n' ' ')
for k in agent.invoke agent.invoke.complete vault.write http.request; do
	case " $kinds" in
	*" $k "*) pass "audit has $k" ;;
	*) fail "audit has $k" "$kinds" ;;
	esac
done
expect "audit holds no prompt" "$(grep -c 'hello live systemd' "$af")" 0

if [ "$MODE" = first ]; then
	echo "== the per-run sandbox under cordon-spawner@alice.service"
	sp=$(pid_of cordon-spawner@alice.service)
	for a in probe-landlock probe-namespace probe-net probe-llnet; do
		run_agent $a probe >/root/probes/$a.ndjson
		out=$(jq -j 'select(.kind=="token").text' /root/probes/$a.ndjson | tr -s '\n')
		v() { echo "$out" | sed -n "s/^$1: //p" | head -n 1; }
		expect "$a: runs as alice" "$(v id)" "$(id -u alice)"
		expect "$a: no capabilities" "$(v CapEff)" 0000000000000000
		expect "$a: no_new_privs" "$(v NoNewPrivs)" 1
		expect "$a: seccomp filter" "$(v Seccomp)" 2
		for n in user pid ipc; do
			if [ "$(v "ns $n")" != "$(readlink /proc/$sp/ns/$n)" ] &&
				[ -n "$(v "ns $n")" ]; then
				pass "$a: own $n namespace"
			else
				fail "$a: own $n namespace" "$(v "ns $n")"
			fi
		done
		# Every run has a pid namespace where the host has user
		# namespaces: cordon-init is its pid 1, the agent pid 2.
		expect "$a: pid 2 of its namespace" "$(v pid)" 2
		case $(v pid1) in
		*cordon-init*) pass "$a: fresh /proc (pid 1 is cordon-init)" ;;
		*) fail "$a: fresh /proc" "pid 1 is '$(v pid1)'" ;;
		esac
		# ... and a private /tmp.
		expect "$a: private /tmp" "$(v tmpdir)" /tmp
		for r in config audit vault root "other home"; do
			expect "$a: cannot read $r" "$(v "read $r")" no
		done
		expect "$a: cannot write /etc" "$(v "write etc")" no
		expect "$a: cannot write the home itself" "$(v "write home")" no
		# The agent runs as the operator with the spawner unit's groups,
		# yet reaches none of cordon's sockets: with network: none its
		# seccomp layer refuses the connect (EACCES); with network:
		# allow, landlock or namespace isolation alike, /run is an empty
		# read-only dir in its view (ENOENT).
		case $a in
		probe-net | probe-llnet) want="connect: No such file or directory" ;;
		*) want="connect: Permission denied" ;;
		esac
		for s in auditd vaultd spawner; do
			expect "$a: cannot dial $s.sock" "$(v "connect $s")" "$want"
		done
		case $a in
		probe-landlock)
			expect "$a: secret mapped" "$(v mapped)" yes
			expect "$a: no network" "$(v tcp)" 000
			;;
		probe-namespace)
			expect "$a: no network" "$(v tcp)" 000
			;;
		probe-net)
			expect "$a: network allowed (broker answers 401)" "$(v tcp)" 401
			expect "$a: writes its write root" "$(v "write cwd")" yes
			;;
		probe-llnet)
			expect "$a: network allowed (broker answers 401)" "$(v tcp)" 401
			;;
		esac
		case $a in
		probe-namespace | probe-net)
			if [ "$(v "ns mnt")" != "$(readlink /proc/$sp/ns/mnt)" ]; then
				pass "$a: own mount namespace"
			else
				fail "$a: own mount namespace" "$(v "ns mnt")"
			fi
			;;
		esac
	done
	for c in ptrace bpf; do
		expect "agent calling $c: run ended, call named" \
			"$(run_agent probe-syscall $c | jq -r 'select(.kind=="error").detail')" \
			"seccomp: $c"
	done

	echo "== restarts"
	old=$(pid_of cordon-auditd.service)
	systemctl restart cordon-auditd.service
	new=$(pid_of cordon-auditd.service)
	if [ "$new" != "$old" ] && [ "$new" != 0 ]; then pass "auditd restarted"; else
		fail "auditd restarted" "pid $old -> $new"; fi
	if health_ok; then pass "health recovers after auditd restart"; else
		fail "health recovers after auditd restart" "$(api $URL/api/health)"; fi
	n0=$(grep -c '"agent.invoke.complete"' "$(audit_file)")
	chat_run "chat run after auditd restart" demo
	sleep 0.5
	n1=$(grep -c '"agent.invoke.complete"' "$(audit_file)")
	expect "the run after the restart is audited" "$((n1 - n0))" 1
	systemctl restart cordon-auditd.service cordon-vaultd.service \
		cordon-egressd.service cordon-gated@alice.service \
		cordon-spawner@alice.service cordon-broker.service
	if health_ok; then pass "health after the guide's upgrade restart"; else
		fail "health after the guide's upgrade restart" "$(api $URL/api/health)"; fi

	echo "== strangers"
	for s in auditd vaultd egressd gated spawner; do
		expect "bob dialling $s.sock: socket mode refuses" \
			"$(setpriv --reuid bob --regid bob --clear-groups -- unixconnect /run/cordon/$s.sock)" \
			"connect: Permission denied"
		expect "bob with cordon-to-$s: SO_PEERCRED refuses" \
			"$(setpriv --reuid bob --regid bob --groups cordon-to-$s -- unixconnect /run/cordon/$s.sock)" \
			"connected, then closed by the server"
	done
	sleep 0.5
	for u in auditd vaultd egressd gated@alice spawner@alice; do
		n=$(journalctl -b --no-pager -u cordon-$u.service |
			grep -c "refused a connection from uid $(id -u bob)")
		if [ "$n" -ge 1 ]; then pass "journal: cordon-$u logs the refusal"; else
			fail "journal: cordon-$u logs the refusal" "no line"; fi
	done
	if health_ok; then pass "health ok after strangers"; else
		fail "health ok after strangers" "$(api $URL/api/health)"; fi

	echo "== cordon-gated@alice.service answers a run's cordon gate"
	run_agent probe-gate gate >/root/probes/probe-gate.ndjson
	out=$(jq -j 'select(.kind=="token").text' /root/probes/probe-gate.ndjson | tr -s '\n')
	v() { echo "$out" | sed -n "s/^$1: //p" | head -n 1; }
	expect "gate allows ls in the workspace (exit 0)" "$(v "gate ls")" 0
	expect "gate refuses reading ~/.ssh (exit 1)" "$(v "gate key")" 1
	sleep 0.5
	got=$(jq -r 'select(.kind=="verb.run" and .agent=="probe-gate") |
		"\(.verdict) \(.rule // "-")"' "$(audit_file)" | sort | tr '\n' ',')
	case $got in
	allow*deny\ protected-path,) pass "audit has both verb.run verdicts" ;;
	*) fail "audit has both verb.run verdicts" "$got" ;;
	esac
	expect "gated runs as alice, group cordon-gated" \
		"$(awk '/^(Uid|Gid):/ { print $2 }' \
			/proc/"$(pid_of cordon-gated@alice.service)"/status | tr '\n' ' ')" \
		"$(id -u alice) $(getent group cordon-gated | cut -d: -f3) "

	echo "== a worktree run (MC-2) under the spawner unit"
	api -N -H 'Content-Type: application/json' \
		-d '{"prompt":"wt","worktree":"/home/alice/work/repo"}' \
		"$URL/api/agents/probe-wt/run" >/root/probes/probe-wt.ndjson
	ev=/root/probes/probe-wt.ndjson
	expect "worktree run: done, exit 0" \
		"$(jq -r 'select(.kind=="done").exitCode' $ev)" 0
	expect "worktree run: the agent committed in its checkout" \
		"$(jq -j 'select(.kind=="token").text' $ev | tr -s '\n')" "committed: yes"
	expect "worktree run: one file changed on its cordon/ branch" \
		"$(jq -r 'select(.kind=="done").worktree |
			"\(.filesChanged) \(.branch | startswith("cordon/"))"' $ev)" "1 true"
	expect "worktree run: the repository itself untouched" \
		"$(ls /home/alice/work/repo) $(runuser -u alice -- git -C /home/alice/work/repo rev-list --count HEAD)" \
		"base.txt 1"

	echo "== egress (EG-1 .. EG-4) and a cron mission (MI-1), test mode"
	# The upstreams are on 127.0.0.2, which egressd refuses (EG-2) unless
	# egressd and the spawner run with the test-only --test-egress 1 (and
	# egressd trusts the mock's CA by --test-ca), as the activation test
	# runs them; drop-ins add them, and come off again below, so the rest
	# runs on the units as installed.
	for u in "cordon-egressd.service:cordon-egressd.service:--test-egress 1 --test-ca /etc/cordon-live/ca.pem" \
		"cordon-spawner@alice.service:cordon-spawner@.service:--test-egress 1"; do
		IFS=: read -r unit file extra <<<"$u"
		mkdir -p /etc/systemd/system/$unit.d
		{ echo '[Service]'; echo 'ExecStart='
		  sed -n '/^ExecStart=/,/[^\\]$/p' /usr/lib/systemd/system/$file |
			sed "\$ s|\$| $extra|"
		} >/etc/systemd/system/$unit.d/test-egress.conf
	done
	/usr/local/bin/upstream 127.0.0.2 8780 &
	up=$!
	/usr/local/bin/tlsmock 127.0.0.2 8443 /etc/cordon-live/mock.pem \
		/etc/cordon-live/mock.key /root/mock.log "$REAL_KEY" &
	mock=$!
	manifest probe-egress /usr/local/bin/cordon-egress-agent 'secrets:
  ANTHROPIC_API_KEY: anthropic.apiKey
sandbox:
  network: proxy
egress:
  allow: ["up.test:8780", "mock.test:8443"]
  testResolve: {up.test: 127.0.0.2, mock.test: 127.0.0.2}
  testAllowAddress: 127.0.0.2
  routes:
    anthropic:
      upstream: https://mock.test:8443
      secret: ANTHROPIC_API_KEY
      auth: x-api-key
      baseUrlEnv: ANTHROPIC_BASE_URL
'
	# MI-1: a mission every minute; the spawner reads missions when it
	# starts, and tells sched when sched dials it again.
	printf 'id: tick\nlabel: Every minute\nagent: demo\nprompt: tick\noutputs:\n  - {type: event, event: tick.done}\npermissions: [event-emit]\ntrigger: {cron: "* * * * *"}\n' >/tmp/tick.yaml
	chmod 0644 /tmp/tick.yaml
	runuser -u alice -- install -m 0600 /tmp/tick.yaml \
		~alice/.config/cordon/missions/tick.yaml
	systemctl daemon-reload
	systemctl restart cordon-egressd.service cordon-spawner@alice.service
	if health_ok; then pass "health after test-mode restart"; else
		fail "health after test-mode restart" "$(api $URL/api/health)"; fi
	expect "egressd in test mode" "$(api "$URL/api/health" |
		jq -r '.daemons[] | select(.name=="egressd") | .status.egress.testEgress')" true
	run_agent probe-egress "$(printf %s "$REAL_KEY" | sha256sum | cut -d' ' -f1)" \
		>/root/probes/probe-egress.ndjson
	out=$(jq -j 'select(.kind=="token").text' /root/probes/probe-egress.ndjson | tr -s '\n')
	expect "proxy run reaches the upstream through egressd" \
		"$(v upstream)" cordon-live-upstream
	expect "proxy run: unlisted host refused (403)" "$(v unlisted)" 403
	expect "proxy run: no route around the proxy" "$(v direct)" 000
	sleep 0.5
	got=$(jq -r 'select(.kind=="egress.connect" and .agent=="probe-egress") |
		"\(.decision) \(.host // "-") \(.reason // "-")"' "$(audit_file)" |
		head -n 2 | tr '\n' ',')
	# A refused host is not echoed into the record, only the reason.
	expect "audit: egress.connect allow, then deny" "$got" \
		"allow up.test -,deny - host-not-allowed,"
	expect "route: the agent holds the placeholder" "$(v placeholder)" yes
	expect "route: no env value is the real key" "$(v "real in env")" 0
	expect "route: egressd's request reaches the TLS upstream" \
		"$(v route)" cordon-live-mock
	expect "route: the upstream got the real key" \
		"$(tail -n 1 /root/mock.log 2>/dev/null)" "key: real"
	expect "audit: egress.request allow, route anthropic, 200" \
		"$(jq -r 'select(.kind=="egress.request" and .agent=="probe-egress") |
			"\(.decision) \(.route) \(.status)"' "$(audit_file)" | tail -n 1)" \
		"allow anthropic 200"
	expect "the real key in no audit record" "$(grep -c "$REAL_KEY" "$(audit_file)")" 0
	expect "the real key in no journal line" \
		"$(journalctl -b --no-pager | grep -c "$REAL_KEY")" 0
	n=$(journalctl -b --no-pager -u cordon-egressd.service | grep -c 'TEST MODE')
	if [ "$n" -ge 1 ]; then pass "journal: egressd says TEST MODE"; else
		fail "journal: egressd says TEST MODE" "no line"; fi
	for i in $(seq 90); do
		got=$(jq -r 'select(.kind=="mission.run" and .missionId=="tick") |
			"\(.trigger) \(.status)"' "$(audit_file)" | head -n 1)
		[ -n "$got" ] && break
		sleep 1
	done
	expect "cordon-sched fires the cron mission" "$got" "cron success"
	expect "sched state owned by cordon-sched" \
		"$(stat -c %U /var/lib/cordon/sched/missions.json 2>/dev/null)" cordon-sched
	expect "sched state holds the mission's slot" \
		"$(jq -r 'keys | join(",")' /var/lib/cordon/sched/missions.json 2>/dev/null)" tick
	rm -f ~alice/.config/cordon/missions/tick.yaml \
		~alice/.config/cordon/agents/probe-egress.yaml
	rm -rf /etc/systemd/system/cordon-egressd.service.d \
		/etc/systemd/system/cordon-spawner@alice.service.d
	kill "$up" "$mock"
	systemctl daemon-reload
	systemctl restart cordon-egressd.service cordon-spawner@alice.service
	if health_ok; then pass "health with the units as installed again"; else
		fail "health with the units as installed again" "$(api $URL/api/health)"; fi
	expect "egressd out of test mode" "$(api "$URL/api/health" |
		jq -r '.daemons[] | select(.name=="egressd") | .status.egress.testEgress')" false

	echo "== login"
	login=$(cordon login --port 8777 --token-file $TOKEN_FILE)
	target=$(echo "$login" | grep -o 'http://[^ ]*/ui/[^ ]*' | head -n 1)
	hdr=$(curl -s -D - -o /dev/null -c /root/jar "$target")
	expect "login URL works once" \
		"$(echo "$hdr" | head -n 1 | cut -d' ' -f2) $(curl -s -o /dev/null -w '%{http_code}' "$target")" \
		"303 401"
	# PER-5: the session cookie counts only with its page key, which the
	# redirect hands the page in the address's fragment.
	key=$(echo "$hdr" | tr -d '\r' | sed -n 's/^[Ll]ocation: .*#page=//p')
	expect "dashboard: cookie alone refused, with its page key answered" \
		"$(curl -s -o /dev/null -w '%{http_code}' -b /root/jar "$URL/api/health") $(curl -s -o /dev/null -w '%{http_code}' -b /root/jar -H "X-Cordon-Page: $key" "$URL/api/health")" \
		"401 200"

	echo "== cordon.target"
	systemctl stop cordon.target
	sleep 0.5
	expect "stop cordon.target stops every unit" \
		"$(systemctl list-units --state=active --plain --no-legend 'cordon*' | wc -l)" 0
	expect "sockets removed on stop" "$(ls /run/cordon 2>/dev/null | wc -l)" 0
	systemctl enable cordon-spawner@alice.socket cordon-gated@alice.socket \
		2>/dev/null
	systemctl enable --now cordon.target 2>/dev/null
	if health_ok; then pass "health after enable --now cordon.target"; else
		fail "health after enable --now cordon.target" "$(api $URL/api/health)"; fi
else
	for u in cordon-auditd.socket cordon-vaultd.socket \
		cordon-egressd.socket cordon-gated@alice.socket \
		cordon-spawner@alice.socket cordon-broker.socket \
		cordon-sched.service cordon.target; do
		expect "$u enabled" "$(systemctl is-enabled $u)" enabled
	done
fi

echo "== journal ($MODE)"
journal_clean
echo "$MODE: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
INSIDE
chmod 0755 "$ROOT/root/cordon-live-inside.sh"

# 5. Boot, check, reboot, check what came up by itself.
rc=0
boot first
echo "== container up: $(inside systemctl --version | head -n 1)"
inside /root/cordon-live-inside.sh first | tee "$LOG/first.log" || rc=1
cp -r "$ROOT/root/probes" "$LOG/" 2>/dev/null || true
inside journalctl -b --no-pager >"$LOG/journal-first.log" 2>&1 || true
stop_container
boot reboot
inside /root/cordon-live-inside.sh reboot | tee "$LOG/reboot.log" || rc=1
inside journalctl -b --no-pager >"$LOG/journal-reboot.log" 2>&1 || true
stop_container

p=$(cat "$LOG/first.log" "$LOG/reboot.log" | grep -c '^PASS ' || true)
f=$(cat "$LOG/first.log" "$LOG/reboot.log" | grep -c '^FAIL ' || true)
echo "kernel $(uname -r), logs in $LOG"
echo "systemd-live-check: $p passed, $f failed"
exit $rc
