/*
 * progress.c
 *		The progress line: bytes done of the total, percentage, rate, each
 *		stripe's share so far, and the time left.  Printed on standard error
 *		about once a second and rewritten in place with a carriage return.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define PRINT_INTERVAL 1.0		/* seconds */

void
cli_progress_init(CliProgress *p, const char *verb, int mode)
{
	memset(p, 0, sizeof(*p));
	p->verb = verb;
	p->enabled = mode == PROGRESS_ON || (mode == PROGRESS_AUTO && isatty(STDERR_FILENO));
	p->last_print = -PRINT_INTERVAL;
}

static void
print_line(CliProgress *p, const SbProgress *s)
{
	char		line[512];
	char		done[32],
				total[32];
	double		rate = s->elapsed_seconds > 0 ? (double) s->raw_bytes_done / s->elapsed_seconds : 0;
	int			len;
	uint32_t	i;

	cli_format_bytes(s->raw_bytes_done, done, sizeof(done));
	if (s->raw_bytes_total > 0)
	{
		double		left = rate > 0 ? (double) (s->raw_bytes_total - s->raw_bytes_done) / rate : 0;

		cli_format_bytes(s->raw_bytes_total, total, sizeof(total));
		len = snprintf(line, sizeof(line), "%s/%s %s (%d%%), %.1f MB/s, %d:%02d left",
					   done, total, p->verb,
					   (int) (100.0 * (double) s->raw_bytes_done / (double) s->raw_bytes_total),
					   rate / 1e6, (int) left / 60, (int) left % 60);
	}
	else
		len = snprintf(line, sizeof(line), "%s %s, %.1f MB/s", done, p->verb, rate / 1e6);
	for (i = 0; i < s->nstripes && len < (int) sizeof(line) - 32; i++)
	{
		char		stored[32];

		len += snprintf(line + len, sizeof(line) - (size_t) len, "%s%u: %s",
						i == 0 ? "; stripes " : ", ", i + 1,
						cli_format_bytes(s->stripes[i].stored_bytes, stored, sizeof(stored)));
	}
	/* Pad over what a longer previous line left on the screen. */
	fprintf(stderr, "\r%-*s", p->last_width, line);
	p->last_width = len;
}

bool
cli_progress_tick(void *arg, const SbProgress *s)
{
	CliProgress *p = arg;

	p->last = *s;
	if (p->enabled && s->elapsed_seconds - p->last_print >= PRINT_INTERVAL)
	{
		print_line(p, s);
		p->last_print = s->elapsed_seconds;
	}
	return !cli_stop_requested();
}

void
cli_progress_done(CliProgress *p, const SbProgress *s)
{
	if (!p->enabled)
		return;
	print_line(p, s ? s : &p->last);
	fputc('\n', stderr);
}
