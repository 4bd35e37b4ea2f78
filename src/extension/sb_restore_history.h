/*
 * sb_restore_history.h
 *		The restore history (stripe_restore_history and its stripes), and the
 *		estimates later plans draw from it.
 */
#ifndef SB_RESTORE_HISTORY_H
#define SB_RESTORE_HISTORY_H

#include "stripebackup/sb_archive.h"
#include "sb_shmem.h"

/* What a restore measured, as far as it got. */
typedef struct SbRestoreOutcome
{
	bool		planned;
	SbPlan		plan;			/* with the estimates it started from */
	char		destinations[SB_MAX_STRIPES][MAXPGPATH];
	bool		completed;
	SbRestoreStats stats;
} SbRestoreOutcome;

/* The destination folder a stripe was read from (DEST of DEST/NAME/stripe-K.sbs). */
extern void sb_restore_stripe_destination(const SbArchive *a, uint32_t stripe, char *buf,
										  size_t len);

/*
 * The plan of A with estimates from the measured speed of each destination
 * in past restores.  Needs a transaction.
 */
extern void sb_restore_plan_with_history(const SbArchive *a, SbPlan *plan);

/* The row of a starting restore, status 'running'. */
extern void sb_restore_history_insert(const SbJobArgs *args);

/* Its end: status, error (or NULL), and what it measured. */
extern void sb_restore_history_finish(const SbJobArgs *args, const char *status, const char *error,
									  const SbRestoreOutcome *outcome);

#endif							/* SB_RESTORE_HISTORY_H */
