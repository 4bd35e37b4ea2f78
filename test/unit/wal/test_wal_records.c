/*
 * test_wal_records.c
 *		The WAL record reader (wal_records.c) on synthetic segments: records
 *		crossing pages and segments, a switch, each version's page magic, a
 *		start in the middle of a record, damage anywhere (never a crash or a
 *		read out of bounds, under ASan); and the placement of time, xid and
 *		name targets on timelines (wal_target.c) over an archive of
 *		synthetic segments where a timeline 2 forks off timeline 1.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_pgrecovery.h"
#include "tests.h"
#include "wal/wal_records.h"
#include "wal/wal_target.h"
#include "wal_fixture.h"
#include "wal_gen.h"

#define SEG TH_WAL_SEGMENT
#define MAX_SEEN 64

typedef struct Seen
{
	SbWalRecord r[MAX_SEEN];
	uint32_t	n;
	uint32_t	stop_after;		/* 0: never stop */
} Seen;

static bool
collect(void *arg, const SbWalRecord *rec)
{
	Seen	   *s = arg;

	if (s->n < MAX_SEEN)
		s->r[s->n++] = *rec;
	return s->stop_after == 0 || s->n < s->stop_after;
}

/* Feed segments FIRST.. of G to a new reader in pieces of PIECE bytes; the reader, for its end. */
static SbWalReader *
read_all(const WalGen *g, uint64_t first, uint32_t nseg, size_t piece, uint64_t sysid, Seen *seen)
{
	SbError		err;
	SbWalReader *r = sb_wal_reader_new(g->segment, sysid, collect, seen, &err);
	uint64_t	s;

	for (s = first; s < first + nseg && !sb_wal_reader_done(r); s++)
	{
		const uint8_t *b = wg_segment(g, s);
		size_t		off;

		sb_wal_reader_segment(r, s);
		for (off = 0; off < g->segment; off += piece)
			sb_wal_reader_feed(r, b + off, g->segment - off < piece ? g->segment - off : piece);
	}
	return r;
}

/* Two segments (2 and 3) of records, some crossing pages, one crossing into segment 3. */
static void
build(WalGen *g, uint16_t magic, uint64_t *lsns)
{
	wg_init(g, SEG, 2, 2, magic, 1, TH_WAL_SYSID);
	wg_filler(g, 100);
	lsns[0] = wg_commit(g, 700, 1000, 0);
	wg_filler(g, 20000);		/* crosses two pages */
	lsns[1] = wg_restore_point(g, "rp1", 2000);
	lsns[2] = wg_commit(g, 701, 3000, 9000);	/* a commit crossing a page */
	while (3 * (uint64_t) SEG - g->pos > 4000)
	{
		uint64_t	left = 3 * (uint64_t) SEG - g->pos - 3000;

		wg_filler(g, left > 30000 ? 30000 : (uint32_t) left);
	}
	lsns[3] = wg_commit(g, 702, 4000, 12000);	/* crosses into segment 3 */
	lsns[4] = wg_abort(g, 703, 5000);
	lsns[5] = wg_restore_point(g, "rp2", 6000);
	wg_switch(g);
}

void
test_wal_records_synthetic(void)
{
	static const uint16_t magic[] = {0xD110, 0xD113, 0xD116, 0xD118};
	static const size_t pieces[] = {1, 777, 8192, SEG};
	WalGen		g;
	uint64_t	lsns[6];
	Seen		seen;
	SbWalReader *r;
	uint32_t	v,
				p;

	for (v = 0; v < 4; v++)
	{
		build(&g, magic[v], lsns);
		memset(&seen, 0, sizeof(seen));
		r = read_all(&g, 2, 2, 4096, TH_WAL_SYSID, &seen);
		is_int(sb_wal_reader_version(r), 15 + v, "page magic 0x%04X: PostgreSQL %u", magic[v], 15 + v);
		is_int(seen.n, 6, "every commit, abort and restore point read");
		is_str(sb_wal_reader_end(r), "", "and the WAL does not end before the switch's segment");
		sb_wal_reader_free(r);
		wg_free(&g);
	}
	build(&g, 0xD110, lsns);
	for (p = 0; p < 4; p++)
	{
		memset(&seen, 0, sizeof(seen));
		r = read_all(&g, 2, 2, pieces[p], TH_WAL_SYSID, &seen);
		ok(seen.n == 6 && seen.r[0].lsn == lsns[0] && seen.r[3].lsn == lsns[3] && seen.r[5].lsn == lsns[5],
		   "pieces of %zu bytes: the same records at the same LSNs", pieces[p]);
		sb_wal_reader_free(r);
	}
	ok(seen.r[0].kind == SB_WAL_RECORD_COMMIT && seen.r[0].xid == 700 && seen.r[0].time == 1000,
	   "a commit: its xid and time");
	ok(seen.r[1].kind == SB_WAL_RECORD_RESTORE_POINT && strcmp(seen.r[1].name, "rp1") == 0 &&
	   seen.r[1].time == 2000, "a restore point: its name and time");
	ok(seen.r[2].xid == 701 && seen.r[2].time == 3000, "a commit crossing a page");
	ok(seen.r[3].xid == 702 && seen.r[3].time == 4000 && lsns[3] < 3 * (uint64_t) SEG &&
	   seen.r[3].end > 3 * (uint64_t) SEG, "a commit crossing into the next segment");
	ok(seen.r[4].kind == SB_WAL_RECORD_ABORT && seen.r[4].xid == 703, "an abort");

	/* a start at segment 3: the end of the record begun in segment 2 skipped */
	memset(&seen, 0, sizeof(seen));
	r = read_all(&g, 3, 1, 8192, TH_WAL_SYSID, &seen);
	ok(seen.n == 2 && seen.r[0].xid == 703 && strcmp(seen.r[1].name, "rp2") == 0,
	   "started at segment 3: the records that begin there");
	sb_wal_reader_free(r);

	/* the callback stops the reader */
	memset(&seen, 0, sizeof(seen));
	seen.stop_after = 2;
	r = read_all(&g, 2, 2, 8192, TH_WAL_SYSID, &seen);
	ok(seen.n == 2 && sb_wal_reader_done(r) && sb_wal_reader_end(r)[0] == '\0', "stopped at the second record");
	sb_wal_reader_free(r);

	/* another system's segments: the WAL ends at once */
	memset(&seen, 0, sizeof(seen));
	r = read_all(&g, 2, 2, 8192, TH_WAL_SYSID + 1, &seen);
	ok(seen.n == 0, "another system's segment: nothing read");
	like(sb_wal_reader_end(r), "another system", "said");
	sb_wal_reader_free(r);

	/* a flipped byte in the commit crossing into segment 3: its checksum fails, the WAL ends there */
	g.bytes[lsns[3] - 2 * (uint64_t) SEG + 100] ^= 0x10;
	memset(&seen, 0, sizeof(seen));
	r = read_all(&g, 2, 2, 8192, TH_WAL_SYSID, &seen);
	ok(seen.n == 3, "a damaged record: the ones before it read");
	like(sb_wal_reader_end(r), "incorrect checksum", "the WAL ends at it");
	sb_wal_reader_free(r);
	wg_free(&g);
}

void
test_wal_records_unknown_magic(void)
{
	WalGen		g;
	uint64_t	lsns[6];
	Seen		seen;
	SbWalReader *r;

	build(&g, 0xD10D, lsns);	/* PostgreSQL 14's */
	memset(&seen, 0, sizeof(seen));
	r = read_all(&g, 2, 2, 8192, 0, &seen);
	ok(seen.n == 0 && sb_wal_reader_version(r) == 0, "PostgreSQL 14's pages: nothing read");
	like(sb_wal_reader_end(r), "not one of PostgreSQL 15 to 18", "said");
	sb_wal_reader_free(r);
	wg_free(&g);
}

/* Damage anywhere: a flipped byte, a truncation, garbage; the reader never reads out of bounds. */
void
test_wal_records_hostile(void)
{
	WalGen		g;
	uint64_t	lsns[6];
	Seen		seen;
	SbWalReader *r;
	uint8_t    *copy = malloc(2 * (size_t) SEG);
	uint32_t	i,
				survived = 0;
	uint32_t	seed = 12345;

	build(&g, 0xD118, lsns);
	memcpy(copy, g.bytes, 2 * (size_t) SEG);
	for (i = 0; i < 300; i++)
	{
		uint32_t	off,
					n,
					k;

		seed = seed * 1103515245u + 12345u;
		off = (seed >> 4) % (2 * SEG);
		n = 1 + (seed >> 24) % 8;
		for (k = 0; k < n && off + k < 2 * SEG; k++)
			g.bytes[off + k] ^= (uint8_t) (seed >> (k % 24));
		/* lengths that claim a lot: over every record length and page header field */
		if (i % 3 == 0)
			memset(g.bytes + (off & ~(uint32_t) 7), 0xFF, 8);
		memset(&seen, 0, sizeof(seen));
		r = read_all(&g, 2, 2, 1 + (seed >> 8) % 20000, TH_WAL_SYSID, &seen);
		survived += seen.n <= 6;
		sb_wal_reader_free(r);
		memcpy(g.bytes, copy, 2 * (size_t) SEG);
	}
	is_int(survived, 300, "300 damaged copies read: never more records than written");
	/* a segment cut short, then more bytes than a segment holds */
	memset(&seen, 0, sizeof(seen));
	r = sb_wal_reader_new(SEG, 0, collect, &seen, &(SbError) {0});
	sb_wal_reader_segment(r, 2);
	sb_wal_reader_feed(r, g.bytes, SEG / 2);
	sb_wal_reader_segment(r, 3);	/* not after a whole segment: starts afresh */
	sb_wal_reader_feed(r, g.bytes + SEG, SEG);
	sb_wal_reader_feed(r, g.bytes, 10);
	like(sb_wal_reader_end(r), "past the end of a segment", "bytes past a segment's end: the WAL ends");
	sb_wal_reader_free(r);
	free(copy);
	wg_free(&g);
}

/* ---------- placing a target on a timeline ---------- */

static void
archive_segment(ThWal *w, const WalGen *g, uint32_t tli, uint64_t segno)
{
	char		path[PATH_MAX];
	const char *name = th_wal_name(tli, segno);

	th_path(path, "%s/src/%s", w->f.root, name);
	if (!th_write_file(path, wg_segment(g, segno), SEG, 0600) || !th_wal_archive(w, name))
		diag("could not archive %s", name);
}

static bool
place(const ThWal *w, SbRecoveryKind kind, const char *value, int64_t time, const char *timeline,
	  SbRecoveryWal *r, SbError *err)
{
	SbRecoveryTarget t = {kind, value, true, timeline, NULL, SB_ARCHIVE_MODE_DEFAULT, kind == SB_RECOVERY_TIME,
	time};

	return sb_recovery_check_wal(&w->dests, "0/100100", 1, &t, r, err);
}

void
test_wal_target_timelines(void)
{
	ThWal		w;
	WalGen		g1,
				g2;
	SbRecoveryWal r;
	SbError		err;
	uint64_t	fork,
				rp_before,
				rp_after;
	char		history[128];

	th_wal_fixture(&w, "waltarget", 1);
	/* timeline 1: segments 1 to 4; the backup ends at 0/100100 */
	wg_init(&g1, SEG, 1, 4, 0xD110, 1, TH_WAL_SYSID);
	wg_filler(&g1, 300);
	wg_commit(&g1, 800, 1000, 0);
	wg_switch(&g1);
	rp_before = wg_restore_point(&g1, "before", 2000);
	wg_commit(&g1, 801, 3000, 0);
	wg_filler(&g1, 1000);
	fork = g1.pos;				/* a copy restored to here promotes to timeline 2 */
	wg_commit(&g1, 802, 5000, 0);
	wg_switch(&g1);
	wg_commit(&g1, 803, 9000, 0);
	rp_after = wg_restore_point(&g1, "after", 9500);
	wg_commit(&g1, 804, 11000, 0);
	wg_switch(&g1);
	/* timeline 2: the copy's, its first commit at 7000, after the fork's time */
	wg_fork(&g2, &g1, fork, 2);
	wg_commit(&g2, 802, 7000, 0);
	wg_restore_point(&g2, "copy", 7500);
	wg_commit(&g2, 805, 8000, 0);
	wg_switch(&g2);
	archive_segment(&w, &g1, 1, 1);
	archive_segment(&w, &g1, 1, 2);
	archive_segment(&w, &g1, 1, 3);
	archive_segment(&w, &g1, 1, 4);
	archive_segment(&w, &g2, 2, 2);
	archive_segment(&w, &g2, 2, 3);
	snprintf(history, sizeof(history), "1\t%X/%X\tbefore 2000-01-01 00:00:00.004+00\n",
			 (unsigned) (fork >> 32), (unsigned) fork);
	ok(th_wal_archive_text(&w, "00000002.history", history), "timeline 2 forks off timeline 1 in segment 2");

	ok(place(&w, SB_RECOVERY_NAME, "after", 0, "latest", &r, &err) && r.refuse && r.holding_timeline == 1,
	   "a restore point on timeline 1 past the fork, along latest given: refused, timeline 1 named");
	like(r.message, "timeline 2's WAL does not reach it", "saying timeline 2 does not reach it");
	ok(r.target_lsn == rp_after && r.target_on == 1, "and where it is on timeline 1");
	like(r.path, "timeline 1 to 0/2", "the path recovery replays named");
	like(r.path, ", then 2", "ending on timeline 2");
	ok(r.chosen_timeline == 0, "latest given: nothing chosen in its place");
	ok(place(&w, SB_RECOVERY_NAME, "after", 0, NULL, &r, &err) && !r.refuse && r.chosen_timeline == 1 &&
	   r.newest_timeline == 2 && r.timeline == 1, "no timeline given: timeline 1 chosen, not refused");
	like(r.chosen_why, "timeline 2's WAL does not reach it", "saying why the newest was passed over");
	ok(r.target_lsn == rp_after && r.target_on == 1 && r.path[0] == '\0',
	   "checked along timeline 1: the target on it, no switch on the way");
	ok(place(&w, SB_RECOVERY_NAME, "after", 0, "1", &r, &err) && !r.refuse && r.target_lsn == rp_after,
	   "timeline 1 chosen: found, not refused");
	ok(place(&w, SB_RECOVERY_NAME, "before", 0, NULL, &r, &err) && !r.refuse && r.target_looked &&
	   r.target_lsn == rp_before, "a restore point before the fork: every timeline reaches it");
	like(r.target_message, "before timeline 2 parts", "said");
	ok(place(&w, SB_RECOVERY_NAME, "copy", 0, NULL, &r, &err) && !r.refuse && r.target_on == 2,
	   "a restore point of the copy's, along latest: found on timeline 2");
	ok(place(&w, SB_RECOVERY_NAME, "copy", 0, "1", &r, &err) && r.refuse && r.holding_timeline == 2,
	   "and along timeline 1: refused, timeline 2 named");
	ok(place(&w, SB_RECOVERY_XID, "803", 0, "latest", &r, &err) && r.refuse && r.holding_timeline == 1,
	   "an xid on timeline 1 past the fork, latest given: refused");
	ok(place(&w, SB_RECOVERY_XID, "803", 0, NULL, &r, &err) && !r.refuse && r.chosen_timeline == 1 &&
	   r.target_on == 1, "and with none given: timeline 1 chosen");
	ok(place(&w, SB_RECOVERY_NAME, "copy", 0, NULL, &r, &err) && r.chosen_timeline == 0 && r.target_on == 2,
	   "none given and the newest holds the target: nothing chosen");
	ok(place(&w, SB_RECOVERY_XID, "802", 0, NULL, &r, &err) && !r.refuse && r.target_on == 2,
	   "an xid both timelines used past the fork: latest's, as PostgreSQL follows it");
	/* times: timeline 2's first commit is at 7000 */
	ok(place(&w, SB_RECOVERY_TIME, "t", 6000, "latest", &r, &err) && r.refuse && r.holding_timeline == 1,
	   "a time past the fork that timeline 2 began after: refused, timeline 1 named");
	like(r.message, "began after the target time", "saying timeline 2 began after it");
	ok(place(&w, SB_RECOVERY_TIME, "t", 6000, NULL, &r, &err) && !r.refuse && r.chosen_timeline == 1 &&
	   r.target_on == 1, "and with none given: timeline 1 chosen");
	like(r.chosen_why, "began after the target time", "saying why");
	ok(place(&w, SB_RECOVERY_TIME, "t", 10000, "latest", &r, &err) && r.refuse && r.holding_timeline == 1,
	   "a time past every commit of timeline 2: refused, timeline 1 named");
	ok(place(&w, SB_RECOVERY_TIME, "t", 10000, NULL, &r, &err) && !r.refuse && r.chosen_timeline == 1,
	   "and with none given: timeline 1 chosen");
	ok(place(&w, SB_RECOVERY_TIME, "t", 7200, NULL, &r, &err) && !r.refuse && r.target_on == 2,
	   "a time while timeline 2 was live: latest holds it");
	ok(place(&w, SB_RECOVERY_TIME, "t", 2500, NULL, &r, &err) && !r.refuse && r.target_on == 1,
	   "a time before the fork: not refused");
	ok(place(&w, SB_RECOVERY_NAME, "nowhere", 0, NULL, &r, &err) && !r.refuse && r.target_lsn == 0,
	   "a name no timeline holds: not refused (PostgreSQL says so at start)");
	like(r.target_message, "no archived timeline reaches", "said");
	{
		SbRecoveryTarget t = {SB_RECOVERY_TIME, "2026-01-01 00:00", true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT,
		false, 0};

		ok(sb_recovery_check_wal(&w.dests, "0/100100", 1, &t, &r, &err) && !r.refuse && r.target_looked,
		   "a time not read (no zone): not placed");
		like(r.target_message, "not looked for", "said");
	}
	/* a segment of timeline 1 past the fork missing: said, not refused */
	{
		char		path[PATH_MAX];

		th_rmtree(th_wal_archived(&w, 0, th_wal_name(1, 3), path));
		ok(place(&w, SB_RECOVERY_NAME, "after", 0, NULL, &r, &err) && !r.refuse && r.target_lsn == 0,
		   "timeline 1's segment 3 gone: the name cannot be placed, nothing refused");
		like(r.target_message, "no archived timeline reaches", "said");
	}
	wg_free(&g1);
	wg_free(&g2);
	th_wal_fixture_done(&w);
}

/* The path recovery replays, as tliOfPointInHistory gives it: PostgreSQL 028's timeline 3, whose line 2 is never followed. */
void
test_wal_target_path(void)
{
	SbWalHistory *h = calloc(1, sizeof(SbWalHistory));
	char		out[256];

	h->n = 3;
	h->tli[0] = 1;
	h->tli[1] = 2;
	h->begin[1] = 0x40000D0;
	h->tli[2] = 3;
	h->begin[2] = 0x30145D0;
	sb_wal_describe_path(h, 1, 0x2000100, out, sizeof(out));
	is_str(out, "timeline 1 to 0/30145D0, then 3", "a line that begins past its successor's start is never followed");
	sb_wal_describe_path(h, 1, 0x3100000, out, sizeof(out));
	is_str(out, "", "from past the switch: one timeline, nothing to say");
	h->n = 3;
	h->begin[1] = 0x3000000;
	h->begin[2] = 0x5000000;
	sb_wal_describe_path(h, 1, 0x2000100, out, sizeof(out));
	is_str(out, "timeline 1 to 0/3000000, then timeline 2 to 0/5000000, then 3", "two switches");
	h->n = 1;
	sb_wal_describe_path(h, 1, 0x2000100, out, sizeof(out));
	is_str(out, "", "no switch: nothing");
	free(h);
}

/* Records read from segment 2 of G, one segment, from the start: how many, and how the WAL ended into END. */
static uint32_t
count_records(const WalGen *g, uint32_t nseg, char *end, size_t size, uint64_t *skipped)
{
	Seen		seen;
	SbWalReader *r;

	memset(&seen, 0, sizeof(seen));
	r = read_all(g, 2, nseg, 8192, TH_WAL_SYSID, &seen);
	snprintf(end, size, "%s", sb_wal_reader_end(r));
	if (skipped != NULL)
		*skipped = sb_wal_reader_skipped(r);
	sb_wal_reader_free(r);
	return seen.n;
}

/* The block headers PostgreSQL writes before a record's main data, on a commit: each kind walked. */
void
test_wal_records_block_headers(void)
{
	/* origin; top-level xid; block 0 with a compressed image with a hole and data, a relation; block 1, same relation, data */
	uint8_t		hdrs[] = {253, 1, 0,
		252, 9, 0, 0, 0,
		0, 0x10 | 0x20, 4, 0, 100, 0, 16, 0, 0x04 | 0x01, 32, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 0,
	1, 0x20 | 0x80, 2, 0, 7, 0, 0, 0};
	uint8_t		data[100 + 4 + 2] = {0};
	uint8_t		main[16] = {0};
	uint8_t		bad[] = {0, 0x20, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 0};	/* has data, length 0 */
	uint8_t		other[] = {99};
	char		end[160];
	uint64_t	skipped;
	WalGen		g;
	int64_t		t = 4242;

	memcpy(main, &t, 8);
	wg_init(&g, SEG, 2, 1, 0xD113, 1, TH_WAL_SYSID);
	wg_record(&g, 1, 0x00, 900, hdrs, sizeof(hdrs), data, sizeof(data), main, sizeof(main));
	wg_record(&g, 1, 0x00, 901, NULL, 0, NULL, 0, main, 4);	/* too short to be a commit: passed over */
	wg_record(&g, 0, 0x70, 0, NULL, 0, NULL, 0, main, 16);	/* too short to be a restore point */
	wg_commit(&g, 902, 5000, 0);
	wg_switch(&g);
	is_int(count_records(&g, 1, end, sizeof(end), NULL), 2, "a commit with block headers of every kind read, short ones passed over");
	wg_free(&g);

	wg_init(&g, SEG, 2, 1, 0xD113, 1, TH_WAL_SYSID);
	wg_record(&g, 1, 0x00, 900, bad, sizeof(bad), NULL, 0, main, sizeof(main));
	is_int(count_records(&g, 1, end, sizeof(end), NULL), 0, "a block that says it has data and has none: nothing read");
	like(end, "block headers do not add up", "the WAL ends there");
	wg_free(&g);

	wg_init(&g, SEG, 2, 1, 0xD113, 1, TH_WAL_SYSID);
	wg_record(&g, 1, 0x00, 900, other, sizeof(other), NULL, 0, main, sizeof(main));
	is_int(count_records(&g, 1, end, sizeof(end), NULL), 0, "a block id PostgreSQL does not use: nothing read");
	like(end, "block headers do not add up", "the WAL ends there");
	wg_free(&g);

	/* a commit longer than the reader buffers: skipped, counted */
	wg_init(&g, SEG, 2, 6, 0xD116, 1, TH_WAL_SYSID);
	wg_commit(&g, 903, 6000, SB_WAL_RECORD_MAX + 100);
	wg_commit(&g, 904, 7000, 0);
	wg_switch(&g);
	is_int(count_records(&g, 6, end, sizeof(end), &skipped), 1, "a 4 MB commit skipped, the next one read");
	is_int(skipped, 1, "and counted");
	wg_free(&g);
}

/* Pages that break the layout: each ends the WAL where PostgreSQL's reader would stop. */
void
test_wal_records_bad_pages(void)
{
	WalGen		g;
	uint64_t	lsns[6];
	char		end[160];
	uint8_t    *p;
	uint16_t	info;

	build(&g, 0xD110, lsns);
	p = g.bytes + 3 * 8192;		/* page 3 of segment 2: its address */
	p[8] ^= 0x01;
	ok(count_records(&g, 2, end, sizeof(end), NULL) < 6, "a page of another address: the WAL ends");
	like(end, "of another address", "said");
	p[8] ^= 0x01;
	p = g.bytes + SEG;			/* segment 3's first page without its long header flag */
	memcpy(&info, p + 2, 2);
	info &= (uint16_t) ~0x0002;
	memcpy(p + 2, &info, 2);
	ok(count_records(&g, 2, end, sizeof(end), NULL) == 3, "a segment's first page without its long header: the WAL ends");
	like(end, "without its long header", "said");
	info |= 0x0002;
	memcpy(p + 2, &info, 2);
	/* segment 3's first page goes on with the commit begun in segment 2: without the flag, the WAL ends */
	info &= (uint16_t) ~0x0001;
	memcpy(p + 2, &info, 2);
	ok(count_records(&g, 2, end, sizeof(end), NULL) == 3, "a continuation without its flag: the WAL ends");
	like(end, "does not go on with the record", "said");
	/* marked as overwritten: the unfinished record is dropped and reading goes on after the header */
	info |= 0x0008;
	memcpy(p + 2, &info, 2);
	memset(p + 16, 0, 4);
	(void) count_records(&g, 2, end, sizeof(end), NULL);
	ok(strstr(end, "does not go on") == NULL, "an overwritten continuation: no complaint about the record dropped");
	wg_free(&g);
	/* the first page's long header gives a page size that is not one */
	build(&g, 0xD110, lsns);
	memset(g.bytes + 36, 0, 4);
	is_int(count_records(&g, 2, end, sizeof(end), NULL), 0, "a page size of 0: nothing read");
	like(end, "without a valid long header", "said");
	wg_free(&g);
	sb_wal_reader_free(NULL);
}

/* A segment whose archived copy is damaged: where the target is cannot be told, and nothing is refused for it. */
void
test_wal_target_damaged_segment(void)
{
	ThWal		w;
	WalGen		g1,
				g2;
	SbRecoveryWal r;
	SbError		err;
	uint64_t	fork;
	char		history[128],
				path[PATH_MAX];
	size_t		len;
	uint8_t    *bytes;

	th_wal_fixture(&w, "waltargetdamage", 1);
	wg_init(&g1, SEG, 1, 3, 0xD118, 1, TH_WAL_SYSID);
	wg_filler(&g1, 300);
	wg_switch(&g1);
	wg_commit(&g1, 801, 3000, 0);
	fork = g1.pos;
	wg_commit(&g1, 802, 5000, 0);
	wg_switch(&g1);
	wg_restore_point(&g1, "after", 9500);
	wg_switch(&g1);
	wg_fork(&g2, &g1, fork, 2);
	wg_commit(&g2, 802, 7000, 0);
	wg_switch(&g2);
	archive_segment(&w, &g1, 1, 1);
	archive_segment(&w, &g1, 1, 2);
	archive_segment(&w, &g1, 1, 3);
	archive_segment(&w, &g2, 2, 2);
	snprintf(history, sizeof(history), "1\t%X/%X\tno recovery target specified\n", (unsigned) (fork >> 32),
			 (unsigned) fork);
	ok(th_wal_archive_text(&w, "00000002.history", history), "timeline 2 forks off timeline 1 in segment 2");
	ok(place(&w, SB_RECOVERY_NAME, "after", 0, "latest", &r, &err) && r.refuse && r.holding_timeline == 1,
	   "the restore point past the fork: refused, timeline 1 named");
	/* segment 3 of timeline 1, where the restore point is, damaged in its payload */
	th_wal_archived(&w, 0, th_wal_name(1, 3), path);
	bytes = th_read_file(path, &len);
	ok(bytes != NULL && len > 200 && th_flip_byte(path, len - 100, 0x40), "a byte of its archived copy flipped");
	free(bytes);
	ok(place(&w, SB_RECOVERY_NAME, "after", 0, NULL, &r, &err) && !r.refuse && r.target_lsn == 0 &&
	   r.chosen_timeline == 0 && r.timeline == 2,
	   "the restore point cannot be placed: nothing refused, nothing chosen (latest, as PostgreSQL)");
	like(r.target_message, "could not be told: segment \"000000010000000000000003\" could not be read",
		 "saying which segment could not be read");
	wg_free(&g1);
	wg_free(&g2);
	th_wal_fixture_done(&w);
}
