/*
 * pick_backup.c
 *		The command's choice of a backup for a target from a destination
 *		(a local folder or a bucket's prefix): each backup folder there with
 *		a manifest (a backup that did not complete has none) is read for its
 *		metadata (catalog_walk.c, as "list" reads them), and the newest that
 *		ended before the target is taken.
 *
 * A manifest's finished_at is to the second, cut down: a backup recorded as
 * finished at 14:05:00 may have ended at 14:05:00.9, so it counts as ended
 * by 14:05:01.  A time target must carry its zone: without one PostgreSQL
 * reads it in the copy's time zone, which the command cannot know.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "catalog_walk.h"
#include "pick_backup.h"
#include "stripebackup/sb_pgmeta.h"

/* "[+-]HH[[:]MM]", "Z" or "UTC" (any case) at S, the rest of S nothing: the offset east of UTC in seconds. */
static bool
parse_zone(const char *s, long *offset)
{
	int			hh = 0,
				mm = 0,
				n = 0;

	while (*s == ' ')
		s++;
	if (strcmp(s, "Z") == 0 || strcmp(s, "z") == 0 || strcasecmp(s, "UTC") == 0)
		return (*offset = 0), true;
	if ((*s != '+' && *s != '-') ||
		!(sscanf(s + 1, "%2d:%2d%n", &hh, &mm, &n) == 2 || sscanf(s + 1, "%2d%2d%n", &hh, &mm, &n) == 2 ||
		  (mm = 0, sscanf(s + 1, "%2d%n", &hh, &n) == 1)) ||
		s[1 + n] != '\0' || hh > 15 || mm > 59)
		return false;
	*offset = (*s == '-' ? -1 : 1) * (hh * 3600L + mm * 60L);
	return true;
}

bool
cli_parse_zoned_time(const char *text, double *seconds)
{
	struct tm	tm;
	double		frac = 0;
	long		offset;
	int			n = 0,
				m = 0;
	time_t		t;

	memset(&tm, 0, sizeof(tm));
	if (sscanf(text, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3)
		return false;
	text += n;
	if ((*text == ' ' || *text == 'T' || *text == 't') &&
		sscanf(text + 1, "%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &m) == 2)
	{
		text += 1 + m;
		if (*text == ':' && sscanf(text + 1, "%lf%n", &frac, &m) == 1 && frac >= 0 && frac < 61)
			text += 1 + m;
	}
	if (!parse_zone(text, &offset) || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
		tm.tm_hour > 24 || tm.tm_min > 59)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	if ((t = timegm(&tm)) == (time_t) -1)
		return false;
	*seconds = (double) t + frac - (double) offset;
	return true;
}

/* "X/X" into *LSN. */
static bool
parse_lsn(const char *text, unsigned long long *lsn)
{
	unsigned	hi,
				lo;
	char		end;

	if (text == NULL || sscanf(text, "%X/%X%c", &hi, &lo, &end) != 2)
		return false;
	*lsn = ((unsigned long long) hi << 32) | lo;
	return true;
}

/* The best backup found so far: its folder and when it started. */
typedef struct Pick
{
	char	   *location;
	char	   *started_at;
	char	   *finished_at;
	char	   *stop_lsn;
	unsigned	considered;
} Pick;

/* Did the backup M (META) end before T?  Times: its finished_at (to the second) plus one second. */
static bool
ended_before(const SbManifest *m, const SbPgMeta *meta, const SbRecoveryTarget *t)
{
	double		target,
				finished;
	unsigned long long target_lsn,
				stop;

	if (t->kind == SB_RECOVERY_TIME)
		return cli_parse_zoned_time(t->value, &target) && m->finished_at != NULL &&
			cli_parse_zoned_time(m->finished_at, &finished) && finished + 1 <= target;
	if (t->kind == SB_RECOVERY_LSN)
		return parse_lsn(t->value, &target_lsn) && parse_lsn(meta->stop_lsn, &stop) && stop <= target_lsn;
	return true;
}

static void
take(Pick *p, const char *location, const SbManifest *m, const SbPgMeta *meta)
{
	free(p->location);
	free(p->started_at);
	free(p->finished_at);
	free(p->stop_lsn);
	p->location = strdup(location);
	p->started_at = m->started_at ? strdup(m->started_at) : NULL;
	p->finished_at = m->finished_at ? strdup(m->finished_at) : NULL;
	p->stop_lsn = meta->stop_lsn ? strdup(meta->stop_lsn) : NULL;
}

/* What the walk carries: the arguments (the target) and the pick so far. */
typedef struct PickWalk
{
	const ReadArgs *args;
	Pick	   *pick;
} PickWalk;

/* A backup folder of the destination: the pick if it is newer than the pick's and ended before the target. */
static void
consider(void *arg, const CliFolder *f)
{
	PickWalk   *w = arg;
	Pick	   *p = w->pick;
	SbError		err;
	SbPgMeta	meta;
	SbArchive  *a = f->archive;

	if (f->open_error != NULL)
		fprintf(stderr, "%s: warning: backup \"%s\" passed over: %s\n", progname, f->location,
				f->open_error->message);
	if (a == NULL || !sb_pgmeta_read(a->manifest, &meta, &err))
		return;					/* not a backup, or one that did not complete */
	p->considered++;
	if (ended_before(a->manifest, &meta, &w->args->recovery) &&
		(p->location == NULL || strcmp(a->manifest->started_at ? a->manifest->started_at : "",
									   p->started_at ? p->started_at : "") > 0))
		take(p, f->location, a->manifest, &meta);
	sb_pgmeta_free(&meta);
}

/* Every backup folder of DEST (not its WAL archive) considered; false when DEST cannot be listed. */
static bool
consider_all(const ReadArgs *args, const char *dest, Pick *p, SbError *err)
{
	PickWalk	pw = {.args = args, .pick = p};
	CliWalk		w = {.key = args->has_key ? &args->key : NULL, .found = consider, .arg = &pw};

	return cli_catalog_walk(dest, &w, err);
}

static void
free_pick(Pick *p)
{
	free(p->started_at);
	free(p->finished_at);
	free(p->stop_lsn);
}

bool
cli_pick_backup(const ReadArgs *args, char **picked, SbError *err)
{
	const SbRecoveryTarget *t = &args->recovery;
	Pick		p = {0};
	double		ignored;
	SbPlaceKind kind;

	*picked = NULL;
	/* a backup itself; else a destination (a local folder or a bucket's prefix) to pick from */
	if (sb_archive_has_manifest(args->location, NULL, err))
		return true;
	if (!sb_catalog_probe(args->location, &kind, err))
		return false;
	if (kind == SB_PLACE_INCOMPLETE)
		return true;			/* a backup that did not complete: opening it says what it lacks */
	if (kind == SB_PLACE_MISSING || kind == SB_PLACE_OTHER)
		return cli_place_not_found(args->location, kind, err);
	if (t->kind == SB_RECOVERY_NONE && !args->standby.enabled)
		return sb_error_set(err, SB_EINVAL, "\"%s\" holds no backup of its own: name one of its backup folders, "
							"or give a target to choose the backup by", args->location);
	if (t->kind == SB_RECOVERY_TIME && !cli_parse_zoned_time(t->value, &ignored))
		return sb_error_set(err, SB_EINVAL, "to choose a backup from destination \"%s\", --target-time \"%s\" "
							"needs its time zone (\"+00\", \"Z\", \"UTC\")", args->location, t->value);
	if (!consider_all(args, args->location, &p, err))
		return false;
	if (p.location == NULL)
	{
		free_pick(&p);
		return sb_error_set(err, SB_ENOTFOUND, "no completed backup in \"%s\" ended before the %s target "
							"(%u backups there)", args->location, sb_recovery_kind_name(t->kind), p.considered);
	}
	printf("backup:  \"%s\" is the newest of %u in \"%s\" that ended before the %s target (finished %s, "
		   "stop LSN %s)\n", p.location, p.considered, args->location, sb_recovery_kind_name(t->kind),
		   p.finished_at ? p.finished_at : "?", p.stop_lsn ? p.stop_lsn : "?");
	*picked = p.location;
	free_pick(&p);
	return true;
}
