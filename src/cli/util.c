/*
 * util.c
 *		What the subcommands share: error reporting and exit status, number
 *		and size parsing, byte formatting, signals.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "stripebackup/sb_policy.h"
#include "stripebackup/sb_s3.h"

static volatile sig_atomic_t stop_requested = 0;

int
cli_report_error(const SbError *err)
{
	fprintf(stderr, "%s: error: %s\n", progname, err->message);
	switch (err->code)
	{
		case SB_EINVAL:
		case SB_EEXIST:
		case SB_EKEY:
			return EXIT_USAGE;
		case SB_ECORRUPT:
		case SB_EVERSION:
		case SB_ENOTFOUND:
			return EXIT_DAMAGED;
		default:
			return EXIT_FAILED;
	}
}

int
cli_report_lookup_error(const SbError *err)
{
	int			rc = cli_report_error(err);

	return err->code == SB_ENOTFOUND ? EXIT_NOT_FOUND : rc;
}

void
cli_print_exit_table(void)
{
	printf("\nExit status:\n"
		   "  0    success: good, listed, restored\n"
		   "  1    not found (a path that is not there or holds no backup, a WAL file not\n"
		   "       in the archive), or the operation could not be done (I/O error, full\n"
		   "       device, canceled): nothing says a backup is bad\n"
		   "  2    bad usage or refused input (an unknown option, a non-empty target)\n"
		   "  3    a backup or WAL archive that is there is damaged or incomplete\n"
		   "  126  wal-get: the file is damaged, forged or sealed otherwise, or the archive\n"
		   "       cannot tell: recovery stops rather than end early\n");
}

int
cli_parse_options(int argc, char **argv, const char *shortopts, const struct option *longopts,
				  const char *command, int allowed, int (*flag_of) (int),
				  int (*apply) (void *, int, const char *), void *args, void (*usage) (void))
{
	int			c;
	int			rc;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1)
	{
		if (c == 'h')
		{
			usage();
			return EXIT_OK;
		}
		if (c == '?' || (flag_of(c) & ~allowed) != 0)
			return cli_usage_error(command, "option not valid here: \"%s\"", argv[optind - 1]);
		if ((rc = apply(args, c, optarg)) >= 0)
			return rc;
	}
	return -1;
}

int
cli_usage_error(const char *command, const char *fmt,...)
{
	va_list		ap;

	fprintf(stderr, "%s %s: ", progname, command);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry \"%s %s --help\" for more information.\n", progname, command);
	return EXIT_USAGE;
}

bool
cli_parse_int(const char *text, long min, long max, long *out)
{
	SbError		ignored;

	return sb_policy_parse_int(text, min, max, out, &ignored);
}

bool
cli_parse_size(const char *text, uint64_t *out)
{
	SbError		ignored;

	return sb_policy_parse_size(text, out, &ignored);
}

char *
cli_format_id(const uint8_t uuid[16], char out[33])
{
	int			i;

	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", uuid[i]);
	return out;
}

const char *
cli_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double		v = (double) bytes;
	int			u = 0;

	while (v >= 1024 && u < 5)
	{
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu bytes", (unsigned long long) bytes);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

bool
cli_parse_rates(const char *command, const char *text, double *rates, uint32_t *count)
{
	SbNumberList list;
	SbError		err;
	uint32_t	i;

	if (!sb_policy_parse_rates(text, &list, &err))
	{
		cli_usage_error(command, "invalid value for --max-rate: %s", err.message);
		return false;
	}
	for (i = 0; i < SB_MAX_STRIPES; i++)
		rates[i] = sb_policy_rate_of(&list, i);
	*count = list.count;
	return true;
}

bool
cli_parse_max_memory(const char *command, const char *text, uint64_t *bytes)
{
	SbError		err;

	if (!sb_policy_parse_size(text, bytes, &err))
	{
		cli_usage_error(command, "invalid value for --max-memory: %s", err.message);
		return false;
	}
	if (*bytes == 0)
	{
		cli_usage_error(command, "invalid value for --max-memory: \"%s\" is no memory at all", text);
		return false;
	}
	return true;
}

const char *
cli_temp_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	return tmp != NULL && tmp[0] == '/' ? tmp : "/tmp";
}

void
cli_print_notes(const SbArchive *a)
{
	uint32_t	i;

	for (i = 0; i < a->nnotes; i++)
		fprintf(stderr, "%s: warning: %s\n", progname, a->notes[i]);
}

bool
cli_apply_stripe_path(SbArchive *a, const char *arg, SbError *err)
{
	const char *eq = strchr(arg, '=');
	char		number[16];
	long		k;

	if (eq == NULL || eq == arg || (size_t) (eq - arg) >= sizeof(number) || eq[1] == '\0')
		return sb_error_set(err, SB_EINVAL, "--stripe-path \"%s\" is not of the form K=DIR", arg);
	memcpy(number, arg, (size_t) (eq - arg));
	number[eq - arg] = '\0';
	if (!cli_parse_int(number, 1, SB_MAX_STRIPES, &k))
		return sb_error_set(err, SB_EINVAL, "--stripe-path \"%s\": \"%s\" is not a stripe number",
							arg, number);
	return sb_archive_set_stripe_dir(a, (uint32_t) k, eq + 1, err);
}

static void
handle_stop_signal(int signo)
{
	(void) signo;
	stop_requested = 1;
}

void
cli_install_signal_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handle_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* an S3 request that no server answers ends on the signal too (within 100 ms) */
	sb_s3_set_stop_check(cli_stop_requested);
}

bool
cli_stop_requested(void)
{
	return stop_requested != 0;
}

int
cli_add_destinations(const char *command, const char *option, const char *text, char **dests,
					 uint32_t *n)
{
	const char *p = text;

	for (;;)
	{
		size_t		len = strcspn(p, ",");

		if (len == 0)
			return cli_usage_error(command, "%s \"%s\" has an empty destination", option, text);
		if (p[0] != '/' && strncmp(p, "s3://", 5) != 0)
			return cli_usage_error(command, "WAL archive destination \"%.*s\" is neither an absolute path nor an s3:// location",
								   (int) len, p);
		if (*n == SB_MAX_STRIPES)
			return cli_usage_error(command, "more than %d WAL archive destinations", SB_MAX_STRIPES);
		if ((dests[*n] = strndup(p, len)) == NULL)
			return cli_usage_error(command, "out of memory");
		(*n)++;
		if (p[len] == '\0')
			return -1;
		p += len + 1;
	}
}
