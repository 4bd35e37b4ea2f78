/*
 * sb_calibrate.h
 *		Measuring a destination the way SQLIO, ORION or fio do: sequential
 *		write, then sequential read of a test file (O_DIRECT, so the reads do
 *		not come from the page cache), and random reads when asked; at one
 *		block size and queue depth, or over a matrix of them.
 */
#ifndef SB_CALIBRATE_H
#define SB_CALIBRATE_H

#include <stdint.h>

#include "stripebackup/sb_io_method.h"
#include "stripebackup/sb_progress.h"
#include "stripebackup/sb_s3.h"

typedef enum SbCalibrationTest
{
	SB_CAL_SEQUENTIAL_WRITE,
	SB_CAL_SEQUENTIAL_READ,
	SB_CAL_RANDOM_READ			/* 4 kB at random offsets: IOPS */
} SbCalibrationTest;

typedef struct SbCalibrationOptions
{
	const char *directory;		/* the destination */
	const SbS3Settings *s3;		/* how s3:// destinations are reached (the stores
								 * opened keep them); NULL: the environment */
	uint64_t	size;			/* bytes of the test file */
	uint32_t	block_size;		/* a multiple of 4096 */
	uint32_t	queue_depth;
	SbIoMethod	io_method;
	double		max_rate;		/* MB/s, 0 = none (to model a slower device) */
	SbTickFn	tick;			/* called about every 100 ms; may stop it */
	void	   *tick_arg;
} SbCalibrationOptions;

typedef struct SbCalibrationResult
{
	SbCalibrationTest test;
	uint32_t	block_size;
	uint32_t	queue_depth;
	double		seconds;
	double		mb_per_s;
	double		iops;
	bool		direct;			/* O_DIRECT was used (false: the file system refused it) */
} SbCalibrationResult;

/* A name for a test: "sequential write", "sequential read", "random read". */
extern const char *sb_calibration_test_name(SbCalibrationTest test);

/*
 * Run the measurements on one destination: sequential write then read at the
 * options' block size and queue depth, random reads when RANDOM, and with
 * MATRIX sequential reads at every block size (4 kB, 64 kB, 1 MB) and queue
 * depth (1, 4, 16, 32) too.  Results go to RESULTS (room for 32); the test
 * file is removed whatever happens.
 */
extern bool sb_calibrate(const SbCalibrationOptions *options, bool random, bool matrix,
						 SbCalibrationResult *results, int *nresults, SbError *err);

#endif							/* SB_CALIBRATE_H */
