/*
 * json_scan.c
 *		A JSON document scanned as a stream (json_scan.h).
 */
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"
#include "manifest/json_scan.h"

/*
 * 64 KiB: as fast as larger blocks for a manifest of a million files, and a
 * small manifest (the common case, opened once per copy and per link of a
 * chain) costs no large allocation.
 */
#define FIRST_BLOCK ((size_t) 64 << 10)

bool
sb_json_scan_begin(SbJsonScan *s, SbManifestReadFn read, void *arg, SbError *err)
{
	memset(s, 0, sizeof(*s));
	s->read = read;
	s->arg = arg;
	s->err = err;
	s->sha = sb_sha256_begin(err);
	return s->sha != NULL;
}

bool
sb_json_scan_end(SbJsonScan *s, uint8_t sha256[32])
{
	bool		ok = sb_sha256_end(s->sha, sha256, s->err);

	s->sha = NULL;				/* freed by sb_sha256_end */
	sb_json_scan_free(s);
	return ok;
}

void
sb_json_scan_free(SbJsonScan *s)
{
	sb_sha256_free(s->sha);
	s->sha = NULL;
	free(s->buf);
	s->buf = NULL;
	s->cap = s->fill = s->pos = 0;
}

bool
sb_json_not_json(SbJsonScan *s)
{
	return sb_error_set(s->err, SB_ECORRUPT, "manifest is not valid JSON");
}

/* Room for more text: what was scanned dropped, the buffer grown if a value fills it. */
static bool
make_room(SbJsonScan *s)
{
	size_t		cap;
	char	   *buf;

	if (s->pos > 0)
	{
		memmove(s->buf, s->buf + s->pos, s->fill - s->pos);
		s->fill -= s->pos;
		s->pos = 0;
	}
	if (s->fill < s->cap)
		return true;
	if (s->max_value > 0 && s->cap > s->max_value)
		return sb_error_set(s->err, SB_ECORRUPT, "manifest: a value is longer than %zu bytes",
							s->max_value);
	cap = s->cap ? s->cap * 2 : FIRST_BLOCK;
	if ((buf = realloc(s->buf, cap)) == NULL)
		return sb_error_set(s->err, SB_ENOMEM, "out of memory reading the manifest");
	s->buf = buf;
	s->cap = cap;
	return true;
}

/* More text after what is still to be scanned; false on failure (at the end: S->eof). */
static bool
more(SbJsonScan *s)
{
	ssize_t		n;

	if (!make_room(s))
		return false;
	n = s->read(s->arg, s->buf + s->fill, s->cap - s->fill, s->err);
	if (n < 0)
		return false;
	s->eof = n == 0;
	s->fill += (size_t) n;
	s->total += (uint64_t) n;
	if (s->total > SB_MANIFEST_MAX_BYTES)
		return sb_error_set(s->err, SB_ECORRUPT, "manifest is larger than %zu bytes",
							(size_t) SB_MANIFEST_MAX_BYTES);
	return sb_sha256_update(s->sha, s->buf + s->fill - n, (size_t) n, s->err);
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool
sb_json_peek(SbJsonScan *s, int *c)
{
	for (;;)
	{
		while (s->pos < s->fill && is_space(s->buf[s->pos]))
			s->pos++;
		if (s->pos < s->fill)
		{
			*c = (unsigned char) s->buf[s->pos];
			return true;
		}
		if (s->eof)
		{
			*c = SB_JSON_AT_END;
			return true;
		}
		if (!more(s))
			return false;
	}
}

bool
sb_json_expect(SbJsonScan *s, char c)
{
	int			got;

	if (!sb_json_peek(s, &got))
		return false;
	if (got != (unsigned char) c)
		return sb_json_not_json(s);
	s->pos++;
	return true;
}

/* Just past the closing quote of the string at P; NULL if it does not end before END. */
static const char *
skip_string(const char *p, const char *end)
{
	for (p++; p < end; p++)
	{
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

static bool
ends_scalar(char c)
{
	return c == ',' || c == '}' || c == ']' || is_space(c);
}

/*
 * Just past the value at P (an object or array with all it holds); NULL if
 * it does not end before END.  A scalar ends at END only when nothing follows.
 */
static const char *
skip_value(const char *p, const char *end, bool at_eof)
{
	int			depth = 0;

	if (*p != '"' && *p != '{' && *p != '[')
	{
		while (p < end && !ends_scalar(*p))
			p++;
		return p < end || at_eof ? p : NULL;
	}
	while (p < end)
	{
		if (*p == '"')
		{
			if ((p = skip_string(p, end)) == NULL)
				return NULL;
			if (depth == 0)
				return p;
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if ((*p == '}' || *p == ']') && --depth == 0)
			return p + 1;
		p++;
	}
	return NULL;
}

bool
sb_json_delimit(SbJsonScan *s, size_t *start, size_t *len)
{
	int			c;

	if (!sb_json_peek(s, &c))
		return false;
	if (c == SB_JSON_AT_END)
		return sb_json_not_json(s);
	for (;;)
	{
		const char *end = skip_value(s->buf + s->pos, s->buf + s->fill, s->eof);

		if (end != NULL)
		{
			*start = s->pos;
			*len = (size_t) (end - (s->buf + s->pos));
			return true;
		}
		if (s->eof)
			return sb_json_not_json(s);
		if (!more(s))
			return false;
	}
}

bool
sb_json_key(SbJsonScan *s, char **key, size_t *key_len)
{
	size_t		start;
	int			c;

	if (!sb_json_peek(s, &c))
		return false;
	if (c != '"')
		return sb_json_not_json(s);
	if (!sb_json_delimit(s, &start, key_len))
		return false;
	if (memchr(s->buf + start, '\\', *key_len) != NULL)
		return sb_error_set(s->err, SB_ECORRUPT,
							"manifest: a top-level key is written with escapes");
	if ((*key = sb_alloc(*key_len + 1, s->err)) == NULL)
		return false;
	memcpy(*key, s->buf + start, *key_len);
	(*key)[*key_len] = '\0';
	s->pos = start + *key_len;
	return sb_json_expect(s, ':');
}

bool
sb_json_next_item(SbJsonScan *s, char close, bool *more_items)
{
	int			c;

	if (!sb_json_peek(s, &c))
		return false;
	if (c != ',' && c != (unsigned char) close)
		return sb_json_not_json(s);
	s->pos++;
	*more_items = c == ',';
	return true;
}
