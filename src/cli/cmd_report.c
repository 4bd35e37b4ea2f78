/*
 * cmd_report.c
 *		"stripebackup report": how each stripe of a backup did, as a table and
 *		as an SVG chart of its throughput over time.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "stripebackup/sb_report.h"

static void
report_usage(void)
{
	printf("%s report shows how the stripes of a backup did: the figures of each, and\n"
		   "with --svg a chart of their throughput over time.\n\n", progname);
	printf("Usage:\n  %s report LOCATION [--svg FILE]\n\n", progname);
	printf("Options:\n");
	printf("      --svg=FILE   write the chart to FILE (\"-\" for standard output)\n");
	printf("      --encryption-key-file=FILE  the key of an encrypted backup\n");
	printf("      --allow-unencrypted         under a key, read a backup in the clear too\n");
	printf("  -h, --help       show this help\n");
}

/*
 * A row per stripe with its two rates (sb_stripe_data_mb_per_s: the same
 * figures as stripe_backup_stripes), then how close the stripes ended.
 */
static void
print_table(const SbManifest *m)
{
	double		first = 0,
				last = 0;
	uint32_t	i;

	printf("backup \"%s\": %u stripes\n", m->name, m->nstripes);
	printf("  %-3s %-10s %-10s %-11s %-13s %-9s %-12s %s\n", "#", "data MB", "stored MB", "data MB/s",
		   "stored MB/s", "writing s", "done after s", "destination");
	for (i = 0; i < m->nstripes; i++)
	{
		const SbStripeInfo *s = &m->stripes[i];

		printf("  %-3u %-10.1f %-10.1f %-11.1f %-13.1f %-9.2f %-12.2f %s\n", s->number,
			   (double) s->raw_bytes / 1e6, (double) s->stored_bytes / 1e6,
			   sb_stripe_data_mb_per_s(s), sb_stripe_stored_mb_per_s(s), s->seconds,
			   s->finished_after, s->destination);
		if (i == 0 || s->finished_after < first)
			first = s->finished_after;
		if (s->finished_after > last)
			last = s->finished_after;
	}
	printf("data MB/s: source data a stripe carried, before compression; stored MB/s: bytes\n"
		   "written to it; both per second of its writing (writing s: its writer's time with\n"
		   "writes in flight)\n");
	if (last > 0)
		printf("the stripes finished within %.2f s of each other (%.1f%% of the backup)\n",
			   last - first, 100 * (last - first) / last);
}

static bool
write_svg(const char *path, const char *svg, SbError *err)
{
	FILE	   *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	bool		ok;

	if (f == NULL)
		return sb_error_set_errno(err, errno, "could not create \"%s\"", path);
	ok = fputs(svg, f) >= 0;
	if (f != stdout)
		ok = fclose(f) == 0 && ok;
	return ok ? true : sb_error_set_errno(err, errno, "could not write \"%s\"", path);
}

int
cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"svg", required_argument, NULL, 's'},
		{"encryption-key-file", required_argument, NULL, 'k'},
		{"allow-unencrypted", no_argument, NULL, 'u'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	const char *svg_path = NULL;
	const char *key_file = NULL;
	SbArchiveOpenOptions open = {.keep = SB_KEEP_COUNTS, .alone = true};
	SbKey		key;
	SbArchive  *a;
	SbError		err;
	char	   *svg;
	int			c;
	int			rc = EXIT_OK;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
	{
		if (c == 'h')
		{
			report_usage();
			return EXIT_OK;
		}
		if (c == 's')
			svg_path = optarg;
		else if (c == 'k')
			key_file = optarg;
		else if (c == 'u')
			open.expect.encryption = SB_EXPECT_EITHER;
		else
			return cli_usage_error("report", "bad option");
	}
	if (optind != argc - 1)
		return cli_usage_error("report", "give exactly one backup LOCATION");
	memset(&key, 0, sizeof(key));
	if (key_file != NULL && !sb_key_load(key_file, &key, &err))
		return cli_report_error(&err);
	open.key = key_file != NULL ? &key : NULL;
	a = sb_archive_open_with(argv[optind], &open, &err);
	if (a == NULL)
	{
		sb_key_clear(&key);
		return cli_report_open_error(argv[optind], &err);
	}
	cli_print_notes(a);
	if (svg_path == NULL || strcmp(svg_path, "-") != 0)
		print_table(a->manifest);
	if (svg_path != NULL)
	{
		svg = sb_report_svg(a->manifest, &err);
		if (svg == NULL || !write_svg(svg_path, svg, &err))
			rc = cli_report_error(&err);
		free(svg);
	}
	sb_archive_close(a);
	sb_key_clear(&key);
	return rc;
}
