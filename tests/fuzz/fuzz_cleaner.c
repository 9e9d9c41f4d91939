/*
 * libFuzzer target for common/sanitize.c and common/redact.c: whatever the
 * bytes and however they are split, the cleaner emits valid UTF-8 with no
 * ESC, no C0 but \n \t, no C1, no invisible or reordering code point
 * (SBX-7: shown as <U+XXXX>), the same output for any split; the scrubber
 * never lets a known secret through; and redact_clean_feed, whose lane
 * sends plain lines around both, gives the bytes and counts of
 * clean_feed then redact_feed on the same chunks, with the lane's block
 * test and with its byte walk alone, which take the same lines.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "redact.h"
#include "redact_int.h"
#include "sanitize.h"
#include "unicode.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char *
run_clean(const uint8_t *d, size_t len, size_t cut, size_t *outlen)
{
	struct evbuffer *b = evbuffer_new();
	struct clean c;
	char *s;

	clean_init(&c, 40);
	clean_feed(&c, (const char *)d, cut, b);
	clean_feed(&c, (const char *)d + cut, len - cut, b);
	clean_finish(&c, b);
	*outlen = evbuffer_get_length(b);
	if (clean_bytes(&c) != *outlen)
		abort();
	s = malloc(*outlen + 1);
	evbuffer_remove(b, s, *outlen);
	s[*outlen] = '\0';
	evbuffer_free(b);
	return s;
}

/*
 * d through the cleaner and the scrubber (with the secret) in chunks of
 * the sizes its bytes name, flushing early after some; lane: as one call.
 */
static char *
run_both(
    const uint8_t *d, size_t len, int lane, size_t *outlen, uint64_t *chars)
{
	static const char *const sec[] = {"S3cr3t!Value"};
	struct evbuffer *tmp = evbuffer_new(), *b = evbuffer_new();
	struct redact_keys *ks = redact_keys_new(sec, len % 2);
	struct redact *r = ks != NULL ? redact_new(ks) : NULL;
	struct clean c;
	size_t off = 0, k, n, step = 0;
	char *s;

	if (tmp == NULL || b == NULL || r == NULL)
		abort();
	clean_init(&c, 1 + d[0] % 48);
	for (; off < len; off += k) {
		k = 1 + d[step++ % len] % 97;
		if (k > len - off)
			k = len - off;
		if (lane) {
			redact_clean_feed(
			    r, &c, (const char *)d + off, k, tmp, b);
		} else {
			clean_feed(&c, (const char *)d + off, k, tmp);
			if ((n = evbuffer_get_length(tmp)) > 0) {
				redact_feed(r,
				    (const char *)evbuffer_pullup(tmp, -1), n,
				    b);
				evbuffer_drain(tmp, n);
			}
		}
		if (k % 3 == 0)
			redact_flush_partial(r, b);
	}
	clean_finish(&c, tmp);
	if ((n = evbuffer_get_length(tmp)) > 0)
		redact_feed(r, (const char *)evbuffer_pullup(tmp, -1), n, b);
	redact_finish(r, b);
	redact_free(r);
	redact_keys_free(ks);
	*chars = clean_chars(&c) ^ clean_bytes(&c) << 32;
	*outlen = evbuffer_get_length(b);
	if ((s = malloc(*outlen + 1)) == NULL)
		abort();
	evbuffer_remove(b, s, *outlen);
	evbuffer_free(tmp);
	evbuffer_free(b);
	return s;
}

/* rd_lane with its block test and with its byte walk: the same lines
 * and places, from every start of the first bytes. */
static void
check_blocks(const uint8_t *d, size_t len)
{
	static const char *const sec[] = {"S3cr3t!Value"};
	struct redact_keys *ks = redact_keys_new(sec, len % 2);
	struct rd_lane_kv a, b;
	size_t off, na, nb, ca, cb, max = d[0] % 3 == 0 ? 1000 : d[0] % 48;

	if (ks == NULL)
		abort();
	for (off = 0; off < len && off < 40; off++) {
		rd_lane_force_scalar(1);
		na =
		    rd_lane((const char *)d + off, len - off, max, ks, &a, &ca);
		rd_lane_force_scalar(0);
		nb =
		    rd_lane((const char *)d + off, len - off, max, ks, &b, &cb);
		if (na != nb || a.n != b.n || ca != cb ||
		    memcmp(a.at, b.at, a.n * sizeof(a.at[0])) != 0)
			abort();
	}
	redact_keys_free(ks);
}

/* The lane changes nothing: the same bytes and counts as without, with
 * its block test and with its byte walk alone. */
static void
check_lane(const uint8_t *d, size_t len)
{
	size_t al, zl, sl;
	uint64_t ac, zc, sc;
	char *a = run_both(d, len, 0, &al, &ac);
	char *z = run_both(d, len, 1, &zl, &zc);
	char *s;

	rd_lane_force_scalar(1);
	s = run_both(d, len, 1, &sl, &sc);
	rd_lane_force_scalar(0);
	if (al != zl || ac != zc || memcmp(a, z, al) != 0)
		abort();
	if (al != sl || ac != sc || memcmp(a, s, al) != 0)
		abort();
	free(a);
	free(z);
	free(s);
	check_blocks(d, len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static const char *const sec[] = {"S3cr3t!Value"};
	struct evbuffer *b;
	struct redact_keys *ks;
	struct redact *r;
	char *a, *z, *out;
	size_t al, zl, i, cut, n;

	if (len == 0)
		return 0;
	check_lane(data, len);
	cut = data[0] % len;
	a = run_clean(data, len, 0, &al);
	z = run_clean(data, len, cut, &zl);
	if (al != zl || memcmp(a, z, al) != 0)
		abort();
	if (!utf8_valid(a, al))
		abort();
	for (i = 0; i < al;) {
		uint32_t cp;

		if (uni_utf8_next(a, al, &i, &cp) == -1 ||
		    uni_class(cp) == UNI_HIDDEN)
			abort();
	}
	for (i = 0; i < al; i++) {
		unsigned char ch = (unsigned char)a[i];

		if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f)
			abort();
		if (ch == 0xC2 && i + 1 < al &&
		    (unsigned char)a[i + 1] >= 0x80 &&
		    (unsigned char)a[i + 1] <= 0x9F)
			abort(); /* a C1 control survived */
	}
	/* Scrub the cleaned text with the secret planted at cut. */
	b = evbuffer_new();
	if ((ks = redact_keys_new(sec, 1)) == NULL ||
	    (r = redact_new(ks)) == NULL)
		abort();
	redact_feed(r, a, al / 2, b);
	redact_feed(r, "S3cr3t!", 7, b);
	redact_feed(r, "Value", 5, b);
	redact_feed(r, a + al / 2, al - al / 2, b);
	redact_finish(r, b);
	redact_free(r);
	redact_keys_free(ks);
	n = evbuffer_get_length(b);
	out = malloc(n + 1);
	evbuffer_remove(b, out, n);
	out[n] = '\0';
	if (memmem(out, n, "S3cr3t!Value", 12) != NULL)
		abort();
	free(out);
	evbuffer_free(b);
	free(a);
	free(z);
	return 0;
}
