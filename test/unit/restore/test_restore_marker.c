/*
 * test_restore_marker.c
 *		A restore given a marker (SbRestoreOptions.marker) keeps it in every
 *		directory it writes into until it completes; after a crash,
 *		sb_restore_remove_incomplete() removes what that restore wrote, and
 *		nothing of any directory that does not hold that very marker.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "restore/restore_marker.h"
#include "tests.h"

#define MARKER "test restore 7 of cluster 42"

void
test_restore_marker_complete(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbRestoreOptions ro;
	SbError		err;
	char		path[PATH_MAX];
	char		location[PATH_MAX];
	bool		done;

	th_begin("test_restore_marker_complete");
	th_fixture(&f, "marker", 1);
	done = th_mkdir(th_path(path, "%s/base", f.src), 0700) &&
		th_write_pattern(th_path(path, "%s/base/1", f.src), 100000, 3, true, 0600);
	th_options(&o, f.dests, 1, "bk");
	done = done && th_backup_tree(&o, f.src, NULL, &err);
	memset(&ro, 0, sizeof(ro));
	ro.target = f.target;
	ro.marker = MARKER;
	done = done && th_restore_with(th_location(&f, 0, "bk", location), &ro, &err);
	if (!ok(done, "a restore with a marker completes"))
		th_diag_error("restore", &err);
	ok(!th_exists(th_path(path, "%s/" SB_RESTORE_MARKER_FILE, f.target)),
	   "the complete restore holds no marker");
	ok(th_trees_equal(f.src, f.target, TH_CMP_MTIME),
	   "the restored tree equals the source, the target's own time included");
	th_fixture_done(&f);
}

/* DIR as a restore cut short left it: its marker, files, a folder, a link out. */
static bool
make_incomplete_as(const char *dir, const char *marker, const char *state, const char *outside)
{
	char		path[PATH_MAX];
	SbError		err;
	int			fd;
	bool		done;

	if (!th_exists(dir) && !th_mkdir(dir, 0700))
		return false;
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	done = fd >= 0 && sb_restore_marker_write(fd, dir, marker, state, &err);
	if (fd >= 0)
		close(fd);
	return done && th_mkdir(th_path(path, "%s/base", dir), 0700) &&
		th_write_pattern(th_path(path, "%s/base/1", dir), 5000, 1, false, 0600) &&
		symlink(outside, th_path(path, "%s/pg_tblspc_link", dir)) == 0;
}

static bool
make_incomplete(const char *dir, const char *marker, bool created, const char *outside)
{
	return make_incomplete_as(dir, marker, created ? SB_MARKER_CREATED : SB_MARKER_EXISTING, outside);
}

void
test_restore_marker_incomplete(void)
{
	char		root[PATH_MAX];
	char		dir[PATH_MAX];
	char		outside[PATH_MAX];
	char		link[PATH_MAX];
	SbIncompleteRestore found;
	SbError		err;

	th_begin("test_restore_marker_incomplete");
	th_tempdir(root, "incomplete");
	th_mkdir(th_path(outside, "%s/outside", root), 0700);
	th_write_pattern(th_path(dir, "%s/outside/keep", root), 100, 9, true, 0600);
	th_path(dir, "%s/target", root);

	ok(make_incomplete(dir, MARKER, true, outside), "a target a restore left half written");
	ok(sb_restore_remove_incomplete(dir, "test restore 8 of cluster 42", &found, &err) &&
	   found.exists && !found.ours && !found.removed && th_count_entries(dir) == 3,
	   "another restore's marker: nothing removed");
	ok(sb_restore_remove_incomplete(dir, MARKER, &found, &err) && found.ours && found.removed &&
	   !th_exists(dir), "its own marker: everything removed, and the directory it had made");
	ok(th_exists(th_path(link, "%s/outside/keep", root)), "what a link in it pointed to is kept");

	ok(make_incomplete(dir, MARKER, false, outside), "a target that existed before the restore");
	ok(sb_restore_remove_incomplete(dir, MARKER, &found, &err) && found.removed &&
	   th_count_entries(dir) == 0, "its contents removed, the directory itself kept");

	ok(make_incomplete_as(dir, MARKER, SB_MARKER_DELTA, outside), "a copy a delta restore left half refreshed");
	ok(sb_restore_remove_incomplete(dir, MARKER, &found, &err) && found.ours && found.delta &&
	   !found.removed && th_count_entries(dir) == 2 && !th_exists(th_path(link, "%s/%s", dir, SB_RESTORE_MARKER_FILE)),
	   "the copy stays (it was the user's), only the marker goes");
	th_rmtree(dir);
	th_mkdir(dir, 0700);

	ok(make_incomplete(th_path(link, "%s/real", root), MARKER, true, outside) &&
	   symlink(link, th_path(dir, "%s/linked", root)) == 0, "a marked directory behind a link");
	ok(sb_restore_remove_incomplete(dir, MARKER, &found, &err) && found.exists && !found.ours &&
	   th_count_entries(link) == 3, "a link is not followed: nothing removed");

	th_path(dir, "%s/plain", root);
	th_mkdir(dir, 0700);
	th_write_pattern(th_path(link, "%s/plain/x", root), 10, 1, true, 0600);
	ok(sb_restore_remove_incomplete(dir, MARKER, &found, &err) && !found.ours &&
	   th_count_entries(dir) == 1, "a directory without a marker is left alone");
	ok(sb_restore_remove_incomplete(th_path(dir, "%s/none", root), MARKER, &found, &err) &&
	   !found.exists, "an absent directory: nothing to do");
	ok(!sb_restore_marker_write(-1, "x", "two\nlines", SB_MARKER_CREATED, &err) && err.code == SB_EINVAL,
	   "a marker of more than one line is refused");
	th_rmtree(root);
}
