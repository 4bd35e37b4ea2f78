# max_worker_processes exhausted: stripe_backup() fails with an error that
# names the setting, and creates nothing (no history row, no folder, no WAL
# slot).  With a slot free again, the next backup completes.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

# Two slots: one kept by stripebackup's own start-up worker (registered at
# start, it keeps its slot to run again after a crash), one by PostgreSQL's
# logical replication launcher, which runs all the time.
my $node = backup_node('primary', conf => 'max_worker_processes = 2');
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'logical replication launcher'"),
	'the logical replication launcher takes the last worker slot');
my @dests = make_destinations(2);

for my $wait ('true', 'false')
{
	my ($ret, $out, $err) = $node->psql('postgres',
		'SELECT stripe_backup(' . sql_array(@dests) . ", wait => $wait)");
	isnt($ret, 0, "with no worker slot free, stripe_backup(wait => $wait) fails");
	like($err, qr/ERROR:  could not start a backup worker: no background worker slot is free/,
		'the error says why');
	like($err, qr/HINT:  You may need to increase "max_worker_processes"/, 'and names the setting');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM stripe_backup_history'), '0', 'no history row');
	is(join(' ', map { folder_entries($_) } @dests), '', 'no folder in any destination');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_replication_slots'), '0', 'no WAL slot');
}
ok($node->log_contains(qr/stripebackup: could not check for backups left running: no background worker slot is free/),
	'the start-up check also says it found no slot');

$node->append_conf('postgresql.conf', 'max_worker_processes = 4');
$node->restart;
check_next_backup($node, @dests);
$node->stop;
done_testing();
