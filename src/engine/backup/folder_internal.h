/*
 * folder_internal.h
 *		What folder.c (a backup folder reached through descriptors) and
 *		folder_store.c (one of a store without them: object storage) share
 *		in telling and removing a backup's files.
 */
#ifndef SB_FOLDER_INTERNAL_H
#define SB_FOLDER_INTERNAL_H

#include <stddef.h>

#include "stripebackup/sb_folder.h"
#include "stripebackup/sb_manifest.h"

extern void sb_folder_set_verdict(SbFolderRemoval *r, SbFolderVerdict verdict, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

extern void sb_folder_uuid_hex(const uint8_t uuid[16], char hex[33]);

/*
 * Does the manifest (or envelope) whose text READ hands over name itself
 * backup UUID_HEX's?  Read only until its "format" and "backup_uuid" are
 * found (folder_identity.c).
 */
extern bool sb_folder_manifest_names(SbManifestReadFn read, void *arg, const char *uuid_hex);

/* sb_backup_folder_remove for a DESTINATION whose store has no descriptors (store/store.h). */
extern bool sb_backup_folder_remove_store(const char *destination, const SbS3Settings *s3, const char *name,
										  const uint8_t uuid[16], bool dry_run, SbFolderRemoval *r, SbError *err);

#endif							/* SB_FOLDER_INTERNAL_H */
