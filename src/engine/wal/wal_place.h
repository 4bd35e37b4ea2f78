/*
 * wal_place.h
 *		Where the copies of an archived WAL file go: the destination each
 *		copy goes to by weight (M + 1 of them with redundancy M), the bytes
 *		each destination holds that the weights are measured against, and
 *		the destinations a file is archived without when they fail.
 */
#ifndef SB_WAL_PLACE_H
#define SB_WAL_PLACE_H

#include <pthread.h>

#include "wal/wal_internal.h"

/* No destination can take a copy. */
#define SB_WAL_NO_DESTINATION UINT32_MAX

#define SB_WAL_DEST_BIT(d) ((uint64_t) 1 << (d))

typedef struct SbWalPlacement
{
	uint32_t	ndests;
	SbBalance	balance;
	uint32_t	redundancy;		/* M: a file is archived once M + 1 destinations hold it */
	double		share[SB_MAX_STRIPES];	/* w_i / W */
	pthread_mutex_t lock;		/* guards what follows */
	bool		counted;		/* held[] started from what the destinations hold */
	uint64_t	held[SB_MAX_STRIPES];	/* bytes of segment files per destination */
	uint32_t	in_flight[SB_MAX_STRIPES];	/* segments being written to each */
} SbWalPlacement;

/* The placement of the archive O opens (its options checked): nothing counted yet. */
extern void sb_wal_place_init(SbWalPlacement *p, const SbWalArchiveOptions *o);
extern void sb_wal_place_destroy(SbWalPlacement *p);

/* Once per archive: what each of the FOLDERS (one per destination) holds, from a listing. */
extern void sb_wal_place_count(SbWalPlacement *p, SbWalFolder *folders);

/* The bytes each destination holds, as counted, into BYTES (room for every destination). */
extern void sb_wal_place_held(SbWalPlacement *p, uint64_t *bytes);

/*
 * The destination of a copy of SIZE bytes among those not in EXCLUDED
 * (holding it already, or failed), counted there at once;
 * SB_WAL_NO_DESTINATION when every one is excluded.  Each call must be
 * followed by sb_wal_place_finish.
 */
extern uint32_t sb_wal_place_choose(SbWalPlacement *p, uint64_t size, uint64_t excluded);

/* The write to D ended: count the bytes it really holds (ACTUAL, 0 on failure) instead of ESTIMATE. */
extern void sb_wal_place_finish(SbWalPlacement *p, uint32_t d, uint64_t estimate, uint64_t actual);

/* Do enough destinations (M + 1) hold the file R is about? */
extern bool sb_wal_place_enough(const SbWalPlacement *p, const SbWalPushResult *r);

/*
 * Destination D (DEST) failed the file with ERR.  Without redundancy that
 * fails the file (false, ERR kept); with it, the destination is done
 * without and noted in R, and the file goes on to the others.  A failure
 * of the WAL file itself (SOURCE_FAILED) is never a destination's.
 */
extern bool sb_wal_place_skip(const SbWalPlacement *p, uint32_t d, const char *dest, bool source_failed,
							  SbWalPushResult *r, SbError *err);

/* Fewer destinations hold the file than the redundancy asks: ERR says so; false. */
extern bool sb_wal_place_too_few(const SbWalPlacement *p, const SbWalPushResult *r, SbError *err);

#endif							/* SB_WAL_PLACE_H */
