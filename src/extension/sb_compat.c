/*
 * sb_compat.c
 *		The server calls whose shape differs between PostgreSQL versions,
 *		one #if each (sb_compat.h says which version changed what).
 */
#include "postgres.h"

#include <stdlib.h>
#include <string.h>

#include "access/xlog.h"
#include "replication/slot.h"
#include "storage/reinit.h"

#include "sb_compat.h"

void
sbx_compat_backup_start(SbCompatBackup *b, const char *id, bool fast)
{
	b->tablespace_map = makeStringInfo();
	b->from_standby = RecoveryInProgress();
#if PG_VERSION_NUM >= 160000
	{
		BackupState *state = palloc0(sizeof(BackupState));

		do_pg_backup_start(id, fast, NULL, state, b->tablespace_map);
		b->state = state;
		b->start_lsn = state->startpoint;
		b->start_tli = state->starttli;
		/* what 15 wrote into the label at start: 16 builds it from the state */
		b->label = makeStringInfo();
		appendStringInfoString(b->label, build_backup_content(state, false));
	}
#else
	b->label = makeStringInfo();
	b->state = NULL;
	b->start_lsn = do_pg_backup_start(id, fast, &b->start_tli, b->label, NULL, b->tablespace_map);
#endif
}

XLogRecPtr
sbx_compat_backup_stop(SbCompatBackup *b, TimeLineID *stop_tli)
{
#if PG_VERSION_NUM >= 160000
	BackupState *state = b->state;

	do_pg_backup_stop(state, false);
	*stop_tli = state->stoptli;
	return state->stoppoint;
#else
	return do_pg_backup_stop(b->label->data, false, stop_tli);
#endif
}

void
sbx_compat_slot_create_temporary(const char *name)
{
#if PG_VERSION_NUM >= 170000
	ReplicationSlotCreate(name, false, RS_TEMPORARY, false, false, false);
#else
	ReplicationSlotCreate(name, false, RS_TEMPORARY, false);
#endif
}

void
sbx_compat_slot_cleanup(void)
{
#if PG_VERSION_NUM >= 170000
	/* all of them, not only those a standby's slot sync made */
	ReplicationSlotCleanup(false);
#else
	ReplicationSlotCleanup();
#endif
}

bool
sbx_compat_slot_invalidated(const ReplicationSlot *slot)
{
#if PG_VERSION_NUM >= 160000
	return slot->data.invalidated != RS_INVAL_NONE;
#else
	return !XLogRecPtrIsInvalid(slot->data.invalidated_at);
#endif
}

bool
sbx_compat_parse_relation_file(const char *name, Oid *relation, ForkNumber *fork, unsigned *segno)
{
#if PG_VERSION_NUM >= 170000
	RelFileNumber number;

	if (!parse_filename_for_nontemp_relation(name, &number, fork, segno))
		return false;
	*relation = (Oid) number;
	return true;
#else
	int			oidchars;
	const char *dot;

	if (!parse_filename_for_nontemp_relation(name, &oidchars, fork))
		return false;
	*relation = (Oid) strtoul(name, NULL, 10);
	dot = strchr(name + oidchars, '.');
	*segno = dot ? (unsigned) strtoul(dot + 1, NULL, 10) : 0;
	return true;
#endif
}
