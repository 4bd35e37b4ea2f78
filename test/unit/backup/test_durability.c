/*
 * test_durability.c
 *		A backup is complete only once every stripe, every manifest copy and
 *		the folders that hold them are synced, and the manifest appears
 *		atomically; a restore ends with its file systems synced.  And when a
 *		sync fails, the backup or restore fails, leaving no manifest behind.
 *
 * Every sync and rename the engine makes is logged, and a chosen one can
 * be made to fail with EIO as a dying disk would (syscall_log.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "syscall_log.h"
#include "tests.h"

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
	th_log_start(fail, suffix, skip);
	done = th_backup_tree(&o, f->src, &m, err);
	th_log_stop();
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
		int			first = th_log_find("fsync", stripe_path, false);
		int			trailer = th_log_find("trailer", stripe_path, false);
		int			last = th_log_find("fsync", stripe_path, true);

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
		tmp = th_log_find("fsync", th_path(path, "%s/manifest.json.tmp", folder), false);
		renamed = th_log_find("rename", th_path(path, "%s/manifest.json", folder), false);
		dir = th_log_find("fsync", folder, true);
		dest = th_log_find("fsync", f.dest[i], true);
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

	th_log_start(NULL, NULL, 0);
	done = th_restore(location, f.target, &err);
	th_log_stop();
	if (!ok(done, "the restore succeeds"))
		th_diag_error("restore", &err);
	is_int(th_log_count("syncfs"), 1, "one syncfs for the target's file system");
	ok(th_log_find("syncfs", f.target, false) >= 0, "of the target");
	is_int(th_log_count("fsync"), 1, "and one fsync: the folder holding the target, not one per file");
	ok(th_log_find("fsync", f.root, false) > th_log_find("syncfs", f.target, false),
	   "after the syncfs");
	ok(th_trees_equal(f.src, f.target, TH_CMP_MTIME), "the restored tree equals the source");

	th_rmtree(f.target);
	th_log_start("syncfs", "/target", 0);
	done = th_restore(location, f.target, &err);
	th_log_stop();
	ok(!done, "a restore whose syncfs fails fails");
	if (!done)
		like(err.message, "could not sync the file system of", "the error says so");
	ok(!th_exists(f.target), "and removes the target it created");
	th_fixture_done(&f);
}
