/*
 * cmd_rebuild.c
 *		"stripebackup rebuild LOCATION --stripe K --dest DIR": write a lost
 *		stripe of a backup with redundancy again, from the others, into
 *		DIR/NAME/ (sb_archive_rebuild_stripe), which then opens the backup
 *		(or is given as --stripe-path K=DIR/NAME to the other commands).
 */
#include <stdio.h>
#include <string.h>

#include "json_out.h"
#include "read_args.h"

static void
rebuild_usage(void)
{
	printf("%s rebuild writes a lost stripe of a backup with redundancy again, from the\n"
		   "other stripes, into a new destination: DIR/NAME/ then holds that stripe and\n"
		   "the backup's manifest, and the backup opens from there.\n\n", progname);
	printf("Usage:\n  %s rebuild LOCATION --stripe K --dest DIR [OPTION]...\n\n", progname);
	printf("Options:\n");
	printf("      --stripe=K           the stripe to write again (1-based)\n");
	printf("      --dest=DIR           the new destination: a folder or s3://bucket/prefix\n");
	printf("      --force              write it even when it is not lost\n");
	printf("      --stripe-path=K=DIR  stripe K's backup folder, if it moved\n");
	printf("      --encryption-key-file=FILE  the key of an encrypted backup\n");
	printf("      --output=FORMAT      text (default) or json (docs/JSON.md)\n");
	printf("  -h, --help               show this help\n");
	printf("\nExit status 0 when the stripe was written and read back, 1 when LOCATION is\n"
		   "not there or the writing failed, 2 when refused (no redundancy, a stripe not\n"
		   "lost, DIR holds it already), 3 when too many stripes are lost to rebuild it.\n");
}

static bool
print_json(const SbArchive *a, uint32_t stripe, const SbRebuildResult *r)
{
	cJSON	   *doc = json_document("rebuild");
	cJSON	   *backup;
	char		id[33];
	bool		ok;

	for (int i = 0; i < 16; i++)
		snprintf(id + 2 * i, 3, "%02x", a->manifest->uuid[i]);
	ok = doc != NULL && (backup = cJSON_AddObjectToObject(doc, "backup")) != NULL &&
		json_add_string(backup, "name", a->manifest->name) && json_add_string(backup, "id", id) &&
		json_add_count(doc, "stripe", stripe, true) &&
		json_add_string(doc, "location", r->folder) && json_add_string(doc, "path", r->path) &&
		json_add_count(doc, "data_records", r->data_records, true) &&
		json_add_count(doc, "parity_records", r->parity_records, true) &&
		json_add_count(doc, "file_bytes", r->file_bytes, true) &&
		cJSON_AddNumberToObject(doc, "seconds", r->seconds) != NULL;
	return json_emit(doc, ok);
}

int
cmd_rebuild(int argc, char **argv)
{
	ReadArgs	args;
	SbArchive  *a;
	SbRebuildResult result;
	SbError		err;
	int			rc;

	if ((rc = read_args_parse(argc, argv, "rebuild", OPT_STRIPE_PATH | OPT_OUTPUT | OPT_REBUILD,
							  rebuild_usage, &args)) >= 0)
		return rc;
	if (args.rebuild_stripe == 0 || args.rebuild_dest == NULL)
	{
		read_args_free(&args);
		return cli_usage_error("rebuild", "--stripe K and --dest DIR are required");
	}
	if (args.output_json && !json_take_stdout())
	{
		read_args_free(&args);
		fprintf(stderr, "%s: error: could not set up the JSON output\n", progname);
		return EXIT_FAILED;
	}
	/* the stripes' records alone: no file table, no chain */
	args.keep = SB_KEEP_COUNTS;
	args.one_backup = true;
	if ((a = read_args_open(&args, &err)) == NULL)
	{
		rc = cli_report_open_error(args.location, &err);
		read_args_free(&args);
		return rc;
	}
	if (!sb_archive_rebuild_stripe(a, args.rebuild_stripe, args.rebuild_dest, args.force, &result, &err))
		rc = cli_report_error(&err);
	else
	{
		rc = EXIT_OK;
		fprintf(args.output_json ? stderr : stdout,
				"stripe %u of backup \"%s\" rebuilt into \"%s\": %llu chunk records and %llu parity records "
				"recovered from the other stripes, %llu bytes, read back and checked, in %.1f s; "
				"the backup opens from \"%s\" (or give --stripe-path %u=%s)\n",
				args.rebuild_stripe, a->manifest->name, result.path,
				(unsigned long long) result.data_records, (unsigned long long) result.parity_records,
				(unsigned long long) result.file_bytes, result.seconds, result.folder,
				args.rebuild_stripe, result.folder);
		if (args.output_json && !print_json(a, args.rebuild_stripe, &result))
			rc = EXIT_FAILED;
	}
	sb_archive_close(a);
	read_args_free(&args);
	return rc;
}
