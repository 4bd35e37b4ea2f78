# An online backup from SQL while pgbench writes, striped 1:2:3, restored
# with the command: the copy starts with nothing else to do, pgbench's
# invariant holds in it, pg_amcheck finds nothing, pg_verifybackup passes.
use strict;
use warnings;

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary');
$node->command_ok([ 'pgbench', '-i', '-s', '5', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');

# pgbench writes from before the backup starts until after it ends.
my ($out, $err) = ('', '');
my $pgbench = IPC::Run::start(
	[ 'pgbench', '-c', '2', '-T', '600', '-n', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'>', \$out, '2>', \$err);
$node->poll_query_until('postgres', 'SELECT count(*) > 100 FROM pgbench_history')
  or die 'pgbench does not write';

my @dests = make_destinations(3);
my $id = $node->safe_psql('postgres',
	'SELECT stripe_backup(' . sql_array(@dests) . ", weights => ARRAY[1,2,3], label => 'under load')");
my $during = $node->safe_psql('postgres', 'SELECT count(*) FROM pgbench_history');
$node->poll_query_until('postgres', "SELECT count(*) > $during FROM pgbench_history")
  or die 'pgbench stopped writing during the backup';
# TERM, not INT: a test suite started in the background of a shell
# without job control has SIGINT ignored, and pgbench inherits that.
$pgbench->signal('TERM');
$pgbench->finish;

my $row = $node->safe_psql('postgres',
	"SELECT status, label, weights, array_length(destinations, 1), start_lsn < stop_lsn FROM stripe_backups WHERE id = $id");
is($row, 'completed|under load|{1,2,3}|3|t', 'the history row says completed, with LSNs');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_backup_stripes WHERE backup_id = $id"),
	'3', 'one stripe row per destination');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_replication_slots"), '0',
	'the temporary WAL slot is gone');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'stripebackup'"),
	'0', 'the backup worker has exited');

my $location = backup_location($node, $id);
(my $rc, $out) = run_stripebackup('verify', $location);
is($rc, 0, 'the stripebackup command verifies the backup');

my $manifest = decode_json(slurp_file("$location/manifest.json"));
is($manifest->{metadata}{kind}, 'postgresql', 'the manifest describes the cluster');
my %paths = map { ($_->{path} // '') => $_ } @{ $manifest->{entries} };
ok($paths{'backup_label'}, 'backup_label is in the backup');
ok($paths{'backup_manifest'}, "PostgreSQL's backup_manifest is in the backup");
ok($paths{'global/pg_control'}, 'pg_control is in the backup');
ok((grep { /^pg_wal\/[0-9A-F]{24}$/ } keys %paths) >= 1, 'WAL segments are in the backup');
ok(!$paths{'postmaster.pid'}, 'postmaster.pid is not');

my $copy = restore_node('copy', $location);
$copy->start;
is(pgbench_invariant($copy), 't', "pgbench's invariant holds in the copy");
cmp_ok($copy->safe_psql('postgres', 'SELECT count(*) FROM pgbench_history'), '>', 0,
	'the copy holds transactions made during the backup');
$copy->command_ok([ 'pg_amcheck', '--install-missing', '--heapallindexed', '--all',
	'-p', $copy->port, '-h', $copy->host ], 'pg_amcheck finds nothing in the copy');
$copy->stop;
$node->stop;
done_testing();
