/*
 * sb_pitr_args.h
 *		The point-in-time arguments of stripe_restore().
 */
#ifndef SB_PITR_ARGS_H
#define SB_PITR_ARGS_H

#include "fmgr.h"

#include "job_restore.h"
#include "stripebackup/sb_pgmeta.h"

/*
 * Read and check the target arguments of stripe_restore() or
 * stripe_restore_plan() (target_time, target_lsn, target_xid, target_name,
 * target, target_inclusive, target_timeline, target_action: argument FIRST
 * and those after it) into ARGS, with the WAL archive and the command
 * restore_command runs; ERROR naming a bad one.
 */
extern void sbx_pitr_read(FunctionCallInfo fcinfo, int first, SbRestoreArgs *args);

/*
 * The standby arguments of stripe_restore() from argument FIRST on
 * (standby, primary_conninfo, primary_slot_name), after sbx_pitr_read: a
 * standby takes no target, and restore_command when the WAL archive
 * (stripebackup.archive_destinations) is usable.
 */
extern void sbx_standby_read(FunctionCallInfo fcinfo, int first, SbRestoreArgs *args);

/* The newest completed backup that ended before ARGS' target (a standby: the newest); ERROR if none did. */
extern int64 sbx_pitr_choose_backup(FunctionCallInfo fcinfo, int first, const SbRestoreArgs *args);

/*
 * Before a point-in-time restore of the backup META describes: take the
 * archive folder of its system, and check that the archive holds the WAL
 * recovery to the target will ask for (sb_recovery_check_wal).  When
 * recovery would stop short of the target unnoticed: ERROR with REFUSE
 * (a restore), else WARNING (a plan); WARNING for a gap PostgreSQL itself
 * will stop at; NOTICE of the segments recovery will replay.  With no
 * target_timeline given, when the newest timeline does not reach the
 * target and another does, that one goes into ARGS' recovery_timeline,
 * with a NOTICE.
 */
extern void sbx_pitr_check_wal(SbRestoreArgs *args, const SbPgMeta *meta, bool refuse);

/*
 * With a WAL archive (stripebackup.archive_destinations): verify every file
 * recovery from the backup META describes reads, from its start to the
 * newest archived (sb_recovery_verify_wal); each problem goes to FN, which
 * must not raise an ERROR (an engine frame is below it).  NOTICE when all
 * is well.
 */
extern void sbx_pitr_verify_wal(const SbPgMeta *meta, SbWalProblemFn fn, void *arg);

#endif							/* SB_PITR_ARGS_H */
