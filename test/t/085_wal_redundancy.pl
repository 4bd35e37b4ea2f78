# The WAL archive with copies (stripebackup.archive_redundancy = 1 over three
# destinations): every segment on exactly two; a destination removed, then
# another made unwritable, and archiving goes on with a WARNING, counted
# per destination in stripe_wal_archive; a destination back takes segments
# again; fewer destinations than the copies need stops archiving until one
# is back.  Then with one destination gone: a point-in-time restore through
# the archive recovers the rows, by SQL and by the command (whose
# restore_command carries the archive redundancy the backup recorded),
# wal-verify names the destination and the under-replicated segments, and
# WAL retention removes every copy of what expired from the destinations
# that are left; the destination replaced,
# wal-verify --repair makes the copies again.  The command's wal-push
# --redundancy with a destination missing, and one too many asked.
use strict;
use warnings;

use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use Time::HiRes qw(usleep);

my @archive = make_destinations(3);
my $node = backup_node('primary', conf => archiving_conf(@archive) . "stripebackup.archive_redundancy = 1\n");
my $sysid = $node->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
my @dests = make_destinations(2);
$node->safe_psql('postgres', 'CREATE TABLE marks (n int)');
my $backup = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');

# Rows N, then a switch, and the segment it ended archived (a checkpoint
# the switches set off may write into the next one: that one is not awaited).
sub mark
{
	my ($n) = @_;
	my $segment = $node->safe_psql('postgres',
		"INSERT INTO marks VALUES ($n); SELECT pg_walfile_name(pg_switch_wal())");
	$node->poll_query_until('postgres', "SELECT last_archived_wal >= '$segment' FROM pg_stat_archiver")
	  or die "$segment is not archived";
}

# Segment name => the destinations (1-based) holding it.
sub where_segments
{
	my %where;
	for my $i (0 .. $#archive)
	{
		for my $f (glob("$archive[$i]/wal/$sysid/*.sbw"))
		{
			$f =~ s{.*/}{};
			push @{ $where{$1} }, $i + 1 if $f =~ /^([0-9A-F]{24})\.sbw$/;
		}
	}
	return %where;
}

sub failures_of
{
	my ($dest) = @_;
	return $node->safe_psql('postgres', "SELECT destination_failures FROM stripe_wal_archive WHERE destination = '$dest'");
}

mark($_) for 1 .. 3;
my %where = where_segments();
ok(scalar(keys %where) >= 3, 'segments archived');
my @not_two = grep { @{ $where{$_} } != 2 } sort keys %where;
is_deeply(\@not_two, [], 'every segment is on exactly two destinations')
  or diag(join(' ', map { "$_: @{$where{$_}}" } @not_two));
my %load;
$load{$_}++ for map { @$_ } values %where;
ok(scalar(keys %load) == 3, 'the copies spread over all three destinations')
  or diag(join(' ', map { "$_: $load{$_}" } sort keys %load));
is(failures_of($archive[1]), '0', 'no destination has failed yet');

# One destination removed: its segments go to the other two, said and counted.
my $log_at = -s $node->logfile;
rmtree($archive[1]);
mark(4);
mark(5);
like(slurp_file($node->logfile, $log_at),
	qr/WARNING: +stripebackup: WAL file "[0-9A-F]{24}" archived without 1 destination\(s\): WAL archive destination "\Q$archive[1]\E" does not exist/,
	'a WARNING names the destination done without and why');
ok(failures_of($archive[1]) > 0, 'stripe_wal_archive counts its failures');
like($node->safe_psql('postgres', "SELECT destination_last_error FROM stripe_wal_archive WHERE destination = '$archive[1]'"),
	qr/does not exist/, 'and says its last error');
%where = where_segments();
my @newest = (sort keys %where)[-2, -1];
is(join(' ', map { "@{$where{$_}}" } @newest), '1 3 1 3', 'the segments archived meanwhile are on the other two');

# It comes back (empty), and another becomes unwritable: the one back takes the copies.
mkdir $archive[1] or die "mkdir: $!";
chmod 0500, "$archive[2]/wal/$sysid" or die "chmod: $!";
my $before = failures_of($archive[2]);
mark(6);
my $time = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
usleep(200_000);
mark(7);
chmod 0700, "$archive[2]/wal/$sysid";
ok(failures_of($archive[2]) > $before, 'an unwritable destination is counted too');
%where = where_segments();
@newest = (sort keys %where)[-2, -1];
is(join(' ', map { "@{$where{$_}}" } @newest), '1 2 1 2', 'and its copies went to the first and the one back');

# Two of three gone: a segment cannot have its two copies; archiving stops and says so.
rmtree($archive[1]);
chmod 0500, "$archive[2]/wal/$sysid";
my $failed = $node->safe_psql('postgres', 'SELECT failed_count FROM pg_stat_archiver');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (8); SELECT pg_switch_wal()');
$node->poll_query_until('postgres', "SELECT failed_count > $failed FROM pg_stat_archiver")
  or die 'archiving did not fail';
like($node->safe_psql('postgres', 'SELECT DISTINCT last_error FROM stripe_wal_archive'),
	qr/1 of the 3 destinations hold it; WAL archive redundancy 1 needs 2/,
	'with one destination left, the segment is not archived: naming both numbers');
chmod 0700, "$archive[2]/wal/$sysid";
mark(9);
pass('once a second destination is back, archiving catches up');

# A point-in-time restore with the second destination gone.
my $copy = PostgreSQL::Test::Cluster->new('pitr');
my $id = $node->safe_psql('postgres',
	"SELECT stripe_restore(target_dir => '" . $copy->data_dir . "', target_time => '$time')");
is($node->safe_psql('postgres', "SELECT status FROM stripe_restores WHERE id = $id"), 'completed',
	'restore to a time with an archive destination gone');
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
$copy->start;
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the copy did not promote';
is($copy->safe_psql('postgres', 'SELECT string_agg(n::text, \',\' ORDER BY n) FROM marks'), '1,2,3,4,5,6',
	'the copy holds the rows up to the target, through segments of every destination');
$copy->stop;

# wal-verify names the missing destination and the segments with one copy.
my ($rc, $out, $err) = run_stripebackup('wal-verify', '--archive', join(',', @archive),
	'--system-identifier', $sysid, '--redundancy', '1');
is($rc, 3, 'wal-verify --redundancy 1: problems found');
like($err, qr/WAL archive destination "\Q$archive[1]\E" does not exist/, 'it names the missing destination');
like($err, qr/"[0-9A-F]{24}" is under-replicated: in 1 of the 3 destinations; WAL archive redundancy 1 asks for 2/,
	'and the segments left with one copy');
($rc, $out, $err) = run_stripebackup('wal-verify', '--archive', join(',', $archive[0], $archive[2]),
	'--system-identifier', $sysid);
is($rc, 0, 'without the redundancy check, what is left reads whole') or diag($err);

# The command's restore naming the archive, the destination still gone:
# restore_command carries the archive redundancy the backup recorded, so
# recovery asking for what the archive lacks (the next timeline's history
# file) hears "not in the archive" rather than stopping.
my $location = backup_location($node, $backup);
($rc, $out, $err) = run_stripebackup('show', '--json', $location);
like($out, qr/"archive_redundancy":\s*1\b/, 'the backup records the archive redundancy in its metadata');
my $by_command = PostgreSQL::Test::Cluster->new('by_command');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $by_command->data_dir,
	'--target-time', $time, '--archive', join(',', @archive));
is($rc, 0, 'the command: restore to a time with an archive destination gone') or diag($out, $err);
like($out, qr/restore_command lets 1 archive destination be missing \(archive redundancy 1, recorded by the backup\)/,
	'saying how many destinations restore_command lets be missing');
like(slurp_file($by_command->data_dir . '/postgresql.auto.conf'), qr/wal-get .* --redundancy 1 /,
	'restore_command: wal-get --redundancy 1');
$by_command->append_conf('postgresql.conf', 'port = ' . $by_command->port);
$by_command->start;
$by_command->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'by_command did not promote';
is($by_command->safe_psql('postgres', 'SELECT string_agg(n::text, \',\' ORDER BY n) FROM marks'), '1,2,3,4,5,6',
	'the command: the copy reaches the target and holds the rows');
$by_command->stop;

# --archive-redundancy overrides it, within what the archive can hold.
my $other_dir = PostgreSQL::Test::Utils::tempdir() . '/other';
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $other_dir, '--target-time', $time,
	'--archive', join(',', @archive), '--archive-redundancy', '0');
is($rc, 0, '--archive-redundancy 0') or diag($err);
unlike(slurp_file("$other_dir/postgresql.auto.conf"), qr/--redundancy/, 'restore_command then needs every destination');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', "$other_dir-2", '--target-time', $time,
	'--archive', join(',', @archive), '--archive-redundancy', '3');
isnt($rc, 0, '--archive-redundancy 3 over three destinations is refused');
like($err, qr/--archive-redundancy 3 needs at least 4 WAL archive destinations; the archive has 3/, 'naming both numbers');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', "$other_dir-3", '--archive-redundancy', '1');
is($rc, 2, '--archive-redundancy without a recovery target or --standby: a usage error');

# The destination replaced (empty): wal-verify --repair copies again what
# has one copy left, and the archive is whole again.
mkdir $archive[1] or die "mkdir: $!";
($rc, $out, $err) = run_stripebackup('wal-verify', '--archive', join(',', @archive),
	'--system-identifier', $sysid, '--redundancy', '1', '--repair');
is($rc, 0, 'wal-verify --repair: the archive is whole again') or diag($out, $err);
like($out, qr/repaired "[0-9A-F]{24}": in 1 destination\(s\) before, 2 now/, 'saying what it copied again');
%where = where_segments();
@not_two = grep { @{ $where{$_} } < 2 } sort keys %where;
is_deeply(\@not_two, [], 'every segment is on two destinations again')
  or diag(join(' ', map { "$_: @{$where{$_}}" } @not_two));
rmtree($archive[1]);

# Retention with the destination gone: every copy before the newer backup goes.
my $newer = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
my $start_segment = $node->safe_psql('postgres', "SELECT pg_walfile_name(start_lsn) FROM stripe_backups WHERE id = $newer");
my $expired = $node->safe_psql('postgres',
	"SELECT string_agg(coalesce(backup_id::text, '-') || ':' || status || ':' || removed, ',' ORDER BY backup_id) "
	  . 'FROM stripe_expire(keep_last => 1)');
like($expired, qr/^$backup:completed:true,-:wal:true$/, 'expire with a destination gone: the WAL goes too');
%where = where_segments();
my @left = grep { substr($_, 8) lt substr($start_segment, 8) } keys %where;
is(scalar(@left), 0, 'no copy before the newer backup is left in any destination') or diag("@left");

# The command: a missing destination done without, and a redundancy too high.
my $seg = "$archive[0]/segment";
open(my $fh, '>', $seg) or die $!;
print $fh "\0" x (16 * 1024 * 1024);
close $fh;
my @push = ('wal-push', '--archive', join(',', @archive), '--system-identifier', '7');
($rc, $out, $err) = run_stripebackup(@push, '--redundancy', '1', '000000010000000000000001', $seg);
is($rc, 0, 'wal-push --redundancy 1 with a destination missing') or diag($err);
like($err, qr/warning: WAL file "000000010000000000000001" archived without 1 destination\(s\): WAL archive destination "\Q$archive[1]\E"/,
	'warning about it');
ok(-e "$archive[0]/wal/7/000000010000000000000001.sbw" && -e "$archive[2]/wal/7/000000010000000000000001.sbw",
	'the copies are in the other two');
($rc, $out, $err) = run_stripebackup(@push, '--redundancy', '3', '000000010000000000000001', $seg);
isnt($rc, 0, 'wal-push --redundancy 3 over three destinations is refused');
like($err, qr/WAL archive redundancy 3 needs at least 4 destinations; 3 are given/, 'naming both numbers');

# The setting against the destinations: stripe_check says what is wrong.
$node->safe_psql('postgres', 'ALTER SYSTEM SET stripebackup.archive_redundancy = 3; SELECT pg_reload_conf()');
$node->poll_query_until('postgres', "SELECT current_setting('stripebackup.archive_redundancy') = '3'");
like($node->safe_psql('postgres', "SELECT detail FROM stripe_check() WHERE \"check\" = 'archive_mode'"),
	qr/archive_redundancy is 3 but stripebackup.archive_destinations has 3 destinations/,
	'stripe_check: a redundancy that no segment can meet');

done_testing();
