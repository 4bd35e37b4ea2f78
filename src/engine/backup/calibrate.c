/*
 * calibrate.c
 *		Device measurements for weights: a test file written and read back
 *		through the engine's own I/O path (io_uring, queue depth, block size),
 *		with O_DIRECT so reads come from the device, not the page cache.
 *
 * The file holds pseudo-random bytes, so a compressing or deduplicating
 * device cannot flatter itself, and it is removed whatever happens.
 *
 * An object-storage destination (s3://bucket/prefix) is measured the same
 * way through its I/O backends: the write pass appends to an upload with
 * queue_depth parts in flight and ends when the object is made (its
 * "fsync"); the read passes are ranged GETs, queue_depth at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "stripebackup/sb_calibrate.h"
#include "util/fsutil.h"
#include "util/io.h"
#include "store/store.h"
#include "util/rate.h"
#include "util/ticker.h"

#define MAX_DEPTH 256
#define MATRIX_BYTES (64ULL * 1024 * 1024)	/* read per matrix cell, at most */
#define RANDOM_SECONDS 2.0
#define RANDOM_BLOCK 4096

typedef struct Bench
{
	const SbCalibrationOptions *o;
	char		path[PATH_MAX];
	int			fd;
	bool		direct;
	SbStore    *store;			/* the directory, a store without descriptors (a bucket): */
	char		name[64];		/* the test object's name in it */
	SbStoreWriter *writer;		/* during the write pass */
	bool		made;			/* the object exists */
	SbRate		rate;
	SbTicker	ticker;
	SbProgress	progress;
	bool		stopped;
} Bench;

/* One transfer in flight and the buffer it owns. */
typedef struct Slot
{
	SbIoOp		op;
	uint8_t    *buf;
} Slot;

/* One pass: what to do and how much. */
typedef struct Pass
{
	SbCalibrationTest test;
	uint32_t	block;
	uint32_t	depth;
	uint64_t	bytes;			/* sequential: this many */
	double		seconds;		/* random: this long */
} Pass;

const char *
sb_calibration_test_name(SbCalibrationTest test)
{
	return test == SB_CAL_SEQUENTIAL_WRITE ? "sequential write" :
		test == SB_CAL_SEQUENTIAL_READ ? "sequential read" : "random read";
}

static bool
bench_stopped(void *arg)
{
	return ((Bench *) arg)->stopped;
}

/* The caller's tick, when due; false once it says stop. */
static bool
tick(Bench *b, SbError *err)
{
	if (b->stopped)
		return sb_error_set(err, SB_ECANCELED, "calibration canceled");
	if (sb_ticker_due(&b->ticker) && !sb_ticker_fire(&b->ticker, &b->progress, "calibration", err))
	{
		b->stopped = true;
		return false;
	}
	return true;
}

/* The test object's store (nothing is sent before the write pass), for a store without descriptors. */
static bool
open_store(Bench *b, SbError *err)
{
	if ((b->store = sb_store_new(b->o->directory, &(SbStoreOptions) {.s3 = b->o->s3}, err)) == NULL)
		return false;
	/* no cache between us and the bucket */
	b->direct = !(sb_store_features(b->store) & SB_STORE_PAGE_CACHE);
	return true;
}

/* The test file: O_DIRECT when the file system allows it. */
static bool
create_file(Bench *b, SbError *err)
{
	uint32_t	tag = 0;

	if (getrandom(&tag, sizeof(tag), 0) < 0)
		tag = (uint32_t) getpid();
	snprintf(b->name, sizeof(b->name), ".stripebackup-calibration-%d-%08x", (int) getpid(), tag);
	snprintf(b->path, sizeof(b->path), "%s/%s", b->o->directory, b->name);
	/* A folder of this machine is measured through a file of its own, O_DIRECT when it can be. */
	if (!(sb_store_features_of(b->o->directory) & SB_STORE_DESCRIPTORS))
		return open_store(b, err);
	b->fd = open(b->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, 0600);
	b->direct = b->fd >= 0;
	if (b->fd < 0 && errno == EINVAL)
		b->fd = open(b->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (b->fd < 0)
		return sb_error_set_errno(err, errno, "could not create the test file \"%s\"", b->path);
	return true;
}

/* Where the next transfer goes: in order, or anywhere (block-aligned). */
static uint64_t
next_offset(const Pass *p, uint64_t size, uint64_t issued, uint64_t *seed)
{
	if (p->test != SB_CAL_RANDOM_READ)
		return issued * p->block;
	*seed ^= *seed << 13;
	*seed ^= *seed >> 7;
	*seed ^= *seed << 17;
	return (*seed % (size / p->block)) * p->block;
}

static bool
pass_done(const Pass *p, uint64_t issued, double started)
{
	if (p->test == SB_CAL_RANDOM_READ)
		return sb_monotonic_seconds() - started >= p->seconds;
	return issued * p->block >= p->bytes;
}

static bool
start_one(Bench *b, SbIo *io, const Pass *p, Slot *slot, uint64_t offset, SbError *err)
{
	SbIoOp	   *op = &slot->op;

	sb_rate_wait(&b->rate, p->block, bench_stopped, b);
	memset(op, 0, sizeof(*op));
	op->kind = p->test == SB_CAL_SEQUENTIAL_WRITE ? SB_IO_WRITE : SB_IO_READ;
	op->fd = b->fd;
	op->offset = offset;
	op->iov[0].iov_base = slot->buf;
	op->iov[0].iov_len = p->block;
	op->iovcnt = 1;
	op->tag = slot;
	op->short_is_eof = true;
	return sb_io_start(io, op, err);
}

/* Keep DEPTH transfers going until the pass is done; count what completed. */
static bool
run_transfers(Bench *b, SbIo *io, const Pass *p, Slot *slots, uint64_t *completed, SbError *err)
{
	double		started = sb_monotonic_seconds();
	uint64_t	issued = 0;
	uint64_t	seed = 0x9E3779B97F4A7C15ULL;
	uint32_t	i;
	SbIoOp	   *done[MAX_DEPTH];

	for (i = 0; i < p->depth && !pass_done(p, issued, started); i++, issued++)
		if (!start_one(b, io, p, &slots[i], next_offset(p, b->o->size, issued, &seed), err))
			return false;
	while (sb_io_in_flight(io) > 0)
	{
		int			n = sb_io_reap(io, done, MAX_DEPTH, 1, err);
		int			k;

		if (n < 0 || !tick(b, err))
			return false;
		for (k = 0; k < n; k++)
		{
			SbIoOp	   *op = done[k];

			if (op->error != 0 && sb_io_error_detail(io) != NULL)
				return sb_error_set(err, SB_EIO, "could not %s \"%s\": %s",
									op->kind == SB_IO_WRITE ? "write" : "read", b->path, sb_io_error_detail(io));
			if (op->error != 0)
				return sb_error_set_errno(err, op->error, "could not %s \"%s\"",
										  op->kind == SB_IO_WRITE ? "write" : "read", b->path);
			(*completed)++;
			b->progress.raw_bytes_done += op->done;
			if (!pass_done(p, issued, started) &&
				!start_one(b, io, p, op->tag, next_offset(p, b->o->size, issued++, &seed), err))
				return false;
		}
	}
	return true;
}

/* Pseudo-random bytes (xorshift): nothing a device could compress. */
static void
fill_noise(uint8_t *buf, size_t len)
{
	uint64_t	x = 0x2545F4914F6CDD1DULL;
	size_t		i;

	for (i = 0; i + 8 <= len; i += 8)
	{
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(buf + i, &x, 8);
	}
}

/* Reads of the test object, P->depth at once. */
static SbIo *
object_reader(Bench *b, const Pass *p, SbError *err)
{
	SbStoreFile f;
	char		path[PATH_MAX + 64];
	SbIo	   *io;

	if (!sb_store_open_in(b->store, b->name, &f, path, sizeof(path), err))
		return NULL;
	io = sb_store_reader_io(&f, b->o->io_method, p->depth, err);
	sb_store_close(&f);
	return io;
}

/* The I/O context of pass P: the file's, or the object's (a new one, made whole, to write it). */
static SbIo *
pass_io(Bench *b, const Pass *p, SbError *err)
{
	SbStoreCreate how = {.parts_in_flight = p->depth};

	if (b->store == NULL)
		return sb_io_new(b->o->io_method, p->depth, NULL, err);
	if (p->test != SB_CAL_SEQUENTIAL_WRITE)
		return object_reader(b, p, err);
	b->writer = sb_store_create(b->store, b->name, &how, err);
	return b->writer != NULL ? sb_store_writer_io(b->writer, b->o->io_method, p->depth, err) : NULL;
}

/* The end of a write pass: the file synced, or the object made. */
static bool
finish_write(Bench *b, SbError *err)
{
	if (b->store == NULL)
		return fsync(b->fd) == 0 || sb_error_set_errno(err, errno, "could not fsync \"%s\"", b->path);
	b->made = sb_store_writer_finish(b->writer, err);
	return b->made;
}

/* One pass, timed; a write pass ends with fsync (part of its time). */
static bool
run_pass(Bench *b, const Pass *p, SbCalibrationResult *r, SbError *err)
{
	uint8_t    *bufs = NULL;
	Slot	   *slots = sb_alloc(sizeof(Slot) * p->depth, err);
	SbIo	   *io = slots ? pass_io(b, p, err) : NULL;
	uint64_t	completed = 0;
	double		t0;
	uint32_t	i;
	bool		ok = io != NULL;

	if (ok && posix_memalign((void **) &bufs, 4096, (size_t) p->block * p->depth) != 0)
		ok = sb_error_set(err, SB_ENOMEM, "out of memory for the test buffers");
	for (i = 0; ok && i < p->depth; i++)
		slots[i].buf = bufs + (size_t) i * p->block;
	if (ok)
		fill_noise(bufs, (size_t) p->block * p->depth);

	/*
	 * Each pass keeps to the rate on its own: a budget shared with the pass
	 * before would let this one start with the time that one spent on its
	 * fsync as credit, and run faster than the rate (seen: a read at 5.3
	 * MB/s under a 4 MB/s limit).
	 */
	sb_rate_init(&b->rate, b->o->max_rate);
	t0 = sb_monotonic_seconds();
	ok = ok && run_transfers(b, io, p, slots, &completed, err);
	if (ok && p->test == SB_CAL_SEQUENTIAL_WRITE)
		ok = finish_write(b, err);
	r->test = p->test;
	r->block_size = p->block;
	r->queue_depth = p->depth;
	r->seconds = sb_monotonic_seconds() - t0;
	r->mb_per_s = (double) completed * p->block / 1e6 / (r->seconds > 0 ? r->seconds : 1e-9);
	r->iops = (double) completed / (r->seconds > 0 ? r->seconds : 1e-9);
	r->direct = b->direct;
	if (io != NULL)
	{
		SbIoOp	   *rest[MAX_DEPTH];
		SbError		ignored;

		while (sb_io_in_flight(io) > 0 && sb_io_reap(io, rest, MAX_DEPTH, 1, &ignored) > 0)
			;
	}
	sb_io_free(io);
	free(slots);
	free(bufs);
	/* Without O_DIRECT, make the next reads come from the device. */
	if (ok && !b->direct && b->store == NULL)
		(void) posix_fadvise(b->fd, 0, 0, POSIX_FADV_DONTNEED);
	return ok;
}

static bool
check_options(const SbCalibrationOptions *o, SbError *err)
{
	if (o->block_size < 4096 || o->block_size % 4096 != 0 || o->block_size > 64 * 1024 * 1024)
		return sb_error_set(err, SB_EINVAL, "block size %u is not a multiple of 4 kB up to 64 MB",
							o->block_size);
	if (o->queue_depth < 1 || o->queue_depth > MAX_DEPTH)
		return sb_error_set(err, SB_EINVAL, "queue depth %u is out of range (1 to %d)",
							o->queue_depth, MAX_DEPTH);
	if (o->size < o->block_size || o->size % o->block_size != 0)
		return sb_error_set(err, SB_EINVAL, "test size %llu is not a whole number of blocks of %u",
							(unsigned long long) o->size, o->block_size);
	return true;
}

/* The passes to run, in order; returns how many. */
static int
plan_passes(const SbCalibrationOptions *o, bool random, bool matrix, Pass *passes)
{
	static const uint32_t blocks[] = {4096, 65536, 1048576};
	static const uint32_t depths[] = {1, 4, 16, 32};
	int			n = 0;
	int			i,
				j;

	passes[n++] = (Pass) {SB_CAL_SEQUENTIAL_WRITE, o->block_size, o->queue_depth, o->size, 0};
	passes[n++] = (Pass) {SB_CAL_SEQUENTIAL_READ, o->block_size, o->queue_depth, o->size, 0};
	if (random)
		passes[n++] = (Pass) {SB_CAL_RANDOM_READ, RANDOM_BLOCK, o->queue_depth, 0, RANDOM_SECONDS};
	for (i = 0; matrix && i < 3; i++)
		for (j = 0; j < 4; j++)
		{
			uint64_t	bytes = o->size < MATRIX_BYTES ? o->size : MATRIX_BYTES;

			if (blocks[i] > o->size)
				continue;
			passes[n++] = (Pass) {SB_CAL_SEQUENTIAL_READ, blocks[i], depths[j],
			bytes / blocks[i] * blocks[i], 0};
		}
	return n;
}

/* The test object gone, or its upload aborted, whatever happened. */
static void
remove_object(Bench *b)
{
	/* after a cancel too */
	sb_store_set_cleanup(b->store);
	/* the upload aborted, or the object it made deleted */
	sb_store_writer_abort(b->writer);
	sb_store_writer_free(b->writer);
	sb_store_free(b->store);
}

bool
sb_calibrate(const SbCalibrationOptions *o, bool random, bool matrix,
			 SbCalibrationResult *results, int *nresults, SbError *err)
{
	Bench		b;
	Pass		passes[32];
	int			npasses;
	int			i;
	bool		ok;

	sb_error_clear(err);
	*nresults = 0;
	if (!check_options(o, err))
		return false;
	memset(&b, 0, sizeof(b));
	b.o = o;
	b.fd = -1;
	sb_ticker_init(&b.ticker, o->tick, o->tick_arg);
	npasses = plan_passes(o, random, matrix, passes);
	ok = create_file(&b, err);
	for (i = 0; ok && i < npasses; i++)
	{
		ok = run_pass(&b, &passes[i], &results[i], err);
		*nresults = ok ? i + 1 : i;
	}
	if (b.fd >= 0)
		close(b.fd);
	if (b.store != NULL)
		remove_object(&b);
	else if (b.path[0] != '\0')
		unlink(b.path);
	return ok;
}
