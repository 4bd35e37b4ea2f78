/*
 * pick_backup.h
 *		"stripebackup restore DEST --target-time ...": given a destination
 *		rather than one backup's folder, the newest completed backup there
 *		that ended before the target, as stripe_restore() picks from its
 *		history.
 */
#ifndef SB_PICK_BACKUP_H
#define SB_PICK_BACKUP_H

#include "read_args.h"

/*
 * When ARGS->location is a destination (a folder of backup folders, no
 * manifest of its own): the folder of the newest completed backup there
 * that ended before ARGS' target (a time or an LSN; any other target, or a
 * standby: the newest), said on stdout, into *PICKED (malloc'd); NULL when
 * the location is a backup itself (or one that did not complete).
 * SB_ENOTFOUND when none did, or the location does not exist or holds no
 * backup; SB_EINVAL for a destination with no target to choose by, or a
 * time without a zone.
 */
extern bool cli_pick_backup(const ReadArgs *args, char **picked, SbError *err);

/*
 * TEXT, a time as recovery_target_time takes it with a zone ("2026-11-30
 * 14:05:00.5+01", "...T14:05:00Z", "... UTC"), into seconds since the epoch.
 */
extern bool cli_parse_zoned_time(const char *text, double *seconds);

#endif							/* SB_PICK_BACKUP_H */
