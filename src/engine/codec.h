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

/* Largest payload a chunk of RAW_LEN bytes can take when stored. */
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

/* Smallest and largest level accepted for zstd (negative = fast modes). */
extern int	sb_codec_min_level(void);
extern int	sb_codec_max_level(void);

#endif							/* SB_CODEC_H */
