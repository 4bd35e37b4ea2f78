# What a restore writes into the copy's postgresql.auto.conf comes back as
# given, and no value becomes a setting or a shell command of its own:
# PostgreSQL's configuration parser reads "\" as an escape ("\047" is a
# quote), so every value is written as ALTER SYSTEM writes it.
#
# - A WAL archive folder named ".../bkx\047;touch MARKER;\047", used for
#   restore_command both when given with --archive and when the command takes
#   it from the destinations the backup recorded: the copy starts, recovers
#   from that archive, and MARKER never appears.
# - A restore point named with a backslash (target_name => E'rp\\'), from SQL
#   and from the command: the copy starts and stops at it.
# - A standby whose primary_conninfo holds password='p\'w' (valid for libpq):
#   the copy starts and SHOW gives the value unchanged.
use strict;
use warnings;

use File::Path;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $root = PostgreSQL::Test::Utils::tempdir();
my $marker = "$root/PWNED";
# One destination of backups and WAL alike, named to break out of the setting.
my $hostile = "$root/bkx\\047;touch $marker;\\047";
File::Path::make_path($hostile);	# nested: the marker's path has slashes
my ($plain) = make_destinations(1);
(my $conf_value = "$hostile, $plain") =~ s/\\/\\\\/g;	# postgresql.conf's own escaping

my $node = backup_node('primary',
	conf => "archive_mode = on\narchive_library = 'stripebackup'\n"
	  . "stripebackup.archive_destinations = '$conf_value'\n");
is($node->safe_psql('postgres', 'SHOW stripebackup.archive_destinations'), "$hostile, $plain",
	'the archive is in a folder whose name holds \\047 and a shell command');
$node->safe_psql('postgres', 'CREATE TABLE t (id int PRIMARY KEY)');
my $dests = sql_array($hostile, $plain);
my $backup = $node->safe_psql('postgres', "SELECT stripe_backup($dests, compression => 'none')");
$node->safe_psql('postgres', 'INSERT INTO t SELECT generate_series(1, 100)');
$node->safe_psql('postgres', "SELECT pg_create_restore_point(E'rp\\\\')");
$node->safe_psql('postgres', 'INSERT INTO t SELECT generate_series(101, 200)');
my $last = $node->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
$node->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$last' AND failed_count = 0 FROM pg_stat_archiver")
  or die 'the WAL was not archived';

# Start COPY (restored into its data directory) and wait for recovery to end.
sub start_copy
{
	my ($copy) = @_;

	$copy->append_conf('postgresql.conf', 'port = ' . $copy->port . "\narchive_mode = off");
	$copy->start;
	return $copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
}

# From SQL: to the restore point, through restore_command over the hostile folder.
my $sql_copy = PostgreSQL::Test::Cluster->new('sql_copy');
$node->safe_psql('postgres', "SELECT stripe_restore($backup, '" . $sql_copy->data_dir
	  . "', target_name => E'rp\\\\')");
ok(start_copy($sql_copy), 'the copy restored from SQL starts and ends recovery');
is($sql_copy->safe_psql('postgres', 'SHOW recovery_target_name'), 'rp\\',
	'the restore point named with a backslash is the one it was given');
is($sql_copy->safe_psql('postgres', 'SELECT count(*) FROM t'), '100', 'and recovery stopped there');
like($sql_copy->safe_psql('postgres', 'SHOW restore_command'), qr/\Q--archive '$hostile'\E/,
	'restore_command names the folder as it is, one shell word');
ok(!-e $marker, 'no shell command hidden in the folder name ran');
$sql_copy->stop;

# From the command, the archive taken from the backup's recorded destinations.
my $location = backup_location($node, $backup);
my $cli_copy = PostgreSQL::Test::Cluster->new('cli_copy');
my ($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $cli_copy->data_dir,
	'--target-name', 'rp\\');
is($rc, 0, 'the command restores to the restore point, the archive from the backup') or diag($err);
like(slurp_file($cli_copy->data_dir . '/postgresql.auto.conf'),
	qr/^restore_command = .*bkx\\\\047;touch/m, 'the folder is in restore_command, its backslash doubled');
ok(start_copy($cli_copy), 'that copy starts and ends recovery');
is($cli_copy->safe_psql('postgres', 'SELECT count(*) FROM t'), '100', 'at the restore point');
ok(!-e $marker, 'and nothing ran but wal-get');
$cli_copy->stop;

# From the command, with --archive naming the folder.
my $given = PostgreSQL::Test::Cluster->new('given_copy');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $given->data_dir,
	'--target-latest', '--archive', $hostile, '--archive', $plain);
is($rc, 0, 'the command restores with --archive naming the folder') or diag($err);
ok(start_copy($given), 'that copy starts and recovers the whole archive');
is($given->safe_psql('postgres', 'SELECT count(*) FROM t'), '200', 'every archived row is there');
ok(!-e $marker, 'and still no marker file');
$given->stop;

# A standby whose conninfo holds a backslash before a quote, as libpq allows.
my $standby = PostgreSQL::Test::Cluster->new('standby');
my $conninfo = 'host=' . $node->host . ' port=' . $node->port . " dbname=postgres password='p\\'w'";
(my $sql_conninfo = $conninfo) =~ s/'/''/g;
$node->safe_psql('postgres', "SELECT stripe_restore($backup, '" . $standby->data_dir
	  . "', standby => true, primary_conninfo => '$sql_conninfo')");
$standby->append_conf('postgresql.conf', 'port = ' . $standby->port);
$standby->start;
is($standby->safe_psql('postgres', 'SHOW primary_conninfo'), $conninfo,
	'the standby starts, its primary_conninfo unchanged');
$node->safe_psql('postgres', 'INSERT INTO t VALUES (1000)');
ok($standby->poll_query_until('postgres', 'SELECT count(*) = 201 FROM t'),
	'and it streams from the primary with it');
$standby->stop;
ok(!-e $marker, 'no marker file after every copy started');

done_testing();
