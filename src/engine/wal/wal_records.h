/*
 * wal_records.h
 *		A reader of PostgreSQL's WAL records, PostgreSQL-free: the pages of
 *		consecutive segments go in (in pieces of any size), the records that
 *		a recovery target stops at come out (a transaction's commit or abort
 *		with its time and xid, a restore point with its time and name).
 *
 * It knows the page layout of servers 15 to 18 (the same layout; each
 * version has its own page magic), reassembles records that cross pages
 * and segments, and checks what it reads as PostgreSQL's reader does
 * (page magic and address, the long header's system identifier and sizes,
 * the continuation lengths, each record's CRC-32C and block headers).
 * The bytes are untrusted: every length is checked before it is used, a
 * record is buffered only when it is one of the two kinds read, and only
 * up to SB_WAL_RECORD_MAX.  Where the WAL stops making sense the reader
 * says the WAL ends there, as recovery would end: no error.
 */
#ifndef SB_WAL_RECORDS_H
#define SB_WAL_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "stripebackup/sb_error.h"

/* The largest transaction or restore-point record buffered; a longer one is skipped, and said. */
#define SB_WAL_RECORD_MAX ((uint32_t) 4 << 20)

typedef enum SbWalRecordKind
{
	SB_WAL_RECORD_COMMIT,		/* RM_XACT_ID XLOG_XACT_COMMIT or COMMIT_PREPARED */
	SB_WAL_RECORD_ABORT,		/* RM_XACT_ID XLOG_XACT_ABORT or ABORT_PREPARED */
	SB_WAL_RECORD_RESTORE_POINT /* RM_XLOG_ID XLOG_RESTORE_POINT */
} SbWalRecordKind;

typedef struct SbWalRecord
{
	SbWalRecordKind kind;
	uint64_t	lsn;			/* where the record begins */
	uint64_t	end;			/* where it ends (the next record's start, unaligned) */
	uint32_t	xid;			/* xl_xid (0 for a prepared transaction's: PostgreSQL
								 * takes that one from the record's data) */
	bool		prepared;		/* COMMIT_PREPARED or ABORT_PREPARED */
	int64_t		time;			/* xact_time or rp_time: microseconds since
								 * 2000-01-01 00:00 UTC */
	char		name[65];		/* a restore point's rp_name */
} SbWalRecord;

/* Called for each record of those kinds; false stops the reader (the rest is ignored). */
typedef bool (*SbWalRecordFn) (void *arg, const SbWalRecord *record);

typedef struct SbWalReader SbWalReader;

/*
 * A reader of segments of SEGMENT_SIZE bytes of system SYSID (0: any),
 * handing records to FN.  NULL with SB_ENOMEM.
 */
extern SbWalReader *sb_wal_reader_new(uint32_t segment_size, uint64_t sysid, SbWalRecordFn fn,
									  void *arg, SbError *err);
extern void sb_wal_reader_free(SbWalReader *r);

/*
 * The next bytes come from segment SEGNO, from its start.  When SEGNO
 * follows the previous segment fed whole, a record crossing into it goes
 * on; otherwise the reader starts afresh (the continuation at its start is
 * skipped).
 */
extern void sb_wal_reader_segment(SbWalReader *r, uint64_t segno);

/* The next LEN bytes of the segment; more than its size is the WAL's end. */
extern void sb_wal_reader_feed(SbWalReader *r, const void *data, size_t len);

/* Has the reader stopped: FN asked it to, or the WAL ended (sb_wal_reader_end says why)? */
extern bool sb_wal_reader_done(const SbWalReader *r);

/* Where the WAL read ends, and why ("" while it has not): "invalid record length at 0/3000028". */
extern const char *sb_wal_reader_end(const SbWalReader *r);

/* PostgreSQL's major version the pages say (15 to 18; 0 before the first page). */
extern int	sb_wal_reader_version(const SbWalReader *r);

/* Records of the kinds read skipped for their length (over SB_WAL_RECORD_MAX). */
extern uint64_t sb_wal_reader_skipped(const SbWalReader *r);

/* PostgreSQL's version whose page magic is MAGIC (15 to 18), 0 for another. */
extern int	sb_wal_page_magic_version(uint16_t magic);

#endif							/* SB_WAL_RECORDS_H */
