/*
 * thread.h
 *		Starting engine threads.  Every engine thread blocks all signals, so
 *		signals (the server's SIGTERM, SIGINT, latches) always reach the
 *		caller's main thread, which alone may act on them.
 */
#ifndef SB_THREAD_H
#define SB_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "stripebackup/sb_error.h"

/* pthread_create with every signal blocked in the new thread. */
extern bool sb_thread_start(pthread_t *thread, void *(*fn) (void *), void *arg,
							const char *what, SbError *err);

/* Number of online CPUs (at least 1). */
extern uint32_t sb_cpu_count(void);

/* The moment MS milliseconds from now, for pthread_cond_timedwait (CLOCK_REALTIME). */
extern struct timespec sb_deadline_in(long ms);

/* The CPU time the calling thread has used, in seconds. */
extern double sb_thread_cpu_seconds(void);

#endif							/* SB_THREAD_H */
