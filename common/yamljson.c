/*
 * Strict YAML -> json-c loader built on libyaml's event parser.  Error
 * messages are fixed phrases with a line and column; they never quote the
 * document.  Touches only the file it is asked to open.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <yaml.h>

#include "charset.h"
#include "util.h"
#include "yamljson.h"

#define YJ_MAX_SIZE  (1024 * 1024)
#define YJ_MAX_DEPTH 32

struct yj {
	yaml_parser_t y_parser;
	const uint8_t *y_buf;
	size_t y_len;
	struct yaml_err *y_err;
	int y_wipe; /* secrets: wipe libyaml's copies before freeing */
};

/* yaml_event_delete(), wiping a scalar's bytes first when asked. */
static void
yj_event_done(struct yj *y, yaml_event_t *ev)
{
	if (y->y_wipe && ev->type == YAML_SCALAR_EVENT &&
	    ev->data.scalar.value != NULL)
		explicit_bzero(ev->data.scalar.value, ev->data.scalar.length);
	yaml_event_delete(ev);
}

static struct json_object *yj_node(struct yj *, yaml_event_t *, int);

static void
yj_seterr(struct yaml_err *err, unsigned long line, unsigned long col,
    const char *msg)
{
	err->ye_line = line;
	err->ye_col = col;
	snprintf(err->ye_msg, sizeof(err->ye_msg), "%s", msg);
}

static void
yj_markerr(struct yj *y, const yaml_mark_t *m, const char *msg)
{
	yj_seterr(y->y_err, (unsigned long)m->line + 1,
	    (unsigned long)m->column + 1, msg);
}

/*
 * libyaml's problem strings are literals in its own source, but check
 * anyway: anything that is not a short phrase of plain ASCII is dropped.
 */
static int
yj_phrase_ok(const char *s)
{
	return s != NULL &&
	       charset_shape(s, strnlen(s, 101), "a-zA-Z0-9 ,.:;'%()[]{}<>!-",
		   "a-zA-Z0-9 ,.:;'%()[]{}<>!-", 1, 100);
}

/* Reader errors carry a byte offset, not a mark: count lines ourselves. */
static void
yj_offset_pos(
    const struct yj *y, size_t off, unsigned long *line, unsigned long *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	if (off > y->y_len)
		off = y->y_len;
	for (i = 0; i < off; i++) {
		if (y->y_buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if ((y->y_buf[i] & 0xc0) != 0x80)
			(*col)++;
	}
}

static void
yj_parser_err(struct yj *y)
{
	const yaml_parser_t *p = &y->y_parser;
	unsigned long line, col;
	char msg[sizeof(y->y_err->ye_msg)];
	const char *what;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		yj_seterr(y->y_err, 0, 0, "out of memory");
		return;
	case YAML_READER_ERROR:
		yj_offset_pos(y, p->problem_offset, &line, &col);
		what = "invalid input";
		break;
	default:
		line = (unsigned long)p->problem_mark.line + 1;
		col = (unsigned long)p->problem_mark.column + 1;
		what = "syntax error";
		break;
	}
	if (yj_phrase_ok(p->problem)) {
		snprintf(msg, sizeof(msg), "%s: %s", what, p->problem);
		yj_seterr(y->y_err, line, col, msg);
	} else
		yj_seterr(y->y_err, line, col, what);
}

static int
yj_next(struct yj *y, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&y->y_parser, ev)) {
		yj_parser_err(y);
		return -1;
	}
	return 0;
}

static int
yj_isdigits(const char *s, const char *set)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (strchr(set, *s) == NULL)
			return 0;
	return 1;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int
yj_isfloat(const char *s)
{
	size_t n;

	if (*s == '-' || *s == '+')
		s++;
	if (*s == '.') {
		if ((n = strspn(++s, "0123456789")) == 0)
			return 0;
		s += n;
	} else {
		if ((n = strspn(s, "0123456789")) == 0)
			return 0;
		s += n;
		if (*s == '.')
			s += 1 + strspn(s + 1, "0123456789");
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		if ((n = strspn(s, "0123456789")) == 0)
			return 0;
		s += n;
	}
	return *s == '\0';
}

/*
 * YAML 1.2 core schema for plain scalars.  Returns 0 and sets *out (NULL
 * for null); 1 if the scalar is neither keyword nor number, so it stays a
 * string; -1 with a fixed message in *why (NULL: out of memory).
 */
static int
yj_plain(const char *s, struct json_object **out, const char **why)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
	static const char *const trues[] = {"true", "True", "TRUE"};
	static const char *const falses[] = {"false", "False", "FALSE"};
	unsigned long long u;
	long long ll;
	double d;
	size_t i;
	char *end;

	*out = NULL;
	*why = NULL;
	for (i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (strcmp(s, nulls[i]) == 0)
			return 0;
	for (i = 0; i < sizeof(trues) / sizeof(trues[0]); i++)
		if (strcmp(s, trues[i]) == 0)
			return (*out = json_object_new_boolean(1)) ? 0 : -1;
	for (i = 0; i < sizeof(falses) / sizeof(falses[0]); i++)
		if (strcmp(s, falses[i]) == 0)
			return (*out = json_object_new_boolean(0)) ? 0 : -1;

	if (yj_isdigits(s + (*s == '-' || *s == '+'), "0123456789")) {
		errno = 0;
		ll = strtoll(s, &end, 10);
		if (errno != 0 || *end != '\0') {
			*why = "integer out of range";
			return -1;
		}
		return (*out = json_object_new_int64(ll)) ? 0 : -1;
	}
	if ((s[0] == '0' && s[1] == 'x' &&
		yj_isdigits(s + 2, "0123456789abcdefABCDEF")) ||
	    (s[0] == '0' && s[1] == 'o' && yj_isdigits(s + 2, "01234567"))) {
		errno = 0;
		u = strtoull(s + 2, &end, s[1] == 'x' ? 16 : 8);
		if (errno != 0 || *end != '\0' || u > INT64_MAX) {
			*why = "integer out of range";
			return -1;
		}
		return (*out = json_object_new_int64((int64_t)u)) ? 0 : -1;
	}
	if (yj_isfloat(s)) {
		d = strtod(s, &end);
		if (*end != '\0' || !isfinite(d)) {
			*why = "number out of range";
			return -1;
		}
		return (*out = json_object_new_double(d)) ? 0 : -1;
	}
	return 1;
}

static struct json_object *
yj_scalar(struct yj *y, const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	struct json_object *o;
	const char *why;
	int r;

	if (memchr(s, '\0', len) != NULL) {
		yj_markerr(y, &ev->start_mark, "string contains a NUL byte");
		return NULL;
	}
	if (!utf8_valid((const uint8_t *)s, len)) {
		yj_markerr(y, &ev->start_mark, "invalid UTF-8 in string");
		return NULL;
	}
	if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		/* 0 with o == NULL is a YAML null, json-c's NULL object. */
		if ((r = yj_plain(s, &o, &why)) == 0)
			return o;
		if (r == -1) {
			if (why == NULL)
				goto nomem;
			yj_markerr(y, &ev->start_mark, why);
			return NULL;
		}
	}
	if ((o = json_object_new_string_len(s, (int)len)) == NULL)
		goto nomem;
	return o;
nomem:
	yj_seterr(y->y_err, 0, 0, "out of memory");
	return NULL;
}

/* Anchors and explicit tags are refused on every node, keys included. */
static int
yj_node_ok(struct yj *y, const yaml_event_t *ev)
{
	const yaml_char_t *anchor = NULL, *tag = NULL;

	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		yj_markerr(
		    y, &ev->start_mark, "anchors and aliases are not allowed");
		return -1;
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	default:
		yj_markerr(y, &ev->start_mark, "syntax error");
		return -1;
	}
	if (anchor != NULL) {
		yj_markerr(
		    y, &ev->start_mark, "anchors and aliases are not allowed");
		return -1;
	}
	if (tag != NULL) {
		yj_markerr(y, &ev->start_mark, "tags are not allowed");
		return -1;
	}
	return 0;
}

/*
 * Remember where a node came from, for "file:line:col" errors raised by
 * validators after loading.  Kept in json-c's per-object userdata as
 * line << 20 | col (1-based).
 */
static void
yj_setmark(struct json_object *o, const yaml_mark_t *m)
{
	uintptr_t line = m->line + 1, col = m->column + 1;

	if (o == NULL)
		return;
	if (col >= (1u << 20))
		col = (1u << 20) - 1;
	json_object_set_userdata(o, (void *)((line << 20) | col), NULL);
}

int
yaml_mark(struct json_object *o, unsigned long *line, unsigned long *col)
{
	uintptr_t v;

	*line = *col = 0;
	if (o == NULL || (v = (uintptr_t)json_object_get_userdata(o)) == 0)
		return -1;
	*line = (unsigned long)(v >> 20);
	*col = (unsigned long)(v & ((1u << 20) - 1));
	return 0;
}

static struct json_object *
yj_sequence(struct yj *y, int depth)
{
	struct json_object *arr, *v;
	yaml_event_t ev;

	if ((arr = json_object_new_array()) == NULL) {
		yj_seterr(y->y_err, 0, 0, "out of memory");
		return NULL;
	}
	for (;;) {
		if (yj_next(y, &ev) == -1)
			goto fail;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yj_event_done(y, &ev);
			return arr;
		}
		v = yj_node(y, &ev, depth);
		if (y->y_err->ye_msg[0] != '\0')
			goto fail;
		if (json_object_array_add(arr, v) != 0) {
			json_object_put(v);
			yj_seterr(y->y_err, 0, 0, "out of memory");
			goto fail;
		}
	}
fail:
	json_object_put(arr);
	return NULL;
}

static struct json_object *
yj_mapping(struct yj *y, int depth)
{
	struct json_object *obj, *v;
	yaml_event_t kev, vev;
	const char *key;

	if ((obj = json_object_new_object()) == NULL) {
		yj_seterr(y->y_err, 0, 0, "out of memory");
		return NULL;
	}
	for (;;) {
		if (yj_next(y, &kev) == -1)
			goto fail;
		if (kev.type == YAML_MAPPING_END_EVENT) {
			yj_event_done(y, &kev);
			return obj;
		}
		if (yj_node_ok(y, &kev) == -1)
			goto failkey;
		if (kev.type != YAML_SCALAR_EVENT ||
		    kev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
			yj_markerr(
			    y, &kev.start_mark, "key must be a plain scalar");
			goto failkey;
		}
		key = (const char *)kev.data.scalar.value;
		if (kev.data.scalar.length == 0) {
			yj_markerr(y, &kev.start_mark, "empty key");
			goto failkey;
		}
		if (strlen(key) != kev.data.scalar.length ||
		    !utf8_valid(
			kev.data.scalar.value, kev.data.scalar.length)) {
			yj_markerr(y, &kev.start_mark, "invalid key");
			goto failkey;
		}
		if (json_object_object_get_ex(obj, key, NULL)) {
			yj_markerr(y, &kev.start_mark, "duplicate key");
			goto failkey;
		}
		if (yj_next(y, &vev) == -1)
			goto failkey;
		v = yj_node(y, &vev, depth);
		if (y->y_err->ye_msg[0] != '\0')
			goto failkey;
		/* A value is reported at its key: "unknown key" points there.
		 */
		yj_setmark(v, &kev.start_mark);
		if (json_object_object_add_ex(
			obj, key, v, JSON_C_OBJECT_ADD_KEY_IS_NEW) != 0) {
			json_object_put(v);
			yj_seterr(y->y_err, 0, 0, "out of memory");
			goto failkey;
		}
		yj_event_done(y, &kev);
	}
failkey:
	yj_event_done(y, &kev);
fail:
	json_object_put(obj);
	return NULL;
}

/*
 * Consumes *ev.  depth counts the collections already open around this
 * node.  Success is told by y_err->ye_msg staying empty, since a null
 * scalar is a NULL json_object.
 */
static struct json_object *
yj_node(struct yj *y, yaml_event_t *ev, int depth)
{
	struct json_object *o = NULL;
	yaml_event_type_t type = ev->type;
	yaml_mark_t start = ev->start_mark;

	if (yj_node_ok(y, ev) == -1)
		goto out;
	if (type == YAML_SCALAR_EVENT) {
		o = yj_scalar(y, ev);
		yj_setmark(o, &start);
		goto out;
	}
	if (depth >= YJ_MAX_DEPTH) {
		yj_markerr(y, &ev->start_mark, "nesting too deep");
		goto out;
	}
	yj_event_done(y, ev);
	if (type == YAML_SEQUENCE_START_EVENT)
		o = yj_sequence(y, depth + 1);
	else
		o = yj_mapping(y, depth + 1);
	yj_setmark(o, &start);
	return o;
out:
	yj_event_done(y, ev);
	return o;
}

static struct json_object *
yj_document(struct yj *y)
{
	struct json_object *root = NULL;
	yaml_event_t ev;

	if (yj_next(y, &ev) == -1)
		return NULL;
	yj_event_done(y, &ev); /* stream start */
	if (yj_next(y, &ev) == -1)
		return NULL;
	if (ev.type != YAML_DOCUMENT_START_EVENT) {
		yj_markerr(y, &ev.start_mark, "empty document");
		yj_event_done(y, &ev);
		return NULL;
	}
	if (ev.data.document_start.tag_directives.start !=
	    ev.data.document_start.tag_directives.end) {
		yj_markerr(y, &ev.start_mark, "tag directives are not allowed");
		yj_event_done(y, &ev);
		return NULL;
	}
	yj_event_done(y, &ev);

	if (yj_next(y, &ev) == -1)
		return NULL;
	if (ev.type != YAML_MAPPING_START_EVENT &&
	    ev.type != YAML_ALIAS_EVENT) {
		yj_markerr(y, &ev.start_mark, "top level must be a mapping");
		yj_event_done(y, &ev);
		return NULL;
	}
	root = yj_node(y, &ev, 0);
	if (y->y_err->ye_msg[0] != '\0')
		return NULL;

	if (yj_next(y, &ev) == -1)
		goto fail;
	yj_event_done(y, &ev); /* document end */
	if (yj_next(y, &ev) == -1)
		goto fail;
	if (ev.type != YAML_STREAM_END_EVENT) {
		yj_markerr(y, &ev.start_mark, "more than one document");
		yj_event_done(y, &ev);
		goto fail;
	}
	yj_event_done(y, &ev);
	return root;
fail:
	json_object_put(root);
	return NULL;
}

static struct json_object *
yj_load(const char *buf, size_t len, struct yaml_err *err, int wipe)
{
	struct yaml_err dummy;
	struct json_object *root;
	struct yj y;

	if (err == NULL)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	if (buf == NULL && len != 0) {
		yj_seterr(err, 0, 0, "no input");
		return NULL;
	}
	if (len > YJ_MAX_SIZE) {
		yj_seterr(err, 0, 0, "file too large");
		return NULL;
	}
	memset(&y, 0, sizeof(y));
	y.y_wipe = wipe;
	y.y_buf = (const uint8_t *)(buf != NULL ? buf : "");
	y.y_len = len;
	y.y_err = err;
	if (!yaml_parser_initialize(&y.y_parser)) {
		yj_seterr(err, 0, 0, "out of memory");
		return NULL;
	}
	/* UTF-8 only: no BOM sniffing into UTF-16. */
	yaml_parser_set_encoding(&y.y_parser, YAML_UTF8_ENCODING);
	yaml_parser_set_input_string(&y.y_parser, y.y_buf, len);
	root = yj_document(&y);
	if (wipe) {
		/* The decoded and raw input buffers hold the whole file. */
		yaml_parser_t *p = &y.y_parser;

		if (p->buffer.start != NULL)
			explicit_bzero(p->buffer.start,
			    (size_t)(p->buffer.end - p->buffer.start));
		if (p->raw_buffer.start != NULL)
			explicit_bzero(p->raw_buffer.start,
			    (size_t)(p->raw_buffer.end - p->raw_buffer.start));
	}
	yaml_parser_delete(&y.y_parser);
	if (root == NULL && err->ye_msg[0] == '\0')
		yj_seterr(err, 0, 0, "internal error");
	return root;
}

struct json_object *
yaml_load_buf(const char *buf, size_t len, struct yaml_err *err)
{
	return yj_load(buf, len, err, 0);
}

struct json_object *
yaml_load_secret(const char *buf, size_t len, struct yaml_err *err)
{
	return yj_load(buf, len, err, 1);
}

struct json_object *
yaml_load_file(const char *path, struct yaml_err *err)
{
	struct yaml_err dummy;
	struct json_object *root = NULL;
	struct stat st;
	char *buf = NULL;
	size_t cap = 0, got = 0;
	ssize_t n;
	int fd, saved;

	if (err == NULL)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	/* O_NONBLOCK so a FIFO cannot hang us before fstat rejects it. */
	fd = open(
	    path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd == -1) {
		yj_seterr(err, 0, 0,
		    errno == ELOOP ? "cannot open file: symbolic link refused"
				   : "cannot open file");
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		yj_seterr(err, 0, 0, "cannot stat file");
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		yj_seterr(err, 0, 0, "not a regular file");
		goto out;
	}
	if (st.st_size < 0 || st.st_size > YJ_MAX_SIZE) {
		yj_seterr(err, 0, 0, "file too large");
		goto out;
	}
	/* One spare byte tells us the file grew behind fstat's back. */
	cap = (size_t)st.st_size + 1;
	if ((buf = malloc(cap)) == NULL) {
		yj_seterr(err, 0, 0, "out of memory");
		goto out;
	}
	while (got < cap) {
		n = read(fd, buf + got, cap - got);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			yj_seterr(err, 0, 0, "cannot read file");
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got == cap) {
		yj_seterr(err, 0, 0, "file changed while reading");
		goto out;
	}
	root = yaml_load_buf(buf, got, err);
out:
	saved = errno;
	if (buf != NULL) {
		explicit_bzero(buf, cap);
		free(buf);
	}
	close(fd);
	errno = saved;
	return root;
}
