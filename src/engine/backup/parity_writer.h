/*
 * parity_writer.h
 *		A backup's parity records (docs/FORMAT.md section 10): each data
 *		chunk's finished record added into its group's parity, and the group's
 *		parity records handed to their stripes' writers once every member is
 *		in (parity_writer.c).  Sizes here are for the memory check too.
 */
#ifndef SB_PARITY_WRITER_H
#define SB_PARITY_WRITER_H

#include <stdint.h>

#include "format/codec.h"
#include "format/parity.h"

/*
 * Groups the memory check counts, each with its M parity buffers: those of
 * the chunk buffers in flight (one group each), the block being filled, and
 * M blocks of parity records waiting for a slow stripe (twice the buffers:
 * a group stays until its records are written).
 */
static inline uint64_t
sb_parity_groups_estimate(uint32_t buffers, uint32_t parity)
{
	return 2 * (uint64_t) buffers + (uint64_t) (parity + 2) * SB_PARITY_DEFAULT_RUN;
}

struct SbBackup;
struct SbChunk;
typedef struct SbParityWriter SbParityWriter;

/* The longest record of a backup of CHUNK_SIZE chunks with CODEC, sealed or not. */
extern size_t sb_parity_record_bound(SbCodec codec, uint32_t chunk_size);

/* B's parity writer, for REDUNDANCY (M, checked) over B's stripes. */
extern SbParityWriter *sb_parity_writer_new(struct SbBackup *b, uint32_t redundancy, SbError *err);
extern void sb_parity_writer_free(SbParityWriter *pw);

/* The layout B's chunks are placed by. */
extern const SbParityLayout *sb_parity_writer_layout(const SbParityWriter *pw);

/*
 * Data chunk C's record as it will be written (HEADER, then C->payload)
 * added into its group; the group's parity records queued to their stripes
 * when it was the last member.  A writer thread's, before the write.
 */
extern bool sb_parity_writer_add(SbParityWriter *pw, const struct SbChunk *c,
								 const uint8_t *header, SbError *err);

/* Parity record C was written: its group's buffers are free once all are. */
extern void sb_parity_writer_written(SbParityWriter *pw, struct SbChunk *c);

/*
 * Every data chunk is with the writers (b->total_chunks known): the groups
 * of the last block close when their fewer members are in.  Waits until
 * every group's parity records are queued, or the backup failed.
 */
extern void sb_parity_writer_finish(SbParityWriter *pw);

/* Wake a finish waiting (the backup failed). */
extern void sb_parity_writer_wake(SbParityWriter *pw);

#endif							/* SB_PARITY_WRITER_H */
