# How jobs stop, and what the caller is told: stripe_cancel() during a
# spread start checkpoint stops the backup without waiting for it; the end
# of the session waiting in stripe_backup() (pg_terminate_backend) cancels
# its backup; a caller whose transaction holds a lock the worker needs is
# told so instead of waiting forever, and the backup does not stay running;
# the worker's SQLSTATE, message and hint reach the caller; tablespace
# mappings that overlap the target or each other are refused up front.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use Time::HiRes qw(time);

# Buffers enough to hold what a spread checkpoint writes slowly, below.
my $node = backup_node('primary', conf => "shared_buffers = 32MB\nbgwriter_lru_maxpages = 0");
load_slow_data($node);
my @dests = make_destinations(2);
my $dests = sql_array(@dests);

sub wait_until_finished
{
	my ($id) = @_;
	$node->poll_query_until('postgres',
		"SELECT status <> 'running' FROM stripe_backup_history WHERE id = $id")
	  or die "backup $id does not finish";
}

# stripe_cancel() while the worker waits for a spread start checkpoint (100 ms
# per dirty buffer: half a minute here) ends the wait at once.
$node->safe_psql('postgres', 'VACUUM slow');
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql('postgres', 'UPDATE slow SET g = g WHERE g <= 10000');
my $id = $node->safe_psql('postgres',
	"SET stripebackup.fast_checkpoint = off; SELECT stripe_backup($dests, wait => false)");
my $pid = worker_pid($node);
ok($node->poll_query_until('postgres',
		"SELECT wait_event = 'CheckpointDone' FROM pg_stat_activity WHERE pid = $pid"),
	'the worker waits for its spread start checkpoint');
my $log_offset = -s $node->logfile;
my $t0 = time;
is($node->safe_psql('postgres', "SELECT stripe_cancel($id)"), 't', 'stripe_cancel() accepted');
wait_until_finished($id);
my $took = time - $t0;
ok(!$node->log_contains(qr/checkpoint complete/, $log_offset),
	sprintf('the backup stopped in %.1f s, without waiting for the checkpoint to end', $took));
check_backup_cleaned_up($node, $id, 'cancelled', qr/canceled by stripe_cancel\(\)/, @dests);
is($node->safe_psql('postgres', "SELECT sqlstate FROM stripe_backups WHERE id = $id"), '57014',
	'the history keeps the SQLSTATE of a cancel (query_canceled)');
check_next_backup($node, @dests);

# pg_terminate_backend() on the session waiting in stripe_backup(): its backup stops.
my $waiting = $node->background_psql('postgres');
$waiting->query_until(qr/started/, "\\echo started\nSET stripebackup.max_rate = 4;\n"
	  . "SELECT stripe_backup($dests, compression => 'none');\n");
$pid = worker_pid($node);
$id = $node->safe_psql('postgres', "SELECT max(id) FROM stripe_backup_history");
wait_for_stripe($node, $id, $dests[0], 1);
my $session = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT stripe_backup(%' AND backend_type = 'client backend'");
$node->safe_psql('postgres', "SELECT pg_terminate_backend($session)");
eval { $waiting->quit };
wait_until_finished($id);
check_backup_cleaned_up($node, $id, 'cancelled', qr/session waiting for it was interrupted or ended/, @dests);

# The caller's own lock on the history: an error saying so, not a wait for ever.
my ($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n"
	  . "BEGIN; LOCK TABLE stripe_backup_history IN EXCLUSIVE MODE; SELECT stripe_backup($dests);",
	timeout => $PostgreSQL::Test::Utils::timeout_default);
isnt($rc, 0, 'a backup whose worker needs a lock of its caller fails');
like($err, qr/ERROR:  40P01: backup \d+ waits for a lock that this transaction holds/,
	'the caller is told why, with SQLSTATE 40P01');
like($err, qr/HINT:  Commit or roll back first/, 'and what to do (the worker\'s hint)');
$node->poll_query_until('postgres', "SELECT count(*) = 0 FROM stripe_backup_history WHERE status = 'running'")
  or die 'a backup stayed running';
is($node->safe_psql('postgres', 'SELECT status FROM stripe_backups ORDER BY id DESC LIMIT 1'), 'cancelled',
	'that backup is recorded cancelled once the lock is gone');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_replication_slots'), '0', 'no WAL slot is left');

# Tablespace mappings that cannot work are refused before anything is created.
my $tsdir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres', "CREATE TABLESPACE ts1 LOCATION '$tsdir'");
$node->safe_psql('postgres', 'CREATE TABLE in_ts TABLESPACE ts1 AS SELECT 1 AS x');
$id = $node->safe_psql('postgres', "SELECT stripe_backup($dests)");
my $base = PostgreSQL::Test::Utils::tempdir();
my $target = "$base/copy";
my $restores = $node->safe_psql('postgres', 'SELECT count(*) FROM stripe_restore_history');
for my $case (
	[ "ARRAY['$tsdir=$target']", qr/puts a tablespace at the restore target/, 'a mapping onto the target' ],
	[ "ARRAY['$tsdir=$target/ts']", qr/puts a tablespace inside the restore target/,
		'a mapping inside the target' ],
	[ "ARRAY['$tsdir=$base/a', '$tsdir=$base/b']", qr/maps "\Q$tsdir\E" again/, 'a tablespace mapped twice' ],
	[ "ARRAY['$tsdir=relative']", qr/absolute path/, 'a relative mapping' ])
{
	($rc, $out, $err) = $node->psql('postgres',
		"SELECT stripe_restore($id, '$target', tablespace_mapping => $case->[0])");
	isnt($rc, 0, "$case->[2] is refused");
	like($err, $case->[1], "$case->[2]: the error says why");
}
is($node->safe_psql('postgres', 'SELECT count(*) FROM stripe_restore_history'), $restores,
	'no restore was started');
ok(!-e $target && !-e "$base/a", 'nothing was created');
$node->safe_psql('postgres', 'DROP TABLE in_ts; DROP TABLESPACE ts1');

$node->stop;
done_testing();
