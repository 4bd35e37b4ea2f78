/*
 * read_args.c
 *		Option parsing shared by show, plan, verify, restore and rebuild.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_args.h"

enum
{
	LONG_STRIPE_PATH = 256,
	LONG_NO_PROGRESS,
	LONG_DETAIL,
	LONG_JSON,
	LONG_KEEP,
	LONG_TS_MAPPING,
	LONG_IO_METHOD,
	LONG_QUEUE_DEPTH,
	LONG_MAX_RATE,
	LONG_MAX_MEMORY,
	LONG_TARGET_TIME,
	LONG_TARGET_LSN,
	LONG_TARGET_XID,
	LONG_TARGET_NAME,
	LONG_TARGET_IMMEDIATE,
	LONG_TARGET_LATEST,
	LONG_TARGET_EXCLUSIVE,
	LONG_TARGET_TIMELINE,
	LONG_TARGET_ACTION,
	LONG_ARCHIVE,
	LONG_STANDBY,
	LONG_PRIMARY_CONNINFO,
	LONG_PRIMARY_SLOT_NAME,
	LONG_DELTA,
	LONG_KEY_FILE,
	LONG_ALLOW_UNENCRYPTED,
	LONG_ARCHIVE_MODE,
	LONG_OWNER,
	LONG_OUTPUT,
	LONG_STRIPE,
	LONG_DEST,
	LONG_FORCE,
	LONG_ARCHIVE_REDUNDANCY
};

/* Which OPT_ flag each option needs; 0 = every command takes it. */
static int
option_flag(int c)
{
	switch (c)
	{
		case 't':
			return OPT_TARGET;
		case 'j':
			return OPT_JOBS;
		case LONG_STRIPE_PATH:
			return OPT_STRIPE_PATH;
		case 'P':
		case LONG_NO_PROGRESS:
			return OPT_PROGRESS;
		case LONG_DETAIL:
			return OPT_DETAIL;
		case LONG_JSON:
			return OPT_JSON;
		case LONG_OUTPUT:
			return OPT_OUTPUT;
		case LONG_KEEP:
			return OPT_KEEP;
		case LONG_TS_MAPPING:
			return OPT_TS_MAPPING;
		case LONG_IO_METHOD:
		case LONG_QUEUE_DEPTH:
		case LONG_MAX_RATE:
		case LONG_MAX_MEMORY:
			return OPT_IO;
		case LONG_TARGET_TIME:
		case LONG_TARGET_LSN:
		case LONG_TARGET_XID:
		case LONG_TARGET_NAME:
		case LONG_TARGET_IMMEDIATE:
		case LONG_TARGET_LATEST:
		case LONG_TARGET_EXCLUSIVE:
		case LONG_TARGET_TIMELINE:
		case LONG_TARGET_ACTION:
			return OPT_RECOVERY;
		case LONG_ARCHIVE:
			return OPT_ARCHIVE;
		case LONG_STANDBY:
		case LONG_PRIMARY_CONNINFO:
		case LONG_PRIMARY_SLOT_NAME:
			return OPT_STANDBY;
		case LONG_DELTA:
			return OPT_DELTA;
		case LONG_ARCHIVE_MODE:
			return OPT_ARCHIVE_MODE;
		case LONG_OWNER:
			return OPT_OWNER;
		case LONG_STRIPE:
		case LONG_DEST:
		case LONG_FORCE:
			return OPT_REBUILD;
		case LONG_ARCHIVE_REDUNDANCY:
			return OPT_ARCHIVE_REDUNDANCY;
	}
	return 0;
}

/* The recovery target an option names (--target-time ...), or SB_RECOVERY_NONE. */
static SbRecoveryKind
target_kind(int c)
{
	switch (c)
	{
		case LONG_TARGET_TIME:
			return SB_RECOVERY_TIME;
		case LONG_TARGET_LSN:
			return SB_RECOVERY_LSN;
		case LONG_TARGET_XID:
			return SB_RECOVERY_XID;
		case LONG_TARGET_NAME:
			return SB_RECOVERY_NAME;
		case LONG_TARGET_IMMEDIATE:
			return SB_RECOVERY_IMMEDIATE;
		case LONG_TARGET_LATEST:
			return SB_RECOVERY_LATEST;
	}
	return SB_RECOVERY_NONE;
}

/* A point-in-time option; returns -1 to go on, or the exit status. */
static int
apply_recovery_option(ReadArgs *a, int c, const char *arg)
{
	SbRecoveryKind kind = target_kind(c);

	if (kind != SB_RECOVERY_NONE)
	{
		if (a->recovery.kind != SB_RECOVERY_NONE)
			return cli_usage_error(a->command, "give one recovery target: --target-%s and --target-%s both given",
								   sb_recovery_kind_name(a->recovery.kind), sb_recovery_kind_name(kind));
		a->recovery.kind = kind;
		a->recovery.value = arg;
	}
	else if (c == LONG_TARGET_EXCLUSIVE)
		a->recovery.inclusive = false;
	else if (c == LONG_TARGET_TIMELINE)
		a->recovery.timeline = arg;
	else if (c == LONG_TARGET_ACTION)
		a->recovery.action = arg;
	else if (c == LONG_ARCHIVE_MODE)
	{
		SbError		err;

		if (!sb_archive_mode_parse(arg, "--archive-mode", &a->recovery.archive_mode, &err))
			return cli_usage_error(a->command, "%s", err.message);
	}
	else if (c == LONG_ARCHIVE)
		return cli_add_destinations(a->command, "--archive", arg, a->archive, &a->narchive);
	else if (c == LONG_ARCHIVE_REDUNDANCY)
	{
		long		v;

		/* Below the number of destinations: said once the archive is known. */
		if (!cli_parse_int(arg, 0, SB_MAX_STRIPES - 1, &v))
			return cli_usage_error(a->command, "invalid value \"%s\" for --archive-redundancy (0 to %d)",
								   arg, SB_MAX_STRIPES - 1);
		a->archive_redundancy = (int) v;
	}
	else if (c == LONG_STANDBY)
		a->standby.enabled = true;
	else if (c == LONG_PRIMARY_CONNINFO)
		a->standby.primary_conninfo = arg;
	else if (c == LONG_PRIMARY_SLOT_NAME)
		a->standby.primary_slot_name = arg;
	return -1;
}

/* Apply one option to the ReadArgs ARGS; returns -1 to go on, or the exit status. */
static int
apply_option(void *args, int c, const char *arg)
{
	ReadArgs   *a = args;
	long		v;
	uint32_t	count;

	switch (c)
	{
		case 't':
			a->target = arg;
			break;
		case 'j':
			if (!cli_parse_int(arg, 1, 256, &v))
				return cli_usage_error(a->command, "invalid value \"%s\" for --jobs (1 to 256)", arg);
			a->jobs = (uint32_t) v;
			break;
		case LONG_STRIPE_PATH:
			if (a->nstripe_paths == SB_MAX_STRIPES)
				return cli_usage_error(a->command, "too many --stripe-path options");
			a->stripe_paths[a->nstripe_paths++] = arg;
			break;
		case 'P':
			a->progress_mode = PROGRESS_ON;
			break;
		case LONG_NO_PROGRESS:
			a->progress_mode = PROGRESS_OFF;
			break;
		case LONG_DETAIL:
			a->detail = true;
			break;
		case LONG_OUTPUT:
			if (!cli_parse_output(arg, &a->output_json))
				return cli_usage_error(a->command, "--output \"%s\": text or json", arg);
			break;
		case LONG_JSON:
			a->json = true;
			break;
		case LONG_KEEP:
			a->keep_on_error = true;
			break;
		case LONG_DELTA:
			a->delta = true;
			break;
		case LONG_KEY_FILE:
			a->key_file = arg;
			break;
		case LONG_OWNER:
			a->owner = arg;
			break;
		case LONG_STRIPE:
			if (!cli_parse_int(arg, 1, SB_MAX_STRIPES, &v))
				return cli_usage_error(a->command, "invalid value \"%s\" for --stripe (1 to %d)", arg,
									   SB_MAX_STRIPES);
			a->rebuild_stripe = (uint32_t) v;
			break;
		case LONG_DEST:
			a->rebuild_dest = arg;
			break;
		case LONG_FORCE:
			a->force = true;
			break;
		case LONG_ALLOW_UNENCRYPTED:
			a->allow_unencrypted = true;
			break;
		case LONG_IO_METHOD:
			if (!sb_io_method_parse(arg, &a->io_method))
				return cli_usage_error(a->command, "invalid value \"%s\" for --io-method (auto, io_uring or sync)", arg);
			break;
		case LONG_QUEUE_DEPTH:
			if (!cli_parse_int(arg, 1, 256, &v))
				return cli_usage_error(a->command, "invalid value \"%s\" for --queue-depth (1 to 256)", arg);
			a->queue_depth = (uint32_t) v;
			break;
		case LONG_MAX_RATE:
			if (!cli_parse_rates(a->command, arg, a->max_rates, &count))
				return EXIT_USAGE;
			a->has_max_rates = true;
			break;
		case LONG_MAX_MEMORY:
			if (!cli_parse_max_memory(a->command, arg, &a->max_memory))
				return EXIT_USAGE;
			break;
		case LONG_TS_MAPPING:
			if (a->nts_mappings == sizeof(a->ts_mappings) / sizeof(a->ts_mappings[0]))
				return cli_usage_error(a->command, "too many --tablespace-mapping options");
			a->ts_mappings[a->nts_mappings++] = arg;
			break;
		default:
			return apply_recovery_option(a, c, arg);
	}
	return -1;
}

/*
 * The point-in-time options go together: a target, then what qualifies it
 * (and, for a command that takes a target, where the archive is).
 */
static int
check_recovery_options(const ReadArgs *a, int allowed, bool exclusive)
{
	const SbRecoveryTarget *t = &a->recovery;
	SbError		err;

	if (t->kind == SB_RECOVERY_NONE)
	{
		if (exclusive || t->timeline != NULL || t->action != NULL ||
			((a->narchive > 0 || a->archive_redundancy >= 0) && (allowed & OPT_RECOVERY) != 0 &&
			 !a->standby.enabled))
			return cli_usage_error(a->command, "--target-exclusive, --target-timeline, --target-action, "
								   "--archive and --archive-redundancy go with a recovery target "
								   "(--target-time ...)");
		return -1;
	}
	if (exclusive && t->kind >= SB_RECOVERY_IMMEDIATE)
		return cli_usage_error(a->command, "--target-exclusive goes with --target-time, --target-lsn, "
							   "--target-xid or --target-name");
	if (!sb_recovery_check_target(t, &err))
		return cli_usage_error(a->command, "%s", err.message);
	return -1;
}

/* --primary-conninfo and --primary-slot-name go with --standby, which takes no target. */
static int
check_standby_options(const ReadArgs *a)
{
	const SbStandby *s = &a->standby;
	SbError		err;

	if (!s->enabled)
	{
		if (s->primary_conninfo != NULL || s->primary_slot_name != NULL)
			return cli_usage_error(a->command, "--primary-conninfo and --primary-slot-name go with --standby");
		return -1;
	}
	if (a->recovery.kind != SB_RECOVERY_NONE)
		return cli_usage_error(a->command, "a standby follows its primary: --standby takes no "
							   "--target-%s", sb_recovery_kind_name(a->recovery.kind));
	if (!sb_standby_check(s, &err))
		return cli_usage_error(a->command, "%s", err.message);
	return -1;
}

/* The key of an encrypted backup, read once: a wrong file is said before anything is opened. */
static int
load_key(ReadArgs *a)
{
	SbError		err;

	if (a->key_file == NULL)
		return -1;
	if (!sb_key_load(a->key_file, &a->key, &err))
		return cli_report_error(&err);
	a->has_key = true;
	return -1;
}

int
read_args_parse(int argc, char **argv, const char *command, int allowed,
				void (*usage) (void), ReadArgs *a)
{
	static const struct option longopts[] = {
		{"target", required_argument, NULL, 't'},
		{"jobs", required_argument, NULL, 'j'},
		{"stripe-path", required_argument, NULL, LONG_STRIPE_PATH},
		{"progress", no_argument, NULL, 'P'},
		{"no-progress", no_argument, NULL, LONG_NO_PROGRESS},
		{"detail", no_argument, NULL, LONG_DETAIL},
		{"json", no_argument, NULL, LONG_JSON},
		{"output", required_argument, NULL, LONG_OUTPUT},
		{"keep-on-error", no_argument, NULL, LONG_KEEP},
		{"tablespace-mapping", required_argument, NULL, LONG_TS_MAPPING},
		{"io-method", required_argument, NULL, LONG_IO_METHOD},
		{"queue-depth", required_argument, NULL, LONG_QUEUE_DEPTH},
		{"max-rate", required_argument, NULL, LONG_MAX_RATE},
		{"max-memory", required_argument, NULL, LONG_MAX_MEMORY},
		{"target-time", required_argument, NULL, LONG_TARGET_TIME},
		{"target-lsn", required_argument, NULL, LONG_TARGET_LSN},
		{"target-xid", required_argument, NULL, LONG_TARGET_XID},
		{"target-name", required_argument, NULL, LONG_TARGET_NAME},
		{"target-immediate", no_argument, NULL, LONG_TARGET_IMMEDIATE},
		{"target-latest", no_argument, NULL, LONG_TARGET_LATEST},
		{"target-exclusive", no_argument, NULL, LONG_TARGET_EXCLUSIVE},
		{"target-timeline", required_argument, NULL, LONG_TARGET_TIMELINE},
		{"target-action", required_argument, NULL, LONG_TARGET_ACTION},
		{"archive", required_argument, NULL, LONG_ARCHIVE},
		{"archive-mode", required_argument, NULL, LONG_ARCHIVE_MODE},
		{"archive-redundancy", required_argument, NULL, LONG_ARCHIVE_REDUNDANCY},
		{"owner", required_argument, NULL, LONG_OWNER},
		{"standby", no_argument, NULL, LONG_STANDBY},
		{"delta", no_argument, NULL, LONG_DELTA},
		{"encryption-key-file", required_argument, NULL, LONG_KEY_FILE},
		{"allow-unencrypted", no_argument, NULL, LONG_ALLOW_UNENCRYPTED},
		{"primary-conninfo", required_argument, NULL, LONG_PRIMARY_CONNINFO},
		{"primary-slot-name", required_argument, NULL, LONG_PRIMARY_SLOT_NAME},
		{"stripe", required_argument, NULL, LONG_STRIPE},
		{"dest", required_argument, NULL, LONG_DEST},
		{"force", no_argument, NULL, LONG_FORCE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	int			rc;

	memset(a, 0, sizeof(*a));
	a->command = command;
	a->keep = SB_KEEP_TO_RESTORE;
	a->archive_redundancy = -1;
	a->recovery.inclusive = true;
	if ((rc = cli_parse_options(argc, argv, "t:j:Ph", longopts, command, allowed, option_flag,
								apply_option, a, usage)) >= 0 ||
		(rc = check_recovery_options(a, allowed, !a->recovery.inclusive)) >= 0 ||
		(rc = check_standby_options(a)) >= 0 ||
		(rc = load_key(a)) >= 0)
		return rc;
	if (optind >= argc)
		return cli_usage_error(command, "the backup LOCATION is required");
	a->location = argv[optind++];
	if (optind < argc)
		return cli_usage_error(command, "unexpected argument \"%s\"", argv[optind]);
	return -1;
}

void
read_args_free(ReadArgs *a)
{
	uint32_t	i;

	for (i = 0; i < a->narchive; i++)
		free(a->archive[i]);
	a->narchive = 0;
	sb_key_clear(&a->key);
	a->has_key = false;
}

SbArchive *
read_args_open(const ReadArgs *a, SbError *err)
{
	SbArchiveOpenOptions o = {.key = a->has_key ? &a->key : NULL, .keep = a->keep,
	.alone = a->one_backup};
	SbArchive  *archive;
	uint32_t	i;

	if (a->keep == SB_KEEP_STREAMED || a->keep == SB_KEEP_LOOKUP)
		o.spool_dir = cli_temp_dir();
	/* under a key, a backup in the clear only when the user says it may be one */
	o.expect.encryption = a->allow_unencrypted ? SB_EXPECT_EITHER : SB_EXPECT_AS_KEY;
	archive = sb_archive_open_with(a->location, &o, err);
	if (archive != NULL)
		cli_print_notes(archive);
	for (i = 0; archive != NULL && i < a->nstripe_paths; i++)
	{
		if (!cli_apply_stripe_path(archive, a->stripe_paths[i], err))
		{
			sb_archive_close(archive);
			return NULL;
		}
	}
	return archive;
}

void
read_args_read_options(const ReadArgs *a, CliProgress *progress, SbReadOptions *o)
{
	o->workers = a->jobs;
	o->io_method = a->io_method;
	o->queue_depth = a->queue_depth;
	o->max_rates = a->has_max_rates ? a->max_rates : NULL;
	o->max_memory = a->max_memory;
	o->tick = cli_progress_tick;
	o->tick_arg = progress;
}
