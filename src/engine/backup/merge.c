/*
 * merge.c
 *		A chain folded into one full backup (sb_merge.h): restored, checked,
 *		into a scratch folder, then written again as a full backup that
 *		records what the chain's newest manifest records of every entry.
 *
 * Restoring first is what makes every byte of the new backup one the
 * chain's checks passed (the CRC-32C of every link's part of every file);
 * the new backup reads each file whole and synchronously, so the scratch
 * folder can go before the new backup's stripes are finished.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_merge.h"
#include "util/fsutil.h"

struct SbMerge
{
	SbArchive  *chain;
	char	   *staging;
	char	   *data_dir;
	char	   *name;			/* the new backup's */
	const char *const *later;
	uint32_t	nlater;
	SbBackup   *backup;
	bool		made_staging;
};

static void
marker_text(const char *name, char *text, size_t len)
{
	snprintf(text, len, "scratch folder of the stripebackup merge writing backup \"%s\"\n", name);
}

static bool
make_staging(SbMerge *m, SbError *err)
{
	char		text[512];
	char	   *path;
	int			fd;
	bool		ok;

	if (m->staging[0] != '/')
		return sb_error_set(err, SB_EINVAL, "the merge's scratch folder \"%s\" is not an absolute path",
							m->staging);
	if (mkdir(m->staging, 0700) != 0)
		return sb_error_set_errno(err, errno, errno == EEXIST ?
								  "the merge's scratch folder \"%s\" exists already (left by another merge?)" :
								  "could not create the merge's scratch folder \"%s\"", m->staging);
	m->made_staging = true;
	path = sb_path_join(m->staging, SB_MERGE_MARKER_FILE, err);
	if (path == NULL)
		return false;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	marker_text(m->name, text, sizeof(text));
	ok = fd >= 0 ? sb_write_all(fd, text, strlen(text), path, err) :
		sb_error_set_errno(err, errno, "could not create \"%s\"", path);
	if (fd >= 0)
		close(fd);
	free(path);
	return ok;
}

/* The chain's tablespace links, each restored into the scratch folder instead of its place. */
typedef struct Relocations
{
	const char *staging;
	SbRelocation *items;
	size_t		n;
	size_t		cap;
} Relocations;

static void
free_relocations(Relocations *r)
{
	size_t		i;

	for (i = 0; i < r->n; i++)
	{
		free((char *) r->items[i].from);
		free((char *) r->items[i].to);
	}
	free(r->items);
}

static bool
add_relocation(void *arg, const SbEntry *e, SbError *err)
{
	Relocations *r = arg;
	char		leaf[SB_FILE_ID_MAX + 32];
	SbRelocation *item;

	if (e->type != SB_ENTRY_SYMLINK)
		return true;
	if (!sb_grow((void **) &r->items, &r->cap, r->n, sizeof(SbRelocation), err))
		return false;
	snprintf(leaf, sizeof(leaf), "tablespace-%s", strrchr(e->path, '/') + 1);
	item = &r->items[r->n];
	item->from = item->what = sb_strdup(e->path, err);
	item->to = item->from ? sb_path_join(r->staging, leaf, err) : NULL;
	if (item->to == NULL)
	{
		free((char *) item->from);
		return false;
	}
	r->n++;
	return true;
}

static bool
restore_chain(SbMerge *m, const SbReadOptions *read, SbError *err)
{
	Relocations r = {m->staging, NULL, 0, 0};
	SbRestoreOptions o;
	bool		ok = sb_manifest_each_entry(m->chain->manifest, add_relocation, &r, err);

	memset(&o, 0, sizeof(o));
	o.target = m->data_dir;
	o.read = *read;
	o.relocations = r.items;
	o.nrelocations = (uint32_t) r.n;
	o.no_sync = true;
	ok = ok && sb_archive_restore(m->chain, &o, err);
	free_relocations(&r);
	return ok;
}

static bool
begin_backup(SbMerge *m, const SbBackupOptions *given, SbError *err)
{
	SbBackupOptions o = *given;

	o.type = SB_BACKUP_FULL;
	o.parent = NULL;
	o.hooks.file_filter = o.hooks.skip_filter = NULL;
	o.hooks.block_filter = NULL;
	o.file_stamps = false;		/* the chain's are recorded, not the scratch copy's */
	o.started_at = m->chain->manifest->started_at;
	m->backup = sb_backup_begin(&o, err);
	return m->backup != NULL;
}

SbMerge *
sb_merge_begin(SbArchive *chain, const SbMergeOptions *o, SbError *err)
{
	SbMerge    *m;

	if (!sb_archive_check_entries(chain, err))
		return NULL;
	if (chain->manifest->no_stamps)
	{
		sb_error_set(err, SB_EINVAL, "internal error: a merge needs the file stamps of its newest backup");
		return NULL;
	}
	m = calloc(1, sizeof(SbMerge));
	sb_error_clear(err);
	if (m == NULL)
	{
		sb_error_set(err, SB_ENOMEM, "out of memory");
		return NULL;
	}
	m->chain = chain;
	m->later = o->later;
	m->nlater = o->nlater;
	m->staging = sb_strdup(o->staging, err);
	m->name = m->staging ? sb_strdup(o->backup.name, err) : NULL;
	m->data_dir = m->name ? sb_path_join(o->staging, "data", err) : NULL;
	if (m->data_dir == NULL || !make_staging(m, err) || !restore_chain(m, &o->read, err) ||
		!begin_backup(m, &o->backup, err))
	{
		sb_merge_abort(m);
		return NULL;
	}
	return m;
}

static bool
is_later(const SbMerge *m, const char *path)
{
	uint32_t	i;

	for (i = 0; i < m->nlater; i++)
		if (strcmp(m->later[i], path) == 0)
			return true;
	return false;
}

static bool
copy_entry(void *arg, const SbEntry *e, SbError *err)
{
	SbMerge    *m = arg;
	char	   *source;
	bool		ok;

	if (is_later(m, e->path))
		return true;
	if (e->type == SB_ENTRY_DIR)
		return sb_backup_add_dir(m->backup, e->path, e->mode, e->mtime, err);
	if (e->type == SB_ENTRY_SYMLINK)
		return sb_backup_add_symlink(m->backup, e->path, e->link_target, e->mtime, err);
	source = sb_path_join(m->data_dir, e->path, err);
	if (source == NULL)
		return false;
	ok = sb_backup_add_file_as(m->backup, e, source, err);
	free(source);
	return ok;
}

bool
sb_merge_copy(SbMerge *m, SbError *err)
{
	return sb_manifest_each_entry(m->chain->manifest, copy_entry, m, err);
}

SbBackup *
sb_merge_backup(SbMerge *m)
{
	return m->backup;
}

const char *
sb_merge_data_dir(const SbMerge *m)
{
	return m->data_dir;
}

static bool
remove_staging(SbMerge *m, SbError *err)
{
	bool		ok;

	if (!m->made_staging)
		return true;
	ok = sb_remove_contents(m->staging, err);
	if (ok && rmdir(m->staging) != 0)
		ok = sb_error_set_errno(err, errno, "could not remove the merge's scratch folder \"%s\"",
								m->staging);
	m->made_staging = !ok;
	return ok;
}

static void
free_merge(SbMerge *m)
{
	free(m->staging);
	free(m->data_dir);
	free(m->name);
	free(m);
}

bool
sb_merge_finish(SbMerge *m, SbManifest **manifest, SbError *err)
{
	SbBackup   *b = m->backup;
	bool		ok;

	/* every file was read whole already: the copy is not needed any more */
	m->backup = NULL;
	ok = remove_staging(m, err);
	if (ok)
		ok = sb_backup_finish(b, manifest, err);
	else
		sb_backup_abort(b);
	free_merge(m);
	return ok;
}

void
sb_merge_abort(SbMerge *m)
{
	SbError		ignored;

	if (m == NULL)
		return;
	sb_backup_abort(m->backup);
	(void) remove_staging(m, &ignored);
	free_merge(m);
}

bool
sb_merge_remove_staging(const char *staging, const char *name, bool *removed, SbError *err)
{
	char		expected[512];
	char	   *path;
	char	   *text;
	size_t		len;
	bool		ok;

	*removed = false;
	path = sb_path_join(staging, SB_MERGE_MARKER_FILE, err);
	if (path == NULL)
		return false;
	text = sb_read_small_file(path, sizeof(expected), &len, err);
	free(path);
	if (text == NULL)
		return true;			/* not there, or not a merge's: left alone */
	marker_text(name, expected, sizeof(expected));
	ok = len == strlen(expected) && memcmp(text, expected, len) == 0;
	free(text);
	if (!ok)
		return true;
	ok = sb_remove_contents(staging, err) &&
		(rmdir(staging) == 0 ||
		 sb_error_set_errno(err, errno, "could not remove the merge's scratch folder \"%s\"", staging));
	*removed = ok;
	return ok;
}
