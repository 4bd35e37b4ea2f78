/*
 * read_args.h
 *		Arguments of the commands that read a backup (show, plan, verify,
 *		restore, rebuild): one parser, each command saying which options it takes.
 */
#ifndef SB_READ_ARGS_H
#define SB_READ_ARGS_H

#include "cli.h"
#include "stripebackup/sb_pgrecovery.h"

#define OPT_TARGET		(1 << 0)
#define OPT_JOBS		(1 << 1)
#define OPT_STRIPE_PATH (1 << 2)
#define OPT_PROGRESS	(1 << 3)
#define OPT_DETAIL		(1 << 4)
#define OPT_JSON		(1 << 5)
#define OPT_KEEP		(1 << 6)
#define OPT_TS_MAPPING	(1 << 7)
#define OPT_IO			(1 << 8)
#define OPT_RECOVERY	(1 << 9)	/* --target-time ... */
#define OPT_ARCHIVE		(1 << 10)	/* --archive */
#define OPT_STANDBY		(1 << 11)	/* --standby, --primary-conninfo, --primary-slot-name */
#define OPT_DELTA		(1 << 12)	/* --delta */
#define OPT_ARCHIVE_MODE (1 << 13)	/* --archive-mode: the copy's archiving */
#define OPT_OWNER		(1 << 14)	/* --owner: who the files of a restore as root belong to */
#define OPT_OUTPUT		(1 << 15)	/* --output=text|json */
#define OPT_REBUILD		(1 << 16)	/* --stripe, --dest, --force */
#define OPT_ARCHIVE_REDUNDANCY (1 << 17)	/* --archive-redundancy: restore_command's wal-get --redundancy */

typedef struct ReadArgs
{
	const char *command;
	const char *location;
	const char *target;
	const char *stripe_paths[SB_MAX_STRIPES];
	uint32_t	nstripe_paths;
	const char *ts_mappings[256];
	uint32_t	nts_mappings;
	uint32_t	jobs;			/* 0 = default */
	SbIoMethod	io_method;
	uint32_t	queue_depth;	/* 0 = default */
	bool		has_max_rates;
	double		max_rates[SB_MAX_STRIPES];	/* MB/s read per stripe */
	uint64_t	max_memory;		/* bytes; 0 = the engine's default limit */
	int			progress_mode;
	bool		detail;
	bool		json;			/* show --json: the whole manifest */
	bool		output_json;	/* --output=json (json_out.h) */
	bool		keep_on_error;
	SbRecoveryTarget recovery;	/* kind SB_RECOVERY_NONE without a --target-* option */
	char	   *archive[SB_MAX_STRIPES];	/* --archive (owned); none = the backup's destinations */
	uint32_t	narchive;
	int			archive_redundancy; /* --archive-redundancy; -1: not given */
	SbStandby	standby;		/* --standby and what it streams from */
	bool		delta;			/* --delta: refresh a stopped copy in place */
	bool		one_backup;		/* open the backup alone, not the chain it completes */
	SbEntryKeep keep;			/* what to keep of the entries: all but the
								 * file stamps unless a command says */
	const char *owner;			/* --owner */
	const char *key_file;		/* --encryption-key-file */
	SbKey		key;			/* what it holds, loaded by read_args_parse */
	bool		has_key;
	bool		allow_unencrypted;	/* --allow-unencrypted: a backup in the
									 * clear is read under a key too */
	uint32_t	rebuild_stripe; /* rebuild --stripe K; 0 when not given */
	const char *rebuild_dest;	/* rebuild --dest DIR */
	bool		force;			/* rebuild --force: a stripe that is not lost too */
} ReadArgs;

/*
 * Parse ARGV for COMMAND, allowing the options in ALLOWED; USAGE prints the
 * command's help.  Returns -1 to go on, or the exit status.
 */
extern int	read_args_parse(int argc, char **argv, const char *command, int allowed,
							void (*usage) (void), ReadArgs *args);

/* Free what parsing allocated (--archive), and wipe the key. */
extern void read_args_free(ReadArgs *args);

/* Open the archive at the location (its notes printed as warnings), with any --stripe-path applied. */
extern SbArchive *read_args_open(const ReadArgs *args, SbError *err);

/* The read settings given (jobs, I/O, rates, memory), reporting progress to PROGRESS. */
extern void read_args_read_options(const ReadArgs *args, CliProgress *progress,
								   SbReadOptions *options);

#endif							/* SB_READ_ARGS_H */
