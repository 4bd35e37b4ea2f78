/*
 * wal_place.c
 *		Where the copies of an archived WAL file go: each segment to the
 *		destination furthest below its weighted share of the bytes held
 *		(adaptive: the one with the fewest writes under way first), M + 1
 *		distinct ones with redundancy M, and a destination that fails done
 *		without while M + 1 others take the file (DECISIONS.md, "Copies of
 *		each segment" and "Which destination").
 *
 * Apart from wal_push.c because it is a decision, not I/O: what it counts
 * and chooses is the same whatever writes the copies, and it is read and
 * changed by every worker of a push at once, under its own lock.
 */
#include <stdio.h>
#include <string.h>

#include "wal/wal_place.h"

void
sb_wal_place_init(SbWalPlacement *p, const SbWalArchiveOptions *o)
{
	double		total = 0;
	uint32_t	i;

	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->ndests = o->ndestinations;
	p->balance = o->balance;
	p->redundancy = o->redundancy;
	for (i = 0; i < p->ndests; i++)
		total += o->weights ? o->weights[i] : 1;
	for (i = 0; i < p->ndests; i++)
		p->share[i] = (o->weights ? o->weights[i] : 1) / total;
}

void
sb_wal_place_destroy(SbWalPlacement *p)
{
	pthread_mutex_destroy(&p->lock);
}

/* ---------- what each destination holds ---------- */

/* An SbWalEntryFn: the bytes of segment files, into the uint64_t ARG. */
static bool
count_segment(void *arg, const char *entry, int64_t size, SbError *err)
{
	char		name[SB_WAL_NAME_MAX + 1];
	SbWalName	parsed;
	bool		temp;

	(void) err;
	if (size >= 0 && sb_wal_parse_file_name(entry, name, &parsed, &temp) && !temp &&
		sb_wal_kind_is_segment(parsed.kind))
		*(uint64_t *) arg += (uint64_t) size;
	return true;
}

/* Bytes of the segment files in FOLDER (0 when it cannot be listed): a weighted share counts what is there. */
static uint64_t
bytes_of_segments(SbWalFolder *folder)
{
	uint64_t	bytes = 0;
	SbError		ignored;

	if (!sb_wal_folder_list(folder, count_segment, &bytes, &ignored))
		return 0;
	return bytes;
}

void
sb_wal_place_count(SbWalPlacement *p, SbWalFolder *folders)
{
	uint32_t	i;

	if (p->counted)
		return;
	for (i = 0; i < p->ndests; i++)
		p->held[i] = bytes_of_segments(&folders[i]);
	p->counted = true;
}

void
sb_wal_place_held(SbWalPlacement *p, uint64_t *bytes)
{
	pthread_mutex_lock(&p->lock);
	memcpy(bytes, p->held, p->ndests * sizeof(uint64_t));
	pthread_mutex_unlock(&p->lock);
}

/* ---------- which destination takes a segment ---------- */

/* Bytes below its share of everything held: how far destination I lags. */
static double
deficit(const SbWalPlacement *p, uint32_t i, uint64_t total)
{
	return p->share[i] * (double) total - (double) p->held[i];
}

/* Is destination I a better choice than BEST?  Adaptive: fewer writes under way first. */
static bool
better_choice(const SbWalPlacement *p, uint32_t i, uint32_t best, uint64_t total)
{
	if (p->balance == SB_BALANCE_ADAPTIVE && p->in_flight[i] != p->in_flight[best])
		return p->in_flight[i] < p->in_flight[best];
	return deficit(p, i, total) > deficit(p, best, total);
}

uint32_t
sb_wal_place_choose(SbWalPlacement *p, uint64_t size, uint64_t excluded)
{
	uint64_t	total = 0;
	uint32_t	best = SB_WAL_NO_DESTINATION;
	uint32_t	i;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->ndests; i++)
		total += p->held[i];
	for (i = 0; i < p->ndests; i++)
		if (!(excluded & SB_WAL_DEST_BIT(i)) &&
			(best == SB_WAL_NO_DESTINATION || better_choice(p, i, best, total)))
			best = i;
	if (best != SB_WAL_NO_DESTINATION)
	{
		p->held[best] += size;
		p->in_flight[best]++;
	}
	pthread_mutex_unlock(&p->lock);
	return best;
}

void
sb_wal_place_finish(SbWalPlacement *p, uint32_t d, uint64_t estimate, uint64_t actual)
{
	pthread_mutex_lock(&p->lock);
	p->held[d] = p->held[d] - estimate + actual;
	p->in_flight[d]--;
	pthread_mutex_unlock(&p->lock);
}

bool
sb_wal_place_enough(const SbWalPlacement *p, const SbWalPushResult *r)
{
	return (uint32_t) __builtin_popcountll(r->holders) >= p->redundancy + 1;
}

/* ---------- destinations done without (redundancy) ---------- */

/*
 * Is a failure with CODE the destination's, one the file may be archived
 * without?  Not a copy with other contents or sealed under a key we lack
 * (what it holds is unknown: never written over nor passed by), nor a
 * failure of this process (memory, a cancel).
 */
static bool
destination_fault(SbErrorCode code)
{
	return code != SB_EEXIST && code != SB_EKEY && code != SB_ENOMEM && code != SB_ECANCELED;
}

/* Add "\"DEST\": why" to what R says of the destinations done without. */
static void
note_skip(SbWalPushResult *r, const char *dest, const SbError *why)
{
	SbError    *e = &r->skip_error;
	size_t		used;

	if (r->skipped == 0)
	{
		sb_error_clear(e);
		e->code = why->code;
	}
	used = strlen(e->message);
	if (strstr(why->message, dest) != NULL)
		snprintf(e->message + used, sizeof(e->message) - used, "%s%s", used ? "; " : "", why->message);
	else
		snprintf(e->message + used, sizeof(e->message) - used, "%s\"%s\": %s", used ? "; " : "",
				 dest, why->message);
}

bool
sb_wal_place_skip(const SbWalPlacement *p, uint32_t d, const char *dest, bool source_failed,
				  SbWalPushResult *r, SbError *err)
{
	if (p->redundancy == 0 || source_failed || !destination_fault(err->code))
		return false;
	note_skip(r, dest, err);
	r->skipped |= SB_WAL_DEST_BIT(d);
	sb_error_clear(err);
	return true;
}

bool
sb_wal_place_too_few(const SbWalPlacement *p, const SbWalPushResult *r, SbError *err)
{
	uint32_t	held = (uint32_t) __builtin_popcountll(r->holders);

	sb_error_set(err, r->skipped ? r->skip_error.code : SB_EIO,
				 "%u of the %u destinations hold it; WAL archive redundancy %u needs %u%s%s", held,
				 p->ndests, p->redundancy, p->redundancy + 1, r->skipped ? ": " : "",
				 r->skipped ? r->skip_error.message : "");
	return false;
}
