/*
 * stripebackup.c
 *		Entry point of the stripebackup extension library.
 *
 * The SQL functions that take online backups are added by the online-backup
 * work; this file holds the module magic and what every part shares.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "stripebackup/sb_version.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(stripebackup_version);

/* The library's version, as the command's --version prints it. */
Datum
stripebackup_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(SB_VERSION));
}
