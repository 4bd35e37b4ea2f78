/*
 * wal_dest.c
 *		The folders of a WAL archive in one destination, DEST/wal/<sysid>/,
 *		and the names of the files in them; a bucket's (wal_bucket.c) are
 *		reached through the same calls.
 *
 * The destination itself is opened as given (an administrator may make it
 * a link to a device); below it nothing is followed: "wal" and the system
 * identifier's folder are opened with O_NOFOLLOW, and every file through
 * the folder's descriptor.  A folder made here is made durable by an fsync
 * of the folder that received its name, before anything is put in it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wal_internal.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC)

void
sb_wal_sysid_text(uint64_t sysid, char out[21])
{
	snprintf(out, 21, "%" PRIu64, sysid);
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

/* Open folder NAME of AT without following a link; *ABSENT when there is none. */
static bool
open_folder(int at, const char *name, const char *path, int *fd, bool *absent, SbError *err)
{
	*absent = false;
	*fd = openat(at, name, DIR_FLAGS | O_NOFOLLOW);
	if (*fd >= 0)
		return true;
	if (errno == ENOENT)
	{
		*absent = true;
		return true;
	}
	if (errno == ELOOP || errno == ENOTDIR)
		return sb_error_set(err, SB_EINVAL, "\"%s\" is %s", path,
							is_link(at, name) ? "a symbolic link; the WAL archive never follows one" :
							"not a folder");
	return sb_error_set_errno(err, errno, "could not open folder \"%s\"", path);
}

/* One level below AT: NAME, made first with CREATE; *FD stays -1 when absent. */
static bool
step_into(int at, const char *name, bool create, char *path, int *fd, SbError *err)
{
	size_t		used = strlen(path);
	bool		absent;

	if (snprintf(path + used, PATH_MAX - used, "/%s", name) >= (int) (PATH_MAX - used))
		return sb_error_set(err, SB_EINVAL, "path too long: \"%s/%s\"", path, name);
	if (create && !make_folder(at, name, path, err))
		return false;
	if (!open_folder(at, name, path, fd, &absent, err))
		return false;
	if (absent && create)
		return sb_error_set(err, SB_EIO, "folder \"%s\" vanished as it was made", path);
	return true;
}

/* The destination, as given; SB_ENOTFOUND when it is not there (an unmounted device?). */
static bool
open_destination(const char *dest, int *fd, SbError *err)
{
	*fd = open(dest, DIR_FLAGS);
	if (*fd >= 0)
		return true;
	if (errno == ENOENT)
		return sb_error_set(err, SB_ENOTFOUND,
							"WAL archive destination \"%s\" does not exist (is its device mounted?)", dest);
	return sb_error_set_errno(err, errno, "could not open WAL archive destination \"%s\"", dest);
}

/* DEST/wal/<SYSID>, made first with CREATE; *FD -1 when absent. */
static bool
open_archive_folder(const char *dest, uint64_t sysid, bool create, int *fd, char *path, SbError *err)
{
	char		sysid_text[21];
	int			dest_fd,
				wal_fd = -1;
	bool		ok;

	*fd = -1;
	if (snprintf(path, PATH_MAX, "%s", dest) >= PATH_MAX)
		return sb_error_set(err, SB_EINVAL, "destination path too long: \"%s\"", dest);
	if (!open_destination(dest, &dest_fd, err))
		return false;
	sb_wal_sysid_text(sysid, sysid_text);
	ok = step_into(dest_fd, SB_WAL_FOLDER, create, path, &wal_fd, err);
	if (ok && wal_fd >= 0)
		ok = step_into(wal_fd, sysid_text, create, path, fd, err);
	if (wal_fd >= 0)
		close(wal_fd);
	close(dest_fd);
	return ok;
}

bool
sb_wal_folder_open(const char *dest, uint64_t sysid, bool create, SbWalFolder *f, SbError *err)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (sb_s3_is_location(dest))
		return sb_wal_bucket_open(dest, sysid, f, err);
	if (!open_archive_folder(dest, sysid, create, &f->fd, f->path, err))
		return false;
	f->absent = f->fd < 0;
	return true;
}

void
sb_wal_folder_close(SbWalFolder *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

void
sb_wal_folder_local(SbWalFolder *f, int fd, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->absent = fd < 0;
	snprintf(f->path, sizeof(f->path), "%s", path);
}

bool
sb_wal_folder_sync(SbWalFolder *f, SbError *err)
{
	if (f->bucket || fsync(f->fd) == 0)
		return true;
	return sb_error_set_errno(err, errno, "could not fsync folder \"%s\"", f->path);
}

bool
sb_wal_folder_list(SbWalFolder *f, SbWalEntryFn fn, void *arg, SbError *err)
{
	int			fd;
	DIR		   *dir;
	struct dirent *de;
	bool		ok = true;

	if (f->bucket)
		return sb_wal_bucket_list(f, fn, arg, err);
	fd = dup(f->fd);
	if ((dir = fd >= 0 ? fdopendir(fd) : NULL) == NULL)
	{
		sb_error_set_errno(err, errno, "could not list \"%s\"", f->path);
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
		regular = fstatat(f->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
		ok = fn(arg, de->d_name, regular ? (int64_t) st.st_size : -1, err);
	}
	closedir(dir);
	return ok;
}

/* Say why FILE of F could not be opened (ERRNO): absent, a link, or an error. */
static bool
open_failed(const char *path, int open_errno, SbError *err)
{
	if (open_errno == ENOENT)
		return sb_error_set(err, SB_ENOTFOUND, "\"%s\" does not exist", path);
	if (open_errno == ELOOP)
		return sb_error_set(err, SB_ECORRUPT, "\"%s\" is a symbolic link, never followed", path);
	return sb_error_set_errno(err, open_errno, "could not open \"%s\"", path);
}

bool
sb_wal_folder_open_file(SbWalFolder *f, const char *file, SbWalFileIn *in, SbError *err)
{
	struct stat st;

	memset(in, 0, sizeof(*in));
	in->store.fd = -1;
	in->store.path = in->path;
	snprintf(in->path, sizeof(in->path), "%s/%s", f->path, file);
	if (f->bucket)
		return sb_wal_bucket_open_file(f, file, in, err);
	/* Never through a link, never waiting on a FIFO. */
	in->store.fd = openat(f->fd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in->store.fd < 0)
		return open_failed(in->path, errno, err);
	if (fstat(in->store.fd, &st) != 0)
		sb_error_set_errno(err, errno, "could not stat \"%s\"", in->path);
	else if (!S_ISREG(st.st_mode))
		sb_error_set(err, SB_ECORRUPT, "\"%s\" is not a regular file", in->path);
	else
	{
		in->store.size = (uint64_t) st.st_size;
		return true;
	}
	sb_wal_file_in_close(in);
	return false;
}

void
sb_wal_file_in_close(SbWalFileIn *in)
{
	sb_store_close(&in->store);
}

bool
sb_wal_folder_stamp(SbWalFolder *f, const char *file, SbWalStamp *stamp)
{
	memset(stamp, 0, sizeof(*stamp));
	if (f->bucket)
		return sb_wal_bucket_stamp(f, file, stamp);
	return fstatat(f->fd, file, &stamp->st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(stamp->st.st_mode);
}

bool
sb_wal_stamps_equal(const SbWalStamp *a, const SbWalStamp *b)
{
	const struct stat *x = &a->st,
			   *y = &b->st;

	return x->st_dev == y->st_dev && x->st_ino == y->st_ino && x->st_size == y->st_size &&
		x->st_ctim.tv_sec == y->st_ctim.tv_sec && x->st_ctim.tv_nsec == y->st_ctim.tv_nsec &&
		x->st_mtim.tv_sec == y->st_mtim.tv_sec && x->st_mtim.tv_nsec == y->st_mtim.tv_nsec &&
		strcmp(a->etag, b->etag) == 0;
}

bool
sb_wal_folder_remove(SbWalFolder *f, const char *file, const SbWalStamp *expected, SbError *err)
{
	char		path[SB_WAL_PATH_MAX];
	struct stat now;

	if (f->bucket)
		return sb_wal_bucket_remove(f, file, err);
	snprintf(path, sizeof(path), "%s/%s", f->path, file);
	if (fstatat(f->fd, file, &now, AT_SYMLINK_NOFOLLOW) != 0)
		return sb_error_set_errno(err, errno, "could not stat \"%s\"", path);
	if (expected != NULL &&
		(now.st_dev != expected->st.st_dev || now.st_ino != expected->st.st_ino))
		return sb_error_set(err, SB_EIO, "\"%s\" was replaced while it was being removed", path);
	if (unlinkat(f->fd, file, 0) != 0)
		return sb_error_set_errno(err, errno, "could not remove \"%s\"", path);
	return true;
}

void
sb_wal_file_name(const char *name, char *out)
{
	snprintf(out, SB_WAL_FILE_NAME_MAX, "%s" SB_WAL_SUFFIX, name);
}

/* Is TAIL the rest of a temporary file's name after "<name>.sbw": ".tmp.<pid>.<n>"? */
static bool
is_temp_tail(const char *tail)
{
	size_t		pid_digits;

	if (strncmp(tail, SB_WAL_TEMP_INFIX, strlen(SB_WAL_TEMP_INFIX)) != 0)
		return false;
	tail += strlen(SB_WAL_TEMP_INFIX);
	pid_digits = strspn(tail, "0123456789");
	if (pid_digits == 0 || tail[pid_digits] != '.')
		return false;
	tail += pid_digits + 1;
	return tail[0] != '\0' && strspn(tail, "0123456789") == strlen(tail);
}

bool
sb_wal_parse_file_name(const char *entry, char name[SB_WAL_NAME_MAX + 1], SbWalName *parsed,
					   bool *temp)
{
	const char *suffix = strstr(entry, SB_WAL_SUFFIX);
	size_t		len = suffix ? (size_t) (suffix - entry) : 0;
	SbError		ignored;

	if (suffix == NULL || len == 0 || len > SB_WAL_NAME_MAX)
		return false;
	memcpy(name, entry, len);
	name[len] = '\0';
	if (!sb_wal_name_parse(name, parsed, &ignored))
		return false;
	suffix += strlen(SB_WAL_SUFFIX);
	*temp = suffix[0] != '\0';
	return !*temp || is_temp_tail(suffix);
}

bool
sb_wal_check_dests(const SbWalDests *dests, SbError *err)
{
	uint32_t	i;

	if (dests->count == 0 || dests->count > SB_MAX_STRIPES)
		return sb_error_set(err, SB_EINVAL, "%u WAL archive destinations given; between 1 and %d are allowed",
							dests->count, SB_MAX_STRIPES);
	for (i = 0; i < dests->count; i++)
		if (dests->paths[i] == NULL || dests->paths[i][0] == '\0')
			return sb_error_set(err, SB_EINVAL, "WAL archive destination %u is an empty path", i + 1);
	return true;
}
