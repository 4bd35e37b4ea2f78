# Time and restore-point targets past a fork (issue 42): a copy restored
# to a time, promoted and left archiving (archive_mode => 'keep') puts a
# short timeline 2 into the source's archive.  A later restore to a
# restore point or a time that timeline 1 reached after that branch, with
# the default target timeline latest, would follow timeline 2 and die at
# start ("recovery ended before configured recovery target was reached"):
# the archived WAL's records are read, and it is refused before anything
# is written, naming timeline 1 and the option (SQL and the command); the
# plan shows the timeline path.  With timeline 1 chosen, the copy lands
# exactly at the target.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my @archive = make_destinations(2);
my $node = backup_node('primary', conf => archiving_conf(@archive));
$node->safe_psql('postgres', 'CREATE TABLE marks (n int)');
my @dests = make_destinations(1);
my $backup = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
my $time_early = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (1)');
my $time0 = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (2); SELECT pg_switch_wal()');
wait_for_archive($node);

# The trap: a test copy restored to a time, promoted on timeline 2, archiving into the same archive.
promote_archiving_copy($node, $time0, 'test_copy');

# Timeline 1 goes on: a restore point after 3, a time after 4.
$node->safe_psql('postgres', "INSERT INTO marks VALUES (3); SELECT pg_create_restore_point('after_fork')");
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (4)');
my $time1 = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (5); SELECT pg_switch_wal()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (6); SELECT pg_switch_wal()');
wait_for_archive($node);

my $never = PostgreSQL::Test::Utils::tempdir() . '/never';
my $location = backup_location($node, $backup);
my $archive = join(',', @archive);

# The plan says the path and why the target is not reached.
my ($rc, $out, $err) = $node->psql('postgres',
	"SELECT count(*) FROM stripe_restore_plan($backup, target_name => 'after_fork')");
is($rc, 0, 'SQL plan to the restore point: runs');
like($err, qr/WARNING: +recovery to the name target would stop short of it: timeline 2's WAL does not reach it past [0-9A-F]+\/[0-9A-F]+, where it parts from timeline 1; timeline 1 holds the target/,
	'SQL plan: the restore point is not on timeline 2, timeline 1 holds it');
($rc, $out, $err) = run_stripebackup('plan', $location, '--target-name', 'after_fork', '--archive', $archive);
like($out, qr/recovery replays timeline 1 to [0-9A-F]+\/[0-9A-F]+, then 2/, 'the command\'s plan: the timeline path')
  or diag($out . $err);

# SQL, the default target timeline (latest): refused before writing, timeline 1 named.
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '$never', target_name => 'after_fork')");
like($err, qr/ERROR: +recovery to the name target would stop short of it: timeline 2's WAL does not reach it.*timeline 1 holds the target/,
	'SQL: a restore point on timeline 1 past the branch, along timeline 2: refused, timeline 1 named');
like($err, qr/HINT: +Choose timeline 1 with target_timeline => '1'/, 'with the argument that chooses it');
ok(!-e $never, 'nothing created');
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '$never', target_time => '$time1')");
like($err, qr/ERROR: +recovery to the time target would stop short of it: .*timeline 1 holds the target/,
	'SQL: a time on timeline 1 past the branch: refused too');
ok(!-e $never, 'nothing created');

# The command: the same refusals, naming the option.
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $never, '--target-name', 'after_fork',
	'--archive', $archive);
isnt($rc, 0, 'the command, to the restore point: refused');
like($err, qr/along timeline 2 would stop short of it: .*timeline 1 holds the target.*\(choose it with --target-timeline 1\)/,
	'naming timeline 1 and the option');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $never, '--target-time', $time1,
	'--archive', $archive);
isnt($rc, 0, 'the command, to the time: refused');
like($err, qr/timeline 1 holds the target.*--target-timeline 1/, 'naming timeline 1 and the option');
ok(!-e $never, 'nothing created');

# Chosen: each copy lands exactly at its target, on timeline 1's history.
my $named = PostgreSQL::Test::Cluster->new('named');
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '" . $named->data_dir
	  . "', target_name => 'after_fork', target_timeline => '1')");
is($rc, 0, 'SQL, target_timeline => \'1\': restored') or diag($err);
like($err, qr/NOTICE: +the name target is at [0-9A-F]+\/[0-9A-F]+ on timeline 1, past the fork/, 'saying where the target is');
$named->append_conf('postgresql.conf', 'port = ' . $named->port);
$named->start;
$named->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the named copy did not promote';
is($named->safe_psql('postgres', "SELECT string_agg(n::text, ',' ORDER BY n) FROM marks"), '1,2,3',
	'the copy stopped at the restore point of timeline 1');
$named->stop;

my $timed = PostgreSQL::Test::Cluster->new('timed');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $timed->data_dir, '--target-time', $time1,
	'--target-timeline', '1', '--archive', $archive);
is($rc, 0, 'the command, --target-timeline 1: restored') or diag($out . $err);
like($out, qr/the time target is at [0-9A-F]+\/[0-9A-F]+ on timeline 1/, 'saying where the target is');
$timed->append_conf('postgresql.conf', 'port = ' . $timed->port);
$timed->start;
$timed->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the timed copy did not promote';
is($timed->safe_psql('postgres', "SELECT string_agg(n::text, ',' ORDER BY n) FROM marks"), '1,2,3,4',
	'the copy stopped at the time on timeline 1');
$timed->stop;

# A target before the fork: every timeline reaches it, nothing refused.
($rc, $out, $err) = $node->psql('postgres',
	"SELECT count(*) FROM stripe_restore_plan($backup, target_time => '$time_early')");
unlike($err, qr/WARNING/, 'SQL plan to a time before the fork: no warning');
like($err, qr/NOTICE: +the time target is at [0-9A-F]+\/[0-9A-F]+ on timeline 1, before timeline 2 parts/,
	'the target placed before the fork');

$node->stop;
done_testing();
