/*
 * wal_args.h
 *		Arguments of the WAL archive's commands (wal-push, wal-get, wal-list,
 *		wal-verify): one parser, each command saying which options it takes.
 *
 * The archive is "--archive DEST[,DEST...]" (repeatable) with
 * "--system-identifier N", or, for the commands that only read, one
 * LOCATION: an archive folder DEST/wal/<system identifier>.  Every command
 * takes "--encryption-key-file FILE": the archive is sealed with that key
 * (wal-push seals, the others take only files sealed with it).
 */
#ifndef SB_WAL_ARGS_H
#define SB_WAL_ARGS_H

#include "cli.h"
#include "stripebackup/sb_wal.h"

#define WAL_OPT_PUSH		(1 << 0)	/* --compression --level --weights --balance --jobs
										 * --segment-size --max-memory */
#define WAL_OPT_GET			(1 << 1)	/* --prefetch --spool --jobs */
#define WAL_OPT_RANGE		(1 << 2)	/* --from --to */
#define WAL_OPT_LOCATION	(1 << 3)	/* a LOCATION instead of --archive */
#define WAL_OPT_OUTPUT		(1 << 4)	/* --output=text|json */
#define WAL_OPT_REDUNDANCY	(1 << 5)	/* --redundancy */
#define WAL_OPT_REPAIR		(1 << 6)	/* --repair */

typedef struct WalArgs
{
	const char *command;
	char	   *dests[SB_MAX_STRIPES];	/* owned */
	uint32_t	ndests;
	bool		has_sysid;
	bool		json;			/* --output=json */
	uint64_t	sysid;
	SbCodec		codec;
	int			level;
	const char *weights_text;
	double		weights[SB_MAX_STRIPES];
	SbBalance	balance;
	uint32_t	jobs;			/* 0 = default */
	uint32_t	segment_size;	/* 0 = the file's size (wal-push) */
	uint64_t	max_memory;
	uint32_t	redundancy;		/* --redundancy M: each segment in M + 1 destinations */
	bool		repair;			/* --repair: copies made again where too few are */
	uint32_t	prefetch;
	const char *spool;
	const char *from;
	const char *to;
	const char *args[2];		/* the positional arguments */
	int			nargs;
	const char *key_file;		/* --encryption-key-file */
	bool		has_key;
	SbKey		key;			/* loaded from it; wiped by wal_args_free */
} WalArgs;

/*
 * Parse ARGV for COMMAND, allowing the options in ALLOWED and NARGS_MIN to
 * NARGS_MAX positional arguments; USAGE prints the command's help.
 * Returns -1 to go on, or the exit status.  Free with wal_args_free.  The
 * key file is not read yet: wal_args_load_key does, so that each command
 * says how its failure ends.
 */
extern int	wal_args_parse(int argc, char **argv, const char *command, int allowed, int nargs_min,
						   int nargs_max, void (*usage) (void), WalArgs *args);
extern void wal_args_free(WalArgs *args);

/* Read --encryption-key-file, if given; SB_EKEY naming the file (never its content) otherwise. */
extern bool wal_args_load_key(WalArgs *args, SbError *err);

/* The archive the arguments name (and its key, once loaded). */
extern void wal_args_dests(const WalArgs *args, SbWalDests *dests);

/* The exit status of a WAL command's ERR (as cli_report_error, which prints it). */
extern int	wal_report_error(const SbError *err);

#endif							/* SB_WAL_ARGS_H */
