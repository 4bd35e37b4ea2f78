/*
 * test_queue.c
 *		The engine's queue (queue.c): first in, first out; as a pool of free
 *		buffers, the last pushed is the first taken again.
 */
#include "harness.h"
#include "util/queue.h"
#include "tests.h"

void
test_queue_order(void)
{
	SbQueue		fifo;
	SbQueue		pool;
	int			items[4] = {1, 2, 3, 4};
	int			i;

	ok(sb_queue_init(&fifo, 4) && sb_queue_init_pool(&pool, 4), "a queue and a pool");
	for (i = 0; i < 3; i++)
	{
		sb_queue_push(&fifo, &items[i]);
		sb_queue_push(&pool, &items[i]);
	}
	is_int(*(int *) sb_queue_pop(&fifo), 1, "a queue gives the oldest first");
	is_int(*(int *) sb_queue_pop(&pool), 3, "a pool gives the newest first");
	sb_queue_push(&pool, &items[3]);
	is_int(*(int *) sb_queue_pop(&pool), 4, "and what came back last");
	is_int(*(int *) sb_queue_try_pop(&pool), 2, "then the ones before it");
	is_int(*(int *) sb_queue_pop(&pool), 1, "in order");
	ok(sb_queue_try_pop(&pool) == NULL, "until it is empty");
	sb_queue_close(&fifo);
	is_int(*(int *) sb_queue_pop(&fifo), 2, "a closed queue is drained");
	is_int(*(int *) sb_queue_pop(&fifo), 3, "in its order");
	ok(sb_queue_pop(&fifo) == NULL, "then gives nothing");
	sb_queue_destroy(&fifo);
	sb_queue_destroy(&pool);
}
