/*
 * ticker.h
 *		Calls the caller's tick function about every 100 ms, not more often, so
 *		progress costs nothing on the hot path.
 */
#ifndef SB_TICKER_H
#define SB_TICKER_H

#include "stripebackup/sb_progress.h"

#define SB_TICK_INTERVAL 0.1	/* seconds */

typedef struct SbTicker
{
	SbTickFn	fn;
	void	   *arg;
	double		last;
} SbTicker;

extern void sb_ticker_init(SbTicker *t, SbTickFn fn, void *arg);

/* Is a tick due now? */
extern bool sb_ticker_due(const SbTicker *t);

/* Call the tick with PROGRESS; false (and SB_ECANCELED) if the caller says stop. */
extern bool sb_ticker_fire(SbTicker *t, const SbProgress *progress, const char *what,
						   SbError *err);

#endif							/* SB_TICKER_H */
