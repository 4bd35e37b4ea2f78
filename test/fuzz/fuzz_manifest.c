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
 * can write).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_manifest.h"

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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SbError		err;
	SbManifest *m = sb_manifest_from_bytes((const char *) data, size, fuzz_key(), &err);
	uint64_t	c;

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
