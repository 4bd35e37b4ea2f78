/*
 * sb_spi.h
 *		Every SQL statement the extension runs, in a caller's session or in a
 *		worker, goes through here: the statements are the fixed texts of
 *		sb_statements.c, run with search_path pinned to pg_catalog, pg_temp
 *		as the extension itself (docs/SECURITY.md).
 */
#ifndef SB_SPI_H
#define SB_SPI_H

#include "executor/spi.h"
#include "utils/resowner.h"

/* The statements of sb_statements.c. */
typedef enum SbStatement
{
	SB_SQL_CALIBRATED_SPEED,
	SB_SQL_CALIBRATION_INSERT,
	SB_SQL_CLUSTER_SIZE,
	SB_SQL_BACKUP_INSERT,
	SB_SQL_BACKUP_PARENT,
	SB_SQL_STANDBY_BACKUP_PARENT,
	SB_SQL_BACKUP_FINISH,
	SB_SQL_BACKUP_STRIPES_INSERT,
	SB_SQL_BACKUP_TIMELINE_INSERT,
	SB_SQL_BACKUP_FOLDERS,
	SB_SQL_BACKUP_FOR_TARGET,
	SB_SQL_BACKUP_MARK_STALE,
	SB_SQL_STANDBY_MARK_STALE,
	SB_SQL_MERGE_SOURCE,
	SB_SQL_RESTORE_SPEED,
	SB_SQL_DELTA_COMPARE_SPEED,
	SB_SQL_RESTORE_FIXED_COSTS,
	SB_SQL_RESTORE_INSERT,
	SB_SQL_RESTORE_DIRECTORIES,
	SB_SQL_RESTORE_FINISH,
	SB_SQL_RESTORE_STRIPES_INSERT,
	SB_SQL_RESTORE_MARK_STALE,
	SB_SQL_EXPIRE_CANDIDATES,
	SB_SQL_STANDBY_EXPIRE_CANDIDATES,
	SB_SQL_BACKUP_STATUS,
	SB_SQL_BACKUP_KEEP,
	SB_SQL_EXPIRE_FORGET,
	SB_SQL_EXPIRE_OLDEST_START,
	SB_SQL_STATS_RESET,
	SB_SQL_CHECK_DESTINATIONS,
	SB_SQL_CHECK_LAST_COMPLETED,
	SB_SQL_CHECK_LAST_ENDED,
	SB_SQL_CHECK_LAST_FULL_START,
	SB_SQL_BACKUP_MOVE_STRIPE,
	SB_SQL_BACKUP_MOVE_STRIPE_ROW,
	SB_SQL_STANDBY_IMPORT,
	SB_SQL_STANDBY_IMPORT_STRIPES,
	SB_SQL_NSTATEMENTS
} SbStatement;

#define SB_SQL_MAX_ARGS 17

typedef struct SbStatementDef
{
	SbStatement id;
	const char *text;			/* @extschema@ stands for the extension's schema */
	int			nargs;
	Oid			types[SB_SQL_MAX_ARGS];
	int			expected;		/* SPI_OK_SELECT, SPI_OK_INSERT, ... */
} SbStatementDef;

/* The statement ID (sb_statements.c). */
extern const SbStatementDef *sbx_statement(SbStatement id);

/* A scope in which statements may run. */
typedef struct SbSql
{
	Oid			saved_user;
	int			saved_context;
	int			guc_level;
	bool		own_transaction;
	ResourceOwner saved_owner;
	MemoryContext caller_context;
} SbSql;

/* The rows a statement returned (valid until sbx_sql_leave). */
typedef struct SbRows
{
	SPITupleTable *table;
	uint64		count;
} SbRows;

/* In a caller's session (a transaction is open): enter a scope. */
extern void sbx_sql_enter(SbSql *sql);

/* In a worker outside any transaction: a transaction of its own, and a scope. */
extern void sbx_sql_begin(SbSql *sql);

/* Leave the scope (and commit its own transaction, if it has one). */
extern void sbx_sql_leave(SbSql *sql);

/* Run statement ID with VALUES (NULLS: ' ' or 'n' each, or NULL); ERROR if it fails. */
extern SbRows sbx_sql_run(SbStatement id, Datum *values, const char *nulls);

/* Values of a row, copied into the caller's memory where they are not by value. */
extern Datum sbx_sql_datum(const SbSql *sql, const SbRows *rows, uint64 row, int column,
						  bool *isnull);
extern char *sbx_sql_text(const SbSql *sql, const SbRows *rows, uint64 row, int column);

/* A one-dimensional array of N Datums of TYPE, an argument (NULLS may be NULL). */
extern Datum sbx_sql_array(Datum *elems, bool *nulls, int n, Oid type);

/* The extension's schema in this database; ERROR if it is not installed. */
extern Oid	sbx_sql_schema(void);

#endif							/* SB_SPI_H */
