/*
 * sb_launch.h
 *		Starting a job in a background worker and waiting for it, as
 *		stripe_backup() and stripe_restore() do.
 */
#ifndef SB_LAUNCH_H
#define SB_LAUNCH_H

#include "sb_job.h"

/* ERROR unless the caller may read (and, if WRITE, also write) server files. */
extern void sbx_launch_check_privileges(bool write, const char *what);

/*
 * A new job of KIND in this database for the current user, with the next id
 * of its kind (the extension's sequence, without its ACL) and empty
 * arguments, in the current memory context.
 */
/*
 * ERROR when the server is a standby (in recovery) and a job of KIND
 * records its history in tables only a primary can write: every kind but a
 * backup, which keeps it in a file of the standby's (sb_standby_history.c).
 */
extern void sbx_launch_check_primary(SbJobKind kind);

/* ERROR on a standby: FUNCTION ("stripe_keep()") writes the extension's tables. */
extern void sbx_launch_check_writable(const char *function);

extern SbJob *sbx_launch_new_job(SbJobKind kind);

/*
 * Claim the job slot for JOB, start its worker, and wait: until the job ends
 * (WAIT) or has its history row.  ERROR with the job's own SQLSTATE, message,
 * detail and hint if it failed or was cancelled.  Whatever ends the wait
 * (a cancel, statement_timeout, the session's end) cancels the job.
 */
extern void sbx_launch_run(const SbJob *job, bool wait);

#endif							/* SB_LAUNCH_H */
