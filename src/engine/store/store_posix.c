/*
 * store_posix.c
 *		The file-system driver of stores (store_driver.h): a store is a
 *		folder, held open by its descriptor, and every file in it is reached
 *		through that descriptor.
 *
 * The destination itself is opened as given (an administrator may make it
 * a link to a device); below it nothing is followed: folders are entered
 * with O_NOFOLLOW and files opened with it.  A folder made here is made
 * durable by an fsync of the folder that received its name, before anything
 * is put in it; a file put is written under a temporary name, fsynced and
 * renamed into place (the caller makes the name durable: sb_store_sync).
 */
#include <dirent.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "store/store_driver.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC)

SbStore *
sb_store_posix_new(const char *dest, const SbStoreOptions *o, SbError *err)
{
	SbStore    *s = sb_store_alloc(&sb_store_posix_driver, dest, o, err);

	if (s == NULL)
		return NULL;
	s->own_fd = true;
	if ((s->fd = open(dest, DIR_FLAGS)) >= 0)
		return s;
	if (errno == ENOENT)
		sb_error_set(err, SB_ENOTFOUND, "%s \"%s\" does not exist (is its device mounted?)", s->what, dest);
	else
		sb_error_set_errno(err, errno, "could not open %s \"%s\"", s->what, dest);
	sb_store_free(s);
	return NULL;
}

SbStore *
sb_store_new_fd(int fd, const char *path, SbError *err)
{
	SbStore    *s = sb_store_alloc(&sb_store_posix_driver, path, NULL, err);

	if (s != NULL)
		s->fd = fd;
	return s;
}

/*
 * Make NAME in AT if it is not there, and fsync AT when it was made (its
 * name must last).  If that fsync fails the folder is removed again, so
 * that the next try makes it, and syncs it, anew.
 */
static bool
make_folder(int at, const char *name, const char *path, SbError *err)
{
	if (mkdirat(at, name, 0700) != 0)
	{
		if (errno == EEXIST)
			return true;
		return sb_error_set_errno(err, errno, "could not create folder \"%s\"", path);
	}
	if (fsync(at) != 0)
	{
		sb_error_set_errno(err, errno, "could not fsync the folder holding \"%s\"", path);
		unlinkat(at, name, AT_REMOVEDIR);
		return false;
	}
	return true;
}

/* Is NAME in AT a symbolic link?  (O_DIRECTORY | O_NOFOLLOW says ENOTDIR of one, as of a file.) */
static bool
is_link(int at, const char *name)
{
	struct stat st;

	return fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

/* Open folder NAME of S without following a link into *FD; -1 when there is none. */
static bool
open_folder(SbStore *s, const char *name, const char *path, int *fd, SbError *err)
{
	char		link_note[128];

	*fd = openat(s->fd, name, DIR_FLAGS | O_NOFOLLOW);
	if (*fd >= 0 || errno == ENOENT)
		return true;
	if (errno == ELOOP || errno == ENOTDIR)
	{
		snprintf(link_note, sizeof(link_note), "a symbolic link; %s never follows one", s->owner);
		return sb_error_set(err, SB_EINVAL, "\"%s\" is %s", path,
							is_link(s->fd, name) ? link_note : "not a folder");
	}
	return sb_error_set_errno(err, errno, "could not open folder \"%s\"", path);
}

static bool
posix_enter(SbStore *s, const char *name, bool create, SbStore **sub, SbError *err)
{
	char		path[PATH_MAX];
	int			fd;

	if (snprintf(path, sizeof(path), "%s/%s", s->path, name) >= (int) sizeof(path))
		return sb_error_set(err, SB_EINVAL, "path too long: \"%s/%s\"", s->path, name);
	if (create && !make_folder(s->fd, name, path, err))
		return false;
	if (!open_folder(s, name, path, &fd, err))
		return false;
	if (fd < 0)
		return !create || sb_error_set(err, SB_EIO, "folder \"%s\" vanished as it was made", path);
	if ((*sub = sb_store_alloc_sub(s, path, err)) == NULL)
	{
		close(fd);
		return false;
	}
	(*sub)->fd = fd;
	(*sub)->own_fd = true;
	return true;
}

static bool
posix_list(SbStore *s, SbStoreEntryFn fn, void *arg, SbError *err)
{
	int			fd = dup(s->fd);
	DIR		   *dir;
	struct dirent *de;
	bool		ok = true;

	if ((dir = fd >= 0 ? fdopendir(fd) : NULL) == NULL)
	{
		sb_error_set_errno(err, errno, "could not list \"%s\"", s->path);
		if (fd >= 0)
			close(fd);
		return false;
	}
	rewinddir(dir);
	while (ok && (de = readdir(dir)) != NULL)
	{
		struct stat st;
		bool		regular;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		regular = fstatat(s->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
		ok = fn(arg, de->d_name, regular ? (int64_t) st.st_size : -1, err);
	}
	closedir(dir);
	return ok;
}

/* Every file below folder FD (REL its name relative to the store, "" at the top) to FN. */
static bool
list_tree(int fd, const char *path, char *rel, SbStoreEntryFn fn, void *arg, SbError *err)
{
	DIR		   *dir = fdopendir(fd);
	struct dirent *de;
	size_t		used = strlen(rel);
	bool		ok = true;

	if (dir == NULL)
	{
		close(fd);
		return sb_error_set_errno(err, errno, "could not list \"%s\"", path);
	}
	while (ok && (de = readdir(dir)) != NULL)
	{
		struct stat st;
		int			sub;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(rel + used, PATH_MAX - used, "%s%s", used ? "/" : "", de->d_name) >= (int) (PATH_MAX - used))
			ok = sb_error_set(err, SB_EINVAL, "path too long below \"%s\"", path);
		else if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			ok = sb_error_set_errno(err, errno, "could not stat \"%s/%s\"", path, rel);
		else if (!S_ISDIR(st.st_mode))
			ok = fn(arg, rel, S_ISREG(st.st_mode) ? (int64_t) st.st_size : -1, err);
		else if ((sub = openat(dirfd(dir), de->d_name, DIR_FLAGS | O_NOFOLLOW)) < 0)
			ok = sb_error_set_errno(err, errno, "could not open folder \"%s/%s\"", path, rel);
		else
			ok = list_tree(sub, path, rel, fn, arg, err);
		rel[used] = '\0';
	}
	closedir(dir);
	return ok;
}

static bool
posix_list_all(SbStore *s, SbStoreEntryFn fn, void *arg, SbError *err)
{
	char		rel[PATH_MAX] = "";
	int			fd = openat(s->fd, ".", DIR_FLAGS);

	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not list \"%s\"", s->path);
	return list_tree(fd, s->path, rel, fn, arg, err);
}

/* Say why PATH could not be opened (OPEN_ERRNO): absent, a link, or an error. */
static bool
open_failed(const char *path, int open_errno, SbError *err)
{
	if (open_errno == ENOENT)
		return sb_error_set(err, SB_ENOTFOUND, "\"%s\" does not exist", path);
	if (open_errno == ELOOP)
		return sb_error_set(err, SB_ECORRUPT, "\"%s\" is a symbolic link, never followed", path);
	return sb_error_set_errno(err, open_errno, "could not open \"%s\"", path);
}

static bool
posix_open_in(SbStore *s, const char *name, SbStoreFile *f, SbError *err)
{
	struct stat st;

	f->driver = &sb_store_posix_driver;
	/* Never through a link, never waiting on a FIFO. */
	f->fd = openat(s->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (f->fd < 0)
		return open_failed(f->path, errno, err);
	if (fstat(f->fd, &st) != 0)
		sb_error_set_errno(err, errno, "could not stat \"%s\"", f->path);
	else if (!S_ISREG(st.st_mode))
		sb_error_set(err, SB_ECORRUPT, "\"%s\" is not a regular file", f->path);
	else
	{
		f->size = (uint64_t) st.st_size;
		return true;
	}
	sb_store_close(f);
	return false;
}

/* Write DATA to the new file TEMP of S, fsynced. */
static bool
write_temp(SbStore *s, const char *temp, const char *path, const void *data, size_t len, SbError *err)
{
	int			fd = openat(s->fd, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool		ok;

	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not create \"%s\"", path);
	ok = sb_write_all(fd, data, len, path, err);
	if (ok && fsync(fd) != 0)
		ok = sb_error_set_errno(err, errno, "could not fsync \"%s\"", path);
	close(fd);
	return ok;
}

/* Rename TEMP of S to NAME, without replacing a NAME that is there unless REPLACE. */
static bool
rename_in(SbStore *s, const char *temp, const char *name, bool replace, SbError *err)
{
	if (!replace && renameat2(s->fd, temp, s->fd, name, RENAME_NOREPLACE) == 0)
		return true;
	if (!replace && errno == EEXIST)
		return sb_error_set(err, SB_EEXIST, "\"%s/%s\" appeared while it was being written", s->path, name);
	/* A file system without RENAME_NOREPLACE: a look first is what there is. */
	if (!replace && (errno == EINVAL || errno == ENOSYS) && faccessat(s->fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return sb_error_set(err, SB_EEXIST, "\"%s/%s\" appeared while it was being written", s->path, name);
	if ((replace || errno == EINVAL || errno == ENOSYS || errno == ENOENT) &&
		renameat(s->fd, temp, s->fd, name) == 0)
		return true;
	return sb_error_set_errno(err, errno, "could not rename \"%s/%s\" to \"%s\"", s->path, temp, name);
}

static bool
posix_put(SbStore *s, const char *name, const void *data, size_t len, bool replace, SbError *err)
{
	static uint32_t counter;
	char		temp[NAME_MAX + 1];
	char		path[PATH_MAX + NAME_MAX + 2];
	uint32_t	n = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);

	if (snprintf(temp, sizeof(temp), "%s.tmp.%ld.%u", name, (long) getpid(), n) >= (int) sizeof(temp))
		return sb_error_set(err, SB_EINVAL, "file name too long: \"%s\"", name);
	snprintf(path, sizeof(path), "%s/%s", s->path, temp);
	if (write_temp(s, temp, path, data, len, err) && rename_in(s, temp, name, replace, err))
		return true;
	unlinkat(s->fd, temp, 0);
	return false;
}

static bool
posix_stamp(SbStore *s, const char *name, SbStoreStamp *stamp)
{
	return fstatat(s->fd, name, &stamp->st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(stamp->st.st_mode);
}

static bool
posix_stamp_open(SbStore *s, const SbStoreFile *f, SbStoreStamp *stamp)
{
	return fstat(f->fd, &stamp->st) == 0;
}

static bool
posix_remove(SbStore *s, const char *name, const SbStoreStamp *expected, SbError *err)
{
	char		path[PATH_MAX + NAME_MAX + 2];
	struct stat now;

	snprintf(path, sizeof(path), "%s/%s", s->path, name);
	if (fstatat(s->fd, name, &now, AT_SYMLINK_NOFOLLOW) != 0)
		return sb_error_set_errno(err, errno, "could not stat \"%s\"", path);
	if (expected != NULL &&
		(now.st_dev != expected->st.st_dev || now.st_ino != expected->st.st_ino))
		return sb_error_set(err, SB_EIO, "\"%s\" was replaced while it was being removed", path);
	if (unlinkat(s->fd, name, 0) != 0)
		return sb_error_set_errno(err, errno, "could not remove \"%s\"", path);
	return true;
}

static bool
posix_sync(SbStore *s, SbError *err)
{
	if (fsync(s->fd) == 0)
		return true;
	return sb_error_set_errno(err, errno, "could not fsync folder \"%s\"", s->path);
}

static bool
posix_make(SbStore *s, const char *name, SbStore **sub, SbError *err)
{
	char		path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", s->path, name) >= (int) sizeof(path))
		return sb_error_set(err, SB_EINVAL, "path too long: \"%s/%s\"", s->path, name);
	if (mkdirat(s->fd, name, 0700) != 0)
	{
		if (errno == EEXIST)
			return sb_error_set(err, SB_EEXIST, "\"%s\" already exists", path);
		return sb_error_set_errno(err, errno, "could not create folder \"%s\"", path);
	}
	/* Entered without following a link: one swapped in for the new folder is refused. */
	if ((*sub = sb_store_alloc_sub(s, path, err)) == NULL)
		return false;
	(*sub)->own_fd = true;
	if (((*sub)->fd = openat(s->fd, name, DIR_FLAGS | O_NOFOLLOW)) >= 0)
		return true;
	sb_error_set_errno(err, errno, "could not open folder \"%s\"", path);
	sb_store_free(*sub);
	*sub = NULL;
	(void) unlinkat(s->fd, name, AT_REMOVEDIR);
	return false;
}

static void
posix_remove_folder(SbStore *s, const char *name)
{
	(void) unlinkat(s->fd, name, AT_REMOVEDIR);
}

static bool
posix_identity(SbStore *s, SbStoreStamp *stamp, SbError *err)
{
	if (fstat(s->fd, &stamp->st) == 0)
		return true;
	return sb_error_set_errno(err, errno, "could not stat %s \"%s\"", s->what, s->path);
}

static bool
posix_canonical(const char *dest, char resolved[PATH_MAX], SbError *err)
{
	if (realpath(dest, resolved) == NULL)
		return sb_error_set_errno(err, errno, "could not resolve destination \"%s\"", dest);
	return true;
}

/* ---------- files made front to back ---------- */

/* "could not VERB [what ]"PATH"" */
static bool
writer_failed(const SbStoreWriter *w, const char *verb, const char *path, SbError *err)
{
	return sb_error_set_errno(err, errno, "could not %s %s%s\"%s\"", verb, w->what, w->what[0] ? " " : "",
							  path);
}

static bool
posix_create(SbStoreWriter *w, const SbStoreCreate *how, SbError *err)
{
	char		temp_path[PATH_MAX + NAME_MAX + 2];

	if (w->temp[0] == '\0')
	{
		w->fd = openat(w->store->fd, w->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		return w->fd >= 0 || writer_failed(w, "create", w->path, err);
	}
	/* A temporary file left by a backup that failed before is written over. */
	w->fd = openat(w->store->fd, w->temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	snprintf(temp_path, sizeof(temp_path), "%s/%s", w->store->path, w->temp);
	return w->fd >= 0 || writer_failed(w, "create", temp_path, err);
}

/*
 * A file made under its own name is written at its end by pwrite (I/O
 * contexts write through its descriptor at offsets of their own); one made
 * under a temporary name, by nothing else, front to back.
 */
static bool
posix_append(SbStoreWriter *w, const void *buf, size_t len, SbError *err)
{
	if (w->temp[0] == '\0')
		return sb_pwrite_all(w->fd, buf, len, w->size, w->path, err);
	return sb_write_all(w->fd, buf, len, w->store->path, err);
}

static bool
posix_write_at(SbStoreWriter *w, const void *buf, size_t len, uint64_t offset, SbError *err)
{
	return sb_pwrite_all(w->fd, buf, len, offset, w->path, err);
}

static SbIo *
posix_writer_io(SbStoreWriter *w, SbIoMethod method, unsigned depth, SbError *err)
{
	return sb_io_new(method, depth, NULL, err);
}

static bool
posix_writer_sync(SbStoreWriter *w, SbError *err)
{
	char		temp_path[PATH_MAX + NAME_MAX + 2];

	if (fsync(w->fd) == 0)
		return true;
	if (w->temp[0] == '\0')
		return sb_error_set_errno(err, errno, "could not fsync \"%s\"", w->path);
	snprintf(temp_path, sizeof(temp_path), "%s/%s", w->store->path, w->temp);
	return sb_error_set_errno(err, errno, "could not fsync \"%s\"", temp_path);
}

static bool
posix_finish(SbStoreWriter *w, SbError *err)
{
	SbStore    *s = w->store;
	int			fd = w->fd;

	if (w->temp[0] == '\0')
	{
		if (!posix_writer_sync(w, err))
			return false;
		if (w->drop_cache)
			(void) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		return true;
	}
	if (!posix_writer_sync(w, err))
	{
		close(fd);
		w->fd = -1;
		return false;
	}
	close(fd);
	w->fd = -1;
	if (renameat(s->fd, w->temp, s->fd, w->name) != 0)
		return sb_error_set_errno(err, errno, "could not rename \"%s/%s\"", s->path, w->temp);
	w->temp[0] = '\0';			/* nothing left under it */
	if (fsync(s->fd) != 0)
		return sb_error_set_errno(err, errno, "could not fsync \"%s\"", s->path);
	return true;
}

static void
posix_abort(SbStoreWriter *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	(void) unlinkat(w->store->fd, w->temp[0] ? w->temp : w->name, 0);
	w->temp[0] = '\0';
}

static void
posix_writer_release(SbStoreWriter *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	/* A temporary name not renamed into place goes: it never was the file. */
	if (w->temp[0] != '\0' && !w->finished)
		(void) unlinkat(w->store->fd, w->temp, 0);
}

/* ---------- files read by path ---------- */

static bool
posix_file_open(SbStoreFile *f, SbError *err)
{
	struct stat st;

	f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
	{
		sb_error_set_errno(err, errno, "could not open \"%s\"", f->path);
		if (errno == ENOENT)
			err->code = SB_ENOTFOUND;
		return false;
	}
	if (fstat(f->fd, &st) != 0)
		return sb_error_set_errno(err, errno, "could not stat \"%s\"", f->path);
	f->size = (uint64_t) st.st_size;
	return true;
}

static ssize_t
posix_file_pread(SbStoreFile *f, void *buf, size_t len, uint64_t offset, SbError *err)
{
	return sb_pread_upto(f->fd, buf, len, offset, f->path, err);
}

static SbIo *
posix_file_io(SbStoreFile *f, SbIoMethod method, unsigned depth, SbError *err)
{
	(void) posix_fadvise(f->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return sb_io_new(method, depth, NULL, err);
}

static void
posix_file_close(SbStoreFile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

static char *
posix_read_small(const char *path, const SbS3Settings *s3, size_t max, size_t *len, SbError *err)
{
	return sb_read_small_file(path, max, len, err);
}

static bool
posix_file_size(const char *path, const SbS3Settings *s3, uint64_t *size, SbError *err)
{
	struct stat st;

	if (stat(path, &st) != 0)
	{
		sb_error_set_errno(err, errno, "could not stat \"%s\"", path);
		if (err->sys_errno == ENOENT)
			err->code = SB_ENOTFOUND;
		return false;
	}
	if (!S_ISREG(st.st_mode))
		return sb_error_set(err, SB_ENOTFOUND, "\"%s\" is not a file", path);
	*size = (uint64_t) st.st_size;
	return true;
}

static bool
posix_is_folder(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void
posix_release(SbStore *s)
{
	if (s->own_fd && s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

const SbStoreDriver sb_store_posix_driver = {
	.name = "posix",
	.features = SB_STORE_DURABLE_RENAME | SB_STORE_INODE_IDENTITY | SB_STORE_SPARSE |
	SB_STORE_PAGE_CACHE | SB_STORE_DESCRIPTORS,
	.enter = posix_enter,
	.list = posix_list,
	.list_all = posix_list_all,
	.open_in = posix_open_in,
	.put = posix_put,
	.stamp = posix_stamp,
	.stamp_open = posix_stamp_open,
	.remove = posix_remove,
	.sync = posix_sync,
	.make = posix_make,
	.remove_folder = posix_remove_folder,
	.identity = posix_identity,
	.canonical = posix_canonical,
	.create = posix_create,
	.append = posix_append,
	.write_at = posix_write_at,
	.writer_io = posix_writer_io,
	.writer_sync = posix_writer_sync,
	.finish = posix_finish,
	.abort = posix_abort,
	.writer_release = posix_writer_release,
	.release = posix_release,
	.file_open = posix_file_open,
	.file_pread = posix_file_pread,
	.file_io = posix_file_io,
	.file_close = posix_file_close,
	.read_small = posix_read_small,
	.file_size = posix_file_size,
	.is_folder = posix_is_folder,
};
