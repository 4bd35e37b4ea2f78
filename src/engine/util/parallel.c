/*
 * parallel.c
 *		Tasks shared out to a fixed number of threads: each takes the next
 *		task number as it finishes the last, so a slow task (a slow device)
 *		holds up only its own thread.
 */
#include <pthread.h>

#include "util/parallel.h"
#include "util/thread.h"

typedef struct Run
{
	pthread_mutex_t mutex;
	size_t		next;
	size_t		ntasks;
	SbParallelTask fn;
	void	   *arg;
} Run;

typedef struct Worker
{
	Run		   *run;
	uint32_t	slot;
} Worker;

/* The next task number, or NTASKS when all are taken. */
static size_t
take_task(Run *run)
{
	size_t		task;

	pthread_mutex_lock(&run->mutex);
	task = run->next;
	if (run->next < run->ntasks)
		run->next++;
	pthread_mutex_unlock(&run->mutex);
	return task;
}

static void *
work(void *arg)
{
	Worker	   *w = arg;
	size_t		task;

	while ((task = take_task(w->run)) < w->run->ntasks)
		w->run->fn(w->run->arg, task, w->slot);
	return NULL;
}

void
sb_parallel_run(size_t ntasks, uint32_t workers, SbParallelTask fn, void *arg)
{
	Run			run = {.next = 0, .ntasks = ntasks, .fn = fn, .arg = arg};
	Worker		slots[64];
	pthread_t	threads[64];
	uint32_t	started = 0;
	uint32_t	n = workers < 1 ? 1 : workers > 64 ? 64 : workers;
	uint32_t	i;
	SbError		ignored;

	if (n > ntasks)
		n = ntasks > 0 ? (uint32_t) ntasks : 1;
	pthread_mutex_init(&run.mutex, NULL);
	for (i = 0; i < n; i++)
		slots[i] = (Worker) {.run = &run, .slot = i};
	for (i = 1; i < n; i++)
	{
		if (!sb_thread_start(&threads[started], work, &slots[i], "parallel task", &ignored))
			break;
		started++;
	}
	work(&slots[0]);
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	pthread_mutex_destroy(&run.mutex);
}
