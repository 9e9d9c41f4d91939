/*
 * libFuzzer target for the command gate (policy/gate*.c, shlex.c): any
 * bytes, as a shell line and as an argv split on NUL, get a verdict with
 * a well-formed rule and verb; never a crash or leak.  A lexical
 * resolver stands in for the disk.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "protect.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define WS "/home/u/proj"

/* No symlinks: "~" is the home, relative is joined to cwd, no "..". */
static int
lex_resolve(
    const char *path, const char *cwd, char *out, size_t outsz, void *arg)
{
	int n;

	(void)arg;
	if (strstr(path, "/..") != NULL || strncmp(path, "..", 2) == 0)
		return -1;
	if (strcmp(path, "~") == 0 || strncmp(path, "~/", 2) == 0)
		n = snprintf(out, outsz, "/home/u%s", path + 1);
	else if (path[0] == '/')
		n = snprintf(out, outsz, "%s", path);
	else
		n = snprintf(out, outsz, "%s/%s", cwd, path);
	if (n < 0 || (size_t)n >= outsz)
		return -1;
	/* what a realpath gives: no trailing slash */
	while (n > 1 && out[n - 1] == '/')
		out[--n] = '\0';
	return 0;
}

static void
check(const struct gate_result *r)
{
	size_t i, n;

	if (r->g_verdict != GATE_ALLOW && r->g_verdict != GATE_DENY &&
	    r->g_verdict != GATE_ASK)
		abort();
	n = strnlen(r->g_rule, sizeof(r->g_rule));
	if (n == 0 || n >= sizeof(r->g_rule) || r->g_rule[0] == '-')
		abort();
	for (i = 0; i < n; i++)
		if (!((r->g_rule[i] >= 'a' && r->g_rule[i] <= 'z') ||
			(r->g_rule[i] >= '0' && r->g_rule[i] <= '9') ||
			r->g_rule[i] == '-' || r->g_rule[i] == '.'))
			abort();
	n = strnlen(r->g_verb, sizeof(r->g_verb));
	if (n == 0 || n >= sizeof(r->g_verb))
		abort();
	for (i = 0; i < n; i++)
		if (strchr(
			"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			"0123456789._+-?",
			r->g_verb[i]) == NULL)
			abort();
	/* only the fixed ask codes ask */
	if (r->g_verdict == GATE_ASK && strncmp(r->g_rule, "ask-", 4) != 0)
		abort();
	if (r->g_verdict == GATE_ALLOW && strcmp(r->g_rule, "allowlist") != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct protect_ctx pc = {.pc_home = "/home/u",
	    .pc_extra = {"/home/u/.config/cordon"},
	    .pc_nextra = 1};
	struct gate_req req;
	struct gate_result res;
	char *buf, *argv[GATE_WORDS_MAX + 1];
	size_t i, argc = 0, start = 0;

	if (len > GATE_LINE_MAX + 16)
		return 0;
	if ((buf = malloc(len + 1)) == NULL)
		return 0;
	memcpy(buf, data, len);
	buf[len] = '\0';
	memset(&req, 0, sizeof(req));
	req.gr_cwd = WS;
	req.gr_workspace = WS;

	/* as a shell line, with its length (NULs inside are refused) */
	req.gr_line = buf;
	req.gr_linelen = len;
	if (len > 0) {
		if (gate_check(NULL, &req, &pc, lex_resolve, NULL, &res) != 0)
			abort();
		check(&res);
		/* a NUL anywhere is never allowed */
		if (memchr(buf, '\0', len) != NULL &&
		    res.g_verdict != GATE_DENY)
			abort();
	}

	/* as an argv split on NUL */
	for (i = 0; i <= len && argc < GATE_WORDS_MAX; i++)
		if (i == len || buf[i] == '\0') {
			argv[argc++] = buf + start;
			start = i + 1;
		}
	req.gr_line = NULL;
	req.gr_linelen = 0;
	req.gr_argv = argv;
	req.gr_argc = argc;
	if (gate_check(NULL, &req, &pc, lex_resolve, NULL, &res) != 0)
		abort();
	check(&res);
	free(buf);
	return 0;
}
