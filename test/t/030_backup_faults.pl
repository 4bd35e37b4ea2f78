# Faults during a backup that the server survives: a destination that fills
# up, a destination removed mid-way, SIGTERM to the backup worker.  Each
# leaves the history row failed or cancelled with the reason, no partial
# files in any destination, no WAL slot, and the next backup completes.
use strict;
use warnings;

use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use Time::HiRes qw(time);

# Buffers enough to hold what a spread checkpoint writes slowly, below.
my $node = backup_node('primary', conf => "shared_buffers = 32MB\nbgwriter_lru_maxpages = 0");
load_slow_data($node);
my @dests = make_destinations(2);

sub wait_until_finished
{
	my ($id) = @_;
	$node->poll_query_until('postgres',
		"SELECT status <> 'running' FROM stripe_backup_history WHERE id = $id")
	  or die "backup $id does not finish";
}

# SIGTERM to the worker (pg_terminate_backend): stopped cleanly, cancelled.
my $id = start_slow_backup($node, @dests);
my $pid = worker_pid($node);
wait_for_stripe($node, $id, $dests[0], 1);
is($node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)"), 't', 'SIGTERM sent to the backup worker');
wait_until_finished($id);
check_backup_cleaned_up($node, $id, 'cancelled', qr/asked to terminate/, @dests);
check_next_backup($node, @dests);

# SIGTERM while the worker waits in PostgreSQL's code for a spread start
# checkpoint (100 ms per dirty buffer, half a minute here): the wait is cancelled
# at once.  (A checkpoint that invalidates the backup's WAL slot sends this
# SIGTERM and waits for the slot: a worker that went on waiting would block
# both.)  The next backup's immediate checkpoint hurries the spread one.
$node->safe_psql('postgres', 'VACUUM slow');	# hint bits set: the scan below dirties nothing
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql('postgres', 'UPDATE slow SET g = g WHERE g <= 10000');
$id = $node->safe_psql('postgres', 'SET stripebackup.fast_checkpoint = off; SELECT stripe_backup('
	  . sql_array(@dests) . ', wait => false)');
$pid = worker_pid($node);
ok($node->poll_query_until('postgres',
		"SELECT wait_event = 'CheckpointDone' FROM pg_stat_activity WHERE pid = $pid"),
	'the worker waits for its spread start checkpoint');
my $log_offset = -s $node->logfile;
my $t0 = time;
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
wait_until_finished($id);
my $took = time - $t0;
ok(!$node->log_contains(qr/checkpoint complete/, $log_offset),
	"the backup stopped in ${took}s, without waiting for the checkpoint to end");
check_backup_cleaned_up($node, $id, 'cancelled', qr/asked to terminate/, @dests);
check_next_backup($node, @dests);

# A destination removed while the backup writes to it.
$id = start_slow_backup($node, @dests);
wait_for_stripe($node, $id, $dests[1], 2);
rmtree($dests[1]);
ok(!-e $dests[1], "destination $dests[1] removed mid-way");
wait_until_finished($id);
note($node->safe_psql('postgres', "SELECT status, error FROM stripe_backup_history WHERE id = $id"));
check_backup_cleaned_up($node, $id, 'failed', qr/\Q$dests[1]\E/, @dests);
mkdir $dests[1] or die;
check_next_backup($node, @dests);

# A destination removed while a backup with redundancy 1 writes to it: the
# backup fails as any other does (DECISIONS.md: a backup is never recorded
# with less redundancy than asked), its other destinations cleaned up.
my @three = make_destinations(3);
$id = $node->safe_psql('postgres', 'SET stripebackup.max_rate = 4; SELECT stripe_backup('
	  . sql_array(@three) . ", compression => 'none', redundancy => 1, wait => false)");
wait_for_stripe($node, $id, $three[2], 2);
rmtree($three[2]);
ok(!-e $three[2], "destination $three[2] of a backup with redundancy 1 removed mid-way");
wait_until_finished($id);
check_backup_cleaned_up($node, $id, 'failed', qr/\Q$three[2]\E/, @three);
mkdir $three[2] or die;

# A destination that fills up: a 40 MB tmpfs that root mounted for the tests
# (test/run-all.sh), given three quarters of 74 MB.
SKIP:
{
	my $small = $ENV{SB_TEST_SMALL_FS};
	skip 'SB_TEST_SMALL_FS (a small file system to fill) is not set', 8
	  unless $small && -d $small && -w $small;
	my $full = "$small/030-backup";
	rmtree($full);
	mkdir $full or die "mkdir $full: $!";
	my ($ret, $out, $err) = $node->psql('postgres', 'SELECT stripe_backup('
		  . sql_array($full, $dests[0]) . ", weights => ARRAY[3, 1], balance => 'weighted', compression => 'none')");
	note($err);
	isnt($ret, 0, 'a backup that fills its destination fails');
	like($err, qr/No space left on device/, 'the caller is told the device is full');
	$id = $node->safe_psql('postgres', 'SELECT max(id) FROM stripe_backup_history');
	check_backup_cleaned_up($node, $id, 'failed', qr/No space left on device/, $full, @dests);
	rmtree($full);
}
check_next_backup($node, @dests);

$node->stop;
done_testing();
