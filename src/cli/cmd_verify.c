/*
 * cmd_verify.c
 *		"stripebackup verify": read every stripe, check every checksum, and
 *		list every problem; exit status 3 if there is any.
 */
#include <stdio.h>

#include "read_args.h"

static void
verify_usage(void)
{
	printf("%s verify reads every stripe of a backup and checks every checksum,\n"
		   "without restoring anything.\n\n", progname);
	printf("Usage:\n  %s verify LOCATION [OPTION]...\n\n", progname);
	printf("Options:\n");
	printf("  -j, --jobs=N             checking workers (default: number of CPUs)\n");
	printf("      --stripe-path=K=DIR  stripe K's backup folder, if it moved\n");
	printf("      --io-method=METHOD   auto (io_uring when allowed), io_uring or sync\n");
	printf("      --queue-depth=N      reads in flight per stripe (default 4)\n");
	printf("      --max-rate=R[,R...]  read at most R MB/s, from every stripe or one each\n");
	printf("      --max-memory=SIZE    refuse settings that need more memory (default 1GB)\n");
	printf("  -P, --progress           show progress (default when stderr is a terminal)\n");
	printf("      --no-progress        do not show progress\n");
	printf("  -h, --help               show this help\n");
	printf("\nExit status 0 when the backup is good, 3 when a problem was found.\n");
}

static void
print_problem(void *arg, const SbProblem *problem)
{
	(void) arg;
	fprintf(stderr, "%s: problem: %s\n", progname, problem->message);
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

	if ((rc = read_args_parse(argc, argv, "verify", OPT_JOBS | OPT_STRIPE_PATH | OPT_PROGRESS | OPT_IO,
							  verify_usage, &args)) >= 0)
		return rc;
	if ((a = read_args_open(&args, &err)) == NULL)
		return cli_report_error(&err);
	cli_progress_init(&progress, "verified", args.progress_mode);
	read_args_read_options(&args, &progress, &options);
	ok = sb_archive_verify(a, &options, print_problem, NULL, &problems, &err);
	cli_progress_done(&progress, NULL);
	if (!ok)
		rc = cli_report_error(&err);
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
	return rc;
}
