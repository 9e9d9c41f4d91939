/*
 * libFuzzer target for policy/streamjson.c and streamjson_cli.c (SP-16),
 * one program per format (SJ_FUZZ_FORMAT, set by tests/meson.build:
 * fuzz_streamjson Claude Code, fuzz_codexjson, fuzz_geminijson): whatever
 * the lines,
 * decoding either refuses one with no event, or yields at most
 * SJ_EVENTS_MAX events whose text is there, whose ids and tool names are
 * of their sets and bounds, whose numbers are in range, and the state
 * between lines stays in its bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "streamjson.h"

#ifndef SJ_FUZZ_FORMAT
#define SJ_FUZZ_FORMAT SJ_CLAUDE
#endif

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

static void
check_word(const char *s, const char *set)
{
	size_t n = strlen(s);

	if (n == 0 || n > SJ_ID_MAX || strspn(s, set) != n)
		abort();
}

static void
check_event(const struct sj_event *e)
{
	if (e->se_len > 0 && e->se_text == NULL)
		abort();
	switch (e->se_kind) {
	case SJ_TEXT:
		if (e->se_len == 0)
			abort();
		break;
	case SJ_TOOL:
		check_word(e->se_tool, ALNUM "_.:-");
		/* FALLTHROUGH */
	case SJ_TOOL_RESULT:
		if (e->se_id != NULL)
			check_word(e->se_id, ALNUM "_-");
		break;
	case SJ_RETRY:
		if (e->se_attempt < 0 || e->se_attempt > 1000 ||
		    e->se_max < 0 || e->se_max > 1000 || e->se_status < -1 ||
		    (e->se_status > 0 && e->se_status < 100) ||
		    e->se_status > 599)
			abort();
		break;
	default:
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *nl;
	struct sj_state st;
	struct sj_out so;
	size_t n, i;

	sj_init(&st, SJ_FUZZ_FORMAT);
	while (size > 0) {
		nl = memchr(p, '\n', size);
		n = nl != NULL ? (size_t)(nl - p) : size;
		if (sj_decode(&st, p, n, &so) == -1) {
			if (so.so_obj != NULL || so.so_n != 0)
				abort();
		} else {
			if (so.so_n > SJ_EVENTS_MAX ||
			    so.so_nusage > SJ_USAGE_MAX)
				abort();
			for (i = 0; i < so.so_n; i++)
				check_event(&so.so_ev[i]);
			sj_out_free(&so);
		}
		if (st.ss_nl < 0 || st.ss_nl > 2 ||
		    strlen(st.ss_msg) > SJ_ID_MAX ||
		    st.ss_format != SJ_FUZZ_FORMAT)
			abort();
		p += n + (nl != NULL);
		size -= n + (nl != NULL);
	}
	return 0;
}
