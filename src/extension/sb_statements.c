/*
 * sb_statements.c
 *		Every SQL statement the extension runs, in one place.
 *
 * Each names every relation, function and operator by schema: relations as
 * @extschema@.name or pg_catalog.name, functions as pg_catalog.f(...),
 * operators as OPERATOR(pg_catalog.=), casts as ::pg_catalog.type.  Since
 * every OPERATOR(...) has the same precedence, compound expressions are
 * parenthesized.  sb_spi.c runs them with a pinned search_path;
 * test/t/005_sql_rules.pl checks these rules, and docs/SECURITY.md lists
 * what each statement is for.
 */
#include "postgres.h"

#include "catalog/pg_type.h"

#include "sb_spi.h"

/* The newest completed (full, unless $1) backup of RELATION. */
#define BACKUP_PARENT_FROM(relation) \
	"SELECT h.id, h.backup_uuid, h.start_lsn, h.stop_lsn, h.timeline" \
	" FROM " relation " h" \
	" WHERE h.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text" \
	" AND ($1 OR h.type OPERATOR(pg_catalog.=) 'full'::pg_catalog.text)" \
	" ORDER BY h.started_at DESC, h.id DESC LIMIT 1"

/* The backups of RELATION that expire under rules $1 to $4 (below). */
#define EXPIRE_CANDIDATES_FROM(relation) \
	"WITH RECURSIVE anchor AS (" \
	" SELECT h.id, h.started_at FROM " relation " h" \
	" WHERE h.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text" \
	" AND h.finished_at OPERATOR(pg_catalog.<=) (pg_catalog.now() OPERATOR(pg_catalog.-) $3)" \
	" ORDER BY h.finished_at DESC, h.id DESC LIMIT 1)," \
	" ranked AS (" \
	" SELECT h.id, h.name, h.status, h.started_at, h.destinations, h.backup_uuid, h.parent_id, h.keep," \
	" pg_catalog.count(*) FILTER (WHERE h.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text)" \
	" OVER (ORDER BY h.started_at DESC, h.id DESC) AS newer_completed," \
	" pg_catalog.count(*) FILTER (WHERE h.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text" \
	" AND h.type OPERATOR(pg_catalog.=) 'full'::pg_catalog.text)" \
	" OVER (ORDER BY h.started_at DESC, h.id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)" \
	" AS newer_full" \
	" FROM " relation " h)," \
	" expired AS (" \
	" SELECT r.* FROM ranked r" \
	" WHERE (r.status OPERATOR(pg_catalog.<>) 'running'::pg_catalog.text" \
	" OR NOT @extschema@.stripe_job_is_running('backup'::pg_catalog.text, r.id))" \
	" AND NOT r.keep" \
	" AND NOT (r.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text" \
	" AND r.newer_completed OPERATOR(pg_catalog.=) 1::pg_catalog.int8)" \
	" AND ($1 IS NULL OR r.newer_completed OPERATOR(pg_catalog.>) $1" \
	" OR (r.status OPERATOR(pg_catalog.<>) 'completed'::pg_catalog.text" \
	" AND r.newer_completed OPERATOR(pg_catalog.>=) $1))" \
	" AND ($2 IS NULL OR r.started_at OPERATOR(pg_catalog.<) (pg_catalog.now() OPERATOR(pg_catalog.-) $2))" \
	" AND ($3 IS NULL OR EXISTS (SELECT 1 FROM anchor a" \
	" WHERE r.started_at OPERATOR(pg_catalog.<) a.started_at" \
	" OR (r.started_at OPERATOR(pg_catalog.=) a.started_at AND r.id OPERATOR(pg_catalog.<) a.id)))" \
	" AND ($4 IS NULL OR r.newer_full OPERATOR(pg_catalog.>=) $4))," \
	" needed AS (" \
	" SELECT r.parent_id AS id, r.id AS needed_by FROM ranked r" \
	" WHERE r.parent_id IS NOT NULL" \
	" AND (r.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text" \
	" OR r.status OPERATOR(pg_catalog.=) 'running'::pg_catalog.text)" \
	" AND NOT EXISTS (SELECT 1 FROM expired e WHERE e.id OPERATOR(pg_catalog.=) r.id)" \
	" UNION" \
	" SELECT r.parent_id, n.needed_by FROM ranked r JOIN needed n" \
	" ON r.id OPERATOR(pg_catalog.=) n.id WHERE r.parent_id IS NOT NULL)" \
	" SELECT e.id, e.name, e.status, e.started_at, e.destinations, e.backup_uuid, e.parent_id," \
	" (SELECT pg_catalog.max(n.needed_by) FROM needed n WHERE n.id OPERATOR(pg_catalog.=) e.id)" \
	" FROM expired e ORDER BY e.started_at DESC, e.id DESC"

static const SbStatementDef statements[SB_SQL_NSTATEMENTS] = {
	/* The latest calibrated speed of a destination: $2 is 'sequential write' or 'sequential read'. */
	{SB_SQL_CALIBRATED_SPEED,
		"SELECT c.mb_per_s FROM @extschema@.stripe_calibrations c"
		" WHERE c.destination OPERATOR(pg_catalog.=) $1"
		" AND c.test OPERATOR(pg_catalog.=) $2"
		" ORDER BY c.measured_at DESC, c.id DESC LIMIT 1",
	2, {TEXTOID, TEXTOID}, SPI_OK_SELECT},

	{SB_SQL_CALIBRATION_INSERT,
		"INSERT INTO @extschema@.stripe_calibrations (destination, test, block_kb, queue_depth,"
		" size_mb, mb_per_s, iops, direct_io) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
	8, {TEXTOID, TEXTOID, INT4OID, INT4OID, INT4OID, FLOAT8OID, FLOAT8OID, BOOLOID}, SPI_OK_INSERT},

	{SB_SQL_CLUSTER_SIZE,
		"SELECT pg_catalog.sum(pg_catalog.pg_database_size(d.oid))::pg_catalog.int8"
		" FROM pg_catalog.pg_database d WHERE d.datallowconn",
	0, {InvalidOid}, SPI_OK_SELECT},

	{SB_SQL_BACKUP_INSERT,
		"INSERT INTO @extschema@.stripe_backup_history (id, name, label, status, destinations,"
		" weights, compression, compression_level, balance, requested_by, worker_pid, started_at,"
		" backup_uuid, type, parent_id, merged_from, encrypted, redundancy)"
		" VALUES ($1, $2, $3, 'running', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,"
		" $17)",
	17, {INT8OID, TEXTOID, TEXTOID, TEXTARRAYOID, FLOAT8ARRAYOID, TEXTOID, INT4OID, TEXTOID,
	NAMEOID, INT4OID, TIMESTAMPTZOID, UUIDOID, TEXTOID, INT8OID, INT8OID, BOOLOID, INT4OID}, SPI_OK_INSERT},

	/*
	 * The backup a new one of changed blocks completes: the newest completed
	 * backup (incr, $1) or the newest completed full one (diff).  On a
	 * standby, one of its own only: the primary's retention, which does not
	 * see the standby's backups, could remove a parent of theirs.
	 */
	{SB_SQL_BACKUP_PARENT, BACKUP_PARENT_FROM("@extschema@.stripe_backup_records"),
	1, {BOOLOID}, SPI_OK_SELECT},

	{SB_SQL_STANDBY_BACKUP_PARENT, BACKUP_PARENT_FROM("@extschema@.stripe_standby_backups"),
	1, {BOOLOID}, SPI_OK_SELECT},

	{SB_SQL_BACKUP_FINISH,
		"UPDATE @extschema@.stripe_backup_history SET status = $2, error = $3, sqlstate = $4,"
		" files = $5, bytes_read = $6, bytes_written = $7, start_lsn = $8, stop_lsn = $9,"
		" timeline = $10, parity_bytes = $11, stored_bytes = $12, incremental_method = $13,"
		" finished_at = pg_catalog.clock_timestamp()"
		" WHERE id OPERATOR(pg_catalog.=) $1",
	13, {INT8OID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID, INT8OID, PG_LSNOID, PG_LSNOID,
	INT4OID, INT8OID, INT8OID, TEXTOID}, SPI_OK_UPDATE},

	{SB_SQL_BACKUP_STRIPES_INSERT,
		"INSERT INTO @extschema@.stripe_backup_stripe_history (backup_id, stripe, destination,"
		" weight, chunks, raw_bytes, stored_bytes, seconds)"
		" SELECT $1, s.stripe, s.destination, s.weight, s.chunks, s.raw_bytes, s.stored_bytes,"
		" s.seconds FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3),"
		" pg_catalog.unnest($4), pg_catalog.unnest($5), pg_catalog.unnest($6),"
		" pg_catalog.unnest($7), pg_catalog.unnest($8))"
		" AS s(stripe, destination, weight, chunks, raw_bytes, stored_bytes, seconds)",
	8, {INT8OID, INT4ARRAYOID, TEXTARRAYOID, FLOAT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
	INT8ARRAYOID, FLOAT8ARRAYOID}, SPI_OK_INSERT},

	{SB_SQL_BACKUP_TIMELINE_INSERT,
		"INSERT INTO @extschema@.stripe_backup_timeline_history (backup_id, stripe, sample,"
		" seconds, stored_bytes) SELECT $1, t.stripe, t.sample, t.seconds, t.stored_bytes"
		" FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3), pg_catalog.unnest($4),"
		" pg_catalog.unnest($5)) AS t(stripe, sample, seconds, stored_bytes)",
	5, {INT8OID, INT4ARRAYOID, INT4ARRAYOID, FLOAT8ARRAYOID, INT8ARRAYOID}, SPI_OK_INSERT},

	{SB_SQL_BACKUP_FOLDERS,
		"SELECT h.name, h.destinations, h.backup_uuid, h.encrypted"
		" FROM @extschema@.stripe_backup_records h"
		" WHERE h.id OPERATOR(pg_catalog.=) $1"
		" AND h.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text",
	1, {INT8OID}, SPI_OK_SELECT},

	{SB_SQL_BACKUP_FOR_TARGET,
		"SELECT h.id FROM @extschema@.stripe_backup_records h"
		" WHERE h.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text"
		" AND ($1 IS NULL OR h.finished_at OPERATOR(pg_catalog.<=) $1)"
		" AND ($2 IS NULL OR h.stop_lsn OPERATOR(pg_catalog.<=) $2)"
		" ORDER BY h.started_at DESC, h.id DESC LIMIT 1",
	2, {TIMESTAMPTZOID, PG_LSNOID}, SPI_OK_SELECT},

	{SB_SQL_BACKUP_MARK_STALE,
		"UPDATE @extschema@.stripe_backup_history h SET status = 'failed',"
		" error = 'the server restarted while it ran', sqlstate = '57P02',"
		" finished_at = pg_catalog.now()"
		" WHERE h.status OPERATOR(pg_catalog.=) 'running'::pg_catalog.text"
		" AND NOT @extschema@.stripe_job_is_running('backup'::pg_catalog.text, h.id)"
		" RETURNING h.id, h.name, h.destinations, h.backup_uuid, h.merged_from",
	0, {InvalidOid}, SPI_OK_UPDATE_RETURNING},

	/*
	 * The same on a standby, which cannot update (run by its next backup's
	 * worker): the rows of its file left running, each with the line that
	 * ends it (the row, failed), which the caller appends (jsonb puts "id"
	 * first, as the file's lines have it).
	 */
	{SB_SQL_STANDBY_MARK_STALE,
		"SELECT s.id, s.name, s.destinations, s.backup_uuid, s.merged_from,"
		" (r.record OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object("
		"'status'::pg_catalog.text, 'failed'::pg_catalog.text,"
		" 'error'::pg_catalog.text, 'the server restarted while it ran'::pg_catalog.text,"
		" 'sqlstate'::pg_catalog.text, '57P02'::pg_catalog.text,"
		" 'finished_at'::pg_catalog.text, pg_catalog.now()))::pg_catalog.text"
		" FROM @extschema@.stripe_standby_records() AS r(record),"
		" LATERAL pg_catalog.jsonb_populate_record(NULL::@extschema@.stripe_backup_history, r.record) AS s"
		" WHERE s.status OPERATOR(pg_catalog.=) 'running'::pg_catalog.text"
		" AND NOT @extschema@.stripe_job_is_running('backup'::pg_catalog.text, s.id)",
	0, {InvalidOid}, SPI_OK_SELECT},

	/* What stripe_merge() folds: the chain's newest backup. */
	{SB_SQL_MERGE_SOURCE,
		"SELECT h.name, h.destinations, h.backup_uuid, h.start_lsn, h.stop_lsn, h.timeline, h.type"
		" FROM @extschema@.stripe_backup_records h"
		" WHERE h.id OPERATOR(pg_catalog.=) $1"
		" AND h.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text",
	1, {INT8OID}, SPI_OK_SELECT},

	{SB_SQL_RESTORE_SPEED,
		"SELECT ((s.stored_bytes::pg_catalog.float8 OPERATOR(pg_catalog./) 1e6::pg_catalog.float8)"
		" OPERATOR(pg_catalog./) s.seconds)"
		" FROM @extschema@.stripe_restore_stripe_history s"
		" JOIN @extschema@.stripe_restore_history r ON r.id OPERATOR(pg_catalog.=) s.restore_id"
		" WHERE r.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text AND NOT r.delta"
		" AND s.destination OPERATOR(pg_catalog.=) $1"
		" AND s.seconds OPERATOR(pg_catalog.>) 0::pg_catalog.float8"
		" AND s.stored_bytes OPERATOR(pg_catalog.>) 0::pg_catalog.int8"
		" ORDER BY s.restore_id DESC LIMIT 1",
	1, {TEXTOID}, SPI_OK_SELECT},

	/* How fast the latest delta restore (into TARGET first) compared the copy's bytes: raw MB/s. */
	{SB_SQL_DELTA_COMPARE_SPEED,
		"SELECT ((r.bytes_compared::pg_catalog.float8 OPERATOR(pg_catalog./) 1e6::pg_catalog.float8)"
		" OPERATOR(pg_catalog./) r.compare_seconds)"
		" FROM @extschema@.stripe_restore_history r"
		" WHERE r.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text AND r.delta"
		" AND r.compare_seconds OPERATOR(pg_catalog.>) 0::pg_catalog.float8"
		" AND r.bytes_compared OPERATOR(pg_catalog.>) 0::pg_catalog.int8"
		" ORDER BY (r.target OPERATOR(pg_catalog.=) $1) DESC, r.id DESC LIMIT 1",
	1, {TEXTOID}, SPI_OK_SELECT},

	{SB_SQL_RESTORE_FIXED_COSTS,
		"SELECT (r.setup_seconds OPERATOR(pg_catalog./) r.files::pg_catalog.float8),"
		" (r.finish_seconds OPERATOR(pg_catalog./) r.bytes_written::pg_catalog.float8)"
		" FROM @extschema@.stripe_restore_history r"
		" WHERE r.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text AND NOT r.delta"
		" AND r.files OPERATOR(pg_catalog.>) 0::pg_catalog.int8"
		" AND r.bytes_written OPERATOR(pg_catalog.>) 0::pg_catalog.int8"
		" ORDER BY r.id DESC LIMIT 1",
	0, {InvalidOid}, SPI_OK_SELECT},

	{SB_SQL_RESTORE_INSERT,
		"INSERT INTO @extschema@.stripe_restore_history (id, backup_id, location, target,"
		" tablespace_mapping, status, requested_by, worker_pid, started_at, standby, delta)"
		" VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, $8, $9, $10)",
	10, {INT8OID, INT8OID, TEXTOID, TEXTOID, TEXTARRAYOID, NAMEOID, INT4OID, TIMESTAMPTZOID, BOOLOID,
	BOOLOID},
	SPI_OK_INSERT},

	{SB_SQL_RESTORE_DIRECTORIES,
		"UPDATE @extschema@.stripe_restore_history SET directories = $2"
		" WHERE id OPERATOR(pg_catalog.=) $1",
	2, {INT8OID, TEXTARRAYOID}, SPI_OK_UPDATE},

	{SB_SQL_RESTORE_FINISH,
		"UPDATE @extschema@.stripe_restore_history SET status = $2, error = $3, sqlstate = $4,"
		" files = $5, bytes_read = $6, bytes_written = $7, estimated_seconds = $8,"
		" setup_seconds = $9, read_seconds = $10, finish_seconds = $11, bytes_compared = $12,"
		" entries_removed = $13, compare_seconds = $14, finished_at = pg_catalog.clock_timestamp()"
		" WHERE id OPERATOR(pg_catalog.=) $1",
	14, {INT8OID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID, INT8OID, FLOAT8OID, FLOAT8OID,
	FLOAT8OID, FLOAT8OID, INT8OID, INT8OID, FLOAT8OID}, SPI_OK_UPDATE},

	{SB_SQL_RESTORE_STRIPES_INSERT,
		"INSERT INTO @extschema@.stripe_restore_stripe_history (restore_id, stripe, destination,"
		" chunks, stored_bytes, raw_bytes, estimated_seconds, seconds)"
		" SELECT $1, s.stripe, s.destination, s.chunks, s.stored_bytes, s.raw_bytes,"
		" s.estimated_seconds, s.seconds FROM ROWS FROM (pg_catalog.unnest($2),"
		" pg_catalog.unnest($3), pg_catalog.unnest($4), pg_catalog.unnest($5),"
		" pg_catalog.unnest($6), pg_catalog.unnest($7), pg_catalog.unnest($8))"
		" AS s(stripe, destination, chunks, stored_bytes, raw_bytes, estimated_seconds, seconds)",
	8, {INT8OID, INT4ARRAYOID, TEXTARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
	FLOAT8ARRAYOID, FLOAT8ARRAYOID}, SPI_OK_INSERT},

	{SB_SQL_RESTORE_MARK_STALE,
		"UPDATE @extschema@.stripe_restore_history r SET status = 'failed',"
		" error = 'the server restarted while it ran', sqlstate = '57P02',"
		" finished_at = pg_catalog.now()"
		" WHERE r.status OPERATOR(pg_catalog.=) 'running'::pg_catalog.text"
		" AND NOT @extschema@.stripe_job_is_running('restore'::pg_catalog.text, r.id)"
		" RETURNING r.id, r.target, r.directories",
	0, {InvalidOid}, SPI_OK_UPDATE_RETURNING},

	/*
	 * The backups that expire, newest first (a chain's children before its
	 * parents), each with its parent and, when a backup that stays needs it
	 * (a kept or running diff or incr of it, or of a child of it, ...), the
	 * nearest such backup: that one is kept, chains stay whole.  A backup
	 * expires when it meets every rule given: beyond the newest $1 completed
	 * backups; started before now - $2; older than the newest completed
	 * backup that ended before the recovery window (now - $3) opens, which
	 * recovery to the window's first moment starts from; older than the
	 * newest $4 completed full backups.  Never one kept (stripe_keep).
	 */
	{SB_SQL_EXPIRE_CANDIDATES, EXPIRE_CANDIDATES_FROM("@extschema@.stripe_backup_history"),
	4, {INT8OID, INTERVALOID, INTERVALOID, INT8OID}, SPI_OK_SELECT},

	/* On a standby: of its own backups only (the primary's are the primary's to expire). */
	{SB_SQL_STANDBY_EXPIRE_CANDIDATES, EXPIRE_CANDIDATES_FROM("@extschema@.stripe_standby_backups"),
	4, {INT8OID, INTERVALOID, INTERVALOID, INT8OID}, SPI_OK_SELECT},

	/* stripe_keep(): a backup's status, before it is kept. */
	{SB_SQL_BACKUP_STATUS,
		"SELECT b.status FROM @extschema@.stripe_backups b WHERE b.id OPERATOR(pg_catalog.=) $1",
	1, {INT8OID}, SPI_OK_SELECT},

	/* ... and where its folders are, for the label (keep.json) stripe_keep puts in each. */
	{SB_SQL_BACKUP_KEEP,
		"UPDATE @extschema@.stripe_backup_history h SET keep = $2, note = COALESCE($3, h.note)"
		" WHERE h.id OPERATOR(pg_catalog.=) $1"
		" RETURNING h.name, h.destinations, h.backup_uuid, h.note",
	3, {INT8OID, BOOLOID, TEXTOID}, SPI_OK_UPDATE_RETURNING},

	{SB_SQL_EXPIRE_FORGET,
		"DELETE FROM @extschema@.stripe_backup_history WHERE id OPERATOR(pg_catalog.=) $1",
	1, {INT8OID}, SPI_OK_DELETE},

	/*
	 * Where the WAL the backups kept (and any that runs) need begins, and
	 * that backup (when it is complete, the PITR window opens at its end).  A
	 * SELECT runs read-only, on the snapshot of the call, so the backups
	 * this call removed ($1) are named, not looked up.
	 */
	{SB_SQL_EXPIRE_OLDEST_START,
		"SELECT h.start_lsn, h.timeline, h.id, h.finished_at, h.status"
		" FROM @extschema@.stripe_backup_history h"
		" WHERE (h.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text"
		" OR h.status OPERATOR(pg_catalog.=) 'running'::pg_catalog.text)"
		" AND h.start_lsn IS NOT NULL AND h.timeline IS NOT NULL"
		" AND NOT (h.id OPERATOR(pg_catalog.=) ANY ($1))"
		" ORDER BY h.start_lsn LIMIT 1",
	1, {INT8ARRAYOID}, SPI_OK_SELECT},

	{SB_SQL_STATS_RESET,
		"WITH calibrations AS (DELETE FROM @extschema@.stripe_calibrations),"
		" timelines AS (DELETE FROM @extschema@.stripe_backup_timeline_history)"
		" INSERT INTO @extschema@.stripe_stats_reset_history VALUES (pg_catalog.now())",
	0, {InvalidOid}, SPI_OK_INSERT},

	/*
	 * stripe_check(): the destinations of the newest completed backup, each
	 * with what the newest full backup stored there (its share of the whole
	 * when it was written elsewhere): the room the next one needs.
	 */
	{SB_SQL_CHECK_DESTINATIONS,
		"WITH last AS (SELECT h.destinations FROM @extschema@.stripe_backup_records h"
		" WHERE h.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text"
		" ORDER BY h.finished_at DESC, h.id DESC LIMIT 1),"
		" lastfull AS (SELECT h.id, h.bytes_written, pg_catalog.cardinality(h.destinations) AS n"
		" FROM @extschema@.stripe_backup_records h"
		" WHERE h.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text"
		" AND h.type OPERATOR(pg_catalog.=) 'full'::pg_catalog.text"
		" ORDER BY h.finished_at DESC, h.id DESC LIMIT 1)"
		" SELECT d.destination, COALESCE("
		" (SELECT pg_catalog.sum(s.stored_bytes)::pg_catalog.int8"
		" FROM @extschema@.stripe_backup_stripe_records s JOIN lastfull f"
		" ON s.backup_id OPERATOR(pg_catalog.=) f.id"
		" WHERE s.destination OPERATOR(pg_catalog.=) d.destination),"
		" (SELECT (f.bytes_written OPERATOR(pg_catalog./) f.n::pg_catalog.int8) FROM lastfull f))"
		" FROM last, pg_catalog.unnest(last.destinations) AS d(destination)",
	0, {InvalidOid}, SPI_OK_SELECT},

	{SB_SQL_CHECK_LAST_COMPLETED,
		"SELECT b.id, b.type, b.finished_at FROM @extschema@.stripe_backups b"
		" WHERE b.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text"
		" ORDER BY b.finished_at DESC, b.id DESC LIMIT 1",
	0, {InvalidOid}, SPI_OK_SELECT},

	/* The newest backup that ended, but by a cancel (one that died with the server counts as failed: the view says so). */
	{SB_SQL_CHECK_LAST_ENDED,
		"SELECT b.id, b.status, b.finished_at, b.error, b.sqlstate FROM @extschema@.stripe_backups b"
		" WHERE b.status OPERATOR(pg_catalog.<>) 'running'::pg_catalog.text"
		" AND b.status OPERATOR(pg_catalog.<>) 'cancelled'::pg_catalog.text"
		" ORDER BY b.started_at DESC, b.id DESC LIMIT 1",
	0, {InvalidOid}, SPI_OK_SELECT},

	/* Where the newest completed full backup started: the WAL since is what the archive took in one cycle. */
	{SB_SQL_CHECK_LAST_FULL_START,
		"SELECT h.start_lsn FROM @extschema@.stripe_backup_records h"
		" WHERE h.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text"
		" AND h.type OPERATOR(pg_catalog.=) 'full'::pg_catalog.text AND h.start_lsn IS NOT NULL"
		" ORDER BY h.finished_at DESC, h.id DESC LIMIT 1",
	0, {InvalidOid}, SPI_OK_SELECT},

	/* stripe_rebuild(): where stripe $3 of backup $1 is now, the destination $2 */
	{SB_SQL_BACKUP_MOVE_STRIPE,
		"UPDATE @extschema@.stripe_backup_history h SET destinations[$3] = $2"
		" WHERE h.id OPERATOR(pg_catalog.=) $1",
	3, {INT8OID, TEXTOID, INT4OID}, SPI_OK_UPDATE},

	{SB_SQL_BACKUP_MOVE_STRIPE_ROW,
		"UPDATE @extschema@.stripe_backup_stripe_history s SET destination = $2"
		" WHERE s.backup_id OPERATOR(pg_catalog.=) $1 AND s.stripe OPERATOR(pg_catalog.=) $3",
	3, {INT8OID, TEXTOID, INT4OID}, SPI_OK_UPDATE},

	/*
	 * A server promoted: the rows of the backups it took as a standby
	 * (sb_standby_history.c) join the tables, with their ids.
	 */
	{SB_SQL_STANDBY_IMPORT,
		"INSERT INTO @extschema@.stripe_backup_history"
		" SELECT p.* FROM @extschema@.stripe_standby_records() AS r(record),"
		" LATERAL pg_catalog.jsonb_populate_record(NULL::@extschema@.stripe_backup_history, r.record) AS p"
		" ON CONFLICT (id) DO NOTHING",
	0, {InvalidOid}, SPI_OK_INSERT},

	{SB_SQL_STANDBY_IMPORT_STRIPES,
		"INSERT INTO @extschema@.stripe_backup_stripe_history"
		" SELECT p.* FROM @extschema@.stripe_standby_records() AS r(record),"
		" LATERAL pg_catalog.jsonb_populate_recordset(NULL::@extschema@.stripe_backup_stripe_history,"
		" r.record OPERATOR(pg_catalog.->) 'stripes'::pg_catalog.text) AS p"
		" ON CONFLICT DO NOTHING",
	0, {InvalidOid}, SPI_OK_INSERT},
};

const SbStatementDef *
sbx_statement(SbStatement id)
{
	const SbStatementDef *def = &statements[id];

	if (def->id != id)
		elog(ERROR, "stripebackup statement %d is out of place", (int) id);
	return def;
}
