/*
 * group_assembler.h
 *		A degraded restore that reads each present stripe once
 *		(docs/DECISIONS.md, "A degraded read reads each stripe once").
 *
 * With stripes lost, the readers of the present stripes read what they
 * always read plus the parity records of the groups that lost a data
 * member, and hand each member such a group needs (sb_assembler_wants) to
 * the assembler as they read it.  It adds each one into the lost members
 * as they come (SbParityDecoder: one buffer per lost member, not K), and
 * the thread of each lost stripe takes its member when the group is
 * complete.  Groups are held in a ring: a reader may not hand over a member
 * of a group more than the ring's length past the lowest group still held
 * (sb_assembler_room), so memory is bounded and the fast readers wait for
 * the slowest.  A group that cannot complete (a member failed its check,
 * a reader stopped before it) is taken as SB_TAKE_FALLBACK: the taker
 * recovers through its own handles (SbRecovery), as before.
 */
#ifndef SB_GROUP_ASSEMBLER_H
#define SB_GROUP_ASSEMBLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/parity.h"

/* Blocks of groups a reader may run ahead of the lowest group held. */
#define SB_ASSEMBLER_BLOCKS 2

typedef struct SbAssembler SbAssembler;

typedef enum SbRoom
{
	SB_ROOM,					/* the group may be handed over */
	SB_ROOM_NOT_YET,			/* only without waiting: too far ahead */
	SB_ROOM_STOPPED				/* aborted */
} SbRoom;

typedef enum SbTake
{
	SB_TAKE_GOOD,				/* the member, recovered, is in OUT */
	SB_TAKE_FALLBACK,			/* the group cannot give it: recover it another way */
	SB_TAKE_STOPPED				/* aborted */
} SbTake;

/*
 * An assembler for a backup of CHUNKS data chunks laid out as LAYOUT, whose
 * stripes LOST (per stripe) are lost; records are at most CAP bytes; the
 * ring holds BLOCKS blocks of groups.  NULL (ERR) when memory runs out.
 */
extern SbAssembler *sb_assembler_new(const SbParityLayout *layout, uint64_t chunks,
									 const bool *lost, size_t cap, uint32_t blocks,
									 SbError *err);
extern void sb_assembler_free(SbAssembler *a);

/* Is member MEMBER of GROUP one its stripe's reader hands over? */
extern bool sb_assembler_wants(const SbAssembler *a, uint64_t group, uint32_t member);

/* May a member of GROUP be handed over now?  WAIT: until it may. */
extern SbRoom sb_assembler_room(SbAssembler *a, uint64_t group, bool wait);

/*
 * Member MEMBER of GROUP, read and checked: a data member's record, a
 * parity record's payload (LEN bytes).  One not wanted is ignored.
 */
extern void sb_assembler_add(SbAssembler *a, uint64_t group, uint32_t member,
							 const uint8_t *record, size_t len);

/* Member MEMBER of GROUP failed its check: the group will not complete. */
extern void sb_assembler_fail(SbAssembler *a, uint64_t group, uint32_t member);

/* Stripe STRIPE's reader has stopped: what it did not hand over, it never will. */
extern void sb_assembler_stripe_done(SbAssembler *a, uint32_t stripe);

/*
 * Lost member MEMBER of GROUP into OUT (CAP bytes), the group's length
 * into *L, waiting for the group; the group's memory goes once every lost
 * member of it has been taken.
 */
extern SbTake sb_assembler_take(SbAssembler *a, uint64_t group, uint32_t member, uint8_t *out,
								size_t *L);

/* The lowest group that is wanted and not yet taken (the groups' count when none). */
extern uint64_t sb_assembler_low(SbAssembler *a);

/* Wake every waiter: the run stopped. */
extern void sb_assembler_abort(SbAssembler *a);

/* Buffers held now (for the tests: all returned at the end). */
extern size_t sb_assembler_buffers(SbAssembler *a);

#endif							/* SB_GROUP_ASSEMBLER_H */
