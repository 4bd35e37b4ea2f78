# Without the server, the command finds what the server knew (issue 42): a
# backup records the WAL archive in force when it was taken, so a restore
# with --target-name from the backup's folder alone finds the archive that
# lives apart from the backups (checked to hold one of the backup's system;
# --archive still names another); and given a destination rather than one
# backup's folder, the command restores the newest completed backup there
# that ended before the target, and says which.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use Time::HiRes qw(usleep);

my @archive = make_destinations(2);
my $node = backup_node('primary', conf => archiving_conf(@archive));
$node->safe_psql('postgres', 'CREATE TABLE marks (n int)');
my @dests = make_destinations(1);
my $first = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
# finished_at is to the second: the target a second and more after it
usleep(1_100_000);
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (1)');
my $between = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (2)');
my $second = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
usleep(1_100_000);
$node->safe_psql('postgres', "INSERT INTO marks VALUES (3); SELECT pg_create_restore_point('rp')");
my $after = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (4); SELECT pg_switch_wal()');
wait_for_archive($node);
my $first_location = backup_location($node, $first);
my $second_location = backup_location($node, $second);
my $manifest = slurp_file("$second_location/manifest.json");
ok($manifest =~ /"archive_destinations":\s*\["\Q$archive[0]\E",\s*"\Q$archive[1]\E"\]/,
	'the backup\'s metadata records the archive in force');

# Start COPY (restored with the command), wait for its promotion: its marks.
sub marks_of
{
	my ($copy) = @_;
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die $copy->name . ' did not promote';
	my $marks = $copy->safe_psql('postgres', "SELECT string_agg(n::text, ',' ORDER BY n) FROM marks");
	$copy->stop;
	return $marks;
}

# The archive from the backup's record alone.
my $copy = PostgreSQL::Test::Cluster->new('by_name');
my ($rc, $out, $err) = run_stripebackup('restore', $second_location, '--target', $copy->data_dir,
	'--target-name', 'rp');
is($rc, 0, '--target-name from the backup\'s folder alone, the archive elsewhere') or diag($err);
like($out, qr/^archive: \Q$archive[0], $archive[1]\E \(where the backup's WAL was archived when it was taken/m,
	'the archive found from the backup\'s record, said');
like(slurp_file($copy->data_dir . '/postgresql.auto.conf'),
	qr/wal-get --archive ''\Q$archive[0]\E'' --archive ''\Q$archive[1]\E''/, 'and restore_command reads it');
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
is(marks_of($copy), '1,2,3', 'the copy recovers to the restore point');
my $other = PostgreSQL::Test::Utils::tempdir() . '/other';
($rc, $out, $err) = run_stripebackup('restore', $second_location, '--target', $other, '--target-name', 'rp',
	'--archive', $archive[1]);
is($rc, 0, '--archive names another archive');
unlike($out, qr/^archive:/m, 'the record is not looked at then');

# A recorded archive that holds none of the system now: passed over, said.
rename($archive[0], "$archive[0].moved") or die;
rename($archive[1], "$archive[1].moved") or die;
my $never = PostgreSQL::Test::Utils::tempdir() . '/never';
($rc, $out, $err) = run_stripebackup('restore', $second_location, '--target', $never, '--target-name', 'rp');
is($rc, 2, 'the recorded archive moved: refused');
like($err, qr/warning: "\Q$archive[0]\E", the WAL archive when the backup was taken, holds none of system \d+ now/,
	'each recorded destination passed over, named');
like($err, qr/no destination of the backup, nor of the archive it recorded, holds a WAL archive/, 'and why');
ok(!-e $never, 'nothing created');
rename("$archive[0].moved", $archive[0]) or die;
rename("$archive[1].moved", $archive[1]) or die;

# A destination: the backup chosen by the target.
my $at_between = PostgreSQL::Test::Cluster->new('at_between');
($rc, $out, $err) = run_stripebackup('restore', $dests[0], '--target', $at_between->data_dir,
	'--target-time', $between);
is($rc, 0, 'a destination and a time between the backups') or diag($err);
like($out, qr/^backup: +"\Q$first_location\E" is the newest of 2 in "\Q$dests[0]\E" that ended before the time target/m,
	'the first backup picked, and said');
$at_between->append_conf('postgresql.conf', 'port = ' . $at_between->port);
is(marks_of($at_between), '1', 'recovered to the time, from the first backup');
my $later = PostgreSQL::Test::Utils::tempdir() . '/later';
($rc, $out, $err) = run_stripebackup('restore', $dests[0], '--target', $later, '--target-time', $after);
like($out, qr/^backup: +"\Q$second_location\E" is the newest/m, 'a time after both: the second');
my $by_lsn = PostgreSQL::Test::Utils::tempdir() . '/by_lsn';
my $second_stop = $node->safe_psql('postgres', "SELECT stop_lsn FROM stripe_backups WHERE id = $second");
($rc, $out, $err) = run_stripebackup('restore', $dests[0], '--target', $by_lsn, '--target-lsn', $second_stop);
like($out, qr/^backup: +"\Q$second_location\E" is the newest.*the lsn target/m, 'an LSN at the second\'s end: the second');

for my $case (
	[ [ '--target-time', '2000-01-01 00:00:00+00' ], qr/no completed backup in "\Q$dests[0]\E" ended before the time target \(2 backups there\)/,
		'a time before every backup' ],
	[ [ '--target-time', '2030-01-01 00:00:00' ], qr/needs its time zone/, 'a time without its zone' ],
	[ [], qr/holds no backup of its own: name one of its backup folders, or give a target/, 'no target' ])
{
	my ($extra, $re, $what) = @$case;
	($rc, $out, $err) = run_stripebackup('restore', $dests[0], '--target', $never, @$extra);
	isnt($rc, 0, "a destination, $what: refused");
	like($err, $re, 'saying why');
}
ok(!-e $never, 'nothing created by the refusals');

$node->stop;
done_testing();
