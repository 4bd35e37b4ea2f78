/*
 * frames.h
 *		A compressed chunk cut into frames (docs/FORMAT.md 3.2, stripes 2.1):
 *		one zstd frame per FRAME bytes of the chunk, each decompressible on
 *		its own, after a table of their stored lengths and of the XXH3-64 of
 *		the bytes each holds.  The table is a zstd skippable frame, so the
 *		payload is still what zstd decompresses whole; a delta restore reads
 *		the table, compares each frame's hash with what its copy holds, and
 *		reads and decompresses only the frames that differ.
 */
#ifndef SB_FRAMES_H
#define SB_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The raw bytes of a frame a writer makes by default (the last one of a
 * chunk may hold fewer), and the least it may be set to: smaller frames let
 * a delta read less, larger ones store less (each frame starts without the
 * history of the one before: docs/DECISIONS.md "The cost of frames").
 */
#define SB_FRAME_SIZE (64 * 1024)
#define SB_FRAME_SIZE_LEAST (16 * 1024)

/* The smallest frame a reader accepts: a table cannot ask for more entries than this allows. */
#define SB_FRAME_MIN 4096

/* The table's fixed part: skippable magic, its length, tag, frame size, frame count. */
#define SB_FRAME_TABLE_HEAD 20
#define SB_FRAME_ENTRY 12

/* A chunk's table, as read: where its frames are in the payload, and what each holds. */
typedef struct SbFrameTable
{
	const uint8_t *entries;		/* SB_FRAME_ENTRY bytes each, in the payload */
	uint32_t	count;
	uint32_t	frame_size;		/* raw bytes of every frame but the last */
	uint32_t	raw_len;		/* of the chunk */
	size_t		data_offset;	/* of the first frame in the payload */
} SbFrameTable;

/* Frames of a chunk of RAW_LEN bytes, and the bytes of its table. */
extern uint32_t sb_frame_count(size_t raw_len, uint32_t frame_size);
extern size_t sb_frame_table_len(uint32_t count);

/* Write the table head into PAYLOAD (its entries are set one by one). */
extern void sb_frame_table_begin(uint8_t *payload, uint32_t count, uint32_t frame_size);
extern void sb_frame_table_set(uint8_t *payload, uint32_t i, uint32_t stored_len, uint64_t raw_hash);

/*
 * Does PAYLOAD (AVAILABLE bytes of it read, PAYLOAD_LEN in all) of a chunk
 * of RAW_LEN bytes begin with a frame table whose frames fill the rest?
 * False when it does not (a chunk of stripes 2.0, or one whose table is
 * damaged: it is then read whole, as any other).  AVAILABLE need only
 * cover the table.
 */
extern bool sb_frame_table_read(const uint8_t *payload, size_t available, size_t payload_len,
								size_t raw_len, SbFrameTable *t);

/* Frame I: where it is in the payload, how many bytes it takes there, and its raw bytes. */
extern size_t sb_frame_offset(const SbFrameTable *t, uint32_t i);
extern uint32_t sb_frame_stored_len(const SbFrameTable *t, uint32_t i);
extern uint32_t sb_frame_raw_len(const SbFrameTable *t, uint32_t i);
extern uint64_t sb_frame_raw_hash(const SbFrameTable *t, uint32_t i);

#endif							/* SB_FRAMES_H */
