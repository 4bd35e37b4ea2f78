/*
 * test_restore_relocations.c
 *		Restoring with relocations (SbRelocation, restore.c): tablespaces
 *		restored into directories of their own, found from the manifest's
 *		metadata and --tablespace-mapping (sb_pgmeta), with a link left in
 *		their place; relocations refused before anything is written; and a
 *		restore that fails or is canceled removing what it wrote in every
 *		directory, or keeping it when asked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "stripebackup/sb_pgmeta.h"
#include "tests.h"

#define TS1 "pg_tblspc/16385"
#define TS2 "pg_tblspc/16400"
#define MTIME 1700000000

/*
 * A cluster-like tree: files at the top, and two tablespace folders under
 * pg_tblspc (one with a subfolder).  Backed up to one destination
 * with metadata that puts the tablespaces at /nonexistent/ts-*.
 */
static bool
make_backup(ThFixture *f)
{
	static const char *const dirs[] = {"base", "base/1", "pg_tblspc", TS1, TS1 "/PG_15_202209061",
	TS1 "/PG_15_202209061/5", TS2, TS2 "/PG_15_202209061"};
	SbBackupOptions o;
	SbError		err;
	char		path[PATH_MAX];
	size_t		i;
	bool		done = true;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		done = done && th_mkdir(th_path(path, "%s/%s", f->src, dirs[i]), 0700);
	done = done && th_write_file(th_path(path, "%s/PG_VERSION", f->src), "15\n", 3, 0600) &&
		th_write_pattern(th_path(path, "%s/base/1/1259", f->src), 200000, 1, true, 0600) &&
		th_write_pattern(th_path(path, "%s/" TS1 "/PG_15_202209061/5/16386", f->src), 300000, 2,
						 false, 0640) &&
		th_write_pattern(th_path(path, "%s/" TS2 "/PG_15_202209061/16401", f->src), 5000, 3, true, 0600);
	/* Modes and times the restore must give the relocated folders themselves. */
	done = done && chmod(th_path(path, "%s/" TS1, f->src), 0750) == 0 && th_set_mtime(path, MTIME);
	th_options(&o, f->dests, 1, "bk");
	o.metadata_json = "{\"kind\":\"postgresql\",\"server_version\":\"15.20\",\"tablespaces\":["
		"{\"oid\":16385,\"location\":\"/nonexistent/ts-1\"},"
		"{\"oid\":16400,\"location\":\"/nonexistent/ts-2\"}]}";
	done = done && th_backup_tree(&o, f->src, NULL, &err);
	if (!ok(done, "a backup with two tablespace folders"))
		th_diag_error("backup", &err);
	return done;
}

/* Restore F's backup into TARGET with RELOCS; READ may slow or stop it. */
static bool
restore_relocated(const ThFixture *f, const char *target, const SbRelocation *relocs,
				  uint32_t nrelocs, const SbReadOptions *read, bool keep, SbError *err)
{
	char		location[PATH_MAX];
	SbRestoreOptions ro;

	memset(&ro, 0, sizeof(ro));
	ro.target = target;
	if (read != NULL)
		ro.read = *read;
	ro.read.workers = 2;
	ro.keep_on_error = keep;
	ro.relocations = relocs;
	ro.nrelocations = nrelocs;
	return th_restore_with(th_location(f, 0, "bk", location), &ro, err);
}

/* PATH is a symbolic link to TO. */
static bool
links_to(const char *path, const char *to)
{
	char		got[PATH_MAX];
	ssize_t		n = readlink(path, got, sizeof(got) - 1);

	if (n < 0)
		return false;
	got[n] = '\0';
	if (strcmp(got, to) != 0)
		diag("%s links to %s, not %s", path, got, to);
	return strcmp(got, to) == 0;
}

/* The tablespaces found in the metadata, moved by --tablespace-mapping, restored apart. */
void
test_relocations_restore(void)
{
	ThFixture	f;
	SbError		err;
	SbPgMeta	meta;
	SbRelocation relocs[3];
	uint32_t	n = 0;
	char		mappings[2][PATH_MAX + 32];
	const char *maps[2];
	char		ts1[PATH_MAX],
				ts2[PATH_MAX],
				path[PATH_MAX],
				src[PATH_MAX],
				other[PATH_MAX];
	char		location[PATH_MAX];
	SbArchive  *a;
	struct stat st;
	bool		done;

	th_fixture(&f, "reloc", 1);
	if (!make_backup(&f))
	{
		th_fixture_done(&f);
		return;
	}
	th_path(ts1, "%s/ts-1", f.root);	/* absent: the restore creates it */
	th_path(ts2, "%s/ts-2", f.root);	/* there and empty */
	th_mkdir(ts2, 0700);
	snprintf(mappings[0], sizeof(mappings[0]), "/nonexistent/ts-1=%s", ts1);
	snprintf(mappings[1], sizeof(mappings[1]), "/nonexistent/ts-2=%s", ts2);
	maps[0] = mappings[0];
	maps[1] = mappings[1];
	a = sb_archive_open(th_location(&f, 0, "bk", location), &err);
	done = a != NULL && sb_pgmeta_read(a->manifest, &meta, &err) &&
		sb_pgmeta_relocations(&meta, maps, 2, "--tablespace-mapping", relocs, &n, &err);
	if (!ok(done && n == 2, "two relocations from the metadata and the mappings"))
		th_diag_error("relocations", &err);
	done = done && restore_relocated(&f, f.target, relocs, n, NULL, false, &err);
	if (!ok(done, "the restore with both relocations succeeds"))
		th_diag_error("restore", &err);

	ok(links_to(th_path(path, "%s/" TS1, f.target), ts1), TS1 " is a link to its new place");
	ok(links_to(th_path(path, "%s/" TS2, f.target), ts2), TS2 " too");
	ok(th_trees_equal(th_path(src, "%s/" TS1, f.src), ts1, TH_CMP_MTIME),
	   "the first tablespace's tree, modes and times are in its new place");
	ok(th_trees_equal(th_path(src, "%s/" TS2, f.src), ts2, TH_CMP_MTIME), "so is the second's");
	ok(stat(ts1, &st) == 0 && (st.st_mode & 07777) == 0750 && st.st_mtime == MTIME,
	   "the relocated folder has the mode and time of the folder backed up");
	ok(th_files_equal(th_path(src, "%s/base/1/1259", f.src), th_path(path, "%s/base/1/1259", f.target)) &&
	   th_files_equal(th_path(src, "%s/PG_VERSION", f.src), th_path(other, "%s/PG_VERSION", f.target)),
	   "the files outside the tablespaces are in the target");
	is_int(th_count_entries(th_path(path, "%s/pg_tblspc", f.target)), 2,
		   "pg_tblspc holds the two links and nothing else");

	/* Again into a new target: the tablespace folders are no longer empty. */
	th_path(other, "%s/again", f.root);
	ok(!restore_relocated(&f, other, relocs, n, NULL, false, &err),
	   "a second restore to the same tablespace folders is refused");
	is_int(err.code, SB_EEXIST, "error code is exists");
	like(err.message, "directory of tablespace 16385 \"", "message names the tablespace");
	like(err.message, "is not empty; restore only into an empty or new directory", "and says why");
	ok(!th_exists(other), "the new target it created is removed");
	ok(th_trees_equal(th_path(src, "%s/" TS1, f.src), ts1, TH_CMP_MTIME),
	   "the first restore's files are untouched");
	if (a != NULL)
	{
		sb_pgmeta_free(&meta);
		sb_archive_close(a);
	}
	th_fixture_done(&f);
}

/* One relocation that must be refused before anything is written. */
typedef struct BadRelocation
{
	const char *what;			/* the test */
	const char *from;
	const char *to;				/* relative to the fixture's root, unless absolute */
	const char *name;			/* SbRelocation.what */
	SbErrorCode code;
	const char *message;
} BadRelocation;

static void
expect_refused(const ThFixture *f, const SbRelocation *relocs, uint32_t n, SbErrorCode code,
			   const char *message, const char *what)
{
	SbError		err;

	ok(!restore_relocated(f, f->target, relocs, n, NULL, false, &err), "%s: refused", what);
	is_int(err.code, code, "%s: error code is %s", what, sb_error_code_name(code));
	like(err.message, message, "%s: message says %s", what, message);
	ok(!th_exists(f->target), "%s: the target is not left behind", what);
}

/* Is PATH a directory of mode 0700? */
static bool
is_private_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700;
}

/*
 * Missing parents of the target and of the tablespaces' places are made,
 * mode 0700 (as pg_basebackup makes them); a restore refused after making
 * them removes them again.
 */
static void
relocations_made_parents(const ThFixture *f)
{
	SbRelocation two[2] = {{TS1, NULL, "directory of tablespace 16385"},
	{TS2, NULL, "directory of tablespace 16400"}};
	char		target[PATH_MAX],
				to1[PATH_MAX],
				to2[PATH_MAX],
				path[PATH_MAX];
	SbError		err;

	two[0].to = th_path(to1, "%s/made/a/ts1", f->root);
	two[1].to = th_path(to2, "%s/made/b/ts2", f->root);
	if (!ok(restore_relocated(f, th_path(target, "%s/new/parents/copy", f->root), two, 2, NULL, false, &err),
			"a target and places whose parents are missing: restored"))
		th_diag_error("restore", &err);
	ok(is_private_dir(th_path(path, "%s/new", f->root)) && is_private_dir(th_path(path, "%s/new/parents", f->root)),
	   "the target's parents made, mode 0700");
	ok(is_private_dir(th_path(path, "%s/made", f->root)) && is_private_dir(th_path(path, "%s/made/a", f->root)) &&
	   is_private_dir(th_path(path, "%s/made/b", f->root)), "the places' parents too");
	two[0].to = th_path(to1, "%s/gone/a/ts1", f->root);
	two[1].to = th_path(to2, "%s/full", f->root);
	ok(!restore_relocated(f, th_path(target, "%s/gone2/x/copy", f->root), two, 2, NULL, false, &err) &&
	   err.code == SB_EEXIST, "refused for a place that is not empty, after the others were made");
	ok(!th_exists(th_path(path, "%s/gone", f->root)) && !th_exists(th_path(path, "%s/gone2", f->root)),
	   "the parents it made are removed with them");
}

void
test_relocations_refused(void)
{
	static const BadRelocation bad[] = {
		{"the root", ".", "ts", "directory of tablespace 1", SB_EINVAL,
		"\".\" is not a directory of the backup"},
		{"a folder the backup does not have", "pg_tblspc/99999", "ts", "directory of tablespace 99999",
		SB_EINVAL, "\"pg_tblspc/99999\" is not a directory of the backup"},
		{"a file", "PG_VERSION", "ts", "x", SB_EINVAL, "\"PG_VERSION\" is not a directory of the backup"},
		{"a prefix of a folder", "pg_tblspc/163", "ts", "x", SB_EINVAL, "is not a directory of the backup"},
		{"a relative place", TS1, "/relative/ts", "directory of tablespace 16385", SB_EINVAL,
		"directory of tablespace 16385: \"relative/ts\" is not an absolute path"},
		{"a relative place, unnamed", TS1, "/relative/ts", NULL, SB_EINVAL,
		"relocation target: \"relative/ts\" is not an absolute path"},
		{"a file as the place", TS1, "a-file", "directory of tablespace 16385", SB_EINVAL,
		"is not a directory"},
		{"a folder that is not empty", TS1, "full", "directory of tablespace 16385", SB_EEXIST,
		"is not empty; restore only into an empty or new directory"},
		{"a place inside the target", TS1, "restore/ts", "directory of tablespace 16385", SB_EINVAL,
		"overlap: one is inside the other"},
		{"a link to the target", TS1, "link-to-target", "directory of tablespace 16385", SB_EINVAL,
		"overlap: one is inside the other"},
		{"a place under a file", TS1, "a-file/ts", "directory of tablespace 16385", SB_EINVAL,
		"is not a directory"},
	};
	ThFixture	f;
	char		path[PATH_MAX];
	char		to[PATH_MAX];
	size_t		i;

	th_fixture(&f, "reloc-bad", 1);
	if (!make_backup(&f))
	{
		th_fixture_done(&f);
		return;
	}
	th_write_file(th_path(path, "%s/a-file", f.root), "x", 1, 0600);
	th_mkdir(th_path(path, "%s/full", f.root), 0700);
	th_write_file(th_path(path, "%s/full/keep", f.root), "x", 1, 0600);
	ok(symlink(f.target, th_path(path, "%s/link-to-target", f.root)) == 0, "a link to the target");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		SbRelocation r;

		if (strncmp(bad[i].to, "/relative/", 10) == 0)
			snprintf(to, sizeof(to), "%s", bad[i].to + 1);
		else
			th_path(to, "%s/%s", f.root, bad[i].to);
		r.from = bad[i].from;
		r.to = to;
		r.what = bad[i].name;
		expect_refused(&f, &r, 1, bad[i].code, bad[i].message, bad[i].what);
	}
	is_int(th_count_entries(th_path(path, "%s/full", f.root)), 1,
		   "the folder that was not empty still holds its file");
	ok(!th_exists(th_path(path, "%s/restore/ts", f.root)), "the place inside the target is removed");

	/* Two relocations into the same folder, or one inside the other. */
	{
		SbRelocation two[2];
		char		to1[PATH_MAX],
					to2[PATH_MAX];

		two[0].from = TS1;
		two[0].to = th_path(to1, "%s/ts", f.root);
		two[0].what = "directory of tablespace 16385";
		two[1].from = TS2;
		two[1].to = to1;
		two[1].what = "directory of tablespace 16400";
		expect_refused(&f, two, 2, SB_EINVAL, "overlap", "two tablespaces in one folder");
		two[1].to = th_path(to2, "%s/ts/inner", f.root);
		expect_refused(&f, two, 2, SB_EINVAL, "overlap", "a tablespace inside another");
		ok(!th_exists(to1), "the folder the restore made for the first is removed");
	}
	relocations_made_parents(&f);
	th_fixture_done(&f);
}

typedef struct StopTick
{
	int			calls;
} StopTick;

static bool
stop_tick(void *arg, const SbProgress *progress)
{
	(void) progress;
	((StopTick *) arg)->calls++;
	return false;
}

/* A restore stopped while reading removes what it wrote everywhere, or keeps it if asked. */
void
test_relocations_canceled(void)
{
	static const double slow[] = {1.0};	/* MB/s: the tick comes before the end */
	ThFixture	f;
	SbError		err;
	SbRelocation relocs[2];
	SbReadOptions read;
	StopTick	tick = {0};
	char		ts1[PATH_MAX],
				ts2[PATH_MAX],
				path[PATH_MAX];
	int			keep;

	th_fixture(&f, "reloc-cancel", 1);
	if (!make_backup(&f))
	{
		th_fixture_done(&f);
		return;
	}
	relocs[0].from = TS1;
	relocs[0].to = th_path(ts1, "%s/ts-1", f.root);
	relocs[0].what = "directory of tablespace 16385";
	relocs[1].from = TS2;
	relocs[1].to = th_path(ts2, "%s/ts-2", f.root);
	relocs[1].what = "directory of tablespace 16400";
	for (keep = 0; keep <= 1; keep++)
	{
		const char *how = keep ? "kept" : "removed";

		th_rmtree(ts1);
		th_rmtree(ts2);
		th_rmtree(f.target);
		th_mkdir(ts2, 0700);	/* there before: emptied, not removed */
		memset(&read, 0, sizeof(read));
		read.max_rates = slow;
		read.tick = stop_tick;
		read.tick_arg = &tick;
		ok(!restore_relocated(&f, f.target, relocs, 2, &read, keep, &err),
		   "%s: a restore stopped by its tick fails", how);
		is_int(err.code, SB_ECANCELED, "%s: error code is canceled", how);
		if (keep)
		{
			ok(th_exists(th_path(path, "%s/PG_15_202209061/5/16386", ts1)),
			   "kept: the first tablespace's files are left in its folder");
			/* its small files are made as their chunk is written, which it may not have been */
			ok(th_exists(th_path(path, "%s/PG_15_202209061", ts2)), "kept: the second's too");
			ok(th_exists(th_path(path, "%s/base/1/1259", f.target)), "kept: and the target's");
		}
		else
		{
			ok(!th_exists(ts1), "removed: the tablespace folder the restore made is gone");
			is_int(th_count_entries(ts2), 0, "removed: the one that was there is empty again");
			ok(!th_exists(f.target), "removed: the target is gone");
		}
	}
	ok(tick.calls >= 2, "the tick stopped both restores");
	th_fixture_done(&f);
}
