/*
 * cmd_plan.c
 *		"stripebackup plan": what a restore will read from each stripe, whether
 *		every stripe is where it should be, and whether the target will do.
 */
#include <errno.h>
#include <stdlib.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "stripebackup/sb_policy.h"
#include "json_out.h"
#include "read_args.h"
#include "recovery.h"

static void
plan_usage(void)
{
	printf("%s plan shows what a restore of a backup will read, from its manifest.\n\n", progname);
	printf("Usage:\n  %s plan LOCATION [--target DIR] [--detail] [--stripe-path K=DIR]...\n\n", progname);
	printf("Options:\n");
	printf("  -t, --target=DIR       also check that DIR can take the restore\n");
	printf("      --delta            DIR holds a stopped copy: what a delta restore would compare\n"
		   "                         and expects to differ, from the files' sizes and times\n");
	printf("      --tablespace-mapping=OLD=NEW  where each tablespace of the copy is (with --delta)\n");
	printf("      --detail           list every file piece: file, offset, length, stripe, chunk\n");
	printf("      --stripe-path=K=DIR  stripe K's backup folder, if it moved\n");
	printf("      --encryption-key-file=FILE  the key of an encrypted backup\n");
	printf("      --allow-unencrypted         under a key, read a backup in the clear too\n");
	printf("      --target-time=TIME, --target-lsn=LSN, --target-xid=XID, --target-name=NAME,\n"
		   "      --target-immediate, --target-latest [--target-timeline=TL] [--archive=DEST[,DEST...]]\n"
		   "                         also check that the WAL archive holds what recovery to\n"
		   "                         that target replays (as restore takes them)\n");
	printf("      --output=FORMAT    text (default) or json (docs/JSON.md): what is read, from\n"
		   "                         the stripes and the chain, the --target, the WAL a\n"
		   "                         recovery target needs; not with --delta or --detail\n");
	printf("  -h, --help             show this help\n");
	printf("\nExit status 1 when LOCATION is not there or holds no backup, 3 when a stripe or a WAL file recovery needs is missing, 2 when the\n"
		   "target cannot be used.\n");
}

/*
 * The stripe's stored MB/s at backup time (sb_stripe_stored_mb_per_s's
 * definition, as in stripebackup report): what is known of its device here.
 */
static void
format_backup_speed(const SbPlanStripe *s, char *buf, size_t len)
{
	if (s->write_seconds > 0)
		snprintf(buf, len, "%.1f", (double) s->stored_bytes / 1e6 / s->write_seconds);
	else
		snprintf(buf, len, "-");
}

static void
print_stripe_rows(const SbPlan *plan)
{
	uint32_t	i;

	printf("  %-3s %-8s %-10s %-12s %-12s %-8s %-11s %s\n",
		   "#", "present", "chunks", "stored", "data", "files", "stored MB/s", "stripe file");
	for (i = 0; i < plan->nstripes; i++)
	{
		const SbPlanStripe *s = &plan->stripes[i];
		char		stored[32],
					raw[32],
					speed[32];

		format_backup_speed(s, speed, sizeof(speed));
		printf("  %-3u %-8s %-10llu %-12s %-12s %-8llu %-11s %s\n", s->number,
			   s->recoverable ? "LOST" : s->present && s->lost_why == NULL ? "yes" : "NO",
			   (unsigned long long) s->chunks,
			   cli_format_bytes(s->stored_bytes, stored, sizeof(stored)),
			   cli_format_bytes(s->raw_bytes, raw, sizeof(raw)),
			   (unsigned long long) s->files, speed, s->path);
		if (s->lost_why != NULL)
			printf("      stripe %u is lost (%s): %s\n", s->number, s->lost_why,
				   s->recoverable ? "its chunks are recovered from the other stripes (the backup's redundancy)" :
				   "more stripes are lost than the backup's redundancy makes up for");
	}
}

static void
print_stripes(const SbPlan *plan)
{
	print_stripe_rows(plan);
	printf("All stripes are read at once: the restore takes as long as the slowest stripe,\n"
		   "plus creating and finishing the files.  Estimates in seconds come from restores\n"
		   "measured on a server: SELECT * FROM stripe_restore_plan('LOCATION').\n");
}

/*
 * A differential or incremental backup: each backup of its chain, read one
 * after the other, each writing what no newer one holds.  A stripe missing
 * from any of them is damage (*RC).
 */
static void
print_chain(const SbArchive *a, int *rc)
{
	const SbArchive *link;
	uint32_t	i;

	for (link = a->parent; link != NULL; link = link->parent)
	{
		SbPlan		plan;
		SbError		err;
		char		stored[32];

		if (!sb_archive_plan(link, &plan, &err))
		{
			fprintf(stderr, "stripebackup: backup \"%s\": %s\n", link->manifest->name, err.message);
			*rc = EXIT_DAMAGED;
			continue;
		}
		printf("then what no newer backup holds, from %s backup \"%s\" (%s stored, %u stripes):\n",
			   sb_backup_type_name(link->manifest->type), link->manifest->name,
			   cli_format_bytes(plan.stored_bytes, stored, sizeof(stored)), plan.nstripes);
		print_stripe_rows(&plan);
		for (i = 0; i < plan.nstripes; i++)
			if ((!plan.stripes[i].present || plan.stripes[i].lost_why != NULL) &&
				!plan.stripes[i].recoverable)
				*rc = EXIT_DAMAGED;
	}
}

static bool
print_piece(void *arg, const SbPieceRow *p, SbError *err)
{
	(void) arg;
	(void) err;
	printf("%-10llu %-6u %-12llu %-12llu %-12llu %s\n", (unsigned long long) p->chunk, p->stripe + 1u,
		   (unsigned long long) p->chunk_offset, (unsigned long long) p->file_offset,
		   (unsigned long long) p->length, p->path);
	return true;
}

/* One line per piece of file data, in chunk order (from the spool: one file held at a time). */
static bool
print_pieces(const SbManifest *m, SbError *err)
{
	printf("\n%-10s %-6s %-12s %-12s %-12s %s\n", "chunk", "stripe", "in chunk", "file offset",
		   "length", "file");
	return sb_manifest_each_piece(m, print_piece, NULL, err);
}

/* What TARGET is for a restore (as restore checks it, sb_policy.h): its state and free space, or why not. */
static void
look_at_target(const char *target, const SbPlan *plan, JsonTarget *t)
{
	SbDirState	state;
	SbError		err;
	struct statvfs vfs;
	char		where[4096];

	memset(t, 0, sizeof(*t));
	t->path = target;
	t->needed_bytes = plan->raw_bytes;
	if (!sb_policy_check_empty_or_absent(target, "target", &state, &err))
	{
		snprintf(t->problem, sizeof(t->problem), "%s: restore would refuse it", err.message);
		return;
	}
	t->will_create = state != SB_DIR_EMPTY;
	/* An absent target will be made in its parent: that is where space counts. */
	snprintf(where, sizeof(where), "%s", target);
	if (statvfs(state == SB_DIR_EMPTY ? target : dirname(where), &vfs) != 0)
	{
		snprintf(t->problem, sizeof(t->problem), "cannot check the free space for \"%s\": %s", target,
				 strerror(errno));
		return;
	}
	t->has_free = true;
	t->free_bytes = (uint64_t) vfs.f_bavail * vfs.f_frsize;
	if (t->free_bytes < plan->raw_bytes)
		snprintf(t->problem, sizeof(t->problem), "not enough free space");
	t->usable = t->free_bytes >= plan->raw_bytes;
}

/* Can TARGET take the restore?  Says why not. */
static bool
check_target(const char *target, const SbPlan *plan)
{
	JsonTarget	t;
	char		need[32],
				have[32];

	look_at_target(target, plan, &t);
	if (t.has_free)
		printf("target:  \"%s\" %s; the restore writes %s, %s are free\n", target,
			   t.will_create ? "will be created" : "is empty",
			   cli_format_bytes(t.needed_bytes, need, sizeof(need)),
			   cli_format_bytes(t.free_bytes, have, sizeof(have)));
	if (!t.usable)
		printf("target:  %s\n", t.problem);
	return t.usable;
}

/* Of the chunks, what a delta restore compares first and what it reads from each stripe. */
static void
print_delta_reads(const SbManifest *m, const SbDeltaEstimate *e)
{
	char		bytes[32];
	uint32_t	s;

	printf("delta:   compares %s of chunks with the copy before reading any;",
		   cli_format_bytes(e->compare_first, bytes, sizeof(bytes)));
	printf(" reads the other %s", cli_format_bytes(m->stream_bytes - e->compare_first, bytes, sizeof(bytes)));
	for (s = 0; s < m->nstripes; s++)
		printf("%s%s from stripe %u", s == 0 ? " (" : ", ",
			   cli_format_bytes(e->stripe_read[s], bytes, sizeof(bytes)), s + 1);
	printf(")\n");
}

/* A delta restore into TARGET: can it take one, and what would it compare and write? */
static bool
check_delta_target(const ReadArgs *args, const SbArchive *a)
{
	SbPgMeta	info;
	SbRelocation *relocs = NULL;
	SbDeltaEstimate e;
	SbError		err;
	uint32_t	n = 0;
	char		same[32],
				differ[32],
				fresh[32];
	bool		ok;

	if (!sb_pgmeta_read(a->manifest, &info, &err))
		return cli_report_error(&err) == EXIT_OK;
	relocs = calloc((size_t) info.ntablespaces + 1, sizeof(SbRelocation));
	ok = relocs != NULL &&
		sb_pgmeta_relocations(&info, args->ts_mappings, args->nts_mappings, "--tablespace-mapping", relocs, &n, &err) &&
		sb_policy_check_delta_places(args->target, relocs, n, info.system_identifier, &err) &&
		sb_delta_estimate(a->manifest, args->target, relocs, n, &e, &err);
	if (!ok)
		printf("target:  %s: a delta restore would refuse it\n", relocs ? err.message : "out of memory");
	else
		printf("delta:   into \"%s\": %s in %llu files with the backup's size and time (%s),\n"
			   "         %s in %llu files with another (read, expected to differ),\n"
			   "         %s in %llu files not there (written)\n", args->target,
			   cli_format_bytes(e.bytes_same, same, sizeof(same)), (unsigned long long) e.files_same,
			   a->parent != NULL ? "read: a chain is read whole" : "compared first, most likely held",
			   cli_format_bytes(e.bytes_differ, differ, sizeof(differ)), (unsigned long long) e.files_differ,
			   cli_format_bytes(e.bytes_new, fresh, sizeof(fresh)), (unsigned long long) e.files_new);
	if (ok && a->parent == NULL)
		print_delta_reads(a->manifest, &e);
	free(relocs);
	sb_pgmeta_free(&info);
	return ok;
}

/*
 * With a recovery target: does the WAL archive hold what recovery replays?
 * Says what it found, and copies it into *FOUND (NULL: not wanted), whose
 * "checked" stays false when it could not be checked.
 */
static int
check_wal(const ReadArgs *args, const SbArchive *a, SbRecoveryWal *found)
{
	SbPgMeta	info;
	CliRecovery recovery;
	SbError		err;
	int			rc = EXIT_OK;

	if (args->recovery.kind == SB_RECOVERY_NONE)
		return EXIT_OK;
	if (!sb_pgmeta_read(a->manifest, &info, &err))
		return cli_report_error(&err);
	if (!cli_recovery_check(args, a, &info, false, &recovery, &err))
		rc = cli_report_error(&err);
	else if (recovery.wal.refuse)
		rc = EXIT_DAMAGED;
	else if (!recovery.wal.checked)
		printf("WAL:     the %s target needs only the backup's own WAL\n",
			   sb_recovery_kind_name(args->recovery.kind));
	if (found != NULL && rc != EXIT_OK && !recovery.wal.refuse)
		found->checked = false;
	else if (found != NULL)
		*found = recovery.wal;
	cli_recovery_free(&recovery);
	sb_pgmeta_free(&info);
	return rc;
}

/* Is every stripe of the chain there, and the manifest authenticated? */
static bool
chain_ready(const SbArchive *a)
{
	const SbArchive *link;
	SbPlan		plan;
	SbError		err;
	uint32_t	i;

	for (link = a; link != NULL; link = link->parent)
	{
		if (!link->authenticated || !sb_archive_plan(link, &plan, &err))
			return false;
		for (i = 0; i < plan.nstripes; i++)
			if ((!plan.stripes[i].present || plan.stripes[i].lost_why != NULL) &&
				!plan.stripes[i].recoverable)
				return false;
	}
	return true;
}

/* plan --output=json: the stripes and the chain, as a document; the exit status. */
static int
plan_json(ReadArgs *args)
{
	SbArchive  *a;
	SbPlan		plan;
	SbError		err;
	JsonTarget	target;
	SbRecoveryWal wal;
	bool		ready;
	int			rc,
				wal_rc;

	if (args->delta || args->detail)
		return cli_usage_error("plan", "--output=json takes no --delta or --detail");
	/* what the WAL check says as it goes lands on stderr: stdout is the document's */
	if (args->recovery.kind != SB_RECOVERY_NONE && !json_take_stdout())
	{
		fprintf(stderr, "%s: error: could not set up the JSON output\n", progname);
		return EXIT_FAILED;
	}
	args->keep = SB_KEEP_COUNTS;
	if ((a = read_args_open(args, &err)) == NULL)
		return cli_report_open_error(args->location, &err);
	if (!sb_archive_plan(a, &plan, &err))
		rc = cli_report_error(&err);
	else
	{
		ready = chain_ready(a);
		if (args->target != NULL)
			look_at_target(args->target, &plan, &target);
		rc = ready ? EXIT_OK : EXIT_DAMAGED;
		/* as the text: a target that will not do is refused input, unless the backup is damaged */
		if (rc == EXIT_OK && args->target != NULL && !target.usable)
			rc = EXIT_USAGE;
		memset(&wal, 0, sizeof(wal));
		if ((wal_rc = check_wal(args, a, &wal)) != EXIT_OK && rc == EXIT_OK)
			rc = wal_rc;
		if (!json_print_plan(a, &plan, ready, args->target != NULL ? &target : NULL,
							 args->recovery.kind != SB_RECOVERY_NONE ? &args->recovery : NULL, &wal))
			rc = EXIT_FAILED;
	}
	sb_archive_close(a);
	read_args_free(args);
	return rc;
}

int
cmd_plan(int argc, char **argv)
{
	ReadArgs	args;
	SbArchive  *a;
	SbPlan		plan;
	SbError		err;
	char		raw[32],
				stored[32];
	uint32_t	i;
	int			rc,
				wal_rc;

	if ((rc = read_args_parse(argc, argv, "plan",
							  OPT_TARGET | OPT_DETAIL | OPT_STRIPE_PATH | OPT_RECOVERY | OPT_ARCHIVE |
							  OPT_DELTA | OPT_TS_MAPPING | OPT_OUTPUT,
							  plan_usage, &args)) >= 0)
		return rc;
	if (args.output_json)
		return plan_json(&args);
	/* the plan of the stripes needs no file table, the WAL check the members: the detail and delta a stream */
	args.keep = args.detail || args.delta ? SB_KEEP_STREAMED : SB_KEEP_COUNTS;
	if ((a = read_args_open(&args, &err)) == NULL)
		return cli_report_open_error(args.location, &err);
	if (!sb_archive_plan(a, &plan, &err))
	{
		sb_archive_close(a);
		return cli_report_error(&err);
	}
	printf("restore plan for %s backup \"%s\": %llu files, %s of data in %s stored, %u stripes read in parallel\n",
		   sb_backup_type_name(a->manifest->type), a->manifest->name, (unsigned long long) plan.files,
		   cli_format_bytes(plan.raw_bytes, raw, sizeof(raw)),
		   cli_format_bytes(plan.stored_bytes, stored, sizeof(stored)), plan.nstripes);
	print_stripes(&plan);
	rc = EXIT_OK;
	for (i = 0; i < plan.nstripes; i++)
		if ((!plan.stripes[i].present || plan.stripes[i].lost_why != NULL) &&
			!plan.stripes[i].recoverable)
			rc = EXIT_DAMAGED;
	print_chain(a, &rc);
	if (rc == EXIT_DAMAGED)
		printf("missing stripes: restore will fail until they are found (--stripe-path K=DIR)\n");
	if (!a->authenticated)
	{
		printf("manifest \"%s\" could not be authenticated: no stripe was read to check it against;\n"
			   "restore refuses it until the stripes are found\n", a->manifest_path);
		rc = EXIT_DAMAGED;
	}
	if (args.delta && args.target == NULL)
		rc = cli_usage_error("plan", "--delta goes with --target DIR, the copy to refresh");
	else if (args.target != NULL &&
			 !(args.delta ? check_delta_target(&args, a) : check_target(args.target, &plan)) &&
			 rc == EXIT_OK)
		rc = EXIT_USAGE;
	if ((wal_rc = check_wal(&args, a, NULL)) != EXIT_OK && rc == EXIT_OK)
		rc = wal_rc;
	if (args.detail && !print_pieces(a->manifest, &err))
		rc = cli_report_error(&err);
	sb_archive_close(a);
	read_args_free(&args);
	return rc;
}
