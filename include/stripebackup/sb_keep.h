/*
 * sb_keep.h
 *		A kept backup's label: keep.json beside the manifest in each of its
 *		folders (docs/FORMAT.md, "keep.json"), written by stripe_keep() so
 *		that a reader without the server (the command's list) can tell which
 *		backups are kept and why.  The server's history stays the authority
 *		for retention; the label is not authenticated, and its note is
 *		stored in the clear even for an encrypted backup: a label to show,
 *		never a reason to act.
 */
#ifndef SB_KEEP_H
#define SB_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_error.h"
#include "stripebackup/sb_s3.h"

#define SB_KEEP_LABEL_FILE "keep.json"
/* The longest note a label holds, in bytes (stripe_keep refuses a longer one). */
#define SB_KEEP_LABEL_NOTE_MAX 1024
/* A larger file is no label: a note of SB_KEEP_LABEL_NOTE_MAX bytes, each escaped as \uXXXX, fits. */
#define SB_KEEP_LABEL_MAX_BYTES (6 * SB_KEEP_LABEL_NOTE_MAX + 512)

typedef struct SbKeepLabel
{
	char		note[SB_KEEP_LABEL_NOTE_MAX + 1];	/* "" when there is none */
	char		at[64];			/* when it was kept (ISO 8601, UTC) */
} SbKeepLabel;

/*
 * Put the label of backup UUID, kept with NOTE (NULL: none), into the
 * backup folder NAME of destination DEST, replacing any; the folder must
 * exist (SB_ENOTFOUND when it does not).  S3: a bucket's settings (NULL:
 * the environment's), as everywhere a store is opened.
 */
extern bool sb_keep_label_put(const char *dest, const SbS3Settings *s3, const char *name, const uint8_t uuid[16],
							  const char *note, SbError *err);

/* Remove the label from DEST/NAME; nothing to do when there is none. */
extern bool sb_keep_label_remove(const char *dest, const SbS3Settings *s3, const char *name, SbError *err);

/*
 * The label in the backup folder LOCATION (DEST/NAME) of the backup
 * UUID_HEX: SB_ENOTFOUND when there is none, SB_ECORRUPT when the file is
 * not a label of that backup.
 */
extern bool sb_keep_label_read(const char *location, const SbS3Settings *s3, const char *uuid_hex, SbKeepLabel *label,
							   SbError *err);

/* Is TEXT (LEN bytes) a label of the backup UUID_HEX?  What a folder's removal accepts as the backup's. */
extern bool sb_keep_label_names(const char *text, size_t len, const char *uuid_hex);

#endif							/* SB_KEEP_H */
