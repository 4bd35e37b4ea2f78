/*
 * backup_source.c
 *		The files' side of the backup pipeline: entries are added in archive
 *		order, and file data is read into the stream (backup_stream.c), each
 *		file at the place it claimed, end to end.  The caller's thread reads
 *		every file, or hands the large ones of a backup with source lanes to
 *		the lane of their device (backup_lanes.c), which reads them with the
 *		same functions.
 *
 * A file is read up to the size it had when opened; if it shrinks meanwhile
 * the rest is zeros (the copy of a live database is made consistent by WAL
 * replay, as PostgreSQL's own base backup does).  Holes found with SEEK_DATA
 * are not stored; the file's CRC-32C still covers its whole content.
 *
 * Only what a data directory holds is recorded: permission bits within
 * 0755 (the rest is dropped: a restore never makes a setuid file or a
 * world-writable folder), and symlinks only for tablespaces.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backup/backup_internal.h"
#include "format/checksum.h"
#include "util/fsutil.h"
#include "backup/source_reader.h"

/*
 * What the stream took of a file so far: its CRC (what it did not take as
 * zeros), its end, and the stream's place for its next byte.  A file whose
 * stored length is known claims its place before it is read; a file of
 * changed blocks claims as it goes (only the caller's thread fills then).
 */
typedef struct Taken
{
	uint32_t	crc;
	uint64_t	end;
	uint64_t	place;
	bool		growing;
} Taken;

static bool
take(SbBackup *b, const SbFiller *f, Taken *t, uint64_t offset, const uint8_t *data, size_t len,
	 SbError *err)
{
	uint64_t	place = t->growing ? sb_stream_claim(b, len) : t->place;

	t->crc = sb_crc32c_update(sb_crc32c_zeros(t->crc, offset - t->end), data, len);
	t->end = offset + len;
	t->place = place + len;
	return sb_stream_put(b, place, data, len, f->caller, err);
}

/* File bytes [OFFSET, OFFSET + LEN) are stored: the entry's last extent grows, or a new one starts. */
static bool
add_stored_extent(SbEntry *e, size_t *cap, uint64_t offset, uint64_t len, SbError *err)
{
	SbExtent   *last = e->nextents ? &e->extents[e->nextents - 1] : NULL;

	if (last != NULL && last->offset + last->length == offset)
	{
		last->length += len;
		return true;
	}
	if (!sb_grow((void **) &e->extents, cap, e->nextents, sizeof(SbExtent), err))
		return false;
	e->extents[e->nextents].offset = offset;
	e->extents[e->nextents].length = len;
	e->nextents++;
	return true;
}

/* Must the block at OFFSET (LEN bytes) be stored, or is the parent's the same? */
static bool
block_changed(SbBackup *b, const SbEntry *base, const char *path, int fd, uint64_t offset,
			  const uint8_t *block, size_t len)
{
	if (base == NULL || len < b->block_size || offset + len > base->size)
		return true;			/* named changed, a partial block, or past the parent's end */
	return b->hooks.block_filter(b->hooks.filter_arg, path, fd, offset, block);
}

/*
 * Of LEN bytes at OFFSET, store the runs of blocks that changed since BASE,
 * the parent's file (all of them when BASE is NULL: the caller named them), as extents of E.  Pieces start on block boundaries
 * (the block size divides the reader's).
 */
static bool
take_changed(SbBackup *b, const SbFiller *f, const SbEntry *base, const char *path, int fd,
			 SbEntry *e, size_t *cap, Taken *t, uint64_t offset, const uint8_t *data, size_t len,
			 SbError *err)
{
	size_t		pos = 0;

	while (pos < len)
	{
		size_t		run = 0;

		while (pos + run < len)
		{
			size_t		n = len - pos - run < b->block_size ? len - pos - run : b->block_size;

			if (!block_changed(b, base, path, fd, offset + pos + run, data + pos + run, n))
				break;
			run += n;
		}
		if (run > 0 && (!add_stored_extent(e, cap, offset + pos, run, err) ||
						!take(b, f, t, offset + pos, data + pos, run, err)))
			return false;
		pos += run;
		if (pos < len)
		{
			size_t		n = len - pos < b->block_size ? len - pos : b->block_size;

			atomic_fetch_add(&b->raw_bytes_done, n);
			atomic_fetch_add(&b->bytes_skipped, n);
			pos += n;
		}
	}
	return true;
}

/*
 * Stream the RANGES of FD through F's read-ahead reader, in file order,
 * from E's place in the stream: page checks (the read hook) and the CRC see
 * each block before it is cut into chunks.  Holes between the ranges count
 * as zeros in the CRC.  With BASE (the parent's file), only changed blocks
 * are stored, as E's extents, claiming their places as they come: those the
 * block filter judges changed, or, not JUDGED, every block read.
 */
static bool
stream_ranges(SbBackup *b, const SbFiller *f, int fd, const char *what, const char *path,
			  SbEntry *e, const SbEntry *base, bool judged, const SbExtent *ranges,
			  uint32_t nranges, SbError *err)
{
	Taken		t = {SB_CRC32C_INIT, 0, e->stream_offset, base != NULL};
	size_t		cap = 0;
	uint8_t    *data;
	uint64_t	offset;
	size_t		len;
	bool		ok;

	sb_error_clear(err);
	ok = sb_source_reader_begin(f->reader, fd, what, ranges, nranges, err);
	while (ok)
	{
		if (!sb_source_reader_next(f->reader, &data, &offset, &len, err))
		{
			ok = err->code == SB_OK;	/* the end, or a read error */
			break;
		}
		ok = b->hooks.read == NULL ||
			b->hooks.read(f->hook_arg, path, fd, offset, data, len, err);
		if (ok && base != NULL)
			ok = take_changed(b, f, judged ? base : NULL, path, fd, e, &cap, &t, offset, data,
							  len, err);
		else if (ok)
			ok = take(b, f, &t, offset, data, len, err);
	}
	sb_source_reader_end(f->reader);
	if (!ok)
		return false;
	e->crc32c = sb_crc32c_final(sb_crc32c_zeros(t.crc, e->size - t.end));
	return true;
}

/*
 * Find the data regions of FD up to SIZE.  Returns false only on a real error;
 * a file system without SEEK_DATA gets one extent covering the file.
 */
static bool
find_extents(int fd, const char *what, uint64_t size, SbEntry *e, SbError *err)
{
	uint64_t	pos = 0;
	size_t		cap = 0;

	e->sparse = false;
	e->nextents = 0;
	e->extents = NULL;
	while (pos < size)
	{
		off_t		data = lseek(fd, (off_t) pos, SEEK_DATA);
		off_t		hole;

		if (data < 0 && errno == ENXIO)
			break;				/* only a hole is left */
		if (data < 0 && (errno == EINVAL || errno == EOPNOTSUPP))
		{
			free(e->extents);
			e->extents = NULL;
			e->nextents = 0;
			return true;		/* no hole support: read it all */
		}
		if (data < 0)
			return sb_error_set_errno(err, errno, "could not look for data in \"%s\"", what);
		if ((uint64_t) data >= size)
			break;
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t) hole > size)
			hole = (off_t) size;
		if (!sb_grow((void **) &e->extents, &cap, e->nextents, sizeof(SbExtent), err))
			return false;
		e->extents[e->nextents].offset = (uint64_t) data;
		e->extents[e->nextents].length = (uint64_t) (hole - data);
		e->nextents++;
		pos = (uint64_t) hole;
	}
	/* One extent over the whole file is not sparse. */
	e->sparse = !(e->nextents == 1 && e->extents[0].offset == 0 &&
				  e->extents[0].length == size);
	if (!e->sparse)
	{
		free(e->extents);
		e->extents = NULL;
		e->nextents = 0;
	}
	return true;
}

/* The bytes of E the stream holds: all of it, or its data extents (sparse). */
static uint64_t
stored_length(const SbEntry *e)
{
	uint64_t	length = 0;
	uint32_t	i;

	if (!e->sparse)
		return e->size;
	for (i = 0; i < e->nextents; i++)
		length += e->extents[i].length;
	return length;
}

/* Add [OFFSET, OFFSET + LENGTH) to the ranges to read, joined to the last when it touches it. */
static bool
add_range(SbExtent **ranges, uint32_t *nranges, size_t *cap, uint64_t offset, uint64_t length,
		  SbError *err)
{
	SbExtent   *last = *nranges ? &(*ranges)[*nranges - 1] : NULL;

	if (last != NULL && last->offset + last->length == offset)
	{
		last->length += length;
		return true;
	}
	if (!sb_grow((void **) ranges, cap, *nranges, sizeof(SbExtent), err))
		return false;
	(*ranges)[*nranges].offset = offset;
	(*ranges)[*nranges].length = length;
	(*nranges)++;
	return true;
}

/*
 * What to read of E when the caller named its changed BLOCKS: each of them
 * before the parent's end (BASE), then everything from there, or from the
 * start of a partial last block, to the end: the parent cannot give it.
 * Blocks not in order are the caller's mistake, and fail the backup.
 */
bool
sb_source_named_ranges(const SbBackup *b, const SbEntry *e, const SbEntry *base,
					   const uint32_t *blocks, uint32_t nblocks, SbExtent **ranges,
					   uint32_t *nranges, SbError *err)
{
	uint64_t	tail = (base->size < e->size ? base->size : e->size) / b->block_size * b->block_size;
	size_t		cap = 0;
	uint32_t	i;
	bool		ok = true;

	*ranges = NULL;
	*nranges = 0;
	for (i = 0; ok && i < nblocks && (uint64_t) blocks[i] * b->block_size < tail; i++)
	{
		if (i > 0 && blocks[i] <= blocks[i - 1])
			ok = sb_error_set(err, SB_EINVAL,
							  "the changed blocks named for \"%s\" are not in order (block %u after %u)",
							  e->path, blocks[i], blocks[i - 1]);
		else
			ok = add_range(ranges, nranges, &cap, (uint64_t) blocks[i] * b->block_size,
						   b->block_size, err);
	}
	if (ok && tail < e->size)
		ok = add_range(ranges, nranges, &cap, tail, e->size - tail, err);
	if (!ok)
	{
		free(*ranges);
		*ranges = NULL;
		*nranges = 0;
	}
	return ok;
}

/*
 * Read the blocks of E the caller named changed since BASE, or, when it
 * cannot name them, every block, for the block filter to judge.  The bytes
 * left unread are the parent's.
 */
static bool
stream_named_or_judged(SbBackup *b, const SbFiller *f, int fd, const char *what, SbEntry *e,
					   const SbEntry *base, SbError *err)
{
	SbExtent	whole = {0, e->size};
	SbExtent   *ranges;
	uint32_t	nranges;
	const uint32_t *blocks;
	uint32_t	nblocks;
	bool		ok;

	if (b->hooks.changed_blocks == NULL ||
		!b->hooks.changed_blocks(b->hooks.changed_blocks_arg, e->path, e->size, &blocks, &nblocks))
		return stream_ranges(b, f, fd, what, e->path, e, base, true, &whole, 1, err);
	if (!sb_source_named_ranges(b, e, base, blocks, nblocks, &ranges, &nranges, err))
		return false;
	ok = stream_ranges(b, f, fd, what, e->path, e, base, false, ranges, nranges, err);
	free(ranges);
	if (ok)
	{
		uint64_t	unread = e->size - stored_length(e);

		atomic_fetch_add(&b->raw_bytes_done, unread);
		atomic_fetch_add(&b->bytes_skipped, unread);
	}
	return ok;
}

/*
 * The blocks of a file that changed since BASE, the parent's: its extents,
 * placed as they are found (only the caller's thread fills such a backup).
 * If every block changed, the file is stored whole: it needs no parent.
 */
static bool
stream_changed(SbBackup *b, const SbFiller *f, int fd, const char *what, SbEntry *e,
			   const SbEntry *base, SbError *err)
{
	e->sparse = e->incremental = true;
	e->stream_offset = sb_stream_claim(b, 0);
	if (!stream_named_or_judged(b, f, fd, what, e, base, err))
		return false;
	e->stream_length = stored_length(e);
	if (e->stream_length == e->size && e->size > 0)
	{
		e->sparse = e->incremental = false;
		free(e->extents);
		e->extents = NULL;
		e->nextents = 0;
	}
	return true;
}

bool
sb_source_stream_placed(SbBackup *b, const SbFiller *f, int fd, const char *what, SbEntry *e,
						SbError *err)
{
	SbExtent	whole = {0, e->size};

	if (!e->sparse)
		return stream_ranges(b, f, fd, what, e->path, e, NULL, true, &whole, 1, err);
	return stream_ranges(b, f, fd, what, e->path, e, NULL, true, e->extents, e->nextents, err);
}

bool
sb_source_examine(SbBackup *b, int fd, const char *what, const SbSourceStatus *st, SbEntry *e,
				  SbError *err)
{
	e->sparse = false;
	if (b->detect_holes && sb_source_may_have_holes(st->allocated, e->size) &&
		!find_extents(fd, what, e->size, e, err))
		return false;
	e->stream_length = stored_length(e);
	return true;
}

/*
 * A file's identity, "inode:birth seconds.nanoseconds" (ID, or NULL where
 * the file system keeps no birth time: such a file is always stored whole),
 * and its modification and change times (TIMES): what tells a file from
 * another made later under the same name, and one that changed from one
 * that did not.
 */
static void
file_stamps(const struct statx *stx, SbEntry *e, char *id, char *times, size_t len)
{
	e->file_id = e->file_times = NULL;
	if ((stx->stx_mask & STATX_BTIME) && (stx->stx_mask & STATX_INO))
	{
		snprintf(id, len, "%llu:%lld.%09u", (unsigned long long) stx->stx_ino,
				 (long long) stx->stx_btime.tv_sec, (unsigned) stx->stx_btime.tv_nsec);
		e->file_id = id;
	}
	if ((stx->stx_mask & STATX_MTIME) && (stx->stx_mask & STATX_CTIME) && stx->stx_mtime.tv_sec >= 0 &&
		stx->stx_ctime.tv_sec >= 0)
	{
		snprintf(times, len, "%lld.%09u:%lld.%09u", (long long) stx->stx_mtime.tv_sec,
				 (unsigned) stx->stx_mtime.tv_nsec, (long long) stx->stx_ctime.tv_sec,
				 (unsigned) stx->stx_ctime.tv_nsec);
		e->file_times = times;
	}
}

/* A file unchanged since the parent: nothing stored, all of it from the parent. */
static void
take_from_parent(SbBackup *b, SbEntry *e)
{
	e->sparse = e->incremental = true;
	e->stream_offset = sb_stream_claim(b, 0);
	e->stream_length = 0;
	e->crc32c = sb_crc32c_final(sb_crc32c_zeros(SB_CRC32C_INIT, e->size));
	atomic_fetch_add(&b->raw_bytes_done, e->size);
	atomic_fetch_add(&b->bytes_skipped, e->size);
}

/*
 * Can the file of status ST have holes?  Not if its allocated blocks cover its
 * size (as cp and tar judge it): two lseeks a file saved, which a cluster of
 * many small relation files pays for every file.  A file with blocks
 * allocated past its end and a hole inside is then read whole, zeros and
 * all: the same bytes, only not stored sparse.
 */
bool
sb_source_may_have_holes(uint64_t allocated, uint64_t size)
{
	return allocated < size;
}

/*
 * A file read whole already (DATA, its E->size bytes, read from FD), at its
 * place: to the read hook, the CRC and the stream, as one block.
 */
static bool
stream_held(SbBackup *b, const SbFiller *f, int fd, SbEntry *e, const uint8_t *data, SbError *err)
{
	Taken		t = {SB_CRC32C_INIT, 0, e->stream_offset, false};

	if (b->hooks.read != NULL && !b->hooks.read(f->hook_arg, e->path, fd, 0, data, e->size, err))
		return false;
	if (!take(b, f, &t, 0, data, e->size, err))
		return false;
	e->crc32c = sb_crc32c_final(t.crc);
	return true;
}

/*
 * Read the file (all of it, its data extents, or its changed blocks), as PLAN
 * says, on the caller's thread; a file stored whole or sparse takes its place
 * first (*P: its place in line while lanes read).
 */
static bool
copy_file(SbBackup *b, int fd, const char *source_path, const SbSourceStatus *st, SbEntry *e,
		  SbFilePlan plan, const SbEntry *base, SbPendingEntry **p, SbError *err)
{
	const SbFiller *f = &b->caller_filler;

	*p = NULL;
	if (plan == SB_FILE_UNCHANGED)
	{
		take_from_parent(b, e);
		return true;
	}
	if (plan == SB_FILE_BLOCKS)
		return stream_changed(b, f, fd, source_path, e, base, err);
	if (st->data != NULL)
		e->stream_length = e->size;
	else if (!sb_source_examine(b, fd, source_path, st, e, err))
		return false;
	if (!sb_stream_place(b, e, true, p, err))
		return false;
	if (st->data != NULL)
		return stream_held(b, f, fd, e, st->data, err);
	return sb_source_stream_placed(b, f, fd, source_path, e, err);
}

bool
sb_backup_record_entry(SbBackup *b, const SbEntry *e, SbError *err)
{
	if (!sb_manifest_add_entry(b->manifest, e, err) ||
		(b->hooks.entry != NULL && !b->hooks.entry(b->hooks.entry_arg, e, err)))
		return false;
	if (e->type == SB_ENTRY_FILE)
		atomic_fetch_add(&b->files_done, 1);
	return true;
}

/* E, complete, into the manifest: now, or when its turn comes (P, its place in line). */
static bool
entry_done(SbBackup *b, SbEntry *e, SbPendingEntry *p, SbError *err)
{
	if (p == NULL)
		return sb_backup_record_entry(b, e, err);
	p->entry.crc32c = e->crc32c;
	sb_stream_done(b, p);
	return sb_stream_flush(b, err);
}

/*
 * A failure after a file took its place: the stream has a run no one will
 * fill, so the backup stops (a half-read file cannot be in a good backup).
 */
static bool
fail_placed(SbBackup *b, SbError *err)
{
	sb_backup_fail(b, err);
	return false;
}

/* Record E, whose DATA (E->stream_length bytes, may be none) the caller has. */
static bool
add_with_data(SbBackup *b, SbEntry *e, const void *data, SbError *err)
{
	SbPendingEntry *p;

	if (!sb_stream_place(b, e, true, &p, err))
		return false;
	if (e->stream_length > 0 &&
		!sb_stream_put(b, e->stream_offset, data, e->stream_length, true, err))
		return fail_placed(b, err);
	return entry_done(b, e, p, err);
}

bool
sb_backup_add_dir(SbBackup *b, const char *path, uint32_t mode, int64_t mtime, SbError *err)
{
	SbEntry		e;

	memset(&e, 0, sizeof(e));
	e.path = (char *) path;
	e.type = SB_ENTRY_DIR;
	e.mode = mode & SB_ALLOWED_MODE_BITS;
	e.mtime = mtime;
	return add_with_data(b, &e, NULL, err);
}

bool
sb_backup_add_symlink(SbBackup *b, const char *path, const char *target, int64_t mtime,
					  SbError *err)
{
	SbEntry		e;

	if (!sb_link_is_allowed(path, target))
		return sb_error_set(err, SB_EINVAL,
							"symlink \"%s\" -> \"%s\" cannot be archived: a data directory holds links only at pg_tblspc/<oid>, to an absolute path (a tablespace)",
							path, target);
	memset(&e, 0, sizeof(e));
	e.path = (char *) path;
	e.type = SB_ENTRY_SYMLINK;
	e.mode = SB_SYMLINK_MODE;
	e.mtime = mtime;
	e.link_target = (char *) target;
	return add_with_data(b, &e, NULL, err);
}

unsigned int
sb_source_statx_mask(const SbBackup *b)
{
	return STATX_BASIC_STATS | (b->file_stamps ? STATX_BTIME : 0);
}

int
sb_source_open(int dirfd, const char *name, const char *source_path, unsigned int mask,
			   SbSourceStatus *st, SbError *err)
{
	int			fd = sb_source_reader_open(dirfd, name, source_path, err);

	if (fd < 0)
		return -1;
	if (statx(fd, "", AT_EMPTY_PATH, mask, &st->stx) != 0 || !S_ISREG(st->stx.stx_mode))
	{
		close(fd);
		sb_error_set(err, SB_EINVAL, "\"%s\" is not a regular file", source_path);
		return -1;
	}
	st->mode = st->stx.stx_mode;
	st->size = st->stx.stx_size;
	st->allocated = st->stx.stx_blocks * 512;
	st->mtime = st->stx.stx_mtime.tv_sec;
	st->data = NULL;
	return fd;
}

/* Open a source file, and take its status, stamps included when kept. */
static int
open_source(SbBackup *b, int dirfd, const char *name, const char *source_path, SbSourceStatus *st,
			SbError *err)
{
	return sb_source_open(dirfd, name, source_path, sb_source_statx_mask(b), st, err);
}

void
sb_source_entry(SbBackup *b, const char *path, const SbSourceStatus *st, const SbEntry *like,
				SbEntry *e, char *id, char *times, size_t len)
{
	memset(e, 0, sizeof(*e));
	e->path = (char *) path;
	e->type = SB_ENTRY_FILE;
	e->mode = (like ? like->mode : st->mode) & SB_ALLOWED_MODE_BITS;
	e->mtime = like ? like->mtime : st->mtime;
	e->size = st->size;
	if (like != NULL)
	{
		e->file_id = like->file_id;
		e->file_times = like->file_times;
	}
	else if (b->file_stamps)
		file_stamps(&st->stx, e, id, times, len);
}

/*
 * Record the file open at FD (SOURCE_PATH, of status ST) as PATH, with the
 * mode, time and stamps LIKE gives when not NULL, and copy what its plan
 * says; or hand it to the lane of its device, which reads it again.
 */
static bool
add_open_file(SbBackup *b, const char *path, const char *source_path, int fd,
			  const SbSourceStatus *st, const SbEntry *like, SbError *err)
{
	SbEntry		e;
	char		id[SB_FILE_ID_MAX + 1];
	char		times[SB_FILE_ID_MAX + 1];
	const SbEntry *base;
	SbFilePlan	plan;
	SbPendingEntry *p;
	bool		ok;

	if (like == NULL && sb_lanes_take(b, st))
		return sb_lanes_hand_over(b, path, source_path, st, err);
	sb_source_entry(b, path, st, like, &e, id, times, sizeof(id));
	if (!sb_incremental_plan(b, &e, &plan, &base, err))
		return false;
	ok = copy_file(b, fd, source_path, st, &e, plan, base, &p, err) || fail_placed(b, err);
	ok = ok && entry_done(b, &e, p, err);
	free(e.extents);
	return ok;
}

bool
sb_backup_add_open_file(SbBackup *b, const char *path, const char *source_path, int fd,
						const SbSourceStatus *st, SbError *err)
{
	return add_open_file(b, path, source_path, fd, st, NULL, err);
}

bool
sb_backup_add_file(SbBackup *b, const char *path, const char *source_path, SbError *err)
{
	return sb_backup_add_file_at(b, path, AT_FDCWD, source_path, source_path, err);
}

bool
sb_backup_add_file_at(SbBackup *b, const char *path, int dirfd, const char *name,
					  const char *source_path, SbError *err)
{
	SbSourceStatus st;
	int			fd;
	bool		ok;

	if (!sb_path_is_safe(path, false))
		return sb_error_set(err, SB_EINVAL, "unsafe path in archive: \"%s\"", path);
	fd = open_source(b, dirfd, name, source_path, &st, err);
	if (fd < 0)
		return false;
	ok = add_open_file(b, path, source_path, fd, &st, NULL, err);
	close(fd);
	return ok;
}

bool
sb_backup_add_file_as(SbBackup *b, const SbEntry *like, const char *source_path, SbError *err)
{
	SbSourceStatus st;
	int			fd;
	bool		ok;

	if (like->type != SB_ENTRY_FILE || !sb_path_is_safe(like->path, false))
		return sb_error_set(err, SB_EINVAL, "unsafe path in archive: \"%s\"", like->path);
	fd = open_source(b, AT_FDCWD, source_path, source_path, &st, err);
	if (fd < 0)
		return false;
	ok = st.size == like->size ||
		sb_error_set(err, SB_ECORRUPT, "\"%s\" has %lld bytes where \"%s\" has %llu",
					 source_path, (long long) st.size, like->path,
					 (unsigned long long) like->size);
	ok = ok && add_open_file(b, like->path, source_path, fd, &st, like, err);
	close(fd);
	return ok;
}

bool
sb_backup_add_data(SbBackup *b, const char *path, const void *data, size_t len,
				   uint32_t mode, int64_t mtime, SbError *err)
{
	SbEntry		e;

	if (!sb_path_is_safe(path, false))
		return sb_error_set(err, SB_EINVAL, "unsafe path in archive: \"%s\"", path);
	memset(&e, 0, sizeof(e));
	e.path = (char *) path;
	e.type = SB_ENTRY_FILE;
	e.mode = mode & SB_ALLOWED_MODE_BITS;
	e.mtime = mtime;
	e.size = len;
	e.stream_length = len;
	e.crc32c = sb_crc32c_final(sb_crc32c_update(SB_CRC32C_INIT, data, len));
	return add_with_data(b, &e, data, err);
}
