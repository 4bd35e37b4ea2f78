/*
 * wal_fixture.h
 *		What the WAL archive's tests share: an archive of up to three
 *		destinations in a temporary folder, WAL files to push, paths of what
 *		the archive holds.
 */
#ifndef SB_UNIT_WAL_FIXTURE_H
#define SB_UNIT_WAL_FIXTURE_H

#include "stripebackup/sb_wal.h"
#include "drivers.h"
#include "harness.h"

#define TH_WAL_SYSID UINT64_C(7301234567890123456)
#define TH_WAL_SEGMENT ((uint32_t) 1 << 20)	/* the smallest segment size: tests stay fast */

/* ROOT holds destinations d1..dN and src/ (the WAL files pushed); paths as /proc shows them. */
typedef struct ThWal
{
	ThFixture	f;
	SbWalDests	dests;
} ThWal;

extern void th_wal_fixture(ThWal *w, const char *tag, uint32_t ndests);
extern void th_wal_fixture_done(ThWal *w);

/* The same with the destinations on driver D (drivers.h): local folders, or prefixes of a bucket. */
extern void th_wal_fixture_on(ThWal *w, const ThDriver *d, const char *tag, uint32_t ndests);

/* zstd level 1, weighted, equal weights, 2 workers, 1 MB segments, over W's destinations. */
extern void th_wal_options(SbWalArchiveOptions *o, const ThWal *w);

/* The name of segment SEGNO of TIMELINE (1 MB segments), in a static buffer per call slot (4). */
extern const char *th_wal_name(uint32_t timeline, uint64_t segno);

/* Write src/NAME: SIZE bytes of th_fill content; PATH (PATH_MAX) gets its path. */
extern char *th_wal_source(const ThWal *w, const char *name, size_t size, uint32_t seed,
						   bool compressible, char *path);

/* Write src/NAME with TEXT as its content. */
extern char *th_wal_text_source(const ThWal *w, const char *name, const char *text, char *path);

/* DEST[I]/wal/<sysid>/NAME.sbw (a path or an s3:// location: th_dest_* read it). */
extern char *th_wal_archived(const ThWal *w, uint32_t i, const char *name, char *out);

/* DEST[I]/wal/<sysid>. */
extern char *th_wal_folder(const ThWal *w, uint32_t i, char *out);

/* Open an archive with O, push src/NAME (written before), close; diagnostics when it fails. */
extern bool th_wal_push_one(const SbWalArchiveOptions *o, const ThWal *w, const char *name,
							SbWalPushResult *r);

/* Archive src/NAME (written before) with th_wal_options. */
extern bool th_wal_archive(const ThWal *w, const char *name);

/* Write src/NAME holding TEXT and archive it. */
extern bool th_wal_archive_text(const ThWal *w, const char *name, const char *text);

/* Restore NAME from W's archive to ROOT/restored-NAME, and compare it with src/NAME. */
extern bool th_wal_get_equal(const ThWal *w, const char *name, SbError *err);

/* The same from archive DESTS (W's folders read another way: under a key). */
extern bool th_wal_get_equal_from(const ThWal *w, const SbWalDests *dests, const char *name,
								  SbError *err);

/* A key of 48 bytes of FILL, as a key file holds it. */
extern void th_wal_key(SbKey *key, char fill);

/* Which destination (0-based) holds NAME; -1 when none, -2 when several. */
extern int	th_wal_holder(const ThWal *w, const char *name);

#endif							/* SB_UNIT_WAL_FIXTURE_H */
