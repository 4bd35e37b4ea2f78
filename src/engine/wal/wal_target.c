/*
 * wal_target.c
 *		Which timeline holds a time, xid or restore-point target, from the
 *		archived WAL's commit, abort and restore-point records.
 *
 * A copy restored to a target, promoted and left archiving puts a short
 * timeline into the source's archive.  Recovery along it (target timeline
 * latest) reads the source's timeline up to the fork and the copy's after:
 * a target the source reached after the fork is either never reached
 * ("recovery ended before configured recovery target was reached") or
 * met in the copy's WAL instead.  When a timeline forks off the one
 * followed after the backup's end, this reads the records recovery would
 * read, from the backup's end on, and stops at the first one the target
 * stops recovery at (PostgreSQL's recoveryStopsBefore/After): found before
 * the first fork, every timeline reaches it alike; past it, along each
 * timeline from where it parts from the one followed.  A time target is
 * held by a timeline only if that timeline has committed something past
 * the fork before the time: a timeline begun after the time (the copy's,
 * promoted later) meets a commit past it at once and would stop there,
 * holding none of the source's later work.
 *
 * Bounded: the segments read stop at the first match on each stretch and
 * at SB_TARGET_MAX_SEGMENTS in all; what could not be read (a segment
 * missing, damaged, sealed under another key) is said, and nothing is
 * refused for it.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_pgrecovery.h"
#include "util/fsutil.h"
#include "wal/wal_internal.h"
#include "wal/wal_records.h"
#include "wal/wal_target.h"

/* What one scan along a timeline's path looks for and finds. */
typedef struct Scan
{
	const SbRecoveryTarget *t;
	uint64_t	match_from;		/* records before this are not looked at */
	uint64_t	live_from;		/* a time target: a commit before it past this one makes the timeline live */
	bool		found;
	uint64_t	lsn;			/* of the record found */
	bool		live;
	bool		fed;			/* the current segment was fed to the reader already */
	SbWalReader *reader;
} Scan;

typedef struct Look
{
	const SbWalDests *dests;
	const SbWalListing *l;
	uint32_t	segment_size;
	uint32_t	budget;			/* segments that may still be read */
	char		why[320];		/* the first reason a scan could not go on */
	bool		blind;			/* a scan stopped short of what it looked for for WHY */
} Look;

static bool
on_record(void *arg, const SbWalRecord *rec)
{
	Scan	   *s = arg;
	const SbRecoveryTarget *t = s->t;
	bool		stops = false;

	if (rec->lsn < s->match_from)
		return true;
	switch (t->kind)
	{
		case SB_RECOVERY_TIME:
			if (rec->kind == SB_WAL_RECORD_RESTORE_POINT)
				return true;	/* recovery stops only at a commit or an abort for a time */
			stops = t->inclusive ? rec->time > t->time : rec->time >= t->time;
			if (!stops && rec->lsn >= s->live_from)
				s->live = true;
			break;
		case SB_RECOVERY_XID:
			stops = rec->kind != SB_WAL_RECORD_RESTORE_POINT && !rec->prepared &&
				rec->xid == (uint32_t) strtoul(t->value, NULL, 10);
			break;
		case SB_RECOVERY_NAME:
			stops = rec->kind == SB_WAL_RECORD_RESTORE_POINT && strcmp(rec->name, t->value) == 0;
			break;
		default:
			break;
	}
	if (!stops)
		return true;
	s->found = true;
	s->lsn = rec->lsn;
	return false;
}

static bool
feed_sink(void *arg, const void *data, size_t len, SbError *err)
{
	Scan	   *s = arg;

	(void) err;
	sb_wal_reader_feed(s->reader, data, len);
	return true;				/* past a match the rest is read and checked all the same */
}

/* An SbWalCopyFn: the segment into the scan's reader, once (a reader cannot take it again). */
static bool
feed_copy(void *arg, SbWalWorker *w, SbWalFolder *folder, const char *name, uint64_t sysid,
		  SbWalHeader *h, SbError *err)
{
	Scan	   *s = arg;

	if (s->fed)
		return sb_error_set(err, SB_EIO, "segment \"%s\" was read in part already", name);
	s->fed = true;
	return sb_wal_read_copy(w, folder, name, sysid, feed_sink, s, h, err);
}

static int
compare_name(const void *key, const void *entry)
{
	return strcmp(key, ((const SbWalEntry *) entry)->info.name);
}

/*
 * The archived file of segment SEGNO recovery along H reads, into NAME:
 * the newest timeline of H whose line holds that segment and whose file
 * the archive holds (XLogFileReadAnyTLI); false when none.
 */
static bool
segment_of(const Look *k, const SbWalHistory *h, uint64_t segno, char *name)
{
	uint32_t	i;

	for (i = h->n; i > 0; i--)
	{
		/* a timeline's file only within its line: recovery never goes back to an older one past its end */
		if (h->begin[i - 1] / k->segment_size > segno || (i < h->n && h->begin[i] / k->segment_size < segno))
			continue;
		sb_wal_segment_name(h->tli[i - 1], segno, k->segment_size, name);
		if (bsearch(name, k->l->entries, k->l->count, sizeof(SbWalEntry), compare_name) != NULL)
			return true;
	}
	return false;
}

static void blind(Look *k, const char *fmt,...) __attribute__((format(printf, 2, 3)));

/* The first reason a scan stopped short, kept. */
static void
blind(Look *k, const char *fmt,...)
{
	va_list		ap;

	if (k->blind)
		return;
	k->blind = true;
	va_start(ap, fmt);
	vsnprintf(k->why, sizeof(k->why), fmt, ap);
	va_end(ap);
}

/*
 * Read along H from segment FIRST on, records from S->match_from on,
 * until S finds the record the target stops at, the archive's WAL along
 * H ends, or the budget is spent (K->blind then).  False only on an error
 * that is not the archive's (memory).
 */
static bool
scan(Look *k, const SbWalHistory *h, uint64_t first, Scan *s, SbError *err)
{
	SbWalWorker w;
	uint64_t	segno;
	bool		ok = true;

	if ((s->reader = sb_wal_reader_new(k->segment_size, k->dests->system_identifier, on_record, s, err)) == NULL)
		return false;
	if (!sb_wal_worker_init(&w, SB_CODEC_ZSTD, 1, sb_wal_piece_size(k->segment_size), k->dests->key, err))
	{
		sb_wal_reader_free(s->reader);
		return false;
	}
	for (segno = first; !s->found; segno++)
	{
		char		name[SB_WAL_NAME_MAX + 1];
		SbWalFound	found;
		SbWalHeader hd;
		SbError		e;
		uint32_t	used;

		if (!segment_of(k, h, segno, name))
			break;				/* the archived WAL along H ends here */
		if (k->budget == 0)
		{
			blind(k, "the look reads at most %u segments past the backup's end, and the target lies further",
				  (unsigned) SB_TARGET_MAX_SEGMENTS);
			break;
		}
		k->budget--;
		s->fed = false;
		sb_wal_reader_segment(s->reader, segno);
		if (!sb_wal_find(k->dests, name, &found, &e) ||
			!sb_wal_read_found(&w, k->dests, &found, name, feed_copy, s, &used, &hd, &e))
		{
			if (e.code == SB_ENOMEM)
			{
				*err = e;
				ok = false;
			}
			blind(k, "segment \"%s\" could not be read: %.250s", name, e.message);
			s->found = false;	/* nothing of a segment that failed its checks counts */
			break;
		}
		if (sb_wal_reader_done(s->reader))
			break;				/* a match, or the WAL written ends in this segment */
	}
	sb_wal_worker_free(&w);
	sb_wal_reader_free(s->reader);
	s->reader = NULL;
	return ok;
}

/* The first LSN from STOP on where A and B follow different timelines; 0 when they never do. */
static uint64_t
divergence(const SbWalHistory *a, const SbWalHistory *b, uint64_t stop)
{
	uint64_t	best = 0;
	uint32_t	i;

	if (sb_wal_history_at(a, stop) != sb_wal_history_at(b, stop))
		return stop;
	/* the timelines followed change only where a line of either begins */
	for (i = 0; i < a->n + b->n; i++)
	{
		uint64_t	p = i < a->n ? a->begin[i] : b->begin[i - a->n];

		if (p > stop && (best == 0 || p < best) && sb_wal_history_at(a, p) != sb_wal_history_at(b, p))
			best = p;
	}
	return best;
}

/* Does H hold the backup ended at STOP on BACKUP_TLI: its line of that timeline ends at STOP or after? */
static bool
holds_backup(const SbWalHistory *h, uint32_t backup_tli, uint64_t stop)
{
	uint32_t	i;

	for (i = 0; i < h->n; i++)
		if (h->tli[i] == backup_tli)
			return i + 1 == h->n || h->begin[i + 1] >= stop;
	return false;
}

void
sb_wal_describe_path(const SbWalHistory *h, uint32_t backup_tli, uint64_t stop, char *out, size_t size)
{
	uint64_t	p = stop;
	uint32_t	tli = sb_wal_history_at(h, stop);
	size_t		len = 0;

	out[0] = '\0';
	if (tli == 0)
		tli = backup_tli;
	for (;;)
	{
		uint64_t	next = 0;
		uint32_t	i;

		/* the next point past P where the timeline followed changes */
		for (i = 0; i < h->n; i++)
			if (h->begin[i] > p && (next == 0 || h->begin[i] < next) && sb_wal_history_at(h, h->begin[i]) != tli)
				next = h->begin[i];
		if (next == 0)
			break;
		len += snprintf(out + len, len < size ? size - len : 0, "%stimeline %u to %X/%X", len > 0 ? ", then " : "",
						tli, (unsigned) (next >> 32), (unsigned) next);
		p = next;
		tli = sb_wal_history_at(h, next);
		if (len >= size)
			break;
	}
	if (len > 0 && len < size)
		snprintf(out + len, size - len, ", then %u", tli);
}

static void
lsn_text(uint64_t lsn, char *out)
{
	snprintf(out, 24, "%X/%X", (unsigned) (lsn >> 32), (unsigned) lsn);
}

bool
sb_wal_place_target(const SbWalDests *dests, const SbWalListing *l, uint32_t segment_size, uint64_t stop,
					uint32_t backup_tli, const SbRecoveryTarget *t, SbRecoveryWal *r, SbError *err)
{
	SbWalHistory *hl = NULL,
			   *hc = NULL;
	Look		k;
	Scan		sl;
	uint64_t	dmin = 0;
	uint32_t	tli,
				newest = r->timeline,
				holder = 0;
	uint64_t	holder_lsn = 0;
	bool		absent,
				ok = false,
				held_l;
	char		a[24],
				b[24];
	size_t		i;

	if (t->kind != SB_RECOVERY_TIME && t->kind != SB_RECOVERY_XID && t->kind != SB_RECOVERY_NAME)
		return true;
	memset(&k, 0, sizeof(k));
	k.dests = dests;
	k.l = l;
	k.segment_size = segment_size;
	k.budget = SB_TARGET_MAX_SEGMENTS;
	for (i = 0; i < l->count; i++)
		if (l->entries[i].info.parsed.timeline > newest)
			newest = l->entries[i].info.parsed.timeline;
	if ((hl = sb_alloc(sizeof(SbWalHistory), err)) == NULL || (hc = sb_alloc(sizeof(SbWalHistory), err)) == NULL ||
		!sb_wal_history_read(dests, r->timeline, hl, &absent, err))
		goto out;
	/* where the first timeline that holds the backup parts from the one followed */
	for (tli = backup_tli; tli <= newest; tli++)
	{
		uint64_t	d;

		if (tli == r->timeline)
			continue;
		if (!sb_wal_history_read(dests, tli, hc, &absent, err))
			goto out;
		if ((absent && tli != backup_tli) || !holds_backup(hc, backup_tli, stop))
			continue;
		if ((d = divergence(hl, hc, stop)) != 0 && (dmin == 0 || d < dmin))
			dmin = d;
	}
	ok = true;
	if (dmin == 0)
		goto out;				/* no other timeline parts from it after the backup: nothing to tell apart */
	if (t->kind == SB_RECOVERY_TIME && !t->has_time)
	{
		r->target_looked = true;
		snprintf(r->target_message, sizeof(r->target_message),
				 "which timeline holds time \"%s\" was not looked for: the time carries no zone", t->value);
		goto out;
	}
	r->target_looked = true;
	memset(&sl, 0, sizeof(sl));
	sl.t = t;
	sl.match_from = stop;
	sl.live_from = dmin;
	if (!(ok = scan(&k, hl, stop / segment_size, &sl, err)))
		goto out;
	lsn_text(dmin, b);
	held_l = sl.found && (t->kind != SB_RECOVERY_TIME || sl.lsn < dmin || sl.live);
	if (sl.found && sl.lsn < dmin)
	{
		r->target_lsn = sl.lsn;
		r->target_on = sb_wal_history_at(hl, sl.lsn);
		lsn_text(sl.lsn, a);
		snprintf(r->target_message, sizeof(r->target_message),
				 "the %s target is at %s on timeline %u, before timeline %u parts from another at %s",
				 sb_recovery_kind_name(t->kind), a, r->target_on, r->timeline, b);
		goto out;
	}
	/* past the fork: along every other timeline that holds the backup, from where it parts, newest first */
	for (tli = newest; !held_l && tli >= backup_tli && tli > 0; tli--)
	{
		Scan		sc;
		uint64_t	d;

		if (tli == r->timeline)
			continue;
		if (!(ok = sb_wal_history_read(dests, tli, hc, &absent, err)))
			goto out;
		if ((absent && tli != backup_tli) || !holds_backup(hc, backup_tli, stop) ||
			(d = divergence(hl, hc, stop)) == 0 || (sl.found && sl.lsn < d))
			continue;
		memset(&sc, 0, sizeof(sc));
		sc.t = t;
		sc.match_from = d;
		sc.live_from = d;
		if (!(ok = scan(&k, hc, d / segment_size, &sc, err)))
			goto out;
		if (sc.found && (t->kind != SB_RECOVERY_TIME || sc.live))
		{
			holder = tli;
			holder_lsn = sc.lsn;
			break;
		}
	}
	if (held_l || (sl.found && holder == 0))
	{
		r->target_lsn = sl.lsn;
		r->target_on = sb_wal_history_at(hl, sl.lsn);
		lsn_text(sl.lsn, a);
		snprintf(r->target_message, sizeof(r->target_message),
				 "the %s target is at %s on timeline %u, past the fork at %s", sb_recovery_kind_name(t->kind), a,
				 r->target_on, b);
	}
	else if (holder > 0)
	{
		r->refuse = true;
		r->holding_timeline = holder;
		r->target_lsn = holder_lsn;
		r->target_on = holder;
		lsn_text(holder_lsn, a);
		tli = sb_wal_history_at(hc, dmin);
		if (sl.found)
			snprintf(r->message, sizeof(r->message),
					 "timeline %u began after the target time (its first commit past %s, where it parts from "
					 "timeline %u, is later); timeline %u holds the target (at %s)", r->timeline, b, tli, holder, a);
		else
			snprintf(r->message, sizeof(r->message),
					 "timeline %u's WAL does not reach it past %s, where it parts from timeline %u; timeline %u "
					 "holds the target (at %s)", r->timeline, b, tli, holder, a);
		snprintf(r->target_message, sizeof(r->target_message), "%.500s", r->message);
	}
	else if (k.blind)
		snprintf(r->target_message, sizeof(r->target_message),
				 "which timeline holds the %s target could not be told: %.400s", sb_recovery_kind_name(t->kind), k.why);
	else
		snprintf(r->target_message, sizeof(r->target_message),
				 "no archived timeline reaches the %s target past %s, where timeline %u parts from another: "
				 "PostgreSQL stops with an error unless its WAL is archived by then",
				 sb_recovery_kind_name(t->kind), b, r->timeline);
	if (k.blind && !r->refuse && r->target_lsn == 0)
		snprintf(r->target_message, sizeof(r->target_message),
				 "which timeline holds the %s target could not be told: %.400s", sb_recovery_kind_name(t->kind), k.why);
out:
	free(hl);
	free(hc);
	return ok;
}
