/*
 * restore_sample.c
 *		What a restore of a backup costs on this machine, measured on a
 *		sample of it, for a plan's estimate before any restore was measured.
 *
 * stripe_calibrate measures how fast each destination reads; a restore
 * also spends CPU on every byte (reading, checking, decompressing, copying
 * into the page cache), creates every file, and syncs what it wrote.  Those
 * depend on the backup's data and codec, on this machine's CPUs and on the
 * file system written to, so they are measured, not assumed: chunks spread
 * over the whole stream go through the restore's own read pipeline into a
 * file, which is then synced, and small files are created as a restore
 * creates them.  A plan extrapolates from the sample to the whole backup.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_archive.h"
#include "util/fsutil.h"
#include "util/parallel.h"
#include "restore/read_pipeline.h"
#include "util/thread.h"

#define SAMPLE_BYTES (32ULL * 1024 * 1024)	/* raw bytes decoded and written, about */

/*
 * Enough files that a sync's own cost is shared as a restore's is: per
 * file, 256 files on a fresh ext4 cost 66 us created and synced, 1,024 cost
 * 42 and 16,000 cost 35 (two threads; one thread 48 at 1,024).
 */
#define SAMPLE_FILES 1024
#define SAMPLE_FILE_BYTES 8192	/* a relation's first page */

/*
 * The scratch folder's name: PostgreSQL removes folders of its temporary
 * files' folder so named when it starts, so one left by a crash goes too.
 */
#define SCRATCH_NAME "pgsql_tmp.stripebackup-sample-XXXXXX"

typedef struct SampleSink
{
	int			dirfd;
	const char *dir;
	_Atomic uint64_t bytes;
	_Atomic uint64_t chunks;
} SampleSink;

static void
chunk_file_name(char *buf, size_t len, uint64_t chunk_id)
{
	snprintf(buf, len, "c%" PRIu64, chunk_id);
}

/*
 * On a pipeline worker: the chunk's raw bytes written into a file of its
 * own, as a restore writes its pieces into their files (one file for all
 * would have the workers wait on its lock).  Their writing to the device
 * is not started here, as a restore's is, but timed apart once all are in
 * the page cache: that is how fast the device takes a restore's bytes.
 */
static bool
write_sample(void *arg, uint64_t chunk_id, const uint8_t *raw, uint32_t len, SbError *err)
{
	SampleSink *sink = arg;
	char		name[32];
	int			fd;
	bool		ok;

	chunk_file_name(name, sizeof(name), chunk_id);
	fd = openat(sink->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not create a sample file in \"%s\"", sink->dir);
	ok = sb_pwrite_all(fd, raw, len, 0, "a sample file", err);
	close(fd);
	atomic_fetch_add(&sink->bytes, len);
	atomic_fetch_add(&sink->chunks, 1);
	return ok;
}

/*
 * Every chunk skipped but about SAMPLE_BYTES of them, evenly spread over the
 * stream, and at least twice as many as BUFFERS: the CPU a chunk costs is
 * counted from each buffer's second chunk on.
 */
static uint8_t *
choose_chunks(const SbManifest *m, uint32_t buffers, SbError *err)
{
	uint64_t	average = m->stream_bytes / m->total_chunks;
	uint64_t	want = SAMPLE_BYTES / (average > 0 ? average : 1);
	uint64_t	stride,
				c;
	uint8_t    *skip = sb_alloc(m->total_chunks, err);

	if (skip == NULL)
		return NULL;
	if (want < 2 * (uint64_t) buffers)
		want = 2 * (uint64_t) buffers;
	stride = want >= m->total_chunks ? 1 : m->total_chunks / want;
	for (c = 0; c < m->total_chunks; c++)
		skip[c] = c % stride != 0;
	return skip;
}

/*
 * Each sampled chunk's file with FLAGS for sync_file_range: first every
 * write started, then each one waited for, so that the device has them all
 * at once, as it has a restore's at its final sync.
 */
static bool
sync_chunk_files(const SampleSink *sink, const SbManifest *m, const uint8_t *skip,
				 unsigned int flags, SbError *err)
{
	char		name[32];
	uint64_t	c;

	for (c = 0; c < m->total_chunks; c++)
	{
		int			fd;
		int			rc;

		if (skip[c])
			continue;
		chunk_file_name(name, sizeof(name), c);
		if ((fd = openat(sink->dirfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
			return sb_error_set_errno(err, errno, "could not open a sample file in \"%s\"", sink->dir);
		rc = sync_file_range(fd, 0, 0, flags);
		close(fd);
		if (rc != 0)
			return sb_error_set_errno(err, errno, "could not sync a sample file in \"%s\"", sink->dir);
	}
	return true;
}

static void
remove_chunk_files(const SampleSink *sink, const SbManifest *m, const uint8_t *skip)
{
	char		name[32];
	uint64_t	c;

	for (c = 0; c < m->total_chunks; c++)
	{
		chunk_file_name(name, sizeof(name), c);
		if (!skip[c])
			(void) unlinkat(sink->dirfd, name, 0);
	}
}

/*
 * The sampled chunks read, checked, decompressed and written as a restore
 * does, the workers' CPU counted; then their files written to the device,
 * timed: a restore writes back as it goes, so that time overlaps its
 * reading and decompressing.  Then, with SYNC_FS, their file system synced,
 * timed into *SYNC_SECONDS: a device with a volatile cache (a virtual disk,
 * a controller's) takes writes at once and pays at the flush, which comes
 * at a restore's end.
 */
static bool
sample_chunks(SbArchive *a, const SbReadOptions *o, int dirfd, const char *dir, bool sync_fs,
			  SbRestoreSample *out, double *sync_seconds, SbError *err)
{
	const SbManifest *m = a->manifest;
	SbReadPipelineConfig config;
	SampleSink	sink = {.dirfd = dirfd,.dir = dir};
	uint8_t    *skip;
	uint64_t	problems;
	SbWorkerCpu cpu = {0, 0};
	double		t0;
	bool		ok;

	*sync_seconds = 0;
	if (m->total_chunks == 0)
		return true;
	if ((skip = choose_chunks(m, o->buffer_count ? o->buffer_count : SB_DEFAULT_READ_BUFFERS, err)) == NULL)
		return false;
	memset(&config, 0, sizeof(config));
	config.archive = a;
	config.options = o;
	config.what = "restore sample";
	config.sink = write_sample;
	config.sink_arg = &sink;
	config.skip = skip;
	config.worker_cpu = &cpu;
	ok = sb_read_pipeline_run(&config, &problems, err);
	out->chunks = atomic_load(&sink.chunks);
	out->raw_bytes = atomic_load(&sink.bytes);
	t0 = sb_monotonic_seconds();
	ok = ok && sync_chunk_files(&sink, m, skip, SYNC_FILE_RANGE_WRITE, err) &&
		sync_chunk_files(&sink, m, skip, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
						 SYNC_FILE_RANGE_WAIT_AFTER, err);
	if (ok && out->raw_bytes > 0)
	{
		out->costs.cpu_per_byte = cpu.bytes > 0 ? cpu.seconds / (double) cpu.bytes : 0;
		out->costs.write_per_byte = (sb_monotonic_seconds() - t0) / (double) out->raw_bytes;
	}
	t0 = sb_monotonic_seconds();
	if (ok && sync_fs && syncfs(dirfd) != 0)
		ok = sb_error_set_errno(err, errno, "could not sync the file system of \"%s\"", dir);
	*sync_seconds = sb_monotonic_seconds() - t0;
	remove_chunk_files(&sink, m, skip);
	free(skip);
	return ok;
}

/* The small files, made by as many threads as a restore's workers. */
typedef struct SampleFiles
{
	int			dirfd;
	const char *dir;
	pthread_mutex_t mutex;		/* guards the rest */
	uint32_t	made;
	bool		failed;
	SbError		err;			/* the first failure */
} SampleFiles;

static void
sample_file_name(char *buf, size_t len, uint32_t i)
{
	snprintf(buf, len, "f%u", i);
}

static bool
make_one_file(SampleFiles *files, uint32_t i, SbError *err)
{
	static const uint8_t page[SAMPLE_FILE_BYTES];
	const struct timespec times[2] = {{0, UTIME_NOW}, {1000000000, 0}};
	char		name[32];
	int			fd;
	bool		ok;

	sample_file_name(name, sizeof(name), i);
	fd = openat(files->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not create a sample file in \"%s\"", files->dir);
	ok = sb_pwrite_all(fd, page, sizeof(page), 0, "a sample file", err) &&
		(futimens(fd, times) == 0 ||
		 sb_error_set_errno(err, errno, "could not set the time of a sample file in \"%s\"", files->dir));
	close(fd);
	return ok;
}

/* A task of sb_parallel_run: file I created, filled, timed and closed, as a restore does each file. */
static void
make_file_task(void *arg, size_t task, uint32_t slot)
{
	SampleFiles *files = arg;
	SbError		err;
	bool		ok;

	(void) slot;
	pthread_mutex_lock(&files->mutex);
	ok = !files->failed;
	pthread_mutex_unlock(&files->mutex);
	if (!ok)
		return;
	ok = make_one_file(files, (uint32_t) task, &err);
	pthread_mutex_lock(&files->mutex);
	if (ok)
		files->made++;
	else if (!files->failed)
	{
		files->failed = true;
		files->err = err;
	}
	pthread_mutex_unlock(&files->mutex);
}

/*
 * Small files made by CPUS threads in one folder, as a restore's workers
 * make theirs; with SYNC_FS, then the file system synced, as a restore
 * ends; timed.
 */
static bool
sample_files(int dirfd, const char *dir, bool sync_fs, SbRestoreSample *out, double *empty_sync,
			 SbError *err)
{
	SampleFiles files = {.dirfd = dirfd,.dir = dir};
	double		t0;

	/*
	 * What a sync costs with nothing of ours to write (the second of two:
	 * the first writes the chunks' removal), left out of each file's share
	 * and the chunks': a restore pays it once.
	 */
	*empty_sync = 0;
	if (sync_fs)
	{
		if (syncfs(dirfd) != 0)
			return sb_error_set_errno(err, errno, "could not sync the file system of \"%s\"", dir);
		t0 = sb_monotonic_seconds();
		(void) syncfs(dirfd);
		*empty_sync = sb_monotonic_seconds() - t0;
	}
	pthread_mutex_init(&files.mutex, NULL);
	t0 = sb_monotonic_seconds();
	sb_parallel_run(SAMPLE_FILES, out->costs.cpus, make_file_task, &files);
	pthread_mutex_destroy(&files.mutex);
	out->files = files.made;
	if (files.failed)
	{
		*err = files.err;
		return false;
	}
	/* a restore's final sync writes each small file's data and inode: its share, too */
	if (sync_fs && syncfs(dirfd) != 0)
		return sb_error_set_errno(err, errno, "could not sync the file system of \"%s\"", dir);
	out->costs.setup_per_file = (sb_monotonic_seconds() - t0 - *empty_sync) / SAMPLE_FILES;
	if (out->costs.setup_per_file <= 0)	/* the empty sync was the slower: a noisy device */
		out->costs.setup_per_file = 1e-9;
	out->synced_files = sync_fs;
	return true;
}

/* The scratch folder and the files made in it, gone. */
static void
remove_scratch(int dirfd, const char *dir)
{
	char		name[32];
	uint32_t	i;

	for (i = 0; i < SAMPLE_FILES; i++)
	{
		sample_file_name(name, sizeof(name), i);
		(void) unlinkat(dirfd, name, 0);
	}
	close(dirfd);
	(void) rmdir(dir);
}

bool
sb_restore_sample(SbArchive *a, const SbReadOptions *o, const char *parent_dir, bool sync_fs,
				  SbRestoreSample *out, SbError *err)
{
	char		dir[4096];
	int			dirfd;
	double		chunks_sync = 0,
				empty_sync = 0;
	bool		ok;

	sb_error_clear(err);
	memset(out, 0, sizeof(*out));
	out->costs.cpus = o->workers ? o->workers : sb_cpu_count();
	if (out->costs.cpus > sb_cpu_count())
		out->costs.cpus = sb_cpu_count();
	if ((size_t) snprintf(dir, sizeof(dir), "%s/" SCRATCH_NAME, parent_dir) >= sizeof(dir))
		return sb_error_set(err, SB_EINVAL, "the folder \"%s\" has too long a path for a restore sample",
							parent_dir);
	if (mkdtemp(dir) == NULL)
		return sb_error_set_errno(err, errno, "could not make a folder for a restore sample in \"%s\"",
								  parent_dir);
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0)
	{
		sb_error_set_errno(err, errno, "could not open the restore sample's folder \"%s\"", dir);
		(void) rmdir(dir);
		return false;
	}
	ok = sample_chunks(a, o, dirfd, dir, sync_fs, out, &chunks_sync, err) &&
		sample_files(dirfd, dir, sync_fs, out, &empty_sync, err);
	remove_scratch(dirfd, dir);
	/* a restore's final sync, a byte's share: what it cost the chunks beyond an empty one */
	if (ok && sync_fs && out->raw_bytes > 0)
		out->costs.finish_per_byte = chunks_sync > empty_sync ?
			(chunks_sync - empty_sync) / (double) out->raw_bytes : 0;
	return ok;
}
