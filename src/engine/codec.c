/*
 * codec.c
 *		zstd behind the chunk codec interface.
 */
#include <stdlib.h>
#include <string.h>
/* The size estimates below are in zstd's "static linking only" section (exported by libzstd). */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "codec.h"

struct SbCodecContext
{
	SbCodec		codec;
	int			level;
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
	return ctx;
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

size_t
sb_codec_bound(SbCodec codec, size_t raw_len)
{
	return codec == SB_CODEC_ZSTD ? ZSTD_compressBound(raw_len) : raw_len;
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

bool
sb_codec_compress(SbCodecContext *ctx, const void *src, size_t len,
				  void *dst, size_t cap, size_t *stored_len,
				  SbCodec *used_codec, SbError *err)
{
	size_t		rc;

	if (ctx->codec == SB_CODEC_ZSTD)
	{
		if (!ensure_cctx(ctx, err))
			return false;
		rc = ZSTD_compress2(ctx->cctx, dst, cap, src, len);
		if (zstd_failed(rc, "compression", err))
			return false;
		if (rc < len)
		{
			*stored_len = rc;
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
