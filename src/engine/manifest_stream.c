/*
 * manifest_stream.c
 *		Reading a manifest as a stream: its text is never whole in memory.
 *
 * The entries are most of a manifest, a line of text a file (about 150
 * bytes): the text of a million files, held whole while its entries are
 * parsed, would cost more than the file table built from it.  So the
 * reader takes the text a block at a time, feeds every byte to the SHA-256
 * the stripes' trailers record, keeps the top-level members but "entries"
 * as a small document of their own, and parses each entry as soon as its
 * object has been read whole.  The scanner only delimits values (strings,
 * nesting); cJSON checks every piece it delimits, and the pieces put back
 * together are the text.
 *
 * Entries need the format's version, so "format_version" must come before
 * "entries", as every writer has written it (docs/FORMAT.md section 4).
 */
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "entry_spool.h"
#include "fsutil.h"
#include "manifest_envelope.h"
#include "manifest_tally.h"
#include "manifest_text.h"
#include "path_set.h"
#include "store.h"

/*
 * 64 KiB: as fast as larger blocks for a manifest of a million files, and a
 * small manifest (the common case, opened once per copy and per link of a
 * chain) costs no large allocation.
 */
#define FIRST_BLOCK ((size_t) 64 << 10)
#define AT_END (-1)

typedef struct Stream
{
	SbManifestReadFn read;
	void	   *arg;
	char	   *buf;
	size_t		cap;
	size_t		pos;			/* the next byte to scan; what lies before it is done with */
	size_t		fill;			/* bytes in buf */
	bool		eof;
	uint64_t	total;			/* bytes read */
	SbSha256   *sha;
	SbError    *err;
	const char *spool_dir;		/* SB_KEEP_STREAMED, LOOKUP: where the entries go */
	bool		tally;			/* count the entries, keep none, if the layout
								 * comes before them (manifest_tally.c) */
	bool		head_only;		/* SB_KEEP_HEAD: the entries delimited, not parsed */
} Stream;

/* The top-level members but "entries", as a JSON object of their own. */
typedef struct Head
{
	char	   *text;
	size_t		len;
	size_t		cap;
	bool		has_member;
} Head;

static bool
not_json(Stream *s)
{
	return sb_error_set(s->err, SB_ECORRUPT, "manifest is not valid JSON");
}

/* More text after what is still to be scanned; false on failure (at the end: S->eof). */
static bool
more(Stream *s)
{
	ssize_t		n;

	if (s->pos > 0)
	{
		memmove(s->buf, s->buf + s->pos, s->fill - s->pos);
		s->fill -= s->pos;
		s->pos = 0;
	}
	if (s->fill == s->cap)
	{
		size_t		cap = s->cap ? s->cap * 2 : FIRST_BLOCK;
		char	   *buf = realloc(s->buf, cap);

		if (buf == NULL)
			return sb_error_set(s->err, SB_ENOMEM, "out of memory reading the manifest");
		s->buf = buf;
		s->cap = cap;
	}
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

/* The next character that is not white space, not consumed; AT_END, or false on failure. */
static bool
peek(Stream *s, int *c)
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
			*c = AT_END;
			return true;
		}
		if (!more(s))
			return false;
	}
}

/* The next character must be C: consume it. */
static bool
expect(Stream *s, char c)
{
	int			got;

	if (!peek(s, &got))
		return false;
	if (got != (unsigned char) c)
		return not_json(s);
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

/*
 * The value that starts at the next non-space character, whole in the
 * buffer: [*START, *START + *LEN) of S->buf, not consumed.
 */
static bool
delimit(Stream *s, size_t *start, size_t *len)
{
	int			c;

	if (!peek(s, &c))
		return false;
	if (c == AT_END)
		return not_json(s);
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
			return not_json(s);
		if (!more(s))
			return false;
	}
}

static bool
head_append(Head *h, const char *text, size_t len, SbError *err)
{
	if (h->len + len + 2 > h->cap)
	{
		size_t		cap = (h->len + len + 2) * 2;
		char	   *grown = realloc(h->text, cap);

		if (grown == NULL)
			return sb_error_set(err, SB_ENOMEM, "out of memory reading the manifest");
		h->text = grown;
		h->cap = cap;
	}
	memcpy(h->text + h->len, text, len);
	h->len += len;
	h->text[h->len] = '\0';
	return true;
}

/* KEY (with its quotes) and its value: a member of the head. */
static bool
head_member(Head *h, const char *key, size_t key_len, const char *value, size_t value_len,
			SbError *err)
{
	bool		ok = (!h->has_member || head_append(h, ",", 1, err)) &&
		head_append(h, key, key_len, err) && head_append(h, ":", 1, err) &&
		head_append(h, value, value_len, err);

	h->has_member = true;
	return ok;
}

/* The members read so far, closed as an object, say which format this is. */
static bool
read_version(Head *h, SbManifest *m, SbError *err)
{
	bool		ok = head_append(h, "}", 1, err) &&
		sb_manifest_parse_version_text(h->text, h->len, m, err);

	if (h->len > 0)
		h->text[--h->len] = '\0';
	return ok;
}

/*
 * To plan only: if the members before the entries make a manifest of their
 * own (the writer puts every other member first), the entries are counted
 * by its layout from now on; else they are kept as always.
 */
static bool
start_tally(Head *h, SbManifest *m, const char *spool_dir, SbError *err)
{
	SbManifest *layout = sb_manifest_new();
	SbError		ignored;
	bool		usable;

	if (layout == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory reading the manifest");
	if (!head_append(h, "}", 1, err))
	{
		sb_manifest_free(layout);
		return false;
	}
	usable = sb_manifest_parse_head_text(h->text, h->len, layout, &ignored) &&
		sb_manifest_index_layout(layout, &ignored);
	h->text[--h->len] = '\0';
	if (!usable)
	{
		sb_manifest_free(layout);
		return true;
	}
	if (!sb_manifest_tally_begin(m, layout, err))
		return false;
	if (spool_dir == NULL)
		return true;
	return (m->streamed = sb_entry_spool_new(spool_dir, !m->no_stamps, err)) != NULL &&
		(m->paths = sb_path_set_new(err)) != NULL;
}

/* The "entries" array, each object parsed and added as soon as it is read. */
static bool
read_entries(Stream *s, SbManifest *m)
{
	int			c;

	if (!expect(s, '[') || !peek(s, &c))
		return false;
	if (c == ']')
	{
		s->pos++;
		return true;
	}
	for (;;)
	{
		size_t		start,
					len;

		if (!peek(s, &c))
			return false;
		if (c != '{')
			return sb_error_set(s->err, SB_ECORRUPT, "manifest: bad item in \"entries\"");
		if (!delimit(s, &start, &len) ||
			(!s->head_only && !sb_manifest_parse_entry_text(s->buf + start, len, m, s->err)))
			return false;
		s->pos = start + len;
		if (!peek(s, &c))
			return false;
		if (c == ']')
		{
			s->pos++;
			return true;
		}
		if (c != ',')
			return not_json(s);
		s->pos++;
	}
}

/* A top-level key: a string written as it is (both views of the text must agree). */
static bool
read_key(Stream *s, char **key, size_t *key_len)
{
	size_t		start;
	int			c;

	if (!peek(s, &c))
		return false;
	if (c != '"')
		return not_json(s);
	if (!delimit(s, &start, key_len))
		return false;
	if (memchr(s->buf + start, '\\', *key_len) != NULL)
		return sb_error_set(s->err, SB_ECORRUPT,
							"manifest: a top-level key is written with escapes");
	if ((*key = sb_alloc(*key_len + 1, s->err)) == NULL)
		return false;
	memcpy(*key, s->buf + start, *key_len);
	(*key)[*key_len] = '\0';
	s->pos = start + *key_len;
	return expect(s, ':');
}

/* What of "entries" the top-level members have held so far. */
typedef enum EntriesSeen
{
	ENTRIES_NOT_SEEN,
	ENTRIES_NOT_ARRAY,			/* kept in the head: cJSON says what is wrong */
	ENTRIES_READ
} EntriesSeen;

/* One top-level member: the entries parsed, any other kept in the head. */
static bool
read_member(Stream *s, Head *h, SbManifest *m, EntriesSeen *entries)
{
	char	   *key = NULL;
	size_t		key_len = 0;
	size_t		start,
				len;
	int			c;
	bool		ok = read_key(s, &key, &key_len) && peek(s, &c);
	bool		is_entries = ok && strcmp(key, "\"entries\"") == 0;

	if (is_entries && *entries != ENTRIES_NOT_SEEN)
		ok = sb_error_set(s->err, SB_ECORRUPT, "manifest: field given twice: \"entries\"");
	else if (is_entries && c == '[')
	{
		ok = read_version(h, m, s->err) && (!s->tally || start_tally(h, m, s->spool_dir, s->err)) &&
			read_entries(s, m) &&
			head_member(h, key, key_len, "[]", 2, s->err);
		*entries = ENTRIES_READ;
	}
	else if (ok)
	{
		ok = delimit(s, &start, &len) &&
			head_member(h, key, key_len, s->buf + start, len, s->err);
		if (ok)
			s->pos = start + len;
		if (is_entries)
			*entries = ENTRIES_NOT_ARRAY;
	}
	free(key);
	return ok;
}

/* The top-level object, member by member, then nothing but white space. */
static bool
read_document(Stream *s, Head *h, SbManifest *m)
{
	EntriesSeen entries = ENTRIES_NOT_SEEN;
	bool		first = true;
	int			c;

	if (!expect(s, '{') || !head_append(h, "{", 1, s->err))
		return false;
	for (;;)
	{
		if (!peek(s, &c))
			return false;
		if (c == '}')
			break;
		if (!first && !expect(s, ','))
			return false;
		if (!read_member(s, h, m, &entries))
			return false;
		first = false;
	}
	s->pos++;
	if (!peek(s, &c))
		return false;
	if (c != AT_END)
		return not_json(s);
	if (!head_append(h, "}", 1, s->err) || !sb_manifest_parse_head_text(h->text, h->len, m, s->err))
		return false;
	return entries == ENTRIES_READ ? true :
		sb_error_set(s->err, SB_ECORRUPT, "manifest: missing array \"entries\"");
}

static SbManifest *
read_manifest(SbManifestReadFn read, void *arg, SbEntryKeep keep, const char *spool_dir,
			  SbError *err)
{
	Stream		s;
	Head		h;
	SbManifest *m = sb_manifest_new();
	bool		ok;

	sb_error_clear(err);
	memset(&s, 0, sizeof(s));
	memset(&h, 0, sizeof(h));
	s.read = read;
	s.arg = arg;
	s.err = err;
	s.spool_dir = keep == SB_KEEP_STREAMED || keep == SB_KEEP_LOOKUP ? spool_dir : NULL;
	s.tally = keep == SB_KEEP_COUNTS || s.spool_dir != NULL;
	s.head_only = keep == SB_KEEP_HEAD;
	if (m == NULL)
		ok = sb_error_set(err, SB_ENOMEM, "out of memory");
	else
	{
		m->no_stamps = keep == SB_KEEP_TO_RESTORE || keep == SB_KEEP_STREAMED;
		m->head_only = s.head_only;
		ok = (s.sha = sb_sha256_begin(err)) != NULL && read_document(&s, &h, m) &&
			sb_manifest_index(m, err);
	}
	if (ok)
	{
		ok = sb_sha256_end(s.sha, m->json_sha256, err);
		s.sha = NULL;
		m->json_length = s.total;
	}
	sb_sha256_free(s.sha);
	free(s.buf);
	free(h.text);
	if (!ok)
	{
		sb_manifest_free(m);
		return NULL;
	}
	return m;
}

SbManifest *
sb_manifest_from_stream(SbManifestReadFn read, void *arg, SbError *err)
{
	return read_manifest(read, arg, SB_KEEP_ALL, NULL, err);
}

SbManifest *
sb_manifest_tally_stream(SbManifestReadFn read, void *arg, SbError *err)
{
	return read_manifest(read, arg, SB_KEEP_COUNTS, NULL, err);
}

/* ---------- sources of text ---------- */

typedef struct Memory
{
	const char *text;
	size_t		len;
	size_t		pos;
} Memory;

static ssize_t
read_memory(void *arg, char *buf, size_t len, SbError *err)
{
	Memory	   *mem = arg;
	size_t		n = mem->len - mem->pos < len ? mem->len - mem->pos : len;

	(void) err;
	memcpy(buf, mem->text + mem->pos, n);
	mem->pos += n;
	return (ssize_t) n;
}

SbManifest *
sb_manifest_from_json(const char *text, size_t len, SbError *err)
{
	Memory		mem = {text, len, 0};

	return sb_manifest_from_stream(read_memory, &mem, err);
}

SbManifest *
sb_manifest_spool_json(const char *text, size_t len, const char *spool_dir, SbError *err)
{
	Memory		mem = {text, len, 0};

	return read_manifest(read_memory, &mem, SB_KEEP_STREAMED, spool_dir, err);
}

SbManifest *
sb_manifest_lookup_json(const char *text, size_t len, const char *spool_dir, SbError *err)
{
	Memory		mem = {text, len, 0};

	return read_manifest(read_memory, &mem, SB_KEEP_LOOKUP, spool_dir, err);
}

SbManifest *
sb_manifest_head_json(const char *text, size_t len, SbError *err)
{
	Memory		mem = {text, len, 0};

	return read_manifest(read_memory, &mem, SB_KEEP_HEAD, NULL, err);
}

typedef struct StoreSource
{
	SbStoreFile file;
	uint64_t	offset;
} StoreSource;

static ssize_t
read_store(void *arg, char *buf, size_t len, SbError *err)
{
	StoreSource *src = arg;
	ssize_t		n = sb_store_pread(&src->file, buf, len, src->offset, err);

	if (n > 0)
		src->offset += (uint64_t) n;
	return n;
}

/* Whether the file begins as an encrypted backup's envelope does. */
static bool
starts_as_envelope(StoreSource *src, bool *envelope, SbError *err)
{
	char		start[64];
	ssize_t		n = sb_store_pread(&src->file, start, sizeof(start), 0, err);

	if (n < 0)
		return false;
	*envelope = sb_manifest_is_envelope(start, (size_t) n);
	return true;
}

static SbManifest *
read_envelope(const char *path, const SbKey *key, SbError *err)
{
	size_t		len;
	char	   *bytes = sb_store_read_small(path, SB_MANIFEST_MAX_BYTES, &len, err);
	SbManifest *m = bytes ? sb_manifest_from_bytes(bytes, len, key, err) : NULL;

	free(bytes);
	return m;
}

/*
 * The manifest in SRC's file (opened, at PATH), its entries kept as KEEP
 * says (an encrypted one's are kept whole: its envelope is opened whole).
 */
static SbManifest *
read_opened(StoreSource *src, const char *path, const SbKey *key, SbEntryKeep keep,
			const char *spool_dir, SbError *err)
{
	bool		envelope = false;

	if (!starts_as_envelope(src, &envelope, err))
		return NULL;
	return envelope ? read_envelope(path, key, err) :
		read_manifest(read_store, src, keep, spool_dir, err);
}

SbManifest *
sb_manifest_read_path(const char *path, const SbKey *key, SbEntryKeep keep, const char *spool_dir,
					  SbError *err)
{
	StoreSource src;
	SbManifest *m;

	memset(&src, 0, sizeof(src));
	if (!sb_store_open(&src.file, path, err))
		return NULL;
	m = read_opened(&src, path, key, keep, spool_dir, err);
	sb_store_close(&src.file);
	return m;
}

SbManifest *
sb_manifest_load(const char *dir, SbError *err)
{
	char	   *path = sb_path_join(dir, SB_MANIFEST_FILE, err);
	StoreSource src;
	SbManifest *m = NULL;

	memset(&src, 0, sizeof(src));
	if (path == NULL)
		return NULL;
	if (!sb_store_open(&src.file, path, err))
	{
		if (err->code == SB_ENOTFOUND)
			sb_error_set(err, SB_ENOTFOUND,
						 "no %s in \"%s\": not a stripebackup backup folder, or a backup that did not complete",
						 SB_MANIFEST_FILE, dir);
	}
	else
	{
		m = read_opened(&src, path, NULL, SB_KEEP_ALL, NULL, err);
		if (m == NULL)
			sb_error_prefix(err, "%s", path);
		sb_store_close(&src.file);
	}
	free(path);
	return m;
}

bool
sb_manifest_digest_path(const char *path, uint8_t sha256[32], uint64_t *len, SbError *err)
{
	StoreSource src;
	SbSha256   *sha;
	char	   *buf;
	ssize_t		n = -1;
	bool		ok;

	memset(&src, 0, sizeof(src));
	if (!sb_store_open(&src.file, path, err))
		return false;
	sha = sb_sha256_begin(err);
	buf = sha ? sb_alloc(FIRST_BLOCK, err) : NULL;
	if (buf != NULL)
		while ((n = read_store(&src, buf, FIRST_BLOCK, err)) > 0 &&
			   sb_sha256_update(sha, buf, (size_t) n, err))
			;
	sb_store_close(&src.file);
	free(buf);
	*len = src.offset;
	ok = n == 0 && sb_sha256_end(sha, sha256, err);
	if (n != 0)
		sb_sha256_free(sha);
	return ok;
}
