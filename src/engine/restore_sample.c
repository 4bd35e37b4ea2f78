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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_archive.h"
#include "fsutil.h"
#include "read_pipeline.h"
#include "thread.h"

#define SAMPLE_BYTES (32ULL * 1024 * 1024)	/* raw bytes decoded and written, about */
#define SAMPLE_FILES 256
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
 * would have the workers wait on its lock).
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
	if (ok)
		sb_start_writeback(fd, 0, len);	/* as a restore does each piece */
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
 * does, the workers' CPU counted; then their files synced, timed.
 */
static bool
sample_chunks(SbArchive *a, const SbReadOptions *o, int dirfd, const char *dir,
			  SbRestoreSample *out, SbError *err)
{
	const SbManifest *m = a->manifest;
	SbReadPipelineConfig config;
	SampleSink	sink = {.dirfd = dirfd,.dir = dir};
	uint8_t    *skip;
	uint64_t	problems;
	SbWorkerCpu cpu = {0, 0};
	double		t0;
	bool		ok;

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
		out->costs.finish_per_byte = (sb_monotonic_seconds() - t0) / (double) out->raw_bytes;
	}
	remove_chunk_files(&sink, m, skip);
	free(skip);
	return ok;
}

static void
sample_file_name(char *buf, size_t len, uint32_t i)
{
	snprintf(buf, len, "f%u", i);
}

/*
 * Create, fill, time and close small files, as a restore does each file;
 * with SYNC_FS, then the file system synced, as a restore ends; timed.
 */
static bool
sample_files(int dirfd, const char *dir, bool sync_fs, SbRestoreSample *out, SbError *err)
{
	static const uint8_t page[SAMPLE_FILE_BYTES];
	const struct timespec times[2] = {{0, UTIME_NOW}, {1000000000, 0}};
	double		t0,
				empty_sync = 0;
	char		name[32];
	uint32_t	i;

	/*
	 * What a sync costs with nothing of ours to write (the second of two:
	 * the first writes what the sample of chunks left), left out of each
	 * file's share: a restore pays it once for all its files.
	 */
	if (sync_fs)
	{
		if (syncfs(dirfd) != 0)
			return sb_error_set_errno(err, errno, "could not sync the file system of \"%s\"", dir);
		t0 = sb_monotonic_seconds();
		(void) syncfs(dirfd);
		empty_sync = sb_monotonic_seconds() - t0;
	}
	t0 = sb_monotonic_seconds();
	for (i = 0; i < SAMPLE_FILES; i++)
	{
		int			fd;

		sample_file_name(name, sizeof(name), i);
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return sb_error_set_errno(err, errno, "could not create a sample file in \"%s\"", dir);
		out->files = i + 1;
		if (!sb_pwrite_all(fd, page, sizeof(page), 0, "a sample file", err) ||
			(futimens(fd, times) != 0 &&
			 !sb_error_set_errno(err, errno, "could not set the time of a sample file in \"%s\"", dir)))
		{
			close(fd);
			return false;
		}
		close(fd);
	}
	/* a restore's final sync writes each small file's data and inode: its share, too */
	if (sync_fs && syncfs(dirfd) != 0)
		return sb_error_set_errno(err, errno, "could not sync the file system of \"%s\"", dir);
	out->costs.setup_per_file = (sb_monotonic_seconds() - t0 - empty_sync) / SAMPLE_FILES;
	if (out->costs.setup_per_file <= 0)	/* the empty sync was the slower: a noisy device */
		out->costs.setup_per_file = 1e-9;
	out->synced_files = sync_fs;
	return true;
}

/* The scratch folder and the files made in it, gone. */
static void
remove_scratch(int dirfd, const char *dir, uint32_t files)
{
	char		name[32];
	uint32_t	i;

	for (i = 0; i < files; i++)
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
	ok = sample_chunks(a, o, dirfd, dir, out, err) && sample_files(dirfd, dir, sync_fs, out, err);
	remove_scratch(dirfd, dir, out->files);
	return ok;
}
