# Point-in-time recovery through the command alone, with real WAL: a
# cluster archives with archive_command = 'stripebackup wal-push ...' over
# two destinations; a pg_basebackup copy recovers to a named point with
# restore_command = 'stripebackup wal-get --prefetch ...'; promoted, it
# starts timeline 2, whose history file it archives too; a second copy
# follows timeline 2 through the archive.  wal-verify finds every segment.
use strict;
use warnings;

use Cwd qw(abs_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my @dests = map { abs_path($_) } make_destinations(2);
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1, extra => ['--wal-segsize=1']);
$primary->append_conf('postgresql.conf', "archive_mode = on\narchive_command = '/bin/false'\n");
$primary->start;
my $sysid = $primary->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
my $archive = "--archive " . join(',', @dests) . " --system-identifier $sysid";

# archive_command: the failing one above held every segment back until now.
$primary->safe_psql('postgres', "ALTER SYSTEM SET archive_command = 'stripebackup wal-push $archive %f %p'");
$primary->reload;
$primary->backup('base');
$primary->safe_psql('postgres', 'CREATE TABLE t AS SELECT g FROM generate_series(1, 1000) g');
$primary->safe_psql('postgres', "SELECT pg_create_restore_point('before_more')");
$primary->safe_psql('postgres', 'INSERT INTO t SELECT g FROM generate_series(1001, 50000) g');
my $last = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
$primary->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$last' AND failed_count = 0 FROM pg_stat_archiver")
  or die 'the segments were not archived';

my ($rc, $out, $err) = run_stripebackup('wal-list', split(/ /, $archive));
is($rc, 0, 'wal-list of the archive exits 0') or diag($err);
like($out, qr/\.00000028\.backup/, "pg_basebackup's backup history file is archived");
my @segments = $out =~ /^([0-9A-F]{24}) /mg;
ok(@segments > 3, scalar(@segments) . ' segments archived');
my %where = map { (/^([0-9A-F]{24})\s+(\d)/) } split /\n/, $out;
ok((grep { $_ == 1 } values %where) && (grep { $_ == 2 } values %where), 'spread over both destinations');
($rc, $out, $err) = run_stripebackup('wal-verify', split(/ /, $archive), '--from', $segments[0], '--to', $last);
is($rc, 0, 'wal-verify: every segment from the first to the last is there') or diag($out . $err);

# Recover a copy to the restore point, through wal-get with prefetch.
my $copy = PostgreSQL::Test::Cluster->new('copy');
$copy->init_from_backup($primary, 'base');
$copy->append_conf('postgresql.conf', qq{
archive_mode = on
archive_command = 'stripebackup wal-push $archive %f %p'
restore_command = 'stripebackup wal-get $archive --prefetch 4 %f %p'
recovery_target_name = 'before_more'
recovery_target_action = 'promote'
});
$copy->set_recovery_mode;
$copy->start;
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'recovery did not end';
is($copy->safe_psql('postgres', 'SELECT count(*) FROM t'), '1000', 'the copy recovered to the restore point');
is($copy->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()'), '2',
	'and, promoted, is on timeline 2');
like(slurp_file($copy->logfile), qr/restored log file "[0-9A-F]{24}" from archive/,
	'PostgreSQL restored segments from the archive');
$copy->safe_psql('postgres', 'INSERT INTO t SELECT g FROM generate_series(-99, 0) g');
my $last2 = $copy->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$copy->safe_psql('postgres', 'SELECT pg_switch_wal()');
$copy->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$last2' AND failed_count = 0 FROM pg_stat_archiver")
  or die 'timeline 2 was not archived';
ok(-f "$dests[0]/wal/$sysid/00000002.history.sbw" && -f "$dests[1]/wal/$sysid/00000002.history.sbw",
	'the history file of timeline 2 is in both destinations');
$copy->stop;

# A second copy follows timeline 2 (recovery_target_timeline = latest) to its end.
my $second = PostgreSQL::Test::Cluster->new('second');
$second->init_from_backup($primary, 'base');
$second->append_conf('postgresql.conf', "restore_command = 'stripebackup wal-get $archive --prefetch 2 %f %p'\n");
$second->set_recovery_mode;
$second->start;
$second->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'recovery did not end';
is($second->safe_psql('postgres', 'SELECT count(*), min(g) FROM t'), '1100|-99',
	'a second copy followed timeline 2 through the archive');
($rc, $out, $err) = run_stripebackup('wal-verify', split(/ /, $archive), '--from', $segments[0], '--to', $last2);
is($rc, 0, 'wal-verify across the switch to timeline 2 (by its history file)') or diag($out . $err);
$second->stop;
$primary->stop;

done_testing();
