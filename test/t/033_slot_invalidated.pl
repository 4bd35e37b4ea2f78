# The backup's WAL slot invalidated by max_slot_wal_keep_size: while a slow
# backup runs, the server writes more WAL than the setting lets a slot keep
# and a checkpoint invalidates the slot.  The backup fails, saying the WAL
# it needed is no longer kept; it leaves nothing behind, and the next backup
# completes.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

# 1 MB WAL segments, so that a few MB of WAL pass the limit.
my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init(extra => [ '--data-checksums', '--wal-segsize=1' ], allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'stripebackup'
max_slot_wal_keep_size = 4MB
min_wal_size = 4MB
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION stripebackup');
load_slow_data($node);
$node->safe_psql('postgres', 'CREATE TABLE churn (id int, v text)');
my @dests = make_destinations(2);

# True once FILE holds at least BYTES.
sub wait_for_file
{
	my ($file, $bytes) = @_;
	for (1 .. $PostgreSQL::Test::Utils::timeout_default * 10)
	{
		return 1 if -e $file && -s $file >= $bytes;
		select(undef, undef, undef, 0.1);
	}
	return 0;
}

my $id = $node->safe_psql('postgres', 'SET stripebackup.max_rate = 3; SELECT stripe_backup('
	  . sql_array(@dests) . ", compression => 'none', wait => false)");
worker_pid($node);
my $log_offset = -s $node->logfile;

# Loading the data wrote 40 MB of WAL since the last checkpoint: the slot
# keeps WAL from the backup's start checkpoint, not from that one, so the
# start checkpoint leaves it valid.
my $name = $node->safe_psql('postgres', "SELECT name FROM stripe_backup_history WHERE id = $id");
ok(wait_for_file("$dests[0]/$name/stripe-1.sbs", 1024 * 1024), 'the backup is past its start checkpoint');
is($node->safe_psql('postgres', "SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'stripebackup_$id'"),
	'reserved', 'its WAL slot is valid and within max_slot_wal_keep_size');
# About 16 MB of WAL, then a checkpoint: the slot falls behind by more than 4 MB.
$node->safe_psql('postgres', q{
	INSERT INTO churn SELECT g, md5(g::text) FROM generate_series(1, 200000) g;
	SELECT pg_switch_wal();
	CHECKPOINT;
});
$node->poll_query_until('postgres', "SELECT status <> 'running' FROM stripe_backup_history WHERE id = $id")
  or die "backup $id does not finish";
note($node->safe_psql('postgres', "SELECT status, error FROM stripe_backup_history WHERE id = $id"));
ok($node->log_contains(qr/terminating process \d+ to release replication slot "stripebackup_$id"|invalidating slot "stripebackup_$id"/,
		$log_offset), 'the checkpoint invalidated the backup\'s slot');
check_backup_cleaned_up($node, $id, 'failed',
	qr/stripebackup_$id.*max_slot_wal_keep_size/, @dests);
check_next_backup($node, @dests);
$node->stop;
done_testing();
