/*
 * test_recover.c
 *		Recovering a member of a parity group (restore/recover.c) from
 *		records made as a writer makes them: every member of every group
 *		recovered byte for byte, members that fail their check skipped,
 *		too many lost refused with each one named, and a member that lies
 *		about being good caught by the recovered record's own check.
 */
#include <stdlib.h>
#include <string.h>

#include "format/checksum.h"
#include "restore/recover.h"
#include "harness.h"
#include "tests.h"

#define CAP (2 * SB_CHUNK_HEADER_SIZE + 4096 + 64)

/* A group as a writer makes it: data records (or none), and parity payloads of length L. */
typedef struct Group
{
	SbParityLayout layout;
	SbParityCoder coder;
	uint64_t	group;
	uint8_t    *members[SB_PARITY_MAX_STRIPES];	/* CAP bytes each */
	size_t		lens[SB_PARITY_MAX_STRIPES];
	bool		none[SB_PARITY_MAX_STRIPES];	/* a data member the group does not have */
	uint64_t	ids[SB_PARITY_MAX_STRIPES];
	bool		lost[SB_PARITY_MAX_STRIPES];	/* READ says so */
	bool		lie[SB_PARITY_MAX_STRIPES];	/* READ says good, hands over flipped bytes */
	bool		read[SB_PARITY_MAX_STRIPES];	/* READ was asked for it */
} Group;

static void
make_record(uint8_t *out, uint64_t chunk_id, uint32_t len)
{
	SbChunkHeader h;

	memset(&h, 0, sizeof(h));
	th_fill(out + SB_CHUNK_HEADER_SIZE, len, (uint32_t) chunk_id * 7 + 1, false);
	h.chunk_id = chunk_id;
	h.raw_len = h.stored_len = len;
	h.raw_hash = h.stored_hash = sb_hash64(out + SB_CHUNK_HEADER_SIZE, len);
	sb_format_encode_chunk(&h, out);
}

static bool
make_group(Group *g, uint32_t n, uint32_t m, uint32_t run, uint64_t chunks, uint64_t group)
{
	SbError		err;
	uint8_t    *parity[SB_PARITY_MAX];
	size_t		L = 0;
	uint32_t	j;

	memset(g, 0, sizeof(*g));
	if (!sb_parity_layout_init(&g->layout, n, m, run, &err) ||
		!sb_parity_coder_init(&g->coder, &g->layout, &err))
		return false;
	g->group = group;
	for (j = 0; j < n; j++)
		g->members[j] = calloc(1, CAP);
	for (j = 0; j < g->layout.data; j++)
	{
		g->none[j] = !sb_parity_member_chunk(&g->layout, group, j, chunks, &g->ids[j]);
		if (g->none[j])
			continue;
		/* uneven lengths: the longest sets L */
		make_record(g->members[j], g->ids[j], (uint32_t) (100 + (g->ids[j] * 977) % 3000));
		g->lens[j] = SB_CHUNK_HEADER_SIZE + 100 + (g->ids[j] * 977) % 3000;
		if (g->lens[j] > L)
			L = g->lens[j];
	}
	for (j = 0; j < m; j++)
	{
		parity[j] = g->members[g->layout.data + j];
		g->lens[g->layout.data + j] = L;
		g->ids[g->layout.data + j] = sb_parity_id(&g->layout, group, j);
	}
	for (j = 0; j < g->layout.data; j++)
		if (!g->none[j])
			sb_parity_add(&g->coder, j, g->members[j], g->lens[j], parity);
	return true;
}

static void
free_group(Group *g)
{
	uint32_t	j;

	for (j = 0; j < g->layout.stripes; j++)
		free(g->members[j]);
	sb_parity_coder_free(&g->coder);
}

static SbMemberStatus
read_from_group(void *arg, uint64_t group, uint32_t member, uint8_t *buf, size_t cap,
				size_t *len, SbError *why)
{
	Group	   *g = arg;

	if (group != g->group || member >= g->layout.stripes || cap < g->lens[member])
		return sb_error_set(why, SB_EINVAL, "asked for the wrong member"), SB_MEMBER_LOST;
	g->read[member] = true;
	if (member < g->layout.data && g->none[member])
		return SB_MEMBER_NONE;
	if (g->lost[member])
	{
		sb_error_set(why, SB_ECORRUPT, "checksum mismatch (test)");
		return SB_MEMBER_LOST;
	}
	memcpy(buf, g->members[member], g->lens[member]);
	if (g->lie[member])
		buf[g->lens[member] / 2] ^= 0x5a;
	*len = g->lens[member];
	return SB_MEMBER_GOOD;
}

/* Member WANT recovered and identical to what the writer made (a parity record: its payload). */
static bool
recovered_ok(Group *g, uint32_t want, SbError *err)
{
	uint8_t    *out = calloc(1, CAP);
	size_t		len = 0;
	SbChunkHeader h;
	bool		parity = want >= g->layout.data;
	bool		good;

	good = sb_recover_member(&g->layout, &g->coder, g->group, want,
							 parity ? SB_CHUNK_KIND_PARITY : SB_CHUNK_KIND_DATA, g->ids[want],
							 read_from_group, g, CAP, out, &len, &h, err);
	if (good && parity)
		good = len == SB_CHUNK_HEADER_SIZE + g->lens[want] && h.kind == SB_CHUNK_KIND_PARITY &&
			memcmp(out + SB_CHUNK_HEADER_SIZE, g->members[want], g->lens[want]) == 0;
	else if (good)
		good = len == g->lens[want] && h.chunk_id == g->ids[want] &&
			memcmp(out, g->members[want], len) == 0;
	free(out);
	return good;
}

/* Each member of every group of a backup of CHUNKS chunks, with LOST_TOO others lost as well. */
static void
check_every_member(uint32_t n, uint32_t m, uint32_t run, uint64_t chunks, uint32_t lost_too)
{
	SbParityLayout l;
	SbError		err;
	uint64_t	group,
				groups,
				tried = 0,
				good = 0;
	uint32_t	want;

	sb_parity_layout_init(&l, n, m, run, &err);
	groups = sb_parity_groups(&l, chunks);
	for (group = 0; group < groups; group++)
	{
		Group		g;

		if (!make_group(&g, n, m, run, chunks, group))
			break;
		for (want = 0; want < n; want++)
		{
			uint32_t	k;

			if (want < g.layout.data && g.none[want])
				continue;
			memset(g.lost, 0, sizeof(g.lost));
			for (k = 1; k <= lost_too; k++)
				g.lost[(want + k) % n] = true;
			tried++;
			if (recovered_ok(&g, want, &err))
				good++;
			else
				diag("group %llu member %u: %s", (unsigned long long) group, want, err.message);
		}
		free_group(&g);
	}
	is_int(good, tried, "%u stripes, redundancy %u, %llu chunks: every member recovered with %u other(s) lost",
		   n, m, (unsigned long long) chunks, lost_too);
}

void
test_recover_every_member(void)
{
	check_every_member(4, 1, 2, 20, 0);
	check_every_member(4, 1, 16, 1, 0);
	check_every_member(5, 2, 3, 31, 1);
	check_every_member(2, 1, 1, 5, 0);
	check_every_member(8, 3, 2, 40, 2);
}

void
test_recover_refused(void)
{
	Group		g;
	SbError		err;

	if (!ok(make_group(&g, 4, 1, 2, 24, 0), "a group of 4 stripes, redundancy 1"))
		return;
	g.lost[1] = true;
	ok(!recovered_ok(&g, 0, &err), "two members lost with redundancy 1: refused");
	like(err.message, "2 of the 3 other members", "the message says how many were good");
	like(err.message, "member 2: checksum mismatch (test)", "and names the member that was not");
	free_group(&g);

	if (!ok(make_group(&g, 5, 2, 2, 24, 3), "a group of 5 stripes, redundancy 2"))
		return;
	g.lost[4] = true;
	ok(recovered_ok(&g, 2, &err), "the member wanted and a damaged one, redundancy 2: recovered");
	g.lost[0] = true;
	ok(!recovered_ok(&g, 2, &err), "three of five lost: refused");
	free_group(&g);
}

void
test_recover_checks_result(void)
{
	Group		g;
	SbError		err;

	if (!ok(make_group(&g, 4, 1, 2, 24, 1), "a group of 4 stripes"))
		return;
	g.lie[2] = true;
	ok(!recovered_ok(&g, 0, &err), "a member handed over damaged as good: the recovered record fails");
	like(err.message, "recovered", "the message says it is the recovered record");
	free_group(&g);
}

/* K members read, data members first: the next one only when one of them is bad. */
void
test_recover_reads_k(void)
{
	Group		g;
	SbError		err;

	if (!ok(make_group(&g, 5, 2, 2, 24, 0), "a group of 5 stripes, redundancy 2"))
		return;
	ok(recovered_ok(&g, 0, &err) && g.read[1] && g.read[2] && g.read[3] && !g.read[4],
	   "member 1 from members 2, 3 and the first parity record: the second not read");
	memset(g.read, 0, sizeof(g.read));
	g.lost[3] = true;
	ok(recovered_ok(&g, 0, &err) && g.read[3] && g.read[4],
	   "the first parity record bad: the second read instead");
	memset(g.read, 0, sizeof(g.read));
	memset(g.lost, 0, sizeof(g.lost));
	ok(recovered_ok(&g, 3, &err) && g.read[0] && g.read[1] && g.read[2] && !g.read[4],
	   "a parity record from the data members alone");
	free_group(&g);
}
