/*
 * fixture.h
 *		The small, fixed archive the stripe fuzz target reads, and helpers the
 *		fuzz targets and the seed generator share.
 *
 * The archive is built with the engine itself (sb_backup_begin ...), from
 * fixed content with a fixed backup id, its manifest then made the same on
 * every run (fixed times, destinations "/fuzz/d1" and "/fuzz/d2"), so that
 * the stripe files the seed generator wrote once match the manifest the
 * fuzz target builds at start-up.
 */
#ifndef SB_FUZZ_FIXTURE_H
#define SB_FUZZ_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_backup.h"

/* Two destinations; stripe 1 is the one the fuzz target replaces. */
#define FUZZ_NDESTS 2

/* Backup folder names of the two fixture archives, in every destination. */
#define FUZZ_NAME_ZSTD "fuzz-zstd"
#define FUZZ_NAME_NONE "fuzz-none"

/* The first byte of a stripe fuzz input: what to do with the rest. */
#define FUZZ_STRIPE_RESEAL 0x01 /* recompute seals and hashes first */
#define FUZZ_STRIPE_RESTORE 0x02	/* restore too, not only verify */
#define FUZZ_STRIPE_NONE 0x04	/* pair it with the uncompressed archive */

/* A new folder DIR/TAG-XXXXXX; false with a message on stderr. */
extern bool fuzz_tempdir(const char *dir, const char *tag, char *out, size_t outlen);

/* Remove a tree without following symlinks; quiet. */
extern void fuzz_rmtree(const char *path);

/*
 * Create ROOT/d1 and ROOT/d2 (if missing) and back the fixed content up into
 * them as backup NAME with CODEC and the fixed backup id, its manifest then
 * fixed.  The backup folder of destination 1 is ROOT/d1/NAME; the manifest
 * records the destinations as /fuzz/d1 and /fuzz/d2, so a reader is told
 * where stripe 2 is (sb_archive_set_stripe_dir).
 */
extern bool fuzz_make_fixture(const char *root, const char *name, SbCodec codec,
							  SbError *err);

/* Recompute every seal and stored-payload hash a stripe image carries. */
extern void fuzz_reseal_stripe(uint8_t *p, size_t len);

#endif							/* SB_FUZZ_FIXTURE_H */
