/*
 * Differential libFuzzer target for common/redact.c's early flush: the
 * input names up to three secret values and a chunk schedule, the rest is
 * the text.  The text goes through the scrubber twice with the same
 * chunks: once line-based (redact_feed, redact_finish), once with
 * redact_flush_partial after the chunks the schedule marks.  The two
 * outputs must be the same bytes.  And rd_may, which lets the line
 * stage skip passes, must never skip one that would change the text:
 * every pass of rd_patterns that matches has its bit set; nor may
 * rd_plain_lines let by a line that any pass would change.
 *
 * redact.c (the streaming driver) is compiled into this program with a
 * small RD_HOLD_MAX so that the over-long-line cut (and its meeting with
 * an early flush) is in reach of short inputs; the library's own copy of
 * it is then never linked (the keys and the rules come from the library).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#define RD_HOLD_MAX 96
#include "redact.c"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FZ_MAXSEC 3
#define FZ_MAXSCH 32

struct fz_in {
	char sec[FZ_MAXSEC][17];
	const char *secp[FZ_MAXSEC];
	size_t nsec;
	uint8_t sch[FZ_MAXSCH];
	size_t nsch;
	const char *text;
	size_t len;
};

/*
 * Layout: n (n % 4 secrets), each as a length byte (% 16 + 1) and its
 * bytes; a schedule length byte (% 32) and that many schedule bytes
 * (low 6 bits: chunk size, 0x40: flush after the chunk, 0x80: flush
 * before it too); the text.  0 when the input is too short.
 */
static int
fz_parse(const uint8_t *d, size_t len, struct fz_in *in)
{
	size_t i, n, k, off = 0;

	memset(in, 0, sizeof(*in));
	if (len < 2)
		return 0;
	n = d[off++] % 4;
	for (i = 0; i < n && i < FZ_MAXSEC; i++) {
		if (off >= len)
			return 0;
		k = d[off++] % 16 + 1;
		if (off + k > len)
			return 0;
		memcpy(in->sec[in->nsec], d + off, k);
		in->sec[in->nsec][k] = '\0';
		off += k;
		in->secp[in->nsec] = in->sec[in->nsec];
		in->nsec++;
	}
	if (off >= len)
		return 0;
	n = d[off++] % FZ_MAXSCH;
	if (off + n > len)
		return 0;
	memcpy(in->sch, d + off, n);
	in->nsch = n;
	off += n;
	in->text = (const char *)d + off;
	in->len = len - off;
	return 1;
}

static char *
fz_scrub(const struct fz_in *in, int early, size_t *outlen)
{
	struct evbuffer *b = evbuffer_new();
	struct redact_keys *ks;
	struct redact *r;
	size_t off = 0, k, step = 0, n;
	uint8_t s;
	char *o;

	if (b == NULL || (ks = redact_keys_new(in->secp, in->nsec)) == NULL ||
	    (r = redact_new(ks)) == NULL)
		abort();
	if (early)
		redact_flush_partial(r, b);
	while (off < in->len) {
		s = in->nsch > 0 ? in->sch[step++ % in->nsch] : 0x7f;
		n = s & 0x3f;
		k = in->nsch == 0 ? in->len - off : n;
		if (k > in->len - off)
			k = in->len - off;
		if (early && (s & 0x80))
			redact_flush_partial(r, b);
		redact_feed(r, in->text + off, k, b);
		off += k;
		if (early && (s & 0x40))
			redact_flush_partial(r, b);
		if (step > in->len + 64 && n == 0)
			break; /* a schedule of empty chunks only */
	}
	if (off < in->len)
		redact_feed(r, in->text + off, in->len - off, b);
	if (early)
		redact_flush_partial(r, b);
	redact_finish(r, b);
	if (early)
		redact_flush_partial(r, b);
	redact_free(r);
	redact_keys_free(ks);
	*outlen = evbuffer_get_length(b);
	if ((o = malloc(*outlen + 1)) == NULL)
		abort();
	evbuffer_remove(b, o, *outlen);
	evbuffer_free(b);
	return o;
}

/* rd_pass matching where rd_may said it would not is a skipped secret. */
static void
fz_may(const char *text, size_t len)
{
	struct sbuf in = {(char *)text, len, len, 0, 0}, out = {0};
	unsigned may = rd_may(text, len);
	size_t k;

	for (k = 0; rd_patterns[k] != NULL; k++) {
		if (rd_pass(&in, &out, rd_patterns[k]) && !(may & 1u << k))
			abort();
		out.len = 0;
	}
	rd_sb_wipe(&out);
}

/*
 * The lines rd_plain_lines lets by leave as they are: each is a whole
 * line, no pass of rd_patterns changes it, it holds no PEM BEGIN and
 * does not end in the clamp marker's " chars]".
 */
static void
fz_plain(const char *text, size_t len)
{
	struct sbuf in = {0}, out = {0};
	size_t p = rd_plain_lines(text, len), off, n, k, e;
	const char *nl;

	if (p > len || (p > 0 && text[p - 1] != '\n'))
		abort();
	for (off = 0; off < p; off += n + 1) {
		nl = memchr(text + off, '\n', p - off);
		n = (size_t)(nl - (text + off));
		in.b = (char *)text + off;
		in.len = in.cap = n;
		for (k = 0; rd_patterns[k] != NULL; k++) {
			if (rd_pass(&in, &out, rd_patterns[k]))
				abort();
			out.len = 0;
		}
		if (rd_pem_find(in.b, n, "-----BEGIN", &e) != NULL ||
		    (n >= 7 && memcmp(in.b + n - 7, " chars]", 7) == 0))
			abort();
	}
	rd_sb_wipe(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct fz_in in;
	char *a, *z;
	size_t al, zl;

	if (!fz_parse(data, len, &in))
		return 0;
	fz_may(in.text, in.len);
	fz_plain(in.text, in.len);
	a = fz_scrub(&in, 0, &al);
	z = fz_scrub(&in, 1, &zl);
	if (al != zl || memcmp(a, z, al) != 0)
		abort();
	free(a);
	free(z);
	return 0;
}
