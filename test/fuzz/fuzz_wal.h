/*
 * fuzz_wal.h
 *		The archive the WAL fuzz target reads, and its input's flag byte,
 *		shared with the seed generator.
 */
#ifndef SB_FUZZ_WAL_H
#define SB_FUZZ_WAL_H

#include <stddef.h>
#include <stdint.h>

/* The one archived file the target reads, of this cluster. */
#define FUZZ_WAL_NAME "00000002.history"
#define FUZZ_WAL_SYSID UINT64_C(7301234567890123456)

/* The first byte of an input: what to do with the rest. */
#define FUZZ_WAL_RESEAL 0x01	/* recompute the payload hash and the seal first */

/* Recompute the payload hash (over what follows the header) and the header's seal of a .sbw image. */
extern void fuzz_reseal_wal(uint8_t *p, size_t len);

#endif							/* SB_FUZZ_WAL_H */
