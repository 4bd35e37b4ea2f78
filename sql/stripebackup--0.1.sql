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

-- Keep the history in pg_dump output.
SELECT pg_catalog.pg_extension_config_dump('stripe_backup_history', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_backup_stripe_history', '');
SELECT pg_catalog.pg_extension_config_dump('stripe_backup_id_seq', '');

-- Is backup ID the one this server is running now?  Lets the views show a
-- backup whose worker died with the server as failed, not running.
CREATE FUNCTION stripe_backup_is_running(backup bigint) RETURNS boolean
AS 'MODULE_PATHNAME', 'stripe_backup_is_running'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW stripe_backups AS
SELECT h.id,
	   h.name,
	   h.label,
	   CASE WHEN h.status = 'running' AND NOT stripe_backup_is_running(h.id)
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
	   CASE WHEN h.status = 'running' AND NOT stripe_backup_is_running(h.id)
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

CREATE FUNCTION stripebackup_version() RETURNS text
AS 'MODULE_PATHNAME', 'stripebackup_version'
LANGUAGE C STRICT IMMUTABLE;

COMMENT ON FUNCTION stripebackup_version() IS 'version of the stripebackup library';

-- These functions read the whole cluster and write server files.
REVOKE ALL ON FUNCTION stripe_backup(text[], float8[], text, text, int, text, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION stripe_cancel(bigint) FROM PUBLIC;
REVOKE ALL ON TABLE stripe_backup_history, stripe_backup_stripe_history FROM PUBLIC;
GRANT SELECT ON stripe_backups, stripe_backup_stripes TO pg_monitor;
