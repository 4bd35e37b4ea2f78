# A relation page damaged on disk before the backup: the backup fails with
# a message naming the file and the block, leaves nothing behind (no WAL
# slot, no open or left temporary file), and the next backup succeeds once
# the damage is gone.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary');
$node->safe_psql('postgres', q{
	CREATE TABLE victim AS SELECT g AS id, md5(g::text) AS v FROM generate_series(1, 20000) g;
	CHECKPOINT;
});
my $file = $node->safe_psql('postgres', "SELECT pg_relation_filepath('victim')");
$node->stop;

# Block 3 damaged, away from the page header.
damage_page($node->data_dir . "/$file", 3);
$node->start;

my @dests = make_destinations(2);
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT stripe_backup(" . sql_array(@dests) . ')');
isnt($ret, 0, 'the backup of a damaged cluster fails');
like($stderr, qr/ERROR:  XX001:/, 'the caller gets the worker\'s SQLSTATE: data_corrupted');
like($stderr, qr/page checksum verification failed for 1 page\(s\): "\Q$file\E" block 3/,
	'the error names the file and the block');
my ($status, $error, $sqlstate) = split /\|/, $node->safe_psql('postgres',
	'SELECT status, error, sqlstate FROM stripe_backups ORDER BY id DESC LIMIT 1');
is($status, 'failed', 'the history says failed');
is($sqlstate, 'XX001', 'the history keeps the SQLSTATE');
like($error, qr/"\Q$file\E" block 3/, 'the history keeps the reason');
for my $d (@dests)
{
	opendir my $dh, $d or die;
	my @left = grep { !/^\.\.?$/ } readdir $dh;
	is(scalar @left, 0, "nothing is left in $d");
}
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_replication_slots'), '0', 'no WAL slot is left');
unlike(slurp_file($node->logfile), qr/temporary file .* not closed|temporary files and directories not closed/,
	'nor an open temporary file (PostgreSQL\'s backup_manifest is closed on the way out)');
is(scalar(() = glob($node->data_dir . '/base/pgsql_tmp/*')), 0, 'and no temporary file is left');
is($node->safe_psql('postgres', "SELECT checksum_failures > 0 FROM pg_stat_database WHERE datname = 'postgres'"),
	't', 'the failure is counted in pg_stat_database');

$node->safe_psql('postgres', 'DROP TABLE victim');
my $id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
is($node->safe_psql('postgres', "SELECT status FROM stripe_backups WHERE id = $id"), 'completed',
	'the next backup succeeds (backup mode was ended)');
$node->stop;
done_testing();
