/*
 * queue.h
 *		A bounded, blocking queue of pointers between engine threads.
 *
 * close() lets consumers drain what is left and then get NULL; abort() wakes
 * everyone at once and makes every push and pop fail, so a pipeline can stop
 * on the first error without deadlock.
 */
#ifndef SB_QUEUE_H
#define SB_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct SbQueue
{
	pthread_mutex_t mutex;
	pthread_cond_t not_empty;
	pthread_cond_t not_full;
	void	  **items;
	size_t		capacity;
	size_t		head;
	size_t		count;
	bool		closed;
	bool		aborted;
	bool		newest_first;	/* a pool: pops take what was pushed last */
} SbQueue;

/* Set up a queue holding at most CAPACITY items; false if out of memory. */
extern bool sb_queue_init(SbQueue *q, size_t capacity);

/*
 * A pool of free buffers: a queue whose pops take the item pushed last, so
 * that the buffers in use are the same few as long as few are needed, and
 * the memory of the others is never touched (a buffer's first use costs a
 * page fault per page: on this machine's virtual machine, 30-45 ms for the
 * 12 buffers a small cluster's backup did not need).
 */
extern bool sb_queue_init_pool(SbQueue *q, size_t capacity);
extern void sb_queue_destroy(SbQueue *q);

/* Add an item, waiting for room; false if the queue was aborted. */
extern bool sb_queue_push(SbQueue *q, void *item);

/*
 * Add an item without ever waiting: the queue grows when full (a thread
 * that must not wait on its consumer, who may be waiting on it).  False if
 * aborted, or out of memory.
 */
extern bool sb_queue_push_growing(SbQueue *q, void *item);

/* Take an item, waiting for one; NULL once closed and empty, or aborted. */
extern void *sb_queue_pop(SbQueue *q);

/*
 * Like sb_queue_pop, but gives up after TIMEOUT_MS: then returns NULL with
 * *timed_out set.
 */
extern void *sb_queue_pop_timed(SbQueue *q, int timeout_ms, bool *timed_out);

/* Take an item if one is there, without waiting; NULL otherwise. */
extern void *sb_queue_try_pop(SbQueue *q);

/* No more pushes; consumers drain the rest. */
extern void sb_queue_close(SbQueue *q);

/* Stop everything: all waiters wake up and fail. */
extern void sb_queue_abort(SbQueue *q);

#endif							/* SB_QUEUE_H */
