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
#include "sb_handle.h"
#include "sb_key.h"
#include "sb_s3_settings.h"
#include "stripebackup/sb_s3.h"

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
sb_handle_new(SbFreeFn free_fn)
{
	SbHandle   *h = palloc0(sizeof(SbHandle));

	h->free_fn = free_fn;
	h->callback.func = free_object;
	h->callback.arg = h;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &h->callback);
	return h;
}

void
sb_handle_own(SbHandle *handle, void *object)
{
	handle->object = object;
}

void *
sb_handle_release(SbHandle *handle)
{
	void	   *object = handle->object;

	handle->object = NULL;
	return object;
}

void
sb_handle_free(SbHandle *handle)
{
	free_object(handle);
}

static void
close_archive(void *object)
{
	sb_archive_close(object);
}

void
sb_handle_warn(const SbArchive *a)
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
sb_temp_folder(void)
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
	if (location[0] != '/' && !sb_s3_is_location(location))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("location \"%s\" is neither an absolute path nor s3://bucket/prefix", location)));
	if (sb_s3_is_location(location))
		sb_s3_settings_check_location(location, false);
}

/* What an archive is opened for, and so what it keeps of its entries. */
typedef enum OpenFor
{
	OPEN_TO_READ,				/* verify or restore: streamed */
	OPEN_TO_LOOK_UP,			/* the parent of a backup */
	OPEN_TO_MERGE,
	OPEN_TO_PLAN,				/* counted */
	OPEN_TO_CHECK				/* its members alone */
} OpenFor;

static SbArchive *
open_archive(const char *location, OpenFor purpose, SbError *err)
{
	SbHandle   *h;
	SbArchive  *a = NULL;
	const SbKey *key;
	SbError		own_err;
	SbError    *e = err ? err : &own_err;

	check_location(location);
	key = sb_key_current();
	h = sb_handle_new(close_archive);
	switch (purpose)
	{
		case OPEN_TO_READ:
			a = sb_archive_open_streamed(location, key, sb_temp_folder(), e);
			break;
		case OPEN_TO_LOOK_UP:
			a = sb_archive_open_to_look_up(location, key, sb_temp_folder(), e);
			break;
		case OPEN_TO_MERGE:
			a = sb_archive_open_to_merge(location, key, sb_temp_folder(), e);
			break;
		case OPEN_TO_PLAN:
			a = sb_archive_open_keeping(location, key, SB_KEEP_COUNTS, e);
			break;
		case OPEN_TO_CHECK:
			a = sb_archive_open_keeping(location, key, SB_KEEP_HEAD, e);
			break;
	}
	if (a == NULL && err == NULL)
		sb_raise(&own_err);
	sb_handle_own(h, a);
	return a;
}

SbArchive *
sb_handle_open_archive_streamed(const char *location, SbError *err)
{
	return open_archive(location, OPEN_TO_READ, err);
}

SbArchive *
sb_handle_open_archive_to_look_up(const char *location)
{
	return open_archive(location, OPEN_TO_LOOK_UP, NULL);
}

SbArchive *
sb_handle_open_archive_to_merge(const char *location)
{
	return open_archive(location, OPEN_TO_MERGE, NULL);
}

SbArchive *
sb_handle_open_archive_to_plan(const char *location)
{
	return open_archive(location, OPEN_TO_PLAN, NULL);
}

SbArchive *
sb_handle_open_archive_to_check(const char *location, SbError *err)
{
	return open_archive(location, OPEN_TO_CHECK, err);
}
