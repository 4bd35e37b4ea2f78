/*
 * sb_crc32c.h
 *		CRC-32C (Castagnoli), the checksum the format records for every file
 *		(docs/FORMAT.md, "crc32c") and the one PostgreSQL computes over its
 *		control file and its backup_manifest.  Public because the command
 *		checks a stopped cluster's global/pg_control with it; the engine's
 *		other checksums (XXH3-64, SHA-256, the pieces CRC-32C is combined
 *		from) stay in src/engine/format/checksum.h.
 */
#ifndef SB_CRC32C_H
#define SB_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The value a running CRC-32C starts from. */
#define SB_CRC32C_INIT 0xFFFFFFFFu

/* Feed bytes into a running CRC-32C started with SB_CRC32C_INIT. */
extern uint32_t sb_crc32c_update(uint32_t crc, const void *data, size_t len);

/* The final CRC-32C value of a running one. */
extern uint32_t sb_crc32c_final(uint32_t crc);

#endif							/* SB_CRC32C_H */
