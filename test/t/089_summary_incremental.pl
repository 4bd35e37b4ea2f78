# Incremental backups from WAL summaries (PostgreSQL 17+): with
# summarize_wal on, a diff or incr reads of a relation's main fork only the
# blocks the summaries name; when they do not cover the range from the
# parent's start (summarize_wal off, summaries removed), every page is read
# and judged by its LSN, and stripe_backups says which method was used.
# Every restored chain has, table by table, the rows of its moment at the
# same places (ctid), passes amcheck and has a right visibility map: after
# a relation truncated and extended, a database copied with FILE_COPY, a
# summarizer stopped while the backup waits for it, summaries removed.
use strict;
use warnings;

use JSON::PP;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary', conf => 'autovacuum = off');
if ($node->safe_psql('postgres', 'SHOW server_version_num') < 170000)
{
	$node->stop;
	plan skip_all => 'WAL summaries need PostgreSQL 17 or later';
}
$node->safe_psql('postgres', 'ALTER SYSTEM SET summarize_wal = on; SELECT pg_reload_conf()');
$node->poll_query_until('postgres', 'SELECT summarizer_pid IS NOT NULL FROM pg_get_wal_summarizer_state()')
  or die 'the summarizer does not start';
my @dests = make_destinations(2);
my $arr = sql_array(@dests);

$node->command_ok([ 'pgbench', '-i', '-s', '2', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');
$node->safe_psql('postgres', q{
	CREATE EXTENSION amcheck;
	CREATE EXTENSION pg_visibility;
	CREATE TABLE shrink (id int PRIMARY KEY, v text);
	INSERT INTO shrink SELECT g, repeat(md5(g::text), 4) FROM generate_series(1, 40000) g;
	VACUUM (FREEZE) shrink;
	CREATE DATABASE tmpl;
});
$node->safe_psql('tmpl', 'CREATE TABLE t AS SELECT g FROM generate_series(1, 1000) g');

# Each table's rows with their places: a block taken from the wrong backup shows.
my @tables = qw(pgbench_accounts pgbench_branches pgbench_tellers pgbench_history shrink);
sub fingerprint
{
	my ($n) = @_;
	my $sql = join(' || \'/\' || ', map {
		"(SELECT count(*) || ':' || coalesce(md5(string_agg(ctid::text || t::text, ',' ORDER BY ctid)), '') FROM $_ t)"
	} @tables);
	my $main = $n->safe_psql('postgres', "SELECT $sql");
	my $dbs = $n->safe_psql('postgres', "SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database");
	my $copydb = $dbs =~ /copydb/
	  ? $n->safe_psql('copydb', "SELECT md5(string_agg(ctid::text || g::text, ',' ORDER BY ctid)) FROM t") : '';
	return "$main|$dbs|$copydb";
}

my (%at, %method);
sub backup
{
	my ($type, $settings) = @_;
	my $id = $node->safe_psql('postgres', ($settings // '') . "SELECT stripe_backup($arr, type => '$type')");
	$at{$id} = fingerprint($node);
	$method{$id} = $node->safe_psql('postgres', "SELECT coalesce(incremental_method, 'none') FROM stripe_backups WHERE id = $id");
	return $id;
}

sub metadata
{
	my ($id) = @_;
	return decode_json(slurp_file(backup_location($node, $id) . '/manifest.json'))->{metadata};
}

sub check_restore
{
	my ($id, $what) = @_;
	my $copy = restore_node("copy$id", backup_location($node, $id));
	$copy->start;
	is(fingerprint($copy), $at{$id}, "$what: every table's rows at their places, as the cluster had them");
	is(pgbench_invariant($copy), 't', "$what: pgbench's invariant holds");
	$copy->command_ok([ 'pg_amcheck', '--all', '--heapallindexed', '-p', $copy->port, '-h', $copy->host ],
		"$what: pg_amcheck --heapallindexed finds nothing");
	is($copy->safe_psql('postgres',
			"SELECT count(*) FROM (SELECT pg_check_visible(c) FROM unnest(ARRAY['shrink', 'pgbench_accounts']::regclass[]) c) s"),
		'0', "$what: the visibility map marks nothing all-visible that is not");
	$copy->stop;
}

sub change
{
	my ($i) = @_;
	$node->safe_psql('postgres', qq{
		UPDATE pgbench_accounts SET abalance = abalance + $i WHERE aid BETWEEN $i * 1000 AND $i * 1000 + 99;
		INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
			SELECT 1, 1, aid, $i, now() FROM generate_series($i * 1000, $i * 1000 + 99) aid;
		UPDATE pgbench_tellers SET tbalance = tbalance + $i * 100 WHERE tid = 1;
		UPDATE pgbench_branches SET bbalance = bbalance + $i * 100 WHERE bid = 1;
	});
}

my $full = backup('full');
is($method{$full}, 'none', 'a full backup records no incremental method');

# Summaries cover it: a relation truncated and extended again, a database copied by FILE_COPY.
change(1);
$node->safe_psql('postgres', q{
	DELETE FROM shrink WHERE id > 2000;
	VACUUM shrink;
	INSERT INTO shrink SELECT g, md5(g::text) FROM generate_series(50001, 52000) g;
	CREATE DATABASE copydb TEMPLATE tmpl STRATEGY = FILE_COPY;
});
my $incr1 = backup('incr');
is($method{$incr1}, 'wal_summaries', 'with summaries covering the range, they name the changed blocks');
is(metadata($incr1)->{incremental_method}, 'wal_summaries', 'the manifest says so too');
check_restore($incr1, 'full + incr from summaries (truncated and extended, FILE_COPY)');

# A summarizer that lags: stopped while the backup waits for it, then let go.
my $spid = $node->safe_psql('postgres', 'SELECT summarizer_pid FROM pg_get_wal_summarizer_state()');
ok($spid > 0, 'the WAL summarizer runs');
change(2);
$node->safe_psql('copydb', 'UPDATE t SET g = g + 1 WHERE g < 20');
kill 'STOP', $spid;
my $child = fork();
if ($child == 0)
{
	sleep 4;
	kill 'CONT', $spid;
	POSIX::_exit(0);
}
my $incr2 = backup('incr');
waitpid($child, 0);
kill 'CONT', $spid;
is($method{$incr2}, 'wal_summaries', 'a backup waits for a lagging summarizer and then uses its summaries');
check_restore($incr2, 'full + 2 incrs, the second after the summarizer lagged');

# summarize_wal off: every page read, judged by its LSN.
$node->safe_psql('postgres', 'ALTER SYSTEM SET summarize_wal = off; SELECT pg_reload_conf()');
change(3);
my $incr3 = backup('incr');
is($method{$incr3}, 'page_lsn', 'with summarize_wal off, every page is judged by its LSN');
is(metadata($incr3)->{incremental_method}, 'page_lsn', 'the manifest says so too');
my ($named, $judged) = (metadata($incr2)->{pages_checked}, metadata($incr3)->{pages_checked});
# (a factor of 2, not more: the pages the summaries name vary with what the
# server wrote meanwhile, hint bits and pruning; 416 to 869 against some 3,900 seen)
cmp_ok($named * 2, '<', $judged,
	"after the same kind of change, summaries read a fraction of the pages ($named, by page LSN $judged)");
$node->safe_psql('postgres', 'ALTER SYSTEM SET summarize_wal = on; SELECT pg_reload_conf()');
$node->poll_query_until('postgres', 'SELECT summarizer_pid IS NOT NULL FROM pg_get_wal_summarizer_state()')
  or die 'the summarizer does not start again';

# Summaries removed: the range from the parent is not covered; the next one's is again.
change(4);
$node->safe_psql('postgres', 'CHECKPOINT');
unlink glob($node->data_dir . '/pg_wal/summaries/*.summary');
my $incr4 = backup('incr');
is($method{$incr4}, 'page_lsn', 'with the summaries removed, every page is judged by its LSN');
change(5);
$node->safe_psql('postgres', 'DELETE FROM shrink WHERE id > 1000; VACUUM shrink; INSERT INTO shrink SELECT g, md5(g::text) FROM generate_series(60001, 60500) g');
my $incr5 = backup('incr');
is($method{$incr5}, 'wal_summaries', 'the next incremental, whose parent started after, uses summaries again');
my $diff = backup('diff');
is($method{$diff}, 'page_lsn', 'a diff from the full backup, whose summaries are gone, judges pages');

# The caller may judge pages whatever the summaries cover (the same change, both ways).
change(6);
my $incr6 = backup('incr', 'SET stripebackup.use_wal_summaries = off; ');
is($method{$incr6}, 'page_lsn', 'with stripebackup.use_wal_summaries off, every page is judged by its LSN');
my $incr7 = backup('incr');
is($method{$incr7}, 'wal_summaries', 'and on again, the summaries are used');
check_restore($incr5, 'full + 5 incrs, both methods in the chain');
check_restore($incr7, 'full + 7 incrs, the last two taken each way');
check_restore($diff, 'full + diff');

$node->stop;
done_testing();
