/*
 * test_report.c
 *		The SVG report (sb_report_svg): well-formed XML (xmllint, from
 *		libxml2-utils, reads it back), one series per stripe plotted at the
 *		right place, axes labelled at round values, text escaped, a report
 *		larger than its first buffer, and the reports of real backups: a
 *		point per tenth of a second for a backup of two seconds.  The
 *		stripe's two rates (data and stored MB/s per second of writing),
 *		the moving window that smooths a jagged timeline, and the dash
 *		patterns that keep equal stripes apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "stripebackup/sb_report.h"
#include "tests.h"

#define SERIES "//*[local-name()='polyline'][@class='series']"

/* A stripe of a hand-made manifest: TIMELINE (N figures, INTERVAL seconds apart) is copied. */
static void
set_stripe(SbStripeInfo *s, uint32_t number, const char *destination, uint64_t stored,
		   double finished_after, double interval, const uint64_t *timeline, uint32_t n)
{
	s->number = number;
	s->destination = strdup(destination);
	s->stored_bytes = stored;
	s->finished_after = finished_after;
	s->timeline = calloc(n + 1, sizeof(uint64_t));
	if (n > 0)
		memcpy(s->timeline, timeline, n * sizeof(uint64_t));
	s->ntimeline = n;
	s->timeline_interval = interval;
}

/* What stripe S carried before compression (RAW) and its writer's busy SECONDS. */
static void
set_writing(SbStripeInfo *s, uint64_t raw, double seconds)
{
	s->raw_bytes = raw;
	s->seconds = seconds;
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

/* The labels of the axis whose ticks are in <g class="CLASS">, as "a, b, c" into OUT. */
static void
tick_labels(const char *file, const char *class, char *out, size_t outlen)
{
	char		expr[160];
	char		label[64];
	size_t		used = 0;
	int			k;

	out[0] = '\0';
	for (k = 1; k < 20 && used < outlen; k++)
	{
		snprintf(expr, sizeof(expr),
				 "string((//*[local-name()='g'][@class='%s']/*[local-name()='text'])[%d])", class, k);
		if (!xpath(file, expr, label, sizeof(label)) || label[0] == '\0')
			break;
		used += (size_t) snprintf(out + used, outlen - used, "%s%s", k > 1 ? ", " : "", label);
	}
}

/* Points in stripe NUMBER's series in FILE; -1 if it cannot be read. */
static int
series_points(const char *file, uint32_t number)
{
	char		expr[128];
	char		points[16384];
	int			n = 0;
	char	   *p;

	snprintf(expr, sizeof(expr), "string(" SERIES "[@data-stripe='%u']/@points)", number);
	if (!xpath(file, expr, points, sizeof(points)))
		return -1;
	for (p = points; (p = strchr(p, ',')) != NULL; p++)
		n++;
	return n;
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
 * Three stripes, each a different kind of timeline: three figures a second
 * apart, the last after half a second; a single figure; none (a backup
 * from before timelines).
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
	set_stripe(&m->stripes[0], 1, "/dest/<one>", 3500000, 2.5, 1.0, t1, 3);
	set_stripe(&m->stripes[1], 2, "/dest/caf\xc3\xa9", 2000000, 0.8, 1.0, t2, 1);
	set_stripe(&m->stripes[2], 3, "/dest/three", 0, 0, 0, NULL, 0);
	set_writing(&m->stripes[0], 7000000, 0.5);
	set_writing(&m->stripes[1], 4000000, 0.8);
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
		 * The plot is 760 x 310 from (80, 50), 2.5 s wide (stripe 1's last
		 * figure), up to 2.5 MB/s (stripe 2's rate): x = 80 + 304 t, y = 360
		 * - 124 r.  Stripe 1: 1 MB/s over [0, 1), 2 over [1, 2), 0.5 MB in
		 * [2, 2.5); its window is two intervals (2 s), cut at 0 and 2.5 s:
		 * at 0.5 s 2 MB in [0, 1.5] (1.33 MB/s), at 1.5 s 3 MB in [0.5,
		 * 2.5] (1.5), at 2.25 s 2 MB in [1.25, 2.5] (1.6).
		 */
		ok(xpath(file, "string(" SERIES "[@data-stripe='1']/@points)", out, sizeof(out)), "stripe 1's points");
		is_str(out, "232.0,194.7 536.0,174.0 764.0,161.6",
			   "stripe 1: its rate over the window around the middle of each interval");
		ok(xpath(file, "string(" SERIES "[@data-stripe='2']/@points)", out, sizeof(out)), "stripe 2's points");
		is_str(out, "80.0,50.0 323.2,50.0",
			   "stripe 2: one figure drawn as a line at 2.5 MB/s from the start until it finished (0.8 s)");
		ok(xpath(file, "string(" SERIES "[@data-stripe='3']/@points)", out, sizeof(out)), "stripe 3's points");
		is_str(out, "", "stripe 3, without a timeline: an empty series");

		ok(xpath(file, "string(//*[local-name()='g'][@class='legend'])", out, sizeof(out)), "a legend");
		like(out, "stripe 1: /dest/<one>, 7.0 MB data, 3.5 MB stored; 14.0 data MB/s, 7.0 stored MB/s; "
			 "done after 2.50 s", "legend: stripe 1's destination, sizes, both rates labelled, end");
		like(out, "stripe 2: /dest/caf??, 4.0 MB data, 2.0 MB stored; 5.0 data MB/s, 2.5 stored MB/s",
			 "legend: bytes that are not ASCII as '?'");
		like(out, "stripe 3: /dest/three, 0.0 MB data, 0.0 MB stored; 0.0 data MB/s, 0.0 stored MB/s; "
			 "done after 0.00 s", "legend: a stripe that wrote nothing");
		like(out, "data MB/s: source data the stripe carried, before compression; stored MB/s: bytes "
			 "written to it; both per second of its writing", "legend: what each rate counts");
		ok(xpath(file, "count(//*[local-name()='g'][@class='legend']/*[local-name()='line'])", out,
				 sizeof(out)) && strcmp(out, "3") == 0, "legend: a line sample per stripe (got %s)", out);
		ok(xpath(file, "string(//*[local-name()='g'][@class='legend']/*[local-name()='line'][2]/@stroke-dasharray)",
				 out, sizeof(out)) && strcmp(out, "9 5") == 0, "dashed as stripe 2's series is: %s", out);
		tick_labels(file, "y-ticks", out, sizeof(out));
		is_str(out, "0 MB/s, 0.5 MB/s, 1 MB/s, 1.5 MB/s, 2 MB/s, 2.5 MB/s", "the rate axis, to 2.5 MB/s");
		tick_labels(file, "x-ticks", out, sizeof(out));
		is_str(out, "0 s, 0.5 s, 1 s, 1.5 s, 2 s, 2.5 s", "the time axis, to 2.5 s");
		ok(xpath(file, "string(//*[local-name()='g'][@class='axis-titles'])", out, sizeof(out)), "axis titles");
		like(out, "time since the backup began (s), a point every 1 s",
			 "the time axis is named, with its unit and the interval");
		like(out, "stored MB/s: bytes written to the stripe, 2 s moving average",
			 "the rate axis is named, with its unit, what it counts and the window");
	}
	free(svg);
	sb_manifest_free(m);
	th_rmtree(dir);
}

/* The axes of a backup of SECONDS at MB_PER_S: WANT_Y and WANT_X as the labels read. */
static void
expect_ticks(double mb_per_s, double seconds, const char *want_y, const char *want_x)
{
	SbManifest *m = manifest_with_stripes("bk-ticks", NULL, 1);
	uint64_t	total = (uint64_t) (mb_per_s * 1e6 * seconds);
	char		dir[PATH_MAX];
	char		file[PATH_MAX];
	char		out[512];
	char	   *svg;

	th_tempdir(dir, "report-ticks");
	set_stripe(&m->stripes[0], 1, "/dest", total, seconds, seconds, &total, 1);
	svg = draw(m, dir, file);
	if (svg != NULL)
	{
		tick_labels(file, "y-ticks", out, sizeof(out));
		is_str(out, want_y, "%g MB/s: the rate axis at round values", mb_per_s);
		tick_labels(file, "x-ticks", out, sizeof(out));
		is_str(out, want_x, "%g s: the time axis at round values", seconds);
	}
	free(svg);
	sb_manifest_free(m);
	th_rmtree(dir);
}

/*
 * Round tick values, four to six of them, in the unit that suits the range:
 * the rate axis ends on one, the time axis where the backup ended.
 */
void
test_report_svg_ticks(void)
{
	expect_ticks(58.3, 2, "0 MB/s, 20 MB/s, 40 MB/s, 60 MB/s", "0 s, 0.5 s, 1 s, 1.5 s, 2 s");
	expect_ticks(100, 90, "0 MB/s, 20 MB/s, 40 MB/s, 60 MB/s, 80 MB/s, 100 MB/s",
				 "0 s, 20 s, 40 s, 60 s, 80 s");
	expect_ticks(249, 1.01, "0 MB/s, 50 MB/s, 100 MB/s, 150 MB/s, 200 MB/s, 250 MB/s",
				 "0 s, 0.2 s, 0.4 s, 0.6 s, 0.8 s, 1 s");
	expect_ticks(1234, 2400, "0 GB/s, 0.5 GB/s, 1 GB/s, 1.5 GB/s",
				 "0 min, 10 min, 20 min, 30 min, 40 min");
	expect_ticks(0.37, 36000, "0 kB/s, 100 kB/s, 200 kB/s, 300 kB/s, 400 kB/s",
				 "0 h, 2 h, 4 h, 6 h, 8 h, 10 h");
	expect_ticks(7.5, 0.03, "0 MB/s, 2 MB/s, 4 MB/s, 6 MB/s, 8 MB/s",
				 "0 s, 0.01 s, 0.02 s, 0.03 s");
	expect_ticks(3, 4 * 86400, "0 MB/s, 1 MB/s, 2 MB/s, 3 MB/s", "0 d, 1 d, 2 d, 3 d, 4 d");
}

/* A backup that wrote nothing, without timelines: axes to 1 s and 1 MB/s, no interval named. */
void
test_report_svg_empty(void)
{
	SbManifest *m = manifest_with_stripes("bk-empty", NULL, 1);
	char		dir[PATH_MAX];
	char		file[PATH_MAX];
	char		out[512];
	char	   *svg;

	th_tempdir(dir, "report-empty");
	set_stripe(&m->stripes[0], 1, "/dest", 0, 0, 0, NULL, 0);
	svg = draw(m, dir, file);
	if (svg != NULL)
	{
		tick_labels(file, "y-ticks", out, sizeof(out));
		is_str(out, "0 MB/s, 0.2 MB/s, 0.4 MB/s, 0.6 MB/s, 0.8 MB/s, 1 MB/s", "the rate axis to 1 MB/s");
		tick_labels(file, "x-ticks", out, sizeof(out));
		is_str(out, "0 s, 0.2 s, 0.4 s, 0.6 s, 0.8 s, 1 s", "the time axis to 1 s");
		ok(xpath(file, "string(//*[local-name()='g'][@class='axis-titles'])", out, sizeof(out)) &&
		   strstr(out, "a point every") == NULL, "no sampling interval is named: %s", out);
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
		NSTRIPES = 12, FIGURES = 300
	};
	SbManifest *m = manifest_with_stripes("bk-large", NULL, NSTRIPES);
	uint64_t   *timeline = malloc(FIGURES * sizeof(uint64_t));
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

		for (t = 0; t < FIGURES; t++)
			timeline[t] = (uint64_t) (t + 1) * (100 + i) * 2000000;
		snprintf(dest, sizeof(dest), "/dest/%u", i + 1);
		set_stripe(&m->stripes[i], i + 1, dest, timeline[FIGURES - 1], 2 * FIGURES, 2.0, timeline,
				   FIGURES);
	}
	svg = draw(m, dir, file);
	if (svg != NULL)
	{
		ok(strlen(svg) > 8192 * 4, "the report is %zu bytes, several times its first buffer", strlen(svg));
		ok(xpath(file, "count(" SERIES ")", out, sizeof(out)) && strcmp(out, "12") == 0,
		   "twelve series (got %s)", out);
		is_int(series_points(file, 12), FIGURES, "a point per figure");
		ok(xpath(file, "count(//*[local-name()='g'][@class='legend']/*[local-name()='text'][@class='legend-stripe'])",
				 out, sizeof(out)) && strcmp(out, "12") == 0, "twelve legend lines (got %s)", out);
		ok(xpath(file, "string(//*[local-name()='text'][starts-with(., 'Backup ')])", out, sizeof(out)),
		   "a heading");
		is_str(out, "Backup bk-large: write throughput of each stripe", "no label, no parentheses");
		ok(xpath(file, "string(" SERIES "[@data-stripe='1']/@stroke)", stroke1, sizeof(stroke1)) &&
		   xpath(file, "string(" SERIES "[@data-stripe='9']/@stroke)", out, sizeof(out)),
		   "strokes of stripes 1 and 9");
		is_str(out, stroke1, "stripe 9 has stripe 1's colour (eight colours)");
		ok(xpath(file, "string(" SERIES "[@data-stripe='2']/@stroke)", out, sizeof(out)) &&
		   strcmp(out, stroke1) != 0, "stripe 2 has another");
		ok(xpath(file, "string(" SERIES "[@data-stripe='1']/@stroke-dasharray)", stroke1, sizeof(stroke1)) &&
		   xpath(file, "string(" SERIES "[@data-stripe='2']/@stroke-dasharray)", out, sizeof(out)) &&
		   strcmp(stroke1, "none") == 0 && strcmp(out, "none") != 0,
		   "stripe 1 is solid, stripe 2 dashed over it (%s)", out);
	}
	free(svg);
	free(timeline);
	sb_manifest_free(m);
	th_rmtree(dir);
}

/* What a backup's ticks saw of its stripes' writing, the last tick's figures. */
typedef struct LiveSeen
{
	int			ticks;
	double		busy[2];
	uint64_t	raw[2];
} LiveSeen;

static bool
note_live(void *arg, const SbProgress *p)
{
	LiveSeen   *seen = arg;
	uint32_t	i;

	seen->ticks++;
	for (i = 0; i < p->nstripes && i < 2; i++)
	{
		seen->busy[i] = p->stripes[i].busy_seconds;
		seen->raw[i] = p->stripes[i].raw_bytes;
	}
	return true;
}

/*
 * A backup in fixture F (made here) of a file of BYTES over two
 * destinations, at most RATES MB/s each (or NULL), its ticks noted into
 * SEEN (or not, NULL); NULL if it failed.
 */
static SbManifest *
backup_seen(ThFixture *f, const char *tag, size_t bytes, const double *rates, LiveSeen *seen)
{
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	char		path[PATH_MAX];

	th_fixture(f, tag, 2);
	th_write_pattern(th_path(path, "%s/data", f->src), bytes, 7, true, 0600);
	th_options(&o, f->dests, 2, "bk");
	o.max_rates = rates;
	if (seen != NULL)
	{
		o.hooks.tick = note_live;
		o.hooks.tick_arg = seen;
	}
	if (!ok(th_backup_tree(&o, f->src, &m, &err), "%s: a backup of %zu bytes on two stripes", tag, bytes))
		th_diag_error("backup", &err);
	return m;
}

static SbManifest *
backup_of(ThFixture *f, const char *tag, size_t bytes, const double *rates)
{
	return backup_seen(f, tag, bytes, rates, NULL);
}

/* The report of a real two-stripe backup: a series and a legend line per destination. */
void
test_report_svg_backup(void)
{
	ThFixture	f;
	SbManifest *m = backup_of(&f, "report-backup", 3 * 1024 * 1024, NULL);
	char		file[PATH_MAX];
	char		out[4096];
	char	   *svg = m ? draw(m, f.root, file) : NULL;

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

/*
 * A backup held to about two seconds (2 MB/s per destination, 4 MB each):
 * every stripe's timeline has a figure per tenth of a second, and its
 * series a point per figure.
 */
void
test_report_svg_two_seconds(void)
{
	static const double rates[] = {2, 2};
	ThFixture	f;
	SbManifest *m = backup_of(&f, "report-two-seconds", 8 * 1000 * 1000, rates);
	char		file[PATH_MAX];
	char		out[512];
	char	   *svg = m ? draw(m, f.root, file) : NULL;
	uint32_t	i;

	for (i = 0; m != NULL && i < 2; i++)
		ok(m->stripes[i].timeline_interval == 0.1 && m->stripes[i].ntimeline >= 10,
		   "stripe %u: %u figures, %g s apart, over %.2f s", i + 1, m->stripes[i].ntimeline,
		   m->stripes[i].timeline_interval, m->stripes[i].finished_after);
	if (svg != NULL)
	{
		for (i = 0; i < 2; i++)
		{
			int			points = series_points(file, i + 1);

			ok(points >= 10 && points == (int) m->stripes[i].ntimeline,
			   "stripe %u is drawn with a point per figure: %d", i + 1, points);
		}
		tick_labels(file, "x-ticks", out, sizeof(out));
		like(out, "0 s, 0.5 s, 1 s, 1.5 s", "the time axis in half seconds: %s", out);
	}
	free(svg);
	sb_manifest_free(m);
	th_fixture_done(&f);
}

/*
 * The one definition of a stripe's rates: source data and stored bytes per
 * second of its writing (not of the backup), 0 when it wrote nothing.
 */
void
test_report_stripe_rates(void)
{
	SbStripeInfo s;

	memset(&s, 0, sizeof(s));
	s.raw_bytes = 230400000;
	s.stored_bytes = 21600000;
	s.seconds = 1.0;
	s.finished_after = 10.0;
	ok(sb_stripe_data_mb_per_s(&s) == 230.4, "data MB/s: 230.4 MB of data in 1 s of writing");
	ok(sb_stripe_stored_mb_per_s(&s) == 21.6, "stored MB/s: 21.6 MB stored in that second");
	s.seconds = 0;
	ok(sb_stripe_data_mb_per_s(&s) == 0 && sb_stripe_stored_mb_per_s(&s) == 0,
	   "no time writing: both 0, not a division by zero");
}

/*
 * A jagged timeline, as 1 MB chunks sampled every 0.1 s make it at 5 MB/s
 * (1 MB in every other interval): the chart's window of 1 s draws it level
 * at 5 MB/s within half a window of each end, where the raw intervals swing
 * between 0 and 10.
 */
void
test_report_smoothing(void)
{
	enum
	{
		FIGURES = 40
	};
	uint64_t	timeline[FIGURES];
	SbStripeInfo s;
	double		lo = 1e9,
				hi = 0;
	uint32_t	i;

	for (i = 0; i < FIGURES; i++)
		timeline[i] = (uint64_t) ((i + 1) / 2) * 1000000;
	memset(&s, 0, sizeof(s));
	s.timeline = timeline;
	s.ntimeline = FIGURES;
	s.timeline_interval = 0.1;
	s.finished_after = 4.0;
	is_int((int) (sb_report_window(&s) * 10), 10, "a window of 1 s over 0.1 s figures");
	for (i = 5; i + 5 < FIGURES; i++)
	{
		double		r = sb_report_rate_at(&s, 0.1 * i + 0.05);

		lo = r < lo ? r : lo;
		hi = r > hi ? r : hi;
	}
	ok(lo > 4.4 && hi < 5.6, "level at 5 MB/s away from the ends: %.2f to %.2f MB/s", lo, hi);
	s.timeline_interval = 1.6;
	is_int((int) (sb_report_window(&s) * 10), 32, "two intervals when figures are further apart than 0.5 s");
	s.ntimeline = 0;
	ok(sb_report_rate_at(&s, 1) == 0, "no timeline: 0");
}

/*
 * Live progress counts a stripe's busy period under way: a writer held at
 * 2 MB/s keeps writes in flight most of the time, and a tick near the end
 * sees about as many seconds of writing as the backup has run, not the few
 * milliseconds of the periods that had ended (which made the live data
 * MB/s thousands).
 */
void
test_report_live_busy_seconds(void)
{
	static const double rates[] = {2, 2};
	ThFixture	f;
	LiveSeen	seen;
	SbManifest *m;
	uint32_t	i;

	memset(&seen, 0, sizeof(seen));
	m = backup_seen(&f, "report-live-busy", 6 * 1000 * 1000, rates, &seen);
	ok(seen.ticks >= 5, "ticks while it ran: %d", seen.ticks);
	for (i = 0; m != NULL && i < 2; i++)
	{
		double		rate = seen.busy[i] > 0 ? (double) seen.raw[i] / 1e6 / seen.busy[i] : 0;

		ok(seen.busy[i] > 0.3 * m->stripes[i].seconds && seen.busy[i] <= m->stripes[i].seconds + 0.01,
		   "stripe %u: the last tick saw %.2f s of writing (%.2f s in all)", i + 1, seen.busy[i],
		   m->stripes[i].seconds);
		ok(rate > 0 && rate < 10, "stripe %u: so its live data MB/s is near the limit of 2: %.1f", i + 1, rate);
	}
	sb_manifest_free(m);
	th_fixture_done(&f);
}
