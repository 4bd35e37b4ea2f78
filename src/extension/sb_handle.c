/*
 * sb_handle.c
 *		Engine objects owned by memory contexts (MemoryContextRegisterResetCallback),
 *		as PostgreSQL itself ties resources to the lifetime of a context.
 */
#include "postgres.h"

#include <errno.h>

#include "catalog/pg_tablespace_d.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "sb_control.h"
#include "job_backup.h"
#include "sb_handle.h"
#include "sb_key.h"
#include "sb_s3_settings.h"
#include "stripebackup/sb_s3.h"
#include "stripebackup/sb_store.h"

struct SbHandle
{
	void	   *object;
	SbFreeFn	free_fn;
	MemoryContextCallback callback;
};

/* The reset callback: runs on success and during abort, so it never raises. */
static void
free_object(void *arg)
{
	SbHandle   *h = arg;
	void	   *object = h->object;

	h->object = NULL;
	if (object != NULL)
		h->free_fn(object);
}

SbHandle *
sbx_handle_new(SbFreeFn free_fn)
{
	SbHandle   *h = palloc0(sizeof(SbHandle));

	h->free_fn = free_fn;
	h->callback.func = free_object;
	h->callback.arg = h;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &h->callback);
	return h;
}

void
sbx_handle_own(SbHandle *handle, void *object)
{
	handle->object = object;
}

void *
sbx_handle_release(SbHandle *handle)
{
	void	   *object = handle->object;

	handle->object = NULL;
	return object;
}

void
sbx_handle_free(SbHandle *handle)
{
	free_object(handle);
}

static void
close_archive(void *object)
{
	sb_archive_close(object);
}

void
sbx_handle_warn(const SbArchive *a)
{
	uint32_t	i;

	if (a == NULL)
		return;
	for (i = 0; i < a->nnotes; i++)
		ereport(WARNING, (errmsg("%s", a->notes[i])));
	if (!a->authenticated)
		ereport(WARNING,
				(errmsg("the manifest at \"%s\" could not be authenticated: no stripe of the backup could be read",
						a->manifest_path ? a->manifest_path : a->location),
				 errhint("Only a plan is possible; a restore needs the stripes.")));
}

/*
 * Where the extension keeps private files (a manifest's entries) out of
 * memory: the data directory's own temporary files' folder, as PostgreSQL's
 * base backup spills its manifest (unlinked files, gone when closed, which
 * a walk of the data directory skips in any case).
 */
const char *
sbx_temp_folder(void)
{
	static char path[MAXPGPATH];

	TempTablespacePath(path, DEFAULTTABLESPACE_OID);
	if (MakePGDirectory(path) < 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", path)));
	return path;
}

static void
check_location(const char *location)
{
	if (!sb_store_is_absolute(location))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("location \"%s\" is neither an absolute path nor s3://bucket/prefix", location)));
	if (sb_store_features_of(location) & SB_STORE_CONNECTION)
		sbx_s3_settings_check_location(location, false);
}

SbBackupRef *
sbx_backup_ref_at(const char *location, bool allow_unencrypted)
{
	SbBackupRef *ref = palloc0(sizeof(SbBackupRef));

	check_location(location);
	ref->location = pstrdup(location);
	ref->expect.encryption = allow_unencrypted ? SB_EXPECT_EITHER : SB_EXPECT_AS_KEY;
	return ref;
}

void
sbx_backup_expect_copy(SbArchiveExpect *to, const SbArchiveExpect *expect)
{
	*to = *expect;
	to->folders = NULL;
	to->nfolders = 0;
}

SbBackupRef *
sbx_backup_ref_found(const char *location, int64 backup_id, const SbArchiveExpect *expect)
{
	SbBackupRef *ref = palloc0(sizeof(SbBackupRef));

	ref->location = pstrdup(location);
	ref->backup_id = backup_id;
	sbx_backup_expect_copy(&ref->expect, expect);
	return ref;
}

char *
sbx_archive_used_folder(const SbArchive *a)
{
	const char *path = a->manifest_path ? a->manifest_path : a->location;
	const char *slash = strrchr(path, '/');

	return a->manifest_path && slash != NULL ? pnstrdup(path, slash - path) : pstrdup(a->location);
}

/* What PURPOSE keeps of the entries, and where. */
static void
options_for(SbOpenFor purpose, SbArchiveOpenOptions *o)
{
	switch (purpose)
	{
		case SB_OPEN_TO_READ:
			o->keep = SB_KEEP_STREAMED;
			break;
		case SB_OPEN_TO_LOOK_UP:
			o->keep = SB_KEEP_LOOKUP;
			break;
		case SB_OPEN_TO_MERGE:
			o->keep = SB_KEEP_LOOKUP;
			o->parents_streamed = true;
			break;
		case SB_OPEN_TO_PLAN:
			o->keep = SB_KEEP_COUNTS;
			break;
		case SB_OPEN_TO_CHECK:
			o->keep = SB_KEEP_HEAD;
			break;
	}
	if (o->keep == SB_KEEP_STREAMED || o->keep == SB_KEEP_LOOKUP)
		o->spool_dir = sbx_temp_folder();
}

SbArchive *
sbx_handle_open_archive(const SbBackupRef *ref, SbOpenFor purpose, SbError *err)
{
	SbArchiveOpenOptions o = {0};
	SbHandle   *h;
	SbArchive  *a;
	SbError		own_err;
	SbError    *e = err ? err : &own_err;

	check_location(ref->location);
	o.key = sbx_key_current();
	o.s3 = sbx_s3_settings();
	o.expect = ref->expect;
	options_for(purpose, &o);
	h = sbx_handle_new(close_archive);
	a = sb_archive_open_with(ref->location, &o, e);
	/* a backup named by id whose folders hold another, or a damaged one: say which it is */
	if (a == NULL && ref->backup_id != 0 && e->code == SB_ECORRUPT)
		sb_error_prefix(e, "backup %lld", (long long) ref->backup_id);
	if (a == NULL && err == NULL)
		sbx_raise(&own_err);
	sbx_handle_own(h, a);
	/* by id: a stripe stripe_rebuild() wrote elsewhere is read from there */
	if (a != NULL && ref->backup_id != 0 && a->manifest->redundancy.parity > 0)
		sbx_backup_apply_recorded_stripes(a, ref->backup_id);
	return a;
}
