/*
 * restore_writeback.c
 *		One thread per target device: the write-out of what a restore wrote,
 *		started early and dropped from the page cache behind it, and the
 *		file system synced at the end.
 *
 * A restore writes through the page cache and has the kernel start writing
 * each large piece to its device at once (sync_file_range), as PostgreSQL's
 * checkpointer does with its flush_after: else every byte would wait in the
 * cache (far below the kernel's dirty threshold on a large machine) for the
 * final sync, which would then write it all while nothing else happens.
 * That call waits while the device's queue is full.  Made by the worker that
 * wrote the piece, it held that worker to the device's pace, and with it the
 * pieces meant for every other device: a restore onto a data directory and a
 * tablespace on two disks wrote them one after the other, as the backup's
 * stream holds them.  So on several devices each device's thread takes a
 * queue of ranges and starts them, waiting on its device alone; the workers
 * go on to the next chunk.  On one device there is no other device to hold
 * back: the worker starts its piece's write-out itself, as soon as it is
 * written (queued for a thread, the write-out started later: 5 % slower over
 * a 1.3 GB restore), and the thread has only the second task.
 *
 * That task: once a device's ranges started after one add up to KEEP_BEHIND,
 * the thread waits for that range to be written and drops it from the page
 * cache.  What a restore wrote is of no use there (the cluster starts later
 * and reads what it needs), and without this a 16 GB restore would push 16
 * GB of the machine's cache out for it, as the backup is careful not to.  On
 * a virtual machine that hands free memory back to its host, pages never
 * touched before cost a fault to the host as the restore copies into them:
 * a 1.1 GB restore took 0.67-2.70 s in one run, the slow ones spending 56 %
 * of their time copying into new page-cache pages; reusing the same 64 MB of
 * pages, 1.09-1.13 s every time.  Waiting here holds no worker.
 *
 * At the end the threads sync their file systems together: one syncfs after
 * another would have each device wait for the one before.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "restore/restore_writeback.h"
#include "util/thread.h"

/* A shorter range costs more in queueing than its early start gains: the sync takes it. */
#define WRITEBACK_MIN ((uint64_t) 256 * 1024)

/* Ranges a device may have waiting (1 MB chunks: 4 GB, past the usual dirty limits). */
#define QUEUE_RANGES 4096

/*
 * Ranges whose write-out the worker started wait for this many before the
 * thread is woken to drop older ones: waking it for each cost a 16,000-file
 * restore 3-5 %.
 */
#define WAKE_BATCH 16

/* What a device's latest ranges may keep in the page cache: older ones are written and dropped. */
#define KEEP_BEHIND ((uint64_t) 64 * 1024 * 1024)
#define BEHIND_RANGES (KEEP_BEHIND / WRITEBACK_MIN + 1)

typedef struct Range
{
	int			dir_fd;
	char	   *rel;			/* malloc'd */
	uint64_t	offset;
	uint64_t	length;
} Range;

/* A file a thread keeps open while ranges follow in it. */
typedef struct OpenFile
{
	int			fd;
	int			dir_fd;
	char	   *rel;			/* malloc'd; NULL: none */
} OpenFile;

typedef struct Device
{
	dev_t		dev;
	bool		workers_start;	/* the only device: the workers start each range's write-out */
	int			dir_fd;			/* one output directory on it, for syncfs */
	const char *dir_path;
	pthread_t	thread;
	bool		started;
	pthread_mutex_t lock;
	pthread_cond_t queued;		/* a range came, or the end */
	pthread_cond_t room;		/* a range was taken */
	Range	   *queue;			/* QUEUE_RANGES, a ring */
	uint32_t	head;
	uint32_t	count;
	bool		finishing;
	bool		sync;
	int			sync_errno;		/* syncfs's failure, or 0 */
	/* the thread's: ranges started and still in the cache, oldest first */
	Range	   *behind;			/* BEHIND_RANGES, a ring */
	uint32_t	behind_head;
	uint32_t	behind_count;
	uint64_t	behind_bytes;
	OpenFile	started_file;	/* the file of the range last started */
	OpenFile	dropped_file;	/* the file of the range last dropped */
} Device;

struct SbWriteback
{
	Device	   *devices;
	uint32_t	ndevices;
	int		   *dir_fds;		/* a copy of the caller's */
	uint32_t   *dir_device;		/* each output directory's device */
	uint32_t	ndirs;
};

/*
 * The next range of D's queue into R; false at the end: once the restore is
 * written and the queue empty, or at once (the rest dropped) when it will
 * not be synced.
 */
static bool
take_range(Device *d, Range *r)
{
	pthread_mutex_lock(&d->lock);
	while (d->count == 0 && !d->finishing)
		pthread_cond_wait(&d->queued, &d->lock);
	if (d->finishing && !d->sync)
		for (; d->count > 0; d->count--, d->head = (d->head + 1) % QUEUE_RANGES)
			free(d->queue[d->head].rel);
	if (d->count == 0)
	{
		pthread_mutex_unlock(&d->lock);
		return false;
	}
	*r = d->queue[d->head];
	d->head = (d->head + 1) % QUEUE_RANGES;
	d->count--;
	pthread_cond_signal(&d->room);
	pthread_mutex_unlock(&d->lock);
	return true;
}

static void
close_file(OpenFile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->rel);
	f->fd = -1;
	f->rel = NULL;
}

/* REL beneath DIR_FD, open in F; -1 when it cannot be opened (then the final sync takes it). */
static int
open_file(OpenFile *f, int dir_fd, const char *rel)
{
	if (f->rel != NULL && f->dir_fd == dir_fd && strcmp(f->rel, rel) == 0)
		return f->fd;
	close_file(f);
	f->fd = sb_open_beneath(dir_fd, rel, O_RDONLY, 0);
	f->dir_fd = dir_fd;
	f->rel = strdup(rel);		/* without it, opened again next time */
	return f->fd;
}

/* What becomes of a range dropped from the list behind. */
typedef enum Drop
{
	DROP_WRITTEN,				/* waited for until written, then out of the cache */
	DROP_SYNCED,				/* out of the cache: the file system is synced */
	DROP_FORGOTTEN,				/* nothing: the restore failed */
} Drop;

static void
drop_oldest(Device *d, Drop how)
{
	Range	   *r = &d->behind[d->behind_head];
	int			fd = how == DROP_FORGOTTEN ? -1 : open_file(&d->dropped_file, r->dir_fd, r->rel);

	if (fd >= 0 && how == DROP_WRITTEN)
		(void) sync_file_range(fd, (off_t) r->offset, (off_t) r->length,
							   SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
							   SYNC_FILE_RANGE_WAIT_AFTER);
	if (fd >= 0)
		(void) posix_fadvise(fd, (off_t) r->offset, (off_t) r->length, POSIX_FADV_DONTNEED);
	free(r->rel);
	d->behind_bytes -= r->length;
	d->behind_head = (d->behind_head + 1) % BEHIND_RANGES;
	d->behind_count--;
}

/* R, started, joins the ranges behind; those further back than KEEP_BEHIND are dropped. */
static void
keep_behind(Device *d, const Range *r)
{
	while (d->behind_count > 0 &&
		   (d->behind_count == BEHIND_RANGES || d->behind_bytes + r->length > KEEP_BEHIND))
		drop_oldest(d, DROP_WRITTEN);
	d->behind[(d->behind_head + d->behind_count) % BEHIND_RANGES] = *r;
	d->behind_count++;
	d->behind_bytes += r->length;
}

static void
start_range(Device *d, const Range *r)
{
	int			fd = open_file(&d->started_file, r->dir_fd, r->rel);

	if (fd >= 0)
		(void) sync_file_range(fd, (off_t) r->offset, (off_t) r->length, SYNC_FILE_RANGE_WRITE);
}

static void *
device_main(void *arg)
{
	Device	   *d = arg;
	Range		r;

	while (take_range(d, &r))
	{
		if (!d->workers_start)
			start_range(d, &r);
		keep_behind(d, &r);
	}
	close_file(&d->started_file);
	if (d->sync && syncfs(d->dir_fd) != 0)
		d->sync_errno = errno;
	while (d->behind_count > 0)
		drop_oldest(d, d->sync && d->sync_errno == 0 ? DROP_SYNCED : DROP_FORGOTTEN);
	close_file(&d->dropped_file);
	return NULL;
}

/* The device of each directory; the devices, one directory each.  False when out of memory. */
static bool
find_devices(SbWriteback *wb, const char *const *dir_paths)
{
	uint32_t	i;
	uint32_t	k;
	struct stat st;

	for (i = 0; i < wb->ndirs; i++)
	{
		if (fstat(wb->dir_fds[i], &st) != 0)
			return false;
		for (k = 0; k < wb->ndevices && wb->devices[k].dev != st.st_dev; k++)
			;
		wb->dir_device[i] = k;
		if (k < wb->ndevices)
			continue;
		wb->devices[k].dev = st.st_dev;
		wb->devices[k].dir_fd = wb->dir_fds[i];
		wb->devices[k].dir_path = dir_paths[i];
		wb->ndevices++;
	}
	return true;
}

static bool
start_device(Device *d)
{
	SbError		err;

	d->started_file.fd = d->dropped_file.fd = -1;
	d->queue = malloc(QUEUE_RANGES * sizeof(Range));
	d->behind = malloc(BEHIND_RANGES * sizeof(Range));
	if (d->queue == NULL || d->behind == NULL)
	{
		free(d->queue);
		free(d->behind);
		d->queue = d->behind = NULL;
		return false;
	}
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->queued, NULL);
	pthread_cond_init(&d->room, NULL);
	d->started = sb_thread_start(&d->thread, device_main, d, "restore write-out", &err);
	return d->started;
}

static void free_writeback(SbWriteback *wb);

SbWriteback *
sb_writeback_start(const int *dir_fds, const char *const *dir_paths, uint32_t ndirs)
{
	SbWriteback *wb = calloc(1, sizeof(SbWriteback));
	uint32_t	k;

	if (wb == NULL)
		return NULL;
	wb->ndirs = ndirs;
	wb->dir_fds = malloc(ndirs * sizeof(int));
	wb->devices = calloc(ndirs, sizeof(Device));
	wb->dir_device = calloc(ndirs, sizeof(uint32_t));
	if (wb->dir_fds != NULL)
		memcpy(wb->dir_fds, dir_fds, ndirs * sizeof(int));
	if (wb->dir_fds == NULL || wb->devices == NULL || wb->dir_device == NULL ||
		!find_devices(wb, dir_paths))
	{
		free_writeback(wb);
		return NULL;
	}
	wb->devices[0].workers_start = wb->ndevices == 1;
	for (k = 0; k < wb->ndevices; k++)
		if (!start_device(&wb->devices[k]))
		{
			SbError		ignored;

			(void) sb_writeback_finish(wb, false, &ignored);
			return NULL;
		}
	return wb;
}

/*
 * The range at the end of D's queue, if it is REL's and ends at OFFSET: then
 * it grows, up to a quarter of what is kept behind (so that it leaves the
 * cache in steps).
 */
static bool
extend_last(Device *d, int dir_fd, const char *rel, uint64_t offset, uint64_t length)
{
	Range	   *last;

	if (d->count == 0)
		return false;
	last = &d->queue[(d->head + d->count - 1) % QUEUE_RANGES];
	if (last->dir_fd != dir_fd || last->offset + last->length != offset ||
		last->length + length > KEEP_BEHIND / 4 || strcmp(last->rel, rel) != 0)
		return false;
	last->length += length;
	return true;
}

void
sb_writeback_add(SbWriteback *wb, int fd, int dir_fd, const char *rel, uint64_t offset,
				 uint64_t length)
{
	bool		start_here = wb == NULL || wb->devices[0].workers_start;
	Device	   *d;
	uint32_t	i;
	char	   *copy;

	if (length < WRITEBACK_MIN)
		return;
	if (start_here)
		(void) sync_file_range(fd, (off_t) offset, (off_t) length, SYNC_FILE_RANGE_WRITE);
	if (wb == NULL)
		return;
	for (i = 0; i < wb->ndirs && wb->dir_fds[i] != dir_fd; i++)
		;
	if (i == wb->ndirs)
		return;
	d = &wb->devices[wb->dir_device[i]];
	pthread_mutex_lock(&d->lock);
	if (!extend_last(d, dir_fd, rel, offset, length) && (copy = strdup(rel)) != NULL)
	{
		while (d->count == QUEUE_RANGES)
			pthread_cond_wait(&d->room, &d->lock);
		d->queue[(d->head + d->count) % QUEUE_RANGES] = (Range) {dir_fd, copy, offset, length};
		d->count++;
		if (!d->workers_start || d->count >= WAKE_BATCH)
			pthread_cond_signal(&d->queued);
	}
	pthread_mutex_unlock(&d->lock);
}

static void
free_writeback(SbWriteback *wb)
{
	uint32_t	k;

	for (k = 0; wb->devices != NULL && k < wb->ndevices; k++)
	{
		Device	   *d = &wb->devices[k];

		if (d->queue == NULL)
			continue;
		free(d->queue);
		free(d->behind);
		pthread_mutex_destroy(&d->lock);
		pthread_cond_destroy(&d->queued);
		pthread_cond_destroy(&d->room);
	}
	free(wb->devices);
	free(wb->dir_device);
	free(wb->dir_fds);
	free(wb);
}

bool
sb_writeback_finish(SbWriteback *wb, bool sync, SbError *err)
{
	uint32_t	k;
	bool		ok = true;

	if (wb == NULL)
		return true;
	for (k = 0; k < wb->ndevices; k++)
	{
		Device	   *d = &wb->devices[k];

		if (!d->started)
			continue;
		pthread_mutex_lock(&d->lock);
		d->finishing = true;
		d->sync = sync;
		pthread_cond_signal(&d->queued);
		pthread_mutex_unlock(&d->lock);
	}
	for (k = 0; k < wb->ndevices; k++)
	{
		Device	   *d = &wb->devices[k];

		if (!d->started)
			continue;
		pthread_join(d->thread, NULL);
		if (d->sync_errno != 0 && ok)
			ok = sb_error_set_errno(err, d->sync_errno, "could not sync the file system of \"%s\"",
									d->dir_path);
	}
	free_writeback(wb);
	return ok;
}
