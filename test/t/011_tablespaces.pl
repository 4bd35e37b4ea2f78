# A tablespace outside the data directory: restored elsewhere with
# --tablespace-mapping while the original runs, refused where it would
# overwrite the original, and restored in place once the original is gone.
use strict;
use warnings;

use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary');
my $base = PostgreSQL::Test::Utils::tempdir();
my $tsdir = "$base/ts1";
mkdir $tsdir or die;
$node->safe_psql('postgres', qq{
	CREATE TABLESPACE ts1 LOCATION '$tsdir';
	CREATE TABLE in_ts (id int PRIMARY KEY, v text) TABLESPACE ts1;
	INSERT INTO in_ts SELECT g, md5(g::text) FROM generate_series(1, 20000) g;
	CREATE INDEX in_ts_v ON in_ts (v) TABLESPACE ts1;
	CREATE DATABASE tsdb TABLESPACE ts1;
});
$node->safe_psql('tsdb', 'CREATE TABLE t AS SELECT g FROM generate_series(1, 1000) g');
my $oid = $node->safe_psql('postgres', "SELECT oid FROM pg_tablespace WHERE spcname = 'ts1'");
my $query = "SELECT count(*), sum(hashtext(v)) FROM in_ts WHERE v > '8'";
my $expected = $node->safe_psql('postgres', $query);

my @dests = make_destinations(2);
my $id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
my $location = backup_location($node, $id);
my ($rc, $out, $err) = run_stripebackup('show', $location);
like($out, qr/tablespace:\s+$oid at \Q$tsdir\E/, 'show lists the tablespace and its location');

# Elsewhere, while the original runs.
my $moved = "$base/ts1-moved";
my $copy = restore_node('mapped', $location, '--tablespace-mapping', "$tsdir=$moved");
is(readlink($copy->data_dir . "/pg_tblspc/$oid"), $moved, 'pg_tblspc links to the new place');
ok(-d "$moved/" . $node->safe_psql('postgres', q{SELECT 'PG_' || current_setting('server_version_num')::int / 10000 || '_' || (SELECT catalog_version_no FROM pg_control_system())}),
	'the tablespace files are in the new place');
$copy->start;
is($copy->safe_psql('postgres', $query), $expected, 'the mapped copy returns the same results');
is($copy->safe_psql('postgres', "SELECT pg_tablespace_location($oid)"), $moved,
	'the copy knows its tablespace at the new place');
is($copy->safe_psql('tsdb', 'SELECT count(*) FROM t'), '1000', 'a database in the tablespace is back');
$copy->stop;

# Where the original still lives: refused, and nothing is left behind.
my $target = "$base/refused";
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $target);
is($rc, 2, 'restoring over the running tablespace is refused');
like($err, qr/tablespace $oid .*not empty/, 'the refusal names the tablespace');
ok(!-e $target, 'the refused restore left no target behind');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $target,
	'--tablespace-mapping', "/no/such/place=$base/x");
is($rc, 2, 'a mapping that names no tablespace is refused');
like($err, qr/no tablespace of this backup is at "\/no\/such\/place"/, 'the refusal names the mapping');

# In place: the original cluster and its tablespace are gone.
$node->stop;
rmtree($node->data_dir);
rmtree($tsdir);
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $node->data_dir);
is($rc, 0, 'restore in place') or diag($err);
like($out, qr/restored into "\Q@{[ $node->data_dir ]}\E" in [\d.]+ s \([\d.]+ s creating the tree, [\d.]+ s reading and writing, [\d.]+ s finishing with the final sync\)/,
	'the command says where the time went');
command_ok([ 'pg_verifybackup', $node->data_dir ], 'pg_verifybackup accepts the in-place restore');
is(readlink($node->data_dir . "/pg_tblspc/$oid"), $tsdir, 'the tablespace is back at its location');
$node->start;
is($node->safe_psql('postgres', $query), $expected, 'the cluster restored in place returns the same results');
$node->stop;
done_testing();
