/*
 * sb_pgrestore.h
 *		Restoring a backup into a directory while the server runs (run by a
 *		worker for stripe_restore()), and the checks its arguments get.
 */
#ifndef SB_PGRESTORE_H
#define SB_PGRESTORE_H

#include "stripebackup/sb_archive.h"
#include "sb_restore_history.h"
#include "sb_shmem.h"

/* Open the backup at LOCATION; ERROR (no manifest, damaged manifest) if it cannot. */
extern SbArchive *sb_pgrestore_open(const char *location);

/* The first destination folder of backup ID (from history) that has a manifest. */
extern char *sb_pgrestore_location_of(int64 backup_id);

/* Restore as ARGS says; ERROR if it fails (what it wrote is removed). */
extern void sb_pgrestore_run(const SbJobArgs *args, SbRestoreOutcome *outcome);

#endif							/* SB_PGRESTORE_H */
