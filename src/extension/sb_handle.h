/*
 * sb_handle.h
 *		Engine objects (malloc'd, some running threads) owned by a PostgreSQL
 *		memory context: when the context goes, on success or on any ERROR,
 *		its reset callback frees the object.  No PG_TRY at call sites.
 */
#ifndef SB_HANDLE_H
#define SB_HANDLE_H

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_backup.h"

typedef void (*SbFreeFn) (void *object);

typedef struct SbHandle SbHandle;

/*
 * A handle in the current memory context, empty for now: make it before the
 * engine object, so that no ERROR can fall between the two.
 */
extern SbHandle *sbx_handle_new(SbFreeFn free_fn);

/* Give the handle its object (NULL: nothing to own). */
extern void sbx_handle_own(SbHandle *handle, void *object);

/* The object, now freed by the caller or consumed by the engine: forget it. */
extern void *sbx_handle_release(SbHandle *handle);

/* Free the object now. */
extern void sbx_handle_free(SbHandle *handle);

/*
 * A backup to open, and what it must be (SbArchiveExpect): by id, what its
 * history row records (sbx_backup_recorded, job_backup.h); by a location the
 * caller named, what the caller allows (sbx_backup_ref_at).
 */
typedef struct SbBackupRef
{
	const char *location;		/* the folder (or s3:// prefix) looked in first */
	int64		backup_id;		/* 0: a location the caller named */
	SbArchiveExpect expect;
} SbBackupRef;

/*
 * LOCATION, named by the caller: under a key in force
 * (stripebackup.encryption_key_file) a backup in the clear is refused
 * unless ALLOW_UNENCRYPTED.  ERROR unless it is an absolute path or an
 * s3:// location.
 */
extern SbBackupRef *sbx_backup_ref_at(const char *location, bool allow_unencrypted);

/*
 * Backup BACKUP_ID at LOCATION, as a job's worker opens again what its
 * caller found there: EXPECT's uuid and encryption (no other folder is
 * tried: the caller chose LOCATION for holding the recorded backup).
 */
extern SbBackupRef *sbx_backup_ref_found(const char *location, int64 backup_id,
										const SbArchiveExpect *expect);

/* What EXPECT says of the backup, with no folder to try: to keep in a job's arguments. */
extern void sbx_backup_expect_copy(SbArchiveExpect *to, const SbArchiveExpect *expect);

/* The folder whose manifest copy A uses (another than its location when that copy was set aside). */
extern char *sbx_archive_used_folder(const SbArchive *a);

/* What an archive is opened for, and so what it keeps of its entries. */
typedef enum SbOpenFor
{
	SB_OPEN_TO_READ,			/* verify or restore, a window of files at a
								 * time (SB_KEEP_STREAMED): the
								 * entries in a private file under
								 * sbx_temp_folder(), none in memory */
	SB_OPEN_TO_LOOK_UP,			/* the parent of a backup: its entries with
								 * their stamps in a private file, to be
								 * found by path */
	SB_OPEN_TO_MERGE,			/* the newest backup's entries with their
								 * stamps, and every other backup's, in
								 * private files */
	SB_OPEN_TO_PLAN,			/* counted: no file table held */
	SB_OPEN_TO_CHECK			/* its members alone (SB_KEEP_HEAD),
								 * authenticated, its entries not read: for
								 * checks before a job whose own open checks
								 * every entry */
} SbOpenFor;

/*
 * The archive REF names, with its chain, opened for PURPOSE with the
 * server's key and closed when the current memory context goes.  If it
 * cannot be opened (REF's expectations unmet among them): ERROR, or with
 * ERR given, NULL and the engine's error in *ERR.
 */
extern SbArchive *sbx_handle_open_archive(const SbBackupRef *ref, SbOpenFor purpose, SbError *err);

/* The data directory's folder for temporary files (base/pgsql_tmp), made if need be. */
extern const char *sbx_temp_folder(void);

/*
 * A WARNING for what opening A found amiss (a manifest copy set aside) and
 * for a manifest no stripe could vouch for.
 */
extern void sbx_handle_warn(const SbArchive *a);

#endif							/* SB_HANDLE_H */
