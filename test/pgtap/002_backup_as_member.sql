-- A role that holds pg_read_server_files and pg_write_server_files, and was
-- granted EXECUTE, takes a backup; its row says who asked.
\set ON_ERROR_STOP 1
\set QUIET 1
SET client_min_messages TO warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS stripebackup;
COPY (SELECT 1) TO PROGRAM 'mkdir -p /tmp/stripebackup-pgtap/one /tmp/stripebackup-pgtap/two';
CREATE ROLE sb_operator IN ROLE pg_read_server_files, pg_write_server_files;
GRANT EXECUTE ON FUNCTION stripe_backup(text[], float8[], text, text, int, text, boolean, text, int) TO sb_operator;
GRANT SELECT ON stripe_backups TO sb_operator;
GRANT EXECUTE ON FUNCTION stripe_restore_plan(bigint, boolean, timestamptz, pg_lsn, xid8, text, text, boolean, text, text, text, text[], text), stripe_verify(bigint) TO sb_operator;
SELECT plan(6);
SET ROLE sb_operator;
SELECT lives_ok($$SELECT stripe_backup(ARRAY['/tmp/stripebackup-pgtap/one', '/tmp/stripebackup-pgtap/two'],
	label => 'by an operator', compression => 'none')$$, 'a member of both roles takes a backup');
SELECT is((SELECT status FROM stripe_backups WHERE label = 'by an operator'), 'completed', 'it completed');
SELECT is((SELECT requested_by::text FROM stripe_backups WHERE label = 'by an operator'), 'sb_operator',
	'the history says who asked');
SELECT is((SELECT compression FROM stripe_backups WHERE label = 'by an operator'), 'none',
	'with the compression asked for');
SELECT is((SELECT count(*)::int FROM stripe_verify((SELECT id FROM stripe_backups WHERE label = 'by an operator'))),
	0, 'the operator verifies it by id (the history is read for the operator)');
SELECT is((SELECT count(*)::int FROM stripe_restore_plan((SELECT id FROM stripe_backups WHERE label = 'by an operator'))),
	3, 'and plans its restore: two stripes and the total');
RESET ROLE;
SELECT * FROM finish();
COPY (SELECT 1) TO PROGRAM 'rm -rf /tmp/stripebackup-pgtap';
DROP OWNED BY sb_operator;
DROP ROLE sb_operator;
