/*
 * sb_pgbackup.h
 *		An online backup of the whole cluster (run by the backup worker).
 */
#ifndef SB_PGBACKUP_H
#define SB_PGBACKUP_H

#include "sb_history.h"
#include "sb_shmem.h"

/*
 * Take the backup ARGS describes; OUTCOME receives its LSNs and manifest.
 * ERROR if it fails or is canceled, with backup mode ended, the WAL slot
 * dropped and the partial backup removed.
 */
extern void sb_pgbackup_run(const SbJobArgs *args, SbBackupOutcome *outcome);

#endif							/* SB_PGBACKUP_H */
