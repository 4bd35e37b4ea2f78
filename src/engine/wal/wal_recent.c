/*
 * wal_recent.c
 *		A small ring of the segments an archive made durable or read back
 *		whole, checked by a stat (or a bucket's HEAD) alone (wal_recent.h
 *		says why).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "wal/wal_recent.h"

void
sb_wal_recent_init(SbWalRecent *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mutex, NULL);
}

void
sb_wal_recent_destroy(SbWalRecent *r)
{
	pthread_mutex_destroy(&r->mutex);
}

/* The archived file of NAME as FOLDER holds it now. */
static bool
stamp_archived(SbWalFolder *folder, const char *name, SbWalStamp *stamp)
{
	char		file[SB_WAL_FILE_NAME_MAX];

	sb_wal_file_name(name, file);
	return sb_wal_folder_stamp(folder, file, stamp);
}

void
sb_wal_recent_note(SbWalRecent *r, const SbWalHeader *h, const struct stat *source, uint32_t d,
				   SbWalFolder *folder)
{
	SbWalRecentItem item;

	memset(&item, 0, sizeof(item));
	if (!stamp_archived(folder, h->name, &item.stamp))
		return;
	item.source = *source;
	snprintf(item.name, sizeof(item.name), "%s", h->name);
	item.destination = d;
	item.raw_len = h->raw_len;
	item.stored_len = h->stored_len;
	item.codec = h->codec;
	pthread_mutex_lock(&r->mutex);
	r->items[r->next] = item;
	r->next = (r->next + 1) % SB_WAL_RECENT_MAX;
	if (r->count < SB_WAL_RECENT_MAX)
		r->count++;
	pthread_mutex_unlock(&r->mutex);
}

/* The same file, unmodified: an edit, a copy over it or a rename changes one of these. */
static bool
unchanged(const struct stat *a, const struct stat *b)
{
	SbWalStamp	x = {.st = *a},
				y = {.st = *b};

	return sb_wal_stamps_equal(&x, &y);
}

bool
sb_wal_recent_check(SbWalRecent *r, const char *name, const struct stat *source,
					SbWalFolder *folders, SbWalRecentItem *item)
{
	SbWalStamp	now;
	bool		noted = false;
	uint32_t	i;

	pthread_mutex_lock(&r->mutex);
	for (i = 0; i < r->count && !noted; i++)
		if (strcmp(r->items[i].name, name) == 0 && unchanged(&r->items[i].source, source))
		{
			*item = r->items[i];
			noted = true;
		}
	pthread_mutex_unlock(&r->mutex);
	return noted && stamp_archived(&folders[item->destination], name, &now) &&
		sb_wal_stamps_equal(&item->stamp, &now);
}
