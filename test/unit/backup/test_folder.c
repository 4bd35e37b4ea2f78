/*
 * test_folder.c
 *		sb_backup_folder_remove removes only what one backup wrote: its
 *		manifest, its manifest's temporary file and its stripes, through
 *		descriptors that never follow a link.  A folder holding anything
 *		else, a folder or destination that is a link, keeps everything.
 *		Removal of one's own files, partial folders and foreign files run
 *		once per store driver (drivers.h): a local folder, then a prefix of
 *		a bucket; links, directories and inodes stay local.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_folder.h"
#include "stripebackup/sb_keep.h"
#include "stripebackup/sb_policy.h"
#include "backup/folder_internal.h"
#include "drivers.h"
#include "harness.h"
#include "tests.h"

/* Backup NAME of a small tree over F's first two destinations; its uuid into UUID. */
static bool
make_backup(ThFixture *f, const char *name, uint8_t *uuid)
{
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	char		path[PATH_MAX];
	bool		done;

	th_path(path, "%s/data", f->src);
	if (!th_exists(path))
		th_write_pattern(path, 200000, 3, true, 0644);
	th_options(&o, f->dests, 2, name);
	done = th_backup_tree(&o, f->src, &m, &err);
	if (!ok(done, "backup \"%s\" over two destinations", name))
		th_diag_error("backup", &err);
	if (m != NULL)
		memcpy(uuid, m->uuid, 16);
	sb_manifest_free(m);
	return done;
}

/* Copy the first LEN bytes of FROM (all of it when LEN is 0) to TO. */
static bool
copy_start(const char *from, const char *to, size_t len)
{
	size_t		size = 0;
	uint8_t    *data = th_dest_read(from, &size);
	bool		done = data != NULL && th_dest_write(to, data, len && len < size ? len : size);

	free(data);
	return done;
}

/* Size of the file at PATH, or 0. */
static uint64_t
size_of(const char *path)
{
	return th_dest_size(path);
}

/* Removing DEST/NAME (dry run or not) keeps the folder: VERDICT, detail naming WANT. */
static void
expect_kept(const char *dest, const char *name, const uint8_t *uuid, bool dry_run,
			SbFolderVerdict verdict, const char *want, const char *what)
{
	SbFolderRemoval r;
	SbError		err;
	char		folder[PATH_MAX];
	int			before = th_dest_count_entries(th_path(folder, "%s/%s", dest, name));

	ok(sb_backup_folder_remove(dest, NULL, name, uuid, dry_run, &r, &err), "%s: the check runs", what);
	is_int(r.verdict, verdict, "%s: kept, verdict %d", what, (int) verdict);
	like(r.detail, want, "%s: the reason names %s", what, want);
	is_int(r.files, 0, "%s: no file counted as removed", what);
	is_int(th_dest_count_entries(folder), before, "%s: the folder holds what it held (%d entries)", what, before);
}

static void
folder_removes_own_files(const ThDriver *d, void *arg)
{
	ThFixture	f;
	SbFolderRemoval r;
	SbError		err;
	uint8_t		uuid[16];
	char		folder[PATH_MAX],
				path[PATH_MAX];
	uint64_t	bytes;

	th_fixture(&f, "folder-own", 2);
	th_driver_dests(d, &f, "folder-own");
	if (!make_backup(&f, "bk", uuid))
	{
		th_fixture_done(&f);
		return;
	}
	th_location(&f, 0, "bk", folder);
	bytes = size_of(th_path(path, "%s/manifest.json", folder)) + size_of(th_path(path, "%s/stripe-1.sbs", folder));
	ok(sb_backup_folder_remove(f.dest[0], NULL, "bk", uuid, true, &r, &err), "a dry run");
	is_int(r.verdict, SB_FOLDER_REMOVED, "says the folder would be removed");
	is_int(r.files, 2, "the manifest and the stripe");
	is_int(r.bytes, bytes, "their bytes");
	is_int(th_dest_count_entries(folder), 2, "and removes nothing");

	ok(sb_backup_folder_remove(f.dest[0], NULL, "bk", uuid, false, &r, &err), "the removal");
	is_int(r.verdict, SB_FOLDER_REMOVED, "removes the folder");
	is_int(r.files, 2, "two files removed");
	is_int(r.bytes, bytes, "their bytes counted");
	ok(d->s3 ? th_dest_count_entries(folder) == 0 : !th_exists(folder), "the folder is gone");
	is_int(th_dest_count_entries(th_location(&f, 1, "bk", path)), 2, "the other destination's folder is untouched");

	ok(sb_backup_folder_remove(f.dest[0], NULL, "bk", uuid, false, &r, &err), "removing it again");
	is_int(r.verdict, SB_FOLDER_ABSENT, "finds nothing to do");
	/* A destination not there: a folder not mounted, a bucket that does not exist. */
	if (!d->s3)
		th_path(path, "%s/unmounted", f.root);
	else
		th_path(path, "s3://no-such-bucket-sb/x");
	ok(sb_backup_folder_remove(path, NULL, "bk", uuid, false, &r, &err), "a destination that is not there");
	is_int(r.verdict, d->s3 ? SB_FOLDER_BUCKET_MISSING : SB_FOLDER_DESTINATION_MISSING, "is said to be missing");
	like(r.detail, d->s3 ? "bucket \"no-such-bucket-sb\" does not exist" : "is its device mounted", "with a hint");
	ok(!sb_backup_folder_remove(f.dest[1], NULL, "../d2", uuid, false, &r, &err) && err.code == SB_EINVAL,
	   "a name that is not a plain name is refused");
	like(err.message, "../d2", "naming it");
	th_fixture_done(&f);
}

void
test_folder_removes_own_files(void)
{
	th_each_driver(folder_removes_own_files, NULL);
}

static void
folder_partial(const ThDriver *d, void *arg)
{
	ThFixture	f;
	SbFolderRemoval r;
	SbError		err;
	uint8_t		uuid[16];
	char		folder[PATH_MAX],
				partial[PATH_MAX],
				from[PATH_MAX],
				to[PATH_MAX];
	uint64_t	stripe_bytes;

	th_fixture(&f, "folder-partial", 2);
	th_driver_dests(d, &f, "folder-partial");
	if (!make_backup(&f, "bk", uuid))
	{
		th_fixture_done(&f);
		return;
	}
	th_location(&f, 0, "bk", folder);
	/*
	 * What a crash leaves.  In a folder: a stripe begun (its header and a
	 * little), the manifest half written under its temporary name.  In a
	 * bucket an object appears whole or not at all and the manifest has no
	 * temporary name (the s3 driver writes none): a whole stripe, no
	 * manifest.
	 */
	th_path(partial, "%s/partial", f.dest[0]);
	if (!d->s3)
	{
		th_mkdir(partial, 0700);
		ok(copy_start(th_path(from, "%s/stripe-1.sbs", folder), th_path(to, "%s/stripe-1.sbs", partial), 100) &&
		   copy_start(th_path(from, "%s/manifest.json", folder), th_path(to, "%s/" SB_MANIFEST_TEMP_FILE, partial), 120),
		   "a partial folder: a stripe header and the start of a manifest");
	}
	else
		ok(copy_start(th_path(from, "%s/stripe-1.sbs", folder), th_path(to, "%s/stripe-1.sbs", partial), 0),
		   "a partial folder: a stripe and no manifest");
	stripe_bytes = th_dest_size(th_path(from, "%s/stripe-1.sbs", folder));
	ok(sb_backup_folder_remove(f.dest[0], NULL, "partial", uuid, false, &r, &err), "removing it");
	is_int(r.verdict, SB_FOLDER_REMOVED, "removes it");
	is_int(r.files, d->s3 ? 1 : 2, "every file");
	is_int(r.bytes, d->s3 ? stripe_bytes : 220, "their bytes");
	ok(d->s3 ? th_dest_count_entries(partial) == 0 : !th_exists(partial), "the folder is gone");

	/*
	 * The temporary manifest of another backup, or one cut before its uuid,
	 * is not ours.  Local only: in a bucket no object of that name is
	 * stripebackup's, and it keeps the folder as a file it never writes.
	 */
	if (!d->s3)
	{
		th_mkdir(partial, 0700);
		copy_start(th_path(from, "%s/manifest.json", folder), th_path(to, "%s/" SB_MANIFEST_TEMP_FILE, partial), 40);
		expect_kept(f.dest[0], "partial", uuid, false, SB_FOLDER_FOREIGN, "does not begin as a manifest of backup",
					"a temporary manifest cut before its uuid");
		uuid[0] ^= 1;
		copy_start(th_path(from, "%s/manifest.json", folder), to, 0);
		expect_kept(f.dest[0], "partial", uuid, false, SB_FOLDER_FOREIGN, SB_MANIFEST_TEMP_FILE,
					"the temporary manifest of another backup");
		uuid[0] ^= 1;
	}
	else
	{
		th_dest_write(th_path(to, "%s/" SB_MANIFEST_TEMP_FILE, partial), "{", 1);
		expect_kept(f.dest[0], "partial", uuid, false, SB_FOLDER_FOREIGN,
					SB_MANIFEST_TEMP_FILE "\" is not a file stripebackup writes",
					"an object named as a temporary manifest");
	}
	th_dest_remove(to);
	ok(th_dest_write(th_path(to, "%s/stripe-1.sbs", partial), "", 0), "an empty stripe file");
	/* The s3 driver's check says less: it reads a header, not its size first. */
	expect_kept(f.dest[0], "partial", uuid, false, SB_FOLDER_FOREIGN, d->s3 ? "is not stripe 1 of backup" : "too few",
				"an empty stripe file");
	copy_start(th_path(from, "%s/stripe-1.sbs", folder), to, 0);
	th_dest_flip_byte(to, 20, 0x40);
	expect_kept(f.dest[0], "partial", uuid, false, SB_FOLDER_FOREIGN,
				d->s3 ? "is not stripe 1 of backup" : "has no stripe header", "a stripe whose header is damaged");
	th_fixture_done(&f);
}

void
test_folder_partial(void)
{
	th_each_driver(folder_partial, NULL);
}

static void
folder_foreign(const ThDriver *d, void *arg)
{
	ThFixture	f;
	uint8_t		uuid[16],
				other[16];
	char		folder[PATH_MAX],
				path[PATH_MAX],
				from[PATH_MAX];

	th_fixture(&f, "folder-foreign", 2);
	th_driver_dests(d, &f, "folder-foreign");
	if (!make_backup(&f, "bk", uuid) || !make_backup(&f, "other", other))
	{
		th_fixture_done(&f);
		return;
	}
	th_location(&f, 0, "bk", folder);
	th_dest_write(th_path(path, "%s/notes.txt", folder), "mine", 4);
	expect_kept(f.dest[0], "bk", uuid, false, SB_FOLDER_FOREIGN, "notes.txt\" is not a file stripebackup writes",
				"a file of someone else");
	th_dest_remove(path);
	/* Directories and links are a local folder's: a bucket holds only objects. */
	if (!d->s3)
	{
		th_mkdir(path, 0700);
		expect_kept(f.dest[0], "bk", uuid, false, SB_FOLDER_FOREIGN, "\"notes.txt\" is a directory", "a directory");
		rmdir(path);
		ok(symlink("/etc/passwd", th_path(path, "%s/stripe-2.sbs", folder)) == 0, "a link named like a stripe");
		expect_kept(f.dest[0], "bk", uuid, false, SB_FOLDER_FOREIGN, "\"stripe-2.sbs\" is a symbolic link",
					"a link named like a stripe");
		unlink(path);
	}
	th_path(path, "%s/stripe-2.sbs", folder);
	ok(copy_start(th_path(from, "%s/other/stripe-2.sbs", f.dest[1]), path, 0), "another backup's stripe copied in");
	expect_kept(f.dest[0], "bk", uuid, false, SB_FOLDER_FOREIGN, "stripe-2.sbs\" is not stripe 2 of backup",
				"a stripe of another backup");
	th_dest_remove(path);
	ok(copy_start(th_path(from, "%s/bk/stripe-2.sbs", f.dest[1]), th_path(path, "%s/stripe-3.sbs", folder), 0),
	   "its own stripe 2 under the name of stripe 3");
	expect_kept(f.dest[0], "bk", uuid, false, SB_FOLDER_FOREIGN, "is not stripe 3", "a stripe under another number");
	th_dest_remove(path);
	expect_kept(f.dest[0], "bk", other, true, SB_FOLDER_FOREIGN, "manifest.json\" is not the manifest of backup",
				"the folder, asked for as another backup");
	ok(th_dest_edit(th_path(path, "%s/manifest.json", folder), "\"format\"", "\"formal\""), "a manifest edited");
	expect_kept(f.dest[0], "bk", uuid, false, SB_FOLDER_FOREIGN, "is not the manifest", "a manifest that is not one");
	th_fixture_done(&f);
}

/*
 * A kept backup's label (keep.json): put, read back, removed; a folder whose
 * label names another backup is kept, one whose label names its own goes whole.
 */
void
test_folder_keep_label(void)
{
	ThFixture	f;
	SbFolderRemoval r;
	SbKeepLabel label;
	SbError		err;
	uint8_t		uuid[16],
				other[16];
	char		folder[PATH_MAX],
				path[PATH_MAX],
				hex[33];

	th_fixture(&f, "folder-keep", 2);
	if (!make_backup(&f, "bk", uuid) || !make_backup(&f, "other", other))
	{
		th_fixture_done(&f);
		return;
	}
	th_location(&f, 0, "bk", folder);
	sb_folder_uuid_hex(uuid, hex);
	ok(sb_keep_label_put(f.dest[0], NULL, "bk", other, "x", &err), "a label of another backup put in");
	expect_kept(f.dest[0], "bk", uuid, false, SB_FOLDER_FOREIGN, "\"keep.json\" is not the label of backup",
				"another backup's label");
	ok(!sb_keep_label_read(folder, NULL, hex, &label, &err) && err.code == SB_ECORRUPT, "is not read as this one's");
	ok(sb_keep_label_put(f.dest[0], NULL, "bk", uuid, "before \"the\"\n\x1b upgrade", &err), "its own replaces it");
	ok(sb_keep_label_read(folder, NULL, hex, &label, &err), "read back");
	is_str(label.note, "before \"the\"\n\x1b upgrade", "with its note as given");
	ok(sb_keep_label_remove(f.dest[0], NULL, "bk", &err) && !th_exists(th_path(path, "%s/keep.json", folder)),
	   "removed");
	ok(sb_keep_label_remove(f.dest[0], NULL, "bk", &err), "removing it again is nothing to do");
	ok(!sb_keep_label_read(folder, NULL, hex, &label, &err) && err.code == SB_ENOTFOUND, "none is there");
	ok(!sb_keep_label_put(f.dest[0], NULL, "gone", uuid, NULL, &err) && err.code == SB_ENOTFOUND,
	   "no label without the backup's folder");
	ok(sb_keep_label_put(f.dest[0], NULL, "bk", uuid, NULL, &err), "a label without a note");
	ok(sb_backup_folder_remove(f.dest[0], NULL, "bk", uuid, false, &r, &err), "the folder's removal");
	is_int(r.verdict, SB_FOLDER_REMOVED, "takes the label as the backup's");
	is_int(r.files, 3, "the manifest, the stripe and the label removed");
	ok(!th_exists(folder), "the folder is gone");
	th_fixture_done(&f);
}

void
test_folder_foreign(void)
{
	th_each_driver(folder_foreign, NULL);
}

void
test_folder_links(void)
{
	ThFixture	f;
	uint8_t		uuid[16];
	char		folder[PATH_MAX],
				link[PATH_MAX];

	th_fixture(&f, "folder-links", 2);
	if (!make_backup(&f, "bk", uuid))
	{
		th_fixture_done(&f);
		return;
	}
	th_location(&f, 0, "bk", folder);
	ok(symlink(folder, th_path(link, "%s/bk-link", f.dest[1])) == 0, "a folder that is a link to a backup folder");
	expect_kept(f.dest[1], "bk-link", uuid, false, SB_FOLDER_LINK, "is a symbolic link", "a folder that is a link");
	is_int(th_count_entries(folder), 2, "the folder it points to is untouched");
	ok(symlink(f.dest[0], th_path(link, "%s/dest-link", f.root)) == 0, "a destination that is a link");
	expect_kept(link, "bk", uuid, false, SB_FOLDER_DESTINATION_LINK, "destination", "a destination that is a link");
	is_int(th_count_entries(folder), 2, "the folder behind it is untouched");
	th_write_file(th_path(link, "%s/d1/file-bk", f.root), "x", 1, 0600);
	expect_kept(f.dest[0], "file-bk", uuid, false, SB_FOLDER_FOREIGN, "is not a directory", "a file in the folder's place");
	th_fixture_done(&f);
}

#define UUID_A "590f738c270b49d4ad845fb71ccdf5a5"

static void
expect_names(const char *text, bool want, const char *what)
{
	ThPieces	p = {text, strlen(text), 0, 7, 0};

	ok(sb_folder_manifest_names(th_read_pieces, &p, UUID_A) == want, "%s: %s", what,
	   want ? "the backup's manifest" : "not the backup's");
}

/*
 * Whose manifest is it (folder_identity.c): the top-level "format" and
 * "backup_uuid" decide, the first of each; the text is read only until both
 * are found, so a manifest of 200,000 entries is read a block, not whole.
 */
void
test_folder_identity(void)
{
	const char *head = "{\"format\":\"stripebackup\",\"format_version\":\"3.0\",\"backup_uuid\":\"" UUID_A "\"";
	char	   *big;
	size_t		len,
				i;
	ThPieces	p;

	expect_names("{\"format\":\"stripebackup\",\"backup_uuid\":\"" UUID_A "\",\"entries\":[]}", true,
				 "as stripebackup writes it");
	expect_names(" {\n \"label\" : \"a\\\"}{[\" , \"n\":-1.5e3,\"t\":true,\"o\":{\"format\":\"x\",\"a\":[1,{\"b\":\"]\"}]},"
				 "\"backup_uuid\" : \"" UUID_A "\", \"format\" : \"stripebackup-encrypted\" }", true,
				 "spaced, the two last, after strings, numbers, literals and nested values");
	expect_names("{\"format\":\"stripebackup\",\"backup_uuid\":\"0f738c270b49d4ad845fb71ccdf5a559\"}", false,
				 "another backup's uuid");
	expect_names("{\"format\":\"formal\",\"backup_uuid\":\"" UUID_A "\"}", false, "another format");
	expect_names("{\"x\":{\"format\":\"stripebackup\",\"backup_uuid\":\"" UUID_A "\"}}", false,
				 "the two only inside a nested object");
	expect_names("{\"backup_uuid\":\"other\",\"backup_uuid\":\"" UUID_A "\",\"format\":\"stripebackup\"}", false,
				 "the uuid twice, the first another");
	expect_names("{\"format\":\"stripebackup\",\"backup_uuid\":\"\\u0035" UUID_A "\"}", false,
				 "an escape in the uuid");
	expect_names("{\"format\":\"stripebackup\",\"backup_uuid\":1}", false, "a uuid that is a number");
	expect_names("{\"format\":\"stripebackup\",\"backup_uuid\":\"590f738c", false, "cut inside the uuid");
	expect_names("{\"format\":\"stripebackup\",\"entries\":[{\"path\":\"a\"}", false, "cut before the uuid");
	expect_names("[\"format\",\"stripebackup\"]", false, "not an object");
	expect_names("", false, "empty");

	/* Nested deeper than any manifest, before its keys: not read on. */
	big = malloc(40000);
	if (big != NULL)
	{
		bool		ours;

		strcpy(big, "{\"x\":");
		memset(big + 5, '[', 30000);
		strcpy(big + 30005, "]}");
		p = (ThPieces) {big, strlen(big), 0, 7, 0};
		ours = sb_folder_manifest_names(th_read_pieces, &p, UUID_A);
		ok(!ours && p.pos < 12000,
		   "30,000 brackets deep: not the backup's, and not read past 10,000 of them (%zu bytes)", p.pos);
		free(big);
	}

	/* 200,000 entries after the head: one block read. */
	len = strlen(head) + 200000 * 40 + 64;
	big = malloc(len);
	if (big == NULL)
		return;
	strcpy(big, head);
	strcat(big, ",\"entries\":[");
	for (i = strlen(big); i + 40 < len - 8; i += 40)
		memcpy(big + i, "{\"path\":\"base/1/123456\",\"size\":8192},   ", 40);
	strcpy(big + i, "{}]}");
	p = (ThPieces) {big, strlen(big), 0, 1 << 20, 0};
	ok(sb_folder_manifest_names(th_read_pieces, &p, UUID_A), "a manifest of 200,000 entries is the backup's");
	ok(p.pos <= 8192, "known from its first %zu of %zu bytes", p.pos, p.len);
	free(big);
}
