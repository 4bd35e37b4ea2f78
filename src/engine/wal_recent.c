/*
 * wal_recent.c
 *		A small ring of the segments an archive made durable or read back
 *		whole, checked by fstatat() alone (wal_recent.h says why).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "wal_recent.h"

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

/* The file as the folder holds it now, never through a link. */
static bool
stat_archived(int dirfd, const char *name, struct stat *st)
{
	char		file[SB_WAL_FILE_NAME_MAX];

	sb_wal_file_name(name, file);
	return fstatat(dirfd, file, st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st->st_mode);
}

void
sb_wal_recent_note(SbWalRecent *r, const SbWalHeader *h, const struct stat *source, uint32_t d,
				   int dirfd)
{
	SbWalRecentItem item;

	memset(&item, 0, sizeof(item));
	if (!stat_archived(dirfd, h->name, &item.st))
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
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
		a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec &&
		a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

bool
sb_wal_recent_check(SbWalRecent *r, const char *name, const struct stat *source, const int *dirfds,
					SbWalRecentItem *item)
{
	struct stat now;
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
	return noted && stat_archived(dirfds[item->destination], name, &now) && unchanged(&item->st, &now);
}
