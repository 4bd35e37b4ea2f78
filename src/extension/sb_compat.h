/*
 * sb_compat.h
 *		What differs between the PostgreSQL versions the extension builds
 *		against (15, 16, 17, 18), in one place: every other file is written
 *		once, for all of them.
 *
 * Where a server API changed its shape, the extension calls the sb_compat_*
 * function here (sb_compat.c), which has one #if per shape; where only a
 * name or a header moved, a macro or an #include here covers it.  The
 * version of each change:
 *
 *	16	do_pg_backup_start/stop take a BackupState (backup_label's text is
 *		built from it); _PG_archive_module_init returns its callbacks, which
 *		take an ArchiveModuleState (archive/archive_module.h); a replication
 *		slot's invalidated_at became the enum invalidated.
 *	17	ReplicationSlotCreate takes failover and synced, ReplicationSlotCleanup
 *		synced_only; parse_filename_for_nontemp_relation returns the relation
 *		number and segment; PG_TEMP_FILE_PREFIX moved to common/file_utils.h;
 *		pg_wal/summaries (WAL summaries) is part of a data directory.
 *	18	pg_attribute_noreturn() removed: pg_noreturn, before the declaration.
 *
 * No PostgreSQL 17 tree was at hand to build against: its entries come from
 * the 16 and 18 trees and PostgreSQL's release notes and history (each API
 * above changed in one release and is the same in 18).
 */
#ifndef SB_COMPAT_H
#define SB_COMPAT_H

#include "access/xlogdefs.h"
#include "common/relpath.h"
#include "lib/stringinfo.h"

#if PG_VERSION_NUM < 150000
#error "stripebackup needs PostgreSQL 15 or later"
#endif

/* A function that does not return: written before its declaration. */
#if PG_VERSION_NUM >= 180000
#define SB_NORETURN pg_noreturn
#else
#define SB_NORETURN pg_attribute_noreturn()
#endif

/* PG_TEMP_FILE_PREFIX */
#if PG_VERSION_NUM >= 170000
#include "common/file_utils.h"
#else
#include "storage/fd.h"
#endif

/* ArchiveModuleCallbacks, _PG_archive_module_init's type and XLogArchiveLibrary */
#if PG_VERSION_NUM >= 160000
#include "archive/archive_module.h"
#else
#include "postmaster/pgarch.h"
#endif

/*
 * The folders of pg_wal a base backup holds, empty (basebackup.c): the
 * server needs them to start and fills them itself.
 */
#if PG_VERSION_NUM >= 170000
#define SB_WAL_SUBDIRS {"archive_status", "summaries", NULL}
#else
#define SB_WAL_SUBDIRS {"archive_status", NULL}
#endif

/* An online backup between start and stop, whatever the server's API holds. */
typedef struct SbCompatBackup
{
	XLogRecPtr	start_lsn;
	TimeLineID	start_tli;
	StringInfo	label;			/* backup_label's contents, once started */
	StringInfo	tablespace_map;
	void	   *state;			/* the server's BackupState (16+) */
	bool		from_standby;	/* started in recovery: the label says BACKUP FROM: standby */
} SbCompatBackup;

/* Start an online backup (a checkpoint; fast asks for it at once). */
extern void sbx_compat_backup_start(SbCompatBackup *b, const char *id, bool fast);

/*
 * Stop it (switches WAL, does not wait for archiving): its stop LSN and
 * timeline.  On a standby: the minimum recovery point, no switch; an ERROR
 * if the standby was promoted meanwhile.
 */
extern XLogRecPtr sbx_compat_backup_stop(SbCompatBackup *b, TimeLineID *stop_tli);

/* Create a temporary physical slot, not for failover, as MyReplicationSlot. */
extern void sbx_compat_slot_create_temporary(const char *name);

/* Drop this process's temporary slots. */
extern void sbx_compat_slot_cleanup(void);

struct ReplicationSlot;

/* Has a checkpoint invalidated SLOT (the caller holds its mutex)? */
extern bool sbx_compat_slot_invalidated(const struct ReplicationSlot *slot);

/*
 * A relation file's name, of no temporary relation: its relation number,
 * fork and segment; false for any other name.
 */
extern bool sbx_compat_parse_relation_file(const char *name, Oid *relation,
										  ForkNumber *fork, unsigned *segno);

#endif							/* SB_COMPAT_H */
