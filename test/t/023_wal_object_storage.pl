# The WAL archive in a bucket beside a local folder (s3rver, test/s3): the
# server's archiver puts segments in both under pgbench load; the command
# lists and verifies the archive, reads a segment back, and tells a bucket
# that does not exist from a segment that is not there; a point-in-time
# restore from SQL writes a restore_command that reaches the bucket (the
# settings as variables, no secret), and the copy recovers to the time
# target through it; retention removes the old WAL from the bucket too;
# against radosgw, the archiver with a wrong secret names SignatureDoesNotMatch.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SbS3;
use StripeBackupTest;
use Test::More;
use Time::HiRes qw(usleep);

my $s3 = SbS3::start(buckets => ['bk1']);
diag("S3 server: " . $s3->kind);
my $secret = 'sb-wal-secret-1a2b3c4d';    # s3rver checks no signature; radosgw is given it
my $conf_dir = PostgreSQL::Test::Utils::tempdir();
# The command reads the same server and keys from the environment.
my $credentials = $s3->use_credentials($conf_dir, $secret);

my ($local) = make_destinations(1);
my $bucket = 's3://bk1/pg/main';
my $archive_conf = "archive_mode = on\narchive_library = 'stripebackup'\n"
  . "stripebackup.archive_destinations = '$local, $bucket'\n"
  . "stripebackup.s3_endpoint = '" . $s3->endpoint . "'\n"
  . "stripebackup.s3_credentials_file = '$credentials'\n";
my $node = backup_node('primary', conf => $archive_conf);
my $sysid = $node->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
$node->command_ok([ 'pgbench', '-i', '-s', '2', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');
$node->safe_psql('postgres', 'CREATE TABLE marks (n int, at timestamptz DEFAULT clock_timestamp())');
my @dests = make_destinations(2);
my $backup = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');

my $fingerprint = 'SELECT (SELECT sum(abalance) FROM pgbench_accounts) || \'/\' || '
  . '(SELECT count(*) FROM marks) || \'/\' || (SELECT coalesce(max(n), 0) FROM marks)';
sub load
{
	$node->command_ok([ 'pgbench', '-n', '-t', '300', '-c', '2', '-p', $node->port, '-h', $node->host,
			'postgres' ], 'pgbench writes');
	$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
}
load();
$node->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (1)');
my $time = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
my $expected = $node->safe_psql('postgres', $fingerprint);
usleep(200_000);
load();
$node->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (2)');
wait_for_archive($node);

is($node->safe_psql('postgres', 'SELECT failed_count FROM pg_stat_archiver'), '0', 'no archiving failed');
my @objects = $s3->list_objects('bk1', "pg/main/wal/$sysid/");
my @files = glob("$local/wal/$sysid/*.sbw");
cmp_ok(scalar(@objects), '>=', 1, 'the bucket holds archived segments (' . scalar(@objects) . ')');
cmp_ok(scalar(@files), '>=', 1, 'so does the folder (' . scalar(@files) . ')');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM stripe_wal_archive WHERE destination = '$bucket' AND files > 0"),
	'1', 'stripe_wal_archive counts the bucket\'s files');

# The command: list, verify, and a segment read back from the bucket.
my @archive = ('--archive', "$local,$bucket", '--system-identifier', $sysid);
my ($rc, $out, $err) = run_stripebackup('wal-list', @archive);
is($rc, 0, 'wal-list reads the folder and the bucket') or diag($err);
like($out, qr/\Q$bucket\E/, 'naming the bucket as a destination');
($rc, $out, $err) = run_stripebackup('wal-verify', @archive);
is($rc, 0, 'wal-verify reads every file whole, the bucket\'s too') or diag("$out\n$err");
(my $in_bucket = $objects[0]) =~ s{.*/([^/]+)\.sbw$}{$1};
my $got = "$conf_dir/$in_bucket";
($rc, $out, $err) = run_stripebackup('wal-get', @archive, $in_bucket, $got);
is($rc, 0, "wal-get restores $in_bucket from the bucket") or diag($err);
is(-s $got, 16 * 1024 * 1024, 'a whole segment');
($rc, $out, $err) = run_stripebackup('wal-get', @archive, '0000000100000000000000FE', "$conf_dir/fe");
is($rc, 1, 'a segment that is not there: exit status 1 (recovery ends)');
($rc, $out, $err) = run_stripebackup('wal-get', '--archive', "$local,s3://no-such-bucket/pg",
	'--system-identifier', $sysid, '0000000100000000000000FE', "$conf_dir/fe");
isnt($rc, 1, 'a bucket that does not exist is not "not there" (recovery must not end on it)');
like($err, qr/NoSuchBucket/, 'saying why: ' . ($err =~ s/\n.*//sr));

# Point-in-time restore from SQL: restore_command reaches the bucket as the server does.
my $copy = PostgreSQL::Test::Cluster->new('at_time');
my $id = $node->safe_psql('postgres',
	"SELECT stripe_restore(target_dir => '" . $copy->data_dir . "', target_time => '$time')");
is($node->safe_psql('postgres', "SELECT status FROM stripe_restores WHERE id = $id"), 'completed', 'restored');
my $auto = slurp_file($copy->data_dir . '/postgresql.auto.conf');
like($auto, qr/restore_command = '.*AWS_ENDPOINT_URL=.*AWS_SHARED_CREDENTIALS_FILE=.*wal-get.*\Q$bucket\E/,
	'restore_command carries the S3 settings to the command');
unlike($auto, qr/\Q$secret\E/, 'and no secret');
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port . "\narchive_mode = off");
{
	# The copy's server has no S3 variable of its own: only restore_command's reach the bucket.
	local @ENV{qw(AWS_ENDPOINT_URL AWS_SHARED_CREDENTIALS_FILE)};
	delete @ENV{qw(AWS_ENDPOINT_URL AWS_SHARED_CREDENTIALS_FILE)};
	$copy->start;
}
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the copy did not promote';
is($copy->safe_psql('postgres', $fingerprint), $expected, 'PITR through the bucket: the cluster as it was then');
$copy->stop;

# Retention: a backup newer than the first one makes the WAL before it removable, the bucket's too.
my $before = scalar($s3->list_objects('bk1', "pg/main/wal/$sysid/"));
$node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
$node->safe_psql('postgres', "SELECT * FROM stripe_expire(keep_last => 1)");
my $after = scalar($s3->list_objects('bk1', "pg/main/wal/$sysid/"));
cmp_ok($after, '<', $before, "stripe_expire removes old WAL from the bucket ($before objects, then $after)");

# The archiver with a wrong secret (a server that checks signatures refuses
# it; s3rver takes any): the WAL is not archived, and the server log names
# SignatureDoesNotMatch.  Only the bucket as destination meanwhile, so that
# nothing goes to the folder instead.
SKIP:
{
	skip 's3rver checks no signature (SB_TEST_S3_SERVER=radosgw does)', 4 unless $s3->verifies_signatures;
	my $wrong = SbS3::write_credentials("$conf_dir/wrong-credentials", $s3->key_id_for($secret),
		'not-the-wal-secret-9c8b');
	my $failed = $node->safe_psql('postgres', 'SELECT failed_count FROM pg_stat_archiver');
	my $log_at = -s $node->logfile;
	$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.archive_destinations = '$bucket'");
	$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.s3_credentials_file = '$wrong'");
	$node->reload;
	$node->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (3); SELECT pg_switch_wal()');
	ok($node->poll_query_until('postgres', "SELECT failed_count > $failed FROM pg_stat_archiver"),
		'with a wrong secret the archiver fails');
	my $log = substr(slurp_file($node->logfile), $log_at);
	like($log, qr/WARNING: .*HTTP 403 SignatureDoesNotMatch/, 'and says SignatureDoesNotMatch')
	  or diag($log);
	unlike($log, qr/not-the-wal-secret/, 'without the secret');
	$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.s3_credentials_file = '$credentials'");
	$node->reload;
	my $segment = archived_segment_target($node);
	ok($node->poll_query_until('postgres', "SELECT last_archived_wal >= '$segment' FROM pg_stat_archiver"),
		'with the right one again it catches up');
}
unlike(slurp_file($node->logfile), qr/\Q$secret\E/, 'the secret key is not in the server log');

$node->stop;
$s3->stop;
done_testing();
