/*
 * restore_writeback.c
 *		One thread per target device, starting the write-out of what a
 *		restore wrote, and syncing its file system at the end.
 *
 * A restore writes through the page cache and has the kernel start writing
 * each large piece to its device at once (sync_file_range), as PostgreSQL's
 * checkpointer does with its flush_after: else every byte would wait in the
 * cache (far below the kernel's dirty threshold on a large machine) for the
 * final sync, which would then write it all while nothing else happens.
 * That call waits while the device's queue is full.  Made by the
 * worker that wrote the piece, it held that worker to the device's pace, and
 * with it the pieces meant for every other device: a restore onto a data
 * directory and a tablespace on two disks wrote them one after the other,
 * as the backup's stream holds them.  Here each device has a thread of its
 * own that takes a queue of ranges and waits on its device alone; the
 * workers go on to the next chunk, and the page cache holds what a slower
 * device has yet to take (as much as the kernel's dirty limits let it).
 * At the end the threads sync their file systems together: one syncfs
 * after another would have each device wait for the one before.
 *
 * On one device there is no other device to hold back: the worker starts
 * its piece's write-out itself, as soon as it is written, and the caller
 * syncs.  (A thread there cost 5 % of a 1.3 GB restore into a fresh ext4,
 * three sets of five runs each: its write-out starts later, the pieces
 * having waited in its queue.)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "restore_writeback.h"
#include "thread.h"

/* A shorter range costs more in queueing than its early start gains: the sync takes it. */
#define WRITEBACK_MIN ((uint64_t) 256 * 1024)

/* Ranges a device may have waiting (1 MB chunks: 4 GB, past the usual dirty limits). */
#define QUEUE_RANGES 4096

typedef struct Range
{
	int			dir_fd;
	char	   *rel;			/* malloc'd */
	uint64_t	offset;
	uint64_t	length;
} Range;

typedef struct Device
{
	dev_t		dev;
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
	/* the thread's open file, kept while ranges follow in it */
	int			open_fd;
	int			open_dir;
	char	   *open_rel;
} Device;

struct SbWriteback
{
	Device	   *devices;
	uint32_t	ndevices;
	bool		threaded;		/* several devices: a thread each; else none */
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
close_open_file(Device *d)
{
	if (d->open_fd >= 0)
		close(d->open_fd);
	free(d->open_rel);
	d->open_fd = -1;
	d->open_rel = NULL;
}

/* Start R's write-out; a file that cannot be opened is left to the final sync. */
static void
start_range(Device *d, Range *r)
{
	if (d->open_rel == NULL || d->open_dir != r->dir_fd || strcmp(d->open_rel, r->rel) != 0)
	{
		close_open_file(d);
		d->open_fd = sb_open_beneath(r->dir_fd, r->rel, O_RDONLY, 0);
		d->open_dir = r->dir_fd;
		d->open_rel = r->rel;
		r->rel = NULL;
	}
	free(r->rel);
	if (d->open_fd >= 0)
		(void) sync_file_range(d->open_fd, (off_t) r->offset, (off_t) r->length,
							   SYNC_FILE_RANGE_WRITE);
}

static void *
device_main(void *arg)
{
	Device	   *d = arg;
	Range		r;

	while (take_range(d, &r))
		start_range(d, &r);
	close_open_file(d);
	if (d->sync && syncfs(d->dir_fd) != 0)
		d->sync_errno = errno;
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

	d->open_fd = -1;
	if ((d->queue = malloc(QUEUE_RANGES * sizeof(Range))) == NULL)
		return false;
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
	wb->threaded = wb->ndevices > 1;
	for (k = 0; wb->threaded && k < wb->ndevices; k++)
		if (!start_device(&wb->devices[k]))
		{
			SbError		ignored;

			(void) sb_writeback_finish(wb, false, &ignored);
			return NULL;
		}
	return wb;
}

/* The range at the end of D's queue, if it is REL's and ends at OFFSET: then it grows. */
static bool
extend_last(Device *d, int dir_fd, const char *rel, uint64_t offset, uint64_t length)
{
	Range	   *last;

	if (d->count == 0)
		return false;
	last = &d->queue[(d->head + d->count - 1) % QUEUE_RANGES];
	if (last->dir_fd != dir_fd || last->offset + last->length != offset || strcmp(last->rel, rel) != 0)
		return false;
	last->length += length;
	return true;
}

void
sb_writeback_add(SbWriteback *wb, int fd, int dir_fd, const char *rel, uint64_t offset,
				 uint64_t length)
{
	Device	   *d;
	uint32_t	i;
	char	   *copy;

	if (length < WRITEBACK_MIN)
		return;
	if (wb == NULL || !wb->threaded)
	{
		(void) sync_file_range(fd, (off_t) offset, (off_t) length, SYNC_FILE_RANGE_WRITE);
		return;
	}
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
	if (!wb->threaded && sync && syncfs(wb->devices[0].dir_fd) != 0)
		ok = sb_error_set_errno(err, errno, "could not sync the file system of \"%s\"",
								wb->devices[0].dir_path);
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
