/*
 * test_backup_options.c
 *		sb_backup_begin refuses bad options before creating anything, refuses
 *		a backup name that already exists, and a backup that fails or is
 *		aborted leaves nothing behind.
 */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness.h"
#include "tests.h"

/* Every destination folder of F holds exactly what it held before (COUNTS). */
static bool
unchanged(const ThFixture *f, const int *counts)
{
	uint32_t	i;

	for (i = 0; i < f->ndests; i++)
		if (th_count_entries(f->dest[i]) != counts[i])
		{
			diag("%s holds %d entries, %d before", f->dest[i], th_count_entries(f->dest[i]),
				 counts[i]);
			return false;
		}
	return true;
}

/* sb_backup_begin(O) must fail with CODE and create nothing. */
static void
expect_refused(const ThFixture *f, const SbBackupOptions *o, SbErrorCode code,
			   const char *want, const char *what)
{
	int			counts[TH_MAX_DESTS];
	SbError		err;
	SbBackup   *b;
	uint32_t	i;

	for (i = 0; i < f->ndests; i++)
		counts[i] = th_count_entries(f->dest[i]);
	b = sb_backup_begin(o, &err);
	ok(b == NULL, "%s: refused", what);
	if (b != NULL)
	{
		sb_backup_abort(b);
		return;
	}
	is_int(err.code, code, "%s: error code is %s", what, sb_error_code_name(code));
	if (want != NULL)
		like(err.message, want, "%s: message says %s", what, want);
	ok(unchanged(f, counts), "%s: nothing created", what);
}

/* 10. Bad options: refused with SB_EINVAL, nothing created. */
void
test_options_refused(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbError		err;
	SbBackup   *b;
	SbManifest *m = NULL;
	char		inner[PATH_MAX];
	char		slash[PATH_MAX];
	char		dotted[PATH_MAX];
	char		linked[PATH_MAX];
	char		missing[PATH_MAX];
	char		file[PATH_MAX];
	char		longname[200];
	int			folder;
	const char *dests[3];
	const char *many[SB_MAX_STRIPES + 1];
	double		weights[3];
	static const uint32_t bad_chunks[] = {1, 2048, 4095, 4097, 6000, 100000,
	64 * 1024 * 1024 + 4096, 128 * 1024 * 1024};
	static const uint32_t bad_frames[] = {1, 4096, 12288, 16385, 20000, 64 * 1024 * 1024 + 4096};
	static const char *const bad_names[] = {"", "a/b", "/abs", "..", ".", ".hidden",
	"with space", "tab\there", "caf\xc3\xa9", "semi;colon"};
	size_t		i;
	bool		done;

	th_fixture(&f, "options", 3);
	th_path(inner, "%s/inner", f.dest[0]);
	th_path(slash, "%s/", f.dest[0]);
	th_path(dotted, "%s/./d1", f.root);
	th_path(linked, "%s/link-to-d1", f.root);
	th_path(missing, "%s/missing", f.root);
	th_path(file, "%s/a-file", f.root);
	th_mkdir(inner, 0755);
	ok(symlink(f.dest[0], linked) == 0 && th_write_file(file, "x", 1, 0644), "folders set up");

	/* Destinations. */
	dests[0] = "relative/dir";
	dests[1] = f.dest[1];
	th_options(&o, dests, 2, "bk");
	expect_refused(&f, &o, SB_EINVAL, "absolute", "a relative destination");
	dests[0] = ".";
	expect_refused(&f, &o, SB_EINVAL, "absolute", "destination \".\"");
	dests[0] = missing;
	expect_refused(&f, &o, SB_EINVAL, "does not exist", "a destination that does not exist");
	dests[0] = file;
	expect_refused(&f, &o, SB_EINVAL, "not a directory", "a destination that is a file");
	dests[0] = f.dest[0];
	dests[1] = f.dest[0];
	expect_refused(&f, &o, SB_EINVAL, "same folder", "the same destination twice");
	dests[1] = slash;
	expect_refused(&f, &o, SB_EINVAL, "same folder", "the same destination with a trailing /");
	dests[1] = dotted;
	expect_refused(&f, &o, SB_EINVAL, "same folder", "the same destination through /./");
	dests[1] = linked;
	expect_refused(&f, &o, SB_EINVAL, "same folder", "the same destination through a link");
	dests[1] = inner;
	expect_refused(&f, &o, SB_EINVAL, "inside", "a destination inside another");
	dests[0] = inner;
	dests[1] = f.dest[0];
	expect_refused(&f, &o, SB_EINVAL, "inside", "a destination holding another");
	dests[0] = f.dest[0];
	dests[1] = f.dest[1];
	dests[2] = f.dest[0];
	th_options(&o, dests, 3, "bk");
	expect_refused(&f, &o, SB_EINVAL, "same folder", "the first and third destinations the same");
	th_options(&o, dests, 0, "bk");
	expect_refused(&f, &o, SB_EINVAL, NULL, "no destination");
	for (i = 0; i <= SB_MAX_STRIPES; i++)
		many[i] = f.dest[i % 3];
	th_options(&o, many, SB_MAX_STRIPES + 1, "bk");
	expect_refused(&f, &o, SB_EINVAL, NULL, "65 destinations");

	/* Weights. */
	dests[2] = f.dest[2];
	th_options(&o, dests, 3, "bk");
	o.weights = weights;
	weights[0] = 1;
	weights[1] = 2;
	weights[2] = 0;
	expect_refused(&f, &o, SB_EINVAL, "weight", "a weight of zero");
	weights[2] = -1;
	expect_refused(&f, &o, SB_EINVAL, "weight", "a negative weight");
	weights[2] = NAN;
	expect_refused(&f, &o, SB_EINVAL, "weight", "a weight that is NaN");
	weights[2] = INFINITY;
	expect_refused(&f, &o, SB_EINVAL, "weight", "an infinite weight");
	weights[0] = -INFINITY;
	weights[2] = 1;
	expect_refused(&f, &o, SB_EINVAL, "weight", "a weight of minus infinity");

	/* Chunk sizes. */
	th_options(&o, dests, 3, "bk");
	for (i = 0; i < sizeof(bad_chunks) / sizeof(bad_chunks[0]); i++)
	{
		char		what[64];

		snprintf(what, sizeof(what), "chunk size %u", bad_chunks[i]);
		o.chunk_size = bad_chunks[i];
		expect_refused(&f, &o, SB_EINVAL, "chunk size", what);
	}

	/* Frame sizes: 0 is the default; else a multiple of 4 kB from 16 kB. */
	th_options(&o, dests, 3, "bk");
	for (i = 0; i < sizeof(bad_frames) / sizeof(bad_frames[0]); i++)
	{
		char		what[64];

		snprintf(what, sizeof(what), "frame size %u", bad_frames[i]);
		o.frame_size = bad_frames[i];
		expect_refused(&f, &o, SB_EINVAL, what, what);
	}

	/* Names. */
	th_options(&o, dests, 3, NULL);
	expect_refused(&f, &o, SB_EINVAL, "name", "no backup name");
	for (i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++)
	{
		char		what[64];

		snprintf(what, sizeof(what), "backup name \"%s\"", bad_names[i]);
		o.name = bad_names[i];
		expect_refused(&f, &o, SB_EINVAL, "name", what);
	}
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	o.name = longname;
	expect_refused(&f, &o, SB_EINVAL, "name", "a backup name of 199 characters");

	/* Compression and threads. */
	th_options(&o, dests, 3, "bk");
	o.codec = SB_CODEC_ZSTD;
	o.level = 0;
	expect_refused(&f, &o, SB_EINVAL, "level", "zstd level 0");
	o.level = 1000;
	expect_refused(&f, &o, SB_EINVAL, "level", "zstd level 1000");
	th_options(&o, dests, 3, "bk");
	o.buffer_count = 1;
	expect_refused(&f, &o, SB_EINVAL, "buffer", "one buffer");
	o.buffer_count = 100000;
	expect_refused(&f, &o, SB_EINVAL, "buffer", "100000 buffers");
	th_options(&o, dests, 3, "bk");
	o.workers = 100000;
	expect_refused(&f, &o, SB_EINVAL, "workers", "100000 workers");

	/* Good options: the defaults apply, and abort removes everything. */
	th_options(&o, dests, 3, "bk");
	o.chunk_size = 0;
	o.workers = 0;
	o.buffer_count = 0;
	o.codec = SB_CODEC_ZSTD;
	o.level = -3;
	b = sb_backup_begin(&o, &err);
	ok(b != NULL, "default chunk size, workers and buffers, zstd level -3: accepted");
	ok(th_exists(th_path(file, "%s/bk/stripe-3.sbs", f.dest[2])), "the stripe files are created");
	done = b != NULL && sb_backup_add_dir(b, ".", 0755, 1, &err) &&
		sb_backup_add_data(b, "x", "hello", 5, 0644, 2, &err);
	ok(done, "entries added");
	sb_backup_abort(b);
	ok(th_count_entries(f.dest[0]) == 1 && th_count_entries(f.dest[1]) == 0 &&
	   th_count_entries(f.dest[2]) == 0, "abort removes every backup folder");

	b = sb_backup_begin(&o, &err);
	done = b != NULL && sb_backup_add_dir(b, ".", 0755, 1, &err) &&
		sb_backup_add_data(b, "x", "hello", 5, 0644, 2, &err);
	/* Entries that are refused leave the backup usable. */
	ok(b != NULL && !sb_backup_add_data(b, "../x", "a", 1, 0644, 1, &err) &&
	   err.code == SB_EINVAL, "add_data refuses ../x");
	ok(b != NULL && !sb_backup_add_dir(b, "/abs", 0755, 1, &err) && err.code == SB_EINVAL,
	   "add_dir refuses /abs");
	ok(b != NULL && !sb_backup_add_file(b, "y", missing, &err) && err.code == SB_ENOTFOUND,
	   "add_file of a file that does not exist says not found");
	ok(b != NULL && !sb_backup_add_file(b, "z", f.dest[1], &err) && err.code == SB_EINVAL,
	   "add_file of a folder is refused");
	/* A file opened by its name in a folder held open, as the walks do. */
	th_write_pattern(th_path(file, "%s/named", f.src), 5000, 7, true, 0640);
	ok(symlink("named", th_path(file, "%s/link", f.src)) == 0, "a link beside it");
	folder = open(f.src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ok(b != NULL && folder >= 0 &&
	   sb_backup_add_file_at(b, "w", folder, "named", th_path(file, "%s/named", f.src), &err),
	   "add_file_at reads a file by its name in an open folder");
	ok(b != NULL && !sb_backup_add_file_at(b, "v", folder, "link", "the link", &err) &&
	   err.code != SB_ENOTFOUND && strstr(err.message, "the link") != NULL,
	   "a link in its place is not followed, and the source path names it: %s", err.message);
	ok(b != NULL && !sb_backup_add_file_at(b, "u", folder, "gone", "the gone file", &err) &&
	   err.code == SB_ENOTFOUND, "a name no longer there says not found");
	if (folder >= 0)
		close(folder);
	done = done && sb_backup_finish(b, &m, &err);
	if (!ok(done, "finish succeeds after refused entries"))
		th_diag_error("finish", &err);
	ok(done && m->chunk_size == SB_DEFAULT_CHUNK_SIZE && m->nentries == 3 &&
	   m->level == -3 && m->codec == SB_CODEC_ZSTD, "manifest: default chunk size, three entries");
	ok(done && m->entries[2].size == 5000 && (m->entries[2].mode & 0777) == 0640,
	   "the file read by name has its size and mode");
	is_int(th_verify(th_location(&f, 0, "bk", file)), 0, "the backup verifies");
	sb_manifest_free(m);
	th_fixture_done(&f);
}

/* 10b. A backup name that exists already in any destination; a backup that fails at the end. */
void
test_options_existing_name(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbError		err;
	SbBackup   *b;
	char		path[PATH_MAX];
	size_t		len = 0;
	uint8_t    *kept;
	bool		done;

	th_fixture(&f, "exists", 3);
	th_options(&o, f.dests, 3, "bk");

	/* In the first destination: a folder of the user's. */
	th_mkdir(th_path(path, "%s/bk", f.dest[0]), 0755);
	th_write_file(th_path(path, "%s/bk/mine", f.dest[0]), "mine", 4, 0644);
	b = sb_backup_begin(&o, &err);
	ok(b == NULL, "a name that exists in destination 1 is refused");
	if (b != NULL)
		sb_backup_abort(b);
	is_int(err.code, SB_EEXIST, "the error is exists");
	like(err.message, "already holds a backup named \"bk\"", "the error says so");
	kept = th_read_file(path, &len);
	ok(kept != NULL && len == 4 && th_count_entries(th_path(path, "%s/bk", f.dest[0])) == 1,
	   "the existing folder is untouched");
	free(kept);
	ok(th_count_entries(f.dest[1]) == 0 && th_count_entries(f.dest[2]) == 0,
	   "nothing created in the other destinations");
	th_rmtree(th_path(path, "%s/bk", f.dest[0]));

	/* In the last destination, as a file: the first two, created already, are removed. */
	th_write_file(th_path(path, "%s/bk", f.dest[2]), "x", 1, 0644);
	b = sb_backup_begin(&o, &err);
	ok(b == NULL, "a name that exists in destination 3 is refused");
	if (b != NULL)
		sb_backup_abort(b);
	is_int(err.code, SB_EEXIST, "the error is exists");
	ok(th_count_entries(f.dest[0]) == 0 && th_count_entries(f.dest[1]) == 0,
	   "the backup folders made in destinations 1 and 2 are removed");
	ok(th_exists(path) && th_count_entries(f.dest[2]) == 1, "destination 3's file is untouched");
	unlink(path);

	/* A complete backup, then the same name again. */
	th_write_pattern(th_path(path, "%s/data", f.src), 100000, 1, false, 0644);
	done = th_backup_tree(&o, f.src, NULL, &err);
	if (!ok(done, "a first backup named bk succeeds"))
		th_diag_error("backup", &err);
	b = sb_backup_begin(&o, &err);
	ok(b == NULL && err.code == SB_EEXIST, "a second backup named bk is refused as existing");
	if (b != NULL)
		sb_backup_abort(b);
	is_int(th_verify(th_location(&f, 1, "bk", path)), 0, "the first backup is intact");

	/* A backup that fails at finish (metadata that is not a JSON object) leaves nothing. */
	o.name = "bk2";
	o.metadata_json = "[\"not an object\"]";
	done = th_backup_tree(&o, f.src, NULL, &err);
	ok(!done && err.code == SB_EINVAL, "a backup whose metadata is not an object fails");
	ok(!th_exists(th_location(&f, 0, "bk2", path)) && !th_exists(th_location(&f, 1, "bk2", path)) &&
	   !th_exists(th_location(&f, 2, "bk2", path)), "and leaves no backup folder");
	o.metadata_json = "{\"pg\":{\"timeline\":1}}";
	o.label = "a label";
	done = th_backup_tree(&o, f.src, NULL, &err);
	ok(done, "with object metadata and a label it succeeds");
	{
		SbArchive  *a = sb_archive_open(th_location(&f, 2, "bk2", path), &err);

		ok(a != NULL && a->manifest->label != NULL && strcmp(a->manifest->label, "a label") == 0 &&
		   a->manifest->metadata_json != NULL &&
		   strstr(a->manifest->metadata_json, "\"timeline\":1") != NULL &&
		   a->manifest->tool != NULL && strcmp(a->manifest->tool, o.tool) == 0,
		   "label, metadata and tool are recorded");
		sb_archive_close(a);
	}
	th_fixture_done(&f);
}

static bool
cancel_now(void *arg, const SbProgress *progress)
{
	int		   *calls = arg;

	(void) progress;
	(*calls)++;
	return false;
}

typedef struct Shrinker
{
	const char *path;
	int			calls;
} Shrinker;

/* At the first tick, cut the file being read to 10000 bytes. */
static bool
shrink_source(void *arg, const SbProgress *progress)
{
	Shrinker   *s = arg;

	(void) progress;
	if (s->calls++ == 0 && truncate(s->path, 10000) != 0)
		diag("could not truncate %s", s->path);
	return true;
}

/* Entries that do not make a tree, a cancel, and a file that shrinks while read. */
void
test_options_backup_contract(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbError		err;
	SbBackup   *b;
	SbManifest *m = NULL;
	char		path[PATH_MAX];
	char		big[PATH_MAX];
	uint8_t    *data;
	size_t		len = 0;
	int			calls = 0;
	Shrinker	shrinker;
	bool		done;

	th_fixture(&f, "contract", 2);
	th_options(&o, f.dests, 2, "bk");
	o.chunk_size = 4096;

	/* The same path twice: finish refuses, and removes the backup. */
	b = sb_backup_begin(&o, &err);
	done = b != NULL && sb_backup_add_dir(b, ".", 0755, 1, &err) &&
		sb_backup_add_data(b, "x", "1", 1, 0644, 1, &err) &&
		sb_backup_add_data(b, "x", "2", 1, 0644, 1, &err);
	if (b != NULL && !done)
		sb_backup_abort(b);
	done = done && sb_backup_finish(b, NULL, &err);
	ok(!done && err.code != SB_OK, "a path added twice makes finish fail [%s] %s",
	   sb_error_code_name(err.code), err.message);
	like(err.message, "listed twice", "the error says listed twice");
	ok(th_count_entries(f.dest[0]) == 0 && th_count_entries(f.dest[1]) == 0,
	   "nothing is left in the destinations");

	/* A file under a file. */
	b = sb_backup_begin(&o, &err);
	done = b != NULL && sb_backup_add_data(b, "f", "1", 1, 0644, 1, &err) &&
		sb_backup_add_data(b, "f/g", "2", 1, 0644, 1, &err);
	if (b != NULL && !done)
		sb_backup_abort(b);
	done = done && sb_backup_finish(b, NULL, &err);
	ok(!done, "a file under a file makes finish fail");
	like(err.message, "not a directory", "the error says not a directory");
	ok(th_count_entries(f.dest[0]) == 0 && th_count_entries(f.dest[1]) == 0,
	   "nothing is left in the destinations");

	/* The caller's tick says stop (the first tick comes 100 ms after begin). */
	data = malloc(64 * 4096);
	th_fill(data, 64 * 4096, 3, false);
	o.hooks.tick = cancel_now;
	o.hooks.tick_arg = &calls;
	b = sb_backup_begin(&o, &err);
	usleep(150 * 1000);
	done = b != NULL && sb_backup_add_dir(b, ".", 0755, 1, &err) &&
		sb_backup_add_data(b, "x", data, 64 * 4096, 0644, 1, &err);
	ok(!done && calls == 1 && err.code == SB_ECANCELED, "a tick that says stop cancels the backup");
	like(err.message, "canceled", "the error says canceled");
	if (b != NULL)
		sb_backup_abort(b);
	ok(th_count_entries(f.dest[0]) == 0 && th_count_entries(f.dest[1]) == 0,
	   "abort after a cancel leaves nothing");
	free(data);

	/* A file cut short while it is read: the rest is zeros, the CRC matches that. */
	th_path(big, "%s/shrinks", f.src);
	th_write_pattern(big, 64 * 4096, 9, false, 0644);
	shrinker.path = big;
	shrinker.calls = 0;
	o.hooks.tick = shrink_source;
	o.hooks.tick_arg = &shrinker;
	o.buffer_count = 4;
	b = sb_backup_begin(&o, &err);
	usleep(150 * 1000);
	done = b != NULL && sb_backup_add_dir(b, ".", 0755, 1, &err) &&
		sb_backup_add_file(b, "shrinks", big, &err);
	if (b != NULL && !done)
		sb_backup_abort(b);
	done = done && sb_backup_finish(b, &m, &err);
	if (!ok(done && shrinker.calls > 0, "backup of a file that shrinks succeeds"))
		th_diag_error("backup", &err);
	done = done && th_restore(th_location(&f, 0, "bk", path), f.target, &err);
	if (!ok(done, "its restore succeeds"))
		th_diag_error("restore", &err);
	data = th_read_file(th_path(path, "%s/shrinks", f.target), &len);
	if (done && data != NULL && len == 64 * 4096)
	{
		uint8_t    *want = calloc(1, len);
		size_t		i;
		bool		same = true;

		/*
		 * What was not cut off reads the same before and after the cut;
		 * past the cut, each byte is what read-ahead got before the cut or
		 * a zero (the file is copied at the size it had when opened).
		 */
		th_fill(want, len, 9, false);
		for (i = 0; i < len && same; i++)
			same = data[i] == want[i] || (i >= 10000 && data[i] == 0);
		ok(same && memcmp(data, want, 10000) == 0,
		   "restored at the size it had when opened: its first 10000 bytes, then data read before the cut or zeros");
		ok(m != NULL && m->nentries == 2 && m->entries[1].size == len &&
		   m->entries[1].crc32c == th_crc32c(data, len), "the manifest CRC is that of the bytes kept");
		free(want);
	}
	else
		ok(false, "restored file has the size the source had when opened (%zu bytes)", len);
	free(data);
	sb_manifest_free(m);
	th_fixture_done(&f);
}

/*
 * Writes that fail (a file size limit makes them fail with EFBIG): the
 * backup fails naming the stripe and removes itself; so does a restore.
 */
void
test_options_write_failure(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbError		err;
	SbBackup   *b;
	struct rlimit saved;
	struct rlimit small;
	char		location[PATH_MAX];
	uint8_t    *data;
	const size_t len = 4 * 1024 * 1024;
	bool		added;
	bool		done;

	th_fixture(&f, "efbig", 2);
	th_options(&o, f.dests, 2, "bk");
	data = malloc(len);
	th_fill(data, len, 11, false);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &saved);
	small = saved;
	small.rlim_cur = 256 * 1024;

	b = sb_backup_begin(&o, &err);
	ok(b != NULL, "backup begins");
	setrlimit(RLIMIT_FSIZE, &small);
	added = b != NULL && sb_backup_add_dir(b, ".", 0755, 1, &err) &&
		sb_backup_add_data(b, "big", data, len, 0644, 1, &err);
	if (b != NULL && !added)
		sb_backup_abort(b);
	done = added && sb_backup_finish(b, NULL, &err);
	setrlimit(RLIMIT_FSIZE, &saved);
	ok(!done, "a backup whose stripe cannot be written fails");
	is_int(err.code, SB_EIO, "the error is io");
	like(err.message, "stripe ", "the error names the stripe");
	like(err.message, "could not write", "the error says what failed");
	ok(th_count_entries(f.dest[0]) == 0 && th_count_entries(f.dest[1]) == 0,
	   "nothing is left in the destinations");

	/* A good backup, then a restore that cannot write its files. */
	b = sb_backup_begin(&o, &err);
	done = b != NULL && sb_backup_add_dir(b, ".", 0755, 1, &err) &&
		sb_backup_add_data(b, "big", data, len, 0644, 1, &err);
	if (b != NULL && !done)
		sb_backup_abort(b);
	done = done && sb_backup_finish(b, NULL, &err);
	ok(done, "a backup without the limit succeeds");
	setrlimit(RLIMIT_FSIZE, &small);
	done = th_restore(th_location(&f, 0, "bk", location), f.target, &err);
	setrlimit(RLIMIT_FSIZE, &saved);
	ok(!done && err.code == SB_EIO, "a restore that cannot write fails [%s] %s",
	   sb_error_code_name(err.code), err.message);
	ok(!th_exists(f.target), "the new target was removed");
	done = th_restore(location, f.target, &err);
	ok(done, "without the limit the restore succeeds");
	signal(SIGXFSZ, SIG_DFL);
	free(data);
	th_fixture_done(&f);
}

/* A destination given as a link to A, re-pointed to B once the backup has begun. */
typedef struct Repointed
{
	ThFixture	f;
	char		a[PATH_MAX];
	char		b[PATH_MAX];
	char		link[PATH_MAX];
	const char *dests[2];
} Repointed;

static SbBackup *
begin_then_repoint(Repointed *r, const char *tag, SbError *err)
{
	SbBackupOptions o;
	SbBackup   *b;

	th_fixture(&r->f, tag, 2);
	th_path(r->a, "%s/A", r->f.root);
	th_path(r->b, "%s/B", r->f.root);
	th_path(r->link, "%s/dest-link", r->f.root);
	th_mkdir(r->a, 0755);
	th_mkdir(r->b, 0755);
	ok(symlink(r->a, r->link) == 0, "%s: destination 1 is a link to A", tag);
	r->dests[0] = r->link;
	r->dests[1] = r->f.dest[1];
	th_options(&o, r->dests, 2, "bk");
	o.chunk_size = 4096;
	b = sb_backup_begin(&o, err);
	ok(b != NULL && th_count_entries(r->a) == 1, "%s: the backup begins in A", tag);
	ok(unlink(r->link) == 0 && symlink(r->b, r->link) == 0,
	   "%s: the link is re-pointed to B during the backup", tag);
	return b;
}

static bool
add_some(SbBackup *b, SbError *err)
{
	static uint8_t data[50000];

	th_fill(data, sizeof(data), 4, true);
	return sb_backup_add_dir(b, ".", 0700, 1, err) &&
		sb_backup_add_data(b, "one", data, sizeof(data), 0600, 2, err) &&
		sb_backup_add_data(b, "two", data, 1000, 0600, 3, err);
}

/* Everything goes where the destination was when the backup began, or nowhere. */
void
test_options_repointed_destination(void)
{
	Repointed	r;
	SbBackup   *b;
	SbError		err;
	char		path[PATH_MAX];
	bool		done;

	b = begin_then_repoint(&r, "repoint-finish", &err);
	done = b != NULL && add_some(b, &err);
	if (b != NULL && !done)
		sb_backup_abort(b);
	done = done && sb_backup_finish(b, NULL, &err);
	if (!ok(done, "finish succeeds"))
		th_diag_error("finish", &err);
	ok(th_exists(th_path(path, "%s/bk/stripe-1.sbs", r.a)) &&
	   th_exists(th_path(path, "%s/bk/manifest.json", r.a)), "stripe 1 and its manifest are in A");
	is_int(th_count_entries(r.b), 0, "nothing is in B");
	is_int(th_verify(th_path(path, "%s/bk", r.a)), 0, "the backup in A verifies");
	th_fixture_done(&r.f);

	b = begin_then_repoint(&r, "repoint-abort", &err);
	done = b != NULL && add_some(b, &err);
	sb_backup_abort(b);
	ok(done && th_count_entries(r.a) == 0 && th_count_entries(r.b) == 0 &&
	   th_count_entries(r.f.dest[1]) == 0, "abort: nothing is left in A, in B or in destination 2");
	th_fixture_done(&r.f);

	/* A backup that fails at its end (metadata that is not an object). */
	b = begin_then_repoint(&r, "repoint-fail", &err);
	done = b != NULL && add_some(b, &err) &&
		sb_backup_set_metadata(b, "[\"not an object\"]", &err);
	if (b != NULL && !done)
		sb_backup_abort(b);
	ok(done && !sb_backup_finish(b, NULL, &err), "a backup that fails at finish fails");
	ok(th_count_entries(r.a) == 0 && th_count_entries(r.b) == 0 &&
	   th_count_entries(r.f.dest[1]) == 0, "and leaves nothing in A, in B or in destination 2");
	th_fixture_done(&r.f);
}

/* A backup id given by the caller is the backup's from the start. */
void
test_options_given_uuid(void)
{
	static const uint8_t uuid[16] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
	ThFixture	f;
	SbBackupOptions o;
	SbBackup   *b;
	SbManifest *m = NULL;
	SbArchive  *a;
	SbError		err;
	char		path[PATH_MAX];
	uint8_t		first[16];
	bool		done;

	th_fixture(&f, "uuid", 2);
	th_options(&o, f.dests, 2, "bk");
	memcpy(o.uuid, uuid, 16);
	b = sb_backup_begin(&o, &err);
	ok(b != NULL && memcmp(sb_backup_manifest(b)->uuid, uuid, 16) == 0,
	   "right after begin, the manifest being built has the given uuid");
	done = b != NULL && add_some(b, &err);
	if (b != NULL && !done)
		sb_backup_abort(b);
	done = done && sb_backup_finish(b, &m, &err);
	ok(done && memcmp(m->uuid, uuid, 16) == 0, "the finished manifest has it");
	a = sb_archive_open(th_location(&f, 1, "bk", path), &err);
	ok(a != NULL && memcmp(a->manifest->uuid, uuid, 16) == 0, "and so has the archive read back");
	is_int(th_verify(path), 0, "whose stripes (headers and trailers) carry it too");
	sb_archive_close(a);
	sb_manifest_free(m);

	/* All zero: a random version 4 uuid, another each time. */
	memset(o.uuid, 0, 16);
	o.name = "bk2";
	b = sb_backup_begin(&o, &err);
	if (b != NULL)
		memcpy(first, sb_backup_manifest(b)->uuid, 16);
	sb_backup_abort(b);
	b = sb_backup_begin(&o, &err);
	ok(b != NULL && memcmp(first, sb_backup_manifest(b)->uuid, 16) != 0 &&
	   (first[6] >> 4) == 4, "an all-zero uuid asks for a random one (version 4)");
	sb_backup_abort(b);
	th_fixture_done(&f);
}
