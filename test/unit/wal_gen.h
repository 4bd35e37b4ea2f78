/*
 * wal_gen.h
 *		Synthetic PostgreSQL WAL for the record reader's tests (and its fuzz
 *		seeds): segments of pages with headers as a server writes them,
 *		records with their CRC-32C, crossing pages and segments.
 */
#ifndef SB_UNIT_WAL_GEN_H
#define SB_UNIT_WAL_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WG_PAGE 8192

/* Segments FIRST .. FIRST + NSEG - 1 of SEGMENT bytes, written from POS on. */
typedef struct WalGen
{
	uint8_t    *bytes;
	uint32_t	segment;
	uint64_t	first;			/* segment number of bytes[0] */
	uint32_t	nseg;
	uint64_t	pos;			/* the LSN the next record goes to */
	uint16_t	magic;
	uint32_t	tli;
	uint64_t	sysid;
} WalGen;

/* Room for NSEG segments from segment FIRST, the first record at the start of FIRST's first page. */
extern void wg_init(WalGen *g, uint32_t segment, uint64_t first, uint32_t nseg, uint16_t magic,
					uint32_t tli, uint64_t sysid);
extern void wg_free(WalGen *g);

/* A copy of G's bytes before LSN AT, writing on from there (a timeline that forks at AT). */
extern void wg_fork(WalGen *g, const WalGen *from, uint64_t at, uint32_t tli);

/* Records: each returns its LSN. */
/*
 * A record of resource manager RMID and INFO, xid XID: block headers HDRS
 * (as access/xlogrecord.h lays them out), then the blocks' data DATA, then
 * main data MAIN (its header written here).
 */
extern uint64_t wg_record(WalGen *g, uint8_t rmid, uint8_t info, uint32_t xid, const uint8_t *hdrs,
						  uint32_t nhdrs, const uint8_t *data, uint32_t ndata, const uint8_t *main,
						  uint32_t nmain);
extern uint64_t wg_commit(WalGen *g, uint32_t xid, int64_t time, uint32_t extra);
extern uint64_t wg_abort(WalGen *g, uint32_t xid, int64_t time);
extern uint64_t wg_restore_point(WalGen *g, const char *name, int64_t time);
/* A heap-like record with a block reference and LEN bytes of data. */
extern uint64_t wg_filler(WalGen *g, uint32_t len);
/* XLOG_SWITCH: the rest of the segment unused, the next record at the next segment's start. */
extern uint64_t wg_switch(WalGen *g);

/* Segment SEGNO's bytes. */
extern const uint8_t *wg_segment(const WalGen *g, uint64_t segno);

#endif							/* SB_UNIT_WAL_GEN_H */
