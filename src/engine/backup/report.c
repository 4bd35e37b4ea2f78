/*
 * report.c
 *		A picture of a backup: each stripe's write throughput over time, as
 *		an SVG chart, so a person sees at a glance whether the devices were
 *		balanced (the stripes end together) or one held the others up.
 *
 * Drawn from the timeline every stripe keeps in the manifest: a point per
 * sampling interval (0.1 s for a short backup, longer for a long one), at
 * the stripe's stored MB/s around that interval, averaged over a moving
 * window (SB_REPORT_WINDOW seconds, or two intervals when the figures are
 * further apart): a 1 MB chunk lands in one 0.1 s interval and not the
 * next, so raw intervals draw a saw, not a rate.  Each stripe is one
 * <polyline class="series"> with its own dash pattern, so stripes that run
 * at the same rate stay visible on top of each other, listed in the legend
 * (with the same dash) with its destination and its two rates, data MB/s
 * and stored MB/s, defined once here (sb_stripe_data_mb_per_s) for the
 * report, the views and the JSON.  The axes are labelled at round values
 * (1, 2 or 5 times a power of ten; round seconds, minutes or hours), four
 * to six of them, so a reader can tell "40 MB/s" at a glance.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_report.h"
#include "util/fsutil.h"

#define WIDTH 860
#define HEIGHT 420
#define LEFT 80
#define RIGHT 20
#define TOP 50
#define BOTTOM 60
#define LEGEND_ROW 18
#define LEGEND_STRIPE 34		/* two lines: the destination, then the figures */
#define PLOT_W (WIDTH - LEFT - RIGHT)
#define PLOT_H (HEIGHT - TOP - BOTTOM)

static const char *const colors[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"
};

/*
 * A dash pattern per stripe (with the colour, by its number): the first
 * solid and widest, the next ones drawn over it in dashes, so two stripes
 * with the same rates show both.
 */
static const char *const dashes[] = {
	"none", "9 5", "2 4", "12 4 2 4", "5 5", "1 3", "16 6", "6 3 1 3"
};

#define SERIES_STYLES 8

/* Stripe S's colour, dash and line width. */
static const char *
series_color(const SbStripeInfo *s)
{
	return colors[(s->number - 1) % SERIES_STYLES];
}

static const char *
series_dash(const SbStripeInfo *s)
{
	return dashes[(s->number - 1) % SERIES_STYLES];
}

static double
series_width(const SbStripeInfo *s)
{
	return s->number == 1 ? 3.5 : 2;
}

double
sb_stripe_data_mb_per_s(const SbStripeInfo *s)
{
	return s->seconds > 0 ? (double) s->raw_bytes / 1e6 / s->seconds : 0;
}

double
sb_stripe_stored_mb_per_s(const SbStripeInfo *s)
{
	return s->seconds > 0 ? (double) s->stored_bytes / 1e6 / s->seconds : 0;
}

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

#define MAX_TICK_STEPS 5		/* 4 to 6 labels, 0 included */
#define MIN_SPAN 0.001			/* seconds: no rate is divided by less */

/*
 * An axis from 0 to TOP, with TICKS + 1 labels STEP apart from 0, in
 * UNIT_NAME, each UNIT of the axis's own.
 */
typedef struct Axis
{
	double		step;
	int			ticks;
	double		top;
	double		unit;
	const char *unit_name;
} Axis;

/* How many steps of STEP an axis to MAX takes, by the axis's rule. */
typedef int (*StepCount) (double max, double step);

/* Round steps of time, in seconds, from ten seconds to a day. */
static const double time_steps[] = {
	10, 15, 20, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200, 86400
};

/* Steps to reach MAX, the last tick at or above it (a hair over a whole number is not one more). */
static int
steps_to(double max, double step)
{
	return (int) ceil(max / step - 1e-9);
}

/* Steps that fit within MAX, the last tick at or below it. */
static int
steps_within(double max, double step)
{
	return (int) floor(max / step + 1e-9);
}

/* The smallest step of 1, 2 or 5 times a power of ten that makes at most MAX_TICK_STEPS steps. */
static double
round_step(double max, StepCount count)
{
	static const double multiples[] = {1, 2, 5};
	double		power = pow(10, floor(log10(max / MAX_TICK_STEPS)));
	int			i;

	for (i = 0; i < 3; i++)
		if (count(max, multiples[i] * power) <= MAX_TICK_STEPS)
			return multiples[i] * power;
	return 10 * power;			/* power > max / 50: ten of it make fewer than 5 steps */
}

static void
set_unit(Axis *a, double unit, const char *unit_name)
{
	a->unit = unit;
	a->unit_name = unit_name;
}

/*
 * MB/s up to MAX_RATE: the axis ends on the round value at or above it, so
 * the highest point has a grid line above it; in kB/s, MB/s or GB/s by that
 * top value.
 */
static Axis
rate_axis(double max_rate)
{
	Axis		a;

	a.step = round_step(max_rate, steps_to);
	a.ticks = steps_to(max_rate, a.step);
	a.top = a.ticks * a.step;
	if (a.top >= 1000)
		set_unit(&a, 1000, "GB/s");
	else if (a.top < 1)
		set_unit(&a, 0.001, "kB/s");
	else
		set_unit(&a, 1, "MB/s");
	return a;
}

/*
 * Seconds up to MAX_SECONDS: the axis ends where the backup did, with round
 * seconds, minutes, hours or days marked within it, in the step's unit.
 */
static Axis
time_axis(double max_seconds)
{
	Axis		a;
	size_t		i;

	a.step = round_step(max_seconds, steps_within);
	if (a.step >= time_steps[0])
	{
		a.step = 86400 * round_step(max_seconds / 86400, steps_within);
		for (i = 0; i < sizeof(time_steps) / sizeof(time_steps[0]); i++)
			if (steps_within(max_seconds, time_steps[i]) <= MAX_TICK_STEPS)
			{
				a.step = time_steps[i];
				break;
			}
	}
	a.ticks = steps_within(max_seconds, a.step);
	a.top = max_seconds;
	if (a.step < 60)
		set_unit(&a, 1, "s");
	else if (a.step < 3600)
		set_unit(&a, 60, "min");
	else if (a.step < 86400)
		set_unit(&a, 3600, "h");
	else
		set_unit(&a, 86400, "d");
	return a;
}

/* Tick I of A as "1.5 GB/s": as many decimals as the step needs, no trailing zeros. */
static void
tick_label(const Axis *a, int i, char *buf, size_t len)
{
	double		step = a->step / a->unit;
	int			decimals = step >= 1 ? 0 : (int) ceil(-log10(step) - 1e-9);
	char	   *end;

	snprintf(buf, len, "%.*f", decimals, i * step);
	end = buf + strlen(buf);
	if (decimals > 0)
	{
		while (end[-1] == '0')
			*--end = '\0';
		if (end[-1] == '.')
			*--end = '\0';
	}
	snprintf(end, len - (size_t) (end - buf), " %s", a->unit_name);
}

/* Stripe S's stored bytes T seconds into the backup, straight between its figures. */
static double
bytes_at(const SbStripeInfo *s, double t)
{
	double		start = 0;
	uint64_t	before = 0;
	uint32_t	i;

	for (i = 0; i < s->ntimeline; i++)
	{
		double		end = sb_stripe_timeline_seconds(s, i);

		if (t < end)
		{
			double		part = end - start > MIN_SPAN ? (t - start) / (end - start) : 1;

			return before + (t < start ? 0 : part) * (double) (s->timeline[i] - before);
		}
		start = end;
		before = s->timeline[i];
	}
	return (double) before;		/* after the last figure: the total */
}

double
sb_report_window(const SbStripeInfo *s)
{
	return s->timeline_interval * 2 > SB_REPORT_WINDOW ? s->timeline_interval * 2 : SB_REPORT_WINDOW;
}

double
sb_report_rate_at(const SbStripeInfo *s, double t)
{
	double		half = sb_report_window(s) / 2;
	double		end = s->ntimeline > 0 ? sb_stripe_timeline_seconds(s, s->ntimeline - 1) : 0;
	double		from = t - half < 0 ? 0 : t - half;
	double		to = t + half > end ? end : t + half;

	/* The window is cut at the stripe's start and end: its rate is over the time it has there. */
	if (to - from < MIN_SPAN)
		return 0;
	return (bytes_at(s, to) - bytes_at(s, from)) / 1e6 / (to - from);
}

/* The middle of interval I of stripe S's timeline, where its point is drawn. */
static double
middle_of(const SbStripeInfo *s, uint32_t i)
{
	double		start = i > 0 ? sb_stripe_timeline_seconds(s, i - 1) : 0;

	return (start + sb_stripe_timeline_seconds(s, i)) / 2;
}

/* The longest run and the highest rate of any stripe (at least 1 s and 1 MB/s when none). */
static void
data_range(const SbManifest *m, double *max_seconds, double *max_rate)
{
	uint32_t	i,
				t;

	*max_seconds = 0;
	*max_rate = 0;
	for (i = 0; i < m->nstripes; i++)
	{
		const SbStripeInfo *s = &m->stripes[i];

		*max_seconds = fmax(*max_seconds, s->finished_after);
		if (s->ntimeline > 0)
			*max_seconds = fmax(*max_seconds, sb_stripe_timeline_seconds(s, s->ntimeline - 1));
		for (t = 0; t < s->ntimeline; t++)
			*max_rate = fmax(*max_rate, sb_report_rate_at(s, middle_of(s, t)));
	}
	if (*max_seconds <= 0)
		*max_seconds = 1;
	if (*max_rate <= 0)
		*max_rate = 1;
}

/* Where VALUE lies along axis A of LENGTH pixels (divided first: a huge top cannot overflow). */
static double
position(const Axis *a, double value, int length)
{
	return length * (value / a->top);
}

/* The pixel column of SECONDS on time axis X. */
static double
x_at(const Axis *x, double seconds)
{
	return LEFT + position(x, seconds, PLOT_W);
}

/* The pixel row of RATE on rate axis Y. */
static double
y_at(const Axis *y, double rate)
{
	return TOP + PLOT_H - position(y, rate, PLOT_H);
}

/* Labels at every tick of the rate axis, and a grid line across the plot at each above 0. */
static void
y_ticks(Svg *svg, const Axis *y)
{
	char		label[64];
	int			i;

	out(svg, "<g class=\"grid\" stroke=\"#ddd\">\n");
	for (i = 1; i <= y->ticks; i++)
		out(svg, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n",
			LEFT, y_at(y, i * y->step), LEFT + PLOT_W, y_at(y, i * y->step));
	out(svg, "</g>\n<g class=\"y-ticks\" font-size=\"11\" fill=\"#444\" text-anchor=\"end\">\n");
	for (i = 0; i <= y->ticks; i++)
	{
		tick_label(y, i, label, sizeof(label));
		out(svg, "<text x=\"%d\" y=\"%.1f\">%s</text>\n", LEFT - 6, y_at(y, i * y->step) + 4, label);
	}
	out(svg, "</g>\n");
}

/* A mark and a label at every tick of the time axis. */
static void
x_ticks(Svg *svg, const Axis *x)
{
	char		label[64];
	int			i;

	out(svg, "<g class=\"x-ticks\" font-size=\"11\" fill=\"#444\" text-anchor=\"middle\">\n");
	for (i = 0; i <= x->ticks; i++)
	{
		double		at = x_at(x, i * x->step);

		tick_label(x, i, label, sizeof(label));
		out(svg, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#444\"/>\n"
			"<text x=\"%.1f\" y=\"%d\">%s</text>\n",
			at, TOP + PLOT_H, at, TOP + PLOT_H + 4, at, TOP + PLOT_H + 16, label);
	}
	out(svg, "</g>\n");
}

/* The interval of the first stripe that has a timeline, for the axis title; 0 if none has. */
static double
sampling_interval(const SbManifest *m)
{
	uint32_t	i;

	for (i = 0; i < m->nstripes; i++)
		if (m->stripes[i].ntimeline > 0)
			return m->stripes[i].timeline_interval;
	return 0;
}

static void
axes(Svg *svg, const SbManifest *m, const Axis *x, const Axis *y)
{
	double		interval = sampling_interval(m);
	double		window = 0;
	uint32_t	i;

	for (i = 0; i < m->nstripes; i++)
		if (m->stripes[i].ntimeline > 0)
		{
			window = sb_report_window(&m->stripes[i]);
			break;
		}

	y_ticks(svg, y);
	x_ticks(svg, x);
	out(svg, "<g class=\"axes\" stroke=\"#444\" fill=\"none\">\n"
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n"
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n</g>\n",
		LEFT, TOP + PLOT_H, LEFT + PLOT_W, TOP + PLOT_H, LEFT, TOP, LEFT, TOP + PLOT_H);
	out(svg, "<g class=\"axis-titles\" font-size=\"11\" fill=\"#444\" text-anchor=\"middle\">\n"
		"<text class=\"x-title\" x=\"%d\" y=\"%d\">time since the backup began (%s)",
		LEFT + PLOT_W / 2, TOP + PLOT_H + 34, x->unit_name);
	if (interval > 0)
		out(svg, ", a point every %g s", interval);
	out(svg, "</text>\n<text class=\"y-title\" x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\">"
		"stored %s: bytes written to the stripe", TOP + PLOT_H / 2, TOP + PLOT_H / 2, y->unit_name);
	if (window > 0)
		out(svg, ", %g s moving average", window);
	out(svg, "</text>\n</g>\n");
}

/* One stripe: a polyline through its smoothed rate at the middle of each interval. */
static void
series(Svg *svg, const SbStripeInfo *s, const Axis *x, const Axis *y)
{
	uint32_t	i;

	out(svg, "<polyline class=\"series\" data-stripe=\"%u\" fill=\"none\" stroke-width=\"%g\" "
		"stroke=\"%s\" stroke-dasharray=\"%s\" stroke-linejoin=\"round\" points=\"",
		s->number, series_width(s), series_color(s), series_dash(s));
	for (i = 0; i < s->ntimeline; i++)
	{
		double		start = i > 0 ? sb_stripe_timeline_seconds(s, i - 1) : 0;
		double		end = sb_stripe_timeline_seconds(s, i);
		double		rate_y = y_at(y, sb_report_rate_at(s, middle_of(s, i)));

		if (s->ntimeline == 1)	/* one point draws nothing: a level line over its interval */
			out(svg, "%.1f,%.1f %.1f,%.1f", x_at(x, start), rate_y, x_at(x, end), rate_y);
		else
			out(svg, "%s%.1f,%.1f", i > 0 ? " " : "", x_at(x, middle_of(s, i)), rate_y);
	}
	out(svg, "\"/>\n");
}

/* A row per stripe: its line as drawn, its destination, what it carried and its two rates. */
static void
legend(Svg *svg, const SbManifest *m)
{
	uint32_t	i;

	out(svg, "<g class=\"legend\" font-size=\"12\">\n"
		"<text x=\"%d\" y=\"%d\" fill=\"#444\">data MB/s: source data the stripe carried, "
		"before compression; stored MB/s: bytes written to it; both per second of its writing</text>\n",
		LEFT, HEIGHT + 4);
	for (i = 0; i < m->nstripes; i++)
	{
		const SbStripeInfo *s = &m->stripes[i];
		int			y = HEIGHT + 10 + LEGEND_ROW + LEGEND_STRIPE * (int) i;

		out(svg, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%g\" "
			"stroke-dasharray=\"%s\"/>\n", LEFT, y - 4, LEFT + 30, y - 4, series_color(s),
			series_width(s), series_dash(s));
		out(svg, "<text class=\"legend-stripe\" data-stripe=\"%u\" x=\"%d\" y=\"%d\">stripe %u: ",
			s->number, LEFT + 38, y, s->number);
		out_text(svg, s->destination);
		/* a second line (a destination can be long), read as one text with the first */
		out(svg, ",<tspan x=\"%d\" dy=\"15\"> %.1f MB data, %.1f MB stored; %.1f data MB/s, "
			"%.1f stored MB/s; done after %.2f s</tspan></text>\n", LEFT + 38,
			(double) s->raw_bytes / 1e6, (double) s->stored_bytes / 1e6,
			sb_stripe_data_mb_per_s(s), sb_stripe_stored_mb_per_s(s), s->finished_after);
	}
	out(svg, "</g>\n");
}

char *
sb_report_svg(const SbManifest *m, SbError *err)
{
	Svg			svg = {NULL, 0, 0, true};
	double		max_seconds,
				max_rate;
	Axis		x,
				y;
	uint32_t	i;

	svg.cap = 8192;
	svg.text = sb_alloc(svg.cap, err);
	if (svg.text == NULL)
		return NULL;
	data_range(m, &max_seconds, &max_rate);
	x = time_axis(max_seconds);
	y = rate_axis(max_rate);
	out(&svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
		WIDTH, HEIGHT + 20 + LEGEND_ROW + LEGEND_STRIPE * (int) m->nstripes,
		WIDTH, HEIGHT + 20 + LEGEND_ROW + LEGEND_STRIPE * (int) m->nstripes);
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
	axes(&svg, m, &x, &y);
	for (i = 0; i < m->nstripes; i++)
		series(&svg, &m->stripes[i], &x, &y);
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
