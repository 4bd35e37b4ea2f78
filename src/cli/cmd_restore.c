/*
 * cmd_restore.c
 *		"stripebackup restore": restore a backup into an empty directory,
 *		reading all stripes at once.  A restored PostgreSQL data directory
 *		starts with pg_ctl start and nothing else; its tablespaces go back
 *		where they were, or where --tablespace-mapping says.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_pgmeta.h"
#include "stripebackup/sb_policy.h"
#include "pick_backup.h"
#include "read_args.h"
#include "recovery.h"
#include "restore_owner.h"

/* What a delta restore writes last: a copy cut short cannot start without it. */
#define PG_CONTROL_FILE "global/pg_control"

static void
restore_usage(void)
{
	printf("%s restore restores a backup into an empty or new directory, reading\n"
		   "all stripes in parallel and checking every chunk.\n\n", progname);
	printf("Usage:\n  %s restore LOCATION --target DIR [OPTION]...\n\n", progname);
	printf("LOCATION is a backup's folder, or a destination: then the newest completed backup\n"
		   "there that ended before the recovery target is restored (and named).\n\n");
	printf("Options:\n");
	printf("  -t, --target=DIR         where to restore (must be empty or absent)\n");
	printf("      --delta              DIR may hold a stopped copy of the same cluster: rewrite\n"
		   "                           only what differs, remove what the backup lacks\n");
	printf("      --tablespace-mapping=OLD=NEW\n"
		   "                           restore the tablespace that was at OLD into NEW\n"
		   "                           (default: where it was; it must be empty or absent)\n");
	printf("  -j, --jobs=N             decompression workers (default: number of CPUs)\n");
	printf("      --stripe-path=K=DIR  stripe K's backup folder, if it moved\n");
	printf("      --encryption-key-file=FILE  the key of an encrypted backup\n");
	printf("      --allow-unencrypted         under a key, read a backup in the clear too\n");
	printf("      --io-method=METHOD   auto (io_uring when allowed), io_uring or sync\n");
	printf("      --queue-depth=N      reads in flight per stripe (default 4)\n");
	printf("      --max-rate=R[,R...]  read at most R MB/s, from every stripe or one each\n");
	printf("      --max-memory=SIZE    refuse settings that need more memory (default 1GB)\n");
	printf("      --keep-on-error      leave a failed restore's files for inspection\n");
	printf("      --owner=USER         run as root: the files belong to USER (default: the\n"
		   "                           owner of the target's parent folder; never root)\n");
	printf("\nPoint-in-time recovery (the restored copy replays archived WAL when it starts):\n");
	printf("      --target-time=TIME   up to a time, e.g. \"2026-11-30 14:05:00+00\"\n");
	printf("      --target-lsn=LSN     up to a WAL position, e.g. 0/5A0003B8\n");
	printf("      --target-xid=XID     up to a transaction's commit\n");
	printf("      --target-name=NAME   up to a restore point (pg_create_restore_point)\n");
	printf("      --target-immediate   only until the backup is consistent\n");
	printf("      --target-latest      all the WAL the archive holds\n");
	printf("      --target-exclusive   stop just before the target, not just after it\n");
	printf("      --target-timeline=TL latest, current or a number (default: latest, or the timeline\n"
		   "                           that holds the target when the newest does not reach it)\n");
	printf("      --target-action=A    promote (default), pause or shutdown at the target\n");
	printf("      --archive=DEST[,DEST...]\n"
		   "                           the WAL archive's destinations (default: those of the\n"
		   "                           backup that hold one); the restore is refused when\n"
		   "                           recovery would stop short of the target unnoticed\n");
	printf("      --archive-redundancy=M\n"
		   "                           the archive holds each segment in M + 1 destinations\n"
		   "                           (stripebackup.archive_redundancy): restore_command\n"
		   "                           lets M of them be missing (default: what the backup\n"
		   "                           recorded, when the archive is the one it recorded;\n"
		   "                           else 0: every destination is needed)\n");
	printf("      --archive-mode=MODE  the copy's WAL archiving: off (the default with a\n"
		   "                           recovery target: the copy does not write its new\n"
		   "                           timeline into its source's archive) or keep (the\n"
		   "                           default for --standby, --target-latest and no target)\n");
	printf("\nA standby (the restored copy follows its primary when it starts):\n");
	printf("      --standby            write standby.signal, with restore_command from the WAL\n"
		   "                           archive when there is one (--archive, or the backup's\n"
		   "                           destinations that hold one)\n");
	printf("      --primary-conninfo=S how it connects to the primary (primary_conninfo)\n");
	printf("      --primary-slot-name=NAME\n"
		   "                           the primary's replication slot it uses\n");
	printf("  -P, --progress           show progress (default when stderr is a terminal)\n");
	printf("      --no-progress        do not show progress\n");
	printf("  -h, --help               show this help\n");
}

/*
 * Where each tablespace goes (its location, or --tablespace-mapping's), after
 * the mappings themselves are checked against each other and the target.
 */
static SbRelocation *
relocations(SbPgMeta *info, const ReadArgs *args, const char *target, uint32_t *n,
			SbError *err)
{
	SbRelocation *relocs;

	if (args->nts_mappings > 0 && info->ntablespaces == 0)
	{
		sb_error_set(err, SB_EINVAL, "--tablespace-mapping given, but the backup has no tablespaces");
		return NULL;
	}
	if (!sb_policy_check_mappings(args->ts_mappings, args->nts_mappings, target, "--tablespace-mapping", err))
		return NULL;
	relocs = calloc((size_t) info->ntablespaces + 1, sizeof(SbRelocation));
	if (relocs == NULL)
		sb_error_set(err, SB_ENOMEM, "out of memory");
	else if (!sb_pgmeta_relocations(info, args->ts_mappings, args->nts_mappings, "--tablespace-mapping", relocs, n, err))
	{
		free(relocs);
		return NULL;
	}
	return relocs;
}

/*
 * For a restore run as root, before anything is made: the nearest folder
 * there of the target and of each of the N places, so that the folders the
 * restore makes above them are handed over too.
 */
static char (*owner_tops(const char *target, const SbRelocation *relocs, uint32_t n, SbError *err))[PATH_MAX]
{
	char		(*tops)[PATH_MAX] = calloc((size_t) n + 1, PATH_MAX);
	uint32_t	i;

	if (tops == NULL)
	{
		sb_error_set(err, SB_ENOMEM, "out of memory");
		return NULL;
	}
	cli_owner_existing_top(target, tops[0]);
	for (i = 0; i < n; i++)
		cli_owner_existing_top(relocs[i].to, tops[i + 1]);
	return tops;
}

/* Where the time went, in the phases stripe_restores records for a SQL restore. */
static void
print_times(const SbRestoreStats *s)
{
	printf("%.2f s (%.2f s creating the tree, %.2f s reading and writing, %.2f s finishing with "
		   "the final sync)\n", s->setup_seconds + s->read_seconds + s->finish_seconds,
		   s->setup_seconds, s->read_seconds, s->finish_seconds);
}

/*
 * Every place the restore writes is checked as the SQL restore checks it
 * (sb_policy.h) before anything is created, and so are the memory it needs
 * and, for a point-in-time restore, the WAL archive.
 */
/* What a delta restore compared, read and wrote; what it read of the stripes, of a backup alone. */
static void
print_delta(const SbArchive *a, const SbRestoreStats *stats)
{
	uint64_t	stored = 0;
	uint32_t	s;

	for (s = 0; s < a->manifest->nstripes; s++)
		stored += a->manifest->stripes[s].stored_bytes;
	printf("delta: %.1f MB compared, %.1f MB of it already there (not read), %.1f MB read in part "
		   "(%.1f MB of frames read), %.1f MB written, %llu entries removed\n",
		   (double) stats->delta_compared / 1e6, (double) stats->delta_held / 1e6,
		   (double) stats->delta_patched / 1e6, (double) stats->delta_patch_read / 1e6,
		   (double) stats->delta_written / 1e6, (unsigned long long) stats->delta_removed);
	if (a->parent == NULL)
		printf("delta: %.1f MB of the stripes' %.1f MB read\n",
			   (double) (stored - stats->delta_held_stored) / 1e6, (double) stored / 1e6);
}

static bool
restore(SbArchive *a, const ReadArgs *args, const char *target, const CliOwner *owner,
		SbRestoreStats *stats, SbError *err)
{
	SbPgMeta	info;
	SbRestoreOptions options = {0};
	SbRestoreFile recovery_files[2];
	CliRecovery recovery;
	CliProgress progress;
	SbRelocation *relocs = NULL;
	char		(*tops)[PATH_MAX] = NULL;
	bool		ok;

	if (!sb_pgmeta_read(a->manifest, &info, err))
		return false;
	memset(&recovery, 0, sizeof(recovery));
	cli_progress_init(&progress, "restored", args->progress_mode);
	options.target = target;
	options.keep_on_error = args->keep_on_error;
	read_args_read_options(args, &progress, &options.read);
	options.delta = args->delta;
	options.delta_guard = PG_CONTROL_FILE;
	options.stats = stats;
	ok = (relocs = relocations(&info, args, target, &options.nrelocations, err)) != NULL &&
		(args->delta ?
		 sb_policy_check_delta_places(target, relocs, options.nrelocations, info.system_identifier, err) :
		 sb_policy_check_restore_places(target, relocs, options.nrelocations, err)) &&
		sb_policy_check_read_memory(a->manifest, &options.read, err) &&
		(tops = owner_tops(target, relocs, options.nrelocations, err)) != NULL &&
		cli_recovery_check(args, a, &info, true, &recovery, err) &&
		cli_recovery_files(args, &recovery, recovery_files, &options.nextra_files, err);
	if (ok)
	{
		options.relocations = relocs;
		options.extra_files = recovery_files;
		ok = sb_archive_restore(a, &options, err) &&
			cli_owner_apply(owner, target, relocs, options.nrelocations, tops, err);
		cli_progress_done(&progress, NULL);
		if (ok && owner->active)
			printf("owner:   the files belong to %s (uid %u, gid %u)%s%s%s\n", owner->name, (unsigned) owner->uid,
				   (unsigned) owner->gid, owner->from[0] ? ", the owner of \"" : " (--owner)", owner->from,
				   owner->from[0] ? "\"" : "");
		if (ok && args->delta)
			print_delta(a, stats);
		sb_recovery_files_free(recovery_files, options.nextra_files);
	}
	cli_recovery_free(&recovery);
	free(tops);
	free(relocs);
	sb_pgmeta_free(&info);
	return ok;
}

/* Whether the copy archives WAL, when the restore decided it should not. */
static void
print_archiving(const ReadArgs *args)
{
	if (sb_recovery_archive_mode(&args->recovery, args->standby.enabled) != SB_ARCHIVE_MODE_OFF)
		return;
	printf("archiving: off in the copy (archive_mode = off in its postgresql.auto.conf), so that it writes "
		   "nothing into its source's WAL archive%s\n",
		   args->recovery.archive_mode == SB_ARCHIVE_MODE_DEFAULT ?
		   "; --archive-mode=keep keeps the source's archiving" : "");
}

int
cmd_restore(int argc, char **argv)
{
	ReadArgs	args;
	SbArchive  *a;
	SbError		err;
	char		target[PATH_MAX];
	SbRestoreStats stats;
	CliOwner	owner;
	char	   *picked = NULL;
	int			rc;

	if ((rc = read_args_parse(argc, argv, "restore",
							  OPT_TARGET | OPT_JOBS | OPT_STRIPE_PATH | OPT_PROGRESS | OPT_IO | OPT_KEEP |
							  OPT_TS_MAPPING | OPT_RECOVERY | OPT_ARCHIVE | OPT_STANDBY | OPT_DELTA |
							  OPT_ARCHIVE_MODE | OPT_OWNER | OPT_ARCHIVE_REDUNDANCY,
							  restore_usage, &args)) >= 0)
		return rc;
	if (args.target == NULL)
		return cli_usage_error("restore", "--target is required");
	/* a window of files at a time, a delta restore and each backup of a chain too */
	args.keep = SB_KEEP_STREAMED;
	/* The places checked and written are absolute, as the SQL restore's are. */
	if (!sb_policy_canonical_path(args.target, target, &err) ||
		!cli_owner_choose(args.owner, target, &owner, &err) ||
		!cli_pick_backup(&args, &picked, &err))
		return cli_report_lookup_error(&err);
	if (picked != NULL)
		args.location = picked;
	if ((a = read_args_open(&args, &err)) == NULL)
	{
		free(picked);
		return cli_report_open_error(args.location, &err);
	}
	if (restore(a, &args, target, &owner, &stats, &err))
	{
		printf("backup \"%s\" restored into \"%s\" in ", a->manifest->name, args.target);
		print_times(&stats);
		if (args.recovery.kind != SB_RECOVERY_NONE)
			printf("it recovers to the %s target when it starts (recovery.signal, postgresql.auto.conf)\n",
				   sb_recovery_kind_name(args.recovery.kind));
		print_archiving(&args);
		rc = EXIT_OK;
	}
	else
		rc = cli_report_error(&err);
	sb_archive_close(a);
	read_args_free(&args);
	free(picked);
	return rc;
}
