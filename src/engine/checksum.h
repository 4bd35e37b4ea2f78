/*
 * checksum.h
 *		The checksums of the format: XXH3-64 for chunks and structures
 *		(libxxhash), CRC-32C for whole files as PostgreSQL's backup_manifest
 *		wants them (ISA-L), SHA-256 of the manifest, which every stripe's
 *		trailer records (libcrypto).
 */
#ifndef SB_CHECKSUM_H
#define SB_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_error.h"

#define SB_CRC32C_INIT 0xFFFFFFFFu

/* XXH3-64 of a buffer. */
extern uint64_t sb_hash64(const void *data, size_t len);

#define SB_SHA256_LEN 32

/* SHA-256 of a buffer (OpenSSL's libcrypto, EVP); false (SB_ENOMEM) if it could not run. */
extern bool sb_sha256(const void *data, size_t len, uint8_t out[SB_SHA256_LEN], SbError *err);

/* Feed bytes into a running CRC-32C started with SB_CRC32C_INIT. */
extern uint32_t sb_crc32c_update(uint32_t crc, const void *data, size_t len);

/* Feed LEN zero bytes (a hole) into a running CRC-32C, in O(log LEN). */
extern uint32_t sb_crc32c_zeros(uint32_t crc, uint64_t len);

/*
 * The raw register of a buffer: started at 0 and not inverted, the part of
 * a CRC-32C that pieces of a file combine by (crc32c_shift.c).
 */
extern uint32_t sb_crc32c_raw(const void *data, size_t len);

/* A register moved across LEN zero bytes without reading them: CRC * x^(8 LEN) mod P. */
extern uint32_t sb_crc32c_shift(uint32_t crc, uint64_t len);

/* The final CRC-32C value of a running one. */
extern uint32_t sb_crc32c_final(uint32_t crc);

#endif							/* SB_CHECKSUM_H */
