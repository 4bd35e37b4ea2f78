# Backups taken on a cascading standby, across a promotion (issue 45), in
# the scenario of PostgreSQL's own 025_stuck_on_old_timeline: a standby is
# promoted while a cascading standby of it, made without WAL, follows it to
# the new timeline, its history file from the archive and its WAL streamed.
# A backup on the cascading standby before the promotion (timeline 1) and
# one after it (timeline 2) restore into copies that start with nothing
# else to do and hold what they should; a backup on the new primary and one
# on the cascading standby run at once, each under its own server's lock.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use File::Path ();

# The primary archives the timeline history files only (025's race: the
# history file reaches the archive before any segment), so the cascading
# standby must stream its WAL.
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(extra => ['--data-checksums'], allows_streaming => 1, has_archiving => 1);
my $archive = $primary->archive_dir;
$primary->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'stripebackup'
archive_command = 'case "%f" in *.history) cp "%p" "$archive/%f" ;; esac'
wal_keep_size = 128MB
});
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION stripebackup');
$primary->safe_psql('postgres', 'CREATE TABLE t AS SELECT g FROM generate_series(1, 10000) g');
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', allows_streaming => 1, has_streaming => 1, has_archiving => 1);
$standby->start;
$primary->wait_for_catchup($standby);

# The cascading standby: a base backup of the standby without WAL, streaming from it.
$standby->backup('cascade_base', backup_options => ['-Xnone']);
my $cascade = PostgreSQL::Test::Cluster->new('cascade');
$cascade->init_from_backup($standby, 'cascade_base', has_streaming => 1);
$cascade->enable_restoring($primary);
$cascade->append_conf('postgresql.conf', "recovery_target_timeline = 'latest'");
$cascade->start;
$standby->wait_for_catchup($cascade, 'replay', $standby->lsn('replay'));	# a standby has no insert position

my @dests = make_destinations(2);
my $before = $cascade->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
is($cascade->safe_psql('postgres', "SELECT status, timeline, from_standby FROM stripe_backups WHERE id = $before"),
	'completed|1|t', 'a backup on the cascading standby: completed on timeline 1');

# The standby promoted: the cascading standby follows it to timeline 2.
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';
my $segment = $standby->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$standby->safe_psql('postgres', 'SELECT pg_switch_wal()');
$standby->poll_query_until('postgres', "SELECT '$segment' <= last_archived_wal FROM pg_stat_archiver")
  or die 'the history file was not archived';
$standby->safe_psql('postgres', 'INSERT INTO t SELECT g FROM generate_series(10001, 12000) g; CHECKPOINT');
$standby->wait_for_catchup($cascade);
is($cascade->safe_psql('postgres', 'SELECT count(*) FROM t'), '12000', 'the cascading standby follows the new primary');

# A backup on the new primary and one on the cascading standby at once.
load_slow_data($standby);
$standby->wait_for_catchup($cascade);
my @primary_dests = make_destinations(1);
my $on_primary = start_slow_backup($standby, @primary_dests);
my $after = $cascade->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ', redundancy => 1)');
is($cascade->safe_psql('postgres', "SELECT status, timeline, redundancy FROM stripe_backups WHERE id = $after"),
	'completed|2|1', 'a backup on the cascading standby while the new primary takes one: completed on timeline 2, '
	  . 'with redundancy');
$standby->poll_query_until('postgres', "SELECT status <> 'running' FROM stripe_backups WHERE id = $on_primary")
  or die 'the backup on the new primary did not end';
is($standby->safe_psql('postgres', "SELECT status FROM stripe_backups WHERE id = $on_primary"), 'completed',
	'and the new primary\'s backup completed too');
is($cascade->safe_psql('postgres',
		"SELECT string_agg(id::text, ',' ORDER BY id) FROM stripe_backups WHERE from_standby"),
	"$before,$after", 'the cascading standby shows its own two backups');

# Each restores into a copy that starts with nothing else to do (the
# second with its first destination lost: the redundancy covers it).
my $lost = $cascade->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $after");
File::Path::rmtree("$dests[0]/$lost");
for my $case ([ 'tl1', $before, 10000 ], [ 'tl2', $after, 12000 ])
{
	my ($name, $id, $rows) = @$case;
	my $copy = restore_node("copy_$name", $id == $after ? "$dests[1]/$lost" : backup_location($cascade, $id));
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "the copy of backup $id did not finish recovery";
	is($copy->safe_psql('postgres', 'SELECT count(*) FROM t'), $rows,
		"the copy of backup $id holds the rows of its timeline");
	unlike(slurp_file($copy->logfile), qr/restore_command|could not open file .*pg_wal/,
		'it needed no WAL it did not have');
	$copy->stop;
}

done_testing();
