/*
 * sb_progress.h
 *		Live progress of the running job, for stripe_backup_progress.
 */
#ifndef SB_PROGRESS_EXT_H
#define SB_PROGRESS_EXT_H

#include "stripebackup/sb_archive.h"
#include "sb_shmem.h"

/* A backup starts: its destinations and what each should write. */
extern void sb_progress_begin_backup(const SbJobArgs *args);

/* A restore starts: its stripes and what each should read. */
extern void sb_progress_begin_restore(const SbArchive *a);

#endif							/* SB_PROGRESS_EXT_H */
