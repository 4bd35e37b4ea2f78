/*
 * manifest_redundancy.c
 *		A manifest's redundancy (docs/FORMAT.md section 10.3) checked as a
 *		reader must: the layout sane (data = stripes - parity, parity and run
 *		in range), and every stripe's chunk_ranges and parity_ranges exactly
 *		those the layout gives (format/parity.c), adjacent runs merged, so no
 *		stripe may hold two members of a group and nothing is where a reader
 *		rebuilding a member would not look.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "format/format.h"
#include "format/parity.h"
#include "manifest/manifest_redundancy.h"

/* Runs of one kind as the layout gives them, merged, against a stripe's list. */
typedef struct RangeCursor
{
	const SbChunkRange *listed;
	uint32_t	nlisted;
	uint32_t	next;			/* the listed range the merged run must equal */
	bool		have;			/* a merged run is being built */
	SbChunkRange run;
	bool		ok;
} RangeCursor;

typedef struct StripeCompare
{
	RangeCursor kinds[2];		/* SB_CHUNK_KIND_DATA, SB_CHUNK_KIND_PARITY */
} StripeCompare;

static void
flush_run(RangeCursor *c)
{
	if (!c->have)
		return;
	if (c->next >= c->nlisted || c->listed[c->next].first != c->run.first ||
		c->listed[c->next].last != c->run.last)
		c->ok = false;
	c->next++;
	c->have = false;
}

/* sb_parity_stripe_runs' callback: a run merged with the one before when they touch. */
static void
compare_run(void *arg, int kind, uint64_t first, uint64_t last)
{
	RangeCursor *c = &((StripeCompare *) arg)->kinds[kind];

	if (c->have && c->run.last + 1 == first)
	{
		c->run.last = last;
		return;
	}
	flush_run(c);
	c->run.first = first;
	c->run.last = last;
	c->have = true;
}

static bool
check_layout(const SbManifest *m, SbParityLayout *l, SbError *err)
{
	const SbRedundancy *r = &m->redundancy;

	if (r->parity < 1 || r->parity > SB_PARITY_MAX)
		return sb_error_set(err, SB_ECORRUPT, "manifest: redundancy parity %u is out of range (1 to %d)",
							r->parity, SB_PARITY_MAX);
	if (r->parity >= m->nstripes || m->nstripes > SB_PARITY_MAX_STRIPES)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: redundancy parity %u over %u stripes (at least %u are needed)",
							r->parity, m->nstripes, r->parity + 1);
	if (r->data != m->nstripes - r->parity)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: redundancy data %u is not the %u stripes less parity %u",
							r->data, m->nstripes, r->parity);
	if (r->run < 1 || r->run > SB_PARITY_MAX_RUN)
		return sb_error_set(err, SB_ECORRUPT, "manifest: redundancy run %u is out of range (1 to %d)",
							r->run, SB_PARITY_MAX_RUN);
	return sb_parity_layout_init(l, m->nstripes, r->parity, r->run, err);
}

/*
 * Each block makes N runs over the stripes, and a merged range spans at most
 * two blocks' runs (the member that follows a merged pair is of the other
 * kind): a manifest must list at least as many ranges as the layout has
 * blocks, checked before the layout is walked, so a manifest claiming
 * chunks it does not list costs no walk of them.
 */
static bool
check_range_count(const SbManifest *m, const SbParityLayout *l, SbError *err)
{
	uint64_t	per_block = (uint64_t) l->data * l->run;
	uint64_t	blocks = (m->total_chunks + per_block - 1) / per_block;
	uint64_t	listed = 0;
	uint32_t	s;

	for (s = 0; s < m->nstripes; s++)
		listed += (uint64_t) m->stripes[s].nranges + m->stripes[s].nparity_ranges;
	if (listed < blocks)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: %" PRIu64 " chunk and parity ranges for %" PRIu64 " blocks of redundancy groups",
							listed, blocks);
	return true;
}

static bool
check_stripe(const SbManifest *m, const SbParityLayout *l, uint32_t s, SbError *err)
{
	const SbStripeInfo *st = &m->stripes[s];
	StripeCompare cmp = {{{st->ranges, st->nranges, 0, false, {0, 0}, true},
						  {st->parity_ranges, st->nparity_ranges, 0, false, {0, 0}, true}}};
	uint64_t	parity_chunks = 0;
	uint32_t	r;

	sb_parity_stripe_runs(l, s, m->total_chunks, compare_run, &cmp);
	flush_run(&cmp.kinds[SB_CHUNK_KIND_DATA]);
	flush_run(&cmp.kinds[SB_CHUNK_KIND_PARITY]);
	if (!cmp.kinds[SB_CHUNK_KIND_DATA].ok || cmp.kinds[SB_CHUNK_KIND_DATA].next != st->nranges)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: stripe %u's chunk_ranges are not those of its redundancy groups",
							s + 1);
	if (!cmp.kinds[SB_CHUNK_KIND_PARITY].ok ||
		cmp.kinds[SB_CHUNK_KIND_PARITY].next != st->nparity_ranges)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: stripe %u's parity_ranges are not those of its redundancy groups",
							s + 1);
	for (r = 0; r < st->nparity_ranges; r++)
		parity_chunks += st->parity_ranges[r].last - st->parity_ranges[r].first + 1;
	if (parity_chunks != st->parity_chunks)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: stripe %u lists %" PRIu64 " parity records in ranges, %" PRIu64 " in total",
							s + 1, parity_chunks, st->parity_chunks);
	/* a parity record is at least as long as a chunk header */
	if (st->parity_bytes < parity_chunks * SB_CHUNK_HEADER_SIZE)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: stripe %u's %" PRIu64 " parity records cannot be %" PRIu64 " bytes",
							s + 1, parity_chunks, st->parity_bytes);
	return true;
}

bool
sb_manifest_check_redundancy(const SbManifest *m, SbError *err)
{
	SbParityLayout l;
	uint64_t	parity_bytes = 0;
	uint32_t	s;

	if (m->redundancy.parity == 0)
		return true;
	if (!check_layout(m, &l, err) || !check_range_count(m, &l, err))
		return false;
	for (s = 0; s < m->nstripes; s++)
	{
		if (!check_stripe(m, &l, s, err))
			return false;
		parity_bytes += m->stripes[s].parity_bytes;
	}
	if (parity_bytes != m->parity_bytes)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: the stripes hold %" PRIu64 " parity bytes, the header says %" PRIu64,
							parity_bytes, m->parity_bytes);
	return true;
}
