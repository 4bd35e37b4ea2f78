/*
 * scheduler.h
 *		Which stripe takes the next chunk in weighted mode.
 *
 * Each stripe i has a quota w_i / W of all chunks.  The next chunk goes to
 * the stripe furthest below its quota (ties to the lower number), which keeps
 * every stripe within one chunk of its exact share at every point of the
 * backup, and interleaves the stripes so all devices work at once.
 */
#ifndef SB_SCHEDULER_H
#define SB_SCHEDULER_H

#include <stdint.h>

typedef struct SbWeightedSchedule
{
	uint32_t	nstripes;
	double		share[64];		/* w_i / W */
	uint64_t	assigned[64];	/* chunks given to each stripe so far */
	uint64_t	total;			/* chunks given so far */
} SbWeightedSchedule;

/* Start a schedule for N stripes with positive WEIGHTS. */
extern void sb_schedule_init(SbWeightedSchedule *s, const double *weights, uint32_t n);

/* The 0-based stripe of the next chunk. */
extern uint32_t sb_schedule_next(SbWeightedSchedule *s);

#endif							/* SB_SCHEDULER_H */
