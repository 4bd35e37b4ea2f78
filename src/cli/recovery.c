/*
 * recovery.c
 *		Point-in-time restore from the command: the archive (--archive, or
 *		else the archive the backup recorded, or else the destinations the
 *		backup was written to, those that hold a WAL archive of its system), the WAL check (sb_recovery_check_wal),
 *		and the recovery settings, with restore_command running this very
 *		program.  With --encryption-key-file the archive is read as sealed
 *		with that key, and restore_command names the key file (its path,
 *		never its content) for the restored copy's wal-get.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pick_backup.h"
#include "recovery.h"
#include "stripebackup/sb_policy.h"
#include "stripebackup/sb_store.h"
#include "stripebackup/sb_wal.h"

/* The backup's destination of stripe file PATH: DEST/<backup folder>/<stripe file>. */
static char *
destination_of(const char *path)
{
	char	   *dest = strdup(path);
	char	   *slash;
	int			i;

	for (i = 0; dest != NULL && i < 2; i++)
	{
		if ((slash = strrchr(dest, '/')) == NULL || slash == dest)
		{
			free(dest);
			return NULL;
		}
		*slash = '\0';
	}
	return dest;
}

/* Does bucket location DEST hold archived WAL of system SYSID (a listing finds some, good or not)? */
static bool
bucket_holds_archive(const char *dest, uint64_t sysid)
{
	const char *paths[1] = {dest};
	SbWalDests	dests = {.paths = paths, .count = 1, .system_identifier = sysid};
	SbWalListing listing;
	SbError		ignored;
	bool		holds;

	if (!sb_wal_list(&dests, &listing, &ignored))
		return false;
	/* Files it cannot take (sealed, read without the key) are WAL of the system all the same. */
	holds = listing.count > 0 || listing.nproblems > 0;
	sb_wal_listing_free(&listing);
	return holds;
}

/* Does DEST hold a WAL archive of system SYSID (DEST/wal/<sysid>)? */
static bool
holds_archive(const char *dest, uint64_t sysid)
{
	char		folder[PATH_MAX];
	struct stat st;

	/* A lazy store has no folder to look at: its archive is there when it lists something. */
	if (sb_store_features_of(dest) & SB_STORE_LAZY)
		return bucket_holds_archive(dest, sysid);
	snprintf(folder, sizeof(folder), "%s/wal/%llu", dest, (unsigned long long) sysid);
	return lstat(folder, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Is DEST among the R->ndests found so far? */
static bool
found_already(const CliRecovery *r, const char *dest)
{
	uint32_t	j;

	for (j = 0; j < r->ndests; j++)
		if (strcmp(r->dests[j], dest) == 0)
			return true;
	return false;
}

/* DEST (malloc'd) into R when it holds an archive of R's system and is not there yet; else freed. */
static void
take_if_archive(CliRecovery *r, char *dest)
{
	if (dest == NULL || found_already(r, dest) || !holds_archive(dest, r->system_identifier))
	{
		free(dest);
		return;
	}
	r->owned[r->ndests] = dest;
	r->dests[r->ndests++] = dest;
}

/*
 * The archive the backup recorded (stripebackup.archive_destinations when
 * it was taken): a hint, since it may have moved, so each one is used only
 * if it holds an archive of the backup's system, and said when it does not.
 */
static void
recorded_destinations(const SbPgMeta *meta, CliRecovery *r)
{
	uint32_t	i;

	for (i = 0; i < meta->narchive_destinations && r->ndests < SB_MAX_STRIPES; i++)
	{
		const char *dest = meta->archive_destinations[i];

		if (!sb_store_is_absolute(dest))
		{
			fprintf(stderr, "%s: warning: the backup records \"%s\" as its WAL archive, which is not an "
					"absolute path or an object-storage location: passed over\n", progname, dest);
			r->passed_over++;
		}
		else if (found_already(r, dest))
			continue;
		else if (!holds_archive(dest, r->system_identifier))
		{
			fprintf(stderr, "%s: warning: \"%s\", the WAL archive when the backup was taken, holds none "
					"of system %llu now: passed over\n", progname, dest, (unsigned long long) r->system_identifier);
			r->passed_over++;
		}
		else if ((r->owned[r->ndests] = strdup(dest)) != NULL)
		{
			r->dests[r->ndests] = r->owned[r->ndests];
			r->ndests++;
		}
	}
}

/*
 * Without --archive: the archive the backup recorded, each destination
 * that holds one of its system; when none does, every destination of the
 * backup itself that holds one, once.
 */
static bool
backup_destinations(const SbArchive *a, const SbPgMeta *meta, CliRecovery *r, SbError *err)
{
	uint32_t	i;

	recorded_destinations(meta, r);
	if (r->ndests > 0)
	{
		r->recorded = true;
		printf("archive: ");
		for (i = 0; i < r->ndests; i++)
			printf("%s%s", i > 0 ? ", " : "", r->dests[i]);
		printf(" (where the backup's WAL was archived when it was taken; --archive names another)\n");
		return true;
	}
	r->passed_over = 0;			/* not the recorded archive: its redundancy says nothing here */
	for (i = 0; i < a->manifest->nstripes; i++)
		take_if_archive(r, a->stripe_paths[i] ? destination_of(a->stripe_paths[i]) : NULL);
	if (r->ndests == 0)
		return sb_error_set(err, SB_EINVAL, "no destination of the backup%s holds a WAL archive of system %llu: "
							"name it with --archive DEST[,DEST...]",
							meta->narchive_destinations > 0 ? ", nor of the archive it recorded," : "",
							(unsigned long long) r->system_identifier);
	return true;
}

/* Are destinations A and B the same, a trailing slash aside? */
static bool
same_destination(const char *a, const char *b)
{
	size_t		la = strlen(a);
	size_t		lb = strlen(b);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (lb > 1 && b[lb - 1] == '/')
		lb--;
	return la == lb && strncmp(a, b, la) == 0;
}

/* Is DEST among the N of LIST? */
static bool
listed(const char *dest, const char *const *list, uint32_t n)
{
	uint32_t	i;

	for (i = 0; i < n; i++)
		if (same_destination(dest, list[i]))
			return true;
	return false;
}

/* Does --archive name the archive the backup recorded: each of its destinations, and no other? */
static bool
names_recorded_archive(const ReadArgs *args, const SbPgMeta *meta)
{
	const char *const *given = (const char *const *) args->archive;
	const char *const *recorded = (const char *const *) meta->archive_destinations;
	uint32_t	i;

	if (args->narchive == 0 || args->narchive != meta->narchive_destinations)
		return false;
	for (i = 0; i < args->narchive; i++)
		if (!listed(given[i], recorded, meta->narchive_destinations) ||
			!listed(recorded[i], given, args->narchive))
			return false;
	return true;
}

/* The destinations of R's archive, each counted once. */
static uint32_t
distinct_destinations(const CliRecovery *r)
{
	uint32_t	i,
				n = 0;

	for (i = 0; i < r->ndests; i++)
		if (!listed(r->dests[i], r->dests, i))
			n++;
	return n;
}

/*
 * The archive redundancy M the user gave (--archive-redundancy), or the
 * one the backup recorded when R is the archive it names; false for none.
 * The metadata is not trusted: a value that is not valid is said and
 * ignored, so that every destination is needed, as without it.
 */
static bool
asked_redundancy(const ReadArgs *args, const SbPgMeta *meta, const CliRecovery *r, uint32_t *m,
				 const char **from)
{
	if (args->archive_redundancy >= 0)
	{
		*m = (uint32_t) args->archive_redundancy;
		*from = "--archive-redundancy";
		return true;
	}
	if (!r->recorded)
		return false;
	if (meta->bad_archive_redundancy[0] != '\0')
	{
		fprintf(stderr, "%s: warning: the backup records archive redundancy %s, which is not an integer "
				"from 0 to %u (one below its %u archive destinations): ignored, every archive destination "
				"is needed (--archive-redundancy says otherwise)\n", progname, meta->bad_archive_redundancy,
				meta->narchive_destinations > 0 ? meta->narchive_destinations - 1 : 0,
				meta->narchive_destinations);
		return false;
	}
	*m = meta->archive_redundancy;
	*from = "recorded by the backup";
	return meta->archive_redundancy > 0;
}

/*
 * restore_command's wal-get --redundancy: how many destinations may be
 * missing while the others still say a file is not in the archive (an
 * archive written with M holds each file in M + 1).  The recorded
 * destinations passed over are missing already, so they count against M.
 * M must leave a destination that holds every file: a value from the user
 * that does not is an error, one from the metadata is said and ignored.
 */
static bool
choose_redundancy(const ReadArgs *args, const SbPgMeta *meta, CliRecovery *r, SbError *err)
{
	uint32_t	m;
	const char *from;
	uint32_t	all = distinct_destinations(r) + r->passed_over;

	if (!asked_redundancy(args, meta, r, &m, &from) || m == 0)
		return true;
	if (m >= all && args->archive_redundancy >= 0)
		return sb_error_set(err, SB_EINVAL, "--archive-redundancy %u needs at least %u WAL archive "
							"destinations; the archive has %u", m, m + 1, all);
	if (m >= all)
	{
		fprintf(stderr, "%s: warning: the backup records archive redundancy %u, but the archive has %u "
				"destination%s: ignored, every archive destination is needed\n", progname, m, all,
				all == 1 ? "" : "s");
		return true;
	}
	r->redundancy = m > r->passed_over ? m - r->passed_over : 0;
	snprintf(r->redundancy_why, sizeof(r->redundancy_why),
			 "restore_command lets %u archive destination%s be missing (archive redundancy %u, %s%s)",
			 r->redundancy, r->redundancy == 1 ? "" : "s", m, from,
			 r->passed_over > 0 ? ", less those passed over" : "");
	return true;
}

static void
report(const SbRecoveryTarget *t, const CliRecovery *r, bool refuse)
{
	const SbRecoveryWal *w = &r->wal;

	if (w->chosen_timeline > 0)
		printf("WAL:     recovery follows timeline %u, which holds the %s target: no --target-timeline was "
			   "given, and the newest, timeline %u, does not reach it (%s)\n", w->chosen_timeline,
			   sb_recovery_kind_name(t->kind), w->newest_timeline, w->chosen_why);
	if (!w->checked || w->not_child)
		return;					/* said by cli_recovery_check */
	if (w->path[0] != '\0')
		printf("WAL:     recovery replays %s\n", w->path);
	if (w->target_looked && !w->refuse && w->target_lsn != 0)
		printf("WAL:     %s\n", w->target_message);
	else if (w->target_looked && !w->refuse)
		fprintf(stderr, "%s: warning: %s (choose the timeline that holds the target with --target-timeline)\n",
				progname, w->target_message);
	if (w->complete)
	{
		uint32_t	i;

		printf("WAL:     the archive holds every segment from %s to %s (%llu) on the way to timeline %u\n",
			   w->from, w->to, (unsigned long long) w->segments, w->timeline);
		for (i = 0; i < r->ndests; i++)
			if (w->held[i] > 0)
				printf("WAL:     %s: %u %s, %.1f MB stored\n", r->dests[i], w->held[i],
					   w->held[i] == 1 ? "segment" : "segments", (double) w->stored_bytes[i] / 1e6);
	}
	else if (!w->refuse)
		fprintf(stderr, "%s: warning: the WAL archive has a gap after the backup: %s; PostgreSQL stops "
				"with an error at the gap if the %s target lies beyond it\n",
				progname, w->message, sb_recovery_kind_name(t->kind));
	if (w->refuse && !refuse && w->holding_timeline > 0)
		printf("WAL:     recovery to the %s target along timeline %u would stop short of it: %s (choose it "
			   "with --target-timeline %u)\n", sb_recovery_kind_name(t->kind), w->timeline, w->message,
			   w->holding_timeline);
	else if (w->refuse && !refuse)
		printf("WAL:     recovery to the %s target would stop short of it: %s\n",
			   sb_recovery_kind_name(t->kind), w->message);
}

bool
cli_recovery_archive(const ReadArgs *args, const SbArchive *a, const SbPgMeta *meta, CliRecovery *r,
					 SbError *err)
{
	uint32_t	i;

	memset(r, 0, sizeof(*r));
	if (!meta->is_postgresql || meta->system_identifier == NULL)
		return sb_error_set(err, SB_EINVAL, "WAL goes with a backup of a PostgreSQL cluster, "
							"and \"%s\" is of a plain folder", a->location);
	if (!sb_policy_parse_uint64(meta->system_identifier, &r->system_identifier, err))
		return false;
	for (i = 0; i < args->narchive; i++)
		r->dests[r->ndests++] = args->archive[i];
	r->recorded = names_recorded_archive(args, meta);
	if ((r->ndests == 0 && !backup_destinations(a, meta, r, err)) ||
		!choose_redundancy(args, meta, r, err))
		return false;
	r->where.paths = r->dests;
	r->where.count = r->ndests;
	r->where.system_identifier = r->system_identifier;
	r->where.key = args->has_key ? &args->key : NULL;
	return true;
}

/*
 * A standby's archive, for its restore_command: --archive, or the backup's
 * destinations that hold one of its system; none is no error (it streams).
 */
static bool
standby_archive(const ReadArgs *args, const SbArchive *a, const SbPgMeta *meta, CliRecovery *r,
				SbError *err)
{
	bool		found_by_us = args->narchive == 0 && meta->is_postgresql &&
		meta->system_identifier != NULL;

	if (cli_recovery_archive(args, a, meta, r, err))
		return true;
	/* found, but its redundancy refused: that is the user's to hear */
	if (!found_by_us || err->code != SB_EINVAL || r->ndests > 0)
		return false;
	cli_recovery_free(r);		/* no destination of the backup holds an archive */
	sb_error_clear(err);
	return true;
}

bool
cli_recovery_check(const ReadArgs *args, const SbArchive *a, const SbPgMeta *meta, bool refuse,
				   CliRecovery *r, SbError *err)
{
	SbRecoveryTarget target;
	double		seconds;

	memset(r, 0, sizeof(*r));
	if (args->standby.enabled)
		return standby_archive(args, a, meta, r, err);
	if (args->recovery.kind == SB_RECOVERY_NONE)
		return true;
	target = args->recovery;
	/* seconds since the epoch to microseconds since 2000-01-01 UTC, PostgreSQL's time */
	if (target.kind == SB_RECOVERY_TIME && cli_parse_zoned_time(target.value, &seconds))
	{
		target.has_time = true;
		target.time = llround((seconds - 946684800.0) * 1e6);
	}
	if (!cli_recovery_archive(args, a, meta, r, err) ||
		!sb_recovery_check_wal(&r->where, meta->stop_lsn, meta->timeline, &target, &r->wal, err))
		return false;
	report(&args->recovery, r, refuse);
	if (r->wal.chosen_timeline > 0)
		snprintf(r->timeline, sizeof(r->timeline), "%u", r->wal.chosen_timeline);
	if (r->wal.not_child && refuse && r->wal.holding_timeline > 0)
		return sb_error_set(err, SB_EINVAL, "recovery to the %s target along timeline %u cannot start: %s "
							"(choose timeline %u with --target-timeline %u)",
							sb_recovery_kind_name(args->recovery.kind), r->wal.timeline, r->wal.message,
							r->wal.holding_timeline, r->wal.holding_timeline);
	if (r->wal.not_child && refuse)
		return sb_error_set(err, SB_EINVAL, "recovery to the %s target along timeline %u cannot start: %s "
							"(choose the backup's timeline with --target-timeline current)",
							sb_recovery_kind_name(args->recovery.kind), r->wal.timeline, r->wal.message);
	if (r->wal.not_child)
		printf("WAL:     recovery to the %s target along timeline %u cannot start: %s\n",
			   sb_recovery_kind_name(args->recovery.kind), r->wal.timeline, r->wal.message);
	if (refuse && r->wal.refuse && r->wal.holding_timeline > 0)
		return sb_error_set(err, SB_ENOTFOUND, "recovery to the %s target along timeline %u would stop short "
							"of it: %s (choose it with --target-timeline %u)",
							sb_recovery_kind_name(args->recovery.kind), r->wal.timeline, r->wal.message,
							r->wal.holding_timeline);
	if (refuse && r->wal.refuse)
		return sb_error_set(err, SB_ENOTFOUND, "recovery to the %s target would stop short of it: %s "
							"(put the missing WAL file into the archive, or restore to a target before it)",
							sb_recovery_kind_name(args->recovery.kind), r->wal.message);
	return true;
}

void
cli_recovery_free(CliRecovery *r)
{
	uint32_t	i;

	for (i = 0; i < r->ndests; i++)
		free(r->owned[i]);
	memset(r, 0, sizeof(*r));
}

bool
cli_recovery_files(const ReadArgs *args, const CliRecovery *r, SbRestoreFile *files, uint32_t *n,
				   SbError *err)
{
	char		program[PATH_MAX];
	char		key_file[PATH_MAX];
	SbRecoveryArchive archive;
	SbRecoveryTarget target = args->recovery;

	*n = 0;
	if (args->recovery.kind == SB_RECOVERY_NONE && !args->standby.enabled &&
		args->recovery.archive_mode != SB_ARCHIVE_MODE_OFF)
		return true;
	/* restore_command runs this program, wherever it was installed. */
	if (realpath("/proc/self/exe", program) == NULL)
		return sb_error_set(err, SB_EIO, "cannot tell where this program is (/proc/self/exe)");
	/* It runs in the copy's folder: the key file by its absolute path. */
	if (args->has_key && realpath(args->key_file, key_file) == NULL)
		return sb_error_set_errno(err, errno, "cannot tell where encryption key file \"%s\" is", args->key_file);
	archive.program = program;
	archive.destinations = r->dests;
	archive.ndestinations = r->ndests;
	archive.system_identifier = r->system_identifier;
	archive.prefetch = SB_RECOVERY_PREFETCH;
	archive.redundancy = r->redundancy;
	if (r->redundancy_why[0] != '\0')
		printf("WAL:     %s\n", r->redundancy_why);
	archive.key_file = args->has_key ? key_file : NULL;
	archive.s3 = NULL;			/* the command's settings are its environment */
	/* no --target-timeline, and the check chose the one that holds the target */
	if (r->timeline[0] != '\0')
		target.timeline = r->timeline;
	return sb_recovery_files(&target, &args->standby, &archive, files, n, err);
}
