/*
 * sb_history.h
 *		The history tables (stripe_backup_history, stripe_backup_stripe_history),
 *		written by the backup worker in transactions of its own.
 */
#ifndef SB_HISTORY_H
#define SB_HISTORY_H

#include "access/xlogdefs.h"

#include "sb_shmem.h"

/* What a backup produced, as far as it got. */
typedef struct SbBackupOutcome
{
	XLogRecPtr	start_lsn;
	XLogRecPtr	stop_lsn;
	TimeLineID	timeline;
	SbManifest *manifest;		/* the engine's, on success (malloc'd) */
} SbBackupOutcome;

/* The row of a starting backup, status 'running'. */
extern void sb_history_insert(const SbJobArgs *args);

/* Its end: status, error (or NULL), and what it produced. */
extern void sb_history_finish(const SbJobArgs *args, const char *status, const char *error,
							  const SbBackupOutcome *outcome);

#endif							/* SB_HISTORY_H */
