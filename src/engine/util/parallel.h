/*
 * parallel.h
 *		Running independent tasks on a fixed number of engine threads.
 *
 * The calling thread works too, as slot 0; threads 1..workers-1 are
 * started for the call and joined before it returns, each blocking every
 * signal (thread.h).  A task knows its slot, so each slot's buffers are
 * used by one thread at a time and memory is workers x a slot's buffers.
 */
#ifndef SB_PARALLEL_H
#define SB_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

/* One task: number TASK, run by the thread that owns SLOT. */
typedef void (*SbParallelTask) (void *arg, size_t task, uint32_t slot);

/*
 * Run FN for every task 0..NTASKS-1, on up to WORKERS threads (never more
 * than there are tasks), each task once.  A thread that cannot be started
 * only means fewer workers: every task still runs.
 */
extern void sb_parallel_run(size_t ntasks, uint32_t workers, SbParallelTask fn, void *arg);

#endif							/* SB_PARALLEL_H */
