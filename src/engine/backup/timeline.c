/*
 * timeline.c
 *		Each stripe writer's record of its stored bytes over time, from which
 *		the chart of a backup is drawn (report.c) and the extension's
 *		stripe_backup_timeline is filled.
 *
 * A figure is taken at the end of every interval, 0.1 s at first, so that a
 * backup of two seconds has twenty points per stripe.  When the figures
 * would outgrow their fixed room (SB_TIMELINE_MAX_FIGURES, the total
 * included), the interval doubles and every other figure goes: figures are
 * cumulative bytes, so the ones kept, at the ends of the doubled intervals,
 * lose nothing but resolution.  A ten-hour backup ends with a few hundred
 * figures 102.4 s apart, and a writer never allocates while it runs.
 */
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"
#include "backup/timeline.h"

#define ROOM (SB_TIMELINE_MAX_FIGURES - 1)	/* the total is added at the end */

void
sb_timeline_init(SbTimeline *t)
{
	t->interval = SB_TIMELINE_FIRST_INTERVAL;
	t->count = 0;
}

/* Twice the interval: keep the figures that end a doubled interval (1, 3, 5, ...). */
static void
coarsen(SbTimeline *t)
{
	uint32_t	i;

	for (i = 0; 2 * i + 1 < t->count; i++)
		t->figures[i] = t->figures[2 * i + 1];
	t->count /= 2;
	t->interval *= 2;
}

void
sb_timeline_note(SbTimeline *t, double elapsed, uint64_t bytes)
{
	while ((t->count + 1) * t->interval <= elapsed)
	{
		if (t->count == ROOM)
			coarsen(t);
		else
			t->figures[t->count++] = bytes;
	}
}

void
sb_timeline_coarsen_to(SbTimeline *t, double interval)
{
	/* Intervals are the first one times powers of two: halfway apart at least. */
	while (t->interval * 1.5 < interval)
		coarsen(t);
}

bool
sb_timeline_export(const SbTimeline *t, double finished_after, uint64_t total,
				   SbStripeInfo *s, SbError *err)
{
	uint32_t	n = t->count;

	/*
	 * The total ends the last interval: a figure taken less than half an
	 * interval before it gives way, so no sliver of time divides the last
	 * bytes into an exaggerated rate.
	 */
	while (n > 0 && n * t->interval > finished_after - t->interval / 2)
		n--;
	s->timeline = sb_alloc((n + 1) * sizeof(uint64_t), err);
	if (s->timeline == NULL)
		return false;
	memcpy(s->timeline, t->figures, n * sizeof(uint64_t));
	s->timeline[n] = total;
	s->ntimeline = n + 1;
	s->timeline_interval = t->interval;
	return true;
}
