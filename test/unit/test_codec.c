/*
 * test_codec.c
 *		Chunk compression (codec.c): what it writes the zstd command reads,
 *		what the zstd command writes it reads; chunks that do not shrink are
 *		stored as they are; damaged, truncated or mislabelled payloads fail
 *		with a message that says how.
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "harness.h"
#include "tests.h"

#define CHUNK (64 * 1024)

/* Decompressing SRC as CODEC into RAW_LEN bytes fails with SB_ECORRUPT and MESSAGE. */
static void
expect_corrupt(SbCodecContext *ctx, SbCodec codec, const void *src, size_t len, size_t raw_len,
			   const char *message, const char *what)
{
	uint8_t    *dst = malloc(raw_len + 1);
	SbError		err;

	ok(!sb_codec_decompress(ctx, codec, src, len, dst, raw_len, &err), "%s: refused", what);
	is_int(err.code, SB_ECORRUPT, "%s: error code is corrupt", what);
	like(err.message, message, "%s: message says %s", what, message);
	free(dst);
}

/* Our zstd frames and the zstd command's are the same thing. */
void
test_codec_zstd_cli(void)
{
	char		dir[PATH_MAX],
				ours[PATH_MAX],
				theirs[PATH_MAX],
				raw[PATH_MAX],
				back[PATH_MAX];
	uint8_t    *data = malloc(CHUNK);
	uint8_t    *stored = malloc(sb_codec_bound(SB_CODEC_ZSTD, CHUNK));
	uint8_t    *out = malloc(CHUNK);
	uint8_t    *file;
	size_t		stored_len = 0,
				len = 0;
	SbCodec		used = SB_CODEC_NONE;
	SbError		err;
	SbCodecContext *ctx = sb_codec_context_new(SB_CODEC_ZSTD, 3, &err);

	th_tempdir(dir, "codec");
	th_fill(data, CHUNK, 11, true);
	ok(sb_codec_compress(ctx, data, CHUNK, stored, sb_codec_bound(SB_CODEC_ZSTD, CHUNK), &stored_len,
						 &used, &err), "a compressible chunk compresses");
	ok(used == SB_CODEC_ZSTD && stored_len < CHUNK / 2, "with zstd, to %zu bytes", stored_len);
	ok(sb_codec_decompress(ctx, used, stored, stored_len, out, CHUNK, &err) &&
	   memcmp(out, data, CHUNK) == 0, "and decompresses to what it was");

	/* zstd -d reads our payload. */
	th_write_file(th_path(ours, "%s/ours.zst", dir), stored, stored_len, 0600);
	{
		const char *argv[] = {"zstd", "-q", "-d", "-f", ours, "-o", th_path(back, "%s/back", dir), NULL};

		is_int(th_run(argv, NULL, 0), 0, "zstd -d reads the payload (the zstd command must be installed)");
	}
	file = th_read_file(back, &len);
	ok(file != NULL && len == CHUNK && memcmp(file, data, CHUNK) == 0, "into the chunk's bytes");
	free(file);

	/* What zstd writes, at a level of its own, we read. */
	th_write_file(th_path(raw, "%s/raw", dir), data, CHUNK, 0600);
	{
		const char *argv[] = {"zstd", "-q", "-19", "-f", raw, "-o", th_path(theirs, "%s/theirs.zst", dir), NULL};

		is_int(th_run(argv, NULL, 0), 0, "zstd -19 compresses the chunk");
	}
	file = th_read_file(theirs, &len);
	memset(out, 0, CHUNK);
	ok(file != NULL && sb_codec_decompress(ctx, SB_CODEC_ZSTD, file, len, out, CHUNK, &err) &&
	   memcmp(out, data, CHUNK) == 0, "we decompress zstd's frame to the chunk");

	/* The same frame, damaged in the ways stripes get damaged. */
	if (file != NULL)
	{
		expect_corrupt(ctx, SB_CODEC_ZSTD, file, len / 2, CHUNK, "zstd decompression failed",
					   "a truncated frame");
		expect_corrupt(ctx, SB_CODEC_ZSTD, file, len, CHUNK - 1, "zstd decompression failed",
					   "a frame larger than the chunk");
		expect_corrupt(ctx, SB_CODEC_ZSTD, file, len, CHUNK + 100,
					   "chunk decompressed to 65536 bytes, expected 65636", "a frame smaller than the chunk");
		file[0] ^= 0xFF;
		expect_corrupt(ctx, SB_CODEC_ZSTD, file, len, CHUNK, "zstd decompression failed: ",
					   "a frame without its magic number");
	}
	free(file);
	sb_codec_context_free(ctx);
	free(data);
	free(stored);
	free(out);
	th_rmtree(dir);
}

/* A chunk that does not shrink, or a backup without compression, is stored as it is. */
void
test_codec_stored(void)
{
	static const SbCodec codecs[] = {SB_CODEC_ZSTD, SB_CODEC_NONE};
	uint8_t    *data = malloc(CHUNK);
	uint8_t    *stored = malloc(sb_codec_bound(SB_CODEC_ZSTD, CHUNK));
	uint8_t    *out = malloc(CHUNK);
	size_t		i;

	th_fill(data, CHUNK, 12, false);
	for (i = 0; i < 2; i++)
	{
		const char *name = sb_codec_name(codecs[i]);
		SbError		err;
		SbCodecContext *ctx = sb_codec_context_new(codecs[i], sb_codec_max_level(), &err);
		size_t		stored_len = 0;
		SbCodec		used = SB_CODEC_ZSTD;

		ok(sb_codec_compress(ctx, data, CHUNK, stored, sb_codec_bound(codecs[i], CHUNK), &stored_len,
							 &used, &err), "%s: random bytes are stored", name);
		ok(used == SB_CODEC_NONE && stored_len == CHUNK && memcmp(stored, data, CHUNK) == 0,
		   "%s: as they are", name);
		ok(sb_codec_decompress(ctx, SB_CODEC_NONE, stored, CHUNK, out, CHUNK, &err) &&
		   memcmp(out, data, CHUNK) == 0, "%s: and read back", name);
		expect_corrupt(ctx, SB_CODEC_NONE, stored, 10, 20, "uncompressed chunk holds 10 bytes, expected 20",
					   "an uncompressed chunk of the wrong length");
		expect_corrupt(ctx, (SbCodec) 7, stored, CHUNK, CHUNK, "unknown chunk codec 7",
					   "an unknown codec");
		sb_codec_context_free(ctx);
	}
	ok(sb_codec_min_level() < 0 && sb_codec_max_level() >= 19, "zstd levels from %d to %d",
	   sb_codec_min_level(), sb_codec_max_level());
	sb_codec_context_free(NULL);
	free(data);
	free(stored);
	free(out);
}
