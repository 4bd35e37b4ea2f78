/*
 * cmd_create.c
 *		"stripebackup create": a cold backup of a directory tree, typically
 *		the data directory of a stopped PostgreSQL cluster, striped over
 *		several destinations.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cluster_meta.h"
#include "source_tree.h"
#include "stripebackup/sb_backup.h"
#include "stripebackup/sb_store.h"
#include "stripebackup/sb_policy.h"
#include "stripebackup/sb_version.h"

typedef struct CreateArgs
{
	const char *source;
	double		max_rates[SB_MAX_STRIPES];
	const char *max_rate_text;
	const char *dests[SB_MAX_STRIPES];
	uint32_t	ndests;
	const char *weights_text;
	double		weights[SB_MAX_STRIPES];
	SbBackupOptions options;
	char		default_name[32];
	int			progress_mode;
	char	   *metadata;		/* the manifest's description of a data directory */
	const char *key_file;		/* --encryption-key-file */
	SbKey		key;
} CreateArgs;

static void
create_usage(void)
{
	printf("%s create makes a cold backup of a directory tree (the data directory of a\n"
		   "stopped PostgreSQL cluster), striped over several destinations by weight.\n\n",
		   progname);
	printf("Usage:\n  %s create --source DIR --dest DIR [--dest DIR]... [OPTION]...\n\n", progname);
	printf("Options:\n");
	printf("  -s, --source=DIR         directory to back up (a stopped cluster's PGDATA)\n");
	printf("  -d, --dest=DIR           destination folder; repeat for each device\n");
	printf("  -w, --weights=W,W,...    relative share of each destination (default equal)\n");
	printf("  -c, --compression=METHOD none or zstd (default zstd)\n");
	printf("  -l, --level=N            zstd level, negative for the fast modes (default 1)\n");
	printf("  -b, --balance=MODE       adaptive: each destination takes chunks as fast as it\n"
		   "                           writes them; weighted: exact shares (default adaptive)\n");
	printf("  -n, --name=NAME          backup folder name in each destination\n"
		   "                           (default: the UTC time, as 20261130T031900Z)\n");
	printf("      --label=TEXT         free text kept in the manifest\n");
	printf("      --chunk-size=SIZE    bytes per chunk, a multiple of 4k (default 1M)\n");
	printf("      --frame-size=SIZE    bytes per zstd frame of a chunk, a multiple of 4k from\n"
		   "                           16k: a delta restore reads only the frames that\n"
		   "                           differ, larger frames store less (default 64k)\n");
	printf("      --buffers=N          chunk buffers in flight (default %d)\n", SB_DEFAULT_BUFFER_COUNT);
	printf("  -j, --jobs=N             compression workers (default: number of CPUs)\n");
	printf("      --max-rate=R[,R...]  write at most R MB/s, to every destination or one each\n");
	printf("      --encryption-key-file=FILE  encrypt with the key this file holds (32+ bytes,\n"
		   "                           readable by its owner only)\n");
	printf("      --redundancy=M       any M destinations may be lost and the backup still\n"
		   "                           restores (parity: about M/(destinations - M) more\n"
		   "                           bytes; chunks then go to the destinations by count,\n"
		   "                           whatever --balance says; default 0, none)\n");
	printf("      --io-method=METHOD   auto (io_uring when allowed), io_uring or sync\n");
	printf("      --queue-depth=N      reads or writes in flight per file (default %d)\n",
		   SB_DEFAULT_QUEUE_DEPTH);
	printf("      --max-memory=SIZE    refuse settings that need more memory (default 1GB)\n");
	printf("      --no-direct-io       go through the page cache (default: read what it lacks with\n"
		   "                           O_DIRECT and keep the stripes out of it, so that each\n"
		   "                           destination's share follows its real speed)\n");
	printf("  -P, --progress           show progress (default when stderr is a terminal)\n");
	printf("      --no-progress        do not show progress\n");
	printf("  -h, --help               show this help\n");
	printf("\nThe backup goes to DEST/NAME in every destination; any one of those folders\n"
		   "is the LOCATION that show, plan, verify and restore take.\n");
}

/* --weights: one positive number per destination (sb_policy_parse_weights). */
static bool
parse_weights(CreateArgs *a)
{
	SbNumberList list;
	SbError		err;

	if (!sb_policy_parse_weights(a->weights_text, &list, &err))
	{
		cli_usage_error("create", "invalid value for --weights: %s", err.message);
		return false;
	}
	if (list.count != a->ndests)
	{
		cli_usage_error("create", "%u weights given for %u destinations (\"%s\")",
						list.count, a->ndests, a->weights_text);
		return false;
	}
	memcpy(a->weights, list.values, list.count * sizeof(double));
	return true;
}

/* --max-rate: one rate for every destination, or one each. */
static bool
parse_max_rates(CreateArgs *a)
{
	uint32_t	count;

	if (!cli_parse_rates("create", a->max_rate_text, a->max_rates, &count))
		return false;
	if (count != 1 && count != a->ndests)
	{
		cli_usage_error("create", "%u rates given for %u destinations (\"%s\")",
						count, a->ndests, a->max_rate_text);
		return false;
	}
	return true;
}

/* Report a bad option value as a usage error; always false. */
static bool
bad_value(const char *arg, const char *option)
{
	cli_usage_error("create", "invalid value \"%s\" for %s", arg, option);
	return false;
}

/* Options that take a value of their own kind; false after a usage error. */
static bool
parse_value_option(CreateArgs *a, int c, const char *arg)
{
	long		v;
	uint64_t	size;

	switch (c)
	{
		case 'c':
			return sb_codec_parse(arg, &a->options.codec) ||
				bad_value(arg, "--compression (use none or zstd)");
		case 'l':
			if (!cli_parse_int(arg, -1000000, 1000, &v))
				return bad_value(arg, "--level");
			a->options.level = (int) v;
			return true;
		case 'b':
			return sb_balance_parse(arg, &a->options.balance) ||
				bad_value(arg, "--balance (use adaptive or weighted)");
		case 1:
			if (!cli_parse_size(arg, &size) || size > UINT32_MAX)
				return bad_value(arg, "--chunk-size");
			a->options.chunk_size = (uint32_t) size;
			return true;
		case 13:
			/* the engine names a size it does not take */
			if (!cli_parse_size(arg, &size) || size == 0 || size > UINT32_MAX)
				return bad_value(arg, "--frame-size");
			a->options.frame_size = (uint32_t) size;
			return true;
		case 2:
			if (!cli_parse_int(arg, 2, 4096, &v))
				return bad_value(arg, "--buffers (2 to 4096)");
			a->options.buffer_count = (uint32_t) v;
			return true;
		case 'j':
			if (!cli_parse_int(arg, 1, 256, &v))
				return bad_value(arg, "--jobs (1 to 256)");
			a->options.workers = (uint32_t) v;
			return true;
		case 5:
			return sb_io_method_parse(arg, &a->options.io_method) ||
				bad_value(arg, "--io-method (auto, io_uring or sync)");
		case 6:
			if (!cli_parse_int(arg, 1, 256, &v))
				return bad_value(arg, "--queue-depth (1 to 256)");
			a->options.queue_depth = (uint32_t) v;
			return true;
		case 9:
			return cli_parse_max_memory("create", arg, &a->options.max_memory);
		case 12:
			/* past the destinations' count the engine refuses it, naming both */
			if (!cli_parse_int(arg, 0, SB_MAX_REDUNDANCY, &v))
				return bad_value(arg, "--redundancy (0 to 8)");
			a->options.redundancy = (uint32_t) v;
			return true;
	}
	return false;
}

/* Returns -1 to go on, or the exit status. */
static int
parse_args(int argc, char **argv, CreateArgs *a)
{
	static const struct option longopts[] = {
		{"source", required_argument, NULL, 's'},
		{"dest", required_argument, NULL, 'd'},
		{"weights", required_argument, NULL, 'w'},
		{"compression", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, 'l'},
		{"balance", required_argument, NULL, 'b'},
		{"name", required_argument, NULL, 'n'},
		{"label", required_argument, NULL, 3},
		{"chunk-size", required_argument, NULL, 1},
		{"buffers", required_argument, NULL, 2},
		{"jobs", required_argument, NULL, 'j'},
		{"progress", no_argument, NULL, 'P'},
		{"no-progress", no_argument, NULL, 4},
		{"io-method", required_argument, NULL, 5},
		{"queue-depth", required_argument, NULL, 6},
		{"direct-io", no_argument, NULL, 7},
		{"no-direct-io", no_argument, NULL, 10},
		{"max-rate", required_argument, NULL, 8},
		{"max-memory", required_argument, NULL, 9},
		{"encryption-key-file", required_argument, NULL, 11},
		{"redundancy", required_argument, NULL, 12},
		{"frame-size", required_argument, NULL, 13},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	int			c;

	while ((c = getopt_long(argc, argv, "s:d:w:c:l:b:n:j:Ph", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 's':
				a->source = optarg;
				break;
			case 'd':
				if (a->ndests == SB_MAX_STRIPES)
					return cli_usage_error("create", "at most %d destinations", SB_MAX_STRIPES);
				a->dests[a->ndests++] = optarg;
				break;
			case 'w':
				a->weights_text = optarg;
				break;
			case 'n':
				a->options.name = optarg;
				break;
			case 3:
				a->options.label = optarg;
				break;
			case 'P':
				a->progress_mode = PROGRESS_ON;
				break;
			case 4:
				a->progress_mode = PROGRESS_OFF;
				break;
			case 7:
				a->options.direct_io = true;
				break;
			case 10:
				a->options.direct_io = false;
				break;
			case 8:
				a->max_rate_text = optarg;
				break;
			case 11:
				a->key_file = optarg;
				break;
			case 'h':
				create_usage();
				return EXIT_OK;
			case '?':
				return cli_usage_error("create", "bad option");
			default:
				if (!parse_value_option(a, c, optarg))
					return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return cli_usage_error("create", "unexpected argument \"%s\"", argv[optind]);
	if (a->source == NULL)
		return cli_usage_error("create", "--source is required");
	if (a->ndests == 0)
		return cli_usage_error("create", "at least one --dest is required");
	if ((a->weights_text != NULL && !parse_weights(a)) ||
		(a->max_rate_text != NULL && !parse_max_rates(a)))
		return EXIT_USAGE;
	return -1;
}

/*
 * A destination inside a folder the backup reads (the source, a tablespace,
 * pg_wal) would back up the backup, and the reverse would write into what
 * is being read.
 */
static bool
check_not_nested(const CreateArgs *a, const SourceTree *tree, SbError *err)
{
	char		dest[PATH_MAX];
	uint32_t	i;
	size_t		r;

	for (i = 0; i < a->ndests; i++)
	{
		if (realpath(a->dests[i], dest) == NULL)
			continue;			/* the engine says why the destination is not usable */
		for (r = 0; r < tree->nroots; r++)
		{
			const char *read = r == 0 ? a->source : tree->roots[r];

			if (sb_policy_canonical_within(dest, tree->roots[r]))
				return sb_error_set(err, SB_EINVAL, "destination \"%s\" is inside \"%s\", which the backup reads",
									a->dests[i], read);
			if (sb_policy_canonical_within(tree->roots[r], dest))
				return sb_error_set(err, SB_EINVAL, "\"%s\", which the backup reads, is inside destination \"%s\"",
									read, a->dests[i]);
		}
	}
	return true;
}

/* A cold backup of a running server would be inconsistent: refuse it. */
static bool
check_server_stopped(const char *source, SbError *err)
{
	long		pid;

	switch (sb_policy_postmaster_state(source, &pid))
	{
		case SB_POSTMASTER_RUNNING:
			return sb_error_set(err, SB_EINVAL,
								"the server of \"%s\" is running (postmaster.pid names process %ld): "
								"stop it first, or take an online backup with SELECT stripe_backup(...)",
								source, pid);
		case SB_POSTMASTER_STALE:
			fprintf(stderr, "%s: warning: \"%s/postmaster.pid\" exists but no server runs: "
					"the cluster was not shut down cleanly\n", progname, source);
			break;
		case SB_POSTMASTER_NONE:
			break;
	}
	return true;
}

/*
 * What the manifest says of the source: a data directory is described as
 * the online backup describes it (cluster_meta.h), so restore relocates its
 * tablespaces alike; the size read sizes the memory check's index estimate;
 * the folders read (the source and each tablespace) on several devices get
 * a source lane each, so that they are read at once.
 */
static bool
describe_source(CreateArgs *a, const SourceTree *tree, SbError *err)
{
	a->metadata = cluster_meta_json(tree, err);
	a->options.metadata_json = a->metadata;
	a->options.expected_bytes = tree->total_bytes;
	a->options.source_lanes = sb_source_lanes_for((const char *const *) tree->roots, tree->nroots);
	return err->code == SB_OK;
}

/*
 * Where the manifest's entries wait for the end of the backup, in an unlinked
 * file rather than in memory (a million files: about 150 MB): the first
 * destination that is a folder, else the temporary folder.
 */
static const char *
spill_folder(const CreateArgs *a)
{
	uint32_t	i;

	for (i = 0; i < a->ndests; i++)
		if (sb_store_features_of(a->dests[i]) & SB_STORE_DESCRIPTORS)
			return a->dests[i];
	return cli_temp_dir();
}

/* The tree hands over no links (source_tree.h): directories and files only. */
static bool
add_item(void *arg, const SourceItem *item, SbError *err)
{
	SbBackup   *b = arg;

	if (item->type == SB_ENTRY_DIR)
		return sb_backup_add_dir(b, item->path, item->mode, item->mtime, err);
	return sb_backup_add_file_at(b, item->path, item->dirfd, item->name, item->full_path, err);
}

/* A run of regular files of one directory, opened and read several at once. */
static bool
add_files(void *arg, int dirfd, const SourceItem *items, size_t n, SbError *err)
{
	SbBackup   *b = arg;
	SbFileAt	files[SOURCE_FILES_MAX];
	size_t		i;

	for (i = 0; i < n; i++)
	{
		files[i].path = items[i].path;
		files[i].name = items[i].name;
		files[i].source_path = items[i].full_path;
	}
	if (!sb_backup_add_files_at(b, dirfd, files, (uint32_t) n, err))
		return false;
	/* A cold backup of a tree that changes under it would not be the tree. */
	for (i = 0; i < n; i++)
		if (files[i].gone)
			return sb_error_set(err, SB_ENOTFOUND, "\"%s\" was removed while it was being backed up",
								files[i].source_path);
	return true;
}

/* Every file read, the source lanes' too, and none of them gone meanwhile. */
static bool
all_files_read(SbBackup *b, SbError *err)
{
	uint64_t	vanished;

	if (!sb_backup_files_read(b, err))
		return false;
	vanished = sb_backup_files_vanished(b);
	return vanished == 0 ||
		sb_error_set(err, SB_ENOTFOUND, "%llu file(s) were removed while they were being backed up",
					 (unsigned long long) vanished);
}

static void
print_summary(const SbManifest *m, double seconds)
{
	char		raw[32],
				stored[32];
	uint32_t	i;

	printf("backup \"%s\" complete: %s of data, %s stored, in %.1f s (%.1f MB/s)\n",
		   m->name, cli_format_bytes(m->stream_bytes, raw, sizeof(raw)),
		   cli_format_bytes(m->stored_bytes, stored, sizeof(stored)), seconds,
		   seconds > 0 ? (double) m->stream_bytes / seconds / 1e6 : 0.0);
	for (i = 0; i < m->nstripes; i++)
	{
		const SbStripeInfo *s = &m->stripes[i];

		printf("  stripe %u: %s/%s/%s, weight %g, %llu chunks, %s\n",
			   s->number, s->destination, m->name, s->file_name, s->weight,
			   (unsigned long long) s->chunks,
			   cli_format_bytes(s->stored_bytes, stored, sizeof(stored)));
	}
}

static int
run_backup(CreateArgs *a, const SourceTree *tree)
{
	CliProgress progress;
	SbManifest *m = NULL;
	SbBackup   *b;
	SbError		err;
	struct timespec t0,
				t1;
	SourceTree	again;
	bool		ok;

	cli_progress_init(&progress, "backed up", a->progress_mode);
	a->options.hooks.tick = cli_progress_tick;
	a->options.hooks.tick_arg = &progress;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	b = sb_backup_begin(&a->options, &err);
	if (b == NULL)
		return cli_report_error(&err);
	/* Walked again, each item into the backup as it is found (the first walk only counted). */
	ok = source_tree_scan(a->source, &again, add_item, add_files, b, &err) &&
		all_files_read(b, &err);
	source_tree_free(&again);
	if (!ok)
		sb_backup_abort(b);
	else
		ok = sb_backup_finish(b, &m, &err);
	progress.last.raw_bytes_total = tree->total_bytes;
	cli_progress_done(&progress, NULL);
	if (!ok)
		return cli_report_error(&err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_summary(m, (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9);
	sb_manifest_free(m);
	return EXIT_OK;
}

int
cmd_create(int argc, char **argv)
{
	CreateArgs	a;
	SourceTree	tree;
	SbError		err;
	time_t		now = time(NULL);
	int			rc;

	memset(&a, 0, sizeof(a));
	a.options.codec = SB_CODEC_ZSTD;
	a.options.level = 1;
	a.options.balance = SB_BALANCE_ADAPTIVE;
	a.options.detect_holes = true;

	/*
	 * Buffered writes make every destination look fast until the final sync,
	 * so adaptive balance would split by the page cache, not by the devices.
	 */
	a.options.direct_io = true;
	a.options.tool = SB_TOOL_NAME;
	strftime(a.default_name, sizeof(a.default_name), "%Y%m%dT%H%M%SZ", gmtime(&now));
	a.options.name = a.default_name;
	if ((rc = parse_args(argc, argv, &a)) >= 0)
		return rc;
	a.options.destinations = a.dests;
	a.options.ndestinations = a.ndests;
	a.options.weights = a.weights_text ? a.weights : NULL;
	a.options.max_rates = a.max_rate_text ? a.max_rates : NULL;
	if (a.key_file != NULL && !sb_key_load(a.key_file, &a.key, &err))
		return cli_report_error(&err);
	a.options.encryption_key = a.key_file != NULL ? &a.key : NULL;
	a.options.spill_dir = spill_folder(&a);
	/* the engine refuses one too, as bad input (what SQL callers are told); here it is "not found" */
	if ((rc = cli_destinations_there("destination", a.dests, a.ndests)) != EXIT_OK)
	{
		sb_key_clear(&a.key);
		return rc;
	}
	if (!check_server_stopped(a.source, &err))
	{
		sb_key_clear(&a.key);
		return cli_report_error(&err);
	}
	if (!source_tree_scan(a.source, &tree, NULL, NULL, NULL, &err) || !check_not_nested(&a, &tree, &err) ||
		!describe_source(&a, &tree, &err))
		rc = cli_report_error(&err);
	else
		rc = run_backup(&a, &tree);
	free(a.metadata);
	source_tree_free(&tree);
	sb_key_clear(&a.key);
	return rc;
}
