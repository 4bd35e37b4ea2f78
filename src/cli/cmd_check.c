/*
 * cmd_check.c
 *		"stripebackup check": runs stripe_check() on a running server (over
 *		libpq, the connection given as psql takes it) and turns its rows
 *		into an exit status a scheduler or a monitoring system reads:
 *		0 no failure (warnings are printed), 1 a check failed or the server
 *		could not be asked; with --nagios one line and Nagios's statuses,
 *		0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
 *
 * The command's other subcommands read backups without a server; this one
 * asks the server, which alone knows its settings, its archiver and its
 * history.  Its own statements name everything by schema under a pinned
 * search_path, as the extension's do (docs/SECURITY.md): the database it
 * connects to may be anyone's.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "cli.h"
#include "json_out.h"

#define NAGIOS_OK 0
#define NAGIOS_WARNING 1
#define NAGIOS_CRITICAL 2
#define NAGIOS_UNKNOWN 3

typedef struct CheckArgs
{
	const char *conninfo;		/* NULL: libpq's defaults (PGHOST, PGDATABASE, ...) */
	long		timeout;		/* seconds stripe_check() waits for the WAL switch */
	bool		nagios;
	bool		json;			/* --output=json: one document (docs/JSON.md) */
} CheckArgs;

/* What the rows said. */
typedef struct CheckTally
{
	int			checks;
	int			warnings;
	int			failures;
	char		first[512];		/* the first failure (else warning): check and detail */
} CheckTally;

static void
check_usage(void)
{
	printf("%s check runs stripe_check() on a running server: the settings, the WAL\n"
		   "archive (a segment switched must reach it), every destination, the newest\n"
		   "backups.\n\n", progname);
	printf("Usage:\n  %s check [-d CONNINFO] [--timeout SECONDS] [--nagios | --output=json]\n\n",
		   progname);
	printf("Options:\n");
	printf("  -d, --dbname=CONNINFO  the database where the extension is: a name or a libpq\n"
		   "                         connection string (else PGHOST, PGPORT, PGDATABASE, ...)\n");
	printf("      --timeout=SECONDS  how long a switched WAL segment may take to be archived\n"
		   "                         (default 60)\n");
	printf("      --nagios           one line, and Nagios's exit statuses\n");
	printf("      --output=FORMAT    text (default) or json: one document, every check (docs/JSON.md)\n");
	printf("  -h, --help             show this help\n");
	printf("\nExit status: 0 no check failed (warnings are printed), 1 a check failed or the\n"
		   "server could not be asked, 2 bad usage.  With --nagios: 0 OK, 1 WARNING,\n"
		   "2 CRITICAL, 3 UNKNOWN (no answer, or bad usage).\n");
}

static int
parse_args(int argc, char **argv, CheckArgs *a)
{
	static const struct option longopts[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"timeout", required_argument, NULL, 't'},
		{"nagios", no_argument, NULL, 'n'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	int			c;

	a->conninfo = NULL;
	a->timeout = 60;
	a->nagios = false;
	a->json = false;
	while ((c = getopt_long(argc, argv, "d:h", longopts, NULL)) != -1)
	{
		if (c == 'h')
		{
			check_usage();
			return EXIT_OK;
		}
		if (c == 'd')
			a->conninfo = optarg;
		else if (c == 'n')
			a->nagios = true;
		else if (c == 'o')
		{
			if (!cli_parse_output(optarg, &a->json))
				return cli_usage_error("check", "--output \"%s\" must be text or json", optarg);
		}
		else if (c != 't' || !cli_parse_int(optarg, 1, 86400, &a->timeout))
			return c == 't' ? cli_usage_error("check", "--timeout \"%s\" must be 1 to 86400 seconds", optarg)
				: cli_usage_error("check", "unknown option");
	}
	if (optind < argc)
		return cli_usage_error("check", "unexpected argument \"%s\"", argv[optind]);
	if (a->nagios && a->json)
		return cli_usage_error("check", "--nagios and --output=json are two answers: give one");
	return -1;
}

/* The extension's schema, quoted, as the connection's database has it; NULL (MESSAGE) when absent. */
static char *
extension_schema(PGconn *conn, char *message, size_t len)
{
	PGresult   *r = PQexec(conn,
						   "SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', false),"
						   " pg_catalog.quote_ident(n.nspname::pg_catalog.text)"
						   " FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n"
						   " ON n.oid OPERATOR(pg_catalog.=) e.extnamespace"
						   " WHERE e.extname OPERATOR(pg_catalog.=) 'stripebackup'::pg_catalog.name");
	char	   *schema = NULL;

	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		snprintf(message, len, "%s", PQerrorMessage(conn));
	else if (PQntuples(r) == 0)
		snprintf(message, len, "the extension stripebackup is not installed in database \"%s\"", PQdb(conn));
	else
		schema = strdup(PQgetvalue(r, 0, 1));
	PQclear(r);
	return schema;
}

/* Run stripe_check(); its rows, or NULL (MESSAGE). */
static PGresult *
run_check(PGconn *conn, const CheckArgs *a, char *message, size_t len)
{
	char	   *schema = extension_schema(conn, message, len);
	char		sql[512];
	char		timeout[32];
	const char *params[1] = {timeout};
	PGresult   *r;

	if (schema == NULL)
		return NULL;
	snprintf(timeout, sizeof(timeout), "%ld seconds", a->timeout);
	snprintf(sql, sizeof(sql), "SELECT c.\"check\", c.severity, c.detail, c.hint FROM %s.stripe_check("
			 "timeout => $1::pg_catalog.interval) c", schema);
	free(schema);
	r = PQexecParams(conn, sql, 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) == PGRES_TUPLES_OK)
		return r;
	snprintf(message, len, "%s", PQerrorMessage(conn));
	PQclear(r);
	return NULL;
}

/* Count row I of R, and print it unless QUIET (a line or a document comes at the end). */
static void
take_row(const PGresult *r, int i, bool quiet, CheckTally *t)
{
	const char *check = PQgetvalue(r, i, 0);
	const char *severity = PQgetvalue(r, i, 1);
	const char *detail = PQgetvalue(r, i, 2);
	bool		failure = strcmp(severity, "failure") == 0;
	bool		warning = strcmp(severity, "warning") == 0;

	t->checks++;
	if ((failure && t->failures == 0) || (warning && t->failures == 0 && t->warnings == 0))
		snprintf(t->first, sizeof(t->first), "%s: %s", check, detail);
	t->failures += failure;
	t->warnings += warning;
	if (quiet)
		return;
	printf("%-8s %s: %s\n", severity, check, detail);
	if (!PQgetisnull(r, i, 3))
		printf("         hint: %s\n", PQgetvalue(r, i, 3));
}

/* The Nagios line and status of T. */
static int
nagios_report(const CheckTally *t)
{
	const char *state = t->failures > 0 ? "CRITICAL" : t->warnings > 0 ? "WARNING" : "OK";

	if (t->failures > 0 || t->warnings > 0)
		printf("STRIPEBACKUP %s - %d failed, %d warnings: %s | failures=%d warnings=%d checks=%d\n", state,
			   t->failures, t->warnings, t->first, t->failures, t->warnings, t->checks);
	else
		printf("STRIPEBACKUP OK - %d checks passed | failures=0 warnings=0 checks=%d\n", t->checks, t->checks);
	return t->failures > 0 ? NAGIOS_CRITICAL : t->warnings > 0 ? NAGIOS_WARNING : NAGIOS_OK;
}

/* Row I of R as {"check", "severity", "ok", "detail", "hint"}; false when out of memory. */
static bool
json_add_row(cJSON *checks, const PGresult *r, int i)
{
	cJSON	   *row = cJSON_CreateObject();

	if (row != NULL &&
		json_add_string(row, "check", PQgetvalue(r, i, 0)) &&
		json_add_string(row, "severity", PQgetvalue(r, i, 1)) &&
		cJSON_AddBoolToObject(row, "ok", strcmp(PQgetvalue(r, i, 1), "ok") == 0) != NULL &&
		json_add_string(row, "detail", PQgetisnull(r, i, 2) ? NULL : PQgetvalue(r, i, 2)) &&
		json_add_string(row, "hint", PQgetisnull(r, i, 3) ? NULL : PQgetvalue(r, i, 3)) &&
		cJSON_AddItemToArray(checks, row))
		return true;
	cJSON_Delete(row);
	return false;
}

/* The document of R's rows (T counted them); the exit status as the text's. */
static int
json_report(const PGresult *r, const CheckTally *t)
{
	cJSON	   *doc = json_document("check");
	cJSON	   *checks = doc != NULL ? cJSON_AddArrayToObject(doc, "checks") : NULL;
	bool		complete = checks != NULL &&
		json_add_string(doc, "status", t->failures > 0 ? "failure" : t->warnings > 0 ? "warning" : "ok") &&
		json_add_count(doc, "failures", t->failures, true) &&
		json_add_count(doc, "warnings", t->warnings, true);

	for (int i = 0; complete && i < PQntuples(r); i++)
		complete = json_add_row(checks, r, i);
	if (!json_emit(doc, complete))
		return EXIT_FAILED;
	return t->failures > 0 ? EXIT_FAILED : EXIT_OK;
}

/* No answer: said as a Nagios UNKNOWN line, or an error. */
static int
no_answer(const CheckArgs *a, const char *message)
{
	char		line[1024];
	size_t		n;

	snprintf(line, sizeof(line), "%s", message);
	n = strlen(line);
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	/* libpq's messages run over lines; Nagios reads the first alone. */
	for (n = 0; line[n] != '\0'; n++)
		if (line[n] == '\n' || line[n] == '\t')
			line[n] = ' ';
	if (a->nagios)
	{
		printf("STRIPEBACKUP UNKNOWN - %s\n", line);
		return NAGIOS_UNKNOWN;
	}
	fprintf(stderr, "%s: error: %s\n", progname, line);
	return EXIT_FAILED;
}

int
cmd_check(int argc, char **argv)
{
	CheckArgs	a;
	CheckTally	t = {0};
	char		message[1024] = "";
	PGconn	   *conn;
	PGresult   *r = NULL;
	int			rc = parse_args(argc, argv, &a);
	int			i;

	if (rc >= 0)
		return rc == EXIT_USAGE && a.nagios ? NAGIOS_UNKNOWN : rc;
	conn = PQconnectdb(a.conninfo ? a.conninfo : "");
	if (PQstatus(conn) != CONNECTION_OK)
		snprintf(message, sizeof(message), "%s", PQerrorMessage(conn));
	else
		r = run_check(conn, &a, message, sizeof(message));
	PQfinish(conn);
	if (r == NULL)
		return no_answer(&a, message);
	for (i = 0; i < PQntuples(r); i++)
		take_row(r, i, a.nagios || a.json, &t);
	if (a.json)
	{
		rc = json_report(r, &t);
		PQclear(r);
		return rc;
	}
	PQclear(r);
	if (a.nagios)
		return nagios_report(&t);
	printf("%d checks: %d failed, %d warnings\n", t.checks, t.failures, t.warnings);
	return t.failures > 0 ? EXIT_FAILED : EXIT_OK;
}
