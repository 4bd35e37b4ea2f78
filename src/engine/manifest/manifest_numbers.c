/*
 * manifest_numbers.c
 *		Integers in a manifest must be written as integers.
 *
 * cJSON turns every number into a double and forgets how it was written,
 * so "1e3", "1000.0", "+1000" and "01000" all read as 1000, and "-0" as 0.
 * A manifest is authenticated byte for byte, but it is also read before it
 * can be (and by tools that only plan): what it says must have one reading.
 * This scan walks the JSON text, which cJSON has already accepted, keeps
 * track of the key each number belongs to, and requires the fields the
 * format defines as integers to be plain decimal integers: non-negative
 * ones as digits without a sign or leading zeros, signed ones (mtime, the
 * zstd level) with at most a "-".  The caller's "metadata" object, and keys
 * the format does not define (a later minor version's), are left alone.
 */
#include <stdbool.h>
#include <string.h>

#include "manifest/manifest_numbers.h"

#define MAX_TRACKED_DEPTH 16

/* Keys whose numbers (also inside their arrays) are non-negative integers. */
static const char *const unsigned_keys[] = {
	"chunk_size", "stream_bytes", "stored_bytes", "chunks", "number", "raw_bytes",
	"file_bytes", "chunk_ranges", "timeline", "size", "stream_offset", "stream_length",
	"extents", "parity", "data", "run", "parity_chunks", "parity_bytes", "parity_ranges"
};

/* Keys whose numbers are integers that may be negative. */
static const char *const signed_keys[] = {"mtime", "level"};

typedef struct Frame
{
	bool		is_object;
	const char *key;			/* object: the member being read; array: its own key */
	size_t		key_len;
	bool		free;			/* inside "metadata": not the format's to check */
} Frame;

typedef struct Scan
{
	const char *p;
	const char *end;
	int			depth;			/* frames open; only the first ones are tracked */
	Frame		frames[MAX_TRACKED_DEPTH];
} Scan;

static bool
key_in(const char *key, size_t len, const char *const *keys, size_t nkeys)
{
	size_t		i;

	for (i = 0; i < nkeys; i++)
		if (strlen(keys[i]) == len && memcmp(keys[i], key, len) == 0)
			return true;
	return false;
}

/* The frame numbers are read in now, or NULL when untracked (too deep). */
static Frame *
top(Scan *s)
{
	return s->depth >= 1 && s->depth <= MAX_TRACKED_DEPTH ? &s->frames[s->depth - 1] : NULL;
}

static void
skip_space(Scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* Past a string starting at its opening quote; its content is [*start, *start + *len). */
static void
skip_string(Scan *s, const char **start, size_t *len)
{
	*start = ++s->p;
	while (s->p < s->end && *s->p != '"')
		s->p += (*s->p == '\\' && s->p + 1 < s->end) ? 2 : 1;
	*len = (size_t) (s->p - *start);
	if (s->p < s->end)
		s->p++;
}

/* A string: an object's key when a colon follows, else a value. */
static void
read_string(Scan *s)
{
	const char *start;
	size_t		len;
	Frame	   *f;

	skip_string(s, &start, &len);
	skip_space(s);
	f = top(s);
	if (s->p < s->end && *s->p == ':' && f != NULL && f->is_object)
	{
		f->key = start;
		f->key_len = len;
		s->p++;
	}
}

/* A new object or array inherits its key, and metadata's freedom. */
static void
open_container(Scan *s, bool is_object)
{
	Frame	   *parent = top(s);
	Frame	   *f;

	s->depth++;
	s->p++;
	f = top(s);
	if (f == NULL)
		return;
	memset(f, 0, sizeof(*f));
	f->is_object = is_object;
	if (parent == NULL)
		return;
	f->key = parent->key;
	f->key_len = parent->key_len;
	f->free = parent->free || (s->depth == 2 && parent->is_object &&
							   parent->key_len == 8 && memcmp(parent->key, "metadata", 8) == 0);
}

/* Digits only, no leading zero (but "0" itself). */
static bool
is_plain_digits(const char *t, size_t len)
{
	size_t		i;

	if (len == 0 || (t[0] == '0' && len > 1))
		return false;
	for (i = 0; i < len; i++)
		if (t[i] < '0' || t[i] > '9')
			return false;
	return true;
}

/* A number token: checked when its key says it must be an integer. */
static bool
read_number(Scan *s, SbError *err)
{
	const char *start = s->p;
	size_t		len;
	Frame	   *f = top(s);
	bool		good = true;

	while (s->p < s->end && *s->p != '\0' && strchr("0123456789+-.eE", *s->p) != NULL)
		s->p++;
	len = (size_t) (s->p - start);
	if (f == NULL || f->free || f->key == NULL)
		return true;
	if (key_in(f->key, f->key_len, unsigned_keys, sizeof(unsigned_keys) / sizeof(unsigned_keys[0])))
		good = is_plain_digits(start, len);
	else if (key_in(f->key, f->key_len, signed_keys, sizeof(signed_keys) / sizeof(signed_keys[0])))
		good = start[0] == '-' ? len > 1 && start[1] != '0' && is_plain_digits(start + 1, len - 1) :
			is_plain_digits(start, len);
	if (!good)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: field \"%.*s\" holds \"%.*s\", which is not an integer written as one",
							(int) f->key_len, f->key, (int) (len > 40 ? 40 : len), start);
	return true;
}

bool
sb_manifest_check_integer_text(const char *text, size_t len, SbError *err)
{
	Scan		s;

	memset(&s, 0, sizeof(s));
	s.p = text;
	s.end = text + len;
	skip_space(&s);
	if (s.p < s.end && *s.p == '{')
		open_container(&s, true);
	while (s.p < s.end && s.depth > 0)
	{
		char		c = *s.p;

		if (c == '"')
			read_string(&s);
		else if (c == '{' || c == '[')
			open_container(&s, c == '{');
		else if (c == '}' || c == ']')
		{
			s.depth--;
			s.p++;
		}
		else if (c != '\0' && strchr("0123456789+-.", c) != NULL)
		{
			if (!read_number(&s, err))
				return false;
		}
		else
			s.p++;				/* spaces, commas, colons, true, false, null */
	}
	return true;
}
