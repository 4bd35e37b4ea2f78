/*
 * sb_pitr_wal.c
 *		Before a point-in-time restore writes anything: is the WAL recovery
 *		will ask for in the archive?  The session that called stripe_restore()
 *		checks it, so that what it finds reaches the caller.  And for
 *		stripe_verify(): every WAL file recovery from a backup reads, whole.
 *		With stripebackup.encryption_key_file set, the archive is read as
 *		sealed with that key: a file in the clear, forged or moved there is
 *		a gap, as a missing one is.
 */
#include "postgres.h"

#include <limits.h>

#include "lib/stringinfo.h"

#include "job_restore.h"
#include "sb_control.h"
#include "sb_guc.h"
#include "sb_key.h"
#include "sb_pitr_args.h"
#include "sb_s3_settings.h"
#include "stripebackup/sb_pgrecovery.h"

/* The backup's system identifier: its WAL is in DEST/wal/<this>. */
static uint64
backup_system(const SbPgMeta *meta)
{
	char	   *end;
	unsigned long long v;

	if (!meta->is_postgresql || meta->system_identifier == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("a point-in-time restore needs a backup of a PostgreSQL cluster, and this one is of "
						"a plain folder")));
	errno = 0;
	v = strtoull(meta->system_identifier, &end, 10);
	if (errno != 0 || *end != '\0' || end == meta->system_identifier)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the backup's system identifier \"%s\" is not a number", meta->system_identifier)));
	return (uint64) v;
}

/*
 * What recovery fetches from each destination, and how long that takes at the
 * read speeds restores measured there (all destinations at once, as wal-get
 * prefetches from every one).
 */
static char *
fetch_detail(const SbWalDests *where, const SbRecoveryWal *r)
{
	StringInfoData out;
	double		seconds = 0;
	bool		known = true;
	uint32		i;

	initStringInfo(&out);
	appendStringInfo(&out, "%.1f MB of WAL to replay.", (double) r->raw_bytes / 1e6);
	for (i = 0; i < where->count; i++)
	{
		double		speed = sbx_restore_measured_speed(where->paths[i]);

		if (r->held[i] == 0)
			continue;
		appendStringInfo(&out, " %s: %u %s, %.1f MB stored", where->paths[i], r->held[i],
						 r->held[i] == 1 ? "segment" : "segments", (double) r->stored_bytes[i] / 1e6);
		if (speed > 0)
			seconds = Max(seconds, (double) r->stored_bytes[i] / 1e6 / speed);
		known = known && speed > 0;
		appendStringInfoChar(&out, ';');
	}
	if (known)
		appendStringInfo(&out, " fetching takes about %.1f s at the read speeds restores measured.", seconds);
	else
		appendStringInfoString(&out, " no restore has measured every destination's read speed yet.");
	return out.data;
}

void
sbx_pitr_check_wal(SbRestoreArgs *args, const SbPgMeta *meta, bool refuse)
{
	const char *dests[SB_MAX_STRIPES];
	SbWalDests	where;
	SbRecoveryTarget t;
	SbRecoveryWal r;
	SbError		err;
	int			i;

	if (args->standby && args->narchive > 0)
		args->system_identifier = backup_system(meta);	/* for restore_command */
	if (args->recovery_kind == SB_RECOVERY_NONE)
		return;
	args->system_identifier = backup_system(meta);
	for (i = 0; i < args->narchive; i++)
		dests[i] = args->archive[i];
	where.paths = dests;
	where.count = (uint32_t) args->narchive;
	where.s3 = sbx_s3_settings();
	where.system_identifier = args->system_identifier;
	where.key = sbx_key_current();	/* the key restore_command will name */
	where.redundancy = 0;			/* a check of what is there, not of its copies */
	sbx_restore_recovery_target(args, &t);
	if (!sb_recovery_check_wal(&where, meta->stop_lsn, meta->timeline, &t, &r, &err))
		sbx_raise(&err);
	if (r.not_child)
		ereport(refuse ? ERROR : WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("recovery to the %s target along timeline %u cannot start: %s",
						sb_recovery_kind_name(t.kind), r.timeline, r.message),
				 r.holding_timeline > 0 ?
				 errhint("Choose timeline %u with target_timeline => '%u'.", r.holding_timeline, r.holding_timeline) :
				 errhint("Choose the backup's timeline with target_timeline => 'current'.")));
	else if (r.refuse)
		ereport(refuse ? ERROR : WARNING,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("recovery to the %s target would stop short of it: %s",
						sb_recovery_kind_name(t.kind), r.message),
				 errdetail("Recovery replays WAL from segment \"%s\" on, timeline %u.", r.from, r.timeline),
				 r.holding_timeline > 0 ?
				 errhint("Choose timeline %u with target_timeline => '%u'.", r.holding_timeline, r.holding_timeline) :
				 errhint("Put the missing WAL file into the archive, or restore to a target before it.")));
	if (r.chosen_timeline > 0)
	{
		/* no target_timeline given: the copy follows the one that holds the target */
		snprintf(args->recovery_timeline, sizeof(args->recovery_timeline), "%u", r.chosen_timeline);
		ereport(NOTICE,
				(errmsg("recovery follows timeline %u, which holds the %s target: no target_timeline was given, "
						"and the newest, timeline %u, does not reach it",
						r.chosen_timeline, sb_recovery_kind_name(t.kind), r.newest_timeline),
				 errdetail("%s", r.chosen_why),
				 errhint("recovery_target_timeline = '%u' goes into the copy's postgresql.auto.conf; "
						 "target_timeline chooses another.", r.chosen_timeline)));
	}
	if (r.path[0] != '\0' && !r.not_child)
		ereport(NOTICE,
				(errmsg("recovery replays %s", r.path)));
	if (r.target_looked && !r.refuse)
		ereport(r.target_lsn != 0 ? NOTICE : WARNING,
				(errmsg("%s", r.target_message),
				 r.target_lsn == 0 ?
				 errhint("Choose the timeline that holds the target with target_timeline.") : 0));
	if (r.checked && !r.complete)
		ereport(WARNING,
				(errmsg("the WAL archive has a gap after the backup: %s", r.message),
				 errdetail("PostgreSQL stops with an error at the gap if the %s target lies beyond it.",
						   sb_recovery_kind_name(t.kind))));
	else if (r.checked)
		ereport(NOTICE,
				(errmsg("the WAL archive holds every segment from \"%s\" to \"%s\" (%llu) for recovery on timeline %u",
						r.from, r.to, (unsigned long long) r.segments, r.timeline),
				 errdetail_internal("%s", fetch_detail(&where, &r))));
}

void
sbx_pitr_verify_wal(const SbPgMeta *meta, SbWalProblemFn fn, void *arg)
{
	char		folders[SB_MAX_STRIPES][MAXPGPATH];
	const char *paths[SB_MAX_STRIPES];
	const char *why = "";
	SbWalDests	where;
	SbRecoveryWal r;
	SbError		err;
	uint64		files,
				problems;
	int			n,
				i;

	n = sbx_guc_archive_destination_list(sb_guc_archive_destinations, folders, &why);
	if (n <= 0 || !meta->is_postgresql || meta->start_lsn == NULL)
		return;					/* no archive, or a cold backup: no WAL goes with it */
	for (i = 0; i < n; i++)
		paths[i] = folders[i];
	where.paths = paths;
	where.count = (uint32_t) n;
	where.s3 = sbx_s3_settings();
	where.system_identifier = backup_system(meta);
	where.key = sbx_key_current();
	/* Segments with fewer copies than the archive writes are problems of the verify. */
	where.redundancy = (uint32_t) sb_guc_archive_redundancy;
	if (!sb_recovery_verify_wal(&where, meta->start_lsn, meta->timeline, fn, arg, &r, &files, &problems, &err))
		sbx_raise(&err);
	if (problems == 0)
		ereport(NOTICE,
				(errmsg("the WAL archive holds every file from \"%s\" to \"%s\" (%llu read whole) for recovery "
						"from this backup", r.from, r.to, (unsigned long long) files),
				 r.passed_over > 0 ?
				 errdetail("Along timeline %u, which holds the backup; timeline %u branched off before the "
						   "backup's end and is not one recovery from it can follow.", r.timeline, r.passed_over) : 0));
}
