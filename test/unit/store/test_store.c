/*
 * test_store.c
 *		The store interface (store/store.h), the same checks run once per
 *		driver: a local folder, and a bucket of the test S3 server
 *		(test/s3/with-s3.sh), reached with connection settings given when
 *		the store is opened.  Entering and making folders, putting whole
 *		(with and without replacing), listing, reading, stamps, removal
 *		only of the file a stamp describes, and making names durable; then
 *		what only one driver does: a missing folder or link refused locally,
 *		a missing bucket never taken for a missing object.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "harness.h"
#include "store/store.h"
#include "drivers.h"
#include "tests.h"

#define BUCKET "bk1"

/* An SbStoreEntryFn: the entries' names and sizes, "name=size;" each, into ARG (512 bytes). */
static bool
collect_entry(void *arg, const char *name, int64_t size, SbError *err)
{
	char	   *out = arg;
	size_t		used = strlen(out);

	snprintf(out + used, 512 - used, "%s=%lld;", name, (long long) size);
	return true;
}

/* The whole of NAME of S read back through an open file, NUL-terminated into OUT. */
static bool
read_back(SbStore *s, const char *name, char *out, size_t len, SbError *err)
{
	SbStoreFile f;
	char		path[PATH_MAX + NAME_MAX + 2];
	ssize_t		got;

	if (!sb_store_open_in(s, name, &f, path, sizeof(path), err))
		return false;
	got = sb_store_pread(&f, out, len - 1, 0, err);
	sb_store_close(&f);
	if (got < 0)
		return false;
	out[got] = '\0';
	return true;
}

/* Folders made and listed below S, whatever their depth. */
static void
check_tree(SbStore *s, const char *driver)
{
	SbStore    *nest = NULL,
			   *again = NULL;
	SbError		err;
	char		listed[512] = "";

	if (!ok(sb_store_make(s, "nest", &nest, &err) && nest != NULL, "%s: a new folder made", driver))
	{
		th_diag_error("make", &err);
		return;
	}
	ok(sb_store_put(nest, "deep", "333", 3, false, &err), "%s: a file in it", driver);
	ok(!sb_store_make(s, "nest", &again, &err) && err.code == SB_EEXIST && again == NULL,
	   "%s: a folder that holds something is not made again", driver);
	ok(sb_store_list_all(s, collect_entry, listed, &err) && strstr(listed, "nest/deep=3;") != NULL &&
	   strstr(listed, "two=2;") != NULL, "%s: everything below, by its path (%s)", driver, listed);
	ok(sb_store_remove(nest, "deep", NULL, &err), "%s: the file removed", driver);
	sb_store_free(nest);
	sb_store_remove_folder(s, "nest");
	listed[0] = '\0';
	ok(sb_store_list(s, collect_entry, listed, &err) && strstr(listed, "nest") == NULL,
	   "%s: and the folder (%s)", driver, listed);
}

/* Files made front to back: under their name, or a temporary one renamed when finished. */
static void
check_writers(SbStore *s, const char *driver)
{
	SbStoreCreate temp = {.temp_name = "made.tmp", .what = "test file"};
	SbStoreWriter *w;
	SbError		err;
	char		text[64];

	w = sb_store_create(s, "stripe", NULL, &err);
	ok(w != NULL && sb_store_append(w, "head", 4, &err) && sb_store_write_at(w, "-tail", 5, 4, &err) &&
	   sb_store_appended(w) == 9 && sb_store_writer_sync(w, &err) && sb_store_writer_finish(w, &err),
	   "%s: a file written front to back and finished", driver);
	like(w ? sb_store_writer_path(w) : "", "/backups/stripe", "%s: named as the store's", driver);
	ok(read_back(s, "stripe", text, sizeof(text), &err) && strcmp(text, "head-tail") == 0,
	   "%s: its bytes read back", driver);
	sb_store_writer_abort(w);
	sb_store_writer_free(w);
	ok(!read_back(s, "stripe", text, sizeof(text), &err) && err.code == SB_ENOTFOUND,
	   "%s: undone, finished or not", driver);
	w = sb_store_create(s, "made", &temp, &err);
	ok(w != NULL && sb_store_append(w, "whole", 5, &err), "%s: a file under a temporary name", driver);
	ok(!read_back(s, "made", text, sizeof(text), &err), "%s: not there before it is finished", driver);
	ok(w != NULL && sb_store_writer_finish(w, &err), "%s: finished", driver);
	sb_store_writer_free(w);
	ok(read_back(s, "made", text, sizeof(text), &err) && strcmp(text, "whole") == 0,
	   "%s: then there, whole", driver);
	ok(!sb_store_stamp(s, "made.tmp", &(SbStoreStamp) {0}), "%s: no temporary name left", driver);
	ok(sb_store_remove(s, "made", NULL, &err), "%s: removed", driver);
	w = sb_store_create(s, "given-up", &temp, &err);
	ok(w != NULL && sb_store_append(w, "x", 1, &err), "%s: another, not finished", driver);
	sb_store_writer_free(w);
	ok(!sb_store_stamp(s, "given-up", &(SbStoreStamp) {0}) && !sb_store_stamp(s, "made.tmp", &(SbStoreStamp) {0}),
	   "%s: leaves nothing when freed", driver);
}

/* What every driver must do the same, in store ROOT. */
static void
check_operations(SbStore *root, const char *driver)
{
	SbStore    *sub = NULL;
	SbStoreStamp stamp,
				again;
	SbError		err;
	char		listed[512] = "";
	char		text[64];

	diag("driver %s at %s", driver, sb_store_path(root));
	if (!ok(sb_store_enter(root, "backups", true, &sub, &err) && sub != NULL, "%s: a folder made", driver))
	{
		th_diag_error("enter", &err);
		return;
	}
	like(sb_store_path(sub), "/backups", "%s: named below its parent", driver);
	ok(sb_store_list(sub, collect_entry, listed, &err) && listed[0] == '\0', "%s: empty at first", driver);
	ok(sb_store_put(sub, "one", "first", 5, false, &err), "%s: a file put", driver);
	ok(!sb_store_put(sub, "one", "other", 5, false, &err) && err.code == SB_EEXIST,
	   "%s: not replaced unless asked", driver);
	like(err.message, "appeared while it was being written", "%s: saying so", driver);
	ok(read_back(sub, "one", text, sizeof(text), &err) && strcmp(text, "first") == 0,
	   "%s: the first bytes kept", driver);
	ok(sb_store_put(sub, "one", "replaced", 8, true, &err), "%s: replaced when asked", driver);
	ok(read_back(sub, "one", text, sizeof(text), &err) && strcmp(text, "replaced") == 0,
	   "%s: the new bytes read back", driver);
	ok(sb_store_put(sub, "two", "22", 2, false, &err), "%s: a second file", driver);
	ok(sb_store_sync(sub, &err), "%s: names made durable", driver);
	listed[0] = '\0';
	ok(sb_store_list(sub, collect_entry, listed, &err), "%s: listed", driver);
	ok(strstr(listed, "one=8;") != NULL && strstr(listed, "two=2;") != NULL,
	   "%s: both, with their sizes (%s)", driver, listed);
	ok(sb_store_stamp(sub, "one", &stamp) && stamp.st.st_size == 8, "%s: stamped with its size", driver);
	ok(sb_store_stamp(sub, "one", &again) && sb_store_stamps_equal(&stamp, &again),
	   "%s: the same file, the same stamp", driver);
	ok(!sb_store_stamp(sub, "three", &again), "%s: no stamp of what is not there", driver);
	check_tree(sub, driver);
	check_writers(sub, driver);
	ok(sb_store_remove(sub, "one", &stamp, &err), "%s: removed as stamped", driver);
	ok(!read_back(sub, "one", text, sizeof(text), &err) && err.code == SB_ENOTFOUND,
	   "%s: gone", driver);
	like(err.message, "/backups/one\" does not exist", "%s: naming it", driver);
	ok(sb_store_remove(sub, "two", NULL, &err), "%s: removed as it is", driver);
	sb_store_free(sub);
}

/* A local folder: stamps prove the inode, links are never followed, a missing destination is named. */
static void
check_posix_only(const char *dir)
{
	SbStoreOptions o = {.what = "test destination", .owner = "the test"};
	SbStore    *s,
			   *sub = NULL;
	SbStoreStamp stamp;
	SbError		err;
	char		path[PATH_MAX];
	char		missing[PATH_MAX];

	th_path(missing, "%s/not-mounted", dir);
	ok(sb_store_new(missing, &o, &err) == NULL && err.code == SB_ENOTFOUND, "posix: a missing destination refused");
	like(err.message, "test destination \"", "posix: named as the caller calls it");
	like(err.message, "does not exist (is its device mounted?)", "posix: with what to look at");
	if ((s = sb_store_new(dir, &o, &err)) == NULL)
	{
		th_diag_error("open", &err);
		return;
	}
	ok((sb_store_features(s) & SB_STORE_INODE_IDENTITY) && (sb_store_features(s) & SB_STORE_DURABLE_RENAME) &&
	   sb_store_fd(s) >= 0, "posix: inodes, renames and descriptors");
	ok(sb_store_enter(s, "absent", false, &sub, &err) && sub == NULL, "posix: a missing folder, not made");
	th_path(path, "%s/link", dir);
	ok(symlink("/tmp", path) == 0, "a link in the store");
	ok(!sb_store_enter(s, "link", true, &sub, &err) && err.code == SB_EINVAL, "posix: a link not entered");
	like(err.message, "is a symbolic link; the test never follows one", "posix: saying whose rule");
	ok(sb_store_put(s, "f", "x", 1, false, &err) && sb_store_stamp(s, "f", &stamp), "posix: a file stamped");
	/* Made before the first goes, so that it cannot reuse its inode. */
	th_path(path, "%s/g", dir);
	th_path(missing, "%s/f", dir);
	ok(th_write_file(path, "y", 1, 0600) && rename(path, missing) == 0, "the file replaced by another");
	th_path(path, "%s/f", dir);
	ok(!sb_store_remove(s, "f", &stamp, &err), "posix: not removed: the stamp is another file's");
	like(err.message, "was replaced while it was being removed", "posix: saying so");
	ok(th_exists(path), "posix: the other file kept");
	sb_store_free(s);
}

/* A bucket: reached lazily, a missing bucket is an error of the destination, never "not there". */
static void
check_s3_only(const SbStoreOptions *o)
{
	SbStore    *s;
	SbError		err;
	char		text[16];

	if ((s = sb_store_new("s3://no-such-bucket-sb/p", o, &err)) == NULL)
	{
		th_diag_error("open", &err);
		return;
	}
	ok(sb_store_features(s) & SB_STORE_LAZY, "s3: lazy");
	ok(!(sb_store_features(s) & (SB_STORE_DURABLE_RENAME | SB_STORE_INODE_IDENTITY)) && sb_store_fd(s) < 0,
	   "s3: no renames, no inodes, no descriptors");
	ok(!read_back(s, "x", text, sizeof(text), &err) && err.code != SB_ENOTFOUND,
	   "s3: an object of a missing bucket is not a missing object");
	like(err.message, "NoSuchBucket", "s3: naming why");
	ok(!sb_store_put(s, "x", "1", 1, false, &err), "s3: nothing put in a missing bucket");
	sb_store_free(s);
	ok(sb_store_new("s3://Not_A_Bucket/p", o, &err) == NULL && err.code == SB_EINVAL,
	   "s3: a bad location refused at the opening");
}

void
test_store_drivers(void)
{
	SbStoreOptions o = {0};
	SbS3Settings settings = {0};
	SbStore    *s;
	SbError		err;
	char		dir[PATH_MAX];
	char		dest[128];

	th_tempdir(dir, "store");
	if ((s = sb_store_new(dir, NULL, &err)) != NULL)
		check_operations(s, "posix");
	else
		th_diag_error("posix store", &err);
	sb_store_free(s);
	check_posix_only(dir);
	th_rmtree(dir);

	if (!ok(th_s3_endpoint() != NULL, "an S3 server to test against (run under test/s3/with-s3.sh)"))
		return;
	/* The store's own settings, not the process's: none were given to the process. */
	settings.endpoint = th_s3_endpoint();
	o.s3 = &settings;
	snprintf(dest, sizeof(dest), "s3://" BUCKET "/store-%ld", (long) getpid());
	if ((s = sb_store_new(dest, &o, &err)) != NULL)
		check_operations(s, "s3");
	else
		th_diag_error("s3 store", &err);
	sb_store_free(s);
	check_s3_only(&o);
}

void
test_store_destinations(void)
{
	SbError		err;

	ok(sb_store_features_of("/var/backups") & SB_STORE_INODE_IDENTITY, "a path: a local folder's features");
	ok(sb_store_features_of("s3://bk1/p") & SB_STORE_LAZY, "a location: a bucket's");
	is_int(sb_store_features_of(NULL), 0, "no destination: no features");
	ok(sb_store_check_destination("/x", "backup destination", &err), "an absolute path is a destination");
	ok(sb_store_check_destination("s3://bk1/p", "backup destination", &err), "so is a location");
	ok(!sb_store_check_destination("x/y", "backup destination", &err) && err.code == SB_EINVAL,
	   "a relative path is not");
	like(err.message, "backup destination \"x/y\" is neither an absolute path nor an s3:// location",
		 "naming it");
	ok(!sb_store_check_destination("s3://B_/p", "backup destination", &err), "nor a bad bucket name");
	ok(sb_store_same_place("s3://bk1/a/b", "s3://bk1/a/b"), "one bucket and prefix: one place");
	ok(!sb_store_same_place("s3://bk1/a", "s3://bk1/b"), "two prefixes: two places");
	ok(!sb_store_same_place("/a", "/a"), "local folders are told apart by their inodes, not their text");
}

/* The pre-flight probe of a local folder: writable, its space and device; read-only; missing. */
void
test_store_probe(void)
{
	SbStoreProbe p;
	SbError		err;
	char		dir[PATH_MAX];
	char		missing[PATH_MAX + 16];
	struct stat st;

	th_tempdir(dir, "probe");
	ok(sb_store_probe(dir, NULL, &p, &err), "a folder passes the probe");
	ok(p.listed && p.writable && p.local, "listed, written, local");
	ok(p.free_bytes > 0, "its free space is known");
	ok(stat(dir, &st) == 0 && p.device == (uint64_t) st.st_dev, "so is its device");
	is_int(th_count_entries(dir), 0, "the probe's file is gone");
	if (geteuid() != 0 && chmod(dir, 0555) == 0)
	{
		ok(!sb_store_probe(dir, NULL, &p, &err) && p.listed && !p.writable, "a read-only folder lists but is not writable");
		like(err.message, "Permission denied", "saying why");
		chmod(dir, 0700);
	}
	snprintf(missing, sizeof(missing), "%s/none", dir);
	ok(!sb_store_probe(missing, NULL, &p, &err) && !p.listed, "a missing folder fails the probe");
	th_rmtree(dir);
}
