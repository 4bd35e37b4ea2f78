/*
 * restore_delta.c
 *		A restore into a target that holds a copy already (a stale copy, a
 *		standby to rebuild): only what differs is read and written.
 *
 * 1. The guard file (the caller names it: PostgreSQL's global/pg_control)
 *    goes first, and the backup's is written under a temporary name and put
 *    in place only once everything else is durable: a copy that a failure
 *    or a crash left half refreshed cannot start.
 * 2. Every entry of the target the backup does not have, or has as another
 *    type, is removed (links are removed, never followed; a sparse file is
 *    made again); every file it has is cut or extended to its size.
 * 3. Each chunk of the backup whose files the target has with the backup's
 *    size and time is compared with what the target holds at its pieces:
 *    the XXH3-64 of those bytes against the one the stripe's index records
 *    of the chunk's raw bytes.  A chunk the target holds is not read; its
 *    pieces' CRC-32C goes into the files' checks, so that every file is
 *    still checked whole against the manifest at the end.  A chunk in
 *    frames (stripes 2.1) is compared whenever the target has its files,
 *    frame by frame, and only the frames that differ are read, over the
 *    target's bytes (delta_frames.c), their blocks that differ written at
 *    once.  The other chunks are read, and of each only the blocks that
 *    differ from the target's are written.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_s3.h"
#include "format/checksum.h"
#include "manifest/entry_lookup.h"
#include "manifest/entry_spool.h"
#include "util/fsutil.h"
#include "util/parallel.h"
#include "restore/delta_frames.h"
#include "restore/read_pipeline.h"
#include "restore/restore_internal.h"
#include "restore/stripe_reader.h"
#include "util/thread.h"

#define GUARD_SUFFIX ".stripebackup-delta"

/* What the chunks' compare shares with its workers. */
typedef struct Compare
{
	RestoreTarget *t;
	SbFileCheck *fc;
	const SbReadOptions *read;
	_Atomic bool stopped;		/* the caller's tick asked to stop, or a write failed */
	_Atomic bool failed;		/* a write failed: ERROR says why */
	SbError		error;
	uint8_t   **buffers;		/* one chunk per slot */
	SbFrameReader *frames;		/* one per slot */
	_Atomic uint64_t compared;
	_Atomic uint64_t held;
	_Atomic uint64_t held_stored;	/* stored bytes of the chunks compared, not read */
	_Atomic uint64_t patched;	/* raw bytes of chunks read in part, by frames */
	_Atomic uint64_t patch_read;	/* stored bytes of the frames they read */
	double		started;
} Compare;

struct RestoreDelta
{
	SbEntryLookup *lookup;		/* the backup's entries by path and ordinal */
	size_t		nentries;
	bool	   *kept;			/* per entry: its file was there, kept to compare */
	bool	   *unchanged;		/* per entry: kept, with the backup's size and time */
	_Atomic uint32_t *held_sums;	/* streamed, per entry: what the pieces the */
	_Atomic uint64_t *held_bytes;	/* target held add to its check */
	SbWindowSeed seed;
	Compare		cmp;
	uint8_t    *held;			/* per chunk: the target holds it (or it was patched) */
	uint64_t   *raw_hash;		/* per chunk, from the stripes' indexes */
	uint32_t   *raw_len;
	uint32_t   *stored_len;
	uint64_t   *record_at;		/* per chunk: its record's offset in its stripe */
	uint8_t    *framed;			/* per chunk: in frames (stripes 2.1, zstd, in the clear) */
	_Atomic uint64_t written;	/* bytes written into the target's files */
	size_t		guard;			/* the guard's entry, or SIZE_MAX */
	char	   *guard_path;		/* its archive path */
	char	   *guard_tmp;		/* the archive path it is written to meanwhile */
	SbRestoreStats *stats;
};

/* ---------- the tree ---------- */

/* Remove NAME in DIRFD, a directory with everything in it, without following links. */
static bool
remove_entry(int dirfd, const char *path, const char *name, bool is_dir, SbError *err)
{
	char		full[PATH_MAX];

	snprintf(full, sizeof(full), "%s/%s", path, name);
	/* sb_remove_contents opens it O_NOFOLLOW: a link is never gone through */
	if (is_dir && !sb_remove_contents(full, err))
		return false;
	if (unlinkat(dirfd, name, is_dir ? AT_REMOVEDIR : 0) != 0)
		return sb_error_set_errno(err, errno, "could not remove \"%s\"", full);
	return true;
}

/* The archive path of NAME in the directory at archive path DIR ("." the root). */
static void
archive_path(const char *dir, const char *name, char *out, size_t len)
{
	if (strcmp(dir, ".") == 0)
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "%s/%s", dir, name);
}

/* Is PATH where a relocation's link goes (its directory is elsewhere)? */
static bool
is_relocated(const RestoreTarget *t, const char *path)
{
	uint32_t	i;

	for (i = 0; i < t->nrelocs; i++)
		if (strcmp(t->relocs[i].from, path) == 0)
			return true;
	return false;
}

/* Does the target's entry (status ST) stay, as entry E of the backup (NULL: none)? */
static bool
stays(const SbEntry *e, const struct stat *st)
{
	if (e == NULL)
		return false;
	if (e->type == SB_ENTRY_DIR)
		return S_ISDIR(st->st_mode);
	/* a file with another name elsewhere (pg_upgrade --link) is not written through */
	return e->type == SB_ENTRY_FILE && S_ISREG(st->st_mode) && st->st_nlink == 1 &&
		(!e->sparse || e->incremental);	/* holes are made again; a chain's other bytes are not holes */
}

/*
 * Keep file I (NAME in DIRFD, status ST): cut or extend it to the backup's
 * size.  One with the backup's size and time (a restore set it; neither side
 * changed it since) is compared chunk by chunk before anything is read;
 * the others are read, and only their blocks that differ written.
 */
static bool
keep_file(RestoreTarget *t, int dirfd, const char *path, const char *name, size_t i,
		  const SbEntry *e, const struct stat *st, SbError *err)
{
	int			fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	bool		ok = fd >= 0;

	if (ok && ftruncate(fd, (off_t) e->size) != 0)
		ok = false;
	if (!ok)
		sb_error_set_errno(err, errno, "could not resize \"%s/%s\" to %llu bytes", path, name,
						   (unsigned long long) e->size);
	if (fd >= 0)
		close(fd);
	t->delta->kept[i] = ok;
	t->delta->unchanged[i] = ok && (uint64_t) st->st_size == e->size && st->st_mtime == e->mtime;
	return ok;
}

static bool clear_dir(RestoreTarget *t, int dirfd, const char *path, const char *dir,
					  bool is_root, SbError *err);

/* One entry of the target: kept, looked into, or removed. */
static bool
clear_entry(RestoreTarget *t, int dirfd, const char *path, const char *dir, const char *name,
			bool is_root, SbError *err)
{
	RestoreDelta *d = t->delta;
	char		apath[PATH_MAX];
	char		sub[PATH_MAX];
	struct stat st;
	SbEntry		e;
	size_t		i;
	int			fd;
	bool		ok;

	if (is_root && strcmp(name, SB_RESTORE_MARKER_FILE) == 0)
		return true;
	archive_path(dir, name, apath, sizeof(apath));
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return sb_error_set_errno(err, errno, "could not stat \"%s/%s\"", path, name);
	if (!sb_entry_lookup_at(d->lookup, apath, &e, &i, err))
		return false;
	if (is_relocated(t, apath) || !stays(i == SIZE_MAX ? NULL : &e, &st) || i == d->guard)
	{
		d->stats->delta_removed++;
		return remove_entry(dirfd, path, name, S_ISDIR(st.st_mode), err);
	}
	if (S_ISREG(st.st_mode))
		return keep_file(t, dirfd, path, name, i, &e, &st, err);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not open \"%s/%s\"", path, name);
	snprintf(sub, sizeof(sub), "%s/%s", path, name);
	ok = clear_dir(t, fd, sub, apath, false, err);
	close(fd);
	return ok;
}

/* Every entry of the open directory DIRFD (at archive path DIR), recursively. */
static bool
clear_dir(RestoreTarget *t, int dirfd, const char *path, const char *dir, bool is_root,
		  SbError *err)
{
	int			fd = dup(dirfd);
	DIR		   *dh = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	bool		ok = true;

	if (dh == NULL)
	{
		if (fd >= 0)
			close(fd);
		return sb_error_set_errno(err, errno, "could not read directory \"%s\"", path);
	}
	while (ok && (de = readdir(dh)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			ok = clear_entry(t, dirfd, path, dir, de->d_name, is_root, err);
	closedir(dh);
	return ok;
}

static bool
find_guard(RestoreTarget *t, const char *guard, SbError *err)
{
	RestoreDelta *d = t->delta;
	SbEntry		e;
	size_t		len;

	d->guard = SIZE_MAX;
	if (guard == NULL)
		return true;
	if (!sb_entry_lookup_at(d->lookup, guard, &e, &d->guard, err))
		return false;
	if (d->guard == SIZE_MAX)
		return true;
	if (e.type != SB_ENTRY_FILE)
		return sb_error_set(err, SB_EINVAL, "the delta guard \"%s\" is not a file of the backup", guard);
	len = strlen(guard) + sizeof(GUARD_SUFFIX);
	d->guard_path = sb_strdup(guard, err);
	d->guard_tmp = d->guard_path ? sb_alloc(len, err) : NULL;
	if (d->guard_tmp == NULL)
		return false;
	snprintf(d->guard_tmp, len, "%s%s", guard, GUARD_SUFFIX);
	return true;
}

bool
sb_delta_begin(RestoreTarget *t, const SbRestoreOptions *o, SbRestoreStats *stats, SbError *err)
{
	RestoreDelta *d = sb_alloc(sizeof(RestoreDelta), err);
	uint32_t	i;

	if (d == NULL)
		return false;
	t->delta = d;
	d->stats = stats;
	d->guard = SIZE_MAX;
	d->nentries = t->manifest->streamed ? sb_entry_spool_count(t->manifest->streamed) :
		t->manifest->nentries;
	d->kept = sb_alloc(d->nentries * sizeof(bool) + 1, err);
	d->unchanged = d->kept ? sb_alloc(d->nentries * sizeof(bool) + 1, err) : NULL;
	if (d->unchanged == NULL || (d->lookup = sb_entry_lookup_new(t->manifest, err)) == NULL ||
		!find_guard(t, o->delta_guard, err))
		return false;
	/* the guard first: from here on the copy cannot start until the restore completes */
	if (!clear_dir(t, t->root.fd, t->root.path, ".", true, err))
		return false;
	for (i = 0; i < t->nrelocs; i++)
		if (!clear_dir(t, t->relocs[i].dir.fd, t->relocs[i].dir.path, t->relocs[i].from, true, err))
			return false;
	return true;
}

/* ---------- the chunks ---------- */

#define COMPARE_BLOCK 8192		/* a PostgreSQL page: what a change touches */
#define COMPARE_SPAN (8 * COMPARE_BLOCK)

/* The bytes from file offset AT to the next multiple of UNIT, at most LEFT. */
static size_t
to_boundary(uint64_t at, size_t unit, uint64_t left)
{
	size_t		n = unit - (size_t) (at % unit);

	return left < n ? (size_t) left : n;
}

/*
 * Each chunk's raw hash, length and place, from the index of the stripe that
 * holds it; and whether it is in frames read one by one.  Not from object
 * storage: there a chunk read in part would cost two requests (its table,
 * then its frames), where a read asks for many chunks in one.
 */
static bool
load_hashes(RestoreDelta *d, SbArchive *a, SbError *err)
{
	const SbManifest *m = a->manifest;
	uint32_t	s;
	uint64_t	k;
	bool		local;

	d->raw_hash = sb_alloc(m->total_chunks * sizeof(uint64_t) + 1, err);
	d->raw_len = d->raw_hash ? sb_alloc(m->total_chunks * sizeof(uint32_t) + 1, err) : NULL;
	d->stored_len = d->raw_len ? sb_alloc(m->total_chunks * sizeof(uint32_t) + 1, err) : NULL;
	d->record_at = d->stored_len ? sb_alloc(m->total_chunks * sizeof(uint64_t) + 1, err) : NULL;
	d->framed = d->record_at ? sb_alloc(m->total_chunks + 1, err) : NULL;
	d->held = d->framed ? sb_alloc(m->total_chunks + 1, err) : NULL;
	for (s = 0; d->held != NULL && s < m->nstripes; s++)
	{
		SbStripeReader r;

		/*
		 * A lost stripe's chunks are compared with nothing (no hash: not
		 * held), so they are all recovered and written.
		 */
		if (a->lost_why[s] != NULL)
			continue;
		if (!sb_stripe_open(&r, m, s, a->stripe_paths[s], a->s3, err))
			return false;
		local = !sb_s3_is_location(a->stripe_paths[s]);
		for (k = 0; k < r.nentries; k++)
		{
			const SbIndexEntry *e = &r.entries[k];

			d->raw_hash[e->chunk_id] = sb_entry_raw_hash(m, e);
			d->raw_len[e->chunk_id] = e->raw_len;
			d->stored_len[e->chunk_id] = e->stored_len;
			d->record_at[e->chunk_id] = e->offset;
			/* the version is a hint only: a stripe rebuilt from an older backup's says 2.1 */
			d->framed[e->chunk_id] = local && r.header.minor >= 1 && e->codec == SB_CODEC_ZSTD &&
				e->cipher == SB_CIPHER_NONE;
		}
		sb_stripe_close(&r);
	}
	return d->held != NULL;
}

/* PIECE of the kept file at archive PATH into BUF; false (nothing said) if it cannot be read whole. */
static bool
read_path_piece(const RestoreTarget *t, const char *path, const SbPiece *piece, uint8_t *buf)
{
	Place		p = sb_restore_locate(t, path);
	int			fd = sb_open_beneath(p.dir->fd, p.rel, O_RDONLY, 0);
	SbError		ignored;
	ssize_t		n;

	if (fd < 0)
		return false;
	n = sb_pread_upto(fd, buf + piece->chunk_offset, piece->length, piece->file_offset, p.rel,
					  &ignored);
	close(fd);
	return n == (ssize_t) piece->length;
}

/* Progress to the caller, on its own thread (slot 0): false when it asks to stop. */
static bool
tick(Compare *cmp)
{
	SbProgress	p;

	if (cmp->read->tick == NULL)
		return true;
	memset(&p, 0, sizeof(p));
	p.raw_bytes_done = atomic_load(&cmp->compared);
	p.raw_bytes_total = cmp->t->manifest->stream_bytes;
	if (cmp->read->tick(cmp->read->tick_arg, &p))
		return true;
	atomic_store(&cmp->stopped, true);
	return false;
}

/*
 * Is the piece of file ENTRY in chunk C compared before anything is read?
 * A chunk in frames, whenever the file is kept: only its frames that differ
 * are read.  Another, only when neither side changed the file since a
 * restore: a chunk that differs would have the copy read twice.
 */
static bool
compared_first(const RestoreDelta *d, uint64_t c, size_t entry)
{
	return (d->framed[c] ? d->kept[entry] : d->unchanged[entry]) && entry != d->guard;
}

/* A write of the compare failed: ERR is kept (the first one), and the compare stops. */
static void
compare_failed(Compare *cmp, const SbError *err)
{
	if (!atomic_exchange(&cmp->failed, true))
		cmp->error = *err;
	atomic_store(&cmp->stopped, true);
}

/* What the compare made of a chunk. */
typedef enum Fate
{
	FATE_READ,					/* to be read whole, by the read that follows */
	FATE_HELD,					/* the copy holds it */
	FATE_PATCHED				/* its frames that differ were read over the copy's bytes */
} Fate;

/*
 * Chunk C, whose pieces BUF holds as the copy has them (UNCHANGED: all of
 * files with the backup's size and time): held, patched or to be read;
 * marked and counted.  A chunk of unchanged files is most likely held: its
 * hash is compared first.  Another is compared frame by frame at once (its
 * frames' table gives their hashes), which also tells it held.
 */
static Fate
compare_bytes(Compare *cmp, uint64_t c, uint32_t slot, uint8_t *buf, bool unchanged)
{
	RestoreDelta *d = cmp->t->delta;
	SbFrameReader *r = &cmp->frames[slot];
	SbFrameChunk fc = {sb_manifest_chunk_stripe(cmp->t->manifest, c), d->record_at[c],
	d->stored_len[c], d->raw_len[c], d->raw_hash[c]};
	Fate		fate = FATE_READ;

	atomic_fetch_add(&cmp->compared, d->raw_len[c]);
	if ((unchanged || !d->framed[c]) && sb_hash64(buf, d->raw_len[c]) == d->raw_hash[c])
		fate = FATE_HELD;
	else if (d->framed[c])
		switch (sb_frame_reader_patch(r, &fc, buf))
		{
			case SB_FRAMES_HELD:
				fate = FATE_HELD;
				break;
			case SB_FRAMES_PATCHED:
				fate = FATE_PATCHED;
				break;
			case SB_FRAMES_READ_WHOLE:
				break;
		}
	if (fate == FATE_READ)
		return fate;
	d->held[c] = 1;
	if (fate == FATE_HELD)
		atomic_fetch_add(&cmp->held, d->raw_len[c]);
	else
		atomic_fetch_add(&cmp->patched, d->raw_len[c]);
	atomic_fetch_add(&cmp->patch_read, fate == FATE_PATCHED ? r->read : 0);
	atomic_fetch_add(&cmp->held_stored, d->stored_len[c] - (fate == FATE_PATCHED ? r->read : 0));
	return fate;
}

/*
 * The blocks of a piece of a patched chunk (LENGTH bytes of the file at
 * archive PATH from OFFSET, at FROM in the chunk) that differ from what the
 * copy held (in R, where frames were read), written from BUF; the file is
 * opened only if one does.
 */
static bool
write_patched(Compare *cmp, const SbFrameReader *r, const char *path, uint64_t offset, uint64_t length,
			  uint64_t from, const uint8_t *buf, SbError *err)
{
	RestoreDelta *d = cmp->t->delta;
	Place		p = sb_restore_locate(cmp->t, path);
	int			fd = -1;
	uint64_t	b;
	size_t		n;
	bool		ok = true;

	for (b = 0; ok && b < length; b += n)
	{
		n = to_boundary(offset + b, COMPARE_BLOCK, length - b);
		if (!sb_frame_reader_changed(r, buf, from + b, from + b + n))
			continue;
		if (fd < 0 && (fd = sb_open_beneath(p.dir->fd, p.rel, O_WRONLY, 0)) < 0)
			return sb_error_set_errno(err, errno, "could not open \"%s/%s\"", p.dir->path, p.rel);
		ok = sb_pwrite_all(fd, buf + from + b, n, offset + b, path, err);
		atomic_fetch_add(&d->written, n);
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Does the target hold chunk C (or was it patched)?  Then its pieces go into the files' checks. */
static void
compare_chunk(void *arg, size_t c, uint32_t slot)
{
	Compare    *cmp = arg;
	const SbManifest *m = cmp->t->manifest;
	RestoreDelta *d = cmp->t->delta;
	uint8_t    *buf = cmp->buffers[slot];
	SbPieceIter it;
	SbPiece		piece;
	bool		whole = true;
	bool		unchanged = true;
	Fate		fate;
	SbError		err;

	if (atomic_load(&cmp->stopped) || (slot == 0 && !tick(cmp)))
		return;
	sb_piece_iter_init(&it, m, c);
	while (whole && sb_piece_iter_next(&it, &piece))
	{
		whole = compared_first(d, c, piece.entry) &&
			read_path_piece(cmp->t, m->entries[piece.entry].path, &piece, buf);
		unchanged = unchanged && d->unchanged[piece.entry];
	}
	if (!whole || (fate = compare_bytes(cmp, c, slot, buf, unchanged)) == FATE_READ)
		return;				/* read, and compared block by block as it is written */
	sb_piece_iter_init(&it, m, c);
	while (sb_piece_iter_next(&it, &piece))
	{
		if (fate == FATE_PATCHED &&
			!write_patched(cmp, &cmp->frames[slot], m->entries[piece.entry].path, piece.file_offset,
						   piece.length, piece.chunk_offset, buf, &err))
		{
			compare_failed(cmp, &err);
			return;
		}
		sb_file_check_add(cmp->fc, &piece, buf + piece.chunk_offset);
	}
}

/* The chunks' hashes, and a chunk's buffer for each of the *WORKERS that compare. */
static bool
begin_compare(RestoreTarget *t, SbArchive *a, const SbReadOptions *read, uint32_t *workers,
			  SbError *err)
{
	RestoreDelta *d = t->delta;
	Compare    *cmp = &d->cmp;
	uint32_t	i;

	*workers = read->workers ? read->workers : sb_cpu_count();
	memset(cmp, 0, sizeof(*cmp));
	cmp->t = t;
	cmp->read = read;
	cmp->started = sb_monotonic_seconds();
	if (!load_hashes(d, a, err) || (cmp->buffers = sb_alloc(*workers * sizeof(uint8_t *), err)) == NULL ||
		(cmp->frames = sb_alloc(*workers * sizeof(SbFrameReader), err)) == NULL)
		return false;
	for (i = 0; i < *workers; i++)
		if ((cmp->buffers[i] = sb_alloc(t->manifest->chunk_size, err)) == NULL ||
			!sb_frame_reader_init(&cmp->frames[i], a, err))
			return false;
	return true;
}

/* The buffers freed, what was compared and held counted; false if OK is, or the caller stopped it. */
static bool
end_compare(RestoreTarget *t, uint32_t workers, bool ok, SbError *err)
{
	RestoreDelta *d = t->delta;
	Compare    *cmp = &d->cmp;
	uint32_t	i;

	for (i = 0; cmp->buffers != NULL && i < workers; i++)
		free(cmp->buffers[i]);
	for (i = 0; cmp->frames != NULL && i < workers; i++)
		sb_frame_reader_free(&cmp->frames[i]);
	free(cmp->buffers);
	free(cmp->frames);
	cmp->buffers = NULL;
	cmp->frames = NULL;
	d->stats->delta_compared = atomic_load(&cmp->compared);
	d->stats->delta_held = atomic_load(&cmp->held);
	d->stats->delta_held_stored = atomic_load(&cmp->held_stored);
	d->stats->delta_patched = atomic_load(&cmp->patched);
	d->stats->delta_patch_read = atomic_load(&cmp->patch_read);
	d->stats->delta_compare_seconds = sb_monotonic_seconds() - cmp->started;
	if (ok && atomic_load(&cmp->failed))
	{
		*err = cmp->error;
		return false;
	}
	if (ok && atomic_load(&cmp->stopped))
		return sb_error_set(err, SB_ECANCELED, "the delta restore was canceled while it compared");
	return ok;
}

bool
sb_delta_compare(RestoreTarget *t, SbArchive *a, const SbReadOptions *read, SbFileCheck *fc,
				 SbError *err)
{
	uint32_t	workers;
	bool		ok = begin_compare(t, a, read, &workers, err);

	t->delta->cmp.fc = fc;
	if (ok)
		sb_parallel_run(t->manifest->total_chunks, workers, compare_chunk, &t->delta->cmp);
	return end_compare(t, workers, ok, err);
}

/* ---------- the chunks, from a backup opened streamed ---------- */

/* A piece of a chunk in a batch: its file's path (in the batch's names), ordinal and size. */
typedef struct BatchPiece
{
	size_t		name;			/* offset in Batch.names */
	size_t		ordinal;
	uint64_t	file_size;
	uint64_t	file_offset;
	uint64_t	length;
	uint64_t	chunk_offset;
} BatchPiece;

/* Chunks FIRST.. and their pieces, compared together on the workers. */
typedef struct Batch
{
	Compare    *cmp;
	uint64_t	first;
	uint64_t	nchunks;
	size_t	   *start;			/* per chunk of the batch: its first piece */
	BatchPiece *pieces;
	size_t		npieces;
	size_t		cap;
	char	   *names;
	size_t		names_len;
	size_t		names_cap;
	size_t		last_ordinal;	/* the file whose path was added last */
	size_t		last_offset;
} Batch;

/* A batch: this many chunks, or fewer once it holds this many pieces (a chunk of tiny files). */
#define BATCH_CHUNKS 64
#define BATCH_PIECES 16384

/* Read batch piece P of the target into BUF; false (nothing said) if it cannot be read whole. */
static bool
read_batch_piece(const Batch *b, const BatchPiece *p, uint8_t *buf)
{
	SbPiece		piece = {0, p->file_offset, p->length, p->chunk_offset};

	return read_path_piece(b->cmp->t, b->names + p->name, &piece, buf);
}

/* Batch chunk K: held by the target?  Then its pieces go into their files' checks. */
static void
compare_batch_chunk(void *arg, size_t k, uint32_t slot)
{
	Batch	   *b = arg;
	Compare    *cmp = b->cmp;
	RestoreDelta *d = cmp->t->delta;
	uint64_t	c = b->first + k;
	uint8_t    *buf = cmp->buffers[slot];
	size_t		i;
	bool		whole = true;
	bool		unchanged = true;
	Fate		fate;

	if (atomic_load(&cmp->stopped) || (slot == 0 && !tick(cmp)))
		return;
	for (i = b->start[k]; whole && i < b->start[k + 1]; i++)
	{
		whole = compared_first(d, c, b->pieces[i].ordinal) && read_batch_piece(b, &b->pieces[i], buf);
		unchanged = unchanged && d->unchanged[b->pieces[i].ordinal];
	}
	if (!whole || (fate = compare_bytes(cmp, c, slot, buf, unchanged)) == FATE_READ)
		return;
	for (i = b->start[k]; i < b->start[k + 1]; i++)
	{
		const BatchPiece *p = &b->pieces[i];
		SbEntry		e;
		SbError		err;

		if (fate == FATE_PATCHED &&
			!write_patched(cmp, &cmp->frames[slot], b->names + p->name, p->file_offset, p->length,
						   p->chunk_offset, buf, &err))
		{
			compare_failed(cmp, &err);
			return;
		}
		memset(&e, 0, sizeof(e));
		e.size = p->file_size;
		atomic_fetch_xor(&d->held_sums[p->ordinal],
						 sb_file_check_piece(&e, p->file_offset, buf + p->chunk_offset, p->length));
		atomic_fetch_add(&d->held_bytes[p->ordinal], p->length);
	}
}

/* Compare the batch's chunks on the workers, then empty it for chunks from FIRST on. */
static void
run_batch(Batch *b, uint32_t workers, uint64_t first)
{
	b->start[b->nchunks] = b->npieces;
	if (b->nchunks > 0)
		sb_parallel_run(b->nchunks, workers, compare_batch_chunk, b);
	b->first = first;
	b->nchunks = 0;
	b->npieces = 0;
	b->names_len = 0;
	b->last_ordinal = SIZE_MAX;
}

/* Keep the path of the file ORDINAL in the batch's names (once for its pieces); its offset. */
static bool
batch_name(Batch *b, const char *path, size_t ordinal, size_t *offset, SbError *err)
{
	size_t		len = strlen(path) + 1;

	if (b->last_ordinal == ordinal)
	{
		*offset = b->last_offset;
		return true;
	}
	if (b->names_len + len > b->names_cap)
	{
		size_t		cap = 2 * (b->names_len + len);
		char	   *grown = realloc(b->names, cap);

		if (grown == NULL)
			return sb_error_set(err, SB_ENOMEM, "out of memory comparing the copy");
		b->names = grown;
		b->names_cap = cap;
	}
	memcpy(b->names + b->names_len, path, len);
	*offset = b->last_offset = b->names_len;
	b->last_ordinal = ordinal;
	b->names_len += len;
	return true;
}

/* What the walk of the pieces hands over: the batch, and how many workers compare it. */
typedef struct BatchWalk
{
	Batch		batch;
	uint32_t	workers;
} BatchWalk;

/* One piece, in chunk order: into the batch, which is compared when the next one starts. */
static bool
batch_piece(void *arg, const SbPieceRow *row, SbError *err)
{
	BatchWalk  *w = arg;
	Batch	   *b = &w->batch;
	BatchPiece *p;

	if (atomic_load(&b->cmp->stopped))
		return sb_error_set(err, SB_ECANCELED, "the delta restore was canceled while it compared");
	/* a piece of a new chunk: the chunks before it are whole */
	if (row->chunk >= b->first + BATCH_CHUNKS ||
		(row->chunk >= b->first + b->nchunks && b->npieces >= BATCH_PIECES))
		run_batch(b, w->workers, row->chunk);
	while (b->first + b->nchunks <= row->chunk)
		b->start[b->nchunks++] = b->npieces;
	if (!sb_grow((void **) &b->pieces, &b->cap, b->npieces, sizeof(BatchPiece), err))
		return false;
	p = &b->pieces[b->npieces];
	if (!batch_name(b, row->path, row->ordinal, &p->name, err))
		return false;
	p->ordinal = row->ordinal;
	p->file_size = row->file_size;
	p->file_offset = row->file_offset;
	p->length = row->length;
	p->chunk_offset = row->chunk_offset;
	b->npieces++;
	return true;
}

/*
 * The same as sb_delta_compare for a backup opened streamed: the pieces
 * walked in chunk order from the spool, BATCH_CHUNKS chunks at a time
 * compared on the workers; what the target holds is accounted per entry
 * (held_sums, held_bytes), for the window to start each file from.
 */
bool
sb_delta_compare_streamed(RestoreTarget *t, SbArchive *a, const SbReadOptions *read, SbError *err)
{
	RestoreDelta *d = t->delta;
	BatchWalk	w;
	bool		ok;

	memset(&w, 0, sizeof(w));
	d->held_sums = sb_alloc(d->nentries * sizeof(uint32_t) + 1, err);
	d->held_bytes = d->held_sums ? sb_alloc(d->nentries * sizeof(uint64_t) + 1, err) : NULL;
	w.batch.start = d->held_bytes ? sb_alloc((BATCH_CHUNKS + 1) * sizeof(size_t), err) : NULL;
	ok = w.batch.start != NULL && begin_compare(t, a, read, &w.workers, err);
	d->seed.sums = d->held_sums;
	d->seed.bytes = d->held_bytes;
	w.batch.cmp = &d->cmp;
	w.batch.last_ordinal = SIZE_MAX;
	ok = ok && sb_manifest_each_piece(t->manifest, batch_piece, &w, err);
	if (ok)
		run_batch(&w.batch, w.workers, 0);
	free(w.batch.start);
	free(w.batch.pieces);
	free(w.batch.names);
	return end_compare(t, w.workers, ok, err);
}

const SbWindowSeed *
sb_delta_seed(const RestoreTarget *t)
{
	return t->delta != NULL && t->delta->held_sums != NULL ? &t->delta->seed : NULL;
}

const uint8_t *
sb_delta_held(const RestoreTarget *t)
{
	return t->delta ? t->delta->held : NULL;
}

bool
sb_delta_kept(const RestoreTarget *t, size_t i)
{
	return t->delta != NULL && t->delta->kept[i];
}

const char *
sb_delta_write_path(const RestoreTarget *t, size_t i)
{
	return t->delta != NULL && i == t->delta->guard ? t->delta->guard_tmp : NULL;
}

/* ---------- writing what differs ---------- */

/*
 * Write the blocks of LEN bytes at OFFSET that differ from what FD holds
 * there.  Blocks are the file's pages, not counted from OFFSET: a piece
 * starts wherever a chunk boundary cut its file, and a grid from there would
 * lay two blocks over every changed page.
 */
static bool
write_span(RestoreDelta *d, int fd, const uint8_t *data, size_t len, uint64_t offset,
		   const char *what, SbError *err)
{
	uint8_t		have[COMPARE_SPAN];
	ssize_t		got = pread(fd, have, len, (off_t) offset);
	size_t		b;
	size_t		n;

	if (got < 0)
		return sb_error_set_errno(err, errno, "could not read \"%s\"", what);
	for (b = 0; b < len; b += n)
	{
		n = to_boundary(offset + b, COMPARE_BLOCK, len - b);
		if ((size_t) got >= b + n && memcmp(have + b, data + b, n) == 0)
			continue;
		if (!sb_pwrite_all(fd, data + b, n, offset + b, what, err))
			return false;
		atomic_fetch_add(&d->written, n);
	}
	return true;
}

bool
sb_delta_write(RestoreTarget *t, int fd, size_t entry, const uint8_t *data, uint64_t length,
			   uint64_t offset, const char *what, SbError *err)
{
	RestoreDelta *d = t->delta;
	uint64_t	done;
	size_t		n;

	if (!d->kept[entry])
	{
		atomic_fetch_add(&d->written, length);
		return sb_pwrite_all(fd, data, length, offset, what, err);
	}
	for (done = 0; done < length; done += n)
	{
		n = to_boundary(offset + done, COMPARE_SPAN, length - done);
		if (!write_span(d, fd, data + done, n, offset + done, what, err))
			return false;
	}
	return true;
}

/* ---------- the estimate ---------- */

/* Where archive PATH is: in the relocation it lies in, or under TARGET. */
static void
estimate_path(const char *target, const SbRelocation *r, uint32_t n, const char *path, char *out,
			  size_t len)
{
	uint32_t	i;

	for (i = 0; i < n; i++)
	{
		size_t		l = strlen(r[i].from);

		if (strncmp(path, r[i].from, l) == 0 && path[l] == '/')
		{
			snprintf(out, len, "%s/%s", r[i].to, path + l + 1);
			return;
		}
	}
	snprintf(out, len, "%s/%s", target, path);
}

/* Count file X, there with status ST (RC != 0: not there), into E; true if it is "same". */
static bool
classify(const SbEntry *x, int rc, const struct stat *st, SbDeltaEstimate *e)
{
	if (rc != 0 || !S_ISREG(st->st_mode))
	{
		e->files_new++;
		e->bytes_new += x->size;
		return false;
	}
	if ((uint64_t) st->st_size == x->size && st->st_mtime == x->mtime)
	{
		e->files_same++;
		e->bytes_same += x->size;
		return true;
	}
	e->files_differ++;
	e->bytes_differ += x->size;
	return false;
}

/* What the estimate walks the backup's files with. */
typedef struct Estimating
{
	const SbManifest *m;
	const char *target;
	const SbRelocation *relocs;
	uint32_t	nrelocs;
	SbDeltaEstimate *e;
	uint8_t    *read;			/* per chunk: it holds a piece of a file not "same" */
} Estimating;

/* File X looked at in the target and counted; the chunks of one not "same" are read. */
static bool
estimate_file(void *arg, const SbEntry *x, SbError *err)
{
	Estimating *est = arg;
	uint32_t	cs = est->m->chunk_size;
	char		path[PATH_MAX];
	struct stat st;
	uint64_t	c;
	int			rc;

	if (x->type != SB_ENTRY_FILE)
		return true;
	estimate_path(est->target, est->relocs, est->nrelocs, x->path, path, sizeof(path));
	rc = lstat(path, &st);
	if (rc != 0 && errno != ENOENT && errno != ENOTDIR)
		return sb_error_set_errno(err, errno, "could not look at \"%s\"", path);
	if (classify(x, rc, &st, est->e) || x->stream_length == 0)
		return true;
	for (c = x->stream_offset / cs;
		 c <= (x->stream_offset + x->stream_length - 1) / cs && c < est->m->total_chunks; c++)
		est->read[c] = 1;
	return true;
}

/*
 * The files in order, from the table or the spool, and a byte a chunk: a
 * plan of a delta restore holds no file table.
 */
bool
sb_delta_estimate(const SbManifest *m, const char *target, const SbRelocation *relocs, uint32_t n,
				  SbDeltaEstimate *e, SbError *err)
{
	Estimating	est = {m, target, relocs, n, e, NULL};
	uint64_t	c;
	bool		ok;

	memset(e, 0, sizeof(*e));
	est.read = sb_alloc(m->total_chunks + 1, err);
	ok = est.read != NULL && sb_manifest_each_entry(m, estimate_file, &est, err);
	for (c = 0; ok && c < m->total_chunks; c++)
	{
		uint32_t	len = sb_manifest_chunk_length(m, c);

		if (est.read[c])
			e->stripe_read[sb_manifest_chunk_stripe(m, c)] += len;
		else
			e->compare_first += len;
	}
	free(est.read);
	return ok;
}

double
sb_delta_plan_seconds(const SbPlan *plan, const SbDeltaEstimate *e, bool chain, double compare_mbps,
					  double setup_per_file, double finish_per_byte)
{
	double		reading = 0;
	double		compare = 0;
	uint32_t	s;

	if (setup_per_file < 0 || finish_per_byte < 0 || plan->estimated_seconds < 0)
		return -1;
	if (chain)					/* every link read, as a plain restore reads them */
		reading = plan->estimated_seconds - plan->fixed_seconds;
	for (s = 0; !chain && s < plan->nstripes; s++)
	{
		const SbPlanStripe *p = &plan->stripes[s];
		double		share = p->raw_bytes ? (double) e->stripe_read[s] / (double) p->raw_bytes : 0;

		if (p->estimated_seconds * share > reading)
			reading = p->estimated_seconds * share;
	}
	if (!chain && e->compare_first > 0)
	{
		if (compare_mbps <= 0)
			return -1;
		compare = (double) e->compare_first / 1e6 / compare_mbps;
	}
	return setup_per_file * (double) plan->files + compare + reading +
		finish_per_byte * (double) (e->bytes_differ + e->bytes_new);
}

/* ---------- the guard ---------- */

bool
sb_delta_finish(RestoreTarget *t, SbError *err)
{
	RestoreDelta *d = t->delta;
	Place		from,
				to;
	char		parent[PATH_MAX];
	char	   *slash;
	int			fd;

	if (d == NULL || d->guard == SIZE_MAX)
		return true;
	from = sb_restore_locate(t, d->guard_tmp);
	to = sb_restore_locate(t, d->guard_path);
	if (renameat(from.dir->fd, from.rel, to.dir->fd, to.rel) != 0)
		return sb_error_set_errno(err, errno, "could not put \"%s/%s\" in place", to.dir->path, to.rel);
	snprintf(parent, sizeof(parent), "%s", to.rel);
	slash = strrchr(parent, '/');
	if (slash != NULL)
		*slash = '\0';
	fd = sb_open_beneath(to.dir->fd, slash ? parent : ".", O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0 || fsync(fd) != 0)
	{
		sb_error_set_errno(err, errno, "could not sync the folder of \"%s/%s\"", to.dir->path, to.rel);
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(fd);
	return true;
}

void
sb_delta_abort(RestoreTarget *t)
{
	Place		p;

	if (t->delta == NULL || t->delta->guard_tmp == NULL || t->root.fd < 0)
		return;
	p = sb_restore_locate(t, t->delta->guard_tmp);
	(void) unlinkat(p.dir->fd, p.rel, 0);
}

void
sb_delta_free(RestoreTarget *t)
{
	RestoreDelta *d = t->delta;

	if (d == NULL)
		return;
	d->stats->delta_written = atomic_load(&d->written);
	sb_entry_lookup_free(d->lookup);
	free((void *) d->held_sums);
	free((void *) d->held_bytes);
	free(d->kept);
	free(d->unchanged);
	free(d->held);
	free(d->raw_hash);
	free(d->raw_len);
	free(d->stored_len);
	free(d->record_at);
	free(d->framed);
	free(d->guard_path);
	free(d->guard_tmp);
	free(d);
	t->delta = NULL;
}
