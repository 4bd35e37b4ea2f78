/*
 * wal_args.c
 *		Option parsing shared by wal-push, wal-get, wal-list and wal-verify.
 *
 * Numbers go through the policy module's strict parsers, as every other
 * option of the command does: "1,,2" or " 12" is refused, naming it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_policy.h"
#include "wal_args.h"

enum
{
	LONG_ARCHIVE = 256,
	LONG_SYSID,
	LONG_COMPRESSION,
	LONG_LEVEL,
	LONG_WEIGHTS,
	LONG_BALANCE,
	LONG_SEGMENT_SIZE,
	LONG_MAX_MEMORY,
	LONG_PREFETCH,
	LONG_SPOOL,
	LONG_FROM,
	LONG_TO,
	LONG_KEY_FILE,
	LONG_OUTPUT,
	LONG_REDUNDANCY,
	LONG_REPAIR
};

/* Which WAL_OPT_ flag each option needs; 0 = every command takes it. */
static int
option_flag(int c)
{
	switch (c)
	{
		case LONG_COMPRESSION:
		case LONG_LEVEL:
		case LONG_WEIGHTS:
		case LONG_BALANCE:
		case LONG_SEGMENT_SIZE:
		case LONG_MAX_MEMORY:
			return WAL_OPT_PUSH;
		case LONG_PREFETCH:
		case LONG_SPOOL:
			return WAL_OPT_GET;
		case 'j':
			return WAL_OPT_PUSH | WAL_OPT_GET;
		case LONG_FROM:
		case LONG_TO:
			return WAL_OPT_RANGE;
		case LONG_OUTPUT:
			return WAL_OPT_OUTPUT;
		case LONG_REDUNDANCY:
			return WAL_OPT_REDUNDANCY;
		case LONG_REPAIR:
			return WAL_OPT_REPAIR;
	}
	return 0;
}


static int
bad_value(const WalArgs *a, const char *option, const char *arg, const SbError *err)
{
	return cli_usage_error(a->command, "invalid value \"%s\" for %s%s%s", arg, option,
						   err ? ": " : "", err ? err->message : "");
}

/* Options of wal-push (and --jobs of wal-get); returns -1 to go on, or the exit status. */
static int
apply_push_option(WalArgs *a, int c, const char *arg)
{
	SbError		err;
	long		v;
	uint64_t	size;

	switch (c)
	{
		case LONG_COMPRESSION:
			return sb_codec_parse(arg, &a->codec) ? -1 : bad_value(a, "--compression (none or zstd)", arg, NULL);
		case LONG_LEVEL:
			if (!sb_policy_parse_int(arg, -1000000, 1000, &v, &err))
				return bad_value(a, "--level", arg, &err);
			a->level = (int) v;
			return -1;
		case LONG_WEIGHTS:
			a->weights_text = arg;
			return -1;
		case LONG_BALANCE:
			return sb_balance_parse(arg, &a->balance) ? -1 : bad_value(a, "--balance (adaptive or weighted)", arg, NULL);
		case 'j':
			if (!sb_policy_parse_int(arg, 1, 64, &v, &err))
				return bad_value(a, "--jobs", arg, &err);
			a->jobs = (uint32_t) v;
			return -1;
		case LONG_SEGMENT_SIZE:
			if (!sb_policy_parse_size(arg, &size, &err) || !sb_wal_segment_size_valid(size))
				return cli_usage_error(a->command, "invalid value \"%s\" for --segment-size (a power of two from 1MB to 1GB)", arg);
			a->segment_size = (uint32_t) size;
			return -1;
		case LONG_MAX_MEMORY:
			return cli_parse_max_memory(a->command, arg, &a->max_memory) ? -1 : EXIT_USAGE;
	}
	return -1;
}

/* Apply one option to the WalArgs ARGS; returns -1 to go on, or the exit status. */
static int
apply_option(void *args, int c, const char *arg)
{
	WalArgs    *a = args;
	SbError		err;
	long		v;

	switch (c)
	{
		case LONG_ARCHIVE:
			return cli_add_destinations(a->command, "--archive", arg, a->dests, &a->ndests);
		case LONG_REDUNDANCY:
			/* Below the number of destinations: the engine says so, naming both. */
			if (!sb_policy_parse_int(arg, 0, SB_MAX_STRIPES - 1, &v, &err))
				return bad_value(a, "--redundancy", arg, &err);
			a->redundancy = (uint32_t) v;
			return -1;
		case LONG_REPAIR:
			a->repair = true;
			return -1;
		case LONG_SYSID:
			if (!sb_policy_parse_uint64(arg, &a->sysid, &err) || a->sysid == 0)
				return bad_value(a, "--system-identifier", arg, a->sysid == 0 ? NULL : &err);
			a->has_sysid = true;
			return -1;
		case LONG_PREFETCH:
			if (!sb_policy_parse_int(arg, 0, SB_WAL_MAX_PREFETCH, &v, &err))
				return bad_value(a, "--prefetch", arg, &err);
			a->prefetch = (uint32_t) v;
			return -1;
		case LONG_SPOOL:
			a->spool = arg;
			return -1;
		case LONG_FROM:
			a->from = arg;
			return -1;
		case LONG_TO:
			a->to = arg;
			return -1;
		case LONG_KEY_FILE:
			a->key_file = arg;
			return -1;
		case LONG_OUTPUT:
			if (!cli_parse_output(arg, &a->json))
				return cli_usage_error(a->command, "--output \"%s\": text or json", arg);
			return -1;
	}
	return apply_push_option(a, c, arg);
}

/* A LOCATION, DEST/wal/<system identifier>, as the archive. */
static int
take_location(WalArgs *a, const char *location)
{
	char	   *copy = strdup(location);
	char	   *last;
	size_t		len;
	SbError		err;

	if (copy == NULL)
		return cli_usage_error(a->command, "out of memory");
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	last = strrchr(copy, '/');
	if (last == NULL || last - copy < 4 || strncmp(last - 4, "/" SB_WAL_FOLDER, 4) != 0 ||
		!sb_policy_parse_uint64(last + 1, &a->sysid, &err) || a->sysid == 0)
	{
		free(copy);
		return cli_usage_error(a->command, "LOCATION \"%s\" is not a WAL archive folder (DEST/wal/<system identifier>)",
							   location);
	}
	last[-4] = '\0';
	a->dests[a->ndests++] = copy;
	a->has_sysid = true;
	return -1;
}

/* --weights: one per destination (sb_policy_parse_weights). */
static int
take_weights(WalArgs *a)
{
	SbNumberList list;
	SbError		err;

	if (!sb_policy_parse_weights(a->weights_text, &list, &err))
		return cli_usage_error(a->command, "invalid value for --weights: %s", err.message);
	if (list.count != a->ndests)
		return cli_usage_error(a->command, "%u weights given for %u destinations (\"%s\")", list.count,
							   a->ndests, a->weights_text);
	memcpy(a->weights, list.values, list.count * sizeof(double));
	return -1;
}

/* After the options: the positional arguments, and the archive named one way or the other. */
static int
finish(WalArgs *a, int argc, char **argv, int allowed, int nargs_min, int nargs_max)
{
	int			rc;

	while (optind < argc)
	{
		if (a->nargs == nargs_max)
			return cli_usage_error(a->command, "unexpected argument \"%s\"", argv[optind]);
		a->args[a->nargs++] = argv[optind++];
	}
	if ((allowed & WAL_OPT_LOCATION) && a->nargs == 1)
	{
		if (a->ndests > 0 || a->has_sysid)
			return cli_usage_error(a->command, "give a LOCATION or --archive, not both");
		if ((rc = take_location(a, a->args[0])) >= 0)
			return rc;
	}
	else if (a->nargs < nargs_min)
		return cli_usage_error(a->command, "%s", nargs_min == 2 ? "WALFILE and PATH are required" :
							   "a LOCATION or --archive is required");
	if (a->ndests == 0)
		return cli_usage_error(a->command, "--archive DEST[,DEST...] is required");
	if (!a->has_sysid)
		return cli_usage_error(a->command, "--system-identifier is required");
	if (a->weights_text != NULL)
		return take_weights(a);
	return -1;
}

int
wal_args_parse(int argc, char **argv, const char *command, int allowed, int nargs_min, int nargs_max,
			   void (*usage) (void), WalArgs *a)
{
	static const struct option longopts[] = {
		{"archive", required_argument, NULL, LONG_ARCHIVE},
		{"system-identifier", required_argument, NULL, LONG_SYSID},
		{"compression", required_argument, NULL, LONG_COMPRESSION},
		{"level", required_argument, NULL, LONG_LEVEL},
		{"weights", required_argument, NULL, LONG_WEIGHTS},
		{"balance", required_argument, NULL, LONG_BALANCE},
		{"jobs", required_argument, NULL, 'j'},
		{"segment-size", required_argument, NULL, LONG_SEGMENT_SIZE},
		{"max-memory", required_argument, NULL, LONG_MAX_MEMORY},
		{"prefetch", required_argument, NULL, LONG_PREFETCH},
		{"spool", required_argument, NULL, LONG_SPOOL},
		{"from", required_argument, NULL, LONG_FROM},
		{"to", required_argument, NULL, LONG_TO},
		{"encryption-key-file", required_argument, NULL, LONG_KEY_FILE},
		{"output", required_argument, NULL, LONG_OUTPUT},
		{"redundancy", required_argument, NULL, LONG_REDUNDANCY},
		{"repair", no_argument, NULL, LONG_REPAIR},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	int			rc;

	memset(a, 0, sizeof(*a));
	a->command = command;
	a->codec = SB_CODEC_ZSTD;
	a->level = 1;
	a->balance = SB_BALANCE_WEIGHTED;
	if ((rc = cli_parse_options(argc, argv, "j:h", longopts, command, allowed, option_flag, apply_option,
								a, usage)) >= 0)
		return rc;
	return finish(a, argc, argv, allowed, nargs_min, nargs_max);
}

void
wal_args_free(WalArgs *a)
{
	uint32_t	i;

	for (i = 0; i < a->ndests; i++)
		free(a->dests[i]);
	a->ndests = 0;
	sb_key_clear(&a->key);
	a->has_key = false;
}

bool
wal_args_load_key(WalArgs *a, SbError *err)
{
	if (a->key_file == NULL)
		return true;
	if (!sb_key_load(a->key_file, &a->key, err))
		return false;
	a->has_key = true;
	return true;
}

void
wal_args_dests(const WalArgs *a, SbWalDests *d)
{
	d->paths = (const char *const *) a->dests;
	d->count = a->ndests;
	d->s3 = NULL;				/* the command's settings are its environment */
	d->system_identifier = a->sysid;
	d->key = a->has_key ? &a->key : NULL;
	d->redundancy = a->redundancy;
}

/* As cli_report_error, but a destination missing is "not found" (1), not a damaged archive. */
int
wal_report_error(const SbError *err)
{
	return cli_report_lookup_error(err);
}
