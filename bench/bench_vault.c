/*
 * bench_vault [N] [DIR]: N chat-note writes through vaultd's own write
 * path (render, sha256 name, no-symlink walk, O_EXCL temp, write, fsync,
 * renameat2 NOREPLACE, fsync dir), against a bare open/write/fsync/
 * rename/fsync-dir of the same bytes in the same run, interleaved.
 * Writes only beneath a fresh directory it makes in DIR (default /var/tmp,
 * a disk: on tmpfs fsync costs nothing and the ratio means little), and
 * removes it at the end.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sha256.h"
#include "util.h"
#include "vaultd.h"
#include "vaultpath.h"

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One chat note the way vaultd writes it, minus IPC and audit. */
static int
chat_write(struct vault *v, const char *prompt, const char *resp, int i)
{
	char hex[SHA256_HEX_LEN + 1], name[VAULT_CHAT_NAME_MAX];
	char tmp[VAULT_TMP_NAME];
	char *body;
	size_t len;
	unsigned n;
	int dfd, r = -1;

	if (sha256_hex(prompt, strlen(prompt), hex) == -1 ||
	    vault_note_chat("bench", prompt, strlen(prompt), resp, strlen(resp),
		1778926333456LL + 60000LL * i, &body, &len) == -1)
		return -1;
	hex[8] = '\0';
	if ((dfd = vault_open_dir(v, VAULT_CHATS, 1)) == -1)
		goto out;
	for (n = 1; n <= VAULT_COLLISIONS; n++) {
		if (vaultpath_chat_name(name, sizeof(name),
			1778926333456LL + 60000LL * i, "bench", hex, n) == -1)
			goto out;
		if (vault_exists(dfd, name) == 0)
			break;
	}
	if (vault_stage(v, dfd, body, len, tmp, NULL) == -1 ||
	    vault_publish(dfd, tmp, name, 0) == -1)
		goto out;
	r = 0;
out:
	if (dfd != -1)
		close(dfd);
	free(body);
	return r;
}

/* The floor: the same bytes, bare syscalls on a held directory fd. */
static int
bare_write(int dfd, const char *buf, size_t len, int i)
{
	char tmp[64], name[64];
	int fd;

	snprintf(tmp, sizeof(tmp), "bare-%d.tmp", i);
	snprintf(name, sizeof(name), "bare-%d.md", i);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd == -1 || write_full(fd, buf, len) == -1 || fsync(fd) == -1 ||
	    close(fd) == -1 || renameat(dfd, tmp, dfd, name) == -1 ||
	    fsync(dfd) == -1)
		return -1;
	return 0;
}

/* Remove what the run wrote: every note has a distinct minute. */
static void
bench_cleanup(struct vault *v, int bfd, const char *prompt, int n)
{
	char hex[SHA256_HEX_LEN + 1], name[VAULT_CHAT_NAME_MAX];
	int i, dfd;

	sha256_hex(prompt, strlen(prompt), hex);
	hex[8] = '\0';
	if ((dfd = vault_open_dir(v, VAULT_CHATS, 0)) == -1)
		return;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "bare-%d.md", i);
		unlinkat(bfd, name, 0);
		if (vaultpath_chat_name(name, sizeof(name),
			1778926333456LL + 60000LL * i, "bench", hex, 1) == 0)
			unlinkat(dfd, name, 0);
	}
	close(dfd);
	unlinkat(v->v_root, VAULT_CHATS, AT_REMOVEDIR);
	unlinkat(v->v_root, VAULT_INBOX, AT_REMOVEDIR);
	unlinkat(v->v_root, "00_Inbox", AT_REMOVEDIR);
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 500;
	const char *base = argc > 2 ? argv[2] : "/var/tmp";
	char dir[4096], bare[4200], prompt[256], *resp, *body;
	uint64_t *tv, *tb, t0, sv = 0, sb = 0;
	struct vault v;
	size_t len;
	int i, bfd;

	log_init("bench_vault", 0);
	if (n < 1 || n > 100000)
		fatalx("usage: bench_vault [N] [DIR]");
	snprintf(dir, sizeof(dir), "%s/bench_vault.XXXXXX", base);
	if (mkdtemp(dir) == NULL)
		fatal("mkdtemp");
	snprintf(bare, sizeof(bare), "%s/bare", dir);
	if (mkdir(bare, 0700) == -1 ||
	    (bfd = open(bare, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		fatal("bare dir");
	memset(&v, 0, sizeof(v));
	if ((v.v_root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		fatal("vault dir");
	vault_probe_openat2(&v);

	/* A typical chat: a short prompt, a 4 KiB answer. */
	if ((resp = malloc(4097)) == NULL || (tv = calloc(n, 8)) == NULL ||
	    (tb = calloc(n, 8)) == NULL)
		fatal("malloc");
	memset(resp, 'a', 4096);
	for (i = 63; i < 4096; i += 64)
		resp[i] = '\n';
	resp[4096] = '\0';
	snprintf(prompt, sizeof(prompt), "Summarise the plan for today");
	if (vault_note_chat("bench", prompt, strlen(prompt), resp, 4096,
		1778926333456LL, &body, &len) == -1)
		fatalx("render");

	for (i = 0; i < n; i++) {
		t0 = now_ns();
		if (chat_write(&v, prompt, resp, i) == -1)
			fatal("chat note");
		tv[i] = now_ns() - t0;
		t0 = now_ns();
		if (bare_write(bfd, body, len, i) == -1)
			fatal("bare write");
		tb[i] = now_ns() - t0;
		sv += tv[i];
		sb += tb[i];
	}
	qsort(tv, n, 8, cmp_u64);
	qsort(tb, n, 8, cmp_u64);
	printf("bench_vault: %d notes of %zu bytes in %s (%s)\n", n, len, base,
	    v.v_openat2 ? "openat2" : "nofollow-walk");
	printf("  chat-note write  median %8.1f us  mean %8.1f us  p99 %8.1f "
	       "us\n",
	    tv[n / 2] / 1e3, sv / 1e3 / n, tv[n * 99 / 100] / 1e3);
	printf("  bare write floor median %8.1f us  mean %8.1f us  p99 %8.1f "
	       "us\n",
	    tb[n / 2] / 1e3, sb / 1e3 / n, tb[n * 99 / 100] / 1e3);
	printf("  ratio (median) %.2f  (mean) %.2f  target <= 1.3\n",
	    (double)tv[n / 2] / (double)tb[n / 2], (double)sv / (double)sb);
	bench_cleanup(&v, bfd, prompt, n);
	close(bfd);
	close(v.v_root);
	if (rmdir(bare) == -1 || rmdir(dir) == -1)
		log_warn("cannot remove %s", dir);
	free(body);
	free(resp);
	free(tv);
	free(tb);
	return 0;
}
