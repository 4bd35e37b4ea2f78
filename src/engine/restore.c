/*
 * restore.c
 *		Restoring an archive into an empty directory.
 *
 * 1. the target must be absent or empty; 2. every directory and file is
 * created (files at their full size, so holes stay holes); 3. the read
 * pipeline checks every chunk and writes its pieces at their offsets;
 * 4. links, modes and times are set, directories last; 5. one syncfs() makes
 * it all durable, instead of an fsync per file.
 *
 * Every path is opened beneath the target without following symlinks
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so no manifest can make a
 * restore write outside its target.  A failed restore removes what it wrote.
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

#include "fsutil.h"
#include "read_pipeline.h"

typedef struct RestoreTarget
{
	const SbManifest *manifest;
	const char *path;
	int			fd;
	bool		created;		/* we made the directory itself */
} RestoreTarget;

/* The target must be an empty directory, or absent (then we create it). */
static bool
prepare_target(RestoreTarget *t, SbError *err)
{
	bool		exists,
				empty;

	if (!sb_dir_is_empty(t->path, &exists, &empty, err))
	{
		if (err->sys_errno == ENOTDIR)
			sb_error_set(err, SB_EINVAL, "restore target \"%s\" is not a directory", t->path);
		return false;
	}
	if (exists && !empty)
		return sb_error_set(err, SB_EEXIST,
							"restore target \"%s\" is not empty; restore only into an empty or new directory",
							t->path);
	if (!exists)
	{
		if (mkdir(t->path, 0700) != 0)
			return sb_error_set_errno(err, errno, "could not create restore target \"%s\"", t->path);
		t->created = true;
	}
	t->fd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->fd < 0)
		return sb_error_set_errno(err, errno, "could not open restore target \"%s\"", t->path);
	return true;
}

static bool
create_dir(RestoreTarget *t, const char *path, SbError *err)
{
	struct stat st;

	if (mkdirat(t->fd, path, 0700) == 0)
		return true;
	/* Already made as the parent of an earlier entry. */
	if (errno == EEXIST && fstatat(t->fd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		S_ISDIR(st.st_mode))
		return true;
	return sb_error_set_errno(err, errno, "could not create directory \"%s/%s\"", t->path, path);
}

static bool
create_file(RestoreTarget *t, const SbEntry *e, SbError *err)
{
	int			fd = sb_open_beneath(t->fd, e->path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	bool		ok = true;

	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not create \"%s/%s\"", t->path, e->path);
	if (e->size > 0 && ftruncate(fd, (off_t) e->size) != 0)
		ok = sb_error_set_errno(err, errno, "could not extend \"%s/%s\" to %llu bytes",
								t->path, e->path, (unsigned long long) e->size);
	close(fd);
	return ok;
}

/* Directories and empty files at full size, before any data arrives. */
static bool
create_tree(RestoreTarget *t, SbError *err)
{
	const SbManifest *m = t->manifest;
	size_t		i;

	for (i = 0; i < m->nentries; i++)
	{
		const SbEntry *e = &m->entries[i];
		bool		ok = true;

		if (strcmp(e->path, ".") == 0 || e->type == SB_ENTRY_SYMLINK)
			continue;
		ok = sb_make_parents_beneath(t->fd, e->path, err);
		if (ok && e->type == SB_ENTRY_DIR)
			ok = create_dir(t, e->path, err);
		else if (ok)
			ok = create_file(t, e, err);
		if (!ok)
			return false;
	}
	return true;
}

/* Write each piece of a checked chunk into its file (a worker thread). */
static bool
write_pieces(void *arg, uint64_t chunk_id, const uint8_t *raw, uint32_t len, SbError *err)
{
	RestoreTarget *t = arg;
	SbPieceIter it;
	SbPiece		piece;

	sb_piece_iter_init(&it, t->manifest, chunk_id);
	while (sb_piece_iter_next(&it, &piece))
	{
		const char *path = t->manifest->entries[piece.entry].path;
		int			fd = sb_open_beneath(t->fd, path, O_WRONLY, 0);
		bool		ok;

		if (fd < 0)
			return sb_error_set_errno(err, errno, "could not open \"%s/%s\"", t->path, path);
		ok = sb_pwrite_all(fd, raw + piece.chunk_offset, piece.length, piece.file_offset,
						   path, err);
		close(fd);
		if (!ok)
		{
			sb_error_prefix(err, "restoring chunk %llu into \"%s\"",
							(unsigned long long) chunk_id, t->path);
			return false;
		}
	}
	(void) len;
	return true;
}

static bool
set_times(RestoreTarget *t, const SbEntry *e, SbError *err)
{
	struct timespec times[2];

	times[0].tv_sec = e->mtime;
	times[0].tv_nsec = 0;
	times[1] = times[0];
	if (utimensat(t->fd, e->path, times, AT_SYMLINK_NOFOLLOW) != 0)
		return sb_error_set_errno(err, errno, "could not set the times of \"%s/%s\"",
								  t->path, e->path);
	return true;
}

static bool
set_mode(RestoreTarget *t, const SbEntry *e, SbError *err)
{
	if (fchmodat(t->fd, e->path, e->mode, 0) != 0)
		return sb_error_set_errno(err, errno, "could not set the mode of \"%s/%s\"",
								  t->path, e->path);
	return true;
}

static int
compare_paths_descending(const void *a, const void *b)
{
	const SbEntry *const *x = a;
	const SbEntry *const *y = b;

	return strcmp((*y)->path, (*x)->path);
}

/* Directories children first, so setting a time is not undone by a child. */
static bool
finish_directories(RestoreTarget *t, SbError *err)
{
	const SbManifest *m = t->manifest;
	const SbEntry **dirs = sb_alloc((m->nentries + 1) * sizeof(SbEntry *), err);
	size_t		n = 0;
	size_t		i;
	bool		ok = true;

	if (dirs == NULL)
		return false;
	for (i = 0; i < m->nentries; i++)
		if (m->entries[i].type == SB_ENTRY_DIR)
			dirs[n++] = &m->entries[i];
	qsort(dirs, n, sizeof(SbEntry *), compare_paths_descending);
	for (i = 0; ok && i < n; i++)
		ok = set_mode(t, dirs[i], err) && set_times(t, dirs[i], err);
	free(dirs);
	return ok;
}

/* Links, then file modes and times, then directories. */
static bool
finish_tree(RestoreTarget *t, SbError *err)
{
	const SbManifest *m = t->manifest;
	size_t		i;

	for (i = 0; i < m->nentries; i++)
	{
		const SbEntry *e = &m->entries[i];
		bool		ok = true;

		if (e->type == SB_ENTRY_SYMLINK)
		{
			ok = sb_make_parents_beneath(t->fd, e->path, err);
			if (ok && symlinkat(e->link_target, t->fd, e->path) != 0)
				ok = sb_error_set_errno(err, errno, "could not create link \"%s/%s\"",
										t->path, e->path);
			ok = ok && set_times(t, e, err);
		}
		else if (e->type == SB_ENTRY_FILE)
			ok = set_mode(t, e, err) && set_times(t, e, err);
		if (!ok)
			return false;
	}
	return finish_directories(t, err);
}

/* One sync for the whole file system, then the target's own entry. */
static bool
sync_target(RestoreTarget *t, SbError *err)
{
	char		parent[PATH_MAX];

	if (syncfs(t->fd) != 0)
		return sb_error_set_errno(err, errno, "could not sync the file system of \"%s\"", t->path);
	snprintf(parent, sizeof(parent), "%s", t->path);
	return sb_fsync_path(dirname(parent), true, err);
}

/* Remove what a failed restore wrote (and the target, if we made it). */
static void
clean_target(RestoreTarget *t)
{
	SbError		ignored;

	if (t->fd < 0 && !t->created)
		return;
	sb_remove_contents(t->path, &ignored);
	if (t->created)
		rmdir(t->path);
}

bool
sb_archive_restore(SbArchive *a, const SbRestoreOptions *o, SbError *err)
{
	RestoreTarget t;
	SbReadPipelineConfig config;
	uint64_t	problems;
	bool		ok;

	sb_error_clear(err);
	memset(&t, 0, sizeof(t));
	t.manifest = a->manifest;
	t.path = o->target;
	t.fd = -1;
	memset(&config, 0, sizeof(config));
	config.archive = a;
	config.options = &o->read;
	config.what = "restore";
	config.sink = write_pieces;
	config.sink_arg = &t;
	ok = prepare_target(&t, err) && create_tree(&t, err) &&
		sb_read_pipeline_run(&config, &problems, err) &&
		finish_tree(&t, err) && sync_target(&t, err);
	if (!ok && !o->keep_on_error)
		clean_target(&t);
	if (t.fd >= 0)
		close(t.fd);
	return ok;
}
