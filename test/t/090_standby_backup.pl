# Backups taken on a hot standby (the primary does none of the reading): a
# full and an incremental taken on a streaming standby while pgbench writes
# on the primary get ids of the standby's own range (10^15 and up), show in
# the standby's stripe_backups and stripe_backup_stripes beside the
# primary's replicated rows, and restore (the chain, with the command) into
# a copy that pg_verifybackup accepts, that starts and reaches consistency
# from the WAL the backup holds, that pg_amcheck finds clean and where
# pgbench's invariant holds.  The primary's processes read little while the
# standby backs up.  A standby promoted during a backup fails that backup,
# saying so; its earlier rows join the history table with the next backup,
# which completes on timeline 2.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $standby_ids = '1000000000000000';	# 10^15: the first id of backups taken on a standby

# No autovacuum on the primary: what it reads while the standby backs up
# (below) is then what serving the standby costs, not a vacuum's pass.
my $node = backup_node('primary', conf => 'autovacuum = off');
$node->command_ok([ 'pgbench', '-i', '-s', '2', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');
$node->safe_psql('postgres', 'CREATE EXTENSION amcheck; CREATE TABLE marks (id int)');

# A backup on the primary first: its row reaches the standby through the table.
my @primary_dests = make_destinations(1);
my $primary_backup = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@primary_dests) . ')');

$node->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'base', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');

my @dests = make_destinations(2);

# A backup of TYPE on the standby, into DESTS; its id, or undef when it failed.
sub standby_backup
{
	my ($type, @to) = @_;
	my ($ret, $out, $err) = $standby->psql('postgres',
		'SELECT stripe_backup(' . sql_array(@to) . ", type => '$type')");
	is($ret, 0, "the $type backup on the standby completes") or diag($err);
	return $ret == 0 ? $out : undef;
}

# One row of the standby's stripe_backups for backup ID: status, type,
# parent (0 for none), timeline.
sub standby_row
{
	my ($id) = @_;
	return $standby->safe_psql('postgres',
		"SELECT status, type, coalesce(parent_id, 0), timeline FROM stripe_backups WHERE id = $id");
}

# pgbench writes on the primary while the standby takes a full backup, then
# more, then an incremental.
my $pgbench = IPC::Run::start(
	[ 'pgbench', '-c', '2', '-T', '600', '-n', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'>', \my $pgbench_out, '2>', \my $pgbench_err);
$standby->poll_query_until('postgres', 'SELECT count(*) > 200 FROM pgbench_history')
  or die 'pgbench writes nothing the standby sees';
my $full = standby_backup('full', @dests);
my $history_after_full = $standby->safe_psql('postgres', 'SELECT count(*) FROM pgbench_history');
$standby->poll_query_until('postgres', "SELECT count(*) > $history_after_full + 500 FROM pgbench_history")
  or die 'pgbench writes nothing more after the full backup';
# A row committed before a checkpoint of the primary's that the standby has
# replayed when the incremental starts: the incremental's start restartpoint
# puts its end (the standby's minimum recovery point) after that checkpoint.
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (1); CHECKPOINT');
$node->wait_for_catchup($standby, 'replay');
my $incr = standby_backup('incr', @dests);
# TERM, not INT: a shell's background jobs ignore SIGINT, and pgbench inherits that.
$pgbench->signal('TERM');
$pgbench->finish;
die 'the backups on the standby failed: nothing more to check' unless defined $full && defined $incr;

is($standby->safe_psql('postgres', "SELECT $full >= $standby_ids AND $incr >= $standby_ids"), 't',
	"the standby's backups take ids from its own range, 10^15 and up ($full, $incr)");
is(standby_row($full), 'completed|full|0|1', "the standby's stripe_backups shows the full backup completed on timeline 1");
is(standby_row($incr), "completed|incr|$full|1",
	"and the incremental completed on timeline 1, with the full backup as its parent");
is($standby->safe_psql('postgres', "SELECT status FROM stripe_backups WHERE id = $primary_backup"), 'completed',
	"the standby's stripe_backups also shows the primary's backup, replicated");
for my $id ($full, $incr)
{
	is($standby->safe_psql('postgres',
			"SELECT count(*), count(DISTINCT destination), bool_and(stored_bytes > 0) FROM stripe_backup_stripes WHERE backup_id = $id"),
		'2|2|t', "the standby's stripe_backup_stripes shows backup ${id}'s two stripes, with bytes");
}
is($standby->safe_psql('postgres',
		"SELECT stop_lsn > (SELECT stop_lsn FROM stripe_backups WHERE id = $full) FROM stripe_backups WHERE id = $incr"),
	't', 'the incremental ends after the full backup');
is($standby->safe_psql('postgres',
		"SELECT string_agg(from_standby::text, ',' ORDER BY id) FROM stripe_backups WHERE id IN ($primary_backup, $full, $incr)"),
	'false,true,true', 'from_standby marks the standby\'s backups, not the primary\'s');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_backups WHERE id >= $standby_ids"), '0',
	"the primary's stripe_backups does not show the standby's backups");

# The incremental restored with the command (the chain: the full and it).
my $copy = restore_node('copy', backup_location($standby, $incr));
unlike(slurp_file($copy->data_dir . '/postgresql.auto.conf'), qr/^\s*restore_command/m,
	'the copy has no restore_command: it recovers from the WAL in the backup alone');
ok(!-e $copy->data_dir . '/standby.signal', 'the copy is not restored as a standby');
ok(!-e $copy->data_dir . '/pg_stripebackup/standby_history.jsonl',
	"the standby's own history file is not in its backup");
my $started = $copy->start(fail_ok => 1);
ok($started, 'the copy starts') or diag(slurp_file($copy->logfile));
SKIP:
{
	skip 'the copy did not start', 7 unless $started;
	my $log = slurp_file($copy->logfile);
	like($log, qr/consistent recovery state reached/, 'the copy reaches a consistent state');
	unlike($log, qr/could not open file "pg_wal\/|WAL ends before end of online backup|requested WAL segment|PANIC/,
		'without asking for WAL it does not have');
	is($copy->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 'f', 'and is out of recovery');
	$copy->command_ok([ 'pg_amcheck', '--all', '--heapallindexed', '-p', $copy->port, '-h', $copy->host ],
		'pg_amcheck --heapallindexed finds nothing wrong in the copy');
	is(pgbench_invariant($copy), 't', "pgbench's invariant holds in the copy (balances and history agree)");
	my ($copied_history, $marks) =
	  split /\|/, $copy->safe_psql('postgres', 'SELECT (SELECT count(*) FROM pgbench_history), (SELECT count(*) FROM marks)');
	is($marks, '1', "the row committed before the primary's checkpoint the standby replayed is in the copy");
	# The rows the standby showed before that row was written precede it.
	cmp_ok($copied_history, '>', $history_after_full + 500,
		"and so is pgbench's work between the full backup and the incremental ($copied_history rows of history, "
		  . "$history_after_full on the standby after the full backup)");
	$copy->stop;
}

# What the primary's processes read while the standby takes a backup,
# pgbench stopped (server_io: the postmaster and its children).
$node->wait_for_catchup($standby, 'replay');
wait_for_server_idle($node);
my $io_before = server_io($node);
my $measured = standby_backup('full', @dests);
my $io_after = server_io($node);
SKIP:
{
	skip "/proc/PID/io of the primary's postmaster is not readable by this user", 1
	  unless defined $io_before && defined $io_after;
	skip 'the backup on the standby failed', 1 unless defined $measured;
	my ($rchar, $read_bytes) = (0, 0);
	for my $pid (keys %$io_after)
	{
		my $before = $io_before->{$pid} // [ 0, 0 ];
		$rchar += $io_after->{$pid}[0] - $before->[0];
		$read_bytes += $io_after->{$pid}[1] - $before->[1];
		note("primary process $pid ($io_after->{$pid}[2]): rchar +" . ($io_after->{$pid}[0] - $before->[0])
			  . ', read_bytes +' . ($io_after->{$pid}[1] - $before->[1]));
	}
	my $bytes_read = $standby->safe_psql('postgres', "SELECT bytes_read FROM stripe_backups WHERE id = $measured");
	diag("during backup $measured on the standby, which read $bytes_read bytes of its cluster, the primary's "
		  . scalar(keys %$io_after) . " processes read $rchar bytes (rchar), $read_bytes from storage (read_bytes)");
	cmp_ok($rchar, '<', $bytes_read / 10,
		"the primary's processes read less than a tenth of what the standby's backup read ($rchar of $bytes_read bytes)");
}

# Promoted during a backup: that backup fails.  4 MB/s per destination,
# uncompressed: seconds to go when the standby is promoted.
my @slow_dests = make_destinations(2);
my ($slow_out, $slow_err) = ('', '');
my $slow = IPC::Run::start(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $standby->connstr('postgres'), '-c',
	  'SET stripebackup.max_rate = 4', '-c',
	  'SELECT stripe_backup(' . sql_array(@slow_dests) . ", compression => 'none')" ],
	'>', \$slow_out, '2>', \$slow_err,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
ok($standby->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM stripe_backup_progress WHERE phase = 'copying files' AND bytes_done > 0"),
	'the slow backup on the standby is copying files');
my $doomed = $standby->safe_psql('postgres', "SELECT max(id) FROM stripe_backup_progress");
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the standby does not promote';
my $finished = eval { $slow->finish; 1 };
ok($finished, 'the call of the backup the promotion interrupted returns') or do { diag($@); $slow->kill_kill };
ok($finished && $slow->result != 0, 'with an error');
like($slow_err, qr/ERROR: .*promot/, 'saying the standby was promoted') or diag($slow_err);
$standby->poll_query_until('postgres', "SELECT status <> 'running' FROM stripe_backups WHERE id = $doomed")
  or die "backup $doomed stays running";
my ($status, $error, $name) = split /\|/, $standby->safe_psql('postgres',
	"SELECT status, error, name FROM stripe_backups WHERE id = $doomed");
is($status, 'failed', "backup $doomed, interrupted by the promotion, shows failed");
like($error, qr/promot/, 'its error names the promotion');
is(scalar(grep { -e "$_/$name/manifest.json" } @slow_dests), 0, 'none of its folders holds a manifest.json');
is($standby->safe_psql('postgres',
		"SELECT string_agg(id || ':' || status, ',' ORDER BY id) FROM stripe_backups WHERE id IN ($full, $incr, $measured)"),
	"$full:completed,$incr:completed,$measured:completed", "the standby's earlier backups still show, completed");

# The next backup on the promoted server: timeline 2, and the standby's rows in the table.
my @new_dests = make_destinations(2);
my ($ret, $after, $err) = $standby->psql('postgres', 'SELECT stripe_backup(' . sql_array(@new_dests) . ')');
is($ret, 0, 'a backup on the promoted server completes') or diag($err);
is($standby->safe_psql('postgres', "SELECT status, timeline FROM stripe_backups WHERE id = $after"),
	'completed|2', 'on timeline 2') if $ret == 0;
is($standby->safe_psql('postgres',
		"SELECT string_agg(id || ':' || status, ',' ORDER BY id) FROM stripe_backup_history WHERE id >= $standby_ids"),
	"$full:completed,$incr:completed,$measured:completed,$doomed:failed",
	"the standby's rows are in the table stripe_backup_history now, with their ids");
ok(!-e $standby->data_dir . '/pg_stripebackup/standby_history.jsonl', 'and the file that held them is gone');
is($standby->safe_psql('postgres',
		"SELECT count(*) - count(DISTINCT id) FROM stripe_backups"), '0', 'each backup shows once in stripe_backups');
is($standby->safe_psql('postgres',
		"SELECT count(*) FROM stripe_backup_stripes WHERE backup_id IN ($full, $incr)"), '4',
	"and the stripes of the standby's backups still show");

$standby->stop;
$node->stop;
done_testing();
