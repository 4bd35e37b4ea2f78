/*
 * report.c
 *		A picture of a backup: each stripe's write throughput, second by
 *		second, as an SVG chart, so a person sees at a glance whether the
 *		devices were balanced (the stripes end together) or one held the
 *		others up.
 *
 * Drawn from the per-second timeline every stripe keeps in the manifest.
 * Each stripe is one <polyline class="series">, listed in the legend with its
 * destination, its average rate and when it finished.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_report.h"
#include "fsutil.h"

#define WIDTH 860
#define HEIGHT 420
#define LEFT 70
#define RIGHT 20
#define TOP 50
#define BOTTOM 60
#define LEGEND_ROW 18

static const char *const colors[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"
};

/* A growing text buffer whose failures stick. */
typedef struct Svg
{
	char	   *text;
	size_t		len;
	size_t		cap;
	bool		ok;
} Svg;

static void
out(Svg *svg, const char *fmt,...)
	__attribute__((format(printf, 2, 3)));

static void
out(Svg *svg, const char *fmt,...)
{
	va_list		ap;
	int			n;

	for (;;)
	{
		size_t		room = svg->cap - svg->len;

		va_start(ap, fmt);
		n = vsnprintf(svg->text + svg->len, room, fmt, ap);
		va_end(ap);
		if (n < 0)
		{
			svg->ok = false;
			return;
		}
		if ((size_t) n < room)
			break;
		svg->cap = svg->cap * 2 + (size_t) n;
		svg->text = realloc(svg->text, svg->cap);
		if (svg->text == NULL)
		{
			svg->ok = false;
			svg->cap = svg->len = 0;
			return;
		}
	}
	svg->len += (size_t) n;
}

/* Text for XML: &, <, > and quotes escaped; bytes that are not plain ASCII as '?'. */
static void
out_text(Svg *svg, const char *s)
{
	for (; *s; s++)
	{
		unsigned char c = (unsigned char) *s;

		if (c == '&')
			out(svg, "&amp;");
		else if (c == '<')
			out(svg, "&lt;");
		else if (c == '>')
			out(svg, "&gt;");
		else if (c == '"')
			out(svg, "&quot;");
		else if (c < 0x20 || c > 0x7e)
			out(svg, "?");
		else
			out(svg, "%c", c);
	}
}

/* MB/s of stripe S in second T of its timeline (the last one may be partial). */
static double
rate_at(const SbStripeInfo *s, uint32_t t)
{
	uint64_t	before = t > 0 ? s->timeline[t - 1] : 0;
	double		seconds = 1.0;

	if (t == s->ntimeline - 1 && s->finished_after > t)
		seconds = s->finished_after - t;
	if (seconds < 0.001)
		seconds = 0.001;
	return (double) (s->timeline[t] - before) / 1e6 / seconds;
}

static void
scale_of(const SbManifest *m, double *max_seconds, double *max_rate)
{
	uint32_t	i,
				t;

	*max_seconds = 1;
	*max_rate = 1;
	for (i = 0; i < m->nstripes; i++)
	{
		const SbStripeInfo *s = &m->stripes[i];

		if (s->finished_after > *max_seconds)
			*max_seconds = s->finished_after;
		if (s->ntimeline > *max_seconds)
			*max_seconds = s->ntimeline;
		for (t = 0; t < s->ntimeline; t++)
			if (rate_at(s, t) > *max_rate)
				*max_rate = rate_at(s, t);
	}
	*max_rate *= 1.1;
}

static void
axes(Svg *svg, double max_seconds, double max_rate)
{
	int			plot_w = WIDTH - LEFT - RIGHT;
	int			plot_h = HEIGHT - TOP - BOTTOM;
	int			i;

	out(svg, "<g class=\"axes\" stroke=\"#444\" fill=\"none\">\n"
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n"
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n</g>\n",
		LEFT, TOP + plot_h, LEFT + plot_w, TOP + plot_h, LEFT, TOP, LEFT, TOP + plot_h);
	out(svg, "<g class=\"ticks\" font-size=\"11\" fill=\"#444\">\n");
	for (i = 0; i <= 5; i++)
	{
		out(svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.0f</text>\n",
			LEFT - 6, TOP + plot_h - plot_h * i / 5 + 4, max_rate * i / 5);
		out(svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%.1f</text>\n",
			LEFT + plot_w * i / 5, TOP + plot_h + 16, max_seconds * i / 5);
	}
	out(svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">seconds since the backup began</text>\n",
		LEFT + plot_w / 2, TOP + plot_h + 34);
	out(svg, "<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" text-anchor=\"middle\">"
		"MB/s written</text>\n</g>\n", TOP + plot_h / 2, TOP + plot_h / 2);
}

/* One stripe: a polyline through its rate at the middle of each second. */
static void
series(Svg *svg, const SbStripeInfo *s, double max_seconds, double max_rate)
{
	int			plot_w = WIDTH - LEFT - RIGHT;
	int			plot_h = HEIGHT - TOP - BOTTOM;
	uint32_t	t;

	out(svg, "<polyline class=\"series\" data-stripe=\"%u\" fill=\"none\" stroke-width=\"2\" "
		"stroke=\"%s\" points=\"", s->number, colors[(s->number - 1) % 8]);
	for (t = 0; t < s->ntimeline; t++)
	{
		double		end = t == s->ntimeline - 1 && s->finished_after > t ? s->finished_after : t + 1;
		double		x = (t + end) / 2;

		out(svg, "%s%.1f,%.1f", t ? " " : "", LEFT + plot_w * x / max_seconds,
			TOP + plot_h - plot_h * rate_at(s, t) / max_rate);
	}
	if (s->ntimeline == 1)		/* one point draws nothing: span the whole run */
		out(svg, " %.1f,%.1f", LEFT + plot_w * s->finished_after / max_seconds,
			TOP + plot_h - plot_h * rate_at(s, 0) / max_rate);
	out(svg, "\"/>\n");
}

static void
legend(Svg *svg, const SbManifest *m)
{
	uint32_t	i;

	out(svg, "<g class=\"legend\" font-size=\"12\">\n");
	for (i = 0; i < m->nstripes; i++)
	{
		const SbStripeInfo *s = &m->stripes[i];
		int			y = HEIGHT + 10 + LEGEND_ROW * (int) i;
		double		rate = s->finished_after > 0 ? (double) s->stored_bytes / 1e6 / s->finished_after : 0;

		out(svg, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
			LEFT, y - 10, colors[(s->number - 1) % 8]);
		out(svg, "<text x=\"%d\" y=\"%d\">stripe %u: ", LEFT + 18, y, s->number);
		out_text(svg, s->destination);
		out(svg, ", %.1f MB at %.1f MB/s, done after %.2f s</text>\n",
			(double) s->stored_bytes / 1e6, rate, s->finished_after);
	}
	out(svg, "</g>\n");
}

char *
sb_report_svg(const SbManifest *m, SbError *err)
{
	Svg			svg = {NULL, 0, 0, true};
	double		max_seconds,
				max_rate;
	uint32_t	i;

	svg.cap = 8192;
	svg.text = sb_alloc(svg.cap, err);
	if (svg.text == NULL)
		return NULL;
	scale_of(m, &max_seconds, &max_rate);
	out(&svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
		WIDTH, HEIGHT + 20 + LEGEND_ROW * (int) m->nstripes,
		WIDTH, HEIGHT + 20 + LEGEND_ROW * (int) m->nstripes);
	out(&svg, "<title>");
	out_text(&svg, m->name);
	out(&svg, "</title>\n<text x=\"%d\" y=\"24\" font-size=\"15\">Backup ", LEFT);
	out_text(&svg, m->name);
	if (m->label != NULL)
	{
		out(&svg, " (");
		out_text(&svg, m->label);
		out(&svg, ")");
	}
	out(&svg, ": write throughput of each stripe</text>\n");
	axes(&svg, max_seconds, max_rate);
	for (i = 0; i < m->nstripes; i++)
		series(&svg, &m->stripes[i], max_seconds, max_rate);
	legend(&svg, m);
	out(&svg, "</svg>\n");
	if (!svg.ok)
	{
		free(svg.text);
		sb_error_set(err, SB_ENOMEM, "out of memory drawing the report");
		return NULL;
	}
	return svg.text;
}
