# A cluster over two devices (its data directory, and a tablespace on a
# tmpfs): the online backup and the command's cold one read both at once, a
# source lane each, and restore to the same data; a page damaged in the
# tablespace is still found by the lane that reads it, and that backup fails
# leaving nothing behind.
use strict;
use warnings;

use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary');
my $shm = "/dev/shm/sb-lanes-$$";
if (!mkdir($shm) || (stat($shm))[0] == (stat($node->data_dir))[0])
{
	rmdir $shm;
	plan skip_all => 'no /dev/shm on a device of its own';
}
END { rmtree($shm) if defined $shm && -d $shm; }

# The tablespace's files come before base/'s in the manifest: its device started first.
sub tablespace_walked_first
{
	my ($manifest, $what) = @_;
	my $text = PostgreSQL::Test::Utils::slurp_file($manifest);
	my $tablespace = index($text, '"pg_tblspc/');
	my $base = index($text, '"base/');
	ok($tablespace >= 0 && $base > $tablespace, "$what walked the tablespace before base/");
}

my $base = PostgreSQL::Test::Utils::tempdir();
my $tsdir = "$shm/ts";
mkdir $tsdir or die;
$node->safe_psql('postgres', qq{
	CREATE TABLESPACE shm LOCATION '$tsdir';
	CREATE TABLE here (id int PRIMARY KEY, v text);
	INSERT INTO here SELECT g, md5(g::text) FROM generate_series(1, 40000) g;
	CREATE TABLE there (id int PRIMARY KEY, v text) TABLESPACE shm;
	INSERT INTO there SELECT g, md5((g * 7)::text) FROM generate_series(1, 40000) g;
	CREATE INDEX there_v ON there (v) TABLESPACE shm;
});
my $query = q{SELECT (SELECT count(*) || ':' || sum(hashtext(v)) FROM here) || '/' ||
	(SELECT count(*) || ':' || sum(hashtext(v)) FROM there WHERE v > '4')};
my $expected = $node->safe_psql('postgres', $query);

my @dests = make_destinations(2);
my $log_start = -s $node->logfile;
my $id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
ok($node->log_contains("backup $id reads its files from 2 devices at once", $log_start),
	'the backup read the two devices at once');
my $location = backup_location($node, $id);
tablespace_walked_first("$location/manifest.json", 'the online backup');

# With too few buffers for a second reader, the log says the devices are read in turn.
$log_start = -s $node->logfile;
my @few = make_destinations(1);
my $few_id = $node->safe_psql('postgres',
	'SET stripebackup.buffer_count = 4; SELECT stripe_backup(' . sql_array(@few) . ')');
ok($node->log_contains("backup $few_id reads its files from 2 devices one after the other", $log_start),
	'with 4 buffers the log says the two devices were read one after the other');
ok($node->log_contains('HINT:  Reading several devices at once needs stripebackup.buffer_count 8 or more', $log_start),
	'and what it takes to read them at once');
my ($vrc, $vout, $verr) = run_stripebackup('verify', $location);
is($vrc, 0, 'the backup verifies') or diag($verr);

my $copy = restore_node('copy', $location, '--tablespace-mapping', "$tsdir=$base/ts-moved");
$copy->start;
is($copy->safe_psql('postgres', $query), $expected, 'the copy returns the same results from both devices');
$copy->stop;

# The command reads a stopped cluster's two devices at once too.
my $file = $node->safe_psql('postgres', "SELECT pg_relation_filepath('there')");
$node->stop;
my @cold = make_destinations(2);
my ($rc, $out, $err) = run_stripebackup('create', '--source', $node->data_dir,
	'--dest', $cold[0], '--dest', $cold[1], '--name', 'cold');
is($rc, 0, 'a cold backup of the cluster over two devices') or diag($err);
tablespace_walked_first("$cold[0]/cold/manifest.json", 'the cold backup');
# (a cold copy has no backup_manifest of PostgreSQL's for pg_verifybackup)
my $cold = PostgreSQL::Test::Cluster->new('cold');
($rc, $out, $err) = run_stripebackup('restore', "$cold[0]/cold", '--target', $cold->data_dir,
	'--tablespace-mapping', "$tsdir=$base/ts-cold");
is($rc, 0, 'the cold backup restores') or diag($err);
$cold->append_conf('postgresql.conf', 'port = ' . $cold->port);
$cold->start;
is($cold->safe_psql('postgres', $query), $expected, 'the cold copy returns the same results');
$cold->stop;

# A page damaged in the tablespace: found by its lane's page check.
damage_page($node->data_dir . "/$file", 3);
$node->start;
my @more = make_destinations(2);
my ($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT stripe_backup(' . sql_array(@more) . ')');
isnt($ret, 0, 'the backup of a cluster damaged in its tablespace fails');
like($stderr, qr/page checksum verification failed for 1 page\(s\): "\Q$file\E" block 3/,
	'the error names the tablespace file and the block');
is(scalar(folder_entries($_)), 0, "nothing is left in $_") for @more;
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_replication_slots'), '0', 'no WAL slot is left');
$node->stop;
done_testing();
