/*
 * restore.c
 *		Restoring an archive into an empty directory.
 *
 * 1. the target (and every relocation's directory) must be absent or empty;
 * 2. every directory and file is created (files at their full size, so holes
 * stay holes; a file whose data is all in one chunk is created as that
 * chunk is written); 3. the read pipeline checks every chunk and writes its pieces
 * at their offsets, adding each piece's CRC into its file's (file_check.h);
 * 4. every file must then have the manifest's size and CRC-32C; 5. links,
 * modes and times are set, directories last; 6. one syncfs() per file system
 * makes it all durable, instead of an fsync per file.  Each target device
 * has a thread that starts the write-out of what was written to it (on one
 * device the workers start it), drops it from the page cache once written,
 * and syncs it at the end (restore_writeback.c), so that every device writes
 * at once and the cache keeps what it held.  A restore given a marker keeps it in every output
 * directory from before the first file to after the last time is set
 * (restore_marker.c).
 *
 * A relocation puts an archive directory (a tablespace, "pg_tblspc/16385")
 * somewhere else and leaves a symlink to it in its place.
 *
 * Every path is opened beneath its output directory without following
 * symlinks (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so no manifest can
 * make a restore write anywhere else.  A failed restore removes what it wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "restore/chain.h"
#include "manifest/entry_spool.h"
#include "util/fsutil.h"
#include "restore/read_pipeline.h"
#include "restore/restore_marker.h"
#include "restore/restore_internal.h"
#include "restore/restore_writeback.h"

Place
sb_restore_locate(const RestoreTarget *t, const char *path)
{
	Place		place = {&t->root, path};
	uint32_t	i;

	for (i = 0; i < t->nrelocs; i++)
	{
		const Relocation *r = &t->relocs[i];

		if (strncmp(path, r->from, r->from_len) != 0)
			continue;
		if (path[r->from_len] == '\0')
			place.rel = ".";
		else if (path[r->from_len] == '/')
			place.rel = path + r->from_len + 1;
		else
			continue;
		place.dir = &r->dir;
		break;
	}
	return place;
}

/* What each_entry calls for each entry E (I: its ordinal, its index in the table). */
typedef bool (*EachEntryFn) (RestoreTarget *t, const SbEntry *e, size_t i, void *arg, SbError *err);

/*
 * Every entry of the backup, in order, to FN: from the table, or read back
 * from the spool of a backup opened SB_KEEP_STREAMED (the entry's strings
 * last until FN returns).
 */
static bool
each_entry(RestoreTarget *t, EachEntryFn fn, void *arg, SbError *err)
{
	SbEntrySpool *spool = t->manifest->streamed;
	SbEntry		e;
	bool		end = false;
	size_t		i;

	if (spool == NULL)
	{
		for (i = 0; i < t->manifest->nentries; i++)
			if (!fn(t, &t->manifest->entries[i], i, arg, err))
				return false;
		return true;
	}
	if (!sb_entry_spool_rewind(spool, err))
		return false;
	for (i = 0; sb_entry_spool_next(spool, &e, &end, err); i++)
		if (!fn(t, &e, i, arg, err))
			return false;
	return end;
}

/* The entry with a path, found by each_entry: its copy and whether it was found. */
typedef struct Found
{
	const char *path;
	bool		found;
	SbEntry		entry;			/* strings not kept */
} Found;

static bool
find_one(RestoreTarget *t, const SbEntry *e, size_t i, void *arg, SbError *err)
{
	Found	   *f = arg;

	(void) t;
	(void) i;
	(void) err;
	if (f->found || strcmp(e->path, f->path) != 0)
		return true;
	f->found = true;
	f->entry = *e;
	f->entry.path = NULL;
	f->entry.link_target = NULL;
	f->entry.extents = NULL;
	return true;
}

/* The backup's entry for PATH into *FOUND (its fields but strings); false on failure. */
static bool
find_entry(RestoreTarget *t, const char *path, Found *found, SbError *err)
{
	memset(found, 0, sizeof(*found));
	found->path = path;
	return each_entry(t, find_one, found, err);
}

/*
 * An output directory must be empty (or, for a delta restore, any directory),
 * or absent: then we create it, and its missing ancestors (mode 0700).
 */
static bool
prepare_dir(OutDir *d, const char *what, bool delta, SbError *err)
{
	bool		exists,
				empty;

	d->fd = -1;
	if (!sb_dir_is_empty(d->path, &exists, &empty, err))
	{
		if (err->sys_errno == ENOTDIR)
			sb_error_set(err, SB_EINVAL, "%s \"%s\" is not a directory", what, d->path);
		return false;
	}
	if (exists && !empty && !delta)
		return sb_error_set(err, SB_EEXIST,
							"%s \"%s\" is not empty; restore only into an empty or new directory",
							what, d->path);
	if (!exists)
	{
		if (!sb_make_parents(d->path, what, &d->parents_made, err))
			return false;
		if (mkdir(d->path, 0700) != 0)
			return sb_error_set_errno(err, errno, "could not create %s \"%s\"", what, d->path);
		d->created = true;
	}
	d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (delta ? O_NOFOLLOW : 0));
	if (d->fd < 0)
		return sb_error_set_errno(err, errno, "could not open %s \"%s\"", what, d->path);
	return true;
}


/* Two output directories must not overlap: one would write into the other. */
static bool
check_disjoint(const OutDir *a, const OutDir *b, SbError *err)
{
	char		ra[PATH_MAX],
				rb[PATH_MAX];
	size_t		la,
				lb;

	if (realpath(a->path, ra) == NULL || realpath(b->path, rb) == NULL)
		return sb_error_set_errno(err, errno, "could not resolve \"%s\" or \"%s\"", a->path, b->path);
	la = strlen(ra);
	lb = strlen(rb);
	if ((strncmp(ra, rb, la) == 0 && (rb[la] == '/' || rb[la] == '\0')) ||
		(strncmp(rb, ra, lb) == 0 && (ra[lb] == '/' || ra[lb] == '\0')))
		return sb_error_set(err, SB_EINVAL, "\"%s\" and \"%s\" overlap: one is inside the other",
							a->path, b->path);
	return true;
}

static bool
prepare_relocations(RestoreTarget *t, const SbRestoreOptions *o, SbError *err)
{
	Found		found;
	uint32_t	i,
				j;

	t->relocs = sb_alloc((o->nrelocations + 1) * sizeof(Relocation), err);
	if (t->relocs == NULL)
		return false;
	for (i = 0; i < o->nrelocations; i++)
	{
		Relocation *r = &t->relocs[i];

		r->from = o->relocations[i].from;
		r->from_len = strlen(r->from);
		r->what = o->relocations[i].what ? o->relocations[i].what : "relocation target";
		r->dir.path = o->relocations[i].to;
		r->dir.fd = -1;
		if (strcmp(r->from, ".") != 0 && !find_entry(t, r->from, &found, err))
			return false;
		if (strcmp(r->from, ".") == 0 || !found.found || found.entry.type != SB_ENTRY_DIR)
			return sb_error_set(err, SB_EINVAL, "\"%s\" is not a directory of the backup", r->from);
		if (r->dir.path[0] != '/')
			return sb_error_set(err, SB_EINVAL, "%s: \"%s\" is not an absolute path",
								r->what, r->dir.path);
		t->nrelocs = i + 1;
		if (!prepare_dir(&r->dir, r->what, o->delta, err) ||
			!check_disjoint(&t->root, &r->dir, err))
			return false;
		for (j = 0; j < i; j++)
			if (!check_disjoint(&t->relocs[j].dir, &r->dir, err))
				return false;
	}
	return true;
}

static bool
create_dir(const Place *p, SbError *err)
{
	struct stat st;

	if (strcmp(p->rel, ".") == 0)
		return true;			/* a relocation's directory: already made */
	if (mkdirat(p->dir->fd, p->rel, 0700) == 0)
		return true;
	/* Already made as the parent of an earlier entry. */
	if (errno == EEXIST && fstatat(p->dir->fd, p->rel, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		S_ISDIR(st.st_mode))
		return true;
	return sb_error_set_errno(err, errno, "could not create directory \"%s/%s\"",
							  p->dir->path, p->rel);
}

/*
 * A file whose data lies whole in one chunk (most files of a cluster of many
 * small ones) is created when that chunk arrives, written and closed in one
 * go: one open instead of three (create, write, check the size).
 */
static bool
written_whole(const RestoreTarget *t, const SbEntry *e)
{
	uint32_t	cs = t->manifest->chunk_size;

	return t->delta == NULL && e->type == SB_ENTRY_FILE && !e->sparse && e->size > 0 &&
		e->stream_offset / cs == (e->stream_offset + e->size - 1) / cs;
}

/*
 * A file written whole is created with its own mode when the umask leaves
 * that mode whole (no chmod follows), and its times are set through the
 * descriptor that wrote it: the workers do it all at once, where a pass at
 * the end would walk every path twice more, one file at a time.
 */
static bool
created_with_mode(const RestoreTarget *t, uint32_t mode)
{
	return t->umask >= 0 && (mode & (uint32_t) t->umask) == 0;
}

static mode_t
creation_mode(const RestoreTarget *t, uint32_t mode)
{
	return created_with_mode(t, mode) ? (mode_t) mode : 0600;
}

/* P's file, open as FD, gets MTIME as both its times. */
static bool
set_times_fd(int fd, const Place *p, int64_t mtime, SbError *err)
{
	struct timespec times[2] = {{mtime, 0}, {mtime, 0}};

	if (futimens(fd, times) != 0)
		return sb_error_set_errno(err, errno, "could not set the times of \"%s/%s\"",
								  p->dir->path, p->rel);
	return true;
}

/* Where entry E (index I) is written: its place, or where a delta restore keeps its guard meanwhile. */
static Place
entry_place(const RestoreTarget *t, const SbEntry *e, size_t i)
{
	const char *tmp = sb_delta_write_path(t, i);

	return sb_restore_locate(t, tmp ? tmp : e->path);
}

/*
 * An empty file is finished as it is created: its mode, its times, and its
 * size, which O_EXCL makes 0 (a delta restore's may be there already).
 */
static bool
created_empty(const RestoreTarget *t, const SbEntry *e)
{
	return t->delta == NULL && e->type == SB_ENTRY_FILE && e->size == 0;
}

static bool
create_file(const RestoreTarget *t, const Place *p, const SbEntry *e, SbError *err)
{
	bool		empty = created_empty(t, e);
	int			fd = sb_open_beneath(p->dir->fd, p->rel, O_WRONLY | O_CREAT | O_EXCL,
									 empty ? creation_mode(t, e->mode) : 0600);
	bool		ok = true;

	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not create \"%s/%s\"", p->dir->path, p->rel);
	if (e->size > 0 && ftruncate(fd, (off_t) e->size) != 0)
		ok = sb_error_set_errno(err, errno, "could not extend \"%s/%s\" to %llu bytes",
								p->dir->path, p->rel, (unsigned long long) e->size);
	ok = ok && (!empty || set_times_fd(fd, p, e->mtime, err));
	close(fd);
	return ok;
}

/* The folder that holds the entry before: entries come folder by folder. */
typedef struct MadeParent
{
	const OutDir *dir;
	const char *rel;			/* in COPY: an entry read back from the spool lasts no longer */
	size_t		len;
	char		copy[PATH_MAX];
} MadeParent;

/* Make the folders above P, unless they are those made for the entry before. */
static bool
make_parents(MadeParent *made, const Place *p, SbError *err)
{
	const char *slash = strrchr(p->rel, '/');
	size_t		len = slash ? (size_t) (slash - p->rel) : 0;

	if (len == 0 ||
		(made->dir == p->dir && made->len == len && strncmp(made->rel, p->rel, len) == 0))
		return true;
	if (!sb_make_parents_beneath(p->dir->fd, p->rel, err))
		return false;
	made->dir = p->dir;
	snprintf(made->copy, sizeof(made->copy), "%.*s", (int) len, p->rel);
	made->rel = made->copy;
	made->len = strlen(made->copy);
	return true;
}

/*
 * Newest file I of a chain is created, written whole and closed by the one
 * older backup that gives it bytes (chain.h), as a written_whole file is by
 * its chunk.
 */
static bool
created_by_older(const RestoreTarget *t, size_t i)
{
	return t->delta == NULL && t->chain.nlinks > 1 && sb_chain_given_whole(&t->chain, i);
}

/*
 * File I (entry E) was created, written, timed and closed in one go, its
 * mode set unless the umask took some of it: no look at its size, no
 * setting by path at the end.
 */
static bool
finished_at_creation(const RestoreTarget *t, const SbEntry *e, size_t i)
{
	return written_whole(t, e) || created_by_older(t, i) || created_empty(t, e);
}

/* Entry E's directory or file (at full size, unless written whole as its chunk arrives). */
static bool
create_one(RestoreTarget *t, const SbEntry *e, size_t i, void *arg, SbError *err)
{
	MadeParent *made = arg;
	Place		p = entry_place(t, e, i);

	if (strcmp(e->path, ".") == 0 || e->type == SB_ENTRY_SYMLINK || sb_delta_kept(t, i))
		return true;
	if (strcmp(p.rel, ".") != 0 && !make_parents(made, &p, err))
		return false;
	if (e->type == SB_ENTRY_DIR)
		return create_dir(&p, err);
	return written_whole(t, e) || created_by_older(t, i) || create_file(t, &p, e, err);
}

/* Directories and empty files at full size, before any data arrives (but written_whole ones). */
static bool
create_tree(RestoreTarget *t, SbError *err)
{
	MadeParent	made = {NULL, NULL, 0, {0}};

	return each_entry(t, create_one, &made, err);
}

/*
 * Write LENGTH bytes at DATA into entry E's file (index I) at FILE_OFFSET:
 * a file written whole is created, written, its times set and closed in one
 * go (a worker thread).
 */
static bool
write_piece(RestoreTarget *t, const SbEntry *e, size_t i, const uint8_t *data,
			uint64_t length, uint64_t file_offset, uint64_t chunk_id, SbError *err)
{
	Place		p = entry_place(t, e, i);
	bool		whole = written_whole(t, e);
	bool		kept = sb_delta_kept(t, i);
	int			fd = sb_open_beneath(p.dir->fd, p.rel,
									 whole ? O_WRONLY | O_CREAT | O_EXCL : kept ? O_RDWR : O_WRONLY,
									 whole ? creation_mode(t, e->mode) : 0600);
	bool		ok;

	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not %s \"%s/%s\"",
								  whole ? "create" : "open", p.dir->path, p.rel);
	ok = t->delta ? sb_delta_write(t, fd, i, data, length, file_offset, p.rel, err) :
		sb_pwrite_all(fd, data, length, file_offset, p.rel, err);
	ok = ok && (!whole || set_times_fd(fd, &p, e->mtime, err));
	if (ok)
		sb_writeback_add(t->writeback, fd, p.dir->fd, p.rel, file_offset, length);
	close(fd);
	if (!ok)
		sb_error_prefix(err, "restoring chunk %llu into \"%s\"",
						(unsigned long long) chunk_id, p.dir->path);
	return ok;
}

/* Write each piece of a checked chunk into its file (a worker thread). */
static bool
write_pieces(void *arg, uint64_t chunk_id, const uint8_t *raw, uint32_t len, SbError *err)
{
	RestoreTarget *t = arg;
	SbPieceIter it;
	SbPiece		piece;

	(void) len;
	sb_piece_iter_init(&it, t->manifest, chunk_id);
	while (sb_piece_iter_next(&it, &piece))
		if (!write_piece(t, &t->manifest->entries[piece.entry], piece.entry, raw + piece.chunk_offset,
						 piece.length, piece.file_offset, chunk_id, err))
			return false;
	return true;
}

/* The same, for a restore a window of files at a time: the window found the pieces. */
static bool
write_window_pieces(void *arg, uint64_t chunk_id, const SbWindowPiece *pieces, size_t n,
					const uint8_t *raw, SbError *err)
{
	RestoreTarget *t = arg;
	size_t		k;

	for (k = 0; k < n; k++)
		if (!write_piece(t, &pieces[k].file->entry, pieces[k].file->ordinal,
						 raw + pieces[k].chunk_offset, pieces[k].length, pieces[k].file_offset,
						 chunk_id, err))
			return false;
	return true;
}

/* Older backup K of the chain, writing what it gives the newest backup's files. */
typedef struct OlderLink
{
	RestoreTarget *target;
	uint32_t	k;
	SbArchive  *archive;
	SbChainReceiver *receivers; /* read whole: by its entry; windowed: NULL
								 * (each file of the window carries its own) */
} OlderLink;

/*
 * LENGTH bytes at DATA, of an older backup's file at PATH from FILE_OFFSET:
 * what lies below the newest file's length written into it (R).  A file
 * this backup alone gives bytes is created here, with the newest file's
 * mode and times, as a file written whole by its chunk is.
 */
static bool
write_given(const OlderLink *o, const char *path, const SbChainReceiver *r, const uint8_t *data,
			uint64_t length, uint64_t file_offset, SbError *err)
{
	RestoreTarget *t = o->target;
	uint64_t	end = file_offset + length < r->limit ? file_offset + length : r->limit;
	const char *guard_path;
	Place		p;
	bool		create;
	int			fd;
	bool		ok;

	if (r->into == SIZE_MAX || file_offset >= end)
		return true;
	/* the newest file has the same path (or a delta restore's guard its temporary one) */
	guard_path = sb_delta_write_path(t, r->into);
	p = sb_restore_locate(t, guard_path ? guard_path : path);
	create = created_by_older(t, r->into);
	if ((fd = sb_open_beneath(p.dir->fd, p.rel, create ? O_WRONLY | O_CREAT | O_EXCL : O_RDWR,
							  create ? creation_mode(t, r->mode) : 0600)) < 0)
		return sb_error_set_errno(err, errno, "could not %s \"%s/%s\"", create ? "create" : "open",
								  p.dir->path, p.rel);
	ok = t->delta ?
		sb_delta_write(t, fd, r->into, data, end - file_offset, file_offset, p.rel, err) :
		sb_pwrite_all(fd, data, end - file_offset, file_offset, p.rel, err);
	ok = ok && (!create || set_times_fd(fd, &p, r->mtime, err));
	/*
	 * Its write-out started now, as the newest backup's is: left to the
	 * final sync, a chain's restore waited there for most of what it wrote
	 * (the blocks a newer backup changes reach the disk twice: a few percent)
	 */
	if (ok)
		sb_writeback_add(t->writeback, fd, p.dir->fd, p.rel, file_offset, end - file_offset);
	atomic_fetch_add(&t->chain.written, ok ? end - file_offset : 0);
	close(fd);
	return ok;
}

static bool
older_chunk_failed(const OlderLink *o, uint64_t chunk_id, SbError *err)
{
	sb_error_prefix(err, "restoring chunk %llu of backup \"%s\" into \"%s\"",
					(unsigned long long) chunk_id, o->archive->manifest->name, o->target->root.path);
	return false;
}

/* An older backup's checked chunk, its table in memory: each piece, what of it the newest holds. */
static bool
write_given_pieces(void *arg, uint64_t chunk_id, const uint8_t *raw, uint32_t len, SbError *err)
{
	const OlderLink *o = arg;
	const SbManifest *m = o->archive->manifest;
	SbPieceIter it;
	SbPiece		piece;

	(void) len;
	sb_piece_iter_init(&it, m, chunk_id);
	while (sb_piece_iter_next(&it, &piece))
		if (!write_given(o, m->entries[piece.entry].path, &o->receivers[piece.entry],
						 raw + piece.chunk_offset, piece.length, piece.file_offset, err))
			return older_chunk_failed(o, chunk_id, err);
	return true;
}

/* The same, read a window at a time: where each file gives was found as it entered the window. */
static bool
write_given_window_pieces(void *arg, uint64_t chunk_id, const SbWindowPiece *pieces, size_t n,
						  const uint8_t *raw, SbError *err)
{
	const OlderLink *o = arg;
	size_t		i;

	for (i = 0; i < n; i++)
	{
		const SbWindowFile *f = pieces[i].file;

		if (!write_given(o, f->entry.path, &f->given, raw + pieces[i].chunk_offset, pieces[i].length,
						 pieces[i].file_offset, err))
			return older_chunk_failed(o, chunk_id, err);
	}
	return true;
}

/* An older backup's file enters the window: where it gives its bytes (the window is locked). */
static bool
find_receiver(void *arg, SbWindowFile *f, SbError *err)
{
	const OlderLink *o = arg;

	return sb_chain_receiver(&o->target->chain, o->k, f->entry.path, &f->given, err);
}

static bool
set_times(const Place *p, const SbEntry *e, SbError *err)
{
	struct timespec times[2];

	times[0].tv_sec = e->mtime;
	times[0].tv_nsec = 0;
	times[1] = times[0];
	if (utimensat(p->dir->fd, p->rel, times, AT_SYMLINK_NOFOLLOW) != 0)
		return sb_error_set_errno(err, errno, "could not set the times of \"%s/%s\"",
								  p->dir->path, p->rel);
	return true;
}

static bool
set_mode(const Place *p, const SbEntry *e, SbError *err)
{
	if (fchmodat(p->dir->fd, p->rel, e->mode, 0) != 0)
		return sb_error_set_errno(err, errno, "could not set the mode of \"%s/%s\"",
								  p->dir->path, p->rel);
	return true;
}

/* A directory of the backup, kept for the end of the restore. */
typedef struct DirToFinish
{
	char	   *path;
	uint16_t	mode;
	int64_t		mtime;
} DirToFinish;

typedef struct DirsToFinish
{
	DirToFinish *items;
	size_t		n;
	size_t		cap;
} DirsToFinish;

/* Directory E, kept for the end of the restore in ARG (a DirsToFinish). */
static bool
keep_dir(RestoreTarget *t, const SbEntry *e, size_t i, void *arg, SbError *err)
{
	DirsToFinish *dirs = arg;
	DirToFinish *d;

	(void) t;
	(void) i;
	if (!sb_grow((void **) &dirs->items, &dirs->cap, dirs->n, sizeof(DirToFinish), err))
		return false;
	d = &dirs->items[dirs->n];
	if ((d->path = sb_strdup(e->path, err)) == NULL)
		return false;
	d->mode = e->mode;
	d->mtime = e->mtime;
	dirs->n++;
	return true;
}

static int
compare_paths_descending(const void *a, const void *b)
{
	const DirToFinish *x = a;
	const DirToFinish *y = b;

	return strcmp(y->path, x->path);
}

/* The directories kept, children first, so setting a time is not undone by a child. */
static bool
finish_directories(RestoreTarget *t, DirsToFinish *dirs, SbError *err)
{
	bool		ok = true;
	size_t		i;

	if (dirs->n > 1)				/* none: ITEMS is NULL, which qsort must not be given */
		qsort(dirs->items, dirs->n, sizeof(DirToFinish), compare_paths_descending);
	for (i = 0; ok && i < dirs->n; i++)
	{
		Place		p = sb_restore_locate(t, dirs->items[i].path);
		SbEntry		e;

		memset(&e, 0, sizeof(e));
		e.mode = dirs->items[i].mode;
		e.mtime = dirs->items[i].mtime;
		ok = set_mode(&p, &e, err) && set_times(&p, &e, err);
	}
	return ok;
}

static bool
create_link(const Place *p, const char *target, SbError *err)
{
	if (!sb_make_parents_beneath(p->dir->fd, p->rel, err))
		return false;
	if (symlinkat(target, p->dir->fd, p->rel) != 0)
		return sb_error_set_errno(err, errno, "could not create link \"%s/%s\"",
								  p->dir->path, p->rel);
	return true;
}

/* Each relocated directory's place in the target becomes a link to it. */
static bool
link_relocations(RestoreTarget *t, SbError *err)
{
	uint32_t	i;

	for (i = 0; i < t->nrelocs; i++)
	{
		Place		p = {&t->root, t->relocs[i].from};

		if (!create_link(&p, t->relocs[i].dir.path, err))
			return false;
	}
	return true;
}

/*
 * A link made, or a file's mode and times set (those of a file written
 * whole are), or a directory kept for the end (ARG, a DirsToFinish).
 */
static bool
finish_one(RestoreTarget *t, const SbEntry *e, size_t i, void *arg, SbError *err)
{
	Place		p = entry_place(t, e, i);

	if (e->type == SB_ENTRY_DIR)
		return keep_dir(t, e, i, arg, err);
	if (e->type == SB_ENTRY_SYMLINK)
		return create_link(&p, e->link_target, err) && set_times(&p, e, err);
	if (e->type == SB_ENTRY_FILE && finished_at_creation(t, e, i))
		return created_with_mode(t, e->mode) || set_mode(&p, e, err);
	if (e->type == SB_ENTRY_FILE)
		return set_mode(&p, e, err) && set_times(&p, e, err);
	return true;
}

/* Links, then file modes and times, then directories. */
static bool
finish_tree(RestoreTarget *t, SbError *err)
{
	DirsToFinish dirs = {NULL, 0, 0};
	bool		ok = each_entry(t, finish_one, &dirs, err) && link_relocations(t, err) &&
		finish_directories(t, &dirs, err);
	size_t		i;

	for (i = 0; i < dirs.n; i++)
		free(dirs.items[i].path);
	free(dirs.items);
	return ok;
}

/* The caller's extra files (recovery settings), into the target, after the backup's. */
static bool
write_extras(const RestoreTarget *t, const SbRestoreOptions *o, SbError *err)
{
	uint32_t	i;

	for (i = 0; i < o->nextra_files; i++)
	{
		const SbRestoreFile *f = &o->extra_files[i];
		int			flags = O_WRONLY | O_CREAT | (f->append ? O_APPEND : O_EXCL);
		int			fd = sb_open_beneath(t->root.fd, f->path, flags, 0600);
		bool		ok;

		if (fd < 0)
			return sb_error_set_errno(err, errno, "could not %s \"%s/%s\"",
									  f->append ? "open" : "create", t->root.path, f->path);
		ok = sb_write_all(fd, f->text, strlen(f->text), f->path, err);
		close(fd);
		if (!ok)
			return false;
	}
	return true;
}

/* D's marker; a delta restore's replaces one that a delta cut short left. */
static bool
write_marker(const OutDir *d, const char *marker, bool delta, SbError *err)
{
	const char *state = delta ? SB_MARKER_DELTA : d->created ? SB_MARKER_CREATED : SB_MARKER_EXISTING;

	if (delta)
		(void) unlinkat(d->fd, SB_RESTORE_MARKER_FILE, 0);
	return sb_restore_marker_write(d->fd, d->path, marker, state, err);
}

/* The marker goes into every output directory before anything else does. */
static bool
mark_all(RestoreTarget *t, const char *marker, bool delta, SbError *err)
{
	uint32_t	i;

	if (marker == NULL)
		return true;
	if (!write_marker(&t->root, marker, delta, err))
		return false;
	for (i = 0; i < t->nrelocs; i++)
		if (!write_marker(&t->relocs[i].dir, marker, delta, err))
			return false;
	return true;
}

/* The marker leaves OUT (the archive's directory FROM), which keeps the backup's times. */
static bool
unmark(RestoreTarget *t, const OutDir *out, const char *from, SbError *err)
{
	Found		found;
	Place		p = {out, "."};

	return find_entry(t, from, &found, err) && sb_restore_marker_remove(out->fd, out->path, err) &&
		(!found.found || set_times(&p, &found.entry, err));
}

/* The restore is complete: every marker goes. */
static bool
unmark_all(RestoreTarget *t, const char *marker, SbError *err)
{
	uint32_t	i;

	if (marker == NULL)
		return true;
	for (i = 0; i < t->nrelocs; i++)
		if (!unmark(t, &t->relocs[i].dir, t->relocs[i].from, err))
			return false;
	return unmark(t, &t->root, ".", err);
}

/*
 * The directory's own entry synced; its file system too, unless the
 * write-out threads synced every one already (SYNCED).
 */
static bool
sync_dir(const OutDir *d, bool synced, SbError *err)
{
	char		parent[PATH_MAX];

	if (!synced && syncfs(d->fd) != 0)
		return sb_error_set_errno(err, errno, "could not sync the file system of \"%s\"", d->path);
	snprintf(parent, sizeof(parent), "%s", d->path);
	return sb_fsync_path(dirname(parent), true, err);
}

/*
 * The write-out threads stopped, every file system synced by them at once
 * (with SYNC), then each directory's entry.
 */
static bool
finish_writing(RestoreTarget *t, bool sync, SbError *err)
{
	bool		synced = t->writeback != NULL;
	bool		ok = sb_writeback_finish(t->writeback, sync, err);
	uint32_t	i;

	t->writeback = NULL;
	if (!sync)
		return ok;
	for (i = 0; ok && i < t->nrelocs; i++)
		ok = sync_dir(&t->relocs[i].dir, synced, err);
	return ok && sync_dir(&t->root, synced, err);
}

/* The write-out of every output directory: a thread for each device they lie on. */
static bool
start_writeback(RestoreTarget *t, SbError *err)
{
	int		   *fds = sb_alloc((t->nrelocs + 1) * sizeof(int), err);
	const char **paths = sb_alloc((t->nrelocs + 1) * sizeof(char *), err);
	uint32_t	i;
	bool		ok = fds != NULL && paths != NULL;

	for (i = 0; ok && i < t->nrelocs; i++)
	{
		fds[i] = t->relocs[i].dir.fd;
		paths[i] = t->relocs[i].dir.path;
	}
	if (ok)
	{
		fds[i] = t->root.fd;
		paths[i] = t->root.path;
		t->writeback = sb_writeback_start(fds, paths, t->nrelocs + 1);
	}
	free(fds);
	free(paths);
	return ok;
}

/* Remove what a failed restore wrote (and the directory, if we made it). */
static void
clean_dir(OutDir *d)
{
	SbError		ignored;

	if (d->fd >= 0)
	{
		close(d->fd);
		sb_remove_contents(d->path, &ignored);
	}
	if (d->created && rmdir(d->path) == 0)
		sb_remove_made_parents(d->path, d->parents_made);
}

static void
close_all(RestoreTarget *t, bool clean)
{
	uint32_t	i;

	for (i = 0; i < t->nrelocs; i++)
	{
		if (clean)
			clean_dir(&t->relocs[i].dir);
		else if (t->relocs[i].dir.fd >= 0)
			close(t->relocs[i].dir.fd);
	}
	if (clean)
		clean_dir(&t->root);
	else if (t->root.fd >= 0)
		close(t->root.fd);
	free(t->relocs);
}

/* The restored file at P is E's size, as the file system says. */
static bool
check_size(const Place *p, const SbEntry *e, SbError *err)
{
	int			fd = sb_open_beneath(p->dir->fd, p->rel, O_RDONLY, 0);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0)
	{
		sb_error_set_errno(err, errno, "could not check \"%s/%s\"", p->dir->path, p->rel);
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(fd);
	if ((uint64_t) st.st_size != e->size)
		return sb_error_set(err, SB_ECORRUPT,
							"restored file \"%s/%s\" is %llu bytes long, the manifest records %llu",
							p->dir->path, p->rel, (unsigned long long) st.st_size,
							(unsigned long long) e->size);
	return true;
}

/*
 * Restored file I has the manifest's size (as the file system says) and
 * CRC-32C (of the pieces written into it, combined): a chunk of the right
 * checksum that lands in the wrong file, or a manifest whose file records do
 * not match its data, cannot pass for a good restore.  A file written whole
 * needs no look at its size: it was created (O_EXCL) and written from its
 * one piece, which covers it from 0 to its size, and the completeness check
 * says that piece was written.
 */
static bool
check_file(const RestoreTarget *t, const SbFileCheck *fc, size_t i, SbError *err)
{
	const SbEntry *e = &t->manifest->entries[i];
	Place		p = entry_place(t, e, i);

	if (!finished_at_creation(t, e, i) && !check_size(&p, e, err))
		return false;
	if (!sb_file_check_complete(fc, i))
		return sb_error_set(err, SB_ECORRUPT, "not every byte of \"%s/%s\" was restored",
							p.dir->path, p.rel);
	return sb_file_check_entry(fc, i, err);
}

static bool
check_files(const RestoreTarget *t, const SbFileCheck *fc, SbError *err)
{
	size_t		i;

	for (i = 0; i < t->manifest->nentries; i++)
		if (t->manifest->entries[i].type == SB_ENTRY_FILE && !check_file(t, fc, i, err))
			return false;
	return true;
}

/*
 * Each file of an older backup that gives bytes was read whole, and has
 * the CRC-32C its backup recorded (of what that backup stored: the pieces
 * it was not asked to write count as well).
 */
static bool
check_older_files(const OlderLink *o, const SbFileCheck *fc, SbError *err)
{
	const SbManifest *m = o->archive->manifest;
	size_t		j;

	for (j = 0; j < m->nentries; j++)
	{
		if (o->receivers[j].into == SIZE_MAX)
			continue;
		if (!sb_file_check_complete(fc, j))
			return sb_error_set(err, SB_ECORRUPT, "not every byte of \"%s\" in backup \"%s\" was read",
								m->entries[j].path, m->name);
		if (!sb_file_check_entry(fc, j, err))
		{
			sb_error_prefix(err, "backup \"%s\"", m->name);
			return false;
		}
	}
	return true;
}

/* An older backup read whole: where each of its files gives, found first. */
static bool
read_older_whole(OlderLink *o, SbReadPipelineConfig *c, SbError *err)
{
	const SbManifest *m = o->archive->manifest;
	SbFileCheck fc;
	uint64_t	problems;
	size_t		j;
	bool		ok = true;

	if ((o->receivers = sb_alloc((m->nentries + 1) * sizeof(SbChainReceiver), err)) == NULL)
		return false;
	for (j = 0; ok && j < m->nentries; j++)
		ok = sb_chain_receiver(&o->target->chain, o->k, m->entries[j].path, &o->receivers[j], err);
	if (!ok || !sb_file_check_init(&fc, m, err))
		return false;
	c->sink = write_given_pieces;
	c->file_check = &fc;
	ok = sb_read_pipeline_run(c, &problems, err) && check_older_files(o, &fc, err);
	sb_file_check_free(&fc);
	return ok;
}

/*
 * Older backup K of the chain: every stripe read, what it gives written;
 * a window of files at a time when it was opened streamed (each file found
 * in the newest as it enters the window, and checked whole as it leaves).
 */
static bool
read_older(RestoreTarget *t, uint32_t k, const SbReadPipelineConfig *config, SbError *err)
{
	OlderLink	older = {t, k, t->chain.links[k].archive, NULL};
	SbReadPipelineConfig c = *config;
	uint64_t	problems;
	bool		ok;

	c.archive = older.archive;
	c.sink_arg = &older;
	c.stripe_seconds = NULL;
	c.skip = NULL;
	c.window_seed = NULL;
	c.file_left = NULL;
	if (older.archive->manifest->streamed == NULL)
		ok = read_older_whole(&older, &c, err);
	else
	{
		c.windowed = true;
		c.sink = NULL;
		c.window_sink = write_given_window_pieces;
		c.file_admitted = find_receiver;
		ok = sb_read_pipeline_run(&c, &problems, err);
	}
	free(older.receivers);
	return ok;
}

/* A chain's older backups, oldest first, each writing over the one before. */
static bool
read_older_links(RestoreTarget *t, const SbReadPipelineConfig *config, SbError *err)
{
	uint32_t	k;
	bool		ok = true;

	/* a backup no file takes anything from (every file stored whole since) is not read */
	for (k = t->chain.nlinks; ok && k > 1; k--)
		ok = !t->chain.links[k - 1].gives || read_older(t, k - 1, config, err);
	return ok && (t->chain.nlinks < 2 || sb_chain_check_written(&t->chain, err));
}

/*
 * The read of every stripe, then every file checked; for a chain, the older
 * backups first, oldest first, each writing over the one before; timed for
 * the caller's statistics.
 */
/* File I restored a window at a time, every byte read and of the right CRC-32C: its size too. */
static bool
restored_file_ok(void *arg, const SbEntry *e, size_t i, SbError *err)
{
	const RestoreTarget *t = arg;
	Place		p = entry_place(t, e, i);

	return finished_at_creation(t, e, i) || check_size(&p, e, err);
}

/*
 * The read of every stripe a window of files at a time (entry_window.h):
 * each file checked as the window lets go of it.
 */
static bool
read_windowed(RestoreTarget *t, SbReadPipelineConfig *config, SbRestoreStats *stats,
			  SbError *err)
{
	uint64_t	problems;
	double		t0 = sb_monotonic_seconds();
	bool		ok;

	ok = read_older_links(t, config, err);
	config->windowed = true;
	config->sink = NULL;
	config->window_sink = write_window_pieces;
	config->file_left = restored_file_ok;
	config->stripe_seconds = stats->stripe_seconds;
	/* a delta restore: the chunks the target holds are accounted for first, and not read */
	ok = ok && (t->delta == NULL || t->chain.nlinks > 1 ||
				sb_delta_compare_streamed(t, config->archive, config->options, err));
	config->skip = sb_delta_held(t);
	config->window_seed = sb_delta_seed(t);
	ok = ok && sb_read_pipeline_run(config, &problems, err);
	stats->read_seconds = sb_monotonic_seconds() - t0;
	return ok;
}

static bool
read_all(RestoreTarget *t, SbReadPipelineConfig *config, SbRestoreStats *stats,
		 SbError *err)
{
	SbFileCheck fc;
	uint64_t	problems;
	double		t0 = sb_monotonic_seconds();
	bool		ok = read_older_links(t, config, err);

	if (!ok || !sb_file_check_init(&fc, t->manifest, err))
		return false;
	config->file_check = &fc;
	config->stripe_seconds = stats->stripe_seconds;
	/* a delta restore: the chunks the target holds are accounted for, and not read */
	ok = t->delta == NULL || t->chain.nlinks > 1 ||
		sb_delta_compare(t, config->archive, config->options, &fc, err);
	config->skip = sb_delta_held(t);
	ok = ok && sb_read_pipeline_run(config, &problems, err) && check_files(t, &fc, err);
	sb_file_check_free(&fc);
	stats->read_seconds = sb_monotonic_seconds() - t0;
	return ok;
}

bool
sb_archive_restore(SbArchive *a, const SbRestoreOptions *o, SbError *err)
{
	RestoreTarget t;
	SbReadPipelineConfig config;
	SbRestoreStats local_stats;
	SbRestoreStats *stats = o->stats ? o->stats : &local_stats;
	double		t0 = sb_monotonic_seconds();
	double		t1;
	bool		ok;

	sb_error_clear(err);
	if (a->manifest->streamed == NULL && !sb_archive_check_entries(a, err))
		return false;
	if (!a->authenticated)
		return sb_error_set(err, SB_ENOTFOUND,
							"backup \"%s\" cannot be restored: no stripe was found to authenticate its manifest \"%s\" (stripe 1 is expected at \"%s\")",
							a->manifest->name, a->manifest_path, a->stripe_paths[0]);
	/* more stripes lost than the redundancy covers: refused before anything is written */
	if (!sb_archive_check_lost(a, err))
		return false;
	memset(&t, 0, sizeof(t));
	t.manifest = a->manifest;
	t.root.path = o->target;
	t.root.fd = -1;
	t.umask = sb_current_umask();
	/* what each backup of a chain writes, before anything is */
	if (a->parent != NULL && !sb_chain_build(a, &t.chain, err))
		return false;
	memset(&config, 0, sizeof(config));
	config.archive = a;
	config.options = &o->read;
	config.what = "restore";
	config.sink = write_pieces;
	config.sink_arg = &t;
	memset(stats, 0, sizeof(*stats));
	stats->nstripes = a->manifest->nstripes;
	ok = prepare_dir(&t.root, "restore target", o->delta, err) && prepare_relocations(&t, o, err) &&
		mark_all(&t, o->marker, o->delta, err) && (!o->delta || sb_delta_begin(&t, o, stats, err)) &&
		create_tree(&t, err) && start_writeback(&t, err);
	stats->setup_seconds = sb_monotonic_seconds() - t0;
	ok = ok && (a->manifest->streamed != NULL ? read_windowed(&t, &config, stats, err) :
				read_all(&t, &config, stats, err));
	t1 = sb_monotonic_seconds();
	ok = ok && finish_tree(&t, err) && write_extras(&t, o, err) && unmark_all(&t, o->marker, err) &&
		finish_writing(&t, !o->no_sync, err) && sb_delta_finish(&t, err);
	stats->finish_seconds = sb_monotonic_seconds() - t1;
	if (!ok)
	{
		SbError		ignored;

		(void) sb_writeback_finish(t.writeback, false, &ignored);
		sb_delta_abort(&t);
	}
	/* a failed delta restore leaves the copy (it cannot start without its guard) */
	close_all(&t, !ok && !o->keep_on_error && !o->delta);
	sb_delta_free(&t);
	sb_chain_free(&t.chain);
	return ok;
}
