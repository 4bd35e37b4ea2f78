/*
 * test_timeline.c
 *		A stripe writer's timeline (timeline.c): a figure every 0.1 s for a
 *		short backup, a few hundred figures in a bounded room for a ten-hour
 *		one, every figure the bytes at the end of its interval, timelines
 *		brought to a common interval, the last figure the total, and when
 *		each figure was taken as a reader reads it.
 */
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "tests.h"
#include "backup/timeline.h"

/* Bytes written by T seconds at RATE bytes a second. */
static uint64_t
bytes_at(double rate, double t)
{
	return (uint64_t) (rate * t);
}

/*
 * Note a steady RATE every STEP seconds up to SECONDS; false if the figures
 * ever outgrew their room.
 */
static bool
run_steady(SbTimeline *t, double rate, double step, double seconds)
{
	bool		within_room = true;
	long		k;

	sb_timeline_init(t);
	for (k = 1; k * step <= seconds; k++)
	{
		sb_timeline_note(t, k * step, bytes_at(rate, k * step));
		within_room = within_room && t->count <= SB_TIMELINE_MAX_FIGURES - 1;
	}
	return within_room;
}

/*
 * Is every figure the bytes at the end of its interval, as the first note
 * at or after that end saw them (notes are STEP apart)?
 */
static bool
figures_match(const SbTimeline *t, double rate, double step)
{
	uint32_t	i;

	for (i = 0; i < t->count; i++)
	{
		double		end = (i + 1) * t->interval;

		if (t->figures[i] < bytes_at(rate, end) - 1 || t->figures[i] > bytes_at(rate, end + step) + 1)
		{
			diag("figure %u (at %.1f s) is %llu", i, end, (unsigned long long) t->figures[i]);
			return false;
		}
	}
	return true;
}

/* Two seconds noted every 10 ms: twenty figures 0.1 s apart, then the total. */
void
test_timeline_short_backup(void)
{
	SbTimeline *t = malloc(sizeof(SbTimeline));
	SbStripeInfo s = {0};
	SbError		err;

	ok(run_steady(t, 50e6, 0.01, 2.08), "the figures stay within their room");
	ok(t->interval == SB_TIMELINE_FIRST_INTERVAL, "the interval stays 0.1 s (%g)", t->interval);
	is_int(t->count, 20, "a figure for each tenth of a second");
	ok(figures_match(t, 50e6, 0.01), "each the bytes written by the end of its tenth");
	ok(sb_timeline_export(t, 2.08, bytes_at(50e6, 2.08), &s, &err), "exported");
	is_int(s.ntimeline, 21, "the manifest gets those and the total");
	ok(s.timeline_interval == 0.1 && s.timeline[20] == bytes_at(50e6, 2.08), "the interval and the total");
	free(s.timeline);
	free(t);
}

/* Ten hours noted every half second: the interval doubles, the figures stay a few hundred. */
void
test_timeline_long_backup(void)
{
	SbTimeline *t = malloc(sizeof(SbTimeline));
	SbStripeInfo s = {0};
	SbError		err;

	ok(run_steady(t, 100e6, 0.5, 36000), "ten hours: the figures never outgrow their room");
	ok(fabs(t->interval - 102.4) < 1e-9, "the interval doubled ten times, to 102.4 s (%g)", t->interval);
	is_int(t->count, 351, "351 figures cover 35942 s");
	ok(figures_match(t, 100e6, 0.5), "each still the bytes by the end of its (doubled) interval");
	ok(sb_timeline_export(t, 36000, bytes_at(100e6, 36000), &s, &err), "exported");
	ok(s.ntimeline == 352 && s.ntimeline <= SB_TIMELINE_MAX_FIGURES,
	   "with the total: %u figures", s.ntimeline);
	free(s.timeline);
	free(t);
}

/* A writer that waited, and timelines brought to a coarser one's interval. */
void
test_timeline_wait_and_coarsen(void)
{
	SbTimeline *t = malloc(sizeof(SbTimeline));
	uint32_t	i;

	sb_timeline_init(t);
	sb_timeline_note(t, 0.05, 0);
	is_int(t->count, 0, "no figure before the first interval ends");
	sb_timeline_note(t, 0.35, 100);
	sb_timeline_note(t, 0.71, 100);
	is_int(t->count, 7, "waiting until 0.71 s: a figure for each of seven intervals");
	ok(t->figures[0] == 100 && t->figures[6] == 100, "each with the bytes there were");
	for (i = 0; i < 7; i++)
		t->figures[i] = i + 1;
	sb_timeline_coarsen_to(t, 0.1);
	is_int(t->count, 7, "brought to its own interval, nothing changes");
	sb_timeline_coarsen_to(t, 0.4);
	ok(fabs(t->interval - 0.4) < 1e-12 && t->count == 1 && t->figures[0] == 4,
	   "brought to 0.4 s: the one figure at 0.4 s remains (%u figures, the first %llu)",
	   t->count, (unsigned long long) t->figures[0]);
	free(t);
}

/* The total at finished_after replaces a figure taken less than half an interval before. */
void
test_timeline_export_end(void)
{
	SbTimeline *t = malloc(sizeof(SbTimeline));
	SbStripeInfo s = {0};
	SbError		err;

	sb_timeline_init(t);
	sb_timeline_note(t, 1.01, 10);
	is_int(t->count, 10, "ten figures to 1.0 s");
	ok(sb_timeline_export(t, 1.03, 99, &s, &err), "exported, finished at 1.03 s");
	ok(s.ntimeline == 10 && s.timeline[9] == 99,
	   "the figure at 1.0 s gives way to the total (%u figures)", s.ntimeline);
	free(s.timeline);
	ok(sb_timeline_export(t, 1.06, 99, &s, &err), "exported, finished at 1.06 s");
	ok(s.ntimeline == 11 && s.timeline[9] == 10 && s.timeline[10] == 99,
	   "it stays, the total after it (%u figures)", s.ntimeline);
	s.finished_after = 1.06;
	ok(fabs(sb_stripe_timeline_seconds(&s, 0) - 0.1) < 1e-12 &&
	   fabs(sb_stripe_timeline_seconds(&s, 9) - 1.0) < 1e-12 &&
	   sb_stripe_timeline_seconds(&s, 10) == 1.06,
	   "the figures are read back at 0.1 s, ..., 1.0 s, and the total at 1.06 s");
	s.finished_after = 0;
	ok(fabs(sb_stripe_timeline_seconds(&s, 10) - 1.1) < 1e-12,
	   "without a time of its own, the total an interval after the figure before it");
	free(s.timeline);
	sb_timeline_init(t);
	ok(sb_timeline_export(t, 0.02, 7, &s, &err) && s.ntimeline == 1 && s.timeline[0] == 7,
	   "a backup shorter than an interval: the total alone");
	free(s.timeline);
	free(t);
}
