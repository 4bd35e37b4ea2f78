/*
 * wal_records.c
 *		A reader of PostgreSQL's WAL records (wal_records.h says what for).
 *
 * The layout, the same in PostgreSQL 15 to 18 (access/xlog_internal.h,
 * access/xlogrecord.h, access/xact.h, catalog/pg_control.h): each page of
 * XLOG_BLCKSZ bytes starts with a header (magic, info flags, timeline,
 * the page's own address, the length left of a record begun on an
 * earlier page); the first page of a segment has the long header (plus
 * system identifier, segment size, page size).  Records start at 8-byte
 * aligned positions with a 24-byte header (total length, xid, previous
 * record, info, resource manager, CRC-32C), then block headers, then
 * block data and the main data, which comes last.  A record that does not
 * fit on its page goes on after the next page's header, the header itself
 * included.  Only the page magic differs from version to version.
 *
 * The constants are PostgreSQL's, written out here because the engine
 * does not build against a server's headers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_crc32c.h"
#include "wal/wal_records.h"

/* XLOG_PAGE_MAGIC of each version (access/xlog_internal.h) */
#define PAGE_MAGIC_15 0xD110
#define PAGE_MAGIC_16 0xD113
#define PAGE_MAGIC_17 0xD116
#define PAGE_MAGIC_18 0xD118

/* xlp_info flags */
#define XLP_FIRST_IS_CONTRECORD 0x0001
#define XLP_LONG_HEADER 0x0002
#define XLP_BKP_REMOVABLE 0x0004
#define XLP_FIRST_IS_OVERWRITE_CONTRECORD 0x0008
#define XLP_ALL_FLAGS 0x000F

#define SHORT_PAGE_HEADER 24	/* MAXALIGN(sizeof(XLogPageHeaderData)) */
#define LONG_PAGE_HEADER 40		/* MAXALIGN(sizeof(XLogLongPageHeaderData)) */
#define RECORD_HEADER 24		/* SizeOfXLogRecord */
#define RECORD_CRC_OFFSET 20	/* offsetof(XLogRecord, xl_crc) */
#define MAX_RECORD_LENGTH ((uint32_t) 1020 * 1024 * 1024)	/* XLogRecordMaxSize */
#define MIN_PAGE 1024
#define MAX_PAGE 65536
#define BLCKSZ_MAX 32768		/* the largest relation page a block image can be */

/* resource managers and their record kinds */
#define RM_XLOG_ID 0
#define RM_XACT_ID 1
#define XLR_INFO_MASK 0x0F
#define XLOG_SWITCH 0x40
#define XLOG_RESTORE_POINT 0x70
#define XLOG_XACT_OPMASK 0x70
#define XLOG_XACT_COMMIT 0x00
#define XLOG_XACT_ABORT 0x20
#define XLOG_XACT_COMMIT_PREPARED 0x30
#define XLOG_XACT_ABORT_PREPARED 0x40
#define RESTORE_POINT_NAME 64	/* MAXFNAMELEN */

/* block ids (access/xlogrecord.h) */
#define XLR_MAX_BLOCK_ID 32
#define XLR_BLOCK_ID_DATA_SHORT 255
#define XLR_BLOCK_ID_DATA_LONG 254
#define XLR_BLOCK_ID_ORIGIN 253
#define XLR_BLOCK_ID_TOPLEVEL_XID 252
#define BKPBLOCK_HAS_IMAGE 0x10
#define BKPBLOCK_HAS_DATA 0x20
#define BKPBLOCK_SAME_REL 0x80
#define BKPIMAGE_HAS_HOLE 0x01
#define BKPIMAGE_COMPRESSED 0x1C	/* PGLZ | LZ4 | ZSTD */
#define RELFILELOCATOR_SIZE 12

#define MAXALIGN8(x) (((x) + 7) & ~(uint64_t) 7)

struct SbWalReader
{
	uint32_t	segment_size;
	uint64_t	sysid;
	SbWalRecordFn fn;
	void	   *arg;

	uint32_t	page_size;		/* 0 until the first long header says */
	int			version;
	uint8_t		page[MAX_PAGE];
	uint32_t	page_fill;
	uint64_t	segno;
	uint32_t	pages_done;		/* of this segment */
	bool		started;		/* a segment was given */
	bool		fresh;			/* skip a continuation at the next page's start */
	bool		skip_to_segment_end;	/* after XLOG_SWITCH */

	/* the record being assembled */
	bool		in_record;
	uint64_t	rec_lsn;
	uint32_t	rec_tot;
	uint32_t	rec_got;
	uint8_t		hdr[RECORD_HEADER];
	uint32_t	crc;
	bool		keep;
	uint8_t    *buf;
	uint32_t	buf_size;

	bool		done;
	char		end[160];
	uint64_t	skipped;
};

int
sb_wal_page_magic_version(uint16_t magic)
{
	switch (magic)
	{
		case PAGE_MAGIC_15:
			return 15;
		case PAGE_MAGIC_16:
			return 16;
		case PAGE_MAGIC_17:
			return 17;
		case PAGE_MAGIC_18:
			return 18;
	}
	return 0;
}

static uint16_t
get16(const uint8_t *p)
{
	uint16_t	v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t
get32(const uint8_t *p)
{
	uint32_t	v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t
get64(const uint8_t *p)
{
	uint64_t	v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void
end_at(SbWalReader *r, uint64_t lsn, const char *what)
{
	if (r->done)
		return;
	r->done = true;
	snprintf(r->end, sizeof(r->end), "%s at %X/%X", what, (unsigned) (lsn >> 32), (unsigned) lsn);
}

SbWalReader *
sb_wal_reader_new(uint32_t segment_size, uint64_t sysid, SbWalRecordFn fn, void *arg, SbError *err)
{
	SbWalReader *r = calloc(1, sizeof(SbWalReader));

	if (r == NULL)
	{
		sb_error_set(err, SB_ENOMEM, "out of memory for a WAL record reader");
		return NULL;
	}
	r->segment_size = segment_size;
	r->sysid = sysid;
	r->fn = fn;
	r->arg = arg;
	r->fresh = true;
	return r;
}

void
sb_wal_reader_free(SbWalReader *r)
{
	if (r == NULL)
		return;
	free(r->buf);
	free(r);
}

bool
sb_wal_reader_done(const SbWalReader *r)
{
	return r->done;
}

const char *
sb_wal_reader_end(const SbWalReader *r)
{
	return r->end;
}

int
sb_wal_reader_version(const SbWalReader *r)
{
	return r->version;
}

uint64_t
sb_wal_reader_skipped(const SbWalReader *r)
{
	return r->skipped;
}

void
sb_wal_reader_segment(SbWalReader *r, uint64_t segno)
{
	bool		follows = r->started && r->page_size > 0 && segno == r->segno + 1 &&
		r->page_fill == 0 && (uint64_t) r->pages_done * r->page_size == r->segment_size;

	if (!follows)
	{
		r->in_record = false;
		r->fresh = true;
	}
	r->started = true;
	r->segno = segno;
	r->pages_done = 0;
	r->page_fill = 0;
	r->skip_to_segment_end = false;
}

/* ---------- a record's content ---------- */

/*
 * The main data of the record body B (LEN bytes after the header) into
 * *MAIN, *MAIN_LEN, walking the block headers as DecodeXLogRecord does;
 * false when they do not add up to the record's length.
 */
static bool
main_data(const uint8_t *b, uint32_t len, const uint8_t **main, uint32_t *main_len)
{
	uint64_t	datatotal = 0;
	uint32_t	pos = 0;

	*main = NULL;
	*main_len = 0;
#define NEED(n) do { if ((uint64_t) len - pos < (n)) return false; } while (0)
	while ((uint64_t) len - pos > datatotal)
	{
		uint8_t		id;

		NEED(1);
		id = b[pos++];
		if (id == XLR_BLOCK_ID_DATA_SHORT)
		{
			NEED(1);
			*main_len = b[pos++];
			datatotal += *main_len;
			break;
		}
		else if (id == XLR_BLOCK_ID_DATA_LONG)
		{
			NEED(4);
			*main_len = get32(b + pos);
			pos += 4;
			datatotal += *main_len;
			break;
		}
		else if (id == XLR_BLOCK_ID_ORIGIN)
		{
			NEED(2);
			pos += 2;
		}
		else if (id == XLR_BLOCK_ID_TOPLEVEL_XID)
		{
			NEED(4);
			pos += 4;
		}
		else if (id <= XLR_MAX_BLOCK_ID)
		{
			uint8_t		fork_flags;
			uint16_t	data_len;

			NEED(3);
			fork_flags = b[pos];
			data_len = get16(b + pos + 1);
			pos += 3;
			if (((fork_flags & BKPBLOCK_HAS_DATA) != 0) != (data_len != 0))
				return false;
			datatotal += data_len;
			if (fork_flags & BKPBLOCK_HAS_IMAGE)
			{
				uint16_t	bimg_len;
				uint8_t		bimg_info;

				NEED(5);
				bimg_len = get16(b + pos);
				bimg_info = b[pos + 4];
				pos += 5;
				if ((bimg_info & BKPIMAGE_COMPRESSED) && (bimg_info & BKPIMAGE_HAS_HOLE))
				{
					NEED(2);
					pos += 2;
				}
				if (bimg_len == 0 || bimg_len > BLCKSZ_MAX)
					return false;
				datatotal += bimg_len;
			}
			if (!(fork_flags & BKPBLOCK_SAME_REL))
			{
				NEED(RELFILELOCATOR_SIZE);
				pos += RELFILELOCATOR_SIZE;
			}
			NEED(4);			/* the block number */
			pos += 4;
		}
		else
			return false;
	}
#undef NEED
	if ((uint64_t) len - pos != datatotal)
		return false;
	*main = b + len - *main_len;
	return true;
}

/* The record just assembled: checked, and handed on when it is of a kind read. */
static void
finish_record(SbWalReader *r)
{
	uint32_t	crc = sb_crc32c_final(sb_crc32c_update(r->crc, r->hdr, RECORD_CRC_OFFSET));
	uint8_t		info = r->hdr[16];
	uint8_t		rmid = r->hdr[17];
	const uint8_t *main;
	uint32_t	main_len;
	SbWalRecord rec;

	r->in_record = false;
	if (crc != get32(r->hdr + RECORD_CRC_OFFSET))
	{
		end_at(r, r->rec_lsn, "incorrect checksum of the record");
		return;
	}
	if (rmid == RM_XLOG_ID && (info & ~XLR_INFO_MASK) == XLOG_SWITCH)
		r->skip_to_segment_end = true;	/* the rest of the segment is unused */
	if (!r->keep)
		return;
	if (!main_data(r->buf, r->rec_tot - RECORD_HEADER, &main, &main_len))
	{
		end_at(r, r->rec_lsn, "a record whose block headers do not add up to its length");
		return;
	}
	memset(&rec, 0, sizeof(rec));
	rec.lsn = r->rec_lsn;
	rec.end = r->rec_lsn + r->rec_tot;
	if (rmid == RM_XACT_ID)
	{
		uint8_t		op = info & XLOG_XACT_OPMASK;

		if (main_len < 8)
			return;				/* not a commit record PostgreSQL would write: nothing to stop at */
		rec.kind = (op == XLOG_XACT_COMMIT || op == XLOG_XACT_COMMIT_PREPARED) ?
			SB_WAL_RECORD_COMMIT : SB_WAL_RECORD_ABORT;
		rec.prepared = op == XLOG_XACT_COMMIT_PREPARED || op == XLOG_XACT_ABORT_PREPARED;
		rec.xid = rec.prepared ? 0 : get32(r->hdr + 4);
		rec.time = (int64_t) get64(main);
	}
	else
	{
		if (main_len < 8 + RESTORE_POINT_NAME)
			return;
		rec.kind = SB_WAL_RECORD_RESTORE_POINT;
		rec.time = (int64_t) get64(main);
		memcpy(rec.name, main + 8, RESTORE_POINT_NAME);
		rec.name[RESTORE_POINT_NAME] = '\0';
	}
	if (!r->fn(r->arg, &rec))
		r->done = true;
}

/* Is the record whose header is H one of the kinds read? */
static bool
wanted(const uint8_t *h)
{
	uint8_t		info = h[16];
	uint8_t		op = info & XLOG_XACT_OPMASK;

	if (h[17] == RM_XACT_ID)
		return op == XLOG_XACT_COMMIT || op == XLOG_XACT_ABORT || op == XLOG_XACT_COMMIT_PREPARED ||
			op == XLOG_XACT_ABORT_PREPARED;
	return h[17] == RM_XLOG_ID && (info & ~XLR_INFO_MASK) == XLOG_RESTORE_POINT;
}

/* N more bytes DATA of the record being assembled. */
static void
record_bytes(SbWalReader *r, const uint8_t *data, uint32_t n)
{
	if (r->rec_got < RECORD_HEADER)
	{
		uint32_t	take = RECORD_HEADER - r->rec_got < n ? RECORD_HEADER - r->rec_got : n;

		memcpy(r->hdr + r->rec_got, data, take);
		r->rec_got += take;
		data += take;
		n -= take;
		if (r->rec_got < RECORD_HEADER)
			return;
		r->keep = wanted(r->hdr);
		if (r->keep && r->rec_tot - RECORD_HEADER > SB_WAL_RECORD_MAX)
		{
			r->keep = false;
			r->skipped++;
		}
		if (r->keep && r->buf_size < r->rec_tot - RECORD_HEADER)
		{
			uint8_t    *grown = realloc(r->buf, r->rec_tot - RECORD_HEADER);

			if (grown == NULL)
			{
				r->keep = false;
				r->skipped++;
			}
			else
			{
				r->buf = grown;
				r->buf_size = r->rec_tot - RECORD_HEADER;
			}
		}
	}
	if (n == 0)
		return;
	r->crc = sb_crc32c_update(r->crc, data, n);
	if (r->keep)
		memcpy(r->buf + (r->rec_got - RECORD_HEADER), data, n);
	r->rec_got += n;
}

/* ---------- pages ---------- */

/* Take what page P holds (a whole page of the current segment). */
static void
process_page(SbWalReader *r, const uint8_t *p)
{
	uint64_t	page_lsn = r->segno * r->segment_size + (uint64_t) r->pages_done * r->page_size;
	uint16_t	info = get16(p + 2);
	uint32_t	rem_len = get32(p + 16);
	int			version = sb_wal_page_magic_version(get16(p));
	uint32_t	pos;
	char		what[96];

	if (r->skip_to_segment_end)
		return;
	if (version == 0 || (r->version != 0 && version != r->version))
	{
		snprintf(what, sizeof(what), "a page with magic 0x%04X, not PostgreSQL %d's", get16(p),
				 r->version != 0 ? r->version : 15);
		end_at(r, page_lsn, version == 0 && r->version == 0 ?
			   "a page that is not one of PostgreSQL 15 to 18 (its magic is unknown)" : what);
		return;
	}
	r->version = version;
	if ((info & ~XLP_ALL_FLAGS) != 0 || get64(p + 8) != page_lsn)
	{
		end_at(r, page_lsn, "a page of invalid flags or of another address (WAL not written there)");
		return;
	}
	if (r->pages_done == 0 && !(info & XLP_LONG_HEADER))
	{
		end_at(r, page_lsn, "a segment's first page without its long header");
		return;
	}
	pos = SHORT_PAGE_HEADER;
	if (info & XLP_LONG_HEADER)
	{
		if ((r->sysid != 0 && get64(p + 24) != r->sysid) || get32(p + 32) != r->segment_size ||
			get32(p + 36) != r->page_size)
		{
			end_at(r, page_lsn, "a segment of another system or of other segment or page sizes");
			return;
		}
		pos = LONG_PAGE_HEADER;
	}
	if (r->in_record)
	{
		if (!(info & XLP_FIRST_IS_CONTRECORD) && (info & XLP_FIRST_IS_OVERWRITE_CONTRECORD))
			r->in_record = false;	/* the record was never finished: PostgreSQL overwrote it */
		else if (!(info & XLP_FIRST_IS_CONTRECORD) || rem_len != r->rec_tot - r->rec_got)
		{
			end_at(r, page_lsn, "a page that does not go on with the record begun before it");
			return;
		}
	}
	else if (r->fresh && (info & XLP_FIRST_IS_CONTRECORD))
	{
		/* the end of a record begun before the first segment read: skipped */
		if (rem_len > r->page_size - pos)
			return;
		pos = (uint32_t) MAXALIGN8(pos + rem_len);
	}
	r->fresh = false;
	if (r->in_record)
	{
		uint32_t	n = r->page_size - pos < rem_len ? r->page_size - pos : rem_len;

		record_bytes(r, p + pos, n);
		if (r->rec_got < r->rec_tot)
			return;
		finish_record(r);
		pos = (uint32_t) MAXALIGN8(pos + n);
	}
	while (pos + 4 <= r->page_size && !r->done && !r->skip_to_segment_end)
	{
		uint32_t	tot = get32(p + pos);
		uint32_t	n;

		if (tot < RECORD_HEADER || tot > MAX_RECORD_LENGTH)
		{
			end_at(r, page_lsn + pos, tot == 0 ? "the end of the WAL written" : "an invalid record length");
			return;
		}
		r->in_record = true;
		r->rec_lsn = page_lsn + pos;
		r->rec_tot = tot;
		r->rec_got = 0;
		r->crc = SB_CRC32C_INIT;
		r->keep = false;
		n = r->page_size - pos < tot ? r->page_size - pos : tot;
		record_bytes(r, p + pos, n);
		if (r->rec_got < r->rec_tot)
			return;				/* it goes on on the next page */
		finish_record(r);
		pos = (uint32_t) MAXALIGN8(pos + n);
	}
}

/* The long header at the start of the first segment says the page size. */
static bool
learn_page_size(SbWalReader *r)
{
	uint32_t	blcksz = get32(r->page + 36);

	if (!(get16(r->page + 2) & XLP_LONG_HEADER) || blcksz < MIN_PAGE || blcksz > MAX_PAGE ||
		(blcksz & (blcksz - 1)) != 0 || r->segment_size % blcksz != 0)
	{
		end_at(r, r->segno * r->segment_size, "a segment's first page without a valid long header");
		return false;
	}
	r->page_size = blcksz;
	return true;
}

void
sb_wal_reader_feed(SbWalReader *r, const void *data, size_t len)
{
	const uint8_t *in = data;

	while (len > 0 && !r->done)
	{
		uint32_t	need = r->page_size > 0 ? r->page_size : LONG_PAGE_HEADER;
		size_t		take = need - r->page_fill < len ? need - r->page_fill : len;

		if (!r->started || (r->page_size > 0 && (uint64_t) r->pages_done * r->page_size >= r->segment_size))
		{
			end_at(r, (r->segno + 1) * r->segment_size, "bytes past the end of a segment");
			return;
		}
		memcpy(r->page + r->page_fill, in, take);
		r->page_fill += (uint32_t) take;
		in += take;
		len -= take;
		if (r->page_fill < need)
			continue;
		if (r->page_size == 0)
		{
			if (!learn_page_size(r))
				return;
			continue;			/* the rest of the first page */
		}
		process_page(r, r->page);
		r->page_fill = 0;
		r->pages_done++;
	}
}
