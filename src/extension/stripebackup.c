/*
 * stripebackup.c
 *		Entry point of the stripebackup extension library: settings, and the
 *		shared memory a backup needs (so the library must be preloaded).
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "sb_control.h"
#include "sb_guc.h"
#include "sb_shmem.h"
#include "sb_startup.h"
#include "stripebackup/sb_s3.h"
#include "stripebackup/sb_version.h"

PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);

void
_PG_init(void)
{
	sbx_startup_register();
	sbx_guc_define();
	/* every S3 request of this process (and of those it forks) stops on an interrupt */
	sb_s3_set_stop_check(sbx_control_interrupted);
	/* Without preloading, the SQL functions say how to fix it. */
	if (!process_shared_preload_libraries_in_progress)
		return;
	sbx_shmem_request();
}

PG_FUNCTION_INFO_V1(stripebackup_version);

/* The library's version, as the command's --version prints it. */
PGDLLEXPORT Datum
stripebackup_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(SB_VERSION));
}
