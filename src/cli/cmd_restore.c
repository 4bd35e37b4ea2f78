/*
 * cmd_restore.c
 *		"stripebackup restore": restore a backup into an empty directory,
 *		reading all stripes at once.  A restored PostgreSQL data directory
 *		starts with pg_ctl start and nothing else.
 */
#include <stdio.h>

#include "read_args.h"

static void
restore_usage(void)
{
	printf("%s restore restores a backup into an empty or new directory, reading\n"
		   "all stripes in parallel and checking every chunk.\n\n", progname);
	printf("Usage:\n  %s restore LOCATION --target DIR [OPTION]...\n\n", progname);
	printf("Options:\n");
	printf("  -t, --target=DIR         where to restore (must be empty or absent)\n");
	printf("  -j, --jobs=N             decompression workers (default: number of CPUs)\n");
	printf("      --stripe-path=K=DIR  stripe K's backup folder, if it moved\n");
	printf("      --keep-on-error      leave a failed restore's files for inspection\n");
	printf("  -P, --progress           show progress (default when stderr is a terminal)\n");
	printf("      --no-progress        do not show progress\n");
	printf("  -h, --help               show this help\n");
}

int
cmd_restore(int argc, char **argv)
{
	ReadArgs	args;
	SbArchive  *a;
	SbRestoreOptions options = {0};
	CliProgress progress;
	SbError		err;
	bool		ok;
	int			rc;

	if ((rc = read_args_parse(argc, argv, "restore",
							  OPT_TARGET | OPT_JOBS | OPT_STRIPE_PATH | OPT_PROGRESS | OPT_KEEP,
							  restore_usage, &args)) >= 0)
		return rc;
	if (args.target == NULL)
		return cli_usage_error("restore", "--target is required");
	if ((a = read_args_open(&args, &err)) == NULL)
		return cli_report_error(&err);
	cli_progress_init(&progress, "restored", args.progress_mode);
	options.target = args.target;
	options.keep_on_error = args.keep_on_error;
	options.read.workers = args.jobs;
	options.read.tick = cli_progress_tick;
	options.read.tick_arg = &progress;
	ok = sb_archive_restore(a, &options, &err);
	cli_progress_done(&progress, NULL);
	if (ok)
		printf("backup \"%s\" restored into \"%s\"\n", a->manifest->name, args.target);
	rc = ok ? EXIT_OK : cli_report_error(&err);
	sb_archive_close(a);
	return rc;
}
