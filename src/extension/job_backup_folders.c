/*
 * job_backup_folders.c
 *		Removing a backup's folders from its destinations, for retention and
 *		for the clean-up after a crash: whole or not at all, and only the
 *		files that backup wrote (its uuid in every manifest and stripe
 *		header), through directory descriptors that never follow a link
 *		(sb_backup_folder_remove).  Whatever keeps a backup is said, naming it.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

#include "job_backup.h"
#include "sb_control.h"
#include "sb_s3_settings.h"
#include "stripebackup/sb_folder.h"

/*
 * Why a folder keeps its backup (COMPLETED or not), in words; NULL when it
 * may go.  A bucket that does not exist holds nothing: a backup that did
 * not complete (most often because of that bucket) is forgotten, one that
 * completed is kept and said, since its bucket may be a setting's mistake
 * (another endpoint) rather than gone.
 */
static const char *
keeps_backup(const SbFolderRemoval *r, bool completed)
{
	switch (r->verdict)
	{
		case SB_FOLDER_REMOVED:
		case SB_FOLDER_ABSENT:
			return NULL;
		case SB_FOLDER_BUCKET_MISSING:
			return completed ? "its bucket does not exist" : NULL;
		case SB_FOLDER_DESTINATION_MISSING:
			return "its destination is missing (is its device mounted?)";
		case SB_FOLDER_DESTINATION_LINK:
			return "its destination is a symbolic link";
		case SB_FOLDER_LINK:
			return "the folder is a symbolic link";
		case SB_FOLDER_FOREIGN:
			return "it holds something the backup did not write";
	}
	return "unknown";
}

/* Dry run (DRY_RUN) or removal of one folder; false (said at ELEVEL) if it keeps the backup. */
static bool
remove_one(const char *dest, const char *name, const uint8 *uuid, bool completed, bool dry_run,
		   int elevel, SbBackupRemoval *total)
{
	SbFolderRemoval r;
	SbError		err;
	const char *why;

	if (!sb_backup_folder_remove(dest, sbx_s3_settings(), name, uuid, dry_run, &r, &err))
	{
		/* a cancel stops retention, rather than keep this backup and go on to the next */
		if (err.code == SB_ECANCELED)
			sbx_raise(&err);
		ereport(elevel,
				(errmsg("could not remove backup folder \"%s/%s\": %s", dest, name, err.message)));
		return false;
	}
	why = keeps_backup(&r, completed);
	if (why != NULL)
	{
		ereport(elevel,
				(errmsg("backup \"%s\" was kept: in destination \"%s\", %s", name, dest, why),
				 r.detail[0] ? errdetail("%s", r.detail) : 0));
		return false;
	}
	if (!dry_run)
	{
		total->files += (int64) r.files;
		total->bytes += (int64) r.bytes;
	}
	return true;
}

SbBackupRemoval
sbx_backup_remove_folders(const char *name, Datum destinations, bool completed, const pg_uuid_t *uuid,
						 int elevel)
{
	SbBackupRemoval total = {0, 0, false};
	Datum	   *dests;
	int			ndests,
				i;
	bool		all = true;

	if (uuid == NULL)
	{
		ereport(elevel, (errmsg("backup \"%s\" was kept: its history has no backup uuid", name)));
		return total;
	}
	deconstruct_array(DatumGetArrayTypeP(destinations), TEXTOID, -1, false, TYPALIGN_INT,
					  &dests, NULL, &ndests);
	for (i = 0; i < ndests && all; i++)
		all = remove_one(TextDatumGetCString(dests[i]), name, uuid->data, completed, true, elevel, &total);
	for (i = 0; i < ndests && all; i++)
		all = remove_one(TextDatumGetCString(dests[i]), name, uuid->data, completed, false, elevel, &total);
	total.removed = all;
	return total;
}
