/*
 * test_backup_incremental.c
 *		Backups of changed blocks, and restoring a chain of them: a full
 *		backup, then incrementals of a tree whose "relation files" (under
 *		base/) have an LSN in the first 8 bytes of every 8 KiB block.  A
 *		restore of the newest must give the tree as it was at its backup,
 *		whatever was changed, truncated, grown, dropped or made again; a
 *		missing or impostor link is refused before anything is written.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_merge.h"
#include "harness.h"
#include "tests.h"

#define BLOCK 8192

/* The "LSN" the tree's writes stamp, and the threshold a backup compares with. */
typedef struct Lsns
{
	uint64_t	now;			/* stamped into blocks written next */
	uint64_t	threshold;		/* a backup stores blocks at or after it */
	uint64_t	taken;			/* "now" when the last backup was taken */
	bool		skip;			/* take files whose times did not change unread */
	bool		parent_table;	/* open the parent's whole table, not (as the
								 * server does) its entries spooled to be
								 * looked up */
	const char *named_path;		/* the file whose changed blocks are named */
	const uint32_t *named;		/* (as WAL summaries would name them) */
	uint32_t	nnamed;
	uint32_t	judged;			/* blocks the block filter saw */
} Lsns;

static bool
under_base(void *arg, const char *path)
{
	(void) arg;
	return strncmp(path, "base/", 5) == 0;
}

static bool
any_file(void *arg, const char *path)
{
	(void) arg;
	(void) path;
	return true;
}

static bool
changed_since(void *arg, const char *path, int fd, uint64_t offset, const uint8_t *block)
{
	const Lsns *l = arg;
	uint64_t	lsn;

	(void) path;
	(void) fd;
	(void) offset;
	memcpy(&lsn, block, sizeof(lsn));
	((Lsns *) arg)->judged++;
	return lsn >= l->threshold;
}

/* The blocks of L's named file, as a summary names them; any other file: unknown. */
static bool
named_blocks(void *arg, const char *path, uint64_t size, const uint32_t **blocks, uint32_t *nblocks)
{
	const Lsns *l = arg;

	(void) size;
	if (l->named_path == NULL || strcmp(path, l->named_path) != 0)
		return false;
	*blocks = l->named;
	*nblocks = l->nnamed;
	return true;
}

/* Write blocks [FIRST, FIRST + N) of PATH: the current LSN, then a pattern. */
static bool
write_blocks(const char *path, Lsns *l, uint64_t first, uint64_t n)
{
	int			fd = open(path, O_WRONLY | O_CREAT, 0600);
	uint8_t		block[BLOCK];
	uint64_t	b;
	bool		good = fd >= 0;

	for (b = first; good && b < first + n; b++)
	{
		th_fill(block, BLOCK, (uint32_t) (l->now * 1000 + b), true);
		memcpy(block, &l->now, sizeof(l->now));
		good = pwrite(fd, block, BLOCK, (off_t) (b * BLOCK)) == BLOCK;
	}
	if (fd >= 0)
		close(fd);
	l->now++;
	return good;
}

/* Back up the fixture's source as NAME, a child of PARENT_NAME when not NULL. */
static bool
backup_as(ThFixture *f, const char *name, const char *parent_name, Lsns *l, SbManifest **m)
{
	SbBackupOptions o;
	SbArchive  *parent = NULL;
	SbError		err;
	char		location[PATH_MAX];
	bool		done;

	th_options(&o, f->dests, f->ndests, name);
	o.file_stamps = true;
	if (parent_name != NULL)
	{
		th_location(f, 0, parent_name, location);
		parent = l->parent_table ? sb_archive_open(location, &err) :
			sb_archive_open_with(location,
						&(SbArchiveOpenOptions){.keep = SB_KEEP_LOOKUP, .spool_dir = f->root}, &err);
		if (parent == NULL)
		{
			th_diag_error("open parent", &err);
			return false;
		}
		if (!l->parent_table && (parent->manifest->streamed == NULL || parent->manifest->nentries != 0 ||
								 (parent->parent != NULL && !parent->parent->manifest->head_only)))
		{
			diag("the parent's entries were not left in a spool to be looked up, or its parent's were read");
			sb_archive_close(parent);
			return false;
		}
		o.type = SB_BACKUP_INCR;
		o.parent = parent->manifest;
		o.block_size = BLOCK;
		o.hooks.file_filter = under_base;
		o.hooks.block_filter = changed_since;
		o.hooks.filter_arg = l;
		o.hooks.skip_filter = l->skip ? any_file : NULL;
		o.hooks.changed_blocks = l->named_path ? named_blocks : NULL;
		o.hooks.changed_blocks_arg = l;
		l->threshold = l->taken;	/* what was written since the parent */
	}
	done = th_backup_tree(&o, f->src, m, &err);
	l->taken = l->now;
	if (!done)
		th_diag_error(name, &err);
	sb_archive_close(parent);
	return done;
}

/* Restore NAME from destination 1 into a fresh target and compare with the source. */
static void
restore_matches(ThFixture *f, const char *name, const char *what)
{
	char		location[PATH_MAX];
	SbError		err;
	bool		restored;

	th_rmtree(f->target);
	th_location(f, 0, name, location);
	is_int(th_verify(location), 0, "%s: verify of the chain finds no problem", what);
	restored = th_restore(location, f->target, &err);
	if (!ok(restored, "%s: the chain restores", what))
		th_diag_error("restore", &err);
	ok(restored && th_trees_equal(f->src, f->target, TH_CMP_MTIME),
	   "%s: the restored tree is the source, modes and times too", what);
}

/* A tree, a full backup, then two incrementals after changes of every kind. */
void
test_incremental_chain(void)
{
	ThFixture	f;
	Lsns		l = {1, 0, 0, false, false, NULL, NULL, 0, 0};
	SbManifest *full = NULL,
			   *incr1 = NULL,
			   *incr2 = NULL;
	char		path[PATH_MAX];
	const SbEntry *e;

	th_begin("incremental: a chain of changed blocks restores to the newest tree");
	th_fixture(&f, "incr-chain", 2);
	th_mkdir(th_path(path, "%s/base", f.src), 0700);
	th_mkdir(th_path(path, "%s/base/1", f.src), 0700);
	write_blocks(th_path(path, "%s/base/1/100", f.src), &l, 0, 64);
	write_blocks(th_path(path, "%s/base/1/200", f.src), &l, 0, 16);
	write_blocks(th_path(path, "%s/base/1/300", f.src), &l, 0, 8);
	th_write_pattern(th_path(path, "%s/postgresql.conf", f.src), 5000, 7, true, 0600);
	ok(backup_as(&f, "full", NULL, &l, &full), "the full backup is taken");

	/* blocks changed and added, a file truncated, one dropped, one new, a config edited */
	write_blocks(th_path(path, "%s/base/1/100", f.src), &l, 3, 1);
	write_blocks(th_path(path, "%s/base/1/100", f.src), &l, 10, 2);
	write_blocks(th_path(path, "%s/base/1/100", f.src), &l, 64, 4);
	ok(truncate(th_path(path, "%s/base/1/200", f.src), 2 * BLOCK) == 0, "200 truncated");
	unlink(th_path(path, "%s/base/1/300", f.src));
	write_blocks(th_path(path, "%s/base/1/400", f.src), &l, 0, 5);
	th_write_pattern(th_path(path, "%s/postgresql.conf", f.src), 6000, 8, true, 0600);
	l.parent_table = true;
	ok(backup_as(&f, "incr1", "full", &l, &incr1),
	   "the first incremental is taken (its parent's table read whole)");
	e = th_find_entry(incr1, "base/1/100");
	ok(e != NULL && e->incremental && e->nextents == 3 &&
	   e->stream_length == 7 * BLOCK && e->size == 68 * BLOCK,
	   "100: only its 7 changed or new blocks are stored, in 3 extents");
	e = th_find_entry(incr1, "base/1/200");
	ok(e != NULL && e->incremental && e->nextents == 0 && e->size == 2 * BLOCK,
	   "200: truncated, nothing stored, its new length recorded");
	e = th_find_entry(incr1, "base/1/400");
	ok(e != NULL && !e->incremental, "400: new since the parent, stored whole");
	ok(th_find_entry(incr1, "base/1/300") == NULL, "300: dropped, not listed");
	ok(incr1 && incr1->type == SB_BACKUP_INCR && incr1->parent != NULL &&
	   strcmp(incr1->parent->name, "full") == 0 &&
	   memcmp(incr1->parent->uuid, full->uuid, 16) == 0,
	   "the manifest names its parent");
	restore_matches(&f, "incr1", "full + 1 incremental");

	/* more: 200 grows back with new blocks, 100 changes again, 400 made again */
	write_blocks(th_path(path, "%s/base/1/200", f.src), &l, 2, 4);
	write_blocks(th_path(path, "%s/base/1/100", f.src), &l, 5, 1);
	unlink(th_path(path, "%s/base/1/400", f.src));
	l.now = 1;					/* old LSNs: only its identity tells it is another file */
	write_blocks(th_path(path, "%s/base/1/400", f.src), &l, 0, 5);
	l.now = 100;
	l.parent_table = false;
	ok(backup_as(&f, "incr2", "incr1", &l, &incr2),
	   "the second incremental is taken (its parent's entries looked up, the full backup's members alone read)");
	e = th_find_entry(incr2, "base/1/400");
	ok(e != NULL && !e->incremental && e->stream_length == 5 * BLOCK,
	   "400: made again under the same name, stored whole despite its old LSNs");
	e = th_find_entry(incr2, "base/1/100");
	ok(e != NULL && e->incremental && e->stream_length == BLOCK, "100: one block stored");
	restore_matches(&f, "incr2", "full + 2 incrementals");

	sb_manifest_free(full);
	sb_manifest_free(incr1);
	sb_manifest_free(incr2);
	th_fixture_done(&f);
}

/* Move NAME's folder aside in every destination (or back). */
static void
move_backup(ThFixture *f, const char *from, const char *to)
{
	char		a[PATH_MAX],
				b[PATH_MAX];
	uint32_t	i;

	for (i = 0; i < f->ndests; i++)
		rename(th_location(f, i, from, a), th_location(f, i, to, b));
}

/* A chain with a link missing or replaced is refused, naming the link. */
void
test_incremental_broken_chain(void)
{
	ThFixture	f;
	Lsns		l = {1, 0, 0, false, false, NULL, NULL, 0, 0};
	SbManifest *m = NULL;
	char		path[PATH_MAX];
	char		location[PATH_MAX];
	SbArchive  *a;
	SbError		err;

	th_begin("incremental: a missing or impostor link is refused");
	th_fixture(&f, "incr-broken", 2);
	th_mkdir(th_path(path, "%s/base", f.src), 0700);
	write_blocks(th_path(path, "%s/base/100", f.src), &l, 0, 16);
	ok(backup_as(&f, "full", NULL, &l, &m), "full");
	sb_manifest_free(m);
	write_blocks(th_path(path, "%s/base/100", f.src), &l, 1, 1);
	ok(backup_as(&f, "incr1", "full", &l, &m), "incr1");
	sb_manifest_free(m);
	write_blocks(th_path(path, "%s/base/100", f.src), &l, 2, 1);
	ok(backup_as(&f, "incr2", "incr1", &l, &m), "incr2");
	sb_manifest_free(m);
	th_location(&f, 0, "incr2", location);

	move_backup(&f, "incr1", "elsewhere");
	a = sb_archive_open(location, &err);
	ok(a == NULL && err.code == SB_ENOTFOUND, "a missing middle link: the chain does not open");
	like(err.message, "\"incr1\"", "the error names the missing backup");
	like(err.message, "incr2", "and the backup that needs it");
	sb_archive_close(a);
	ok(!th_restore(location, f.target, &err) && !th_exists(f.target),
	   "restore refuses before writing anything");

	/* another backup under the parent's name */
	move_backup(&f, "full", "full-old");
	ok(backup_as(&f, "incr1", "full-old", &l, &m), "an impostor takes the name incr1");
	sb_manifest_free(m);
	a = sb_archive_open(location, &err);
	ok(a == NULL, "an impostor parent: the chain does not open");
	like(err.message, "another backup", "the error says the folder holds another backup");
	sb_archive_close(a);
	th_fixture_done(&f);
}

/* A tree of one relation file (base/100, 32 blocks), a full backup, one block changed, an incremental. */
static bool
full_and_incr(ThFixture *f, const char *tag)
{
	Lsns		l = {1, 0, 0, false, false, NULL, NULL, 0, 0};
	SbManifest *m = NULL;
	char		path[PATH_MAX];
	bool		done;

	th_fixture(f, tag, 1);
	th_mkdir(th_path(path, "%s/base", f->src), 0700);
	write_blocks(th_path(path, "%s/base/100", f->src), &l, 0, 32);
	done = ok(backup_as(f, "full", NULL, &l, &m), "full");
	sb_manifest_free(m);
	m = NULL;
	write_blocks(th_path(path, "%s/base/100", f->src), &l, 1, 1);
	done = ok(backup_as(f, "incr", "full", &l, &m), "incr") && done;
	sb_manifest_free(m);
	return done;
}

/* Flip a payload byte of the first or the last chunk of the full backup's stripe 1. */
static bool
damage_full(ThFixture *f, bool last)
{
	char		stripe[PATH_MAX];
	SbTrailer	t;
	SbIndexEntry *entries = NULL;
	uint64_t	n = 0;
	bool		done;

	done = th_read_index(th_stripe_path(f, 1, "full", stripe), &t, &entries, &n) && n > 0 &&
		th_flip_byte(stripe, entries[last ? n - 1 : 0].offset + SB_CHUNK_HEADER_SIZE + 1, 0x10);
	free(entries);
	return done;
}

/* A damaged parent: verify of the child names it, and a restore of the child fails clean. */
void
test_incremental_damaged_parent(void)
{
	ThFixture	f;
	char		location[PATH_MAX];
	ThProblems	problems;
	SbArchive  *a;
	SbError		err;
	uint64_t	found = 0;
	int			i;
	bool		named = false;

	th_begin("incremental: a damaged parent is found by verify and stops the restore");
	full_and_incr(&f, "incr-damaged");
	ok(damage_full(&f, true), "a byte of the parent's last chunk flipped");

	a = sb_archive_open(th_location(&f, 0, "incr", location), &err);
	memset(&problems, 0, sizeof(problems));
	ok(a != NULL && sb_archive_verify(a, &(SbReadOptions) {0}, th_collect_problem, &problems, &found, &err),
	   "verify of the chain runs");
	ok(found >= 1, "and finds the damage");
	for (i = 0; i < problems.n; i++)
		named = named || strstr(problems.items[i].message, "in backup \"full\", which backup \"incr\" needs") != NULL;
	ok(named, "naming the damaged backup and the one that needs it");
	th_free_problems(&problems);
	sb_archive_close(a);
	ok(!th_restore(location, f.target, &err) && err.code == SB_ECORRUPT, "the restore fails");
	ok(!th_exists(f.target), "and leaves nothing behind");
	th_fixture_done(&f);
}

/*
 * A full and an incremental backup (F, TAG), the incremental's manifest
 * edited (FROM to TO) and its stripe bound to it again: authentic, and
 * wrong.  Its location into LOCATION.
 */
static void
edited_incr(ThFixture *f, const char *tag, const char *from, const char *to, const char *what,
			char *location)
{
	char		manifest[PATH_MAX];
	char		stripe[PATH_MAX];
	const char *stripes[1] = {stripe};

	full_and_incr(f, tag);
	th_location(f, 0, "incr", location);
	th_path(manifest, "%s/manifest.json", location);
	th_stripe_path(f, 1, "incr", stripe);
	ok(th_edit_file(manifest, from, to) && th_rebind_stripes(manifest, stripes, 1), "%s", what);
}

/* A chain whose manifests, each authentic, leave a byte of a file in no backup: refused up front. */
void
test_incremental_uncovered_bytes(void)
{
	ThFixture	f;
	char		location[PATH_MAX];
	SbError		err;

	th_begin("incremental: bytes no backup of the chain holds are refused before writing");
	edited_incr(&f, "incr-uncovered", "\"size\":262144", "\"size\":270336",
				"the incremental's manifest says the file is a block longer than any backup holds",
				location);
	/* the longer file also has another CRC-32C (its stored blocks and zeros) */
	is_int(th_verify(location), 2, "verify reports the chain's hole, and the CRC-32C the new length changes");
	ok(!th_restore(location, f.target, &err) && err.code == SB_ECORRUPT, "the restore is refused");
	like(err.message, "byte 262144 is in no backup of the chain", "naming the first byte missing");
	ok(!th_exists(f.target), "before anything is written");
	th_fixture_done(&f);
}

/* A file stored as changed blocks that its parent does not have: refused up front, naming both. */
void
test_incremental_missing_in_parent(void)
{
	ThFixture	f;
	char		location[PATH_MAX];
	SbError		err;

	th_begin("incremental: a file its parent lacks is refused before writing");
	edited_incr(&f, "incr-missing", "\"base/100\"", "\"base/109\"",
				"the incremental's manifest names its changed file base/109, which the full backup lacks",
				location);
	ok(!th_restore(location, f.target, &err) && err.code == SB_ECORRUPT, "the restore is refused");
	like(err.message, "\"base/109\" is stored as changed blocks, but backup \"full\", which holds the rest, has no such file",
		 "naming the file and the backup that lacks it");
	ok(!th_exists(f.target), "before anything is written");
	is_int(th_verify(location), 1, "verify reports it");
	th_fixture_done(&f);
}

/*
 * Files whose size and times did not change are taken from the parent
 * unread; a changed file, or one whose time was put back after a change (its
 * change time tells), is read.
 */
void
test_incremental_unchanged_files(void)
{
	ThFixture	f;
	Lsns		l = {1, 0, 0, true, false, NULL, NULL, 0, 0};
	SbManifest *m = NULL;
	char		path[PATH_MAX];
	const SbEntry *e;
	const char *names[] = {"cold", "hot", "put-back", "chmod"};
	int			i;

	th_begin("incremental: unchanged files are taken from the parent unread");
	th_fixture(&f, "incr-unchanged", 1);
	th_mkdir(th_path(path, "%s/base", f.src), 0700);
	for (i = 0; i < 4; i++)
	{
		write_blocks(th_path(path, "%s/base/%s", f.src, names[i]), &l, 0, i < 3 ? 16 : 1);
		th_set_mtime(path, 1600000000);		/* long before the backup */
	}
	ok(backup_as(&f, "full", NULL, &l, &m), "full");
	sb_manifest_free(m);
	write_blocks(th_path(path, "%s/base/hot", f.src), &l, 3, 1);
	write_blocks(th_path(path, "%s/base/put-back", f.src), &l, 5, 1);
	th_set_mtime(path, 1600000000);
	/* its bytes the full backup's alone: created by the full backup's read, with the newest mode and time */
	ok(chmod(th_path(path, "%s/base/chmod", f.src), 0640) == 0 && th_set_mtime(path, 1650000000),
	   "a file's mode and time changed, not its bytes");
	ok(backup_as(&f, "incr", "full", &l, &m), "incremental");
	e = th_find_entry(m, "base/chmod");
	ok(e != NULL && e->incremental && e->stream_length == 0 && e->mode == 0640 && e->mtime == 1650000000,
	   "its entry: nothing stored, the new mode and time");
	e = th_find_entry(m, "base/cold");
	ok(e != NULL && e->incremental && e->nextents == 0 && e->stream_length == 0,
	   "a file whose size and times are the parent's: nothing stored");
	e = th_find_entry(m, "base/hot");
	ok(e != NULL && e->incremental && e->stream_length == BLOCK, "a changed file: its changed block");
	e = th_find_entry(m, "base/put-back");
	ok(e != NULL && e->incremental && e->stream_length == BLOCK,
	   "a file changed and its modification time put back: read (its change time moved)");
	sb_manifest_free(m);
	restore_matches(&f, "incr", "unchanged files");
	th_fixture_done(&f);
}

/* A chain whose newest backup stores every file whole needs nothing of the older ones' data. */
void
test_incremental_nothing_from_parent(void)
{
	ThFixture	f;
	Lsns		l = {1, 0, 0, false, false, NULL, NULL, 0, 0};
	SbManifest *m = NULL;
	char		path[PATH_MAX];
	char		location[PATH_MAX];
	SbError		err;

	th_begin("incremental: a parent no file takes anything from is not read");
	th_fixture(&f, "incr-nothing", 1);
	th_write_pattern(th_path(path, "%s/config", f.src), 20000, 3, true, 0600);
	ok(backup_as(&f, "full", NULL, &l, &m), "full");
	sb_manifest_free(m);
	th_write_pattern(th_path(path, "%s/config", f.src), 30000, 4, true, 0600);
	ok(backup_as(&f, "incr", "full", &l, &m), "incr: its one file is not judged by block, so whole");
	sb_manifest_free(m);
	ok(damage_full(&f, false), "a byte of the parent's data flipped");
	th_location(&f, 0, "incr", location);
	is_int(th_verify(location), 1, "verify of the chain finds it");
	ok(th_restore(location, f.target, &err) && th_trees_equal(f.src, f.target, 0),
	   "the restore does not read the parent's data, and gives the tree");
	th_fixture_done(&f);
}

/*
 * Open the chain ending at NAME and begin merging it into MERGED
 * (destinations of F); STREAMED: holding no file table, as the server does.
 */
static SbMerge *
begin_merge(ThFixture *f, const char *name, const char *merged, const char *staging,
			bool streamed, SbArchive **chain, SbError *err)
{
	SbMergeOptions o;
	char		location[PATH_MAX];

	th_location(f, 0, name, location);
	*chain = streamed ?
		sb_archive_open_with(location, &(SbArchiveOpenOptions){.keep = SB_KEEP_LOOKUP,
							 .parents_streamed = true, .spool_dir = f->root}, err) :
		sb_archive_open(location, err);
	if (*chain == NULL)
		return NULL;
	memset(&o, 0, sizeof(o));
	th_options(&o.backup, f->dests, f->ndests, merged);
	o.backup.spill_dir = streamed ? f->root : NULL;
	o.staging = staging;
	return sb_merge_begin(*chain, &o, err);
}

/* Merge the chain ending at NAME into MERGED (destinations of F), with scratch folder STAGING. */
static bool
merge_as(ThFixture *f, const char *name, const char *merged, const char *staging, bool streamed,
		 SbManifest **m, SbError *err)
{
	SbArchive  *chain;
	SbMerge    *mg = begin_merge(f, name, merged, staging, streamed, &chain, err);
	bool		done = mg != NULL && sb_merge_copy(mg, err);

	if (mg != NULL && done)
		done = sb_merge_finish(mg, m, err);
	else if (mg != NULL)
		sb_merge_abort(mg);
	sb_archive_close(chain);
	return done;
}

/* Begin merging NAME into MERGED and stop there, as a crash would: the scratch folder stays. */
static bool
left_by_a_crash(ThFixture *f, const char *name, const char *merged, const char *staging)
{
	SbArchive  *chain;
	SbError		err;
	SbMerge    *mg = begin_merge(f, name, merged, staging, true, &chain, &err);
	char		moved[PATH_MAX];
	bool		done;

	/* keep the folder from the abort that follows */
	done = mg != NULL && rename(staging, th_path(moved, "%s.kept", staging)) == 0;
	sb_merge_abort(mg);
	sb_archive_close(chain);
	return done && rename(moved, staging) == 0;
}

/* Do M's entries record what REF's record of each file: identity, times, mode, size? */
static bool
same_stamps(const SbManifest *m, const SbManifest *ref)
{
	size_t		i;

	if (m == NULL || ref == NULL || m->nentries != ref->nentries)
		return false;
	for (i = 0; i < m->nentries; i++)
	{
		const SbEntry *a = &m->entries[i],
				   *b = &ref->entries[i];

		if (strcmp(a->path, b->path) != 0 || a->mode != b->mode || a->mtime != b->mtime ||
			a->size != b->size || a->incremental ||
			(a->file_id != b->file_id && (!a->file_id || !b->file_id || strcmp(a->file_id, b->file_id))) ||
			(a->file_times != b->file_times &&
			 (!a->file_times || !b->file_times || strcmp(a->file_times, b->file_times))))
			return false;
	}
	return true;
}

/* The chain ending at incr2 merged again, holding no file table: the same entries. */
static void
merged_streamed(ThFixture *f, const char *staging, const SbManifest *incr2)
{
	char		location[PATH_MAX];
	SbArchive  *a;
	SbError		err;
	bool		done = merge_as(f, "incr2", "merged-streamed", staging, true, NULL, &err);

	if (!ok(done, "the chain merges with every backup's entries in a private file, none in memory"))
		th_diag_error("merge", &err);
	a = sb_archive_open(th_location(f, 0, "merged-streamed", location), &err);
	ok(a != NULL && same_stamps(a->manifest, incr2),
	   "its entries record the newest's mode, time, size, identity and times");
	ok(!th_exists(staging), "the scratch folder is gone");
	sb_archive_close(a);
	restore_matches(f, "merged-streamed", "the merged backup, streamed");
}

/*
 * A chain merged into a full backup: the same tree, the newest's stamps and
 * start (so an incremental of the merged backup stores only what changed),
 * the scratch folder gone; a damaged chain merges into nothing.
 */
void
test_incremental_merge(void)
{
	ThFixture	f;
	Lsns		l = {1, 0, 0, false, false, NULL, NULL, 0, 0};
	SbManifest *m = NULL,
			   *incr2 = NULL,
			   *merged = NULL;
	char		path[PATH_MAX];
	char		staging[PATH_MAX];
	char		location[PATH_MAX];
	const SbEntry *e;
	SbError		err;
	bool		removed;

	th_begin("merge: a chain folded into a full backup of the same moment");
	th_fixture(&f, "merge", 2);
	th_mkdir(th_path(path, "%s/base", f.src), 0700);
	write_blocks(th_path(path, "%s/base/100", f.src), &l, 0, 40);
	write_blocks(th_path(path, "%s/base/200", f.src), &l, 0, 8);
	th_write_pattern(th_path(path, "%s/postgresql.conf", f.src), 5000, 7, true, 0600);
	ok(backup_as(&f, "full", NULL, &l, &m), "full");
	sb_manifest_free(m);
	write_blocks(th_path(path, "%s/base/100", f.src), &l, 2, 3);
	ok(truncate(th_path(path, "%s/base/200", f.src), 3 * BLOCK) == 0, "200 truncated");
	ok(backup_as(&f, "incr1", "full", &l, &m), "incr1");
	sb_manifest_free(m);
	m = NULL;
	write_blocks(th_path(path, "%s/base/100", f.src), &l, 30, 12);
	write_blocks(th_path(path, "%s/base/300", f.src), &l, 0, 4);
	ok(backup_as(&f, "incr2", "incr1", &l, &incr2), "incr2");

	th_path(staging, "%s/scratch", f.root);
	ok(merge_as(&f, "incr2", "merged", staging, false, &merged, &err), "the chain merges");
	if (merged == NULL)
		th_diag_error("merge", &err);
	ok(merged && merged->type == SB_BACKUP_FULL && merged->parent == NULL,
	   "the merged backup is full, with no parent");
	ok(merged && incr2 && strcmp(merged->started_at, incr2->started_at) == 0,
	   "it keeps the start time of the chain's newest backup");
	ok(same_stamps(merged, incr2), "every entry records the newest's mode, time, size, identity and times");
	ok(!th_exists(staging), "the scratch folder is gone");
	restore_matches(&f, "merged", "the merged backup");
	merged_streamed(&f, staging, incr2);

	write_blocks(th_path(path, "%s/base/100", f.src), &l, 7, 1);
	ok(backup_as(&f, "incr3", "merged", &l, &m), "an incremental of the merged backup");
	e = th_find_entry(m, "base/100");
	ok(e != NULL && e->incremental && e->stream_length == BLOCK,
	   "it stores only the block changed since (the files are the same files)");
	restore_matches(&f, "incr3", "merged + 1 incremental");

	ok(th_mkdir(staging, 0700), "a scratch folder left by someone");
	ok(!merge_as(&f, "incr2", "merged2", staging, true, NULL, &err), "a merge into it is refused");
	like(err.message, "exists already", "the error names the folder that exists");
	ok(!th_exists(th_location(&f, 0, "merged2", location)), "and no backup folder was made");
	rmdir(staging);

	ok(damage_full(&f, true), "a byte of the full backup's data flipped");
	ok(!merge_as(&f, "incr2", "merged3", staging, true, NULL, &err), "a damaged chain does not merge");
	ok(!th_exists(staging) && !th_exists(th_location(&f, 0, "merged3", location)),
	   "nothing stays of it: neither the scratch folder nor the new backup");

	ok(th_mkdir(staging, 0700) &&
	   th_write_file(th_path(path, "%s/%s", staging, SB_MERGE_MARKER_FILE), "x", 1, 0600),
	   "a folder whose marker is not the merge's");
	ok(sb_merge_remove_staging(staging, "merged3", &removed, &err) && !removed && th_exists(staging),
	   "crash clean-up leaves it");
	th_rmtree(staging);
	ok(left_by_a_crash(&f, "incr3", "merged4", staging), "a merge stopped halfway leaves its scratch folder");
	ok(sb_merge_remove_staging(staging, "merged4", &removed, &err) && removed && !th_exists(staging),
	   "crash clean-up of that backup removes it");
	sb_manifest_free(m);
	sb_manifest_free(incr2);
	sb_manifest_free(merged);
	th_fixture_done(&f);
}

/*
 * The chain ending at LOCATION restored as a delta into F's target, a copy
 * of the full backup plus a stray file; its manifests read whole, or a
 * window at a time (STREAMED).
 */
static void
delta_into_copy(ThFixture *f, const char *location, bool streamed)
{
	const char *how = streamed ? "a window at a time" : "tables read whole";
	char		full[PATH_MAX];
	char		path[PATH_MAX];
	SbRestoreOptions ro;
	SbRestoreStats stats;
	SbArchive  *a;
	SbError		err;
	bool		done;

	th_rmtree(f->target);
	ok(th_restore(th_location(f, 0, "full", full), f->target, &err), "%s: a copy of the full backup", how);
	th_write_pattern(th_path(path, "%s/base/junk", f->target), 100, 1, true, 0600);
	memset(&ro, 0, sizeof(ro));
	ro.target = f->target;
	ro.read.workers = 2;
	ro.read.window_files = 2;
	ro.delta = true;
	ro.stats = &stats;
	a = streamed ?
		sb_archive_open_with(location, &(SbArchiveOpenOptions){.keep = SB_KEEP_STREAMED,
							 .spool_dir = f->root}, &err) :
		sb_archive_open(location, &err);
	done = a != NULL && sb_archive_restore(a, &ro, &err);
	sb_archive_close(a);
	if (!ok(done, "%s: the chain restores into the copy, as a delta", how))
		th_diag_error("delta", &err);
	ok(th_trees_equal(f->src, f->target, 0), "%s: the copy is the newest tree", how);
	ok(stats.delta_removed == 1 && stats.delta_written == 5 * BLOCK,
	   "%s: what the copy lacked was written: 2 blocks changed and 3 of a new file (%llu bytes), 1 entry removed",
	   how, (unsigned long long) stats.delta_written);
}

/* A copy of the full backup, refreshed in place from the chain: the newest tree, only differing blocks written. */
void
test_incremental_delta(void)
{
	ThFixture	f;
	Lsns		l = {1, 0, 0, false, false, NULL, NULL, 0, 0};
	SbManifest *m = NULL;
	char		path[PATH_MAX];
	char		location[PATH_MAX];

	th_begin("incremental: a delta restore of a chain into a copy of its full backup");
	th_fixture(&f, "incr-delta", 2);
	th_mkdir(th_path(path, "%s/base", f.src), 0700);
	write_blocks(th_path(path, "%s/base/100", f.src), &l, 0, 64);
	write_blocks(th_path(path, "%s/base/200", f.src), &l, 0, 16);
	ok(backup_as(&f, "full", NULL, &l, &m), "full");
	sb_manifest_free(m);
	m = NULL;
	write_blocks(th_path(path, "%s/base/100", f.src), &l, 5, 2);
	ok(truncate(th_path(path, "%s/base/200", f.src), 4 * BLOCK) == 0, "200 cut");
	write_blocks(th_path(path, "%s/base/300", f.src), &l, 0, 3);
	ok(backup_as(&f, "incr", "full", &l, &m), "an incremental");
	th_location(&f, 0, "incr", location);
	delta_into_copy(&f, location, false);
	delta_into_copy(&f, location, true);
	sb_manifest_free(m);
	th_fixture_done(&f);
}

/*
 * Blocks named changed (WAL summaries): only they are read of the parent's
 * length, the rest is the parent's; blocks past the parent's end are read
 * anyway; a file not named is judged block by block; blocks out of order
 * fail the backup, naming the file.
 */
void
test_incremental_named_blocks(void)
{
	static const uint32_t named[] = {3, 10, 11, 65};
	static const uint32_t unordered[] = {4, 2};
	ThFixture	f;
	Lsns		l = {1, 0, 0, false, false, NULL, NULL, 0, 0};
	SbManifest *m = NULL;
	char		path[PATH_MAX];
	const SbEntry *e;

	th_begin("incremental: blocks named changed are the only ones read of a file");
	th_fixture(&f, "incr-named", 2);
	th_mkdir(th_path(path, "%s/base", f.src), 0700);
	write_blocks(th_path(path, "%s/base/100", f.src), &l, 0, 64);
	write_blocks(th_path(path, "%s/base/200", f.src), &l, 0, 16);
	ok(backup_as(&f, "full", NULL, &l, &m), "full");
	sb_manifest_free(m);
	m = NULL;
	write_blocks(th_path(path, "%s/base/100", f.src), &l, 3, 1);
	write_blocks(th_path(path, "%s/base/100", f.src), &l, 10, 2);
	write_blocks(th_path(path, "%s/base/100", f.src), &l, 64, 3);
	write_blocks(th_path(path, "%s/base/200", f.src), &l, 7, 1);
	l.named_path = "base/100";
	l.named = named;
	l.nnamed = 4;
	ok(backup_as(&f, "incr", "full", &l, &m), "an incremental with base/100's blocks named");
	e = th_find_entry(m, "base/100");
	ok(e != NULL && e->incremental && e->nextents == 3 && e->stream_length == 6 * BLOCK,
	   "100: its 3 named blocks and the 3 past the parent's end stored, in 3 extents");
	is_int((int) l.judged, 16, "only 200's 16 blocks went to the block filter");
	e = th_find_entry(m, "base/200");
	ok(e != NULL && e->incremental && e->stream_length == BLOCK, "200, not named: its changed block judged and stored");
	restore_matches(&f, "incr", "named blocks");
	sb_manifest_free(m);
	m = NULL;

	write_blocks(th_path(path, "%s/base/100", f.src), &l, 2, 3);
	l.named = unordered;
	l.nnamed = 2;
	{
		SbBackupOptions o;
		SbArchive  *parent;
		SbError		err;
		char		location[PATH_MAX];

		th_options(&o, f.dests, f.ndests, "bad");
		o.file_stamps = true;
		parent = sb_archive_open(th_location(&f, 0, "incr", location), &err);
		o.type = SB_BACKUP_INCR;
		o.parent = parent ? parent->manifest : NULL;
		o.block_size = BLOCK;
		o.hooks.file_filter = under_base;
		o.hooks.block_filter = changed_since;
		o.hooks.filter_arg = &l;
		o.hooks.changed_blocks = named_blocks;
		o.hooks.changed_blocks_arg = &l;
		ok(parent != NULL && !th_backup_tree(&o, f.src, &m, &err) &&
		   strstr(err.message, "\"base/100\" are not in order (block 2 after 4)") != NULL,
		   "blocks named out of order fail the backup, naming the file: %s", err.message);
		sb_manifest_free(m);
		sb_archive_close(parent);
	}
	th_fixture_done(&f);
}
