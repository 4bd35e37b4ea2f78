/*
 * sb_pitr_args.h
 *		The point-in-time arguments of stripe_restore().
 */
#ifndef SB_PITR_ARGS_H
#define SB_PITR_ARGS_H

#include "fmgr.h"

#include "job_restore.h"

/*
 * Read and check stripe_restore()'s target arguments into ARGS, with the
 * WAL archive and the command restore_command runs; ERROR naming a bad one.
 */
extern void sb_pitr_read(FunctionCallInfo fcinfo, SbRestoreArgs *args);

/* The newest completed backup that ended before ARGS' target; ERROR if none did. */
extern int64 sb_pitr_choose_backup(FunctionCallInfo fcinfo, const SbRestoreArgs *args);

#endif							/* SB_PITR_ARGS_H */
