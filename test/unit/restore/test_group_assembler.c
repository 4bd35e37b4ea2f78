/*
 * test_group_assembler.c
 *		The group assembler of a degraded read (restore/group_assembler.c),
 *		fed records made as a writer makes them: which members it wants,
 *		lost members made up byte for byte whatever order the others come
 *		in, a reader held back when too far ahead and let go when the
 *		slowest catches up, a damaged member or a stopped reader sending
 *		the taker to the fallback, an abort waking everyone, and every
 *		buffer given back.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "format/checksum.h"
#include "restore/group_assembler.h"
#include "restore/recover.h"
#include "harness.h"
#include "tests.h"

#define CAP (2 * SB_CHUNK_HEADER_SIZE + 4096 + 64)
#define MAX_GROUPS 64

/* A backup's groups as a writer makes them: data records and parity payloads. */
typedef struct Backup
{
	SbParityLayout layout;
	SbParityCoder coder;
	uint64_t	chunks;
	uint64_t	ngroups;
	uint8_t    *members[MAX_GROUPS][SB_PARITY_MAX_STRIPES];	/* NULL: a data member it lacks */
	size_t		lens[MAX_GROUPS][SB_PARITY_MAX_STRIPES];
	bool		lost[SB_PARITY_MAX_STRIPES];	/* per stripe */
} Backup;

static void
make_record(uint8_t *out, uint64_t chunk_id, uint32_t len)
{
	SbChunkHeader h;

	memset(&h, 0, sizeof(h));
	th_fill(out + SB_CHUNK_HEADER_SIZE, len, (uint32_t) chunk_id * 13 + 5, false);
	h.chunk_id = chunk_id;
	h.raw_len = h.stored_len = len;
	h.raw_hash = h.stored_hash = sb_hash64(out + SB_CHUNK_HEADER_SIZE, len);
	sb_format_encode_chunk(&h, out);
}

/* Group G's records: uneven data records, the parity of them padded to the longest. */
static void
make_group(Backup *b, uint64_t g)
{
	uint8_t    *parity[SB_PARITY_MAX];
	size_t		L = 0;
	uint32_t	k = b->layout.data,
				j;
	uint64_t	id;

	for (j = 0; j < k; j++)
	{
		if (!sb_parity_member_chunk(&b->layout, g, j, b->chunks, &id))
			continue;
		b->members[g][j] = calloc(1, CAP);
		b->lens[g][j] = SB_CHUNK_HEADER_SIZE + 200 + (id * 733) % 3500;
		make_record(b->members[g][j], id, (uint32_t) (b->lens[g][j] - SB_CHUNK_HEADER_SIZE));
		L = b->lens[g][j] > L ? b->lens[g][j] : L;
	}
	for (j = 0; j < b->layout.parity; j++)
	{
		b->members[g][k + j] = calloc(1, CAP);
		b->lens[g][k + j] = L;
		parity[j] = b->members[g][k + j];
	}
	for (j = 0; j < k; j++)
		if (b->members[g][j] != NULL)
			sb_parity_add(&b->coder, j, b->members[g][j], b->lens[g][j], parity);
}

static bool
make_backup(Backup *b, uint32_t n, uint32_t m, uint32_t run, uint64_t chunks)
{
	SbError		err;
	uint64_t	g;

	memset(b, 0, sizeof(*b));
	if (!sb_parity_layout_init(&b->layout, n, m, run, &err) ||
		!sb_parity_coder_init(&b->coder, &b->layout, &err))
		return false;
	b->chunks = chunks;
	b->ngroups = sb_parity_groups(&b->layout, chunks);
	for (g = 0; g < b->ngroups && g < MAX_GROUPS; g++)
		make_group(b, g);
	return b->ngroups <= MAX_GROUPS;
}

static void
free_backup(Backup *b)
{
	uint64_t	g;
	uint32_t	j;

	for (g = 0; g < b->ngroups && g < MAX_GROUPS; g++)
		for (j = 0; j < b->layout.stripes; j++)
			free(b->members[g][j]);
	sb_parity_coder_free(&b->coder);
}

static SbAssembler *
assembler_of(Backup *b, uint32_t blocks)
{
	SbError		err;
	SbAssembler *a = sb_assembler_new(&b->layout, b->chunks, b->lost, CAP, blocks, &err);

	if (a == NULL)
		th_diag_error("assembler", &err);
	return a;
}

/* Member J of group G handed over as its reader would: a parity record's payload, a data record. */
static void
hand(SbAssembler *a, Backup *b, uint64_t g, uint32_t j)
{
	if (b->members[g][j] != NULL && sb_assembler_wants(a, g, j))
		sb_assembler_add(a, g, j, b->members[g][j], b->lens[g][j]);
}

/* Is member J of group G on a lost stripe, and a data chunk the group has? */
static bool
lost_data(const Backup *b, uint64_t g, uint32_t j)
{
	return j < b->layout.data && b->members[g][j] != NULL &&
		b->lost[sb_parity_stripe(&b->layout, g, j)];
}

/* Every lost member of G taken: GOOD and byte for byte the writer's.  How many were. */
static uint32_t
take_all(SbAssembler *a, Backup *b, uint64_t g, bool *right)
{
	uint8_t    *out = malloc(CAP);
	uint32_t	j,
				n = 0;

	for (j = 0; j < b->layout.data; j++)
	{
		size_t		L = 0;

		if (!lost_data(b, g, j))
			continue;
		n++;
		if (sb_assembler_take(a, g, j, out, &L) != SB_TAKE_GOOD ||
			L != b->lens[g][b->layout.data] || memcmp(out, b->members[g][j], b->lens[g][j]) != 0)
			*right = false;
	}
	free(out);
	return n;
}

/* Lost stripe 1 of 4 (0-based), 20 chunks, runs of 2: blocks 0 and 1 lose data, 2 parity, 3 nothing. */
void
test_group_assembler_wants(void)
{
	Backup		b;
	SbAssembler *a;

	if (!ok(make_backup(&b, 4, 1, 2, 20), "20 chunks over 4 stripes, redundancy 1"))
		return;
	b.lost[1] = true;
	a = assembler_of(&b, 2);
	ok(sb_assembler_wants(a, 0, 0) && sb_assembler_wants(a, 0, 2) && sb_assembler_wants(a, 0, 3),
	   "block 0 lost its member 1: the other data members and the parity record are wanted");
	ok(!sb_assembler_wants(a, 0, 1), "not the lost member itself");
	ok(sb_assembler_wants(a, 2, 1) && sb_assembler_wants(a, 3, 3) && !sb_assembler_wants(a, 3, 0),
	   "block 1 lost its member 0");
	ok(!sb_assembler_wants(a, 4, 0) && !sb_assembler_wants(a, 5, 3),
	   "block 2 lost a parity record: nothing wanted");
	ok(!sb_assembler_wants(a, 6, 0) && !sb_assembler_wants(a, 7, 3),
	   "block 3's groups lack the lost member anyway: nothing wanted");
	ok(!sb_assembler_wants(a, 8, 0) && !sb_assembler_wants(a, 0, 9), "out of range: not wanted");
	is_int((long long) sb_assembler_low(a), 0, "the lowest group wanted is 0");
	sb_assembler_free(a);
	b.lost[1] = false;
	b.lost[0] = true;
	b.lost[2] = true;
	a = assembler_of(&b, 2);
	ok(!sb_assembler_wants(a, 0, 3), "two lost with redundancy 1: nothing can be made, nothing wanted");
	is_int((long long) sb_assembler_low(a), (long long) b.ngroups, "and no group is held");
	sb_assembler_free(a);
	free_backup(&b);
}

/* Every wanted group of B assembled, its members handed over in an order of each group's own. */
static void
assemble_in_any_order(Backup *b, const char *what)
{
	SbAssembler *a = assembler_of(b, SB_ASSEMBLER_BLOCKS);
	bool		right = true;
	uint32_t	made = 0;
	uint64_t	g;
	uint32_t	j,
				n = b->layout.stripes;

	for (g = 0; a != NULL && g < b->ngroups; g++)
	{
		right = right && sb_assembler_room(a, g, false) == SB_ROOM;
		for (j = 0; j < n; j++)
			hand(a, b, g, g % 3 == 0 ? j : g % 3 == 1 ? n - 1 - j : (j * 3 + 1) % n);
		/* handed twice: counted once */
		hand(a, b, g, 0);
		made += take_all(a, b, g, &right);
	}
	ok(right && made > 0, "%s: %u lost members made, each byte for byte", what, made);
	is_int((long long) sb_assembler_buffers(a), 0, "%s: every buffer given back", what);
	is_int((long long) sb_assembler_low(a), (long long) b->ngroups, "%s: no group held", what);
	sb_assembler_free(a);
}

void
test_group_assembler_any_order(void)
{
	Backup		b;

	if (!ok(make_backup(&b, 5, 2, 2, 31), "31 chunks over 5 stripes, redundancy 2"))
		return;
	b.lost[1] = true;
	assemble_in_any_order(&b, "2 over 5, stripe 2 lost");
	b.lost[3] = true;
	assemble_in_any_order(&b, "2 over 5, stripes 2 and 4 lost");
	free_backup(&b);
	if (!ok(make_backup(&b, 4, 1, 3, 40), "40 chunks over 4 stripes, redundancy 1"))
		return;
	b.lost[3] = true;
	assemble_in_any_order(&b, "1 over 4, stripe 4 lost");
	free_backup(&b);
}

typedef struct Waiter
{
	SbAssembler *a;
	uint64_t	group;
	uint32_t	member;
	int			result;
	uint8_t		out[CAP];
} Waiter;

static void *
wait_for_room(void *arg)
{
	Waiter	   *w = arg;

	w->result = (int) sb_assembler_room(w->a, w->group, true);
	return NULL;
}

static void *
wait_to_take(void *arg)
{
	Waiter	   *w = arg;
	size_t		L;

	w->result = (int) sb_assembler_take(w->a, w->group, w->member, w->out, &L);
	return NULL;
}

/* A ring of one block (2 groups): a reader 2 groups ahead waits until the lowest is taken. */
void
test_group_assembler_backpressure(void)
{
	Backup		b;
	SbAssembler *a;
	Waiter		w = {0};
	pthread_t	t;
	bool		right = true;
	uint32_t	j;

	if (!ok(make_backup(&b, 4, 1, 2, 40), "40 chunks over 4 stripes, redundancy 1"))
		return;
	b.lost[0] = true;
	a = assembler_of(&b, 1);
	ok(sb_assembler_room(a, 0, false) == SB_ROOM && sb_assembler_room(a, 1, false) == SB_ROOM,
	   "the ring's two groups may be handed over");
	is_int(sb_assembler_room(a, 2, false), SB_ROOM_NOT_YET, "the group after them not yet");
	w.a = a;
	w.group = 2;
	pthread_create(&t, NULL, wait_for_room, &w);
	for (j = 0; j < 4; j++)
		hand(a, &b, 0, j);
	ok(sb_assembler_buffers(a) > 0, "a group handed over holds a buffer");
	take_all(a, &b, 0, &right);
	pthread_join(t, NULL);
	ok(right && w.result == SB_ROOM, "the waiting reader goes on once group 0 is taken");
	is_int((long long) sb_assembler_low(a), 1, "the lowest group held is 1");

	/* a taker waiting for a group that will not complete: woken by the abort */
	w.group = 1;
	w.member = 0;
	hand(a, &b, 1, 1);
	pthread_create(&t, NULL, wait_to_take, &w);
	sb_assembler_abort(a);
	pthread_join(t, NULL);
	is_int(w.result, SB_TAKE_STOPPED, "an abort wakes the taker: stopped");
	is_int(sb_assembler_room(a, 1000, true), SB_ROOM_STOPPED, "and a reader asking for room");
	sb_assembler_free(a);
	free_backup(&b);
}

/* Groups that will not complete: the taker is sent to the fallback, and the memory comes back. */
void
test_group_assembler_fallback(void)
{
	Backup		b;
	SbAssembler *a;
	uint8_t    *out = malloc(CAP);
	Waiter		w = {0};
	pthread_t	t;
	size_t		L;
	uint32_t	j;

	if (!ok(make_backup(&b, 5, 2, 2, 40), "40 chunks over 5 stripes, redundancy 2"))
		return;
	b.lost[0] = true;
	b.lost[1] = true;
	a = assembler_of(&b, SB_ASSEMBLER_BLOCKS);
	/* group 0: members 0 and 1 lost, 2 fails its check */
	hand(a, &b, 0, 3);
	sb_assembler_fail(a, 0, 2);
	is_int(sb_assembler_take(a, 0, 0, out, &L), SB_TAKE_FALLBACK, "a member damaged: fallback");
	is_int(sb_assembler_take(a, 0, 1, out, &L), SB_TAKE_FALLBACK, "for each lost member of its group");
	/* group 1: the parity records disagree on their length */
	for (j = 2; j < 4; j++)
		hand(a, &b, 1, j);
	sb_assembler_add(a, 1, 4, b.members[1][4], b.lens[1][4] - 1);
	is_int(sb_assembler_take(a, 1, 0, out, &L), SB_TAKE_FALLBACK,
		   "parity records of different lengths: fallback");
	sb_assembler_take(a, 1, 1, out, &L);
	/* group 2 (block 1: lost stripes 1 and 2 hold members 4 and 0): the reader of stripe 4 stops */
	w.a = a;
	w.group = 2;
	w.member = 0;
	pthread_create(&t, NULL, wait_to_take, &w);
	hand(a, &b, 2, 1);
	hand(a, &b, 2, 3);
	sb_assembler_stripe_done(a, 3);
	pthread_join(t, NULL);
	is_int(w.result, SB_TAKE_FALLBACK, "a reader stopped before handing its member: fallback");
	is_int(sb_assembler_take(a, 2, 0, out, &L), SB_TAKE_FALLBACK, "a member not lost, or taken: fallback");
	is_int((long long) sb_assembler_buffers(a), 0, "every buffer given back");
	/* groups open when the assembler goes: freed with it (the leak check says so) */
	for (j = 2; j < 5; j++)
		hand(a, &b, 6, j);
	ok(sb_assembler_buffers(a) > 0, "a group left open");
	sb_assembler_free(a);
	free(out);
	free_backup(&b);
}
