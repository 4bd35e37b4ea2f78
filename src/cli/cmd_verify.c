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

#include "json_out.h"
#include "read_args.h"
#include "recovery.h"

/* One verify: its arguments, where its text goes, and its JSON document. */
typedef struct VerifyRun
{
	const ReadArgs *args;
	FILE	   *say;			/* stdout; stderr under --output=json */
	JsonVerify	json;			/* problems NULL: no document */
} VerifyRun;

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
	printf("      --output=FORMAT      text (default) or json (docs/JSON.md)\n");
	printf("  -h, --help               show this help\n");
	printf("\nExit status 0 when the backup is good, 1 when LOCATION is not there or holds\n"
		   "no backup, 3 when a problem was found, 4 when every problem found was made up\n"
		   "for by the backup's redundancy (it restores: rebuild what was lost).\n");
}

/* A problem on stderr, and in the JSON document's problems (VERIFY_RUN's) with --output=json. */
static void
print_problem(void *arg, const SbProblem *problem)
{
	VerifyRun  *run = arg;

	fprintf(stderr, "%s: problem: %s\n", progname, problem->message);
	if (run->json.problems != NULL)
		json_verify_add_problem(&run->json, problem);
}

static void
print_wal_problem(void *arg, const char *message)
{
	VerifyRun  *run = arg;
	SbProblem	p = {.stripe = 0, .chunk = -1, .code = SB_ECORRUPT, .message = message};

	fprintf(stderr, "%s: problem: WAL: %s\n", progname, message);
	if (run->json.problems != NULL)
	{
		p.file = "WAL";
		json_verify_add_problem(&run->json, &p);
	}
}

/* Check the backup's WAL archive, adding its problems to *PROBLEMS; the exit status if it could not run. */
static int
verify_wal(VerifyRun *run, const SbArchive *a, uint64_t *problems)
{
	const ReadArgs *args = run->args;
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
			fprintf(run->say, "WAL:     no archive of system %s beside the backup: not checked "
					"(--archive DEST[,DEST...])\n", meta.system_identifier);
	}
	else if (!sb_recovery_verify_wal(&r.where, meta.start_lsn, meta.timeline, print_wal_problem, run,
									 &r.wal, &files, &found, &err))
		rc = cli_report_error(&err);
	else
	{
		json_verify_set_wal(&run->json, files, r.wal.from, r.wal.to);
		if (found == 0)
			fprintf(run->say, "WAL:     %llu files from %s to %s checked whole: recovery can reach the end "
					"of the archive\n", (unsigned long long) files, r.wal.from, r.wal.to);
	}
	if (rc == EXIT_OK && r.wal.passed_over > 0)
		fprintf(run->say, "WAL:     along timeline %u, which holds the backup; timeline %u branched off before "
				"the backup's end and is not one recovery from it can follow\n", r.wal.timeline,
				r.wal.passed_over);
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
verify_without_key(VerifyRun *run)
{
	const ReadArgs *args = run->args;
	SbSealedVerifyResult r;
	SbError		err;
	const char *name = strrchr(args->location, '/');

	if (!sb_verify_sealed(args->location, NULL, print_problem, run, &r, &err))
		return cli_report_error(&err);
	name = name != NULL ? name + 1 : args->location;
	json_verify_set_backup(&run->json, name, NULL, r.chunks, r.nstripes, true);
	if (r.problems > 0)
	{
		fprintf(run->say, "backup \"%s\" is DAMAGED: %llu problem(s) found (checked without its key)\n", name,
				(unsigned long long) r.problems);
		return EXIT_DAMAGED;
	}
	fprintf(run->say, "backup \"%s\" is encrypted; without its key: %llu chunks in %u stripes are intact "
			"(every checksum, every index, each stripe sealed with this manifest); "
			"that they open, and the files, need the key (--encryption-key-file)\n",
			name, (unsigned long long) r.chunks, r.nstripes);
	return EXIT_OK;
}

/* Say the verdict: the exit status, PROBLEMS found in A (or the WAL check's WAL_RC). */
static int
verdict(VerifyRun *run, const SbArchive *a, int wal_rc, uint64_t problems)
{
	const SbManifest *m = a->manifest;

	json_verify_set_backup(&run->json, m->name, m, m->total_chunks, m->nstripes, false);
	if (wal_rc != EXIT_OK)
	{
		fprintf(run->say, "backup \"%s\": its WAL archive could not be checked\n", m->name);
		return wal_rc;
	}
	if (m->redundancy.parity > 0)
	{
		char		left[256];
		bool		restores = sb_archive_describe_redundancy(a, left, sizeof(left));

		/* damage the redundancy made up for: it restores, but is no longer what it was */
		if (problems > 0 && restores)
		{
			fprintf(run->say, "backup \"%s\" is DEGRADED: %llu problem(s) found; %s\n", m->name,
					(unsigned long long) problems, left);
			return EXIT_DEGRADED;
		}
		fprintf(run->say, "backup \"%s\": %s\n", m->name, left);
	}
	if (problems > 0)
	{
		fprintf(run->say, "backup \"%s\" is DAMAGED: %llu problem(s) found\n", m->name,
				(unsigned long long) problems);
		return EXIT_DAMAGED;
	}
	fprintf(run->say, "backup \"%s\" is good: %llu chunks in %u stripes verified\n", m->name,
			(unsigned long long) m->total_chunks, m->nstripes);
	return EXIT_OK;
}

/* With --output=json, the document, once the verdict is known (RC 0 or 3); else RC as it is. */
static int
finish(VerifyRun *run, int rc)
{
	if (run->json.problems == NULL)
		return rc;
	if ((rc == EXIT_OK || rc == EXIT_DAMAGED || rc == EXIT_DEGRADED) && run->json.backup != NULL &&
		!json_print_verify(&run->json, rc == EXIT_OK))
		rc = EXIT_FAILED;
	json_verify_free(&run->json);
	return rc;
}

int
cmd_verify(int argc, char **argv)
{
	ReadArgs	args;
	VerifyRun	run = {.args = &args, .say = stdout};
	SbArchive  *a;
	SbReadOptions options = {0};
	CliProgress progress;
	SbError		err;
	uint64_t	problems = 0;
	int			rc;

	if ((rc = read_args_parse(argc, argv, "verify",
							  OPT_JOBS | OPT_STRIPE_PATH | OPT_PROGRESS | OPT_IO | OPT_ARCHIVE | OPT_OUTPUT,
							  verify_usage, &args)) >= 0)
		return rc;
	/* the document alone on stdout: what the text says goes to stderr */
	if (args.output_json && (!json_verify_begin(&run.json) || !json_take_stdout()))
	{
		fprintf(stderr, "%s: error: could not set up the JSON output\n", progname);
		json_verify_free(&run.json);
		read_args_free(&args);
		return EXIT_FAILED;
	}
	if (args.output_json)
		run.say = stderr;
	args.keep = SB_KEEP_STREAMED;	/* a window of files at a time */
	if ((a = read_args_open(&args, &err)) == NULL)
	{
		rc = err.code == SB_EKEY && args.key_file == NULL ? verify_without_key(&run) :
			cli_report_open_error(args.location, &err);
		read_args_free(&args);
		return finish(&run, rc);
	}
	cli_progress_init(&progress, "verified", args.progress_mode);
	read_args_read_options(&args, &progress, &options);
	if (!sb_archive_verify(a, &options, print_problem, &run, &problems, &err))
	{
		cli_progress_done(&progress, NULL);
		rc = cli_report_error(&err);
	}
	else
	{
		cli_progress_done(&progress, NULL);
		rc = verify_wal(&run, a, &problems);
		rc = verdict(&run, a, rc, problems);
	}
	sb_archive_close(a);
	read_args_free(&args);
	return finish(&run, rc);
}
