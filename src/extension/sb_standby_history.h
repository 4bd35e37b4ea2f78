/*
 * sb_standby_history.h
 *		The history of the backups a standby takes.  A server in recovery
 *		cannot write the history tables, so its backup worker appends each
 *		row, as JSON, to a file of the data directory; the views read it
 *		beside the tables, and the first job of the server once promoted
 *		imports it into them (docs/DECISIONS.md "Backups taken on a standby").
 */
#ifndef SB_STANDBY_HISTORY_H
#define SB_STANDBY_HISTORY_H

#include "lib/stringinfo.h"

/* The folder of the data directory that holds it; never copied into a backup. */
#define SB_STANDBY_DIR "pg_stripebackup"
#define SB_STANDBY_HISTORY_FILE SB_STANDBY_DIR "/standby_history.jsonl"

/* Ids of backups taken on a standby start here, beyond any primary's sequence. */
#define SB_STANDBY_FIRST_ID INT64CONST(1000000000000000)

/*
 * A new id for a backup on this standby: SB_STANDBY_FIRST_ID + 1000 x the
 * Unix time in seconds, or one above every id it has used if that is more.
 */
extern int64 sbx_standby_next_id(void);

/* Append RECORD (one JSON object, no newline) to the file, durably. */
extern void sbx_standby_history_append(const StringInfo record);

/* Backup ID forgotten (its files were removed): its row is no longer shown. */
extern void sbx_standby_history_forget(int64 id);

/* On a server out of recovery: the file's rows into the tables, then the file removed. */
extern void sbx_standby_history_import(void);

#endif
