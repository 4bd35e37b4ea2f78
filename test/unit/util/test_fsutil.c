/*
 * test_fsutil.c
 *		File-system helpers (fsutil.c): each failure is an SbError naming the
 *		path and the reason; paths opened beneath a folder never leave it; a
 *		folder's contents removed without following links.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "harness.h"
#include "tests.h"

/* Writes and reads that fail say what, where and why. */
void
test_fsutil_io_errors(void)
{
	char		dir[PATH_MAX];
	char		path[PATH_MAX];
	char		buf[8192];
	SbError		err;
	int			full = open("/dev/full", O_WRONLY);
	int			dirfd;
	int			fd;

	th_tempdir(dir, "fsutil");
	memset(buf, 'x', sizeof(buf));
	if (full >= 0)
	{
		ok(!sb_write_all(full, buf, sizeof(buf), "stripe-1.sbs", &err), "a write to a full device fails");
		is_int(err.code, SB_ENOSPC, "as no-space");
		like(err.message, "could not write \"stripe-1.sbs\": ", "naming what was written");
		ok(!sb_pwrite_all(full, buf, sizeof(buf), 4096, "base/1/1259", &err), "so does a positioned write");
		like(err.message, "could not write \"base/1/1259\" at offset 4096: ", "naming the offset");
		close(full);
	}
	fd = open(th_path(path, "%s/file", dir), O_RDWR | O_CREAT, 0600);
	ok(sb_write_all(fd, buf, 5000, "file", &err) && sb_pwrite_all(fd, buf, 100, 6000, "file", &err),
	   "writes to a file");
	is_int(sb_pread_upto(fd, buf, sizeof(buf), 0, "file", &err), 6100, "a read up to 8 kB stops at the end");
	is_int(sb_pread_upto(fd, buf, sizeof(buf), 7000, "file", &err), 0, "and past it reads nothing");
	close(fd);
	fd = open(path, O_RDONLY);
	ok(!sb_write_all(fd, buf, 10, "file", &err) && err.sys_errno == EBADF,
	   "a write to a file open for reading fails with EBADF");
	close(fd);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	is_int(sb_pread_upto(dirfd, buf, 10, 0, "a folder", &err), -1, "a read of a folder fails");
	like(err.message, "could not read \"a folder\" at offset 0: ", "naming it and the offset");
	close(dirfd);
	ok(!sb_fsync_path(th_path(path, "%s/missing", dir), false, &err), "syncing a missing file fails");
	like(err.message, "could not open \"", "naming it");
	like(err.message, "/missing\" to sync it", "and saying why it was opened");
	th_rmtree(dir);
}

/* sb_read_small_file: whole, NUL-terminated; missing, too large or unreadable refused. */
void
test_fsutil_small_files(void)
{
	char		dir[PATH_MAX];
	char		path[PATH_MAX];
	size_t		len = 0;
	SbError		err;
	char	   *text;

	th_tempdir(dir, "fsutil-small");
	th_write_file(th_path(path, "%s/manifest.json", dir), "{\"a\":1}", 7, 0600);
	text = sb_read_small_file(path, 7, &len, &err);
	ok(text != NULL && len == 7 && strcmp(text, "{\"a\":1}") == 0, "a file of exactly the limit is read");
	free(text);
	ok(sb_read_small_file(path, 6, &len, &err) == NULL, "one byte over the limit is refused");
	is_int(err.code, SB_EINVAL, "as invalid");
	like(err.message, "manifest.json\" is larger than 6 bytes", "saying so");
	ok(sb_read_small_file(th_path(path, "%s/missing.json", dir), 100, &len, &err) == NULL,
	   "a missing file is refused");
	is_int(err.code, SB_ENOTFOUND, "as not-found");
	like(err.message, "could not open \"", "saying it could not be opened");
	ok(sb_read_small_file(dir, 1 << 20, &len, &err) == NULL, "a folder is refused");
	like(err.message, "could not read \"", "it cannot be read");
	th_rmtree(dir);
}

/* Paths opened beneath a folder: no link followed, no way out. */
void
test_fsutil_beneath(void)
{
	char		dir[PATH_MAX];
	char		path[PATH_MAX];
	char		outside[PATH_MAX];
	char		longpath[4200];
	SbError		err;
	int			root;
	int			fd;

	th_tempdir(dir, "fsutil-beneath");
	th_tempdir(outside, "fsutil-outside");
	th_mkdir(th_path(path, "%s/real", dir), 0700);
	ok(symlink(outside, th_path(path, "%s/out", dir)) == 0 &&
	   symlink("real", th_path(path, "%s/inner", dir)) == 0 &&
	   th_write_file(th_path(path, "%s/a-file", dir), "x", 1, 0600), "a tree with links");
	root = open(dir, O_RDONLY | O_DIRECTORY);

	fd = sb_open_beneath(root, "real/new", O_WRONLY | O_CREAT | O_EXCL, 0600);
	ok(fd >= 0, "a new file in a real folder beneath");
	if (fd >= 0)
		close(fd);
	ok(sb_open_beneath(root, "out/escaped", O_WRONLY | O_CREAT, 0600) < 0, "not through a link out");
	ok(sb_open_beneath(root, "inner/x", O_WRONLY | O_CREAT, 0600) < 0, "nor through a link within");
	ok(sb_open_beneath(root, "../escaped", O_WRONLY | O_CREAT, 0600) < 0, "nor up with ..");
	ok(sb_open_beneath(root, outside, O_RDONLY, 0) < 0, "nor by an absolute path");
	is_int(th_count_entries(outside), 0, "nothing was created outside");

	ok(sb_make_parents_beneath(root, "new/deeper/file", &err) &&
	   th_exists(th_path(path, "%s/new/deeper", dir)) && !th_exists(th_path(path, "%s/new/deeper/file", dir)),
	   "the parents of a path are made, not the path itself");
	ok(sb_make_parents_beneath(root, "new/deeper/other", &err), "parents already there are fine");
	ok(!sb_make_parents_beneath(root, "a-file/x", &err), "a file in the way is refused");
	like(err.message, "\"a-file\" exists and is not a directory", "saying so");
	ok(!sb_make_parents_beneath(root, "out/x", &err), "a link in the way is refused");
	like(err.message, "\"out\" exists and is not a directory", "as not a directory");
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	ok(!sb_make_parents_beneath(root, longpath, &err), "a path of 4 kB is refused");
	like(err.message, "path too long", "as too long");
	close(root);
	th_rmtree(outside);
	th_rmtree(dir);
}

/* Emptiness of folders, and removing a folder's contents without following links. */
void
test_fsutil_remove_contents(void)
{
	char		dir[PATH_MAX];
	char		path[PATH_MAX];
	char		outside[PATH_MAX];
	SbError		err;
	bool		exists = true,
				empty = true;

	th_tempdir(dir, "fsutil-remove");
	th_tempdir(outside, "fsutil-kept");
	th_write_file(th_path(path, "%s/keep-me", outside), "x", 1, 0600);
	ok(sb_dir_is_empty(dir, &exists, &empty, &err) && exists && empty, "a new folder is empty");
	ok(th_mkdir(th_path(path, "%s/a", dir), 0700) && th_mkdir(th_path(path, "%s/a/b", dir), 0700) &&
	   th_write_file(th_path(path, "%s/a/b/f", dir), "x", 1, 0600) &&
	   th_write_file(th_path(path, "%s/top", dir), "x", 1, 0600) &&
	   symlink(outside, th_path(path, "%s/link-out", dir)) == 0, "a tree with a link out");
	ok(sb_dir_is_empty(dir, &exists, &empty, &err) && exists && !empty, "is not empty");
	ok(sb_dir_is_empty(th_path(path, "%s/none", dir), &exists, &empty, &err) && !exists,
	   "a missing folder does not exist, and that is no error");
	ok(!sb_dir_is_empty(th_path(path, "%s/top", dir), &exists, &empty, &err) && err.sys_errno == ENOTDIR,
	   "a file is an error (ENOTDIR)");
	ok(!sb_remove_contents(th_path(path, "%s/link-out", dir), &err), "removing through a link is refused");
	like(err.message, "could not open directory \"", "saying it could not be opened");
	ok(sb_remove_contents(dir, &err), "the tree's contents are removed");
	is_int(th_count_entries(dir), 0, "the folder is empty");
	ok(th_exists(dir), "and still there");
	is_int(th_count_entries(outside), 1, "what the link pointed to is untouched");
	ok(!sb_remove_contents(th_path(path, "%s/none", dir), &err) && err.sys_errno == ENOENT,
	   "a missing folder is an error (ENOENT)");
	th_rmtree(outside);
	th_rmtree(dir);
}
