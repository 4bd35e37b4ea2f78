/*
 * thread.c
 *		Thread start with all signals blocked.
 */
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/thread.h"

bool
sb_thread_start(pthread_t *thread, void *(*fn) (void *), void *arg,
				const char *what, SbError *err)
{
	sigset_t	all,
				old;
	int			rc;

	/* The new thread inherits the mask in force when it is created. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return sb_error_set_errno(err, rc, "could not start %s thread", what);
	return true;
}

struct timespec
sb_deadline_in(long ms)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += (ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L)
	{
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	return deadline;
}

uint32_t
sb_cpu_count(void)
{
	long		n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (uint32_t) n : 1;
}

double
sb_thread_cpu_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}
