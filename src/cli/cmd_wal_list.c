/*
 * cmd_wal_list.c
 *		"stripebackup wal-list" and "stripebackup wal-verify": what a WAL
 *		archive holds, from its files' headers; and every file read whole
 *		and checked, with the segments from one to another all there.
 */
#include <stdio.h>
#include <time.h>

#include "json_out.h"
#include "wal_args.h"
#include "wal_repair.h"

static void
wal_list_usage(void)
{
	printf("%s wal-list lists what a WAL archive holds, from its files' headers.\n\n", progname);
	printf("Usage:\n  %s wal-list --archive DEST[,DEST...] --system-identifier N\n", progname);
	printf("  %s wal-list LOCATION\n\n", progname);
	printf("LOCATION is an archive folder in one destination: DEST/wal/<system identifier>.\n\n");
	printf("Options:\n");
	printf("      --archive=DEST[,DEST...]  the archive's destinations (repeatable)\n");
	printf("      --system-identifier=N     the cluster's\n");
	printf("      --encryption-key-file=FILE  the archive is sealed with this key\n");
	printf("      --output=FORMAT           text (default) or json (docs/JSON.md)\n");
	printf("  -h, --help                    show this help\n");
	printf("\nExit status 0; 1 when a destination is not there; 3 when a\n"
		   "file could not be listed (said on stderr): damaged, or with a key a file not\n"
		   "sealed with it, without one a sealed file.\n");
}

static void
wal_verify_usage(void)
{
	printf("%s wal-verify reads every file of a WAL archive and checks it, and with --from\n"
		   "and --to that every segment in between is there (across timeline switches).\n\n", progname);
	printf("Usage:\n  %s wal-verify --archive DEST[,DEST...] --system-identifier N [--from SEG --to SEG]\n",
		   progname);
	printf("  %s wal-verify LOCATION [--from SEG --to SEG]\n\n", progname);
	printf("Options:\n");
	printf("      --archive=DEST[,DEST...]  the archive's destinations (repeatable)\n");
	printf("      --system-identifier=N     the cluster's\n");
	printf("      --from=SEG, --to=SEG      segments that must all be there, SEG's included\n");
	printf("      --encryption-key-file=FILE  the archive is sealed with this key: every file\n"
		   "                                must be sealed with it\n");
	printf("      --output=FORMAT           text (default) or json (docs/JSON.md)\n");
	printf("      --redundancy=M            the archive was written with M: a segment in fewer\n"
		   "                                than M + 1 destinations is under-replicated, and a\n"
		   "                                destination not there is a problem, not the end\n");
	printf("      --repair                  first copy again, from a good copy, each segment in\n"
		   "                                fewer than M + 1 destinations and each history file\n"
		   "                                not in all of them (to the destinations there)\n");
	printf("  -h, --help                    show this help\n");
	printf("\nExit status 0 when the archive is good, 1 when a destination is not there\n"
		   "(without --redundancy), 3 when a problem or a gap was found.\n");
}

static void
print_entry(const SbWalEntry *e)
{
	char		raw[32],
				stored[32],
				when[32];
	time_t		t = (time_t) e->info.archived_at;
	struct tm	tm;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("%-42s %4u  %-10s %-10s %-5s %s\n", e->info.name, e->destination + 1,
		   cli_format_bytes(e->info.raw_bytes, raw, sizeof(raw)),
		   cli_format_bytes(e->info.stored_bytes, stored, sizeof(stored)),
		   sb_codec_name(e->info.codec), when);
}

static void
print_listing(const WalArgs *a, const SbWalListing *l)
{
	uint64_t	raw = 0,
				stored = 0;
	char		raw_text[32],
				stored_text[32];
	size_t		i;

	for (i = 0; i < a->ndests; i++)
		printf("destination %zu: %s\n", i + 1, a->dests[i]);
	if (a->has_key)
		printf("sealed with:   %s (files sealed with another key, or in the clear, are not listed)\n",
			   a->key_file);
	printf("%-42s %4s  %-10s %-10s %-5s %s\n", "WAL file", "dest", "size", "stored", "codec", "archived");
	for (i = 0; i < l->count; i++)
	{
		print_entry(&l->entries[i]);
		raw += l->entries[i].info.raw_bytes;
		stored += l->entries[i].info.stored_bytes;
	}
	printf("%zu files, %s of WAL stored in %s\n", l->count, cli_format_bytes(raw, raw_text, sizeof(raw_text)),
		   cli_format_bytes(stored, stored_text, sizeof(stored_text)));
}

/*
 * A listing's exit status: 3 when a file could not be listed (damaged, or
 * sealed otherwise), else 1 when a destination is not there, else 0.
 */
static int
listing_status(const SbWalListing *l)
{
	int			rc = EXIT_OK;
	size_t		i;

	for (i = 0; i < l->nproblems; i++)
	{
		if (l->problems[i].name[0] != '\0' || l->problems[i].code != SB_ENOTFOUND)
			return EXIT_DAMAGED;
		rc = EXIT_NOT_FOUND;
	}
	return rc;
}

int
cmd_wal_list(int argc, char **argv)
{
	WalArgs		a;
	SbWalDests	d;
	SbWalListing l;
	SbError		err;
	size_t		i;
	int			rc;

	if ((rc = wal_args_parse(argc, argv, "wal-list", WAL_OPT_LOCATION | WAL_OPT_OUTPUT, 0, 1, wal_list_usage,
							 &a)) >= 0)
	{
		wal_args_free(&a);
		return rc;
	}
	if (!wal_args_load_key(&a, &err))
	{
		rc = cli_report_error(&err);
		wal_args_free(&a);
		return rc;
	}
	wal_args_dests(&a, &d);
	if (!sb_wal_list(&d, &l, &err))
		rc = wal_report_error(&err);
	else
	{
		for (i = 0; i < l.nproblems; i++)
			fprintf(stderr, "%s: warning: %s\n", progname, l.problems[i].message);
		rc = listing_status(&l);
		if (!a.json)
			print_listing(&a, &l);
		else if (!json_print_wal_list((const char *const *) a.dests, a.ndests, a.has_key, &l))
			rc = EXIT_FAILED;
		sb_wal_listing_free(&l);
	}
	wal_args_free(&a);
	return rc;
}

/* A problem on stderr, and among the JSON document's (ARG's array, if any). */
static void
print_problem(void *arg, const char *message)
{
	cJSON	   *messages = arg;

	fprintf(stderr, "%s: problem: %s\n", progname, message);
	if (messages != NULL)
		cJSON_AddItemToArray(messages, cJSON_CreateString(message));
}

/* --from and --to: every segment between them there; a gap is one more problem (in V). */
static bool
check_range(const WalArgs *a, const SbWalDests *d, JsonWalVerify *v, SbError *err)
{
	SbWalContinuity c;

	if (a->from == NULL)
		return true;
	if (!sb_wal_check_continuity(d, a->from, a->to, 0, &c, err))
		return false;
	v->from = a->from;
	v->to = a->to;
	v->range_complete = c.complete;
	v->segments = c.segments;
	if (!c.complete)
	{
		print_problem(v->messages, c.message);
		v->problems++;
	}
	else if (!a->json)
		printf("segments %s to %s: all %llu there\n", a->from, a->to, (unsigned long long) c.segments);
	return true;
}

/* --repair: copies made again where too few are; a file that could not be is said, and is a problem of the verify too. */
static bool
repair(const WalArgs *a, const SbWalDests *d, SbError *err)
{
	uint64_t	repaired,
				failed;

	if (!wal_repair(a, d, &repaired, &failed, err))
		return false;
	fprintf(a->json ? stderr : stdout, "repair: %llu file(s) copied again, %llu could not be\n",
			(unsigned long long) repaired, (unsigned long long) failed);
	return true;
}

/* The verdict of a wal-verify that ran: said as text or as the JSON document; the exit status. */
static int
wal_verdict(const WalArgs *a, const JsonWalVerify *v)
{
	int			rc = v->problems > 0 ? EXIT_DAMAGED : EXIT_OK;

	if (a->json)
		return json_print_wal_verify((const char *const *) a->dests, a->ndests, v) ? rc : EXIT_FAILED;
	if (v->problems > 0)
		printf("WAL archive is DAMAGED or INCOMPLETE: %llu problem(s) found in %llu files\n",
			   (unsigned long long) v->problems, (unsigned long long) v->files);
	else
		printf("WAL archive is good: %llu files verified\n", (unsigned long long) v->files);
	return rc;
}

int
cmd_wal_verify(int argc, char **argv)
{
	WalArgs		a;
	SbWalDests	d;
	SbError		err;
	JsonWalVerify v = {0};
	int			rc;

	if ((rc = wal_args_parse(argc, argv, "wal-verify",
							 WAL_OPT_LOCATION | WAL_OPT_RANGE | WAL_OPT_OUTPUT | WAL_OPT_REDUNDANCY |
							 WAL_OPT_REPAIR, 0, 1,
							 wal_verify_usage, &a)) >= 0)
	{
		wal_args_free(&a);
		return rc;
	}
	if ((a.from == NULL) != (a.to == NULL))
		rc = cli_usage_error("wal-verify", "--from and --to go together");
	else if (!wal_args_load_key(&a, &err))
		rc = cli_report_error(&err);
	else if (a.json && (v.messages = cJSON_CreateArray()) == NULL)
	{
		fprintf(stderr, "%s: error: out of memory\n", progname);
		rc = EXIT_FAILED;
	}
	/*
	 * A destination not there: whether the archive is whole cannot be told,
	 * no verdict of damage.  With copies (--redundancy) the others may hold
	 * everything: the verify runs, the destination is one of its problems.
	 */
	else if (a.redundancy > 0 ||
			 (rc = cli_destinations_there("WAL archive destination", (const char *const *) a.dests,
										  a.ndests)) == EXIT_OK)
	{
		wal_args_dests(&a, &d);
		/* Repaired first: the verdict is then of the archive as it is left. */
		if ((a.repair && !repair(&a, &d, &err)) ||
			!sb_wal_verify(&d, print_problem, v.messages, &v.files, &v.problems, &err) ||
			!check_range(&a, &d, &v, &err))
			rc = wal_report_error(&err);
		else
			rc = wal_verdict(&a, &v);
	}
	cJSON_Delete(v.messages);
	wal_args_free(&a);
	return rc;
}
