/*
 * codec.h
 *		Chunk compression: one context per worker thread, reused for every
 *		chunk (zstd's advice), and one error wrapper for all zstd failures.
 */
#ifndef SB_CODEC_H
#define SB_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_manifest.h"

typedef struct SbCodecContext SbCodecContext;

/* Contexts for compressing at LEVEL (ignored for SB_CODEC_NONE). */
extern SbCodecContext *sb_codec_context_new(SbCodec codec, int level, SbError *err);
extern void sb_codec_context_free(SbCodecContext *ctx);

/*
 * Compress chunks in frames of FRAME_SIZE raw bytes (SB_FRAME_SIZE_LEAST or
 * more; frames.h) rather than SB_FRAME_SIZE.
 */
extern void sb_codec_set_frame_size(SbCodecContext *ctx, uint32_t frame_size);

/* Largest payload a chunk of RAW_LEN bytes can take when stored, whatever its frames' size. */
extern size_t sb_codec_bound(SbCodec codec, size_t raw_len);

/*
 * Compress SRC into DST (capacity from sb_codec_bound).  Sets *stored_len
 * and *used_codec: a chunk that does not shrink is stored as it is.
 */
extern bool sb_codec_compress(SbCodecContext *ctx, const void *src, size_t len,
							  void *dst, size_t cap, size_t *stored_len,
							  SbCodec *used_codec, SbError *err);

/* Decompress exactly RAW_LEN bytes; anything else is corruption. */
extern bool sb_codec_decompress(SbCodecContext *ctx, SbCodec codec,
								const void *src, size_t len,
								void *dst, size_t raw_len, SbError *err);

/*
 * Memory one worker's context takes to compress chunks of CHUNK_SIZE bytes
 * at LEVEL, and to decompress them (0 for SB_CODEC_NONE).
 */
extern size_t sb_codec_compress_memory(SbCodec codec, int level, size_t chunk_size);
extern size_t sb_codec_decompress_memory(SbCodec codec);

/*
 * Streaming, for files too large to hold whole (a WAL segment may be 1 GB):
 * one zstd frame fed and emitted in pieces.  What comes out goes to a sink
 * through the caller's buffer, each time the buffer fills and at the end of
 * each piece.
 */
typedef bool (*SbCodecSink) (void *arg, const void *data, size_t len, SbError *err);

/* Start a zstd frame of exactly TOTAL_LEN bytes (recorded in the frame, parameters fitted to it). */
extern bool sb_codec_stream_begin(SbCodecContext *ctx, uint64_t total_len, SbError *err);

/*
 * Compress one piece of the frame into SINK through BUF (CAP bytes: the
 * sink is called each time it fills); LAST ends the frame.  Each piece is
 * flushed, so what the sink got so far is the whole frame up to this piece.
 */
extern bool sb_codec_stream_compress(SbCodecContext *ctx, const void *src, size_t len, bool last,
									 void *buf, size_t cap, SbCodecSink sink, void *arg,
									 SbError *err);

/*
 * Start decompressing one frame that holds TOTAL_LEN bytes: a frame asking
 * for a larger window than that (which no writer of it needs) is refused,
 * so a damaged or hostile header cannot make it take more memory.
 */
extern bool sb_codec_stream_decompress_begin(SbCodecContext *ctx, uint64_t total_len,
											 SbError *err);

/*
 * Decompress one piece of a stored frame into SINK through BUF (CAP bytes).
 * *DONE once the frame has ended; a byte after its end is corruption.
 */
extern bool sb_codec_stream_decompress(SbCodecContext *ctx, const void *src, size_t len,
									   void *buf, size_t cap, SbCodecSink sink, void *arg,
									   bool *done, SbError *err);

/* Memory a streaming compression at LEVEL of TOTAL_LEN bytes takes. */
extern size_t sb_codec_stream_compress_memory(int level, uint64_t total_len);

/* Smallest and largest level accepted for zstd (negative = fast modes). */
extern int	sb_codec_min_level(void);
extern int	sb_codec_max_level(void);

#endif							/* SB_CODEC_H */
