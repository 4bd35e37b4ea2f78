/*
 * format.h
 *		Binary layout of a stripe file (docs/FORMAT.md is the reference).
 *
 *		stripe header (64 bytes)
 *		chunk record * N: chunk header (48 bytes) + stored payload
 *		index: N entries of 48 bytes
 *		trailer (128 bytes) at the very end
 *
 * All integers are little-endian.  Every fixed structure ends in a 64-bit
 * XXH3 hash of its other bytes, so a flipped bit in a header is caught.
 * The trailer binds the stripe to its backup: stripe number and count, the
 * backup's uuid, and the SHA-256 and length of the exact manifest.json
 * bytes the backup wrote, so a manifest that is not that one is refused.
 */
#ifndef SB_FORMAT_H
#define SB_FORMAT_H

#include <stdint.h>

#include "stripebackup/sb_error.h"

#define SB_STRIPE_MAGIC "SBSTRIPE"
#define SB_CHUNK_MAGIC "SBCK"
#define SB_TRAILER_MAGIC "SBTRAILR"

#define SB_STRIPE_HEADER_SIZE 64
#define SB_CHUNK_HEADER_SIZE 48
#define SB_INDEX_ENTRY_SIZE 48
#define SB_TRAILER_SIZE 128

typedef struct SbStripeHeader
{
	uint16_t	major;
	uint16_t	minor;
	uint8_t		uuid[16];
	uint32_t	number;			/* 1-based */
	uint32_t	count;
	uint32_t	chunk_size;
} SbStripeHeader;

/* How a chunk's payload is sealed (crypto.h): byte 5 of its header, 25 of its index entry. */
#define SB_CIPHER_NONE 0
#define SB_CIPHER_AES_256_GCM 1

typedef struct SbChunkHeader
{
	uint8_t		codec;
	uint8_t		cipher;			/* SB_CIPHER_*: the payload is sealed */
	uint8_t		kind;			/* SB_CHUNK_KIND_* (format/parity.h): byte 6 */
	uint64_t	chunk_id;
	uint32_t	raw_len;
	uint32_t	stored_len;
	uint64_t	raw_hash;		/* XXH3-64 of the uncompressed bytes */
	uint64_t	stored_hash;	/* XXH3-64 of the payload as stored */
} SbChunkHeader;

typedef struct SbIndexEntry
{
	uint64_t	chunk_id;
	uint64_t	offset;			/* of the chunk header in the stripe file */
	uint32_t	raw_len;
	uint32_t	stored_len;
	uint8_t		codec;
	uint8_t		cipher;
	uint8_t		kind;			/* SB_CHUNK_KIND_* (format/parity.h): byte 26 */
	uint64_t	raw_hash;		/* masked when sealed (sb_cipher_mask_hash) */
	uint64_t	stored_hash;
} SbIndexEntry;

typedef struct SbTrailer
{
	uint64_t	index_offset;
	uint64_t	chunk_count;
	uint64_t	raw_bytes;
	uint64_t	stored_bytes;
	uint64_t	index_hash;		/* XXH3-64 of all index entries */
	uint32_t	number;			/* 1-based */
	uint32_t	count;			/* stripes in the backup */
	uint8_t		uuid[16];		/* the backup's */
	uint8_t		manifest_sha256[32];	/* of the exact bytes of manifest.json */
	uint64_t	manifest_length;	/* bytes of manifest.json */
} SbTrailer;

/* Little-endian fields, and the seal that ends every structure. */
extern uint16_t sb_format_get16(const uint8_t *p);
extern uint32_t sb_format_get32(const uint8_t *p);
extern uint64_t sb_format_get64(const uint8_t *p);
extern void sb_format_put16(uint8_t *p, uint16_t v);
extern void sb_format_put32(uint8_t *p, uint32_t v);
extern void sb_format_put64(uint8_t *p, uint64_t v);
/* Seal a structure of SIZE bytes: its last 8 bytes hash the ones before. */
extern void sb_format_seal(uint8_t *p, size_t size);
/* Do the last 8 bytes of a structure of SIZE bytes hash the ones before? */
extern bool sb_format_seal_ok(const uint8_t *p, size_t size);

extern void sb_format_encode_header(const SbStripeHeader *h, uint8_t *out);
extern bool sb_format_decode_header(const uint8_t *in, SbStripeHeader *h, SbError *err);

extern void sb_format_encode_chunk(const SbChunkHeader *h, uint8_t *out);
extern bool sb_format_decode_chunk(const uint8_t *in, SbChunkHeader *h, SbError *err);

extern void sb_format_encode_index_entry(const SbIndexEntry *e, uint8_t *out);
/* E's KIND as stored: a reader refuses one above SB_CHUNK_KIND_PARITY. */
extern void sb_format_decode_index_entry(const uint8_t *in, SbIndexEntry *e);

extern void sb_format_encode_trailer(const SbTrailer *t, uint8_t *out);
extern bool sb_format_decode_trailer(const uint8_t *in, SbTrailer *t, SbError *err);

#endif							/* SB_FORMAT_H */
