/*
 * sb_worker.h
 *		What the backup code asks of the worker running it.
 */
#ifndef SB_WORKER_H
#define SB_WORKER_H

#include "stripebackup/sb_error.h"
#include "stripebackup/sb_progress.h"

/* The name of backup ID's temporary WAL slot. */
#define SB_WAL_SLOT_FORMAT "stripebackup_%lld"

/* Should the backup stop (cancel, SIGTERM, postmaster gone)? */
extern bool sb_worker_stop_requested(void);

/* Why, in words, for the error message. */
extern const char *sb_worker_stop_reason(void);

/* The engine's tick in a worker: publish progress; false when the job must stop. */
extern bool sb_worker_tick(void *arg, const SbProgress *progress);

/*
 * ereport(ERROR) saying why the job stops: a cancel, or a failure when the
 * backup's WAL slot was lost.
 */
extern void sb_worker_raise_stop(void) pg_attribute_noreturn();

/* ereport(ERROR) an engine error; a cancel says why the backup was stopped. */
extern void sb_worker_raise(const SbError *err) pg_attribute_noreturn();

#endif							/* SB_WORKER_H */
