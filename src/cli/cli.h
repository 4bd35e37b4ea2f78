/*
 * cli.h
 *		The stripebackup command: its subcommands and what they share.
 *
 * Exit status (stable; scripts rely on it; README's table says the same,
 * and every command's --help):
 *		0    success: the backup or archive is good, listed, restored
 *		1    not found, or the operation could not be done: a path that is
 *		     not there or holds no backup, a WAL file not in the archive, an
 *		     I/O error, a full device, a cancel; nothing says a backup is bad
 *		2    bad usage or refused input (unknown option, non-empty target, ...)
 *		3    a backup or WAL archive that is there is damaged or incomplete
 *		     (checksum, missing stripe, no manifest beside its stripes, ...)
 *		126  wal-get only: recovery must stop (below)
 */
#ifndef SB_CLI_H
#define SB_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_catalog.h"
#include "stripebackup/sb_error.h"
#include "stripebackup/sb_progress.h"

#define EXIT_OK 0
#define EXIT_NOT_FOUND 1
#define EXIT_FAILED 1			/* the same status: "try again, or fix the path" */
#define EXIT_USAGE 2
#define EXIT_DAMAGED 3
#define EXIT_DEGRADED 4			/* damaged, but its redundancy made up for all of it: it restores */
/*
 * wal-get only: a WAL file damaged, or a destination missing so that its
 * absence cannot be told.  PostgreSQL takes any status below 126 from
 * restore_command as "not available" and ends recovery there, promoting a
 * copy that silently lacks what followed; above 125 it stops recovery.
 */
#define EXIT_STOP_RECOVERY 126

extern const char *progname;

extern int	cmd_create(int argc, char **argv);
extern int	cmd_show(int argc, char **argv);
extern int	cmd_list(int argc, char **argv);
extern int	cmd_plan(int argc, char **argv);
extern int	cmd_verify(int argc, char **argv);
extern int	cmd_restore(int argc, char **argv);
extern int	cmd_report(int argc, char **argv);
extern int	cmd_wal_push(int argc, char **argv);
extern int	cmd_wal_get(int argc, char **argv);
extern int	cmd_wal_list(int argc, char **argv);
extern int	cmd_wal_verify(int argc, char **argv);
extern int	cmd_check(int argc, char **argv);
extern int	cmd_rebuild(int argc, char **argv);

/* Print "stripebackup: error: MESSAGE" and return the exit status for ERR. */
extern int	cli_report_error(const SbError *err);

/*
 * The same for ERR from opening the backup at LOCATION: when it says
 * something is missing, a LOCATION that is not there or holds no backup
 * is EXIT_NOT_FOUND (said so), not a damaged backup (location.c).
 */
extern int	cli_report_open_error(const char *location, const SbError *err);

/*
 * ERR says LOCATION, of KIND, holds no backup: it does not exist, is a
 * destination (list it), or holds something else; SB_ENOTFOUND, false.
 */
extern bool cli_place_not_found(const char *location, SbPlaceKind kind, SbError *err);

/*
 * Each of the N destinations DESTS (WHAT they are, for the message) that is
 * known not to be there without a request (sb_catalog_missing: a local
 * folder, an unmounted device) is said: EXIT_NOT_FOUND; else EXIT_OK.
 */
extern int	cli_destinations_there(const char *what, const char *const *dests, uint32_t n);

/*
 * As cli_report_error, for a failure to find what was asked (a location,
 * a destination, a backup to pick): something missing is EXIT_NOT_FOUND.
 */
extern int	cli_report_lookup_error(const SbError *err);

/* The exit-status table, for the end of a command's --help. */
extern void cli_print_exit_table(void);

struct option;

/*
 * The option loop every command's parser shares: --help prints USAGE
 * (exit 0); an option whose FLAG_OF is not within ALLOWED is a usage
 * error; APPLY(ARGS, c, optarg) takes each other one and returns -1 to go
 * on or an exit status.  Returns -1 once every option was taken.
 */
extern int	cli_parse_options(int argc, char **argv, const char *shortopts,
							  const struct option *longopts, const char *command, int allowed,
							  int (*flag_of) (int), int (*apply) (void *, int, const char *),
							  void *args, void (*usage) (void));

/* Print a usage error with a hint to --help; returns EXIT_USAGE. */
extern int	cli_usage_error(const char *command, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/* "--output FORMAT": "text" or "json" (json_out.c) into *JSON; false for anything else. */
extern bool cli_parse_output(const char *value, bool *json);

/* Parse a whole decimal number in [MIN, MAX] (sb_policy_parse_int). */
extern bool cli_parse_int(const char *text, long min, long max, long *out);

/* Parse a size such as "1048576", "256k", "1M" (sb_policy_parse_size). */
extern bool cli_parse_size(const char *text, uint64_t *out);

/* A backup's UUID as 32 lowercase hexadecimal digits into OUT. */
extern char *cli_format_id(const uint8_t uuid[16], char out[33]);

/* TEXT to OUT with its control characters (C0, DEL, C1) shown as escapes (safe_text.c). */
extern void cli_print_safe(FILE *out, const char *text);

/* "1.5 GiB" and the like. */
extern const char *cli_format_bytes(uint64_t bytes, char *buf, size_t len);

/*
 * "--max-rate R" or "R1,R2,...": MB/s for every stripe or one each (0 = no
 * limit) into RATES[SB_MAX_STRIPES], *COUNT the number given, by
 * sb_policy_parse_rates; a usage error of COMMAND naming the value otherwise.
 */
extern bool cli_parse_rates(const char *command, const char *text, double *rates,
							uint32_t *count);

/* "--max-memory SIZE", above 0; a usage error of COMMAND otherwise. */
extern bool cli_parse_max_memory(const char *command, const char *text, uint64_t *bytes);

/* Where the command keeps private files (a manifest's entries): $TMPDIR, else /tmp. */
extern const char *cli_temp_dir(void);

/* Print what opening the archive found amiss: "stripebackup: warning: ..." on stderr. */
extern void cli_print_notes(const SbArchive *a);

/* Apply "--stripe-path K=DIR" to an opened archive. */
/*
 * Add the WAL archive destinations of OPTION's "DEST[,DEST...]" TEXT to
 * DESTS (strdup'd; *N of them): absolute paths, none empty.  Returns -1 to
 * go on, or the exit status.
 */
extern int	cli_add_destinations(const char *command, const char *option, const char *text,
								 char **dests, uint32_t *n);

extern bool cli_apply_stripe_path(SbArchive *a, const char *arg, SbError *err);

/* Progress line on standard error, as pg_basebackup -P prints it. */
typedef struct CliProgress
{
	bool		enabled;
	const char *verb;			/* "backed up", "restored", "verified" */
	double		last_print;
	int			last_width;
	SbProgress	last;			/* the latest figures the engine gave */
} CliProgress;

/* Decide whether to show progress: forced on/off, or when stderr is a terminal. */
extern void cli_progress_init(CliProgress *p, const char *verb, int mode);

/* A tick function for the engine that prints the line about once a second. */
extern bool cli_progress_tick(void *arg, const SbProgress *progress);

/* Print the final line (PROGRESS, or the latest figures if NULL) and a newline. */
extern void cli_progress_done(CliProgress *p, const SbProgress *progress);

#define PROGRESS_AUTO 0
#define PROGRESS_ON 1
#define PROGRESS_OFF 2

/* SIGINT/SIGTERM ask the running operation to stop cleanly. */
extern void cli_install_signal_handlers(void);
extern bool cli_stop_requested(void);

#endif							/* SB_CLI_H */
