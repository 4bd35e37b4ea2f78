/*
 * sb_pitr_args.c
 *		The point-in-time arguments of stripe_restore(): which target
 *		(target_time, target_lsn, target_xid, target_name, or target =>
 *		'immediate' / 'latest'), how to treat it, where the WAL archive is,
 *		and, when no backup was named, the newest one that can reach it.
 *		Checked in the caller, so a bad target creates nothing.
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

#include "sb_control.h"
#include "sb_guc.h"
#include "sb_pitr_args.h"
#include "sb_spi.h"

/* The target arguments' positions after the first of them (target_time). */
#define ARG_TIME 0
#define ARG_LSN 1
#define ARG_XID 2
#define ARG_NAME 3
#define ARG_TARGET 4
#define ARG_INCLUSIVE 5
#define ARG_TIMELINE 6
#define ARG_ACTION 7

/* A time as recovery_target_time reads it, in UTC to the microsecond. */
static void
format_time(TimestampTz ts, char *out, size_t len)
{
	struct pg_tm tm;
	fsec_t		fsec;

	if (TIMESTAMP_NOT_FINITE(ts) || timestamp2tm(ts, NULL, &tm, &fsec, NULL, NULL) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("target_time must be a finite time")));
	snprintf(out, len, "%04d-%02d-%02d %02d:%02d:%02d.%06d+00", tm.tm_year, tm.tm_mon,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int) fsec);
}

/* Record target KIND with VALUE; ERROR if another target was given already. */
static void
set_target(SbRestoreArgs *args, SbRecoveryKind kind, const char *value)
{
	if (args->recovery_kind != SB_RECOVERY_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("give one target: %s and %s were both given",
						sb_recovery_kind_name(args->recovery_kind), sb_recovery_kind_name(kind)),
				 errhint("A point-in-time restore stops at one of target_time, target_lsn, "
						 "target_xid, target_name or target => 'immediate' or 'latest'.")));
	args->recovery_kind = kind;
	strlcpy(args->recovery_value, value ? value : "", sizeof(args->recovery_value));
}

static void
read_target(FunctionCallInfo fcinfo, int first, SbRestoreArgs *args)
{
	char		value[SB_RECOVERY_VALUE_LEN];

	if (!PG_ARGISNULL(first + ARG_TIME))
	{
		format_time(PG_GETARG_TIMESTAMPTZ(first + ARG_TIME), value, sizeof(value));
		set_target(args, SB_RECOVERY_TIME, value);
		args->recovery_time = PG_GETARG_TIMESTAMPTZ(first + ARG_TIME);
	}
	if (!PG_ARGISNULL(first + ARG_LSN))
	{
		XLogRecPtr	lsn = PG_GETARG_LSN(first + ARG_LSN);

		snprintf(value, sizeof(value), "%X/%X", LSN_FORMAT_ARGS(lsn));
		set_target(args, SB_RECOVERY_LSN, value);
	}
	if (!PG_ARGISNULL(first + ARG_XID))
	{
		snprintf(value, sizeof(value), UINT64_FORMAT,
				 U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(first + ARG_XID)));
		set_target(args, SB_RECOVERY_XID, value);
	}
	if (!PG_ARGISNULL(first + ARG_NAME))
		set_target(args, SB_RECOVERY_NAME, text_to_cstring(PG_GETARG_TEXT_PP(first + ARG_NAME)));
	if (!PG_ARGISNULL(first + ARG_TARGET))
	{
		char	   *target = text_to_cstring(PG_GETARG_TEXT_PP(first + ARG_TARGET));

		if (strcmp(target, "immediate") != 0 && strcmp(target, "latest") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("target \"%s\" is not \"immediate\" or \"latest\"", target)));
		set_target(args, strcmp(target, "latest") == 0 ? SB_RECOVERY_LATEST : SB_RECOVERY_IMMEDIATE,
				   NULL);
	}
}

/* A text argument that has a default, NULL refused. */
static void
read_word(FunctionCallInfo fcinfo, int n, const char *name, char *out, size_t len)
{
	char	   *word;

	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s must not be NULL", name)));
	word = text_to_cstring(PG_GETARG_TEXT_PP(n));
	if (strlen(word) >= len)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s \"%s\" is too long", name, word)));
	strlcpy(out, word, len);
}

/* Where the WAL archive is, as stripebackup.archive_destinations says. */
static void
read_archive(SbRestoreArgs *args)
{
	const char *why = "it is empty";

	args->narchive = sbx_guc_archive_destination_list(sb_guc_archive_destinations, args->archive, &why);
	if (args->narchive <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("a point-in-time restore needs the WAL archive, and "
						"stripebackup.archive_destinations is not usable: %s", why),
				 errhint("Archive WAL with archive_library = 'stripebackup' and "
						 "stripebackup.archive_destinations.")));
}

/* The stripebackup command, beside the server's own programs. */
static void
find_program(SbRestoreArgs *args)
{
	char		dir[MAXPGPATH];

	strlcpy(dir, my_exec_path, sizeof(dir));
	get_parent_directory(dir);
	snprintf(args->program, sizeof(args->program), "%s/stripebackup", dir);
	if (access(args->program, X_OK) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("the stripebackup command, which restore_command runs, is not usable at \"%s\": %m",
						args->program),
				 errhint("Install it with the extension (make install).")));
}

void
sbx_pitr_read(FunctionCallInfo fcinfo, int first, SbRestoreArgs *args)
{
	SbRecoveryTarget t;
	SbError		err;

	read_target(fcinfo, first, args);
	args->recovery_inclusive = PG_ARGISNULL(first + ARG_INCLUSIVE) || PG_GETARG_BOOL(first + ARG_INCLUSIVE);
	/* NULL (the default): none given, the timeline that holds the target is chosen (sbx_pitr_check_wal) */
	args->recovery_timeline[0] = '\0';
	if (!PG_ARGISNULL(first + ARG_TIMELINE))
		read_word(fcinfo, first + ARG_TIMELINE, "target_timeline", args->recovery_timeline,
				  sizeof(args->recovery_timeline));
	read_word(fcinfo, first + ARG_ACTION, "target_action", args->recovery_action,
			  sizeof(args->recovery_action));
	if (args->recovery_kind == SB_RECOVERY_NONE)
		return;
	sbx_restore_recovery_target(args, &t);
	if (!sb_recovery_check_target(&t, &err))
		sbx_raise(&err);
	read_archive(args);
	find_program(args);
}

/* A text argument that may be NULL (then ""), at most LEN - 1 bytes. */
static void
read_optional(FunctionCallInfo fcinfo, int n, const char *name, char *out, size_t len)
{
	char	   *value;

	out[0] = '\0';
	if (PG_ARGISNULL(n))
		return;
	value = text_to_cstring(PG_GETARG_TEXT_PP(n));
	if (strlen(value) >= len)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is longer than %d bytes", name, (int) len - 1)));
	strlcpy(out, value, len);
}

void
sbx_standby_read(FunctionCallInfo fcinfo, int first, SbRestoreArgs *args)
{
	SbStandby	s;
	SbError		err;
	const char *why = NULL;

	args->standby = !PG_ARGISNULL(first) && PG_GETARG_BOOL(first);
	read_optional(fcinfo, first + 1, "primary_conninfo", args->primary_conninfo,
				  sizeof(args->primary_conninfo));
	read_optional(fcinfo, first + 2, "primary_slot_name", args->primary_slot_name,
				  sizeof(args->primary_slot_name));
	if (!args->standby)
	{
		if (args->primary_conninfo[0] || args->primary_slot_name[0])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("primary_conninfo and primary_slot_name go with standby => true")));
		return;
	}
	if (args->recovery_kind != SB_RECOVERY_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a standby follows its primary and takes no recovery target (a %s target was given)",
						sb_recovery_kind_name(args->recovery_kind))));
	s.enabled = true;
	s.primary_conninfo = args->primary_conninfo[0] ? args->primary_conninfo : NULL;
	s.primary_slot_name = args->primary_slot_name[0] ? args->primary_slot_name : NULL;
	if (!sb_standby_check(&s, &err))
		sbx_raise(&err);
	/* the archive, when there is one, is where the standby catches up from too */
	args->narchive = sbx_guc_archive_destination_list(sb_guc_archive_destinations, args->archive, &why);
	if (args->narchive > 0)
		find_program(args);
	else
		args->narchive = 0;
}

int64
sbx_pitr_choose_backup(FunctionCallInfo fcinfo, int first, const SbRestoreArgs *args)
{
	Datum		values[2];
	char		nulls[2] = {'n', 'n'};
	bool		isnull = true;
	int64		id = 0;
	SbSql		sql;
	SbRows		rows;

	if (args->recovery_kind == SB_RECOVERY_NONE && !args->standby)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("give a backup, or a target to choose the backup by"),
				 errhint("For example stripe_restore(target_dir => '/srv/pg/copy', target_time => '2026-11-30 14:05+00').")));
	if (args->recovery_kind == SB_RECOVERY_TIME)
		values[0] = PG_GETARG_DATUM(first + ARG_TIME), nulls[0] = ' ';
	if (args->recovery_kind == SB_RECOVERY_LSN)
		values[1] = PG_GETARG_DATUM(first + ARG_LSN), nulls[1] = ' ';
	sbx_sql_enter(&sql);
	rows = sbx_sql_run(SB_SQL_BACKUP_FOR_TARGET, values, nulls);
	if (rows.count == 1)
		id = DatumGetInt64(sbx_sql_datum(&sql, &rows, 0, 1, &isnull));
	sbx_sql_leave(&sql);
	if (id == 0 && args->standby)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("there is no completed backup to make a standby of")));
	if (id == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("no completed backup can reach the %s target \"%s\": none had ended by then",
						sb_recovery_kind_name(args->recovery_kind), args->recovery_value),
				 errhint("See SELECT id, finished_at, stop_lsn FROM stripe_backups.")));
	return id;
}
