/* stripebackup--0.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION stripebackup" to load this file. \quit

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
		CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
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
	requested_by	name NOT NULL,
	worker_pid		int
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
		CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
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
	requested_by	name NOT NULL,
	worker_pid		int
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

-- Keep the history in pg_dump output.
SELECT pg_catalog.pg_extension_config_dump('stripe_backup_history', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_backup_stripe_history', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_backup_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_restore_history', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_restore_stripe_history', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_restore_id_seq', '');

-- Is job ID of KIND ('backup' or 'restore') the one this server runs now?
-- Lets the views show a job whose worker died with the server as failed.
CREATE FUNCTION stripe_job_is_running(kind text, id bigint) RETURNS boolean
AS 'MODULE_PATHNAME', 'stripe_job_is_running'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW stripe_backups AS
SELECT h.id,
	   h.name,
	   h.label,
	   CASE WHEN h.status = 'running' AND NOT stripe_job_is_running('backup', h.id)
			THEN 'failed' ELSE h.status END AS status,
	   h.started_at,
	   h.finished_at,
	   h.finished_at - h.started_at AS duration,
	   h.destinations,
	   h.weights,
	   h.compression,
	   h.compression_level,
	   h.balance,
	   h.files,
	   h.bytes_read,
	   h.bytes_written,
	   round((h.bytes_read / 1e6 /
			  nullif(extract(epoch FROM h.finished_at - h.started_at), 0))::numeric, 1)
		   AS mb_per_s,
	   h.start_lsn,
	   h.stop_lsn,
	   h.timeline,
	   CASE WHEN h.status = 'running' AND NOT stripe_job_is_running('backup', h.id)
			THEN 'the backup worker stopped without finishing (server restart or crash)'
			ELSE h.error END AS error,
	   h.destinations[1] || '/' || h.name AS location,
	   h.requested_by
FROM stripe_backup_history h;

CREATE VIEW stripe_backup_stripes AS
SELECT s.backup_id,
	   s.stripe,
	   s.destination,
	   s.destination || '/' || h.name AS location,
	   s.weight,
	   s.chunks,
	   s.raw_bytes,
	   s.stored_bytes,
	   s.seconds,
	   round((s.stored_bytes / 1e6 / nullif(s.seconds, 0))::numeric, 1) AS mb_per_s
FROM stripe_backup_stripe_history s
JOIN stripe_backup_history h ON h.id = s.backup_id;

CREATE VIEW stripe_restores AS
SELECT r.id,
	   r.backup_id,
	   r.location,
	   r.target,
	   r.tablespace_mapping,
	   CASE WHEN r.status = 'running' AND NOT stripe_job_is_running('restore', r.id)
			THEN 'failed' ELSE r.status END AS status,
	   r.started_at,
	   r.finished_at,
	   r.finished_at - r.started_at AS duration,
	   r.estimated_seconds,
	   extract(epoch FROM r.finished_at - r.started_at)::float8 AS actual_seconds,
	   r.files,
	   r.bytes_read,
	   r.bytes_written,
	   round((r.bytes_written / 1e6 /
			  nullif(extract(epoch FROM r.finished_at - r.started_at), 0))::numeric, 1)
		   AS mb_per_s,
	   CASE WHEN r.status = 'running' AND NOT stripe_job_is_running('restore', r.id)
			THEN 'the restore worker stopped without finishing (server restart or crash)'
			ELSE r.error END AS error,
	   r.requested_by
FROM stripe_restore_history r;

CREATE VIEW stripe_restore_stripes AS
SELECT s.restore_id,
	   s.stripe,
	   s.destination,
	   s.chunks,
	   s.stored_bytes,
	   s.raw_bytes,
	   s.estimated_seconds,
	   s.seconds AS actual_seconds,
	   round((s.stored_bytes / 1e6 / nullif(s.seconds, 0))::numeric, 1) AS mb_per_s
FROM stripe_restore_stripe_history s;

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
	wait boolean DEFAULT true)
RETURNS bigint
AS 'MODULE_PATHNAME', 'stripe_backup'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

COMMENT ON FUNCTION stripe_backup(text[], float8[], text, text, int, text, boolean) IS
'full online backup of the cluster, striped over the destinations by weight';

CREATE FUNCTION stripe_cancel(backup bigint) RETURNS boolean
AS 'MODULE_PATHNAME', 'stripe_cancel'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION stripe_cancel(bigint) IS 'stop a running backup cleanly';

CREATE FUNCTION stripe_cancel_restore(restore bigint) RETURNS boolean
AS 'MODULE_PATHNAME', 'stripe_cancel_restore'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION stripe_cancel_restore(bigint) IS 'stop a running restore cleanly';

-- The plan of a restore: a row per stripe, then a total row (stripe NULL);
-- with detail, a row per piece of file data as well.
CREATE FUNCTION stripe_restore_plan(backup bigint, detail boolean DEFAULT false,
	OUT stripe int, OUT location text, OUT present boolean, OUT chunks bigint,
	OUT stored_bytes bigint, OUT raw_bytes bigint, OUT files bigint,
	OUT expected_mb_per_s float8, OUT estimated_seconds float8,
	OUT file text, OUT file_offset bigint, OUT length bigint, OUT chunk bigint,
	OUT chunk_offset bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripe_restore_plan_id'
LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION stripe_restore_plan(location text, detail boolean DEFAULT false,
	OUT stripe int, OUT location text, OUT present boolean, OUT chunks bigint,
	OUT stored_bytes bigint, OUT raw_bytes bigint, OUT files bigint,
	OUT expected_mb_per_s float8, OUT estimated_seconds float8,
	OUT file text, OUT file_offset bigint, OUT length bigint, OUT chunk bigint,
	OUT chunk_offset bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripe_restore_plan_location'
LANGUAGE C STRICT VOLATILE;

-- Read every stripe and check every checksum: a row per problem, none if good.
CREATE FUNCTION stripe_verify(backup bigint,
	OUT stripe int, OUT chunk bigint, OUT file text, OUT problem text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripe_verify_id'
LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION stripe_verify(location text,
	OUT stripe int, OUT chunk bigint, OUT file text, OUT problem text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'stripe_verify_location'
LANGUAGE C STRICT VOLATILE;

-- Restore into an empty or new directory, in a background worker.
CREATE FUNCTION stripe_restore(backup bigint, target_dir text,
	tablespace_mapping text[] DEFAULT NULL, wait boolean DEFAULT true)
RETURNS bigint
AS 'MODULE_PATHNAME', 'stripe_restore_id'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

CREATE FUNCTION stripe_restore(location text, target_dir text,
	tablespace_mapping text[] DEFAULT NULL, wait boolean DEFAULT true)
RETURNS bigint
AS 'MODULE_PATHNAME', 'stripe_restore_location'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

COMMENT ON FUNCTION stripe_restore(bigint, text, text[], boolean) IS
'restore a backup into an empty directory while the server runs';

CREATE FUNCTION stripebackup_version() RETURNS text
AS 'MODULE_PATHNAME', 'stripebackup_version'
LANGUAGE C STRICT IMMUTABLE;

COMMENT ON FUNCTION stripebackup_version() IS 'version of the stripebackup library';

-- These functions read the whole cluster and write server files.
REVOKE ALL ON FUNCTION stripe_backup(text[], float8[], text, text, int, text, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_cancel(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_cancel_restore(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_restore_plan(bigint, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_restore_plan(text, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_verify(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_verify(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_restore(bigint, text, text[], boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_restore(text, text, text[], boolean) FROM PUBLIC;
REVOKE ALL ON TABLE stripe_backup_history, stripe_backup_stripe_history,
	stripe_restore_history, stripe_restore_stripe_history FROM PUBLIC;
GRANT SELECT ON stripe_backups, stripe_backup_stripes, stripe_restores, stripe_restore_stripes
	TO pg_monitor;
