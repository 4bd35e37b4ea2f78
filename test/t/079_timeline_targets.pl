# Time, xid and restore-point targets past a fork (issue 42): a copy
# restored to a time, promoted and left archiving (archive_mode => 'keep')
# puts a short timeline 2 into the source's archive.  A later restore to a
# restore point, a time or an xid that timeline 1 reached after that branch, with
# target timeline latest, would follow timeline 2 and die at start
# ("recovery ended before configured recovery target was reached"): the
# archived WAL's records are read.  With latest given, the restore is
# refused before anything is written, naming timeline 1 and the option
# (SQL and the command; an xid from SQL); the plan shows the timeline path.  With no
# timeline given, timeline 1 is chosen and said, written as
# recovery_target_timeline, and each copy lands exactly at its target.
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
my $xid4 = $node->safe_psql('postgres', 'INSERT INTO marks VALUES (4) RETURNING pg_current_xact_id()');
my $time1 = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (5); SELECT pg_switch_wal()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (6); SELECT pg_switch_wal()');
wait_for_archive($node);

my $never = PostgreSQL::Test::Utils::tempdir() . '/never';
my $location = backup_location($node, $backup);
my $archive = join(',', @archive);

# The plan, timeline latest given: the path, and why the target is not reached.
my ($rc, $out, $err) = $node->psql('postgres',
	"SELECT count(*) FROM stripe_restore_plan($backup, target_name => 'after_fork', target_timeline => 'latest')");
is($rc, 0, 'SQL plan to the restore point along latest: runs');
like($err, qr/WARNING: +recovery to the name target would stop short of it: timeline 2's WAL does not reach it past [0-9A-F]+\/[0-9A-F]+, where it parts from timeline 1; timeline 1 holds the target/,
	'SQL plan: the restore point is not on timeline 2, timeline 1 holds it');
($rc, $out, $err) = run_stripebackup('plan', $location, '--target-name', 'after_fork', '--archive', $archive,
	'--target-timeline', 'latest');
like($out, qr/recovery replays timeline 1 to [0-9A-F]+\/[0-9A-F]+, then 2/, 'the command\'s plan: the timeline path')
  or diag($out . $err);

# The plan, no timeline given: the choice shown.
($rc, $out, $err) = $node->psql('postgres',
	"SELECT count(*) FROM stripe_restore_plan($backup, target_name => 'after_fork')");
is($rc, 0, 'SQL plan to the restore point, no timeline given: runs');
like($err, qr/NOTICE: +recovery follows timeline 1, which holds the name target: no target_timeline was given, and the newest, timeline 2, does not reach it/,
	'SQL plan: timeline 1 chosen, and why');
unlike($err, qr/WARNING/, 'no warning');
($rc, $out, $err) = run_stripebackup('plan', $location, '--target-name', 'after_fork', '--archive', $archive);
is($rc, 0, 'the command\'s plan, no timeline given: exit 0') or diag($out . $err);
like($out, qr/recovery follows timeline 1, which holds the name target: no --target-timeline was given, and the newest, timeline 2, does not reach it/,
	'the command\'s plan: timeline 1 chosen');

# Timeline latest given: honoured, so refused before writing, timeline 1 named.
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '$never', target_name => 'after_fork', "
	  . "target_timeline => 'latest')");
like($err, qr/ERROR: +recovery to the name target would stop short of it: timeline 2's WAL does not reach it.*timeline 1 holds the target/,
	'SQL: a restore point on timeline 1 past the branch, latest given: refused, timeline 1 named');
like($err, qr/HINT: +Choose timeline 1 with target_timeline => '1'/, 'with the argument that chooses it');
ok(!-e $never, 'nothing created');
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '$never', target_time => '$time1', "
	  . "target_timeline => 'latest')");
like($err, qr/ERROR: +recovery to the time target would stop short of it: .*timeline 1 holds the target/,
	'SQL: a time on timeline 1 past the branch, latest given: refused too');
ok(!-e $never, 'nothing created');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $never, '--target-name', 'after_fork',
	'--archive', $archive, '--target-timeline', 'latest');
isnt($rc, 0, 'the command, to the restore point, --target-timeline latest: refused');
like($err, qr/along timeline 2 would stop short of it: .*timeline 1 holds the target.*\(choose it with --target-timeline 1\)/,
	'naming timeline 1 and the option');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $never, '--target-time', $time1,
	'--archive', $archive, '--target-timeline', 'latest');
isnt($rc, 0, 'the command, to the time, --target-timeline latest: refused');
like($err, qr/timeline 1 holds the target.*--target-timeline 1/, 'naming timeline 1 and the option');
ok(!-e $never, 'nothing created');

# No timeline given: timeline 1 chosen, and each copy lands exactly at its
# target, on timeline 1's history, with recovery_target_timeline = '1'.
sub lands
{
	my ($copy, $marks, $what) = @_;
	my $auto = slurp_file($copy->data_dir . '/postgresql.auto.conf');
	like($auto, qr/^recovery_target_timeline = '1'$/m, "$what: the copy's settings follow timeline 1");
	$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die "$what: the copy did not promote";
	is($copy->safe_psql('postgres', "SELECT string_agg(n::text, ',' ORDER BY n) FROM marks"), $marks,
		"$what: the copy stopped at the target on timeline 1");
	$copy->stop;
}

my $named = PostgreSQL::Test::Cluster->new('named');
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '" . $named->data_dir . "', target_name => 'after_fork')");
is($rc, 0, 'SQL, no target_timeline, to the restore point: restored') or diag($err);
like($err, qr/NOTICE: +recovery follows timeline 1, which holds the name target: no target_timeline was given, and the newest, timeline 2, does not reach it/,
	'saying timeline 1 was chosen');
like($err, qr/DETAIL: +timeline 2's WAL does not reach it past/, 'and why');
like($err, qr/NOTICE: +the name target is at [0-9A-F]+\/[0-9A-F]+ on timeline 1, past the fork/, 'and where the target is');
lands($named, '1,2,3', 'SQL, restore point');

my $timed_sql = PostgreSQL::Test::Cluster->new('timed_sql');
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '" . $timed_sql->data_dir . "', target_time => '$time1')");
is($rc, 0, 'SQL, no target_timeline, to the time: restored') or diag($err);
like($err, qr/NOTICE: +recovery follows timeline 1, which holds the time target/, 'saying timeline 1 was chosen');
lands($timed_sql, '1,2,3,4', 'SQL, time');

# An xid timeline 1 committed past the branch: refused along latest, timeline 1 chosen without it.
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '$never', target_xid => '$xid4', "
	  . "target_timeline => 'latest')");
like($err, qr/ERROR: +recovery to the xid target would stop short of it: .*timeline 1 holds the target/,
	'SQL: an xid on timeline 1 past the branch, latest given: refused, timeline 1 named');
ok(!-e $never, 'nothing created');
my $by_xid = PostgreSQL::Test::Cluster->new('by_xid');
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '" . $by_xid->data_dir . "', target_xid => '$xid4')");
is($rc, 0, 'SQL, no target_timeline, to the xid: restored') or diag($err);
like($err, qr/NOTICE: +recovery follows timeline 1, which holds the xid target/, 'saying timeline 1 was chosen');
lands($by_xid, '1,2,3,4', 'SQL, xid');

my $named_cmd = PostgreSQL::Test::Cluster->new('named_cmd');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $named_cmd->data_dir, '--target-name',
	'after_fork', '--archive', $archive);
is($rc, 0, 'the command, no --target-timeline, to the restore point: restored') or diag($out . $err);
like($out, qr/recovery follows timeline 1, which holds the name target: no --target-timeline was given/,
	'saying timeline 1 was chosen');
lands($named_cmd, '1,2,3', 'the command, restore point');

my $timed = PostgreSQL::Test::Cluster->new('timed');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $timed->data_dir, '--target-time', $time1,
	'--archive', $archive);
is($rc, 0, 'the command, no --target-timeline, to the time: restored') or diag($out . $err);
like($out, qr/recovery follows timeline 1, which holds the time target/, 'saying timeline 1 was chosen');
like($out, qr/the time target is at [0-9A-F]+\/[0-9A-F]+ on timeline 1/, 'and where the target is');
lands($timed, '1,2,3,4', 'the command, time');

# A target before the fork: every timeline reaches it, nothing refused.
($rc, $out, $err) = $node->psql('postgres',
	"SELECT count(*) FROM stripe_restore_plan($backup, target_time => '$time_early')");
unlike($err, qr/WARNING/, 'SQL plan to a time before the fork: no warning');
like($err, qr/NOTICE: +the time target is at [0-9A-F]+\/[0-9A-F]+ on timeline 1, before timeline 2 parts/,
	'the target placed before the fork');

# A segment the scan along timeline 1 needs, unreadable (its second half
# overwritten in a copy of the archive, its size kept): the plan says it
# could not tell, and refuses nothing for it.
sub damage_file
{
	my ($f) = @_;
	my $size = -s $f;
	open(my $fh, '+<', $f) or die "open $f: $!";
	binmode $fh;
	seek($fh, int($size / 2), 0) or die "seek: $!";
	print $fh "\xA5" x ($size - int($size / 2));
	close $fh or die "close: $!";
}
my $stop_segment = $node->safe_psql('postgres',
	"SELECT pg_catalog.pg_walfile_name(stop_lsn) FROM stripe_backups WHERE id = $backup");
my @copies;
for my $i (0 .. $#archive)
{
	my $copy = PostgreSQL::Test::Utils::tempdir() . "/archive$i";
	system('cp', '-a', "$archive[$i]/.", $copy) == 0 or die "cp: $?";
	for my $f (glob("$copy/wal/*/*"))
	{
		my ($segment) = $f =~ m{/(00000001[0-9A-F]{16})[^/]*$} or next;
		damage_file($f) if $segment gt $stop_segment;
	}
	push @copies, $copy;
}
($rc, $out, $err) = run_stripebackup('plan', $location, '--target-name', 'after_fork', '--archive', join(',', @copies));
like($out . $err, qr/which timeline holds the name target could not be told: segment "00000001[0-9A-F]{16}[^"]*" could not be read/,
	'the command\'s plan: a segment it could not read named, the timeline not told');
is($rc, 0, 'and nothing refused for it: exit 0');

$node->stop;
done_testing();
