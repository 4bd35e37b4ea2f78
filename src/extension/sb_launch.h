/*
 * sb_launch.h
 *		Starting a backup or restore in a background worker and waiting for
 *		it, as stripe_backup() and stripe_restore() do.
 */
#ifndef SB_LAUNCH_H
#define SB_LAUNCH_H

#include "sb_shmem.h"

/* ERROR unless the caller may read (and, if WRITE, also write) server files. */
extern void sb_launch_check_privileges(bool write, const char *what);

/* The next id from the extension's sequence SEQUENCE, without its ACL. */
extern int64 sb_launch_next_id(const char *sequence);

/*
 * Claim the job slot for ARGS, start its worker, and wait: until the job ends
 * (WAIT) or has its history row.  ERROR with the job's reason if it failed or
 * was cancelled.  Cancelling the caller while it waits cancels the job.
 */
extern void sb_launch_run(const SbJobArgs *args, bool wait);

#endif							/* SB_LAUNCH_H */
