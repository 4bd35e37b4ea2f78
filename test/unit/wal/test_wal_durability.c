/*
 * test_wal_durability.c
 *		A WAL file counts as archived only once it is durable: written to a
 *		temporary file that is fsynced, renamed into place, and its folder
 *		fsynced (and the folders made for it, before it).  When any of those
 *		fails, the push fails and leaves no file behind, so PostgreSQL keeps
 *		the segment and tries again.  A restored file is fsynced before its
 *		rename too.  (syscall_log.h logs and fails the calls.)
 */
#include <stdio.h>
#include <string.h>

#include "syscall_log.h"
#include "tests.h"
#include "wal_fixture.h"

/* The logged order of one push into folders that do not exist yet. */
void
test_wal_durability_order(void)
{
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalPushResult r;
	char		path[PATH_MAX];
	char		folder[PATH_MAX];
	char		wal[PATH_MAX];
	char		temp[PATH_MAX];
	const char *seg = th_wal_name(1, 1);
	int			made_wal,
				made_sysid,
				synced,
				renamed,
				folder_synced;

	th_wal_fixture(&w, "waldurable", 1);
	th_wal_options(&o, &w);
	th_wal_source(&w, seg, TH_WAL_SEGMENT, 1, true, path);
	th_log_start(NULL, NULL, 0);
	ok(th_wal_push_one(&o, &w, seg, &r), "the segment is archived");
	th_log_stop();
	th_wal_folder(&w, 0, folder);
	th_path(wal, "%s/wal", w.f.dest[0]);
	th_path(temp, "%s/%s.sbw.tmp.", folder, seg);
	made_wal = th_log_find("fsync", w.f.dest[0], false);
	made_sysid = th_log_find("fsync", wal, false);
	synced = th_log_find_prefix("fsync", temp, false);
	renamed = th_log_find("rename", th_wal_archived(&w, 0, seg, path), false);
	folder_synced = th_log_find("fsync", folder, true);
	ok(made_wal >= 0 && made_sysid > made_wal, "the destination is fsynced once \"wal\" is made in it, then \"wal\" once the system identifier's folder is");
	ok(synced > made_sysid, "the temporary file is fsynced after (%d > %d)", synced, made_sysid);
	ok(renamed > synced, "then renamed to its name (%d > %d)", renamed, synced);
	ok(folder_synced > renamed, "then its folder is fsynced (%d > %d)", folder_synced, renamed);
	if (th_failures() > 0)
		th_log_diag();

	th_wal_source(&w, th_wal_name(1, 2), TH_WAL_SEGMENT, 2, true, path);
	th_log_start(NULL, NULL, 0);
	ok(th_wal_push_one(&o, &w, th_wal_name(1, 2), &r), "a second segment is archived");
	th_log_stop();
	is_int(th_log_count("fsync"), 2, "with two fsyncs: the file and its folder (the folders are there)");
	ok(th_log_find("fsync", folder, false) > th_log_find("rename", th_wal_archived(&w, 0, th_wal_name(1, 2), path), false),
	   "the folder's after the rename");
	th_wal_fixture_done(&w);
}

/* Each step failing fails the push and leaves nothing; then a push succeeds. */
void
test_wal_durability_failures(void)
{
	static const struct
	{
		const char *op;
		const char *pattern;
		const char *message;
		const char *what;
	}			cases[] = {
		{"fsync", "*.sbw.tmp.", "could not fsync", "the temporary file's fsync fails"},
		{"rename", ".sbw", "could not rename", "the rename fails"},
		{"fsync", "/wal", "could not fsync", "the fsync of a folder made fails"},
	};
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		ThWal		w;
		SbWalArchiveOptions o;
		SbWalPushResult r;
		SbError		err;
		char		path[PATH_MAX];
		const char *seg = th_wal_name(1, 1);

		th_wal_fixture(&w, "walsyncfail", 2);
		th_wal_options(&o, &w);
		th_wal_source(&w, seg, TH_WAL_SEGMENT, 1, true, path);
		th_log_start(cases[i].op, cases[i].pattern, 0);
		ok(!th_wal_push_one(&o, &w, seg, &r), "%s: the push fails", cases[i].what);
		th_log_stop();
		like(r.error.message, cases[i].message, "%s: saying what failed", cases[i].what);
		like(r.error.message, "Input/output error", "%s: and why", cases[i].what);
		is_int(th_wal_holder(&w, seg), -1, "%s: nothing is archived", cases[i].what);
		ok(th_count_entries(th_wal_folder(&w, 0, path)) <= 0 &&
		   th_count_entries(th_wal_folder(&w, 1, path)) <= 0, "%s: no file is left", cases[i].what);
		ok(th_wal_push_one(&o, &w, seg, &r) && th_wal_get_equal(&w, seg, &err),
		   "%s: PostgreSQL's next try archives it", cases[i].what);
		th_wal_fixture_done(&w);
	}
}

/* The folder's fsync after the rename fails: not archived; the next try finds it and syncs anew. */
void
test_wal_durability_folder_sync(void)
{
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalPushResult r;
	char		path[PATH_MAX];
	char		folder[PATH_MAX];
	const char *seg = th_wal_name(1, 4);

	th_wal_fixture(&w, "walfoldersync", 1);
	th_wal_options(&o, &w);
	th_wal_source(&w, seg, TH_WAL_SEGMENT, 4, true, path);
	ok(th_wal_push_one(&o, &w, th_wal_name(1, 4), &r), "an archive with its folders made");
	th_wal_source(&w, th_wal_name(1, 5), TH_WAL_SEGMENT, 5, true, path);
	th_log_start("fsync", th_wal_folder(&w, 0, folder), 0);
	ok(!th_wal_push_one(&o, &w, th_wal_name(1, 5), &r), "a push whose folder fsync fails fails");
	th_log_stop();
	like(r.error.message, "could not fsync folder", "saying so");
	th_log_start(NULL, NULL, 0);
	ok(th_wal_push_one(&o, &w, th_wal_name(1, 5), &r) && r.already_archived,
	   "the retry finds the file, the same");
	th_log_stop();
	th_wal_fixture_done(&w);
}

/*
 * A restored file is written under its temporary name and renamed into
 * place, not fsynced: PostgreSQL reads it at once, and after a crash
 * recovery asks for it again.  A failed write leaves nothing.
 */
void
test_wal_durability_get(void)
{
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalPushResult r;
	SbWalGetOptions go;
	SbWalGetResult gr;
	SbError		err;
	char		path[PATH_MAX];
	char		target[PATH_MAX];
	char		temp[PATH_MAX];
	const char *seg = th_wal_name(1, 9);
	bool		done;

	th_wal_fixture(&w, "walgetsync", 1);
	th_wal_options(&o, &w);
	th_wal_source(&w, seg, TH_WAL_SEGMENT, 9, true, path);
	ok(th_wal_push_one(&o, &w, seg, &r), "archived");
	memset(&go, 0, sizeof(go));
	go.dests = w.dests;
	th_path(target, "%s/RECOVERYXLOG", w.f.root);
	th_path(temp, "%s/RECOVERYXLOG.stripebackup.tmp", w.f.root);
	th_log_start(NULL, NULL, 0);
	done = sb_wal_get(&go, seg, target, &gr, &err);
	th_log_stop();
	ok(done && th_wal_get_equal(&w, seg, &err), "restored");
	ok(th_log_find("rename", target, false) >= 0, "renamed into place from its temporary name");
	ok(th_log_find("fsync", temp, false) < 0 && th_log_find("fsync", w.f.root, true) < 0,
	   "neither it nor its folder fsynced");
	th_log_start("pwrite", ".stripebackup.tmp", 0);
	done = sb_wal_get(&go, seg, th_path(target, "%s/other", w.f.root), &gr, &err);
	th_log_stop();
	ok(!done && th_log_failed() && !th_exists(target) &&
	   !th_exists(th_path(temp, "%s/other.stripebackup.tmp", w.f.root)),
	   "a failed write fails the restore and leaves nothing");
	th_wal_fixture_done(&w);
}
