/*
 * checksum.h
 *		The checksums of the format: XXH3-64 for chunks and structures
 *		(libxxhash), CRC-32C for whole files as PostgreSQL's backup_manifest
 *		wants them (ISA-L), SHA-256 of the manifest, which every stripe's
 *		trailer records (libcrypto).  The CRC-32C of whole files is public
 *		(stripebackup/sb_crc32c.h); its pieces and their combining are here.
 */
#ifndef SB_CHECKSUM_H
#define SB_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_crc32c.h"
#include "stripebackup/sb_error.h"

/* XXH3-64 of a buffer. */
extern uint64_t sb_hash64(const void *data, size_t len);

/* XXH3-64 of bytes that come in pieces (a file too large to hold whole). */
typedef struct SbHashStream SbHashStream;

/* A new stream, started; NULL (SB_ENOMEM) if memory runs out. */
extern SbHashStream *sb_hash_stream_new(SbError *err);
extern void sb_hash_stream_free(SbHashStream *s);
/* Start again, as from sb_hash_stream_new. */
extern void sb_hash_stream_reset(SbHashStream *s);
extern void sb_hash_stream_update(SbHashStream *s, const void *data, size_t len);
/* The XXH3-64 of every byte fed since the start: sb_hash64 of them all. */
extern uint64_t sb_hash_stream_digest(const SbHashStream *s);

#define SB_SHA256_LEN 32

/* SHA-256 of a buffer (OpenSSL's libcrypto, EVP); false (SB_ENOMEM) if it could not run. */
/* LEN bytes as 2*LEN lower-case hex digits and a NUL, in OUT. */
extern void sb_hex_encode(const uint8_t *bytes, size_t len, char *out);

extern bool sb_sha256(const void *data, size_t len, uint8_t out[SB_SHA256_LEN], SbError *err);

/* SHA-256 of bytes that come in pieces (a manifest read as a stream). */
typedef struct SbSha256 SbSha256;

/* A new running SHA-256; NULL (SB_ENOMEM) if libcrypto cannot start one. */
extern SbSha256 *sb_sha256_begin(SbError *err);
extern bool sb_sha256_update(SbSha256 *s, const void *data, size_t len, SbError *err);
/* The digest of every byte fed; frees S (as does sb_sha256_free, which takes NULL). */
extern bool sb_sha256_end(SbSha256 *s, uint8_t out[SB_SHA256_LEN], SbError *err);
extern void sb_sha256_free(SbSha256 *s);

/* CRC-32C of whole files: SB_CRC32C_INIT, sb_crc32c_update and sb_crc32c_final (sb_crc32c.h). */

/* Feed LEN zero bytes (a hole) into a running CRC-32C, in O(log LEN). */
extern uint32_t sb_crc32c_zeros(uint32_t crc, uint64_t len);

/*
 * The raw register of a buffer: started at 0 and not inverted, the part of
 * a CRC-32C that pieces of a file combine by (crc32c_shift.c).
 */
extern uint32_t sb_crc32c_raw(const void *data, size_t len);

/* A register moved across LEN zero bytes without reading them: CRC * x^(8 LEN) mod P. */
extern uint32_t sb_crc32c_shift(uint32_t crc, uint64_t len);

#endif							/* SB_CHECKSUM_H */
