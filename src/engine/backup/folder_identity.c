/*
 * folder_identity.c
 *		Is this file the manifest of that backup?  What retention asks of a
 *		backup folder's manifest.json before it removes anything.
 *
 * Only the top-level object's "format" and "backup_uuid" are looked at, and
 * the text is read a block at a time only until both are found (stripebackup
 * writes them first): a manifest of millions of files (150 MB of text) is
 * neither read whole nor held, in the server's backend or the command.  The
 * rest of the document is not checked: it is the name, not the contents,
 * that says whose it is; a backup's contents are verify's to judge.  A text
 * that never names both is read no further than a manifest can be long
 * (SB_MANIFEST_MAX_BYTES), and nests no deeper than MAX_DEPTH.
 */
#include <stdlib.h>
#include <string.h>

#include "backup/folder_internal.h"

#define BLOCK 8192

/* Nesting deeper than this is no manifest's (and cannot overflow a counter). */
#define MAX_DEPTH 10000

typedef struct Scanner
{
	SbManifestReadFn read;
	void	   *arg;
	char		buf[BLOCK];
	size_t		len;
	size_t		pos;
	uint64_t	total;			/* bytes read so far: at most SB_MANIFEST_MAX_BYTES */
	bool		ended;			/* at the end of the text, or it could not be read */
} Scanner;

/* The next byte, not consumed; -1 at the end. */
static int
peek(Scanner *s)
{
	if (s->pos == s->len && !s->ended)
	{
		SbError		ignored;
		ssize_t		n = s->total < SB_MANIFEST_MAX_BYTES ?
			s->read(s->arg, s->buf, sizeof(s->buf), &ignored) : 0;

		s->pos = 0;
		s->len = n > 0 ? (size_t) n : 0;
		s->total += s->len;
		s->ended = n <= 0;
	}
	return s->pos < s->len ? (unsigned char) s->buf[s->pos] : -1;
}

static int
next(Scanner *s)
{
	int			c = peek(s);

	if (c >= 0)
		s->pos++;
	return c;
}

/* The next byte that is not JSON white space. */
static int
next_token(Scanner *s)
{
	int			c;

	while ((c = next(s)) == ' ' || c == '\n' || c == '\r' || c == '\t')
		;
	return c;
}

/*
 * The rest of a string whose opening quote was read, into OUT (CAP bytes,
 * NUL-terminated); *PLAIN false if it did not fit or held an escape (which
 * stripebackup never writes in what is compared).  False if it never ends.
 */
static bool
read_string(Scanner *s, char *out, size_t cap, bool *plain)
{
	size_t		n = 0;
	int			c;

	*plain = true;
	while ((c = next(s)) != '"')
	{
		if (c < 0)
			return false;
		if (c == '\\')
		{
			*plain = false;
			if (next(s) < 0)
				return false;
		}
		else if (n + 1 < cap)
			out[n++] = (char) c;
		else
			*plain = false;
	}
	out[n] = '\0';
	return true;
}

/* Skip the value that begins with C (already read): a string, number, literal, object or array. */
static bool
skip_value(Scanner *s, int c)
{
	char		scratch[1];
	bool		plain;
	int			depth = 0;

	if (c == '"')
		return read_string(s, scratch, sizeof(scratch), &plain);
	if (c != '{' && c != '[')
	{
		while ((c = peek(s)) >= 0 && strchr(",}] \n\r\t", c) == NULL)
			s->pos++;
		return true;
	}
	for (;; c = next(s))
	{
		if (c < 0)
			return false;
		if (c == '"' && !read_string(s, scratch, sizeof(scratch), &plain))
			return false;
		if ((c == '{' || c == '[') && ++depth > MAX_DEPTH)
			return false;
		else if ((c == '}' || c == ']') && --depth == 0)
			return true;
	}
}

/* What the first "format" and "backup_uuid" of the top-level object say. */
typedef struct Identity
{
	bool		seen_format;
	bool		seen_uuid;
	bool		format_ok;
	bool		uuid_ok;
} Identity;

/* Read the value of KEY if it is one of the two, the first time; else skip it. */
static bool
read_member(Scanner *s, const char *key, int c, const char *uuid_hex, Identity *id)
{
	bool		is_format = strcmp(key, "format") == 0 && !id->seen_format;
	bool		is_uuid = strcmp(key, "backup_uuid") == 0 && !id->seen_uuid;
	char		value[64];
	bool		plain;

	if (!is_format && !is_uuid)
		return skip_value(s, c);
	if (c != '"' || !read_string(s, value, sizeof(value), &plain))
		return false;
	if (is_format)
	{
		id->seen_format = true;
		id->format_ok = plain && (strcmp(value, "stripebackup") == 0 ||
								  strcmp(value, "stripebackup-encrypted") == 0);
	}
	else
	{
		id->seen_uuid = true;
		id->uuid_ok = plain && strcmp(value, uuid_hex) == 0;
	}
	return true;
}

bool
sb_folder_manifest_names(SbManifestReadFn read, void *arg, const char *uuid_hex)
{
	Scanner    *s = calloc(1, sizeof(Scanner));
	Identity	id = {false, false, false, false};
	char		key[32];
	bool		plain;
	int			c;

	if (s == NULL)
		return false;
	s->read = read;
	s->arg = arg;
	c = next_token(s) == '{' ? next_token(s) : -1;
	while (c == '"' && read_string(s, key, sizeof(key), &plain) && next_token(s) == ':' &&
		   read_member(s, plain ? key : "", next_token(s), uuid_hex, &id) &&
		   !(id.seen_format && id.seen_uuid) && next_token(s) == ',')
		c = next_token(s);
	free(s);
	return id.format_ok && id.uuid_ok;
}
