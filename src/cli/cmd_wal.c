/*
 * cmd_wal.c
 *		"stripebackup wal-push" and "stripebackup wal-get": one WAL file
 *		into the archive (what an archive_command can run) and out of it
 *		(what restore_command runs).
 *
 *		archive_command = 'stripebackup wal-push --archive /mnt/a/bk,/mnt/b/bk --system-identifier N %f %p'
 *		restore_command = 'stripebackup wal-get --archive /mnt/a/bk,/mnt/b/bk --system-identifier N --prefetch 8 %f %p'
 *
 * Both are quiet when all is well.  wal-get says nothing either when the
 * archive does not hold the file: recovery asks for history files that
 * only may exist, and for the segment after the last one at the end.
 * With --encryption-key-file, wal-push seals what it archives and wal-get
 * takes only files sealed with that key.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "wal_args.h"

#define SPOOL_NAME "stripebackup-spool"

static void
wal_push_usage(void)
{
	printf("%s wal-push archives one WAL file into a WAL archive striped over several\n"
		   "destinations (what an archive_command can run; the archive module does the\n"
		   "same from inside the server).\n\n", progname);
	printf("Usage:\n  %s wal-push --archive DEST[,DEST...] --system-identifier N [OPTION]... WALFILE PATH\n\n",
		   progname);
	printf("WALFILE is the file's name (%%f), PATH where it is (%%p).\n\n");
	printf("Options:\n");
	printf("      --archive=DEST[,DEST...]  the archive's destinations (repeatable)\n");
	printf("      --system-identifier=N     the cluster's (pg_controldata: \"Database system identifier\")\n");
	printf("      --compression=METHOD      none or zstd (default zstd)\n");
	printf("      --level=N                 zstd level, negative for the fast modes (default 1)\n");
	printf("      --weights=W,W,...         relative share of each destination (default equal)\n");
	printf("      --balance=MODE            weighted (default) or adaptive\n");
	printf("      --segment-size=SIZE       the cluster's WAL segment size (default: the file's)\n");
	printf("      --max-memory=SIZE         refuse settings that need more memory (default 1GB)\n");
	printf("      --encryption-key-file=FILE  seal the file (AES-256-GCM) with this key\n");
	printf("      --redundancy=M            each segment in M + 1 destinations (default 0);\n"
		   "                                a failing destination is then done without\n");
	printf("  -h, --help                    show this help\n");
	printf("\nA segment goes to one destination (M + 1 with --redundancy), a history file\n"
		   "to every one.  A file already archived with the same contents is success;\n"
		   "with other contents it is refused (exit status 2).  With --redundancy M, a\n"
		   "destination that fails is done without, with a warning, while M + 1 others\n"
		   "take the file.  Exit status 0 archived, 1 failed (a destination full or\n"
		   "missing: PostgreSQL keeps the file and tries again), 2 refused.\n");
}

static void
wal_get_usage(void)
{
	printf("%s wal-get restores one WAL file from a WAL archive: restore_command.\n\n", progname);
	printf("Usage:\n  %s wal-get --archive DEST[,DEST...] --system-identifier N [OPTION]... WALFILE PATH\n\n",
		   progname);
	printf("WALFILE is the file's name (%%f), PATH where recovery wants it (%%p).\n\n");
	printf("Options:\n");
	printf("      --archive=DEST[,DEST...]  the archive's destinations (repeatable)\n");
	printf("      --system-identifier=N     the cluster's\n");
	printf("      --prefetch=K              after a segment, fetch the next K into the spool,\n"
		   "                                from all destinations in parallel (0 to %d, default 0)\n",
		   SB_WAL_MAX_PREFETCH);
	printf("      --spool=DIR               where (default: PATH's folder/" SPOOL_NAME ")\n");
	printf("  -j, --jobs=N                  fetches at once (default K + 1, at most 8)\n");
	printf("      --encryption-key-file=FILE  the archive is sealed with this key: only files\n"
		   "                                sealed with it are taken\n");
	printf("      --redundancy=M            the archive was written with M: a file in none of\n"
		   "                                the destinations there is not in the archive while\n"
		   "                                at most M are missing\n");
	printf("  -h, --help                    show this help\n");
	printf("\nExit status 0 restored, 1 not in the archive (quietly: recovery asks for files\n"
		   "that may not exist), 2 bad usage, 126 damaged, forged, sealed without the key\n"
		   "given (or in the clear with one), the key file unusable, or a destination\n"
		   "missing so that the archive cannot tell: 126 stops recovery rather than end it\n"
		   "there.  Every copy is checked whole before it is written.\n");
}

/* The archive options the arguments give; SEGMENT_SIZE the file's when it is a segment. */
static void
push_options(const WalArgs *a, const char *name, const char *path, SbWalArchiveOptions *o)
{
	SbWalName	parsed;
	SbError		ignored;
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->destinations = (const char *const *) a->dests;
	o->ndestinations = a->ndests;
	o->system_identifier = a->sysid;
	o->weights = a->weights_text ? a->weights : NULL;
	o->balance = a->balance;
	o->codec = a->codec;
	o->level = a->level;
	o->workers = a->jobs ? a->jobs : 1;
	o->max_memory = a->max_memory;
	o->segment_size = a->segment_size;
	o->encryption_key = a->has_key ? &a->key : NULL;
	o->redundancy = a->redundancy;
	/* One file: its own size is the segment size, unless told; the engine checks it is one. */
	if (o->segment_size == 0 && sb_wal_name_parse(name, &parsed, &ignored) &&
		(parsed.kind == SB_WAL_SEGMENT || parsed.kind == SB_WAL_PARTIAL) &&
		stat(path, &st) == 0 && st.st_size > 0 && st.st_size <= (off_t) SB_WAL_MAX_SEGMENT_SIZE)
		o->segment_size = (uint32_t) st.st_size;
}

int
cmd_wal_push(int argc, char **argv)
{
	WalArgs		a;
	SbWalArchiveOptions o;
	SbWalArchive *archive;
	SbWalPushResult r;
	SbError		err;
	int			rc;

	if ((rc = wal_args_parse(argc, argv, "wal-push", WAL_OPT_PUSH | WAL_OPT_REDUNDANCY, 2, 2,
							 wal_push_usage, &a)) >= 0)
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
	push_options(&a, a.args[0], a.args[1], &o);
	if ((archive = sb_wal_archive_open(&o, &err)) == NULL)
		rc = wal_report_error(&err);
	else if (!sb_wal_push(archive, a.args[0], a.args[1], &r))
		rc = wal_report_error(&r.error);
	else
		rc = EXIT_OK;
	/* Archived without some destinations: the redundancy holds, but the user must hear of it. */
	if (archive != NULL && r.archived && r.skipped != 0)
		fprintf(stderr, "%s: warning: WAL file \"%s\" archived without %d destination(s): %s\n",
				progname, a.args[0], __builtin_popcountll(r.skipped), r.skip_error.message);
	sb_wal_archive_close(archive);
	wal_args_free(&a);
	return rc;
}

/* PATH's folder + "/stripebackup-spool": beside %p, which is in pg_wal. */
static void
default_spool(const char *path, char *spool, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(spool, len, "%s", SPOOL_NAME);
	else
		snprintf(spool, len, "%.*s/%s", (int) (slash - path), path, SPOOL_NAME);
}

/*
 * How a get that failed ends: quietly 1 when the archive lacks the file, 2
 * for a name that is none; anything else (damage, a forgery, a file that
 * needs the key, a destination missing, a full pg_wal) stops recovery
 * rather than end it early.  With --redundancy M, up to M destinations
 * missing still let the others say the archive lacks the file.
 */
static int
get_failed(const SbWalGetResult *r, uint32_t redundancy, const SbError *err)
{
	if (err->code == SB_ENOTFOUND && (uint32_t) __builtin_popcountll(r->unreachable) <= redundancy)
		return EXIT_FAILED;
	if (err->code == SB_EINVAL)
		return cli_report_error(err);
	(void) cli_report_error(err);
	return EXIT_STOP_RECOVERY;
}

int
cmd_wal_get(int argc, char **argv)
{
	WalArgs		a;
	SbWalGetOptions o;
	SbWalGetResult r;
	SbError		err;
	char		spool[4096];
	int			rc;

	if ((rc = wal_args_parse(argc, argv, "wal-get", WAL_OPT_GET | WAL_OPT_REDUNDANCY, 2, 2, wal_get_usage,
							 &a)) >= 0)
	{
		wal_args_free(&a);
		return rc;
	}
	/* A key file that cannot be read stops recovery too: without it nothing sealed can be read. */
	if (!wal_args_load_key(&a, &err))
	{
		(void) cli_report_error(&err);
		wal_args_free(&a);
		return EXIT_STOP_RECOVERY;
	}
	memset(&o, 0, sizeof(o));
	wal_args_dests(&a, &o.dests);
	o.prefetch = a.prefetch;
	o.workers = a.jobs;
	if (a.spool != NULL)
		o.spool = a.spool;
	else if (a.prefetch > 0)
	{
		default_spool(a.args[1], spool, sizeof(spool));
		o.spool = spool;
	}
	rc = sb_wal_get(&o, a.args[0], a.args[1], &r, &err) ? EXIT_OK : get_failed(&r, a.redundancy, &err);
	wal_args_free(&a);
	return rc;
}
