/*
 * cmd_list.c
 *		"stripebackup list DEST...": the backups in one or more destinations,
 *		newest first, one row each (list_rows.c), as a table or as JSON
 *		(json_out.c, docs/JSON.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "json_out.h"
#include "list_rows.h"
#include "stripebackup/sb_store.h"

enum
{
	LONG_OUTPUT = 256,
	LONG_KEY_FILE
};

typedef struct ListArgs
{
	bool		json;
	const char *key_file;
} ListArgs;

static void
list_usage(void)
{
	printf("%s list lists the backups found in one or more destinations, newest first.\n\n", progname);
	printf("Usage:\n  %s list DEST... [OPTION]...\n\n", progname);
	printf("DEST is a destination (a folder, or s3://bucket/prefix) that backups were\n"
		   "written to; a backup striped over several of the DESTs given is one row.\n\n");
	printf("Options:\n");
	printf("      --output=FORMAT             text (default) or json (docs/JSON.md)\n");
	printf("      --encryption-key-file=FILE  opens encrypted backups' manifests\n");
	printf("  -h, --help                      show this help\n");
	printf("\nStatus of a backup, from cheap checks only (no stripe is read):\n"
		   "  complete    its manifest and every stripe there, sizes as recorded, a manifest\n"
		   "              copy of the same size beside every stripe\n"
		   "  incomplete  stripe files without a manifest: a backup that did not complete\n"
		   "  damaged     a manifest or stripe missing, of another size, or refused\n"
		   "  unknown     encrypted, and no --encryption-key-file to open its manifest\n"
		   "\"%s verify LOCATION\" reads every stripe and checks every checksum.\n", progname);
	printf("\nkept: stripe_keep() kept the backup (its keep.json label); a note follows the\n"
		   "table.  The label is not authenticated: shown, never acted on.\n");
	printf("\nExit status 0 when every backup listed is complete (or unknown), 1 when a\n"
		   "destination is not there or cannot be listed (the others are listed), 2 bad\n"
		   "usage, 3 when a backup listed is damaged or incomplete.\n");
}

static int
list_option_flag(int c)
{
	(void) c;
	return 0;
}

static int
apply_list_option(void *arg, int c, const char *value)
{
	ListArgs   *a = arg;

	if (c == LONG_KEY_FILE)
		a->key_file = value;
	else if (c == LONG_OUTPUT && !cli_parse_output(value, &a->json))
		return cli_usage_error("list", "--output \"%s\": text or json", value);
	return -1;
}

/* "0/5000028 to 0/5000100 on timeline 1", "none (cold)" */
static const char *
wal_range(const ListRow *r, char *buf, size_t len)
{
	if (r->uuid[0] == '\0')
		snprintf(buf, len, "?");
	else if (r->start_lsn == NULL)
		snprintf(buf, len, "none (cold)");
	else
		snprintf(buf, len, "%s-%s tl %u", r->start_lsn, r->stop_lsn ? r->stop_lsn : "?", r->timeline);
	return buf;
}

/* "full", "diff of NAME", "incr of NAME" */
static const char *
type_text(const ListRow *r, char *buf, size_t len)
{
	if (r->uuid[0] == '\0')
		snprintf(buf, len, "?");
	else if (r->parent_name == NULL)
		snprintf(buf, len, "%s", sb_backup_type_name(r->type));
	else
		snprintf(buf, len, "%s of %s", sb_backup_type_name(r->type), r->parent_name);
	return buf;
}

static void
print_row(const ListRow *r)
{
	char		type[160],
				data[32],
				stored[32],
				wal[96];
	bool		known = r->uuid[0] != '\0';

	printf("%-24s %-24s %-10s %-20s %-20s %-10s %-10s %-34s %-9s %s\n", r->name, type_text(r, type, sizeof(type)),
		   list_status_name(r->status), r->started_at ? r->started_at : "?",
		   r->finished_at ? r->finished_at : "?",
		   known ? cli_format_bytes(r->data_bytes, data, sizeof(data)) : "?",
		   known ? cli_format_bytes(r->stored_bytes, stored, sizeof(stored)) : "?",
		   wal_range(r, wal, sizeof(wal)), r->encrypted ? "yes" : known ? "no" : "?",
		   r->kept ? "kept" : known ? "no" : "?");
}

/* "NAME: kept: NOTE", the note (anyone's text) escaped for the terminal. */
static void
print_note(const ListRow *r)
{
	if (!r->kept || r->note == NULL)
		return;
	printf("%s: kept: ", r->name);
	cli_print_safe(stdout, r->note);
	putchar('\n');
}

static void
print_table(const ListRows *rows)
{
	size_t		i;
	uint32_t	k;

	printf("%-24s %-24s %-10s %-20s %-20s %-10s %-10s %-34s %-9s %s\n", "backup", "type", "status", "started",
		   "finished", "data", "stored", "WAL", "encrypted", "kept");
	for (i = 0; i < rows->count; i++)
		print_row(&rows->rows[i]);
	for (i = 0; i < rows->count; i++)
		print_note(&rows->rows[i]);
	for (i = 0; i < rows->count; i++)
	{
		const ListRow *r = &rows->rows[i];

		if (r->problem == NULL)
			continue;
		printf("%s: %s: %s\n", r->name, list_status_name(r->status), r->problem);
		for (k = 0; k < r->nfolders; k++)
			printf("  in %s\n", r->folders[k]);
	}
	printf("%zu backup(s)\n", rows->count);
}

/* 3 when a backup is damaged or incomplete, else 1 when a destination could not be listed, else 0. */
static int
list_status(const ListRows *rows)
{
	size_t		i;

	for (i = 0; i < rows->count; i++)
		if (rows->rows[i].status == LIST_DAMAGED || rows->rows[i].status == LIST_INCOMPLETE)
			return EXIT_DAMAGED;
	return rows->missing_destinations + rows->unlisted_destinations > 0 ? EXIT_NOT_FOUND : EXIT_OK;
}

/* List DESTS as A says; the exit status. */
static int
list_destinations(const ListArgs *a, const char *const *dests, uint32_t ndests, const SbKey *key)
{
	ListRows	rows;
	int			rc;

	if (!list_rows_gather(dests, ndests, key, &rows))
	{
		list_rows_free(&rows);
		fprintf(stderr, "%s: error: out of memory listing backups\n", progname);
		return EXIT_FAILED;
	}
	rc = list_status(&rows);
	if (a->json)
	{
		if (!json_print_list(dests, ndests, &rows))
			rc = EXIT_FAILED;
	}
	else
		print_table(&rows);
	list_rows_free(&rows);
	return rc;
}

int
cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, LONG_OUTPUT},
		{"encryption-key-file", required_argument, NULL, LONG_KEY_FILE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	ListArgs	a = {0};
	SbKey		key;
	SbError		err;
	int			rc,
				i;

	if ((rc = cli_parse_options(argc, argv, "h", longopts, "list", 0, list_option_flag, apply_list_option,
								&a, list_usage)) >= 0)
		return rc;
	if (optind >= argc)
		return cli_usage_error("list", "at least one DEST is required");
	if (argc - optind > SB_MAX_STRIPES)
		return cli_usage_error("list", "more than %d destinations", SB_MAX_STRIPES);
	for (i = optind; i < argc; i++)
		if (!sb_store_check_destination(argv[i], "destination", &err))
			return cli_usage_error("list", "%s", err.message);
	memset(&key, 0, sizeof(key));
	if (a.key_file != NULL && !sb_key_load(a.key_file, &key, &err))
		return cli_report_error(&err);
	rc = list_destinations(&a, (const char *const *) argv + optind, (uint32_t) (argc - optind),
						   a.key_file != NULL ? &key : NULL);
	sb_key_clear(&key);
	return rc;
}
