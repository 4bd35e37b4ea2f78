/*
 * test_archive_auth.c
 *		The manifest an archive is read by is the one the backup wrote: the
 *		stripes' trailers record its SHA-256.  A damaged or edited copy is set
 *		aside for a good one in another destination (with a note, and a
 *		problem in verify); an archive whose stripes cannot be read opens only
 *		to be planned; a manifest forged everywhere, stripes and all, still
 *		cannot restore a file other than the one it describes.  Edits in
 *		every copy (stripes left alone) are in test_bitflip.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/checksum.h"
#include "harness.h"
#include "tests.h"

/* A small tree over two destinations, 4 KiB chunks. */
static bool
auth_backup(ThFixture *f, const char *tag)
{
	SbBackupOptions o;
	SbError		err;
	char		path[PATH_MAX];
	bool		done;
	int			i;

	th_fixture(f, tag, 2);
	done = th_mkdir(th_path(path, "%s/base", f->src), 0700);
	for (i = 0; done && i < 6; i++)
		done = th_write_pattern(th_path(path, "%s/base/%d", f->src, 16384 + i),
								(size_t) (3000 + i * 5000), (uint32_t) i, i % 2 == 0, 0600);
	th_options(&o, f->dests, 2, "bk");
	o.chunk_size = 4096;
	done = done && th_backup_tree(&o, f->src, NULL, &err);
	if (!ok(done, "%s: backup over two destinations succeeds", tag))
		th_diag_error("backup", &err);
	return done;
}

static char *
copy_path(const ThFixture *f, uint32_t dest, char *out)
{
	return th_path(out, "%s/bk/manifest.json", f->dest[dest]);
}

/* Verify from destination DEST, collecting problems; -1 if verify could not run. */
static long
verify_problems(const ThFixture *f, uint32_t dest, ThProblems *problems)
{
	char		location[PATH_MAX];

	return th_verify_collect(th_location(f, dest, "bk", location), 2, problems);
}

/* One copy edited so that it still reads: the other destination's is used. */
static void
edited_copy_set_aside(ThFixture *f)
{
	char		bad[PATH_MAX];
	char		good[PATH_MAX];
	char		location[PATH_MAX];
	uint8_t		sha[SB_SHA256_LEN];
	uint64_t	len;
	size_t		saved_len;
	uint8_t    *saved = th_read_file(copy_path(f, 0, bad), &saved_len);
	ThProblems	problems;
	SbArchive  *a;
	SbError		err;

	ok(saved != NULL && th_edit_file(bad, "\"mode\":\"0600\"", "\"mode\":\"0700\""),
	   "destination 1's copy edited: a file's mode 0600 -> 0700");
	a = sb_archive_open(th_location(f, 0, "bk", location), &err);
	if (!ok(a != NULL, "opened from destination 1, the archive opens"))
		th_diag_error("open", &err);
	ok(a != NULL && strcmp(a->manifest_path, copy_path(f, 1, good)) == 0,
	   "with destination 2's copy");
	ok(a != NULL && a->authenticated, "authenticated");
	ok(a != NULL && th_file_sha256(good, sha, &len) &&
	   memcmp(a->manifest->json_sha256, sha, SB_SHA256_LEN) == 0 && a->manifest->json_length == len,
	   "the manifest read is byte for byte that copy");
	is_int(a ? a->nnotes : 0, 1, "one note");
	if (a != NULL && a->nnotes > 0)
	{
		like(a->notes[0], bad, "it names the copy set aside");
		like(a->notes[0], "differs from what backup \"bk\" wrote (stripe ", "says why, naming a stripe");
		like(a->notes[0], "records another SHA-256", "that records another SHA-256");
		like(a->notes[0], "using the copy in \"", "and which copy is used");
	}
	sb_archive_close(a);
	ok(th_restore(location, f->target, &err) && th_trees_equal(f->src, f->target, TH_CMP_MTIME),
	   "the restore from destination 1 is the source, modes included");
	th_rmtree(f->target);
	is_int(verify_problems(f, 0, &problems), 1, "verify from destination 1 reports one problem");
	if (problems.n > 0)
	{
		like(problems.items[0].message, bad, "the damaged copy, by name");
		is_int(problems.items[0].stripe, 0, "not about one stripe");
	}
	th_free_problems(&problems);
	is_int(verify_problems(f, 1, &problems), 1, "so does verify from destination 2, whose copy is good");
	th_free_problems(&problems);
	ok(saved != NULL && th_write_file(bad, saved, saved_len, 0600), "destination 1's copy put back");
	is_int(verify_problems(f, 0, &problems), 0, "verify finds no problem again");
	th_free_problems(&problems);
	free(saved);
}

/* One copy that no longer parses: refused where it is, reported from elsewhere. */
static void
broken_copy(ThFixture *f)
{
	char		bad[PATH_MAX];
	char		location[PATH_MAX];
	uint8_t    *saved;
	size_t		len;
	ThProblems	problems;
	SbArchive  *a;
	SbError		err;

	saved = th_read_file(copy_path(f, 1, bad), &len);
	ok(saved != NULL && truncate(bad, (off_t) len / 2) == 0, "destination 2's copy cut in half");
	a = sb_archive_open(th_location(f, 1, "bk", location), &err);
	ok(a != NULL && a->authenticated && a->nnotes == 1,
	   "opened from there, the copy in destination 1 is used (its text still names destination 1)");
	if (a != NULL && a->nnotes == 1)
	{
		like(a->notes[0], bad, "a note names the broken copy");
		like(a->notes[0], "is damaged: manifest is not valid JSON", "and says what is wrong with it");
	}
	sb_archive_close(a);
	a = sb_archive_open(th_location(f, 0, "bk", location), &err);
	ok(a != NULL && a->nnotes == 0, "opened from destination 1, all is well");
	sb_archive_close(a);
	is_int(verify_problems(f, 0, &problems), 1, "but verify reports the broken copy in destination 2");
	if (problems.n > 0)
		like(problems.items[0].message, bad, "by name");
	th_free_problems(&problems);
	ok(th_write_file(bad, "{\"format\": 1}\n", 14, 0600), "destination 2's copy replaced by other JSON");
	a = sb_archive_open(th_location(f, 1, "bk", location), &err);
	ok(a == NULL && err.code == SB_ECORRUPT,
	   "opened from there it is refused: nothing in it says where another copy is");
	like(err.message, bad, "the error names the copy");
	like(err.message, "not a stripebackup manifest", "and says what is wrong with it");
	sb_archive_close(a);
	ok(saved != NULL && th_write_file(bad, saved, len, 0600), "destination 2's copy put back");
	free(saved);
}

/* 1. One copy of two damaged. */
void
test_auth_one_copy_damaged(void)
{
	ThFixture	f;

	if (auth_backup(&f, "auth-one"))
	{
		edited_copy_set_aside(&f);
		broken_copy(&f);
	}
	th_fixture_done(&f);
}

/* Apply FROM -> TO to both copies (the edit an attacker makes everywhere). */
static bool
edit_both(ThFixture *f, const char *from, const char *to)
{
	char		path[PATH_MAX];

	return th_edit_file(copy_path(f, 0, path), from, to) &&
		th_edit_file(copy_path(f, 1, path), from, to);
}

/* 2. No stripe can be read: open to plan, but never restore; a stripe found authenticates. */
void
test_auth_stripes_unreachable(void)
{
	ThFixture	f;
	char		elsewhere[PATH_MAX];
	char		from[PATH_MAX];
	char		to[PATH_MAX];
	char		location[PATH_MAX];
	ThProblems	problems;
	SbRestoreOptions ro;
	SbArchive  *a;
	SbPlan		plan;
	SbError		err;
	uint32_t	s;
	bool		done;

	if (!auth_backup(&f, "auth-unreach"))
	{
		th_fixture_done(&f);
		return;
	}
	th_path(elsewhere, "%s/elsewhere", f.root);
	done = th_mkdir(elsewhere, 0700);
	for (s = 1; done && s <= 2; s++)
		done = rename(th_stripe_path(&f, s, "bk", from),
					  th_path(to, "%s/stripe-%u.sbs", elsewhere, s)) == 0;
	ok(done, "both stripes moved away");
	a = sb_archive_open(th_location(&f, 0, "bk", location), &err);
	ok(a != NULL && !a->authenticated, "the archive opens, not authenticated");
	ok(a != NULL && sb_archive_plan(a, &plan, &err) && !plan.stripes[0].present &&
	   !plan.stripes[1].present, "its plan says every stripe is missing");
	memset(&ro, 0, sizeof(ro));
	ro.target = f.target;
	ok(a != NULL && !sb_archive_restore(a, &ro, &err) && err.code == SB_ENOTFOUND &&
	   !th_exists(f.target), "a restore is refused before it creates anything");
	like(err.message, "authenticate", "saying the manifest cannot be authenticated");
	sb_archive_close(a);
	is_int(verify_problems(&f, 0, &problems), 3, "verify: two missing stripes, and the manifest");
	ok(problems.n == 3 && strstr(problems.items[0].message, "cannot be authenticated") != NULL,
	   "one problem says the manifest cannot be authenticated");
	th_free_problems(&problems);

	a = sb_archive_open(location, &err);
	ok(a != NULL && sb_archive_set_stripe_dir(a, 2, elsewhere, &err) && a->authenticated,
	   "told where stripe 2 is, its trailer authenticates the manifest");
	ok(a != NULL && sb_archive_set_stripe_dir(a, 1, elsewhere, &err) &&
	   sb_archive_restore(a, &ro, &err), "with both stripes found, it restores");
	ok(th_trees_equal(f.src, f.target, TH_CMP_MTIME), "the source, as it was");
	sb_archive_close(a);
	th_rmtree(f.target);

	/* An edited copy cannot be authenticated by a stripe given later either. */
	ok(th_edit_file(copy_path(&f, 0, to), "\"mode\":\"0600\"", "\"mode\":\"0700\""),
	   "destination 1's copy edited");
	a = sb_archive_open(location, &err);
	ok(a != NULL && !a->authenticated, "it opens, not authenticated (no stripe to ask)");
	ok(a != NULL && !sb_archive_set_stripe_dir(a, 1, elsewhere, &err) && err.code == SB_ECORRUPT,
	   "a stripe found later shows it is not the backup's");
	like(err.message, "records another SHA-256", "saying so");
	sb_archive_close(a);
	th_fixture_done(&f);
}

/* The "crc32c" value recorded for PATH in the manifest text TEXT (8 hex digits). */
static bool
recorded_crc(const char *text, const char *path, char *crc)
{
	char		key[128];
	const char *entry;
	const char *field;

	snprintf(key, sizeof(key), "\"path\":\"%s\"", path);
	entry = strstr(text, key);
	field = entry ? strstr(entry, "\"crc32c\":\"") : NULL;
	if (field == NULL)
		return false;
	memcpy(crc, field + 10, 8);
	crc[8] = '\0';
	return true;
}

/*
 * 3. A manifest edited in every copy, and every stripe sealed again with it
 * (all a reader can check says it is the backup's): a file's CRC-32C is not
 * that of its data, and verify and restore say so.
 */
void
test_auth_forged_manifest(void)
{
	ThFixture	f;
	char		path[PATH_MAX];
	char		stripes[2][PATH_MAX];
	const char *stripe_list[2] = {stripes[0], stripes[1]};
	char		crc[9];
	char		forged[9];
	char		from[64];
	char		to[64];
	uint8_t    *text;
	size_t		len;
	ThProblems	problems;
	SbError		err;
	bool		done;

	if (!auth_backup(&f, "auth-forged"))
	{
		th_fixture_done(&f);
		return;
	}
	text = th_read_file(copy_path(&f, 0, path), &len);
	done = text != NULL && recorded_crc((const char *) text, "base/16386", crc);
	snprintf(from, sizeof(from), "\"crc32c\":\"%s\"", crc);
	snprintf(forged, sizeof(forged), "%08x", (unsigned) strtoul(crc, NULL, 16) ^ 1u);
	snprintf(to, sizeof(to), "\"crc32c\":\"%s\"", forged);
	ok(done && edit_both(&f, from, to), "base/16386's CRC-32C changed in every copy");
	th_stripe_path(&f, 1, "bk", stripes[0]);
	th_stripe_path(&f, 2, "bk", stripes[1]);
	ok(th_rebind_stripes(copy_path(&f, 0, path), stripe_list, 2),
	   "and every stripe sealed again with that manifest");
	is_int(verify_problems(&f, 1, &problems), 1, "verify reports one problem");
	if (problems.n > 0)
	{
		ok(problems.items[0].file != NULL && strcmp(problems.items[0].file, "base/16386") == 0 &&
		   problems.items[0].code == SB_ECORRUPT, "the file, as corrupt");
		like(problems.items[0].message, crc, "naming the CRC-32C of its content");
		like(problems.items[0].message, forged, "and the one the manifest records");
	}
	th_free_problems(&problems);
	done = th_restore(th_location(&f, 0, "bk", path), f.target, &err);
	ok(!done && err.code == SB_ECORRUPT, "the restore fails as corrupt");
	like(err.message, "base/16386", "naming the file");
	like(err.message, crc, "the CRC-32C of what was restored");
	like(err.message, forged, "and the one the manifest records");
	ok(!th_exists(f.target), "and the failed restore is removed");
	free(text);
	th_fixture_done(&f);
}
