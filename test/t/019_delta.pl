# Delta restore: a copy restored yesterday, started and stopped, while the
# cluster kept changing under pgbench (a table dropped, one created, one
# rewritten by VACUUM FULL, a tablespace among them), refreshed in place with
# stripe_restore(..., delta => true) and with `stripebackup restore --delta`:
# the result is byte for byte a full restore of the same backup, passes
# pg_verifybackup, starts, and holds the data; only part of the backup is
# read.  A running target, another cluster's data directory, a folder of
# other files, a file, and a chain are refused with nothing changed.
use strict;
use warnings;

use File::Compare ();
use File::Find ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary', conf => 'autovacuum = off');
my @dests = make_destinations(2);
my $arr = sql_array(@dests);
my $tblspc = PostgreSQL::Test::Utils::tempdir();

$node->safe_psql('postgres', "CREATE TABLESPACE ts1 LOCATION '$tblspc'");
$node->command_ok([ 'pgbench', '-i', '-s', '4', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');
$node->safe_psql('postgres', q{
	CREATE EXTENSION amcheck;
	CREATE TABLE big (id int PRIMARY KEY, v text) TABLESPACE ts1;
	INSERT INTO big SELECT g, md5(g::text) FROM generate_series(1, 100000) g;
	CREATE TABLE dropme AS SELECT g FROM generate_series(1, 5000) g;
	CREATE TABLE churn AS SELECT g, md5(g::text) AS v FROM generate_series(1, 20000) g;
});

sub fingerprint
{
	my ($n) = @_;
	return $n->safe_psql('postgres', q{
		SELECT (SELECT count(*) || ':' || sum(hashtext(v)) FROM big),
		       (SELECT count(*) || ':' || sum(hashtext(v)) FROM churn),
		       (SELECT sum(abalance) FROM pgbench_accounts), (SELECT count(*) FROM pgbench_history),
		       (SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class
		         WHERE relname IN ('dropme', 'newt'))});
}

# Every file under DIR (links as their targets' contents, the tablespace link
# itself not followed: its directory is compared on its own).
sub files_of
{
	my ($dir) = @_;
	my %files;
	File::Find::find({ no_chdir => 1, wanted => sub {
		my $rel = substr($File::Find::name, length($dir));
		$files{$rel} = -l $File::Find::name ? 'link' : -d _ ? 'dir' : 'file';
	} }, $dir);
	return \%files;
}

# The differences between two trees, as a list of relative paths.
sub tree_differences
{
	my ($a, $b) = @_;
	my ($fa, $fb) = (files_of($a), files_of($b));
	my @diff;
	for my $rel (sort keys %{ { %$fa, %$fb } })
	{
		if (($fa->{$rel} // '') ne ($fb->{$rel} // ''))
		{
			push @diff, "$rel (" . ($fa->{$rel} // 'absent') . ' vs ' . ($fb->{$rel} // 'absent') . ')';
		}
		elsif ($fa->{$rel} eq 'file' && File::Compare::compare("$a$rel", "$b$rel") != 0)
		{
			push @diff, "$rel (content)";
		}
	}
	return @diff;
}

# The bytes a delta restore of NEW into OLD must write: the whole of each file
# OLD lacks (or is the guard, pg_control, written anew), and of each file both
# hold, the 8 kB blocks that differ once OLD's is cut or zero-extended to
# NEW's size.  What a page-sized change costs, whatever else ran meanwhile.
sub bytes_that_differ
{
	my ($old, $new) = @_;
	my ($fo, $fn) = (files_of($old), files_of($new));
	my $bytes = 0;
	for my $rel (sort grep { $fn->{$_} eq 'file' } keys %$fn)
	{
		my $want = PostgreSQL::Test::Utils::slurp_file("$new$rel");
		if (($fo->{$rel} // '') ne 'file' || $rel eq '/global/pg_control')
		{
			$bytes += length($want);
			next;
		}
		my $have = PostgreSQL::Test::Utils::slurp_file("$old$rel");
		$have = substr($have . ("\0" x length($want)), 0, length($want));
		for (my $b = 0; $b < length($want); $b += 8192)
		{
			$bytes += length(substr($want, $b, 8192)) if substr($want, $b, 8192) ne substr($have, $b, 8192);
		}
	}
	return $bytes;
}

my $full1 = $node->safe_psql('postgres', "SELECT stripe_backup($arr)");
my $copy = PostgreSQL::Test::Cluster->new('copy');
my $copy_ts = PostgreSQL::Test::Utils::tempdir() . '/ts';
$node->safe_psql('postgres', "SELECT stripe_restore($full1, '" . $copy->data_dir
	  . "', tablespace_mapping => ARRAY['$tblspc=$copy_ts'])");
$copy->append_conf('postgresql.conf', "port = " . $copy->port . "\narchive_mode = off");
$copy->start;
$copy->safe_psql('postgres', "INSERT INTO churn VALUES (-1, 'written in the copy only')");
$copy->stop;

# A day of changes, the next backup under pgbench.
$node->safe_psql('postgres', q{
	DROP TABLE dropme;
	CREATE TABLE newt AS SELECT g FROM generate_series(1, 3000) g;
	DELETE FROM churn WHERE g % 3 = 0;
	VACUUM FULL churn;
	UPDATE big SET v = v || 'x' WHERE id % 500 = 0;
});
my $pgbench = IPC::Run::start(
	[ 'pgbench', '-c', '2', '-T', '600', '-n', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'>', \my $pgbench_out, '2>', \my $pgbench_err);
$node->poll_query_until('postgres', 'SELECT count(*) > 200 FROM pgbench_history')
  or die 'pgbench does not write';
my $full2 = $node->safe_psql('postgres', "SELECT stripe_backup($arr)");
# TERM, not INT: a shell's background jobs ignore SIGINT, and pgbench inherits that.
$pgbench->signal('TERM');
$pgbench->finish;

# Refused, nothing changed: a running target, another cluster, other files, a file.
my $before = files_of($copy->data_dir);
$copy->start;
my ($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_restore($full2, '" . $copy->data_dir
	  . "', tablespace_mapping => ARRAY['$tblspc=$copy_ts'], delta => true)");
like($err, qr/running PostgreSQL server \(postmaster\.pid names process \d+\)/,
	'a delta restore into a running copy is refused, naming its process');
$copy->stop;
my $other = PostgreSQL::Test::Cluster->new('other');
$other->init;
($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_restore($full2, '" . $other->data_dir
	  . "', tablespace_mapping => ARRAY['$tblspc=" . PostgreSQL::Test::Utils::tempdir() . "/ts'], delta => true)");
like($err, qr/holds a data directory of another database system/, 'another cluster\'s data directory is refused');
ok(-e $other->data_dir . '/PG_VERSION', 'and left as it was');
my $plain = PostgreSQL::Test::Utils::tempdir();
PostgreSQL::Test::Utils::append_to_file("$plain/notes.txt", "mine\n");
($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_restore($full2, '$plain', "
	  . "tablespace_mapping => ARRAY['$tblspc=" . PostgreSQL::Test::Utils::tempdir() . "/ts'], delta => true)");
like($err, qr/is not empty and is not a PostgreSQL data directory/, 'a folder of other files is refused');
ok(-e "$plain/notes.txt", 'and its files stay');
($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_restore($full2, '$plain/notes.txt', delta => true)");
isnt($ret, 0, 'a target that is a file is refused');
is_deeply(files_of($copy->data_dir), $before, 'the copy was not touched by any refused restore');

# The plan says what a delta restore would compare and write, from sizes and times.
($ret, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM stripe_restore_plan($full2, delta_target => '"
	  . $copy->data_dir . "', tablespace_mapping => ARRAY['$tblspc=$copy_ts'])");
like($err, qr/a delta restore into ".*" compares [\d.]+ MB in \d+ files and expects to write [\d.]+ MB of \d+ files/,
	'the plan says what a delta restore would compare and write');
like($err, qr/no time estimated: no delta restore has measured how fast a copy is compared/,
	'and that its time needs a delta restore\'s measure of comparing, before there is one');
($ret, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM stripe_restore_plan($full2, delta_target => '"
	  . $other->data_dir . "')");
like($err, qr/WARNING:  a delta restore into ".*" would refuse it: .*another database system/,
	'and warns of a target a delta restore would refuse');

# The delta restore, from SQL, the copy as it was kept to see what it changes.
my $copy_before = PostgreSQL::Test::Utils::tempdir();
system('cp', '-a', $copy->data_dir, "$copy_before/data") == 0 or die 'could not copy the copy';
system('cp', '-a', $copy_ts, "$copy_before/ts") == 0 or die 'could not copy its tablespace';
my $restore = $node->safe_psql('postgres', "SELECT stripe_restore($full2, '" . $copy->data_dir
	  . "', tablespace_mapping => ARRAY['$tblspc=$copy_ts'], delta => true)");
my ($status, $delta, $written, $compared, $removed) = split /\|/, $node->safe_psql('postgres',
	"SELECT status, delta, bytes_written, bytes_compared, entries_removed FROM stripe_restores WHERE id = $restore");
is("$status|$delta", 'completed|t', 'the delta restore completes, recorded as a delta');
my $raw = $node->safe_psql('postgres', "SELECT sum(raw_bytes) FROM stripe_backup_stripes WHERE backup_id = $full2");
cmp_ok($compared, '<=', $raw, "the chunks of files the copy has with the backup's size and time were compared ($compared bytes)");
cmp_ok($written, '<', $raw, "not all of it was written ($written of $raw bytes)");
cmp_ok($removed, '>', 0, "what the backup lacks was removed ($removed entries)");
my ($compare_seconds, $estimated) = split /\|/, $node->safe_psql('postgres',
	"SELECT compare_seconds, estimated_seconds IS NULL FROM stripe_restores WHERE id = $restore");
cmp_ok($compare_seconds, '>', 0, "the time it took to compare is recorded ($compare_seconds s)");
is($estimated, 't', 'and no time was estimated before it: nothing had measured comparing yet');
($ret, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM stripe_restore_plan($full2, delta_target => '"
	  . $copy->data_dir . "', tablespace_mapping => ARRAY['$tblspc=$copy_ts'])");
like($err, qr/; estimated [\d.]+ s \(into an empty directory: [\d.]+ s\)/,
	'now the plan estimates a delta restore\'s time beside a plain restore\'s');

# Byte for byte what a full restore of the same backup gives.
my $fresh = PostgreSQL::Test::Cluster->new('fresh');
my $fresh_ts = PostgreSQL::Test::Utils::tempdir() . '/ts';
$node->safe_psql('postgres', "SELECT stripe_restore($full2, '" . $fresh->data_dir
	  . "', tablespace_mapping => ARRAY['$tblspc=$fresh_ts'])");
is(join(', ', tree_differences($copy->data_dir, $fresh->data_dir)), '',
	'the refreshed copy is byte for byte a full restore of the same backup');
is(join(', ', tree_differences($copy_ts, $fresh_ts)), '', 'its tablespace too');
# Not a fraction of the backup: what pgbench wrote during it (pages, WAL) varies from run to run.
# (At most: a page a chunk boundary cuts is compared in two parts, and only the one that differs is written.)
my $differ = bytes_that_differ("$copy_before/data", $fresh->data_dir) + bytes_that_differ("$copy_before/ts", $fresh_ts);
cmp_ok($written, '<=', $differ, "it wrote no page that had not changed ($written bytes, $differ in the pages that differ)");
is(readlink((glob($copy->data_dir . '/pg_tblspc/*'))[0]), $copy_ts, 'its tablespace link points at its own');
command_ok([ 'pg_verifybackup', $copy->data_dir ], 'pg_verifybackup accepts it');
# the backup's postgresql.conf is the primary's: the copy's own port again
$copy->append_conf('postgresql.conf', "port = " . $copy->port . "\narchive_mode = off");
$copy->start;
is(fingerprint($copy), do { $fresh->append_conf('postgresql.conf', "port = " . $fresh->port . "\narchive_mode = off");
		$fresh->start; my $f = fingerprint($fresh); $fresh->stop; $f },
	'it starts and holds what a full restore holds');
is(pgbench_invariant($copy), 't', 'pgbench\'s invariant holds');
is($copy->safe_psql('postgres', "SELECT count(*) FROM churn WHERE g = -1"), '0',
	'what only the copy had written is gone');
$copy->command_ok([ 'pg_amcheck', '--heapallindexed', '-p', $copy->port, '-h', $copy->host, 'postgres' ],
	'amcheck finds nothing wrong');
$copy->stop;

# A chain (the last full backup and two incrementals) into the same copy.
$node->safe_psql('postgres', "UPDATE big SET v = v || 'i1' WHERE id % 700 = 0");
$node->safe_psql('postgres', "SELECT stripe_backup($arr, type => 'incr')");
$node->safe_psql('postgres', "DELETE FROM churn WHERE g % 7 = 0; CREATE TABLE after_incr AS SELECT 1 AS x");
my $incr2 = $node->safe_psql('postgres', "SELECT stripe_backup($arr, type => 'incr')");
$restore = $node->safe_psql('postgres', "SELECT stripe_restore($incr2, '" . $copy->data_dir
	  . "', tablespace_mapping => ARRAY['$tblspc=$copy_ts'], delta => true)");
($written, $compared) = split /\|/, $node->safe_psql('postgres',
	"SELECT bytes_written, bytes_compared FROM stripe_restores WHERE id = $restore");
# Not half, as above: what the chain writes varies from run to run (62 MB of the full
# backup's 114 MB once, under half in others); a full restore writes all of it.
cmp_ok($written, '<', $raw * 3 / 4, "a chain restores into the copy as a delta ($written of $raw bytes written)");
cmp_ok($node->safe_psql('postgres', "SELECT estimated_seconds FROM stripe_restores WHERE id = $restore"), '>', 0,
	'its time was estimated, every link read');
my $fresh2 = PostgreSQL::Test::Cluster->new('fresh2');
my $fresh2_ts = PostgreSQL::Test::Utils::tempdir() . '/ts';
$node->safe_psql('postgres', "SELECT stripe_restore($incr2, '" . $fresh2->data_dir
	  . "', tablespace_mapping => ARRAY['$tblspc=$fresh2_ts'])");
is(join(', ', tree_differences($copy->data_dir, $fresh2->data_dir), tree_differences($copy_ts, $fresh2_ts)),
	'', 'byte for byte a full restore of the chain');

# Again with the command, after more changes: the copy rebuilt as a standby of the primary.
$node->safe_psql('postgres', "UPDATE big SET v = 'changed' WHERE id < 100");
my $full3 = $node->safe_psql('postgres', "SELECT stripe_backup($arr)");
($ret, $out, $err) = run_stripebackup('plan', backup_location($node, $full3), '--target', $copy->data_dir,
	'--tablespace-mapping', "$tblspc=$copy_ts", '--delta');
like($out, qr/delta:   into ".*": [\d.]+ \w+ in \d+ files with the backup's size and time/,
	'the command\'s plan says what a delta restore would compare') or diag($err);
like($out, qr/delta:   compares [\d.]+ \w+ of chunks with the copy before reading any; reads the other [\d.]+ \w+ \([\d.]+ \w+ from stripe 1, [\d.]+ \w+ from stripe 2\)/,
	'and which chunks it compares first, and reads from each stripe');
($ret, $out, $err) = run_stripebackup('restore', backup_location($node, $full3), '--target', $copy->data_dir,
	'--tablespace-mapping', "$tblspc=$copy_ts", '--delta', '--standby', '--primary-conninfo',
	'port=' . $node->port . ' host=' . $node->host . ' dbname=postgres application_name=delta_copy');
is($ret, 0, 'the command refreshes the copy too, as a standby') or diag($err);
like($out, qr/delta: [\d.]+ MB compared, [\d.]+ MB of it already there \(not read\), [\d.]+ MB read in part \([\d.]+ MB of frames read\), [\d.]+ MB written/,
	'saying what it compared and wrote');
command_ok([ 'pg_verifybackup', $copy->data_dir ], 'pg_verifybackup accepts it');
$copy->append_conf('postgresql.conf', "port = " . $copy->port . "\narchive_mode = off");
$copy->start;
is($copy->safe_psql('postgres', "SELECT count(*) FROM big WHERE v = 'changed'"), '99', 'with the new changes');
$node->safe_psql('postgres', "UPDATE big SET v = 'streamed' WHERE id = 1");
ok($copy->poll_query_until('postgres', "SELECT v = 'streamed' FROM big WHERE id = 1"),
	'and it follows the primary as a standby');
ok($node->poll_query_until('postgres',
		"SELECT state = 'streaming' FROM pg_stat_replication WHERE application_name = 'delta_copy'"),
	'pg_stat_replication shows it');
$copy->stop;

# stripebackup.frame_size, as stripe_backup() takes it: small frames cost
# space (each starts without the history of the one before), one frame a
# transfer the least; a delta restore reads either.
my %stored;
for my $frames ('16kB', '1MB')
{
	my $id = $node->safe_psql('postgres', "SET stripebackup.frame_size = '$frames'; SELECT stripe_backup($arr)");
	$stored{$frames} = $node->safe_psql('postgres', "SELECT bytes_written FROM stripe_backups WHERE id = $id");
	($ret, $out, $err) = run_stripebackup('restore', backup_location($node, $id), '--target', $copy->data_dir,
		'--tablespace-mapping', "$tblspc=$copy_ts", '--delta');
	is($ret, 0, "a backup in frames of $frames delta-restores into the copy") or diag($err);
}
cmp_ok($stored{'16kB'}, '>', $stored{'1MB'} * 1.05,
	"frames of 16kB store more than one frame a transfer ($stored{'16kB'} against $stored{'1MB'} bytes)");

done_testing();
