/*
 * test_archive_expect.c
 *		What the caller knows of a backup (SbArchiveExpect, sb_archive.h) is
 *		checked of every manifest copy: a plaintext backup put under an
 *		encrypted one's folder names, another backup under the same key, a
 *		backup in the clear read under a key without leave, and a manifest
 *		in the clear that claims to be encrypted are each refused, naming
 *		the copy and what differs; the caller's recorded folders are tried
 *		before the destinations the manifests name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

static void
make_key(SbKey *k)
{
	memset(k, 0, sizeof(*k));
	memset(k->secret, 'x', 48);
	k->len = 48;
}

/* A few files backed up as NAME over F's two destinations, encrypted under KEY if given. */
static bool
backup_as(const ThFixture *f, const char *name, const SbKey *key, SbManifest **m)
{
	SbBackupOptions o;
	SbError		err;

	th_options(&o, f->dests, 2, name);
	o.chunk_size = 4096;
	o.encryption_key = key;
	if (!th_backup_tree(&o, f->src, m, &err))
	{
		th_diag_error(name, &err);
		return false;
	}
	return true;
}

/* Open LOCATION as O says; NULL (ERR) if refused. */
static SbArchive *
open_as(const char *location, const SbKey *key, const SbArchiveExpect *e, SbError *err)
{
	SbArchiveOpenOptions o = {.key = key, .keep = SB_KEEP_HEAD, .expect = *e};

	return sb_archive_open_with(location, &o, err);
}

/* Backup FROM's folders in place of backup TO's in every destination of F (TO's kept as TO.aside). */
static bool
swap_in(const ThFixture *f, const char *from, const char *to)
{
	char		command[4 * PATH_MAX];

	for (uint32_t i = 0; i < f->ndests; i++)
	{
		if (snprintf(command, sizeof(command), "mv '%s/%s' '%s/%s.aside' && cp -a '%s/%s' '%s/%s'",
					 f->dest[i], to, f->dest[i], to, f->dest[i], from, f->dest[i], to) >= (int) sizeof(command) ||
			system(command) != 0)
			return false;
	}
	return true;
}

static bool
put_back(const ThFixture *f, const char *to, uint32_t only)
{
	char		command[4 * PATH_MAX];

	for (uint32_t i = 0; i < f->ndests; i++)
	{
		if (only < f->ndests && i != only)
			continue;
		if (snprintf(command, sizeof(command), "rm -rf '%s/%s' && mv '%s/%s.aside' '%s/%s'",
					 f->dest[i], to, f->dest[i], to, f->dest[i], to) >= (int) sizeof(command) ||
			system(command) != 0)
			return false;
	}
	return true;
}

void
test_expect_recorded_backup(void)
{
	ThFixture	f;
	SbManifest *enc = NULL,
			   *plain = NULL,
			   *other = NULL;
	SbArchiveExpect recorded = {.has_uuid = true, .encryption = SB_EXPECT_ENCRYPTED};
	SbArchiveExpect as_key = {0};
	SbKey		key;
	SbError		err;
	SbArchive  *a;
	char		location[PATH_MAX],
				second[PATH_MAX],
				path[PATH_MAX];
	const char *folders[2];

	th_begin("test_expect_recorded_backup: the backup recorded, not another under its names");
	th_fixture(&f, "expect", 2);
	make_key(&key);
	ok(th_write_pattern(th_path(path, "%s/data", f.src), 20000, 1, true, 0600), "a source");
	ok(backup_as(&f, "enc", &key, &enc) && backup_as(&f, "plain", NULL, &plain) &&
	   backup_as(&f, "other", &key, &other), "an encrypted backup, one in the clear, another encrypted");
	if (enc == NULL || plain == NULL || other == NULL)
		goto done;
	memcpy(recorded.uuid, enc->uuid, 16);
	th_location(&f, 0, "enc", location);
	th_location(&f, 1, "enc", second);
	a = open_as(location, &key, &recorded, &err);
	ok(a != NULL && a->authenticated, "the recorded backup opens as recorded");
	sb_archive_close(a);

	ok(swap_in(&f, "plain", "enc"), "the plaintext backup copied under the encrypted one's names");
	ok(open_as(location, &key, &recorded, &err) == NULL && err.code == SB_ECORRUPT,
	   "by its record: refused (SB_ECORRUPT)");
	like(err.message, "manifest copy \"", "naming the copy");
	like(err.message, "holds another backup: \"plain\"", "and what differs");
	recorded.has_uuid = false;
	ok(open_as(location, &key, &recorded, &err) == NULL, "recorded encrypted, uuid unknown: refused too");
	like(err.message, "is in the clear, but backup \"plain\" was recorded encrypted", "saying so");
	recorded.has_uuid = true;
	ok(open_as(location, &key, &as_key, &err) == NULL, "by location under a key: a backup in the clear refused");
	like(err.message, "is in the clear while an encryption key is in force", "saying so");
	as_key.encryption = SB_EXPECT_EITHER;
	a = open_as(location, &key, &as_key, &err);
	ok(a != NULL && memcmp(a->manifest->uuid, plain->uuid, 16) == 0,
	   "allowed: it opens, as the backup in the clear it is");
	sb_archive_close(a);
	as_key.encryption = SB_EXPECT_AS_KEY;
	a = open_as(location, NULL, &as_key, &err);
	ok(a != NULL, "without a key, a backup in the clear opens as before");
	sb_archive_close(a);

	ok(put_back(&f, "enc", 2) && swap_in(&f, "other", "enc"), "another encrypted backup under its names");
	ok(open_as(location, &key, &recorded, &err) == NULL && err.code == SB_ECORRUPT,
	   "same key, another backup: refused by its uuid");
	like(err.message, "holds another backup: \"other\"", "naming it");

	ok(put_back(&f, "enc", 1), "the recorded backup back in the second destination only");
	folders[0] = location;
	folders[1] = second;
	recorded.folders = folders;
	recorded.nfolders = 2;
	a = open_as(location, &key, &recorded, &err);
	ok(a != NULL && strstr(a->manifest_path, second) == a->manifest_path,
	   "the recorded folders are tried: the second destination's copy is used");
	ok(a != NULL && a->nnotes == 1 && strstr(a->notes[0], "holds another backup: \"other\"") != NULL,
	   "with a note for the copy set aside");
	sb_archive_close(a);
done:
	sb_manifest_free(enc);
	sb_manifest_free(plain);
	sb_manifest_free(other);
	th_fixture_done(&f);
}

/* A plaintext manifest that says its backup is encrypted is no backup's: refused on reading. */
void
test_expect_claimed_encryption(void)
{
	ThFixture	f;
	SbManifest *m = NULL;
	SbArchive  *a;
	SbArchiveExpect either = {.encryption = SB_EXPECT_EITHER};
	SbError		err;
	char		path[PATH_MAX],
				location[PATH_MAX];

	th_begin("test_expect_claimed_encryption");
	th_fixture(&f, "claimed", 2);
	/* no file data: no chunk whose seal the claim would lack, so the claim itself is what is refused */
	ok(th_mkdir(th_path(path, "%s/empty", f.src), 0700), "a source of folders only");
	ok(backup_as(&f, "bk", NULL, &m), "a backup in the clear");
	th_location(&f, 0, "bk", location);
	ok(th_edit_file(th_path(path, "%s/manifest.json", location), "\"balance\":", "\"encryption\":\"aes-256-gcm\",\"balance\":"),
	   "its copy edited to claim encryption");
	a = open_as(location, NULL, &either, &err);
	ok(a != NULL, "the other destination's copy is used");
	sb_archive_close(a);
	th_location(&f, 1, "bk", location);
	ok(th_edit_file(th_path(path, "%s/manifest.json", location), "\"balance\":", "\"encryption\":\"aes-256-gcm\",\"balance\":"),
	   "and that copy too");
	ok(open_as(location, NULL, &either, &err) == NULL, "no copy left: refused");
	like(err.message, "says its backup is encrypted, but it is in the clear", "saying why");
	sb_manifest_free(m);
	th_fixture_done(&f);
}
