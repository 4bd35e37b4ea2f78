/*
 * test_durability.c
 *		A backup is complete only once every stripe, every manifest copy and
 *		the folders that hold them are synced, and the manifest appears
 *		atomically; a restore ends with its file systems synced.  And when a
 *		sync fails, the backup or restore fails, leaving no manifest behind.
 *
 * The unit test binary is linked with --wrap for fsync, rename, renameat,
 * syncfs and pwrite (Makefile): every call the engine makes goes through the
 * wrappers below, which log it (with the path behind the descriptor; of
 * pwrite only the writes of stripe trailers) and can make a chosen one fail
 * with EIO, as a dying disk would.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "tests.h"

extern int	__real_fsync(int fd);
extern int	__real_rename(const char *from, const char *to);
extern int	__real_renameat(int fromfd, const char *from, int tofd, const char *to);
extern int	__real_syncfs(int fd);
extern ssize_t __real_pwrite(int fd, const void *buf, size_t len, off_t offset);
extern int	__wrap_fsync(int fd);
extern ssize_t __wrap_pwrite(int fd, const void *buf, size_t len, off_t offset);
extern int	__wrap_rename(const char *from, const char *to);
extern int	__wrap_renameat(int fromfd, const char *from, int tofd, const char *to);
extern int	__wrap_syncfs(int fd);

#define MAX_EVENTS 256

typedef struct SyncEvent
{
	char		op[8];			/* "fsync", "rename", "syncfs" or "trailer" (its pwrite) */
	char		path[PATH_MAX]; /* the file synced, or the name renamed to */
} SyncEvent;

static pthread_mutex_t log_mutex = PTHREAD_MUTEX_INITIALIZER;
static SyncEvent events[MAX_EVENTS];
static int	nevents;
static bool logging;
static const char *fail_op;		/* fail an OP whose path ends so */
static const char *fail_suffix;
static int	fail_skip;			/* after letting this many such calls pass */

static bool
ends_with(const char *s, const char *suffix)
{
	size_t		n = strlen(s);
	size_t		m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Log OP on PATH; true when the call must fail instead. */
static bool
log_event(const char *op, const char *path)
{
	bool		fail = false;

	pthread_mutex_lock(&log_mutex);
	if (logging && nevents < MAX_EVENTS)
	{
		snprintf(events[nevents].op, sizeof(events[nevents].op), "%s", op);
		snprintf(events[nevents].path, sizeof(events[nevents].path), "%s", path);
		nevents++;
	}
	if (fail_op != NULL && strcmp(op, fail_op) == 0 && ends_with(path, fail_suffix) &&
		fail_skip-- == 0)
	{
		fail = true;
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
		return errno = EIO, -1;
	return __real_fsync(fd);
}

/* Only the writes of stripe trailers are logged: 128 bytes starting "SBTRAILR". */
ssize_t
__wrap_pwrite(int fd, const void *buf, size_t len, off_t offset)
{
	if (len == SB_TRAILER_SIZE && memcmp(buf, SB_TRAILER_MAGIC, 8) == 0 &&
		log_fd_event("trailer", fd))
		return errno = EIO, -1;
	return __real_pwrite(fd, buf, len, offset);
}

int
__wrap_syncfs(int fd)
{
	if (log_fd_event("syncfs", fd))
		return errno = EIO, -1;
	return __real_syncfs(fd);
}

int
__wrap_rename(const char *from, const char *to)
{
	if (log_event("rename", to))
		return errno = EIO, -1;
	return __real_rename(from, to);
}

/* Logged as a rename to the full path of TO. */
int
__wrap_renameat(int fromfd, const char *from, int tofd, const char *to)
{
	char		path[PATH_MAX];
	char		full[PATH_MAX * 2];

	fd_path(tofd, path, sizeof(path));
	snprintf(full, sizeof(full), "%s/%s", path, to);
	if (log_event("rename", full))
		return errno = EIO, -1;
	return __real_renameat(fromfd, from, tofd, to);
}

/* Log from now on; fail the (SKIP + 1)-th OP on a path ending in SUFFIX (OP NULL: none). */
static void
start_log(const char *op, const char *suffix, int skip)
{
	pthread_mutex_lock(&log_mutex);
	nevents = 0;
	logging = true;
	fail_op = op;
	fail_suffix = suffix;
	fail_skip = skip;
	pthread_mutex_unlock(&log_mutex);
}

static void
stop_log(void)
{
	pthread_mutex_lock(&log_mutex);
	logging = false;
	fail_op = NULL;
	pthread_mutex_unlock(&log_mutex);
}

/* The index of the first (or, LAST, the last) OP on PATH; -1 when none. */
static int
find_event(const char *op, const char *path, bool last)
{
	int			found = -1;
	int			i;

	for (i = 0; i < nevents; i++)
		if (strcmp(events[i].op, op) == 0 && strcmp(events[i].path, path) == 0)
		{
			found = i;
			if (!last)
				break;
		}
	return found;
}

static int
count_events(const char *op)
{
	int			n = 0;
	int			i;

	for (i = 0; i < nevents; i++)
		n += strcmp(events[i].op, op) == 0;
	return n;
}

/* Two destinations, a few files; the fixture's real paths, as /proc shows them. */
static void
durability_fixture(ThFixture *f, const char *tag)
{
	char		path[PATH_MAX];
	char		real[PATH_MAX];
	uint32_t	i;

	th_fixture(f, tag, 2);
	for (i = 0; i < 5; i++)
		th_write_pattern(th_path(path, "%s/file-%u", f->src, i), 200000 + i * 70000, i, true, 0600);
	for (i = 0; i < f->ndests; i++)
		if (realpath(f->dest[i], real) != NULL)
			snprintf(f->dest[i], sizeof(f->dest[i]), "%s", real);
	if (realpath(f->root, real) != NULL)
	{
		snprintf(f->root, sizeof(f->root), "%s", real);
		th_path(f->target, "%s/target", real);
	}
}

static bool
backup_logged(ThFixture *f, const char *fail, const char *suffix, int skip, SbError *err)
{
	SbBackupOptions o;
	SbManifest *m = NULL;
	bool		done;

	th_options(&o, f->dests, 2, "bk");
	start_log(fail, suffix, skip);
	done = th_backup_tree(&o, f->src, &m, err);
	stop_log();
	sb_manifest_free(m);
	return done;
}

/*
 * 1. The order of syncs in a backup that succeeds: each stripe synced with
 * its chunks and index, then its trailer (which records the manifest's
 * SHA-256) written and synced, every stripe so before any manifest copy is
 * written; then each copy fsynced, renamed, its folder and destination synced.
 */
void
test_durability_backup_order(void)
{
	ThFixture	f;
	SbError		err;
	char		folder[PATH_MAX];
	char		path[PATH_MAX];
	int			last_stripe_sync = -1;
	int			first_manifest_write = INT_MAX;
	int			first_rename = INT_MAX;
	uint32_t	i;

	durability_fixture(&f, "durable");
	if (!ok(backup_logged(&f, NULL, NULL, 0, &err), "the backup succeeds"))
		th_diag_error("backup", &err);
	for (i = 0; i < 2; i++)
	{
		const char *stripe_path = th_stripe_path(&f, i + 1, "bk", path);
		int			first = find_event("fsync", stripe_path, false);
		int			trailer = find_event("trailer", stripe_path, false);
		int			last = find_event("fsync", stripe_path, true);

		ok(first >= 0 && trailer > first,
		   "stripe %u: its chunks and index are fsynced before its trailer is written", i + 1);
		ok(last > trailer, "stripe %u: its trailer is fsynced", i + 1);
		if (last > last_stripe_sync)
			last_stripe_sync = last;
	}
	for (i = 0; i < 2; i++)
	{
		int			tmp,
					renamed,
					dir,
					dest;

		th_location(&f, i, "bk", folder);
		tmp = find_event("fsync", th_path(path, "%s/manifest.json.tmp", folder), false);
		renamed = find_event("rename", th_path(path, "%s/manifest.json", folder), false);
		dir = find_event("fsync", folder, true);
		dest = find_event("fsync", f.dest[i], true);
		ok(tmp >= 0 && renamed > tmp,
		   "destination %u: the manifest is written to a temporary file, fsynced, then renamed", i + 1);
		ok(dir > renamed, "destination %u: then the backup folder is fsynced (the rename is durable)", i + 1);
		ok(dest > renamed, "destination %u: and the destination, which holds the folder's name", i + 1);
		if (tmp >= 0 && tmp < first_manifest_write)
			first_manifest_write = tmp;
		if (renamed >= 0 && renamed < first_rename)
			first_rename = renamed;
	}
	ok(last_stripe_sync >= 0 && last_stripe_sync < first_manifest_write,
	   "every stripe's trailer is synced before any manifest is written (%d < %d)",
	   last_stripe_sync, first_manifest_write);
	ok(last_stripe_sync < first_rename, "so before any manifest is renamed into place (%d < %d)",
	   last_stripe_sync, first_rename);
	th_fixture_done(&f);
}

/* No trace of backup "bk" is left in any destination. */
static void
check_nothing_left(ThFixture *f, const char *what)
{
	char		folder[PATH_MAX];
	uint32_t	i;

	for (i = 0; i < f->ndests; i++)
		ok(!th_exists(th_location(f, i, "bk", folder)),
		   "%s: nothing is left in destination %u (no manifest to trust)", what, i + 1);
}

/* 2. A failed sync fails the backup, which leaves nothing behind. */
void
test_durability_backup_sync_fails(void)
{
	static const struct
	{
		const char *op;
		const char *suffix;
		int			skip;
		const char *message;
		const char *what;
	}			cases[] = {
		{"fsync", "/stripe-2.sbs", 0, "could not fsync", "stripe 2's fsync fails"},
		{"trailer", "/stripe-1.sbs", 0, "could not write", "stripe 1's trailer cannot be written"},
		{"fsync", "/stripe-2.sbs", 1, "could not fsync", "stripe 2's fsync after its trailer fails"},
		{"fsync", "/manifest.json.tmp", 0, "could not fsync", "the first manifest's fsync fails"},
		{"rename", "/manifest.json", 1, "could not rename", "the second manifest's rename fails"},
		{"fsync", "/bk", 0, "could not fsync", "the first backup folder's fsync fails"},
	};
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		ThFixture	f;
		SbError		err;
		bool		done;

		durability_fixture(&f, "syncfail");
		done = backup_logged(&f, cases[i].op, cases[i].suffix, cases[i].skip, &err);
		ok(!done, "%s: the backup fails", cases[i].what);
		if (!done)
		{
			like(err.message, cases[i].message, "%s: the error says what failed", cases[i].what);
			like(err.message, "Input/output error", "%s: and why", cases[i].what);
		}
		check_nothing_left(&f, cases[i].what);
		th_fixture_done(&f);
	}
}

/* 3. A restore ends with one sync of its file system, and fails if it fails. */
void
test_durability_restore_sync(void)
{
	ThFixture	f;
	SbError		err;
	char		location[PATH_MAX];
	bool		done;

	durability_fixture(&f, "restoresync");
	if (!ok(backup_logged(&f, NULL, NULL, 0, &err), "the backup succeeds"))
		th_diag_error("backup", &err);
	th_location(&f, 0, "bk", location);

	start_log(NULL, NULL, 0);
	done = th_restore(location, f.target, &err);
	stop_log();
	if (!ok(done, "the restore succeeds"))
		th_diag_error("restore", &err);
	is_int(count_events("syncfs"), 1, "one syncfs for the target's file system");
	ok(find_event("syncfs", f.target, false) >= 0, "of the target");
	is_int(count_events("fsync"), 1, "and one fsync: the folder holding the target, not one per file");
	ok(find_event("fsync", f.root, false) > find_event("syncfs", f.target, false),
	   "after the syncfs");
	ok(th_trees_equal(f.src, f.target, TH_CMP_MTIME), "the restored tree equals the source");

	th_rmtree(f.target);
	start_log("syncfs", "/target", 0);
	done = th_restore(location, f.target, &err);
	stop_log();
	ok(!done, "a restore whose syncfs fails fails");
	if (!done)
		like(err.message, "could not sync the file system of", "the error says so");
	ok(!th_exists(f.target), "and removes the target it created");
	th_fixture_done(&f);
}
