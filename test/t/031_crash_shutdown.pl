# A backup or a restore stopped with the server: SIGKILL to its worker (the
# postmaster restarts every process) and a fast shutdown.  The history row ends failed
# or cancelled with the reason, in the table itself: after a crash the
# start-up worker marks the row that was left running, and removes the
# partial folders, but never a folder that holds a manifest or files
# stripebackup did not write; and what a restore cut short wrote.  No WAL slot is left; the next backup completes.
use strict;
use warnings;

use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary', conf => 'restart_after_crash = on');
load_slow_data($node);
my @dests = make_destinations(2);

# SIGKILL to the worker: nothing of it runs again, the server restarts.
my $id = start_slow_backup($node, @dests);
my $pid = worker_pid($node);
wait_for_stripe($node, $id, $dests[0], 1);
my $log_offset = -s $node->logfile;
ok(kill('KILL', $pid), 'SIGKILL sent to the backup worker');
ok($node->poll_query_until('postgres',
		"SELECT status <> 'running' FROM stripe_backup_history WHERE id = $id"),
	'after the crash restart, the history row is no longer running');
check_backup_cleaned_up($node, $id, 'failed', qr/^the server restarted while it ran$/, @dests);
ok($node->log_contains(qr/all server processes terminated; reinitializing/, $log_offset),
	'the server went through a crash restart');
ok($node->log_contains(qr/stripebackup: backup $id was running when the server stopped; marked failed/,
		$log_offset), 'the start-up worker says which backup it marked');
ok($node->log_contains(qr/stripebackup: removed the partial folders of backup/, $log_offset),
	'and that it removed its partial folders');
my $backup = check_next_backup($node, @dests);

# SIGKILL to a restore worker: after the crash restart, the start-up worker
# removes what that restore wrote (its marker is in every directory it wrote
# into), the target too since the restore had made it; an empty target that
# was there before stays, empty.
$backup = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ", compression => 'none')");
my $base = PostgreSQL::Test::Utils::tempdir();
for my $case ([ "$base/new-target", 0 ], [ "$base/empty-target", 1 ])
{
	my ($target, $existed) = @$case;
	mkdir $target if $existed;
	my $restore = $node->safe_psql('postgres',
		"SET stripebackup.max_rate = 4; SELECT stripe_restore($backup, '$target', wait => false)");
	$pid = worker_pid($node);
	$node->poll_query_until('postgres', "SELECT count(*) = 1 FROM pg_ls_dir('$target') f WHERE f = 'base'")
	  or die 'the restore writes nothing';
	$log_offset = -s $node->logfile;
	ok(kill('KILL', $pid), "SIGKILL sent to restore $restore");
	ok($node->poll_query_until('postgres',
			"SELECT status = 'failed' FROM stripe_restore_history WHERE id = $restore"),
		"after the crash restart, restore $restore is marked failed");
	ok($node->wait_for_log(qr/stripebackup: removed what restore $restore left in "\Q$target\E"/, $log_offset),
		'the start-up worker removed what it wrote, and says so');
	if ($existed)
	{
		is(join(' ', folder_entries($target)), '', 'the target that existed is left, empty');
	}
	else
	{
		ok(!-e $target, 'the target the restore had made is gone');
	}
}
my $name = $node->safe_psql('postgres', "SELECT name FROM stripe_backup_history WHERE id = $backup");
File::Path::rmtree("$_/$name") for @dests;

# A fast shutdown while a backup runs: the worker stops it cleanly.
$id = start_slow_backup($node, @dests);
wait_for_stripe($node, $id, $dests[0], 1);
$node->stop('fast');
$node->start;
check_backup_cleaned_up($node, $id, 'cancelled', qr/server shutdown/, @dests);
check_next_backup($node, @dests);

# Rows left running whose folders are not only a partial backup: one with a
# manifest (it may be complete), one with a file of the user's.  The rows
# are marked; the folders are left.
my $row = q{INSERT INTO stripe_backup_history (id, name, status, started_at, destinations, weights,
	compression, compression_level, balance, requested_by, backup_uuid)
	VALUES (%d, '%s', 'running', now(), %s, '{1,1}', 'zstd', 1, 'adaptive', current_user, gen_random_uuid())};
$node->safe_psql('postgres', sprintf($row, 1001, 'with-manifest', sql_array(@dests)));
$node->safe_psql('postgres', sprintf($row, 1002, 'with-user-file', sql_array(@dests)));
make_path("$dests[0]/with-manifest", "$dests[1]/with-manifest", "$dests[0]/with-user-file");
append_to_file("$dests[0]/with-manifest/stripe-1.sbs", 'x');
append_to_file("$dests[1]/with-manifest/manifest.json", '{}');
append_to_file("$dests[0]/with-user-file/stripe-1.sbs", 'x');
append_to_file("$dests[0]/with-user-file/notes.txt", 'mine');
$log_offset = -s $node->logfile;
$node->restart;
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 2 FROM stripe_backup_history WHERE id IN (1001, 1002) AND status = 'failed'"),
	'rows left running are marked failed at a normal start too');
ok(-e "$dests[0]/with-manifest/stripe-1.sbs", 'the folders of a backup that holds a manifest are left');
ok($node->log_contains(qr/left the folders of backup "with-manifest"/, $log_offset), 'and the log says why');
is(join(' ', folder_entries("$dests[0]/with-user-file")), 'notes.txt stripe-1.sbs',
	"nothing is removed from a folder that holds the user's file");
ok($node->log_contains(qr/backup "with-user-file" was kept: in destination "\Q$dests[0]\E", it holds something the backup did not write/,
		$log_offset), 'and the log says why');

# The database in stripebackup.database_name missing, or without the
# extension: a LOG line, nothing else.
$node->safe_psql('postgres', 'CREATE DATABASE plain');
for my $case ([ 'nosuch', qr/database "nosuch" does not exist; backups left running are not checked/ ],
	[ 'plain', qr/extension "stripebackup" is not installed in database "plain"/ ])
{
	$node->append_conf('postgresql.conf', "stripebackup.database_name = '$case->[0]'");
	$log_offset = -s $node->logfile;
	$node->restart;
	ok($node->wait_for_log($case->[1], $log_offset), "stripebackup.database_name = '$case->[0]' is logged");
}
ok(!$node->log_contains(qr/FATAL:  (?!the database system is (?:not yet accepting connections|starting up|shutting down|in recovery mode))/, 0),
	'no start-up worker ended with FATAL');
$node->stop;
done_testing();
