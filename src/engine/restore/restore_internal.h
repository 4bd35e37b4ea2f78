/*
 * restore_internal.h
 *		What restore.c and restore_delta.c share: the directories a restore
 *		writes into and where each archive path goes.
 */
#ifndef SB_RESTORE_INTERNAL_H
#define SB_RESTORE_INTERNAL_H

#include "stripebackup/sb_archive.h"
#include "restore/chain.h"
#include "manifest/entry_window.h"
#include "restore/file_check.h"
#include "restore/restore_writeback.h"

typedef struct RestoreDelta RestoreDelta;

/* A directory the restore writes into: the target or a relocation's. */
typedef struct OutDir
{
	const char *path;
	int			fd;
	bool		created;		/* we made the directory itself */
	uint32_t	parents_made;	/* and that many of its missing ancestors */
} OutDir;

typedef struct Relocation
{
	const char *from;			/* archive path of the directory */
	size_t		from_len;
	const char *what;
	OutDir		dir;
} Relocation;

typedef struct RestoreTarget
{
	const SbManifest *manifest;
	OutDir		root;
	Relocation *relocs;
	uint32_t	nrelocs;
	SbChain		chain;			/* a backup with parents: what each writes */
	RestoreDelta *delta;		/* a delta restore's state (restore_delta.c), or NULL */
	int			umask;			/* the process's, or -1 when unknown */
	SbWriteback *writeback;		/* the devices' write-out, or NULL */
} RestoreTarget;

/* Where an archive path goes: a path relative to an output directory. */
typedef struct Place
{
	const OutDir *dir;
	const char *rel;			/* "." for a relocation's own directory */
} Place;

/* Where archive PATH goes: the relocation it lies in, or the target. */
extern Place sb_restore_locate(const RestoreTarget *t, const char *path);

/* ---------- restore_delta.c: a target that holds a copy already ---------- */

/*
 * Begin a delta restore of T (its output directories open): the guard file
 * (O's delta_guard) goes first, so that a copy cut short cannot start; then
 * every entry the backup does not have, or has as another type, is removed
 * (links are never followed), and every file it has is cut or extended to
 * its size, to be compared.
 */
extern bool sb_delta_begin(RestoreTarget *t, const SbRestoreOptions *o, SbRestoreStats *stats,
						   SbError *err);

/*
 * Compare each chunk with what the target holds (the XXH3-64 of its raw
 * bytes, from the stripes' indexes): a chunk the target holds whole is
 * marked, its pieces accounted into FC, and not read.  (A chain is not
 * compared: its files' bytes come from several backups' chunks; each is
 * read, and only the blocks that differ are written.)
 */
extern bool sb_delta_compare(RestoreTarget *t, SbArchive *a, const SbReadOptions *read,
							 SbFileCheck *fc, SbError *err);

/*
 * The same for a backup opened streamed (no chain): the pieces walked from
 * its spool in chunk order, a batch of chunks compared at a time, what the
 * target holds accounted per entry for the read's window (sb_delta_seed).
 */
extern bool sb_delta_compare_streamed(RestoreTarget *t, SbArchive *a, const SbReadOptions *read,
									  SbError *err);

/* After sb_delta_compare_streamed: what each file of the window starts from; else NULL. */
extern const SbWindowSeed *sb_delta_seed(const RestoreTarget *t);

/*
 * Write LENGTH bytes of entry ENTRY (of the newest backup) at OFFSET into
 * FD: into a file the target held, only the blocks that differ from what
 * it holds (one page changed in a chunk costs a page, not the chunk).
 * Counts what it writes.
 */
extern bool sb_delta_write(RestoreTarget *t, int fd, size_t entry, const uint8_t *data,
						   uint64_t length, uint64_t offset, const char *what, SbError *err);

/* The chunks the target holds already (indexed by chunk id), for the read pipeline. */
extern const uint8_t *sb_delta_held(const RestoreTarget *t);

/* Was entry I's file in the target already (it is not created)? */
extern bool sb_delta_kept(const RestoreTarget *t, size_t i);

/* The archive path a piece of entry I is written to: the guard's temporary name, or NULL. */
extern const char *sb_delta_write_path(const RestoreTarget *t, size_t i);

/* Everything else durable: the guard put in place. */
extern bool sb_delta_finish(RestoreTarget *t, SbError *err);

/* A failed delta restore: its temporary guard goes; the copy stays, and cannot start. */
extern void sb_delta_abort(RestoreTarget *t);

extern void sb_delta_free(RestoreTarget *t);

#endif							/* SB_RESTORE_INTERNAL_H */
