-- What a DBA sees when stripe_backup() is given bad arguments: a clear
-- error naming the value, and nothing created.
CREATE EXTENSION stripebackup;
COPY (SELECT 1) TO PROGRAM 'mkdir -p /tmp/stripebackup-regress/a/inner /tmp/stripebackup-regress/b';
SELECT stripe_backup(NULL);
SELECT stripe_backup(ARRAY[]::text[]);
SELECT stripe_backup(ARRAY['/tmp/stripebackup-regress/a', NULL]);
SELECT stripe_backup(ARRAY['relative/dir']);
SELECT stripe_backup(ARRAY['/tmp/stripebackup-regress/missing']);
SELECT stripe_backup(ARRAY['/tmp/stripebackup-regress/a', '/tmp/stripebackup-regress/a/']);
SELECT stripe_backup(ARRAY['/tmp/stripebackup-regress/a', '/tmp/stripebackup-regress/a/inner']);
SELECT stripe_backup(ARRAY['/tmp/stripebackup-regress/a', '/tmp/stripebackup-regress/b'], weights => ARRAY[1]);
SELECT stripe_backup(ARRAY['/tmp/stripebackup-regress/a', '/tmp/stripebackup-regress/b'], weights => ARRAY[1, 0]);
SELECT stripe_backup(ARRAY['/tmp/stripebackup-regress/a', '/tmp/stripebackup-regress/b'], weights => ARRAY[1, -2]);
SELECT stripe_backup(ARRAY['/tmp/stripebackup-regress/a', '/tmp/stripebackup-regress/b'], weights => ARRAY[1, 'NaN']::float8[]);
SELECT stripe_backup(ARRAY['/tmp/stripebackup-regress/a'], compression => 'lz4');
SELECT stripe_backup(ARRAY['/tmp/stripebackup-regress/a'], compression_level => 99);
SELECT stripe_backup(ARRAY['/tmp/stripebackup-regress/a'], balance => 'random');
-- A destination inside the data directory (its path varies, so it is masked).
DO $$
BEGIN
	PERFORM stripe_backup(ARRAY[current_setting('data_directory') || '/base']);
EXCEPTION WHEN OTHERS THEN
	RAISE NOTICE '%', replace(SQLERRM, current_setting('data_directory'), 'PGDATA');
END $$;
-- Nothing was created.
SELECT count(*) AS backups FROM stripe_backups;
SELECT count(*) AS slots FROM pg_replication_slots;
SELECT pg_ls_dir AS left_behind FROM pg_ls_dir('/tmp/stripebackup-regress/a') WHERE pg_ls_dir <> 'inner'
UNION ALL SELECT pg_ls_dir('/tmp/stripebackup-regress/b');
SELECT stripe_cancel(4242);
COPY (SELECT 1) TO PROGRAM 'rm -rf /tmp/stripebackup-regress';
