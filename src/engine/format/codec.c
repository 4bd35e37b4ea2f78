/*
 * codec.c
 *		zstd behind the chunk codec interface.
 */
#include <stdlib.h>
#include <string.h>
/* The size estimates below are in zstd's "static linking only" section (exported by libzstd). */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "format/checksum.h"
#include "format/codec.h"
#include "format/frames.h"

struct SbCodecContext
{
	SbCodec		codec;
	int			level;
	uint32_t	frame_size;		/* raw bytes a frame holds */
	ZSTD_CCtx  *cctx;			/* created on first compression */
	ZSTD_DCtx  *dctx;			/* created on first decompression */
};

SbCodecContext *
sb_codec_context_new(SbCodec codec, int level, SbError *err)
{
	SbCodecContext *ctx = calloc(1, sizeof(SbCodecContext));

	if (ctx == NULL)
	{
		sb_error_set(err, SB_ENOMEM, "out of memory");
		return NULL;
	}
	ctx->codec = codec;
	ctx->level = level;
	ctx->frame_size = SB_FRAME_SIZE;
	return ctx;
}

void
sb_codec_set_frame_size(SbCodecContext *ctx, uint32_t frame_size)
{
	ctx->frame_size = frame_size;
}

void
sb_codec_context_free(SbCodecContext *ctx)
{
	if (ctx == NULL)
		return;
	ZSTD_freeCCtx(ctx->cctx);
	ZSTD_freeDCtx(ctx->dctx);
	free(ctx);
}

/*
 * A chunk compressed is its frame table, then a frame per frame size
 * (frames.h): the bound of the smallest frames a writer may make.  (A reader
 * never meets more: a chunk that compresses to its raw size or more is
 * stored as it is.)
 */
size_t
sb_codec_bound(SbCodec codec, size_t raw_len)
{
	uint32_t	n = sb_frame_count(raw_len, SB_FRAME_SIZE_LEAST);

	if (codec != SB_CODEC_ZSTD)
		return raw_len;
	return sb_frame_table_len(n) + (n - 1) * ZSTD_compressBound(SB_FRAME_SIZE_LEAST) +
		ZSTD_compressBound(raw_len - (size_t) (n - 1) * SB_FRAME_SIZE_LEAST);
}

static bool
zstd_failed(size_t rc, const char *what, SbError *err)
{
	if (!ZSTD_isError(rc))
		return false;
	sb_error_set(err, SB_ECORRUPT, "zstd %s failed: %s", what, ZSTD_getErrorName(rc));
	return true;
}

/* Create the compression context once; the level is fixed for its life. */
static bool
ensure_cctx(SbCodecContext *ctx, SbError *err)
{
	if (ctx->cctx != NULL)
		return true;
	ctx->cctx = ZSTD_createCCtx();
	if (ctx->cctx == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory creating a zstd context");
	if (zstd_failed(ZSTD_CCtx_setParameter(ctx->cctx, ZSTD_c_compressionLevel, ctx->level),
					"level setting", err))
	{
		err->code = SB_EINVAL;
		return false;
	}
	return true;
}

/*
 * SRC in frames of the context's frame size, each compressed on its own,
 * after their table: *STORED_LEN bytes of DST in all.
 */
static bool
compress_frames(SbCodecContext *ctx, const uint8_t *src, size_t len, uint8_t *dst, size_t cap,
				size_t *stored_len, SbError *err)
{
	size_t		size = ctx->frame_size;
	uint32_t	n = sb_frame_count(len, ctx->frame_size);
	size_t		at = sb_frame_table_len(n);
	uint32_t	i;

	if (cap < at)
		return sb_error_set(err, SB_EINVAL, "no room for the frame table of a chunk");
	sb_frame_table_begin(dst, n, ctx->frame_size);
	for (i = 0; i < n; i++)
	{
		size_t		from = (size_t) i * size;
		size_t		flen = len - from < size ? len - from : size;
		size_t		rc = ZSTD_compress2(ctx->cctx, dst + at, cap - at, src + from, flen);

		if (zstd_failed(rc, "compression", err))
			return false;
		sb_frame_table_set(dst, i, (uint32_t) rc, sb_hash64(src + from, flen));
		at += rc;
	}
	*stored_len = at;
	return true;
}

bool
sb_codec_compress(SbCodecContext *ctx, const void *src, size_t len,
				  void *dst, size_t cap, size_t *stored_len,
				  SbCodec *used_codec, SbError *err)
{
	if (ctx->codec == SB_CODEC_ZSTD)
	{
		if (!ensure_cctx(ctx, err) || !compress_frames(ctx, src, len, dst, cap, stored_len, err))
			return false;
		if (*stored_len < len)
		{
			*used_codec = SB_CODEC_ZSTD;
			return true;
		}
	}
	/* Uncompressed, or compression did not help: keep the bytes as they are. */
	memcpy(dst, src, len);
	*stored_len = len;
	*used_codec = SB_CODEC_NONE;
	return true;
}

bool
sb_codec_decompress(SbCodecContext *ctx, SbCodec codec, const void *src, size_t len,
					void *dst, size_t raw_len, SbError *err)
{
	size_t		rc;

	if (codec == SB_CODEC_NONE)
	{
		if (len != raw_len)
			return sb_error_set(err, SB_ECORRUPT,
								"uncompressed chunk holds %zu bytes, expected %zu", len, raw_len);
		memcpy(dst, src, len);
		return true;
	}
	if (codec != SB_CODEC_ZSTD)
		return sb_error_set(err, SB_ECORRUPT, "unknown chunk codec %d", (int) codec);
	if (ctx->dctx == NULL && (ctx->dctx = ZSTD_createDCtx()) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory creating a zstd context");
	rc = ZSTD_decompressDCtx(ctx->dctx, dst, raw_len, src, len);
	if (zstd_failed(rc, "decompression", err))
		return false;
	if (rc != raw_len)
		return sb_error_set(err, SB_ECORRUPT,
							"chunk decompressed to %zu bytes, expected %zu", rc, raw_len);
	return true;
}

bool
sb_codec_stream_begin(SbCodecContext *ctx, uint64_t total_len, SbError *err)
{
	if (!ensure_cctx(ctx, err))
		return false;
	/* A reset keeps the level; the pledged size fits the parameters to the file. */
	return !zstd_failed(ZSTD_CCtx_reset(ctx->cctx, ZSTD_reset_session_only), "reset", err) &&
		!zstd_failed(ZSTD_CCtx_setPledgedSrcSize(ctx->cctx, total_len), "size setting", err);
}

bool
sb_codec_stream_compress(SbCodecContext *ctx, const void *src, size_t len, bool last,
						 void *buf, size_t cap, SbCodecSink sink, void *arg, SbError *err)
{
	ZSTD_inBuffer in = {src, len, 0};
	ZSTD_EndDirective mode = last ? ZSTD_e_end : ZSTD_e_flush;
	size_t		remaining;

	/* With flush or end, zstd is done when nothing remains to be emitted. */
	do
	{
		ZSTD_outBuffer out = {buf, cap, 0};

		remaining = ZSTD_compressStream2(ctx->cctx, &out, &in, mode);
		if (zstd_failed(remaining, "compression", err))
			return false;
		if (out.pos > 0 && !sink(arg, buf, out.pos, err))
			return false;
	} while (remaining != 0);
	return true;
}

/* The window a frame of TOTAL_LEN bytes needs at most: zstd never uses one larger than its input. */
static int
window_log_for(uint64_t total_len)
{
	int			log = ZSTD_WINDOWLOG_MIN;

	while (log < ZSTD_WINDOWLOG_LIMIT_DEFAULT && ((uint64_t) 1 << log) < total_len)
		log++;
	return log;
}

bool
sb_codec_stream_decompress_begin(SbCodecContext *ctx, uint64_t total_len, SbError *err)
{
	if (ctx->dctx == NULL && (ctx->dctx = ZSTD_createDCtx()) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory creating a zstd context");
	return !zstd_failed(ZSTD_DCtx_reset(ctx->dctx, ZSTD_reset_session_only), "reset", err) &&
		!zstd_failed(ZSTD_DCtx_setParameter(ctx->dctx, ZSTD_d_windowLogMax, window_log_for(total_len)),
					 "window setting", err);
}

bool
sb_codec_stream_decompress(SbCodecContext *ctx, const void *src, size_t len,
						   void *buf, size_t cap, SbCodecSink sink, void *arg,
						   bool *done, SbError *err)
{
	ZSTD_inBuffer in = {src, len, 0};
	bool		more = len > 0;

	if (*done && len > 0)
		return sb_error_set(err, SB_ECORRUPT, "data after the end of the zstd frame");
	/* A full output buffer may leave output inside zstd: call again until it is not full. */
	while (more)
	{
		ZSTD_outBuffer out = {buf, cap, 0};
		size_t		rc = ZSTD_decompressStream(ctx->dctx, &out, &in);

		if (zstd_failed(rc, "decompression", err))
			return false;
		if (out.pos > 0 && !sink(arg, buf, out.pos, err))
			return false;
		if (rc == 0)
		{
			*done = true;
			if (in.pos < in.size)
				return sb_error_set(err, SB_ECORRUPT, "data after the end of the zstd frame");
			return true;
		}
		more = in.pos < in.size || out.pos == out.size;
	}
	return true;
}

/* As sb_codec_compress_memory, for a stream: its window and buffers are sized for TOTAL_LEN. */
size_t
sb_codec_stream_compress_memory(int level, uint64_t total_len)
{
	return ZSTD_estimateCStreamSize_usingCParams(ZSTD_getCParams(level, total_len, 0));
}

/*
 * ZSTD_compress2 knows each chunk's size, so its context is sized for
 * parameters tuned to that size, much less than ZSTD_estimateCCtxSize
 * (which assumes input of unknown size) at high levels.
 */
size_t
sb_codec_compress_memory(SbCodec codec, int level, size_t chunk_size)
{
	if (codec != SB_CODEC_ZSTD)
		return 0;
	return ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(level, chunk_size, 0));
}

size_t
sb_codec_decompress_memory(SbCodec codec)
{
	return codec == SB_CODEC_ZSTD ? ZSTD_estimateDCtxSize() : 0;
}

int
sb_codec_min_level(void)
{
	return ZSTD_minCLevel();
}

int
sb_codec_max_level(void)
{
	return ZSTD_maxCLevel();
}
