/*
 * sb_guc.c
 *		stripebackup.* settings: the tuning knobs a DBA reaches for (buffer
 *		count and transfer size, as SQL Server's BUFFERCOUNT and
 *		MAXTRANSFERSIZE; compression workers; the start checkpoint).
 *
 * A backup reads them when it starts, in the session that calls
 * stripe_backup(), so SET works as well as postgresql.conf.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "sb_guc.h"

int			sb_guc_buffer_count = 16;
int			sb_guc_transfer_size_kb = 1024;
int			sb_guc_compression_workers = 0;
bool		sb_guc_fast_checkpoint = true;

/* The engine reads and writes whole 4kB pages: transfers are multiples of them. */
static bool
check_transfer_size(int *newval, void **extra, GucSource source)
{
	if (*newval % 4 != 0)
	{
		GUC_check_errdetail("stripebackup.transfer_size must be a multiple of 4kB.");
		return false;
	}
	return true;
}

void
sb_guc_define(void)
{
	DefineCustomIntVariable("stripebackup.buffer_count",
							"Number of transfer buffers a backup or restore keeps in flight.",
							"Memory used is buffer_count times transfer_size (twice that with compression).",
							&sb_guc_buffer_count, 16, 2, 4096,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("stripebackup.transfer_size",
							"Size of one transfer: the unit of reading, compression and checksums.",
							"A multiple of 4kB, from 4kB to 64MB.",
							&sb_guc_transfer_size_kb, 1024, 4, 64 * 1024,
							PGC_USERSET, GUC_UNIT_KB, check_transfer_size, NULL, NULL);
	DefineCustomIntVariable("stripebackup.compression_workers",
							"Threads compressing a backup; 0 means one per CPU.",
							NULL,
							&sb_guc_compression_workers, 0, 0, 256,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("stripebackup.fast_checkpoint",
							 "Start a backup with an immediate checkpoint instead of a spread one.",
							 "A spread checkpoint is gentler on a busy server but can delay the start by up to checkpoint_timeout.",
							 &sb_guc_fast_checkpoint, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("stripebackup");
}
