/*
 * sb_args.h
 *		The arguments of stripe_backup(): read from the call, checked before
 *		anything is created, and put in the backup job's arguments.
 */
#ifndef SB_ARGS_H
#define SB_ARGS_H

#include "fmgr.h"
#include "utils/array.h"

#include "job_backup.h"

/* Read a destinations array (one-dimensional, no NULLs, 1 to 64 of them); returns how many. */
extern int	sbx_args_read_destinations(ArrayType *array, char (*destinations)[MAXPGPATH]);

/*
 * Read and check the arguments of stripe_backup() (or stripe_merge()) from
 * argument FIRST on: destinations, weights, label, compression,
 * compression_level, balance; and argument REDUNDANCY (NULL:
 * stripebackup.redundancy); ERROR naming the bad value.  NULL destinations
 * keep those already in ARGS, if there are any.
 */
extern void sbx_args_from_call(FunctionCallInfo fcinfo, int first, int redundancy,
							   SbBackupArgs *args);

#endif							/* SB_ARGS_H */
