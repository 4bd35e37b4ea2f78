/*
 * scheduler.c
 *		Largest-deficit assignment of chunks to stripes (weighted mode).
 */
#include "backup/scheduler.h"

void
sb_schedule_init(SbWeightedSchedule *s, const double *weights, uint32_t n)
{
	double		sum = 0;
	uint32_t	i;

	for (i = 0; i < n; i++)
		sum += weights[i];
	s->nstripes = n;
	s->total = 0;
	for (i = 0; i < n; i++)
	{
		s->share[i] = weights[i] / sum;
		s->assigned[i] = 0;
	}
}

uint32_t
sb_schedule_next(SbWeightedSchedule *s)
{
	uint32_t	best = 0;
	double		best_deficit = -1e300;
	uint32_t	i;

	for (i = 0; i < s->nstripes; i++)
	{
		double		deficit = s->share[i] * (double) (s->total + 1) - (double) s->assigned[i];

		if (deficit > best_deficit)
		{
			best = i;
			best_deficit = deficit;
		}
	}
	s->assigned[best]++;
	s->total++;
	return best;
}
