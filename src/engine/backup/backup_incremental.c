/*
 * backup_incremental.c
 *		A backup with a parent: the manifest names the parent (its uuid and
 *		the SHA-256 of its manifest, so nothing else can stand in for it),
 *		and a file is stored as its changed blocks only when the parent has
 *		the same file: the same path, the same identity (inode and birth
 *		time: a file dropped and made again under the same name, or copied
 *		in with old page LSNs, is another file), and the caller's filter
 *		says its blocks can be judged one by one.  A file whose size and
 *		times are still the parent's may be taken from it unread.
 *		Everything else is stored whole.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backup/backup_internal.h"

/* Seconds since the epoch of an ISO 8601 UTC time as a manifest writes it; 0 if it is not one. */
static int64_t
parse_utc(const char *text)
{
	struct tm	tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	if (text == NULL || (end = strptime(text, "%Y-%m-%dT%H:%M:%SZ", &tm)) == NULL || *end != '\0')
		return 0;
	return (int64_t) timegm(&tm);
}

bool
sb_incremental_begin(SbBackup *b, const SbBackupOptions *o, SbError *err)
{
	b->manifest->type = o->type;
	if (o->type == SB_BACKUP_FULL)
		return true;
	b->parent = o->parent;
	b->block_size = o->block_size;
	b->parent_started = parse_utc(o->parent->started_at);
	b->manifest->parent = sb_parent_ref_of(o->parent, err);
	return b->manifest->parent != NULL &&
		(b->parent_files = sb_entry_lookup_new(o->parent, err)) != NULL;
}

void
sb_incremental_free(SbBackup *b)
{
	sb_entry_lookup_free(b->parent_files);
	b->parent_files = NULL;
}

/*
 * Can E be taken from the parent's file P unread?  Same size and times
 * (modification and change, to the nanosecond), a modification two seconds
 * older than the parent's start (a write after the parent looked would have
 * left a later time) and not in the future.
 */
static bool
unchanged(const SbBackup *b, const SbEntry *e, const SbEntry *p)
{
	int64_t		modified;

	if (b->hooks.skip_filter == NULL || e->file_times == NULL || p->file_times == NULL ||
		strcmp(e->file_times, p->file_times) != 0 || e->size != p->size)
		return false;
	modified = strtoll(p->file_times, NULL, 10);
	return modified + 2 <= b->parent_started && e->mtime <= (int64_t) time(NULL) &&
		b->hooks.skip_filter(b->hooks.filter_arg, e->path);
}

bool
sb_incremental_plan(SbBackup *b, const SbEntry *e, SbFilePlan *plan, const SbEntry **base,
					SbError *err)
{
	const SbEntry *p = &b->parent_entry;
	bool		found;

	*plan = SB_FILE_WHOLE;
	*base = NULL;
	if (b->parent == NULL || e->file_id == NULL)
		return true;
	if (!sb_entry_lookup_find(b->parent_files, e->path, &b->parent_entry, &found, err))
		return false;
	if (!found || p->type != SB_ENTRY_FILE || p->file_id == NULL || strcmp(p->file_id, e->file_id) != 0)
		return true;
	*base = p;
	if (unchanged(b, e, p))
		*plan = SB_FILE_UNCHANGED;
	else if (b->hooks.file_filter(b->hooks.filter_arg, e->path))
		*plan = SB_FILE_BLOCKS;
	return true;
}
