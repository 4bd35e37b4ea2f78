/*
 * group_assembler.c
 *		Lost members of parity groups made up from the members the present
 *		stripes' readers hand over as they read them (group_assembler.h).
 *
 * One mutex guards everything, the arithmetic included: adding a member is
 * a pass of GF(2^8) over one record (far faster than the device read that
 * brought it), and a lock per group would have to outlive a group that a
 * taker gives up on while a member is being added.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"
#include "restore/group_assembler.h"

/* What a group needs: which members are handed over, which are made. */
typedef struct Plan
{
	bool		use[SB_PARITY_MAX_STRIPES];	/* the K members it is made from */
	bool		handed[SB_PARITY_MAX_STRIPES];	/* of those, the ones read (not zeros) */
	uint32_t	nhanded;
	uint32_t	want[SB_PARITY_MAX];	/* its lost data members */
	uint32_t	nwant;			/* 0: nothing to make, or too much lost to make it */
} Plan;

typedef enum GroupState
{
	GROUP_FREE,
	GROUP_OPEN,
	GROUP_DONE					/* every lost member taken, LOW not yet past it */
} GroupState;

typedef struct Group
{
	GroupState	state;
	uint64_t	id;
	Plan		plan;
	SbParityDecoder decoder;
	uint8_t    *out[SB_PARITY_MAX];	/* the lost members, as they are made */
	bool		added[SB_PARITY_MAX_STRIPES];
	uint32_t	nadded;
	uint32_t	taken;
	bool		broken;			/* it will not complete */
	size_t		L;				/* its parity records' length, 0 before one */
	size_t		longest;		/* its longest data record handed over */
} Group;

struct SbAssembler
{
	SbParityLayout layout;
	SbParityCoder coder;
	uint64_t	chunks;
	uint64_t	ngroups;
	bool		lost[SB_PARITY_MAX_STRIPES];
	bool		done[SB_PARITY_MAX_STRIPES];	/* readers that stopped */
	size_t		cap;
	Group	   *ring;
	uint64_t	nring;
	uint64_t	low;			/* every wanted group below it is taken */
	size_t		buffers;
	bool		stopped;
	pthread_mutex_t mutex;
	pthread_cond_t changed;
};

/*
 * GROUP's plan: its data members on lost stripes are made from its other
 * data members (those it does not have count as zeros) and the first
 * parity records on present stripes, K in all.
 */
static void
plan_group(const SbAssembler *a, uint64_t group, Plan *p)
{
	uint32_t	k = a->layout.data;
	uint32_t	n = 0,
				j;
	uint64_t	chunk;

	memset(p, 0, sizeof(*p));
	for (j = 0; j < k; j++)
	{
		bool		lost = a->lost[sb_parity_stripe(&a->layout, group, j)];

		if (!sb_parity_member_chunk(&a->layout, group, j, a->chunks, &chunk))
			p->use[j] = true;
		else if (lost)
			p->want[p->nwant++] = j;
		else
			p->use[j] = p->handed[j] = true;
		n += p->use[j] ? 1 : 0;
	}
	for (j = k; j < k + a->layout.parity && n < k && p->nwant > 0; j++)
		if (!a->lost[sb_parity_stripe(&a->layout, group, j)])
		{
			p->use[j] = p->handed[j] = true;
			n++;
		}
	if (n < k)
		p->nwant = 0;			/* more lost than the code makes up for: not ours */
	for (j = 0; p->nwant > 0 && j < k + a->layout.parity; j++)
		p->nhanded += p->handed[j] ? 1 : 0;
}

static bool
group_wanted(const SbAssembler *a, uint64_t group)
{
	Plan		p;

	plan_group(a, group, &p);
	return p.nwant > 0;
}

bool
sb_assembler_wants(const SbAssembler *a, uint64_t group, uint32_t member)
{
	Plan		p;

	if (group >= a->ngroups || member >= a->layout.stripes)
		return false;
	plan_group(a, group, &p);
	return p.nwant > 0 && p.handed[member];
}

/* LOW past every group that is not wanted or is done with (locked). */
static void
advance_low(SbAssembler *a)
{
	while (a->low < a->ngroups)
	{
		Group	   *g = &a->ring[a->low % a->nring];

		/* a slot not free holds a group in [LOW, LOW + NRING): this one */
		if (g->state == GROUP_DONE)
			g->state = GROUP_FREE;
		else if (g->state == GROUP_OPEN || group_wanted(a, a->low))
			break;
		a->low++;
	}
	pthread_cond_broadcast(&a->changed);
}

/* GROUP's slot, opened if it was free; NULL when GROUP is not held (below LOW, or not wanted). */
static Group *
open_group(SbAssembler *a, uint64_t group)
{
	Group	   *g = &a->ring[group % a->nring];
	SbError		err;
	uint32_t	i;

	if (group < a->low || group >= a->low + a->nring)
		return NULL;
	if (g->state != GROUP_FREE)
		return g->id == group && g->state == GROUP_OPEN ? g : NULL;
	memset(g, 0, sizeof(*g));
	g->id = group;
	plan_group(a, group, &g->plan);
	if (g->plan.nwant == 0)
		return NULL;
	g->state = GROUP_OPEN;
	g->broken = !sb_parity_decoder_init(&g->decoder, &a->coder, g->plan.use, g->plan.want,
										g->plan.nwant, &err);
	for (i = 0; !g->broken && i < g->plan.nwant; i++)
	{
		g->out[i] = calloc(1, a->cap);
		g->broken = g->out[i] == NULL;
		a->buffers += g->out[i] != NULL ? 1 : 0;
	}
	return g;
}

/* Every lost member taken: the group's buffers go back, and LOW moves on. */
static void
release(SbAssembler *a, Group *g)
{
	uint32_t	i;

	for (i = 0; i < g->plan.nwant; i++)
	{
		a->buffers -= g->out[i] != NULL ? 1 : 0;
		free(g->out[i]);
		g->out[i] = NULL;
	}
	g->state = GROUP_DONE;
	advance_low(a);
}

SbAssembler *
sb_assembler_new(const SbParityLayout *layout, uint64_t chunks, const bool *lost, size_t cap,
				 uint32_t blocks, SbError *err)
{
	SbAssembler *a = sb_alloc(sizeof(SbAssembler), err);

	if (a == NULL)
		return NULL;
	a->layout = *layout;
	a->chunks = chunks;
	a->ngroups = sb_parity_groups(layout, chunks);
	memcpy(a->lost, lost, layout->stripes * sizeof(bool));
	a->cap = cap;
	/* at least a block: a reader's members of the lowest group's block must all fit */
	a->nring = (uint64_t) (blocks > 0 ? blocks : 1) * layout->run;
	a->ring = sb_alloc(a->nring * sizeof(Group), err);
	if (a->ring == NULL || !sb_parity_coder_init(&a->coder, layout, err))
	{
		free(a->ring);
		free(a);
		return NULL;
	}
	pthread_mutex_init(&a->mutex, NULL);
	pthread_cond_init(&a->changed, NULL);
	advance_low(a);
	return a;
}

void
sb_assembler_free(SbAssembler *a)
{
	uint64_t	i;

	if (a == NULL)
		return;
	for (i = 0; i < a->nring; i++)
		if (a->ring[i].state == GROUP_OPEN)
			release(a, &a->ring[i]);
	sb_parity_coder_free(&a->coder);
	pthread_mutex_destroy(&a->mutex);
	pthread_cond_destroy(&a->changed);
	free(a->ring);
	free(a);
}

SbRoom
sb_assembler_room(SbAssembler *a, uint64_t group, bool wait)
{
	SbRoom		room;

	pthread_mutex_lock(&a->mutex);
	for (;;)
	{
		room = a->stopped ? SB_ROOM_STOPPED :
			group < a->low + a->nring ? SB_ROOM : SB_ROOM_NOT_YET;
		if (room != SB_ROOM_NOT_YET || !wait)
			break;
		pthread_cond_wait(&a->changed, &a->mutex);
	}
	pthread_mutex_unlock(&a->mutex);
	return room;
}

/* Does member MEMBER (LEN bytes) fit what the group has so far?  Sets L from a parity record. */
static bool
fits(SbAssembler *a, Group *g, uint32_t member, size_t len)
{
	if (len > a->cap)
		return false;
	if (member < a->layout.data)
	{
		g->longest = len > g->longest ? len : g->longest;
		return true;
	}
	/* parity records of one group all have its length */
	if (g->L != 0 && len != g->L)
		return false;
	g->L = len;
	return true;
}

void
sb_assembler_add(SbAssembler *a, uint64_t group, uint32_t member, const uint8_t *record, size_t len)
{
	Group	   *g;

	pthread_mutex_lock(&a->mutex);
	g = a->stopped ? NULL : open_group(a, group);
	if (g != NULL && !g->broken && member < a->layout.stripes && g->plan.handed[member] &&
		!g->added[member])
	{
		if (!fits(a, g, member, len))
			g->broken = true;
		else
		{
			sb_parity_decoder_add(&g->decoder, member, record, len, g->out);
			g->added[member] = true;
			g->nadded++;
		}
		pthread_cond_broadcast(&a->changed);
	}
	pthread_mutex_unlock(&a->mutex);
}

void
sb_assembler_fail(SbAssembler *a, uint64_t group, uint32_t member)
{
	Group	   *g;

	pthread_mutex_lock(&a->mutex);
	g = open_group(a, group);
	if (g != NULL && member < a->layout.stripes && g->plan.handed[member])
	{
		g->broken = true;
		pthread_cond_broadcast(&a->changed);
	}
	pthread_mutex_unlock(&a->mutex);
}

void
sb_assembler_stripe_done(SbAssembler *a, uint32_t stripe)
{
	pthread_mutex_lock(&a->mutex);
	if (stripe < a->layout.stripes)
		a->done[stripe] = true;
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->mutex);
}

/* Will the group ever complete?  Not when a member it lacks is on a stripe whose reader stopped. */
static bool
stalled(const SbAssembler *a, const Group *g)
{
	uint32_t	j;

	if (g->broken)
		return true;
	for (j = 0; j < a->layout.stripes; j++)
		if (g->plan.handed[j] && !g->added[j] && a->done[sb_parity_stripe(&a->layout, g->id, j)])
			return true;
	return false;
}

/* The made member's place among the group's lost ones, or -1. */
static int
want_index(const Group *g, uint32_t member)
{
	uint32_t	i;

	for (i = 0; i < g->plan.nwant; i++)
		if (g->plan.want[i] == member)
			return (int) i;
	return -1;
}

/* A complete group's member I into OUT; false when what came is inconsistent. */
static bool
give(SbAssembler *a, const Group *g, int i, uint8_t *out, size_t *L)
{
	/* no parity record (impossible with a data member lost) or a data record longer than them */
	if (g->L == 0 || g->longest > g->L)
		return false;
	memcpy(out, g->out[i], g->L);
	memset(out + g->L, 0, a->cap - g->L);
	*L = g->L;
	return true;
}

SbTake
sb_assembler_take(SbAssembler *a, uint64_t group, uint32_t member, uint8_t *out, size_t *L)
{
	SbTake		take = SB_TAKE_FALLBACK;
	Group	   *g;
	int			i;

	pthread_mutex_lock(&a->mutex);
	while (!a->stopped && group >= a->low + a->nring)
		pthread_cond_wait(&a->changed, &a->mutex);
	g = a->stopped ? NULL : open_group(a, group);
	i = g != NULL ? want_index(g, member) : -1;
	while (i >= 0 && !a->stopped && g->nadded < g->plan.nhanded && !stalled(a, g))
		pthread_cond_wait(&a->changed, &a->mutex);
	if (a->stopped)
		take = SB_TAKE_STOPPED;
	else if (i >= 0)
	{
		if (!g->broken && g->nadded == g->plan.nhanded && give(a, g, i, out, L))
			take = SB_TAKE_GOOD;
		if (++g->taken == g->plan.nwant)
			release(a, g);
	}
	pthread_mutex_unlock(&a->mutex);
	return take;
}

uint64_t
sb_assembler_low(SbAssembler *a)
{
	uint64_t	low;

	pthread_mutex_lock(&a->mutex);
	low = a->low;
	pthread_mutex_unlock(&a->mutex);
	return low;
}

void
sb_assembler_abort(SbAssembler *a)
{
	pthread_mutex_lock(&a->mutex);
	a->stopped = true;
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->mutex);
}

size_t
sb_assembler_buffers(SbAssembler *a)
{
	size_t		n;

	pthread_mutex_lock(&a->mutex);
	n = a->buffers;
	pthread_mutex_unlock(&a->mutex);
	return n;
}
