/*
 * sb_spi.c
 *		Running the extension's own SQL, so that nothing a user created can
 *		run with the extension's privileges (CVE-2018-1058 and kin).
 *
 * A statement runs:
 *		- as the bootstrap superuser, as a SECURITY DEFINER function would
 *		  (the history tables are not PUBLIC's; the caller's right to call
 *		  the function was checked before), in a security-restricted
 *		  operation as PostgreSQL runs maintenance commands;
 *		- with search_path = pg_catalog, pg_temp set at a new GUC nest level
 *		  and restored after it, whatever the session, the role or the
 *		  database set: functions and operators are found in pg_catalog
 *		  only (pg_temp is never searched for them);
 *		- from a fixed text that names every relation, function and operator
 *		  by schema (sb_statements.c; test/t/005_sql_rules.pl checks it).
 * An error on the way aborts the (sub)transaction, which restores the user,
 * the settings and SPI by itself.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_authid_d.h"
#include "catalog/pg_extension.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "sb_spi.h"

#define SB_PINNED_SEARCH_PATH "pg_catalog, pg_temp"

void
sbx_sql_enter(SbSql *sql)
{
	sql->caller_context = CurrentMemoryContext;
	sql->own_transaction = false;
	GetUserIdAndSecContext(&sql->saved_user, &sql->saved_context);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID,
						   sql->saved_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	sql->guc_level = NewGUCNestLevel();
	(void) set_config_option("search_path", SB_PINNED_SEARCH_PATH, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

void
sbx_sql_begin(SbSql *sql)
{
	/* Commit leaves no resource owner and TopMemoryContext current: both come back. */
	ResourceOwner owner = CurrentResourceOwner;
	MemoryContext context = CurrentMemoryContext;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	sbx_sql_enter(sql);
	sql->own_transaction = true;
	sql->saved_owner = owner;
	sql->caller_context = context;
}

void
sbx_sql_leave(SbSql *sql)
{
	SPI_finish();
	AtEOXact_GUC(true, sql->guc_level);
	SetUserIdAndSecContext(sql->saved_user, sql->saved_context);
	if (!sql->own_transaction)
		return;
	PopActiveSnapshot();
	CommitTransactionCommand();
	CurrentResourceOwner = sql->saved_owner;
	MemoryContextSwitchTo(sql->caller_context);
}

/* The namespace of extension EXT (PostgreSQL 15 keeps its own lookup static). */
static Oid
extension_namespace(Oid ext)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			nsp = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		nsp = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

Oid
sbx_sql_schema(void)
{
	Oid			ext = get_extension_oid("stripebackup", true);

	if (!OidIsValid(ext))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"stripebackup\" is not installed in database \"%s\"",
						get_database_name(MyDatabaseId))));
	return extension_namespace(ext);
}

/* TEXT with every @extschema@ replaced by the extension's schema, quoted. */
static char *
expand_schema(const char *text)
{
	const char *schema = quote_identifier(get_namespace_name(sbx_sql_schema()));
	const char *marker = "@extschema@";
	StringInfoData buf;
	const char *p = text;
	const char *hit;

	initStringInfo(&buf);
	while ((hit = strstr(p, marker)) != NULL)
	{
		appendBinaryStringInfo(&buf, p, (int) (hit - p));
		appendStringInfoString(&buf, schema);
		p = hit + strlen(marker);
	}
	appendStringInfoString(&buf, p);
	return buf.data;
}

SbRows
sbx_sql_run(SbStatement id, Datum *values, const char *nulls)
{
	const SbStatementDef *def = sbx_statement(id);
	SbRows		rows;
	int			rc;

	rc = SPI_execute_with_args(expand_schema(def->text), def->nargs, (Oid *) def->types,
							   values, nulls, def->expected == SPI_OK_SELECT, 0);
	if (rc != def->expected)
		elog(ERROR, "stripebackup statement %d failed: %s", (int) id, SPI_result_code_string(rc));
	rows.table = SPI_tuptable;
	rows.count = SPI_processed;
	return rows;
}

Datum
sbx_sql_datum(const SbSql *sql, const SbRows *rows, uint64 row, int column, bool *isnull)
{
	TupleDesc	desc = rows->table->tupdesc;
	Form_pg_attribute attr = TupleDescAttr(desc, column - 1);
	Datum		value = SPI_getbinval(rows->table->vals[row], desc, column, isnull);
	MemoryContext old;

	if (*isnull || attr->attbyval)
		return value;
	old = MemoryContextSwitchTo(sql->caller_context);
	value = datumCopy(value, attr->attbyval, attr->attlen);
	MemoryContextSwitchTo(old);
	return value;
}

char *
sbx_sql_text(const SbSql *sql, const SbRows *rows, uint64 row, int column)
{
	char	   *value = SPI_getvalue(rows->table->vals[row], rows->table->tupdesc, column);

	return value ? MemoryContextStrdup(sql->caller_context, value) : NULL;
}

Datum
sbx_sql_array(Datum *elems, bool *nulls, int n, Oid type)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;
	int			dims[1] = {n};
	int			lbs[1] = {1};

	get_typlenbyvalalign(type, &typlen, &typbyval, &typalign);
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, type, typlen, typbyval,
											  typalign));
}
