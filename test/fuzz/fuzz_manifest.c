/*
 * fuzz_manifest.c
 *		libFuzzer target: arbitrary bytes as manifest.json.
 *
 * sb_manifest_from_bytes (a manifest in the clear, or an encrypted backup's
 * envelope, opened with a fixed key: 48 bytes of 'k') must return either
 * NULL with an error, or a manifest
 * that passed sb_manifest_index.  For an accepted manifest the target also
 * checks what readers rely on: indexing it again succeeds, the pieces of
 * every chunk cover the chunk exactly and lie inside their files, and its
 * JSON form reads back to the same JSON (what a reader accepts, the writer
 * can write).  The same bytes read streamed (the entries spooled to a file,
 * paths checked from their hashes: a restore's and a verify's way) must be
 * accepted or refused alike, and an accepted one's spool must give back the
 * same entries.  Read for its members alone (what stripe_restore() checks
 * before its worker reads the entries), one accepted whole must be accepted
 * with the same members and hash; any other may be refused, never crash.
 * Read to be looked up (a child backup's way with its parent), the same
 * bytes are accepted or refused alike, and every entry of an accepted one
 * is found by its path with the same fields and stamps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_manifest.h"
#include "manifest/entry_lookup.h"
#include "manifest/entry_spool.h"
#include "manifest/manifest_envelope.h"
#include "manifest/manifest_text.h"

/* Chunks whose pieces are walked: enough for small manifests, bounded for big ones. */
#define MAX_CHUNKS_WALKED 4096

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_manifest: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

/* The pieces of chunk C: in bounds, in order, and adding up to its length. */
static void
check_chunk(const SbManifest *m, uint64_t c)
{
	SbPieceIter it;
	SbPiece		piece;
	uint64_t	covered = 0;
	uint32_t	len = sb_manifest_chunk_length(m, c);
	char		description[256];

	sb_piece_iter_init(&it, m, c);
	while (sb_piece_iter_next(&it, &piece))
	{
		const SbEntry *e;

		if (piece.entry >= m->nentries)
			fail("piece of an entry that does not exist", NULL);
		e = &m->entries[piece.entry];
		if (e->type != SB_ENTRY_FILE || piece.length == 0 ||
			piece.chunk_offset != covered || piece.length > len - covered ||
			piece.file_offset > e->size || piece.length > e->size - piece.file_offset)
			fail("piece out of bounds in", e->path);
		covered += piece.length;
	}
	if (covered != len)
		fail("the pieces of a chunk do not cover it", NULL);
	sb_manifest_describe_chunk(m, c, description, sizeof(description));
}

/* The JSON form of M reads back and writes out the same. */
static void
check_roundtrip(const SbManifest *m)
{
	SbError		err;
	char	   *text = sb_manifest_to_json(m, &err);
	char	   *again;
	SbManifest *back;

	if (text == NULL)
		fail("an accepted manifest cannot be written", err.message);
	back = sb_manifest_from_json(text, strlen(text), &err);
	if (back == NULL)
		fail("a written manifest cannot be read back", err.message);
	again = sb_manifest_to_json(back, &err);
	if (again == NULL || strcmp(text, again) != 0)
		fail("a manifest changes when read back and written again", NULL);
	free(again);
	free(text);
	sb_manifest_free(back);
}

/* The key of the envelope seeds: 48 bytes of 'k' (test_encrypted.c's too). */
static const SbKey *
fuzz_key(void)
{
	static SbKey key;

	if (key.len == 0)
	{
		memset(key.secret, 'k', 48);
		key.len = 48;
	}
	return &key;
}

/* The same bytes read streamed: accepted as WHOLE was (or not), with the same entries. */
static void
check_streamed(const uint8_t *data, size_t size, const SbManifest *whole)
{
	const char *tmp = getenv("TMPDIR");
	SbError		err;
	SbManifest *m;
	SbEntry		e;
	bool		end = false;
	size_t		i = 0;

	if (sb_manifest_is_envelope((const char *) data, size))
		return;					/* an envelope needs the key: read by sb_manifest_from_bytes */
	m = sb_manifest_spool_json((const char *) data, size, tmp && tmp[0] == '/' ? tmp : "/tmp", &err);
	if ((m == NULL) != (whole == NULL))
		fail(m == NULL ? "a manifest read whole is refused streamed" :
			 "a manifest refused whole is accepted streamed", m == NULL ? err.message : NULL);
	if (m == NULL || m->streamed == NULL)
	{
		sb_manifest_free(m);
		return;
	}
	if (!sb_entry_spool_rewind(m->streamed, &err))
		fail("the spool does not rewind", err.message);
	for (; sb_entry_spool_next(m->streamed, &e, &end, &err); i++)
		if (i >= whole->nentries || strcmp(e.path, whole->entries[i].path) != 0 ||
			e.type != whole->entries[i].type || e.size != whole->entries[i].size ||
			e.stream_offset != whole->entries[i].stream_offset)
			fail("the spool gives back another entry than the table holds", e.path);
	if (!end || i != whole->nentries)
		fail("the spool gives back fewer entries than the table holds", NULL);
	sb_manifest_free(m);
}

/* Entry E, found by path, is WANT (stamps included)? */
static bool
same_found(const SbEntry *e, const SbEntry *want)
{
	return strcmp(e->path, want->path) == 0 && e->type == want->type && e->size == want->size &&
		e->stream_offset == want->stream_offset && e->nextents == want->nextents &&
		(e->file_id == NULL) == (want->file_id == NULL) &&
		(e->file_id == NULL || strcmp(e->file_id, want->file_id) == 0) &&
		(e->file_times == NULL) == (want->file_times == NULL) &&
		(e->file_times == NULL || strcmp(e->file_times, want->file_times) == 0);
}

/* The same bytes read to be looked up: accepted as WHOLE was, each of its entries found. */
static void
check_looked_up(const uint8_t *data, size_t size, const SbManifest *whole)
{
	const char *tmp = getenv("TMPDIR");
	SbError		err;
	SbManifest *m;
	SbEntryLookup *l;
	SbEntry		e;
	bool		found;
	size_t		i;

	if (sb_manifest_is_envelope((const char *) data, size))
		return;
	m = sb_manifest_lookup_json((const char *) data, size, tmp && tmp[0] == '/' ? tmp : "/tmp", &err);
	if ((m == NULL) != (whole == NULL))
		fail(m == NULL ? "a manifest read whole is refused to be looked up" :
			 "a manifest refused whole is accepted to be looked up", m == NULL ? err.message : NULL);
	if (m == NULL)
		return;
	if ((l = sb_entry_lookup_new(m, &err)) == NULL)
		fail("an accepted manifest's entries cannot be looked up", err.message);
	for (i = 0; i < whole->nentries; i++)
		if (!sb_entry_lookup_find(l, whole->entries[i].path, &e, &found, &err) || !found ||
			!same_found(&e, &whole->entries[i]))
			fail("an entry is not found by its path, or another is", whole->entries[i].path);
	sb_entry_lookup_free(l);
	sb_manifest_free(m);
}

/* The same bytes read for the members alone: those of WHOLE, when it was accepted. */
static void
check_head_only(const uint8_t *data, size_t size, const SbManifest *whole)
{
	SbError		err;
	SbManifest *m;

	if (sb_manifest_is_envelope((const char *) data, size))
		return;
	m = sb_manifest_head_json((const char *) data, size, &err);
	if (m == NULL && err.message[0] == '\0')
		fail("a manifest refused for its members without an error", NULL);
	if (whole != NULL && m == NULL)
		fail("a manifest read whole is refused for its members", err.message);
	if (whole != NULL &&
		(!m->head_only || m->nentries != 0 || strcmp(m->name, whole->name) != 0 ||
		 m->nstripes != whole->nstripes || m->total_chunks != whole->total_chunks ||
		 m->stream_bytes != whole->stream_bytes || m->chunk_size != whole->chunk_size ||
		 memcmp(m->json_sha256, whole->json_sha256, sizeof(m->json_sha256)) != 0))
		fail("a manifest's members differ read alone", whole->name);
	sb_manifest_free(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SbError		err;
	SbManifest *m = sb_manifest_from_bytes((const char *) data, size, fuzz_key(), &err);
	uint64_t	c;

	check_streamed(data, size, m);
	check_head_only(data, size, m);
	check_looked_up(data, size, m);
	if (m == NULL)
	{
		if (err.code == SB_OK || err.message[0] == '\0')
			fail("manifest refused without an error", NULL);
		return 0;
	}
	if (m->chunk_map == NULL || m->data_entries == NULL || !sb_manifest_index(m, &err))
		fail("an accepted manifest does not index", err.message);
	for (c = 0; c < m->total_chunks && c < MAX_CHUNKS_WALKED; c++)
	{
		if (sb_manifest_chunk_stripe(m, c) >= m->nstripes)
			fail("chunk in a stripe that does not exist", NULL);
		check_chunk(m, c);
	}
	check_roundtrip(m);
	sb_manifest_free(m);
	return 0;
}
