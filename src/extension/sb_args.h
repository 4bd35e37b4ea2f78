/*
 * sb_args.h
 *		The arguments of stripe_backup(): read from the call, checked before
 *		anything is created, and turned into engine options.
 */
#ifndef SB_ARGS_H
#define SB_ARGS_H

#include "fmgr.h"
#include "utils/array.h"

#include "stripebackup/sb_backup.h"
#include "sb_shmem.h"

/* Read a destinations array (one-dimensional, no NULLs, 1 to 64 of them). */
extern void sb_args_read_destinations(ArrayType *array, SbJobArgs *args);

/* Read and check stripe_backup()'s arguments; ERROR naming the bad value. */
extern void sb_args_from_call(FunctionCallInfo fcinfo, SbJobArgs *args);

/*
 * ERROR unless PATH (WHAT, for messages: "destination", "restore target") is
 * absolute and outside the data directory and every tablespace.
 */
extern void sb_check_outside_cluster(const char *path, const char *what);

/* Engine options for ARGS; DEST_PTRS must have room for SB_MAX_STRIPES. */
extern void sb_args_to_options(const SbJobArgs *args, SbBackupOptions *options,
							   const char **dest_ptrs);

#endif							/* SB_ARGS_H */
