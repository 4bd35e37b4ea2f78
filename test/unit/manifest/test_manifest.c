/*
 * test_manifest.c
 *		The manifest model and its JSON form: a full round trip (names that are
 *		not UTF-8, sparse extents, sizes beyond 4 GiB, metadata), the chunk to
 *		file mapping, and the checks that refuse inconsistent manifests.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "manifest/entry_lookup.h"
#include "manifest/entry_spool.h"
#include "manifest/path_set.h"
#include "manifest/manifest_text.h"
#include "tests.h"

#define GiB (UINT64_C(1) << 30)

static void
add(SbManifest *m, const char *path, SbEntryType type, uint32_t mode, int64_t mtime,
	uint64_t size, uint64_t offset, uint64_t length, const SbExtent *extents,
	uint32_t nextents, bool sparse, const char *target)
{
	SbEntry		e;
	SbError		err;

	memset(&e, 0, sizeof(e));
	e.path = (char *) path;
	e.type = type;
	e.mode = mode;
	e.mtime = mtime;
	e.size = size;
	e.crc32c = (uint32_t) (0xC0FFEE00u + m->nentries);
	e.stream_offset = offset;
	e.stream_length = length;
	e.sparse = sparse;
	e.extents = (SbExtent *) extents;
	e.nextents = nextents;
	e.link_target = (char *) target;
	if (!sb_manifest_add_entry(m, &e, &err))
		th_diag_error("add entry", &err);
}

static void
set_stripe(SbStripeInfo *s, uint32_t number, const char *dest, double weight,
		   const SbChunkRange *ranges, uint32_t nranges)
{
	char		name[32];
	uint32_t	i;

	sb_stripe_file_name(number, name, sizeof(name));
	s->number = number;
	s->destination = strdup(dest);
	s->file_name = strdup(name);
	s->weight = weight;
	s->ranges = malloc(sizeof(SbChunkRange) * (nranges + 1));
	memcpy(s->ranges, ranges, sizeof(SbChunkRange) * nranges);
	s->nranges = nranges;
	s->chunks = 0;
	for (i = 0; i < nranges; i++)
		s->chunks += ranges[i].last - ranges[i].first + 1;
	s->seconds = 1.25 * number;
}

/*
 * The byte counts the stripes of M must have: raw bytes those of the chunks
 * their ranges hold, stored bytes 3/4 of that when compressed, file size
 * header, records, index and trailer; the totals in the header.
 */
static void
set_stripe_bytes(SbManifest *m)
{
	uint32_t	s,
				r;

	m->stored_bytes = 0;
	for (s = 0; s < m->nstripes; s++)
	{
		SbStripeInfo *st = &m->stripes[s];

		st->raw_bytes = 0;
		for (r = 0; r < st->nranges; r++)
		{
			uint64_t	end = (st->ranges[r].last + 1) * m->chunk_size;

			st->raw_bytes += (end < m->stream_bytes ? end : m->stream_bytes) -
				st->ranges[r].first * m->chunk_size;
		}
		st->stored_bytes = m->codec == SB_CODEC_NONE ? st->raw_bytes : st->raw_bytes / 4 * 3;
		st->file_bytes = SB_STRIPE_HEADER_SIZE +
			st->chunks * (SB_CHUNK_HEADER_SIZE + SB_INDEX_ENTRY_SIZE) + st->stored_bytes +
			SB_TRAILER_SIZE;
		m->stored_bytes += st->stored_bytes;
	}
}

/* Stripe S's timeline: its stored bytes after a quarter and half of it, then all, 0.1 s apart. */
static void
set_timeline(SbStripeInfo *s, uint32_t n)
{
	uint32_t	i;

	s->timeline = malloc(sizeof(uint64_t) * n);
	for (i = 0; i < n; i++)
		s->timeline[i] = s->stored_bytes >> (n - 1 - i);
	s->ntimeline = n;
	s->timeline_interval = 0.1;
}

/*
 * A manifest that uses every feature:
 *
 *	stream: "caf\xe9" [0, 10000), "dir/sparse" [10000, 22288), chunks of 4096:
 *	6 chunks; stripe 1 holds 0-1 and 4-5, stripe 2 holds 2-3.
 */
static SbManifest *
sample_manifest(void)
{
	static const SbExtent extents[] = {{0, 4096}, {5 * GiB, 8192}};
	static const SbChunkRange r1[] = {{0, 1}, {4, 5}};
	static const SbChunkRange r2[] = {{2, 3}};
	SbManifest *m = sb_manifest_new();
	int			i;

	m->name = strdup("bk-1");
	m->label = strdup("label with \"quotes\", \\ and caf\xc3\xa9");
	m->tool = strdup("stripebackup unit tests");
	m->started_at = strdup("2024-01-02T03:04:05Z");
	m->finished_at = strdup("2024-01-02T03:04:06Z");
	m->metadata_json = strdup("{\"pg\":{\"version\":150004,\"start_lsn\":\"0/2000028\"},\"list\":[1,2.5,true,null]}");
	m->chunk_size = 4096;
	m->codec = SB_CODEC_ZSTD;
	m->level = -5;
	m->balance = SB_BALANCE_ADAPTIVE;
	for (i = 0; i < 16; i++)
		m->uuid[i] = (uint8_t) (i * 17 + 1);
	add(m, ".", SB_ENTRY_DIR, 0700, -86400, 0, 0, 0, NULL, 0, false, NULL);
	add(m, "caf\xe9", SB_ENTRY_FILE, 0644, 1700000000, 10000, 0, 10000, NULL, 0, false, NULL);
	add(m, "dir", SB_ENTRY_DIR, 0750, 1700000001, 0, 0, 0, NULL, 0, false, NULL);
	add(m, "dir/\x01" "ctl", SB_ENTRY_FILE, 0400, 0, 0, 0, 0, NULL, 0, false, NULL);
	add(m, "dir/sparse", SB_ENTRY_FILE, 0600, 1700000002, 6 * GiB, 10000, 12288, extents, 2,
		true, NULL);
	add(m, "dir/huge-hole", SB_ENTRY_FILE, 0600, 1700000003, (UINT64_C(1) << 53) - 1, 0, 0,
		NULL, 0, true, NULL);
	add(m, "dir/\xe2\x82\xac-euro", SB_ENTRY_FILE, 0755, 1700000004, 0, 0, 0, NULL, 0, false,
		NULL);
	add(m, "dir/overlong-\xc0\xaf", SB_ENTRY_FILE, 0600, 1, 0, 0, 0, NULL, 0, false, NULL);
	add(m, "dir/surrogate-\xed\xa0\x80", SB_ENTRY_FILE, 0600, 1, 0, 0, 0, NULL, 0, false, NULL);
	add(m, "dir/past-max-\xf4\x90\x80\x80", SB_ENTRY_FILE, 0600, 1, 0, 0, 0, NULL, 0, false,
		NULL);
	add(m, "dir/smile-\xf0\x9f\x98\x80", SB_ENTRY_FILE, 0600, 1, 0, 0, 0, NULL, 0, false, NULL);
	add(m, "dir/quote\"back\\slash", SB_ENTRY_FILE, 0600, 1, 0, 0, 0, NULL, 0, false, NULL);
	add(m, "pg_tblspc", SB_ENTRY_DIR, 0700, 1700000005, 0, 0, 0, NULL, 0, false, NULL);
	add(m, "pg_tblspc/16385", SB_ENTRY_SYMLINK, 0777, INT64_C(1) << 40, 0, 0, 0, NULL, 0, false,
		"/\xfe\xff/target");
	add(m, "pg_tblspc/16386", SB_ENTRY_SYMLINK, 0777, 1700000005, 0, 0, 0, NULL, 0, false,
		"/absolute/target with spaces");
	m->stream_bytes = 22288;
	m->total_chunks = 6;
	m->stripes = calloc(2, sizeof(SbStripeInfo));
	m->nstripes = 2;
	set_stripe(&m->stripes[0], 1, "/mnt/fast", 2.5, r1, 2);
	set_stripe(&m->stripes[1], 2, "/mnt/caf\xe9-slow", 0.75, r2, 1);
	set_stripe_bytes(m);
	set_timeline(&m->stripes[0], 3);
	set_timeline(&m->stripes[1], 1);
	return m;
}

static bool
str_eq(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static bool
entries_equal(const SbEntry *a, const SbEntry *b)
{
	uint32_t	i;

	if (!str_eq(a->path, b->path) || a->type != b->type || a->mode != b->mode ||
		a->mtime != b->mtime || !str_eq(a->link_target, b->link_target))
		return false;
	if (a->type != SB_ENTRY_FILE)
		return true;
	if (a->size != b->size || a->crc32c != b->crc32c || a->stream_offset != b->stream_offset ||
		a->stream_length != b->stream_length || a->sparse != b->sparse ||
		a->nextents != b->nextents)
		return false;
	for (i = 0; i < a->nextents; i++)
		if (a->extents[i].offset != b->extents[i].offset ||
			a->extents[i].length != b->extents[i].length)
			return false;
	return true;
}

static bool
stripes_equal(const SbStripeInfo *a, const SbStripeInfo *b)
{
	uint32_t	i;

	if (a->number != b->number || !str_eq(a->destination, b->destination) ||
		!str_eq(a->file_name, b->file_name) || a->weight != b->weight ||
		a->chunks != b->chunks || a->raw_bytes != b->raw_bytes ||
		a->stored_bytes != b->stored_bytes || a->file_bytes != b->file_bytes ||
		a->seconds != b->seconds || a->nranges != b->nranges || a->ntimeline != b->ntimeline ||
		a->timeline_interval != b->timeline_interval)
		return false;
	for (i = 0; i < a->nranges; i++)
		if (a->ranges[i].first != b->ranges[i].first || a->ranges[i].last != b->ranges[i].last)
			return false;
	for (i = 0; i < a->ntimeline; i++)
		if (a->timeline[i] != b->timeline[i])
			return false;
	return true;
}

/*
 * Is TEXT strictly valid UTF-8 (so any JSON reader takes it)?  Decodes each
 * sequence and refuses overlong forms, surrogates and code points past U+10FFFF.
 */
static bool
valid_utf8(const char *text)
{
	const unsigned char *p = (const unsigned char *) text;

	while (*p)
	{
		uint32_t	cp;
		int			n,
					k;

		if (*p < 0x80)
		{
			p++;
			continue;
		}
		if ((*p & 0xE0) == 0xC0)
			n = 1, cp = *p & 0x1F;
		else if ((*p & 0xF0) == 0xE0)
			n = 2, cp = *p & 0x0F;
		else if ((*p & 0xF8) == 0xF0)
			n = 3, cp = *p & 0x07;
		else
			return false;
		for (k = 1; k <= n; k++)
		{
			if ((p[k] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (p[k] & 0x3F);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
			(cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
			return false;
		p += n + 1;
	}
	return true;
}

/* The pieces of CHUNK as "path:offset+length;" text. */
static void
pieces_text(const SbManifest *m, uint64_t chunk, char *buf, size_t len)
{
	SbPieceIter it;
	SbPiece		piece;
	size_t		used = 0;

	buf[0] = '\0';
	sb_piece_iter_init(&it, m, chunk);
	while (sb_piece_iter_next(&it, &piece) && used < len)
		used += (size_t) snprintf(buf + used, len - used, "%s:%llu+%llu@%llu;",
								  m->entries[piece.entry].path,
								  (unsigned long long) piece.file_offset,
								  (unsigned long long) piece.length,
								  (unsigned long long) piece.chunk_offset);
}

/* 9. to_json / from_json keep everything, including names that are not UTF-8. */
void
test_manifest_json_roundtrip(void)
{
	static const char *const expected_pieces[] = {
		"caf\xe9:0+4096@0;",
		"caf\xe9:4096+4096@0;",
		"caf\xe9:8192+1808@0;dir/sparse:0+2288@1808;",
		"dir/sparse:2288+1808@0;dir/sparse:5368709120+2288@1808;",
		"dir/sparse:5368711408+4096@0;",
		"dir/sparse:5368715504+1808@0;",
	};
	SbManifest *m = sample_manifest();
	SbManifest *back = NULL;
	SbManifest *loaded = NULL;
	SbError		err;
	char	   *json = NULL;
	char	   *json2 = NULL;
	char	   *json3 = NULL;
	char		dir[PATH_MAX];
	char		path[PATH_MAX];
	char		text[512];
	size_t		i;
	bool		same;

	ok(sb_manifest_index(m, &err), "the sample manifest is consistent");
	json = sb_manifest_to_json(m, &err);
	ok(json != NULL, "to_json succeeds");
	if (json == NULL)
	{
		th_diag_error("to_json", &err);
		sb_manifest_free(m);
		return;
	}
	ok(valid_utf8(json), "the JSON text is valid UTF-8");
	like(json, "\"encoded_path\":\"636166e9\"", "a Latin-1 name is written as hex");
	like(json, "\"encoded_path\":\"6469722f0163746c\"", "a control character is written as hex");
	like(json, "\"encoded_target\":\"2ffeff2f746172676574\"", "a link target is written as hex");
	like(json, "\"path\":\"dir/\xe2\x82\xac-euro\"", "valid UTF-8 stays plain");
	like(json, "\"path\":\"dir/smile-\xf0\x9f\x98\x80\"", "a 4-byte UTF-8 sequence stays plain");
	like(json, "\"path\":\"dir/quote\\\"back\\\\slash\"", "quotes and backslashes are escaped");
	like(json, "\"encoded_path\":\"6469722f6f7665726c6f6e672dc0af\"",
		 "an overlong UTF-8 form is written as hex");
	like(json, "\"encoded_path\":\"6469722f737572726f676174652deda080\"",
		 "a UTF-16 surrogate is written as hex");
	like(json, "\"encoded_destination\":\"2f6d6e742f636166e92d736c6f77\"",
		 "a destination that is not UTF-8 is written as hex");
	like(json, "\"format_version\":\"3.0\"", "format version 3.0");
	like(json, "9007199254740991", "2^53 - 1 is written exactly");
	like(json, "\"timeline_interval\":0.1,\"timeline\":[", "a timeline follows its interval, in seconds");

	back = sb_manifest_from_json(json, strlen(json), &err);
	if (!ok(back != NULL, "from_json takes it back"))
	{
		th_diag_error("from_json", &err);
		free(json);
		sb_manifest_free(m);
		return;
	}
	ok(back->version_major == 3 && back->version_minor == 0 && back->type == SB_BACKUP_FULL &&
	   memcmp(back->uuid, m->uuid, 16) == 0 && str_eq(back->name, m->name) &&
	   str_eq(back->label, m->label) && str_eq(back->tool, m->tool) &&
	   str_eq(back->started_at, m->started_at) && str_eq(back->finished_at, m->finished_at) &&
	   back->chunk_size == m->chunk_size && back->codec == m->codec &&
	   back->level == m->level && back->balance == m->balance &&
	   back->stream_bytes == m->stream_bytes && back->stored_bytes == m->stored_bytes &&
	   back->total_chunks == m->total_chunks, "header fields survive");
	like(back->metadata_json, "\"start_lsn\":\"0/2000028\"", "metadata survives");
	is_int(back->nentries, m->nentries, "entry count survives");
	same = back->nentries == m->nentries;
	for (i = 0; same && i < m->nentries; i++)
		if (!entries_equal(&m->entries[i], &back->entries[i]))
		{
			diag("entry %zu (\"%s\") differs", i, m->entries[i].path);
			same = false;
		}
	ok(same, "every entry survives, byte for byte");
	ok(back->nstripes == 2 && stripes_equal(&m->stripes[0], &back->stripes[0]) &&
	   stripes_equal(&m->stripes[1], &back->stripes[1]), "stripes survive");
	ok(back->chunk_map != NULL && sb_manifest_chunk_stripe(back, 0) == 0 &&
	   sb_manifest_chunk_stripe(back, 1) == 0 && sb_manifest_chunk_stripe(back, 2) == 1 &&
	   sb_manifest_chunk_stripe(back, 3) == 1 && sb_manifest_chunk_stripe(back, 4) == 0 &&
	   sb_manifest_chunk_stripe(back, 5) == 0 && sb_manifest_chunk_stripe(back, 6) == UINT32_MAX,
	   "the chunk to stripe map is built");
	json2 = sb_manifest_to_json(back, &err);
	ok(json2 != NULL && strcmp(json, json2) == 0, "written again, the JSON is identical");

	/* The chunk to file mapping, sparse extents included. */
	for (i = 0; i < 6; i++)
	{
		pieces_text(back, i, text, sizeof(text));
		if (!ok(strcmp(text, expected_pieces[i]) == 0, "chunk %zu holds the expected pieces", i))
			diag("got %s", text);
	}
	is_int(sb_manifest_chunk_length(back, 5), 22288 - 5 * 4096, "the last chunk is short");
	sb_manifest_describe_chunk(back, 3, text, sizeof(text));
	like(text, "\"dir/sparse\" bytes 2288-4095", "describe_chunk names files and bytes");
	sb_manifest_describe_chunk(back, 3, text, 12);
	ok(strlen(text) < 12, "describe_chunk respects a small buffer");

	/* Written to a folder and loaded back. */
	th_tempdir(dir, "manifest");
	ok(sb_manifest_write(back, dir, &err), "manifest written to a folder");
	loaded = sb_manifest_load(dir, &err);
	json3 = loaded ? sb_manifest_to_json(loaded, &err) : NULL;
	ok(json3 != NULL && strcmp(json, json3) == 0, "loaded back, it is the same");
	ok(!th_exists(th_path(path, "%s/manifest.json.tmp", dir)), "no temporary file is left");
	th_rmtree(dir);
	ok(sb_manifest_load(dir, &err) == NULL && err.code == SB_ENOTFOUND,
	   "loading from a folder without a manifest says not found");

	free(json);
	free(json2);
	free(json3);
	sb_manifest_free(back);
	sb_manifest_free(loaded);

	/* A label that is not UTF-8, and no label at all. */
	free(m->label);
	m->label = strdup("Montr\xe9" "al nightly");
	json = sb_manifest_to_json(m, &err);
	back = json ? sb_manifest_from_json(json, strlen(json), &err) : NULL;
	ok(json != NULL && valid_utf8(json) && back != NULL && str_eq(back->label, m->label),
	   "a label that is not UTF-8 survives, in valid UTF-8 JSON");
	free(json);
	sb_manifest_free(back);
	free(m->label);
	m->label = NULL;
	json = sb_manifest_to_json(m, &err);
	back = json ? sb_manifest_from_json(json, strlen(json), &err) : NULL;
	ok(back != NULL && back->label == NULL, "no label stays no label");
	free(json);
	sb_manifest_free(back);

	/* Integers JSON cannot hold exactly are refused, not rounded. */
	m->entries[5].size = (UINT64_C(1) << 53) + 1;
	json = sb_manifest_to_json(m, &err);
	ok(json == NULL && err.code == SB_EINVAL, "a size of 2^53 + 1 cannot be written");
	if (json == NULL)
		like(err.message, "\"size\"", "the error names the field");
	free(json);
	m->entries[5].size = (UINT64_C(1) << 53) - 1;
	m->entries[1].mtime = -(INT64_C(1) << 53) - 1;
	json = sb_manifest_to_json(m, &err);
	ok(json == NULL && err.code == SB_EINVAL, "an mtime of -(2^53 + 1) cannot be written");
	free(json);
	m->entries[1].mtime = -(INT64_C(1) << 53);
	json = sb_manifest_to_json(m, &err);
	back = json ? sb_manifest_from_json(json, strlen(json), &err) : NULL;
	ok(back != NULL && back->entries[1].mtime == -(INT64_C(1) << 53),
	   "an mtime of -2^53 survives");
	free(json);
	sb_manifest_free(back);
	sb_manifest_free(m);
}

/* Serialize M, parse it back, and expect a refusal saying WANT. */
/* JSON read from a file as KEEP says (SB_KEEP_STREAMED: its entries spooled in a temporary folder). */
static SbManifest *
read_json_file(const char *json, SbEntryKeep keep, SbError *err)
{
	char		dir[PATH_MAX];
	char		path[PATH_MAX];
	SbManifest *back = NULL;

	th_tempdir(dir, "read-json");
	if (th_write_file(th_path(path, "%s/manifest.json", dir), json, strlen(json), 0600))
		back = sb_manifest_read_path(path, NULL, NULL, keep, dir, err);
	th_rmtree(dir);
	return back;
}

/* M is refused when read, whole and streamed (entry by entry, into a spool), with the same error. */
static void
expect_refused(SbManifest *m, SbErrorCode code, const char *want, const char *what)
{
	SbError		err;
	char	   *json = sb_manifest_to_json(m, &err);
	SbManifest *back = json ? sb_manifest_from_json(json, strlen(json), &err) : NULL;
	SbManifest *streamed;

	ok(json != NULL && back == NULL, "%s: refused", what);
	if (json != NULL && back == NULL)
	{
		is_int(err.code, code, "%s: error code %s", what, sb_error_code_name(code));
		like(err.message, want, "%s: message says %s", what, want);
	}
	streamed = json ? read_json_file(json, SB_KEEP_STREAMED, &err) : NULL;
	ok(json != NULL && streamed == NULL && err.code == code && strstr(err.message, want) != NULL,
	   "%s: refused read streamed too", what);
	free(json);
	sb_manifest_free(back);
	sb_manifest_free(streamed);
	sb_manifest_free(m);
}

/* The sample's JSON with FROM replaced by TO, read back; *FOUND: FROM was there. */
static SbManifest *
read_edited_sample(const char *from, const char *to, bool *found, SbError *err)
{
	SbManifest *m = sample_manifest();
	char	   *json = sb_manifest_to_json(m, err);
	char	   *hit = json ? strstr(json, from) : NULL;
	SbManifest *back = NULL;

	*found = hit != NULL;
	if (hit != NULL)
	{
		size_t		head = (size_t) (hit - json);
		char	   *edited = malloc(strlen(json) + strlen(to) + 1);

		memcpy(edited, json, head);
		strcpy(edited + head, to);
		strcat(edited, hit + strlen(from));
		back = sb_manifest_from_json(edited, strlen(edited), err);
		free(edited);
	}
	free(json);
	sb_manifest_free(m);
	return back;
}

/* Replace FROM by TO in the sample's JSON and expect a refusal saying WANT. */
static void
expect_text_refused(const char *from, const char *to, SbErrorCode code, const char *want,
					const char *what)
{
	SbError		err;
	bool		found;
	SbManifest *back = read_edited_sample(from, to, &found, &err);

	ok(found && back == NULL, "%s: refused", what);
	if (found && back == NULL)
	{
		is_int(err.code, code, "%s: error code %s", what, sb_error_code_name(code));
		like(err.message, want, "%s: message says %s", what, want);
	}
	sb_manifest_free(back);
}

/* Inconsistent or hostile manifests are refused, with the reason. */
void
test_manifest_rejects(void)
{
	static const struct
	{
		const char *path;
		bool		root;
		bool		safe;
	}			paths[] = {
		{"a", false, true}, {"a/b/c", false, true}, {".hidden", false, true},
		{"a..b", false, true}, {"...", false, true}, {"a/.b", false, true},
		{".", true, true}, {".", false, false}, {"", false, false}, {"/", false, false},
		{"/a", false, false}, {"a/", false, false}, {"a//b", false, false},
		{"..", false, false}, {"a/.", false, false}, {"a/./b", false, false},
		{"../a", false, false}, {"a/..", false, false}, {"a/../b", false, false},
		{"./a", true, false},
	};
	static const char *const bad_links[] = {"link", "pg_tblspc/16x", "pg_tblspc/12345678901",
	"pg_tblspc/1/2", "base/pg_tblspc/1"};
	SbManifest *m;
	SbError		err;
	char	   *json;
	char	   *longpath;
	size_t		i,
				len;
	int			accepted = 0;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		ok(sb_path_is_safe(paths[i].path, paths[i].root) == paths[i].safe,
		   "path \"%s\"%s is %s", paths[i].path, paths[i].root ? " (root allowed)" : "",
		   paths[i].safe ? "safe" : "unsafe");
	longpath = malloc(5000);
	memset(longpath, 'a', 4999);
	longpath[4999] = '\0';
	ok(!sb_path_is_safe(longpath, false), "a path of 4999 bytes is refused");
	free(longpath);

	/* add_entry refuses what is unsafe. */
	m = sb_manifest_new();
	{
		SbEntry		e;

		memset(&e, 0, sizeof(e));
		e.path = "../x";
		e.type = SB_ENTRY_FILE;
		ok(!sb_manifest_add_entry(m, &e, &err) && err.code == SB_EINVAL && m->nentries == 0,
		   "add_entry refuses ../x");
		e.path = "/etc/passwd";
		ok(!sb_manifest_add_entry(m, &e, &err) && err.code == SB_EINVAL && m->nentries == 0,
		   "add_entry refuses /etc/passwd");
	}
	sb_manifest_free(m);

	/* Not JSON, or cut anywhere. */
	ok(sb_manifest_from_json("not json", 8, &err) == NULL && err.code == SB_ECORRUPT,
	   "text that is not JSON is refused as corrupt");
	ok(sb_manifest_from_json("[1,2]", 5, &err) == NULL && err.code == SB_ECORRUPT,
	   "a JSON array is refused as corrupt");
	m = sample_manifest();
	json = sb_manifest_to_json(m, &err);
	sb_manifest_free(m);
	len = json ? strlen(json) : 0;
	for (i = 0; i < len; i++)
	{
		SbManifest *cut = sb_manifest_from_json(json, i, &err);

		if (cut != NULL || err.code == SB_OK)
			accepted++;
		sb_manifest_free(cut);
	}
	is_int(accepted, 0, "every one of the %zu truncations of the manifest is refused", len);
	free(json);

	/* Structure that does not add up. */
	m = sample_manifest();
	m->stripes[1].ranges[0].first = 1;
	m->stripes[1].chunks = 3;
	expect_refused(m, SB_ECORRUPT, "is in stripes 1 and 2", "a chunk in two stripes");
	m = sample_manifest();
	m->stripes[1].ranges[0].last = 2;
	m->stripes[1].chunks = 1;
	expect_refused(m, SB_ECORRUPT, "chunk 3 is in no stripe", "a chunk in no stripe");
	m = sample_manifest();
	m->stripes[0].chunks = 5;
	expect_refused(m, SB_ECORRUPT, "stripe 1 lists 4 chunks", "a stripe count that is wrong");
	m = sample_manifest();
	m->total_chunks = 7;
	expect_refused(m, SB_ECORRUPT, "7 chunks listed", "a chunk total that is wrong");
	m = sample_manifest();
	m->stream_bytes = 22289;
	expect_refused(m, SB_ECORRUPT, "header says 22289", "a stream size that is wrong");
	m = sample_manifest();
	m->entries[4].stream_offset = 10001;
	expect_refused(m, SB_ECORRUPT, "starts at stream offset 10001", "a gap in the stream");
	m = sample_manifest();
	m->entries[4].extents[1].offset = 100;
	expect_refused(m, SB_ECORRUPT, "bad extent 1", "overlapping extents");
	m = sample_manifest();
	m->entries[4].extents[1].offset = 6 * GiB - 4096;
	expect_refused(m, SB_ECORRUPT, "bad extent 1", "an extent past the end of the file");
	m = sample_manifest();
	m->entries[4].stream_length = 12289;
	m->entries[4].extents[1].length = 8193;
	m->entries[4].stream_length = 12288;
	expect_refused(m, SB_ECORRUPT, "extents of \"dir/sparse\" hold", "extents that do not add up");
	m = sample_manifest();
	/* A manifest's strings are in its arena and never freed one by one: a literal will do. */
	m->entries[6].path = (char *) "dir/sparse";
	expect_refused(m, SB_ECORRUPT, "listed twice", "a path listed twice");
	m = sample_manifest();
	m->entries[6].path = (char *) "caf\xe9/under-a-file";
	expect_refused(m, SB_ECORRUPT, "not a directory", "a path under a file");
	m = sample_manifest();
	m->entries[6].path = (char *) "caf\xe9/not-listed/under-a-file";
	expect_refused(m, SB_ECORRUPT, "not a directory", "a path under a folder not listed, under a file");
	m = sample_manifest();
	m->entries[6].path = (char *) "pg_tblspc/16386/x";
	expect_refused(m, SB_ECORRUPT, "not a directory", "a path under a link");
	m = sample_manifest();
	m->stripes[1].number = 3;
	expect_refused(m, SB_ECORRUPT, "listed as number 3", "a stripe numbered wrong");
	m = sample_manifest();
	m->chunk_size = 1000;
	expect_refused(m, SB_ECORRUPT, "chunk size 1000", "a chunk size out of range");

	/* Only what a data directory holds. */
	m = sample_manifest();
	m->entries[1].mode = 06777;
	expect_refused(m, SB_ECORRUPT, "has mode 6777", "a setuid, setgid, world-writable file");
	m = sample_manifest();
	m->entries[2].mode = 0775;
	expect_refused(m, SB_ECORRUPT, "nothing beyond 0755", "a group-writable directory");
	m = sample_manifest();
	m->entries[2].mode = 01700;
	expect_refused(m, SB_ECORRUPT, "has mode 1700", "a sticky directory");
	for (i = 0; i < sizeof(bad_links) / sizeof(bad_links[0]); i++)
	{
		char		what[64];

		snprintf(what, sizeof(what), "a symlink at \"%s\"", bad_links[i]);
		m = sample_manifest();
		m->entries[13].path = (char *) bad_links[i];
		expect_refused(m, SB_ECORRUPT, "links only at pg_tblspc/<oid>", what);
	}
	m = sample_manifest();
	m->entries[13].link_target = (char *) "../../etc";
	expect_refused(m, SB_ECORRUPT, "to an absolute path", "a tablespace link to a relative path");
	m = sample_manifest();
	m->entries[13].mode = 0755;
	expect_refused(m, SB_ECORRUPT, "has mode 0755, not 0777", "a symlink with a mode of its own");
	m = sample_manifest();
	m->stripes[1].raw_bytes++;
	expect_refused(m, SB_ECORRUPT, "stripe 2 says it holds 8193 bytes of data, its chunks hold 8192",
				   "a stripe claiming a byte more than its chunks");
	m = sample_manifest();
	m->stripes[0].stored_bytes = m->stripes[0].raw_bytes + 1;
	expect_refused(m, SB_ECORRUPT, "stripe 1 stores", "a stripe storing more than its data");
	m = sample_manifest();
	m->codec = SB_CODEC_NONE;
	expect_refused(m, SB_ECORRUPT, "stripe 1 stores", "an uncompressed stripe storing less than its data");
	m = sample_manifest();
	m->stripes[1].file_bytes++;
	expect_refused(m, SB_ECORRUPT, "stripe 2 is", "a stripe file a byte longer than its chunks make");
	m = sample_manifest();
	m->stored_bytes++;
	expect_refused(m, SB_ECORRUPT, "the stripes hold", "stored bytes that do not add up");
	m = sample_manifest();
	m->stripes[0].file_bytes = 64;
	m->stripes[0].stored_bytes = 0;
	expect_refused(m, SB_ECORRUPT, "stripe 1", "a stripe shorter than a header and a trailer");
	expect_text_refused("\"mode\":\"0644\"", "\"mode\":\"6777\"", SB_ECORRUPT, "has mode 6777",
						"a setuid mode in the JSON");

	/* Timelines a chart can be drawn from. */
	m = sample_manifest();
	m->stripes[0].timeline_interval = 0;
	expect_refused(m, SB_ECORRUPT, "stripe 1 has a timeline interval of 0 seconds", "a timeline interval of 0");
	m = sample_manifest();
	m->stripes[1].timeline_interval = -0.1;
	expect_refused(m, SB_ECORRUPT, "interval of -0.1 seconds", "a negative timeline interval");
	m = sample_manifest();
	m->stripes[0].timeline_interval = 2e6;
	expect_refused(m, SB_ECORRUPT, "at most 1e+06", "a timeline interval of 23 days");
	m = sample_manifest();
	free(m->stripes[0].timeline);
	m->stripes[0].timeline = calloc(SB_TIMELINE_MAX_FIGURES + 1, sizeof(uint64_t));
	m->stripes[0].ntimeline = SB_TIMELINE_MAX_FIGURES + 1;
	m->stripes[0].timeline[SB_TIMELINE_MAX_FIGURES] = m->stripes[0].stored_bytes;
	expect_refused(m, SB_ECORRUPT, "a timeline of 513 figures (at most 512)", "a timeline too long");
	m = sample_manifest();
	m->stripes[0].timeline[1] = m->stripes[0].timeline[0] - 1;
	expect_refused(m, SB_ECORRUPT, "timeline of stripe 1 goes back at figure 2", "a timeline going back");
	m = sample_manifest();
	m->stripes[1].timeline[0]--;
	expect_refused(m, SB_ECORRUPT, "timeline of stripe 2 ends at", "a timeline that does not end at the total");
	expect_text_refused("\"timeline_interval\":0.1", "\"timeline_interval\":1e999", SB_ECORRUPT,
						"interval of inf seconds", "an infinite timeline interval");
	expect_text_refused("\"timeline_interval\":0.1,", "", SB_ECORRUPT,
						"lacks a numeric \"timeline_interval\"", "a timeline without its interval");
	expect_text_refused("\"timeline_interval\":0.1", "\"timeline_interval\":\"0.1\"", SB_ECORRUPT,
						"lacks a numeric \"timeline_interval\"", "a timeline interval that is a string");
	expect_text_refused("\"timeline\":[", "\"other\":[", SB_ECORRUPT,
						"no timeline for its \"timeline_interval\"", "an interval without a timeline");
	expect_text_refused("\"timeline\":[", "\"timeline\":[],\"other\":[", SB_ECORRUPT,
						"empty array \"timeline\"", "an empty timeline");
	expect_text_refused("\"timeline\":[", "\"timeline\":[1e3,", SB_ECORRUPT,
						"\"timeline\" holds \"1e3\"", "a timeline figure written 1e3");
	expect_text_refused("\"timeline\":[", "\"timeline\":[\"1\",", SB_ECORRUPT,
						"bad number in \"timeline\"", "a timeline figure that is a string");

	/* Text that does not parse into a manifest. */
	expect_text_refused("\"format\":\"stripebackup\"", "\"format\":\"other\"", SB_ECORRUPT,
						"not a stripebackup manifest", "another format");
	expect_text_refused("\"format_version\":\"3.0\"", "\"format_version\":\"1.0\"", SB_EVERSION,
						"version 1.0 (this program reads 2.x to 3.x)", "format version 1.0, before authentication");
	expect_text_refused("\"format_version\":\"3.0\"", "\"format_version\":\"4.1\"", SB_EVERSION,
						"version 4.1", "format version 4.1");
	expect_text_refused("\"backup_type\":\"full\"", "\"backup_type\":\"incr\"", SB_ECORRUPT,
						"must name a parent", "an incremental backup without its parent");
	expect_text_refused("\"backup_type\":\"full\"", "\"backup_type\":\"weekly\"", SB_ECORRUPT,
						"unknown backup_type", "an unknown backup type");
	expect_text_refused("\"stream_offset\"", "\"incremental\":true,\"stream_offset\"",
						SB_ECORRUPT, "incremental", "a file of changed blocks in a full backup");
	expect_text_refused("\"stream_offset\"", "\"file_id\":\"12/34\",\"stream_offset\"",
						SB_ECORRUPT, "file_id", "a file identity that is not digits");
	expect_text_refused("\"format_version\":\"3.0\"", "\"format_version\":\"one\"", SB_ECORRUPT,
						"format_version", "a format version that is not a number");
	expect_text_refused("\"type\":\"file\"", "\"type\":\"fifo\"", SB_ECORRUPT, "unknown type",
						"an unknown entry type");
	expect_text_refused("\"mode\":\"0644\"", "\"mode\":\"99999\"", SB_ECORRUPT, "bad mode",
						"a mode that is not octal");
	expect_text_refused("\"chunk_size\":4096", "\"chunk_size\":-4096", SB_ECORRUPT,
						"chunk_size", "a negative chunk size");
	expect_text_refused("\"chunk_size\":4096", "\"chunk_size\":4096.5", SB_ECORRUPT,
						"chunk_size", "a fractional chunk size");
	expect_text_refused("\"size\":10000", "\"size\":\"10000\"", SB_ECORRUPT, "size",
						"a size that is a string");
	expect_text_refused("\"crc32c\":", "\"crc\":", SB_ECORRUPT, "crc32c", "a missing crc32c");
	expect_text_refused("\"codec\":\"zstd\"", "\"codec\":\"lz4\"", SB_ECORRUPT, "unknown codec",
						"an unknown codec");
	expect_text_refused("\"balance\":\"adaptive\"", "\"balance\":\"random\"", SB_ECORRUPT,
						"unknown balance", "an unknown balance");
	expect_text_refused("\"encoded_path\":\"636166e9\"", "\"encoded_path\":\"636166e\"",
						SB_ECORRUPT, "bad hex", "odd-length hex");
	expect_text_refused("\"encoded_path\":\"636166e9\"", "\"encoded_path\":\"6361660065\"",
						SB_ECORRUPT, "bad hex", "hex holding a NUL byte");
	expect_text_refused("\"file\":\"stripe-2.sbs\"", "\"file\":\"../stripe-2.sbs\"",
						SB_ECORRUPT, "unsafe stripe file name", "a stripe file outside its folder");
	expect_text_refused("\"chunk_ranges\":[[2,3]]", "\"chunk_ranges\":[[2]]", SB_ECORRUPT,
						"bad pair", "a chunk range that is not a pair");
	expect_text_refused("\"backup_uuid\":\"", "\"backup_uuid\":\"zz", SB_ECORRUPT,
						"backup_uuid", "a bad backup id");
	/* Found by fuzzing: an infinity would be written back as null, unreadable. */
	expect_text_refused("\"weight\":2.5", "\"weight\":1e999", SB_ECORRUPT,
						"\"weight\"", "an infinite stripe weight");
	expect_text_refused("\"weight\":2.5,", "\"weight\":2.5,\"seconds\":-1e999,", SB_ECORRUPT,
						"\"seconds\"", "an infinite writing time");
}

/* Replace FROM by TO in the sample's JSON and expect it still read. */
static void
expect_text_accepted(const char *from, const char *to, const char *what)
{
	SbError		err;
	bool		found;
	SbManifest *back = read_edited_sample(from, to, &found, &err);

	if (!ok(back != NULL, "%s: accepted", what) && found)
		th_diag_error("from_json", &err);
	sb_manifest_free(back);
}

/* The sample's JSON followed by TAIL: read only when ACCEPTED. */
static void
expect_tail(const char *tail, bool accepted, const char *what)
{
	SbError		err;
	SbManifest *m = sample_manifest();
	char	   *json = sb_manifest_to_json(m, &err);
	char	   *text = json ? malloc(strlen(json) + strlen(tail) + 1) : NULL;
	SbManifest *back = NULL;

	if (text != NULL)
	{
		strcpy(text, json);
		strcat(text, tail);
		back = sb_manifest_from_json(text, strlen(text), &err);
	}
	ok(text != NULL && (back != NULL) == accepted, "%s: %s", what, accepted ? "accepted" : "refused");
	free(text);
	free(json);
	sb_manifest_free(back);
	sb_manifest_free(m);
}

/* Hex, integers, modes and versions are read only as the writer writes them. */
void
test_manifest_strict_text(void)
{
	static const struct
	{
		const char *from;
		const char *to;
		const char *want;
		const char *what;
	}			cases[] = {
		{"\"backup_uuid\":\"01", "\"backup_uuid\":\" 1", "backup_uuid", "a uuid with a space"},
		{"\"backup_uuid\":\"01", "\"backup_uuid\":\"+1", "backup_uuid", "a uuid with a sign"},
		{"\"backup_uuid\":\"01", "\"backup_uuid\":\"0x", "backup_uuid", "a uuid with 0x"},
		{"\"backup_uuid\":\"0112", "\"backup_uuid\":\"0A12", "backup_uuid", "a uuid in capitals"},
		{"\"backup_uuid\":\"01", "\"backup_uuid\":\"1", "backup_uuid", "a uuid of 31 digits"},
		{"\"crc32c\":\"c0ffee01\"", "\"crc32c\":\"-1\"", "crc32c", "a crc32c of -1"},
		{"\"crc32c\":\"c0ffee01\"", "\"crc32c\":\"ffffffff-1\"", "crc32c", "a crc32c with a tail"},
		{"\"crc32c\":\"c0ffee01\"", "\"crc32c\":\"C0FFEE01\"", "crc32c", "a crc32c in capitals"},
		{"\"crc32c\":\"c0ffee01\"", "\"crc32c\":\"0xffee01\"", "crc32c", "a crc32c with 0x"},
		{"\"crc32c\":\"c0ffee01\"", "\"crc32c\":\" 0ffee01\"", "crc32c", "a crc32c with a space"},
		{"\"crc32c\":\"c0ffee01\"", "\"crc32c\":\"c0ffee1\"", "crc32c", "a crc32c of 7 digits"},
		{"\"encoded_path\":\"636166e9\"", "\"encoded_path\":\"636166E9\"", "bad hex",
		"an encoded path in capitals"},
		{"\"encoded_path\":\"636166e9\"", "\"encoded_path\":\"+36166e9\"", "bad hex",
		"an encoded path with a sign"},
		{"\"encoded_path\":\"636166e9\"", "\"encoded_path\":\"6361 6e9\"", "bad hex",
		"an encoded path with a space"},
		{"\"chunk_size\":4096", "\"chunk_size\":4096.0", "\"chunk_size\" holds \"4096.0\"",
		"a chunk size written 4096.0"},
		{"\"chunk_size\":4096", "\"chunk_size\":4.096e3", "chunk_size", "a chunk size written 4.096e3"},
		{"\"chunk_size\":4096", "\"chunk_size\":04096", "chunk_size", "a chunk size with a leading zero"},
		{"\"size\":10000", "\"size\":1e4", "\"size\"", "a size written 1e4"},
		{"\"stream_offset\":0", "\"stream_offset\":-0", "stream_offset", "a stream offset of -0"},
		{"\"chunk_ranges\":[[2,3]]", "\"chunk_ranges\":[[2.0,3]]", "chunk_ranges",
		"a chunk range written 2.0"},
		{"\"mtime\":1700000000", "\"mtime\":1.7e9", "\"mtime\"", "an mtime written 1.7e9"},
		{"\"mtime\":1700000000", "\"mtime\":+1700000000", NULL, "an mtime with a plus sign"},
		{"\"level\":-5", "\"level\":-5.0", "\"level\"", "a zstd level written -5.0"},
		{"\"mode\":\"0644\"", "\"mode\":\"644\"", "bad mode", "a mode of three digits"},
		{"\"mode\":\"0644\"", "\"mode\":\" 644\"", "bad mode", "a mode with a space"},
		{"\"mode\":\"0644\"", "\"mode\":\"+644\"", "bad mode", "a mode with a sign"},
		{"\"mode\":\"0644\"", "\"mode\":\"0x1a\"", "bad mode", "a mode in hex"},
		{"\"format_version\":\"3.0\"", "\"format_version\":\" 3.0\"", "format_version",
		"a format version with a space"},
		{"\"format_version\":\"3.0\"", "\"format_version\":\"+3.0\"", "format_version",
		"a format version with a sign"},
		{"\"format_version\":\"3.0\"", "\"format_version\":\"3.0beta\"", "format_version",
		"a format version with a tail"},
		/* The entries are read one at a time (not as one cJSON tree); what they sit in, strictly. */
		{"\"entries\":[", "\"entries\":[],\"entries\":[", "given twice: \"entries\"",
		"the entries twice"},
		{"\"entries\":[", "\"entries\":5,\"entries\":[", "given twice: \"entries\"",
		"a number, then the entries"},
		{"\"stripes\":", "\"str\\u0069pes\":", "written with escapes", "an escaped top-level key"},
		{"\"entries\":[", "\"entries\":[5,", "bad item in \"entries\"", "a number among the entries"},
		{"},{\"path\":\"dir\"", "} {\"path\":\"dir\"", "not valid JSON", "entries without a comma"},
		{"},{\"path\":\"dir\"", "},,{\"path\":\"dir\"", "bad item in", "two commas between entries"},
		{"\"type\":\"dir\"", "\"type\":\"dir\"]", "not valid JSON", "a bracket inside an entry"},
		{"\"entries\":[", "\"entries\":", "valid JSON", "the entries without their bracket"},
	};
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_text_refused(cases[i].from, cases[i].to, SB_ECORRUPT,
							cases[i].want ? cases[i].want : "", cases[i].what);
	expect_tail("\n", true, "a newline after the object (as written)");
	expect_tail(" \r\n\t", true, "white space after the object");
	expect_tail("\nx", false, "text after the object");
	expect_tail("{}", false, "a second object after it");
	expect_text_accepted("\"format\":\"stripebackup\",",
						 "\"format\":\"stripebackup\",\"later_minor_key\":[1.5,-2e3],",
						 "an unknown key with fractions and exponents");
	expect_text_accepted("\"start_lsn\"", "\"x\":1e3,\"chunk_size\":-1.5,\"start_lsn\"",
						 "metadata with any numbers, even under the format's own key names");
	expect_text_accepted("\"mtime\":1700000000", "\"mtime\":-1700000000", "a negative mtime");
}

/* A NUL-terminated text, all of it at once. */
static ssize_t
read_memory_text(void *arg, char *buf, size_t len, SbError *err)
{
	const char **text = arg;
	size_t		n = strlen(*text);

	(void) err;
	n = n < len ? n : len;
	memcpy(buf, *text, n);
	*text += n;
	return (ssize_t) n;
}

/*
 * A manifest can claim far more chunks than any file holds (a 4 TiB file in
 * one range of a billion 4 kB chunks, in a few hundred bytes of JSON).  Reading
 * and planning it must cost memory and time by its ranges, not its chunks.
 */
void
test_manifest_huge_claims(void)
{
	SbManifest *m = sb_manifest_new();
	SbManifest *back;
	SbChunkRange r1[] = {{0, (UINT64_C(1) << 30) - 2}};
	SbChunkRange r2[] = {{(UINT64_C(1) << 30) - 1, (UINT64_C(1) << 30) - 1}};
	SbArchive	a;
	SbPlan		plan;
	SbError		err;
	char	   *text;
	const char *cursor;
	double		t0 = th_now();

	m->name = strdup("huge");
	m->chunk_size = 4096;
	m->codec = SB_CODEC_NONE;
	add(m, ".", SB_ENTRY_DIR, 0700, 1, 0, 0, 0, NULL, 0, false, NULL);
	add(m, "big", SB_ENTRY_FILE, 0600, 1, UINT64_C(1) << 42, 0, UINT64_C(1) << 42, NULL, 0,
		false, NULL);
	m->stream_bytes = UINT64_C(1) << 42;
	m->total_chunks = UINT64_C(1) << 30;
	m->stripes = calloc(2, sizeof(SbStripeInfo));
	m->nstripes = 2;
	set_stripe(&m->stripes[0], 1, "/a", 1, r1, 1);
	set_stripe(&m->stripes[1], 2, "/b", 1, r2, 1);
	set_stripe_bytes(m);
	text = sb_manifest_to_json(m, &err);
	back = text ? sb_manifest_from_json(text, strlen(text), &err) : NULL;
	ok(back != NULL && back->nchunk_map == 2, "a manifest claiming a billion chunks is read by its 2 ranges");
	ok(back != NULL && sb_manifest_chunk_stripe(back, (UINT64_C(1) << 30) - 1) == 1 &&
	   sb_manifest_chunk_stripe(back, 12345) == 0, "chunks are found in their ranges");
	memset(&a, 0, sizeof(a));
	a.manifest = back;
	a.stripe_paths[0] = "/nonexistent/huge/stripe-1.sbs";
	a.stripe_paths[1] = "/nonexistent/huge/stripe-2.sbs";
	ok(back != NULL && sb_archive_plan(&a, &plan, &err) && plan.stripes[0].files == 1 &&
	   plan.stripes[1].files == 1, "its plan counts the one file in each stripe");
	sb_manifest_free(back);
	cursor = text;
	back = text ? sb_manifest_tally_stream(read_memory_text, &cursor, &err) : NULL;
	a.manifest = back;
	ok(back != NULL && back->tally != NULL && sb_archive_plan(&a, &plan, &err) &&
	   plan.stripes[0].files == 1 && plan.stripes[1].files == 1,
	   "read to plan only, the same: its file spans the billion chunks by their 2 ranges");
	sb_manifest_free(back);
	back = text ? sb_manifest_head_json(text, strlen(text), &err) : NULL;
	ok(back != NULL && back->head_only && back->nentries == 0 && back->nchunk_map == 2 &&
	   back->total_chunks == UINT64_C(1) << 30, "read for its members alone: the same ranges, no entry");
	ok(th_now() - t0 < 5.0, "all of it in moments (%.2f s)", th_now() - t0);
	free(text);
	sb_manifest_free(back);
	sb_manifest_free(m);
}


/* What sb_manifest_emit hands over, gathered, and its largest block. */
typedef struct Gathered
{
	char	   *text;
	size_t		len;
	size_t		blocks;
	size_t		largest;
} Gathered;

static bool
gather(void *arg, const char *text, size_t len, SbError *err)
{
	Gathered   *g = arg;

	(void) err;
	g->text = realloc(g->text, g->len + len);
	memcpy(g->text + g->len, text, len);
	g->len += len;
	g->blocks++;
	g->largest = len > g->largest ? len : g->largest;
	return true;
}

static bool
refuse_second_block(void *arg, const char *text, size_t len, SbError *err)
{
	Gathered   *g = arg;

	if (g->blocks == 1)
		return sb_error_set(err, SB_ENOSPC, "no room for a second block");
	return gather(arg, text, len, err);
}

/* BYTES read back in pieces of PIECE bytes: the manifest, its length and SHA-256 as read whole. */
static void
expect_read_in_pieces(const char *bytes, size_t len, size_t piece, const SbManifest *whole)
{
	ThPieces		p = {bytes, len, 0, piece, 0};
	SbError		err;
	SbManifest *back = sb_manifest_from_stream(th_read_pieces, &p, &err);
	bool		same = back != NULL && back->nentries == whole->nentries &&
		back->json_length == len && memcmp(back->json_sha256, whole->json_sha256, 32) == 0;

	for (size_t i = 0; same && i < whole->nentries; i++)
		same = entries_equal(&back->entries[i], &whole->entries[i]);
	if (back == NULL)
		th_diag_error("stream", &err);
	ok(same, "read %zu bytes at a time: the same %zu entries, length and SHA-256", piece,
	   whole->nentries);
	sb_manifest_free(back);
}

/*
 * A manifest is written and read a block at a time (manifest_stream.c): the
 * same bytes as written whole, read back the same whatever the blocks' size.
 */
void
test_manifest_stream(void)
{
	static const size_t pieces[] = {7, 4096, 65537, (size_t) 1 << 20, (size_t) 3 << 20};
	SbManifest *m = sample_manifest();
	SbManifest *whole;
	Gathered	g = {NULL, 0, 0, 0};
	ThPieces		p;
	SbError		err;
	char	   *bytes;
	size_t		len,
				i;

	for (i = 0; i < 12000; i++)
	{
		char		path[64];

		snprintf(path, sizeof(path), "dir/many-%05zu-with-a-longer-name-than-most", i);
		add(m, path, SB_ENTRY_FILE, 0600, 1700000000 + (int64_t) i, 0, 0, 0, NULL, 0, false, NULL);
	}
	bytes = sb_manifest_serialize(m, &len, &err);
	ok(bytes != NULL && len > ((size_t) 3 << 19), "the manifest's text is %zu bytes", len);
	ok(sb_manifest_emit(m, gather, &g, &err), "emitted");
	ok(g.len == len && memcmp(g.text, bytes, len) == 0,
	   "emitted in %zu blocks: the bytes sb_manifest_serialize writes", g.blocks);
	ok(g.blocks >= 2 && g.largest <= ((size_t) 1 << 20), "no block over a megabyte (largest %zu)",
	   g.largest);
	free(g.text);
	memset(&g, 0, sizeof(g));
	ok(!sb_manifest_emit(m, refuse_second_block, &g, &err) && err.code == SB_ENOSPC,
	   "a sink's failure stops the emission with its error");
	free(g.text);

	whole = sb_manifest_from_json(bytes, len, &err);
	ok(whole != NULL && whole->nentries == m->nentries, "read whole");
	for (i = 0; whole != NULL && i < sizeof(pieces) / sizeof(pieces[0]); i++)
		expect_read_in_pieces(bytes, len, pieces[i], whole);

	p = (ThPieces) {bytes, len, 0, 65536, len / 2};
	ok(sb_manifest_from_stream(th_read_pieces, &p, &err) == NULL && err.code == SB_EIO,
	   "a source failing halfway: no manifest, its error (%s)", err.message);
	p = (ThPieces) {bytes, len - 200, 0, 65536, 0};
	ok(sb_manifest_from_stream(th_read_pieces, &p, &err) == NULL && err.code == SB_ECORRUPT,
	   "a text cut short inside the entries: refused (%s)", err.message);
	sb_manifest_free(whole);
	free(bytes);
	sb_manifest_free(m);

	/* The small sample, a byte at a time: every value split at every place. */
	m = sample_manifest();
	bytes = sb_manifest_serialize(m, &len, &err);
	whole = bytes ? sb_manifest_from_json(bytes, len, &err) : NULL;
	if (whole != NULL)
		expect_read_in_pieces(bytes, len, 1, whole);
	sb_manifest_free(whole);
	free(bytes);
	sb_manifest_free(m);
}

/* The plan of MANIFEST through an archive whose stripes are nowhere. */
static bool
plan_of(SbManifest *manifest, SbPlan *plan)
{
	SbArchive	a;
	SbError		err;

	memset(&a, 0, sizeof(a));
	a.manifest = manifest;
	a.stripe_paths[0] = "/nonexistent/stripe-1.sbs";
	a.stripe_paths[1] = "/nonexistent/stripe-2.sbs";
	return manifest != NULL && sb_archive_plan(&a, plan, &err);
}

static bool
plans_equal(const SbPlan *a, const SbPlan *b)
{
	uint32_t	s;
	bool		same = a->nstripes == b->nstripes && a->files == b->files &&
		a->directories == b->directories && a->symlinks == b->symlinks &&
		a->logical_bytes == b->logical_bytes && a->raw_bytes == b->raw_bytes &&
		a->stored_bytes == b->stored_bytes && a->chunks == b->chunks;

	for (s = 0; same && s < a->nstripes; s++)
		same = a->stripes[s].files == b->stripes[s].files &&
			a->stripes[s].chunks == b->stripes[s].chunks;
	return same;
}

/* TEXT read to plan only, in pieces of 7 bytes. */
static SbManifest *
tally_text(const char *text, size_t len, SbError *err)
{
	ThPieces		p = {text, len, 0, 7, 0};

	return sb_manifest_tally_stream(th_read_pieces, &p, err);
}

/*
 * A manifest read to plan only (manifest_tally.c): its entries counted as
 * they come, none kept, the plan the same as from the whole file table; read
 * whole when its entries come before the layout; damage in what is counted
 * refused.
 */
void
test_manifest_tally(void)
{
	SbManifest *m = sample_manifest();
	SbManifest *whole;
	SbManifest *counted;
	SbPlan		expected,
				plan;
	SbError		err;
	size_t		len;
	char	   *text = sb_manifest_serialize(m, &len, &err);
	char	   *moved;
	const char *entries;
	bool		same;

	whole = text ? sb_manifest_from_json(text, len, &err) : NULL;
	counted = text ? tally_text(text, len, &err) : NULL;
	if (counted == NULL)
		th_diag_error("tally", &err);
	ok(counted != NULL && counted->tally != NULL && counted->nentries == 0 &&
	   counted->tally->layout == NULL, "read to plan: the entries counted, none kept");
	ok(counted != NULL && whole != NULL && counted->json_length == whole->json_length &&
	   memcmp(counted->json_sha256, whole->json_sha256, 32) == 0,
	   "the same length and SHA-256 as read whole (what authentication compares)");
	memset(&plan, 0, sizeof(plan));
	same = plan_of(whole, &expected) && plan_of(counted, &plan) && plans_equal(&plan, &expected);
	ok(same, "its plan is the whole file table's: %llu files, %llu folders, %llu links",
	   (unsigned long long) plan.files, (unsigned long long) plan.directories,
	   (unsigned long long) plan.symlinks);
	ok(plan.files == 10 && plan.directories == 3 && plan.symlinks == 2 &&
	   plan.stripes[0].files == 2 && plan.stripes[1].files == 2,
	   "10 files, 3 folders, 2 links; the two files with data each lie in both stripes");
	sb_manifest_free(counted);

	/* "entries" first (after the version): read whole, the plan the same. */
	entries = strstr(text, ",\"entries\":");
	moved = malloc(len + 1);
	if (entries != NULL && moved != NULL)
	{
		const char *after_version = strstr(text, "\"format_version\":\"3.0\"") +
			strlen("\"format_version\":\"3.0\"");
		const char *entries_end = text + len - 2;	/* "}\n" ends the document */
		size_t		head = (size_t) (after_version - text);
		size_t		between = (size_t) (entries - after_version);
		size_t		list = (size_t) (entries_end - entries);

		memcpy(moved, text, head);
		memcpy(moved + head, entries, list);
		memcpy(moved + head + list, after_version, between);
		memcpy(moved + head + list + between, entries_end, 2);
		moved[len] = '\0';
	}
	counted = moved ? tally_text(moved, len, &err) : NULL;
	if (counted == NULL)
		th_diag_error("entries first", &err);
	ok(counted != NULL && counted->tally == NULL && whole != NULL &&
	   counted->nentries == whole->nentries && plan_of(counted, &plan) &&
	   plans_equal(&plan, &expected),
	   "entries before the stripes: read whole instead, the same plan");
	sb_manifest_free(counted);
	free(moved);
	free(text);
	sb_manifest_free(whole);

	/*
	 * What is counted is checked as the whole table is: data in stream order
	 * end to end, within the stream, filling it.  (What needs every path,
	 * such as each folder of a path being listed, is for verify and restore.)
	 */
	m->entries[1].stream_offset = 1;
	text = sb_manifest_serialize(m, &len, &err);
	counted = text ? tally_text(text, len, &err) : NULL;
	ok(counted == NULL && err.code == SB_ECORRUPT && strstr(err.message, "stream offset 1") != NULL,
	   "a file's data not where the one before it ends: refused (%s)", err.message);
	free(text);
	m->entries[1].stream_offset = 0;
	m->entries[1].size = m->entries[1].stream_length = 5000;
	text = sb_manifest_serialize(m, &len, &err);
	counted = text ? tally_text(text, len, &err) : NULL;
	ok(counted == NULL && err.code == SB_ECORRUPT, "a gap in the stream: refused (%s)",
	   err.message);
	free(text);
	m->entries[1].size = m->entries[1].stream_length = 10000;
	add(m, "zz-past-the-end", SB_ENTRY_FILE, 0600, 1, 100, 22288, 100, NULL, 0, false, NULL);
	text = sb_manifest_serialize(m, &len, &err);
	counted = text ? tally_text(text, len, &err) : NULL;
	ok(counted == NULL && err.code == SB_ECORRUPT && strstr(err.message, "zz-past-the-end") != NULL,
	   "a file's data past the end of the stream: refused, naming it (%s)", err.message);
	free(text);
	sb_manifest_free(m);
}

/*
 * Read streamed (SB_KEEP_STREAMED): no entry in memory, the same entries
 * read back from the spool in order, the same counts and SHA-256.
 */
/* Pieces as text, a line each, for comparing how they were listed. */
typedef struct PieceText
{
	char	   *buf;
	size_t		len;
	size_t		cap;
	size_t		rows;
} PieceText;

static void
piece_text_add(PieceText *t, uint64_t chunk, uint32_t stripe, uint64_t chunk_offset,
			   uint64_t file_offset, uint64_t length, const char *path)
{
	char		line[512];
	int			n = snprintf(line, sizeof(line), "%llu %u %llu %llu %llu %s\n", (unsigned long long) chunk,
							 stripe, (unsigned long long) chunk_offset, (unsigned long long) file_offset,
							 (unsigned long long) length, path);

	if (t->len + (size_t) n + 1 > t->cap)
	{
		t->cap = (t->len + (size_t) n + 1) * 2;
		t->buf = realloc(t->buf, t->cap);
	}
	memcpy(t->buf + t->len, line, (size_t) n + 1);
	t->len += (size_t) n;
	t->rows++;
}

static bool
collect_piece(void *arg, const SbPieceRow *r, SbError *err)
{
	(void) err;
	piece_text_add(arg, r->chunk, r->stripe, r->chunk_offset, r->file_offset, r->length, r->path);
	return true;
}

/* M's pieces as the per-chunk iterator gives them. */
static void
pieces_by_chunk(const SbManifest *m, PieceText *t)
{
	uint64_t	c;

	for (c = 0; c < m->total_chunks; c++)
	{
		SbPieceIter it;
		SbPiece		p;

		sb_piece_iter_init(&it, m, c);
		while (sb_piece_iter_next(&it, &p))
			piece_text_add(t, c, sb_manifest_chunk_stripe(m, c), p.chunk_offset, p.file_offset, p.length,
						   m->entries[p.entry].path);
	}
}

static bool
stop_at_third(void *arg, const SbPieceRow *r, SbError *err)
{
	(void) r;
	if (++*(int *) arg < 3)
		return true;
	return sb_error_set(err, SB_ECANCELED, "enough");
}

/*
 * sb_manifest_each_piece lists the pieces the per-chunk iterator gives,
 * from the table and from the spool alike (a sparse file's extents across
 * chunks among them), and stops when told.
 */
static void
check_each_piece(const SbManifest *whole, const SbManifest *streamed)
{
	PieceText	by_chunk = {0},
				from_table = {0},
				from_spool = {0};
	SbError		err;
	int			seen = 0;

	pieces_by_chunk(whole, &by_chunk);
	ok(sb_manifest_each_piece(whole, collect_piece, &from_table, &err) &&
	   sb_manifest_each_piece(streamed, collect_piece, &from_spool, &err), "every piece listed, both ways");
	ok(by_chunk.rows > whole->total_chunks && from_table.len == by_chunk.len && from_spool.len == by_chunk.len &&
	   memcmp(from_table.buf, by_chunk.buf, by_chunk.len) == 0 &&
	   memcmp(from_spool.buf, by_chunk.buf, by_chunk.len) == 0,
	   "the same %zu pieces of %llu chunks, in the same order, from the table and from the spool",
	   by_chunk.rows, (unsigned long long) whole->total_chunks);
	ok(!sb_manifest_each_piece(streamed, stop_at_third, &seen, &err) && seen == 3 &&
	   err.code == SB_ECANCELED, "the walk stops where its callback does, with its error");
	free(by_chunk.buf);
	free(from_table.buf);
	free(from_spool.buf);
}

void
test_manifest_streamed(void)
{
	SbManifest *m = sample_manifest();
	SbError		err;
	char	   *json = sb_manifest_to_json(m, &err);
	SbManifest *whole = json ? sb_manifest_from_json(json, strlen(json), &err) : NULL;
	SbManifest *streamed = json ? read_json_file(json, SB_KEEP_STREAMED, &err) : NULL;
	SbEntry		e;
	bool		end = false;
	size_t		i = 0,
				same = 0;

	if (streamed == NULL)
		th_diag_error("streamed", &err);
	ok(whole != NULL && streamed != NULL && streamed->streamed != NULL && streamed->nentries == 0 &&
	   streamed->tally != NULL && streamed->tally->files > 0, "read streamed: entries spooled, none kept");
	ok(streamed != NULL && whole != NULL &&
	   memcmp(streamed->json_sha256, whole->json_sha256, 32) == 0, "the same SHA-256 as read whole");
	ok(streamed != NULL && sb_entry_spool_rewind(streamed->streamed, &err), "the spool rewinds");
	while (streamed != NULL && whole != NULL &&
		   sb_entry_spool_next(streamed->streamed, &e, &end, &err) && i < whole->nentries)
	{
		const SbEntry *w = &whole->entries[i++];

		if (strcmp(e.path, w->path) == 0 && e.type == w->type && e.size == w->size &&
			e.mode == w->mode && e.mtime == w->mtime && e.crc32c == w->crc32c &&
			e.stream_offset == w->stream_offset && e.stream_length == w->stream_length &&
			e.sparse == w->sparse && e.nextents == w->nextents &&
			(e.nextents == 0 || memcmp(e.extents, w->extents, e.nextents * sizeof(SbExtent)) == 0) &&
			((e.link_target == NULL && w->link_target == NULL) ||
			 (e.link_target && w->link_target && strcmp(e.link_target, w->link_target) == 0)) &&
			e.file_id == NULL)
			same++;
	}
	ok(end && whole != NULL && i == whole->nentries && same == i,
	   "the spool gives back every entry in order, the same but for the stamps (%zu of %zu)", same, i);
	if (whole != NULL && streamed != NULL)
		check_each_piece(whole, streamed);
	free(json);
	sb_manifest_free(whole);
	sb_manifest_free(streamed);
	sb_manifest_free(m);
}

/*
 * The spool: entries of every kind and size, long paths, a link, a file of
 * thousands of extents (a record larger than the spool's buffer), read back
 * the same twice over.
 */
void
test_entry_spool(void)
{
	char		dir[PATH_MAX];
	SbError		err;
	SbEntrySpool *s;
	SbExtent   *extents = calloc(40000, sizeof(SbExtent));
	uint32_t	round,
				i;
	bool		added = true;

	th_tempdir(dir, "spool");
	s = sb_entry_spool_new(dir, false, &err);
	ok(s != NULL, "a spool in a folder");
	for (i = 0; i < 40000; i++)
		extents[i] = (SbExtent) {(uint64_t) i * 8192, 4096};
	for (i = 0; s != NULL && added && i < 30000; i++)
	{
		char		path[600];
		SbEntry		e;

		memset(&e, 0, sizeof(e));
		snprintf(path, sizeof(path), "d%u/%0*u", i % 7, (int) (1 + i % 500), i);
		e.path = path;
		e.type = i % 10 == 0 ? SB_ENTRY_DIR : i == 5 ? SB_ENTRY_SYMLINK : SB_ENTRY_FILE;
		e.link_target = i == 5 ? (char *) "/somewhere/else" : NULL;
		e.size = i * 3;
		e.crc32c = i ^ 0xabcdef;
		e.mtime = -(int64_t) i;
		e.mode = (uint16_t) (i & 0755);
		e.stream_offset = i * 5;
		e.stream_length = i;
		e.sparse = i == 777;
		e.nextents = i == 777 ? 40000 : 0;
		e.extents = i == 777 ? extents : NULL;
		e.file_id = (char *) "1:2";
		added = sb_entry_spool_add(s, &e, &err);
	}
	ok(added && s != NULL && sb_entry_spool_count(s) == 30000, "30,000 entries added");
	for (round = 0; s != NULL && round < 2; round++)
	{
		SbEntry		e;
		bool		end = false;
		uint32_t	good = 0;

		ok(sb_entry_spool_rewind(s, &err), "rewound (%u)", round + 1);
		for (i = 0; sb_entry_spool_next(s, &e, &end, &err); i++)
		{
			char		path[600];

			snprintf(path, sizeof(path), "d%u/%0*u", i % 7, (int) (1 + i % 500), i);
			if (strcmp(e.path, path) == 0 && e.size == i * 3 && e.crc32c == (i ^ 0xabcdef) &&
				e.mtime == -(int64_t) i && e.mode == (i & 0755) && e.stream_offset == i * 5 &&
				e.stream_length == i && e.sparse == (i == 777) && e.file_id == NULL &&
				(i != 5 || (e.link_target && strcmp(e.link_target, "/somewhere/else") == 0)) &&
				(i == 5 || e.link_target == NULL) &&
				(i != 777 || (e.nextents == 40000 &&
							  memcmp(e.extents, extents, 40000 * sizeof(SbExtent)) == 0)) &&
				((uintptr_t) e.extents % 8) == 0)
				good++;
		}
		ok(end && i == 30000 && good == 30000, "read back in order, every field the same (%u of %u)",
		   good, i);
	}
	sb_entry_spool_free(s);
	free(extents);
	th_rmtree(dir);
}

/* Spooled entry I of test_entry_spool_stamps. */
static void
stamped_entry(uint32_t i, SbEntry *e, char *path, char *id, char *times, const SbExtent *extents)
{
	memset(e, 0, sizeof(*e));
	sprintf(path, "base/%u/%0*u", i % 3, (int) (1 + i % 700), i);
	sprintf(id, "%u:%u.%u", i * 7, 1700000000 + i, i % 1000);
	sprintf(times, "%u.%u:%u.%u", i, i % 999999999, i + 1, (i * 3) % 999999999);
	e->path = path;
	e->type = i % 50 == 0 ? SB_ENTRY_DIR : SB_ENTRY_FILE;
	e->file_id = i % 11 == 0 ? NULL : id;
	e->file_times = i % 13 == 0 ? NULL : times;
	e->link_target = i == 9 ? (char *) "/tablespace" : NULL;
	e->size = (uint64_t) i * 8192;
	e->stream_offset = (uint64_t) i * 4;
	e->crc32c = i * 31;
	e->sparse = i == 444;
	e->nextents = i == 444 ? 3000 : 0;
	e->extents = i == 444 ? (SbExtent *) extents : NULL;
}

static bool
same_stamped(const SbEntry *a, const SbEntry *b)
{
	return str_eq(a->path, b->path) && str_eq(a->file_id, b->file_id) &&
		str_eq(a->file_times, b->file_times) && str_eq(a->link_target, b->link_target) &&
		a->type == b->type && a->size == b->size && a->stream_offset == b->stream_offset &&
		a->crc32c == b->crc32c && a->nextents == b->nextents &&
		(a->nextents == 0 || memcmp(a->extents, b->extents, a->nextents * sizeof(SbExtent)) == 0);
}

/*
 * A spool that keeps file stamps: read back in order with them, and each
 * record read again at random from where tell said it starts (one with
 * thousands of extents, larger than a random read's first bite, too).
 */
void
test_entry_spool_stamps(void)
{
	enum
	{
		N = 5000
	};
	char		dir[PATH_MAX];
	char		path[800],
				id[64],
				times[64];
	SbExtent   *extents = calloc(3000, sizeof(SbExtent));
	uint64_t   *at = calloc(N, sizeof(uint64_t));
	SbError		err;
	SbEntrySpool *s;
	SbEntry		e,
				want;
	bool		end = false,
				added = true;
	uint32_t	i,
				good = 0,
				good_at = 0;

	for (i = 0; i < 3000; i++)
		extents[i] = (SbExtent) {(uint64_t) i * 16384, 8192};
	th_tempdir(dir, "spool-stamps");
	s = sb_entry_spool_new(dir, true, &err);
	for (i = 0; s != NULL && added && i < N; i++)
	{
		stamped_entry(i, &e, path, id, times, extents);
		added = sb_entry_spool_add(s, &e, &err);
	}
	ok(s != NULL && added && sb_entry_spool_rewind(s, &err), "%d stamped entries spooled", N);
	for (i = 0; s != NULL && i < N; i++)
	{
		at[i] = sb_entry_spool_tell(s);
		if (!sb_entry_spool_next(s, &e, &end, &err))
			break;
		stamped_entry(i, &want, path, id, times, extents);
		good += same_stamped(&e, &want);
	}
	ok(i == N && good == N, "read in order with their stamps (%u of %d)", good, N);
	for (i = 0; s != NULL && i < N; i += (i < 440 || i > 450) ? 37 : 1)
	{
		stamped_entry(i, &want, path, id, times, extents);
		if (sb_entry_spool_read_at(s, at[i], &e, &err) && same_stamped(&e, &want) &&
			((uintptr_t) e.extents % 8) == 0)
			good_at++;
		else
			break;
	}
	ok(i >= N, "each read again at random where it starts, the large one too (%u)", good_at);
	ok(s != NULL && !sb_entry_spool_read_at(s, at[1] + 4, &e, &err) && err.code == SB_EINVAL,
	   "a place that is no record's start is refused");
	ok(s != NULL && !sb_entry_spool_read_at(s, UINT64_C(1) << 40, &e, &err) && err.code == SB_EINVAL,
	   "a place past the end is refused");
	sb_entry_spool_free(s);
	free(extents);
	free(at);
	th_rmtree(dir);
}

/* M's text, emitted a block at a time, is JSON and its newline? */
static bool
emitted_is(const SbManifest *m, const char *json)
{
	Gathered	g = {NULL, 0, 0, 0};
	SbError		err;
	bool		same = sb_manifest_emit(m, gather, &g, &err) && g.len == strlen(json) + 1 &&
		memcmp(g.text, json, g.len - 1) == 0 && g.text[g.len - 1] == '\n';


	free(g.text);
	return same;
}

/*
 * Every entry of WHOLE found by path through L, the same as in the table and
 * at the same ordinal (its index there); N, the ones that were.
 */
static size_t
found_same(SbEntryLookup *l, const SbManifest *whole)
{
	SbError		err;
	SbEntry		e;
	bool		found;
	size_t		i,
				at,
				n = 0;

	for (i = 0; i < whole->nentries; i++)
		if (sb_entry_lookup_find(l, whole->entries[i].path, &e, &found, &err) && found &&
			entries_equal(&e, &whole->entries[i]) && same_stamped(&e, &whole->entries[i]) &&
			sb_entry_lookup_at(l, whole->entries[i].path, &e, &at, &err) && at == i)
			n++;
	return n;
}

/*
 * A manifest read to look its entries up (SB_KEEP_LOOKUP) keeps none in
 * memory and finds each by path with its stamps, as the table does; a path
 * it does not hold, a prefix or an extension of one, is not found.  Its
 * text, printed from the spool, is the manifest's (stripebackup show --json).
 */
void
test_entry_lookup(void)
{
	SbManifest *m = sample_manifest();
	SbError		err;
	char	   *json;
	SbManifest *whole,
			   *spooled;
	SbEntryLookup *from_table,
			   *from_spool;
	SbEntry		e;
	bool		found = true;
	size_t		i;

	for (i = 0; i < m->nentries; i++)
		if (m->entries[i].type == SB_ENTRY_FILE)
		{
			m->entries[i].file_id = i % 2 ? (char *) "12345:1700000000.5" : NULL;
			m->entries[i].file_times = (char *) "1700000000.1:1700000001.2";
		}
	json = sb_manifest_to_json(m, &err);
	whole = json ? sb_manifest_from_json(json, strlen(json), &err) : NULL;
	spooled = json ? read_json_file(json, SB_KEEP_LOOKUP, &err) : NULL;
	ok(whole != NULL && spooled != NULL && spooled->streamed != NULL && spooled->nentries == 0,
	   "read to look up: entries spooled, none kept");
	from_table = whole ? sb_entry_lookup_new(whole, &err) : NULL;
	from_spool = spooled ? sb_entry_lookup_new(spooled, &err) : NULL;
	ok(from_table != NULL && from_spool != NULL && found_same(from_table, whole) == whole->nentries &&
	   found_same(from_spool, whole) == whole->nentries,
	   "every entry found by path, stamps and all, at its ordinal, from the table and from the spool");
	ok(spooled != NULL && emitted_is(spooled, json), "its whole text printed from the spool is the manifest's");
	ok(from_spool != NULL && sb_entry_lookup_find(from_spool, "dir/spars", &e, &found, &err) && !found &&
	   sb_entry_lookup_find(from_spool, "dir/sparse/x", &e, &found, &err) && !found &&
	   sb_entry_lookup_find(from_table, "nowhere", &e, &found, &err) && !found &&
	   sb_entry_lookup_at(from_spool, "nowhere", &e, &i, &err) && i == SIZE_MAX,
	   "a path not in the backup is not found (no ordinal)");
	sb_entry_lookup_free(from_table);
	sb_entry_lookup_free(from_spool);
	sb_manifest_free(whole);
	sb_manifest_free(spooled);
	sb_manifest_free(m);
	free(json);
}

/* Note N_FILES files in 50 folders (and file "f/x" at AT, when given), then check them all. */
static int
path_set_problems(int n_files, const char *extra, int at, char *first, size_t first_len)
{
	SbError		err;
	SbPathSet  *set = sb_path_set_new(&err);
	int			problems = 0;
	int			pass,
				i;

	first[0] = '\0';
	for (pass = 0; set != NULL && pass < 2; pass++)
	{
		for (i = -50; i < n_files; i++)
		{
			char		path[64];
			SbEntry		e;

			memset(&e, 0, sizeof(e));
			e.type = i < 0 ? SB_ENTRY_DIR : SB_ENTRY_FILE;
			if (i < 0)
				snprintf(path, sizeof(path), "d%d", -i);
			else
				snprintf(path, sizeof(path), "d%d/f%d", 1 + i % 50, i);
			if (i == at && extra != NULL)
				snprintf(path, sizeof(path), "%s", extra);
			e.path = path;
			if (pass == 0 && !sb_path_set_add(set, &e, &err))
				problems = 1000000;
			if (pass == 1 && !sb_path_set_check_parents(set, &e, &err) && problems++ == 0)
				snprintf(first, first_len, "%s", err.message);
		}
		if (pass == 0)
			sb_path_set_finish(set);
	}
	sb_path_set_free(set);
	return problems;
}

/*
 * The paths of a streamed manifest, from their hashes: 100,000 paths with
 * none twice pass; one listed twice, or under a file, is found wherever it
 * lies, and named.
 */
void
test_path_set(void)
{
	char		first[sizeof(((SbError *) 0)->message)];

	is_int(path_set_problems(100000, NULL, -1, first, sizeof(first)), 0,
		   "100,000 files in 50 folders: no problem");
	is_int(path_set_problems(100000, "d7/f56", 99999, first, sizeof(first)), 2,
		   "a path listed twice: both of its entries said");
	like(first, "\"d7/f56\" is listed twice", "naming it");
	is_int(path_set_problems(100000, "d4/f53/under", 70000, first, sizeof(first)), 1,
		   "a path under a file: said");
	like(first, "\"d4/f53/under\" lies under \"d4/f53\", which is not a directory", "naming both");
	is_int(path_set_problems(100000, "d4/f53/not-listed/under", 5, first, sizeof(first)), 1,
		   "a path under a folder not listed, under a file: said");
	like(first, "lies under \"d4/f53\"", "naming the file");
}

/* M's text, with its first file stamped FILE_ID, read from a file KEEPING as said. */
static SbManifest *
read_stamped(SbManifest *m, const char *file_id, SbEntryKeep keep, SbError *err)
{
	char		dir[PATH_MAX];
	char		path[PATH_MAX];
	size_t		len;
	char	   *text;
	SbManifest *back = NULL;

	m->entries[1].file_id = (char *) file_id;
	m->entries[1].file_times = "1700000000.5:1700000001.25";
	text = sb_manifest_serialize(m, &len, err);
	m->entries[1].file_id = m->entries[1].file_times = NULL;
	th_tempdir(dir, "stamps");
	if (text != NULL && th_write_file(th_path(path, "%s/manifest.json", dir), text, len, 0600))
		back = sb_manifest_read_path(path, NULL, NULL, keep, NULL, err);
	free(text);
	th_rmtree(dir);
	return back;
}

/*
 * Read to restore (SB_KEEP_TO_RESTORE): the file stamps, which only a child
 * backup or a merge reads, are checked and not kept; the rest is what is
 * read whole, with the same SHA-256.
 */
void
test_manifest_no_stamps(void)
{
	SbManifest *m = sample_manifest();
	SbManifest *whole;
	SbManifest *light;
	SbError		err;

	whole = read_stamped(m, "123:1700000000.5", SB_KEEP_ALL, &err);
	light = read_stamped(m, "123:1700000000.5", SB_KEEP_TO_RESTORE, &err);
	if (light == NULL)
		th_diag_error("to restore", &err);
	ok(whole != NULL && whole->entries[1].file_id != NULL && whole->entries[1].file_times != NULL,
	   "read whole, the file keeps its stamps");
	ok(light != NULL && light->no_stamps && light->entries[1].file_id == NULL &&
	   light->entries[1].file_times == NULL, "read to restore, it does not");
	ok(whole != NULL && light != NULL && light->nentries == whole->nentries &&
	   light->entries[1].size == whole->entries[1].size &&
	   strcmp(light->entries[1].path, whole->entries[1].path) == 0 &&
	   memcmp(light->json_sha256, whole->json_sha256, 32) == 0,
	   "the same entries otherwise, and the same SHA-256 (what authentication compares)");
	sb_manifest_free(light);
	light = read_stamped(m, "12/34", SB_KEEP_TO_RESTORE, &err);
	ok(light == NULL && err.code == SB_ECORRUPT && strstr(err.message, "file_id") != NULL,
	   "a stamp that is not digits is refused all the same (%s)", err.message);
	sb_manifest_free(light);
	sb_manifest_free(whole);
	sb_manifest_free(m);
}

/*
 * A backup that keeps no entry table (sb_manifest_spill): the entries' text
 * goes to an unlinked file as they are added, and the manifest made from it
 * is the one the table would have made, byte for byte.
 */
void
test_manifest_spill(void)
{
	SbManifest *m = sample_manifest();
	SbManifest *spilled = sample_manifest();
	SbEntry    *entries = spilled->entries;
	size_t		n = spilled->nentries;
	char		dir[PATH_MAX];
	SbError		err;
	size_t		len,
				spilled_len;
	char	   *text = sb_manifest_serialize(m, &len, &err);
	char	   *spilled_text;
	Gathered	g = {NULL, 0, 0, 0};
	bool		added = true;
	size_t		i;
	SbEntry		late;

	th_tempdir(dir, "spill");
	ok(!sb_manifest_spill(spilled, "/nonexistent/folder", &err) && strstr(err.message, "/nonexistent/folder"),
	   "a folder that is not there: refused, naming it (%s)", err.message);
	spilled->nentries = 0;		/* the sample's table, added again into the spill */
	ok(sb_manifest_spill(spilled, dir, &err), "spilling into a folder");
	for (i = 0; added && i < n; i++)
		added = sb_manifest_add_entry(spilled, &entries[i], &err);
	ok(added && spilled->nentries == 0, "%zu entries added, none kept", n);
	spilled_text = sb_manifest_serialize(spilled, &spilled_len, &err);
	ok(text != NULL && spilled_text != NULL && spilled_len == len && memcmp(text, spilled_text, len) == 0,
	   "the manifest's text is the one the table makes (%zu bytes)", len);
	ok(sb_manifest_emit(spilled, gather, &g, &err) && g.len == len && memcmp(g.text, text, len) == 0,
	   "emitted a block at a time, the same bytes again");
	ok(th_count_entries(dir) == 0, "the file it spilled to has no name in the folder");

	late = entries[1];			/* a file with data, out of the stream's order */
	late.path = "late";
	ok(!sb_manifest_add_entry(spilled, &late, &err) && err.code == SB_EINVAL &&
	   strstr(err.message, "stream offset") != NULL, "data out of the stream's order: refused (%s)",
	   err.message);
	free(g.text);
	free(text);
	free(spilled_text);
	sb_manifest_free(spilled);
	sb_manifest_free(m);
	th_rmtree(dir);
}
