/*
 * cmd_restore.c
 *		"stripebackup restore": restore a backup into an empty directory,
 *		reading all stripes at once.  A restored PostgreSQL data directory
 *		starts with pg_ctl start and nothing else; its tablespaces go back
 *		where they were, or where --tablespace-mapping says.
 */
#include <stdio.h>
#include <stdlib.h>

#include "stripebackup/sb_pgmeta.h"
#include "read_args.h"

static void
restore_usage(void)
{
	printf("%s restore restores a backup into an empty or new directory, reading\n"
		   "all stripes in parallel and checking every chunk.\n\n", progname);
	printf("Usage:\n  %s restore LOCATION --target DIR [OPTION]...\n\n", progname);
	printf("Options:\n");
	printf("  -t, --target=DIR         where to restore (must be empty or absent)\n");
	printf("      --tablespace-mapping=OLD=NEW\n"
		   "                           restore the tablespace that was at OLD into NEW\n"
		   "                           (default: where it was; it must be empty or absent)\n");
	printf("  -j, --jobs=N             decompression workers (default: number of CPUs)\n");
	printf("      --stripe-path=K=DIR  stripe K's backup folder, if it moved\n");
	printf("      --io-method=METHOD   auto (io_uring when allowed), io_uring or sync\n");
	printf("      --queue-depth=N      reads in flight per stripe (default 4)\n");
	printf("      --max-rate=R[,R...]  read at most R MB/s, from every stripe or one each\n");
	printf("      --keep-on-error      leave a failed restore's files for inspection\n");
	printf("  -P, --progress           show progress (default when stderr is a terminal)\n");
	printf("      --no-progress        do not show progress\n");
	printf("  -h, --help               show this help\n");
}

static bool
restore(SbArchive *a, const ReadArgs *args, SbError *err)
{
	SbPgMeta info;
	SbRestoreOptions options = {0};
	CliProgress progress;
	SbRelocation *relocs = NULL;
	bool		ok;

	if (!sb_pgmeta_read(a->manifest, &info, err))
		return false;
	if (args->nts_mappings > 0 && info.ntablespaces == 0)
		ok = sb_error_set(err, SB_EINVAL, "--tablespace-mapping given, but the backup has no tablespaces");
	else
		ok = (relocs = calloc((size_t) info.ntablespaces + 1, sizeof(SbRelocation))) != NULL &&
			sb_pgmeta_relocations(&info, args->ts_mappings, args->nts_mappings, relocs,
									 &options.nrelocations, err);
	if (ok)
	{
		cli_progress_init(&progress, "restored", args->progress_mode);
		options.target = args->target;
		options.keep_on_error = args->keep_on_error;
		options.relocations = relocs;
		options.read.workers = args->jobs;
		options.read.io_method = args->io_method;
		options.read.queue_depth = args->queue_depth;
		options.read.max_rates = args->has_max_rates ? args->max_rates : NULL;
		options.read.tick = cli_progress_tick;
		options.read.tick_arg = &progress;
		ok = sb_archive_restore(a, &options, err);
		cli_progress_done(&progress, NULL);
	}
	free(relocs);
	sb_pgmeta_free(&info);
	return ok;
}

int
cmd_restore(int argc, char **argv)
{
	ReadArgs	args;
	SbArchive  *a;
	SbError		err;
	int			rc;

	if ((rc = read_args_parse(argc, argv, "restore",
							  OPT_TARGET | OPT_JOBS | OPT_STRIPE_PATH | OPT_PROGRESS | OPT_IO | OPT_KEEP |
							  OPT_TS_MAPPING, restore_usage, &args)) >= 0)
		return rc;
	if (args.target == NULL)
		return cli_usage_error("restore", "--target is required");
	if ((a = read_args_open(&args, &err)) == NULL)
		return cli_report_error(&err);
	if (restore(a, &args, &err))
	{
		printf("backup \"%s\" restored into \"%s\"\n", a->manifest->name, args.target);
		rc = EXIT_OK;
	}
	else
		rc = cli_report_error(&err);
	sb_archive_close(a);
	return rc;
}
