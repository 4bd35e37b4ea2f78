# Restore as a standby: stripe_restore(..., standby => true, primary_conninfo,
# primary_slot_name) and `stripebackup restore --standby`.  The copy starts
# in recovery, streams from the primary (pg_stat_replication shows it, on
# its slot) and holds what the primary writes afterwards; a standby without
# primary_conninfo catches up from the WAL archive alone (restore_command).
# Bad combinations and values are refused before anything is written.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my @archive = make_destinations(2);
my $node = backup_node('primary',
	conf => "archive_mode = on\narchive_library = 'stripebackup'\n"
	  . "stripebackup.archive_destinations = '" . join(', ', @archive) . "'\n");
my @dests = make_destinations(2);
my $arr = sql_array(@dests);

$node->safe_psql('postgres', q{
	CREATE TABLE t (id int PRIMARY KEY, v text);
	INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 10000) g;
	SELECT pg_create_physical_replication_slot('standby_1');
});
my $backup = $node->safe_psql('postgres', "SELECT stripe_backup($arr)");
my $conninfo = 'port=' . $node->port . ' host=' . $node->host . ' dbname=postgres';

# Refused before anything is written.
my $copy_dir = PostgreSQL::Test::Utils::tempdir() . '/never';
for my $case (
	[ "standby => true, target_time => now()", qr/a standby follows its primary and takes no recovery target \(a time target/ ],
	[ "primary_conninfo => 'host=x'", qr/primary_conninfo and primary_slot_name go with standby => true/ ],
	[ "standby => true, primary_slot_name => 'Bad-Slot'", qr/primary_slot_name "Bad-Slot" is not a replication slot name/ ],
	[ "standby => true, primary_conninfo => E'host=x\\nrestore_command = ''rm -rf /'''",
		qr/primary_conninfo "host=x/ ])
{
	my ($args, $re) = @$case;
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_restore($backup, '$copy_dir', $args)");
	like($err, $re, "refused: $args");
}
ok(!-e $copy_dir, 'the refused restores wrote nothing');
is($node->safe_psql('postgres', 'SELECT count(*) FROM stripe_restores'), '0', 'nor recorded a restore');

# From SQL: a standby on the slot.
my $standby = PostgreSQL::Test::Cluster->new('standby_sql');
my $restore = $node->safe_psql('postgres', "SELECT stripe_restore($backup, '" . $standby->data_dir
	  . "', standby => true, primary_conninfo => '$conninfo', primary_slot_name => 'standby_1')");
is($node->safe_psql('postgres', "SELECT status, standby FROM stripe_restores WHERE id = $restore"),
	'completed|t', 'restored as a standby, and recorded so');
ok(-e $standby->data_dir . '/standby.signal' && !-e $standby->data_dir . '/recovery.signal',
	'standby.signal is there, recovery.signal is not');
my $auto = slurp_file($standby->data_dir . '/postgresql.auto.conf');
like($auto, qr/^primary_slot_name = 'standby_1'$/m, 'primary_slot_name is set');
like($auto, qr/^restore_command = '.*stripebackup'' wal-get --archive/m,
	'restore_command fetches from the WAL archive');
$standby->append_conf('postgresql.conf', 'port = ' . $standby->port);
$standby->start;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the copy runs as a standby');
$node->safe_psql('postgres', "INSERT INTO t VALUES (10001, 'after the backup')");
ok($standby->poll_query_until('postgres', 'SELECT count(*) = 10001 FROM t'),
	'it holds what the primary wrote after the backup');
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_replication r JOIN pg_replication_slots s ON s.active_pid = r.pid"
		  . " WHERE s.slot_name = 'standby_1' AND r.state = 'streaming'"),
	'the primary streams to it on its slot');
$standby->stop;

# From the command, streaming without a slot.
my $standby2 = PostgreSQL::Test::Cluster->new('standby_cli');
my ($rc, $out, $err) = run_stripebackup('restore', backup_location($node, $backup), '--target',
	$standby2->data_dir, '--standby', '--primary-conninfo', $conninfo . ' application_name=cli_copy');
is($rc, 0, 'the command restores a standby') or diag($err);
$standby2->append_conf('postgresql.conf', 'port = ' . $standby2->port);
$standby2->start;
$node->safe_psql('postgres', "INSERT INTO t VALUES (10002, 'later')");
ok($standby2->poll_query_until('postgres', 'SELECT count(*) = 10002 FROM t'), 'it follows the primary');
ok($node->poll_query_until('postgres',
		"SELECT state = 'streaming' FROM pg_stat_replication WHERE application_name = 'cli_copy'"),
	'pg_stat_replication shows it streaming');
$standby2->stop;

($rc, $out, $err) = run_stripebackup('restore', backup_location($node, $backup), '--target',
	"$copy_dir-2", '--primary-conninfo', $conninfo);
isnt($rc, 0, 'the command refuses --primary-conninfo without --standby');
like($err, qr/--primary-conninfo and --primary-slot-name go with --standby/, 'saying so');
($rc, $out, $err) = run_stripebackup('restore', backup_location($node, $backup), '--target',
	"$copy_dir-2", '--standby', '--target-immediate');
like($err, qr/--standby takes no --target-immediate/, 'and a standby with a recovery target');
ok(!-e "$copy_dir-2", 'writing nothing');

# Without primary_conninfo: the archive alone brings it up to date.
$node->safe_psql('postgres', "INSERT INTO t VALUES (10003, 'archived')");
my $segment = $node->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
ok($node->poll_query_until('postgres', "SELECT last_archived_wal >= '$segment' FROM pg_stat_archiver"),
	'the WAL holding the last row is archived');
my $standby3 = PostgreSQL::Test::Cluster->new('standby_archive');
$node->safe_psql('postgres', "SELECT stripe_restore(target_dir => '" . $standby3->data_dir . "', standby => true)");
unlike(slurp_file($standby3->data_dir . '/postgresql.auto.conf'), qr/^primary_conninfo/m,
	'no primary_conninfo given, none written');
$standby3->append_conf('postgresql.conf', 'port = ' . $standby3->port);
$standby3->start;
ok($standby3->poll_query_until('postgres', 'SELECT count(*) = 10003 FROM t'),
	'the newest backup, restored as a standby, catches up from the WAL archive');
is($standby3->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'and stays a standby');
$standby3->stop;

done_testing();
