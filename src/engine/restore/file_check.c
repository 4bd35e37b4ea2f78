/*
 * file_check.c
 *		Whole-file CRC-32C of what a restore or verify read, from the pieces
 *		of each chunk (file_check.h says how).
 */
#include <inttypes.h>
#include <stdlib.h>

#include "format/checksum.h"
#include "restore/file_check.h"
#include "util/fsutil.h"

bool
sb_file_check_init(SbFileCheck *fc, const SbManifest *m, SbError *err)
{
	size_t		n = m->nentries ? m->nentries : 1;

	fc->manifest = m;
	fc->crcs = sb_alloc(n * sizeof(*fc->crcs), err);
	fc->bytes = fc->crcs ? sb_alloc(n * sizeof(*fc->bytes), err) : NULL;
	if (fc->bytes == NULL)
	{
		sb_file_check_free(fc);
		return false;
	}
	return true;
}

void
sb_file_check_free(SbFileCheck *fc)
{
	free(fc->crcs);
	free(fc->bytes);
	fc->crcs = NULL;
	fc->bytes = NULL;
}

uint32_t
sb_file_check_piece(const SbEntry *e, uint64_t file_offset, const uint8_t *data, uint64_t len)
{
	return sb_crc32c_shift(sb_crc32c_raw(data, (size_t) len), e->size - file_offset - len);
}

void
sb_file_check_add(SbFileCheck *fc, const SbPiece *piece, const uint8_t *data)
{
	const SbEntry *e = &fc->manifest->entries[piece->entry];

	atomic_fetch_xor(&fc->crcs[piece->entry],
					 sb_file_check_piece(e, piece->file_offset, data, piece->length));
	atomic_fetch_add(&fc->bytes[piece->entry], piece->length);
}

void
sb_file_check_add_chunk(SbFileCheck *fc, uint64_t chunk_id, const uint8_t *raw)
{
	SbPieceIter it;
	SbPiece		piece;

	sb_piece_iter_init(&it, fc->manifest, chunk_id);
	while (sb_piece_iter_next(&it, &piece))
		sb_file_check_add(fc, &piece, raw + piece.chunk_offset);
}

bool
sb_file_check_complete(const SbFileCheck *fc, size_t i)
{
	return atomic_load(&fc->bytes[i]) == fc->manifest->entries[i].stream_length;
}

/*
 * CRC-32C(F) = raw(F) + INIT * x^(8S) + INIT, and INIT * x^(8S) + INIT is
 * the CRC-32C of S zero bytes: the accumulator holds raw(F).
 */
uint32_t
sb_file_check_whole(const SbEntry *e, uint32_t sum)
{
	return sum ^ sb_crc32c_final(sb_crc32c_zeros(SB_CRC32C_INIT, e->size));
}

uint32_t
sb_file_check_crc(const SbFileCheck *fc, size_t i)
{
	return sb_file_check_whole(&fc->manifest->entries[i], atomic_load(&fc->crcs[i]));
}

bool
sb_file_check_matches(const SbEntry *e, uint32_t crc, SbError *err)
{
	if (crc == e->crc32c)
		return true;
	return sb_error_set(err, SB_ECORRUPT,
						"file \"%s\": its content has CRC-32C %08" PRIx32 ", the manifest records %08" PRIx32,
						e->path, crc, e->crc32c);
}

bool
sb_file_check_entry(const SbFileCheck *fc, size_t i, SbError *err)
{
	return sb_file_check_matches(&fc->manifest->entries[i], sb_file_check_crc(fc, i), err);
}
