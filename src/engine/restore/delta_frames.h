/*
 * delta_frames.h
 *		A delta restore's read of a chunk the copy does not hold: only the
 *		frames (format/frames.h) whose bytes differ from the copy's are read
 *		from the stripe and decompressed, the rest taken from the copy, and
 *		the chunk so made is checked against the hash the index records of
 *		it before anything is written.
 */
#ifndef SB_DELTA_FRAMES_H
#define SB_DELTA_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "stripebackup/sb_archive.h"
#include "format/codec.h"
#include "format/frames.h"
#include "store/store.h"

/* Where a chunk is, and what it holds, from its stripe's index. */
typedef struct SbFrameChunk
{
	uint32_t	stripe;
	uint64_t	record_at;		/* its record's offset in the stripe */
	uint32_t	stored_len;
	uint32_t	raw_len;
	uint64_t	raw_hash;
} SbFrameChunk;

/* One worker's: the stripes it has opened, and room for one chunk. */
typedef struct SbFrameReader
{
	const SbArchive *archive;
	SbStoreFile *stripes;		/* per stripe, opened at its first read */
	bool	   *unreadable;		/* per stripe: its open failed (read whole) */
	uint8_t    *head;			/* a record's header and its frame table */
	size_t		head_cap;
	uint8_t    *stored;			/* the frames read, at their payload offsets */
	uint8_t    *old;			/* what the copy held where frames were read */
	uint8_t    *differs;		/* per frame of the chunk: read */
	SbFrameTable table;
	SbCodecContext *codec;
	uint64_t	read;			/* stored bytes the last chunk read */
} SbFrameReader;

extern bool sb_frame_reader_init(SbFrameReader *r, const SbArchive *a, SbError *err);
extern void sb_frame_reader_free(SbFrameReader *r);

/* What became of a chunk the copy's bytes were compared with, frame by frame. */
typedef enum SbFramePatch
{
	SB_FRAMES_READ_WHOLE,		/* not in frames, a stripe or a table that cannot be
								 * read, or a result that does not check */
	SB_FRAMES_HELD,				/* the copy holds it: nothing was read */
	SB_FRAMES_PATCHED			/* the frames that differ were read over the copy's */
} SbFramePatch;

/*
 * BUF holds the copy's bytes at chunk C's pieces: make it chunk C, reading
 * only the frames that differ.  Held or patched, BUF is then the chunk, its
 * hash checked against the index's; patched, what the copy held where
 * frames were read is in r->old (sb_frame_reader_changed compares it).
 */
extern SbFramePatch sb_frame_reader_patch(SbFrameReader *r, const SbFrameChunk *c, uint8_t *buf);

/* Do bytes FROM..TO (exclusive) of the chunk patched into BUF differ from what the copy held? */
extern bool sb_frame_reader_changed(const SbFrameReader *r, const uint8_t *buf, uint64_t from, uint64_t to);

#endif							/* SB_DELTA_FRAMES_H */
