# What an online backup leaves out, by PostgreSQL's rules: unlogged tables'
# data (they come back empty and usable), temporary files and relations,
# and the contents of directories start-up recreates.
use strict;
use warnings;

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary');
$node->safe_psql('postgres', q{
	CREATE UNLOGGED TABLE scratch (id int PRIMARY KEY, v text);
	INSERT INTO scratch SELECT g, md5(g::text) FROM generate_series(1, 5000) g;
	CREATE TABLE kept AS SELECT g FROM generate_series(1, 5000) g;
});
my $dbdir = 'base/' . $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = 'postgres'");
my $unlogged = $node->safe_psql('postgres', "SELECT pg_relation_filenode('scratch')");
my $data = $node->data_dir;
# PostgreSQL 17 and later keep WAL summaries in pg_wal/summaries: the folder
# is copied empty, as pg_basebackup copies it.
my $summaries = $node->safe_psql('postgres', 'SHOW server_version_num') >= 170000;

# Files that must not be copied, planted where PostgreSQL would put them.
mkdir "$data/base/pgsql_tmp";
my @planted = ("base/pgsql_tmp/pgsql_tmp123.0", "pg_stat_tmp/planted", "pg_replslot/planted",
	"pg_notify/0001", "pg_snapshots/planted", "pg_subtrans/planted", "$dbdir/t3_99999",
	"$dbdir/pg_internal.init", "postgresql.auto.conf.tmp", "pg_wal/planted");
push @planted, "pg_wal/summaries/planted" if $summaries;
for my $f (@planted)
{
	open my $fh, '>', "$data/$f" or die "$f: $!";
	print $fh "x" x 100;
	close $fh;
}

my @dests = make_destinations(1);
my ($bg) = $node->background_psql('postgres');
$bg->query_safe('CREATE TEMPORARY TABLE tmp_rel AS SELECT 1 AS x');
my $temp_file = $bg->query_safe("SELECT pg_relation_filepath('tmp_rel')");
my $id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
$bg->quit;
my $location = backup_location($node, $id);
my $manifest = decode_json(slurp_file("$location/manifest.json"));
my %paths = map { ($_->{path} // '') => 1 } @{ $manifest->{entries} };

for my $absent ("base/pgsql_tmp", "base/pgsql_tmp/pgsql_tmp123.0", "pg_stat_tmp/planted",
	"pg_replslot/planted", "pg_notify/0001", "pg_snapshots/planted", "pg_subtrans/planted",
	"$dbdir/t3_99999", $temp_file, "$dbdir/pg_internal.init", "postgresql.auto.conf.tmp",
	"postmaster.pid", "postmaster.opts", "pg_wal/planted", "$dbdir/$unlogged",
	$summaries ? ("pg_wal/summaries/planted") : ())
{
	ok(!$paths{$absent}, "$absent is not copied");
}
for my $present ("pg_stat_tmp", "pg_replslot", "pg_notify", "pg_snapshots", "pg_subtrans",
	"pg_wal", "pg_wal/archive_status", "pg_tblspc", "$dbdir/${unlogged}_init",
	$summaries ? ("pg_wal/summaries") : ())
{
	ok($paths{$present}, "$present is copied");
}

my $copy = restore_node('copy', $location);
ok(-d $copy->data_dir . '/pg_wal/summaries', 'the restored copy has pg_wal/summaries') if $summaries;
$copy->start;
is($copy->safe_psql('postgres', 'SELECT count(*) FROM scratch'), '0', 'the unlogged table comes back empty');
$copy->safe_psql('postgres', "INSERT INTO scratch VALUES (1, 'usable')");
is($copy->safe_psql('postgres', 'SELECT v FROM scratch WHERE id = 1'), 'usable', 'and usable');
is($copy->safe_psql('postgres', 'SELECT count(*) FROM kept'), '5000', 'logged tables keep their rows');
$copy->stop;
done_testing();
