/*
 * wal_repair.h
 *		Copies made again of the files a WAL archive holds in fewer
 *		destinations than its redundancy asks (wal-verify --repair).
 */
#ifndef SB_WAL_REPAIR_H
#define SB_WAL_REPAIR_H

#include "wal_args.h"

/*
 * Every segment of archive D in fewer than A->redundancy + 1 destinations,
 * and every history file not in all of them, restored whole from a good
 * copy and pushed again with that redundancy (said on stdout, failures on
 * stderr).  *REPAIRED and *FAILED count them; false only when the repair
 * could not start (ERR).
 */
extern bool wal_repair(const WalArgs *a, const SbWalDests *d, uint64_t *repaired, uint64_t *failed,
					   SbError *err);

#endif							/* SB_WAL_REPAIR_H */
