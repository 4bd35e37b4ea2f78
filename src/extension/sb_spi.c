/*
 * sb_spi.c
 *		Transactions for the worker's history writes.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_authid_d.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

#include "sb_spi.h"

/*
 * The worker's own resource owner, set aside for the transaction: commit
 * leaves CurrentResourceOwner NULL, and later work outside a transaction
 * (checksums of the backup manifest, files) needs one.
 */
static ResourceOwner saved_owner = NULL;

void
sb_spi_begin(void)
{
	saved_owner = CurrentResourceOwner;
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
}

void
sb_spi_end(void)
{
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	CurrentResourceOwner = saved_owner;
}

/* An error on the way aborts the transaction, which restores the user itself. */
SbSavedUser
sb_spi_connect_as_extension(void)
{
	SbSavedUser saved;

	GetUserIdAndSecContext(&saved.user, &saved.context);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID, saved.context | SECURITY_LOCAL_USERID_CHANGE);
	SPI_connect();
	return saved;
}

void
sb_spi_finish_as_extension(SbSavedUser saved)
{
	SPI_finish();
	SetUserIdAndSecContext(saved.user, saved.context);
}

void
sb_spi_write(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls)
{
	int			rc = SPI_execute_with_args(sql, nargs, types, values, nulls, false, 0);

	if (rc != SPI_OK_INSERT && rc != SPI_OK_UPDATE)
		elog(ERROR, "could not write history: %s", SPI_result_code_string(rc));
}
