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

#include "stripebackup/sb_pgmeta.h"
#include "stripebackup/sb_policy.h"
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
	printf("      --max-memory=SIZE    refuse settings that need more memory (default 1GB)\n");
	printf("      --keep-on-error      leave a failed restore's files for inspection\n");
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
	if (!sb_policy_check_mappings(args->ts_mappings, args->nts_mappings, target, err))
		return NULL;
	relocs = calloc((size_t) info->ntablespaces + 1, sizeof(SbRelocation));
	if (relocs == NULL)
		sb_error_set(err, SB_ENOMEM, "out of memory");
	else if (!sb_pgmeta_relocations(info, args->ts_mappings, args->nts_mappings, relocs, n, err))
	{
		free(relocs);
		return NULL;
	}
	return relocs;
}

/*
 * Every place the restore writes is checked as the SQL restore checks it
 * (sb_policy.h) before anything is created, and so is the memory it needs.
 */
static bool
restore(SbArchive *a, const ReadArgs *args, const char *target, SbError *err)
{
	SbPgMeta	info;
	SbRestoreOptions options = {0};
	CliProgress progress;
	SbRelocation *relocs = NULL;
	bool		ok;

	if (!sb_pgmeta_read(a->manifest, &info, err))
		return false;
	cli_progress_init(&progress, "restored", args->progress_mode);
	options.target = target;
	options.keep_on_error = args->keep_on_error;
	read_args_read_options(args, &progress, &options.read);
	ok = (relocs = relocations(&info, args, target, &options.nrelocations, err)) != NULL &&
		sb_policy_check_restore_places(target, relocs, options.nrelocations, err) &&
		sb_policy_check_read_memory(a->manifest, &options.read, err);
	if (ok)
	{
		options.relocations = relocs;
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
	char		target[PATH_MAX];
	int			rc;

	if ((rc = read_args_parse(argc, argv, "restore",
							  OPT_TARGET | OPT_JOBS | OPT_STRIPE_PATH | OPT_PROGRESS | OPT_IO | OPT_KEEP |
							  OPT_TS_MAPPING, restore_usage, &args)) >= 0)
		return rc;
	if (args.target == NULL)
		return cli_usage_error("restore", "--target is required");
	/* The places checked and written are absolute, as the SQL restore's are. */
	if (!sb_policy_canonical_path(args.target, target, &err) ||
		(a = read_args_open(&args, &err)) == NULL)
		return cli_report_error(&err);
	if (restore(a, &args, target, &err))
	{
		printf("backup \"%s\" restored into \"%s\"\n", a->manifest->name, args.target);
		rc = EXIT_OK;
	}
	else
		rc = cli_report_error(&err);
	sb_archive_close(a);
	return rc;
}
