/*
 * main.c
 *		The stripebackup command: dispatch to the subcommands.
 *
 * It works without a running server, from any one destination's copy of a
 * backup; "create" makes a cold backup of a stopped cluster (or any tree).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "stripebackup/sb_version.h"

const char *progname = "stripebackup";

static void
usage(void)
{
	printf("%s makes and restores weighted-stripe backups of PostgreSQL clusters.\n\n", progname);
	printf("Usage:\n");
	printf("  %s create  --source DIR --dest DIR... [OPTION]...  back up a stopped cluster\n", progname);
	printf("  %s show    LOCATION                                 describe a backup\n", progname);
	printf("  %s list    DEST... [--output=json]                  the backups in destinations\n", progname);
	printf("  %s plan    LOCATION [--target DIR]                  what a restore will read\n", progname);
	printf("  %s verify  LOCATION                                 check every stripe and checksum\n", progname);
	printf("  %s restore LOCATION --target DIR [OPTION]...        restore into an empty directory\n", progname);
	printf("  %s report  LOCATION [--svg FILE]                    how each stripe did, as a chart\n", progname);
	printf("  %s rebuild LOCATION --stripe K --dest DIR           write a lost stripe again\n", progname);
	printf("\nThe WAL archive (point-in-time recovery):\n");
	printf("  %s wal-push   --archive DEST[,DEST...] --system-identifier N WALFILE PATH   archive_command\n", progname);
	printf("  %s wal-get    --archive DEST[,DEST...] --system-identifier N WALFILE PATH   restore_command\n", progname);
	printf("  %s wal-list   --archive DEST[,DEST...] --system-identifier N | LOCATION     what it holds\n", progname);
	printf("  %s wal-verify --archive ... | LOCATION [--from SEG --to SEG]               check every file\n", progname);
	printf("\nA running server:\n");
	printf("  %s check [-d CONNINFO] [--timeout SECONDS] [--nagios]   run stripe_check()\n", progname);
	printf("\nLOCATION is the backup's folder in any one destination (DEST/NAME); for the\n"
		   "WAL commands, an archive folder DEST/wal/<system identifier>.\n");
	printf("show, list, plan, verify, rebuild, wal-list, wal-verify and check take --output=json: one JSON\n"
		   "document whose fields docs/JSON.md (and stripebackup(1)) describe.\n");
	printf("Run \"%s COMMAND --help\" for a command's options.\n", progname);
	cli_print_exit_table();
}

int
main(int argc, char **argv)
{
	static const struct
	{
		const char *name;
		int			(*fn) (int, char **);
	}			commands[] =
	{
		{"create", cmd_create},
		{"show", cmd_show},
		{"list", cmd_list},
		{"plan", cmd_plan},
		{"verify", cmd_verify},
		{"restore", cmd_restore},
		{"report", cmd_report},
		{"wal-push", cmd_wal_push},
		{"wal-get", cmd_wal_get},
		{"wal-list", cmd_wal_list},
		{"wal-verify", cmd_wal_verify},
		{"check", cmd_check},
		{"rebuild", cmd_rebuild},
	};
	size_t		i;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
	{
		usage();
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
	{
		printf("%s\n", SB_TOOL_NAME);
		return EXIT_OK;
	}
	cli_install_signal_handlers();
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command \"%s\"\nTry \"%s --help\" for more information.\n",
			progname, argv[1], progname);
	return EXIT_USAGE;
}
