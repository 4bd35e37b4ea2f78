/*
 * ticker.c
 *		Rate-limited calls of the caller's tick function.
 */
#include "util/fsutil.h"
#include "util/ticker.h"

void
sb_ticker_init(SbTicker *t, SbTickFn fn, void *arg)
{
	t->fn = fn;
	t->arg = arg;
	t->last = sb_monotonic_seconds();
}

bool
sb_ticker_due(const SbTicker *t)
{
	return t->fn != NULL && sb_monotonic_seconds() - t->last >= SB_TICK_INTERVAL;
}

bool
sb_ticker_fire(SbTicker *t, const SbProgress *progress, const char *what, SbError *err)
{
	t->last = sb_monotonic_seconds();
	if (t->fn != NULL && !t->fn(t->arg, progress))
		return sb_error_set(err, SB_ECANCELED, "%s canceled", what);
	return true;
}
