/*
 * sb_worker.h
 *		What the backup code asks of the worker running it.
 */
#ifndef SB_WORKER_H
#define SB_WORKER_H

/* Should the backup stop (cancel, SIGTERM, postmaster gone)? */
extern bool sb_worker_stop_requested(void);

/* Why, in words, for the error message. */
extern const char *sb_worker_stop_reason(void);

#endif							/* SB_WORKER_H */
