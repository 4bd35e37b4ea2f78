/*
 * manifest_json.c
 *		The manifest's JSON form (docs/FORMAT.md): writing, reading, and the
 *		atomic, durable write of manifest.json into a backup folder.
 *
 * JSON is written and parsed with cJSON (Debian's libcjson).  Integers are
 * JSON numbers, exact up to 2^53; file names, link targets, destinations and
 * labels that are not plain UTF-8 are written as hex in "encoded_path" (and
 * so on), as PostgreSQL's backup_manifest does, so the text stays valid JSON.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* O_TMPFILE, mkostemp */
#endif
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stripebackup/sb_manifest.h"
#include "stripebackup/sb_policy.h"
#include "format/checksum.h"
#include "manifest/entry_spool.h"
#include "util/fsutil.h"
#include "manifest/manifest_numbers.h"
#include "manifest/manifest_text.h"

#define JSON_MAX_INTEGER 9007199254740992.0	/* 2^53 */

/* ---------- writing ---------- */

/* A JSON builder whose failures stick until the end. */
typedef struct Builder
{
	bool		ok;				/* false once anything failed */
	const char *too_large;		/* key of an integer JSON cannot hold exactly */
} Builder;

static cJSON *
add(Builder *b, cJSON *parent, const char *key, cJSON *item)
{
	if (item == NULL)
		b->ok = false;
	else if (key ? !cJSON_AddItemToObject(parent, key, item)
			 : !cJSON_AddItemToArray(parent, item))
	{
		cJSON_Delete(item);
		b->ok = false;
		return NULL;
	}
	return item;
}

/*
 * Integers are written as exact decimal text: cJSON prints a double with 15
 * significant digits whenever that reads back within its rounding tolerance,
 * which turns 9007199254740991 into 9007199254740990.  Beyond 2^53 a reader
 * cannot hold the value exactly, so refuse to write it at all.
 */
static void
add_integer(Builder *b, cJSON *parent, const char *key, bool negative, uint64_t magnitude)
{
	char		text[32];

	if (magnitude > (uint64_t) JSON_MAX_INTEGER)
	{
		b->ok = false;
		if (b->too_large == NULL)
			b->too_large = key ? key : "extents or chunk_ranges";
		return;
	}
	snprintf(text, sizeof(text), "%s%" PRIu64, negative ? "-" : "", magnitude);
	add(b, parent, key, cJSON_CreateRaw(text));
}

static void
add_u64(Builder *b, cJSON *parent, const char *key, uint64_t v)
{
	add_integer(b, parent, key, false, v);
}

static void
add_str(Builder *b, cJSON *parent, const char *key, const char *v)
{
	add(b, parent, key, v ? cJSON_CreateString(v) : cJSON_CreateNull());
}

/*
 * Plain UTF-8 with no control characters: safe to write as a JSON string.
 * Strict UTF-8 (RFC 3629): overlong forms, surrogates and code points past
 * U+10FFFF are refused too, since strict JSON readers refuse them.
 */
static bool
is_plain_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *) s;

	while (*p)
	{
		unsigned char lead = *p;
		unsigned char lo = 0x80,
					hi = 0xBF;	/* allowed range of the second byte */
		int			n;

		if (lead < 0x20)
			return false;
		if (lead < 0x80)
			n = 0;
		else if (lead >= 0xC2 && lead <= 0xDF)
			n = 1;
		else if (lead >= 0xE0 && lead <= 0xEF)
		{
			n = 2;
			lo = lead == 0xE0 ? 0xA0 : 0x80;	/* no overlong forms */
			hi = lead == 0xED ? 0x9F : 0xBF;	/* no surrogates */
		}
		else if (lead >= 0xF0 && lead <= 0xF4)
		{
			n = 3;
			lo = lead == 0xF0 ? 0x90 : 0x80;	/* no overlong forms */
			hi = lead == 0xF4 ? 0x8F : 0xBF;	/* nothing past U+10FFFF */
		}
		else
			return false;
		p++;
		if (n > 0 && (*p < lo || *p > hi))
			return false;
		for (; n > 0; n--, p++)
			if ((*p & 0xC0) != 0x80)
				return false;
	}
	return true;
}

/* Write V under KEY, or as hex under HEX_KEY when it is not plain UTF-8. */
static void
add_name(Builder *b, cJSON *parent, const char *key, const char *hex_key, const char *v)
{
	size_t		len = strlen(v);
	char	   *hex;
	size_t		i;

	if (is_plain_utf8(v))
	{
		add_str(b, parent, key, v);
		return;
	}
	hex = malloc(len * 2 + 1);
	if (hex == NULL)
	{
		b->ok = false;
		return;
	}
	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char) v[i]);
	add_str(b, parent, hex_key, hex);
	free(hex);
}

static void
add_pair(Builder *b, cJSON *array, uint64_t x, uint64_t y)
{
	cJSON	   *pair = add(b, array, NULL, cJSON_CreateArray());

	if (pair != NULL)
	{
		add_u64(b, pair, NULL, x);
		add_u64(b, pair, NULL, y);
	}
}

/* ---------- the entries, written as text ---------- */

/*
 * The entries are most of a manifest (one per file), so they are written
 * straight into the text rather than built as a cJSON tree first: a tree
 * costs about a kilobyte a file, text about 150 bytes.  The output is what
 * cJSON_PrintUnformatted writes for the same values.
 */
typedef struct Text
{
	char	   *data;
	size_t		len;
	size_t		cap;
	bool		measuring;		/* only count the bytes (LEN), write nothing */
	bool		ok;				/* false once an allocation (or the sink) failed */
	const char *too_large;		/* key of an integer JSON cannot hold exactly */
	SbTextSink	sink;			/* or: DATA is a block of CAP bytes handed to it when full */
	void	   *sink_arg;
	SbError    *sink_err;
} Text;

/* Hand the block to the sink; empty it. */
static void
text_flush(Text *t)
{
	if (t->ok && t->len > 0)
		t->ok = t->sink(t->sink_arg, t->data, t->len, t->sink_err);
	t->len = 0;
}

static void
text_append_to_sink(Text *t, const char *s, size_t n)
{
	if (t->len + n > t->cap)
		text_flush(t);
	if (n > t->cap)
		t->ok = t->ok && t->sink(t->sink_arg, s, n, t->sink_err);
	else
	{
		memcpy(t->data + t->len, s, n);
		t->len += n;
	}
}

static void
text_append(Text *t, const char *s, size_t n)
{
	if (!t->ok)
		return;
	if (t->measuring)
	{
		t->len += n;
		return;
	}
	if (t->sink != NULL)
	{
		text_append_to_sink(t, s, n);
		return;
	}
	if (t->len + n + 1 > t->cap)
	{
		size_t		cap = t->cap ? t->cap : 4096;
		char	   *bigger;

		while (t->len + n + 1 > cap)
			cap *= 2;
		bigger = realloc(t->data, cap);
		if (bigger == NULL)
		{
			t->ok = false;
			return;
		}
		t->data = bigger;
		t->cap = cap;
	}
	memcpy(t->data + t->len, s, n);
	t->len += n;
	t->data[t->len] = '\0';
}

static void
text_puts(Text *t, const char *s)
{
	text_append(t, s, strlen(s));
}

/* A JSON string: quotes and backslashes escaped, control characters as \u00XX. */
static void
text_string(Text *t, const char *s)
{
	const char *run = s;

	text_puts(t, "\"");
	for (; *s; s++)
	{
		unsigned char c = (unsigned char) *s;
		char		esc[8];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		text_append(t, run, (size_t) (s - run));
		if (c == '"' || c == '\\')
			snprintf(esc, sizeof(esc), "\\%c", c);
		else
			snprintf(esc, sizeof(esc), "\\u%04x", c);
		text_puts(t, esc);
		run = s + 1;
	}
	text_append(t, run, (size_t) (s - run));
	text_puts(t, "\"");
}

/* ,"KEY": (no comma before the first member of an object) */
static void
text_key(Text *t, const char *key, bool first)
{
	if (!first)
		text_puts(t, ",");
	text_string(t, key);
	text_puts(t, ":");
}

static void
text_integer(Text *t, const char *what, bool negative, uint64_t magnitude)
{
	char		num[32];

	if (magnitude > (uint64_t) JSON_MAX_INTEGER)
	{
		t->ok = false;
		if (t->too_large == NULL)
			t->too_large = what;
		return;
	}
	snprintf(num, sizeof(num), "%s%" PRIu64, negative ? "-" : "", magnitude);
	text_puts(t, num);
}

static void
text_u64(Text *t, const char *key, uint64_t v)
{
	text_key(t, key, false);
	text_integer(t, key, false, v);
}

/* V under KEY, or as hex under HEX_KEY when it is not plain UTF-8. */
static void
text_name(Text *t, const char *key, const char *hex_key, const char *v, bool first)
{
	size_t		i;

	if (is_plain_utf8(v))
	{
		text_key(t, key, first);
		text_string(t, v);
		return;
	}
	text_key(t, hex_key, first);
	text_puts(t, "\"");
	for (i = 0; v[i]; i++)
	{
		char		hex[3];

		snprintf(hex, sizeof(hex), "%02x", (unsigned char) v[i]);
		text_append(t, hex, 2);
	}
	text_puts(t, "\"");
}

static const char *
entry_type_name(SbEntryType type)
{
	return type == SB_ENTRY_DIR ? "dir" : type == SB_ENTRY_SYMLINK ? "symlink" : "file";
}

static void
text_extents(Text *t, const SbEntry *e)
{
	uint32_t	i;

	text_key(t, "extents", false);
	text_puts(t, "[");
	for (i = 0; i < e->nextents; i++)
	{
		text_puts(t, i == 0 ? "[" : ",[");
		text_integer(t, "extents", false, e->extents[i].offset);
		text_puts(t, ",");
		text_integer(t, "extents", false, e->extents[i].length);
		text_puts(t, "]");
	}
	text_puts(t, "]");
}

static void
text_entry(Text *t, const SbEntry *e, bool first)
{
	char		field[24];

	text_puts(t, first ? "{" : ",{");
	text_name(t, "path", "encoded_path", e->path, true);
	text_key(t, "type", false);
	text_string(t, entry_type_name(e->type));
	snprintf(field, sizeof(field), "%04o", e->mode & 07777);
	text_key(t, "mode", false);
	text_string(t, field);
	text_key(t, "mtime", false);
	text_integer(t, "mtime", e->mtime < 0,
				 e->mtime < 0 ? (uint64_t) 0 - (uint64_t) e->mtime : (uint64_t) e->mtime);
	if (e->type == SB_ENTRY_SYMLINK)
		text_name(t, "target", "encoded_target", e->link_target, false);
	if (e->type == SB_ENTRY_FILE)
	{
		text_u64(t, "size", e->size);
		snprintf(field, sizeof(field), "%08x", e->crc32c);
		text_key(t, "crc32c", false);
		text_string(t, field);
		text_u64(t, "stream_offset", e->stream_offset);
		text_u64(t, "stream_length", e->stream_length);
		if (e->file_id != NULL)
		{
			text_key(t, "file_id", false);
			text_string(t, e->file_id);
		}
		if (e->file_times != NULL)
		{
			text_key(t, "file_times", false);
			text_string(t, e->file_times);
		}
		if (e->incremental)
		{
			text_key(t, "incremental", false);
			text_puts(t, "true");
		}
		if (e->sparse)
			text_extents(t, e);
	}
	text_puts(t, "}");
}

/* ---------- an entry table spilled to a file ---------- */

static bool too_large(SbError *err, const char *key);

#define SPILL_BLOCK ((size_t) 1 << 16)

/*
 * Each entry's text, as the manifest holds it, appended to an unlinked file
 * instead of the entry table (sb_manifest_spill).
 */
struct SbEntrySpill
{
	int			fd;
	Text		text;			/* what is not written yet, SPILL_BLOCK at most */
	uint64_t	count;			/* entries spilled */
	uint64_t	files;			/* of which regular files */
	uint64_t	data_end;		/* where the next file's data must start in the stream */
	uint64_t	written;		/* bytes of their text in the file */
	SbError		error;			/* why writing failed */
};

static bool
spill_sink(void *arg, const char *text, size_t len, SbError *err)
{
	SbEntrySpill *s = arg;

	if (!sb_write_all(s->fd, text, len, "the manifest's entries", err))
		return false;
	s->written += len;
	return true;
}

bool
sb_manifest_spill(SbManifest *m, const char *dir, SbError *err)
{
	SbEntrySpill *s = sb_alloc(sizeof(SbEntrySpill), err);

	if (s == NULL)
		return false;
	s->fd = sb_open_unlinked(dir, "the manifest's entries", err);
	s->text = (Text) {malloc(SPILL_BLOCK), 0, SPILL_BLOCK, false, true, NULL, spill_sink, s, &s->error};
	if (s->fd < 0 || s->text.data == NULL)
	{
		if (s->fd >= 0 && s->text.data == NULL)
			sb_error_set(err, SB_ENOMEM, "out of memory");
		sb_manifest_spill_free(s);
		return false;
	}
	m->spill = s;
	return true;
}

bool
sb_manifest_spill_entry(SbManifest *m, const SbEntry *e, SbError *err)
{
	SbEntrySpill *s = m->spill;

	/* as a reader checks it (manifest.c): data in stream order, end to end */
	if (e->type == SB_ENTRY_FILE && e->stream_length > 0)
	{
		if (e->stream_offset != s->data_end)
			return sb_error_set(err, SB_EINVAL,
								"\"%s\" starts at stream offset %" PRIu64 ", expected %" PRIu64,
								e->path, e->stream_offset, s->data_end);
		s->data_end += e->stream_length;
	}
	text_entry(&s->text, e, s->count == 0);
	if (!s->text.ok)
	{
		if (s->text.too_large != NULL)
			return too_large(err, s->text.too_large);
		*err = s->error;
		return false;
	}
	s->count++;
	if (e->type == SB_ENTRY_FILE)
		s->files++;
	return true;
}

uint64_t
sb_manifest_file_count(const SbManifest *m)
{
	uint64_t	n = m->spill != NULL ? m->spill->files : 0;
	size_t		i;

	for (i = 0; i < m->nentries; i++)
		if (m->entries[i].type == SB_ENTRY_FILE)
			n++;
	return n;
}

bool
sb_manifest_spill_check(const SbManifest *m, SbError *err)
{
	if (m->spill->data_end != m->stream_bytes)
		return sb_error_set(err, SB_EINVAL, "the files hold %" PRIu64 " bytes, the stream %" PRIu64,
							m->spill->data_end, m->stream_bytes);
	return true;
}

void
sb_manifest_spill_free(SbEntrySpill *s)
{
	if (s == NULL)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->text.data);
	free(s);
}

/* The spilled entries' text, in order, into T. */
static void
text_spilled(Text *t, SbEntrySpill *s)
{
	char	   *block;
	uint64_t	at = 0;

	text_flush(&s->text);
	if (t->measuring)
	{
		t->len += s->written;
		return;
	}
	if (!s->text.ok || (block = malloc(SPILL_BLOCK)) == NULL)
	{
		t->ok = false;
		return;
	}
	while (t->ok && at < s->written)
	{
		ssize_t		n = pread(s->fd, block, SPILL_BLOCK, (off_t) at);

		if (n <= 0)
			t->ok = false;
		else
		{
			text_append(t, block, (size_t) n);
			at += (uint64_t) n;
		}
	}
	free(block);
}

/* The entries of a manifest read into a spool, in order, into T; a failure to read them is T's error. */
static void
text_spooled(Text *t, SbEntrySpool *spool)
{
	SbError		own;
	SbError    *err = t->sink_err ? t->sink_err : &own;
	SbEntry		e;
	bool		end = false;
	bool		first = true;

	if (!sb_entry_spool_rewind(spool, err))
		t->ok = false;
	while (t->ok && sb_entry_spool_next(spool, &e, &end, err))
	{
		text_entry(t, &e, first);
		first = false;
	}
	if (t->ok && !end)
		t->ok = false;
}

/* ,"entries":[...]} after the rest of the object, printed by cJSON without its closing brace. */
static void
text_entries(Text *t, const SbManifest *m)
{
	size_t		i;

	text_key(t, "entries", false);
	text_puts(t, "[");
	if (m->spill != NULL)
		text_spilled(t, m->spill);
	if (m->streamed != NULL)
		text_spooled(t, m->streamed);
	for (i = 0; t->ok && i < m->nentries; i++)
		text_entry(t, &m->entries[i], i == 0);
	text_puts(t, "]}");
}

/* A range list under KEY: [[first, last], ...]. */
static void
add_ranges(Builder *b, cJSON *o, const char *key, const SbChunkRange *ranges, uint32_t n)
{
	cJSON	   *array = add(b, o, key, cJSON_CreateArray());
	uint32_t	i;

	for (i = 0; array != NULL && i < n; i++)
		add_pair(b, array, ranges[i].first, ranges[i].last);
}

static void
add_stripe(Builder *b, cJSON *array, const SbManifest *m, const SbStripeInfo *s)
{
	cJSON	   *o = add(b, array, NULL, cJSON_CreateObject());
	uint32_t	i;

	if (o == NULL)
		return;
	add_u64(b, o, "number", s->number);
	add_name(b, o, "destination", "encoded_destination", s->destination);
	add_str(b, o, "file", s->file_name);
	add(b, o, "weight", cJSON_CreateNumber(s->weight));
	add_u64(b, o, "chunks", s->chunks);
	add_u64(b, o, "raw_bytes", s->raw_bytes);
	add_u64(b, o, "stored_bytes", s->stored_bytes);
	add_u64(b, o, "file_bytes", s->file_bytes);
	add(b, o, "seconds", cJSON_CreateNumber(s->seconds));
	add(b, o, "finished_after", cJSON_CreateNumber(s->finished_after));
	add_ranges(b, o, "chunk_ranges", s->ranges, s->nranges);
	/* 3.1's keys only with redundancy: a backup without is 3.0, byte for byte */
	if (m->redundancy.parity > 0)
	{
		add_u64(b, o, "parity_chunks", s->parity_chunks);
		add_u64(b, o, "parity_bytes", s->parity_bytes);
		add_ranges(b, o, "parity_ranges", s->parity_ranges, s->nparity_ranges);
	}
	if (s->ntimeline > 0)
	{
		cJSON	   *timeline;

		add(b, o, "timeline_interval", cJSON_CreateNumber(s->timeline_interval));
		timeline = add(b, o, "timeline", cJSON_CreateArray());

		for (i = 0; timeline != NULL && i < s->ntimeline; i++)
			add_u64(b, timeline, NULL, s->timeline[i]);
	}
}

static void
add_hex(Builder *b, cJSON *parent, const char *key, const uint8_t *bytes, size_t len)
{
	char		text[2 * 32 + 1];
	size_t		i;

	for (i = 0; i < len && i < 32; i++)
		sprintf(text + 2 * i, "%02x", bytes[i]);
	add_str(b, parent, key, text);
}

/* Which backup this one completes, and where it was written. */
static void
add_parent(Builder *b, cJSON *root, const SbParentRef *ref)
{
	cJSON	   *o = add(b, root, "parent", cJSON_CreateObject());
	cJSON	   *dests;
	uint32_t	i;

	if (o == NULL)
		return;
	add_hex(b, o, "backup_uuid", ref->uuid, sizeof(ref->uuid));
	add_str(b, o, "name", ref->name);
	add_hex(b, o, "manifest_sha256", ref->manifest_sha256, sizeof(ref->manifest_sha256));
	add_u64(b, o, "manifest_length", ref->manifest_length);
	dests = add(b, o, "destinations", cJSON_CreateArray());
	for (i = 0; dests != NULL && i < ref->ndestinations; i++)
	{
		cJSON	   *d = add(b, dests, NULL, cJSON_CreateObject());

		if (d != NULL)
			add_name(b, d, "destination", "encoded_destination", ref->destinations[i]);
	}
}

/* FORMAT.md 10.3: the redundancy object and the parity records' bytes (3.1). */
static void
add_redundancy(Builder *b, cJSON *root, const SbManifest *m)
{
	cJSON	   *o = add(b, root, "redundancy", cJSON_CreateObject());

	if (o != NULL)
	{
		add_u64(b, o, "parity", m->redundancy.parity);
		add_u64(b, o, "data", m->redundancy.data);
		add_u64(b, o, "run", m->redundancy.run);
		add_str(b, o, "code", SB_REDUNDANCY_CODE);
	}
	add_u64(b, root, "parity_bytes", m->parity_bytes);
}

static void
add_header(Builder *b, cJSON *root, const SbManifest *m)
{
	char		text[40];
	cJSON	   *comp;
	int			i;

	add_str(b, root, "format", "stripebackup");
	snprintf(text, sizeof(text), "%u.%u", m->version_major, m->version_minor);
	add_str(b, root, "format_version", text);
	for (i = 0; i < 16; i++)
		sprintf(text + 2 * i, "%02x", m->uuid[i]);
	add_str(b, root, "backup_uuid", text);
	add_str(b, root, "name", m->name);
	if (m->label != NULL)
		add_name(b, root, "label", "encoded_label", m->label);
	else
		add_str(b, root, "label", NULL);
	add_str(b, root, "tool", m->tool);
	add_str(b, root, "started_at", m->started_at);
	add_str(b, root, "finished_at", m->finished_at);
	add_u64(b, root, "chunk_size", m->chunk_size);
	comp = add(b, root, "compression", cJSON_CreateObject());
	if (comp != NULL)
	{
		add_str(b, comp, "codec", sb_codec_name(m->codec));
		add(b, comp, "level", cJSON_CreateNumber(m->level));
	}
	add_str(b, root, "balance", sb_balance_name(m->balance));
	if (m->encrypted)
		add_str(b, root, "encryption", "aes-256-gcm");
	add_str(b, root, "backup_type", sb_backup_type_name(m->type));
	if (m->parent != NULL)
		add_parent(b, root, m->parent);
	add_u64(b, root, "stream_bytes", m->stream_bytes);
	add_u64(b, root, "stored_bytes", m->stored_bytes);
	add_u64(b, root, "chunks", m->total_chunks);
	if (m->redundancy.parity > 0)
		add_redundancy(b, root, m);
}

static bool
too_large(SbError *err, const char *key)
{
	return sb_error_set(err, SB_EINVAL,
						"manifest field \"%s\" is larger than 2^53, the largest integer JSON holds exactly",
						key);
}

/* The header, the caller's metadata and the stripes, as cJSON prints them (a few kilobytes). */
static char *
print_head(const SbManifest *m, SbError *err)
{
	Builder		b = {true, NULL};
	cJSON	   *root = cJSON_CreateObject();
	cJSON	   *array;
	char	   *text = NULL;
	size_t		i;

	if (root == NULL)
	{
		sb_error_set(err, SB_ENOMEM, "out of memory writing the manifest");
		return NULL;
	}
	add_header(&b, root, m);
	if (m->metadata_json != NULL)
	{
		cJSON	   *meta = cJSON_Parse(m->metadata_json);

		if (meta == NULL || !cJSON_IsObject(meta))
		{
			cJSON_Delete(meta);
			cJSON_Delete(root);
			sb_error_set(err, SB_EINVAL, "backup metadata is not a JSON object");
			return NULL;
		}
		add(&b, root, "metadata", meta);
	}
	array = add(&b, root, "stripes", cJSON_CreateArray());
	for (i = 0; array != NULL && i < m->nstripes; i++)
		add_stripe(&b, array, m, &m->stripes[i]);
	if (b.ok)
		text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (b.too_large != NULL)
		too_large(err, b.too_large);
	else if (text == NULL)
		sb_error_set(err, SB_ENOMEM, "out of memory writing the manifest");
	return text;
}

/*
 * The text is allocated once at its exact length (measured by a first pass
 * over the entries), plus the newline sb_manifest_serialize adds: a buffer
 * that doubles as it fills would hold up to twice the text at the end.
 */
char *
sb_manifest_to_json(const SbManifest *m, SbError *err)
{
	Text		size = {NULL, 0, 0, true, true, NULL, NULL, NULL, NULL};
	Text		t = {NULL, 0, 0, false, true, NULL, NULL, NULL, NULL};
	char	   *head = print_head(m, err);
	size_t		head_len;

	if (head == NULL)
		return NULL;
	head_len = strlen(head) - 1;	/* without the closing brace: the entries go before it */
	text_entries(&size, m);
	t.cap = head_len + size.len + 2;
	t.data = malloc(t.cap);
	t.ok = t.data != NULL;
	text_append(&t, head, head_len);
	free(head);
	text_entries(&t, m);
	if (t.ok)
		return t.data;
	free(t.data);
	if (t.too_large != NULL)
		too_large(err, t.too_large);
	else
		sb_error_set(err, SB_ENOMEM, "out of memory writing the manifest");
	return NULL;
}

/* Blocks handed to a sink: the text of a million files is never whole in memory. */
#define EMIT_BLOCK ((size_t) 1 << 20)

bool
sb_manifest_emit(const SbManifest *m, SbTextSink sink, void *arg, SbError *err)
{
	Text		t = {NULL, 0, EMIT_BLOCK, false, true, NULL, sink, arg, err};
	char	   *head;

	sb_error_clear(err);
	if ((head = print_head(m, err)) == NULL)
		return false;
	t.data = malloc(EMIT_BLOCK);
	t.ok = t.data != NULL;
	text_append(&t, head, strlen(head) - 1);	/* the entries go before its closing brace */
	free(head);
	text_entries(&t, m);
	text_puts(&t, "\n");
	text_flush(&t);
	free(t.data);
	if (t.ok)
		return true;
	if (t.too_large != NULL)
		return too_large(err, t.too_large);
	if (err->code == SB_OK)
		sb_error_set(err, SB_ENOMEM, "out of memory writing the manifest");
	return false;
}

/* ---------- reading ---------- */

static bool
bad(SbError *err, const char *what, const char *key)
{
	return sb_error_set(err, SB_ECORRUPT, "manifest: %s \"%s\"", what, key);
}

/* A whole number from 0 to 2^53, the integers every JSON reader holds exactly. */
static bool
is_json_u53(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= JSON_MAX_INTEGER &&
		v->valuedouble == floor(v->valuedouble);
}

static bool
get_u64(const cJSON *o, const char *key, uint64_t *out, SbError *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v))
		return bad(err, "missing or non-numeric field", key);
	if (!is_json_u53(v))
		return bad(err, "field out of range:", key);
	*out = (uint64_t) v->valuedouble;
	return true;
}

static bool
get_u32(const cJSON *o, const char *key, uint32_t *out, SbError *err)
{
	uint64_t	v;

	if (!get_u64(o, key, &v, err))
		return false;
	if (v > UINT32_MAX)
		return bad(err, "field out of range:", key);
	*out = (uint32_t) v;
	return true;
}

static bool
get_i64(const cJSON *o, const char *key, int64_t *out, SbError *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || fabs(v->valuedouble) > JSON_MAX_INTEGER ||
		v->valuedouble != floor(v->valuedouble))
		return bad(err, "missing or bad integer field", key);
	*out = (int64_t) v->valuedouble;
	return true;
}

/* A string field, copied; NULL allowed only if OPTIONAL. */
static bool
get_str(const cJSON *o, const char *key, bool optional, char **out, SbError *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	*out = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return optional ? true : bad(err, "missing field", key);
	if (!cJSON_IsString(v))
		return bad(err, "field is not a string:", key);
	*out = sb_strdup(v->valuestring, err);
	return *out != NULL;
}

/* A lowercase hex digit's value, or -1: no sign, space, "0x" or capitals. */
static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Exactly OUTLEN * 2 lowercase hex digits, as the writer writes them. */
static bool
decode_hex(const char *hex, uint8_t *out, size_t outlen)
{
	size_t		i;

	if (strlen(hex) != outlen * 2)
		return false;
	for (i = 0; i < outlen; i++)
	{
		int			hi = hex_digit(hex[2 * i]);
		int			lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t) (hi << 4 | lo);
	}
	return true;
}

/* A name under KEY, or hex-encoded under HEX_KEY. */
static bool
get_name(const cJSON *o, const char *key, const char *hex_key, char **out, SbError *err)
{
	char	   *hex;
	size_t		len;

	if (cJSON_GetObjectItemCaseSensitive(o, key) != NULL)
		return get_str(o, key, false, out, err);
	if (!get_str(o, hex_key, false, &hex, err))
		return false;
	len = strlen(hex) / 2;
	*out = sb_alloc(len + 1, err);
	if (*out == NULL || !decode_hex(hex, (uint8_t *) *out, len) || memchr(*out, 0, len))
	{
		free(hex);
		return bad(err, "bad hex in", hex_key);
	}
	free(hex);
	return true;
}

/* An optional array of whole numbers (absent: none). */
static bool
get_number_list(const cJSON *o, const char *key, uint64_t **out, uint32_t *count, SbError *err)
{
	const cJSON *array = cJSON_GetObjectItemCaseSensitive(o, key);
	const cJSON *v;

	*out = NULL;
	*count = 0;
	if (array == NULL)
		return true;
	if (!cJSON_IsArray(array))
		return bad(err, "bad array", key);
	*out = sb_alloc(sizeof(uint64_t) * (size_t) (cJSON_GetArraySize(array) + 1), err);
	if (*out == NULL)
		return false;
	cJSON_ArrayForEach(v, array)
	{
		if (!is_json_u53(v))
			return bad(err, "bad number in", key);
		(*out)[(*count)++] = (uint64_t) v->valuedouble;
	}
	return true;
}

/* Read an array of [x, y] number pairs. */
static bool
get_pairs(const cJSON *o, const char *key, uint64_t **out, uint32_t *count, SbError *err)
{
	const cJSON *array = cJSON_GetObjectItemCaseSensitive(o, key);
	const cJSON *pair;
	uint32_t	n = 0;

	*out = NULL;
	*count = 0;
	if (!cJSON_IsArray(array))
		return bad(err, "missing array", key);
	*out = sb_alloc(2 * sizeof(uint64_t) * (size_t) (cJSON_GetArraySize(array) + 1), err);
	if (*out == NULL)
		return false;
	cJSON_ArrayForEach(pair, array)
	{
		const cJSON *x = cJSON_GetArrayItem(pair, 0);
		const cJSON *y = cJSON_GetArrayItem(pair, 1);

		if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 ||
			!is_json_u53(x) || !is_json_u53(y))
			return bad(err, "bad pair in", key);
		(*out)[2 * n] = (uint64_t) x->valuedouble;
		(*out)[2 * n + 1] = (uint64_t) y->valuedouble;
		n++;
	}
	*count = n;
	return true;
}

static bool
parse_type(const char *name, uint8_t *type)
{
	if (strcmp(name, "file") == 0)
		*type = SB_ENTRY_FILE;
	else if (strcmp(name, "dir") == 0)
		*type = SB_ENTRY_DIR;
	else if (strcmp(name, "symlink") == 0)
		*type = SB_ENTRY_SYMLINK;
	else
		return false;
	return true;
}

/* Exactly four octal digits, as the writer writes them ("0640"). */
static bool
parse_mode(const char *text, uint16_t *mode)
{
	uint16_t	v = 0;
	int			i;

	if (strlen(text) != 4)
		return false;
	for (i = 0; i < 4; i++)
	{
		if (text[i] < '0' || text[i] > '7')
			return false;
		v = (uint16_t) (v * 8 + (text[i] - '0'));
	}
	*mode = v;
	return true;
}

/* "incremental": true, or absent; only manifests of 3.x have it. */
static bool
get_incremental(const cJSON *o, uint32_t major, SbEntry *e, SbError *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "incremental");

	if (v == NULL || major < 3)
		return true;
	if (!cJSON_IsTrue(v))
		return bad(err, "bad field incremental of", e->path);
	e->incremental = true;
	return true;
}

/* The fields only regular files have. */
static bool
parse_file_fields(const cJSON *o, uint32_t major, SbEntry *e, SbError *err)
{
	char	   *crc;
	uint8_t		crc_bytes[4];
	bool		ok;

	if (!get_u64(o, "size", &e->size, err) ||
		!get_u64(o, "stream_offset", &e->stream_offset, err) ||
		!get_u64(o, "stream_length", &e->stream_length, err) ||
		!get_str(o, "crc32c", false, &crc, err))
		return false;
	ok = decode_hex(crc, crc_bytes, 4);
	free(crc);
	if (!ok)
		return bad(err, "bad crc32c of", e->path);
	e->crc32c = ((uint32_t) crc_bytes[0] << 24) | ((uint32_t) crc_bytes[1] << 16) |
		((uint32_t) crc_bytes[2] << 8) | crc_bytes[3];
	if (!get_str(o, "file_id", true, &e->file_id, err) ||
		!get_str(o, "file_times", true, &e->file_times, err) || !get_incremental(o, major, e, err))
		return false;
	e->sparse = cJSON_GetObjectItemCaseSensitive(o, "extents") != NULL;
	if (e->sparse)
		return get_pairs(o, "extents", (uint64_t **) &e->extents, &e->nextents, err);
	if (e->incremental)
		return bad(err, "incremental file without extents", e->path);
	return true;
}

static bool
parse_entry(const cJSON *o, SbManifest *m, SbError *err)
{
	SbEntry		e;
	char	   *text = NULL;
	bool		ok;

	memset(&e, 0, sizeof(e));
	ok = get_name(o, "path", "encoded_path", &e.path, err) &&
		get_str(o, "type", false, &text, err);
	ok = ok && (parse_type(text, &e.type) || bad(err, "unknown type of", e.path));
	free(text);
	text = NULL;
	ok = ok && get_str(o, "mode", false, &text, err) &&
		(parse_mode(text, &e.mode) || bad(err, "bad mode of", e.path)) &&
		get_i64(o, "mtime", &e.mtime, err);
	if (ok && e.type == SB_ENTRY_SYMLINK)
		ok = get_name(o, "target", "encoded_target", &e.link_target, err);
	if (ok && e.type == SB_ENTRY_FILE)
		ok = parse_file_fields(o, m->version_major, &e, err);
	ok = ok && sb_manifest_add_entry(m, &e, err);
	if (!ok && err->code == SB_EINVAL)
		err->code = SB_ECORRUPT;	/* an unsafe path read from disk */
	free(text);
	free(e.path);
	free(e.extents);
	free(e.link_target);
	free(e.file_id);
	free(e.file_times);
	return ok;
}

/* "timeline_interval" and "timeline" (at least the total) come together, or not at all. */
static bool
get_timeline(const cJSON *o, SbStripeInfo *s, SbError *err)
{
	const cJSON *interval = cJSON_GetObjectItemCaseSensitive(o, "timeline_interval");
	bool		has_timeline = cJSON_GetObjectItemCaseSensitive(o, "timeline") != NULL;

	if (interval == NULL && !has_timeline)
		return true;
	if (!has_timeline)
		return bad(err, "stripe has no timeline for its", "timeline_interval");
	if (!cJSON_IsNumber(interval))
		return bad(err, "stripe's timeline lacks a numeric", "timeline_interval");
	s->timeline_interval = interval->valuedouble;
	if (!get_number_list(o, "timeline", &s->timeline, &s->ntimeline, err))
		return false;
	return s->ntimeline > 0 ? true : bad(err, "empty array", "timeline");
}

/*
 * A stripe's parity records (3.1): their keys all there with redundancy,
 * none without (a reader would otherwise ignore records a stripe claims).
 */
static bool
parse_stripe_parity(const cJSON *o, const SbManifest *m, SbStripeInfo *s, SbError *err)
{
	static const char *const keys[] = {"parity_chunks", "parity_bytes", "parity_ranges"};
	size_t		i;

	if (m->redundancy.parity > 0)
		return get_u64(o, "parity_chunks", &s->parity_chunks, err) &&
			get_u64(o, "parity_bytes", &s->parity_bytes, err) &&
			get_pairs(o, "parity_ranges", (uint64_t **) &s->parity_ranges, &s->nparity_ranges, err);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (cJSON_GetObjectItemCaseSensitive(o, keys[i]) != NULL)
			return bad(err, "stripe of a backup without redundancy has", keys[i]);
	return true;
}

static bool
parse_stripe(const cJSON *o, const SbManifest *m, SbStripeInfo *s, SbError *err)
{
	const cJSON *weight = cJSON_GetObjectItemCaseSensitive(o, "weight");
	const cJSON *seconds = cJSON_GetObjectItemCaseSensitive(o, "seconds");
	const cJSON *finished = cJSON_GetObjectItemCaseSensitive(o, "finished_after");

	if (!cJSON_IsNumber(weight) || !cJSON_IsNumber(seconds))
		return bad(err, "stripe lacks", "weight");
	/* "1e999" reads as infinity, which JSON cannot hold: it would be written as null. */
	if (!isfinite(weight->valuedouble))
		return bad(err, "stripe field out of range:", "weight");
	if (!isfinite(seconds->valuedouble))
		return bad(err, "stripe field out of range:", "seconds");
	s->weight = weight->valuedouble;
	s->seconds = seconds->valuedouble;
	s->finished_after = cJSON_IsNumber(finished) && isfinite(finished->valuedouble) ?
		finished->valuedouble : 0;	/* optional */
	return get_u32(o, "number", &s->number, err) &&
		get_name(o, "destination", "encoded_destination", &s->destination, err) &&
		get_str(o, "file", false, &s->file_name, err) &&
		(sb_path_is_safe(s->file_name, false) && strchr(s->file_name, '/') == NULL ?
		 true : bad(err, "unsafe stripe file name", s->file_name)) &&
		get_u64(o, "chunks", &s->chunks, err) &&
		get_u64(o, "raw_bytes", &s->raw_bytes, err) &&
		get_u64(o, "stored_bytes", &s->stored_bytes, err) &&
		get_u64(o, "file_bytes", &s->file_bytes, err) &&
		get_pairs(o, "chunk_ranges", (uint64_t **) &s->ranges, &s->nranges, err) &&
		parse_stripe_parity(o, m, s, err) &&
		get_timeline(o, s, err);
}

/* "MAJOR.MINOR": digits, a dot, digits, nothing else. */
static bool
parse_version(const char *text, uint32_t *major, uint32_t *minor)
{
	const char *dot = strchr(text, '.');
	size_t		i;

	if (dot == NULL || dot == text || dot[1] == '\0' || dot - text > 4 || strlen(dot + 1) > 4)
		return false;
	for (i = 0; text[i] != '\0'; i++)
		if ((text[i] < '0' || text[i] > '9') && text + i != dot)
			return false;
	*major = (uint32_t) atoi(text);
	*minor = (uint32_t) atoi(dot + 1);
	return true;
}

/* "format", "format_version": refuse what is not ours, too new or too old. */
static bool
check_version(const cJSON *root, SbManifest *m, SbError *err)
{
	const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "format");
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "format_version");

	if (!cJSON_IsString(format) || strcmp(format->valuestring, "stripebackup") != 0)
		return sb_error_set(err, SB_ECORRUPT, "not a stripebackup manifest (no \"format\": \"stripebackup\")");
	if (!cJSON_IsString(version) ||
		!parse_version(version->valuestring, &m->version_major, &m->version_minor))
		return bad(err, "missing or bad field", "format_version");
	if (m->version_major < SB_MANIFEST_OLDEST_MAJOR || m->version_major > SB_MANIFEST_MAJOR)
		return sb_error_set(err, SB_EVERSION,
							"unsupported manifest format version %s (this program reads %d.x to %d.x)",
							version->valuestring, SB_MANIFEST_OLDEST_MAJOR, SB_MANIFEST_MAJOR);
	return true;
}

/* Exactly LEN bytes as 2 * LEN lowercase hex digits under KEY. */
static bool
get_hex(const cJSON *o, const char *key, uint8_t *out, size_t len, SbError *err)
{
	char	   *text = NULL;
	bool		ok = get_str(o, key, false, &text, err) &&
		(decode_hex(text, out, len) || bad(err, "bad field", key));

	free(text);
	return ok;
}

static bool
parse_parent_destinations(const cJSON *array, SbParentRef *ref, SbError *err)
{
	const cJSON *item;
	int			n = cJSON_GetArraySize(array);

	if (!cJSON_IsArray(array) || n < 1 || n > SB_MAX_STRIPES)
		return bad(err, "missing or bad array", "parent.destinations");
	ref->destinations = sb_alloc(sizeof(char *) * (size_t) n, err);
	if (ref->destinations == NULL)
		return false;
	cJSON_ArrayForEach(item, array)
	{
		if (!cJSON_IsObject(item) ||
			!get_name(item, "destination", "encoded_destination",
					  &ref->destinations[ref->ndestinations], err))
			return err->code != SB_OK ? false : bad(err, "bad item in", "parent.destinations");
		ref->ndestinations++;
	}
	return true;
}

static bool
parse_parent(const cJSON *o, SbManifest *m, SbError *err)
{
	SbParentRef *ref;

	if (!cJSON_IsObject(o))
		return bad(err, "bad field", "parent");
	ref = m->parent = sb_alloc(sizeof(SbParentRef), err);
	return ref != NULL &&
		get_hex(o, "backup_uuid", ref->uuid, sizeof(ref->uuid), err) &&
		get_str(o, "name", false, &ref->name, err) &&
		get_hex(o, "manifest_sha256", ref->manifest_sha256, sizeof(ref->manifest_sha256), err) &&
		get_u64(o, "manifest_length", &ref->manifest_length, err) &&
		parse_parent_destinations(cJSON_GetObjectItemCaseSensitive(o, "destinations"), ref, err);
}

/* "backup_type" and "parent" (3.x): a 2.x manifest is of a full backup. */
static bool
parse_type_and_parent(const cJSON *root, SbManifest *m, SbError *err)
{
	const cJSON *parent = cJSON_GetObjectItemCaseSensitive(root, "parent");
	char	   *text = NULL;
	bool		ok;

	m->type = SB_BACKUP_FULL;
	if (m->version_major < 3)
		return true;
	ok = get_str(root, "backup_type", false, &text, err) &&
		(sb_backup_type_parse(text, &m->type) || bad(err, "unknown backup_type", text));
	free(text);
	if (ok && parent != NULL && !cJSON_IsNull(parent))
		ok = parse_parent(parent, m, err);
	return ok;
}

/*
 * "redundancy" and "parity_bytes" (3.1, FORMAT.md 10.3): both or neither,
 * in a manifest of 3.1 or later, parity at least 1 (0 is said by leaving
 * them out), and the code ours.  The layout's other rules are checked with
 * the stripes (manifest_redundancy.c).
 */
static bool
parse_redundancy(const cJSON *root, SbManifest *m, SbError *err)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "redundancy");
	char	   *code = NULL;
	bool		ok;

	if (o == NULL)
		return cJSON_GetObjectItemCaseSensitive(root, "parity_bytes") == NULL ||
			bad(err, "parity bytes without", "redundancy");
	if (!cJSON_IsObject(o))
		return bad(err, "bad field", "redundancy");
	if (m->version_major < 3 || (m->version_major == 3 && m->version_minor < 1))
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: \"redundancy\" in a manifest of format version %u.%u (it came with 3.1)",
							m->version_major, m->version_minor);
	ok = get_u32(o, "parity", &m->redundancy.parity, err) &&
		get_u32(o, "data", &m->redundancy.data, err) &&
		get_u32(o, "run", &m->redundancy.run, err) &&
		get_str(o, "code", false, &code, err) &&
		(strcmp(code, SB_REDUNDANCY_CODE) == 0 || bad(err, "unknown redundancy code", code)) &&
		get_u64(root, "parity_bytes", &m->parity_bytes, err);
	free(code);
	if (ok && m->redundancy.parity == 0)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: redundancy with parity 0 (a backup without redundancy has no \"redundancy\")");
	return ok;
}

static bool
parse_header(const cJSON *root, SbManifest *m, SbError *err)
{
	const cJSON *comp = cJSON_GetObjectItemCaseSensitive(root, "compression");
	const cJSON *level = cJSON_GetObjectItemCaseSensitive(comp, "level");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
	char	   *text = NULL;
	bool		ok;

	ok = get_str(root, "backup_uuid", false, &text, err) &&
		(decode_hex(text, m->uuid, 16) || bad(err, "bad field", "backup_uuid"));
	free(text);
	ok = ok && get_str(root, "name", false, &m->name, err) &&
		(cJSON_GetObjectItemCaseSensitive(root, "encoded_label") != NULL ?
		 get_name(root, "label", "encoded_label", &m->label, err) :
		 get_str(root, "label", true, &m->label, err)) &&
		get_str(root, "tool", true, &m->tool, err) &&
		get_str(root, "started_at", true, &m->started_at, err) &&
		get_str(root, "finished_at", true, &m->finished_at, err) &&
		get_u32(root, "chunk_size", &m->chunk_size, err) &&
		get_u64(root, "stream_bytes", &m->stream_bytes, err) &&
		get_u64(root, "stored_bytes", &m->stored_bytes, err) &&
		get_u64(root, "chunks", &m->total_chunks, err);
	if (!ok)
		return false;
	if (!get_str(comp, "codec", false, &text, err))
		return false;
	ok = sb_codec_parse(text, &m->codec) || bad(err, "unknown codec", text);
	free(text);
	if (!ok || !cJSON_IsNumber(level))
		return ok ? bad(err, "missing field", "compression.level") : false;
	m->level = level->valueint;
	if (!get_str(root, "balance", false, &text, err))
		return false;
	ok = sb_balance_parse(text, &m->balance) || bad(err, "unknown balance", text);
	free(text);
	if (ok && cJSON_GetObjectItemCaseSensitive(root, "encryption") != NULL)
	{
		ok = get_str(root, "encryption", false, &text, err) &&
			(strcmp(text, "aes-256-gcm") == 0 || bad(err, "unknown encryption", text));
		free(text);
		m->encrypted = ok;
	}
	ok = ok && parse_redundancy(root, m, err);
	if (ok && cJSON_IsObject(meta))
		ok = (m->metadata_json = cJSON_PrintUnformatted(meta)) != NULL ||
			sb_error_set(err, SB_ENOMEM, "out of memory");
	return ok && parse_type_and_parent(root, m, err);
}

static bool
parse_stripes(const cJSON *root, SbManifest *m, SbError *err)
{
	const cJSON *array = cJSON_GetObjectItemCaseSensitive(root, "stripes");
	const cJSON *item;
	int			n = cJSON_GetArraySize(array);

	if (!cJSON_IsArray(array) || n < 1 || n > SB_MAX_STRIPES)
		return bad(err, "missing or bad array", "stripes");
	m->stripes = sb_alloc(sizeof(SbStripeInfo) * (size_t) n, err);
	if (m->stripes == NULL)
		return false;
	cJSON_ArrayForEach(item, array)
	{
		if (!cJSON_IsObject(item) || !parse_stripe(item, m, &m->stripes[m->nstripes++], err))
			return err->code != SB_OK ? false : bad(err, "bad item in", "stripes");
	}
	return true;
}

/* ---------- the pieces a streamed reader hands over (manifest_text.h) ---------- */

static cJSON *
parse_whole(const char *text, size_t len, SbError *err)
{
	const char *end = NULL;
	cJSON	   *item = cJSON_ParseWithLengthOpts(text, len, &end, false);

	if (item == NULL || !cJSON_IsObject(item) || end != text + len)
	{
		cJSON_Delete(item);
		sb_error_set(err, SB_ECORRUPT, "manifest is not valid JSON");
		return NULL;
	}
	return item;
}

bool
sb_manifest_parse_entry_text(const char *text, size_t len, SbManifest *m, SbError *err)
{
	cJSON	   *item = parse_whole(text, len, err);
	bool		ok = item != NULL && sb_manifest_check_integer_text(text, len, err) &&
		parse_entry(item, m, err);

	cJSON_Delete(item);
	return ok;
}

bool
sb_manifest_parse_version_text(const char *doc, size_t len, SbManifest *m, SbError *err)
{
	cJSON	   *root = parse_whole(doc, len, err);
	bool		ok = root != NULL && check_version(root, m, err);

	cJSON_Delete(root);
	return ok;
}

bool
sb_manifest_parse_head_text(const char *doc, size_t len, SbManifest *m, SbError *err)
{
	cJSON	   *root = parse_whole(doc, len, err);
	bool		ok = root != NULL && check_version(root, m, err) &&
		sb_manifest_check_integer_text(doc, len, err) && parse_header(root, m, err) &&
		parse_stripes(root, m, err);

	cJSON_Delete(root);
	return ok;
}

char *
sb_manifest_serialize(const SbManifest *m, size_t *len, SbError *err)
{
	char	   *json = sb_manifest_to_json(m, err);
	size_t		n = json ? strlen(json) : 0;
	char	   *bytes = json ? realloc(json, n + 2) : NULL;

	if (json != NULL && bytes == NULL)
	{
		free(json);
		sb_error_set(err, SB_ENOMEM, "out of memory writing the manifest");
	}
	if (bytes == NULL)
		return NULL;
	bytes[n] = '\n';
	bytes[n + 1] = '\0';
	*len = n + 1;
	return bytes;
}

bool
sb_manifest_write(const SbManifest *m, const char *dir, SbError *err)
{
	size_t		len;
	char	   *bytes = sb_manifest_serialize(m, &len, err);
	int			dirfd;
	bool		ok;

	if (bytes == NULL)
		return false;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		ok = sb_error_set_errno(err, errno, "could not open \"%s\"", dir);
	else
	{
		ok = sb_replace_file_at(dirfd, dir, SB_MANIFEST_FILE, SB_MANIFEST_TEMP_FILE, bytes,
								len, err);
		close(dirfd);
	}
	free(bytes);
	return ok;
}
