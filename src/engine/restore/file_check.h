/*
 * file_check.h
 *		The CRC-32C of every file a restore writes or a verify reads, built
 *		from its pieces as they pass, in whatever order and on whatever
 *		thread they come, without reading anything twice.
 *
 * Each piece adds its raw CRC, shifted to the end of its file, into the
 * file's accumulator (XOR is the addition of GF(2), so order does not
 * matter); holes add nothing.  The file's CRC-32C is the accumulator plus
 * the CRC-32C of as many zero bytes as the file is long (crc32c_shift.c).
 */
#ifndef SB_FILE_CHECK_H
#define SB_FILE_CHECK_H

#include <stdatomic.h>

#include "stripebackup/sb_manifest.h"

typedef struct SbFileCheck
{
	const SbManifest *manifest;
	_Atomic uint32_t *crcs;		/* per entry: XOR of its shifted piece CRCs */
	_Atomic uint64_t *bytes;	/* per entry: data bytes accounted for */
} SbFileCheck;

/* Accumulators for every entry of M (indexed), all zero. */
extern bool sb_file_check_init(SbFileCheck *fc, const SbManifest *m, SbError *err);

extern void sb_file_check_free(SbFileCheck *fc);

/*
 * What a piece of E (LEN bytes at DATA, at FILE_OFFSET in the file) adds to
 * E's sum: the sums of all its pieces, XORed, make sb_file_check_whole's SUM.
 */
extern uint32_t sb_file_check_piece(const SbEntry *e, uint64_t file_offset, const uint8_t *data,
									uint64_t len);

/* The CRC-32C of E's whole content from the sum of its pieces (holes as zeros). */
extern uint32_t sb_file_check_whole(const SbEntry *e, uint32_t sum);

/* CRC is the manifest's for E; else ERR (SB_ECORRUPT) names the file and both. */
extern bool sb_file_check_matches(const SbEntry *e, uint32_t crc, SbError *err);

/* Account for one piece: DATA holds its PIECE->length bytes.  Any thread. */
extern void sb_file_check_add(SbFileCheck *fc, const SbPiece *piece, const uint8_t *data);

/* Account for every piece of chunk CHUNK_ID, whose raw bytes are RAW.  Any thread. */
extern void sb_file_check_add_chunk(SbFileCheck *fc, uint64_t chunk_id, const uint8_t *raw);

/* Has every data byte of entry I been accounted for? */
extern bool sb_file_check_complete(const SbFileCheck *fc, size_t i);

/* The CRC-32C of entry I's whole content, holes as zeros, from what was accounted. */
extern uint32_t sb_file_check_crc(const SbFileCheck *fc, size_t i);

/* Entry I's CRC-32C is the manifest's; else ERR (SB_ECORRUPT) names the file and both. */
extern bool sb_file_check_entry(const SbFileCheck *fc, size_t i, SbError *err);

#endif							/* SB_FILE_CHECK_H */
