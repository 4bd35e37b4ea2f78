/*
 * sb_folder.h
 *		Removing a backup's folder from one destination, safely: only the
 *		files that backup wrote, through directory descriptors that never
 *		follow a link, and nothing at all if the folder holds anything else.
 *
 * A backup is removed whole or not at all: check every destination with a
 * dry run first, then remove from each.
 */
#ifndef SB_FOLDER_H
#define SB_FOLDER_H

#include <stdbool.h>
#include <stdint.h>

#include "stripebackup/sb_error.h"
#include "stripebackup/sb_s3.h"

typedef enum SbFolderVerdict
{
	SB_FOLDER_REMOVED,			/* held only this backup's files: removed
								 * (a dry run: would be) */
	SB_FOLDER_ABSENT,			/* no such folder: nothing to do */
	SB_FOLDER_DESTINATION_MISSING,	/* the destination itself is not there
									 * (an unmounted device?): nothing removed */
	SB_FOLDER_BUCKET_MISSING,	/* the destination's bucket does not exist: it
								 * holds nothing (S3 deletes no bucket that
								 * holds objects); nothing removed */
	SB_FOLDER_DESTINATION_LINK, /* the destination is a symbolic link: nothing removed */
	SB_FOLDER_LINK,				/* the folder is a symbolic link: nothing removed */
	SB_FOLDER_FOREIGN			/* not a folder, or it holds something this
								 * backup did not write: nothing removed */
} SbFolderVerdict;

typedef struct SbFolderRemoval
{
	SbFolderVerdict verdict;
	char		detail[1024];	/* unless removed or absent: what was found, naming it */
	uint64_t	files;			/* files removed (a dry run: that would be) */
	uint64_t	bytes;			/* their size */
} SbFolderRemoval;

/*
 * Remove DESTINATION/NAME if it holds only what the backup UUID wrote:
 * manifest.json with that backup_uuid, the manifest's temporary file
 * beginning with it, and stripe files whose header carries it.  Anything
 * else there (another file, a directory, a link, another backup's stripe,
 * a file that cannot be read as one of those) keeps the whole folder, and
 * RESULT names the first such entry.  With DRY_RUN nothing is removed.
 * An s3:// DESTINATION is reached with S3 (NULL: the environment).
 * False only when something could not be done (an I/O error; then RESULT
 * counts what was removed).
 */
extern bool sb_backup_folder_remove(const char *destination, const SbS3Settings *s3, const char *name,
									const uint8_t uuid[16], bool dry_run,
									SbFolderRemoval *result, SbError *err);

#endif							/* SB_FOLDER_H */
