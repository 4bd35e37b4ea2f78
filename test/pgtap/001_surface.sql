-- The SQL surface of stripebackup: functions, views, privileges, errors.
\set ON_ERROR_STOP 1
\set QUIET 1
SET client_min_messages TO warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS stripebackup;
BEGIN;
SELECT plan(72);

SELECT has_function('stripe_backup',
	ARRAY['text[]', 'double precision[]', 'text', 'text', 'integer', 'text', 'boolean', 'text', 'integer'],
	'stripe_backup(destinations, weights, label, compression, compression_level, balance, wait, type, redundancy)');
SELECT function_returns('stripe_backup',
	ARRAY['text[]', 'double precision[]', 'text', 'text', 'integer', 'text', 'boolean', 'text', 'integer'], 'bigint');
SELECT has_function('stripe_cancel', ARRAY['bigint']);
SELECT function_returns('stripe_merge',
	ARRAY['bigint', 'text[]', 'double precision[]', 'text', 'text', 'integer', 'text', 'boolean', 'integer'], 'bigint');
SELECT has_function('stripe_cancel_restore', ARRAY['bigint']);
SELECT has_function('stripe_restore_plan', ARRAY['bigint', 'boolean', 'timestamp with time zone', 'pg_lsn', 'xid8',
	'text', 'text', 'boolean', 'text', 'text', 'text', 'text[]', 'text']);
SELECT has_function('stripe_restore_plan', ARRAY['text', 'boolean', 'timestamp with time zone', 'pg_lsn', 'xid8',
	'text', 'text', 'boolean', 'text', 'text', 'text', 'text[]', 'text', 'boolean']);
SELECT has_function('stripe_verify', ARRAY['bigint']);
SELECT has_function('stripe_verify', ARRAY['text', 'boolean']);
SELECT has_function('stripe_restore', ARRAY['bigint', 'text', 'text[]', 'boolean',
	'timestamp with time zone', 'pg_lsn', 'xid8', 'text', 'text', 'boolean', 'text', 'text',
	'boolean', 'text', 'text', 'boolean', 'text']);
SELECT has_function('stripe_restore', ARRAY['text', 'text', 'text[]', 'boolean',
	'timestamp with time zone', 'pg_lsn', 'xid8', 'text', 'text', 'boolean', 'text', 'text',
	'boolean', 'text', 'text', 'boolean', 'boolean', 'text']);
SELECT has_view('stripe_restores');
SELECT has_view('stripe_wal_archive');
SELECT ok(has_table_privilege('pg_monitor', 'stripe_wal_archive', 'SELECT'), 'pg_monitor may watch the WAL archive');
SELECT has_view('stripe_restore_stripes');
SELECT has_view('stripe_backup_progress');
SELECT has_view('stripe_throughput');
SELECT has_view('stripe_backup_timeline');
SELECT has_function('stripe_calibrate', ARRAY['text[]', 'integer', 'integer', 'integer', 'boolean', 'boolean']);
SELECT has_function('stripe_expire', ARRAY['integer', 'interval', 'interval', 'integer']);
SELECT has_function('stripe_keep', ARRAY['bigint', 'boolean', 'text']);
SELECT has_function('stripe_rebuild', ARRAY['bigint', 'text', 'text']);
SELECT ok(has_table_privilege('pg_monitor', 'stripe_backup_progress', 'SELECT')
	AND has_function_privilege('pg_monitor', 'stripebackup_progress()', 'EXECUTE'),
	'pg_monitor may watch stripe_backup_progress');
SELECT has_view('stripe_backups');
SELECT has_view('stripe_backup_stripes');
SELECT columns_are('stripe_backups', ARRAY['id', 'name', 'label', 'status', 'type', 'parent_id', 'merged_from', 'encrypted', 'started_at',
	'finished_at', 'duration', 'destinations', 'weights', 'compression', 'compression_level',
	'balance', 'files', 'bytes_read', 'bytes_written', 'mb_per_s', 'start_lsn', 'stop_lsn',
	'timeline', 'error', 'sqlstate', 'location', 'requested_by', 'backup_uuid', 'kept', 'note',
	'redundancy', 'parity_bytes', 'parity_overhead_pct', 'incremental_method', 'from_standby']);
SELECT columns_are('stripe_backup_stripes', ARRAY['backup_id', 'stripe', 'destination',
	'location', 'weight', 'chunks', 'raw_bytes', 'stored_bytes', 'seconds', 'data_mb_per_s',
	'stored_mb_per_s']);
SELECT columns_are('stripe_backup_progress', ARRAY['kind', 'id', 'phase', 'scope', 'stripe', 'location',
	'bytes_done', 'bytes_total', 'percent', 'stored_bytes', 'data_mb_per_s', 'stored_mb_per_s',
	'recent_data_mb_per_s', 'queue_depth', 'eta_seconds', 'updated_at', 'elapsed_seconds']);
SELECT columns_are('stripe_backup_timeline', ARRAY['backup_id', 'stripe', 'seconds', 'stored_bytes',
	'mb_per_s']);
SELECT has_function('stripe_check', ARRAY['interval', 'boolean']);
SELECT is((SELECT pg_get_function_arguments('stripe_check(interval,boolean)'::regprocedure)),
	'timeout interval DEFAULT ''00:01:00''::interval, raise boolean DEFAULT false, OUT "check" text, OUT ok boolean, OUT detail text, OUT hint text, OUT severity text',
	'stripe_check: waits a minute for the archive, raises nothing; a row per check (check, ok, detail, hint, severity)');
SELECT ok(NOT has_function_privilege('public', 'stripe_check(interval,boolean)', 'EXECUTE'),
	'PUBLIC may not run stripe_check (it writes a file into each destination)');
SELECT columns_are('stripe_health', ARRAY['last_backup_id', 'last_backup_type', 'last_backup_finished_at',
	'last_backup_age_seconds', 'last_full_age_seconds', 'last_diff_age_seconds', 'last_incr_age_seconds',
	'last_backup_failed', 'failures_since_last_completed', 'last_failure_id', 'last_failure_at',
	'last_failure_sqlstate', 'last_failure_error', 'archive_lag_segments', 'archive_lag_seconds']);
SELECT ok(has_table_privilege('pg_monitor', 'stripe_health', 'SELECT')
	AND has_function_privilege('pg_monitor', 'stripe_archive_lag()', 'EXECUTE'),
	'pg_monitor may read stripe_health');
SELECT is((SELECT count(*) FROM stripe_health), 1::bigint, 'stripe_health: one row, even with no backup');
SELECT is((SELECT string_agg(d.objid::regprocedure::text, ', ')
			FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'stripebackup'
			WHERE d.classid = 'pg_proc'::regclass AND obj_description(d.objid, 'pg_proc') IS NULL), NULL,
	'every function of the extension has a comment');
SELECT is((SELECT string_agg(d.objid::regclass::text, ', ')
			FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'stripebackup'
			JOIN pg_class c ON c.oid = d.objid AND c.relkind = 'v'
			WHERE d.classid = 'pg_class'::regclass AND obj_description(d.objid, 'pg_class') IS NULL), NULL,
	'and every view');
SELECT is((SELECT string_agg(a.attrelid::regclass::text || '.' || a.attname, ', ' ORDER BY a.attrelid::regclass::text, a.attnum)
			FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'stripebackup'
			JOIN pg_class c ON c.oid = d.objid AND c.relkind = 'v'
			JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
			WHERE d.classid = 'pg_class'::regclass AND col_description(c.oid, a.attnum) IS NULL), NULL,
	'and every column of every view');

-- Defaults, as DESIGN.md gives them.
SELECT is((SELECT pg_get_function_arguments('stripe_backup(text[],float8[],text,text,int,text,boolean,text,int)'::regprocedure)),
	'destinations text[], weights double precision[] DEFAULT NULL::double precision[], label text DEFAULT NULL::text, compression text DEFAULT ''zstd''::text, compression_level integer DEFAULT 1, balance text DEFAULT ''adaptive''::text, wait boolean DEFAULT true, type text DEFAULT ''full''::text, redundancy integer DEFAULT NULL::integer',
	'stripe_backup defaults: zstd level 1, adaptive balance, wait, full');
SELECT is((SELECT pg_get_function_arguments('stripe_merge(bigint,text[],float8[],text,text,int,text,boolean,int)'::regprocedure)),
	'backup bigint, destinations text[] DEFAULT NULL::text[], weights double precision[] DEFAULT NULL::double precision[], label text DEFAULT NULL::text, compression text DEFAULT ''zstd''::text, compression_level integer DEFAULT 1, balance text DEFAULT ''adaptive''::text, wait boolean DEFAULT true, redundancy integer DEFAULT NULL::integer',
	'stripe_merge defaults: the chain''s destinations, zstd level 1, adaptive balance, wait');

-- EXECUTE is not for PUBLIC.
SELECT ok(NOT has_function_privilege('public', 'stripe_backup(text[],float8[],text,text,int,text,boolean,text,int)', 'EXECUTE'),
	'PUBLIC may not run stripe_backup');
SELECT ok(NOT has_function_privilege('public', 'stripe_merge(bigint,text[],float8[],text,text,int,text,boolean,int)', 'EXECUTE'),
	'PUBLIC may not run stripe_merge');
SELECT ok(NOT has_function_privilege('public', 'stripe_cancel(bigint)', 'EXECUTE'),
	'PUBLIC may not run stripe_cancel');
SELECT ok(NOT has_table_privilege('public', 'stripe_backup_history', 'SELECT'),
	'PUBLIC may not read the history table');
SELECT ok(NOT has_function_privilege('public', 'stripe_restore(bigint,text,text[],boolean,timestamptz,pg_lsn,xid8,text,text,boolean,text,text,boolean,text,text,boolean,text)', 'EXECUTE'),
	'PUBLIC may not run stripe_restore');
SELECT ok(NOT has_function_privilege('public', 'stripe_verify(text, boolean)', 'EXECUTE'),
	'PUBLIC may not run stripe_verify');
SELECT ok(has_table_privilege('pg_monitor', 'stripe_restores', 'SELECT'), 'pg_monitor may read stripe_restores');
SELECT ok(has_table_privilege('pg_monitor', 'stripe_backups', 'SELECT'), 'pg_monitor may read stripe_backups');
SELECT ok(has_table_privilege('pg_monitor', 'stripe_backup_stripes', 'SELECT'),
	'pg_monitor may read stripe_backup_stripes');

-- Bad arguments: each an error with its SQLSTATE, naming the value.
SELECT throws_ok($$SELECT stripe_backup(ARRAY[]::text[])$$, '22023', 'destinations must not be empty');
SELECT throws_ok($$SELECT stripe_backup(NULL)$$, '22004', 'destinations must not be NULL');
SELECT throws_ok($$SELECT stripe_merge(NULL)$$, '22004', 'backup must not be NULL');
SELECT throws_like($$SELECT stripe_merge(987654)$$, 'there is no completed backup 987654');
SELECT throws_ok($$SELECT stripe_backup(ARRAY['not/absolute'])$$, '22023',
	'destination "not/absolute" is not an absolute path');
SELECT throws_like($$SELECT stripe_backup(ARRAY['/tmp', '/tmp'])$$, '%are the same folder');
SELECT throws_like($$SELECT stripe_backup(ARRAY['/', '/tmp'])$$, '%');
SELECT throws_like(format('SELECT stripe_backup(ARRAY[%L])', current_setting('data_directory') || '/global'),
	'%is inside the data directory%');
SELECT throws_ok($$SELECT stripe_backup(ARRAY['/tmp'], weights => ARRAY[1, 2])$$, '22023',
	'2 weights given for 1 destinations');
SELECT throws_like($$SELECT stripe_backup(ARRAY['/tmp'], weights => ARRAY[0])$$, '%is not a positive number');
SELECT throws_like($$SELECT stripe_backup(ARRAY['/tmp'], weights => ARRAY['-Infinity'::float8])$$,
	'%is not a positive number');
SELECT throws_ok($$SELECT stripe_backup(ARRAY['/tmp'], compression => 'gzip')$$, '22023',
	'unknown compression "gzip"');
SELECT throws_ok($$SELECT stripe_backup(ARRAY['/tmp'], balance => 'even')$$, '22023',
	'unknown balance "even"');

-- Privileges: EXECUTE is not enough without both server-file roles.
CREATE ROLE sb_plain;
CREATE ROLE sb_reader IN ROLE pg_read_server_files;
CREATE ROLE sb_monitor IN ROLE pg_monitor;
GRANT EXECUTE ON FUNCTION stripe_backup(text[], float8[], text, text, int, text, boolean, text, int) TO sb_plain, sb_reader;
CREATE ROLE sb_nogrant IN ROLE pg_read_server_files, pg_write_server_files;
SET ROLE sb_plain;
SELECT throws_ok($$SELECT stripe_backup(ARRAY['/tmp'])$$, '42501', 'permission denied to take a backup');
RESET ROLE;
SET ROLE sb_reader;
SELECT throws_ok($$SELECT stripe_backup(ARRAY['/tmp'])$$, '42501', 'permission denied to take a backup');
RESET ROLE;
GRANT EXECUTE ON FUNCTION stripe_restore(text, text, text[], boolean, timestamptz, pg_lsn, xid8,
	text, text, boolean, text, text, boolean, text, text, boolean, boolean, text), stripe_verify(text, boolean)
	TO sb_plain, sb_reader;
SET ROLE sb_reader;
SELECT throws_ok($$SELECT stripe_restore('/nowhere', '/tmp/x')$$, '42501', 'permission denied to restore a backup');
SELECT throws_like($$SELECT * FROM stripe_verify('/nowhere')$$, '%no manifest.json in "/nowhere"%',
	'pg_read_server_files is enough to verify (here: a folder without a backup)');
RESET ROLE;
SET ROLE sb_plain;
SELECT throws_ok($$SELECT * FROM stripe_verify('/nowhere')$$, '42501', 'permission denied to verify a backup');
RESET ROLE;
SELECT throws_ok($$SELECT stripe_restore(4242, '/tmp/x')$$, 'P0002', 'there is no completed backup 4242');
SELECT throws_ok($$SELECT stripe_restore('relative/place', '/tmp/x')$$, '22023',
	'location "relative/place" is neither an absolute path nor s3://bucket/prefix');
SET ROLE sb_nogrant;
SELECT throws_ok($$SELECT stripe_backup(ARRAY['/tmp'])$$, '42501',
	'permission denied for function stripe_backup');
RESET ROLE;
SET ROLE sb_monitor;
SELECT lives_ok($$SELECT * FROM stripe_backups$$, 'a pg_monitor member reads stripe_backups');
SELECT throws_ok($$SELECT * FROM stripe_backup_history$$, '42501', NULL,
	'but not the table behind it');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
