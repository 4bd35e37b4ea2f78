/*
 * fuzz_wal.h
 *		The archive the WAL fuzz target reads, and its input's flag byte,
 *		shared with the seed generator.
 */
#ifndef SB_FUZZ_WAL_H
#define SB_FUZZ_WAL_H

#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_crypto.h"

/* The one archived file the target reads, of this cluster. */
#define FUZZ_WAL_NAME "00000002.history"
#define FUZZ_WAL_SYSID UINT64_C(7301234567890123456)

/* The first byte of an input: what to do with the rest. */
#define FUZZ_WAL_RESEAL 0x01	/* recompute the payload hash and the seal first */
#define FUZZ_WAL_KEYED 0x02		/* read the archive under fuzz_wal_key's key */

/* The key of the sealed seeds and of keyed inputs: 48 bytes of 'k'. */
extern void fuzz_wal_key(SbKey *key);

/*
 * Make a .sbw image's stored length the payload's and prove its header
 * again: format 1.0, the payload hash and the XXH3 seal; 2.0, when KEY is
 * given, the tag under the keys its fields give (the payload's own GCM
 * tag stays what it was).
 */
extern void fuzz_reseal_wal(uint8_t *p, size_t len, const SbKey *key);

#endif							/* SB_FUZZ_WAL_H */
