/*
 * recovery_wal.c
 *		Before a point-in-time restore writes anything: does the WAL archive
 *		hold what recovery will ask for after the backup?
 *
 * The backup holds its own WAL (start to stop) in pg_wal; recovery asks
 * restore_command for every segment from the backup's last one on.  A gap
 * there ends recovery early.  PostgreSQL refuses to end short of a time,
 * xid, name or LSN target, but with the target "latest" it ends at the gap
 * and promotes a copy that silently lacks the rest: that is what this
 * check catches, and for an LSN it knows the target's segment up front.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_pgrecovery.h"
#include "util/fsutil.h"
#include "wal/wal_internal.h"
#include "wal/wal_target.h"

/* "X/X" as a 64-bit position; false when it is not one. */
static bool
parse_lsn(const char *text, uint64_t *lsn)
{
	unsigned int hi,
				lo;
	char		tail;

	if (text == NULL || sscanf(text, "%X/%X%c", &hi, &lo, &tail) != 2)
		return false;
	*lsn = ((uint64_t) hi << 32) | lo;
	return true;
}

/* The timeline T asks recovery to follow: "current" the backup's, a number, else the newest archived. */
static bool
target_timeline(const SbRecoveryTarget *t, const SbWalListing *l, uint32_t backup_timeline,
				uint32_t *timeline, SbError *err)
{
	size_t		i;

	*timeline = backup_timeline;
	if (t->timeline != NULL && strcmp(t->timeline, "current") == 0)
		return true;
	if (t->timeline != NULL && strcmp(t->timeline, "latest") != 0)
		*timeline = (uint32_t) strtoul(t->timeline, NULL, 10);
	else
		for (i = 0; i < l->count; i++)
			if (l->entries[i].info.parsed.timeline > *timeline)
				*timeline = l->entries[i].info.parsed.timeline;
	if (*timeline < backup_timeline)
		return sb_error_set(err, SB_EINVAL, "target timeline %u comes before the backup's timeline %u",
							*timeline, backup_timeline);
	return true;
}

/* The newest segment archived on a timeline from LOW to HIGH into *LAST; false when there is none. */
static bool
newest_segment(const SbWalListing *l, uint32_t low, uint32_t high, SbWalName *last)
{
	bool		found = false;
	size_t		i;

	for (i = 0; i < l->count; i++)
	{
		const SbWalName *n = &l->entries[i].info.parsed;

		if (n->kind == SB_WAL_SEGMENT && n->timeline >= low && n->timeline <= high &&
			(!found || sb_wal_position_before(last, n)))
		{
			*last = *n;
			found = true;
		}
	}
	return found;
}

/*
 * The first and last segments to check, into R->from and R->to: from the
 * backup's last segment to the target LSN's, else to the newest archived
 * on the timeline followed (or, when it has none yet, on the ones before).
 * R->to stays empty, with R->message saying why, when the archive holds
 * nothing from the backup's end on.
 */
static bool
segment_range(const SbWalListing *l, uint64_t stop, uint32_t backup_timeline, const SbRecoveryTarget *t,
			  uint32_t segment_size, SbRecoveryWal *r, SbError *err)
{
	uint64_t	first = stop > 0 ? (stop - 1) / segment_size : 0;
	uint64_t	last;
	SbWalName	newest;

	sb_wal_segment_name(backup_timeline, first, segment_size, r->from);
	if (t->kind == SB_RECOVERY_LSN)
	{
		uint64_t	lsn = 0;

		(void) parse_lsn(t->value, &lsn);
		if (lsn < stop)
			return sb_error_set(err, SB_EINVAL, "target LSN %s comes before the end of the backup (%X/%X)",
								t->value, (unsigned) (stop >> 32), (unsigned) stop);
		sb_wal_segment_name(r->timeline, lsn / segment_size, segment_size, r->to);
		return true;
	}
	if ((newest_segment(l, r->timeline, r->timeline, &newest) ||
		 newest_segment(l, backup_timeline, r->timeline, &newest)) &&
		(last = sb_wal_segment_number(&newest, segment_size)) >= first)
		sb_wal_segment_name(newest.timeline, last, segment_size, r->to);
	else
		snprintf(r->message, sizeof(r->message),
				 "the archive holds no WAL segment of timeline %u from \"%s\" on, where the backup ends",
				 r->timeline, r->from);
	return true;
}

/* What each destination holds of the segments from R->from to R->to, on the timelines recovery may read. */
static void
count_held(const SbWalListing *l, uint32_t backup_timeline, SbRecoveryWal *r)
{
	SbWalName	from,
				to;
	SbError		err;
	size_t		i;

	if (!sb_wal_name_parse(r->from, &from, &err) || !sb_wal_name_parse(r->to, &to, &err))
		return;
	for (i = 0; i < l->count; i++)
	{
		const SbWalEntry *e = &l->entries[i];
		const SbWalName *n = &e->info.parsed;

		if (n->kind != SB_WAL_SEGMENT || n->timeline < backup_timeline || n->timeline > r->timeline ||
			sb_wal_position_before(n, &from) || sb_wal_position_before(&to, n))
			continue;
		r->held[e->destination]++;
		r->stored_bytes[e->destination] += e->info.stored_bytes;
		r->raw_bytes += e->info.raw_bytes;
	}
}

/* Does the listing hold a segment of TIMELINE? */
static bool
has_timeline(const SbWalListing *l, uint32_t timeline)
{
	size_t		i;

	for (i = 0; i < l->count; i++)
		if (l->entries[i].info.parsed.kind == SB_WAL_SEGMENT && l->entries[i].info.parsed.timeline == timeline)
			return true;
	return false;
}

/*
 * An LSN target that recovery along R->timeline would not reach (a copy
 * that promoted wrote a timeline that ends before it): the newest older
 * timeline, from the backup's on, along which every segment from R->from to
 * the target's is archived, so that the refusal can name it; 0 for none.
 * Only when no timeline was asked for by number: then the one asked for is
 * the one checked.
 */
static uint32_t
holding_timeline(const SbWalDests *dests, const SbWalListing *l, const SbRecoveryTarget *t,
				 uint32_t backup_timeline, uint32_t segment_size, const SbRecoveryWal *r)
{
	char		to[SB_WAL_NAME_MAX + 1];
	SbWalContinuity c;
	SbError		ignored;
	uint64_t	lsn;
	uint32_t	tli;

	if (t->kind != SB_RECOVERY_LSN || !parse_lsn(t->value, &lsn) ||
		(t->timeline != NULL && strcmp(t->timeline, "latest") != 0))
		return 0;
	for (tli = r->timeline - 1; tli >= backup_timeline && tli > 0; tli--)
	{
		if (tli != backup_timeline && !has_timeline(l, tli))
			continue;
		sb_wal_segment_name(tli, lsn / segment_size, segment_size, to);
		if (sb_wal_check_continuity(dests, r->from, to, segment_size, &c, &ignored) && c.complete)
			return tli;
	}
	return 0;
}

/* Does the listing hold a file (a segment or a history) of TIMELINE? */
static bool
listed_timeline(const SbWalListing *l, uint32_t timeline)
{
	size_t		i;

	for (i = 0; i < l->count; i++)
		if (l->entries[i].info.parsed.timeline == timeline)
			return true;
	return false;
}

/*
 * With target timeline latest PostgreSQL follows the newest timeline the
 * archive holds, R->timeline, and refuses to start when that one branched
 * off before the backup's end STOP (a copy restored to an earlier point
 * and promoted).  Then R->not_child, and R->holding_timeline the newest
 * timeline from the backup's on that does hold the backup.
 */
static bool
check_timeline_holds(const SbWalDests *dests, const SbWalListing *l, uint32_t backup_timeline, uint64_t stop,
					 SbRecoveryWal *r, SbError *err)
{
	uint64_t	branch,
				ignored;
	bool		holds;
	uint32_t	tli;

	if (!sb_wal_timeline_holds(dests, r->timeline, backup_timeline, stop, &holds, &branch, err))
		return false;
	if (holds)
		return true;
	r->not_child = true;
	for (tli = r->timeline - 1; r->holding_timeline == 0 && tli >= backup_timeline && tli > 0; tli--)
	{
		if (tli != backup_timeline && !listed_timeline(l, tli))
			continue;
		if (!sb_wal_timeline_holds(dests, tli, backup_timeline, stop, &holds, &ignored, err))
			return false;
		if (holds)
			r->holding_timeline = tli;
	}
	snprintf(r->message, sizeof(r->message),
			 "timeline %u branched off timeline %u at %X/%X, before the backup's end at %X/%X: recovery "
			 "cannot follow it (PostgreSQL: \"requested timeline %u is not a child of this server's history\")",
			 r->timeline, backup_timeline, (unsigned) (branch >> 32), (unsigned) branch,
			 (unsigned) (stop >> 32), (unsigned) stop, r->timeline);
	if (r->holding_timeline > 0)
		snprintf(r->message + strlen(r->message), sizeof(r->message) - strlen(r->message),
				 "; timeline %u holds the backup", r->holding_timeline);
	return true;
}

/* Was a timeline asked for by name or number, rather than the newest (latest, the default)? */
static bool
timeline_asked_for(const SbRecoveryTarget *t)
{
	return t->timeline != NULL && strcmp(t->timeline, "latest") != 0;
}

/* R->path: the timelines recovery along R->timeline replays from STOP on, when it switches. */
static bool
describe_path(const SbWalDests *dests, uint32_t backup_timeline, uint64_t stop, SbRecoveryWal *r, SbError *err)
{
	SbWalHistory *h;
	bool		absent;
	bool		ok;

	if (r->timeline == backup_timeline)
		return true;
	if ((h = sb_alloc(sizeof(SbWalHistory), err)) == NULL)
		return false;
	ok = sb_wal_history_read(dests, r->timeline, h, &absent, err);
	if (ok && !absent)
		sb_wal_describe_path(h, backup_timeline, stop, r->path, sizeof(r->path));
	free(h);
	return ok;
}

/*
 * The check of sb_recovery_check_wal; for VERIFY, a newest timeline that
 * does not hold the backup is passed over for the one that does.
 */
static bool
check_wal(const SbWalDests *dests, const char *stop_lsn, uint32_t backup_timeline, const SbRecoveryTarget *t,
		  bool verify, SbRecoveryWal *r, SbError *err)
{
	SbWalListing l;
	SbWalContinuity c;
	uint32_t	segment_size;
	uint64_t	stop;
	bool		ok;

	memset(r, 0, sizeof(*r));
	sb_error_clear(err);
	if (t->kind == SB_RECOVERY_NONE)
		return true;
	if (!sb_recovery_check_target(t, err))
		return false;
	if (stop_lsn == NULL)
		return t->kind == SB_RECOVERY_IMMEDIATE ||
			sb_error_set(err, SB_EINVAL, "the backup records no WAL position: "
						 "a point-in-time restore starts from an online backup");
	if (!parse_lsn(stop_lsn, &stop))
		return sb_error_set(err, SB_ECORRUPT, "the backup's stop LSN \"%s\" is not a WAL position", stop_lsn);
	if (!sb_wal_list(dests, &l, err))
		return false;
	segment_size = sb_wal_listing_segment_size(&l, 0);
	ok = target_timeline(t, &l, backup_timeline, &r->timeline, err) &&
		(timeline_asked_for(t) || check_timeline_holds(dests, &l, backup_timeline, stop, r, err));
	if (ok && r->not_child && verify && r->holding_timeline > 0)
	{
		/* verify reads the WAL of the history the backup is part of */
		r->passed_over = r->timeline;
		r->timeline = r->holding_timeline;
		r->not_child = false;
		r->message[0] = '\0';
	}
	if (ok && r->not_child)
	{
		r->checked = r->refuse = true;	/* whatever the target: the copy would not start */
		sb_wal_listing_free(&l);
		return true;
	}
	if (!ok || t->kind == SB_RECOVERY_IMMEDIATE)
	{
		sb_wal_listing_free(&l);	/* immediate needs no archived WAL, only a timeline that holds the backup */
		return ok;
	}
	r->checked = true;
	ok = segment_range(&l, stop, backup_timeline, t, segment_size, r, err);
	if (ok && r->to[0] != '\0')
	{
		ok = sb_wal_check_continuity(dests, r->from, r->to, segment_size, &c, err);
		r->complete = ok && c.complete;
		r->segments = c.segments;
		count_held(&l, backup_timeline, r);
		if (ok && !c.complete)
			snprintf(r->message, sizeof(r->message), "%s", c.message);
	}
	r->refuse = ok && !r->complete && (t->kind == SB_RECOVERY_LATEST || t->kind == SB_RECOVERY_LSN);
	if (r->refuse && (r->holding_timeline = holding_timeline(dests, &l, t, backup_timeline, segment_size, r)) > 0)
	{
		size_t		len = strlen(r->message);

		snprintf(r->message + len, sizeof(r->message) - len, "; timeline %u holds the target", r->holding_timeline);
	}
	if (ok)
		ok = describe_path(dests, backup_timeline, stop, r, err);
	/* a time, xid or name target: which timeline holds it, when one forks off after the backup */
	if (ok && !r->refuse)
		ok = sb_wal_place_target(dests, &l, segment_size, stop, backup_timeline, t, r, err);
	sb_wal_listing_free(&l);
	return ok;
}

bool
sb_recovery_check_wal(const SbWalDests *dests, const char *stop_lsn, uint32_t backup_timeline,
					  const SbRecoveryTarget *t, SbRecoveryWal *r, SbError *err)
{
	SbRecoveryTarget chosen;
	char		number[16];
	char		why[sizeof(r->message)];
	uint32_t	newest,
				holder;

	if (!check_wal(dests, stop_lsn, backup_timeline, t, false, r, err))
		return false;

	/*
	 * A timeline given, even "latest", is honoured: refused above when it
	 * does not reach the target.  None given: the newest would not reach
	 * it (or not hold the backup), and the look found the one that does,
	 * so follow that one.  It is checked again as if given by number, so
	 * that the segments, the path and the target's place said are its own.
	 */
	if (t->timeline != NULL || !r->refuse || r->holding_timeline == 0)
		return true;
	newest = r->timeline;
	holder = r->holding_timeline;
	snprintf(why, sizeof(why), "%s", r->message);
	chosen = *t;
	snprintf(number, sizeof(number), "%u", holder);
	chosen.timeline = number;
	if (!check_wal(dests, stop_lsn, backup_timeline, &chosen, false, r, err))
		return false;
	r->chosen_timeline = holder;
	r->newest_timeline = newest;
	snprintf(r->chosen_why, sizeof(r->chosen_why), "%s", why);
	return true;
}

bool
sb_recovery_verify_wal(const SbWalDests *dests, const char *start_lsn, uint32_t backup_timeline,
					   SbWalProblemFn fn, void *arg, SbRecoveryWal *r, uint64_t *files,
					   uint64_t *problems, SbError *err)
{
	SbRecoveryTarget latest = {SB_RECOVERY_LATEST, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
	uint64_t	damaged = 0;

	*files = *problems = 0;
	/* From the segment that holds the backup's start on, along a timeline that holds the backup. */
	if (!check_wal(dests, start_lsn, backup_timeline, &latest, true, r, err))
		return false;
	if (!r->complete)
	{
		(*problems)++;
		if (fn != NULL)
			fn(arg, r->message);
	}
	if (r->to[0] == '\0')
		return true;
	if (!sb_wal_verify_range(dests, r->from, r->to, fn, arg, files, &damaged, err))
		return false;
	*problems += damaged;
	return true;
}
