# The timeline trap (issue 42): a copy restored to a time, promoted and left
# archiving (archive_mode => 'keep') puts a short timeline 2 into the
# source's archive.  A later restore to an LSN on timeline 1 past that
# branch, with target timeline latest given, would follow timeline 2 and
# stop short: it is refused before anything is written, naming timeline 1
# and the option to choose it (SQL and command); with no timeline given,
# timeline 1 is chosen and the copy lands exactly at the target.  A backup
# taken on timeline 1 after the branch, restored to immediate along latest
# given (timeline 2, which is not a child of its history), is refused
# naming timeline 1; with none given, timeline 1 is chosen and the copy
# starts; verify of it follows timeline 1 and finds nothing wrong.
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
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (1)');
my $time = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (2); SELECT pg_switch_wal()');
wait_for_archive($node);

# The trap: a test copy promoted on timeline 2, archiving into the same archive.
promote_archiving_copy($node, $time, 'test_copy');

# Timeline 1 goes on, two segments past where timeline 2's archived WAL ends.
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (3); SELECT pg_switch_wal()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (4); SELECT pg_switch_wal()');
my $lsn = $node->safe_psql('postgres', 'INSERT INTO marks VALUES (5); SELECT pg_current_wal_insert_lsn()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (6); SELECT pg_switch_wal()');
wait_for_archive($node);

# SQL, target timeline latest given (so timeline 2): refused, timeline 1 named.
my $never = PostgreSQL::Test::Utils::tempdir() . '/never';
my ($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '$never', target_lsn => '$lsn', "
	  . "target_timeline => 'latest')");
like($err, qr/ERROR: +recovery to the lsn target would stop short of it: .*expected on timeline 2.*; timeline 1 holds the target/,
	'SQL: an LSN on timeline 1 past the branch, along timeline 2: refused, timeline 1 named');
like($err, qr/HINT: +Choose timeline 1 with target_timeline => '1'/, 'with the argument that chooses it');
ok(!-e $never, 'nothing created');
my $location = backup_location($node, $backup);
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $never, '--target-lsn', $lsn,
	'--archive', join(',', @archive), '--target-timeline', 'latest');
isnt($rc, 0, 'the command: refused too');
like($err, qr/along timeline 2 would stop short of it: .*timeline 1 holds the target \(choose it with --target-timeline 1\)/,
	'naming timeline 1 and the option');
ok(!-e $never, 'nothing created');

# No timeline given: timeline 1 chosen, and the copy lands exactly at the target, on timeline 1's history.
my $copy = PostgreSQL::Test::Cluster->new('on_timeline1');
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $backup, target_dir => '" . $copy->data_dir . "', target_lsn => '$lsn')");
is($rc, 0, 'no target_timeline: restored') or diag($err);
like($err, qr/NOTICE: +recovery follows timeline 1, which holds the lsn target: no target_timeline was given, and the newest, timeline 2, does not reach it/,
	'saying timeline 1 was chosen');
like(slurp_file($copy->data_dir . '/postgresql.auto.conf'), qr/^recovery_target_timeline = '1'$/m,
	'the copy\'s settings follow timeline 1');
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
$copy->start;
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the copy did not promote';
is($copy->safe_psql('postgres', "SELECT string_agg(n::text, ',' ORDER BY n) FROM marks"), '1,2,3,4,5',
	'the copy holds timeline 1\'s marks up to the LSN, none of timeline 2\'s');
$copy->stop;

# A backup taken on timeline 1 after timeline 2 branched off: latest would
# follow timeline 2, which is not a child of its history.
my $later = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (7); SELECT pg_switch_wal()');
wait_for_archive($node);
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $later, target_dir => '$never', target => 'immediate', "
	  . "target_timeline => 'latest')");
like($err, qr/ERROR: +recovery to the immediate target along timeline 2 cannot start: timeline 2 branched off timeline 1 at [0-9A-F]+\/[0-9A-F]+, before the backup's end/,
	'SQL: immediate from a later backup along latest (timeline 2): refused');
like($err, qr/HINT: +Choose timeline 1 with target_timeline => '1'/, 'naming timeline 1 and the argument');
my $later_location = backup_location($node, $later);
($rc, $out, $err) = run_stripebackup('restore', $later_location, '--target', $never, '--target-immediate',
	'--archive', join(',', @archive), '--target-timeline', 'latest');
like($err, qr/along timeline 2 cannot start: .*timeline 1 holds the backup \(choose timeline 1 with --target-timeline 1\)/,
	'the command: refused too, naming the option');
ok(!-e $never, 'nothing created');
my $immediate = PostgreSQL::Test::Cluster->new('immediate');
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(backup => $later, target_dir => '" . $immediate->data_dir . "', target => 'immediate')");
is($rc, 0, 'immediate, no target_timeline: restored') or diag($err);
like($err, qr/NOTICE: +recovery follows timeline 1, which holds the immediate target: no target_timeline was given, and the newest, timeline 2, does not reach it/,
	'saying timeline 1 was chosen');
like($err, qr/DETAIL: +timeline 2 branched off timeline 1 .*; timeline 1 holds the backup/, 'and why');
like(slurp_file($immediate->data_dir . '/postgresql.auto.conf'), qr/^recovery_target_timeline = '1'$/m,
	'the copy\'s settings follow timeline 1');
my $immediate_cmd = PostgreSQL::Test::Utils::tempdir() . '/immediate_cmd';
($rc, $out, $err) = run_stripebackup('restore', $later_location, '--target', $immediate_cmd, '--target-immediate',
	'--archive', join(',', @archive));
is($rc, 0, 'the command, immediate, no --target-timeline: restored') or diag($out . $err);
like($out, qr/recovery follows timeline 1, which holds the immediate target: no --target-timeline was given/,
	'saying timeline 1 was chosen');
like(slurp_file("$immediate_cmd/postgresql.auto.conf"), qr/^recovery_target_timeline = '1'$/m,
	'the copy\'s settings follow timeline 1');
$immediate->append_conf('postgresql.conf', 'port = ' . $immediate->port);
$immediate->start;
$immediate->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'immediate did not promote';
is($immediate->safe_psql('postgres', "SELECT string_agg(n::text, ',' ORDER BY n) FROM marks"), '1,2,3,4,5,6',
	'the copy starts, consistent at the backup');
$immediate->stop;
# verify does not call the later backup damaged: it follows timeline 1
($rc, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM stripe_verify($later)");
is($out, '0', 'stripe_verify of the later backup: no problem');
like($err, qr/DETAIL: +Along timeline 1, which holds the backup; timeline 2 branched off before the backup's end/,
	'saying which timeline it followed and which it passed over');
($rc, $out, $err) = run_stripebackup('verify', $later_location, '--archive', join(',', @archive));
is($rc, 0, 'the command\'s verify: exit 0') or diag($out . $err);
like($out, qr/along timeline 1, which holds the backup; timeline 2 branched off/, 'and says so');

$node->stop;
done_testing();
