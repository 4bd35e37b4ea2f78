/*
 * wal_continuity.c
 *		Does the archive hold every segment recovery will ask for, from one
 *		segment to another, across timeline switches?
 *
 * A timeline history file, "TTTTTTTT.history", lists the timelines that
 * led to timeline T and where each ended: lines "<parent tli>\t<X/X>\t
 * <reason>" (PostgreSQL's readTimeLineHistory).  Timeline k+1 begins where
 * timeline k ended, so the segment holding that switch point and those
 * after it are expected on the new timeline, the ones before on the old:
 * recovery (XLogFileReadAnyTLI) reads each segment from the newest
 * timeline whose beginning is not after it.
 *
 * The switch points need not grow: a copy restored to a point before an
 * earlier fork, with target timeline latest, branches from timeline 1 below
 * where timeline 2 began, and PostgreSQL writes timeline 3's history as
 * timeline 2's lines and then "2 <its own, lower, switch point>".  Its
 * reader (readTimeLineHistory) asks only that timeline ids grow and stay
 * below the file's own; the segment lookup below, newest timeline first,
 * reads such a file as recovery does (a timeline whose beginning is past
 * the next one's is never reached).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"
#include "wal/wal_internal.h"

#define MAX_HISTORY_BYTES ((uint64_t) 1 << 20)

/*
 * The timelines that lead to the one checked, oldest first: each with the
 * LSN where it begins (the previous line's switch point, lower than the
 * one before it when a copy branched below an earlier fork).
 */
typedef SbWalHistory TimelinePath;
#define MAX_TIMELINES SB_WAL_MAX_TIMELINES

/* A history file read into memory. */
typedef struct MemOut
{
	char		buf[MAX_HISTORY_BYTES + 1];
	size_t		len;
} MemOut;

/* ---------- reading a history file ---------- */

static bool
mem_write(void *arg, const void *data, size_t len, SbError *err)
{
	MemOut	   *m = arg;

	if (len > MAX_HISTORY_BYTES - m->len)
		return sb_error_set(err, SB_ECORRUPT, "a timeline history file of more than %" PRIu64 " bytes",
							MAX_HISTORY_BYTES);
	memcpy(m->buf + m->len, data, len);
	m->len += len;
	return true;
}

/* An SbWalCopyFn: the file into the MemOut ARG. */
static bool
copy_to_memory(void *arg, SbWalWorker *w, SbWalFolder *folder, const char *name,
			   uint64_t sysid, SbWalHeader *h, SbError *err)
{
	MemOut	   *m = arg;

	m->len = 0;
	return sb_wal_read_copy(w, folder, name, sysid, mem_write, m, h, err);
}

/* Read archived file NAME whole into M; *ABSENT when the archive does not hold it. */
static bool
read_history(const SbWalDests *dests, const char *name, MemOut *m, bool *absent, SbError *err)
{
	SbWalFound	found;
	SbWalWorker w;
	SbWalHeader h;
	uint32_t	used;
	bool		ok;

	*absent = false;
	if (!sb_wal_find(dests, name, &found, err))
	{
		*absent = err->code == SB_ENOTFOUND;
		return *absent;
	}
	if (found.info.raw_bytes > MAX_HISTORY_BYTES)
		return sb_error_set(err, SB_ECORRUPT, "timeline history file \"%s\" is %" PRIu64 " bytes long",
							name, found.info.raw_bytes);
	if (!sb_wal_worker_init(&w, SB_CODEC_ZSTD, 1, sb_wal_piece_size((uint32_t) MAX_HISTORY_BYTES),
							dests->key, err))
		return false;
	ok = sb_wal_read_found(&w, dests, &found, name, copy_to_memory, m, &used, &h, err);
	sb_wal_worker_free(&w);
	m->buf[ok ? m->len : 0] = '\0';
	return ok;
}

/* ---------- parsing it ---------- */

/* "<tli>\t<hi>/<lo>" at the start of LINE: false when it is not that. */
static bool
parse_history_line(const char *line, uint32_t *tli, uint64_t *lsn)
{
	char	   *end;
	unsigned long t;
	unsigned long hi,
				lo;

	errno = 0;
	t = strtoul(line, &end, 10);
	if (end == line || *end != '\t' || errno != 0 || t == 0 || t > UINT32_MAX)
		return false;
	line = end + 1;
	hi = strtoul(line, &end, 16);
	if (end == line || *end != '/' || errno != 0 || hi > UINT32_MAX)
		return false;
	line = end + 1;
	lo = strtoul(line, &end, 16);
	if (end == line || (*end != '\t' && *end != '\0' && *end != '\n') || errno != 0 || lo > UINT32_MAX)
		return false;
	*tli = (uint32_t) t;
	*lsn = ((uint64_t) hi << 32) | lo;
	return true;
}

/* Each line of TEXT, history file NAME of timeline TARGET, into PATH; then TARGET itself. */
static bool
parse_history(char *text, const char *name, uint32_t target, TimelinePath *path, SbError *err)
{
	char	   *line;
	char	   *save = NULL;
	uint64_t	begin = 0;

	path->n = 0;
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
	{
		uint32_t	tli;
		uint64_t	end;

		line += strspn(line, " \t\r");
		if (*line == '\0' || *line == '#')
			continue;
		if (!parse_history_line(line, &tli, &end) || path->n + 1 >= MAX_TIMELINES ||
			(path->n > 0 && tli <= path->tli[path->n - 1]) || tli >= target)
			return sb_error_set(err, SB_ECORRUPT, "timeline history file \"%s\" has a line PostgreSQL would not write: \"%.80s\"",
								name, line);
		path->tli[path->n] = tli;
		path->begin[path->n++] = begin;
		begin = end;
	}
	path->tli[path->n] = target;
	path->begin[path->n++] = begin;
	return true;
}

bool
sb_wal_history_read(const SbWalDests *dests, uint32_t timeline, SbWalHistory *h, bool *absent, SbError *err)
{
	char		name[SB_WAL_NAME_MAX + 1];
	MemOut	   *m;
	bool		ok;

	h->n = 1;
	h->tli[0] = timeline;
	h->begin[0] = 0;
	*absent = false;
	if (timeline <= 1)
		return true;
	snprintf(name, sizeof(name), "%08X.history", timeline);
	if ((m = sb_alloc(sizeof(MemOut), err)) == NULL)
		return false;
	ok = read_history(dests, name, m, absent, err) && (*absent || parse_history(m->buf, name, timeline, h, err));
	if (ok && *absent)
	{
		h->n = 1;
		h->tli[0] = timeline;
		h->begin[0] = 0;
	}
	free(m);
	return ok;
}

uint32_t
sb_wal_history_at(const SbWalHistory *h, uint64_t lsn)
{
	uint32_t	i;

	/* the newest line whose stretch holds LSN, as PostgreSQL's tliOfPointInHistory */
	for (i = h->n; i > 0; i--)
		if (h->begin[i - 1] <= lsn && (i == h->n || lsn < h->begin[i]))
			return h->tli[i - 1];
	return 0;
}

/* ---------- checking ---------- */

/* The timeline segment SEGNO is expected on: the newest whose beginning is not after it. */
static uint32_t
timeline_of(const TimelinePath *path, uint64_t segno, uint32_t segment_size)
{
	uint32_t	i = path->n;

	while (i > 1 && path->begin[i - 1] / segment_size > segno)
		i--;
	return path->tli[i - 1];
}

static bool
path_has(const TimelinePath *path, uint32_t tli)
{
	uint32_t	i;

	for (i = 0; i < path->n; i++)
		if (path->tli[i] == tli)
			return true;
	return false;
}

static int
compare_name_to_entry(const void *key, const void *entry)
{
	return strcmp(key, ((const SbWalEntry *) entry)->info.name);
}

static bool
listed(const SbWalListing *l, const char *name)
{
	return bsearch(name, l->entries, l->count, sizeof(SbWalEntry), compare_name_to_entry) != NULL;
}

/* Why the listing did not take a file of NAME, when it found one: NULL when there is none. */
static const char *
refusal_of(const SbWalListing *l, const char *name)
{
	size_t		i;

	for (i = 0; i < l->nproblems; i++)
		if (strcmp(l->problems[i].name, name) == 0)
			return l->problems[i].message;
	return NULL;
}

uint32_t
sb_wal_listing_segment_size(const SbWalListing *l, uint32_t given)
{
	size_t		i;

	if (given != 0)
		return given;
	for (i = 0; i < l->count; i++)
		if (l->entries[i].info.parsed.kind == SB_WAL_SEGMENT &&
			sb_wal_segment_size_valid(l->entries[i].info.raw_bytes))
			return (uint32_t) l->entries[i].info.raw_bytes;
	return SB_WAL_DEFAULT_SEGMENT_SIZE;
}

static void
set_gap(SbWalContinuity *c, const char *name, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

static void
set_gap(SbWalContinuity *c, const char *name, const char *fmt,...)
{
	va_list		ap;

	c->complete = false;
	snprintf(c->first_missing, sizeof(c->first_missing), "%s", name);
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
}

/* The timelines from FROM's to TO's: TO's history file when they differ. */
static bool
timeline_path(const SbWalDests *dests, const SbWalName *from, const SbWalName *to,
			  TimelinePath *path, SbWalContinuity *c, SbError *err)
{
	char		name[SB_WAL_NAME_MAX + 1];
	MemOut	   *m;
	bool		absent;
	bool		ok;

	path->n = 1;
	path->tli[0] = to->timeline;
	path->begin[0] = 0;
	if (from->timeline == to->timeline)
		return true;
	snprintf(name, sizeof(name), "%08X.history", to->timeline);
	if ((m = sb_alloc(sizeof(MemOut), err)) == NULL)
		return false;
	ok = read_history(dests, name, m, &absent, err);
	if (ok && absent)
		set_gap(c, name, "timeline history file \"%s\" is not in the archive: where timeline %u began is not known",
				name, to->timeline);
	else if (ok)
		ok = parse_history(m->buf, name, to->timeline, path, err);
	free(m);
	if (ok && !absent && !path_has(path, from->timeline))
		return sb_error_set(err, SB_EINVAL, "timeline %u is not one that timeline %u came from (\"%s\")",
							from->timeline, to->timeline, name);
	return ok;
}

bool
sb_wal_timeline_holds(const SbWalDests *dests, uint32_t timeline, uint32_t from_timeline, uint64_t lsn,
					  bool *holds, uint64_t *switch_point, SbError *err)
{
	char		name[SB_WAL_NAME_MAX + 1];
	TimelinePath *path = NULL;
	MemOut	   *m;
	bool		absent;
	bool		ok;
	uint32_t	i;

	*holds = timeline == from_timeline;
	*switch_point = 0;
	if (timeline <= from_timeline)
		return true;
	snprintf(name, sizeof(name), "%08X.history", timeline);
	if ((m = sb_alloc(sizeof(MemOut), err)) == NULL)
		return false;
	ok = read_history(dests, name, m, &absent, err) &&
		(absent || ((path = sb_alloc(sizeof(TimelinePath), err)) != NULL &&
					parse_history(m->buf, name, timeline, path, err)));
	*holds = ok && absent;
	/* the line of FROM_TIMELINE: it ended where the next one begins */
	for (i = 0; ok && !absent && i + 1 < path->n; i++)
		if (path->tli[i] == from_timeline)
		{
			*switch_point = path->begin[i + 1];
			*holds = lsn <= *switch_point;
		}
	free(path);
	free(m);
	return ok;
}

/* Walk the segments from FROM to TO; the first one the listing lacks is the gap. */
static void
walk_segments(const SbWalListing *l, const TimelinePath *path, uint64_t first, uint64_t last,
			  SbWalContinuity *c)
{
	uint64_t	segno;

	c->complete = true;
	for (segno = first; segno <= last; segno++)
	{
		char		name[SB_WAL_NAME_MAX + 1];
		uint32_t	tli = timeline_of(path, segno, c->segment_size);

		sb_wal_segment_name(tli, segno, c->segment_size, name);
		c->segments++;
		if (listed(l, name))
			continue;
		/* A copy that is there but refused (damaged, forged, in the clear under a key) is a gap too: said so. */
		if (refusal_of(l, name) != NULL)
			set_gap(c, name, "segment \"%s\" (expected on timeline %u) cannot be used: %.400s", name, tli,
					refusal_of(l, name));
		else
			set_gap(c, name, "segment \"%s\" is not in the archive (expected on timeline %u)", name, tli);
		return;
	}
}

static bool
parse_segment(const char *name, const char *what, SbWalName *parsed, SbError *err)
{
	if (!sb_wal_name_parse(name, parsed, err))
		return false;
	if (parsed->kind != SB_WAL_SEGMENT)
		return sb_error_set(err, SB_EINVAL, "the %s of a continuity check is a segment, not \"%s\"", what, name);
	return true;
}

bool
sb_wal_check_continuity(const SbWalDests *dests, const char *from, const char *to,
						uint32_t segment_size, SbWalContinuity *c, SbError *err)
{
	SbWalName	a,
				b;
	SbWalListing l;
	TimelinePath *path;
	bool		ok;

	memset(c, 0, sizeof(*c));
	sb_error_clear(err);
	if (!parse_segment(from, "start", &a, err) || !parse_segment(to, "end", &b, err))
		return false;
	if (segment_size != 0 && !sb_wal_segment_size_valid(segment_size))
		return sb_error_set(err, SB_EINVAL, "WAL segment size %u is not a power of two from 1 MB to 1 GB",
							segment_size);
	if (sb_wal_position_before(&b, &a) || b.timeline < a.timeline)
		return sb_error_set(err, SB_EINVAL, "segment \"%s\" comes before \"%s\"", to, from);
	if (!sb_wal_list(dests, &l, err))
		return false;
	c->segment_size = sb_wal_listing_segment_size(&l, segment_size);
	ok = (path = sb_alloc(sizeof(TimelinePath), err)) != NULL &&
		timeline_path(dests, &a, &b, path, c, err);
	if (ok && c->first_missing[0] == '\0')
		walk_segments(&l, path, sb_wal_segment_number(&a, c->segment_size),
					  sb_wal_segment_number(&b, c->segment_size), c);
	free(path);
	sb_wal_listing_free(&l);
	return ok;
}
