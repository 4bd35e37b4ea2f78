/*
 * fuzz_walrec.c
 *		libFuzzer target: arbitrary bytes as PostgreSQL WAL, read by the
 *		record reader (src/engine/wal/wal_records.c) that places recovery
 *		targets on timelines.
 *
 * Input: one flag byte, then the WAL.  The WAL is segment 1 (and, past
 * 1 MB, segment 2) of 1 MB segments of system FUZZ_WALREC_SYSID (flag
 * 0x01: of any system); flag bits 0x0E choose the size of the pieces the
 * bytes are fed in (1 byte to a whole segment), so that page and record
 * reassembly is reached from every cut.  The seeds (test/fuzz/corpus/walrec)
 * are the first pages of synthetic segments whose records cross pages.
 *
 * Besides the sanitizers, the target checks the reader's promises: every
 * record it hands on lies inside the bytes fed, after the previous one, and
 * a restore point's name is terminated; when it stops, it says why unless
 * the callback stopped it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wal/wal_records.h"

#define SEGMENT ((uint32_t) 1 << 20)
#define FUZZ_WALREC_SYSID UINT64_C(7301234567890123456)

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct Check
{
	uint64_t	last;
	uint64_t	limit;			/* the end of the bytes fed */
	uint32_t	records;
} Check;

static bool
on_record(void *arg, const SbWalRecord *rec)
{
	Check	   *c = arg;

	if (rec->lsn < SEGMENT || rec->end > c->limit || rec->end <= rec->lsn ||
		(c->records > 0 && rec->lsn <= c->last) || memchr(rec->name, '\0', sizeof(rec->name)) == NULL)
	{
		fprintf(stderr, "fuzz_walrec: a record at %llu..%llu breaks a promise (previous at %llu, limit %llu)\n",
				(unsigned long long) rec->lsn, (unsigned long long) rec->end, (unsigned long long) c->last,
				(unsigned long long) c->limit);
		abort();
	}
	c->last = rec->lsn;
	c->records++;
	return c->records < 1000;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t pieces[] = {1, 7, 100, 4096, 8192, 12345, 65536, SEGMENT};
	SbWalReader *r;
	SbError		err;
	Check		c;
	uint8_t		flags;
	size_t		piece,
				off = 0;
	uint64_t	segno = 1;

	if (size < 1)
		return 0;
	flags = data[0];
	data++;
	size--;
	if (size > 2 * (size_t) SEGMENT)
		size = 2 * (size_t) SEGMENT;
	piece = pieces[(flags >> 1) & 7];
	memset(&c, 0, sizeof(c));
	c.limit = SEGMENT + size;
	if ((r = sb_wal_reader_new(SEGMENT, (flags & 1) ? 0 : FUZZ_WALREC_SYSID, on_record, &c, &err)) == NULL)
		abort();
	sb_wal_reader_segment(r, segno);
	while (off < size)
	{
		size_t		n = size - off < piece ? size - off : piece;

		if (off / SEGMENT != (off + n - 1) / SEGMENT)
			n = SEGMENT - off % SEGMENT;	/* a piece ends at the segment's end */
		if (off > 0 && off % SEGMENT == 0)
			sb_wal_reader_segment(r, ++segno);
		sb_wal_reader_feed(r, data + off, n);
		off += n;
	}
	if (sb_wal_reader_done(r) && c.records < 1000 && sb_wal_reader_end(r)[0] == '\0')
	{
		fprintf(stderr, "fuzz_walrec: the reader stopped without saying why\n");
		abort();
	}
	sb_wal_reader_free(r);
	return 0;
}
