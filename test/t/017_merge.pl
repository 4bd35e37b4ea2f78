# stripe_merge(): a chain (full, an incremental taken under pgbench, another
# incremental, with a tablespace and a relation dropped and one made) folded
# into a new full backup without touching the cluster.  The merged backup
# restores to the same cluster as the chain (same data, pgbench's invariant,
# amcheck clean, pg_verifybackup checks every file's checksum), stands alone
# (retention then removes the whole chain), and is the parent of the next
# incremental, which stores only what changed since.  A full backup, a broken
# chain, a scratch folder in the way and bad arguments are refused before
# anything is written; a cancelled merge leaves nothing.
use strict;
use warnings;

use File::Path ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary', conf => 'autovacuum = off');
my @dests = make_destinations(2);
my $arr = sql_array(@dests);
my $tblspc = PostgreSQL::Test::Utils::tempdir();

$node->safe_psql('postgres', "CREATE TABLESPACE ts1 LOCATION '$tblspc'");
$node->command_ok([ 'pgbench', '-i', '-s', '2', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');
$node->safe_psql('postgres', q{
	CREATE EXTENSION amcheck;
	CREATE TABLE big (id int PRIMARY KEY, v text) TABLESPACE ts1;
	INSERT INTO big SELECT g, md5(g::text) FROM generate_series(1, 50000) g;
	CREATE TABLE dropme AS SELECT g FROM generate_series(1, 1000) g;
});

sub fingerprint
{
	my ($n) = @_;
	return $n->safe_psql('postgres', q{
		SELECT (SELECT count(*) || ':' || sum(hashtext(v)) FROM big),
		       (SELECT sum(abalance) FROM pgbench_accounts), (SELECT count(*) FROM pgbench_history),
		       (SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class
		         WHERE relname IN ('dropme', 'newt'))});
}

sub backup
{
	my ($type) = @_;
	return $node->safe_psql('postgres', "SELECT stripe_backup($arr, type => '$type')");
}

sub merge
{
	my ($sql) = @_;
	return $node->psql('postgres', "SELECT stripe_merge($sql)");
}

sub names_in
{
	my ($dir) = @_;
	return join(',', sort grep { !/^\./ } folder_entries($dir));
}

my $full = backup('full');
$node->safe_psql('postgres', q{
	UPDATE big SET v = v || 'x' WHERE id % 100 = 0;
	DROP TABLE dropme;
	CREATE TABLE newt AS SELECT g FROM generate_series(1, 3000) g;
});
my $pgbench = IPC::Run::start(
	[ 'pgbench', '-c', '2', '-T', '600', '-n', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'>', \my $pgbench_out, '2>', \my $pgbench_err);
$node->poll_query_until('postgres', 'SELECT count(*) > 100 FROM pgbench_history')
  or die 'pgbench does not write';
my $incr1 = backup('incr');
# TERM, not INT: a shell's background jobs ignore SIGINT, and pgbench inherits that.
$pgbench->signal('TERM');
$pgbench->finish;
$node->safe_psql('postgres', q{
	UPDATE big SET v = v || 'y' WHERE id % 1000 = 0;
	INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, 1, 0, now());
});
my $incr2 = backup('incr');
my $at_incr2 = fingerprint($node);

# Refused before anything is written.
my ($ret, $out, $err) = merge($full);
like($err, qr/backup $full is a full backup: there is no chain to merge/, 'a full backup is not merged');
($ret, $out, $err) = merge("$incr2, destinations => ARRAY['relative/dir']");
isnt($ret, 0, 'a relative destination is refused');
($ret, $out, $err) = merge("$incr2, compression => 'lz5'");
like($err, qr/unknown compression "lz5"/, 'an unknown compression is refused, naming it');
my $name1 = $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $incr1");
rename("$_/$name1", "$_/aside") for @dests;
($ret, $out, $err) = merge($incr2);
like($err, qr/\Q$name1\E/, 'a chain with a missing link is refused, naming the link');
rename("$_/aside", "$_/$name1") for @dests;
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_backups WHERE id > $incr2"), '0',
	'no backup row for any refused merge');
my $before = names_in($dests[0]);

# The merge.
($ret, $out, $err) = merge($incr2);
is($ret, 0, 'the chain merges') or diag($err);
my $merged = $out;
is($node->safe_psql('postgres',
		"SELECT type, coalesce(parent_id, 0), merged_from, status FROM stripe_backups WHERE id = $merged"),
	"full|0|$incr2|completed", 'a full backup, merged from the chain\'s newest');
is($node->safe_psql('postgres', "SELECT m.start_lsn = i.start_lsn AND m.stop_lsn = i.stop_lsn"
		  . " AND m.timeline = i.timeline AND m.destinations = i.destinations"
		  . " FROM stripe_backups m, stripe_backups i WHERE m.id = $merged AND i.id = $incr2"), 't',
	'of the same moment (start, stop, timeline), in the same destinations');
my $merged_name = $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $merged");
is(names_in($dests[0]), join(',', sort(split(/,/, $before), $merged_name)),
	'beside the chain there is the new backup, and no scratch folder');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_restore_plan($merged) WHERE stripe IS NOT NULL"),
	'2', 'its plan reads its own two stripes only');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify($merged)"), '0',
	'it verifies clean');

my $copy = restore_node('merged', backup_location($node, $merged),
	'--tablespace-mapping', "$tblspc=" . PostgreSQL::Test::Utils::tempdir() . '/ts');
$copy->start;
is(fingerprint($copy), $at_incr2, 'the merged backup restores the cluster as the chain had it');
is(pgbench_invariant($copy), 't', 'pgbench\'s invariant holds');
is($copy->safe_psql('postgres', 'SELECT count(*) FROM newt'), '3000', 'the new table is there');
$copy->command_ok([ 'pg_amcheck', '--heapallindexed', '-p', $copy->port, '-h', $copy->host, 'postgres' ],
	'amcheck finds nothing wrong');
$copy->stop;

# The merged backup stands alone: the chain can go.
($ret, $out, $err) = $node->psql('postgres',
	"SELECT string_agg(backup_id::text, ',' ORDER BY backup_id) FROM stripe_expire(keep_last => 1) WHERE removed");
is($out, "$full,$incr1,$incr2", 'keep_last => 1 removes the whole chain, the merged backup stays');
$copy = restore_node('merged_alone', backup_location($node, $merged),
	'--tablespace-mapping', "$tblspc=" . PostgreSQL::Test::Utils::tempdir() . '/ts');
$copy->start;
is(fingerprint($copy), $at_incr2, 'and it still restores without the chain');
$copy->stop;

# The next incremental's parent is the merged backup; it stores only what changed since.
$node->safe_psql('postgres', "UPDATE big SET v = v || 'z' WHERE id = 7");
my $incr3 = backup('incr');
is($node->safe_psql('postgres', "SELECT type, parent_id FROM stripe_backups WHERE id = $incr3"),
	"incr|$merged", 'the next incremental is a child of the merged backup');
cmp_ok($node->safe_psql('postgres', "SELECT bytes_written FROM stripe_backups WHERE id = $incr3"), '<',
	$node->safe_psql('postgres', "SELECT bytes_written FROM stripe_backups WHERE id = $merged") / 4,
	'and stores a fraction of it (the merged files are the same files)');
my $at_incr3 = fingerprint($node);
$copy = restore_node('after_merge', backup_location($node, $incr3),
	'--tablespace-mapping', "$tblspc=" . PostgreSQL::Test::Utils::tempdir() . '/ts');
$copy->start;
is(fingerprint($copy), $at_incr3, 'merged + incremental restores the cluster as it is');
$copy->stop;

# Other destinations, given; then a merge cancelled halfway leaves nothing, scratch folder included.
my @other = make_destinations(2);
($ret, $out, $err) = merge("$incr3, destinations => " . sql_array(@other));
is($ret, 0, 'a merge into other destinations works') or diag($err);
is($node->safe_psql('postgres', "SELECT destinations = " . sql_array(@other) . "::text[] FROM stripe_backups WHERE id = $out"),
	't', 'its destinations are the ones given');
File::Path::rmtree("$_/" . $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $out")) for @other;
my $slow = $node->safe_psql('postgres', 'SET stripebackup.max_rate = 2; SELECT stripe_merge('
	  . "$incr3, destinations => " . sql_array(@other) . ", compression => 'none', wait => false)");
wait_for_stripe($node, $slow, $other[0], 1);
ok(-d "$other[0]/" . $node->safe_psql('postgres', "SELECT name FROM stripe_backup_history WHERE id = $slow")
	  . '.merging', 'while it runs, its scratch folder is beside it');
is($node->safe_psql('postgres', "SELECT stripe_cancel($slow)"), 't', 'stripe_cancel() stops a merge');
$node->poll_query_until('postgres', "SELECT status <> 'running' FROM stripe_backup_history WHERE id = $slow")
  or die 'the merge does not stop';
check_backup_cleaned_up($node, $slow, 'cancelled', qr/canceled by stripe_cancel\(\)/, @other);

done_testing();
