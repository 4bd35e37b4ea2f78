/*
 * syscall_log.c
 *		The wrappers behind syscall_log.h: each logs its call and may fail
 *		it, then calls the real function.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "syscall_log.h"

extern int	__real_fsync(int fd);
extern int	__real_rename(const char *from, const char *to);
extern int	__real_renameat(int fromfd, const char *from, int tofd, const char *to);
extern int	__real_renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags);
extern int	__real_syncfs(int fd);
extern ssize_t __real_pwrite(int fd, const void *buf, size_t len, off_t offset);
extern int	__real_sync_file_range(int fd, off_t offset, off_t len, unsigned int flags);
extern int	__wrap_fsync(int fd);
extern ssize_t __wrap_pwrite(int fd, const void *buf, size_t len, off_t offset);
extern int	__wrap_rename(const char *from, const char *to);
extern int	__wrap_renameat(int fromfd, const char *from, int tofd, const char *to);
extern int	__wrap_renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags);
extern int	__wrap_syncfs(int fd);
extern int	__wrap_sync_file_range(int fd, off_t offset, off_t len, unsigned int flags);

#define MAX_EVENTS 512

typedef struct SyncEvent
{
	char		op[8];			/* "fsync", "rename", "syncfs", "trailer" (its pwrite)
								 * "startwb" or "waitwb" (sync_file_range, starting a
								 * write-out or waiting for it) */
	char		path[PATH_MAX]; /* the file synced, or the name renamed to */
} SyncEvent;

static pthread_mutex_t log_mutex = PTHREAD_MUTEX_INITIALIZER;
static SyncEvent events[MAX_EVENTS];
static int	nevents;
static bool logging;
static const char *fail_op;		/* fail an OP whose path matches */
static const char *fail_pattern;
static int	fail_skip;			/* after letting this many such calls pass */
static int	fail_errno;
static bool failed;

/* PATTERN "*text": PATH contains text; otherwise PATH ends with PATTERN. */
static bool
matches(const char *path, const char *pattern)
{
	size_t		n = strlen(path);
	size_t		m = strlen(pattern);

	if (pattern[0] == '*')
		return strstr(path, pattern + 1) != NULL;
	return n >= m && strcmp(path + n - m, pattern) == 0;
}

/* Log OP on PATH; true when the call must fail instead. */
static bool
log_event(const char *op, const char *path)
{
	bool		fail = false;

	pthread_mutex_lock(&log_mutex);
	if (logging && nevents < MAX_EVENTS && strcmp(op, "pwrite") != 0)
	{
		snprintf(events[nevents].op, sizeof(events[nevents].op), "%s", op);
		snprintf(events[nevents].path, sizeof(events[nevents].path), "%s", path);
		nevents++;
	}
	if (fail_op != NULL && strcmp(op, fail_op) == 0 && matches(path, fail_pattern) &&
		fail_skip-- == 0)
	{
		fail = true;
		failed = true;
		fail_op = NULL;
	}
	pthread_mutex_unlock(&log_mutex);
	return fail;
}

/* The path behind descriptor FD, as /proc shows it. */
static void
fd_path(int fd, char *path, size_t size)
{
	char		link[64];
	ssize_t		len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, size - 1);
	path[len > 0 ? len : 0] = '\0';
}

static bool
log_fd_event(const char *op, int fd)
{
	char		path[PATH_MAX];

	fd_path(fd, path, sizeof(path));
	return log_event(op, path);
}

int
__wrap_fsync(int fd)
{
	if (log_fd_event("fsync", fd))
		return errno = fail_errno, -1;
	return __real_fsync(fd);
}

/* Is a pwrite to be failed?  Only then is its path looked up: backups write a lot. */
static bool
pwrite_armed(void)
{
	bool		armed;

	pthread_mutex_lock(&log_mutex);
	armed = fail_op != NULL && strcmp(fail_op, "pwrite") == 0;
	pthread_mutex_unlock(&log_mutex);
	return armed;
}

/* The writes of stripe trailers are logged: 128 bytes starting "SBTRAILR". */
ssize_t
__wrap_pwrite(int fd, const void *buf, size_t len, off_t offset)
{
	if (len == SB_TRAILER_SIZE && memcmp(buf, SB_TRAILER_MAGIC, 8) == 0 &&
		log_fd_event("trailer", fd))
		return errno = fail_errno, -1;
	if (pwrite_armed() && log_fd_event("pwrite", fd))
		return errno = fail_errno, -1;
	return __real_pwrite(fd, buf, len, offset);
}

int
__wrap_syncfs(int fd)
{
	if (log_fd_event("syncfs", fd))
		return errno = fail_errno, -1;
	return __real_syncfs(fd);
}

/* Looked up only while logging: restores start a write-out for every chunk. */
int
__wrap_sync_file_range(int fd, off_t offset, off_t len, unsigned int flags)
{
	if (th_log_active() &&
		log_fd_event((flags & SYNC_FILE_RANGE_WAIT_AFTER) ? "waitwb" : "startwb", fd))
		return errno = fail_errno, -1;
	return __real_sync_file_range(fd, offset, len, flags);
}

int
__wrap_rename(const char *from, const char *to)
{
	if (log_event("rename", to))
		return errno = fail_errno, -1;
	return __real_rename(from, to);
}

/* TO's full path in TOFD's folder. */
static void
full_path(int tofd, const char *to, char *full, size_t size)
{
	char		path[PATH_MAX];

	fd_path(tofd, path, sizeof(path));
	snprintf(full, size, "%s/%s", path, to);
}

/* Logged as a rename to the full path of TO. */
int
__wrap_renameat(int fromfd, const char *from, int tofd, const char *to)
{
	char		full[PATH_MAX * 2];

	full_path(tofd, to, full, sizeof(full));
	if (log_event("rename", full))
		return errno = fail_errno, -1;
	return __real_renameat(fromfd, from, tofd, to);
}

int
__wrap_renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags)
{
	char		full[PATH_MAX * 2];

	full_path(tofd, to, full, sizeof(full));
	if (log_event("rename", full))
		return errno = fail_errno, -1;
	return __real_renameat2(fromfd, from, tofd, to, flags);
}

void
th_log_start_errno(const char *op, const char *pattern, int skip, int errnum)
{
	pthread_mutex_lock(&log_mutex);
	nevents = 0;
	logging = true;
	fail_op = op;
	fail_pattern = pattern;
	fail_skip = skip;
	fail_errno = errnum;
	failed = false;
	pthread_mutex_unlock(&log_mutex);
}

bool
th_log_active(void)
{
	return logging;
}

void
th_log_start(const char *op, const char *pattern, int skip)
{
	th_log_start_errno(op, pattern, skip, EIO);
}

void
th_log_stop(void)
{
	pthread_mutex_lock(&log_mutex);
	logging = false;
	fail_op = NULL;
	pthread_mutex_unlock(&log_mutex);
}

bool
th_log_failed(void)
{
	return failed;
}

/* The first or last OP whose path's first COMPARE_LEN bytes are PATH's (with its NUL: all of it). */
static int
find_matching(const char *op, const char *path, size_t compare_len, bool last)
{
	int			found = -1;
	int			i;

	for (i = 0; i < nevents; i++)
		if (strcmp(events[i].op, op) == 0 && strncmp(events[i].path, path, compare_len) == 0)
		{
			found = i;
			if (!last)
				break;
		}
	return found;
}

int
th_log_find(const char *op, const char *path, bool last)
{
	return find_matching(op, path, strlen(path) + 1, last);
}

int
th_log_find_prefix(const char *op, const char *prefix, bool last)
{
	return find_matching(op, prefix, strlen(prefix), last);
}

int
th_log_count(const char *op)
{
	int			n = 0;
	int			i;

	for (i = 0; i < nevents; i++)
		n += strcmp(events[i].op, op) == 0;
	return n;
}

void
th_log_diag(void)
{
	int			i;

	for (i = 0; i < nevents; i++)
		diag("%3d %-7s %s", i, events[i].op, events[i].path);
}
