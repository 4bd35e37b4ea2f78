/*
 * fsutil.c
 *		File-system helpers: every failure becomes an SbError naming the path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/fsutil.h"

void *
sb_alloc(size_t size, SbError *err)
{
	void	   *p = calloc(1, size ? size : 1);

	if (p == NULL)
		sb_error_set(err, SB_ENOMEM, "out of memory (allocating %zu bytes)", size);
	return p;
}

char *
sb_strdup(const char *s, SbError *err)
{
	char	   *p = strdup(s);

	if (p == NULL)
		sb_error_set(err, SB_ENOMEM, "out of memory");
	return p;
}

bool
sb_grow(void **items, size_t *cap, size_t count, size_t elem_size, SbError *err)
{
	size_t		new_cap;
	void	   *grown;

	if (count < *cap)
		return true;
	new_cap = *cap ? *cap * 2 : 16;
	grown = realloc(*items, new_cap * elem_size);
	if (grown == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory (growing a list to %zu items)", new_cap);
	*items = grown;
	*cap = new_cap;
	return true;
}

char *
sb_path_join(const char *a, const char *b, SbError *err)
{
	size_t		len = strlen(a) + strlen(b) + 2;
	char	   *p = sb_alloc(len, err);

	if (p != NULL)
		snprintf(p, len, "%s/%s", a, b);
	return p;
}

bool
sb_write_all(int fd, const void *buf, size_t len, const char *what, SbError *err)
{
	const char *p = buf;

	while (len > 0)
	{
		ssize_t		n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sb_error_set_errno(err, errno, "could not write \"%s\"", what);
		if (n == 0)
			return sb_error_set(err, SB_EIO, "could not write \"%s\": no progress", what);
		p += n;
		len -= (size_t) n;
	}
	return true;
}

bool
sb_pwrite_all(int fd, const void *buf, size_t len, uint64_t offset,
			  const char *what, SbError *err)
{
	const char *p = buf;

	while (len > 0)
	{
		ssize_t		n = pwrite(fd, p, len, (off_t) offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sb_error_set_errno(err, errno,
									  "could not write \"%s\" at offset %llu", what,
									  (unsigned long long) offset);
		if (n == 0)
			return sb_error_set(err, SB_EIO, "could not write \"%s\": no progress", what);
		p += n;
		len -= (size_t) n;
		offset += (uint64_t) n;
	}
	return true;
}

ssize_t
sb_pread_upto(int fd, void *buf, size_t len, uint64_t offset,
			  const char *what, SbError *err)
{
	char	   *p = buf;
	size_t		done = 0;

	while (done < len)
	{
		ssize_t		n = pread(fd, p + done, len - done, (off_t) (offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
		{
			sb_error_set_errno(err, errno, "could not read \"%s\" at offset %llu",
							   what, (unsigned long long) (offset + done));
			return -1;
		}
		if (n == 0)
			break;
		done += (size_t) n;
	}
	return (ssize_t) done;
}

bool
sb_fsync_path(const char *path, bool is_dir, SbError *err)
{
	int			fd = open(path, (is_dir ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC);

	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not open \"%s\" to sync it", path);
	if (fsync(fd) != 0)
	{
		int			save = errno;

		close(fd);
		return sb_error_set_errno(err, save, "could not fsync \"%s\"", path);
	}
	close(fd);
	return true;
}

/* Create TMP_NAME in DIRFD (not through a link), write BYTES, fsync, close. */
static bool
write_synced_at(int dirfd, const char *where, const char *tmp_name, const void *bytes,
				size_t len, SbError *err)
{
	char		path[4096];
	int			fd;
	bool		ok;

	snprintf(path, sizeof(path), "%s/%s", where, tmp_name);
	fd = openat(dirfd, tmp_name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not create \"%s\"", path);
	ok = sb_write_all(fd, bytes, len, path, err);
	if (ok && fsync(fd) != 0)
		ok = sb_error_set_errno(err, errno, "could not fsync \"%s\"", path);
	close(fd);
	return ok;
}

bool
sb_replace_file_at(int dirfd, const char *where, const char *name, const char *tmp_name,
				   const void *bytes, size_t len, SbError *err)
{
	bool		ok = write_synced_at(dirfd, where, tmp_name, bytes, len, err);

	if (ok && renameat(dirfd, tmp_name, dirfd, name) != 0)
		ok = sb_error_set_errno(err, errno, "could not rename \"%s/%s\"", where, tmp_name);
	if (!ok)
	{
		unlinkat(dirfd, tmp_name, 0);
		return false;
	}
	if (fsync(dirfd) != 0)
		return sb_error_set_errno(err, errno, "could not fsync \"%s\"", where);
	return true;
}

char *
sb_read_small_file(const char *path, size_t max, size_t *len, SbError *err)
{
	int			fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char	   *buf;
	ssize_t		n;

	if (fd < 0)
	{
		sb_error_set_errno(err, errno, "could not open \"%s\"", path);
		if (errno == ENOENT)
			err->code = SB_ENOTFOUND;
		return NULL;
	}
	if (fstat(fd, &st) != 0 || (size_t) st.st_size > max)
	{
		close(fd);
		sb_error_set(err, SB_EINVAL, "\"%s\" is larger than %zu bytes", path, max);
		return NULL;
	}
	buf = sb_alloc((size_t) st.st_size + 1, err);
	n = buf ? sb_pread_upto(fd, buf, (size_t) st.st_size, 0, path, err) : -1;
	close(fd);
	if (n < 0)
	{
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = (size_t) n;
	return buf;
}

int
sb_open_beneath(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how;
	long		fd;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t) (flags | O_CLOEXEC | O_NOFOLLOW);
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS)
		return (int) fd;
	/* Kernels before 5.6: the last component at least is never followed. */
	return openat(dirfd, path, flags | O_CLOEXEC | O_NOFOLLOW, mode);
}

/* Make one directory beneath DIRFD, accepting an existing real directory. */
static bool
make_dir_beneath(int dirfd, const char *path, SbError *err)
{
	struct stat st;

	if (mkdirat(dirfd, path, 0700) == 0)
		return true;
	if (errno != EEXIST)
		return sb_error_set_errno(err, errno, "could not create directory \"%s\"", path);
	if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return sb_error_set_errno(err, errno, "could not stat \"%s\"", path);
	if (!S_ISDIR(st.st_mode))
		return sb_error_set(err, SB_EINVAL, "\"%s\" exists and is not a directory", path);
	return true;
}

/* PATH's parent into BUF (PATH_MAX): PATH with its trailing slashes and last part cut; false at "/". */
static bool
cut_last_part(char *buf)
{
	char	   *slash;
	size_t		len = strlen(buf);

	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	slash = strrchr(buf, '/');
	if (slash == NULL || slash == buf)
		return false;
	*slash = '\0';
	return true;
}

bool
sb_make_parents(const char *path, const char *what, uint32_t *made, SbError *err)
{
	char		buf[PATH_MAX];
	char	   *slash;
	struct stat st;

	*made = 0;
	if (strlen(path) >= sizeof(buf))
		return sb_error_set(err, SB_EINVAL, "path too long: \"%s\"", path);
	strcpy(buf, path);
	if (!cut_last_part(buf))
		return true;
	for (slash = strchr(buf + 1, '/');; slash = strchr(slash + 1, '/'))
	{
		if (slash != NULL)
			*slash = '\0';
		if (mkdir(buf, 0700) == 0)
			(*made)++;
		else if (errno != EEXIST)
			return sb_error_set_errno(err, errno, "could not create \"%s\", a parent of %s \"%s\"",
									  buf, what, path);
		else if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
			return sb_error_set(err, SB_EINVAL, "\"%s\", a parent of %s \"%s\", is not a directory",
								buf, what, path);
		if (slash == NULL)
			return true;
		*slash = '/';
	}
}

void
sb_remove_made_parents(const char *path, uint32_t made)
{
	char		buf[PATH_MAX];
	uint32_t	i;

	if (strlen(path) >= sizeof(buf))
		return;
	strcpy(buf, path);
	for (i = 0; i < made && cut_last_part(buf); i++)
		if (rmdir(buf) != 0)
			return;
}

bool
sb_make_parents_beneath(int dirfd, const char *path, SbError *err)
{
	char		buf[4096];
	char	   *slash;

	if (strlen(path) >= sizeof(buf))
		return sb_error_set(err, SB_EINVAL, "path too long: \"%s\"", path);
	strcpy(buf, path);
	for (slash = strchr(buf, '/'); slash != NULL; slash = strchr(slash + 1, '/'))
	{
		*slash = '\0';
		if (!make_dir_beneath(dirfd, buf, err))
			return false;
		*slash = '/';
	}
	return true;
}

bool
sb_dir_is_empty(const char *path, bool *exists, bool *empty, SbError *err)
{
	DIR		   *dir = opendir(path);
	struct dirent *de;

	*exists = false;
	*empty = false;
	if (dir == NULL)
	{
		if (errno == ENOENT)
			return true;
		return sb_error_set_errno(err, errno, "could not open directory \"%s\"", path);
	}
	*exists = true;
	*empty = true;
	while ((de = readdir(dir)) != NULL)
	{
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
		{
			*empty = false;
			break;
		}
	}
	closedir(dir);
	return true;
}

/* Remove the entries of the open directory DIRFD, recursively; closes DIRFD. */
static bool
remove_dir_entries(int dirfd, const char *path, SbError *err)
{
	DIR		   *dir = fdopendir(dirfd);
	struct dirent *de;
	bool		ok = true;

	if (dir == NULL)
	{
		close(dirfd);
		return sb_error_set_errno(err, errno, "could not open directory \"%s\"", path);
	}
	while (ok && (de = readdir(dir)) != NULL)
	{
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			ok = sb_error_set_errno(err, errno, "could not stat \"%s/%s\"", path, de->d_name);
		else if (S_ISDIR(st.st_mode))
		{
			int			sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub < 0)
				ok = sb_error_set_errno(err, errno, "could not open \"%s/%s\"", path, de->d_name);
			else
				ok = remove_dir_entries(sub, path, err);
			if (ok && unlinkat(dirfd, de->d_name, AT_REMOVEDIR) != 0)
				ok = sb_error_set_errno(err, errno, "could not remove \"%s/%s\"", path, de->d_name);
		}
		else if (unlinkat(dirfd, de->d_name, 0) != 0)
			ok = sb_error_set_errno(err, errno, "could not remove \"%s/%s\"", path, de->d_name);
	}
	closedir(dir);
	return ok;
}

bool
sb_remove_contents(const char *path, SbError *err)
{
	int			fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not open directory \"%s\"", path);
	return remove_dir_entries(fd, path, err);
}

void
sb_now_iso8601(char *buf, size_t len)
{
	time_t		now = time(NULL);
	struct tm	tm;

	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

double
sb_monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int
sb_compare_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

int
sb_current_umask(void)
{
	FILE	   *f = fopen("/proc/self/status", "re");
	char		line[256];
	int			mask = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
	{
		unsigned int value;

		if (sscanf(line, "Umask: %o", &value) == 1 && value <= 0777)
		{
			mask = (int) value;
			break;
		}
	}
	fclose(f);
	return mask;
}

int
sb_open_unlinked(const char *dir, const char *what, SbError *err)
{
	char		path[PATH_MAX];
	int			fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR))
	{
		if (fd < 0)
			sb_error_set_errno(err, errno, "could not make a file for %s in \"%s\"", what, dir);
		return fd;
	}
	snprintf(path, sizeof(path), "%s/.stripebackup-entries-XXXXXX", dir);
	if ((fd = mkostemp(path, O_CLOEXEC)) < 0)
		sb_error_set_errno(err, errno, "could not make a file for %s in \"%s\"", what, dir);
	else
		(void) unlink(path);
	return fd;
}
