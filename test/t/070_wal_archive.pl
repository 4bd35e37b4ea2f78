# WAL archiving with archive_library = 'stripebackup': every segment lands
# in exactly one destination, durable and checkable; stripe_wal_archive shows
# it; a segment archived again with the same contents is accepted, with
# other contents refused (and logged); a destination that disappears makes
# archiving fail while PostgreSQL keeps the WAL, and archiving catches up by
# itself once it is back.
use strict;
use warnings;

use File::Copy qw(move);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my @archive = make_destinations(2);
my $node = backup_node('primary', conf => "archive_mode = on\narchive_library = 'stripebackup'\n"
	  . "stripebackup.archive_destinations = '" . join(', ', @archive) . "'\nstripebackup.archive_batch = 8");
my $sysid = $node->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');

sub archived_up_to_now
{
	my $target = $node->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn() - 1)');
	return $node->poll_query_until('postgres', "SELECT last_archived_wal >= '$target' FROM pg_stat_archiver");
}

# Some segments, several ready at once so the module archives ahead.
$node->safe_psql('postgres', 'CREATE TABLE t (g int, v text)');
for (1 .. 6)
{
	$node->safe_psql('postgres', "INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 20000) g; SELECT pg_switch_wal()");
}
ok(archived_up_to_now(), 'the archiver keeps up');
my @files = map { [ glob("$_/wal/$sysid/*.sbw") ] } @archive;
ok(@{ $files[0] } > 0 && @{ $files[1] } > 0, 'both destinations hold segments');
my %seen;
$seen{ (split m{/}, $_)[-1] }++ for map { @$_ } @files;
is(scalar(grep { $_ > 1 } values %seen), 0, 'every segment is in exactly one destination');
my ($rc, $out, $err) = run_stripebackup('wal-verify', map({ ('--archive', $_) } @archive),
	'--system-identifier', $sysid);
is($rc, 0, 'the command verifies the archive') or diag($err);

my $view = $node->safe_psql('postgres',
	'SELECT count(*), sum(files) >= ' . scalar(keys %seen) . ', bool_and(lag_bytes IS NOT NULL), '
	  . 'max(failed_count) FROM stripe_wal_archive');
is($view, '2|t|t|0', 'stripe_wal_archive: a row per destination, what each took, the lag');

# The same segment again (its .done made .ready): accepted, nothing rewritten.
my $segment = $node->safe_psql('postgres', 'SELECT last_archived_wal FROM pg_stat_archiver');
my $status = $node->data_dir . "/pg_wal/archive_status/$segment";
my ($copy) = grep { -e $_ } map { "$_/wal/$sysid/$segment.sbw" } @archive;
my $mtime = (stat $copy)[9];
sleep 1;
move("$status.done", "$status.ready") or die;
$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
ok($node->poll_query_until('postgres', "SELECT count(*) = 0 FROM pg_ls_dir('pg_wal/archive_status') f WHERE f LIKE '%.ready'"),
	'a segment archived again with the same contents is accepted');
is((stat $copy)[9], $mtime, 'and its archived copy is left as it was');
is($node->safe_psql('postgres', 'SELECT failed_count FROM pg_stat_archiver'), '0', 'no failure');

# A destination that disappears: archiving fails, the WAL stays, then catches up.
my $away = "$archive[1].away";
move($archive[1], $away) or die;
my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', "INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 20000) g; SELECT pg_switch_wal()");
my $waiting = $node->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn() - 1)');
ok($node->poll_query_until('postgres', 'SELECT failed_count > 0 FROM pg_stat_archiver'),
	'archiving fails while a destination is missing');
ok($node->log_contains(qr/could not archive WAL file "\w+": .*\Q$archive[1]\E/, $log_offset),
	'the log says which file and which destination');
like($node->safe_psql('postgres', 'SELECT last_error FROM stripe_wal_archive LIMIT 1'), qr/\Q$archive[1]\E/,
	'and so does stripe_wal_archive');
ok(-e $node->data_dir . "/pg_wal/$waiting", 'PostgreSQL keeps the WAL it could not archive');
move($away, $archive[1]) or die;
$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
ok(archived_up_to_now(), 'once the destination is back, archiving catches up by itself');
ok(scalar(grep { -e "$_/wal/$sysid/$waiting.sbw" } @archive) == 1, 'the segment is archived, once');

# Other contents under a name already archived: refused, and said.
my $old = (sort keys %seen)[0];
$old =~ s/\.sbw$//;
my $fake = $node->data_dir . "/pg_wal/$old";
open my $fh, '>', $fake or die;
print $fh "\0" x (16 * 1024 * 1024);
close $fh;
$log_offset = -s $node->logfile;
append_to_file($node->data_dir . "/pg_wal/archive_status/$old.ready", '');
# A segment made ready by the server wakes the archiver, which then finds
# the planted one; a switch with nothing written since makes none, and the
# archiver would look only after its minute of sleep (60 s of this test on
# 15 and 16; 18 looks sooner).
$node->safe_psql('postgres', "INSERT INTO t VALUES (0, 'wake'); SELECT pg_switch_wal()");
ok($node->wait_for_log(qr/could not archive WAL file "$old": .*with other contents/, $log_offset),
	'other contents under an archived name are refused, saying so');
unlink($fake, $node->data_dir . "/pg_wal/archive_status/$old.ready");
$node->stop;
done_testing();
