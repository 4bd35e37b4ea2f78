# The archive module through crashes and a full device: kill -9 of the
# archiver, then of the postmaster, in the middle of archiving (zstd at a
# slow level keeps files in flight); afterwards no partial or wrong file is
# visible, PostgreSQL archives again what it had not seen archived, and a
# point-in-time restore through that stretch recovers every row.  Then a
# destination that fills up: archiving fails, PostgreSQL keeps the WAL,
# and once there is room again it catches up by itself.
use strict;
use warnings;

use File::Temp;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use Time::HiRes qw(usleep);

my @archive = make_destinations(2);
my $small = $ENV{SB_TEST_SMALL_FS};
if ($small)
{
	# The second destination on a small file system, to fill later.
	$archive[1] = File::Temp::tempdir('archive-XXXX', DIR => $small, CLEANUP => 1);
}
my $node = backup_node('primary', conf => "archive_mode = on\narchive_library = 'stripebackup'\n"
	  . "stripebackup.archive_destinations = '" . join(', ', @archive) . "'\n"
	  . "stripebackup.archive_compression_level = 19\nstripebackup.archive_batch = 4\n"
	  . "restart_after_crash = on\n");
my $sysid = $node->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
my @dests = make_destinations(1);
$node->safe_psql('postgres', 'CREATE TABLE t (g int, v text)');
my $backup = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');

# Every completed segment archived: none left ready (pg_stat_archiver starts
# afresh after a crash, so its last_archived_wal cannot say).
sub archived_up_to_now
{
	$node->poll_query_until('postgres', 'SELECT true') or die 'the server does not come back';
	return $node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_ls_dir('pg_wal/archive_status') f WHERE f LIKE '%.ready'");
}

# Segments of rows that zstd -19 takes a while over.
sub write_segments
{
	my ($n) = @_;
	$node->safe_psql('postgres', "INSERT INTO t SELECT g, md5(random()::text) || md5(random()::text) "
		  . "FROM generate_series(1, 30000) g; SELECT pg_switch_wal()") for 1 .. $n;
}

sub archiver_pid
{
	return $node->safe_psql('postgres', "SELECT pid FROM pg_stat_activity WHERE backend_type = 'archiver'");
}

# Wait until the archiver is writing a file: a temporary file in an archive folder.
sub wait_for_file_in_flight
{
	for (1 .. 600)
	{
		return 1 if grep { m{\.sbw\.tmp\.} } map { glob("$_/wal/$sysid/*") } @archive;
		usleep(50_000);
	}
	return 0;
}

sub verify_archive
{
	my ($what) = @_;
	my ($rc, $out, $err) = run_stripebackup('wal-verify', map({ ('--archive', $_) } @archive),
		'--system-identifier', $sysid);
	is($rc, 0, "$what: every archived file is whole and right") or diag($err);
}

# kill -9 of the archiver mid-file.
write_segments(4);
ok(wait_for_file_in_flight(), 'a file is being archived');
my $pid = archiver_pid();
ok($pid && kill('KILL', $pid), 'the archiver killed with SIGKILL');
ok(archived_up_to_now(), 'after the crash restart, PostgreSQL archives what was left');
verify_archive('after kill -9 of the archiver');

# kill -9 of the postmaster mid-file: its children notice and exit.
write_segments(4);
ok(wait_for_file_in_flight(), 'a file is being archived again');
$pid = archiver_pid();
$node->kill9;
# The archiver finishes the files in hand, sees the postmaster gone, and exits.
for (1 .. 600)
{
	last unless kill(0, $pid);
	usleep(100_000);
}
sleep 1;
$node->start;
ok(archived_up_to_now(), 'after the postmaster restarts, archiving catches up');
verify_archive('after kill -9 of the postmaster');
is(scalar(grep { !m{/[0-9A-F]{24}(\.partial|\.[0-9A-F]{8}\.backup)?\.sbw$|/[0-9A-F]{8}\.history\.sbw$|\.sbw\.tmp\.\d+\.\d+$} }
		map { glob("$_/wal/$sysid/*") } @archive), 0, 'nothing but archived files and temporary ones');

# A point-in-time restore through that stretch has every row.
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
ok(archived_up_to_now(), 'the last segment archived');
my $copy = PostgreSQL::Test::Cluster->new('copy');
my $id = $node->safe_psql('postgres',
	"SELECT stripe_restore($backup, '" . $copy->data_dir . "', target => 'latest', target_timeline => 'current')");
is($node->safe_psql('postgres', "SELECT status FROM stripe_restores WHERE id = $id"), 'completed', 'restored');
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port . "\narchive_mode = off");
$copy->start;
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the copy did not promote';
is($copy->safe_psql('postgres', 'SELECT count(*) FROM t'), $rows, 'the copy recovered every row');
$copy->stop;

SKIP:
{
	skip 'SB_TEST_SMALL_FS (a small file system to fill) is not set', 4 unless $small;
	# Leave less room than a compressed segment needs.
	my $filler = "$small/filler-072";
	my ($free) = `df -B1 --output=avail $small` =~ /(\d+)\s*$/;
	system('fallocate', '-l', $free - (1 << 20), $filler) == 0 or die "fallocate: $?";
	my $failures = $node->safe_psql('postgres', 'SELECT failed_count FROM pg_stat_archiver');
	write_segments(3);
	ok($node->poll_query_until('postgres', "SELECT failed_count > $failures FROM pg_stat_archiver"),
		'a full destination: archiving fails');
	my $waiting = $node->safe_psql('postgres', 'SELECT last_failed_wal FROM pg_stat_archiver');
	ok(-e $node->data_dir . "/pg_wal/$waiting", 'PostgreSQL keeps the WAL it could not archive');
	unlink $filler or die;
	ok(archived_up_to_now(), 'room again: archiving catches up by itself');
	verify_archive('after the full destination');
}

$node->stop;
done_testing();
