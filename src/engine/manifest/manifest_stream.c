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

#include "format/checksum.h"
#include "manifest/entry_spool.h"
#include "util/fsutil.h"
#include "manifest/json_scan.h"
#include "manifest/manifest_envelope.h"
#include "manifest/manifest_tally.h"
#include "manifest/manifest_text.h"
#include "manifest/path_set.h"
#include "store/store.h"

/* What the digest of a whole file reads at a time. */
#define DIGEST_BLOCK ((size_t) 64 << 10)

typedef struct Stream
{
	SbJsonScan	j;
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

	if (!sb_json_expect(&s->j, '[') || !sb_json_peek(&s->j, &c))
		return false;
	if (c == ']')
	{
		s->j.pos++;
		return true;
	}
	for (;;)
	{
		size_t		start,
					len;
		bool		more_items;

		if (!sb_json_peek(&s->j, &c))
			return false;
		if (c != '{')
			return sb_error_set(s->j.err, SB_ECORRUPT, "manifest: bad item in \"entries\"");
		if (!sb_json_delimit(&s->j, &start, &len) ||
			(!s->head_only && !sb_manifest_parse_entry_text(s->j.buf + start, len, m, s->j.err)))
			return false;
		s->j.pos = start + len;
		if (!sb_json_next_item(&s->j, ']', &more_items))
			return false;
		if (!more_items)
			return true;
	}
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
	bool		ok = sb_json_key(&s->j, &key, &key_len) && sb_json_peek(&s->j, &c);
	bool		is_entries = ok && strcmp(key, "\"entries\"") == 0;

	if (is_entries && *entries != ENTRIES_NOT_SEEN)
		ok = sb_error_set(s->j.err, SB_ECORRUPT, "manifest: field given twice: \"entries\"");
	else if (is_entries && c == '[')
	{
		ok = read_version(h, m, s->j.err) && (!s->tally || start_tally(h, m, s->spool_dir, s->j.err)) &&
			read_entries(s, m) &&
			head_member(h, key, key_len, "[]", 2, s->j.err);
		*entries = ENTRIES_READ;
	}
	else if (ok)
	{
		ok = sb_json_delimit(&s->j, &start, &len) &&
			head_member(h, key, key_len, s->j.buf + start, len, s->j.err);
		if (ok)
			s->j.pos = start + len;
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

	if (!sb_json_expect(&s->j, '{') || !head_append(h, "{", 1, s->j.err))
		return false;
	for (;;)
	{
		if (!sb_json_peek(&s->j, &c))
			return false;
		if (c == '}')
			break;
		if (!first && !sb_json_expect(&s->j, ','))
			return false;
		if (!read_member(s, h, m, &entries))
			return false;
		first = false;
	}
	s->j.pos++;
	if (!sb_json_peek(&s->j, &c))
		return false;
	if (c != SB_JSON_AT_END)
		return sb_json_not_json(&s->j);
	if (!head_append(h, "}", 1, s->j.err) || !sb_manifest_parse_head_text(h->text, h->len, m, s->j.err))
		return false;
	return entries == ENTRIES_READ ? true :
		sb_error_set(s->j.err, SB_ECORRUPT, "manifest: missing array \"entries\"");
}

SbManifest *
sb_manifest_read_stream(SbManifestReadFn read, void *arg, SbEntryKeep keep, const char *spool_dir,
						SbError *err)
{
	Stream		s;
	Head		h;
	SbManifest *m = sb_manifest_new();
	bool		ok;

	sb_error_clear(err);
	memset(&s, 0, sizeof(s));
	memset(&h, 0, sizeof(h));
	s.spool_dir = keep == SB_KEEP_STREAMED || keep == SB_KEEP_LOOKUP ? spool_dir : NULL;
	s.tally = keep == SB_KEEP_COUNTS || s.spool_dir != NULL;
	s.head_only = keep == SB_KEEP_HEAD;
	if (m == NULL)
		ok = sb_error_set(err, SB_ENOMEM, "out of memory");
	else
	{
		m->no_stamps = keep == SB_KEEP_TO_RESTORE || keep == SB_KEEP_STREAMED;
		m->head_only = s.head_only;
		ok = sb_json_scan_begin(&s.j, read, arg, err) && read_document(&s, &h, m) &&
			sb_manifest_index(m, err);
	}
	if (ok)
	{
		m->json_length = s.j.total;
		ok = sb_json_scan_end(&s.j, m->json_sha256);
	}
	sb_json_scan_free(&s.j);
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
	return sb_manifest_read_stream(read, arg, SB_KEEP_ALL, NULL, err);
}

SbManifest *
sb_manifest_tally_stream(SbManifestReadFn read, void *arg, SbError *err)
{
	return sb_manifest_read_stream(read, arg, SB_KEEP_COUNTS, NULL, err);
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
sb_manifest_from_bytes(const char *bytes, size_t len, const SbKey *key, SbError *err)
{
	Memory		mem = {bytes, len, 0};

	if (!sb_manifest_is_envelope(bytes, len))
		return sb_manifest_from_json(bytes, len, err);
	return sb_envelope_read_stream(read_memory, &mem, key, SB_KEEP_ALL, NULL, err);
}

SbManifest *
sb_manifest_spool_json(const char *text, size_t len, const char *spool_dir, SbError *err)
{
	Memory		mem = {text, len, 0};

	return sb_manifest_read_stream(read_memory, &mem, SB_KEEP_STREAMED, spool_dir, err);
}

SbManifest *
sb_manifest_lookup_json(const char *text, size_t len, const char *spool_dir, SbError *err)
{
	Memory		mem = {text, len, 0};

	return sb_manifest_read_stream(read_memory, &mem, SB_KEEP_LOOKUP, spool_dir, err);
}

SbManifest *
sb_manifest_head_json(const char *text, size_t len, SbError *err)
{
	Memory		mem = {text, len, 0};

	return sb_manifest_read_stream(read_memory, &mem, SB_KEEP_HEAD, NULL, err);
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

/* The manifest in SRC's file (opened), or the one its envelope seals, its entries kept as KEEP says. */
static SbManifest *
read_opened(StoreSource *src, const SbKey *key, SbEntryKeep keep, const char *spool_dir,
			SbError *err)
{
	bool		envelope = false;
	SbManifest *m;

	if (!starts_as_envelope(src, &envelope, err))
		return NULL;
	if (envelope)
		return sb_envelope_read_stream(read_store, src, key, keep, spool_dir, err);
	m = sb_manifest_read_stream(read_store, src, keep, spool_dir, err);
	/* an encrypted backup's manifest is only ever written sealed: one in the clear is not the backup's */
	if (m != NULL && m->encrypted)
	{
		sb_manifest_free(m);
		sb_error_set(err, SB_ECORRUPT,
					 "the manifest says its backup is encrypted, but it is in the clear, not in an envelope");
		return NULL;
	}
	return m;
}

SbManifest *
sb_manifest_read_path(const char *path, const SbS3Settings *s3, const SbKey *key, SbEntryKeep keep,
					  const char *spool_dir, SbError *err)
{
	StoreSource src;
	SbManifest *m;

	memset(&src, 0, sizeof(src));
	if (!sb_store_open(&src.file, path, s3, err))
		return NULL;
	m = read_opened(&src, key, keep, spool_dir, err);
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
	/* a folder the caller names (the tests'): an object of it reached with the environment's settings */
	if (!sb_store_open(&src.file, path, NULL, err))
	{
		if (err->code == SB_ENOTFOUND)
			sb_error_set(err, SB_ENOTFOUND,
						 "no %s in \"%s\": not a stripebackup backup folder, or a backup that did not complete",
						 SB_MANIFEST_FILE, dir);
	}
	else
	{
		m = read_opened(&src, NULL, SB_KEEP_ALL, NULL, err);
		if (m == NULL)
			sb_error_prefix(err, "%s", path);
		sb_store_close(&src.file);
	}
	free(path);
	return m;
}

bool
sb_manifest_digest_path(const char *path, const SbS3Settings *s3, uint8_t sha256[32], uint64_t *len,
						SbError *err)
{
	StoreSource src;
	SbSha256   *sha;
	char	   *buf;
	ssize_t		n = -1;
	bool		ok;

	memset(&src, 0, sizeof(src));
	if (!sb_store_open(&src.file, path, s3, err))
		return false;
	sha = sb_sha256_begin(err);
	buf = sha ? sb_alloc(DIGEST_BLOCK, err) : NULL;
	if (buf != NULL)
		while ((n = read_store(&src, buf, DIGEST_BLOCK, err)) > 0 &&
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

bool
sb_envelope_outline_path(const char *path, const SbS3Settings *s3, SbEnvelopeOutline *o, uint8_t sha256[32],
						 uint64_t *len, bool *envelope, SbError *err)
{
	StoreSource src;
	bool		ok;

	memset(&src, 0, sizeof(src));
	*envelope = false;
	if (!sb_store_open(&src.file, path, s3, err))
		return false;
	ok = starts_as_envelope(&src, envelope, err) &&
		(!*envelope || sb_envelope_outline_stream(read_store, &src, o, sha256, len, err));
	sb_store_close(&src.file);
	return ok;
}
