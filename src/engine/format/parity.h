/*
 * parity.h
 *		Redundancy across the stripes of one backup (docs/FORMAT.md section
 *		10): where each member of a parity group lives, and the Reed-Solomon
 *		code (ISA-L's, over GF(2^8)) that makes its parity records and gives
 *		back a lost member from any DATA others.
 *
 * A backup of N stripes with redundancy M groups its data chunks by
 * K = N - M: every group has (up to) K data chunks and M parity records,
 * each on a stripe of its own, so the loss of any M stripes costs no group
 * more than M members.  Groups come in blocks of RUN: in block b, member j
 * (0..K-1 data, K..N-1 parity) of every group lives on stripe (b + j) mod N,
 * and member j's data chunks are RUN consecutive chunk ids, so a stripe's
 * chunk ranges stay long and the roles rotate from block to block (every
 * stripe holds the same share: with redundancy, balance is by count).
 *
 * What the code covers is a chunk's whole record (its 48-byte header and its
 * payload as stored), each padded with zeros to the longest record of its
 * group: a recovered record checks itself (its header's seal and hashes) and
 * says its own length.
 */
#ifndef SB_PARITY_H
#define SB_PARITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_error.h"

/* At most this many parity records per group, and stripes per backup with redundancy. */
#define SB_PARITY_MAX 8			/* SB_MAX_REDUNDANCY (sb_backup.h) */
#define SB_PARITY_MAX_STRIPES 64

/* Groups per block when the writer is not told otherwise. */
#define SB_PARITY_DEFAULT_RUN 16
#define SB_PARITY_MAX_RUN 4096

/* Kinds of chunk record: byte 6 of a chunk header, byte 26 of an index entry. */
#define SB_CHUNK_KIND_DATA 0
#define SB_CHUNK_KIND_PARITY 1

typedef struct SbParityLayout
{
	uint32_t	stripes;		/* N */
	uint32_t	data;			/* K = N - M: data members of a full group */
	uint32_t	parity;			/* M */
	uint32_t	run;			/* groups per block */
} SbParityLayout;

/* Where one member of a group is. */
typedef struct SbParityPlace
{
	uint64_t	group;
	uint32_t	member;			/* 0..K-1 a data chunk, K..N-1 a parity record */
} SbParityPlace;

/* N stripes, M parity records a group, RUN groups a block: checked, or false (ERR names the value). */
extern bool sb_parity_layout_init(SbParityLayout *l, uint32_t stripes, uint32_t parity,
								  uint32_t run, SbError *err);

/* The group and member of data chunk CHUNK_ID. */
extern SbParityPlace sb_parity_place_of_chunk(const SbParityLayout *l, uint64_t chunk_id);

/* The group and member of parity record PARITY_ID. */
extern SbParityPlace sb_parity_place_of_parity(const SbParityLayout *l, uint64_t parity_id);

/* The stripe (0-based) that holds member MEMBER of GROUP. */
extern uint32_t sb_parity_stripe(const SbParityLayout *l, uint64_t group, uint32_t member);

/* The stripe (0-based) that holds data chunk CHUNK_ID. */
extern uint32_t sb_parity_chunk_stripe(const SbParityLayout *l, uint64_t chunk_id);

/*
 * The chunk id of data member MEMBER (< K) of GROUP into *CHUNK_ID; false
 * when a backup of CHUNKS chunks has none there (its last block is short).
 */
extern bool sb_parity_member_chunk(const SbParityLayout *l, uint64_t group, uint32_t member,
								   uint64_t chunks, uint64_t *chunk_id);

/* The id of parity record P (0..M-1) of GROUP. */
extern uint64_t sb_parity_id(const SbParityLayout *l, uint64_t group, uint32_t p);

/* How many groups a backup of CHUNKS data chunks has (each with at least one data member). */
extern uint64_t sb_parity_groups(const SbParityLayout *l, uint64_t chunks);

/*
 * What stripe STRIPE (0-based) holds of a backup of CHUNKS chunks, in
 * ascending runs: calls FN(ARG, KIND, FIRST, LAST) for each run of data
 * chunk ids or parity ids (KIND SB_CHUNK_KIND_*), blocks in order.
 */
typedef void (*SbParityRunFn) (void *arg, int kind, uint64_t first, uint64_t last);
extern void sb_parity_stripe_runs(const SbParityLayout *l, uint32_t stripe, uint64_t chunks,
								  SbParityRunFn fn, void *arg);

/* The Reed-Solomon code of a layout: K data, M parity. */
typedef struct SbParityCoder
{
	uint32_t	data;
	uint32_t	parity;
	/* (K + M) x K: the identity over M rows of a Cauchy matrix (any K rows invert) */
	uint8_t		matrix[SB_PARITY_MAX_STRIPES * SB_PARITY_MAX_STRIPES];
	uint8_t    *tables;			/* ISA-L's expanded tables of the M parity rows */
} SbParityCoder;

extern bool sb_parity_coder_init(SbParityCoder *c, const SbParityLayout *l, SbError *err);
extern void sb_parity_coder_free(SbParityCoder *c);

/*
 * Add data member MEMBER's record (LEN bytes) into the group's M parity
 * buffers, which start zeroed and are at least as long as the group's
 * longest record; members may come in any order, each once.
 */
extern void sb_parity_add(const SbParityCoder *c, uint32_t member, const uint8_t *record,
						  size_t len, uint8_t *const *parity);

/*
 * Member WANT of a group from the others: MEMBERS[j] (j < K + M) holds
 * member j padded with zeros to LEN bytes where PRESENT[j], and is ignored
 * otherwise (a data member the group does not have counts as present and
 * all zeros).  Writes LEN bytes to OUT.  False (ERR) with fewer than K
 * present.
 */
extern bool sb_parity_recover(const SbParityCoder *c, const bool *present,
							  uint8_t *const *members, size_t len, uint32_t want, uint8_t *out,
							  SbError *err);

/*
 * Members WANT[0..NWANT) of one group, made up a member at a time from the
 * members USE says (K of them, in any order): each member's contribution
 * is added as it comes, so nothing but the outputs is kept (a degraded
 * restore's group assembler, group_assembler.c).
 */
typedef struct SbParityDecoder
{
	uint32_t	data;			/* K */
	uint32_t	nwant;
	int32_t		column[SB_PARITY_MAX_STRIPES];	/* member j's place among the K, or -1 */
	unsigned char tables[32 * SB_PARITY_MAX_STRIPES * SB_PARITY_MAX];
} SbParityDecoder;

/* False (ERR) unless USE has exactly K members, none of them wanted, and NWANT is 1..M. */
extern bool sb_parity_decoder_init(SbParityDecoder *d, const SbParityCoder *c, const bool *use,
								   const uint32_t *want, uint32_t nwant, SbError *err);

/*
 * Add member MEMBER (one USE has: a data member's record, a parity record's
 * payload; LEN bytes) into OUT[0..NWANT), which start zeroed and are as long
 * as the group's records: the zeros a member is padded with add nothing.
 */
extern void sb_parity_decoder_add(const SbParityDecoder *d, uint32_t member, const uint8_t *record,
								  size_t len, uint8_t *const *out);

#endif							/* SB_PARITY_H */
