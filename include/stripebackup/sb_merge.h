/*
 * sb_merge.h
 *		Fold a chain (a differential or incremental backup and the backups it
 *		completes) into one new full backup of the same moment, without the
 *		database server: so that chains stay short.
 *
 * The chain is restored, every chunk checked, into a scratch folder
 * (STAGING: it needs room for the cluster uncompressed), and written again
 * as a full backup in the options' destinations; the scratch folder goes
 * whatever happens.  The new backup records what the newest backup of the
 * chain recorded of every entry (modes, times, file identities and times,
 * so that it can be the parent of the next incremental) and that backup's
 * start time.  The chain is left as it was: retention removes it.
 */
#ifndef SB_MERGE_H
#define SB_MERGE_H

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_backup.h"

/* Kept in a merge's scratch folder while it is there: what it is for. */
#define SB_MERGE_MARKER_FILE ".stripebackup-merge"

typedef struct SbMergeOptions
{
	SbBackupOptions backup;		/* the new backup (its type is full, it has no
								 * parent, its start time is the chain's) */
	SbReadOptions read;			/* reading the chain */
	const char *staging;		/* absolute; must not exist: made, then removed */
	const char *const *later;	/* entries the caller adds itself after
								 * sb_merge_copy (a file it writes anew) */
	uint32_t	nlater;
} SbMergeOptions;

typedef struct SbMerge SbMerge;

/*
 * Make the scratch folder, restore CHAIN (opened by sb_archive_open, or
 * SB_KEEP_LOOKUP with parents_streamed to hold no file table) into it and
 * begin the new backup.  CHAIN must stay open until the merge ends.
 */
extern SbMerge *sb_merge_begin(SbArchive *chain, const SbMergeOptions *options, SbError *err);

/* Add every entry of the chain's newest manifest but the later ones, in order. */
extern bool sb_merge_copy(SbMerge *m, SbError *err);

/* The new backup, to add the later entries to (owned by M). */
extern SbBackup *sb_merge_backup(SbMerge *m);

/* Where the chain was restored: the data directory, "<staging>/data". */
extern const char *sb_merge_data_dir(const SbMerge *m);

/*
 * Finish the new backup (sb_backup_finish) and remove the scratch folder.
 * Consumes M whatever happens; on failure nothing of the new backup stays.
 */
extern bool sb_merge_finish(SbMerge *m, SbManifest **manifest, SbError *err);

/* Stop: the new backup's files and the scratch folder go. */
extern void sb_merge_abort(SbMerge *m);

/*
 * After a crash: remove STAGING if it is the scratch folder of the merge
 * writing backup NAME (its marker says so); *REMOVED tells whether it was.
 */
extern bool sb_merge_remove_staging(const char *staging, const char *name, bool *removed,
									SbError *err);

#endif							/* SB_MERGE_H */
