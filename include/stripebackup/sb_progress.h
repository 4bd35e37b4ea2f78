/*
 * sb_progress.h
 *		Progress of a running backup, restore or verify, and the tick callback
 *		through which the caller watches it and can ask it to stop.
 */
#ifndef SB_PROGRESS_H
#define SB_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "stripebackup/sb_manifest.h"

typedef struct SbStripeProgress
{
	uint64_t	chunks;			/* chunks written (backup) or read (restore) */
	uint64_t	raw_bytes;		/* their uncompressed bytes */
	uint64_t	stored_bytes;	/* their bytes on the device */
	double		busy_seconds;	/* time spent in device I/O */
	uint32_t	in_flight;		/* transfers queued to the device now */
} SbStripeProgress;

typedef struct SbProgress
{
	uint64_t	raw_bytes_done; /* source bytes read (backup) or restored */
	uint64_t	raw_bytes_total;	/* 0 when unknown */
	uint64_t	files_done;
	double		elapsed_seconds;
	uint32_t	nstripes;
	SbStripeProgress stripes[SB_MAX_STRIPES];
} SbProgress;

/*
 * Called on the caller's thread, with the progress so far, about every 100 ms
 * while the engine works (and never less often).  Return false to stop: the
 * operation then fails with SB_ECANCELED and cleans up after itself.
 */
typedef bool (*SbTickFn) (void *arg, const SbProgress *progress);

#endif							/* SB_PROGRESS_H */
