/*
 * test_crc.c
 *		The CRC-32C arithmetic a restore checks whole files with: ISA-L's
 *		conventions (checked numerically, not assumed), moving a register
 *		across zeros, and whole-file CRCs built from pieces that arrive in
 *		any order, with holes, against a direct CRC of the same bytes; and
 *		the XXH3-64 chunks are checked with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "format/checksum.h"
#include "restore/file_check.h"
#include "harness.h"
#include "tests.h"

/* Bit by bit, from the definition: reflected Castagnoli, INIT in, XOROUT out. */
static uint32_t
crc32c_bitwise(const uint8_t *data, size_t len, uint32_t init, uint32_t xorout)
{
	uint32_t	crc = init;
	size_t		i;
	int			k;

	for (i = 0; i < len; i++)
	{
		crc ^= data[i];
		for (k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
	}
	return crc ^ xorout;
}

static uint32_t
next_random(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

/* 1. What ISA-L computes, and how the engine's wrappers use it. */
void
test_crc_conventions(void)
{
	static const uint8_t check[] = "123456789";
	uint8_t		buf[5000];
	uint8_t		zeros[70000];
	static const uint64_t lengths[] = {0, 1, 3, 8, 4096, 65537, sizeof(zeros)};
	uint32_t	seed = 12345;
	size_t		i;
	bool		same = true;

	is_int(sb_crc32c_final(sb_crc32c_update(SB_CRC32C_INIT, check, 9)), 0xE3069283u,
		   "CRC-32C of \"123456789\" is the standard check value e3069283");
	is_int(th_crc32c(check, 9), 0xE3069283u, "so is the tests' own table-driven CRC-32C");
	is_int(sb_crc32c_raw(check, 9), crc32c_bitwise(check, 9, 0, 0),
		   "the raw register (ISA-L from 0) is the CRC started at 0, never inverted");
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t) next_random(&seed);
	for (i = 0; same && i <= sizeof(buf); i += 97)
		same = sb_crc32c_raw(buf, i) == crc32c_bitwise(buf, i, 0, 0) &&
			sb_crc32c_update(SB_CRC32C_INIT, buf, i) == crc32c_bitwise(buf, i, 0xFFFFFFFFu, 0) &&
			(sb_crc32c_raw(buf, i) ^ sb_crc32c_shift(SB_CRC32C_INIT, i) ^ 0xFFFFFFFFu) ==
			th_crc32c(buf, i);
	ok(same, "for 52 lengths: raw, running and final CRCs agree with the definition, "
	   "and CRC-32C = raw + INIT * x^(8n) + INIT");

	memset(zeros, 0, sizeof(zeros));
	same = true;
	for (i = 0; same && i < sizeof(lengths) / sizeof(lengths[0]); i++)
	{
		uint32_t	start = next_random(&seed);

		same = sb_crc32c_shift(start, lengths[i]) ==
			sb_crc32c_update(start, zeros, (size_t) lengths[i]) &&
			sb_crc32c_zeros(start, lengths[i]) == sb_crc32c_shift(start, lengths[i]);
	}
	ok(same, "moving a register across n zeros equals feeding it n zero bytes (n up to 70000)");
}

/* 2. Shifts compose, and a 5 GiB hole costs nothing. */
void
test_crc_shift_large(void)
{
	const uint64_t big = UINT64_C(5) << 30;
	uint32_t	seed = 99;
	double		t0 = th_now();
	bool		same = true;
	int			i;

	for (i = 0; same && i < 200; i++)
	{
		uint32_t	crc = next_random(&seed);
		uint64_t	a = ((uint64_t) next_random(&seed) << 12) ^ next_random(&seed);
		uint64_t	b = ((uint64_t) next_random(&seed) << 9) ^ next_random(&seed);

		same = sb_crc32c_shift(sb_crc32c_shift(crc, a), b) == sb_crc32c_shift(crc, a + b);
	}
	ok(same, "shifting by a then b equals shifting by a + b (200 random pairs up to 2^44)");
	ok(sb_crc32c_shift(0, big) == 0 && sb_crc32c_shift(7, 0) == 7,
	   "a zero register stays zero, a shift by nothing changes nothing");
	ok(sb_crc32c_final(sb_crc32c_zeros(SB_CRC32C_INIT, big)) ==
	   sb_crc32c_final(sb_crc32c_zeros(sb_crc32c_zeros(SB_CRC32C_INIT, big / 2), big / 2)),
	   "the CRC of 5 GiB of zeros is that of two halves of 2.5 GiB");
	ok(th_now() - t0 < 0.5, "all in moments (%.3f s)", th_now() - t0);
}

/* One file's content: data regions with holes between them, zero elsewhere. */
typedef struct Layout
{
	uint8_t    *content;		/* size bytes; holes are zero */
	uint64_t	size;
	SbExtent	extents[64];	/* data regions */
	uint32_t	nextents;
	uint64_t	data_bytes;
} Layout;

static void
make_layout(Layout *l, uint32_t *seed)
{
	uint64_t	pos = 0;
	uint64_t	i;

	memset(l, 0, sizeof(*l));
	l->size = next_random(seed) % 300000;
	if (next_random(seed) % 10 == 0)
		l->size = next_random(seed) % 3;	/* tiny and empty files too */
	l->content = calloc(1, (size_t) l->size + 1);
	while (pos < l->size && l->nextents < 64)
	{
		uint64_t	hole = next_random(seed) % 3 == 0 ? next_random(seed) % 20000 : 0;
		uint64_t	len = 1 + next_random(seed) % 40000;

		pos += hole;
		if (pos >= l->size)
			break;
		if (len > l->size - pos)
			len = l->size - pos;
		if (next_random(seed) % 8 == 0)
			len = 0;			/* a region left as a hole */
		for (i = 0; i < len; i++)
			l->content[pos + i] = (uint8_t) (next_random(seed) | 1);
		if (len > 0)
		{
			l->extents[l->nextents].offset = pos;
			l->extents[l->nextents].length = len;
			l->nextents++;
			l->data_bytes += len;
		}
		pos += len;
	}
}

/* The data regions cut at random points into pieces, shuffled. */
static uint32_t
make_pieces(const Layout *l, SbPiece *pieces, uint32_t max, uint32_t *seed)
{
	uint32_t	n = 0;
	uint32_t	x;

	for (x = 0; x < l->nextents; x++)
	{
		uint64_t	pos = l->extents[x].offset;
		uint64_t	end = pos + l->extents[x].length;

		while (pos < end && n < max)
		{
			uint64_t	len = 1 + next_random(seed) % 9000;

			if (len > end - pos || n == max - 1)
				len = end - pos;
			pieces[n].entry = 0;
			pieces[n].file_offset = pos;
			pieces[n].length = len;
			pieces[n].chunk_offset = 0;
			n++;
			pos += len;
		}
	}
	for (x = n; x > 1; x--)
	{
		uint32_t	k = next_random(seed) % x;
		SbPiece		t = pieces[x - 1];

		pieces[x - 1] = pieces[k];
		pieces[k] = t;
	}
	return n;
}

/* 3. Random files, random cuts, random order, with holes: the CRC of the whole. */
void
test_crc_combine_pieces(void)
{
	static SbPiece pieces[4096];
	uint32_t	seed = 20240601;
	int			trials = 300;
	int			wrong = 0,
				incomplete = 0,
				with_holes = 0,
				empty = 0;
	int			t;
	SbError		err;

	for (t = 0; t < trials; t++)
	{
		SbManifest	m;
		SbEntry		e;
		SbFileCheck fc;
		Layout		l;
		uint32_t	n,
					k;

		make_layout(&l, &seed);
		memset(&m, 0, sizeof(m));
		memset(&e, 0, sizeof(e));
		e.path = "file";
		e.type = SB_ENTRY_FILE;
		e.size = l.size;
		e.stream_length = l.data_bytes;
		e.crc32c = th_crc32c(l.content, (size_t) l.size);
		m.entries = &e;
		m.nentries = 1;
		n = make_pieces(&l, pieces, 4096, &seed);
		if (!sb_file_check_init(&fc, &m, &err))
		{
			th_diag_error("file check", &err);
			wrong++;
			free(l.content);
			continue;
		}
		for (k = 0; k < n; k++)
			sb_file_check_add(&fc, &pieces[k], l.content + pieces[k].file_offset);
		incomplete += !sb_file_check_complete(&fc, 0);
		if (!sb_file_check_entry(&fc, 0, &err))
		{
			if (wrong++ < 3)
				diag("trial %d: %s", t, err.message);
		}
		with_holes += l.data_bytes < l.size;
		empty += l.size == 0;
		sb_file_check_free(&fc);
		free(l.content);
	}
	is_int(wrong, 0, "%d files rebuilt from shuffled pieces have the CRC-32C of their content "
		   "(%d with holes, %d empty)", trials, with_holes, empty);
	is_int(incomplete, 0, "every file is complete once all its pieces are in");
	ok(with_holes > trials / 4 && empty > 0, "holes and empty files were among them");
}

/* 4. A wrong piece, a missing piece, a piece twice: the CRC says so. */
void
test_crc_combine_detects(void)
{
	uint8_t		content[10000];
	SbManifest	m;
	SbEntry		e;
	SbFileCheck fc;
	SbPiece		a = {0, 0, 6000, 0};
	SbPiece		b = {0, 6000, 4000, 0};
	SbError		err;
	uint32_t	seed = 5;
	size_t		i;

	for (i = 0; i < sizeof(content); i++)
		content[i] = (uint8_t) next_random(&seed);
	memset(&m, 0, sizeof(m));
	memset(&e, 0, sizeof(e));
	e.path = "base/5/1259";
	e.type = SB_ENTRY_FILE;
	e.size = sizeof(content);
	e.stream_length = sizeof(content);
	e.crc32c = th_crc32c(content, sizeof(content));
	m.entries = &e;
	m.nentries = 1;
	if (!sb_file_check_init(&fc, &m, &err))
		return;
	sb_file_check_add(&fc, &b, content + 6000);
	ok(!sb_file_check_complete(&fc, 0) && !sb_file_check_entry(&fc, 0, &err),
	   "with a piece missing, the file is incomplete and its CRC differs");
	sb_file_check_add(&fc, &a, content);
	ok(sb_file_check_complete(&fc, 0) && sb_file_check_entry(&fc, 0, &err),
	   "with both pieces in, in reverse order, it is complete and right");
	content[7000] ^= 0x40;
	sb_file_check_free(&fc);
	sb_file_check_init(&fc, &m, &err);
	sb_file_check_add(&fc, &a, content);
	sb_file_check_add(&fc, &b, content + 6000);
	ok(!sb_file_check_entry(&fc, 0, &err), "one flipped bit in a piece is caught");
	is_int(err.code, SB_ECORRUPT, "as corruption");
	like(err.message, "\"base/5/1259\"", "naming the file");
	like(err.message, "the manifest records", "and both CRCs");
	sb_file_check_free(&fc);
	content[7000] ^= 0x40;
	sb_file_check_init(&fc, &m, &err);
	a.file_offset = 4000;
	a.length = 6000;
	b.file_offset = 0;
	b.length = 4000;
	sb_file_check_add(&fc, &a, content + 6000);
	sb_file_check_add(&fc, &b, content);
	ok(!sb_file_check_entry(&fc, 0, &err), "the right bytes at the wrong offsets are caught");
	sb_file_check_free(&fc);
}

/*
 * sb_hash64 (through libxxhash's dispatch on x86-64) and its stream give
 * XXH3-64 as the format defines it: the plain entry point's value, at every
 * length its code paths split on, and for a chunk fed in uneven pieces.
 */
void
test_hash64_is_xxh3(void)
{
	static const size_t lengths[] = {0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1024, 4095,
	65536, 1 << 20};
	size_t		n = 1 << 20;
	uint8_t    *data = malloc(n);
	SbError		err;
	SbHashStream *s = sb_hash_stream_new(&err);
	size_t		i,
				at,
				step;
	bool		same = true;

	if (data == NULL || s == NULL)
	{
		ok(false, "memory for the test");
		free(data);
		sb_hash_stream_free(s);
		return;
	}
	th_fill(data, n, 11, false);
	for (i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++)
		if (sb_hash64(data, lengths[i]) != (uint64_t) XXH3_64bits(data, lengths[i]))
		{
			same = false;
			th_diag("length %zu differs", lengths[i]);
		}
	ok(same, "sb_hash64 is XXH3_64bits at 16 lengths from 0 to 1 MiB");
	for (at = 0, step = 1; at < n; at += step, step = step * 3 + 1)
		sb_hash_stream_update(s, data + at, at + step <= n ? step : n - at);
	ok(sb_hash_stream_digest(s) == (uint64_t) XXH3_64bits(data, n),
	   "the stream, fed 1 MiB in pieces of 1, 4, 13, ... bytes, gives the same");
	sb_hash_stream_free(s);
	free(data);
}
