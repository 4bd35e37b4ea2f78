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
extern SbHandle *sb_handle_new(SbFreeFn free_fn);

/* Give the handle its object (NULL: nothing to own). */
extern void sb_handle_own(SbHandle *handle, void *object);

/* The object, now freed by the caller or consumed by the engine: forget it. */
extern void *sb_handle_release(SbHandle *handle);

/* Free the object now. */
extern void sb_handle_free(SbHandle *handle);

/*
 * The archive at LOCATION (an absolute path or s3://...), closed when the
 * current memory context goes, to verify or restore a window of files at a
 * time (sb_archive_open_streamed): the entries in a private file under
 * sb_temp_folder(), none in memory.  If it cannot be opened: ERROR, or with
 * ERR given, NULL and the engine's error in *ERR.
 */
extern SbArchive *sb_handle_open_archive_streamed(const char *location, SbError *err);

/*
 * The same to be the parent of a backup (sb_archive_open_to_look_up): its
 * entries with their stamps in a private file under sb_temp_folder(), to be
 * found by path, none in memory; ERROR if it cannot be opened.
 */
extern SbArchive *sb_handle_open_archive_to_look_up(const char *location);

/*
 * The same to be merged (sb_archive_open_to_merge): the newest backup's
 * entries with their stamps, and every other backup's, in private files;
 * ERROR if it cannot be opened.
 */
extern SbArchive *sb_handle_open_archive_to_merge(const char *location);

/* The data directory's folder for temporary files (base/pgsql_tmp), made if need be. */
extern const char *sb_temp_folder(void);

/* The same to plan only (sb_archive_open_for_plan): no file table held; ERROR if it cannot be opened. */
extern SbArchive *sb_handle_open_archive_to_plan(const char *location);

/*
 * The same for its members only (SB_KEEP_HEAD), authenticated, its entries
 * not read: for checks before a job whose own open checks every entry.
 * ERROR if it cannot be opened, or with ERR given, NULL and the error.
 */
extern SbArchive *sb_handle_open_archive_to_check(const char *location, SbError *err);

/*
 * A WARNING for what opening A found amiss (a manifest copy set aside) and
 * for a manifest no stripe could vouch for.
 */
extern void sb_handle_warn(const SbArchive *a);

#endif							/* SB_HANDLE_H */
