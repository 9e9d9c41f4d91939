/*
 * Unit tests for common/redact.c (SP-11): secret values (also split
 * across feeds at every byte), PEM blocks across lines, JWTs, AKIA ids,
 * Bearer and auth headers, key=value, provider prefixes, long runs, home
 * paths; and the shared "looks like a secret" predicates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/buffer.h>

#include "redact.h"

static char *
drain(struct evbuffer *b)
{
	size_t n = evbuffer_get_length(b);
	char *s = calloc(1, n + 1);

	assert_non_null(s);
	evbuffer_remove(b, s, n);
	return s;
}

/* Scrub in with secrets, fed in pieces of step bytes (0: whole). */
static char *
scrubbed(const char *const *sec, size_t n, const char *in, size_t step)
{
	struct evbuffer *b = evbuffer_new();
	struct redact_keys *ks = redact_keys_new(sec, n);
	struct redact *r = redact_new(ks);
	size_t off = 0, len = strlen(in), k;
	char *s;

	assert_non_null(ks);
	assert_non_null(r);
	while (off < len) {
		k = step == 0 || len - off < step ? len - off : step;
		redact_feed(r, in + off, k, b);
		off += k;
	}
	redact_finish(r, b);
	redact_free(r);
	redact_keys_free(ks);
	s = drain(b);
	evbuffer_free(b);
	return s;
}

static void
expect(const char *in, const char *want)
{
	char *s = scrubbed(NULL, 0, in, 0);

	assert_string_equal(s, want);
	free(s);
}

/* SP-11: resolved secret values, whole and split at every byte. */
static void
test_sp11_secret_value_split_every_byte(void **state)
{
	const char *sec[] = {"hunter2-value-XYZ", "short9"};
	const char *in =
	    "ok hunter2-value-XYZ and short9 end\nhunter2-value-XYZ";
	struct redact_keys *ks = redact_keys_new(sec, 2);
	struct evbuffer *b;
	struct redact *r;
	char *s, *w;
	size_t k, len = strlen(in);

	(void)state;
	w = scrubbed(sec, 2, in, 0);
	assert_string_equal(w, "ok *** and *** end\n***");
	assert_non_null(ks);
	for (k = 0; k <= len; k++) {
		b = evbuffer_new();
		r = redact_new(ks); /* one set of keys, many redactors */
		redact_feed(r, in, k, b);
		redact_feed(r, in + k, len - k, b);
		redact_finish(r, b);
		redact_free(r);
		s = drain(b);
		assert_string_equal(s, w);
		assert_null(strstr(s, "hunter2"));
		free(s);
		evbuffer_free(b);
	}
	redact_keys_free(ks);
	s = scrubbed(sec, 2, in, 1);
	assert_string_equal(s, w);
	free(s);
	free(w);
}

/* SP-11: overlapping secrets: the longest wins; empty ignored. */
static void
test_sp11_secret_overlap(void **state)
{
	const char *sec[] = {"abc", "", "abcdef"};
	char *s;

	(void)state;
	s = scrubbed(sec, 3, "xabcdefx abcx\n", 0);
	assert_string_equal(s, "x***x ***x\n");
	free(s);
}

/* SP-11: PEM private key blocks across lines (and split feeds). */
static void
test_sp11_pem_block_dropped(void **state)
{
	const char *in = "before\n-----BEGIN RSA PRIVATE KEY-----\n"
			 "MIIEowIBAAKCAQEA7V\nq2lnOIjdLz\n"
			 "-----END RSA PRIVATE KEY-----\nafter\n";
	char *s;
	size_t step;

	(void)state;
	for (step = 0; step < 9; step++) {
		s = scrubbed(NULL, 0, in, step);
		assert_string_equal(s, "before\n***\nafter\n");
		free(s);
	}
	expect("k=-----BEGIN OPENSSH PRIVATE KEY-----abc-----END OPENSSH "
	       "PRIVATE KEY----- tail\n",
	    "k=*** tail\n");
	expect("-----BEGIN PRIVATE KEY-----\nAAAA\n", "***\n");
	expect("-----BEGIN PGP PRIVATE KEY BLOCK-----\nxx\n-----END PGP "
	       "PRIVATE KEY BLOCK-----\n",
	    "***\n");
	expect("-----BEGIN PUBLIC KEY-----\n", "-----BEGIN PUBLIC KEY-----\n");
	/* body lines as a diff or a C string shows them */
	expect("+-----BEGIN EC PRIVATE KEY-----\n+MHcCAQEEIB9x\n+\tAwEHoU=\n"
	       "+-----END EC PRIVATE KEY-----\n+ok\n",
	    "+***\n+ok\n");
	expect(
	    "\"-----BEGIN RSA PRIVATE KEY-----\\n\"\n\"MIIEow\\n\"\nx = 1;\n",
	    "\"***\nx = 1;\n");
	/* a BEGIN line quoted alone does not swallow what follows */
	expect("if (memmem(p, \"-----BEGIN RSA PRIVATE KEY-----\"))\n"
	       "\treturn 1;\nnext line\n",
	    "if (memmem(p, \"***\n\treturn 1;\nnext line\n");
}

/* SP-11: JWTs */
static void
test_sp11_jwt(void **state)
{
	(void)state;
	expect("t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig_-x9 ok\n",
	    "t=*** ok\n");
	expect("(eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.)\n", "(***)\n");
}

/* SP-11: AWS key ids */
static void
test_sp11_akia(void **state)
{
	(void)state;
	expect("id AKIAIOSFODNN7EXAMPLE here\n", "id *** here\n");
	expect("ASIAABCDEFGHIJKLMNOP\n", "***\n");
	expect("AKIA is a prefix\n", "AKIA is a prefix\n");
}

/* SP-11: Bearer tokens keep the word; auth header values go. */
static void
test_sp11_bearer_and_headers(void **state)
{
	(void)state;
	expect("Authorization: Bearer abc.def-ghi\n",
	    "Authorization: Bearer ***\n");
	expect("curl -H 'x' --oauth bearer tok123== x\n",
	    "curl -H 'x' --oauth bearer *** x\n");
	expect("send Bearer abc123def now\n", "send Bearer *** now\n");
	/* prose, placeholders and code are not tokens */
	expect("a Bearer token, bearer authentication\n",
	    "a Bearer token, bearer authentication\n");
	expect("-H \"Authorization: Bearer $TOKEN\" f\"Bearer {tok}\"\n",
	    "-H \"Authorization: Bearer $TOKEN\" f\"Bearer {tok}\"\n");
	expect("X-Api-Key: k-123\n", "X-Api-Key: ***\n");
	expect("x-goog-api-key:abc\n", "x-goog-api-key:***\n");
	expect("Proxy-Authorization: Basic dXNlcjpwYXNz\n",
	    "Proxy-Authorization: ***\n");
	expect("{\"authorization\": \"Basic abc\", \"n\": 1}\n",
	    "{\"authorization\": \"***\", \"n\": 1}\n");
	expect("X-Anthropic-Key: k\n", "X-Anthropic-Key: ***\n");
}

/* SP-11: secret-looking key=value / key: value */
static void
test_sp11_key_value(void **state)
{
	(void)state;
	expect("password=hunter2 user=bob\n", "password=*** user=bob\n");
	expect("DB_PASSWORD: s3cr3t\n", "DB_PASSWORD: ***\n");
	expect("api_key = 'abc'\n", "api_key = '***'\n");
	expect("GITHUB_TOKEN=xyz\n", "GITHUB_TOKEN=***\n");
	expect("https://x/?access_token=abc&y=1\n",
	    "https://x/?access_token=***&y=1\n");
	expect("DATABASE_URL=postgres://u:p@h/db\n", "DATABASE_URL=***\n");
	expect("author: Jane\n", "author: Jane\n");
	expect("max_tokens: 4096\n", "max_tokens: 4096\n");
	/* code and prose: calls, arguments, members, keywords, words */
	expect("request(url, auth=tok) token = get_token()\n",
	    "request(url, auth=tok) token = get_token()\n");
	expect("self.token = self.token_from(env); auth=None, x\n",
	    "self.token = self.token_from(env); auth=None, x\n");
	expect("mask_cut_token: the blank may start a marker\n",
	    "mask_cut_token: the blank may start a marker\n");
	expect("OPENAI_API_KEY=${OPENAI_API_KEY} password=changeme\n",
	    "OPENAI_API_KEY=${OPENAI_API_KEY} password=***\n");
	expect("name: cordon\n", "name: cordon\n");
}

/* SP-11: provider prefixes and long runs */
static void
test_sp11_prefixes(void **state)
{
	(void)state;
	expect("xoxb-123456789012-abcdefgh\n", "***\n");
	expect("xapp-1-A0123-abcdef\n", "***\n");
	expect("github_pat_11ABCDEFG0123456789_abc\n", "***\n");
	expect("ghp_abcdefghijklmnopqrstuvwxyz012345\n", "***\n");
	expect("gho_abcdefghijklmnop1234\n", "***\n");
	expect("sk-ant-api03-abcdefghijklmnop\n", "***\n");
	expect("key sk-proj-abcdefghijklmnopqrstuv.\n", "key ***.\n");
	expect("sk_live_abcdefgh1234\n", "***\n");
	expect("rk_test_abcdefgh1234 pk_live_abcdefgh1234\n", "*** ***\n");
	expect("whsec_abcdefgh1234\n", "***\n");
	expect("glpat-abcdefghijklmnopqrst\n", "***\n");
	expect("hf_abcdefghijklmnopqrstu\n", "***\n");
	expect("AIzaSyA-abcdefghijklmnopqrstuvwxyz012\n", "***\n");
	expect("ya29.a0AfH6SMBabcdefghijk\n", "***\n");
	expect("sk-learn and task-list\n", "sk-learn and task-list\n");
	/* a bare hex or token run is not a key format (a commit id) */
	expect("h=0123456789abcdef0123456789abcdef01234567 .\n",
	    "h=0123456789abcdef0123456789abcdef01234567 .\n");
	expect("a 39-char run aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
	    "a 39-char run aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
}

/*
 * SP-11: each secret-looking name, header and key prefix alone on its
 * line is found (the line stage's gate lets no listed one through).
 */
static void
test_sp11_each_listed_name_alone(void **state)
{
	static const char *const names[] = {"token", "api_key", "apikey",
	    "secret", "password", "passwd", "credential", "bearer",
	    "private_key", "access_key", "session_key", "signing_key", "auth",
	    "x_auth_key", "my_pat", "my-pat", "db.dsn", "redis_url",
	    "mongodb-uri", "mysql_url", "postgres.url", "database_uri",
	    "X-Auth-Token", "x-openai-key", "Api-Key", NULL};
	static const char *const prefixes[] = {"ASIA", "AROA", "AGPA", "AIDA",
	    "ANPA", "ANVA", "xoxa-", "xoxe-", "xoxp-", "xoxr-", "xoxs-", "ghu_",
	    "ghs_", "ghr_", "sk_test_", "pk_test_", NULL};
	char in[512], want[512];
	size_t k;

	(void)state;
	for (k = 0; names[k] != NULL; k++) {
		snprintf(in, sizeof(in), "%s=Zq7wR2pLm9Kx\n", names[k]);
		snprintf(want, sizeof(want), "%s=***\n", names[k]);
		expect(in, want);
	}
	for (k = 0; prefixes[k] != NULL; k++) {
		snprintf(in, sizeof(in), "(%sABCDEFGH23456789)\n", prefixes[k]);
		expect(in, "(***)\n");
	}
	/* a name over 128 bytes counts as secret-looking */
	memset(in, 'n', 129);
	memcpy(in + 129, "=Zq7wR2pLm9Kx\n", 15);
	memcpy(want, in, 130);
	memcpy(want + 130, "***\n", 5);
	expect(in, want);
}

/* SP-11: /home/<user>/ -> ~/ (last) */
static void
test_sp11_home_paths(void **state)
{
	(void)state;
	expect("open /home/alice/src/x.c\n", "open ~/src/x.c\n");
	expect("/home/bob\n", "/home/bob\n");
	expect("a /home//x\n", "a /home//x\n");
}

/* SP-11: the placeholder never names the kind of secret. */
static void
test_sp11_placeholder_opaque(void **state)
{
	char *s = scrubbed(NULL, 0,
	    "AKIAIOSFODNN7EXAMPLE ghp_abcdefghijklmnopqrstuvwxyz012345\n", 0);

	(void)state;
	assert_string_equal(s, "*** ***\n");
	free(s);
}

/*
 * SP-11: a secret longer than half the line hold cannot be kept whole at
 * an over-long line's cut: no scrubber is made (the caller refuses), so
 * it cannot read past its hold either.
 */
static void
test_sp11_overlong_secret_refused(void **state)
{
	char *big = malloc(40000);
	const char *sec[1];
	struct redact_keys *ks;
	struct redact *r;

	(void)state;
	assert_non_null(big);
	memset(big, 's', 39999);
	big[39999] = '\0';
	sec[0] = big;
	assert_non_null(ks = redact_keys_new(sec, 1));
	assert_null(redact_new(ks));
	redact_keys_free(ks);
	big[32768] = '\0'; /* exactly half: still fine */
	assert_non_null(ks = redact_keys_new(sec, 1));
	assert_non_null(r = redact_new(ks));
	redact_free(r);
	redact_keys_free(ks);
	free(big);
}

/* SP-11: an over-long line is flushed before its end, yet a secret at
 * the cut still goes. */
static void
test_sp11_long_line_flushed(void **state)
{
	const char *sec[] = {"SECRETVALUE"};
	struct evbuffer *b = evbuffer_new();
	struct redact_keys *ks = redact_keys_new(sec, 1);
	struct redact *r = redact_new(ks);
	char *big, *s;
	size_t i, len = 200000;

	(void)state;
	big = malloc(len);
	assert_non_null(big);
	for (i = 0; i < len; i++)
		big[i] = (i % 7 == 0) ? ' ' : 'a';
	memcpy(big + 65530, "SECRETVALUE", 11);
	for (i = 0; i < len; i += 4096)
		redact_feed(r, big + i, len - i < 4096 ? len - i : 4096, b);
	assert_true(evbuffer_get_length(b) > 0); /* not all held */
	redact_finish(r, b);
	s = drain(b);
	assert_null(strstr(s, "SECRET"));
	free(s);
	free(big);
	redact_free(r);
	redact_keys_free(ks);
	evbuffer_free(b);
}

/* SP-11: a secret cut short by the line clamp or by the end of the
 * stream (byte cap) still does not show its head. */
static void
test_sp11_cut_secret_prefix_masked(void **state)
{
	const char *sec[] = {"TOPSECRET-0123456789"};
	char *s;

	(void)state;
	s = scrubbed(
	    sec, 1, "abc TOPSECR \xe2\x80\xa6 [+120 chars]\nnext\n", 0);
	assert_string_equal(s, "abc *** \xe2\x80\xa6 [+120 chars]\nnext\n");
	free(s);
	s = scrubbed(sec, 1, "out TOPSEC", 3);
	assert_string_equal(s, "out ***");
	free(s);
	/* three bytes are too few to tell; a mid-line prefix is just text */
	s = scrubbed(sec, 1, "a TOP\nTOPSECRET was here\n", 0);
	assert_string_equal(s, "a TOP\nTOPSECRET was here\n");
	free(s);
	s = scrubbed(sec, 1, "end TOP", 0);
	assert_string_equal(s, "end TOP");
	free(s);
}

/*
 * SP-11: one set of keys serves every redactor made from it, and keeps
 * each value as written where its matched form differs (blanks dropped):
 * the head of a value with blanks, cut off at the end, still goes.
 */
static void
test_sp11_keys_shared_raw_head(void **state)
{
	const char *sec[] = {
	    "correct horse battery staple", "TOPSECRET-0123456789"};
	const char *in[] = {
	    "x correct horse bat", "y correcthorse batterystaple. TOPSEC"};
	const char *want[] = {"x ***", "y ***. ***"};
	struct redact_keys *ks = redact_keys_new(sec, 2);
	struct evbuffer *b = evbuffer_new();
	char *s;
	int i;

	(void)state;
	assert_non_null(ks);
	for (i = 0; i < 4; i++) {
		assert_int_equal(
		    redact_buf(ks, in[i % 2], strlen(in[i % 2]), 0, b), 0);
		s = drain(b);
		assert_string_equal(s, want[i % 2]);
		free(s);
	}
	redact_keys_free(ks);
	redact_keys_free(NULL);
	evbuffer_free(b);
}

/* --- early flush (redact_flush_partial): same bytes as line-based ----- */

/* in fed in pieces of step bytes (0: whole), the early flush called after
 * each; *early: what had left before the first '\n' was fed. */
static char *
streamed(const char *const *sec, size_t n, const char *in, size_t step,
    size_t split, size_t *early)
{
	struct evbuffer *b = evbuffer_new();
	struct redact_keys *ks = redact_keys_new(sec, n);
	struct redact *r = redact_new(ks);
	size_t off = 0, len = strlen(in), k;
	const char *nl = strchr(in, '\n');
	char *s;

	assert_non_null(r);
	*early = 0;
	while (off < len) {
		k = step == 0 || len - off < step ? len - off : step;
		if (split > off && split < off + k)
			k = split - off;
		redact_feed(r, in + off, k, b);
		redact_flush_partial(r, b);
		redact_flush_partial(r, b);
		off += k;
		if (nl == NULL || in + off <= nl)
			*early = evbuffer_get_length(b);
	}
	redact_finish(r, b);
	redact_flush_partial(r, b);
	redact_free(r);
	redact_keys_free(ks);
	s = drain(b);
	evbuffer_free(b);
	return s;
}

/*
 * The invariant, for in: split once at every byte, and fed one byte at a
 * time, with early flushes after every piece, the output is the
 * line-based one, want.  Returns the most that left before the first
 * '\n' in any of those runs.
 */
static size_t
same_as_lines(
    const char *const *sec, size_t n, const char *in, const char *want)
{
	char *w = scrubbed(sec, n, in, 0), *s;
	size_t k, e, most = 0, len = strlen(in);

	assert_string_equal(w, want);
	for (k = 0; k <= len; k++) {
		s = streamed(sec, n, in, 0, k, &e);
		assert_string_equal(s, w);
		most = e > most ? e : most;
		free(s);
	}
	s = streamed(sec, n, in, 1, 0, &e);
	assert_string_equal(s, w);
	most = e > most ? e : most;
	free(s);
	free(w);
	return most;
}

/* Plain text streams: the head leaves before the line ends. */
static void
test_sp11_early_flush_streams_text(void **state)
{
	const char *sec[] = {"hunter2-value-XYZ"};
	struct evbuffer *b = evbuffer_new();
	struct redact_keys *ks = redact_keys_new(sec, 1);
	struct redact *r = redact_new(ks);
	char *s;

	(void)state;
	redact_feed(r, "Hello world, this", 17, b);
	redact_flush_partial(r, b);
	s = drain(b);
	assert_string_equal(s, "Hello world, ");
	free(s);
	redact_feed(r, " is hunter2-value-XYZ ok ", 25, b);
	redact_flush_partial(r, b);
	s = drain(b);
	assert_string_equal(s, "this is *** ok ");
	free(s);
	redact_feed(r, "end", 3, b);
	redact_finish(r, b);
	s = drain(b);
	assert_string_equal(s, "end");
	free(s);
	redact_free(r);
	redact_keys_free(ks);
	evbuffer_free(b);
	assert_int_equal(same_as_lines(sec, 1, "Hello world, this is fine\n",
			     "Hello world, this is fine\n"),
	    strlen("Hello world, this is "));
}

/* A secret value split at every byte, flushed between: never out. */
static void
test_sp11_early_flush_secret_split(void **state)
{
	const char *sec[] = {"hunter2-value-XYZ", "p4ss word"};
	size_t e;

	(void)state;
	e = same_as_lines(sec, 2,
	    "ok hunter2-value-XYZ and p4ss word, p4ss hunter2-value-XY\nz",
	    "ok *** and ***, p4ss hunter2-value-XY\nz");
	assert_true(e >= strlen("ok *** and ***, "));
	/* The tail that is the head of a secret is held (and masked when
	 * the stream ends on it). */
	same_as_lines(sec, 2, "see hunter2-val", "see ***");
	same_as_lines(sec, 2, "x p4ss ", "x ***");
}

/* Bearer, header values and secret-looking keys whose value is in the
 * next chunk. */
static void
test_sp11_early_flush_open_values(void **state)
{
	(void)state;
	assert_int_equal(
	    same_as_lines(NULL, 0, "say Bearer   tok123abc and more\n",
		"say Bearer   *** and more\n"),
	    strlen("say Bearer   *** and "));
	same_as_lines(
	    NULL, 0, "api_key: s3cr3tvalue rest\n", "api_key: *** rest\n");
	same_as_lines(NULL, 0, "the \"password\" = 'x y' token == z \n",
	    "the \"password\" = '*** y' token == z \n");
	same_as_lines(NULL, 0, "Authorization: Basic abc1 def\nnext ",
	    "Authorization: ***\nnext ");
	same_as_lines(NULL, 0, "{\"x-api-key\": \"v a l\", \"b\": 1}\n",
	    "{\"x-api-key\": \"***\", \"b\": 1}\n");
}

/* PEM markers, 40+ runs, home paths, a clamp marker, split anywhere. */
static void
test_sp11_early_flush_markers(void **state)
{
	const char *sec[] = {"abcdEFGH"};

	(void)state;
	same_as_lines(NULL, 0,
	    "pre -----BEGIN RSA PRIVATE KEY-----\nMIIE+abc/\n"
	    "-----END RSA PRIVATE KEY----- after it\n",
	    "pre ***\n after it\n");
	same_as_lines(NULL, 0,
	    "x ghp_0123456789abcdefghijABCDEFGHIJ0123456789 tail\n",
	    "x *** tail\n");
	same_as_lines(NULL, 0, "see /home/user/x and /home/us er/ y\n",
	    "see ~/x and /home/us er/ y\n");
	same_as_lines(sec, 1, "xx abcdEF \xE2\x80\xA6 [+12 chars]\nyy ",
	    "xx *** \xE2\x80\xA6 [+12 chars]\nyy ");
	same_as_lines(sec, 1, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln ok\n",
	    "*** ok\n");
}

/* A line over the hold bound is cut where the line-based scrubber cuts
 * it, whatever left early. */
static void
test_sp11_early_flush_long_line(void **state)
{
	const char *sec[] = {"zz-top-secret-value"};
	struct evbuffer *b1 = evbuffer_new(), *b2 = evbuffer_new();
	struct redact_keys *ks = redact_keys_new(sec, 1);
	struct redact *r1 = redact_new(ks), *r2 = redact_new(ks);
	size_t len = 200 * 1024, off, k;
	char *in = malloc(len), *s1, *s2;

	(void)state;
	assert_non_null(in);
	for (off = 0; off < len; off++)
		in[off] = "word "[off % 5];
	memcpy(in + 65530, "zz-top-secret-value", 19);
	memcpy(in + 131000, "Bearer ", 7);
	in[len - 1] = '\n';
	for (off = 0; off < len; off += k) {
		k = len - off < 997 ? len - off : 997;
		redact_feed(r1, in + off, k, b1);
		redact_feed(r2, in + off, k, b2);
		redact_flush_partial(r2, b2);
		if (off == 0)
			assert_true(evbuffer_get_length(b2) > 0);
	}
	redact_finish(r1, b1);
	redact_finish(r2, b2);
	s1 = drain(b1);
	s2 = drain(b2);
	assert_string_equal(s1, s2);
	assert_null(strstr(s2, "zz-top"));
	free(s1);
	free(s2);
	free(in);
	redact_free(r1);
	redact_free(r2);
	redact_keys_free(ks);
	evbuffer_free(b1);
	evbuffer_free(b2);
}

/* The shared predicates used by policy/ (SEC-3, AU-4). */
static void
test_sec3_secretish_predicates(void **state)
{
	(void)state;
	assert_int_equal(redact_value_secretish("AKIAIOSFODNN7EXAMPLE"), 1);
	assert_int_equal(redact_value_secretish("--token=abc"), 1);
	assert_int_equal(redact_value_secretish("Bearer abc123def"), 1);
	assert_int_equal(
	    redact_value_secretish("-----BEGIN EC PRIVATE KEY-----"), 1);
	assert_int_equal(
	    redact_value_secretish("--output-format=stream-json"), 0);
	assert_int_equal(
	    redact_value_secretish("--include-partial-messages"), 0);
	assert_int_equal(redact_value_secretish(
			     "--dangerously-bypass-approvals-and-sandbox"),
	    0);
	assert_int_equal(redact_value_secretish(
			     "--Dangerously-bypass-approvals-and-sandbox"),
	    1);
	assert_int_equal(redact_value_secretish(
			     "--dangerously-bypass-approvals-and-sandbox2"),
	    1);
	assert_int_equal(
	    redact_value_secretish("k3Yq9ZpLm2Xv8RtW4nBc7HdF1sGj6KeA0uVyTo5i"),
	    1);
	assert_int_equal(redact_value_secretish("{prompt}"), 0);
	assert_int_equal(redact_value_secretish(""), 0);
	assert_int_equal(redact_key_secretish("GITHUB_TOKEN", 12), 1);
	assert_int_equal(redact_key_secretish("x-api-key", 9), 1);
	assert_int_equal(redact_key_secretish("MY_PAT", 6), 1);
	assert_int_equal(redact_key_secretish("SENTRY_DSN", 10), 1);
	assert_int_equal(redact_key_secretish("REDIS_URL", 9), 1);
	assert_int_equal(redact_key_secretish("X_AUTH", 6), 1);
	assert_int_equal(redact_key_secretish("author", 6), 0);
	assert_int_equal(redact_key_secretish("max_tokens", 10), 0);
	assert_int_equal(redact_key_secretish("--max-tokens", 12), 0);
	assert_int_equal(redact_key_secretish("tokens", 6), 0);
	assert_int_equal(redact_key_secretish("token_tokens", 12), 1);
	assert_int_equal(redact_key_secretish("secret_tokens", 13), 1);
	assert_int_equal(redact_key_secretish("TOKEN", 5), 1);
	assert_int_equal(redact_key_secretish("HOME_URL", 8), 0);
	assert_int_equal(redact_key_secretish("PATH", 4), 0);
}

/* One-shot helper */
static void
test_sp11_redact_buf(void **state)
{
	const char *sec[] = {"zz-top-secret"};
	struct redact_keys *ks = redact_keys_new(sec, 1);
	struct evbuffer *b = evbuffer_new();
	char *s;

	(void)state;
	assert_int_equal(redact_buf(ks, "a zz-top-secret b", 17, 0, b), 0);
	s = drain(b);
	assert_string_equal(s, "a *** b");
	free(s);
	evbuffer_free(b);
	redact_keys_free(ks);
}

/* One scrub of in (cut as given), as a string. */
static char *
scrub(const char *in, int cut)
{
	struct evbuffer *b = evbuffer_new();
	char *s;

	assert_non_null(b);
	assert_int_equal(redact_buf(NULL, in, strlen(in), cut, b), 0);
	s = drain(b);
	evbuffer_free(b);
	return s;
}

/*
 * SP-11 at a cut: a key cut shorter than its pattern wants (ghp_ and sk-
 * need 16 characters) still goes when the cut is the cleaner's clamp or a
 * byte cap; an ordinary ending of a whole stream is left alone.
 */
static void
test_sp11_token_cut_short(void **state)
{
	char *s;

	(void)state;
	s = scrub("w w sk-proj-Ab3dE \xe2\x80\xa6 [+35 chars]\n", 0);
	assert_string_equal(s, "w w *** \xe2\x80\xa6 [+35 chars]\n");
	free(s);
	s = scrub("yy 9f86d081884c7d6", 1);
	assert_string_equal(s, "yy ***");
	free(s);
	/* short of 8, or not cut: as it is */
	s = scrub("w w sk-ab \xe2\x80\xa6 [+35 chars]\n", 0);
	assert_string_equal(s, "w w sk-ab \xe2\x80\xa6 [+35 chars]\n");
	free(s);
	s = scrub("Result: 1234567890", 0);
	assert_string_equal(s, "Result: 1234567890");
	free(s);
}

/* --- known values in every form (SP-11) ---------------------------------- */

static const char kv_val[] = "Zq8-wN3rT5yU7iOp";

/* in scrubbed with kv_val loaded: whole, split at every byte with early
 * flushes, and a byte at a time, always want. */
static void
kv_expect(const char *in, const char *want)
{
	const char *sec[] = {kv_val};

	same_as_lines(sec, 1, in, want);
}

static void
hex_of(const char *v, int upper, char *o)
{
	const char *d = upper ? "0123456789ABCDEF" : "0123456789abcdef";

	for (; *v != '\0'; v++) {
		*o++ = d[(unsigned char)*v >> 4];
		*o++ = d[(unsigned char)*v & 15];
	}
	*o = '\0';
}

/*
 * SP-11: a known value with ignorable characters between its characters
 * (line breaks, tabs, blanks, the other blanks of unicode.c's UNI_SPACE,
 * U+200B..D, U+2060, U+FEFF, U+00AD, the cleaner's "<U+XXXX>"), one
 * character per line, or reversed: the whole span goes.
 */
static void
test_sp11_known_value_separated(void **state)
{
	(void)state;
	kv_expect("a Zq8-wN3r\nT5yU7iOp b\n", "a *** b\n");
	kv_expect("a Zq8-wN3r\n    T5yU7iOp b\n", "a *** b\n");
	kv_expect("Zq8-wN3r\tT5yU7iOp\n", "***\n");
	kv_expect("Zq8-w\xe2\x80\x8bN3rT5yU7iOp\n", "***\n");
	kv_expect("Zq8-wN3rT5\xc2\xadyU7iOp\n", "***\n");
	kv_expect("Zq\xe2\x81\xa0\x38-wN3rT5yU7i\xef\xbb\xbfOp\n", "***\n");
	/* blanks the cleaner shows as they are: NBSP, U+1680, U+2002,
	 * U+200A, U+202F, U+205F, U+3000 */
	kv_expect("a Zq8-w\xc2\xa0N3rT5yU7iOp b\n", "a *** b\n");
	kv_expect("Zq8-w\xe1\x9a\x80N3rT5\xe2\x80\x82yU7iOp\n", "***\n");
	kv_expect("Zq8\xe2\x80\x8a-wN3\xe2\x80\xafrT5yU7iOp\n", "***\n");
	kv_expect("Zq8-w\xe2\x81\x9fN3rT5y\xe3\x80\x80U7iOp\n", "***\n");
	/* a visible character of the same blocks is no blank */
	kv_expect(
	    "Zq8-w\xe2\x80\x90N3rT5yU7iOp\n", "Zq8-w\xe2\x80\x90N3rT5yU7iOp\n");
	kv_expect(
	    "Zq8-w\xe3\x80\x81N3rT5yU7iOp\n", "Zq8-w\xe3\x80\x81N3rT5yU7iOp\n");
	kv_expect("Z\nq\n8\n-\nw\nN\n3\nr\nT\n5\ny\nU\n7\ni\nO\np\n", "***\n");
	kv_expect("Z q 8 - w N 3 r T 5 y U 7 i O p!\n", "***!\n");
	kv_expect("rev: pOi7Uy5Tr3Nw-8qZ.\n", "rev: ***.\n");
	/* the cleaner's visible form of an invisible code point (SP-10) */
	kv_expect("Zq8-w<U+200B>N3rT5yU7iOp\n", "***\n");
	kv_expect("Zq8-wN3rT5<U+00AD>yU7i<U+E0100>Op\n", "***\n");
	kv_expect("Zq8-w<U+20>N3rT5yU7iOp\n", "Zq8-w<U+20>N3rT5yU7iOp\n");
	/* the bound: at most 10 ignorable bytes between two characters */
	kv_expect("Zq8-wN3r          T5yU7iOp\n", "***\n");
	kv_expect(
	    "Zq8-wN3r           T5yU7iOp\n", "Zq8-wN3r           T5yU7iOp\n");
	/* a head alone is not the value (but is masked at the very end) */
	kv_expect("Zq8-wN3r\nnext\n", "Zq8-wN3r\nnext\n");
}

/* SP-11: URL-encoded (%XX either case, partly, '+' for a blank) and hex
 * (either case) forms of a known value. */
static void
test_sp11_known_value_encoded(void **state)
{
	const char *sp[] = {"p@ss w/rd+1"};
	char in[256], h[64];

	(void)state;
	kv_expect("u=Zq8%2DwN3rT5yU7iOp&x=1\n", "u=***&x=1\n");
	kv_expect(
	    "%5A%71%38%2D%77%4E%33%72%54%35%79%55%37%69%4F%70\n", "***\n");
	kv_expect(
	    "%5a%71%38%2d%77%4e%33%72%54%35%79%55%37%69%4f%70\n", "***\n");
	same_as_lines(sp, 1, "q=p%40ss+w%2Frd%2B1 .\n", "q=*** .\n");
	same_as_lines(sp, 1, "q=p%40ss%20w%2frd%2b1 .\n", "q=*** .\n");
	hex_of(kv_val, 0, h);
	snprintf(in, sizeof(in), "hex %s end\n", h);
	kv_expect(in, "hex *** end\n");
	hex_of(kv_val, 1, h);
	snprintf(in, sizeof(in), "hex %s end\n", h);
	kv_expect(in, "hex *** end\n");
}

/*
 * SP-11: base64 forms of a known value: alone (standard and URL-safe,
 * with and without padding), and inside a larger blob at offset 0, 1 or
 * 2 mod 3, where only the characters that depend on the value's bits
 * alone are its own.
 */
static void
test_sp11_known_value_base64(void **state)
{
	/* "Zq8-wN3rT5yU7iOp" */
	kv_expect("b WnE4LXdOM3JUNXlVN2lPcA== e\n", "b *** e\n");
	kv_expect("b WnE4LXdOM3JUNXlVN2lPcA e\n", "b *** e\n");
	/* "xxZq8-wN3rT5yU7iOpyy" (offset 2), "xZq8-wN3rT5yU7iOpy" (1),
	 * "xyzZq8-wN3rT5yU7iOpQ" (0) */
	kv_expect("eHhacTgtd04zclQ1eVU3aU9weXk=\n", "eHh***eXk=\n");
	kv_expect("eFpxOC13TjNyVDV5VTdpT3B5\n", "eF***B5\n");
	kv_expect("eHl6WnE4LXdOM3JUNXlVN2lPcFE=\n", "eHl6***FE=\n");
	/* wrapped by `base64` at 76 columns, split inside the value */
	kv_expect("eHl6WnE4LXdOM3\nJUNXlVN2lPcFE=\n", "eHl6***FE=\n");
	(void)state;
}

/* SP-11: a value shorter than 8 bytes is matched whole only (no
 * separators); shorter than 4, only as itself. */
static void
test_sp11_known_value_short(void **state)
{
	const char *sec[] = {"k9Qz7", "ab"};

	(void)state;
	same_as_lines(sec, 2, "x k9Qz7 y\n", "x *** y\n");
	same_as_lines(sec, 2, "x k9 Qz7 y\n", "x k9 Qz7 y\n");
	same_as_lines(sec, 2, "x 7zQ9k 6b39517a37 y\n", "x *** *** y\n");
	same_as_lines(sec, 2, "x ab ba 6162 YWI=\n", "x *** ba 6162 YWI=\n");
}

/*
 * SP-11 precision: what coding agents print all day is not a secret: a
 * commit id, a digest, a base64 blob, a run of one letter, a long
 * identifier, a UUID.  (A known value is still caught inside any.)
 */
static void
test_sp11_ordinary_output_untouched(void **state)
{
	const char *lines[] = {
	    "commit 7d569b65fcaffe155276d18e8bfc5888177297b5\n",
	    "image: node:20@sha256:"
	    "0f6e5bb4a1a2c2e8a3b1e2b6d4f0c9a8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2"
	    "\n",
	    "\"integrity\": \"sha512-"
	    "Q2xhdWRlIENvZGUgc3RyZWFtLWpzb24gdHJhbnNjcmlwdCBzYW1wbGUgYmxvYg=="
	    "\"\n",
	    "expected 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'\n",
	    "class TokenRefreshSchedulerForBackgroundServiceWorkers {}\n",
	    "session_id a3bb189e-8bf9-3888-9912-ace4e6543002 ok\n",
	    "toolu_01A09q90qw90lq917835lq9 msg_01XFDUDYJgAACzvnptvVoYEL\n",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		expect(lines[i], lines[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sp11_secret_value_split_every_byte),
	    cmocka_unit_test(test_sp11_secret_overlap),
	    cmocka_unit_test(test_sp11_overlong_secret_refused),
	    cmocka_unit_test(test_sp11_pem_block_dropped),
	    cmocka_unit_test(test_sp11_jwt),
	    cmocka_unit_test(test_sp11_akia),
	    cmocka_unit_test(test_sp11_bearer_and_headers),
	    cmocka_unit_test(test_sp11_key_value),
	    cmocka_unit_test(test_sp11_prefixes),
	    cmocka_unit_test(test_sp11_each_listed_name_alone),
	    cmocka_unit_test(test_sp11_home_paths),
	    cmocka_unit_test(test_sp11_placeholder_opaque),
	    cmocka_unit_test(test_sp11_long_line_flushed),
	    cmocka_unit_test(test_sp11_cut_secret_prefix_masked),
	    cmocka_unit_test(test_sp11_keys_shared_raw_head),
	    cmocka_unit_test(test_sec3_secretish_predicates),
	    cmocka_unit_test(test_sp11_redact_buf),
	    cmocka_unit_test(test_sp11_token_cut_short),
	    cmocka_unit_test(test_sp11_early_flush_streams_text),
	    cmocka_unit_test(test_sp11_early_flush_secret_split),
	    cmocka_unit_test(test_sp11_early_flush_open_values),
	    cmocka_unit_test(test_sp11_early_flush_markers),
	    cmocka_unit_test(test_sp11_early_flush_long_line),
	    cmocka_unit_test(test_sp11_known_value_separated),
	    cmocka_unit_test(test_sp11_known_value_encoded),
	    cmocka_unit_test(test_sp11_known_value_base64),
	    cmocka_unit_test(test_sp11_known_value_short),
	    cmocka_unit_test(test_sp11_ordinary_output_untouched),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
