/*
 * bench_output: a chat run's output path, as the spawner drives it
 * (spawner/run_out.c): MB megabytes of text written into a pipe by a
 * child process, read in SPAWNER_READ_CHUNK pieces and put through the
 * cleaner (SP-10) and the scrubber (SP-11): redact_clean_feed and
 * redact_flush_partial, as a streaming chat does into an evbuffer that
 * is drained as the broker's relay would.  Twice: with no known values,
 * and with the keys of four resolved secrets of 40 characters (a run's
 * API keys).  The floor, in the same run and interleaved with it: the
 * same bytes through the same pipe, read and dropped (a raw pipe copy).
 * The text is the tree's own sources and docs (SRCDIR), repeated; lines
 * longer than the cleaner's clamp are cut by it as they would be.
 *
 * Usage: bench_output [SRCDIR] [MB] [ROUNDS]   (default ., 100 MB, 3)
 * Prints the medians and the ratio throughput / floor (target >= 0.5).
 * Touches nothing but its pipe.
 */
#include <sys/wait.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "bench_util.h"
#include "redact.h"
#include "sanitize.h"

#define READ_CHUNK 65536 /* SPAWNER_READ_CHUNK */
#define LINE_MAX_C 1000	 /* LIM_LINE_MAX */
#define CORPUS_MAX (8 * 1024 * 1024)
#define NSECRETS   4
#define ROUNDS_MAX 15

static char *corpus;
static size_t corpus_len;

/* Every regular *.c, *.h and *.md file directly in SRCDIR/sub. */
static void
load_dir(const char *src, const char *sub)
{
	char path[PATH_MAX];
	struct dirent *de;
	size_t n, l;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", src, sub);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		l = strlen(de->d_name);
		if (l < 3 || (strcmp(de->d_name + l - 2, ".c") != 0 &&
				 strcmp(de->d_name + l - 2, ".h") != 0 &&
				 strcmp(de->d_name + l - 3, ".md") != 0))
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", src, sub, de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		n = fread(corpus + corpus_len, 1, CORPUS_MAX - corpus_len, f);
		corpus_len += n;
		fclose(f);
	}
	closedir(d);
}

/* A child writing total bytes of the corpus into a pipe; its read end. */
static int
writer(size_t total, pid_t *pid)
{
	size_t left = total, n, off = 0;
	ssize_t w;
	int p[2];

	if (pipe(p) == -1 || (*pid = fork()) == -1)
		return -1;
	if (*pid == 0) {
		close(p[0]);
		while (left > 0) {
			n = corpus_len - off < READ_CHUNK ? corpus_len - off
							  : READ_CHUNK;
			if (n > left)
				n = left;
			if ((w = write(p[1], corpus + off, n)) <= 0)
				_exit(1);
			left -= (size_t)w;
			off = (off + (size_t)w) % corpus_len;
		}
		_exit(0);
	}
	close(p[1]);
	return p[0];
}

/*
 * One pass: total bytes through the pipe; keys NULL and scrub 0 for the
 * floor.  Its throughput in MB/s, or -1.
 */
static double
pass(size_t total, int scrub, const struct redact_keys *keys)
{
	static char buf[READ_CHUNK];
	struct evbuffer *tmp = evbuffer_new(), *text = evbuffer_new();
	struct redact *rd = NULL;
	struct clean cl;
	size_t got = 0, n;
	double t0, t;
	ssize_t r;
	pid_t pid;
	int fd, st;

	if (tmp == NULL || text == NULL ||
	    (scrub && (rd = redact_new(keys)) == NULL) ||
	    (fd = writer(total, &pid)) == -1)
		return -1;
	clean_init(&cl, LINE_MAX_C);
	t0 = bench_now();
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		got += (size_t)r;
		if (!scrub)
			continue;
		/* run_text(): clean, scrub, let the settled head out. */
		redact_clean_feed(rd, &cl, buf, (size_t)r, tmp, text);
		redact_flush_partial(rd, text);
		evbuffer_drain(text, evbuffer_get_length(text));
	}
	if (scrub) {
		clean_finish(&cl, tmp);
		if ((n = evbuffer_get_length(tmp)) > 0)
			redact_feed(rd,
			    (const char *)evbuffer_pullup(tmp, (ev_ssize_t)n),
			    n, text);
		redact_finish(rd, text);
	}
	t = bench_now() - t0;
	close(fd);
	waitpid(pid, &st, 0);
	redact_free(rd);
	evbuffer_free(tmp);
	evbuffer_free(text);
	if (got != total || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return (double)total / t / 1e6;
}

static double
median(double *v, long n)
{
	bench_sort(v, n);
	return bench_pct(v, n, 50);
}

int
main(int argc, char **argv)
{
	static const char *subs[] = {"common", "policy", "spawner", "broker",
	    "supervisor", "docs", "bench", "auditd", "vaultd", "egressd"};
	double fl[ROUNDS_MAX], bare[ROUNDS_MAX], keyed[ROUNDS_MAX];
	char sec[NSECRETS][48];
	const char *secs[NSECRETS], *src = argc > 1 ? argv[1] : ".";
	struct redact_keys *keys;
	long mb = argc > 2 ? atol(argv[2]) : 100;
	long rounds = argc > 3 ? atol(argv[3]) : 3, i;
	size_t total, k;
	double mf, mbare, mkeyed;

	if (mb <= 0 || rounds <= 0 || rounds > ROUNDS_MAX) {
		fprintf(stderr, "usage: bench_output [SRCDIR] [MB] [ROUNDS]\n");
		return 2;
	}
	total = (size_t)mb * 1000 * 1000;
	if ((corpus = malloc(CORPUS_MAX)) == NULL)
		return 1;
	for (k = 0; k < sizeof(subs) / sizeof(subs[0]); k++)
		load_dir(src, subs[k]);
	if (corpus_len < 64 * 1024) {
		fprintf(stderr, "bench_output: no sources under %s\n", src);
		return 1;
	}
	/* Four 40-character values, as a run's resolved API keys. */
	for (k = 0; k < NSECRETS; k++) {
		snprintf(sec[k], sizeof(sec[k]),
		    "bq%zuXk3f9ZtLw0PvRa7sYc2%zuHnDmJe5uGi8oQ", k, k * 7);
		secs[k] = sec[k];
	}
	if ((keys = redact_keys_new(secs, NSECRETS)) == NULL)
		return 1;
	printf("bench_output: %ld MB of text (%zu KiB of the tree's sources, "
	       "repeated), %ld rounds\n",
	    mb, corpus_len / 1024, rounds);
	for (i = 0; i < rounds; i++) {
		if ((fl[i] = pass(total, 0, NULL)) < 0 ||
		    (bare[i] = pass(total, 1, NULL)) < 0 ||
		    (keyed[i] = pass(total, 1, keys)) < 0) {
			fprintf(stderr, "bench_output: a pass failed\n");
			return 1;
		}
		printf("round %ld: floor %.0f MB/s, clean+scrub %.1f MB/s, "
		       "with %d known values %.1f MB/s\n",
		    i + 1, fl[i], bare[i], NSECRETS, keyed[i]);
	}
	mf = median(fl, rounds);
	mbare = median(bare, rounds);
	mkeyed = median(keyed, rounds);
	printf("floor: raw pipe copy, median %.0f MB/s\n", mf);
	printf("clean+scrub, no known values: median %.1f MB/s, ratio %.3f\n",
	    mbare, mbare / mf);
	printf("clean+scrub, %d known values: median %.1f MB/s, ratio %.3f "
	       "(target >= 0.5)\n",
	    NSECRETS, mkeyed, mkeyed / mf);
	redact_keys_free(keys);
	free(corpus);
	return 0;
}
