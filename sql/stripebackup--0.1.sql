/* stripebackup--0.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION stripebackup" to load this file. \quit

-- Every function and operator below is named by schema (pg_catalog.now(),
-- OPERATOR(pg_catalog./)): CREATE EXTENSION runs this script with the
-- extension's schema on the search_path, where a database owner may have
-- planted look-alikes that an unqualified name would bind to for good
-- (docs/SECURITY.md).  OPERATOR(...) forms all share one precedence, so
-- compound expressions are parenthesized.

-- ---------------------------------------------------------------------------
-- History: one row per backup, one per backup and destination.  Written by
-- the backup worker in its own transactions, so rows survive the caller's
-- rollback and are visible while the backup runs.
-- ---------------------------------------------------------------------------

CREATE SEQUENCE stripe_backup_id_seq;

CREATE TABLE stripe_backup_history (
	id				bigint PRIMARY KEY,
	name			text NOT NULL,
	label			text,
	status			text NOT NULL
		CHECK (status OPERATOR(pg_catalog.=) ANY
			   (ARRAY['running', 'completed', 'failed', 'cancelled']::pg_catalog.text[])),
	started_at		timestamptz NOT NULL,
	finished_at		timestamptz,
	destinations	text[] NOT NULL,
	weights			float8[] NOT NULL,
	compression		text NOT NULL,
	compression_level int NOT NULL,
	balance			text NOT NULL,
	files			bigint,
	bytes_read		bigint,
	bytes_written	bigint,
	start_lsn		pg_lsn,
	stop_lsn		pg_lsn,
	timeline		int,
	error			text,
	sqlstate		text,			-- of the error that ended it
	requested_by	name NOT NULL,
	worker_pid		int,
	backup_uuid		uuid,			-- in every stripe of the backup
	type			text NOT NULL DEFAULT 'full'
		CHECK (type OPERATOR(pg_catalog.=) ANY
			   (ARRAY['full', 'diff', 'incr']::pg_catalog.text[])),
	parent_id		bigint,			-- the backup a diff or incr completes
	merged_from		bigint,			-- stripe_merge(): the chain's newest backup
	encrypted		boolean NOT NULL DEFAULT false,	-- sealed under stripebackup.encryption_key_file
	keep			boolean NOT NULL DEFAULT false,	-- stripe_keep(): never expired (nor its chain's parents)
	note			text,			-- stripe_keep()'s annotation
	redundancy		int NOT NULL DEFAULT 0,	-- destinations that may be lost (docs/FORMAT.md section 10)
	parity_bytes	bigint,			-- its parity records' bytes, when finished
	stored_bytes	bigint,			-- its chunks' bytes as stored (parity_bytes' base)
	incremental_method text			-- a diff or incr: how changed blocks were found
		CHECK (incremental_method OPERATOR(pg_catalog.=) ANY
			   (ARRAY['wal_summaries', 'page_lsn']::pg_catalog.text[]))
);

CREATE TABLE stripe_backup_stripe_history (
	backup_id		bigint NOT NULL REFERENCES stripe_backup_history (id) ON DELETE CASCADE,
	stripe			int NOT NULL,
	destination		text NOT NULL,
	weight			float8 NOT NULL,
	chunks			bigint NOT NULL,
	raw_bytes		bigint NOT NULL,
	stored_bytes	bigint NOT NULL,
	seconds			float8 NOT NULL,
	PRIMARY KEY (backup_id, stripe)
);

CREATE SEQUENCE stripe_restore_id_seq;

CREATE TABLE stripe_restore_history (
	id				bigint PRIMARY KEY,
	backup_id		bigint,			-- when restored by id; NULL for a location
	location		text NOT NULL,
	target			text NOT NULL,
	tablespace_mapping text[],
	status			text NOT NULL
		CHECK (status OPERATOR(pg_catalog.=) ANY
			   (ARRAY['running', 'completed', 'failed', 'cancelled']::pg_catalog.text[])),
	started_at		timestamptz NOT NULL,
	finished_at		timestamptz,
	files			bigint,
	bytes_read		bigint,
	bytes_written	bigint,
	estimated_seconds float8,
	setup_seconds	float8,
	read_seconds	float8,
	finish_seconds	float8,
	error			text,
	sqlstate		text,			-- of the error that ended it
	requested_by	name NOT NULL,
	worker_pid		int,
	directories		text[],			-- the target and each tablespace's, as written into
	standby			boolean NOT NULL DEFAULT false,	-- restored as a standby of its primary
	delta			boolean NOT NULL DEFAULT false,	-- into a stopped copy, rewriting what differed
	bytes_compared	bigint,			-- a delta: the backup's bytes compared with the copy's
	entries_removed	bigint,			-- a delta: the copy's files and folders the backup lacked
	compare_seconds	float8			-- a delta: comparing them, before reading any chunk
);

-- What each stripe's read took, beside what the plan expected: later plans
-- use the measured speed of the destination.
CREATE TABLE stripe_restore_stripe_history (
	restore_id		bigint NOT NULL REFERENCES stripe_restore_history (id) ON DELETE CASCADE,
	stripe			int NOT NULL,
	destination		text NOT NULL,
	chunks			bigint NOT NULL,
	stored_bytes	bigint NOT NULL,
	raw_bytes		bigint NOT NULL,
	estimated_seconds float8,
	seconds			float8 NOT NULL,
	PRIMARY KEY (restore_id, stripe)
);

-- Each stripe's stored bytes at every figure of its timeline: at the end of
-- each sampling interval (0.1 s, doubled for long backups), the last one,
-- the total, when the stripe finished.
CREATE TABLE stripe_backup_timeline_history (
	backup_id		bigint NOT NULL REFERENCES stripe_backup_history (id) ON DELETE CASCADE,
	stripe			int NOT NULL,
	sample			int NOT NULL,		-- 1, 2, ... in time order
	seconds			float8 NOT NULL,	-- since the backup began
	stored_bytes	bigint NOT NULL,
	PRIMARY KEY (backup_id, stripe, sample)
);

-- What stripe_calibrate() measured.
CREATE TABLE stripe_calibrations (
	id				bigserial PRIMARY KEY,
	destination		text NOT NULL,
	measured_at		timestamptz NOT NULL DEFAULT pg_catalog.now(),
	test			text NOT NULL
		CHECK (test OPERATOR(pg_catalog.=) ANY
			   (ARRAY['sequential write', 'sequential read', 'random read']::pg_catalog.text[])),
	block_kb		int NOT NULL,
	queue_depth		int NOT NULL,
	size_mb			int NOT NULL,
	mb_per_s		float8 NOT NULL,
	iops			float8 NOT NULL,
	direct_io		boolean NOT NULL
);
CREATE INDEX ON stripe_calibrations (destination, test, measured_at);

-- When stripe_stats_reset() last ran: throughput statistics start there.
CREATE TABLE stripe_stats_reset_history (reset_at timestamptz NOT NULL);

-- Keep the history in pg_dump output.
SELECT pg_catalog.pg_extension_config_dump('stripe_backup_history', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_backup_stripe_history', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_backup_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_restore_history', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_restore_stripe_history', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_restore_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_backup_timeline_history', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_calibrations', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_stats_reset_history', '');

-- Is job ID of KIND ('backup' or 'restore') the one this server runs now?
-- Lets the views show a job whose worker died with the server as failed.
CREATE FUNCTION stripe_job_is_running(kind text, id bigint) RETURNS boolean
AS 'MODULE_PATHNAME', 'stripe_job_is_running'
LANGUAGE C STRICT VOLATILE;

-- The backups a standby took itself: a server in recovery cannot write the
-- tables above, so its backup worker keeps their rows in a file of its data
-- directory (docs/DECISIONS.md "Backups taken on a standby"): the newest
-- line of each backup, as jsonb.  None on a server without that file.  The
-- views call it as whoever reads them, so anyone may call it; it answers
-- only those who may read a view of the history (it checks).
CREATE FUNCTION stripe_standby_records() RETURNS SETOF pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'stripe_standby_records'
LANGUAGE C STRICT VOLATILE;

-- Those rows as rows of stripe_backup_history: a standby's own backups.
CREATE VIEW stripe_standby_backups AS
SELECT p.* FROM @extschema@.stripe_standby_records() AS r(record),
	 LATERAL pg_catalog.jsonb_populate_record(NULL::@extschema@.stripe_backup_history, r.record) AS p;

-- The history the views and the functions read: the tables, and the rows of
-- that file the tables do not hold yet (a promoted server imports them).
CREATE VIEW stripe_backup_records AS
SELECT h.* FROM @extschema@.stripe_backup_history h
UNION ALL
SELECT s.* FROM @extschema@.stripe_standby_backups s
WHERE NOT EXISTS (SELECT FROM @extschema@.stripe_backup_history t WHERE t.id OPERATOR(pg_catalog.=) s.id);

CREATE VIEW stripe_backup_stripe_records AS
SELECT s.* FROM @extschema@.stripe_backup_stripe_history s
UNION ALL
SELECT p.* FROM @extschema@.stripe_standby_records() AS r(record),
	 LATERAL pg_catalog.jsonb_populate_recordset(NULL::@extschema@.stripe_backup_stripe_history,
		 r.record OPERATOR(pg_catalog.->) 'stripes'::pg_catalog.text) AS p
WHERE NOT EXISTS (SELECT FROM @extschema@.stripe_backup_history t
				  WHERE t.id OPERATOR(pg_catalog.=) p.backup_id);

CREATE VIEW stripe_backups AS
SELECT h.id,
	   h.name,
	   h.label,
	   CASE WHEN h.status OPERATOR(pg_catalog.=) 'running'::pg_catalog.text
				 AND NOT @extschema@.stripe_job_is_running('backup'::pg_catalog.text, h.id)
			THEN 'failed'::pg_catalog.text ELSE h.status END AS status,
	   h.type,
	   h.parent_id,
	   h.merged_from,
	   h.encrypted,
	   h.started_at,
	   h.finished_at,
	   (h.finished_at OPERATOR(pg_catalog.-) h.started_at) AS duration,
	   h.destinations,
	   h.weights,
	   h.compression,
	   h.compression_level,
	   h.balance,
	   h.files,
	   h.bytes_read,
	   h.bytes_written,
	   pg_catalog.round(((h.bytes_read::pg_catalog.float8 OPERATOR(pg_catalog./) 1e6::pg_catalog.float8)
			OPERATOR(pg_catalog./) (CASE WHEN (pg_catalog.date_part('epoch'::pg_catalog.text,
				(h.finished_at OPERATOR(pg_catalog.-) h.started_at))) OPERATOR(pg_catalog.<>) 0::pg_catalog.float8 THEN (pg_catalog.date_part('epoch'::pg_catalog.text,
				(h.finished_at OPERATOR(pg_catalog.-) h.started_at))) END))::pg_catalog.numeric, 1)
		   AS mb_per_s,
	   h.start_lsn,
	   h.stop_lsn,
	   h.timeline,
	   CASE WHEN h.status OPERATOR(pg_catalog.=) 'running'::pg_catalog.text
				 AND NOT @extschema@.stripe_job_is_running('backup'::pg_catalog.text, h.id)
			THEN 'the backup worker stopped without finishing (server restart or crash)'::pg_catalog.text
			ELSE h.error END AS error,
	   h.sqlstate,
	   ((h.destinations[1] OPERATOR(pg_catalog.||) '/'::pg_catalog.text) OPERATOR(pg_catalog.||) h.name)
		   AS location,
	   h.requested_by,
	   h.backup_uuid,
	   h.keep AS kept,
	   h.note,
	   h.redundancy,
	   h.parity_bytes,
	   pg_catalog.round((100::pg_catalog.float8 OPERATOR(pg_catalog.*) h.parity_bytes::pg_catalog.float8
			OPERATOR(pg_catalog./) (CASE WHEN h.stored_bytes OPERATOR(pg_catalog.>) 0::pg_catalog.int8
				THEN h.stored_bytes::pg_catalog.float8 END))::pg_catalog.numeric, 1)
		   AS parity_overhead_pct,
	   h.incremental_method,
	   (h.id OPERATOR(pg_catalog.>=) 1000000000000000::pg_catalog.int8) AS from_standby
FROM @extschema@.stripe_backup_records h;

CREATE VIEW stripe_backup_stripes AS
SELECT s.backup_id,
	   s.stripe,
	   s.destination,
	   ((s.destination OPERATOR(pg_catalog.||) '/'::pg_catalog.text) OPERATOR(pg_catalog.||) h.name)
		   AS location,
	   s.weight,
	   s.chunks,
	   s.raw_bytes,
	   s.stored_bytes,
	   s.seconds,
	   pg_catalog.round(((s.raw_bytes::pg_catalog.float8 OPERATOR(pg_catalog./) 1e6::pg_catalog.float8)
			OPERATOR(pg_catalog./) (CASE WHEN (s.seconds) OPERATOR(pg_catalog.<>) 0::pg_catalog.float8 THEN (s.seconds) END))::pg_catalog.numeric, 1)
		   AS data_mb_per_s,
	   pg_catalog.round(((s.stored_bytes::pg_catalog.float8 OPERATOR(pg_catalog./) 1e6::pg_catalog.float8)
			OPERATOR(pg_catalog./) (CASE WHEN (s.seconds) OPERATOR(pg_catalog.<>) 0::pg_catalog.float8 THEN (s.seconds) END))::pg_catalog.numeric, 1)
		   AS stored_mb_per_s
FROM @extschema@.stripe_backup_stripe_records s
JOIN @extschema@.stripe_backup_records h ON h.id OPERATOR(pg_catalog.=) s.backup_id;

CREATE VIEW stripe_restores AS
SELECT r.id,
	   r.backup_id,
	   r.location,
	   r.target,
	   r.tablespace_mapping,
	   r.standby,
	   r.delta,
	   CASE WHEN r.status OPERATOR(pg_catalog.=) 'running'::pg_catalog.text
				 AND NOT @extschema@.stripe_job_is_running('restore'::pg_catalog.text, r.id)
			THEN 'failed'::pg_catalog.text ELSE r.status END AS status,
	   r.started_at,
	   r.finished_at,
	   (r.finished_at OPERATOR(pg_catalog.-) r.started_at) AS duration,
	   r.estimated_seconds,
	   pg_catalog.date_part('epoch'::pg_catalog.text, (r.finished_at OPERATOR(pg_catalog.-) r.started_at))
		   AS actual_seconds,
	   r.files,
	   r.bytes_read,
	   r.bytes_written,
	   r.bytes_compared,
	   r.compare_seconds,
	   r.entries_removed,
	   pg_catalog.round(((r.bytes_written::pg_catalog.float8 OPERATOR(pg_catalog./) 1e6::pg_catalog.float8)
			OPERATOR(pg_catalog./) (CASE WHEN (pg_catalog.date_part('epoch'::pg_catalog.text,
				(r.finished_at OPERATOR(pg_catalog.-) r.started_at))) OPERATOR(pg_catalog.<>) 0::pg_catalog.float8 THEN (pg_catalog.date_part('epoch'::pg_catalog.text,
				(r.finished_at OPERATOR(pg_catalog.-) r.started_at))) END))::pg_catalog.numeric, 1)
		   AS mb_per_s,
	   CASE WHEN r.status OPERATOR(pg_catalog.=) 'running'::pg_catalog.text
				 AND NOT @extschema@.stripe_job_is_running('restore'::pg_catalog.text, r.id)
			THEN 'the restore worker stopped without finishing (server restart or crash)'::pg_catalog.text
			ELSE r.error END AS error,
	   r.sqlstate,
	   r.requested_by
FROM @extschema@.stripe_restore_history r;

CREATE VIEW stripe_restore_stripes AS
SELECT s.restore_id,
	   s.stripe,
	   s.destination,
	   s.chunks,
	   s.stored_bytes,
	   s.raw_bytes,
	   s.estimated_seconds,
	   s.seconds AS actual_seconds,
	   pg_catalog.round(((s.stored_bytes::pg_catalog.float8 OPERATOR(pg_catalog./) 1e6::pg_catalog.float8)
			OPERATOR(pg_catalog./) (CASE WHEN (s.seconds) OPERATOR(pg_catalog.<>) 0::pg_catalog.float8 THEN (s.seconds) END))::pg_catalog.numeric, 1)
		   AS mb_per_s
FROM @extschema@.stripe_restore_stripe_history s;

-- Per sample: the stripe's MB/s since the sample before it.
CREATE VIEW stripe_backup_timeline AS
SELECT d.backup_id,
	   d.stripe,
	   d.seconds,
	   d.stored_bytes,
	   pg_catalog.round((((d.stored_bytes OPERATOR(pg_catalog.-) d.bytes_before)::pg_catalog.float8
			OPERATOR(pg_catalog./) 1e6::pg_catalog.float8)
			OPERATOR(pg_catalog./) (CASE WHEN (d.seconds OPERATOR(pg_catalog.-) d.seconds_before)
				OPERATOR(pg_catalog.>) 0::pg_catalog.float8
			THEN (d.seconds OPERATOR(pg_catalog.-) d.seconds_before) END))::pg_catalog.numeric, 1)
		   AS mb_per_s
FROM (SELECT t.backup_id, t.stripe, t.sample, t.seconds, t.stored_bytes,
			 pg_catalog.lag(t.stored_bytes, 1, 0::pg_catalog.int8) OVER w AS bytes_before,
			 pg_catalog.lag(t.seconds, 1, 0::pg_catalog.float8) OVER w AS seconds_before
	  FROM @extschema@.stripe_backup_timeline_history t
	  WINDOW w AS (PARTITION BY t.backup_id, t.stripe ORDER BY t.sample)) d;

-- Live: a row for the whole running backup or restore (scope 'total', stripe
-- and location NULL) and a row per stripe (scope 'stripe'); none otherwise.
-- bytes_total is the estimate taken before the walk, raised to bytes_done
-- when the job outruns it, so percent never passes 100.
CREATE FUNCTION stripebackup_progress(
	OUT kind text, OUT id bigint, OUT phase text, OUT scope text, OUT stripe int, OUT location text,
	OUT bytes_done bigint, OUT bytes_total bigint, OUT stored_bytes bigint,
	OUT data_mb_per_s float8, OUT stored_mb_per_s float8, OUT recent_data_mb_per_s float8,
	OUT queue_depth int, OUT eta_seconds float8, OUT updated_at timestamptz,
	OUT elapsed_seconds float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripebackup_progress'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW stripe_backup_progress AS
SELECT p.kind, p.id, p.phase, p.scope, p.stripe, p.location, p.bytes_done, p.bytes_total,
	   pg_catalog.round(((100::pg_catalog.float8 OPERATOR(pg_catalog.*) p.bytes_done::pg_catalog.float8)
			OPERATOR(pg_catalog./) (CASE WHEN (p.bytes_total) OPERATOR(pg_catalog.<>) 0::pg_catalog.int8 THEN (p.bytes_total) END)::pg_catalog.float8)::pg_catalog.numeric, 1)
		   AS percent,
	   p.stored_bytes,
	   pg_catalog.round(p.data_mb_per_s::pg_catalog.numeric, 1) AS data_mb_per_s,
	   pg_catalog.round(p.stored_mb_per_s::pg_catalog.numeric, 1) AS stored_mb_per_s,
	   pg_catalog.round(p.recent_data_mb_per_s::pg_catalog.numeric, 1) AS recent_data_mb_per_s,
	   p.queue_depth,
	   pg_catalog.round(p.eta_seconds::pg_catalog.numeric, 1) AS eta_seconds, p.updated_at,
	   pg_catalog.round(p.elapsed_seconds::pg_catalog.numeric, 1) AS elapsed_seconds
FROM @extschema@.stripebackup_progress() p;

-- The WAL archive module (archive_library = 'stripebackup'): per destination,
-- what it archived since the server started; the lag is how far the server's
-- WAL is ahead of the newest segment archived.  Joins pg_stat_archiver as is.
-- failed_count and the last_* failure columns are the archive's (the same on
-- every row); destination_failures counts the files this destination failed,
-- archived or not (with stripebackup.archive_redundancy, done without).
CREATE FUNCTION stripe_wal_archive_status(
	OUT destination text, OUT files bigint, OUT bytes bigint, OUT stored_bytes bigint,
	OUT last_archived_wal text, OUT last_archived_time timestamptz, OUT mb_per_s float8,
	OUT lag_bytes bigint, OUT failed_count bigint, OUT last_failed_wal text,
	OUT last_failed_time timestamptz, OUT last_error text, OUT destination_failures bigint,
	OUT destination_last_error text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripe_wal_archive_status'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW stripe_wal_archive AS
SELECT s.destination, s.files, s.bytes, s.stored_bytes, s.last_archived_wal,
	   s.last_archived_time, pg_catalog.round(s.mb_per_s::pg_catalog.numeric, 1) AS mb_per_s,
	   s.lag_bytes, s.failed_count, s.last_failed_wal, s.last_failed_time, s.last_error,
	   s.destination_failures, s.destination_last_error
FROM @extschema@.stripe_wal_archive_status() s;

-- How far the WAL archive is behind, from pg_stat_archiver (whatever
-- archives): finished segments not yet archived, and the seconds since the
-- newest one was (0 when none waits); NULL before anything was archived.
CREATE FUNCTION stripe_archive_lag(OUT segments bigint, OUT seconds float8)
RETURNS record
AS 'MODULE_PATHNAME', 'stripe_archive_lag'
LANGUAGE C STRICT VOLATILE;

-- One row for monitoring, typed so that a Prometheus SQL exporter reads it
-- as it is (ages in seconds as float8; NULL where nothing is known): the
-- newest completed backup and its age, by type too; whether the newest
-- backup that ended (cancels aside) failed, how many failed since the
-- newest completed one started, the newest failure; the WAL archive's lag.
CREATE VIEW stripe_health AS
WITH backups AS (
	SELECT v.id, v.type, v.status, v.started_at, v.finished_at, v.error, v.sqlstate
	FROM @extschema@.stripe_backups v
), lastc AS (
	SELECT b.id, b.type, b.started_at, b.finished_at FROM backups b
	WHERE b.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text
	ORDER BY b.finished_at DESC, b.id DESC LIMIT 1
), lastf AS (
	SELECT b.id, b.finished_at, b.error, b.sqlstate FROM backups b
	WHERE b.status OPERATOR(pg_catalog.=) 'failed'::pg_catalog.text
	ORDER BY b.started_at DESC, b.id DESC LIMIT 1
), laste AS (
	SELECT b.status FROM backups b
	WHERE b.status OPERATOR(pg_catalog.<>) 'running'::pg_catalog.text
	  AND b.status OPERATOR(pg_catalog.<>) 'cancelled'::pg_catalog.text
	ORDER BY b.started_at DESC, b.id DESC LIMIT 1
), counts AS (
	SELECT pg_catalog.max(b.finished_at) FILTER (WHERE b.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text
				AND b.type OPERATOR(pg_catalog.=) 'full'::pg_catalog.text) AS full_at,
		   pg_catalog.max(b.finished_at) FILTER (WHERE b.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text
				AND b.type OPERATOR(pg_catalog.=) 'diff'::pg_catalog.text) AS diff_at,
		   pg_catalog.max(b.finished_at) FILTER (WHERE b.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text
				AND b.type OPERATOR(pg_catalog.=) 'incr'::pg_catalog.text) AS incr_at,
		   pg_catalog.count(*) FILTER (WHERE b.status OPERATOR(pg_catalog.=) 'failed'::pg_catalog.text
				AND b.started_at OPERATOR(pg_catalog.>) COALESCE((SELECT c.started_at FROM lastc c),
					'-infinity'::pg_catalog.timestamptz)) AS failures
	FROM backups b
)
SELECT c.id AS last_backup_id,
	   c.type AS last_backup_type,
	   c.finished_at AS last_backup_finished_at,
	   pg_catalog.date_part('epoch'::pg_catalog.text, (pg_catalog.now() OPERATOR(pg_catalog.-) c.finished_at))
		   AS last_backup_age_seconds,
	   pg_catalog.date_part('epoch'::pg_catalog.text, (pg_catalog.now() OPERATOR(pg_catalog.-) n.full_at))
		   AS last_full_age_seconds,
	   pg_catalog.date_part('epoch'::pg_catalog.text, (pg_catalog.now() OPERATOR(pg_catalog.-) n.diff_at))
		   AS last_diff_age_seconds,
	   pg_catalog.date_part('epoch'::pg_catalog.text, (pg_catalog.now() OPERATOR(pg_catalog.-) n.incr_at))
		   AS last_incr_age_seconds,
	   COALESCE(e.status OPERATOR(pg_catalog.=) 'failed'::pg_catalog.text, false) AS last_backup_failed,
	   n.failures AS failures_since_last_completed,
	   f.id AS last_failure_id,
	   f.finished_at AS last_failure_at,
	   f.sqlstate AS last_failure_sqlstate,
	   f.error AS last_failure_error,
	   l.segments AS archive_lag_segments,
	   l.seconds AS archive_lag_seconds
FROM counts n
CROSS JOIN @extschema@.stripe_archive_lag() l
LEFT JOIN lastc c ON true
LEFT JOIN lastf f ON true
LEFT JOIN laste e ON true;

-- Per destination, its recent runs (the last 10 of each kind since the last
-- reset): backups measure writing, restores reading.
CREATE VIEW stripe_throughput AS
WITH runs AS (
	SELECT s.destination, 'backup'::pg_catalog.text AS kind, h.finished_at AS at,
		   ((s.stored_bytes::pg_catalog.float8 OPERATOR(pg_catalog./) 1e6::pg_catalog.float8)
			OPERATOR(pg_catalog./) (CASE WHEN (s.seconds) OPERATOR(pg_catalog.<>) 0::pg_catalog.float8 THEN (s.seconds) END)) AS mb_per_s
	FROM @extschema@.stripe_backup_stripe_records s
	JOIN @extschema@.stripe_backup_records h ON h.id OPERATOR(pg_catalog.=) s.backup_id
	WHERE h.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text
	UNION ALL
	SELECT s.destination, 'restore'::pg_catalog.text, r.finished_at,
		   ((s.stored_bytes::pg_catalog.float8 OPERATOR(pg_catalog./) 1e6::pg_catalog.float8)
			OPERATOR(pg_catalog./) (CASE WHEN (s.seconds) OPERATOR(pg_catalog.<>) 0::pg_catalog.float8 THEN (s.seconds) END))
	FROM @extschema@.stripe_restore_stripe_history s
	JOIN @extschema@.stripe_restore_history r ON r.id OPERATOR(pg_catalog.=) s.restore_id
	WHERE r.status OPERATOR(pg_catalog.=) 'completed'::pg_catalog.text
), recent AS (
	SELECT runs.*,
		   pg_catalog.row_number() OVER (PARTITION BY runs.destination, runs.kind ORDER BY runs.at DESC) AS age
	FROM runs
	WHERE runs.mb_per_s IS NOT NULL
	  AND runs.at OPERATOR(pg_catalog.>) COALESCE(
			(SELECT pg_catalog.max(z.reset_at) FROM @extschema@.stripe_stats_reset_history z),
			'-infinity'::pg_catalog.timestamptz)
)
SELECT r.destination,
	   r.kind,
	   pg_catalog.count(*) AS runs,
	   pg_catalog.round((pg_catalog.max(r.mb_per_s) FILTER (WHERE r.age OPERATOR(pg_catalog.=) 1::pg_catalog.int8))::pg_catalog.numeric, 1)
		   AS last_mb_per_s,
	   pg_catalog.round(pg_catalog.avg(r.mb_per_s)::pg_catalog.numeric, 1) AS avg_mb_per_s,
	   pg_catalog.round(pg_catalog.max(r.mb_per_s)::pg_catalog.numeric, 1) AS best_mb_per_s,
	   pg_catalog.round(pg_catalog.min(r.mb_per_s)::pg_catalog.numeric, 1) AS worst_mb_per_s,
	   CASE WHEN pg_catalog.count(*) OPERATOR(pg_catalog.<) 3::pg_catalog.int8 THEN 'too few runs'::pg_catalog.text
			WHEN (pg_catalog.max(r.mb_per_s) FILTER (WHERE r.age OPERATOR(pg_catalog.=) 1::pg_catalog.int8))
				 OPERATOR(pg_catalog.<) (0.9::pg_catalog.float8 OPERATOR(pg_catalog.*) pg_catalog.avg(r.mb_per_s))
				 THEN 'slower'::pg_catalog.text
			WHEN (pg_catalog.max(r.mb_per_s) FILTER (WHERE r.age OPERATOR(pg_catalog.=) 1::pg_catalog.int8))
				 OPERATOR(pg_catalog.>) (1.1::pg_catalog.float8 OPERATOR(pg_catalog.*) pg_catalog.avg(r.mb_per_s))
				 THEN 'faster'::pg_catalog.text
			ELSE 'steady'::pg_catalog.text END AS trend,
	   CASE WHEN pg_catalog.count(*) OPERATOR(pg_catalog.>=) 3::pg_catalog.int8 THEN
			pg_catalog.round((pg_catalog.regr_slope(r.mb_per_s,
				pg_catalog.date_part('epoch'::pg_catalog.text, r.at)) OPERATOR(pg_catalog.*) 86400::pg_catalog.float8)::pg_catalog.numeric, 1)
	   END AS mb_per_s_change_per_day,
	   pg_catalog.max(r.at) AS last_run_at
FROM recent r
WHERE r.age OPERATOR(pg_catalog.<=) 10::pg_catalog.int8
GROUP BY r.destination, r.kind;

-- ---------------------------------------------------------------------------
-- Functions
-- ---------------------------------------------------------------------------

CREATE FUNCTION stripe_backup(
	destinations text[],
	weights float8[] DEFAULT NULL,
	label text DEFAULT NULL,
	compression text DEFAULT 'zstd',
	compression_level int DEFAULT 1,
	balance text DEFAULT 'adaptive',
	wait boolean DEFAULT true,
	type text DEFAULT 'full',
	redundancy int DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'stripe_backup'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

COMMENT ON FUNCTION stripe_backup(text[], float8[], text, text, int, text, boolean, text, int) IS
'online backup of the cluster, striped over the destinations by weight: full, or of the blocks changed since the last full (diff) or the last backup (incr); with redundancy m (default stripebackup.redundancy) any m destinations may be lost';

-- A chain (a diff or incr and the backups it completes) folded into a new full
-- backup of the same moment, without touching the cluster: restored into a
-- scratch folder beside the new backup in its first destination (room for the
-- cluster uncompressed), then written again.  Returns the new backup's id.
CREATE FUNCTION stripe_merge(
	backup bigint,
	destinations text[] DEFAULT NULL,
	weights float8[] DEFAULT NULL,
	label text DEFAULT NULL,
	compression text DEFAULT 'zstd',
	compression_level int DEFAULT 1,
	balance text DEFAULT 'adaptive',
	wait boolean DEFAULT true,
	redundancy int DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'stripe_merge'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

COMMENT ON FUNCTION stripe_merge(bigint, text[], float8[], text, text, int, text, boolean, int) IS
'fold the chain of a diff or incr backup into a new full backup of the same moment (in the same destinations unless given)';

CREATE FUNCTION stripe_cancel(backup bigint) RETURNS boolean
AS 'MODULE_PATHNAME', 'stripe_cancel'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION stripe_cancel(bigint) IS 'stop a running backup cleanly';

CREATE FUNCTION stripe_cancel_restore(restore bigint) RETURNS boolean
AS 'MODULE_PATHNAME', 'stripe_cancel_restore'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION stripe_cancel_restore(bigint) IS 'stop a running restore cleanly';

-- The plan of a restore: a row per stripe, then a total row (stripe NULL);
-- with detail, a row per piece of file data as well.  With a target, whether
-- the WAL archive holds what recovery to it replays, said as a NOTICE, or a
-- WARNING for a gap; with a target and no backup, the newest backup that ended
-- before it.  With delta_target (a stopped copy, its tablespaces where
-- tablespace_mapping says), what a delta restore into it would compare and
-- expects to write, from its files' sizes and times, said as a NOTICE.
-- Before any restore has measured these destinations, the estimate restores
-- a sample of the backup to measure what a restore costs here: in
-- target_directory's file system when given (the right to write server files
-- needed), else in the data directory's temporary folder.
CREATE FUNCTION stripe_restore_plan(backup bigint DEFAULT NULL, detail boolean DEFAULT false,
	target_time timestamptz DEFAULT NULL, target_lsn pg_lsn DEFAULT NULL,
	target_xid xid8 DEFAULT NULL, target_name text DEFAULT NULL, target text DEFAULT NULL,
	target_inclusive boolean DEFAULT true, target_timeline text DEFAULT NULL,
	target_action text DEFAULT 'promote', delta_target text DEFAULT NULL,
	tablespace_mapping text[] DEFAULT NULL, target_directory text DEFAULT NULL,
	OUT stripe int, OUT location text, OUT present boolean, OUT chunks bigint,
	OUT stored_bytes bigint, OUT raw_bytes bigint, OUT files bigint,
	OUT expected_mb_per_s float8, OUT estimated_seconds float8, OUT estimate_from text,
	OUT file text, OUT file_offset bigint, OUT length bigint, OUT chunk bigint,
	OUT chunk_offset bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripe_restore_plan_id'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

CREATE FUNCTION stripe_restore_plan(location text, detail boolean DEFAULT false,
	target_time timestamptz DEFAULT NULL, target_lsn pg_lsn DEFAULT NULL,
	target_xid xid8 DEFAULT NULL, target_name text DEFAULT NULL, target text DEFAULT NULL,
	target_inclusive boolean DEFAULT true, target_timeline text DEFAULT NULL,
	target_action text DEFAULT 'promote', delta_target text DEFAULT NULL,
	tablespace_mapping text[] DEFAULT NULL, target_directory text DEFAULT NULL,
	allow_unencrypted boolean DEFAULT false,
	OUT stripe int, OUT location text, OUT present boolean, OUT chunks bigint,
	OUT stored_bytes bigint, OUT raw_bytes bigint, OUT files bigint,
	OUT expected_mb_per_s float8, OUT estimated_seconds float8, OUT estimate_from text,
	OUT file text, OUT file_offset bigint, OUT length bigint, OUT chunk bigint,
	OUT chunk_offset bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripe_restore_plan_location'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

-- Read every stripe and check every checksum: a row per problem, none if good.
-- By id, the folders must hold the backup the history records (its uuid,
-- encrypted or not); from a location, under stripebackup.encryption_key_file
-- a backup in the clear is read only with allow_unencrypted => true.
CREATE FUNCTION stripe_verify(backup bigint,
	OUT stripe int, OUT chunk bigint, OUT file text, OUT problem text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripe_verify_id'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

CREATE FUNCTION stripe_verify(location text, allow_unencrypted boolean DEFAULT false,
	OUT stripe int, OUT chunk bigint, OUT file text, OUT problem text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripe_verify_location'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

-- Restore into an empty or new directory, in a background worker; with a
-- target, to that point in time through the WAL archive (backup NULL: the
-- newest backup that ended before the target).  archive_mode: whether the
-- copy archives WAL, 'off' (the default with a target: a test or repair copy
-- writes nothing into this server's archive) or 'keep' (the default for a
-- standby, target 'latest' and no target).  target_timeline NULL: the newest,
-- or the timeline that holds the target when the newest does not (said).
CREATE FUNCTION stripe_restore(backup bigint DEFAULT NULL, target_dir text DEFAULT NULL,
	tablespace_mapping text[] DEFAULT NULL, wait boolean DEFAULT true,
	target_time timestamptz DEFAULT NULL, target_lsn pg_lsn DEFAULT NULL,
	target_xid xid8 DEFAULT NULL, target_name text DEFAULT NULL, target text DEFAULT NULL,
	target_inclusive boolean DEFAULT true, target_timeline text DEFAULT NULL,
	target_action text DEFAULT 'promote', standby boolean DEFAULT false,
	primary_conninfo text DEFAULT NULL, primary_slot_name text DEFAULT NULL, delta boolean DEFAULT false,
	archive_mode text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'stripe_restore_id'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

CREATE FUNCTION stripe_restore(location text, target_dir text,
	tablespace_mapping text[] DEFAULT NULL, wait boolean DEFAULT true,
	target_time timestamptz DEFAULT NULL, target_lsn pg_lsn DEFAULT NULL,
	target_xid xid8 DEFAULT NULL, target_name text DEFAULT NULL, target text DEFAULT NULL,
	target_inclusive boolean DEFAULT true, target_timeline text DEFAULT NULL,
	target_action text DEFAULT 'promote', standby boolean DEFAULT false,
	primary_conninfo text DEFAULT NULL, primary_slot_name text DEFAULT NULL, delta boolean DEFAULT false,
	allow_unencrypted boolean DEFAULT false, archive_mode text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'stripe_restore_location'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

COMMENT ON FUNCTION stripe_restore(bigint, text, text[], boolean, timestamptz, pg_lsn, xid8, text, text,
	boolean, text, text, boolean, text, text, boolean, text) IS
'restore a backup into an empty directory while the server runs, to a point in time through the WAL archive, or as a standby';

-- Measure destinations: sequential write and read of a test file (O_DIRECT),
-- random reads when asked, a block size by queue depth matrix when asked.
CREATE FUNCTION stripe_calibrate(destinations text[], size_mb int DEFAULT 256,
	block_kb int DEFAULT 1024, queue_depth int DEFAULT 16,
	random_iops boolean DEFAULT false, matrix boolean DEFAULT false,
	OUT destination text, OUT test text, OUT block_kb int, OUT queue_depth int,
	OUT mb_per_s float8, OUT iops float8, OUT direct_io boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripe_calibrate'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

-- A chart of each stripe's throughput over the backup, as SVG.
CREATE FUNCTION stripe_backup_svg(backup bigint) RETURNS text
AS 'MODULE_PATHNAME', 'stripe_backup_svg'
LANGUAGE C STRICT VOLATILE;

-- Retention: remove the files and history of the backups that meet every
-- rule given: beyond the newest KEEP_LAST completed ones; started before now
-- - OLDER_THAN; not needed to recover to any moment of the last
-- RECOVERY_WINDOW (the newest backup that completed before the window opens
-- stays, with its chain and the WAL after it); beyond the newest KEEP_FULL
-- completed full backups (with their diffs and incrs).  Never a kept backup.
CREATE FUNCTION stripe_expire(keep_last int DEFAULT NULL, older_than interval DEFAULT NULL,
	recovery_window interval DEFAULT NULL, keep_full int DEFAULT NULL,
	OUT backup_id bigint, OUT name text, OUT status text, OUT started_at timestamptz,
	OUT files_removed bigint, OUT bytes_freed bigint, OUT removed boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripe_expire'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

COMMENT ON FUNCTION stripe_expire(int, interval, interval, int) IS
'remove old backups (never the newest completed one, a running one, a kept one, or one a recovery window needs) and say what went';

-- Write the stripe of a backup with redundancy that lost_destination held
-- again, from the other stripes, into new_destination/NAME (a folder or
-- s3://bucket/prefix), read it back, and record it there: stripe_verify,
-- stripe_restore and stripe_restore_plan by id then read it from there.
CREATE FUNCTION stripe_rebuild(backup bigint, lost_destination text, new_destination text,
	OUT stripe int, OUT location text, OUT chunk_records bigint, OUT parity_records bigint,
	OUT bytes bigint, OUT seconds float8)
RETURNS record
AS 'MODULE_PATHNAME', 'stripe_rebuild'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

COMMENT ON FUNCTION stripe_rebuild(bigint, text, text) IS
'write a lost stripe of a backup with redundancy again from the others onto a new destination, and record it there';

-- Keep a backup out of retention (keep => false gives it back), and
-- annotate it (note NULL leaves the note as it is).  A kept diff or incr
-- keeps the backups it completes.
CREATE FUNCTION stripe_keep(backup bigint, keep boolean DEFAULT true, note text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'stripe_keep'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

COMMENT ON FUNCTION stripe_keep(bigint, boolean, text) IS
'keep a completed backup (and the chain it needs) out of retention, or give it back; annotate it';

-- The checks a DBA runs before trusting the backups and a monitoring job
-- runs every hour: a row each, ok or not, what was found and what to do;
-- severity 'warning' stops nothing, 'failure' does.  A WAL segment is
-- switched and must reach the archive within TIMEOUT.  With raise, failures
-- end in an ERROR naming them (a pg_cron job then records a failure).
CREATE FUNCTION stripe_check(timeout interval DEFAULT '1 min', raise boolean DEFAULT false,
	OUT "check" text, OUT ok boolean, OUT detail text, OUT hint text, OUT severity text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripe_check'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

COMMENT ON FUNCTION stripe_check(interval, boolean) IS
'check the configuration, the WAL archive, the destinations and the newest backups: a row per check; raise => true turns failures into an ERROR';

-- Clear the statistics: calibrations and timelines go; throughput counts from now.
CREATE FUNCTION stripe_stats_reset() RETURNS void
AS 'MODULE_PATHNAME', 'stripe_stats_reset'
LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION stripebackup_version() RETURNS text
AS 'MODULE_PATHNAME', 'stripebackup_version'
LANGUAGE C STRICT IMMUTABLE;

COMMENT ON FUNCTION stripebackup_version() IS 'version of the stripebackup library';

-- ---------------------------------------------------------------------------
-- What \df+, \dv+ and \d+ say: every function and view, and the columns a
-- user reads.
-- ---------------------------------------------------------------------------

COMMENT ON FUNCTION stripe_job_is_running(text, bigint) IS
'whether job ID of KIND (backup or restore) runs on this server now (the views show a job whose worker died as failed)';
COMMENT ON FUNCTION stripe_restore_plan(bigint, boolean, timestamptz, pg_lsn, xid8, text, text, boolean,
	text, text, text, text[], text) IS
'what a restore of a backup (by id; NULL with a target: the newest before it) will read, per stripe, and how long it should take';
COMMENT ON FUNCTION stripe_restore_plan(text, boolean, timestamptz, pg_lsn, xid8, text, text, boolean,
	text, text, text, text[], text, boolean) IS
'what a restore of the backup in a folder will read, per stripe, and how long it should take';
COMMENT ON FUNCTION stripe_verify(bigint) IS
'read every stripe of a backup (by id) and check every checksum: a row per problem, none when good';
COMMENT ON FUNCTION stripe_verify(text, boolean) IS
'read every stripe of the backup in a folder and check every checksum: a row per problem, none when good';
COMMENT ON FUNCTION stripe_restore(text, text, text[], boolean, timestamptz, pg_lsn, xid8, text, text,
	boolean, text, text, boolean, text, text, boolean, boolean, text) IS
'restore the backup in a folder into an empty directory while the server runs, to a point in time, or as a standby';
COMMENT ON FUNCTION stripe_calibrate(text[], int, int, int, boolean, boolean) IS
'measure the sequential write and read MB/s of destinations (random reads, a block size by queue depth matrix when asked)';
COMMENT ON FUNCTION stripe_backup_svg(bigint) IS 'an SVG chart of each stripe''s throughput over a backup';
COMMENT ON FUNCTION stripe_stats_reset() IS 'forget calibrations and timelines; throughput statistics count from now';
COMMENT ON FUNCTION stripebackup_progress() IS 'live: a row for the whole running backup or restore and a row per stripe (behind stripe_backup_progress)';
COMMENT ON FUNCTION stripe_wal_archive_status() IS
'what the WAL archive module archived since the server started, per destination (behind stripe_wal_archive)';
COMMENT ON FUNCTION stripe_archive_lag() IS
'finished WAL segments not yet archived, and the seconds since the newest archived one (pg_stat_archiver)';

COMMENT ON FUNCTION stripe_standby_records() IS 'the backups this server took as a standby, from its own file: the newest row of each, as jsonb';
COMMENT ON VIEW stripe_standby_backups IS 'the backups this server took as a standby, as rows of stripe_backup_history: what its own retention and chains look at';
COMMENT ON VIEW stripe_backup_records IS 'the backup history the views read: stripe_backup_history, and the rows of the backups this server took as a standby that it does not hold yet';
COMMENT ON VIEW stripe_backup_stripe_records IS 'the stripes of stripe_backup_records: stripe_backup_stripe_history, and those of the backups this server took as a standby';
-- Their columns are the tables' own.
DO $comments$
DECLARE
	c record;
BEGIN
	FOR c IN SELECT n.nspname, k.relname, a.attname
			 FROM pg_catalog.pg_attribute a
			 JOIN pg_catalog.pg_class k ON k.oid OPERATOR(pg_catalog.=) a.attrelid
			 JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) k.relnamespace
			 WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY['@extschema@.stripe_standby_backups'::pg_catalog.regclass,
					'@extschema@.stripe_backup_records'::pg_catalog.regclass,
					'@extschema@.stripe_backup_stripe_records'::pg_catalog.regclass]::pg_catalog.oid[])
			   AND a.attnum OPERATOR(pg_catalog.>) 0::pg_catalog.int2
	LOOP
		EXECUTE pg_catalog.format('COMMENT ON COLUMN %I.%I.%I IS %L', c.nspname, c.relname, c.attname,
			'the column of the history table, for every backup this server records');
	END LOOP;
END
$comments$;
COMMENT ON VIEW stripe_backups IS 'every backup: status, type and chain, times, bytes, MB/s, LSNs, error, where it is';
COMMENT ON VIEW stripe_backup_stripes IS 'each stripe of each backup: destination, weight, bytes, seconds of writing, data MB/s and stored MB/s';
COMMENT ON VIEW stripe_restores IS 'every restore: status, estimated beside actual seconds, bytes, MB/s, error';
COMMENT ON VIEW stripe_restore_stripes IS 'each stripe of each restore: estimated beside measured seconds, MB/s read';
COMMENT ON VIEW stripe_backup_timeline IS 'each stripe''s stored bytes at each sample of its backup, and its stored MB/s (bytes written to it) since the sample before: what the chart smooths';
COMMENT ON VIEW stripe_backup_progress IS 'live: the running backup or restore, a total row (scope total) and one per stripe: phase, bytes, percent (at most 100), data and stored MB/s, ETA';
COMMENT ON VIEW stripe_wal_archive IS 'the WAL archive module, per destination: files, bytes, the last archived, lag, failures';
COMMENT ON VIEW stripe_throughput IS 'per destination and kind (backup writes, restore reads): last, average, best, worst MB/s and the trend';
COMMENT ON VIEW stripe_health IS
'one row for monitoring (a Prometheus SQL exporter reads it as it is): newest backups and their ages, failures, WAL archive lag';
COMMENT ON TABLE stripe_calibrations IS 'what stripe_calibrate() measured, per destination and test';

COMMENT ON COLUMN stripe_backups.status IS 'running, completed, failed or cancelled (a job whose worker died shows failed)';
COMMENT ON COLUMN stripe_backups.type IS 'full, diff (the blocks changed since the last full backup) or incr (since the last backup)';
COMMENT ON COLUMN stripe_backups.parent_id IS 'the backup a diff or incr completes';
COMMENT ON COLUMN stripe_backups.merged_from IS 'stripe_merge(): the newest backup of the chain folded into this one';
COMMENT ON COLUMN stripe_backups.encrypted IS 'sealed under stripebackup.encryption_key_file';
COMMENT ON COLUMN stripe_backups.bytes_read IS 'bytes of the cluster read';
COMMENT ON COLUMN stripe_backups.bytes_written IS 'bytes stored in the stripes (compressed)';
COMMENT ON COLUMN stripe_backups.mb_per_s IS 'MB of the cluster read per second of the whole backup';
COMMENT ON COLUMN stripe_backups.error IS 'why it failed or was cancelled';
COMMENT ON COLUMN stripe_backups.sqlstate IS 'the SQLSTATE of the error that ended it';
COMMENT ON COLUMN stripe_backups.location IS 'its folder in the first destination: what the command and stripe_verify(location) take';
COMMENT ON COLUMN stripe_backups.kept IS 'stripe_keep(): never expired, nor the backups it completes';
COMMENT ON COLUMN stripe_backups.note IS 'stripe_keep()''s note';
COMMENT ON COLUMN stripe_backup_stripes.raw_bytes IS 'bytes of the cluster in this stripe, before compression';
COMMENT ON COLUMN stripe_backup_stripes.stored_bytes IS 'bytes this stripe stored';
COMMENT ON COLUMN stripe_backup_stripes.seconds IS 'seconds of this stripe''s writing: its writer''s time with writes in flight';
COMMENT ON COLUMN stripe_backup_stripes.data_mb_per_s IS 'MB of source data (before compression) this stripe carried per second of its writing; the figure stripebackup report and its chart show';
COMMENT ON COLUMN stripe_backup_stripes.stored_mb_per_s IS 'MB written to this stripe (after compression) per second of its writing';
COMMENT ON COLUMN stripe_backup_progress.scope IS 'total: the whole backup or restore (stripe and location NULL); stripe: one destination';
COMMENT ON COLUMN stripe_backup_progress.bytes_total IS 'the estimate taken before the walk, raised to bytes_done when the job outruns it';
COMMENT ON COLUMN stripe_backup_progress.percent IS 'bytes_done of bytes_total, never above 100';
COMMENT ON COLUMN stripe_backup_progress.data_mb_per_s IS 'MB of source data per second of writing (total row: per second since the job began)';
COMMENT ON COLUMN stripe_backup_progress.stored_mb_per_s IS 'MB written to the destination per second of writing (total row: per second since the job began)';
COMMENT ON COLUMN stripe_backup_progress.recent_data_mb_per_s IS 'MB of source data per second over the last few seconds, what eta_seconds assumes';
COMMENT ON COLUMN stripe_restores.estimated_seconds IS 'what stripe_restore_plan() expected';
COMMENT ON COLUMN stripe_restores.actual_seconds IS 'what it took';
COMMENT ON COLUMN stripe_health.last_backup_age_seconds IS 'seconds since the newest completed backup ended (NULL: none)';
COMMENT ON COLUMN stripe_health.last_backup_failed IS 'the newest backup that ended (cancels aside) failed';
COMMENT ON COLUMN stripe_health.failures_since_last_completed IS 'backups failed since the newest completed one started';
COMMENT ON COLUMN stripe_health.last_failure_sqlstate IS 'the SQLSTATE of the newest failed backup';
COMMENT ON COLUMN stripe_health.archive_lag_segments IS 'finished WAL segments not yet archived (NULL: no archiving, or nothing archived yet)';
COMMENT ON COLUMN stripe_health.archive_lag_seconds IS 'seconds since the newest archived segment when some wait, else 0';
COMMENT ON COLUMN stripe_backups.id IS 'the backup''s id, what the functions take';
COMMENT ON COLUMN stripe_backups.name IS 'its folder''s name in every destination';
COMMENT ON COLUMN stripe_backups.label IS 'the label given to stripe_backup()';
COMMENT ON COLUMN stripe_backups.started_at IS 'when the backup began';
COMMENT ON COLUMN stripe_backups.finished_at IS 'when it ended, whatever its status (NULL while running)';
COMMENT ON COLUMN stripe_backups.duration IS 'finished_at - started_at';
COMMENT ON COLUMN stripe_backups.destinations IS 'the destinations, in stripe order (stripe N is in destinations[N])';
COMMENT ON COLUMN stripe_backups.weights IS 'each destination''s share of the data';
COMMENT ON COLUMN stripe_backups.compression IS 'zstd or none';
COMMENT ON COLUMN stripe_backups.compression_level IS 'the zstd level';
COMMENT ON COLUMN stripe_backups.balance IS 'adaptive (each destination takes the next chunk when it can) or weighted (the shares exactly)';
COMMENT ON COLUMN stripe_backups.files IS 'files of the cluster copied';
COMMENT ON COLUMN stripe_backups.start_lsn IS 'the WAL position recovery from this backup starts at';
COMMENT ON COLUMN stripe_backups.stop_lsn IS 'the WAL position recovery must reach for the copy to be consistent';
COMMENT ON COLUMN stripe_backups.timeline IS 'the timeline the backup was taken on';
COMMENT ON COLUMN stripe_backups.requested_by IS 'the role that asked for it';
COMMENT ON COLUMN stripe_backups.backup_uuid IS 'the id carried by every stripe of the backup';
COMMENT ON COLUMN stripe_backups.redundancy IS 'how many destinations may be lost with the backup still restorable';
COMMENT ON COLUMN stripe_backups.parity_bytes IS 'bytes of parity records stored for redundancy';
COMMENT ON COLUMN stripe_backups.parity_overhead_pct IS 'parity_bytes as a percentage of the stored bytes';
COMMENT ON COLUMN stripe_backups.incremental_method IS 'a diff or incr: how changed blocks were found (wal_summaries or page_lsn)';
COMMENT ON COLUMN stripe_backups.from_standby IS 'taken on a standby (its id is 10^15 or more, from a range of its own)';
COMMENT ON COLUMN stripe_backup_stripes.backup_id IS 'the backup (stripe_backups.id)';
COMMENT ON COLUMN stripe_backup_stripes.stripe IS 'the stripe''s number, 1 to the count of destinations';
COMMENT ON COLUMN stripe_backup_stripes.destination IS 'the destination that holds this stripe';
COMMENT ON COLUMN stripe_backup_stripes.location IS 'the backup''s folder in that destination';
COMMENT ON COLUMN stripe_backup_stripes.weight IS 'the share this destination was given';
COMMENT ON COLUMN stripe_backup_stripes.chunks IS 'chunks written to this stripe';
COMMENT ON COLUMN stripe_restores.id IS 'the restore''s id, what stripe_cancel_restore() takes';
COMMENT ON COLUMN stripe_restores.backup_id IS 'the backup restored, when restored by id (NULL for a location)';
COMMENT ON COLUMN stripe_restores.location IS 'the backup''s folder it read';
COMMENT ON COLUMN stripe_restores.target IS 'the data directory written';
COMMENT ON COLUMN stripe_restores.tablespace_mapping IS 'the OLD=NEW tablespace mappings given';
COMMENT ON COLUMN stripe_restores.standby IS 'restored as a standby of its primary';
COMMENT ON COLUMN stripe_restores.delta IS 'into a stopped copy, rewriting only what differed';
COMMENT ON COLUMN stripe_restores.status IS 'running, completed, failed or cancelled (a job whose worker died shows failed)';
COMMENT ON COLUMN stripe_restores.started_at IS 'when the restore began';
COMMENT ON COLUMN stripe_restores.finished_at IS 'when it ended, whatever its status (NULL while running)';
COMMENT ON COLUMN stripe_restores.duration IS 'finished_at - started_at';
COMMENT ON COLUMN stripe_restores.files IS 'files of the backup restored';
COMMENT ON COLUMN stripe_restores.bytes_read IS 'bytes read from the stripes (as stored)';
COMMENT ON COLUMN stripe_restores.bytes_written IS 'bytes written into the target';
COMMENT ON COLUMN stripe_restores.bytes_compared IS 'a delta: the backup''s bytes compared with the copy''s';
COMMENT ON COLUMN stripe_restores.compare_seconds IS 'a delta: seconds spent comparing, before any chunk was read';
COMMENT ON COLUMN stripe_restores.entries_removed IS 'a delta: the copy''s files and folders the backup lacked, removed';
COMMENT ON COLUMN stripe_restores.mb_per_s IS 'MB written into the target per second of the whole restore';
COMMENT ON COLUMN stripe_restores.error IS 'why it failed or was cancelled';
COMMENT ON COLUMN stripe_restores.sqlstate IS 'the SQLSTATE of the error that ended it';
COMMENT ON COLUMN stripe_restores.requested_by IS 'the role that asked for it';
COMMENT ON COLUMN stripe_restore_stripes.restore_id IS 'the restore (stripe_restores.id)';
COMMENT ON COLUMN stripe_restore_stripes.stripe IS 'the stripe''s number';
COMMENT ON COLUMN stripe_restore_stripes.destination IS 'where the stripe was read from';
COMMENT ON COLUMN stripe_restore_stripes.chunks IS 'chunks read';
COMMENT ON COLUMN stripe_restore_stripes.stored_bytes IS 'bytes read from the stripe (as stored)';
COMMENT ON COLUMN stripe_restore_stripes.raw_bytes IS 'bytes of the cluster they held, after decompression';
COMMENT ON COLUMN stripe_restore_stripes.estimated_seconds IS 'what stripe_restore_plan() expected for this stripe';
COMMENT ON COLUMN stripe_restore_stripes.actual_seconds IS 'what reading it took';
COMMENT ON COLUMN stripe_restore_stripes.mb_per_s IS 'stored MB read per second of reading: what later plans expect of this destination';
COMMENT ON COLUMN stripe_backup_timeline.backup_id IS 'the backup (stripe_backups.id)';
COMMENT ON COLUMN stripe_backup_timeline.stripe IS 'the stripe''s number';
COMMENT ON COLUMN stripe_backup_timeline.seconds IS 'seconds since the backup began, at this sample';
COMMENT ON COLUMN stripe_backup_timeline.stored_bytes IS 'bytes the stripe had stored by then';
COMMENT ON COLUMN stripe_backup_timeline.mb_per_s IS 'stored MB/s since the sample before (bytes written to the stripe, after compression)';
COMMENT ON COLUMN stripe_backup_progress.kind IS 'backup or restore';
COMMENT ON COLUMN stripe_backup_progress.id IS 'the running job''s id (stripe_backups.id or stripe_restores.id)';
COMMENT ON COLUMN stripe_backup_progress.phase IS 'what the job is doing: starting, copying files, copying WAL, restoring, finishing, ...';
COMMENT ON COLUMN stripe_backup_progress.stripe IS 'the stripe''s number (NULL on the total row)';
COMMENT ON COLUMN stripe_backup_progress.location IS 'the stripe''s folder (NULL on the total row)';
COMMENT ON COLUMN stripe_backup_progress.bytes_done IS 'bytes of source data done';
COMMENT ON COLUMN stripe_backup_progress.stored_bytes IS 'bytes written to the destination so far (after compression)';
COMMENT ON COLUMN stripe_backup_progress.queue_depth IS 'writes (or reads) in flight now';
COMMENT ON COLUMN stripe_backup_progress.eta_seconds IS 'seconds left at recent_data_mb_per_s (NULL while no rate or total is known)';
COMMENT ON COLUMN stripe_backup_progress.updated_at IS 'when the job last updated these figures';
COMMENT ON COLUMN stripe_backup_progress.elapsed_seconds IS 'seconds since the job began';
COMMENT ON COLUMN stripe_wal_archive.destination IS 'a WAL archive destination';
COMMENT ON COLUMN stripe_wal_archive.files IS 'files archived to it since the server started';
COMMENT ON COLUMN stripe_wal_archive.bytes IS 'their bytes as PostgreSQL wrote them';
COMMENT ON COLUMN stripe_wal_archive.stored_bytes IS 'their bytes as stored (compressed, sealed)';
COMMENT ON COLUMN stripe_wal_archive.last_archived_wal IS 'the newest file archived to it';
COMMENT ON COLUMN stripe_wal_archive.last_archived_time IS 'when that file was archived';
COMMENT ON COLUMN stripe_wal_archive.mb_per_s IS 'MB of WAL (as PostgreSQL wrote it) archived to it per second since archiving began (NULL in the first second)';
COMMENT ON COLUMN stripe_wal_archive.lag_bytes IS 'bytes of WAL written since the end of the newest segment archived';
COMMENT ON COLUMN stripe_wal_archive.failed_count IS 'files the archive failed since the server started (the same on every row)';
COMMENT ON COLUMN stripe_wal_archive.last_failed_wal IS 'the newest file the archive failed (the same on every row)';
COMMENT ON COLUMN stripe_wal_archive.last_failed_time IS 'when the archive last failed (the same on every row)';
COMMENT ON COLUMN stripe_wal_archive.last_error IS 'why the archive last failed (the same on every row)';
COMMENT ON COLUMN stripe_wal_archive.destination_failures IS 'files this destination failed, archived or not (with archive_redundancy, done without it)';
COMMENT ON COLUMN stripe_wal_archive.destination_last_error IS 'why this destination last failed';
COMMENT ON COLUMN stripe_throughput.destination IS 'a destination of backups or restores';
COMMENT ON COLUMN stripe_throughput.kind IS 'backup (its writing) or restore (its reading)';
COMMENT ON COLUMN stripe_throughput.runs IS 'completed runs counted: the last 10 since stripe_stats_reset()';
COMMENT ON COLUMN stripe_throughput.last_mb_per_s IS 'stored MB/s (bytes the device wrote or read) of the newest run';
COMMENT ON COLUMN stripe_throughput.avg_mb_per_s IS 'stored MB/s, averaged over the runs';
COMMENT ON COLUMN stripe_throughput.best_mb_per_s IS 'the highest stored MB/s of the runs';
COMMENT ON COLUMN stripe_throughput.worst_mb_per_s IS 'the lowest stored MB/s of the runs';
COMMENT ON COLUMN stripe_throughput.trend IS 'the newest run against the average: slower or faster by over 10 %, steady, or too few runs (under 3)';
COMMENT ON COLUMN stripe_throughput.mb_per_s_change_per_day IS 'the slope of stored MB/s over the runs, per day (NULL under 3 runs)';
COMMENT ON COLUMN stripe_throughput.last_run_at IS 'when the newest run finished';
COMMENT ON COLUMN stripe_health.last_backup_id IS 'the newest completed backup (NULL: none)';
COMMENT ON COLUMN stripe_health.last_backup_type IS 'its type: full, diff or incr';
COMMENT ON COLUMN stripe_health.last_backup_finished_at IS 'when it ended';
COMMENT ON COLUMN stripe_health.last_full_age_seconds IS 'seconds since the newest completed full backup ended (NULL: none)';
COMMENT ON COLUMN stripe_health.last_diff_age_seconds IS 'seconds since the newest completed diff backup ended (NULL: none)';
COMMENT ON COLUMN stripe_health.last_incr_age_seconds IS 'seconds since the newest completed incr backup ended (NULL: none)';
COMMENT ON COLUMN stripe_health.last_failure_id IS 'the newest failed backup (NULL: none)';
COMMENT ON COLUMN stripe_health.last_failure_at IS 'when it ended';
COMMENT ON COLUMN stripe_health.last_failure_error IS 'its error';

-- These functions read the whole cluster and write server files.
REVOKE ALL ON FUNCTION stripe_backup(text[], float8[], text, text, int, text, boolean, text, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_merge(bigint, text[], float8[], text, text, int, text, boolean, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_cancel(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_cancel_restore(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_restore_plan(bigint, boolean, timestamptz, pg_lsn, xid8, text, text, boolean,
	text, text, text, text[], text) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_restore_plan(text, boolean, timestamptz, pg_lsn, xid8, text, text, boolean,
	text, text, text, text[], text, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_verify(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_verify(text, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_restore(bigint, text, text[], boolean, timestamptz, pg_lsn, xid8, text,
	text, boolean, text, text, boolean, text, text, boolean, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_restore(text, text, text[], boolean, timestamptz, pg_lsn, xid8, text,
	text, boolean, text, text, boolean, text, text, boolean, boolean, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_calibrate(text[], int, int, int, boolean, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_backup_svg(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_stats_reset() FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_expire(int, interval, interval, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_keep(bigint, boolean, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_rebuild(bigint, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripebackup_progress() FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_wal_archive_status() FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_check(interval, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_archive_lag() FROM PUBLIC;
REVOKE ALL ON TABLE stripe_backup_history, stripe_backup_stripe_history,
	stripe_restore_history, stripe_restore_stripe_history, stripe_backup_timeline_history,
	stripe_calibrations, stripe_stats_reset_history FROM PUBLIC;
GRANT EXECUTE ON FUNCTION stripebackup_progress() TO pg_monitor;
GRANT EXECUTE ON FUNCTION stripe_wal_archive_status() TO pg_monitor;
GRANT EXECUTE ON FUNCTION stripe_archive_lag() TO pg_monitor;
GRANT SELECT ON stripe_backups, stripe_backup_stripes, stripe_restores, stripe_restore_stripes,
	stripe_backup_progress, stripe_backup_timeline, stripe_throughput, stripe_calibrations,
	stripe_wal_archive, stripe_health TO pg_monitor;
