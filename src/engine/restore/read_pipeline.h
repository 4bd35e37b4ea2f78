/*
 * read_pipeline.h
 *		The pipeline shared by restore and verify:
 *
 *		one reader thread per stripe (each stripe is on its own device)
 *		  -> work queue -> workers: check, decompress, check again, then the
 *		     sink (restore writes the pieces; verify has none), then each
 *		     piece's CRC into its file's (file_check.h)
 *		  -> free queue -> readers again.
 *
 * Restore stops at the first problem; verify reports each one and goes on.
 */
#ifndef SB_READ_PIPELINE_H
#define SB_READ_PIPELINE_H

#include "stripebackup/sb_archive.h"
#include "manifest/entry_window.h"
#include "restore/file_check.h"

/* Chunk records in flight when SbReadOptions.buffer_count is 0. */
#define SB_DEFAULT_READ_BUFFERS 16

/*
 * The files a windowed run holds at once (about 150 bytes each): as many as
 * the chunks in flight hold (16 buffers of 1 MiB chunks of 1 kB files), so
 * that the readers seldom wait for the window.
 */
#define SB_WINDOW_FILES 16384

/* Receives each checked, decompressed chunk, on a worker thread. */
typedef bool (*SbChunkSink) (void *arg, uint64_t chunk_id, const uint8_t *raw,
							 uint32_t len, SbError *err);

/* Windowed runs: write the pieces of a chunk (N of them, in stream order) from RAW. */
typedef bool (*SbWindowSink) (void *arg, uint64_t chunk_id, const SbWindowPiece *pieces,
							  size_t n, const uint8_t *raw, SbError *err);

/* Windowed runs: a file whose every byte was read, with the manifest's CRC-32C, is also good. */
typedef bool (*SbFileLeftFn) (void *arg, const SbEntry *e, size_t ordinal, SbError *err);

/*
 * The CPU time the workers spent on chunks (checking, decompressing, the
 * sinks), and those chunks' raw bytes: each buffer's first chunk left out,
 * which pays for mapping the buffer's memory.
 */
typedef struct SbWorkerCpu
{
	double		seconds;
	uint64_t	bytes;
} SbWorkerCpu;

typedef struct SbReadPipelineConfig
{
	SbArchive  *archive;
	const SbReadOptions *options;
	const char *what;			/* "restore" or "verify", for messages */
	bool		collect_problems;	/* report and go on, rather than stop */
	SbProblemFn on_problem;
	void	   *problem_arg;
	SbChunkSink sink;			/* may be NULL */
	void	   *sink_arg;
	SbFileCheck *file_check;	/* every piece read goes into its file's CRC; or NULL */
	double	   *stripe_seconds;	/* out, per stripe: its reader's time; may be NULL */
	SbWorkerCpu *worker_cpu;	/* out: what the workers spent on chunks; may be NULL */
	bool		windowed;		/* take the files as the readers reach them
								 * (entry_window.h), from a manifest read
								 * SB_KEEP_STREAMED, and check each one's
								 * CRC-32C as it leaves */
	SbWindowSink window_sink;	/* windowed: instead of SINK (same SINK_ARG); may be NULL */
	SbFileLeftFn file_left;		/* windowed: each good file, as it leaves (SINK_ARG); may be NULL */
	const uint8_t *skip;		/* per chunk id: not read when set (a delta restore's
								 * target holds it); or NULL */
	const SbWindowSeed *window_seed;	/* windowed: what each file starts from
										 * (the pieces of skipped chunks); or NULL */
	SbWindowAdmitFn file_admitted;	/* windowed: each file as it enters the
									 * window (SINK_ARG); may be NULL */
} SbReadPipelineConfig;

/*
 * Read every chunk of every stripe.  False if the run failed (a problem when
 * not collecting, a sink error, cancel); *PROBLEMS counts problems reported.
 */
extern bool sb_read_pipeline_run(const SbReadPipelineConfig *config, uint64_t *problems,
								 SbError *err);

#endif							/* SB_READ_PIPELINE_H */
