/*
 * entry_window.h
 *		The files whose data a restore or verify is reading now, taken from
 *		the manifest's spooled entries (entry_spool.h) as the readers reach
 *		them and let go as soon as every chunk that holds their data is done:
 *		memory follows the chunks in flight, not the number of files.
 *
 * The entries are in stream order, so the window is a run of files: the
 * readers may read a chunk only once the window holds every file it touches
 * (sb_entry_window_admit), and the window's low end moves on as chunks are
 * done (sb_entry_window_done), in whatever order the workers finish them.
 * The window holds at most MAX_FILES files, except that the lowest chunk not
 * done is always admitted whatever it holds, so the run always moves on.
 */
#ifndef SB_ENTRY_WINDOW_H
#define SB_ENTRY_WINDOW_H

#include <stdatomic.h>

#include "stripebackup/sb_manifest.h"

typedef struct SbEntryWindow SbEntryWindow;

/*
 * Where a chain's older backup's file gives its bytes (chain.c): the newest
 * backup's file of the same path, the bytes below its length, and the mode
 * and time it gets when the older backup creates it whole.
 */
typedef struct SbChainReceiver
{
	size_t		into;			/* the newest file's ordinal; SIZE_MAX: it gives none */
	uint64_t	limit;
	uint32_t	mode;
	int64_t		mtime;
} SbChainReceiver;

/* A file in the window: its entry (path and extents its own) and its sum so far. */
typedef struct SbWindowFile
{
	SbEntry		entry;
	size_t		ordinal;		/* its entry's place in the manifest's order */
	_Atomic uint32_t sum;		/* XOR of its pieces' sb_file_check_piece */
	_Atomic uint64_t bytes;		/* data bytes accounted for */
	/* set as it is admitted, by the run's admit hook if it has one */
	SbChainReceiver given;		/* a chain's older backup: what it gives */
} SbWindowFile;

/*
 * What was accounted for before the run, by entry ordinal (a delta restore:
 * the pieces the target held): each file starts from it.
 */
typedef struct SbWindowSeed
{
	const _Atomic uint32_t *sums;
	const _Atomic uint64_t *bytes;
} SbWindowSeed;

/* One contiguous piece of one file inside a chunk. */
typedef struct SbWindowPiece
{
	SbWindowFile *file;
	uint64_t	file_offset;
	uint64_t	length;
	uint64_t	chunk_offset;
} SbWindowPiece;

/*
 * Each file as it leaves the window (with the window locked): COMPLETE when
 * every data byte was accounted for.  False stops the window (as
 * sb_entry_window_abort): the caller says why.
 */
typedef bool (*SbWindowLeaveFn) (void *arg, const SbWindowFile *file, bool complete);

/*
 * Each file as it enters the window (with the window locked), to fill in
 * what the run keeps beside it.  False stops the window, ERR saying why.
 */
typedef bool (*SbWindowAdmitFn) (void *arg, SbWindowFile *file, SbError *err);

typedef enum SbAdmit
{
	SB_ADMITTED,
	SB_NOT_YET,					/* only without waiting: the window is full */
	SB_STOPPED					/* aborted, or reading the entries failed */
} SbAdmit;

/*
 * A window over M's spooled entries (M read SB_KEEP_STREAMED), from the
 * first; SEED (NULL: none) what each file starts from; ON_ADMIT (NULL:
 * none) and ON_LEAVE called with ARG.
 */
extern SbEntryWindow *sb_entry_window_new(const SbManifest *m, size_t max_files,
										  const SbWindowSeed *seed, SbWindowAdmitFn on_admit,
										  SbWindowLeaveFn on_leave, void *arg, SbError *err);

/* Is every file chunk CHUNK touches in the window?  Admits what it can; WAIT: until it is. */
extern SbAdmit sb_entry_window_admit(SbEntryWindow *w, uint64_t chunk, bool wait);

/*
 * Chunks below END are admitted however full the window is (a degraded
 * restore: the chunks of the parity groups being assembled, which a lost
 * chunk below them waits for; read_pipeline.c).  END only grows.
 */
extern void sb_entry_window_force(SbEntryWindow *w, uint64_t end);

/* The pieces of admitted chunk CHUNK, in stream order, into *PIECES (grown as needed; *CAP). */
extern bool sb_entry_window_pieces(SbEntryWindow *w, uint64_t chunk, SbWindowPiece **pieces,
								   size_t *cap, size_t *n, SbError *err);

/* Chunk CHUNK is done with (read, or found bad, or never to be read). */
extern void sb_entry_window_done(SbEntryWindow *w, uint64_t chunk);

/* Wake and refuse every waiter: the run stops. */
extern void sb_entry_window_abort(SbEntryWindow *w);

/*
 * After a run that read or skipped every chunk: the entries past the last
 * file admitted read too, each leaving as it is read (complete only if its
 * seed accounted for all its data: a file wholly in chunks skipped).
 */
extern bool sb_entry_window_drain(SbEntryWindow *w, SbError *err);

/* After the run: why admitting stopped, if reading the entries failed (false, ERR). */
extern bool sb_entry_window_check(SbEntryWindow *w, SbError *err);

/* The most files the window held at once. */
extern size_t sb_entry_window_peak(const SbEntryWindow *w);

extern void sb_entry_window_free(SbEntryWindow *w);

#endif							/* SB_ENTRY_WINDOW_H */
