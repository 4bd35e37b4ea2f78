/*
 * source_reader.c
 *		Read-ahead of one source file at a time.
 *
 * The file's ranges are cut into blocks; up to DEPTH blocks are being read
 * at once into page-aligned buffers, and the caller takes them back in file
 * order (the order a file's checksum and page checks need).  Each buffer the
 * caller is done with starts the next read.
 *
 * With direct I/O, a backup must neither evict the application's working
 * set nor fill the cache with data read once.  A block whose pages are all
 * in the page cache already is read through it: a copy from memory that
 * changes nothing in the cache (a busy server's hot relations are there,
 * and reading them from the device instead would cost the backup its
 * speed).  Any other block is read with O_DIRECT, from a second descriptor
 * opened when first needed; transfers are then whole multiples of 4 kB (a
 * short last one is fine).  A file system that refuses O_DIRECT (tmpfs) gets
 * normal reads, and if any were of pages not cached before, the file is
 * dropped from the cache afterwards (posix_fadvise DONTNEED).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/page_cache.h"
#include "backup/source_reader.h"

#define DIRECT_ALIGN 4096

typedef struct Block
{
	SbIoOp		op;
	uint8_t    *buf;
	uint64_t	offset;			/* in the file */
	size_t		len;			/* bytes of the file it stands for */
	bool		done;
} Block;

struct SbSourceReader
{
	SbIo	   *io;
	uint32_t	depth;
	uint32_t	block_size;
	bool		direct;
	Block	   *blocks;			/* a ring: head is the next one handed out */
	uint32_t	head;
	uint32_t	count;
	bool		head_taken;		/* the caller holds the head block */
	/* the file being read */
	int			fd;				/* the caller's, reading through the cache */
	const char *what;
	int			direct_fd;		/* the same file, O_DIRECT; -1 until needed */
	bool		direct_refused; /* its file system refused O_DIRECT */
	bool		read_uncached;	/* pages not cached before were read through the cache */
	const SbExtent *ranges;
	uint32_t	nranges;
	uint32_t	range;			/* next range to request from */
	uint64_t	range_pos;		/* next offset within it */
};

SbSourceReader *
sb_source_reader_new(SbIoMethod method, uint32_t depth, uint32_t block, bool direct, SbError *err)
{
	SbSourceReader *r = sb_alloc(sizeof(SbSourceReader), err);
	uint32_t	i;

	if (r == NULL)
		return NULL;
	r->depth = depth ? depth : 1;
	r->block_size = block;
	r->direct = direct;
	r->fd = -1;
	r->direct_fd = -1;
	r->blocks = sb_alloc(r->depth * sizeof(Block), err);
	r->io = r->blocks ? sb_io_new(method, r->depth, NULL, err) : NULL;
	for (i = 0; r->io != NULL && i < r->depth; i++)
		if (posix_memalign((void **) &r->blocks[i].buf, DIRECT_ALIGN, block) != 0)
		{
			sb_error_set(err, SB_ENOMEM, "out of memory allocating read buffers");
			break;
		}
	if (r->io == NULL || i < r->depth)
	{
		sb_source_reader_free(r);
		return NULL;
	}
	return r;
}

void
sb_source_reader_free(SbSourceReader *r)
{
	uint32_t	i;

	if (r == NULL)
		return;
	if (r->io != NULL)
		sb_source_reader_end(r);
	for (i = 0; r->blocks != NULL && i < r->depth; i++)
		free(r->blocks[i].buf);
	free(r->blocks);
	sb_io_free(r->io);
	free(r);
}

/* Set once O_NOATIME was refused (files of another owner): not asked again. */
static atomic_bool noatime_refused;

/* Without O_NOATIME, a first read after a change dirties each file's inode (relatime). */
static int
open_for_reading(int dirfd, const char *name)
{
	int			flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC;
	int			fd = -1;

	if (!atomic_load(&noatime_refused))
	{
		fd = openat(dirfd, name, flags | O_NOATIME);
		if (fd >= 0 || errno != EPERM)
			return fd;
		atomic_store(&noatime_refused, true);
	}
	return openat(dirfd, name, flags);
}

int
sb_source_reader_open(int dirfd, const char *name, const char *path, SbError *err)
{
	int			fd = open_for_reading(dirfd, name);

	if (fd < 0)
	{
		sb_error_set_errno(err, errno, "could not open \"%s\"", path);
		if (errno == ENOENT)
			err->code = SB_ENOTFOUND;
	}
	return fd;
}

int
sb_source_open_direct(int fd)
{
	char		path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
}

/* The file open O_DIRECT, opened when first needed; -1 when refused. */
static int
direct_fd(SbSourceReader *r)
{
	if (r->direct_fd < 0 && !r->direct_refused)
	{
		r->direct_fd = sb_source_open_direct(r->fd);
		r->direct_refused = r->direct_fd < 0;
	}
	return r->direct_fd;
}

/* The descriptor to read LEN bytes at OFFSET with: see the top of this file. */
static int
read_fd(SbSourceReader *r, uint64_t offset, size_t len)
{
	if (!r->direct || sb_range_cached(r->fd, offset, len))
		return r->fd;
	if (direct_fd(r) >= 0)
		return r->direct_fd;
	r->read_uncached = true;
	return r->fd;
}

/* Start reading the next block of the ranges into free block B. */
static bool
request(SbSourceReader *r, Block *b, SbError *err)
{
	const SbExtent *x = &r->ranges[r->range];
	uint64_t	left = x->length - r->range_pos;
	size_t		len = left < r->block_size ? (size_t) left : r->block_size;
	uint64_t	offset = x->offset + r->range_pos;
	int			fd = read_fd(r, offset, len);
	bool		direct = fd == r->direct_fd;
	size_t		io_len = len;

	if (direct)
		io_len = (len + DIRECT_ALIGN - 1) / DIRECT_ALIGN * DIRECT_ALIGN;
	b->offset = offset;
	b->len = len;
	b->done = false;
	memset(&b->op, 0, sizeof(b->op));
	b->op.kind = SB_IO_READ;
	b->op.fd = fd;
	b->op.offset = b->offset;
	b->op.iov[0].iov_base = b->buf;
	b->op.iov[0].iov_len = io_len;
	b->op.iovcnt = 1;
	b->op.tag = b;
	/* O_DIRECT cannot continue at an unaligned end of file */
	b->op.short_is_eof = direct;
	r->range_pos += len;
	if (r->range_pos == x->length)
	{
		r->range++;
		r->range_pos = 0;
	}
	r->count++;
	return sb_io_start(r->io, &b->op, err);
}

/* Keep DEPTH reads going while the ranges last. */
static bool
fill(SbSourceReader *r, SbError *err)
{
	while (r->count < r->depth && r->range < r->nranges)
	{
		Block	   *b = &r->blocks[(r->head + r->count) % r->depth];

		if (!request(r, b, err))
			return false;
	}
	return true;
}

bool
sb_source_reader_begin(SbSourceReader *r, int fd, const char *what,
					   const SbExtent *ranges, uint32_t nranges, SbError *err)
{
	r->fd = fd;
	r->what = what;
	r->direct_fd = -1;
	r->direct_refused = false;
	r->read_uncached = false;
	r->ranges = ranges;
	r->nranges = nranges;
	r->range = 0;
	r->range_pos = 0;
	r->head_taken = false;
	while (r->range < r->nranges && r->ranges[r->range].length == 0)
		r->range++;
	return fill(r, err);
}

/* Reap until the head block is read. */
static bool
wait_head(SbSourceReader *r, SbError *err)
{
	Block	   *head = &r->blocks[r->head];

	while (!head->done)
	{
		SbIoOp	   *done[64];
		int			n = sb_io_reap(r->io, done, 64, 1, err);
		int			i;

		if (n < 0)
			return false;
		for (i = 0; i < n; i++)
			((Block *) done[i]->tag)->done = true;
	}
	if (head->op.error != 0)
		return sb_error_set_errno(err, head->op.error, "could not read \"%s\" at offset %llu",
								  r->what, (unsigned long long) head->offset);
	return true;
}

bool
sb_source_reader_next(SbSourceReader *r, uint8_t **data, uint64_t *offset, size_t *len,
					  SbError *err)
{
	Block	   *head;

	*data = NULL;
	if (r->head_taken)
	{
		/* The caller is done with the previous block: reuse it. */
		r->head = (r->head + 1) % r->depth;
		r->count--;
		r->head_taken = false;
		if (!fill(r, err))
			return false;
	}
	if (r->count == 0)
		return false;
	if (!wait_head(r, err))
		return false;
	head = &r->blocks[r->head];
	/* A file that shrank since we opened it reads as zeros to its old size. */
	if (head->op.done < head->len)
		memset(head->buf + head->op.done, 0, head->len - head->op.done);
	r->head_taken = true;
	*data = head->buf;
	*offset = head->offset;
	*len = head->len;
	return true;
}

void
sb_source_reader_end(SbSourceReader *r)
{
	SbError		ignored;
	SbIoOp	   *done[64];

	while (sb_io_in_flight(r->io) > 0 && sb_io_reap(r->io, done, 64, 1, &ignored) > 0)
		;
	if (r->direct_fd >= 0)
		close(r->direct_fd);
	r->direct_fd = -1;
	if (r->fd >= 0 && r->read_uncached)
		(void) posix_fadvise(r->fd, 0, 0, POSIX_FADV_DONTNEED);
	r->count = 0;
	r->head = 0;
	r->head_taken = false;
	r->fd = -1;
}
