/*
 * backup_prefetch.c
 *		A directory's files opened, examined and (small ones) read several at
 *		once, ahead of the copy: sb_backup_add_files_at.
 *
 * A tree of many small files costs a backup a few system calls a file
 * (open, statx, read, close), each some microseconds of kernel time, and
 * little else: made one after the other on the caller's thread, they keep
 * one CPU busy and the device idle between them.  Here helper threads and
 * the caller's thread itself take the batch's files in order into a window
 * of SLOTS slots: each is opened, its status taken and, when it is small and
 * stored whole, read into its slot.  The caller adds them in the batch's
 * order, so the stream and the manifest are what one file at a time makes.
 *
 * A slot's file stays open until the slot is taken again (a read hook may
 * read it again, to tell a torn page from a bad one), and whoever takes it
 * closes it.  Helpers are woken when half the window is free, not for every
 * slot: a wake-up is a system call too.
 *
 * With direct I/O a small file is read as the source reader reads a block:
 * through the page cache when all of it is there, else with O_DIRECT.
 *
 * How many helpers: when the files are in the page cache the work is all
 * CPU, and helpers beyond one fewer than the CPUs only contend (200,000
 * files of 1 kB, cached: 1 helper 1.8 s, 3 2.0 s, 7 2.4 s); when they must
 * be read from the device, each helper waits on one read, and more reads in
 * flight are faster (not cached: 1 helper 11.4 s, 3 8.7 s, 7 7.0 s).  So
 * MAX_HELPERS are started, and those beyond the CPUs take files only while
 * most of the last ones came from the device.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backup/backup_internal.h"
#include "util/fsutil.h"
#include "util/page_cache.h"
#include "backup/source_reader.h"
#include "util/thread.h"

#define SLOTS SB_PREFETCH_SLOTS
#define DIRECT_ALIGN 4096
#define SMALL_FILE_BYTES SB_PREFETCH_FILE_BYTES
#define MAX_HELPERS 7
#define DEVICE_SCORE_MAX 32		/* of the last files read, */
#define DEVICE_SCORE_BUSY 16	/* this many more from the device than not: all helpers */

typedef enum SlotState
{
	SLOT_FREE,
	SLOT_CLAIMED,				/* being examined */
	SLOT_READY
} SlotState;

typedef struct Slot
{
	SlotState	state;			/* under the pool's lock */
	int			fd;				/* its file, -1: closed or gone */
	SbSourceStatus st;			/* st.data = buf when the file was read */
	uint8_t    *buf;			/* SMALL_FILE_BYTES */
	SbError		err;			/* why it could not be opened or read */
	bool		from_device;	/* it was read, and not all from the page cache */
	bool		was_read;
} Slot;

/* Helpers that take files always, and those that do while files come from the device. */
typedef enum HelperKind
{
	HELPER_CPU,
	HELPER_DEVICE
} HelperKind;

typedef struct Helper
{
	struct SbPrefetch *pool;
	uint32_t	index;
	pthread_t	thread;
} Helper;

typedef struct SbPrefetch
{
	pthread_mutex_t lock;
	/* a batch, room in the window, or stop: the helpers of each kind */
	pthread_cond_t wake[2];		/* HELPER_CPU, HELPER_DEVICE */
	uint32_t	idle[2];
	pthread_cond_t caller_wake; /* the slot the caller waits for is ready */
	Helper		helpers[MAX_HELPERS];
	uint32_t	nhelpers;
	uint32_t	cpu_helpers;	/* helpers 0 to this take files always, the rest */
	uint32_t	device_score;	/* when this is DEVICE_SCORE_BUSY or more */
	bool		caller_waiting;
	bool		stopping;
	/* how files are examined */
	unsigned int statx_mask;
	bool		read_small;		/* files stored whole: not when a parent decides */
	bool		detect_holes;
	bool		direct;
	/* the batch */
	int			dirfd;
	const SbFileAt *files;
	uint32_t	nfiles;			/* cut to CLAIMED when the batch stops early */
	uint32_t	claimed;		/* files taken to examine */
	uint32_t	consumed;		/* files the caller is done with */
	uint32_t	busy;			/* claimed, not ready */
	Slot		slots[SLOTS];
} SbPrefetch;

static Slot *
slot_of(SbPrefetch *p, uint32_t file)
{
	return &p->slots[file % SLOTS];
}

/* Under the lock: may a file be taken (one left, and its slot free of the one before)? */
static bool
claimable(const SbPrefetch *p)
{
	return p->files != NULL && p->claimed < p->nfiles && p->claimed < p->consumed + SLOTS;
}

/* Under the lock: take the next file. */
static uint32_t
claim(SbPrefetch *p)
{
	uint32_t	file = p->claimed++;

	slot_of(p, file)->state = SLOT_CLAIMED;
	p->busy++;
	return file;
}

/* Under the lock: do the files come from the device?  A score of the last ones read. */
static void
score_read(SbPrefetch *p, const Slot *s)
{
	bool		was_busy = p->device_score >= DEVICE_SCORE_BUSY;

	if (!s->was_read)
		return;
	if (s->from_device && p->device_score < DEVICE_SCORE_MAX)
		p->device_score++;
	else if (!s->from_device && p->device_score > 0)
		p->device_score--;
	if (!was_busy && p->device_score >= DEVICE_SCORE_BUSY && p->idle[HELPER_DEVICE] > 0)
		pthread_cond_broadcast(&p->wake[HELPER_DEVICE]);
}

/* Under the lock: the helpers that would find work, woken (a wake-up is a system call). */
static void
wake_helpers(SbPrefetch *p)
{
	if (p->idle[HELPER_CPU] > 0)
		pthread_cond_broadcast(&p->wake[HELPER_CPU]);
	if (p->idle[HELPER_DEVICE] > 0 && p->device_score >= DEVICE_SCORE_BUSY)
		pthread_cond_broadcast(&p->wake[HELPER_DEVICE]);
}

/* Under the lock: FILE is examined; its slot is ready. */
static void
finish(SbPrefetch *p, uint32_t file)
{
	Slot	   *s = slot_of(p, file);

	s->state = SLOT_READY;
	p->busy--;
	score_read(p, s);
	if (p->caller_waiting)
		pthread_cond_signal(&p->caller_wake);
}

/* Read up to LEN bytes at the start of FD into BUF; how many, or -1 (errno set). */
static ssize_t
read_start(int fd, uint8_t *buf, size_t len, bool direct)
{
	size_t		got = 0;

	while (got < len)
	{
		ssize_t		n = pread(fd, buf + got, len - got, (off_t) got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		got += (size_t) n;
		/* O_DIRECT cannot go on from an unaligned end; its short read is the end */
		if (n == 0 || direct)
			break;
	}
	return (ssize_t) got;
}

/*
 * Read the first LEN bytes of FD through the page cache, into BUF; how many,
 * or -1.  *FROM_DEVICE: they were not all in the cache (a read that must not
 * wait for the device says so, and starts reading them in).
 */
static ssize_t
read_cached(int fd, uint8_t *buf, size_t len, bool *from_device)
{
	struct iovec iov = {buf, len};
	ssize_t		n = preadv2(fd, &iov, 1, 0, RWF_NOWAIT);

	*from_device = n < 0 ? errno == EAGAIN : (size_t) n < len;
	return n >= 0 && (size_t) n == len ? n : read_start(fd, buf, len, false);
}

/*
 * Read all of a small file into the slot.  With direct I/O, by the rule the
 * source reader follows (source_reader.c): through the page cache when all
 * of it is there, else with O_DIRECT (whole pages), else, where the file
 * system refuses O_DIRECT, through the cache and then dropped from it.
 * False (the slot's error set) on a read error.
 */
static bool
read_small(SbPrefetch *p, Slot *s, const char *what)
{
	size_t		want = (size_t) s->st.size;
	bool		uncached = p->direct && !sb_range_cached(s->fd, 0, want);
	int			direct_fd = uncached ? sb_source_open_direct(s->fd) : -1;
	size_t		len = direct_fd >= 0 ? (want + DIRECT_ALIGN - 1) / DIRECT_ALIGN * DIRECT_ALIGN : want;
	ssize_t		got;

	if (p->direct)
		got = read_start(direct_fd >= 0 ? direct_fd : s->fd, s->buf, len, direct_fd >= 0);
	else
		got = read_cached(s->fd, s->buf, want, &uncached);
	if (got < 0)
		sb_error_set_errno(&s->err, errno, "could not read \"%s\"", what);
	if (direct_fd >= 0)
		close(direct_fd);
	else if (uncached && p->direct)
		(void) posix_fadvise(s->fd, 0, 0, POSIX_FADV_DONTNEED);
	if (got < 0)
		return false;
	/* A file that shrank since it was examined reads as zeros to its old size. */
	if ((size_t) got < want)
		memset(s->buf + got, 0, want - (size_t) got);
	s->st.data = s->buf;
	s->was_read = true;
	s->from_device = uncached;
	return true;
}

/* Open FILE, take its status and read it if small: what its slot then holds. */
static void
examine(SbPrefetch *p, uint32_t file)
{
	const SbFileAt *f = &p->files[file];
	Slot	   *s = slot_of(p, file);

	if (s->fd >= 0)
		close(s->fd);			/* the file the slot held before, which the caller is done with */
	sb_error_clear(&s->err);
	s->was_read = s->from_device = false;
	s->fd = sb_source_open(p->dirfd, f->name, f->source_path, p->statx_mask, &s->st, &s->err);
	if (s->fd < 0 || !p->read_small || s->st.size == 0 || s->st.size > SMALL_FILE_BYTES ||
		(p->detect_holes && sb_source_may_have_holes(s->st.allocated, s->st.size)))
		return;
	if (!read_small(p, s, f->source_path))
	{
		close(s->fd);
		s->fd = -1;
	}
}

/* Under the lock: examine a file, the lock let go meanwhile. */
static void
examine_one(SbPrefetch *p)
{
	uint32_t	file = claim(p);

	pthread_mutex_unlock(&p->lock);
	examine(p, file);
	pthread_mutex_lock(&p->lock);
	finish(p, file);
}

/* Under the lock: should a helper of KIND take a file now? */
static bool
helper_has_work(const SbPrefetch *p, HelperKind kind)
{
	return claimable(p) && (kind == HELPER_CPU || p->device_score >= DEVICE_SCORE_BUSY);
}

static void *
helper_main(void *arg)
{
	Helper	   *h = arg;
	SbPrefetch *p = h->pool;
	HelperKind	kind = h->index < p->cpu_helpers ? HELPER_CPU : HELPER_DEVICE;

	pthread_mutex_lock(&p->lock);
	while (!p->stopping)
	{
		if (helper_has_work(p, kind))
		{
			examine_one(p);
			continue;
		}
		p->idle[kind]++;
		pthread_cond_wait(&p->wake[kind], &p->lock);
		p->idle[kind]--;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

void
sb_prefetch_free(SbPrefetch *p)
{
	uint32_t	i;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->wake[HELPER_CPU]);
	pthread_cond_broadcast(&p->wake[HELPER_DEVICE]);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nhelpers; i++)
		pthread_join(p->helpers[i].thread, NULL);
	for (i = 0; i < SLOTS; i++)
	{
		if (p->slots[i].fd >= 0)
			close(p->slots[i].fd);
		free(p->slots[i].buf);
	}
	pthread_cond_destroy(&p->wake[HELPER_CPU]);
	pthread_cond_destroy(&p->wake[HELPER_DEVICE]);
	pthread_cond_destroy(&p->caller_wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static SbPrefetch *
prefetch_new(const SbBackup *b, SbError *err)
{
	SbPrefetch *p = sb_alloc(sizeof(SbPrefetch), err);
	uint32_t	cpus = sb_cpu_count() - 1;	/* the caller's thread is one */
	uint32_t	i;

	if (p == NULL)
		return NULL;
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake[HELPER_CPU], NULL);
	pthread_cond_init(&p->wake[HELPER_DEVICE], NULL);
	pthread_cond_init(&p->caller_wake, NULL);
	p->statx_mask = sb_source_statx_mask(b);
	p->read_small = b->parent == NULL;
	p->detect_holes = b->detect_holes;
	p->direct = b->direct_io;
	for (i = 0; i < SLOTS; i++)
		p->slots[i].fd = -1;
	for (i = 0; i < SLOTS; i++)
		if (posix_memalign((void **) &p->slots[i].buf, DIRECT_ALIGN, SMALL_FILE_BYTES) != 0)
		{
			sb_error_set(err, SB_ENOMEM, "out of memory allocating read buffers");
			sb_prefetch_free(p);
			return NULL;
		}
	p->cpu_helpers = cpus < MAX_HELPERS ? cpus : MAX_HELPERS;
	for (i = 0; i < MAX_HELPERS; i++)
	{
		p->helpers[i].pool = p;
		p->helpers[i].index = i;
		if (!sb_thread_start(&p->helpers[i].thread, helper_main, &p->helpers[i], "file prefetch", err))
		{
			sb_prefetch_free(p);
			return NULL;
		}
		p->nhelpers++;
	}
	return p;
}

/* Under the lock: the caller's next file, examined (by a helper or by the caller itself). */
static Slot *
wait_ready(SbPrefetch *p, uint32_t file)
{
	Slot	   *s = slot_of(p, file);

	while (s->state != SLOT_READY)
	{
		if (claimable(p))
		{
			examine_one(p);
			continue;
		}
		p->caller_waiting = true;
		pthread_cond_wait(&p->caller_wake, &p->lock);
		p->caller_waiting = false;
	}
	return s;
}

/* Under the lock: the caller is done with FILE's slot. */
static void
release(SbPrefetch *p, uint32_t file)
{
	slot_of(p, file)->state = SLOT_FREE;
	p->consumed++;
	if (p->claimed < p->nfiles && p->claimed + SLOTS / 2 <= p->consumed + SLOTS)
		wake_helpers(p);
}

/* Add FILE as its slot says: a file gone is marked, an error stops the batch. */
static bool
add_examined(SbBackup *b, SbFileAt *f, Slot *s, SbError *err)
{
	if (s->fd < 0 && s->err.code == SB_ENOTFOUND)
	{
		f->gone = true;
		return true;
	}
	if (s->fd < 0)
	{
		*err = s->err;
		return false;
	}
	return sb_backup_add_open_file(b, f->path, f->source_path, s->fd, &s->st, err);
}

static void
start_batch(SbPrefetch *p, int dirfd, const SbFileAt *files, uint32_t n)
{
	pthread_mutex_lock(&p->lock);
	p->dirfd = dirfd;
	p->files = files;
	p->nfiles = n;
	p->claimed = p->consumed = p->busy = 0;
	wake_helpers(p);
	pthread_mutex_unlock(&p->lock);
}

/*
 * No more files taken; wait for those being examined (they use DIRFD and the
 * names).  A batch that stopped early leaves slots examined and not added:
 * free, so that the next batch does not take them for its own.
 */
static void
end_batch(SbPrefetch *p)
{
	uint32_t	i;

	pthread_mutex_lock(&p->lock);
	p->nfiles = p->claimed;
	while (p->busy > 0)
	{
		p->caller_waiting = true;
		pthread_cond_wait(&p->caller_wake, &p->lock);
		p->caller_waiting = false;
	}
	p->files = NULL;
	for (i = 0; i < SLOTS; i++)
		p->slots[i].state = SLOT_FREE;
	pthread_mutex_unlock(&p->lock);
}

bool
sb_backup_add_files_at(SbBackup *b, int dirfd, SbFileAt *files, uint32_t n, SbError *err)
{
	SbPrefetch *p;
	uint32_t	i;
	bool		ok = true;

	for (i = 0; i < n; i++)
	{
		files[i].gone = false;
		if (!sb_path_is_safe(files[i].path, false))
			return sb_error_set(err, SB_EINVAL, "unsafe path in archive: \"%s\"", files[i].path);
	}
	if (b->prefetch == NULL && (b->prefetch = prefetch_new(b, err)) == NULL)
		return false;
	p = b->prefetch;
	start_batch(p, dirfd, files, n);
	pthread_mutex_lock(&p->lock);
	for (i = 0; ok && i < n; i++)
	{
		Slot	   *s = wait_ready(p, i);

		pthread_mutex_unlock(&p->lock);
		ok = add_examined(b, &files[i], s, err);
		pthread_mutex_lock(&p->lock);
		release(p, i);
	}
	pthread_mutex_unlock(&p->lock);
	end_batch(p);
	return ok;
}
