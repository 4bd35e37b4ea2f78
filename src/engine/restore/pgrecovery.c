/*
 * pgrecovery.c
 *		The settings of a point-in-time restore: recovery.signal, and
 *		restore_command and recovery_target_* appended to postgresql.auto.conf;
 *		of a standby: standby.signal, primary_conninfo, primary_slot_name and
 *		restore_command (docs/FORMAT.md says nothing of them: they are
 *		PostgreSQL's).
 *
 * Every value is checked before it is written, since PostgreSQL reads the
 * file only when the restored copy starts: a value it refuses then would
 * leave a copy that does not start.  restore_command goes through a shell,
 * so the paths in it are single-quoted and may hold no quote; "%" is
 * doubled, as restore_command wants.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_pgrecovery.h"
#include "stripebackup/sb_s3.h"
#include "util/fsutil.h"
#include "store/store.h"

#define SETTINGS_MAX 16384
#define NAME_MAX_LEN 63			/* a restore point's name: NAMEDATALEN - 1 */

const char *
sb_recovery_kind_name(SbRecoveryKind kind)
{
	switch (kind)
	{
		case SB_RECOVERY_NONE:
			return "none";
		case SB_RECOVERY_TIME:
			return "time";
		case SB_RECOVERY_LSN:
			return "lsn";
		case SB_RECOVERY_XID:
			return "xid";
		case SB_RECOVERY_NAME:
			return "name";
		case SB_RECOVERY_IMMEDIATE:
			return "immediate";
		case SB_RECOVERY_LATEST:
			return "latest";
	}
	return "unknown";
}

static bool
all_of(const char *s, const char *allowed)
{
	return s[0] != '\0' && strspn(s, allowed) == strlen(s);
}

/* "X/X", each part 1 to 8 hex digits. */
static bool
is_lsn(const char *s)
{
	const char *slash = strchr(s, '/');
	size_t		hi = slash ? (size_t) (slash - s) : 0;

	return slash != NULL && hi >= 1 && hi <= 8 && strspn(s, "0123456789ABCDEFabcdef") == hi &&
		strlen(slash + 1) >= 1 && strlen(slash + 1) <= 8 &&
		strspn(slash + 1, "0123456789ABCDEFabcdef") == strlen(slash + 1);
}

static bool
has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char) *s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static bool
check_value(const SbRecoveryTarget *t, SbError *err)
{
	const char *v = t->value ? t->value : "";
	const char *what = sb_recovery_kind_name(t->kind);

	switch (t->kind)
	{
		case SB_RECOVERY_TIME:
			if (!all_of(v, "0123456789-: .+TZUTCutc"))
				return sb_error_set(err, SB_EINVAL, "target time \"%s\" is not a time such as "
									"\"2026-11-30 14:05:00+00\"", v);
			return true;
		case SB_RECOVERY_LSN:
			return is_lsn(v) ||
				sb_error_set(err, SB_EINVAL, "target LSN \"%s\" is not a WAL position such as \"0/5A0003B8\"", v);
		case SB_RECOVERY_XID:
			return (all_of(v, "0123456789") && strlen(v) <= 20) ||
				sb_error_set(err, SB_EINVAL, "target xid \"%s\" is not a transaction id", v);
		case SB_RECOVERY_NAME:
			return (v[0] != '\0' && strlen(v) <= NAME_MAX_LEN && !has_control(v)) ||
				sb_error_set(err, SB_EINVAL, "target name \"%s\" is not a restore point name "
							 "(1 to %d characters)", v, NAME_MAX_LEN);
		default:
			return t->value == NULL ||
				sb_error_set(err, SB_EINVAL, "a %s target takes no value (\"%s\" given)", what, v);
	}
}

bool
sb_recovery_check_target(const SbRecoveryTarget *t, SbError *err)
{
	if (!check_value(t, err))
		return false;
	if (t->timeline != NULL && strcmp(t->timeline, "latest") != 0 &&
		strcmp(t->timeline, "current") != 0 && !(all_of(t->timeline, "0123456789") && strlen(t->timeline) <= 10))
		return sb_error_set(err, SB_EINVAL, "target timeline \"%s\" is not \"latest\", \"current\" or a timeline number",
							t->timeline);
	if (t->action != NULL && strcmp(t->action, "promote") != 0 && strcmp(t->action, "pause") != 0 &&
		strcmp(t->action, "shutdown") != 0)
		return sb_error_set(err, SB_EINVAL, "target action \"%s\" is not \"promote\", \"pause\" or \"shutdown\"",
							t->action);
	return true;
}

/* Append to BUF (SETTINGS_MAX) with printf; false if it no longer fits. */
static bool
add(char *buf, const char *fmt, const char *a, const char *b)
{
	size_t		used = strlen(buf);
	int			n = snprintf(buf + used, SETTINGS_MAX - used, fmt, a, b);

	return n >= 0 && (size_t) n < SETTINGS_MAX - used;
}

/*
 * VALUE as a postgresql.conf string, as ALTER SYSTEM writes one: quotes and
 * backslashes doubled.  PostgreSQL's configuration parser reads a
 * backslash as an escape (\047 is a quote, \b a backspace), so a backslash
 * left single would let a value end its string early, add a setting of its
 * own choosing (a restore_command) or come back changed.
 */
static bool
add_setting(char *buf, const char *name, const char *value)
{
	char		quoted[2 * 4096 + 1];
	size_t		j = 0;

	for (; *value && j + 2 < sizeof(quoted); value++)
	{
		if (*value == '\'' || *value == '\\')
			quoted[j++] = *value;
		quoted[j++] = *value;
	}
	quoted[j] = '\0';
	return *value == '\0' && add(buf, "%s = '%s'\n", name, quoted);
}

/* WORD for restore_command: single-quoted for the shell, "%" doubled; no quote or control character. */
static bool
add_shell_word(char *buf, const char *word, SbError *err)
{
	char		escaped[2 * 4096 + 3];
	size_t		j = 0;
	const char *c;

	if (strchr(word, '\'') != NULL || has_control(word) || strlen(word) > 4096)
		return sb_error_set(err, SB_EINVAL, "\"%s\" cannot go into restore_command: "
							"it holds a quote or a control character", word);
	escaped[j++] = '\'';
	for (c = word; *c && j + 3 < sizeof(escaped); c++)
	{
		if (*c == '%')
			escaped[j++] = '%';
		escaped[j++] = *c;
	}
	escaped[j++] = '\'';
	escaped[j] = '\0';
	return add(buf, "%s%s", escaped, "") ||
		sb_error_set(err, SB_EINVAL, "restore_command is too long");
}

/* PATH for restore_command: an absolute path, or an object-storage location. */
static bool
add_shell_path(char *buf, const char *path, SbError *err)
{
	if (!sb_store_is_absolute(path))
		return sb_error_set(err, SB_EINVAL, "\"%s\" cannot go into restore_command: "
							"an absolute path is needed", path);
	return add_shell_word(buf, path, err);
}

/*
 * When the archive is in a store reached over a connection (a bucket): the archive's S3 settings as
 * variables before the command (restore_command runs in a shell), so that
 * the command reaches the bucket as this process did.  No secret: keys come
 * from the credentials file, or the server's environment.
 */
static bool
add_s3_environment(char *buf, const SbRecoveryArchive *a, SbError *err)
{
	SbS3Environment env;
	bool		any = false;
	bool		ok = true;
	uint32_t	i;

	for (i = 0; i < a->ndestinations; i++)
		any = any || (sb_store_features_of(a->destinations[i]) & SB_STORE_CONNECTION);
	if (!any)
		return true;
	if (!sb_s3_environment(a->s3, &env, err))
		return false;
	sb_error_clear(err);
	for (i = 0; ok && i < env.count; i++)
		ok = add(buf, "%s=", env.names[i], "") && add_shell_word(buf, env.values[i], err) &&
			add(buf, " ", "", "");
	sb_s3_environment_free(&env);
	if (!ok && err->code == SB_OK)
		sb_error_set(err, SB_EINVAL, "restore_command is too long");
	return ok;
}

static bool
restore_command(const SbRecoveryArchive *a, char *buf, SbError *err)
{
	char		number[32];
	uint32_t	i;

	buf[0] = '\0';
	if (!add_s3_environment(buf, a, err) || !add_shell_path(buf, a->program, err) ||
		!add(buf, " wal-get", "", ""))
		return false;
	for (i = 0; i < a->ndestinations; i++)
		if (!add(buf, " --archive ", "", "") || !add_shell_path(buf, a->destinations[i], err))
			return false;
	snprintf(number, sizeof(number), "%llu", (unsigned long long) a->system_identifier);
	if (!add(buf, " --system-identifier %s", number, ""))
		return false;
	/* A sealed archive: the copy's wal-get reads the key file itself (its server's user must be able to). */
	if (a->key_file != NULL)
	{
		if (!add(buf, " --encryption-key-file ", "", ""))
			return sb_error_set(err, SB_EINVAL, "restore_command is too long");
		if (!add_shell_path(buf, a->key_file, err))
			return false;
	}
	snprintf(number, sizeof(number), "%u", a->redundancy);
	if (a->redundancy > 0 && !add(buf, " --redundancy %s", number, ""))
		return sb_error_set(err, SB_EINVAL, "restore_command is too long");
	snprintf(number, sizeof(number), "%u", a->prefetch);
	return add(buf, " --prefetch %s %%f %%p", number, "") ||
		sb_error_set(err, SB_EINVAL, "restore_command is too long");
}

/* The recovery_target_* lines of T. */
static bool
target_settings(const SbRecoveryTarget *t, char *buf)
{
	static const char *const names[] = {
		[SB_RECOVERY_TIME] = "recovery_target_time",
		[SB_RECOVERY_LSN] = "recovery_target_lsn",
		[SB_RECOVERY_XID] = "recovery_target_xid",
		[SB_RECOVERY_NAME] = "recovery_target_name",
	};
	bool		ok = true;

	if (t->kind == SB_RECOVERY_IMMEDIATE)
		ok = add_setting(buf, "recovery_target", "immediate");
	else if (t->kind >= SB_RECOVERY_TIME && t->kind <= SB_RECOVERY_NAME)
		ok = add_setting(buf, names[t->kind], t->value) &&
			add_setting(buf, "recovery_target_inclusive", t->inclusive ? "on" : "off");
	if (ok && t->kind != SB_RECOVERY_LATEST)
		ok = add_setting(buf, "recovery_target_action", t->action ? t->action : "promote");
	return ok && add_setting(buf, "recovery_target_timeline", t->timeline ? t->timeline : "latest");
}

/* Slot names as PostgreSQL allows them: lower-case letters, digits, underscores. */
static bool
is_slot_name(const char *s)
{
	return all_of(s, "abcdefghijklmnopqrstuvwxyz0123456789_") && strlen(s) <= NAME_MAX_LEN;
}

bool
sb_standby_check(const SbStandby *s, SbError *err)
{
	if (s->primary_conninfo != NULL &&
		(has_control(s->primary_conninfo) || strlen(s->primary_conninfo) > SB_CONNINFO_MAX))
		return sb_error_set(err, SB_EINVAL, "primary_conninfo \"%s\" is not a connection string "
							"(one line, at most %d bytes)", s->primary_conninfo, SB_CONNINFO_MAX);
	if (s->primary_slot_name != NULL && !is_slot_name(s->primary_slot_name))
		return sb_error_set(err, SB_EINVAL, "primary_slot_name \"%s\" is not a replication slot name "
							"(1 to %d lower-case letters, digits and underscores)",
							s->primary_slot_name, NAME_MAX_LEN);
	return true;
}

/* The settings of a standby: where it streams from, and the archive when there is one. */
static bool
standby_settings(const SbStandby *s, const SbRecoveryArchive *archive, char *settings,
				 SbError *err)
{
	char		command[SETTINGS_MAX];
	bool		ok = add(settings, "\n# a standby, written by stripebackup restore\n", "", "");

	if (ok && s->primary_conninfo != NULL)
		ok = add_setting(settings, "primary_conninfo", s->primary_conninfo);
	if (ok && s->primary_slot_name != NULL)
		ok = add_setting(settings, "primary_slot_name", s->primary_slot_name);
	if (ok && archive->ndestinations > 0)
	{
		if (!restore_command(archive, command, err))
			return false;
		ok = add_setting(settings, "restore_command", command);
	}
	return (ok && add_setting(settings, "recovery_target_timeline", "latest")) ||
		sb_error_set(err, SB_EINVAL, "the standby settings are too long");
}

static bool
target_file_settings(const SbRecoveryTarget *t, const SbRecoveryArchive *archive, char *settings,
					 SbError *err)
{
	char		command[SETTINGS_MAX];

	if (!restore_command(archive, command, err))
		return false;
	return (add(settings, "\n# point-in-time recovery to the %s target, written by stripebackup restore\n",
				sb_recovery_kind_name(t->kind), "") &&
			add_setting(settings, "restore_command", command) && target_settings(t, settings)) ||
		sb_error_set(err, SB_EINVAL, "the recovery settings are too long");
}

/* A standby follows its primary for as long as it is one: no recovery target goes with it. */
static bool
check_standby_target(const SbRecoveryTarget *t, SbError *err)
{
	if (t->kind != SB_RECOVERY_NONE)
		return sb_error_set(err, SB_EINVAL, "a standby follows its primary and takes no recovery "
							"target (a %s target was given)", sb_recovery_kind_name(t->kind));
	return true;
}

bool
sb_archive_mode_parse(const char *word, const char *option, SbArchiveMode *mode, SbError *err)
{
	if (strcmp(word, "off") == 0)
		*mode = SB_ARCHIVE_MODE_OFF;
	else if (strcmp(word, "keep") == 0)
		*mode = SB_ARCHIVE_MODE_KEEP;
	else
		return sb_error_set(err, SB_EINVAL, "%s \"%s\" is not \"off\" or \"keep\"", option, word);
	return true;
}

SbArchiveMode
sb_recovery_archive_mode(const SbRecoveryTarget *t, bool as_standby)
{
	if (t->archive_mode != SB_ARCHIVE_MODE_DEFAULT)
		return t->archive_mode;
	/*
	 * A standby archives only once promoted in its primary's place, and a
	 * restore to the end of the archive (or of the backup) replaces its
	 * source: both go on archiving where it did.  A copy stopped at a
	 * target branches off the source's history.
	 */
	if (as_standby || t->kind == SB_RECOVERY_NONE || t->kind == SB_RECOVERY_LATEST)
		return SB_ARCHIVE_MODE_KEEP;
	return SB_ARCHIVE_MODE_OFF;
}

/* archive_mode = off, last in the file so that it wins over the source's own setting. */
static bool
archive_off_settings(char *settings, SbError *err)
{
	return (add(settings, "\n# the copy does not archive WAL into its source's archive, written by "
				"stripebackup restore (archive mode keep leaves the source's archiving on)\n", "", "") &&
			add_setting(settings, "archive_mode", "off")) ||
		sb_error_set(err, SB_EINVAL, "the recovery settings are too long");
}

static bool
check_recovery(const SbRecoveryTarget *t, const SbStandby *standby, bool as_standby, SbError *err)
{
	if (as_standby)
		return check_standby_target(t, err) && sb_standby_check(standby, err);
	return t->kind == SB_RECOVERY_NONE || sb_recovery_check_target(t, err);
}

bool
sb_recovery_files(const SbRecoveryTarget *t, const SbStandby *standby,
				  const SbRecoveryArchive *archive, SbRestoreFile *files, uint32_t *n,
				  SbError *err)
{
	bool		as_standby = standby != NULL && standby->enabled;
	bool		recovers = as_standby || t->kind != SB_RECOVERY_NONE;
	bool		archive_off = sb_recovery_archive_mode(t, as_standby) == SB_ARCHIVE_MODE_OFF;
	char	   *settings;
	bool		ok;

	*n = 0;
	if (!check_recovery(t, standby, as_standby, err))
		return false;
	if (!recovers && !archive_off)
		return true;
	settings = sb_alloc(SETTINGS_MAX, err);
	if (settings == NULL)
		return false;
	settings[0] = '\0';
	ok = as_standby ? standby_settings(standby, archive, settings, err) :
		!recovers || target_file_settings(t, archive, settings, err);
	if (!ok || (archive_off && !archive_off_settings(settings, err)))
	{
		free(settings);
		return false;
	}
	files[0].path = "postgresql.auto.conf";
	files[0].text = settings;
	files[0].append = true;
	*n = 1;
	if (!recovers)
		return true;
	files[1].path = as_standby ? "standby.signal" : "recovery.signal";
	files[1].text = "";
	files[1].append = false;
	*n = 2;
	return true;
}

void
sb_recovery_files_free(SbRestoreFile *files, uint32_t n)
{
	if (n > 0)
		free((char *) files[0].text);
}
