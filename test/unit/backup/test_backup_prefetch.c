/*
 * test_backup_prefetch.c
 *		sb_backup_add_files_at: a folder's files opened and read several at
 *		once make the same backup as one file at a time; a file gone is
 *		marked and skipped; anything else wrong stops the backup; a read hook
 *		still sees every block with its file open; no access time changes.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "tests.h"

#define NFILES 150
#define RUN 64
#define GONE_AT 70				/* a name given that is not there */

/* An access time, the modification time left as it is. */
static const struct timespec old_atime[2] = {{1000000000, 0}, {0, UTIME_OMIT}};

/* Sizes around the ones read whole at once (64 kB) and the 64 kB chunks. */
static const size_t sizes[] = {0, 1, 1000, 4096, 65535, 65536, 65537, 200000};

static void
make_source(const char *folder)
{
	char		path[PATH_MAX];
	int			i;

	th_mkdir(folder, 0750);
	for (i = 0; i < NFILES; i++)
		th_write_pattern(th_path(path, "%s/f%03d", folder, i), sizes[i % 8], (uint32_t) i, i % 3 == 0,
						 i % 2 ? 0640 : 0600);
	/* a file with a hole: not read whole at once, its data extents stored */
	{
		int			fd = open(th_path(path, "%s/f%03d", folder, NFILES - 1), O_WRONLY | O_TRUNC);

		ok(fd >= 0 && th_pwrite_pattern(fd, 3 * 65536, 4096, 9) && close(fd) == 0,
		   "a sparse file among them");
	}
	/* read before it was written: a read would now update it (relatime) */
	for (i = 0; i < NFILES; i++)
		(void) utimensat(AT_FDCWD, th_path(path, "%s/f%03d", folder, i), old_atime, 0);
}

/* How many of the source's files were read with their access time changed. */
static int
atimes_changed(const char *folder)
{
	char		path[PATH_MAX];
	struct stat st;
	int			changed = 0;
	int			i;

	for (i = 0; i < NFILES; i++)
		changed += stat(th_path(path, "%s/f%03d", folder, i), &st) != 0 ||
			st.st_atime != old_atime[0].tv_sec;
	return changed;
}

/* The names of the source, GONE_AT one that is not there. */
static void
name_files(SbFileAt *files, char (*paths)[64], char (*names)[32], const char *folder,
		   char (*sources)[PATH_MAX])
{
	int			i;

	for (i = 0; i <= NFILES; i++)
	{
		int			n = i < GONE_AT ? i : i == GONE_AT ? 999 : i - 1;

		snprintf(names[i], 32, "f%03d", n);
		snprintf(paths[i], 64, "run/f%03d", n);
		th_path(sources[i], "%s/%s", folder, names[i]);
		files[i].path = paths[i];
		files[i].name = names[i];
		files[i].source_path = sources[i];
	}
}

typedef struct HookSeen
{
	uint64_t	bytes;
	int			mismatches;		/* blocks whose bytes the file did not hold */
} HookSeen;

/* What the hook is given is what its file holds: the file is open while it runs. */
static bool
check_block(void *arg, const char *path, int fd, uint64_t offset, const uint8_t *data, size_t len,
			SbError *err)
{
	HookSeen   *seen = arg;
	uint8_t    *again = malloc(len + 1);

	(void) path;
	(void) err;
	if (again == NULL || pread(fd, again, len, (off_t) offset) != (ssize_t) len ||
		memcmp(again, data, len) != 0)
		seen->mismatches++;
	seen->bytes += len;
	free(again);
	return true;
}

/* Back up the source as NAME: its files in runs of RUN, or (RUNS false) one at a time. */
static SbManifest *
back_up(ThFixture *f, const char *name, bool runs, HookSeen *seen, int *gone)
{
	static SbFileAt files[NFILES + 1];
	static char paths[NFILES + 1][64];
	static char names[NFILES + 1][32];
	static char sources[NFILES + 1][PATH_MAX];
	char		folder[PATH_MAX];
	SbBackupOptions o;
	SbError		err;
	SbBackup   *b;
	struct stat top,
				run;
	int			dirfd = open(th_path(folder, "%s/run", f->src), O_RDONLY | O_DIRECTORY);
	bool		done;
	int			i;

	th_options(&o, f->dests, f->ndests, name);
	o.hooks.read = check_block;
	o.hooks.read_arg = seen;
	name_files(files, paths, names, folder, sources);
	b = sb_backup_begin(&o, &err);
	done = b != NULL && lstat(f->src, &top) == 0 && lstat(folder, &run) == 0 &&
		sb_backup_add_dir(b, ".", top.st_mode, top.st_mtime, &err) &&
		sb_backup_add_dir(b, "run", run.st_mode, run.st_mtime, &err);
	for (i = 0; done && i <= NFILES; i += runs ? RUN : 1)
	{
		uint32_t	n = runs ? (uint32_t) (NFILES + 1 - i < RUN ? NFILES + 1 - i : RUN) : 1;

		if (runs)
			done = sb_backup_add_files_at(b, dirfd, &files[i], n, &err);
		else if (i != GONE_AT)
			done = sb_backup_add_file_at(b, files[i].path, dirfd, files[i].name,
										 files[i].source_path, &err);
	}
	for (i = 0; runs && i <= NFILES; i++)
		*gone += files[i].gone ? (i == GONE_AT ? 1 : 100) : 0;
	close(dirfd);
	return th_backup_end(b, done, name, &err);
}

/* The two manifests record the same entries over the same stream. */
static bool
same_entries(const SbManifest *a, const SbManifest *b)
{
	size_t		i;

	if (a->nentries != b->nentries)
		return false;
	for (i = 0; i < a->nentries; i++)
	{
		const SbEntry *x = &a->entries[i];
		const SbEntry *y = &b->entries[i];

		if (strcmp(x->path, y->path) != 0 || x->size != y->size || x->mode != y->mode ||
			x->mtime != y->mtime || x->crc32c != y->crc32c || x->stream_offset != y->stream_offset ||
			x->stream_length != y->stream_length || x->sparse != y->sparse ||
			x->nextents != y->nextents)
		{
			diag("entry %zu differs: %s / %s", i, x->path, y->path);
			return false;
		}
	}
	return a->stream_bytes == b->stream_bytes;
}

void
test_file_runs(void)
{
	ThFixture	f;
	HookSeen	seen_runs = {0, 0};
	HookSeen	seen_one = {0, 0};
	SbManifest *runs;
	SbManifest *one;
	char		folder[PATH_MAX];
	char		location[PATH_MAX];
	SbError		err;
	int			gone = 0;
	int			unused = 0;

	th_fixture(&f, "runs", 2);
	make_source(th_path(folder, "%s/run", f.src));
	runs = back_up(&f, "runs", true, &seen_runs, &gone);
	one = back_up(&f, "one", false, &seen_one, &unused);
	ok(runs != NULL && one != NULL, "backed up in runs of %d files, and one file at a time", RUN);
	is_int(gone, 1, "the name that is not there, and it alone, is marked gone");
	ok(runs && one && same_entries(runs, one),
	   "the same entries over the same stream (sizes, modes, CRCs, offsets, extents)");
	ok(seen_runs.bytes == seen_one.bytes && seen_runs.bytes > 0 && seen_runs.mismatches == 0,
	   "the read hook saw the same %llu bytes, each what its open file holds (%d blocks not)",
	   (unsigned long long) seen_runs.bytes, seen_runs.mismatches);
	is_int(atimes_changed(folder), 0, "no file's access time changed (read O_NOATIME)");
	ok(th_restore(th_location(&f, 0, "runs", location), f.target, &err) &&
	   th_trees_equal(f.src, f.target, TH_CMP_MTIME), "the backup in runs restores the tree");
	sb_manifest_free(runs);
	sb_manifest_free(one);
	th_fixture_done(&f);
}

void
test_file_runs_refused(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	SbBackup   *b;
	char		path[PATH_MAX];
	SbFileAt	files[3] = {{"a", "a", "src/a", false}, {"sub", "sub", "src/sub", false},
	{"c", "c", "src/c", false}};
	SbFileAt	unsafe[2] = {{"a", "a", "src/a", false}, {"../b", "a", "src/a", false}};
	SbFileAt	after[3] = {{"x", "x", "src/x", false}, {"y", "y", "src/y", false},
	{"z", "z", "src/z", false}};
	char		restored[PATH_MAX];
	struct stat top;
	int			dirfd;
	bool		done;

	th_fixture(&f, "runs-refused", 1);
	th_write_pattern(th_path(path, "%s/a", f.src), 100, 1, false, 0600);
	th_mkdir(th_path(path, "%s/sub", f.src), 0700);
	th_write_pattern(th_path(path, "%s/c", f.src), 100, 3, false, 0600);
	dirfd = open(f.src, O_RDONLY | O_DIRECTORY);
	th_options(&o, f.dests, 1, "bk");
	b = sb_backup_begin(&o, &err);
	ok(b != NULL && !sb_backup_add_files_at(b, dirfd, unsafe, 2, &err) && err.code == SB_EINVAL &&
	   strstr(err.message, "../b") != NULL, "an unsafe path refuses the run: %s", err.message);
	done = b != NULL && sb_backup_finish(b, &m, &err);
	ok(done && m->nentries == 0, "and nothing of it was added");
	sb_manifest_free(m);

	/* "." recorded, so that a restore sets its time (the restores are compared, times and all) */
	th_options(&o, f.dests, 1, "bk2");
	b = sb_backup_begin(&o, &err);
	ok(b != NULL && lstat(f.src, &top) == 0 && sb_backup_add_dir(b, ".", top.st_mode, top.st_mtime, &err) &&
	   !sb_backup_add_files_at(b, dirfd, files, 3, &err) && err.code == SB_EINVAL &&
	   strstr(err.message, "src/sub") != NULL,
	   "a folder among the files stops the run, named: %s", err.message);

	/*
	 * The backup goes on: a run after it is its own, though the one that
	 * stopped may have had its third file read already, into the slot the
	 * third of this run takes.
	 */
	th_write_pattern(th_path(path, "%s/x", f.src), 100, 4, false, 0600);
	th_write_pattern(th_path(path, "%s/y", f.src), 100, 5, false, 0600);
	th_write_pattern(th_path(path, "%s/z", f.src), 100, 6, false, 0600);
	done = b != NULL && sb_backup_add_files_at(b, dirfd, after, 3, &err) &&
		sb_backup_finish(b, &m, &err);
	ok(done && m->nentries == 5 && strcmp(m->entries[1].path, "a") == 0 &&
	   strcmp(m->entries[4].path, "z") == 0, "then a run of three more: a, x, y and z backed up");
	th_path(path, "%s/bk2", f.dest[0]);
	ok(done && th_restore(path, f.target, &err), "it restores");
	ok(done && th_files_equal(th_path(path, "%s/z", f.src), th_path(restored, "%s/z", f.target)) &&
	   th_files_equal(th_path(path, "%s/a", f.src), th_path(restored, "%s/a", f.target)),
	   "a and z come back as they are");
	sb_manifest_free(m);
	close(dirfd);
	th_fixture_done(&f);
}
