/*
 * test_restore_writeback.c
 *		A restore's write-out (restore_writeback.c): a thread per device, on
 *		several devices starting the write-out of the ranges written to its
 *		device (on one, the writer starts it), waiting for those more than 64
 *		MB behind and dropping them from the cache, and syncing its file
 *		system once at the end.  What cannot be started is left to that
 *		sync, and a failed sync is said with its directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "restore/restore_writeback.h"
#include "syscall_log.h"
#include "tests.h"

#define MB ((uint64_t) 1024 * 1024)

/* Three output directories: two on $TMPDIR's device, one on /dev/shm's. */
typedef struct Dirs
{
	char		path[3][PATH_MAX];
	const char *paths[3];
	int			fds[3];
} Dirs;

/* False (skipped) where /dev/shm is not another device. */
static bool
dirs_make(Dirs *d)
{
	struct stat here;
	struct stat there;
	int			i;

	th_tempdir(d->path[0], "writeback");
	th_path(d->path[1], "%s/beside", d->path[0]);
	snprintf(d->path[2], PATH_MAX, "/dev/shm/sbwriteback-%d", (int) getpid());
	th_rmtree(d->path[2]);
	if (mkdir(d->path[1], 0700) != 0 || mkdir(d->path[2], 0700) != 0 ||
		stat(d->path[0], &here) != 0 || stat(d->path[2], &there) != 0 || here.st_dev == there.st_dev)
	{
		ok(true, "# SKIP no second device (/dev/shm)");
		return false;
	}
	for (i = 0; i < 3; i++)
	{
		char		file[PATH_MAX];
		static char data[2 * 1024 * 1024];

		d->paths[i] = d->path[i];
		d->fds[i] = open(d->path[i], O_RDONLY | O_DIRECTORY);
		if (!th_write_file(th_path(file, "%s/big", d->path[i]), data, sizeof(data), 0600))
			return false;
	}
	return true;
}

static void
dirs_done(Dirs *d)
{
	int			i;

	for (i = 0; i < 3; i++)
		if (d->fds[i] >= 0)
			close(d->fds[i]);
	th_rmtree(d->path[0]);
	th_rmtree(d->path[2]);
}

/* Was a write-out started on DIR/big (logged)? */
static bool
started_on(const char *dir)
{
	char		path[PATH_MAX];

	return th_log_find("startwb", th_path(path, "%s/big", dir), false) >= 0;
}

void
test_restore_writeback(void)
{
	Dirs		d;
	SbWriteback *wb;
	SbError		err;
	int			i;

	memset(&d, 0, sizeof(d));
	d.fds[0] = d.fds[1] = d.fds[2] = -1;
	if (!dirs_make(&d))
	{
		dirs_done(&d);
		return;
	}
	th_log_start(NULL, NULL, 0);
	wb = sb_writeback_start(d.fds, d.paths, 3);
	ok(wb != NULL, "write-out threads start for three directories on two devices");
	sb_writeback_add(wb, -1, d.fds[0], "big", 0, MB);
	sb_writeback_add(wb, -1, d.fds[0], "big", MB, MB);
	sb_writeback_add(wb, -1, d.fds[2], "big", 0, 2 * MB);
	sb_writeback_add(wb, -1, d.fds[1], "big", 0, 64 * 1024);	/* too short: the sync takes it */
	sb_writeback_add(wb, -1, d.fds[1], "gone", 0, MB);	/* no such file: the sync's */
	sb_writeback_add(wb, -1, 12345, "big", 0, MB);	/* not an output directory */
	ok(sb_writeback_finish(wb, true, &err), "the restore written, every device syncs");
	ok(started_on(d.path[0]) && started_on(d.path[2]),
	   "the write-out of each device's ranges was started");
	ok(!started_on(d.path[1]), "but not of a range too short to be worth it");
	is_int(th_log_count("syncfs"), 2, "one sync per device, not per directory");
	th_log_stop();

	/* more ranges than a queue holds (not logged: too many): the adder waits for room */
	wb = sb_writeback_start(d.fds, d.paths, 3);
	for (i = 0; i < 5000; i++)
		sb_writeback_add(wb, -1, d.fds[i % 2 == 0 ? 0 : 2], "big", (uint64_t) i * 2 * MB, MB);
	ok(sb_writeback_finish(wb, true, &err), "ranges past a queue's length wait their turn");

	th_log_start(NULL, NULL, 0);
	ok(sb_writeback_finish(sb_writeback_start(d.fds, d.paths, 3), false, &err),
	   "a restore that will not be synced (or failed) stops the threads");
	is_int(th_log_count("syncfs"), 0, "without a sync");
	th_log_stop();

	th_log_start("syncfs", "*sbwriteback", 0);
	ok(!sb_writeback_finish(sb_writeback_start(d.fds, d.paths, 3), true, &err),
	   "a device's failed sync fails the restore");
	like(err.message, "could not sync the file system of \"/dev/shm/sbwriteback", "naming its directory");
	th_log_stop();

	/* one device (two directories on it): the writer starts the write-out, one sync */
	{
		char		big[PATH_MAX];
		int			fd = open(th_path(big, "%s/big", d.path[1]), O_RDWR);

		th_log_start(NULL, NULL, 0);
		wb = sb_writeback_start(d.fds, d.paths, 2);
		ok(wb != NULL, "two directories on one device");
		sb_writeback_add(wb, fd, d.fds[1], "big", 0, MB);
		ok(th_log_find("startwb", big, false) >= 0, "the writer started the write-out itself");
		ok(sb_writeback_finish(wb, true, &err), "the restore written, the device syncs");
		is_int(th_log_count("syncfs"), 1, "once");
		is_int(th_log_count("waitwb"), 0, "a range so recent is not waited for");
		th_log_stop();

		/* 65 ranges of 1 MB, apart: the first is 64 MB behind the last, written and dropped */
		th_log_start(NULL, NULL, 0);
		wb = sb_writeback_start(d.fds, d.paths, 2);
		for (i = 0; i < 65; i++)
			sb_writeback_add(wb, fd, d.fds[1], "big", (uint64_t) i * 2 * MB, MB);
		ok(sb_writeback_finish(wb, true, &err), "a longer restore written");
		is_int(th_log_count("waitwb"), 1, "the range further behind than 64 MB was waited for, then dropped");
		is_int(th_log_count("startwb"), 65, "every range's write-out started by the writer");
		th_log_stop();
		close(fd);
	}
	ok(sb_writeback_finish(NULL, true, &err), "none set up: nothing to finish");
	dirs_done(&d);
}
