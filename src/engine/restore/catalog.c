/*
 * catalog.c
 *		What a destination holds, from a listing of its store alone
 *		(sb_catalog.h): the backup folders in it, and what a place named as
 *		a backup's location is.
 *
 * One listing of everything below the place (sb_store_list_all) serves a
 * local folder and a bucket's prefix alike: a bucket has no folders to
 * list, only the keys below a prefix, so a backup folder is known by the
 * files in it.  Nothing is opened: whether the files are what their names
 * say is for the readers (the command's list opens each manifest, then
 * sb_catalog_check_backup looks at sizes, never at contents).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_catalog.h"
#include "stripebackup/sb_policy.h"
#include "stripebackup/sb_wal.h"
#include "store/store.h"

/* What a file's name says it is, in a backup folder. */
typedef enum FileKind
{
	FILE_OTHER,
	FILE_MANIFEST,
	FILE_MANIFEST_TEMP,
	FILE_STRIPE
} FileKind;

/* "stripe-K.sbs" (K a number from 1 on, as sb_stripe_file_name writes it), the manifest, its temporary file. */
static FileKind
file_kind(const char *name)
{
	unsigned	number;
	int			end = 0;

	if (strcmp(name, SB_MANIFEST_FILE) == 0)
		return FILE_MANIFEST;
	if (strcmp(name, SB_MANIFEST_TEMP_FILE) == 0)
		return FILE_MANIFEST_TEMP;
	if (sscanf(name, "stripe-%u.sbs%n", &number, &end) == 1 && name[end] == '\0' && number > 0 &&
		name[7] >= '1' && name[7] <= '9')
		return FILE_STRIPE;
	return FILE_OTHER;
}

/* What a listing gathers: the backup folders, and what lies at the top. */
typedef struct Gather
{
	SbCatalog  *catalog;
	bool		top_backup_file;	/* a manifest, its temporary file or a stripe at the top */
	bool		anything;		/* any file at all */
} Gather;

/* The folder NAME (LEN bytes) of G's catalog, added when new. */
static SbCatalogFolder *
folder_of(Gather *g, const char *name, size_t len, SbError *err)
{
	SbCatalog  *c = g->catalog;
	SbCatalogFolder *grown;
	size_t		i;

	for (i = 0; i < c->nfolders; i++)
		if (strlen(c->folders[i].name) == len && memcmp(c->folders[i].name, name, len) == 0)
			return &c->folders[i];
	if ((grown = realloc(c->folders, (c->nfolders + 1) * sizeof(*grown))) == NULL)
	{
		sb_error_set(err, SB_ENOMEM, "out of memory listing backup folders");
		return NULL;
	}
	c->folders = grown;
	memset(&grown[c->nfolders], 0, sizeof(*grown));
	if ((grown[c->nfolders].name = strndup(name, len)) == NULL)
	{
		sb_error_set(err, SB_ENOMEM, "out of memory listing backup folders");
		return NULL;
	}
	return &c->folders[c->nfolders++];
}

/* An SbStoreEntryFn: one file below the place, "FOLDER/FILE" or "FILE" at the top. */
static bool
gather_entry(void *arg, const char *name, int64_t size, SbError *err)
{
	Gather	   *g = arg;
	const char *slash = strchr(name, '/');
	FileKind	kind = file_kind(slash != NULL ? slash + 1 : name);
	SbCatalogFolder *f;

	(void) size;
	g->anything = true;
	if (slash == NULL)
	{
		g->top_backup_file |= kind != FILE_OTHER;
		return true;
	}
	/* deeper files are not a backup's; the WAL archive is no backup folder */
	if (kind == FILE_OTHER || strchr(slash + 1, '/') != NULL ||
		((size_t) (slash - name) == strlen(SB_WAL_FOLDER) && strncmp(name, SB_WAL_FOLDER, slash - name) == 0))
		return true;
	if ((f = folder_of(g, name, (size_t) (slash - name), err)) == NULL)
		return false;
	if (kind == FILE_MANIFEST)
		f->has_manifest = true;
	else if (kind == FILE_STRIPE)
		f->nstripe_files++;
	return true;
}

static int
compare_folders(const void *a, const void *b)
{
	return strcmp(((const SbCatalogFolder *) a)->name, ((const SbCatalogFolder *) b)->name);
}

/* Everything below PLACE gathered into G; SB_ENOTFOUND when PLACE is not there. */
static bool
gather(const char *place, Gather *g, SbError *err)
{
	SbStoreOptions o = {0};
	SbStore    *s;
	bool		ok;

	if ((s = sb_store_new(place, &o, err)) == NULL)
		return false;
	ok = sb_store_list_all(s, gather_entry, g, err);
	sb_store_free(s);
	/* qsort's array may not be NULL, even for no element (an empty place has none) */
	if (ok && g->catalog->nfolders > 1)
		qsort(g->catalog->folders, g->catalog->nfolders, sizeof(SbCatalogFolder), compare_folders);
	return ok;
}

bool
sb_catalog_read(const char *dest, SbCatalog *catalog, SbError *err)
{
	Gather		g = {.catalog = catalog};

	memset(catalog, 0, sizeof(*catalog));
	sb_error_clear(err);
	if (gather(dest, &g, err))
		return true;
	sb_catalog_free(catalog);
	return false;
}

void
sb_catalog_free(SbCatalog *catalog)
{
	size_t		i;

	for (i = 0; i < catalog->nfolders; i++)
		free(catalog->folders[i].name);
	free(catalog->folders);
	memset(catalog, 0, sizeof(*catalog));
}

bool
sb_catalog_probe(const char *location, SbPlaceKind *kind, SbError *err)
{
	SbCatalog	c = {0};
	Gather		g = {.catalog = &c};

	if (sb_archive_has_manifest(location, NULL, err))
		return (*kind = SB_PLACE_BACKUP), true;
	if (err->code != SB_ENOTFOUND)
		return false;
	sb_error_clear(err);
	if (!gather(location, &g, err))
	{
		sb_catalog_free(&c);
		if (err->code != SB_ENOTFOUND)
			return false;
		sb_error_clear(err);
		return (*kind = SB_PLACE_MISSING), true;
	}
	/* a prefix with nothing below is no place at all: a bucket has no empty folders */
	if (g.top_backup_file)
		*kind = SB_PLACE_INCOMPLETE;
	else if (c.nfolders > 0)
		*kind = SB_PLACE_DESTINATION;
	else if (!g.anything && (sb_store_features_of(location) & SB_STORE_LAZY))
		*kind = SB_PLACE_MISSING;
	else
		*kind = SB_PLACE_OTHER;
	sb_catalog_free(&c);
	return true;
}

bool
sb_catalog_missing(const char *place)
{
	SbStoreOptions o = {0};
	SbStore    *s;
	SbError		err;

	if (sb_store_features_of(place) & SB_STORE_LAZY)
		return false;
	if ((s = sb_store_new(place, &o, &err)) != NULL)
	{
		sb_store_free(s);
		return false;
	}
	return err.code == SB_ENOTFOUND;
}

/* The folder of PATH (a stripe file's): everything before its last slash. */
static bool
folder_of_file(const char *path, char *folder, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL || (size_t) (slash - path) >= len)
		return false;
	memcpy(folder, path, (size_t) (slash - path));
	folder[slash - path] = '\0';
	return true;
}

/* Beside stripe file STRIPE_PATH, a manifest copy of SIZE bytes; else PROBLEM says what. */
static bool
copy_beside(const char *stripe_path, const SbS3Settings *s3, uint32_t number, uint64_t size, char *problem,
			size_t len)
{
	char		folder[PATH_MAX],
				path[PATH_MAX];
	uint64_t	found;
	SbError		err;

	if (!folder_of_file(stripe_path, folder, sizeof(folder)) ||
		(size_t) snprintf(path, sizeof(path), "%s/%s", folder, SB_MANIFEST_FILE) >= sizeof(path))
		return true;			/* no folder to look in: the stripe check says the rest */
	if (!sb_store_file_size(path, s3, &found, &err))
	{
		snprintf(problem, len, "no manifest beside stripe %u in \"%s\": %s", number, folder, err.message);
		return false;
	}
	if (found != size)
	{
		snprintf(problem, len, "the manifest beside stripe %u, \"%s\", is %llu bytes, not %llu as the "
				 "copy in use", number, path, (unsigned long long) found, (unsigned long long) size);
		return false;
	}
	return true;
}

bool
sb_catalog_check_backup(const SbArchive *a, const SbPlan *plan, char *problem, size_t len)
{
	uint64_t	size;
	SbError		err;
	uint32_t	i;

	if (a->nnotes > 0)
		return snprintf(problem, len, "%s", a->notes[0]), false;
	if (!a->authenticated)
		return snprintf(problem, len, "no stripe vouches for manifest \"%s\"", a->manifest_path), false;
	for (i = 0; i < plan->nstripes; i++)
		if (!plan->stripes[i].present)
			return snprintf(problem, len, "stripe %u, \"%s\", is missing or not %llu bytes",
							plan->stripes[i].number, plan->stripes[i].path,
							(unsigned long long) plan->stripes[i].file_bytes), false;
	if (!sb_store_file_size(a->manifest_path, a->s3, &size, &err))
		return snprintf(problem, len, "%s", err.message), false;
	for (i = 0; i < plan->nstripes; i++)
		if (!copy_beside(plan->stripes[i].path, a->s3, plan->stripes[i].number, size, problem, len))
			return false;
	return true;
}
