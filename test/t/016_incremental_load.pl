# A chain of backups taken while pgbench writes, on a cluster with 3,000
# partitions of which only a few change between backups: full, incr, incr,
# diff, incr, every one under load.  Each restored chain holds pgbench's
# invariant, passes amcheck, and has the partitions' rows of its moment; an
# incremental stores nothing of the partitions that did not change.
use strict;
use warnings;

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

# 3,000 partitions locked at once by one INSERT or VACUUM.
my $node = backup_node('primary', conf => 'max_locks_per_transaction = 256');
my @dests = make_destinations(2);
my $arr = sql_array(@dests);
$node->command_ok([ 'pgbench', '-i', '-s', '2', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');
$node->safe_psql('postgres', q{
	CREATE EXTENSION amcheck;
	CREATE TABLE parts (id int, v text) PARTITION BY HASH (id);
	DO $$ BEGIN FOR i IN 0..2999 LOOP
		EXECUTE format('CREATE TABLE parts_%s PARTITION OF parts FOR VALUES WITH (MODULUS 3000, REMAINDER %s)', i, i);
	END LOOP; END $$;
	INSERT INTO parts SELECT g, md5(g::text) FROM generate_series(1, 60000) g;
	VACUUM ANALYZE parts;
});

sub parts_fingerprint
{
	my ($n) = @_;
	return $n->safe_psql('postgres', 'SELECT count(*), sum(hashtext(v)) FROM parts');
}

my $pgbench = IPC::Run::start(
	[ 'pgbench', '-c', '2', '-T', '600', '-R', '300', '-n', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'>', \my $pgbench_out, '2>', \my $pgbench_err);
$node->poll_query_until('postgres', 'SELECT count(*) > 100 FROM pgbench_history')
  or die 'pgbench does not write';

# Every diff and incr finds its changed blocks by the method the server's
# settings choose (WAL summaries with summarize_wal on, 17+; page LSNs else):
# summarization runs from the server's start, before the full backup.
my $method = expected_incremental_method($node);
my (%id, %at);
sub backup
{
	my ($name, $type, $change) = @_;
	$node->safe_psql('postgres', $change) if $change;
	$id{$name} = $node->safe_psql('postgres', "SELECT stripe_backup($arr, type => '$type')");
	$at{$name} = parts_fingerprint($node);
	is($node->safe_psql('postgres', "SELECT type FROM stripe_backups WHERE id = $id{$name}"), $type,
		"$name taken under load as $type");
	check_incremental_method($node, $id{$name}, $type eq 'full' ? 'none' : $method, $name);
}
backup('full', 'full');
backup('incr1', 'incr', "UPDATE parts SET v = upper(v) WHERE id IN (5, 6, 7)");
backup('incr2', 'incr', "DELETE FROM parts WHERE id BETWEEN 100 AND 140; VACUUM parts");
backup('diff', 'diff', "INSERT INTO parts SELECT g, md5(g::text) FROM generate_series(60001, 60050) g");
backup('incr3', 'incr', "UPDATE parts SET v = v || 'x' WHERE id % 1000 = 1");
$pgbench->signal('TERM');
$pgbench->finish;

# The partitions that did not change since incr1: nothing of them stored.
my $m = decode_json(slurp_file(backup_location($node, $id{incr2}) . '/manifest.json'));
my %oid = split /[|\n]/, $node->safe_psql('postgres',
	"SELECT pg_relation_filepath(c.oid), c.relname FROM pg_class c WHERE c.relname LIKE 'parts\\_%' AND c.relkind = 'r'");
my ($empty, $all) = (0, 0);
for my $e (grep { $_->{type} eq 'file' && $oid{ $_->{path} } } @{ $m->{entries} })
{
	$all++;
	$empty++ if $e->{incremental} && $e->{stream_length} == 0;
}
is($all, 3000, 'the incremental lists the 3,000 partitions');
cmp_ok($empty, '>=', 2950, "it stores nothing of the ones that did not change ($empty of them)");

for my $name (qw(incr2 incr3))
{
	my $copy = restore_node("copy_$name", backup_location($node, $id{$name}));
	$copy->start;
	is(pgbench_invariant($copy), 't', "$name: pgbench's invariant holds");
	$copy->command_ok([ 'pg_amcheck', '--all', '--heapallindexed', '-p', $copy->port, '-h', $copy->host ],
		"$name: pg_amcheck --heapallindexed finds nothing");
	is(parts_fingerprint($copy), $at{$name}, "$name: the partitions hold the rows of their moment");
	$copy->stop;
}
$node->stop;
done_testing();
