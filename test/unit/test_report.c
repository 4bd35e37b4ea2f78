/*
 * test_report.c
 *		The SVG report (sb_report_svg): well-formed XML (xmllint, from
 *		libxml2-utils, reads it back), one series per stripe plotted at the
 *		right place, text escaped, a report larger than its first buffer, and
 *		the report of a real backup.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "stripebackup/sb_report.h"
#include "tests.h"

#define SERIES "//*[local-name()='polyline'][@class='series']"

/* A stripe of a hand-made manifest: TIMELINE (N figures) is copied. */
static void
set_stripe(SbStripeInfo *s, uint32_t number, const char *destination, uint64_t stored,
		   double finished_after, const uint64_t *timeline, uint32_t n)
{
	s->number = number;
	s->destination = strdup(destination);
	s->stored_bytes = stored;
	s->finished_after = finished_after;
	s->timeline = calloc(n + 1, sizeof(uint64_t));
	if (n > 0)
		memcpy(s->timeline, timeline, n * sizeof(uint64_t));
	s->ntimeline = n;
}

static SbManifest *
manifest_with_stripes(const char *name, const char *label, uint32_t nstripes)
{
	SbManifest *m = sb_manifest_new();

	m->name = strdup(name);
	m->label = label ? strdup(label) : NULL;
	m->stripes = calloc(nstripes + 1, sizeof(SbStripeInfo));
	m->nstripes = nstripes;
	return m;
}

/* Run xmllint with ARGS then FILE; its output (less the last newline) into OUT. */
static int
xmllint(const char *const *args, int nargs, const char *file, char *out, size_t outlen)
{
	const char *argv[6] = {"xmllint"};
	int			i;

	for (i = 0; i < nargs && i < 3; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = file;
	argv[i + 2] = NULL;
	return th_run(argv, out, outlen);
}

/* The value of XPath expression EXPR in FILE, into OUT; false if xmllint fails. */
static bool
xpath(const char *file, const char *expr, char *out, size_t outlen)
{
	const char *args[] = {"--xpath", expr};

	return xmllint(args, 2, file, out, outlen) == 0;
}

/* Write the report of M to DIR/report.svg (path in FILE); checks it is well-formed XML. */
static char *
draw(const SbManifest *m, const char *dir, char *file)
{
	SbError		err;
	char	   *svg = sb_report_svg(m, &err);
	char		out[64];
	const char *args[] = {"--noout"};

	if (!ok(svg != NULL, "%s: a report is drawn", m->name))
	{
		th_diag_error("report", &err);
		return NULL;
	}
	th_path(file, "%s/report.svg", dir);
	th_write_file(file, svg, strlen(svg), 0644);
	is_int(xmllint(args, 1, file, out, sizeof(out)), 0,
		   "%s: xmllint reads it as well-formed XML (libxml2-utils must be installed)", m->name);
	return svg;
}

/*
 * Three stripes, each a different kind of timeline: three seconds, the last
 * one partial; a single second; none (a backup from before timelines).
 */
void
test_report_svg_series(void)
{
	static const uint64_t t1[] = {1000000, 3000000, 3500000};
	static const uint64_t t2[] = {2000000};
	SbManifest *m = manifest_with_stripes("bk-report", "nightly <full> & \"more\"", 3);
	char		dir[PATH_MAX];
	char		file[PATH_MAX];
	char		out[4096];
	char	   *svg;

	th_tempdir(dir, "report");
	set_stripe(&m->stripes[0], 1, "/dest/<one>", 3500000, 2.5, t1, 3);
	set_stripe(&m->stripes[1], 2, "/dest/caf\xc3\xa9", 2000000, 0.8, t2, 1);
	set_stripe(&m->stripes[2], 3, "/dest/three", 0, 0, NULL, 0);
	svg = draw(m, dir, file);
	if (svg != NULL)
	{
		ok(xpath(file, "count(" SERIES ")", out, sizeof(out)) && strcmp(out, "3") == 0,
		   "one series per stripe (got %s)", out);
		is_str(xpath(file, "string(//*[local-name()='title'])", out, sizeof(out)) ? out : NULL,
			   "bk-report", "the title is the backup's name");
		ok(xpath(file, "string(//*[local-name()='text'][starts-with(., 'Backup ')])", out, sizeof(out)),
		   "a heading");
		is_str(out, "Backup bk-report (nightly <full> & \"more\"): write throughput of each stripe",
			   "the heading has the name and the label, read back unescaped");
		like(svg, "nightly &lt;full&gt; &amp; &quot;more&quot;", "the label is escaped in the SVG");

		/*
		 * The plot is 770 x 310 from (70, 50); 3 s wide (the longest
		 * timeline), up to 2.75 MB/s (stripe 2's 2.5 MB/s plus a tenth).
		 * Stripe 1: 1 MB/s over [0, 1), 2 over [1, 2), 0.5 MB in [2, 2.5).
		 */
		ok(xpath(file, "string(" SERIES "[@data-stripe='1']/@points)", out, sizeof(out)), "stripe 1's points");
		is_str(out, "198.3,247.3 455.0,134.5 647.5,247.3",
			   "stripe 1: its rate at the middle of each second, the last one half a second");
		ok(xpath(file, "string(" SERIES "[@data-stripe='2']/@points)", out, sizeof(out)), "stripe 2's points");
		is_str(out, "172.7,78.2 275.3,78.2",
			   "stripe 2: one second drawn as a line at 2.5 MB/s until it finished (0.8 s)");
		ok(xpath(file, "string(" SERIES "[@data-stripe='3']/@points)", out, sizeof(out)), "stripe 3's points");
		is_str(out, "", "stripe 3, without a timeline: an empty series");

		ok(xpath(file, "string(//*[local-name()='g'][@class='legend'])", out, sizeof(out)), "a legend");
		like(out, "stripe 1: /dest/<one>, 3.5 MB at 1.4 MB/s, done after 2.50 s",
			 "legend: stripe 1's destination, size, average rate, end");
		like(out, "stripe 2: /dest/caf??, 2.0 MB at 2.5 MB/s", "legend: bytes that are not ASCII as '?'");
		like(out, "stripe 3: /dest/three, 0.0 MB at 0.0 MB/s, done after 0.00 s",
			 "legend: a stripe that wrote nothing");
		ok(xpath(file, "string(//*[local-name()='g'][@class='ticks'])", out, sizeof(out)), "axis labels");
		like(out, "3.0", "the time axis ends at 3.0 s");
		like(out, "seconds since the backup began", "the time axis is named");
		like(out, "MB/s written", "the rate axis is named");
	}
	free(svg);
	sb_manifest_free(m);
	th_rmtree(dir);
}

/* Twelve stripes of ten minutes: the text outgrows its first buffer, colours repeat after eight. */
void
test_report_svg_large(void)
{
	enum
	{
		NSTRIPES = 12, SECONDS = 600
	};
	SbManifest *m = manifest_with_stripes("bk-large", NULL, NSTRIPES);
	uint64_t   *timeline = malloc(SECONDS * sizeof(uint64_t));
	char		dir[PATH_MAX];
	char		file[PATH_MAX];
	char		out[64];
	char		stroke1[64];
	char	   *svg;
	uint32_t	i;

	th_tempdir(dir, "report-large");
	for (i = 0; i < NSTRIPES; i++)
	{
		char		dest[32];
		uint32_t	t;

		for (t = 0; t < SECONDS; t++)
			timeline[t] = (uint64_t) (t + 1) * (100 + i) * 1000000;
		snprintf(dest, sizeof(dest), "/dest/%u", i + 1);
		set_stripe(&m->stripes[i], i + 1, dest, timeline[SECONDS - 1], SECONDS, timeline, SECONDS);
	}
	svg = draw(m, dir, file);
	if (svg != NULL)
	{
		ok(strlen(svg) > 8192 * 4, "the report is %zu bytes, several times its first buffer", strlen(svg));
		ok(xpath(file, "count(" SERIES ")", out, sizeof(out)) && strcmp(out, "12") == 0,
		   "twelve series (got %s)", out);
		ok(xpath(file, "count(//*[local-name()='g'][@class='legend']/*[local-name()='text'])", out,
				 sizeof(out)) && strcmp(out, "12") == 0, "twelve legend lines (got %s)", out);
		ok(xpath(file, "string(//*[local-name()='text'][starts-with(., 'Backup ')])", out, sizeof(out)),
		   "a heading");
		is_str(out, "Backup bk-large: write throughput of each stripe", "no label, no parentheses");
		ok(xpath(file, "string(" SERIES "[@data-stripe='1']/@stroke)", stroke1, sizeof(stroke1)) &&
		   xpath(file, "string(" SERIES "[@data-stripe='9']/@stroke)", out, sizeof(out)),
		   "strokes of stripes 1 and 9");
		is_str(out, stroke1, "stripe 9 has stripe 1's colour (eight colours)");
		ok(xpath(file, "string(" SERIES "[@data-stripe='2']/@stroke)", out, sizeof(out)) &&
		   strcmp(out, stroke1) != 0, "stripe 2 has another");
	}
	free(svg);
	free(timeline);
	sb_manifest_free(m);
	th_rmtree(dir);
}

/* The report of a real two-stripe backup: a series and a legend line per destination. */
void
test_report_svg_backup(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	char		path[PATH_MAX];
	char		file[PATH_MAX];
	char		out[4096];
	char	   *svg;

	th_fixture(&f, "report-backup", 2);
	th_write_pattern(th_path(path, "%s/data", f.src), 3 * 1024 * 1024, 7, true, 0600);
	th_options(&o, f.dests, 2, "bk");
	if (!ok(th_backup_tree(&o, f.src, &m, &err), "a backup of 3 MB on two stripes"))
	{
		th_diag_error("backup", &err);
		th_fixture_done(&f);
		return;
	}
	svg = draw(m, f.root, file);
	if (svg != NULL)
	{
		ok(xpath(file, "count(" SERIES ")", out, sizeof(out)) && strcmp(out, "2") == 0,
		   "two series (got %s)", out);
		ok(xpath(file, "string(" SERIES "[@data-stripe='2']/@points)", out, sizeof(out)) &&
		   strchr(out, ',') != NULL, "stripe 2 has points: %s", out);
		ok(xpath(file, "string(//*[local-name()='g'][@class='legend'])", out, sizeof(out)), "a legend");
		like(out, f.dest[0], "the legend names the first destination");
		like(out, f.dest[1], "and the second");
	}
	free(svg);
	sb_manifest_free(m);
	th_fixture_done(&f);
}
