# The WAL of a backup taken on a standby (issue 45): a segment the
# standby's pg_wal does not hold (here: a file whose first page has another
# segment's address, as an old segment recycled under its name) is read from the WAL archive
# of stripebackup.archive_destinations, and without an archive the backup
# fails saying which segment and what to do, leaving nothing marked good.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SbS3;
use StripeBackupTest;
use Test::More;

# The name of the segment on timeline 1 that holds LSN (16 MB segments;
# pg_walfile_name() does not run in recovery).
sub segment
{
	my ($lsn) = @_;
	my ($hi, $lo) = map { hex } split m{/}, $lsn;
	return sprintf('%08X%08X%08X', 1, $hi, $lo >> 24);
}

my @archive = make_destinations(1);
my $primary = backup_node('primary', conf => archiving_conf(@archive));
$primary->safe_psql('postgres', 'CREATE TABLE t AS SELECT g FROM generate_series(1, 10000) g');
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "stripebackup.archive_destinations = ''");	# not the primary's, yet
$standby->start;

# The standby's restartpoint at a checkpoint of the primary's, then WAL of
# three segments: a backup starting at that restartpoint spans them.
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($standby);
$standby->safe_psql('postgres', 'CHECKPOINT');
for my $i (1 .. 2)
{
	$primary->safe_psql('postgres', "INSERT INTO t SELECT g FROM generate_series(1, 1000) g; SELECT pg_switch_wal()");
}
wait_for_archive($primary);
$primary->wait_for_catchup($standby);
my $redo = segment($standby->safe_psql('postgres', 'SELECT redo_lsn FROM pg_control_checkpoint()'));
my $replay = segment($standby->safe_psql('postgres', 'SELECT pg_last_wal_replay_lsn()'));
cmp_ok($replay, 'gt', $redo, "the standby's WAL since its restartpoint spans segments ($redo to $replay)");

# Its first segment made to look like an older one recycled under its name:
# its first page's address zeroed (the standby replayed it already).
my $file = $standby->data_dir . "/pg_wal/$redo";
open(my $fh, '+<', $file) or die "open $file: $!";
binmode $fh;
seek($fh, 8, 0);
print $fh "\0" x 8;
close $fh;

my @dests = make_destinations(1);
my ($rc, $out, $err) = $standby->psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
like($err, qr/does not hold WAL segment $redo whole in pg_wal for the backup/,
	'without a WAL archive set there: the backup fails naming the segment');
like($err, qr/stripebackup\.archive_destinations names no WAL archive to read it from/, 'and why');
is($standby->safe_psql('postgres', "SELECT count(*) FROM stripe_backups WHERE status = 'completed' AND from_standby"),
	'0', 'no backup of the standby marked completed');
is(scalar(folder_entries($dests[0])), 0, 'and nothing left in the destination');

# With the archive set on the standby, the segment comes from there.
$standby->append_conf('postgresql.conf', "stripebackup.archive_destinations = '$archive[0]'");
$standby->reload;
my $id = $standby->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
is($standby->safe_psql('postgres', "SELECT status FROM stripe_backups WHERE id = $id"), 'completed',
	'with the WAL archive set: the backup completes');
like(slurp_file($standby->logfile), qr/WAL segment $redo for the backup read from the WAL archive/,
	'its segment read from the archive');
my $copy = restore_node('copy', backup_location($standby, $id));
$copy->start;
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the copy did not finish recovery';
is($copy->safe_psql('postgres', 'SELECT count(*) FROM t'), '12000', 'the copy holds every row');
$copy->stop;

# Object storage as on a primary: a standby's backup over a bucket and a
# folder, with redundancy, restored by the command from the bucket.
my $s3 = SbS3::start(buckets => ['bk1']);
my $credentials = $s3->use_credentials(PostgreSQL::Test::Utils::tempdir(), 'sb-test-secret-9f8e7d6c');
my $endpoint = $s3->endpoint;
$standby->append_conf('postgresql.conf',
	"stripebackup.s3_endpoint = '$endpoint'\nstripebackup.s3_credentials_file = '$credentials'");
$standby->reload;
$standby->poll_query_until('postgres', "SELECT current_setting('stripebackup.s3_endpoint') = '$endpoint'")
  or die 'the S3 settings do not take';
my @more = make_destinations(1);
$id = $standby->safe_psql('postgres', "SELECT stripe_backup(ARRAY['s3://bk1/standby', '$more[0]'], redundancy => 1)");
is($standby->safe_psql('postgres', "SELECT status, redundancy FROM stripe_backups WHERE id = $id"), 'completed|1',
	'a standby\'s backup into a bucket and a folder, with redundancy: completed');
my $name = $standby->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $id");
$copy = restore_node('from_bucket', "s3://bk1/standby/$name");
$copy->start;
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the copy did not finish recovery';
is($copy->safe_psql('postgres', 'SELECT count(*) FROM t'), '12000', 'restored from the bucket, it holds every row');
$copy->stop;

# A standby stopped during a backup: its next backup marks that one failed
# and removes what it wrote (the start-up clean-up waits for a recovery end
# a standby never reaches).
load_slow_data($primary);
$primary->wait_for_catchup($standby);
my @slow_dests = make_destinations(1);
my $slow = $standby->safe_psql('postgres', 'SET stripebackup.max_rate = 4; SELECT stripe_backup('
	  . sql_array(@slow_dests) . ", compression => 'none', wait => false)");
$standby->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM stripe_backup_progress WHERE phase = 'copying files' AND bytes_done > 0")
  or die 'the slow backup does not copy';
$standby->stop('immediate');
$standby->start;
is($standby->safe_psql('postgres', "SELECT status FROM stripe_backups WHERE id = $slow"), 'failed',
	'the backup the stop interrupted shows failed');
ok(scalar(folder_entries($slow_dests[0])) > 0, 'its partial folder is there until the next backup');
my $next = $standby->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
is($standby->safe_psql('postgres', "SELECT status FROM stripe_backups WHERE id = $next"), 'completed',
	'the next backup on the standby completes');
is($standby->safe_psql('postgres', "SELECT status, error, sqlstate FROM stripe_backups WHERE id = $slow"),
	'failed|the server restarted while it ran|57P02', 'and marked the interrupted one failed in the file');
is(scalar(folder_entries($slow_dests[0])), 0, 'its partial folder removed');

# No checkpoint came from the primary between two backups of the standby:
# both start at one restartpoint, and the incr of that same start restores.
my @chain = make_destinations(1);
$primary->safe_psql('postgres', 'INSERT INTO t SELECT g FROM generate_series(1, 500) g');
$primary->wait_for_catchup($standby);
my $full = $standby->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@chain) . ')');
$primary->safe_psql('postgres', 'INSERT INTO t SELECT g FROM generate_series(1, 700) g');
$primary->wait_for_catchup($standby);
my $incr = $standby->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@chain) . ", type => 'incr')");
is($standby->safe_psql('postgres', "SELECT i.type, i.parent_id, i.start_lsn = f.start_lsn FROM stripe_backups i, "
		  . "stripe_backups f WHERE i.id = $incr AND f.id = $full"), "incr|$full|t",
	'an incr on the standby starting where its parent did');
$copy = restore_node('same_start', backup_location($standby, $incr));
$copy->start;
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the copy did not finish recovery';
is($copy->safe_psql('postgres', 'SELECT count(*) FROM t'), '13200', 'restored, it holds the rows of both');
$copy->stop;

# The primary gone during a standby's backup: the backup needs nothing of it
# (its end is the standby's own minimum recovery point), so it completes,
# and it restores.
$primary->safe_psql('postgres', 'INSERT INTO t SELECT g FROM generate_series(1, 300) g');
$primary->wait_for_catchup($standby);
my @orphan = make_destinations(1);
my $orphan = $standby->safe_psql('postgres', 'SET stripebackup.max_rate = 16; SELECT stripe_backup('
	  . sql_array(@orphan) . ", compression => 'none', wait => false)");
$standby->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM stripe_backup_progress WHERE phase = 'copying files' AND bytes_done > 0")
  or die 'the slow backup does not copy';
$primary->stop('immediate');
$standby->poll_query_until('postgres', "SELECT status <> 'running' FROM stripe_backups WHERE id = $orphan")
  or die 'the backup does not end';
is($standby->safe_psql('postgres', "SELECT status FROM stripe_backups WHERE id = $orphan"), 'completed',
	'a standby\'s backup during which its primary went away: completed');
$copy = restore_node('orphan', backup_location($standby, $orphan));
$copy->start;
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the copy did not finish recovery';
is($copy->safe_psql('postgres', 'SELECT count(*) FROM t'), '13500', 'restored, it holds every row the standby had');
$copy->stop;

done_testing();
