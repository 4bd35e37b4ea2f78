/*
 * cmd_verify.c
 *		"stripebackup verify": read every stripe, check every checksum, and
 *		list every problem; then the WAL archive beside the backup (or
 *		--archive): every file recovery from the backup reads, whole, and no
 *		segment missing.  Exit status 3 if there is any problem.  An
 *		encrypted backup without its key is checked as far as that allows.
 */
#include <stdio.h>
#include <string.h>

#include "read_args.h"
#include "recovery.h"

static void
verify_usage(void)
{
	printf("%s verify reads every stripe of a backup and checks every checksum,\n"
		   "without restoring anything.\n\n", progname);
	printf("Usage:\n  %s verify LOCATION [OPTION]...\n\n", progname);
	printf("Options:\n");
	printf("  -j, --jobs=N             checking workers (default: number of CPUs)\n");
	printf("      --stripe-path=K=DIR  stripe K's backup folder, if it moved\n");
	printf("      --encryption-key-file=FILE  the key of an encrypted backup\n");
	printf("      --allow-unencrypted         under a key, read a backup in the clear too\n");
	printf("      --io-method=METHOD   auto (io_uring when allowed), io_uring or sync\n");
	printf("      --queue-depth=N      reads in flight per stripe (default 4)\n");
	printf("      --max-rate=R[,R...]  read at most R MB/s, from every stripe or one each\n");
	printf("      --max-memory=SIZE    refuse settings that need more memory (default 1GB)\n");
	printf("      --archive=DEST[,DEST...]\n"
		   "                           the WAL archive to check from the backup's start on\n"
		   "                           (default: the backup's destinations that hold one)\n");
	printf("  -P, --progress           show progress (default when stderr is a terminal)\n");
	printf("      --no-progress        do not show progress\n");
	printf("  -h, --help               show this help\n");
	printf("\nExit status 0 when the backup is good, 1 when LOCATION is not there or holds\n"
		   "no backup, 3 when a problem was found.\n");
}

static void
print_problem(void *arg, const SbProblem *problem)
{
	(void) arg;
	fprintf(stderr, "%s: problem: %s\n", progname, problem->message);
}

static void
print_wal_problem(void *arg, const char *message)
{
	(void) arg;
	fprintf(stderr, "%s: problem: WAL: %s\n", progname, message);
}

/* Check the backup's WAL archive, adding its problems to *PROBLEMS; the exit status if it could not run. */
static int
verify_wal(const ReadArgs *args, const SbArchive *a, uint64_t *problems)
{
	SbPgMeta	meta;
	CliRecovery r;
	SbError		err;
	uint64_t	files = 0,
				found = 0;
	int			rc = EXIT_OK;

	if (!sb_pgmeta_read(a->manifest, &meta, &err))
		return cli_report_error(&err);
	memset(&r, 0, sizeof(r));
	if (!meta.is_postgresql || meta.start_lsn == NULL)
		rc = EXIT_OK;			/* a cold backup: no WAL goes with it */
	else if (!cli_recovery_archive(args, a, &meta, &r, &err))
	{
		if (args->narchive > 0 || err.code != SB_EINVAL)
			rc = cli_report_error(&err);
		else
			printf("WAL:     no archive of system %s beside the backup: not checked (--archive DEST[,DEST...])\n",
				   meta.system_identifier);
	}
	else if (!sb_recovery_verify_wal(&r.where, meta.start_lsn, meta.timeline, print_wal_problem, NULL,
									 &r.wal, &files, &found, &err))
		rc = cli_report_error(&err);
	else if (found == 0)
		printf("WAL:     %llu files from %s to %s checked whole: recovery can reach the end of the archive\n",
			   (unsigned long long) files, r.wal.from, r.wal.to);
	if (rc == EXIT_OK && r.wal.passed_over > 0)
		printf("WAL:     along timeline %u, which holds the backup; timeline %u branched off before the "
			   "backup's end and is not one recovery from it can follow\n", r.wal.timeline, r.wal.passed_over);
	*problems += found;
	cli_recovery_free(&r);
	sb_pgmeta_free(&meta);
	return rc;
}

/*
 * An encrypted backup and no key: check what can be checked in the clear
 * (sb_verify_sealed), and say what cannot.
 */
static int
verify_without_key(const ReadArgs *args)
{
	SbSealedVerifyResult r;
	SbError		err;
	const char *name = strrchr(args->location, '/');

	if (!sb_verify_sealed(args->location, print_problem, NULL, &r, &err))
		return cli_report_error(&err);
	name = name != NULL ? name + 1 : args->location;
	if (r.problems > 0)
	{
		printf("backup \"%s\" is DAMAGED: %llu problem(s) found (checked without its key)\n", name,
			   (unsigned long long) r.problems);
		return EXIT_DAMAGED;
	}
	printf("backup \"%s\" is encrypted; without its key: %llu chunks in %u stripes are intact "
		   "(every checksum, every index, each stripe sealed with this manifest); "
		   "that they open, and the files, need the key (--encryption-key-file)\n",
		   name, (unsigned long long) r.chunks, r.nstripes);
	return EXIT_OK;
}

int
cmd_verify(int argc, char **argv)
{
	ReadArgs	args;
	SbArchive  *a;
	SbReadOptions options = {0};
	CliProgress progress;
	SbError		err;
	uint64_t	problems = 0;
	bool		ok;
	int			rc;

	if ((rc = read_args_parse(argc, argv, "verify",
							  OPT_JOBS | OPT_STRIPE_PATH | OPT_PROGRESS | OPT_IO | OPT_ARCHIVE,
							  verify_usage, &args)) >= 0)
		return rc;
	args.keep = SB_KEEP_STREAMED;	/* a window of files at a time */
	if ((a = read_args_open(&args, &err)) == NULL)
	{
		rc = err.code == SB_EKEY && args.key_file == NULL ? verify_without_key(&args) : cli_report_open_error(args.location, &err);
		read_args_free(&args);
		return rc;
	}
	cli_progress_init(&progress, "verified", args.progress_mode);
	read_args_read_options(&args, &progress, &options);
	ok = sb_archive_verify(a, &options, print_problem, NULL, &problems, &err);
	cli_progress_done(&progress, NULL);
	if (!ok)
		rc = cli_report_error(&err);
	else if ((rc = verify_wal(&args, a, &problems)) != EXIT_OK)
		printf("backup \"%s\": its WAL archive could not be checked\n", a->manifest->name);
	else if (problems > 0)
	{
		printf("backup \"%s\" is DAMAGED: %llu problem(s) found\n", a->manifest->name,
			   (unsigned long long) problems);
		rc = EXIT_DAMAGED;
	}
	else
	{
		printf("backup \"%s\" is good: %llu chunks in %u stripes verified\n", a->manifest->name,
			   (unsigned long long) a->manifest->total_chunks, a->manifest->nstripes);
		rc = EXIT_OK;
	}
	sb_archive_close(a);
	read_args_free(&args);
	return rc;
}
