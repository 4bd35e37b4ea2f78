/*
 * test_codec.c
 *		Chunk compression (codec.c): what it writes the zstd command reads,
 *		what the zstd command writes it reads; chunks that do not shrink are
 *		stored as they are; damaged, truncated or mislabelled payloads fail
 *		with a message that says how.
 */
#include <stdlib.h>
#include <string.h>

#include "format/checksum.h"
#include "format/codec.h"
#include "format/format.h"
#include "format/frames.h"
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

/* A growing buffer that the streaming calls write into. */
typedef struct Collected
{
	uint8_t    *data;
	size_t		len;
	size_t		cap;
	int			calls;
} Collected;

static bool
collect_bytes(void *arg, const void *data, size_t len, SbError *err)
{
	Collected  *c = arg;

	if (c->len + len > c->cap)
		return sb_error_set(err, SB_ENOSPC, "collected more than %zu bytes", c->cap);
	memcpy(c->data + c->len, data, len);
	c->len += len;
	c->calls++;
	return true;
}

/* Decompress FRAME (LEN bytes) fed in pieces of STEP, announced as TOTAL bytes, into OUT; *DONE at its end. */
static bool
stream_decompress(SbCodecContext *ctx, const uint8_t *frame, size_t len, size_t step, uint64_t total,
				  Collected *out, bool *done, SbError *err)
{
	uint8_t		buf[4096];
	size_t		off;

	*done = false;
	out->len = 0;
	if (!sb_codec_stream_decompress_begin(ctx, total, err))
		return false;
	for (off = 0; off < len; off += step)
		if (!sb_codec_stream_decompress(ctx, frame + off, len - off < step ? len - off : step, buf,
										sizeof(buf), collect_bytes, out, done, err))
			return false;
	return true;
}

/* One frame over many pieces: zstd reads it, we read it back in other pieces; damage refused. */
void
test_codec_stream(void)
{
	const size_t total = 3 << 20;
	uint8_t    *data = malloc(total);
	uint8_t		buf[4096];
	Collected	frame = {.data = malloc(total), .cap = total};
	Collected	back = {.data = malloc(total + 1), .cap = total + 1};
	SbError		err;
	SbCodecContext *ctx = sb_codec_context_new(SB_CODEC_ZSTD, 1, &err);
	char		dir[PATH_MAX],
				path[PATH_MAX],
				out[PATH_MAX];
	uint8_t    *file;
	size_t		off,
				len = 0;
	bool		done,
				streamed = true;

	th_fill(data, total, 21, true);
	streamed = sb_codec_stream_begin(ctx, total, &err);
	for (off = 0; streamed && off < total; off += 1 << 20)
		streamed = sb_codec_stream_compress(ctx, data + off, 1 << 20, off + (1 << 20) == total, buf,
											sizeof(buf), collect_bytes, &frame, &err);
	ok(streamed && frame.len < total / 2, "3 MB compressed in pieces of 1 MB into one frame of %zu bytes", frame.len);
	ok(frame.calls > 3, "emitted through a small buffer, %d times", frame.calls);
	th_tempdir(dir, "codecstream");
	th_write_file(th_path(path, "%s/frame.zst", dir), frame.data, frame.len, 0600);
	{
		const char *argv[] = {"zstd", "-q", "-d", "-f", path, "-o", th_path(out, "%s/back", dir), NULL};

		is_int(th_run(argv, NULL, 0), 0, "zstd -d reads the frame");
	}
	file = th_read_file(out, &len);
	ok(file != NULL && len == total && memcmp(file, data, total) == 0, "into the bytes fed");
	free(file);
	ok(stream_decompress(ctx, frame.data, frame.len, 1000, total, &back, &done, &err) && done &&
	   back.len == total && memcmp(back.data, data, total) == 0, "read back in pieces of 1000 bytes");

	frame.data[frame.len] = 0;
	ok(!stream_decompress(ctx, frame.data, frame.len + 1, frame.len + 1, total, &back, &done, &err) &&
	   err.code == SB_ECORRUPT, "a byte after the frame is refused");
	like(err.message, "after the end of the zstd frame", "saying so");
	ok(!stream_decompress(ctx, frame.data, frame.len + 1, frame.len, total, &back, &done, &err) &&
	   err.code == SB_ECORRUPT, "also when it comes in a piece of its own");
	ok(stream_decompress(ctx, frame.data, frame.len - 10, 1000, total, &back, &done, &err) && !done,
	   "a frame cut short never ends");
	ok(!stream_decompress(ctx, frame.data, frame.len, 1000, 4096, &back, &done, &err) && err.code == SB_ECORRUPT,
	   "a frame announced as 4 kB that holds 3 MB is refused (its window)");
	sb_codec_context_free(ctx);
	free(data);
	free(frame.data);
	free(back.data);
	th_rmtree(dir);
}

/*
 * A chunk compressed is a frame table and a frame per 64 kB (frames.h): the
 * table reads back, each frame decompresses alone to its bytes and hash,
 * the whole payload decompresses as before; a table that lies is not read.
 */
void
test_codec_frames(void)
{
	size_t		len = 16 * SB_FRAME_SIZE + 1000;	/* a short last frame */
	uint8_t    *raw = malloc(len);
	uint8_t    *out = malloc(len);
	size_t		cap = sb_codec_bound(SB_CODEC_ZSTD, len);
	uint8_t    *payload = malloc(cap);
	SbCodecContext *ctx = sb_codec_context_new(SB_CODEC_ZSTD, 1, NULL);
	SbFrameTable t;
	SbCodec		used;
	size_t		stored = 0;
	size_t		i;
	bool		each = true;
	SbError		err;

	th_begin("codec: a compressed chunk in frames, each read alone");
	for (i = 0; i < len; i++)
		raw[i] = (uint8_t) ((i / 100) % 7 + (i % 13 == 0 ? i / 4096 : 0));
	each = sb_codec_compress(ctx, raw, len, payload, cap, &stored, &used, &err);
	ok(each && used == SB_CODEC_ZSTD, "compressed (%zu of %zu bytes)", stored, len);
	ok(sb_frame_table_read(payload, stored, stored, len, &t) && t.count == 17 &&
	   t.frame_size == SB_FRAME_SIZE && t.data_offset == sb_frame_table_len(17),
	   "its table: 17 frames of 64 kB, the last shorter");
	for (i = 0; i < t.count; i++)
		each = each && sb_codec_decompress(ctx, SB_CODEC_ZSTD, payload + sb_frame_offset(&t, (uint32_t) i),
										   sb_frame_stored_len(&t, (uint32_t) i), out,
										   sb_frame_raw_len(&t, (uint32_t) i), &err) &&
			memcmp(out, raw + i * SB_FRAME_SIZE, sb_frame_raw_len(&t, (uint32_t) i)) == 0 &&
			sb_hash64(out, sb_frame_raw_len(&t, (uint32_t) i)) == sb_frame_raw_hash(&t, (uint32_t) i);
	ok(each, "every frame decompresses alone to its bytes, with the hash the table records");
	memset(out, 0, len);
	ok(sb_codec_decompress(ctx, SB_CODEC_ZSTD, payload, stored, out, len, &err) && memcmp(out, raw, len) == 0,
	   "the payload decompresses whole, the table skipped");
	ok(!sb_frame_table_read(payload, 19, stored, len, &t), "a table not read whole is not read");
	ok(!sb_frame_table_read(payload, stored, stored - 1, len, &t), "nor one whose frames do not fill the payload");
	ok(!sb_frame_table_read(payload, stored, stored, len + SB_FRAME_SIZE, &t),
	   "nor one with a frame count another length would have");
	payload[9] ^= 1;
	ok(!sb_frame_table_read(payload, stored, stored, len, &t), "nor one without its tag");
	payload[9] ^= 1;
	sb_format_put32(payload + 12, 1024);
	ok(!sb_frame_table_read(payload, stored, stored, len, &t), "nor one with frames below 4 kB");
	sb_codec_context_free(ctx);
	free(raw);
	free(out);
	free(payload);
}

/*
 * A context set to other frames than 64 kB (stripebackup.frame_size): the
 * table records them, each reads alone, and the chunk fits the bound every
 * reader allocates, from the least frame size to one frame for the chunk.
 */
void
test_codec_frame_sizes(void)
{
	static const uint32_t sizes[] = {SB_FRAME_SIZE_LEAST, 256 * 1024, 4 * 1024 * 1024};
	static const uint32_t counts[] = {64, 4, 1};
	size_t		len = 1024 * 1024;
	uint8_t    *raw = malloc(len);
	uint8_t    *out = malloc(len);
	size_t		cap = sb_codec_bound(SB_CODEC_ZSTD, len);
	uint8_t    *payload = malloc(cap);
	size_t		i;

	th_begin("codec: frames of 16 kB, 256 kB and one for the chunk");
	for (i = 0; i < len; i++)
		raw[i] = (uint8_t) (i % 512 < 256 ? (i * 2654435761u) >> 13 : (i / 100) % 7);	/* half noise */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
	{
		SbCodecContext *ctx = sb_codec_context_new(SB_CODEC_ZSTD, 1, NULL);
		uint32_t	last;
		SbFrameTable t;
		SbCodec		used;
		size_t		stored = 0;
		SbError		err;

		sb_codec_set_frame_size(ctx, sizes[i]);
		ok(sb_codec_compress(ctx, raw, len, payload, cap, &stored, &used, &err),
		   "%u-byte frames: compressed within the bound (%zu of %zu bytes)", sizes[i], stored, cap);
		if (used != SB_CODEC_ZSTD)
		{
			ok(stored == len, "%u-byte frames: stored as it is, no larger", sizes[i]);
			sb_codec_context_free(ctx);
			continue;
		}
		ok(sb_frame_table_read(payload, stored, stored, len, &t) && t.count == counts[i] &&
		   t.frame_size == sizes[i], "%u-byte frames: its table has %u of them", sizes[i], counts[i]);
		last = t.count - 1;
		ok(sb_codec_decompress(ctx, SB_CODEC_ZSTD, payload + sb_frame_offset(&t, last),
							   sb_frame_stored_len(&t, last), out, sb_frame_raw_len(&t, last), &err) &&
		   memcmp(out, raw + (size_t) last * sizes[i], sb_frame_raw_len(&t, last)) == 0,
		   "%u-byte frames: the last reads alone", sizes[i]);
		ok(sb_codec_decompress(ctx, SB_CODEC_ZSTD, payload, stored, out, len, &err) &&
		   memcmp(out, raw, len) == 0, "%u-byte frames: the payload decompresses whole", sizes[i]);
		sb_codec_context_free(ctx);
	}
	free(raw);
	free(out);
	free(payload);
}
