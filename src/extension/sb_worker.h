/*
 * sb_worker.h
 *		What the backup code asks of the worker running it.
 */
#ifndef SB_WORKER_H
#define SB_WORKER_H

#include "stripebackup/sb_error.h"
#include "stripebackup/sb_progress.h"

/* Should the backup stop (cancel, SIGTERM, postmaster gone)? */
extern bool sb_worker_stop_requested(void);

/* Why, in words, for the error message. */
extern const char *sb_worker_stop_reason(void);

/* The engine's tick in a worker: publish progress; false when the job must stop. */
extern bool sb_worker_tick(void *arg, const SbProgress *progress);

/* ereport(ERROR) an engine error; a cancel says why the backup was stopped. */
extern void sb_worker_raise(const SbError *err) pg_attribute_noreturn();

#endif							/* SB_WORKER_H */
