/*
 * sb_expire.h
 *		Retention (sb_sql_expire.c): stripe_expire(), and the rules of
 *		stripebackup.retention_* applied after each completed backup.
 */
#ifndef SB_EXPIRE_H
#define SB_EXPIRE_H

/*
 * The rules of SB_SQL_EXPIRE_CANDIDATES: keep_last (int8), older_than
 * (interval), recovery_window (interval), keep_full (int8); 'n' in NULLS
 * where a rule is not given.
 */
typedef struct SbExpireRules
{
	Datum		values[4];
	char		nulls[4];
} SbExpireRules;

/*
 * In a backup worker, after its backup completed and was recorded, outside
 * any transaction: apply stripebackup.retention_full_count and
 * stripebackup.retention_window when set, in a transaction of its own; a
 * failure is a WARNING and leaves the backup completed.
 */
extern void sbx_expire_after_backup(void);

#endif							/* SB_EXPIRE_H */
