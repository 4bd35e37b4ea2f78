# Every timeline history PostgreSQL writes is read (issue 42), in the
# scenario of PostgreSQL's own recovery test 028_pitr_timelines: copy A,
# restored past a restore point, promotes to timeline 2; copy B, restored to
# that restore point (before A's fork) with target timeline latest, follows
# timeline 2 back below its fork and promotes to timeline 3, whose history
# file says "1 <A's fork>" then "2 <B's, lower, switch point>".  Both keep
# archiving into the source's archive.  Then a restore to latest follows
# timeline 3 and starts with B's writes, and plan and verify (SQL and
# command) read the archive clean.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my @archive = make_destinations(2);
my $node = backup_node('primary', conf => archiving_conf(@archive));
my $sysid = $node->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
$node->safe_psql('postgres', 'CREATE TABLE marks (n int)');
my @dests = make_destinations(1);
my $backup = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
$node->safe_psql('postgres', "INSERT INTO marks VALUES (1); SELECT pg_create_restore_point('rp')");
# the fork of A a segment past the restore point, as in PostgreSQL's test
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (2); SELECT pg_switch_wal()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (3)');
my $fork_a = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (4); SELECT pg_switch_wal()');
wait_for_archive($node);

# Restore COPY with ARGS (SQL), start it, wait for its promotion; its timeline and marks.
sub restore_and_start
{
	my ($copy, $args) = @_;
	my ($rc, $out, $err) = $node->psql('postgres',
		"SELECT stripe_restore(backup => $backup, target_dir => '" . $copy->data_dir . "', $args)");
	is($rc, 0, $copy->name . ': restored') or diag($err);
	$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die $copy->name . ' did not promote';
	return ($copy->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()'),
		$copy->safe_psql('postgres', 'SELECT string_agg(n::text, \',\' ORDER BY n) FROM marks'));
}

# Write mark N on COPY, switch WAL, wait until the segment is archived, stop it.
sub write_and_archive
{
	my ($copy, $n) = @_;
	my $segment = $copy->safe_psql('postgres', "INSERT INTO marks VALUES ($n); SELECT pg_walfile_name(pg_current_wal_lsn())");
	$copy->safe_psql('postgres', 'SELECT pg_switch_wal()');
	$copy->poll_query_until('postgres', "SELECT last_archived_wal = '$segment' FROM pg_stat_archiver")
	  or die $copy->name . ' does not archive';
	$copy->stop;
}

my $copy_a = PostgreSQL::Test::Cluster->new('copy_a');
my ($tli, $marks) = restore_and_start($copy_a, "target_lsn => '$fork_a', archive_mode => 'keep'");
is("$tli $marks", '2 1,2,3', 'copy A: timeline 2, forked after mark 3');
write_and_archive($copy_a, 200);

my $copy_b = PostgreSQL::Test::Cluster->new('copy_b');
($tli, $marks) = restore_and_start($copy_b, "target_name => 'rp', archive_mode => 'keep'");
is("$tli $marks", '3 1', 'copy B: back to the restore point before A\'s fork, on timeline 3');
write_and_archive($copy_b, 300);

# Timeline 3's history, as PostgreSQL wrote it and the archive holds it.
my $history = PostgreSQL::Test::Utils::tempdir() . '/00000003.history';
my ($rc, $out, $err) = run_stripebackup('wal-get', '--archive', $archive[0], '--system-identifier', $sysid,
	'00000003.history', $history);
is($rc, 0, 'timeline 3\'s history fetched') or diag($err);
my @lines = grep { /^\d/ } split /\n/, slurp_file($history);
sub lsn { my ($hi, $lo) = $_[0] =~ m{^([0-9A-F]+)/([0-9A-F]+)$}i; return hex($hi) * 2**32 + hex($lo) }
my @entries = map { [ split /\t/ ] } @lines;
is(scalar(@entries), 2, 'two lines') or diag(join("\n", @lines));
ok($entries[0][0] == 1 && $entries[1][0] == 2 && lsn($entries[1][1]) < lsn($entries[0][1]),
	"\"1 $entries[0][1]\" then \"2 $entries[1][1]\": a switch point below the previous line's");

# Restored to latest: along timeline 3, with B's write and not A's.
($rc, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM stripe_verify($backup)");
is($out, '0', 'stripe_verify: no problem') or diag($err);
($rc, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM stripe_restore_plan($backup, target => 'latest')");
like($err, qr/NOTICE: +the WAL archive holds every segment from "\w+" to "0{7}3\w+" \(\d+\) for recovery on timeline 3/,
	'stripe_restore_plan to latest: every segment there, on the way to timeline 3');
my $c = PostgreSQL::Test::Cluster->new('copy_c');
($tli, $marks) = restore_and_start($c, "target => 'latest', archive_mode => 'off'");
is("$tli $marks", '4 1,300', 'restored to latest: along timeline 3, with copy B\'s write');
$c->stop;

my $location = backup_location($node, $backup);
($rc, $out, $err) = run_stripebackup('verify', $location, '--archive', join(',', @archive));
is($rc, 0, 'the command\'s verify: the backup and its WAL are good') or diag($out . $err);
($rc, $out, $err) = run_stripebackup('plan', $location, '--target-latest', '--archive', join(',', @archive));
is($rc, 0, 'the command\'s plan to latest') or diag($out . $err);
like($out, qr/on the way to timeline 3/, 'on the way to timeline 3');
my $d = restore_node('by_command', $location, '--target-latest', '--archive', join(',', @archive),
	'--archive-mode', 'off');
$d->start;
$d->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'by_command did not promote';
is($d->safe_psql('postgres', 'SELECT string_agg(n::text, \',\' ORDER BY n) FROM marks'), '1,300',
	'the command: restored to latest along timeline 3');
$d->stop;

$node->stop;
done_testing();
