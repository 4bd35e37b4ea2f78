/*
 * wal_recent.h
 *		The segments an archive wrote or read back whole moments ago, and
 *		where: what lets a push ahead pay off.
 *
 * The archive module pushes segment N with the .ready segments after it;
 * PostgreSQL then calls it for N+1, N+2, ... which are archived already.
 * Reading each back whole to prove it would cost as much as writing it, so
 * the archive remembers what it made durable itself, and a later push of
 * the same segment only checks that both files are still the ones it read
 * and wrote (the same inodes, sizes, and modification and change times; a
 * bucket's object, the same size and ETag):
 * a segment in pg_wal that is not the one archived (other contents under
 * the same name), or an archived copy anything modified since, is looked
 * at in full again.  It is a check, not a
 * proof (a write within the same clock tick keeps the times); the proof is
 * the whole read of a verify, and the first push of each archive process.
 */
#ifndef SB_WAL_RECENT_H
#define SB_WAL_RECENT_H

#include <pthread.h>
#include <sys/stat.h>

#include "wal/wal_internal.h"

#define SB_WAL_RECENT_MAX 256

typedef struct SbWalRecentItem
{
	char		name[SB_WAL_NAME_MAX + 1];
	uint32_t	destination;
	SbWalStamp	stamp;			/* of the archived file, when it was made or read */
	struct stat source;			/* of the file pushed (in pg_wal), then */
	uint64_t	raw_len;
	uint64_t	stored_len;
	uint8_t		codec;
} SbWalRecentItem;

typedef struct SbWalRecent
{
	pthread_mutex_t mutex;		/* workers note and check at once */
	SbWalRecentItem items[SB_WAL_RECENT_MAX];
	uint32_t	count;
	uint32_t	next;			/* the oldest, replaced next */
} SbWalRecent;

extern void sb_wal_recent_init(SbWalRecent *r);
extern void sb_wal_recent_destroy(SbWalRecent *r);

/* Segment H->name, read from a file as SOURCE describes it, is durable in destination D (FOLDER). */
extern void sb_wal_recent_note(SbWalRecent *r, const SbWalHeader *h, const struct stat *source,
							   uint32_t d, SbWalFolder *folder);

/*
 * Was segment NAME noted from the very file SOURCE describes now, and is
 * its copy in FOLDERS[destination] still the one noted?  *ITEM gets what
 * was noted.
 */
extern bool sb_wal_recent_check(SbWalRecent *r, const char *name, const struct stat *source,
								SbWalFolder *folders, SbWalRecentItem *item);

#endif							/* SB_WAL_RECENT_H */
