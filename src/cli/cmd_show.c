/*
 * cmd_show.c
 *		"stripebackup show": what a backup is and where its stripes are.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "stripebackup/sb_pgmeta.h"
#include "json_out.h"
#include "read_args.h"

static void
show_usage(void)
{
	printf("%s show describes a backup from its manifest.\n\n", progname);
	printf("Usage:\n  %s show LOCATION [--output=json | --json]\n\n", progname);
	printf("Options:\n");
	printf("      --output=FORMAT  text (default) or json: a summary (docs/JSON.md)\n");
	printf("      --json    print the whole manifest as JSON (docs/FORMAT.md)\n");
	printf("      --encryption-key-file=FILE  the key of an encrypted backup\n");
	printf("      --allow-unencrypted         under a key, read a backup in the clear too\n");
	printf("  -h, --help    show this help\n");
	printf("\nExit status 0, 1 when LOCATION is not there or holds no backup (a destination:\n"
		   "\"%s list DEST\"), 3 when its manifest is damaged.\n", progname);
}

/* For an online backup of a cluster: which cluster, which WAL, which tablespaces. */
static void
print_cluster(const SbManifest *m)
{
	SbPgMeta info;
	SbError		err;
	int			i;

	if (!sb_pgmeta_read(m, &info, &err) || !info.is_postgresql)
	{
		if (m->metadata_json != NULL)
			printf("source:       %s\n", m->metadata_json);
		sb_pgmeta_free(&info);
		return;
	}
	printf("cluster:      PostgreSQL %s, system identifier %s\n",
		   info.server_version ? info.server_version : "?",
		   info.system_identifier ? info.system_identifier : "?");
	printf("data dir:     %s\n", info.data_directory ? info.data_directory : "?");
	if (info.start_lsn == NULL)
		printf("WAL:          none: a cold backup of the stopped cluster (timeline %u)\n", info.timeline);
	else
		printf("WAL:          %s to %s on timeline %u%s\n", info.start_lsn,
			   info.stop_lsn ? info.stop_lsn : "?", info.timeline,
			   info.from_standby ? ", taken on a standby" : "");
	for (i = 0; i < info.ntablespaces; i++)
		printf("tablespace:   %s at %s%s\n", info.tablespaces[i].oid, info.tablespaces[i].location,
			   info.tablespaces[i].in_place ? " (in place)" : "");
	sb_pgmeta_free(&info);
}

/* Which copy was read, and whether the stripes vouch for it. */
static void
print_authentication(const SbArchive *a)
{
	printf("manifest:     %s (%s)\n", a->manifest_path,
		   a->authenticated ? "authenticated: its stripes record its SHA-256" :
		   "NOT authenticated: no stripe could be read to check it");
}

/* How many destinations may be lost, and what the parity costs. */
static void
print_redundancy(const SbManifest *m)
{
	char		parity[32];

	if (m->redundancy.parity == 0)
	{
		printf("redundancy:   none (every destination is needed)\n");
		return;
	}
	printf("redundancy:   any %u of the %u destinations may be lost; parity %s, %.1f %% of stored\n",
		   m->redundancy.parity, m->nstripes,
		   cli_format_bytes(m->parity_bytes, parity, sizeof(parity)),
		   m->stored_bytes ? 100.0 * (double) m->parity_bytes / (double) m->stored_bytes : 0.0);
}

static void
print_header(const SbManifest *m)
{
	char		uuid[33];

	printf("backup:       %s\n", m->name);
	if (m->label != NULL)
		printf("label:        %s\n", m->label);
	printf("backup id:    %s\n", cli_format_id(m->uuid, uuid));
	printf("format:       %u.%u%s%s\n", m->version_major, m->version_minor,
		   m->tool ? ", written by " : "", m->tool ? m->tool : "");
	printf("taken:        %s to %s\n", m->started_at ? m->started_at : "?",
		   m->finished_at ? m->finished_at : "?");
	if (m->parent != NULL)
	{
		printf("type:         %s, completes backup \"%s\" (%s)\n",
			   m->type == SB_BACKUP_DIFF ? "differential" : "incremental", m->parent->name,
			   cli_format_id(m->parent->uuid, uuid));
	}
	else
		printf("type:         full\n");
	printf("compression:  %s", sb_codec_name(m->codec));
	if (m->codec == SB_CODEC_ZSTD)
		printf(" level %d", m->level);
	printf(", chunks of %u bytes, %s balance\n", m->chunk_size, sb_balance_name(m->balance));
	if (m->encrypted)
		printf("encryption:   AES-256-GCM, chunks and manifest (opened with the key file given)\n");
	print_redundancy(m);
	print_cluster(m);
}

static void
print_contents(const SbPlan *plan)
{
	char		a[32],
				b[32],
				c[32];

	printf("contents:     %llu files (%s, %s of data), %llu directories, %llu links\n",
		   (unsigned long long) plan->files, cli_format_bytes(plan->logical_bytes, a, sizeof(a)),
		   cli_format_bytes(plan->raw_bytes, b, sizeof(b)),
		   (unsigned long long) plan->directories, (unsigned long long) plan->symlinks);
	printf("stored:       %s in %llu chunks (%.2fx)\n",
		   cli_format_bytes(plan->stored_bytes, c, sizeof(c)), (unsigned long long) plan->chunks,
		   plan->stored_bytes ? (double) plan->raw_bytes / (double) plan->stored_bytes : 1.0);
}

static void
print_stripes(const SbManifest *m, const SbPlan *plan)
{
	uint32_t	i;

	printf("stripes:\n");
	printf("  %-3s %-8s %-10s %-12s %-12s %-9s %s\n",
		   "#", "weight", "chunks", "stored", "data", "write s", "stripe file");
	for (i = 0; i < plan->nstripes; i++)
	{
		const SbPlanStripe *s = &plan->stripes[i];
		char		stored[32],
					raw[32];

		printf("  %-3u %-8g %-10llu %-12s %-12s %-9.1f %s%s\n", s->number,
			   m->stripes[i].weight, (unsigned long long) s->chunks,
			   cli_format_bytes(s->stored_bytes, stored, sizeof(stored)),
			   cli_format_bytes(s->raw_bytes, raw, sizeof(raw)), s->write_seconds,
			   s->path, s->present ? "" : "  (missing or wrong size)");
	}
}

/* A block of the manifest's text to standard output. */
static bool
print_text(void *arg, const char *text, size_t len, SbError *err)
{
	(void) arg;
	if (fwrite(text, 1, len, stdout) != len)
		return sb_error_set_errno(err, errno, "could not write to standard output");
	return true;
}

int
cmd_show(int argc, char **argv)
{
	ReadArgs	args;
	SbArchive  *a;
	SbPlan		plan;
	SbError		err;
	int			rc;

	if ((rc = read_args_parse(argc, argv, "show", OPT_JSON | OPT_OUTPUT | OPT_STRIPE_PATH, show_usage,
								&args)) >= 0)
		return rc;
	if (args.json && args.output_json)
		return cli_usage_error("show", "--json prints the whole manifest, --output=json a summary: one of them");
	args.one_backup = true;		/* shown as it is, whether its parents are at hand or not */
	/* its plan needs no file table; the whole JSON is printed from a spool a block at a time */
	args.keep = args.json ? SB_KEEP_LOOKUP : SB_KEEP_COUNTS;
	if ((a = read_args_open(&args, &err)) == NULL)
		return cli_report_open_error(args.location, &err);
	if (args.json)
		rc = sb_manifest_emit(a->manifest, print_text, NULL, &err) ? EXIT_OK : cli_report_error(&err);
	else if (!sb_archive_plan(a, &plan, &err))
		rc = cli_report_error(&err);
	else if (args.output_json)
		rc = json_print_show(a, &plan) ? EXIT_OK : EXIT_FAILED;
	else
	{
		print_header(a->manifest);
		print_authentication(a);
		print_contents(&plan);
		print_stripes(a->manifest, &plan);
		rc = EXIT_OK;
	}
	sb_archive_close(a);
	return rc;
}
