/*
 * test_backup_lanes.c
 *		Source lanes: the large files of two devices (this test's folder and
 *		one in /dev/shm, a tmpfs) read by a thread each, at once, into places
 *		they claim in the stream.  The backup restores and verifies as one
 *		read on the caller's thread does, each file's blocks reach the read
 *		hook in order on one lane, a file gone before its lane opened it is
 *		left out and counted, and a lane's failure fails the backup.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "tests.h"

#define NFILES 40

/* Sizes on both sides of what a lane takes (over 64 kB) and of the 64 kB chunks. */
static const size_t sizes[] = {0, 1000, 65536, 65537, 200000, 700001, 1 << 20, 2500000};

/* What a lane's (or the caller's) read hook saw. */
typedef struct Seen
{
	uint64_t	bytes;
	int			out_of_order;	/* a block not where the file's last one ended */
	char		path[PATH_MAX];
	uint64_t	next;
	/* a hook that waits: until *release, on the first block of BLOCK_AT */
	const char *block_at;
	_Atomic int *release;
	const char *fail_at;		/* fails on the first block of that file */
} Seen;

static bool
see_block(void *arg, const char *path, int fd, uint64_t offset, const uint8_t *data, size_t len,
		  SbError *err)
{
	Seen	   *s = arg;

	(void) fd;
	(void) data;
	if (strcmp(path, s->path) != 0)
	{
		snprintf(s->path, sizeof(s->path), "%s", path);
		s->next = 0;
	}
	s->out_of_order += offset < s->next;
	s->next = offset + len;
	s->bytes += len;
	if (s->block_at != NULL && strcmp(path, s->block_at) == 0 && offset == 0)
		for (int i = 0; i < 1000 && !*s->release; i++)
			usleep(10000);
	if (s->fail_at != NULL && strcmp(path, s->fail_at) == 0)
		return sb_error_set(err, SB_EIO, "the hook refused \"%s\"", path);
	return true;
}

/* A folder of NFILES files (one sparse) at DIR, their contents seeded by SEED. */
static void
make_folder(const char *dir, uint32_t seed)
{
	char		path[PATH_MAX];
	int			fd;
	int			i;

	th_mkdir(dir, 0750);
	for (i = 0; i < NFILES; i++)
		th_write_pattern(th_path(path, "%s/f%02d", dir, i), sizes[i % 8], seed + (uint32_t) i,
						 i % 3 == 0, 0640);
	fd = open(th_path(path, "%s/sparse", dir), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ok(fd >= 0 && th_pwrite_pattern(fd, 5 * 65536, 70000, seed) && ftruncate(fd, 1 << 20) == 0 &&
	   close(fd) == 0, "a sparse file in %s", dir);
}

/* Add folder DIR as ARCHIVE: its files one by one, or in one run. */
static bool
add_folder(SbBackup *b, const char *dir, const char *archive, bool run, SbError *err)
{
	static SbFileAt files[NFILES + 1];
	static char paths[NFILES + 1][PATH_MAX];
	static char names[NFILES + 1][32];
	static char sources[NFILES + 1][PATH_MAX];
	struct stat st;
	int			dirfd;
	bool		done;
	int			i;

	if (lstat(dir, &st) != 0 || !sb_backup_add_dir(b, archive, st.st_mode, st.st_mtime, err))
		return false;
	for (i = 0; i <= NFILES; i++)
	{
		if (i < NFILES)
			snprintf(names[i], 32, "f%02d", i);
		else
			snprintf(names[i], 32, "sparse");
		snprintf(paths[i], PATH_MAX, "%s/%s", archive, names[i]);
		th_path(sources[i], "%s/%s", dir, names[i]);
		files[i].path = paths[i];
		files[i].name = names[i];
		files[i].source_path = sources[i];
		files[i].gone = false;
	}
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
		return sb_error_set_errno(err, errno, "open %s", dir);
	done = true;
	if (run)
		done = sb_backup_add_files_at(b, dirfd, files, NFILES + 1, err);
	for (i = 0; !run && done && i <= NFILES; i++)
		done = sb_backup_add_file_at(b, files[i].path, dirfd, files[i].name, files[i].source_path,
									 err);
	close(dirfd);
	return done;
}

typedef struct Lanes
{
	ThFixture	f;
	char		shm[PATH_MAX];	/* the second device's folder */
	char		a[PATH_MAX];
	char		b[PATH_MAX];
	Seen		caller;
	Seen		lane[2];
} Lanes;

/* Options for a backup NAME of both folders, with LANES lanes (0: none). */
static void
lane_options(Lanes *l, SbBackupOptions *o, const char *name, uint32_t lanes)
{
	th_options(o, l->f.dests, l->f.ndests, name);
	o->buffer_count = 8;		/* the fewest that allow two lanes */
	o->source_lanes = lanes;
	o->hooks.read = see_block;
	o->hooks.read_arg = &l->caller;
	o->hooks.read_lane_args[0] = &l->lane[0];
	o->hooks.read_lane_args[1] = &l->lane[1];
}

/* Back both folders up (the tmpfs one first, A's files in one run); B the begun backup. */
static bool
add_both(Lanes *l, SbBackup *b, SbError *err)
{
	struct stat st;

	return lstat(l->f.src, &st) == 0 && sb_backup_add_dir(b, ".", st.st_mode, st.st_mtime, err) &&
		add_folder(b, l->b, "b", false, err) && add_folder(b, l->a, "a", true, err);
}

static SbManifest *
back_up(Lanes *l, const char *name, uint32_t lanes, uint64_t *vanished)
{
	SbBackupOptions o;
	SbError		err;
	SbBackup   *b;
	bool		done;

	memset(&l->caller, 0, sizeof(Seen));
	memset(l->lane, 0, sizeof(l->lane));
	lane_options(l, &o, name, lanes);
	b = sb_backup_begin(&o, &err);
	done = b != NULL && add_both(l, b, &err) && sb_backup_files_read(b, &err);
	if (b != NULL)
		*vanished = sb_backup_files_vanished(b);
	return th_backup_end(b, done, name, &err);
}

/* Every file's data follows the one before it in the stream, in the manifest's order. */
static bool
in_stream_order(const SbManifest *m)
{
	uint64_t	end = 0;
	size_t		i;

	for (i = 0; i < m->nentries; i++)
	{
		const SbEntry *e = &m->entries[i];

		if (e->type != SB_ENTRY_FILE)
			continue;
		if (e->stream_offset != end)
		{
			diag("%s at %llu, where %llu was next", e->path, (unsigned long long) e->stream_offset,
				 (unsigned long long) end);
			return false;
		}
		end += e->stream_length;
	}
	return end == m->stream_bytes;
}

/* Each entry of A is in B with the same size, mode, CRC, and stored length. */
static bool
same_files(const SbManifest *a, const SbManifest *b)
{
	size_t		i;

	if (a->nentries != b->nentries)
		return false;
	for (i = 0; i < a->nentries; i++)
	{
		const SbEntry *x = &a->entries[i];
		const SbEntry *y = th_find_entry(b, x->path);

		if (y == NULL || x->size != y->size || x->mode != y->mode || x->crc32c != y->crc32c ||
			x->stream_length != y->stream_length || x->sparse != y->sparse)
		{
			diag("%s differs", x->path);
			return false;
		}
	}
	return true;
}

/* Are both folders restored from LOCATION as they are? */
static bool
restores_both(Lanes *l, const char *location)
{
	char		dir[PATH_MAX];
	SbError		err;
	bool		same;

	th_rmtree(l->f.target);
	if (!th_restore(location, l->f.target, &err))
	{
		th_diag_error("restore", &err);
		return false;
	}
	same = th_trees_equal(l->a, th_path(dir, "%s/a", l->f.target), 0) &&
		th_trees_equal(l->b, th_path(dir, "%s/b", l->f.target), 0);
	th_rmtree(l->f.target);
	return same;
}

/* Set up both folders; false (skipped) where /dev/shm is not another device. */
static bool
lanes_fixture(Lanes *l, const char *tag)
{
	struct stat here,
				there;

	memset(l, 0, sizeof(*l));
	th_fixture(&l->f, tag, 2);
	snprintf(l->shm, sizeof(l->shm), "/dev/shm/sblanes-%d-%s", (int) getpid(), tag);
	th_rmtree(l->shm);
	if (mkdir(l->shm, 0750) != 0 || stat(l->shm, &there) != 0 || stat(l->f.src, &here) != 0 ||
		here.st_dev == there.st_dev)
	{
		ok(true, "# SKIP no second device (/dev/shm)");
		return false;
	}
	th_path(l->a, "%s/a", l->f.src);
	th_path(l->b, "%s/b", l->shm);
	make_folder(l->a, 100);
	make_folder(l->b, 200);
	return true;
}

static void
lanes_fixture_done(Lanes *l)
{
	th_rmtree(l->shm);
	th_fixture_done(&l->f);
}

/* One lane a device of the folders given, none for one device. */
static void
lanes_for_folders(const Lanes *l)
{
	const char *two[] = {l->f.src, "/no/such/folder", l->shm, l->f.root};
	const char *one[] = {l->f.src, l->f.root, "/no/such/folder"};

	is_int(sb_source_lanes_for(two, 4), 2, "two devices among four folders (one gone): two lanes");
	is_int(sb_source_lanes_for(one, 3), 0, "folders on one device: no lane");
}

void
test_source_lanes(void)
{
	Lanes		l;
	SbManifest *with;
	SbManifest *without;
	char		location[PATH_MAX];
	uint64_t	vanished = 1;

	if (!lanes_fixture(&l, "lanes"))
	{
		lanes_fixture_done(&l);
		return;
	}
	lanes_for_folders(&l);
	without = back_up(&l, "one", 0, &vanished);
	ok(without != NULL && l.lane[0].bytes == 0 && l.caller.bytes > 0,
	   "without lanes every file is read on the caller's thread");
	with = back_up(&l, "lanes", 2, &vanished);
	ok(with != NULL, "a backup of two devices with two lanes");
	ok(l.lane[0].bytes > 0 && l.lane[1].bytes > 0,
	   "both lanes read files (%llu and %llu bytes), the caller %llu",
	   (unsigned long long) l.lane[0].bytes, (unsigned long long) l.lane[1].bytes,
	   (unsigned long long) l.caller.bytes);
	ok(l.lane[0].out_of_order + l.lane[1].out_of_order + l.caller.out_of_order == 0,
	   "each file's blocks reached its reader's hook in order");
	is_int((long long) vanished, 0, "no file vanished");
	ok(with != NULL && l.lane[0].bytes + l.lane[1].bytes + l.caller.bytes == with->stream_bytes,
	   "the hooks together saw every stored byte once");
	ok(with != NULL && in_stream_order(with), "the entries are in the stream's order, end to end");
	ok(with != NULL && without != NULL && same_files(without, with),
	   "the same files, sizes, CRCs and stored lengths as without lanes");
	ok(with != NULL && restores_both(&l, th_location(&l.f, 0, "lanes", location)),
	   "the backup with lanes restores both folders as they are");
	is_int(th_verify(location), 0, "and verifies clean");
	sb_manifest_free(with);
	sb_manifest_free(without);
	lanes_fixture_done(&l);
}

void
test_source_lanes_failures(void)
{
	Lanes		l;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbBackup   *b;
	SbError		err;
	char		path[PATH_MAX];
	char		location[PATH_MAX];
	_Atomic int release = 0;
	bool		done;

	if (!lanes_fixture(&l, "lanefail"))
	{
		lanes_fixture_done(&l);
		return;
	}
	/*
	 * A file gone before its lane opens it: the lane's hook holds it on the
	 * first large file of b/ until the next one is unlinked.
	 */
	lane_options(&l, &o, "vanish", 2);
	l.lane[0].block_at = l.lane[1].block_at = "b/f05";
	l.lane[0].release = l.lane[1].release = &release;
	b = sb_backup_begin(&o, &err);
	done = b != NULL && add_both(&l, b, &err);
	ok(done && unlink(th_path(path, "%s/f06", l.b)) == 0, "b/f06 unlinked while b/f05 is read");
	release = 1;
	done = done && sb_backup_files_read(b, &err);
	is_int(b != NULL ? (long long) sb_backup_files_vanished(b) : -1, 1,
		   "the lane counted the file gone when it came to it");
	done = done && sb_backup_finish(b, &m, &err);
	ok(done && m != NULL && th_find_entry(m, "b/f06") == NULL && th_find_entry(m, "b/f07") != NULL,
	   "the backup goes on without it");
	ok(m != NULL && in_stream_order(m), "and its entries are still end to end");
	ok(m != NULL && th_verify(th_location(&l.f, 0, "vanish", location)) == 0, "and it verifies");
	sb_manifest_free(m);
	th_write_pattern(path, sizes[6], 206, false, 0640);

	/* A lane's failure fails the backup, and leaves nothing behind. */
	lane_options(&l, &o, "refused", 2);
	l.lane[0].fail_at = l.lane[1].fail_at = "a/f07";
	b = sb_backup_begin(&o, &err);
	done = b != NULL && add_both(&l, b, &err);
	if (b != NULL)
		done = sb_backup_finish(b, NULL, &err);
	ok(!done && strstr(err.message, "the hook refused \"a/f07\"") != NULL,
	   "a lane's failure fails the backup with its error: %s", err.message);
	ok(!th_exists(th_location(&l.f, 0, "refused", location)) &&
	   !th_exists(th_location(&l.f, 1, "refused", location)),
	   "the failed backup left nothing in its destinations");

	/* Too few buffers for two lanes: every file on the caller's thread. */
	lane_options(&l, &o, "fewbuffers", 2);
	o.buffer_count = 6;
	memset(l.lane, 0, sizeof(l.lane));
	b = sb_backup_begin(&o, &err);
	done = b != NULL && add_both(&l, b, &err) && sb_backup_finish(b, NULL, &err);
	ok(done && l.lane[0].bytes == 0 && l.lane[1].bytes == 0,
	   "with 6 buffers no lane is used, and the backup is made");
	lanes_fixture_done(&l);
}
