/*
 * backup_lanes.c
 *		Source lanes: the large files of each source device read by a thread
 *		of their own, so that a cluster spread over several disks (a data
 *		directory and tablespaces) is read from all of them at once.
 *
 * The caller's thread walks the source and hands each large file over, by
 * path, to the lane of the device it lives on; each lane reads its files in
 * the order handed over, one at a time and front to back, as the caller's
 * thread does without lanes.  A lane opens the file again (the walk goes on
 * meanwhile, and a queue of open descriptors would run out of them), takes
 * its size then, claims its place in the stream and fills it
 * (backup_stream.c).  A lane's queue holds up to SB_LANE_QUEUE files by path
 * (about a MB), so that the walk gets ahead to the other devices'
 * files while a lane reads.  Small files stay on the caller's thread, which
 * reads them several at once (backup_prefetch.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backup/backup_internal.h"
#include "backup/backup_lanes.h"
#include "util/fsutil.h"
#include "backup/source_reader.h"
#include "util/thread.h"

/* A file waiting for its lane. */
typedef struct LaneJob
{
	struct LaneJob *next;
	char	   *path;			/* in the archive */
	char	   *source_path;	/* to open, from the working directory */
} LaneJob;

typedef struct SbLane
{
	SbBackup   *backup;
	uint32_t	dev_major;		/* the device whose files it reads */
	uint32_t	dev_minor;
	SbFiller	filler;
	pthread_t	thread;
	bool		started;
	/* under the stream mutex */
	LaneJob    *head;
	LaneJob    *tail;
	uint32_t	njobs;
	bool		busy;			/* reading a file */
	bool		closed;			/* no more files: its thread ends */
} SbLane;

static void
free_job(LaneJob *j)
{
	if (j == NULL)
		return;
	free(j->path);
	free(j->source_path);
	free(j);
}

uint32_t
sb_lanes_allowed(const SbBackupOptions *o)
{
	uint32_t	buffers = o->buffer_count ? o->buffer_count : SB_DEFAULT_BUFFER_COUNT;
	uint32_t	by_buffers = buffers >= 8 ? (buffers - 2) / 2 - 1 : 0;
	uint32_t	n = o->source_lanes;
	uint32_t	i;

	if (n > SB_MAX_SOURCE_LANES)
		n = SB_MAX_SOURCE_LANES;
	if (n > by_buffers)
		n = by_buffers;
	for (i = 0; o->hooks.read != NULL && i < n; i++)
		if (o->hooks.read_lane_args[i] == NULL)
			n = i;
	return n < 2 || o->type != SB_BACKUP_FULL ? 0 : n;
}

uint32_t
sb_source_lanes_for(const char *const *folders, size_t n)
{
	dev_t		devices[SB_MAX_SOURCE_LANES];
	uint32_t	ndevices = 0;
	size_t		i;

	for (i = 0; i < n && ndevices < SB_MAX_SOURCE_LANES; i++)
	{
		struct stat st;
		uint32_t	j = 0;

		if (stat(folders[i], &st) != 0)
			continue;			/* gone meanwhile: so are its files */
		while (j < ndevices && devices[j] != st.st_dev)
			j++;
		if (j == ndevices)
			devices[ndevices++] = st.st_dev;
	}
	return ndevices >= 2 ? ndevices : 0;
}

bool
sb_lanes_init(SbBackup *b, const SbBackupOptions *o, SbError *err)
{
	uint32_t	n = sb_lanes_allowed(o);
	uint32_t	i;

	if (n == 0)
		return true;
	if ((b->lanes = sb_alloc(n * sizeof(SbLane), err)) == NULL)
		return false;
	b->max_lanes = n;
	for (i = 0; i < n; i++)
	{
		b->lanes[i].backup = b;
		b->lanes[i].filler.hook_arg = o->hooks.read_lane_args[i];
	}
	return true;
}

bool
sb_lanes_take(const SbBackup *b, const SbSourceStatus *st)
{
	return b->max_lanes > 0 && st->data == NULL && st->size > SB_PREFETCH_FILE_BYTES;
}

/* ---- a lane's thread ---- */

/* The lane's next file, waiting for one; NULL once it is closed or the backup failed. */
static LaneJob *
next_job(SbLane *l)
{
	SbBackup   *b = l->backup;
	LaneJob    *j = NULL;

	pthread_mutex_lock(&b->stream_mutex);
	l->busy = false;
	pthread_cond_broadcast(&b->stream_changed);
	while (l->head == NULL && !l->closed && !atomic_load(&b->failed))
		pthread_cond_wait(&b->stream_changed, &b->stream_mutex);
	if (l->head != NULL && !atomic_load(&b->failed))
	{
		j = l->head;
		l->head = j->next;
		if (l->head == NULL)
			l->tail = NULL;
		l->njobs--;
		l->busy = true;
	}
	pthread_mutex_unlock(&b->stream_mutex);
	return j;
}

/* Open J's file again and read it into the place it claims; gone by now: left out. */
static bool
read_job(SbLane *l, const LaneJob *j, SbError *err)
{
	SbBackup   *b = l->backup;
	SbSourceStatus st;
	SbEntry		e;
	char		id[SB_FILE_ID_MAX + 1];
	char		times[SB_FILE_ID_MAX + 1];
	SbPendingEntry *p;
	int			fd;
	bool		ok;

	fd = sb_source_open(AT_FDCWD, j->source_path, j->source_path, sb_source_statx_mask(b), &st,
						err);
	if (fd < 0 && err->code == SB_ENOTFOUND)
	{
		atomic_fetch_add(&b->files_vanished, 1);
		return true;
	}
	if (fd < 0)
		return false;
	sb_source_entry(b, j->path, &st, NULL, &e, id, times, sizeof(id));
	ok = sb_source_examine(b, fd, j->source_path, &st, &e, err) &&
		sb_stream_place(b, &e, false, &p, err) &&
		sb_source_stream_placed(b, &l->filler, fd, j->source_path, &e, err);
	if (ok)
	{
		p->entry.crc32c = e.crc32c;
		sb_stream_done(b, p);
	}
	free(e.extents);
	close(fd);
	return ok;
}

static void *
lane_main(void *arg)
{
	SbLane	   *l = arg;
	LaneJob    *j;
	SbError		err;

	while ((j = next_job(l)) != NULL)
	{
		bool		ok = read_job(l, j, &err);

		free_job(j);
		if (!ok)
		{
			sb_backup_fail(l->backup, &err);
			break;
		}
	}
	return NULL;
}

/* ---- the caller's side ---- */

/* Start lane L for the device of ST: its reader and thread. */
static bool
start_lane(SbBackup *b, SbLane *l, const SbSourceStatus *st, SbError *err)
{
	l->dev_major = st->stx.stx_dev_major;
	l->dev_minor = st->stx.stx_dev_minor;
	l->filler.reader = sb_source_reader_new(b->io_method, b->queue_depth, b->chunk_size,
											b->direct_io, err);
	if (l->filler.reader == NULL || !sb_thread_start(&l->thread, lane_main, l, "source lane", err))
		return false;
	l->started = true;
	b->nlanes++;
	return true;
}

/* The lane of ST's device, started if it is the first of its device; NULL on failure. */
static SbLane *
lane_of(SbBackup *b, const SbSourceStatus *st, SbError *err)
{
	uint32_t	i;

	for (i = 0; i < b->nlanes; i++)
		if (b->lanes[i].dev_major == st->stx.stx_dev_major &&
			b->lanes[i].dev_minor == st->stx.stx_dev_minor)
			return &b->lanes[i];
	if (b->nlanes < b->max_lanes)
		return start_lane(b, &b->lanes[b->nlanes], st, err) ? &b->lanes[b->nlanes - 1] : NULL;
	/* more devices than lanes: they share */
	return &b->lanes[(st->stx.stx_dev_major * 31 + st->stx.stx_dev_minor) % b->nlanes];
}

static bool
has_room(SbBackup *b, void *arg)
{
	(void) b;
	return ((SbLane *) arg)->njobs < SB_LANE_QUEUE;
}

bool
sb_lanes_hand_over(SbBackup *b, const char *path, const char *source_path,
				   const SbSourceStatus *st, SbError *err)
{
	SbLane	   *l = lane_of(b, st, err);
	LaneJob    *j;

	if (l == NULL || (j = sb_alloc(sizeof(LaneJob), err)) == NULL)
		return false;
	j->path = sb_strdup(path, err);
	j->source_path = j->path ? sb_strdup(source_path, err) : NULL;
	if (j->source_path == NULL || !sb_stream_wait(b, has_room, l, err))
	{
		free_job(j);
		return false;
	}
	pthread_mutex_lock(&b->stream_mutex);
	if (l->tail != NULL)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
	l->njobs++;
	pthread_cond_broadcast(&b->stream_changed);
	pthread_mutex_unlock(&b->stream_mutex);
	return sb_stream_flush(b, err);
}

/* Has every lane read every file it was given, and is every entry in? */
static bool
all_read(SbBackup *b, void *arg)
{
	uint32_t	i;

	(void) arg;
	for (i = 0; i < b->nlanes; i++)
		if (b->lanes[i].head != NULL || b->lanes[i].busy)
			return false;
	return b->npending == 0;
}

bool
sb_backup_files_read(SbBackup *b, SbError *err)
{
	return b->nlanes == 0 || sb_stream_wait(b, all_read, NULL, err);
}

uint64_t
sb_backup_files_vanished(const SbBackup *b)
{
	return atomic_load(&b->files_vanished);
}

uint32_t
sb_backup_source_lanes(const SbBackup *b)
{
	return b->max_lanes;
}

void
sb_lanes_free(SbBackup *b)
{
	uint32_t	i;

	if (b->lanes == NULL)
		return;
	pthread_mutex_lock(&b->stream_mutex);
	for (i = 0; i < b->nlanes; i++)
		b->lanes[i].closed = true;
	pthread_cond_broadcast(&b->stream_changed);
	pthread_mutex_unlock(&b->stream_mutex);
	for (i = 0; i < b->max_lanes; i++)
	{
		SbLane	   *l = &b->lanes[i];

		if (l->started)
			pthread_join(l->thread, NULL);
		while (l->head != NULL)
		{
			LaneJob    *j = l->head;

			l->head = j->next;
			free_job(j);
		}
		sb_source_reader_free(l->filler.reader);
	}
	free(b->lanes);
	b->lanes = NULL;
}
