/*
 * sb_util.c
 *		The one boundary where engine errors become ereport(), and the
 *		extension's schema for the SQL the extension runs itself.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "sb_util.h"

int
sb_sqlstate(SbErrorCode code)
{
	switch (code)
	{
		case SB_EINVAL:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case SB_ENOSPC:
			return ERRCODE_DISK_FULL;
		case SB_ECORRUPT:
		case SB_EVERSION:
			return ERRCODE_DATA_CORRUPTED;
		case SB_ENOTFOUND:
			return ERRCODE_UNDEFINED_FILE;
		case SB_EEXIST:
			return ERRCODE_DUPLICATE_FILE;
		case SB_ECANCELED:
			return ERRCODE_QUERY_CANCELED;
		case SB_ENOMEM:
			return ERRCODE_OUT_OF_MEMORY;
		case SB_EIO:
		case SB_OK:
			break;
	}
	return ERRCODE_IO_ERROR;
}

void
sb_raise(const SbError *err)
{
	ereport(ERROR, (errcode(sb_sqlstate(err->code)), errmsg("%s", err->message)));
	pg_unreachable();
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
sb_schema_oid(void)
{
	Oid			ext = get_extension_oid("stripebackup", true);

	if (!OidIsValid(ext))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"stripebackup\" is not installed in database \"%s\"",
						get_database_name(MyDatabaseId))));
	return extension_namespace(ext);
}

char *
sb_schema_quoted(void)
{
	return pstrdup(quote_identifier(get_namespace_name(sb_schema_oid())));
}
