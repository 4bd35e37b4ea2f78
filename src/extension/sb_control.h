/*
 * sb_control.h
 *		Control of a running job: stop requests (cancel, SIGTERM, the
 *		postmaster gone), the engine's tick, and the one boundary where
 *		engine errors become ereport().  Calls nothing above it.
 */
#ifndef SB_CONTROL_H
#define SB_CONTROL_H

#include "stripebackup/sb_error.h"
#include "stripebackup/sb_progress.h"
#include "sb_compat.h"
#include "sb_job.h"

/* ---------- anywhere ---------- */

/* The SQLSTATE for an engine error (its code, and the errno behind it). */
extern int	sbx_sqlstate(const SbError *err);

/*
 * The engine's stop check (sb_s3_set_stop_check): a cancel, a statement
 * timeout or a terminate is pending, the worker got SIGTERM, or the
 * archiver was asked to shut down.  Reads signal flags only: any thread
 * may call it.
 */
extern bool sbx_control_interrupted(void);

/* ereport(ERROR) an engine error with the SQLSTATE that fits it; a pending interrupt is served first. */
SB_NORETURN extern void sbx_raise(const SbError *err);

/* The engine's tick in a caller's session: stop when the session has an interrupt. */
extern bool sbx_control_session_tick(void *arg, const SbProgress *progress);

/* ---------- in a job's worker ---------- */

/* SIGTERM: stop the job (and cancel what PostgreSQL's code waits for). */
extern void sbx_control_handle_sigterm(SIGNAL_ARGS);

/* The job this worker runs, and how its kind explains a stop (may be NULL). */
extern void sbx_control_begin(const SbJob *job, SbStopReasonFn stop_reason);

/*
 * What the job checks of the server as it runs: CHECK returns why the job
 * cannot go on (a standby promoted under a backup taken from it), or NULL.
 */
typedef const char *(*SbAbortCheckFn) (void);
extern void sbx_control_set_abort_check(SbAbortCheckFn check);

/* Should the job stop (cancel, SIGTERM, postmaster gone, its abort check)? */
extern bool sbx_control_stop_requested(void);

/* Why it stops, as an SQLSTATE (a cancel, or a failure) and words. */
extern int	sbx_control_stop_cause(const char **reason);

/* ereport(ERROR) saying why the job stops. */
SB_NORETURN extern void sbx_control_raise_stop(void);

/* ereport(ERROR) an engine error; a cancel says why the job was stopped. */
SB_NORETURN extern void sbx_control_raise(const SbError *err);

/* The engine's tick in a worker: publish progress; false when the job must stop. */
extern bool sbx_control_worker_tick(void *arg, const SbProgress *progress);

/* After connecting: settings the database's owner chose that could redirect us are pinned. */
extern void sbx_control_pin_settings(void);

/* ERROR if the job must stop (for loops outside the engine). */
extern void sbx_control_check_stop(void);

#endif							/* SB_CONTROL_H */
