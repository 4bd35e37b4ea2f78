# The restored copy's archiving is a choice (issue 42): a copy restored to
# a target, started and promoted, writes nothing into its source's WAL
# archive by default (archive_mode = off in its postgresql.auto.conf,
# from SQL with a NOTICE and from the command with a line saying so); a
# standby and a restore to the latest WAL keep the source's archiving;
# archive_mode => 'keep' (--archive-mode=keep) keeps it for a target too,
# and that copy does archive its new timeline.
use strict;
use warnings;

use File::Find;
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
$node->safe_psql('postgres', "INSERT INTO marks VALUES (2); SELECT pg_create_restore_point('rp')");
$node->safe_psql('postgres', 'INSERT INTO marks VALUES (3); SELECT pg_switch_wal()');
wait_for_archive($node);

# Every file under the archive's destinations, with its size.
sub archive_files
{
	my @files;
	find(sub { push @files, "$File::Find::name " . (-s $_) if -f $_ }, @archive);
	return join("\n", sort @files);
}
my $before = archive_files();
like($before, qr/00000001[0-9A-F]{16}\.sbw/, 'the archive holds timeline 1\'s WAL');

# The settings the restore appended to DIR's postgresql.auto.conf.
sub auto_conf
{
	my ($dir) = @_;
	return slurp_file("$dir/postgresql.auto.conf");
}

# Start COPY, wait for it to promote, count the marks it holds, then write
# on its new timeline and switch WAL: (timeline, marks, segment switched from).
sub start_promote_write
{
	my ($copy) = @_;
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die $copy->name . ' did not promote';
	my $tli = $copy->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()');
	my $marks = $copy->safe_psql('postgres', 'SELECT count(*) FROM marks');
	my $segment = $copy->safe_psql('postgres',
		'INSERT INTO marks VALUES (42); SELECT pg_walfile_name(pg_current_wal_lsn()); SELECT pg_switch_wal()');
	return ($tli, $marks, (split /\n/, $segment)[0]);
}

# SQL, a time target, the default: off, said in a NOTICE, last in auto.conf.
my $copy = PostgreSQL::Test::Cluster->new('by_sql');
my ($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(target_dir => '" . $copy->data_dir . "', target_time => '$time')");
is($rc, 0, 'SQL: restored to a time');
like($err, qr/NOTICE: +the restored copy will not archive WAL: archive_mode = off goes into its postgresql.auto.conf/,
	'a NOTICE says the copy will not archive');
like($err, qr/HINT: +Give archive_mode => 'keep'/, 'and how to keep it');
like(auto_conf($copy->data_dir), qr/archive_mode = 'off'\n\z/, 'archive_mode = off, the last setting of auto.conf');
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
my ($tli, $marks) = start_promote_write($copy);
is($tli, '2', 'the copy promoted to timeline 2');
is($marks, '1', 'at the time target');
is($copy->safe_psql('postgres', 'SHOW archive_mode'), 'off', 'the copy runs with archive_mode off');
$copy->stop;
is(archive_files(), $before, 'the source\'s archive is unchanged after the copy started, promoted and wrote');

# The command, a restore point: off, and a line of its output says so.
my $location = backup_location($node, $backup);
my $by_command = PostgreSQL::Test::Cluster->new('by_command');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $by_command->data_dir, '--target-name', 'rp',
	'--archive', join(',', @archive));
is($rc, 0, 'the command: restored to a restore point') or diag($err);
like($out, qr/^archiving: off in the copy \(archive_mode = off in its postgresql.auto.conf\).*--archive-mode=keep keeps/m,
	'its output says the copy will not archive, and how to keep it');
$by_command->append_conf('postgresql.conf', 'port = ' . $by_command->port);
($tli, $marks) = start_promote_write($by_command);
is($marks, '2', 'at the restore point');
$by_command->stop;
is(archive_files(), $before, 'the archive is still unchanged');

# Kept: a restore to the latest WAL (the copy replaces its source), a standby.
my $latest = PostgreSQL::Test::Utils::tempdir() . '/latest';
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $latest, '--target-latest',
	'--archive', join(',', @archive));
is($rc, 0, 'the command: restored to the latest WAL');
unlike(auto_conf($latest), qr/archive_mode/, 'latest: no archive_mode written, the source\'s kept');
unlike($out, qr/^archiving:/m, 'and nothing said');
my $standby = PostgreSQL::Test::Utils::tempdir() . '/standby';
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $standby, '--standby',
	'--primary-conninfo', 'host=' . $node->host . ' port=' . $node->port);
is($rc, 0, 'the command: restored as a standby') or diag($err);
unlike(auto_conf($standby), qr/archive_mode/, 'a standby keeps it');
my $off_latest = PostgreSQL::Test::Utils::tempdir() . '/off_latest';
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $off_latest, '--target-latest',
	'--archive-mode', 'off', '--archive', join(',', @archive));
like(auto_conf($off_latest), qr/archive_mode = 'off'\n\z/, '--archive-mode=off: off for latest too');
like($out, qr/^archiving: off in the copy/m, 'said');
unlike($out, qr/--archive-mode=keep keeps/, 'with no hint: it was asked for');
my $no_target = PostgreSQL::Test::Utils::tempdir() . '/no_target';
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $no_target, '--archive-mode', 'off');
is($rc, 0, 'no target, --archive-mode=off');
like(auto_conf($no_target), qr/archive_mode = 'off'\n\z/, 'the setting alone is written');
ok(!-e "$no_target/recovery.signal", 'and no recovery.signal');
my $never = PostgreSQL::Test::Utils::tempdir() . '/never';
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $never, '--target-name', 'rp',
	'--archive-mode', 'on');
is($rc, 2, '--archive-mode=on: a usage error');
like($err, qr/--archive-mode "on" is not "off" or "keep"/, 'naming the option and the value');
ok(!-e $never, 'nothing created');

# Kept when asked, for a target: that copy archives its new timeline.
my $kept = PostgreSQL::Test::Cluster->new('kept');
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore(target_dir => '" . $kept->data_dir . "', target_time => '$time', archive_mode => 'keep')");
is($rc, 0, 'SQL: archive_mode => \'keep\'');
unlike($err, qr/will not archive/, 'no NOTICE');
unlike(auto_conf($kept->data_dir), qr/archive_mode/, 'no archive_mode written');
$kept->append_conf('postgresql.conf', 'port = ' . $kept->port);
my (undef, undef, $segment) = start_promote_write($kept);
my $tli_hex = substr($segment, 0, 8);
$kept->poll_query_until('postgres', "SELECT last_archived_wal = '$segment' FROM pg_stat_archiver")
  or die 'the kept copy does not archive';
$kept->stop;
like(archive_files(), qr/\/$tli_hex\.history\.sbw /, 'the kept copy archived its timeline\'s history');
isnt(archive_files(), $before, 'the archive changed');

$node->stop;
done_testing();
