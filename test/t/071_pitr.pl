# Point-in-time recovery through the WAL archive, under pgbench load: a
# restore to a time, an LSN, an xid and a named restore point, each started
# and compared with what the cluster held at that moment (a fingerprint
# taken then); the backup chosen by the target alone; then a second
# timeline: a copy promoted writes and archives, and a second copy recovers
# along that timeline to a point after the switch.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use Time::HiRes qw(usleep);

my @archive = make_destinations(2);
my $archive_conf = "archive_mode = on\narchive_library = 'stripebackup'\n"
  . "stripebackup.archive_destinations = '" . join(', ', @archive) . "'\n";
my $node = backup_node('primary', conf => $archive_conf);
$node->command_ok([ 'pgbench', '-i', '-s', '2', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');
$node->safe_psql('postgres', 'CREATE TABLE marks (n int, at timestamptz DEFAULT clock_timestamp())');
my @dests = make_destinations(2);
my $backup = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');

# What the cluster holds: pgbench's balances and the marks.
my $fingerprint = 'SELECT (SELECT sum(abalance) FROM pgbench_accounts) || \'/\' || '
  . '(SELECT count(*) FROM marks) || \'/\' || (SELECT coalesce(max(n), 0) FROM marks)';

sub load
{
	$node->command_ok([ 'pgbench', '-n', '-t', '200', '-c', '2', '-p', $node->port, '-h', $node->host,
			'postgres' ], 'pgbench writes');
}

# Each target after a mark, with the fingerprint the cluster had there.
my %at;
load();
$node->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (1)');
$at{time} = [ $node->safe_psql('postgres', 'SELECT clock_timestamp()'), $node->safe_psql('postgres', $fingerprint) ];
usleep(200_000);
load();
$at{lsn} = [ $node->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (2); SELECT pg_current_wal_insert_lsn()'),
	$node->safe_psql('postgres', $fingerprint) ];
load();
$at{xid} = [ $node->safe_psql('postgres', 'BEGIN; INSERT INTO marks (n) VALUES (3); SELECT pg_current_xact_id(); COMMIT;'),
	$node->safe_psql('postgres', $fingerprint) ];
load();
$node->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (4)');
$at{name} = [ 'before-upgrade', $node->safe_psql('postgres', $fingerprint) ];
$node->safe_psql('postgres', "SELECT pg_create_restore_point('before-upgrade')");
load();
$node->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (5)');
$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
$node->poll_query_until('postgres',
	"SELECT last_archived_wal >= pg_walfile_name(pg_current_wal_lsn() - 1) FROM pg_stat_archiver")
  or die 'the archive does not catch up';

# Restore COPY to TARGET (SQL arguments), start it, and compare.
sub restored_fingerprint
{
	my ($name, $args, $archiving) = @_;
	my $copy = PostgreSQL::Test::Cluster->new($name);
	my $id = $node->safe_psql('postgres', "SELECT stripe_restore(target_dir => '" . $copy->data_dir . "', $args)");
	is($node->safe_psql('postgres', "SELECT status FROM stripe_restores WHERE id = $id"), 'completed',
		"$name: restored");
	ok(-e $copy->data_dir . '/recovery.signal', "$name: recovery.signal written");
	# Copies beside the original do not archive into its archive, unless asked.
	$copy->append_conf('postgresql.conf', 'port = ' . $copy->port . ($archiving ? '' : "\narchive_mode = off"));
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "$name did not promote";
	my $got = $copy->safe_psql('postgres', $fingerprint);
	return ($copy, $got);
}

my ($copy, $got) = restored_fingerprint('at_time', "target_time => '$at{time}[0]'");
is($got, $at{time}[1], 'PITR to a time: the cluster as it was then');
$copy->stop;
($copy, $got) = restored_fingerprint('at_lsn', "backup => $backup, target_lsn => '$at{lsn}[0]'");
is($got, $at{lsn}[1], 'PITR to an LSN');
$copy->stop;
($copy, $got) = restored_fingerprint('at_xid', "target_xid => '$at{xid}[0]'");
is($got, $at{xid}[1], 'PITR to an xid (inclusive)');
$copy->stop;
($copy, $got) = restored_fingerprint('at_name', "target_name => '$at{name}[0]'");
is($got, $at{name}[1], 'PITR to a named restore point');
$copy->stop;

# A second timeline: a copy promoted at the time target writes and archives
# on timeline 2; another copy recovers along it to a point after the switch.
($copy, $got) = restored_fingerprint('timeline2', "target_time => '$at{time}[0]'", 1);
is($copy->safe_psql('postgres', "SELECT timeline_id FROM pg_control_checkpoint()"), '2',
	'the promoted copy is on timeline 2');
$copy->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (42)');
my $t2 = $copy->safe_psql('postgres', 'SELECT clock_timestamp()');
my $expected = $copy->safe_psql('postgres', $fingerprint);
usleep(200_000);
$copy->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (43); SELECT pg_switch_wal()');
$copy->poll_query_until('postgres',
	"SELECT last_archived_wal >= pg_walfile_name(pg_current_wal_lsn() - 1) FROM pg_stat_archiver")
  or die 'the copy does not archive';
my ($second, $got2) = restored_fingerprint('along_timeline2', "backup => $backup, target_time => '$t2'");
is($got2, $expected, 'PITR along timeline 2, to a point after the switch');
$second->stop;
$copy->stop;

# A target before every backup, or without an archive: refused, nothing created.
my ($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(target_dir => '/tmp/never', target_time => '2000-01-01')");
like($err, qr/no completed backup can reach the time target/, 'a time before every backup is refused');
ok(!-e '/tmp/never', 'and nothing is created');
$node->stop;
done_testing();
