/*
 * sb_jobs.c
 *		The table of job kinds: one line per kind.
 */
#include "postgres.h"

#include "job_backup.h"
#include "job_restore.h"
#include "sb_job.h"

static const SbJobOps *const job_kinds[SB_JOB_NKINDS] = {
	[SB_JOB_BACKUP] = &sb_backup_job,
	[SB_JOB_RESTORE] = &sb_restore_job,
};

const SbJobOps *
sbx_job_ops(SbJobKind kind)
{
	if ((int) kind < 0 || kind >= SB_JOB_NKINDS)
		elog(ERROR, "unknown stripebackup job kind %d", (int) kind);
	return job_kinds[kind];
}

bool
sbx_job_kind_by_name(const char *name, SbJobKind *kind)
{
	int			k;

	for (k = 0; k < SB_JOB_NKINDS; k++)
		if (strcmp(job_kinds[k]->name, name) == 0)
		{
			*kind = (SbJobKind) k;
			return true;
		}
	return false;
}
