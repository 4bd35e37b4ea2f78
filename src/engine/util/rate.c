/*
 * rate.c
 *		Keeping a stream of I/O under its rate: each transfer waits until the
 *		bytes so far would have taken that long at the rate.
 */
#include <time.h>

#include "util/fsutil.h"
#include "util/rate.h"

#define MAX_NAP 0.05			/* seconds */

void
sb_rate_init(SbRate *r, double mb_per_second)
{
	r->bytes_per_second = mb_per_second > 0 ? mb_per_second * 1e6 : 0;
	r->start = 0;
	r->bytes = 0;
}

void
sb_rate_wait(SbRate *r, size_t n, bool (*stopped) (void *arg), void *arg)
{
	double		now = sb_monotonic_seconds();
	double		due;

	if (r->bytes_per_second <= 0)
		return;
	if (r->start == 0)
		r->start = now;
	due = r->start + (double) r->bytes / r->bytes_per_second;
	while (due > now && !stopped(arg))
	{
		double		nap = due - now < MAX_NAP ? due - now : MAX_NAP;
		struct timespec ts = {0, (long) (nap * 1e9)};

		nanosleep(&ts, NULL);
		now = sb_monotonic_seconds();
	}
	r->bytes += n;
}
