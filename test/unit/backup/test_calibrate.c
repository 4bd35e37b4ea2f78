/*
 * test_calibrate.c
 *		Device measurements (sb_calibrate) on small files, so they stay quick:
 *		what each pass reports, the matrix of block sizes and depths, random
 *		reads, the rate limit, a caller that stops it, refused options, and
 *		the test file removed whatever happens.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "stripebackup/sb_calibrate.h"
#include "tests.h"

#define KiB 1024

static void
cal_options(SbCalibrationOptions *o, const char *dir, uint64_t size, uint32_t block,
			uint32_t depth)
{
	memset(o, 0, sizeof(*o));
	o->directory = dir;
	o->size = size;
	o->block_size = block;
	o->queue_depth = depth;
	o->io_method = SB_IO_AUTO;
}

/* Whether DIR's file system takes O_DIRECT, as calibration should find out. */
static bool
takes_o_direct(const char *dir)
{
	char		path[PATH_MAX];
	int			fd = open(th_path(path, "%s/probe", dir), O_RDWR | O_CREAT | O_DIRECT, 0600);

	if (fd < 0)
		return false;
	close(fd);
	unlink(path);
	return true;
}

/* R moved BYTES in blocks of BLOCK with DEPTH in flight, at the rate it reports. */
static void
check_result(const SbCalibrationResult *r, SbCalibrationTest test, uint32_t block,
			 uint32_t depth, uint64_t bytes, const char *what)
{
	double		transfers = r->iops * r->seconds;

	ok(r->test == test, "%s: a %s", what, sb_calibration_test_name(test));
	is_int(r->block_size, block, "%s: block size", what);
	is_int(r->queue_depth, depth, "%s: queue depth", what);
	ok(r->seconds > 0 && r->mb_per_s > 0, "%s: took %.4f s, %.1f MB/s", what, r->seconds, r->mb_per_s);
	if (bytes > 0)
	{
		ok(fabs(transfers - (double) bytes / block) < 0.01,
		   "%s: %.2f transfers counted, the %llu of the file", what, transfers,
		   (unsigned long long) (bytes / block));
		ok(fabs(r->mb_per_s * r->seconds * 1e6 - (double) bytes) < bytes * 0.001,
		   "%s: MB/s times seconds is the file's size", what);
	}
}

/* Bad options: SB_EINVAL naming the value, nothing created. */
void
test_calibrate_refused(void)
{
	static const struct
	{
		uint64_t	size;
		uint32_t	block;
		uint32_t	depth;
		const char *message;
	}			bad[] = {
		{1024 * KiB, 0, 1, "block size 0 is not a multiple of 4 kB up to 64 MB"},
		{1024 * KiB, 6000, 1, "block size 6000 is not a multiple of 4 kB"},
		{1024 * KiB, 2048, 1, "block size 2048 is not"},
		{256 * 1024 * KiB, 128 * 1024 * KiB, 1, "block size 134217728 is not a multiple of 4 kB up to 64 MB"},
		{1024 * KiB, 4 * KiB, 0, "queue depth 0 is out of range (1 to 256)"},
		{1024 * KiB, 4 * KiB, 257, "queue depth 257 is out of range"},
		{0, 4 * KiB, 1, "test size 0 is not a whole number of blocks of 4096"},
		{64 * KiB, 128 * KiB, 1, "test size 65536 is not a whole number of blocks of 131072"},
		{100 * KiB, 64 * KiB, 1, "test size 102400 is not a whole number"},
	};
	char		dir[PATH_MAX];
	size_t		i;

	th_tempdir(dir, "calibrate-refused");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		SbCalibrationOptions o;
		SbCalibrationResult results[32];
		int			n = -1;
		SbError		err;

		cal_options(&o, dir, bad[i].size, bad[i].block, bad[i].depth);
		ok(!sb_calibrate(&o, true, true, results, &n, &err), "%s: refused", bad[i].message);
		is_int(err.code, SB_EINVAL, "error code is invalid");
		like(err.message, bad[i].message, "message says so");
		is_int(n, 0, "no results");
	}
	is_int(th_count_entries(dir), 0, "nothing created");
	th_rmtree(dir);
}

/* Sequential write then read of 1 MB in 64 kB blocks, four in flight. */
void
test_calibrate_sequential(void)
{
	SbCalibrationOptions o;
	SbCalibrationResult results[32];
	int			n = 0;
	SbError		err;
	char		dir[PATH_MAX];

	th_tempdir(dir, "calibrate");
	cal_options(&o, dir, 1024 * KiB, 64 * KiB, 4);
	if (!ok(sb_calibrate(&o, false, false, results, &n, &err), "a calibration of 1 MB"))
		th_diag_error("calibrate", &err);
	if (is_int(n, 2, "two results: write and read"))
	{
		check_result(&results[0], SB_CAL_SEQUENTIAL_WRITE, 64 * KiB, 4, 1024 * KiB, "pass 1");
		check_result(&results[1], SB_CAL_SEQUENTIAL_READ, 64 * KiB, 4, 1024 * KiB, "pass 2");
		is_int(results[0].direct, takes_o_direct(dir),
			   "O_DIRECT used exactly when the file system takes it");
	}
	is_int(th_count_entries(dir), 0, "the test file is removed");
	is_str(sb_calibration_test_name(SB_CAL_RANDOM_READ), "random read", "the third test's name");
	th_rmtree(dir);
}

/* Random reads (two seconds, the one slow part) and the block size x depth matrix. */
void
test_calibrate_matrix(void)
{
	static const uint32_t depths[] = {1, 4, 16, 32};
	SbCalibrationOptions o;
	SbCalibrationResult results[32];
	int			n = 0;
	SbError		err;
	char		dir[PATH_MAX];
	int			i;

	th_tempdir(dir, "calibrate-matrix");
	cal_options(&o, dir, 128 * KiB, 4 * KiB, 2);
	if (!ok(sb_calibrate(&o, true, true, results, &n, &err), "random reads and the matrix on 128 kB"))
		th_diag_error("calibrate", &err);
	if (is_int(n, 11, "11 results: write, read, random, 4 depths of 4 kB and 64 kB (1 MB > the file)"))
	{
		check_result(&results[0], SB_CAL_SEQUENTIAL_WRITE, 4 * KiB, 2, 128 * KiB, "write");
		check_result(&results[1], SB_CAL_SEQUENTIAL_READ, 4 * KiB, 2, 128 * KiB, "read");
		check_result(&results[2], SB_CAL_RANDOM_READ, 4 * KiB, 2, 0, "random");
		ok(results[2].seconds >= 2.0 && results[2].seconds < 3.0, "random reads run for 2 s (%.2f)",
		   results[2].seconds);
		for (i = 0; i < 8; i++)
		{
			char		what[64];
			uint32_t	block = i < 4 ? 4 * KiB : 64 * KiB;

			snprintf(what, sizeof(what), "matrix %u kB x %u", block / KiB, depths[i % 4]);
			check_result(&results[3 + i], SB_CAL_SEQUENTIAL_READ, block, depths[i % 4], 128 * KiB,
						 what);
		}
	}
	is_int(th_count_entries(dir), 0, "the test file is removed");
	th_rmtree(dir);
}

typedef struct Ticks
{
	int			calls;
	bool		stop;
	uint64_t	bytes_seen;
} Ticks;

static bool
count_tick(void *arg, const SbProgress *progress)
{
	Ticks	   *t = arg;

	t->calls++;
	t->bytes_seen = progress->raw_bytes_done;
	return !t->stop;
}

/* A rate limit holds each pass to it; the caller's tick is called meanwhile. */
void
test_calibrate_rate(void)
{
	SbCalibrationOptions o;
	SbCalibrationResult results[32];
	int			n = 0;
	SbError		err;
	char		dir[PATH_MAX];
	Ticks		ticks = {0, false, 0};

	th_tempdir(dir, "calibrate-rate");
	cal_options(&o, dir, 512 * KiB, 4 * KiB, 1);
	o.max_rate = 4;
	o.tick = count_tick;
	o.tick_arg = &ticks;
	if (!ok(sb_calibrate(&o, false, false, results, &n, &err), "512 kB at 4 MB/s at most"))
		th_diag_error("calibrate", &err);
	if (is_int(n, 2, "two results"))
	{
		ok(results[0].mb_per_s <= 4.4 && results[0].seconds >= 0.12,
		   "the write keeps to the rate: %.2f MB/s in %.3f s", results[0].mb_per_s, results[0].seconds);
		ok(results[1].mb_per_s <= 4.4 && results[1].seconds >= 0.12,
		   "so does the read: %.2f MB/s in %.3f s", results[1].mb_per_s, results[1].seconds);
	}
	ok(ticks.calls >= 1, "the tick was called (%d times)", ticks.calls);
	ok(ticks.bytes_seen > 0, "with the bytes moved so far (%llu)", (unsigned long long) ticks.bytes_seen);
	th_rmtree(dir);
}

/* A tick that says stop ends the calibration at once: SB_ECANCELED, no file left. */
void
test_calibrate_canceled(void)
{
	SbCalibrationOptions o;
	SbCalibrationResult results[32];
	int			n = -1;
	SbError		err;
	char		dir[PATH_MAX];
	char		missing[PATH_MAX];
	Ticks		ticks = {0, true, 0};
	double		t0 = th_now();

	th_tempdir(dir, "calibrate-cancel");
	cal_options(&o, dir, 1024 * KiB, 4 * KiB, 4);
	o.max_rate = 1;				/* a second per pass: the tick comes first */
	o.tick = count_tick;
	o.tick_arg = &ticks;
	ok(!sb_calibrate(&o, false, false, results, &n, &err), "a calibration told to stop fails");
	is_int(err.code, SB_ECANCELED, "error code is canceled");
	is_str(err.message, "calibration canceled", "message says so");
	is_int(n, 0, "no results");
	is_int(ticks.calls, 1, "the tick was called once");
	ok(th_now() - t0 < 0.5, "it stopped at once (%.2f s)", th_now() - t0);
	is_int(th_count_entries(dir), 0, "the test file is removed");

	/* A destination that does not exist: the error names the test file. */
	cal_options(&o, th_path(missing, "%s/missing", dir), 64 * KiB, 4 * KiB, 1);
	ok(!sb_calibrate(&o, false, false, results, &n, &err), "a destination that does not exist fails");
	is_int(err.sys_errno, ENOENT, "with ENOENT");
	like(err.message, "could not create the test file", "message says what failed");
	like(err.message, missing, "and where");
	th_rmtree(dir);
}
