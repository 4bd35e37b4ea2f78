# Differential and incremental backups: a full backup, then incrementals and
# a differential after changes of every kind (a table truncated by VACUUM and
# grown again, a relation dropped and one created, a database copied with
# STRATEGY = FILE_COPY from a template changed before the parent, and dropped
# and made again, rows deleted and vacuumed so that visibility map bits were
# cleared, SET TABLESPACE, SET LOGGED), one of them under pgbench.  Restoring
# any backup of the chain gives the cluster as it was at that backup: the
# same data, pgbench's invariant, amcheck clean, the visibility map right.
# A missing middle link is refused by plan, verify and restore before
# anything is written; retention keeps chains whole; a parent that is not
# fit makes a full backup, with a notice.  A cluster without data checksums
# is covered too.  Each diff and incr found its changed blocks by the method
# the server's settings choose: from WAL summaries with summarize_wal on
# (PostgreSQL 17+), else by every page's LSN.
use strict;
use warnings;

use File::Path ();
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

# No autovacuum: what changes between backups is what the test changes.
my $node = backup_node('primary', conf => 'autovacuum = off');
my @dests = make_destinations(2);
my $arr = sql_array(@dests);
my $tblspc = PostgreSQL::Test::Utils::tempdir();

$node->safe_psql('postgres', "CREATE TABLESPACE ts1 LOCATION '$tblspc'");
$node->command_ok([ 'pgbench', '-i', '-s', '3', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');
$node->safe_psql('postgres', q{
	CREATE EXTENSION amcheck;
	CREATE EXTENSION pg_visibility;
	CREATE TABLE shrink (id int PRIMARY KEY, v text);
	INSERT INTO shrink SELECT g, repeat(md5(g::text), 4) FROM generate_series(1, 40000) g;
	CREATE TABLE dropme AS SELECT g FROM generate_series(1, 5000) g;
	CREATE TABLE vmt (id int, v text) WITH (autovacuum_enabled = off);
	INSERT INTO vmt SELECT g, md5(g::text) FROM generate_series(1, 30000) g;
	VACUUM (FREEZE) vmt;
	CREATE UNLOGGED TABLE ul AS SELECT g, md5(g::text) AS v FROM generate_series(1, 3000) g;
	CREATE TABLE moved AS SELECT g, md5(g::text) AS v FROM generate_series(1, 3000) g;
	CREATE DATABASE tmpl;
});
$node->safe_psql('tmpl', 'CREATE TABLE t AS SELECT g FROM generate_series(1, 1000) g');
$node->safe_psql('tmpl', 'UPDATE t SET g = g + 1 WHERE g < 10');

# What a restore must give back: every table's rows at their places (a block
# taken from the wrong backup shows, even with the same rows elsewhere), and
# pgbench's invariant.
my $tables = "shrink, vmt, moved, pgbench_accounts, pgbench_history";
sub fingerprint
{
	my ($n) = @_;
	my $rows = join(', ', map {
		"(SELECT count(*) || ':' || coalesce(md5(string_agg(ctid::text || t::text, ',' ORDER BY ctid)), '') FROM $_ t)"
	} split(/, /, $tables));
	my $main = $n->safe_psql('postgres', qq{
		SELECT $rows,
		       (SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class
		         WHERE relname IN ('dropme', 'newt', 'ul'))});
	my $dbs = $n->safe_psql('postgres', "SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database");
	my $copydb = $dbs =~ /copydb/ ? $n->safe_psql('copydb', 'SELECT count(*), sum(g) FROM t') : '';
	return "$main|$dbs|$copydb";
}

# The method every diff and incr below must use: this chain is the oracle
# of both (test/run-version.sh runs this file again with summarize_wal on).
# Summarization runs from the server's start, before the full backup, and
# the chain stays on one timeline: no backup here may fall back.
my $method = expected_incremental_method($node);
note("diff and incr backups expected to use $method");

# A backup of TYPE, with the method it must have recorded: a diff's or
# incr's the one above, a full backup's none (unless WANT says otherwise).
sub backup
{
	my ($type, $want) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_backup($arr, type => '$type')");
	is($ret, 0, "$type backup taken") or diag($err);
	check_incremental_method($node, $out, $want // ($type eq 'full' ? 'none' : $method), "$type backup $out")
	  if $ret == 0;
	return ($out, $err);
}

sub history
{
	my ($id) = @_;
	return $node->safe_psql('postgres', "SELECT type, coalesce(parent_id, 0) FROM stripe_backups WHERE id = $id");
}

my ($full) = backup('full');
is(history($full), 'full|0', 'the full backup has no parent');

# Changes after the full backup, then an incremental while pgbench writes.
$node->safe_psql('postgres', q{
	DELETE FROM shrink WHERE id > 2000;
	VACUUM shrink;
	DROP TABLE dropme;
	CREATE TABLE newt AS SELECT g FROM generate_series(1, 2000) g;
	DELETE FROM vmt WHERE id % 10 = 0;
	VACUUM vmt;
	ALTER TABLE ul SET LOGGED;
	ALTER TABLE moved SET TABLESPACE ts1;
	CREATE DATABASE copydb TEMPLATE tmpl STRATEGY = FILE_COPY;
});
my $pgbench = IPC::Run::start(
	[ 'pgbench', '-c', '2', '-T', '600', '-n', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'>', \my $pgbench_out, '2>', \my $pgbench_err);
$node->poll_query_until('postgres', 'SELECT count(*) > 100 FROM pgbench_history')
  or die 'pgbench does not write';
my ($incr1) = backup('incr');
# TERM, not INT: a shell's background jobs ignore SIGINT, and pgbench inherits that.
$pgbench->signal('TERM');
$pgbench->finish;
is(history($incr1), "incr|$full", 'the incremental names the full backup as its parent');

# A chain of five incrementals, each after a few changes, then a differential.
my %at;
my @incrs = ($incr1);
for my $i (2 .. 5)
{
	$node->safe_psql('postgres', qq{
		INSERT INTO shrink SELECT g, md5(g::text) FROM generate_series(2001 + ($i - 2) * 5000, 2000 + ($i - 1) * 5000) g;
		UPDATE pgbench_accounts SET abalance = abalance + $i WHERE aid BETWEEN $i * 1000 AND $i * 1000 + 99;
		INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
			SELECT 1, 1, aid, $i, now() FROM generate_series($i * 1000, $i * 1000 + 99) aid;
		UPDATE pgbench_tellers SET tbalance = tbalance + $i * 100 WHERE tid = 1;
		UPDATE pgbench_branches SET bbalance = bbalance + $i * 100 WHERE bid = 1;
	});
	if ($i == 3)
	{
		$node->safe_psql('postgres', 'DROP DATABASE copydb');
		$node->safe_psql('tmpl', 'UPDATE t SET g = g * 2 WHERE g > 990');
		$node->safe_psql('postgres', 'CREATE DATABASE copydb TEMPLATE tmpl STRATEGY = FILE_COPY');
	}
	my ($id) = backup('incr');
	is(history($id), "incr|$incrs[-1]", "incremental $i names the one before as its parent");
	push @incrs, $id;
	$at{$id} = fingerprint($node);
}

$node->safe_psql('postgres', 'DELETE FROM vmt WHERE id % 7 = 0; VACUUM vmt; UPDATE moved SET v = upper(v) WHERE g < 50');
my ($diff) = backup('diff');
is(history($diff), "diff|$full", 'the differential names the last full backup as its parent');
$at{$diff} = fingerprint($node);
$node->safe_psql('postgres', 'INSERT INTO moved SELECT g, md5(g::text) FROM generate_series(3001, 3500) g');
my ($after_diff) = backup('incr');
is(history($after_diff), "incr|$diff", 'an incremental after the differential names it');
$at{$after_diff} = fingerprint($node);

# The relations' main forks: a few changed pages in that last incremental,
# everything in the full backup.  (Their free space maps and visibility maps
# are copied whole: not every change of theirs raises their page LSNs.)
sub main_fork_bytes
{
	my ($id) = @_;
	my $m = decode_json(slurp_file(backup_location($node, $id) . '/manifest.json'));
	my $sum = 0;
	$sum += $_->{stream_length}
	  for grep { $_->{type} eq 'file' && $_->{path} =~ m{^base/\d+/\d+(\.\d+)?$} } @{ $m->{entries} };
	return $sum;
}
my ($full_rel, $incr_rel) = (main_fork_bytes($full), main_fork_bytes($after_diff));
my $last_manifest = decode_json(slurp_file(backup_location($node, $after_diff) . '/manifest.json'));
my $maps_unread = grep { $_->{path} =~ /_(fsm|vm)$/ && $_->{incremental} && $_->{stream_length} == 0 }
  @{ $last_manifest->{entries} };
cmp_ok($maps_unread, '>', 10,
	"free space and visibility maps whose times did not change are taken from the parent unread ($maps_unread)");
cmp_ok($incr_rel, '<', $full_rel / 50,
	"after a small change, an incremental stores a few pages of relations ($incr_rel bytes, the full $full_rel)");

# Every restored cluster: the data of its moment, amcheck clean, the visibility map right.
sub check_copy
{
	my ($copy, $what) = @_;
	$copy->start;
	is(pgbench_invariant($copy), 't', "$what: pgbench's invariant holds");
	$copy->command_ok([ 'pg_amcheck', '--all', '--heapallindexed', '-p', $copy->port, '-h', $copy->host ],
		"$what: pg_amcheck --heapallindexed finds nothing");
	is($copy->safe_psql('postgres',
			"SELECT count(*) FROM (SELECT pg_check_visible(c) FROM unnest(ARRAY['vmt', 'shrink', 'pgbench_accounts']::regclass[]) c) s"),
		'0', "$what: the visibility map marks nothing all-visible that is not");
	is($copy->safe_psql('postgres',
			"SELECT count(*) FROM (SELECT pg_check_frozen(c) FROM unnest(ARRAY['vmt', 'shrink']::regclass[]) c) s"),
		'0', "$what: nor all-frozen");
	$copy->safe_psql('postgres', 'VACUUM');
	return fingerprint($copy);
}

# The incremental taken under pgbench, restored from SQL.
my $copy1 = PostgreSQL::Test::Cluster->new('copy1');
my $restore = $node->safe_psql('postgres', "SELECT stripe_restore($incr1, '" . $copy1->data_dir . "', "
	  . "tablespace_mapping => ARRAY['$tblspc=" . PostgreSQL::Test::Utils::tempdir() . "/ts'])");
is($node->safe_psql('postgres', "SELECT status FROM stripe_restores WHERE id = $restore"), 'completed',
	'the incremental taken under load is restored from SQL');
command_ok([ 'pg_verifybackup', $copy1->data_dir ], 'pg_verifybackup accepts it');
$copy1->append_conf('postgresql.conf', 'port = ' . $copy1->port);
check_copy($copy1, 'full + incremental under load');
is($copy1->safe_psql('postgres', "SELECT to_regclass('dropme') IS NULL, count(*) FROM newt"), 't|2000',
	'the dropped table stays dropped, the new one is there');
is($copy1->safe_psql('postgres', 'SELECT count(*), max(id) FROM shrink'), '2000|2000',
	'the table VACUUM truncated has its new length');
$copy1->stop;

# The end of the chain of five, the differential and the incremental after it, with the command.
for my $case ([ $incrs[-1], 'full + 5 incrementals' ], [ $diff, 'full + differential' ],
	[ $after_diff, 'full + differential + incremental' ])
{
	my ($id, $what) = @$case;
	my $copy = restore_node("copy$id", backup_location($node, $id),
		'--tablespace-mapping', "$tblspc=" . PostgreSQL::Test::Utils::tempdir() . '/ts');
	is(check_copy($copy, $what), $at{$id}, "$what: the same data as the cluster had then");
	$copy->stop;
}

# Plan, verify and restore name the chain; a missing middle link is refused by all three.
my ($ret, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM stripe_restore_plan($incrs[-1]) WHERE stripe IS NOT NULL");
is($out, 12, 'the plan of the fifth incremental lists the stripes of all six backups');
like($err, qr/the restore reads its chain/, 'and says it reads the chain');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify($incrs[-1])"), '0',
	'verify of the chain finds nothing wrong');
my %name = map { $_ => $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $_") } @incrs;
rename("$_/$name{$incrs[2]}", "$_/aside") for @dests;
my $target = PostgreSQL::Test::Utils::tempdir() . '/never';
for my $call ("SELECT * FROM stripe_restore_plan($incrs[-1])", "SELECT * FROM stripe_verify($incrs[-1])",
	"SELECT stripe_restore($incrs[-1], '$target')")
{
	($ret, $out, $err) = $node->psql('postgres', $call);
	like($err, qr/which it needs and which was not found/, "a missing middle link: $call is refused")
	  and like($err, qr/\Q$name{$incrs[2]}\E/, 'naming the missing backup');
}
ok(!-e $target, 'the refused restore wrote nothing');
($ret, $out, $err) = run_stripebackup('restore', backup_location($node, $incrs[-1]), '--target', $target);
isnt($ret, 0, 'the command refuses it too');
like($err, qr/\Q$name{$incrs[2]}\E/, 'naming the missing backup');
rename("$_/aside", "$_/$name{$incrs[2]}") for @dests;

# Retention keeps chains whole: the newest (an incr of the diff) keeps the diff and the full.
($ret, $out, $err) = $node->psql('postgres',
	"SELECT string_agg(backup_id::text, ',' ORDER BY backup_id) FROM stripe_expire(keep_last => 1) WHERE removed");
is($out, join(',', @incrs), 'keep_last => 1 removes the chain of incrementals');
like($err, qr/backup $full is kept: backup $after_diff, which stays, depends on it/,
	'and keeps the full backup the newest one needs, saying so');
is($node->safe_psql('postgres', 'SELECT string_agg(id::text, \',\' ORDER BY id) FROM stripe_backups'),
	"$full,$diff,$after_diff", 'the chain of the newest backup stays whole');

# A parent that is not fit: a full backup instead, saying why.
$node->safe_psql('postgres', "UPDATE stripe_backup_history SET timeline = 7 WHERE id = $after_diff");
my ($id, $notice) = backup('incr', 'none');	# a full backup: no method
like($notice, qr/taking a full backup instead of an incremental one: backup $after_diff \(timeline 7/,
	'a parent off the current timeline history makes a full backup, with a notice');
is(history($id), 'full|0', 'recorded as full');
($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_backup($arr, type => 'weekly')");
like($err, qr/backup type "weekly" is not one of full, diff or incr/, 'an unknown type is refused');
my $foreign = $node->safe_psql('postgres', "SELECT format('%L, %L::text[], %L::uuid, %L::pg_lsn, %L::pg_lsn', "
	  . "name, destinations, backup_uuid, start_lsn, stop_lsn) FROM stripe_backups WHERE id = $id");
$node->stop;

# Without data checksums: a full backup and an incremental.
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init(allows_streaming => 1);
$plain->append_conf('postgresql.conf', "shared_preload_libraries = 'stripebackup'");
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION stripebackup; CREATE EXTENSION pg_visibility');
$plain->command_ok([ 'pgbench', '-i', '-s', '2', '-q', '-p', $plain->port, '-h', $plain->host, 'postgres' ],
	'pgbench tables loaded without checksums');
my @plain_dests = make_destinations(2);
$plain->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@plain_dests) . ')');
$plain->command_ok([ 'pgbench', '-t', '300', '-n', '-p', $plain->port, '-h', $plain->host, 'postgres' ],
	'pgbench runs');
# A history row of another cluster's backup (as pg_dump carries the history
# table to another cluster): not a parent, a full backup instead.
$plain->safe_psql('postgres', "INSERT INTO stripe_backup_history (id, name, destinations, backup_uuid, start_lsn, "
	  . "stop_lsn, status, started_at, weights, compression, compression_level, balance, requested_by, timeline) "
	  . "VALUES (1000, $foreign, 'completed', now() + interval '1 hour', '{1,1}', 'zstd', 1, 'adaptive', 'x', 1)");
($ret, $out, $err) = $plain->psql('postgres', 'SELECT stripe_backup(' . sql_array(@plain_dests) . ", type => 'incr')");
like($err, qr/taking a full backup instead of an incremental one: backup 1000 is of another database system/,
	'a backup of another system is not a parent');
$plain->safe_psql('postgres', 'DELETE FROM stripe_backup_history WHERE id = 1000');
$plain->safe_psql('postgres', 'DELETE FROM pgbench_accounts WHERE aid % 13 = 0; VACUUM pgbench_accounts');
my $plain_incr = $plain->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@plain_dests) . ", type => 'incr')");
check_incremental_method($plain, $plain_incr, expected_incremental_method($plain), 'without checksums: the incremental');
my $plain_at = $plain->safe_psql('postgres', 'SELECT count(*), sum(abalance) FROM pgbench_accounts');
my $plain_copy = restore_node('plain_copy', backup_location($plain, $plain_incr));
$plain_copy->start;
is($plain_copy->safe_psql('postgres', 'SELECT count(*), sum(abalance) FROM pgbench_accounts'), $plain_at,
	'without checksums: the incremental restores the data of its moment');
is($plain_copy->safe_psql('postgres', "SELECT count(*) FROM pg_check_visible('pgbench_accounts')"), '0',
	'and the visibility map is right');
$plain_copy->stop;
$plain->stop;
done_testing();
