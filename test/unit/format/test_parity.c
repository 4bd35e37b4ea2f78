/*
 * test_parity.c
 *		Parity groups (format/parity.c): every member of a group on a stripe
 *		of its own, every chunk and parity record in exactly one stripe run,
 *		and any member recovered, byte for byte, from any K others.
 */
#include <stdlib.h>
#include <string.h>

#include "format/parity.h"
#include "harness.h"
#include "tests.h"

/* Layouts are refused with a message naming the value. */
void
test_parity_layout_refused(void)
{
	SbParityLayout l;
	SbError		err;

	ok(!sb_parity_layout_init(&l, 3, 0, 16, &err), "redundancy 0 is no parity layout");
	like(err.message, "redundancy 0", "the message names it");
	ok(!sb_parity_layout_init(&l, 2, 2, 16, &err), "redundancy 2 over 2 stripes refused");
	like(err.message, "at least 3 destinations", "the message says how many are needed");
	ok(!sb_parity_layout_init(&l, 4, 1, 0, &err), "a run of 0 refused");
	ok(sb_parity_layout_init(&l, 2, 1, 1, &err), "redundancy 1 over 2 stripes: mirrored");
	is_int(l.data, 1, "one data member a group");
}

typedef struct RunTally
{
	uint8_t    *data_seen;
	uint8_t    *parity_seen;
	uint64_t	data_total;
	uint64_t	parity_total;
	uint64_t	last_first;
	bool		ascending;
	bool		bad;
	const SbParityLayout *layout;
	uint32_t	stripe;
} RunTally;

static void
tally_run(void *arg, int kind, uint64_t first, uint64_t last)
{
	RunTally   *t = arg;
	uint64_t	id;

	if (t->data_total + t->parity_total > 0 && first <= t->last_first && kind == SB_CHUNK_KIND_DATA)
		t->ascending = false;
	if (kind == SB_CHUNK_KIND_DATA)
		t->last_first = first;
	for (id = first; id <= last; id++)
	{
		uint8_t    *seen = kind == SB_CHUNK_KIND_DATA ? t->data_seen : t->parity_seen;
		SbParityPlace p = kind == SB_CHUNK_KIND_DATA ? sb_parity_place_of_chunk(t->layout, id) :
			sb_parity_place_of_parity(t->layout, id);

		if (seen[id]++ || sb_parity_stripe(t->layout, p.group, p.member) != t->stripe)
			t->bad = true;
		if (kind == SB_CHUNK_KIND_PARITY && sb_parity_id(t->layout, p.group, p.member - t->layout->data) != id)
			t->bad = true;
		if (kind == SB_CHUNK_KIND_DATA)
			t->data_total++;
		else
			t->parity_total++;
	}
}

/* One layout over CHUNKS chunks: runs, groups and places agree. */
static void
check_geometry(uint32_t n, uint32_t m, uint32_t run, uint64_t chunks)
{
	SbParityLayout l;
	SbError		err;
	uint64_t	groups,
				g,
				c;
	RunTally	t;
	uint32_t	s,
				j;
	bool		distinct = true,
				placed = true;

	if (!ok(sb_parity_layout_init(&l, n, m, run, &err), "layout %u/%u/%u", n, m, run))
		return;
	groups = sb_parity_groups(&l, chunks);
	memset(&t, 0, sizeof(t));
	t.layout = &l;
	t.data_seen = calloc(chunks + 1, 1);
	t.parity_seen = calloc(groups * m + 1, 1);
	t.ascending = true;
	for (s = 0; s < n; s++)
	{
		t.stripe = s;
		t.last_first = 0;
		sb_parity_stripe_runs(&l, s, chunks, tally_run, &t);
	}
	ok(!t.bad && t.data_total == chunks && t.parity_total == groups * m,
	   "%u/%u/%u over %llu chunks: each chunk and parity record in one run of its stripe", n, m,
	   run, (unsigned long long) chunks);
	for (g = 0; g < groups; g++)
	{
		uint8_t		used[SB_PARITY_MAX_STRIPES] = {0};

		for (j = 0; j < n; j++)
			if (used[sb_parity_stripe(&l, g, j)]++)
				distinct = false;
	}
	for (c = 0; c < chunks; c++)
	{
		SbParityPlace p = sb_parity_place_of_chunk(&l, c);
		uint64_t	back;

		if (p.group >= groups || !sb_parity_member_chunk(&l, p.group, p.member, chunks, &back) || back != c)
			placed = false;
	}
	ok(distinct, "no stripe holds two members of a group");
	ok(placed, "every chunk's group and member lead back to it");
	free(t.data_seen);
	free(t.parity_seen);
}

void
test_parity_geometry(void)
{
	check_geometry(4, 1, 16, 1000);
	check_geometry(4, 1, 16, 48);
	check_geometry(4, 1, 16, 49);
	check_geometry(5, 2, 4, 77);
	check_geometry(2, 1, 1, 9);
	check_geometry(3, 1, 3, 1);
	check_geometry(8, 3, 16, 0);
}

/* Every member of a group of records of uneven length recovered from each set of K others. */
static void
check_recovery(uint32_t n, uint32_t m, uint32_t data_members)
{
	SbParityLayout l;
	SbParityCoder c;
	SbError		err;
	uint8_t    *members[SB_PARITY_MAX_STRIPES];
	uint8_t    *out;
	bool		present[SB_PARITY_MAX_STRIPES];
	size_t		len = 5000,
				rec_len[SB_PARITY_MAX_STRIPES];
	uint32_t	j,
				lost,
				other,
				good = 0,
				tries = 0;

	if (!sb_parity_layout_init(&l, n, m, 16, &err) || !sb_parity_coder_init(&c, &l, &err))
	{
		ok(false, "layout and coder: %s", err.message);
		return;
	}
	for (j = 0; j < n; j++)
		members[j] = calloc(len, 1);
	out = malloc(len);
	/* data members of lengths 5000, 4001, 3002, ...; those past DATA_MEMBERS absent (zeros) */
	for (j = 0; j < l.data; j++)
	{
		rec_len[j] = j < data_members ? len - j * 999 : 0;
		th_fill(members[j], rec_len[j], 77 + j, j % 2 == 0);
	}
	for (j = l.data; j-- > 0;)	/* any order */
		sb_parity_add(&c, j, members[j], rec_len[j], members + l.data);
	for (lost = 0; lost < n; lost++)
		for (other = lost; other < n; other++)
		{
			if (m < 2 && other != lost)
				continue;
			for (j = 0; j < n; j++)
				present[j] = j != lost && j != other;
			tries++;
			if (sb_parity_recover(&c, present, members, len, lost, out, &err) &&
				memcmp(out, members[lost], len) == 0)
				good++;
		}
	is_int(good, tries, "%u/%u with %u data members: every member back from every %u others", n,
		   m, data_members, l.data);
	for (j = 0; j < n; j++)
		present[j] = j >= m + 1;
	ok(!sb_parity_recover(&c, present, members, len, 0, out, &err), "with %u members gone, refused", m + 1);
	like(err.message, "cannot be recovered", "and the message says so");
	for (j = 0; j < n; j++)
		free(members[j]);
	free(out);
	sb_parity_coder_free(&c);
}

void
test_parity_recovery(void)
{
	check_recovery(4, 1, 3);
	check_recovery(4, 1, 2);
	check_recovery(5, 2, 3);
	check_recovery(2, 1, 1);
	check_recovery(8, 3, 5);
}
