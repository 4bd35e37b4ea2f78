/*
 * wal_gen.c
 *		Synthetic PostgreSQL WAL (wal_gen.h), laid out as
 *		access/xlog_internal.h and access/xlogrecord.h say.
 */
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_crc32c.h"
#include "wal_gen.h"

#define LONG_HEADER 40
#define SHORT_HEADER 24

static void
put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void
put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void
put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static uint8_t *
at(const WalGen *g, uint64_t lsn)
{
	return g->bytes + (lsn - g->first * g->segment);
}

static bool
inside(const WalGen *g, uint64_t lsn)
{
	return lsn >= g->first * g->segment && lsn < (g->first + g->nseg) * g->segment;
}

/* The header of the page at LSN, REM bytes of a record going on there. */
static uint32_t
page_header(WalGen *g, uint64_t lsn, uint32_t rem)
{
	uint8_t    *p = at(g, lsn);
	bool		first = lsn % g->segment == 0;

	put16(p, g->magic);
	put16(p + 2, (uint16_t) ((rem > 0 ? 0x0001 : 0) | (first ? 0x0002 : 0)));
	put32(p + 4, g->tli);
	put64(p + 8, lsn);
	put32(p + 16, rem);
	if (!first)
		return SHORT_HEADER;
	put64(p + 24, g->sysid);
	put32(p + 32, g->segment);
	put32(p + 36, WG_PAGE);
	return LONG_HEADER;
}

void
wg_init(WalGen *g, uint32_t segment, uint64_t first, uint32_t nseg, uint16_t magic, uint32_t tli,
		uint64_t sysid)
{
	memset(g, 0, sizeof(*g));
	g->segment = segment;
	g->first = first;
	g->nseg = nseg;
	g->magic = magic;
	g->tli = tli;
	g->sysid = sysid;
	g->bytes = calloc(nseg, segment);
	g->pos = first * segment;
	g->pos += page_header(g, g->pos, 0);
}

void
wg_free(WalGen *g)
{
	free(g->bytes);
	g->bytes = NULL;
}

void
wg_fork(WalGen *g, const WalGen *from, uint64_t fork_at, uint32_t tli)
{
	wg_init(g, from->segment, from->first, from->nseg, from->magic, tli, from->sysid);
	memcpy(g->bytes, from->bytes, fork_at - from->first * from->segment);
	g->pos = fork_at;
}

/* Record REC of LEN bytes (its header's CRC filled in here) at the next aligned position. */
static uint64_t
put_record(WalGen *g, uint8_t *rec, uint32_t len)
{
	uint32_t	crc = sb_crc32c_update(SB_CRC32C_INIT, rec + 24, len - 24);
	uint64_t	lsn;
	uint32_t	done = 0;

	crc = sb_crc32c_final(sb_crc32c_update(crc, rec, 20));
	put32(rec + 20, crc);
	g->pos = (g->pos + 7) & ~(uint64_t) 7;
	if (g->pos % WG_PAGE == 0 && inside(g, g->pos))
		g->pos += page_header(g, g->pos, 0);
	lsn = g->pos;
	while (done < len && inside(g, g->pos))
	{
		uint32_t	room = WG_PAGE - (uint32_t) (g->pos % WG_PAGE);
		uint32_t	n = len - done < room ? len - done : room;

		memcpy(at(g, g->pos), rec + done, n);
		done += n;
		g->pos += n;
		if (done < len && g->pos % WG_PAGE == 0 && inside(g, g->pos))
			g->pos += page_header(g, g->pos, len - done);
	}
	return lsn;
}

uint64_t
wg_record(WalGen *g, uint8_t rmid, uint8_t info, uint32_t xid, const uint8_t *hdrs, uint32_t nhdrs,
	   const uint8_t *data, uint32_t ndata, const uint8_t *main, uint32_t nmain)
{
	uint32_t	len = 24 + nhdrs + (nmain < 256 ? 2 : 5) + ndata + nmain;
	uint8_t    *rec = calloc(1, len);
	uint8_t    *p = rec + 24;
	uint64_t	lsn;

	put32(rec, len);
	put32(rec + 4, xid);
	rec[16] = info;
	rec[17] = rmid;
	if (nhdrs > 0)
		memcpy(p, hdrs, nhdrs);
	p += nhdrs;
	if (nmain < 256)
	{
		*p++ = 255;
		*p++ = (uint8_t) nmain;
	}
	else
	{
		*p++ = 254;
		put32(p, nmain);
		p += 4;
	}
	if (ndata > 0)
		memcpy(p, data, ndata);
	p += ndata;
	if (nmain > 0)
		memcpy(p, main, nmain);
	lsn = put_record(g, rec, len);
	free(rec);
	return lsn;
}

uint64_t
wg_commit(WalGen *g, uint32_t xid, int64_t time, uint32_t extra)
{
	uint8_t    *main = calloc(1, 8 + extra);
	uint64_t	lsn;

	put64(main, (uint64_t) time);
	memset(main + 8, 0xC3, extra);
	lsn = wg_record(g, 1, extra > 0 ? 0x80 : 0x00, xid, NULL, 0, NULL, 0, main, 8 + extra);
	free(main);
	return lsn;
}

uint64_t
wg_abort(WalGen *g, uint32_t xid, int64_t time)
{
	uint8_t		main[8];

	put64(main, (uint64_t) time);
	return wg_record(g, 1, 0x20, xid, NULL, 0, NULL, 0, main, sizeof(main));
}

uint64_t
wg_restore_point(WalGen *g, const char *name, int64_t time)
{
	uint8_t		main[72] = {0};

	put64(main, (uint64_t) time);
	strncpy((char *) main + 8, name, 63);
	return wg_record(g, 0, 0x70, 0, NULL, 0, NULL, 0, main, sizeof(main));
}

uint64_t
wg_filler(WalGen *g, uint32_t len)
{
	/* block 0: id, fork flags (has data), data length, a relation, a block number; LEN bytes of data */
	uint8_t		hdrs[1 + 1 + 2 + 12 + 4] = {0, 0x20};
	uint8_t    *data = malloc(len);
	uint8_t		main[4] = {1, 2, 3, 4};
	uint64_t	lsn;

	memset(data, 0x5A, len);
	put16(hdrs + 2, (uint16_t) len);
	put32(hdrs + 16, 42);
	lsn = wg_record(g, 10, 0x00, 777, hdrs, sizeof(hdrs), data, len, main, sizeof(main));
	free(data);
	return lsn;
}

uint64_t
wg_switch(WalGen *g)
{
	uint64_t	lsn = wg_record(g, 0, 0x40, 0, NULL, 0, NULL, 0, NULL, 0);

	/* the next record at the next segment's start */
	g->pos = (g->pos + g->segment - 1) / g->segment * g->segment;
	if (inside(g, g->pos))
		g->pos += page_header(g, g->pos, 0);
	return lsn;
}

const uint8_t *
wg_segment(const WalGen *g, uint64_t segno)
{
	return g->bytes + (segno - g->first) * g->segment;
}
