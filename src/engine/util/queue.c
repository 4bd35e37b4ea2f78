/*
 * queue.c
 *		Bounded blocking queue (mutex and two condition variables).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "util/queue.h"
#include "util/thread.h"

bool
sb_queue_init(SbQueue *q, size_t capacity)
{
	q->items = calloc(capacity, sizeof(void *));
	if (q->items == NULL)
		return false;
	q->capacity = capacity;
	q->head = 0;
	q->count = 0;
	q->closed = false;
	q->aborted = false;
	q->newest_first = false;
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->not_empty, NULL);
	pthread_cond_init(&q->not_full, NULL);
	return true;
}

bool
sb_queue_init_pool(SbQueue *q, size_t capacity)
{
	if (!sb_queue_init(q, capacity))
		return false;
	q->newest_first = true;
	return true;
}

void
sb_queue_destroy(SbQueue *q)
{
	if (q->items == NULL)
		return;
	pthread_mutex_destroy(&q->mutex);
	pthread_cond_destroy(&q->not_empty);
	pthread_cond_destroy(&q->not_full);
	free(q->items);
	q->items = NULL;
}

bool
sb_queue_push(SbQueue *q, void *item)
{
	bool		ok;

	pthread_mutex_lock(&q->mutex);
	while (q->count == q->capacity && !q->aborted)
		pthread_cond_wait(&q->not_full, &q->mutex);
	ok = !q->aborted;
	if (ok)
	{
		q->items[(q->head + q->count) % q->capacity] = item;
		q->count++;
		pthread_cond_signal(&q->not_empty);
	}
	pthread_mutex_unlock(&q->mutex);
	return ok;
}

/* Twice the room, the items kept in order from the head (the caller holds the mutex). */
static bool
grow_locked(SbQueue *q)
{
	size_t		capacity = q->capacity ? 2 * q->capacity : 16;
	void	  **items = malloc(capacity * sizeof(void *));
	size_t		i;

	if (items == NULL)
		return false;
	for (i = 0; i < q->count; i++)
		items[i] = q->items[(q->head + i) % q->capacity];
	free(q->items);
	q->items = items;
	q->capacity = capacity;
	q->head = 0;
	return true;
}

bool
sb_queue_push_growing(SbQueue *q, void *item)
{
	bool		ok;

	pthread_mutex_lock(&q->mutex);
	ok = !q->aborted && (q->count < q->capacity || grow_locked(q));
	if (ok)
	{
		q->items[(q->head + q->count) % q->capacity] = item;
		q->count++;
		pthread_cond_signal(&q->not_empty);
	}
	pthread_mutex_unlock(&q->mutex);
	return ok;
}

/* Take the head item (a pool's: the tail); the caller holds the mutex and has checked count. */
static void *
take_locked(SbQueue *q)
{
	void	   *item;

	if (q->newest_first)
		item = q->items[(q->head + q->count - 1) % q->capacity];
	else
	{
		item = q->items[q->head];
		q->head = (q->head + 1) % q->capacity;
	}
	q->count--;
	pthread_cond_signal(&q->not_full);
	return item;
}

void *
sb_queue_pop(SbQueue *q)
{
	bool		timed_out;

	return sb_queue_pop_timed(q, -1, &timed_out);
}

void *
sb_queue_pop_timed(SbQueue *q, int timeout_ms, bool *timed_out)
{
	struct timespec deadline;
	void	   *item = NULL;

	*timed_out = false;
	if (timeout_ms >= 0)
		deadline = sb_deadline_in(timeout_ms);
	pthread_mutex_lock(&q->mutex);
	while (q->count == 0 && !q->closed && !q->aborted && !*timed_out)
	{
		if (timeout_ms < 0)
			pthread_cond_wait(&q->not_empty, &q->mutex);
		else if (pthread_cond_timedwait(&q->not_empty, &q->mutex, &deadline) == ETIMEDOUT)
			*timed_out = true;
	}
	if (!q->aborted && q->count > 0)
	{
		item = take_locked(q);
		*timed_out = false;
	}
	pthread_mutex_unlock(&q->mutex);
	return item;
}

void *
sb_queue_try_pop(SbQueue *q)
{
	void	   *item = NULL;

	pthread_mutex_lock(&q->mutex);
	if (!q->aborted && q->count > 0)
		item = take_locked(q);
	pthread_mutex_unlock(&q->mutex);
	return item;
}

void
sb_queue_close(SbQueue *q)
{
	if (q->items == NULL)
		return;					/* never set up */
	pthread_mutex_lock(&q->mutex);
	q->closed = true;
	pthread_cond_broadcast(&q->not_empty);
	pthread_mutex_unlock(&q->mutex);
}

void
sb_queue_abort(SbQueue *q)
{
	if (q->items == NULL)
		return;					/* never set up */
	pthread_mutex_lock(&q->mutex);
	q->aborted = true;
	pthread_cond_broadcast(&q->not_empty);
	pthread_cond_broadcast(&q->not_full);
	pthread_mutex_unlock(&q->mutex);
}
