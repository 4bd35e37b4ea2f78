-- Bad input to the functions that write: each a clear error naming the
-- value, and nothing created.
\set ON_ERROR_STOP 1
\set QUIET 1
SET client_min_messages TO warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS stripebackup;
COPY (SELECT 1) TO PROGRAM 'rm -rf /tmp/stripebackup-badinput && mkdir -p /tmp/stripebackup-badinput/ok /tmp/stripebackup-badinput/locked /tmp/stripebackup-badinput/notempty && touch /tmp/stripebackup-badinput/afile /tmp/stripebackup-badinput/notempty/x && chmod 500 /tmp/stripebackup-badinput/locked';
SELECT count(*) AS backups_before FROM stripe_backups \gset
BEGIN;
SELECT plan(19);
SELECT throws_ok($$SELECT stripe_backup(ARRAY['/tmp/stripebackup-badinput/afile'])$$, '22023',
	'destination "/tmp/stripebackup-badinput/afile" is not a directory', 'a destination that is a file');
SELECT throws_like($$SELECT stripe_backup(ARRAY['/tmp/stripebackup-badinput/locked'])$$,
	'destination "/tmp/stripebackup-badinput/locked" is not writable%', 'a destination that is not writable');
SELECT throws_like($$SELECT * FROM stripe_verify('/tmp/stripebackup-badinput/ok')$$,
	'no manifest.json in "/tmp/stripebackup-badinput/ok"%', 'a location that holds no backup');
SELECT throws_like($$SELECT * FROM stripe_restore_plan('/tmp/stripebackup-badinput/notempty')$$,
	'no manifest.json in%', 'a location that holds another tool''s files');
SELECT throws_ok($$SELECT * FROM stripe_expire(keep_last => -1)$$, '22023', 'keep_last -1 must be at least 1',
	'a negative keep_last');
SELECT throws_ok($$SELECT * FROM stripe_expire(older_than => '-1 day')$$, '22023',
	'older_than "-1 days" must be a positive interval', 'an older_than in the future (every backup older than it)');
SELECT throws_ok($$SELECT * FROM stripe_expire(older_than => '1 month -30 days')$$, '22023',
	'older_than "1 mon -30 days" must be a positive interval', 'an older_than of zero');
SELECT throws_ok($$SELECT * FROM stripe_check(timeout => '0')$$, '22023',
	'timeout "00:00:00" must be a positive interval of at most a day', 'a check that would not wait');
SELECT throws_ok($$SELECT * FROM stripe_check(timeout => '2 days')$$, '22023',
	'timeout "2 days" must be a positive interval of at most a day', 'a check that would wait for days');
SELECT throws_like($$SELECT * FROM stripe_calibrate(ARRAY['/tmp/stripebackup-badinput/ok'], block_kb => 3)$$,
	'block_kb 3 is out of range%', 'a bad calibration block size');
SELECT throws_like($$SELECT * FROM stripe_calibrate(ARRAY['relative'])$$,
	'%"relative" is not an absolute path', 'a relative calibration destination');
SELECT throws_ok($$SELECT stripe_restore('/tmp/stripebackup-badinput/notempty', '/tmp/stripebackup-badinput/ok/c', archive_mode => 'on')$$,
	'22023', 'archive_mode "on" is not "off" or "keep"', 'an archive_mode that is neither off nor keep, named');
SELECT throws_ok($$SELECT stripe_restore(4242, '/tmp/stripebackup-badinput/ok/c', archive_mode => 'always')$$,
	'22023', 'archive_mode "always" is not "off" or "keep"', 'by id too');
SELECT throws_like($$SET stripebackup.frame_size = '18kB'$$,
	'invalid value for parameter "stripebackup.frame_size": 18', 'a frame size that is no multiple of 4kB');
SELECT throws_like($$SET stripebackup.frame_size = '8kB'$$,
	'8 kB is outside the valid range for parameter "stripebackup.frame_size" (16%', 'a frame size below 16kB');
SET stripebackup.buffer_count = 4096;
SET stripebackup.transfer_size = '64MB';
SELECT throws_like($$SELECT stripe_backup(ARRAY['/tmp/stripebackup-badinput/ok'])$$,
	'buffer_count 4096 x transfer_size 64 MB (x2 with compression)%above the limit of 1 GB (stripebackup.max_memory%',
	'settings adding up to more than stripebackup.max_memory, spelled out');
SET stripebackup.max_memory = '100GB';
SELECT throws_like($$SELECT stripe_backup(ARRAY['/tmp/stripebackup-badinput/ok'], compression => 'none')$$,
	'buffer_count 4096 x transfer_size 64 MB (256 GB) + %above the limit of 100 GB%',
	'a higher stripebackup.max_memory is the limit then');
RESET stripebackup.buffer_count;
RESET stripebackup.transfer_size;
RESET stripebackup.max_memory;
SELECT is((SELECT count(*) FROM stripe_backups), :backups_before::bigint, 'no backup was recorded');
SELECT is((SELECT count(*) FROM pg_ls_dir('/tmp/stripebackup-badinput/ok')), 0::bigint,
	'nothing was written in the good folder either');
SELECT * FROM finish();
ROLLBACK;
COPY (SELECT 1) TO PROGRAM 'chmod 700 /tmp/stripebackup-badinput/locked; rm -rf /tmp/stripebackup-badinput';
