/*
 * test_policy.c
 *		The shared rules (sb_policy.h): canonical paths and containment,
 *		empty or absent directories, running clusters, restore places and
 *		tablespace mappings, backup folder file names, the strict parsers of
 *		rates, weights, integers and sizes, and the memory ceiling with its
 *		hooks in sb_backup_begin and the read pipeline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stripebackup/sb_policy.h"
#include "format/codec.h"
#include "format/format.h"
#include "harness.h"
#include "restore/read_pipeline.h"
#include "tests.h"
#include "util/thread.h"

/* CALL must fail with error code WANT_CODE and a message containing WANT. */
#define refused(call, error, want_code, want, ...) \
	do { \
		bool		got_ = (call); \
		ok(!got_, __VA_ARGS__); \
		if (!got_) \
		{ \
			is_int((error).code, (want_code), "  ... with code %s", sb_error_code_name(want_code)); \
			like((error).message, (want), "  ... and a message naming \"%s\"", (want)); \
		} \
	} while (0)

/* A PostgreSQL data directory stand-in: PG_VERSION, and postmaster.pid naming PID (0: none). */
static void
fake_data_dir(const char *dir, long pid)
{
	char		path[PATH_MAX];
	char		text[64];

	th_mkdir(dir, 0700);
	th_write_file(th_path(path, "%s/PG_VERSION", dir), "15\n", 3, 0600);
	if (pid > 0)
	{
		snprintf(text, sizeof(text), "%ld\n%s\n", pid, dir);
		th_write_file(th_path(path, "%s/postmaster.pid", dir), text, strlen(text), 0600);
	}
}

/* The pid of a process that has just exited (not alive, not yet reused). */
static long
dead_pid(void)
{
	pid_t		child = fork();

	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	return (long) child;
}

void
test_policy_paths(void)
{
	char		root[PATH_MAX],
				real[PATH_MAX],
				dir[PATH_MAX],
				link[PATH_MAX],
				path[PATH_MAX],
				out[PATH_MAX],
				cwd[PATH_MAX];
	bool		within = false;
	SbError		err;

	th_tempdir(root, "policy-paths");
	ok(realpath(root, real) != NULL, "the temporary folder resolves");
	th_mkdir(th_path(dir, "%s/a", root), 0755);
	ok(symlink(dir, th_path(link, "%s/link-to-a", root)) == 0, "a link to a folder");

	ok(sb_policy_canonical_path(link, out, &err), "a link resolves");
	is_int(strcmp(out, th_path(path, "%s/a", real)), 0, "to its target (%s)", out);
	ok(sb_policy_canonical_path(th_path(path, "%s/link-to-a/new/./x/../y/", root), out, &err),
	   "a path whose tail does not exist resolves");
	is_int(strcmp(out, th_path(path, "%s/a/new/y", real)), 0, "the tail applied as text (%s)", out);
	ok(sb_policy_canonical_path(th_path(path, "%s/a/../../..", root), out, &err) &&
	   realpath(th_path(path, "%s/../..", root), dir) != NULL && strcmp(out, dir) == 0,
	   "\"..\" applied through what exists (%s)", out);
	th_path(dir, "%s/a", root);
	ok(getcwd(cwd, sizeof(cwd)) != NULL && chdir(root) == 0, "into the temporary folder");
	ok(sb_policy_canonical_path("a/rel", out, &err), "a relative path resolves");
	is_int(strcmp(out, th_path(path, "%s/a/rel", real)), 0, "from the working directory (%s)", out);
	ok(chdir(cwd) == 0, "back to the first working directory");
	refused(sb_policy_canonical_path("", out, &err), err, SB_EINVAL, "empty", "an empty path is refused");

	ok(sb_policy_canonical_within("/a/b", "/a"), "/a/b is inside /a");
	ok(sb_policy_canonical_within("/a", "/a"), "/a is within itself");
	ok(!sb_policy_canonical_within("/ab", "/a"), "/ab is not inside /a");
	ok(!sb_policy_canonical_within("/a", "/a/b"), "/a is not inside /a/b");
	ok(sb_policy_canonical_within("/x", "/"), "everything is inside /");

	ok(sb_policy_path_within(th_path(path, "%s/missing/deeper", link), dir, &within, &err) && within,
	   "a path that does not exist, through a link, is inside the link's target");
	ok(sb_policy_path_within(th_path(path, "%s/a-sibling", root), dir, &within, &err) && !within,
	   "a sibling whose name starts the same is not inside");
	ok(sb_policy_path_within(root, link, &within, &err) && !within, "a parent is not inside its child");
	th_rmtree(root);
}

void
test_policy_empty_or_absent(void)
{
	char		root[PATH_MAX],
				path[PATH_MAX],
				file[PATH_MAX];
	SbDirState	state = SB_DIR_EMPTY;
	SbError		err;

	th_tempdir(root, "policy-empty");
	ok(sb_policy_check_empty_or_absent(th_path(path, "%s/new", root), "restore target", &state, &err) &&
	   state == SB_DIR_ABSENT, "an absent folder in a writable parent will be created");
	ok(!th_exists(path), "and the check created nothing");
	th_mkdir(path, 0700);
	ok(sb_policy_check_empty_or_absent(path, "restore target", &state, &err) && state == SB_DIR_EMPTY,
	   "an empty folder will do");
	th_write_file(th_path(file, "%s/precious", path), "x", 1, 0600);
	refused(sb_policy_check_empty_or_absent(path, "restore target", &state, &err), err, SB_EEXIST,
			"is not empty", "a folder that holds a file is refused");
	like(err.message, path, "the refusal names the folder");
	refused(sb_policy_check_empty_or_absent(file, "restore target", &state, &err), err, SB_EINVAL,
			"is not a directory", "a file is refused");
	ok(sb_policy_check_empty_or_absent(th_path(path, "%s/no/such/place", root), "directory of tablespace 7",
									   &state, &err) && state == SB_DIR_ABSENT,
	   "a folder whose parents are missing will do: they are made with it");
	ok(!th_exists(th_path(path, "%s/no", root)), "and the check made none of them");
	refused(sb_policy_check_empty_or_absent(th_path(path, "%s/no/such", file), "directory of tablespace 7",
											&state, &err),
			err, SB_EINVAL, "is not a directory", "a folder below a file is refused");
	like(err.message, "directory of tablespace 7", "the refusal says which place");
	if (geteuid() == 0)
		diag("running as root: access() grants root every write; unwritable folders are tested end to end");
	else
	{
		th_mkdir(th_path(path, "%s/locked", root), 0500);
		refused(sb_policy_check_empty_or_absent(path, "restore target", &state, &err), err, SB_EIO,
				"is not writable", "an empty folder that cannot be written is refused");
		refused(sb_policy_check_empty_or_absent(th_path(file, "%s/copy", path), "restore target", &state, &err),
				err, SB_EIO, "cannot be created in", "a folder in a parent that cannot be written is refused");
		refused(sb_policy_check_empty_or_absent(th_path(file, "%s/a/b/copy", path), "restore target", &state, &err),
				err, SB_EIO, "cannot be created in", "so is one whose nearest parent there cannot be written");
		chmod(path, 0700);
	}
	th_rmtree(root);
}

void
test_policy_running_cluster(void)
{
	char		root[PATH_MAX],
				real[PATH_MAX],
				live[PATH_MAX],
				stale[PATH_MAX],
				path[PATH_MAX];
	SbRunningCluster cluster;
	SbError		err;
	long		pid = -1;

	th_tempdir(root, "policy-cluster");
	ok(realpath(root, real) != NULL, "the temporary folder resolves");
	fake_data_dir(th_path(live, "%s/live", root), (long) getpid());
	fake_data_dir(th_path(stale, "%s/stale", root), dead_pid());

	is_int(sb_policy_postmaster_state(live, &pid), SB_POSTMASTER_RUNNING, "a live postmaster.pid is running");
	is_int(pid, getpid(), "its pid is read");
	is_int(sb_policy_postmaster_state(stale, &pid), SB_POSTMASTER_STALE, "a dead pid is stale");
	is_int(sb_policy_postmaster_state(root, &pid), SB_POSTMASTER_NONE, "no postmaster.pid: none");
	is_int(pid, 0, "and no pid");

	ok(sb_policy_find_running_cluster(th_path(path, "%s/live/base/not/yet", root), &cluster, &err) &&
	   cluster.found, "a path deep inside a running cluster's data directory is found");
	is_int(strcmp(cluster.data_dir, th_path(path, "%s/live", real)), 0, "with that data directory (%s)",
		   cluster.data_dir);
	is_int(cluster.pid, getpid(), "and its postmaster");
	ok(sb_policy_find_running_cluster(live, &cluster, &err) && cluster.found, "the data directory itself is found");
	ok(sb_policy_find_running_cluster(th_path(path, "%s/stale/x", root), &cluster, &err) && !cluster.found,
	   "inside a stopped cluster is not");
	ok(sb_policy_find_running_cluster(th_path(path, "%s/live-sibling", root), &cluster, &err) && !cluster.found,
	   "a sibling named like it is not");
	unlink(th_path(path, "%s/live/PG_VERSION", root));
	ok(sb_policy_find_running_cluster(th_path(path, "%s/live/x", root), &cluster, &err) && !cluster.found,
	   "without PG_VERSION a folder is no data directory");
	th_rmtree(root);
}

void
test_policy_restore_places(void)
{
	char		root[PATH_MAX],
				target[PATH_MAX],
				ts1[PATH_MAX],
				ts2[PATH_MAX],
				live[PATH_MAX],
				path[PATH_MAX];
	SbRelocation r[2] = {{"pg_tblspc/16385", ts1, "directory of tablespace 16385"},
	{"pg_tblspc/16386", ts2, "directory of tablespace 16386"}};
	SbError		err;

	th_tempdir(root, "policy-places");
	th_path(target, "%s/target", root);
	th_path(ts1, "%s/ts1", root);
	th_path(ts2, "%s/ts2", root);
	fake_data_dir(th_path(live, "%s/live", root), (long) getpid());
	ok(sb_policy_check_restore_places(target, r, 2, &err), "a target and two tablespaces, all absent");
	ok(!th_exists(target) && !th_exists(ts1) && !th_exists(ts2), "the check created nothing");

	r[0].to = "relative/ts";
	refused(sb_policy_check_restore_places(target, r, 2, &err), err, SB_EINVAL,
			"tablespace 16385 \"relative/ts\" is not an absolute path", "a relative tablespace directory");
	r[0].to = target;
	refused(sb_policy_check_restore_places(target, r, 2, &err), err, SB_EINVAL,
			"is the same directory as restore target", "a tablespace at the restore target");
	r[0].to = th_path(ts1, "%s/target/pg_tblspc/x", root);
	refused(sb_policy_check_restore_places(target, r, 2, &err), err, SB_EINVAL,
			"is inside restore target", "a tablespace inside the restore target");
	r[0].to = th_path(ts1, "%s/ts1", root);
	refused(sb_policy_check_restore_places(th_path(path, "%s/ts1/data", root), r, 2, &err), err, SB_EINVAL,
			"restore target", "a restore target inside a tablespace");
	r[1].to = th_path(ts2, "%s/ts1/", root);
	refused(sb_policy_check_restore_places(target, r, 2, &err), err, SB_EINVAL,
			"tablespace 16386", "two tablespaces in one directory");
	r[1].to = th_path(ts2, "%s/ts1/inner", root);
	refused(sb_policy_check_restore_places(target, r, 2, &err), err, SB_EINVAL,
			"is inside directory of tablespace 16385", "a tablespace inside another");
	r[1].to = th_path(ts2, "%s/live/ts2", root);
	refused(sb_policy_check_restore_places(target, r, 2, &err), err, SB_EINVAL,
			"running PostgreSQL server", "a tablespace inside a running cluster's data directory");
	like(err.message, live, "the refusal names the data directory");
	refused(sb_policy_check_restore_places(th_path(path, "%s/live", root), r, 1, &err), err, SB_EINVAL,
			"running PostgreSQL server", "a running cluster's data directory as the target");
	r[1].to = th_path(ts2, "%s/ts2", root);
	th_mkdir(ts2, 0700);
	th_write_file(th_path(path, "%s/PG_15_202209061", ts2), "x", 1, 0600);
	refused(sb_policy_check_restore_places(target, r, 2, &err), err, SB_EEXIST,
			"directory of tablespace 16386", "a tablespace directory that is not empty");
	ok(!th_exists(target) && !th_exists(ts1), "no refusal created anything");
	th_rmtree(root);
}

void
test_policy_mappings(void)
{
	const char *twice[] = {"/old=/new1", "/other=/x", "/old=/new2"};
	const char *at_target[] = {"/old=/srv/copy"};
	const char *inside[] = {"/old=/srv/copy/ts"};
	const char *beside[] = {"/old=/srv/copy-ts", "/old2=/srv/ts2", "/a\\=b=/srv/c\\=d"};
	const char *escaped_twice[] = {"/x\\=y=/n1", "/x=y=/n2"};
	const char *escaped_inside[] = {"/x\\=y=/srv/copy/t\\=s"};
	const char *malformed[] = {"/old=/srv/ts", "not a mapping"};
	SbError		err;

	refused(sb_policy_check_mappings(twice, 3, "/srv/copy", "--tablespace-mapping", &err), err, SB_EINVAL,
			"--tablespace-mapping \"/old=/new2\" maps \"/old\" again (\"/old=/new1\" did already)",
			"the same tablespace mapped twice is refused, naming both mappings as the option");
	refused(sb_policy_check_mappings(twice, 3, "/srv/copy", "tablespace_mapping", &err), err, SB_EINVAL,
			"tablespace_mapping \"/old=/new2\"", "named as the SQL argument for SQL");
	refused(sb_policy_check_mappings(at_target, 1, "/srv/copy/", "tablespace_mapping", &err), err, SB_EINVAL,
			"tablespace_mapping \"/old=/srv/copy\" puts a tablespace at the restore target",
			"a mapping to the restore target is refused");
	refused(sb_policy_check_mappings(inside, 1, "/srv/copy", "tablespace_mapping", &err), err, SB_EINVAL,
			"puts a tablespace inside the restore target", "a mapping inside the restore target is refused");
	ok(sb_policy_check_mappings(beside, 3, "/srv/copy", "tablespace_mapping", &err),
	   "mappings beside the target pass, \"\\=\" in them too");
	refused(sb_policy_check_mappings(escaped_inside, 1, "/srv/copy", "tablespace_mapping", &err), err, SB_EINVAL,
			"puts a tablespace inside the restore target", "NEW read with its \"=\" (\"\\=\")");
	refused(sb_policy_check_mappings(escaped_twice, 2, "/srv/copy", "tablespace_mapping", &err), err, SB_EINVAL,
			"more than one \"=\"", "an unescaped \"=\" in OLD makes a mapping of three parts: refused");
	refused(sb_policy_check_mappings(malformed, 2, "/srv/copy", "--tablespace-mapping", &err), err, SB_EINVAL,
			"--tablespace-mapping \"not a mapping\" is not of the form OLD=NEW",
			"a malformed mapping is refused here too, as the option");
}

/* "\=" is a literal "=" in OLD or NEW; one unescaped "=" splits them; both absolute. */
void
test_policy_parse_mapping(void)
{
	static const struct
	{
		const char *mapping;
		const char *old_path;
		const char *new_path;
	}			good[] = {
		{"/a=/b", "/a", "/b"},
		{"/x/tbl\\=spc=/y/tbl\\=spc", "/x/tbl=spc", "/y/tbl=spc"},
		{"/x\\=\\==/y", "/x==", "/y"},
		{"/back\\slash=/y\\", "/back\\slash", "/y\\"},
		{"/a b=/c d", "/a b", "/c d"},
	};
	static const char *const bad[] = {
		"/a", "=/b", "/a=", "/a=relative", "relative=/b", "/a=/b=/c", "/a\\=/b", "",
	};
	SbMapping	m;
	SbError		err;
	size_t		i;

	th_begin("test_policy_parse_mapping: OLD=NEW, \"\\=\" for an \"=\" in either");
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
	{
		if (!ok(sb_policy_parse_mapping(good[i].mapping, "tablespace_mapping", &m, &err), "\"%s\" read",
				good[i].mapping))
			th_diag_error("parse", &err);
		is_str(m.old_path, good[i].old_path, "OLD");
		is_str(m.new_path, good[i].new_path, "NEW");
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		ok(!sb_policy_parse_mapping(bad[i], "--tablespace-mapping", &m, &err) && err.code == SB_EINVAL,
		   "\"%s\" refused", bad[i]);
		like(err.message, "--tablespace-mapping \"", "naming the option");
	}
}

void
test_policy_folder_names(void)
{
	static const char *const not_stripes[] = {"stripe-0.sbs", "stripe-65.sbs", "stripe-01.sbs",
		"stripe-1.sbs.tmp", "stripe-.sbs", "xstripe-1.sbs", "stripe-1.sbsx", "stripe-1", "manifest.json",
	"stripe--1.sbs", "stripe-4294967297.sbs"};
	uint32_t	k,
				number = 0;
	bool		all = true;
	size_t		i;

	is_int(strcmp(SB_MANIFEST_TEMP_FILE, "manifest.json.tmp"), 0, "the manifest's temporary name");
	for (k = 1; k <= SB_MAX_STRIPES; k++)
	{
		char		name[32];

		sb_stripe_file_name(k, name, sizeof(name));
		all = all && sb_policy_parse_stripe_file_name(name, &number) && number == k;
	}
	ok(all, "every stripe file name the backup writes is recognized with its number");
	ok(sb_policy_parse_stripe_file_name("stripe-64.sbs", &number) && number == 64, "stripe-64.sbs is stripe 64");
	for (i = 0; i < sizeof(not_stripes) / sizeof(not_stripes[0]); i++)
		ok(!sb_policy_parse_stripe_file_name(not_stripes[i], &number), "\"%s\" is no stripe file", not_stripes[i]);
}

void
test_policy_numbers(void)
{
	static const char *const bad_rates[] = {"", "1,,2", "1,", ",1", "1, ,2", " ", "1x", "-1", "+1", "nan",
	"inf", "infinity", "1e3", "0x10", ".5", "5.", "1;2", "1 2"};
	static const char *const bad_ints[] = {"", "-", " 1", "1 ", "+1", "1x", "0x10", "--1", "99999999999999999999"};
	static const char *const bad_sizes[] = {"", "k", "1 M", "-1", "1.5M", "1Mb", "1X", "1MM", " 1",
	"20000000T", "99999999999999999999"};
	char		many[512] = "1";
	SbNumberList list;
	SbError		err;
	uint64_t	size = 0;
	long		v = 0;
	size_t		i;

	ok(sb_policy_parse_rates("50", &list, &err) && list.count == 1, "one rate");
	ok(sb_policy_rate_of(&list, 0) == 50 && sb_policy_rate_of(&list, 63) == 50, "applies to every stripe");
	ok(sb_policy_parse_rates("1,2.5,0", &list, &err) && list.count == 3, "three rates");
	ok(sb_policy_rate_of(&list, 1) == 2.5 && sb_policy_rate_of(&list, 2) == 0 &&
	   sb_policy_rate_of(&list, 3) == 0, "one each, none past the list");
	ok(sb_policy_parse_rates(" 18.5, 74 ", &list, &err) && list.count == 2 && list.values[1] == 74,
	   "blanks around the items, as postgresql.conf is written");
	for (i = 0; i < sizeof(bad_rates) / sizeof(bad_rates[0]); i++)
	{
		refused(sb_policy_parse_rates(bad_rates[i], &list, &err), err, SB_EINVAL,
				bad_rates[i][0] ? bad_rates[i] : "\"\"", "rate \"%s\" is refused", bad_rates[i]);
	}
	like(err.message, "not a number", "a bad item is called so");
	refused(sb_policy_parse_rates("1,,2", &list, &err), err, SB_EINVAL, "empty rate", "an empty item is called so");
	for (i = 1; i <= SB_MAX_STRIPES; i++)
		strcat(many, ",1");
	refused(sb_policy_parse_rates(many, &list, &err), err, SB_EINVAL, "more than 64 rates", "65 rates");
	refused(sb_policy_parse_rates("1,2000000000000", &list, &err), err, SB_EINVAL, "too large", "a rate above 10^12");

	ok(sb_policy_parse_weights("2,2,1", &list, &err) && list.count == 3 && list.values[0] == 2, "weights");
	ok(sb_policy_parse_weights("0.5", &list, &err), "a fractional weight");
	refused(sb_policy_parse_weights("1,0", &list, &err), err, SB_EINVAL, "weight 0 in \"1,0\"", "a zero weight");
	refused(sb_policy_parse_weights("1,,2", &list, &err), err, SB_EINVAL, "empty weight", "an empty weight");

	ok(sb_policy_parse_int("12", 1, 256, &v, &err) && v == 12, "an integer");
	ok(sb_policy_parse_int("-3", -5, 5, &v, &err) && v == -3, "a negative integer");
	refused(sb_policy_parse_int("300", 1, 256, &v, &err), err, SB_EINVAL, "300 is out of range (1 to 256)",
			"an integer out of range");
	for (i = 0; i < sizeof(bad_ints) / sizeof(bad_ints[0]); i++)
		refused(sb_policy_parse_int(bad_ints[i], -1000, 1000, &v, &err), err, SB_EINVAL,
				bad_ints[i][0] ? bad_ints[i] : "\"\"", "integer \"%s\" is refused", bad_ints[i]);

	ok(sb_policy_parse_size("1048576", &size, &err) && size == 1048576, "a size in bytes");
	ok(sb_policy_parse_size("256k", &size, &err) && size == 256 * 1024, "256k");
	ok(sb_policy_parse_size("1MB", &size, &err) && size == 1024 * 1024, "1MB");
	ok(sb_policy_parse_size("1MiB", &size, &err) && size == 1024 * 1024, "1MiB");
	ok(sb_policy_parse_size("2g", &size, &err) && size == 2ULL << 30, "2g");
	ok(sb_policy_parse_size("1T", &size, &err) && size == 1ULL << 40, "1T");
	for (i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++)
		refused(sb_policy_parse_size(bad_sizes[i], &size, &err), err, SB_EINVAL,
				bad_sizes[i][0] ? bad_sizes[i] : "\"\"", "size \"%s\" is refused", bad_sizes[i]);
}

/* Options for the memory tests: codec, level, chunk size and counts given. */
static void
memory_options(SbBackupOptions *o, SbCodec codec, uint32_t chunk, uint32_t buffers, uint32_t workers)
{
	memset(o, 0, sizeof(*o));
	o->codec = codec;
	o->level = 19;
	o->chunk_size = chunk;
	o->buffer_count = buffers;
	o->workers = workers;
	o->queue_depth = 4;
}

void
test_policy_memory(void)
{
	const uint64_t mb = 1024 * 1024;
	SbBackupOptions o;
	SbMemoryEstimate e;
	SbError		err;

	memset(&o, 0, sizeof(o));
	o.codec = SB_CODEC_ZSTD;
	o.level = 1;
	sb_policy_backup_memory(&o, &e);
	ok(e.buffers >= 2 * SB_DEFAULT_BUFFER_COUNT * mb && e.buffers < 2 * SB_DEFAULT_BUFFER_COUNT * mb + mb,
	   "defaults: 16 buffers of 1 MB, twice with compression (%llu bytes)", (unsigned long long) e.buffers);
	is_int(e.read_ahead, SB_DEFAULT_QUEUE_DEPTH * mb + 2 * mb,
		   "defaults: 4 read-ahead blocks of 1 MB, and 32 small files of 64 kB");
	is_int(e.codec_contexts, sb_cpu_count() * sb_codec_compress_memory(SB_CODEC_ZSTD, 1, mb),
		   "defaults: a level-1 context per CPU");
	is_int(e.index, 0, "no index estimate without an expected size");
	is_int(e.total, e.buffers + e.read_ahead + e.codec_contexts, "the total adds the terms");
	ok(sb_policy_check_memory(&e, 0, &err), "the defaults fit the default limit");

	memory_options(&o, SB_CODEC_ZSTD, 64 * mb, 4096, 2);
	o.expected_bytes = 1000 * 64 * mb;
	sb_policy_backup_memory(&o, &e);
	is_int(e.buffers, 4096 * (64 * mb + sb_codec_bound(SB_CODEC_ZSTD, 64 * mb)), "4096 buffers of 64 MB, and their output");
	is_int(e.read_ahead, 4 * 64 * mb + 2 * mb, "4 read-ahead blocks of 64 MB, and the small files'");
	is_int(e.codec_contexts, 2 * sb_codec_compress_memory(SB_CODEC_ZSTD, 19, 64 * mb), "two level-19 contexts");
	is_int(e.index, 1000 * SB_INDEX_ENTRY_SIZE, "48 bytes of index per chunk expected");
	refused(sb_policy_check_memory(&e, 0, &err), err, SB_EINVAL,
			"buffer_count 4096 x transfer_size 64 MB (x2 with compression) (514.1 GB)", "half a terabyte of buffers is refused");
	like(err.message, "read-ahead queue_depth 4 x 64 MB (256 MB)", "the message shows the read-ahead");
	like(err.message, "small files read ahead 32 x 64 kB (2 MB)", "and the small files read ahead");
	like(err.message, "zstd level 19: 2 workers x ", "the message shows the contexts");
	like(err.message, "index of 1000 chunks x 48 bytes (46.9 kB)", "the message shows the index");
	like(err.message, " GB of memory, above the default limit of 1 GB (stripebackup.max_memory",
		 "the message gives the total and the limit");

	memory_options(&o, SB_CODEC_NONE, 64 * mb, 2, 4);
	sb_policy_backup_memory(&o, &e);
	is_int(e.buffers, 2 * 64 * mb, "without compression a buffer each");
	is_int(e.codec_contexts, 0, "and no contexts");
	ok(strstr(e.breakdown, "x2") == NULL && strstr(e.breakdown, "zstd") == NULL, "nor do they show");
	ok(sb_policy_check_memory(&e, 0, &err), "386 MB fits the default limit");
	refused(sb_policy_check_memory(&e, 100 * mb, &err), err, SB_EINVAL, "= 386 MB of memory, above the limit of 100 MB",
			"it does not fit a limit of 100 MB");
	ok(sb_policy_check_memory(&e, e.total, &err), "a limit of exactly the total fits");

	{
		const char *dests[] = {"/mnt/a", "s3://bk1/x", "s3://bk2/y"};

		memory_options(&o, SB_CODEC_NONE, mb, 2, 1);
		o.destinations = dests;
		o.ndestinations = 3;
		sb_policy_backup_memory(&o, &e);
		is_int(e.uploads, 2 * 5 * 8 * mb, "two buckets: 5 part buffers of 8 MB each");
		like(e.breakdown, "2 bucket(s) x 5 parts of 8 MB", "shown");
		is_int(e.total, e.buffers + e.read_ahead + e.uploads, "and counted");
	}
}

/* Destinations of F hold what they held: nothing was created. */
static bool
dests_empty(const ThFixture *f)
{
	uint32_t	i;

	for (i = 0; i < f->ndests; i++)
		if (th_count_entries(f->dest[i]) != 0)
			return false;
	return true;
}

/*
 * What a read needs counts its window of files when the entries are
 * streamed, and as much for the members alone: stripe_restore() checks
 * those before its worker streams them, and must not pass what the worker
 * refuses.
 */
static void
read_window_counted(ThFixture *f, const SbReadOptions *ro)
{
	char		location[PATH_MAX];
	SbError		err;
	SbArchive  *whole = sb_archive_open(th_location(f, 0, "bk", location), &err);
	SbArchive  *head = sb_archive_open_with(location,
				&(SbArchiveOpenOptions){.keep = SB_KEEP_HEAD}, &err);
	SbArchive  *streamed = sb_archive_open_with(location,
				&(SbArchiveOpenOptions){.keep = SB_KEEP_STREAMED, .spool_dir = f->root}, &err);
	SbMemoryEstimate table,
				members,
				window;

	if (!ok(whole && head && streamed && head->manifest->head_only && streamed->manifest->streamed,
			"the backup opens whole, for its members, and streamed"))
		goto done;
	sb_policy_read_memory(whole->manifest, ro, &table);
	sb_policy_read_memory(head->manifest, ro, &members);
	sb_policy_read_memory(streamed->manifest, ro, &window);
	is_int(window.total, table.total + (uint64_t) SB_WINDOW_FILES * 160,
		   "streamed: a window of files more than with the table");
	is_int(members.total, window.total, "read for its members: counted as streamed");
done:
	sb_archive_close(whole);
	sb_archive_close(head);
	sb_archive_close(streamed);
}

void
test_policy_memory_hooks(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbReadOptions ro;
	SbRestoreOptions rest;
	SbManifest *m = NULL;
	SbMemoryEstimate e;
	SbArchive  *a;
	SbError		err;
	SbBackup   *b;
	char		location[PATH_MAX];
	uint64_t	problems = 0;

	th_fixture(&f, "policy-memory", 2);
	th_write_pattern(th_path(location, "%s/data", f.src), 300000, 7, true, 0644);
	th_options(&o, f.dests, 2, "bk");
	o.chunk_size = SB_MAX_CHUNK_SIZE;
	o.buffer_count = 64;
	b = sb_backup_begin(&o, &err);
	ok(b == NULL, "sb_backup_begin refuses 64 buffers of 64 MB");
	if (b != NULL)
		sb_backup_abort(b);
	else
		like(err.message, "above the default limit of 1 GB", "saying the limit");
	ok(dests_empty(&f), "and creates nothing");
	o.buffer_count = 4;
	o.max_memory = 64 * 1024 * 1024;
	ok(!sb_backup_check_options(&o, &err) && strstr(err.message, "above the limit of 64 MB") != NULL,
	   "a max_memory of 64 MB refuses 4 buffers of 64 MB");

	th_options(&o, f.dests, 2, "bk");
	o.codec = SB_CODEC_ZSTD;
	o.level = 1;
	o.max_memory = 512 * 1024 * 1024;
	ok(th_backup_tree(&o, f.src, &m, &err), "a backup within a limit of 512 MB");
	sb_manifest_free(m);

	a = sb_archive_open(th_location(&f, 0, "bk", location), &err);
	ok(a != NULL, "the backup opens");
	if (a == NULL)
	{
		th_fixture_done(&f);
		return;
	}
	memset(&ro, 0, sizeof(ro));
	ro.workers = 3;
	ro.buffer_count = 8;
	sb_policy_read_memory(a->manifest, &ro, &e);
	is_int(e.buffers, 8 * (2 * 64 * 1024 + SB_CHUNK_HEADER_SIZE), "read: 8 records and decompression buffers");
	is_int(e.codec_contexts, 3 * sb_codec_decompress_memory(SB_CODEC_ZSTD), "read: a decompression context per worker");
	is_int(e.index, a->manifest->total_chunks * 2 * SB_INDEX_ENTRY_SIZE, "read: every stripe's index");
	ro.max_memory = e.total - 1;
	refused(sb_archive_verify(a, &ro, NULL, NULL, &problems, &err), err, SB_EINVAL,
			"buffer_count 8 x the backup's chunk size 64 kB (x2 with compression)",
			"verify refuses a byte less than its settings need");
	memset(&rest, 0, sizeof(rest));
	rest.target = f.target;
	rest.read = ro;
	refused(sb_archive_restore(a, &rest, &err), err, SB_EINVAL, "above the limit",
			"restore refuses it too");
	ok(!th_exists(f.target), "and leaves no target behind");
	ro.max_memory = e.total;
	ok(sb_archive_verify(a, &ro, NULL, NULL, &problems, &err) && problems == 0,
	   "verify runs within exactly what it needs");
	sb_archive_close(a);
	read_window_counted(&f, &ro);
	th_fixture_done(&f);
}
