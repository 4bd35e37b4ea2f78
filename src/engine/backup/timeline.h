/*
 * timeline.h
 *		A stripe's timeline while its backup runs: its stored bytes at the end
 *		of every sampling interval, in a bounded number of figures whatever
 *		the length of the backup (timeline.c).
 */
#ifndef SB_TIMELINE_H
#define SB_TIMELINE_H

#include <stdint.h>

#include "stripebackup/sb_manifest.h"

#define SB_TIMELINE_FIRST_INTERVAL 0.1	/* seconds */

typedef struct SbTimeline
{
	double		interval;		/* seconds: the first interval times a power of two */
	uint32_t	count;			/* figures taken */
	/* figure i: stored bytes by (i + 1) * interval; room is left for the total */
	uint64_t	figures[SB_TIMELINE_MAX_FIGURES - 1];
} SbTimeline;

/* An empty timeline at the first (finest) interval. */
extern void sb_timeline_init(SbTimeline *t);

/*
 * BYTES as the figure of every interval that ended by ELAPSED seconds and has
 * none yet; when the figures would not fit, the interval doubles first.
 */
extern void sb_timeline_note(SbTimeline *t, double elapsed, uint64_t bytes);

/* Double T's interval until it is INTERVAL (another timeline's, never finer). */
extern void sb_timeline_coarsen_to(SbTimeline *t, double interval);

/*
 * The timeline as the manifest keeps it, into S (timeline, ntimeline,
 * timeline_interval): the figures taken, then TOTAL at FINISHED_AFTER
 * seconds.  False (SB_ENOMEM) if memory runs out.
 */
extern bool sb_timeline_export(const SbTimeline *t, double finished_after, uint64_t total,
							   SbStripeInfo *s, SbError *err);

#endif							/* SB_TIMELINE_H */
