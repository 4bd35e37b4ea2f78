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
#include "file_check.h"

/* Chunk records in flight when SbReadOptions.buffer_count is 0. */
#define SB_DEFAULT_READ_BUFFERS 16

/* Receives each checked, decompressed chunk, on a worker thread. */
typedef bool (*SbChunkSink) (void *arg, uint64_t chunk_id, const uint8_t *raw,
							 uint32_t len, SbError *err);

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
	const uint8_t *skip;		/* per chunk id: not read when set (a delta restore's
								 * target holds it); or NULL */
} SbReadPipelineConfig;

/*
 * Read every chunk of every stripe.  False if the run failed (a problem when
 * not collecting, a sink error, cancel); *PROBLEMS counts problems reported.
 */
extern bool sb_read_pipeline_run(const SbReadPipelineConfig *config, uint64_t *problems,
								 SbError *err);

#endif							/* SB_READ_PIPELINE_H */
