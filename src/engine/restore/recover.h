/*
 * recover.h
 *		Giving back a chunk record of a lost stripe, or one damaged in its
 *		stripe, from the other members of its parity group (docs/FORMAT.md
 *		section 10.4).
 *
 * Two layers.  sb_recover_member is the arithmetic and the checks alone:
 * the caller's READ function hands it each other member of the group (or
 * says it is lost or failed its check), and it pads K good ones to the
 * group's length L, decodes, and checks what came out (its header's seal,
 * kind and id, trailing zeros, its payload's stored hash).  SbRecovery
 * puts stripes under it: its own handle on each stripe that is not lost
 * (a stripe reader's handle belongs to its reader thread, and an object's
 * handle is not safe from two threads), so each thread that recovers owns
 * one SbRecovery.
 */
#ifndef SB_RECOVER_H
#define SB_RECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_manifest.h"
#include "format/format.h"
#include "format/parity.h"
#include "restore/stripe_reader.h"

/* What a READ function says of one member. */
typedef enum SbMemberStatus
{
	SB_MEMBER_GOOD,				/* read and checked: *LEN bytes in the buffer */
	SB_MEMBER_NONE,				/* a data member the group does not have: all zeros */
	SB_MEMBER_LOST				/* on a lost stripe, unreadable or failing its check */
} SbMemberStatus;

/*
 * Member MEMBER of GROUP into BUF (CAP bytes), its length into *LEN; a
 * reason into WHY when lost.
 */
typedef SbMemberStatus (*SbMemberReadFn) (void *arg, uint64_t group, uint32_t member,
										  uint8_t *buf, size_t cap, size_t *len, SbError *why);

/*
 * Member WANT of GROUP, recovered from the others READ gives into OUT (at
 * least CAP bytes: the largest record a group of the backup can have), its
 * decoded header into *HEADER and its length into *LEN.  WANT_KIND and
 * WANT_ID are what it must be (a data chunk's id, or a parity id).  False
 * (ERR naming the group and every member that could not be used) with fewer
 * than K good members, or when what came out fails its checks.
 */
extern bool sb_recover_member(const SbParityLayout *layout, const SbParityCoder *coder,
							  uint64_t group, uint32_t want, int want_kind, uint64_t want_id,
							  SbMemberReadFn read, void *arg, size_t cap,
							  uint8_t *out, size_t *len, SbChunkHeader *header, SbError *err);

/*
 * A data record recovered into OUT (L bytes, the group's length) as chunk
 * WANT_ID: its header (into *H), its length (into *LEN: at most L, zeros
 * after it), its stored hash.
 */
extern bool sb_recover_check_record(const uint8_t *out, size_t L, uint64_t want_id, size_t *len,
									SbChunkHeader *h, SbError *err);

/* What the index would have been checked for: HEADER against M's chunk CHUNK_ID. */
extern bool sb_recover_check_manifest(const SbManifest *m, const SbChunkHeader *header,
									  uint64_t chunk_id, SbError *err);

/* The largest chunk record of a backup: header, chunk_size, and the seal's overhead. */
extern size_t sb_recover_record_cap(const SbManifest *m);

/* Recovering from a backup's stripes; one per thread. */
typedef struct SbRecovery
{
	const SbManifest *manifest;
	SbParityLayout layout;
	SbParityCoder coder;
	bool		lost[SB_MAX_STRIPES];	/* not read from: lost, or failed to open */
	SbStripeReader readers[SB_MAX_STRIPES];	/* this recovery's own, where not lost */
	size_t		cap;			/* sb_recover_record_cap */
	uint8_t    *record;			/* one record read, before it is checked */
} SbRecovery;

/*
 * Open every stripe of PATHS (objects reached with S3) not LOST (stripes that fail to open now are
 * lost too).  False (ERR) when the manifest has no redundancy or memory runs
 * out; a recovery with too many lost stripes opens, and each member it is
 * asked for is refused with the reason.
 */
extern bool sb_recovery_open(SbRecovery *r, const SbManifest *m, char *const *paths,
							 const SbS3Settings *s3, const bool *lost, SbError *err);

/*
 * Data chunk CHUNK_ID's record into OUT (sb_recover_record_cap bytes), its
 * header into *HEADER (for the read pipeline, in place of an index entry)
 * and its length into *LEN.
 */
extern bool sb_recovery_chunk(SbRecovery *r, uint64_t chunk_id, uint8_t *out, size_t *len,
							  SbChunkHeader *header, SbError *err);

/* Parity record PARITY_ID's record, the same way (rebuild). */
extern bool sb_recovery_parity(SbRecovery *r, uint64_t parity_id, uint8_t *out, size_t *len,
							   SbChunkHeader *header, SbError *err);

extern void sb_recovery_close(SbRecovery *r);

/* The index entry of a recovered record (OFFSET 0: it is in no stripe). */
extern void sb_recover_entry(const SbChunkHeader *h, SbIndexEntry *e);

/*
 * Verify's check of every parity record of A's stripes that are not lost
 * (verify_parity.c): each damaged one is a problem to ON_PROBLEM, of its
 * stripe, made up for (the data it covers is whole).  Returns how many
 * problems; UINT64_MAX (ERR) when the check could not run.
 */
extern uint64_t sb_verify_parity(const SbArchive *a, SbProblemFn on_problem,
								 void *problem_arg, SbError *err);

#endif							/* SB_RECOVER_H */
