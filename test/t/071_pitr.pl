# Point-in-time recovery through the WAL archive, under pgbench load: a
# restore to a time, an LSN, an xid and a named restore point, each started
# and compared with what the cluster held at that moment (a fingerprint
# taken then), pgbench's invariant and pg_amcheck; the backup chosen by the
# target alone; then a second timeline: a copy promoted writes and archives,
# and a second copy recovers along that timeline to a point after the
# switch.  The command's restore, plan and verify with targets; a gap in the
# archive refused for "latest" and named by plan and verify; a damaged WAL
# file named; WAL retention with stripe_expire.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use Time::HiRes qw(usleep);

my @archive = make_destinations(2);
my $archive_conf = "archive_mode = on\narchive_library = 'stripebackup'\n"
  . "stripebackup.archive_destinations = '" . join(', ', @archive) . "'\n";
my $node = backup_node('primary', conf => $archive_conf);
$node->command_ok([ 'pgbench', '-i', '-s', '2', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');
$node->safe_psql('postgres', 'CREATE TABLE marks (n int, at timestamptz DEFAULT clock_timestamp())');
my @dests = make_destinations(2);
my $backup = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');

# What the cluster holds: pgbench's balances and the marks.
my $fingerprint = 'SELECT (SELECT sum(abalance) FROM pgbench_accounts) || \'/\' || '
  . '(SELECT count(*) FROM marks) || \'/\' || (SELECT coalesce(max(n), 0) FROM marks)';

sub load
{
	$node->command_ok([ 'pgbench', '-n', '-t', '200', '-c', '2', '-p', $node->port, '-h', $node->host,
			'postgres' ], 'pgbench writes');
}

# Each target after a mark, with the fingerprint the cluster had there.
my %at;
load();
$node->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (1)');
$at{time} = [ $node->safe_psql('postgres', 'SELECT clock_timestamp()'), $node->safe_psql('postgres', $fingerprint) ];
usleep(200_000);
load();
$at{lsn} = [ $node->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (2); SELECT pg_current_wal_insert_lsn()'),
	$node->safe_psql('postgres', $fingerprint) ];
load();
$at{xid} = [ $node->safe_psql('postgres', 'BEGIN; INSERT INTO marks (n) VALUES (3); SELECT pg_current_xact_id(); COMMIT;'),
	$node->safe_psql('postgres', $fingerprint) ];
load();
$node->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (4)');
$at{name} = [ 'before-upgrade', $node->safe_psql('postgres', $fingerprint) ];
$node->safe_psql('postgres', "SELECT pg_create_restore_point('before-upgrade')");
load();
$node->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (5)');
wait_for_archive($node);

# pgbench's invariant: every transaction moved the same delta in all four tables.
my $invariant = 'SELECT (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT sum(bbalance) FROM pgbench_branches) '
  . 'AND (SELECT sum(bbalance) FROM pgbench_branches) = (SELECT sum(tbalance) FROM pgbench_tellers) '
  . 'AND (SELECT sum(tbalance) FROM pgbench_tellers) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)';

# Restore COPY to TARGET (SQL arguments), start it, and compare.
sub restored_fingerprint
{
	my ($name, $args) = @_;
	my $copy = PostgreSQL::Test::Cluster->new($name);
	my $id = $node->safe_psql('postgres', "SELECT stripe_restore(target_dir => '" . $copy->data_dir . "', $args)");
	is($node->safe_psql('postgres', "SELECT status FROM stripe_restores WHERE id = $id"), 'completed',
		"$name: restored");
	ok(-e $copy->data_dir . '/recovery.signal', "$name: recovery.signal written");
	# Copies restored to a target do not archive into the original's
	# archive (archive_mode = off in their postgresql.auto.conf), unless asked.
	$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "$name did not promote";
	my $got = $copy->safe_psql('postgres', $fingerprint);
	is($copy->safe_psql('postgres', $invariant), 't', "$name: pgbench's invariant holds");
	$copy->command_ok([ 'pg_amcheck', '--install-missing', '--all', '--heapallindexed', '-p', $copy->port,
			'-h', $copy->host ], "$name: pg_amcheck finds nothing wrong");
	return ($copy, $got);
}

my ($copy, $got) = restored_fingerprint('at_time', "target_time => '$at{time}[0]'");
is($got, $at{time}[1], 'PITR to a time: the cluster as it was then');
$copy->stop;
($copy, $got) = restored_fingerprint('at_lsn', "backup => $backup, target_lsn => '$at{lsn}[0]'");
is($got, $at{lsn}[1], 'PITR to an LSN');
$copy->stop;
($copy, $got) = restored_fingerprint('at_xid', "target_xid => '$at{xid}[0]'");
is($got, $at{xid}[1], 'PITR to an xid (inclusive)');
$copy->stop;
($copy, $got) = restored_fingerprint('at_name', "target_name => '$at{name}[0]'");
is($got, $at{name}[1], 'PITR to a named restore point');
$copy->stop;

# A second timeline: a copy promoted at the time target writes and archives
# on timeline 2; another copy recovers along it to a point after the switch.
($copy, $got) = restored_fingerprint('timeline2', "target_time => '$at{time}[0]', archive_mode => 'keep'");
is($copy->safe_psql('postgres', "SELECT timeline_id FROM pg_control_checkpoint()"), '2',
	'the promoted copy is on timeline 2');
$copy->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (42)');
my $t2 = $copy->safe_psql('postgres', 'SELECT clock_timestamp()');
my $expected = $copy->safe_psql('postgres', $fingerprint);
usleep(200_000);
$copy->safe_psql('postgres', 'INSERT INTO marks (n) VALUES (43)');
wait_for_archive($copy);
my ($second, $got2) = restored_fingerprint('along_timeline2', "backup => $backup, target_time => '$t2'");
is($got2, $expected, 'PITR along timeline 2, to a point after the switch');
$second->stop;
$copy->stop;

# The command, with the server gone as far as it knows: to the LSN target.
my ($rc, $out, $err);
my $location = backup_location($node, $backup);
my $cli_dir = PostgreSQL::Test::Utils::tempdir() . '/by_command';
my $recorded_dir = PostgreSQL::Test::Utils::tempdir() . '/by_record';
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $recorded_dir, '--target-lsn', $at{lsn}[0],
	'--target-timeline', 'current');
is($rc, 0, 'the command: no --archive, none beside the backup: the archive the backup recorded') or diag($err);
like($out, qr/^archive: \Q$archive[0], $archive[1]\E \(where the backup's WAL was archived/m, 'said');
# Timeline 2 branched off before the LSN: recovery stays on the backup's.
my $by_command = restore_node('by_command', $location, '--target-lsn', $at{lsn}[0], '--target-action', 'promote',
	'--target-timeline', 'current', '--archive', join(',', @archive));
ok(-e $by_command->data_dir . '/recovery.signal', 'the command wrote recovery.signal');
$by_command->append_conf('postgresql.conf', 'archive_mode = off');
$by_command->start;
$by_command->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'by_command did not promote';
is($by_command->safe_psql('postgres', $fingerprint), $at{lsn}[1], 'the command: PITR to an LSN');
$by_command->stop;
($rc, $out, $err) = run_stripebackup('plan', $location, '--target-latest', '--target-timeline', 'current',
	'--archive', join(',', @archive));
is($rc, 0, 'plan with a target: the WAL is all there');
like($out, qr/WAL: +the archive holds every segment from \w+ to \w+ \(\d+\)/, 'plan says which segments');
like($out, qr/WAL: +\Q$archive[0]\E: \d+ segments?, [\d.]+ MB stored/, 'and what each destination holds of them');
($rc, $out, $err) = run_stripebackup('verify', $location, '--archive', join(',', @archive));
is($rc, 0, 'verify: the backup and its WAL are good');
like($out, qr/WAL: +\d+ files from \w+ to \w+ checked whole/, 'verify read the WAL recovery from it needs');
($rc, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM stripe_verify($backup)");
is($out, '0', 'stripe_verify: no problem');
like($err, qr/NOTICE: +the WAL archive holds every file from "\w+" to "\w+" \(\d+ read whole\)/,
	'stripe_verify read the WAL too');
($rc, $out, $err) = $node->psql('postgres',
	"SELECT count(*) FROM stripe_restore_plan($backup, target => 'latest', target_timeline => 'current')");
like($err, qr/NOTICE: +the WAL archive holds every segment from "\w+" to "\w+" \(\d+\) for recovery on timeline 1/,
	'stripe_restore_plan with a target: says the WAL is all there');
like($err, qr/DETAIL: +[\d.]+ MB of WAL to replay\. \Q$archive[0]\E: \d+ segments?, [\d.]+ MB stored;.* no restore has measured/,
	'what it fetches from each destination (the archive\'s folders were never restored from: no estimate)');
($rc, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM stripe_restore_plan(target_lsn => '$at{lsn}[0]')");
is($out, '3', 'stripe_restore_plan with a target alone: the plan of a backup');
like($err, qr/NOTICE: +backup $backup is the newest that ended before the lsn target/, 'the one chosen, named');

# A gap in the archive after the backup: "latest" would end at it and
# promote a copy that silently lacks the rest, so it is refused; a time
# before the gap goes ahead with a warning.
my $sysid = $node->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
my @timeline1 = sort { ($a =~ s{.*/}{}r) cmp ($b =~ s{.*/}{}r) }
  grep { m{/00000001[0-9A-F]{16}\.sbw$} } map { glob("$_/wal/$sysid/*.sbw") } @archive;
my $gap = $timeline1[-2];
rename($gap, "$gap.aside") or die "cannot move $gap: $!";
(my $gap_name = $gap) =~ s{.*/(\w{24})\.sbw$}{$1};
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '/tmp/never-gap', target => 'latest', "
	  . "target_timeline => 'current')");
like($err, qr/recovery to the latest target would stop short of it: segment "$gap_name" is not in the archive/,
	'SQL: latest past a gap is refused, the gap named');
ok(!-e '/tmp/never-gap', 'and nothing is created');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $cli_dir, '--target-latest',
	'--target-timeline', 'current', '--archive', join(',', @archive));
is($rc, 3, 'the command: refused too (exit 3)');
like($err, qr/$gap_name/, 'naming the gap');
ok(!-e $cli_dir, 'nothing created');
($rc, $out, $err) = run_stripebackup('plan', $location, '--target-latest', '--target-timeline', 'current',
	'--archive', join(',', @archive));
is($rc, 3, 'plan: exit 3 for the gap');
like($out, qr/would stop short of it: segment "$gap_name"/, 'and says so');
($rc, $out, $err) = $node->psql('postgres',
	"SELECT count(*) FROM stripe_restore_plan($backup, target => 'latest', target_timeline => 'current')");
like($err, qr/WARNING: +recovery to the latest target would stop short of it: segment "$gap_name"/,
	'stripe_restore_plan: a warning naming the gap');
is($out, '3', 'and the plan rows all the same');
my $warned = PostgreSQL::Test::Cluster->new('warned');
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '" . $warned->data_dir . "', "
	  . "target_time => '$at{time}[0]', target_timeline => 'current')");
like($stderr, qr/WARNING: +the WAL archive has a gap after the backup: segment "$gap_name"/,
	'a time target with a gap after the backup: a warning');
is($node->safe_psql('postgres', "SELECT status FROM stripe_restores ORDER BY id DESC LIMIT 1"), 'completed',
	'and the restore goes ahead');
rename("$gap.aside", $gap) or die "cannot put back $gap: $!";

# A target before every backup, or without an archive: refused, nothing created.
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(target_dir => '/tmp/never', target_time => '2000-01-01')");
like($err, qr/no completed backup can reach the time target/, 'a time before every backup is refused');
ok(!-e '/tmp/never', 'and nothing is created');
# Retention: a newer backup kept alone, the WAL before its start goes with
# the older one; from its start segment on, and every history file, stays.
my $newer = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
my $start_segment = $node->safe_psql('postgres',
	"SELECT pg_walfile_name(start_lsn) FROM stripe_backups WHERE id = $newer");
my $expired;
($rc, $expired, $err) = $node->psql('postgres',
	"SELECT string_agg(coalesce(backup_id::text, '-') || ':' || status || ':' || removed, ',' ORDER BY backup_id) "
	  . "FROM stripe_expire(keep_last => 1)");
like($err, qr/NOTICE: +point-in-time recovery reaches back to \d{4}-.*, the end of backup $newer/,
	'expire says where the PITR window now opens');
like($expired, qr/^$backup:completed:true,-:wal:true$/, 'expire: the older backup, then the WAL before the newer one');
my @left = map { s{.*/}{}r } map { glob("$_/wal/$sysid/*.sbw") } @archive;
my @before = grep { /^([0-9A-F]{24})/ && substr($1, 8) lt substr($start_segment, 8) } @left;
is(scalar(@before), 0, 'no archived WAL before the newer backup\'s start segment is left')
  or diag("left: @before; start $start_segment");
ok((grep { $_ eq "$start_segment.sbw" } @left), 'its start segment is kept');
ok((grep { $_ eq '00000002.history.sbw' } @left), 'history files are kept');
is($node->safe_psql('postgres', "SELECT name FROM stripe_expire(keep_last => 1) WHERE status = 'wal'"),
	"WAL before $start_segment", 'a second expire: the WAL row names where it cut, nothing more to remove');


# A damaged WAL file on the way from the kept backup: verify names it, from
# the command and from SQL.
my ($damaged) = grep { -e $_ } map { "$_/wal/$sysid/$start_segment.sbw" } @archive;
open(my $fh, '+<', $damaged) or die "cannot open $damaged: $!";
seek($fh, -100, 2);
print $fh 'x';
close($fh);
my $newer_location = backup_location($node, $newer);
($rc, $out, $err) = run_stripebackup('verify', $newer_location, '--archive', join(',', @archive));
is($rc, 3, 'verify: a damaged WAL file, exit 3');
like($err, qr/problem: WAL: .*$start_segment/, 'naming it');
like($node->safe_psql('postgres', "SELECT string_agg(problem, '; ') FROM stripe_verify($newer) WHERE stripe IS NULL"),
	qr/$start_segment/, 'stripe_verify: a row names it');

$node->stop;
done_testing();
