/*
 * test_pgrecovery.c
 *		The settings of a point-in-time restore (sb_pgrecovery.h): what each
 *		kind of target writes, quoting for postgresql.conf and for the shell
 *		restore_command goes through, and every value PostgreSQL would
 *		refuse at start-up refused before anything is written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "stripebackup/sb_pgrecovery.h"
#include "stripebackup/sb_s3.h"
#include "tests.h"

static const char *const dests[] = {"/mnt/a/bk", "/mnt/b 100%/bk"};

static SbRecoveryArchive
archive(void)
{
	SbRecoveryArchive a = {"/usr/lib/postgresql/15/bin/stripebackup", dests, 2, 7300000000000000001ULL, 8, 0, NULL, NULL};

	return a;
}

/* The postgresql.auto.conf text for T; "" (and a diagnostic) when refused. */
static const char *
settings_of(const SbRecoveryTarget *t, SbError *err)
{
	static char text[16384];
	SbRestoreFile files[2];
	SbRecoveryArchive a = archive();
	uint32_t	n = 0;

	text[0] = '\0';
	if (!sb_recovery_files(t, NULL, &a, files, &n, err))
		return text;
	if (n == 2)
	{
		snprintf(text, sizeof(text), "%s", files[0].text);
		ok(strcmp(files[0].path, "postgresql.auto.conf") == 0 && files[0].append &&
		   strcmp(files[1].path, "recovery.signal") == 0 && !files[1].append,
		   "settings appended to postgresql.auto.conf, and recovery.signal made");
	}
	sb_recovery_files_free(files, n);
	return text;
}

void
test_pgrecovery_settings(void)
{
	SbRecoveryTarget t = {SB_RECOVERY_TIME, "2026-11-30 14:05:00.123456+00", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	SbError		err;
	const char *s;
	SbRestoreFile files[2];
	SbRecoveryArchive a = archive();
	uint32_t	n = 9;

	th_begin("test_pgrecovery_settings");
	s = settings_of(&t, &err);
	like(s, "recovery_target_time = '2026-11-30 14:05:00.123456+00'\n", "a time target");
	like(s, "recovery_target_inclusive = 'on'\n", "inclusive by default");
	like(s, "recovery_target_action = 'promote'\n", "promoted by default");
	like(s, "recovery_target_timeline = 'latest'\n", "the latest timeline by default");
	like(s, "restore_command = '''/usr/lib/postgresql/15/bin/stripebackup'' wal-get"
		 " --archive ''/mnt/a/bk'' --archive ''/mnt/b 100%%/bk'' --system-identifier "
		 "7300000000000000001 --prefetch 8 %f %p'\n",
		 "restore_command: quoted for the shell and postgresql.conf, %% doubled");
	t = (SbRecoveryTarget) {SB_RECOVERY_LSN, "0/5A0003B8", false, "current", "pause", SB_ARCHIVE_MODE_DEFAULT, false, 0};
	s = settings_of(&t, &err);
	like(s, "recovery_target_lsn = '0/5A0003B8'\nrecovery_target_inclusive = 'off'\n"
		 "recovery_target_action = 'pause'\nrecovery_target_timeline = 'current'\n", "an LSN target");
	t = (SbRecoveryTarget) {SB_RECOVERY_XID, "771", true, "2", "shutdown", SB_ARCHIVE_MODE_DEFAULT, false, 0};
	like(settings_of(&t, &err), "recovery_target_xid = '771'", "an xid target");
	t = (SbRecoveryTarget) {SB_RECOVERY_NAME, "before 'the' upgrade", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	like(settings_of(&t, &err), "recovery_target_name = 'before ''the'' upgrade'",
		 "a restore point's name, quotes doubled");
	t = (SbRecoveryTarget) {SB_RECOVERY_IMMEDIATE, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	like(settings_of(&t, &err), "recovery_target = 'immediate'", "immediate");
	t = (SbRecoveryTarget) {SB_RECOVERY_LATEST, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	s = settings_of(&t, &err);
	ok(strstr(s, "restore_command") != NULL && strstr(s, "recovery_target_action") == NULL &&
	   strstr(s, "recovery_target_time =") == NULL, "latest: the archive to its end, no target");
	t = (SbRecoveryTarget) {SB_RECOVERY_NONE, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	ok(sb_recovery_files(&t, NULL, &a, files, &n, &err) && n == 0, "no target: nothing to write");
}

/* The files of T (STANDBY may be NULL): their count, the settings text into TEXT. */
static uint32_t
files_of(const SbRecoveryTarget *t, const SbStandby *standby, char *text, size_t cap)
{
	SbRestoreFile files[2];
	SbRecoveryArchive a = archive();
	SbError		err;
	uint32_t	n = 0;

	text[0] = '\0';
	if (!sb_recovery_files(t, standby, &a, files, &n, &err))
		th_diag_error("writing the settings", &err);
	else if (n > 0)
		snprintf(text, cap, "%s", files[0].text);
	sb_recovery_files_free(files, n);
	return n;
}

/*
 * The copy's archiving: off by default with a recovery target (last in
 * the file, so that it wins over the source's own archive_mode), kept for
 * a standby and a restore to the latest WAL, as asked when asked.
 */
void
test_pgrecovery_archive_mode(void)
{
	static const char off[] = "archive_mode = 'off'\n";
	SbRecoveryTarget t = {SB_RECOVERY_TIME, "2026-11-30 14:05:00+00", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	SbStandby	standby = {true, "host=primary", NULL};
	SbArchiveMode mode = SB_ARCHIVE_MODE_DEFAULT;
	char		text[16384];
	SbError		err;
	size_t		len;

	th_begin("test_pgrecovery_archive_mode: the restored copy's archiving");
	ok(files_of(&t, NULL, text, sizeof(text)) == 2 && (len = strlen(text)) > sizeof(off) &&
	   strcmp(text + len - strlen(off), off) == 0, "a time target: archive_mode off, the last setting");
	t.kind = SB_RECOVERY_IMMEDIATE;
	t.value = NULL;
	like((files_of(&t, NULL, text, sizeof(text)), text), off, "immediate: off too");
	t.archive_mode = SB_ARCHIVE_MODE_KEEP;
	ok(files_of(&t, NULL, text, sizeof(text)) == 2 && strstr(text, "archive_mode") == NULL,
	   "kept when asked: no archive_mode written");
	t = (SbRecoveryTarget) {SB_RECOVERY_LATEST, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	ok(files_of(&t, NULL, text, sizeof(text)) == 2 && strstr(text, "archive_mode") == NULL,
	   "latest (the copy replaces its source): kept");
	t.archive_mode = SB_ARCHIVE_MODE_OFF;
	like((files_of(&t, NULL, text, sizeof(text)), text), off, "latest, off when asked");
	t = (SbRecoveryTarget) {SB_RECOVERY_NONE, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	ok(files_of(&t, &standby, text, sizeof(text)) == 2 && strstr(text, "archive_mode") == NULL,
	   "a standby: kept");
	t.archive_mode = SB_ARCHIVE_MODE_OFF;
	ok(files_of(&t, NULL, text, sizeof(text)) == 1 && strstr(text, off) != NULL &&
	   strstr(text, "restore_command") == NULL, "no target, off: the setting alone, no signal file");
	ok(sb_recovery_archive_mode(&t, false) == SB_ARCHIVE_MODE_OFF, "the mode given is the mode");
	ok(sb_archive_mode_parse("keep", "--archive-mode", &mode, &err) && mode == SB_ARCHIVE_MODE_KEEP,
	   "\"keep\" read");
	ok(!sb_archive_mode_parse("on", "archive_mode", &mode, &err) && err.code == SB_EINVAL,
	   "\"on\" refused");
	like(err.message, "archive_mode \"on\" is not \"off\" or \"keep\"", "naming the caller's spelling");
}

void
test_pgrecovery_refused(void)
{
	static const struct
	{
		SbRecoveryTarget target;
		const char *why;
	}			cases[] = {
		{{SB_RECOVERY_LSN, "0/XYZ", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0}, "target LSN \"0/XYZ\""},
		{{SB_RECOVERY_LSN, "123456789/1", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0}, "is not a WAL position"},
		{{SB_RECOVERY_XID, "12a", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0}, "target xid \"12a\""},
		{{SB_RECOVERY_TIME, "now'; DROP", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0}, "is not a time"},
		{{SB_RECOVERY_TIME, "", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0}, "is not a time"},
		{{SB_RECOVERY_NAME, "", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0}, "is not a restore point name"},
		{{SB_RECOVERY_NAME, "a\nrestore_command = 'x'", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0}, "is not a restore point name"},
		{{SB_RECOVERY_IMMEDIATE, "x", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0}, "takes no value"},
		{{SB_RECOVERY_TIME, "2026-11-30", true, "2x", NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0}, "target timeline \"2x\""},
		{{SB_RECOVERY_TIME, "2026-11-30", true, NULL, "explode", SB_ARCHIVE_MODE_DEFAULT, false, 0}, "target action \"explode\""},
	};
	static const char *const bad_dests[] = {"/mnt/it's"};
	SbRecoveryTarget t = {SB_RECOVERY_LATEST, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	SbRecoveryArchive a = archive();
	SbRestoreFile files[2];
	SbError		err;
	uint32_t	n;
	size_t		i;

	th_begin("test_pgrecovery_refused");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		ok(!sb_recovery_files(&cases[i].target, NULL, &a, files, &n, &err) && err.code == SB_EINVAL && n == 0,
		   "refused: %s", cases[i].why);
		like(err.message, cases[i].why, "the refusal names the value");
	}
	a.destinations = bad_dests;
	a.ndestinations = 1;
	ok(!sb_recovery_files(&t, NULL, &a, files, &n, &err), "a destination with a quote is refused");
	like(err.message, "cannot go into restore_command", "saying why");
}

/* A sealed archive: restore_command names the key file (its path, quoted), never anything of the key. */
void
test_pgrecovery_sealed(void)
{
	SbRecoveryTarget t = {SB_RECOVERY_LATEST, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	SbStandby	standby = {true, NULL, NULL};
	SbRecoveryArchive a = archive();
	SbRestoreFile files[2];
	SbError		err;
	uint32_t	n = 0;

	th_begin("test_pgrecovery_sealed: restore_command of an archive sealed under a key file");
	a.key_file = "/etc/stripebackup/wal 100%.key";
	ok(sb_recovery_files(&t, NULL, &a, files, &n, &err) && n == 2, "a sealed archive's settings");
	if (n == 2)
		like(files[0].text, "--system-identifier 7300000000000000001 --encryption-key-file "
			 "''/etc/stripebackup/wal 100%%.key'' --prefetch 8 %f %p'\n",
			 "restore_command gives wal-get the key file, quoted, %% doubled");
	sb_recovery_files_free(files, n);
	t.kind = SB_RECOVERY_NONE;
	ok(sb_recovery_files(&t, &standby, &a, files, &n, &err) && n == 2, "a standby's settings");
	if (n == 2)
		like(files[0].text, "--encryption-key-file ''/etc/stripebackup/wal 100%%.key''",
			 "a standby's restore_command too");
	sb_recovery_files_free(files, n);
	t.kind = SB_RECOVERY_LATEST;
	a.key_file = "wal.key";
	ok(!sb_recovery_files(&t, NULL, &a, files, &n, &err) && err.code == SB_EINVAL,
	   "a relative key file is refused (restore_command runs in the copy's folder)");
	like(err.message, "\"wal.key\" cannot go into restore_command: an absolute path is needed", "saying why");
	a.key_file = "/etc/it's.key";
	ok(!sb_recovery_files(&t, NULL, &a, files, &n, &err) && err.code == SB_EINVAL, "so is one with a quote");
}

/* The files of a standby restore of STANDBY with archive A; "" (and a diagnostic) when refused. */
static const char *
standby_settings_of(const SbStandby *standby, const SbRecoveryArchive *a, SbError *err)
{
	static char text[16384];
	SbRecoveryTarget none = {SB_RECOVERY_NONE, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	SbRestoreFile files[2];
	uint32_t	n = 0;

	text[0] = '\0';
	if (!sb_recovery_files(&none, standby, a, files, &n, err))
		return text;
	ok(n == 2 && strcmp(files[0].path, "postgresql.auto.conf") == 0 && files[0].append &&
	   strcmp(files[1].path, "standby.signal") == 0 && !files[1].append,
	   "standby: settings appended to postgresql.auto.conf, and standby.signal made");
	if (n == 2)
		snprintf(text, sizeof(text), "%s", files[0].text);
	sb_recovery_files_free(files, n);
	return text;
}

void
test_pgrecovery_standby(void)
{
	SbStandby	s = {true, "host=pg1 user=replicator password='it''s'", "copy_1"};
	SbRecoveryArchive a = archive();
	SbRecoveryArchive no_archive = archive();
	SbRecoveryTarget lsn = {SB_RECOVERY_LSN, "0/5A0003B8", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	SbRestoreFile files[2];
	SbError		err;
	const char *text;
	uint32_t	n = 9;

	th_begin("test_pgrecovery_standby");
	text = standby_settings_of(&s, &a, &err);
	like(text, "primary_conninfo = 'host=pg1 user=replicator password=''it''''s'''\n",
		 "primary_conninfo, its quotes doubled for postgresql.conf");
	like(text, "primary_slot_name = 'copy_1'\n", "primary_slot_name");
	like(text, "restore_command = '''/usr/lib/postgresql/15/bin/stripebackup'' wal-get",
		 "restore_command from the archive");
	like(text, "recovery_target_timeline = 'latest'\n", "it follows the latest timeline");
	ok(strstr(text, "recovery_target_action") == NULL && strstr(text, "recovery_target_time =") == NULL,
	   "and has no recovery target");
	no_archive.ndestinations = 0;
	s.primary_slot_name = NULL;
	text = standby_settings_of(&s, &no_archive, &err);
	ok(strstr(text, "restore_command") == NULL && strstr(text, "primary_slot_name") == NULL &&
	   strstr(text, "primary_conninfo = ") != NULL,
	   "without an archive or a slot: streaming only");

	ok(!sb_recovery_files(&lsn, &s, &a, files, &n, &err) && n == 0, "a standby with a target is refused");
	like(err.message, "takes no recovery target (a lsn target was given)", "saying why");
	s.primary_conninfo = "host=pg1\nrestore_command = 'rm -rf /'";
	ok(!sb_recovery_files(&(SbRecoveryTarget) {SB_RECOVERY_NONE, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0}, &s, &a,
						  files, &n, &err), "a conninfo of two lines is refused");
	like(err.message, "primary_conninfo \"host=pg1", "naming it");
	s.primary_conninfo = NULL;
	s.primary_slot_name = "Copy-1";
	ok(!sb_standby_check(&s, &err), "a slot name PostgreSQL would refuse is refused");
	like(err.message, "primary_slot_name \"Copy-1\" is not a replication slot name", "naming it");
}

/* The text of the first file sb_recovery_files writes for archive A; "" when refused (ERR). */
static const char *
bucket_settings_of(const SbRecoveryArchive *a, SbError *err)
{
	static char text[16384];
	SbRecoveryTarget t = {SB_RECOVERY_LATEST, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	SbRestoreFile files[2];
	uint32_t	n = 0;

	text[0] = '\0';
	if (sb_recovery_files(&t, NULL, a, files, &n, err) && n > 0)
		snprintf(text, sizeof(text), "%s", files[0].text);
	sb_recovery_files_free(files, n);
	return text;
}

void
test_pgrecovery_bucket(void)
{
	static const char *const bucket_dests[] = {"/mnt/a/bk", "s3://bk1/pg/main"};
	SbS3Settings s = {.endpoint = "http://127.0.0.1:9000", .credentials_file = "/etc/pg/aws 100%",
	.region = "eu-west-1"};
	SbRecoveryArchive a = archive();
	SbError		err;

	th_begin("test_pgrecovery_bucket: restore_command for a WAL archive in a bucket");
	a.destinations = bucket_dests;
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_CA_BUNDLE");
	unsetenv("STRIPEBACKUP_S3_URL_STYLE");
	a.s3 = &s;
	ok(a.s3 != NULL, "the archive's settings given");
	like(bucket_settings_of(&a, &err),
		 "restore_command = 'AWS_ENDPOINT_URL=''http://127.0.0.1:9000'' AWS_REGION=''eu-west-1'' "
		 "AWS_SHARED_CREDENTIALS_FILE=''/etc/pg/aws 100%%'' ''/usr/lib/postgresql/15/bin/stripebackup'' "
		 "wal-get --archive ''/mnt/a/bk'' --archive ''s3://bk1/pg/main''",
		 "the settings go before the command, quoted for the shell, %% doubled");
	s.allowed_buckets = "bk1/pg";
	s.timeout = "30";
	ok(a.s3 == &s, "with allowed buckets and a deadline");
	like(bucket_settings_of(&a, &err), "STRIPEBACKUP_S3_ALLOWED_BUCKETS=''bk1/pg'' STRIPEBACKUP_S3_TIMEOUT=''30'' ",
		 "the command that recovery runs gets them too: its wal-get checks the same buckets");
	s.allowed_buckets = NULL;
	s.timeout = NULL;
	s.credentials_file = "/x'; rm -rf /; '";
	ok(a.s3 == &s, "a setting with a quote in use");
	ok(bucket_settings_of(&a, &err)[0] == '\0' && strstr(err.message, "cannot go into restore_command") != NULL,
	   "is refused, not written: %s", err.message);
	a.destinations = dests;
	ok(strstr(bucket_settings_of(&a, &err), "AWS_") == NULL, "an archive of folders carries no S3 setting");
	a.destinations = bucket_dests;
	a.s3 = NULL;
	ok(strstr(bucket_settings_of(&a, &err), "/etc/pg/aws") == NULL && strstr(bucket_settings_of(&a, &err), "/x'") == NULL,
	   "no settings given: only the environment's go before the command");
}
