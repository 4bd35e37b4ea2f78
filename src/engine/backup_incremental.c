/*
 * backup_incremental.c
 *		A backup with a parent: the manifest names the parent (its uuid and
 *		the SHA-256 of its manifest, so nothing else can stand in for it),
 *		and a file is stored as its changed blocks only when the parent has
 *		the same file: the same path, the same identity (inode and birth
 *		time: a file dropped and made again under the same name, or copied
 *		in with old page LSNs, is another file), and the caller's filter
 *		says its blocks can be judged one by one.  Everything else is
 *		stored whole.
 */
#include <stdlib.h>
#include <string.h>

#include "backup_internal.h"

bool
sb_incremental_begin(SbBackup *b, const SbBackupOptions *o, SbError *err)
{
	b->manifest->type = o->type;
	if (o->type == SB_BACKUP_FULL)
		return true;
	b->parent = o->parent;
	b->block_size = o->block_size;
	b->file_filter = o->file_filter;
	b->block_filter = o->block_filter;
	b->filter_arg = o->filter_arg;
	b->manifest->parent = sb_parent_ref_of(o->parent, err);
	return b->manifest->parent != NULL && sb_path_index_build(&b->parent_index, o->parent, err);
}

void
sb_incremental_free(SbBackup *b)
{
	sb_path_index_free(&b->parent_index);
}

const SbEntry *
sb_incremental_base(const SbBackup *b, const char *path, const char *file_id)
{
	const SbEntry *e;
	size_t		i;

	if (b->parent == NULL || file_id == NULL || !b->file_filter(b->filter_arg, path))
		return NULL;
	i = sb_path_index_find(&b->parent_index, path);
	if (i == SIZE_MAX)
		return NULL;
	e = &b->parent->entries[i];
	if (e->type != SB_ENTRY_FILE || e->file_id == NULL || strcmp(e->file_id, file_id) != 0)
		return NULL;
	return e;
}
