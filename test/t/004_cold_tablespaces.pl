# A cold backup of a stopped cluster whose tablespace and pg_wal live
# elsewhere (initdb --waldir): both archived as directories, never as links,
# with the metadata an online backup writes, so that --tablespace-mapping
# relocates the tablespace as it does for an online backup; the copy starts
# and returns the same data.  Restores whose places overlap the target, lie
# inside a running cluster's data directory or are not empty are refused
# with exit status 2 before anything is created.  A damaged pg_control is
# not trusted: the backup records no system identifier from it.
use strict;
use warnings;

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $base = PostgreSQL::Test::Utils::tempdir();
my $node = PostgreSQL::Test::Cluster->new('cold_ts');
$node->init(extra => [ '--data-checksums', "--waldir=$base/wal" ]);
$node->start;
mkdir "$base/ts1" or die;
$node->safe_psql('postgres', qq{
	CREATE TABLESPACE ts1 LOCATION '$base/ts1';
	CREATE TABLE in_ts (id int PRIMARY KEY, v text) TABLESPACE ts1;
	INSERT INTO in_ts SELECT g, md5(g::text) FROM generate_series(1, 20000) g;
	CREATE DATABASE tsdb TABLESPACE ts1;
});
$node->safe_psql('tsdb', 'CREATE TABLE t AS SELECT g FROM generate_series(1, 1000) g');
my $oid = $node->safe_psql('postgres', "SELECT oid FROM pg_tablespace WHERE spcname = 'ts1'");
my $sysid = $node->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
my $query = "SELECT count(*), sum(hashtext(v)) FROM in_ts WHERE v > '8'";
my $expected = $node->safe_psql('postgres', $query);
$node->stop;

my @dests = make_destinations(2);
my ($rc, $out, $err) = run_stripebackup('create', '--source', $node->data_dir,
	'--dest', $dests[0], '--dest', $dests[1], '--name', 'cold');
is($rc, 0, 'cold backup of a cluster with a tablespace and pg_wal elsewhere') or diag($err);

($rc, $out) = run_stripebackup('show', '--json', "$dests[0]/cold");
my $manifest = decode_json($out);
my $meta = $manifest->{metadata};
is($meta->{kind}, 'postgresql', 'the manifest describes a PostgreSQL cluster');
is($meta->{system_identifier}, $sysid, 'with its system identifier, from pg_control');
is($meta->{timeline}, 1, 'and its timeline');
is_deeply($meta->{tablespaces}, [ { oid => $oid, location => "$base/ts1", in_place => JSON::PP::false } ],
	'and its tablespace, as an online backup records it');
my %type = map { ($_->{path} // '') => $_->{type} } @{ $manifest->{entries} };
is($type{"pg_tblspc/$oid"}, 'dir', 'the tablespace is archived as a directory');
is($type{'pg_wal'}, 'dir', 'pg_wal is archived as a directory');
is(scalar(grep { $_->{type} eq 'symlink' } @{ $manifest->{entries} }), 0, 'no link is stored');
($rc, $out) = run_stripebackup('show', "$dests[0]/cold");
like($out, qr/tablespace:\s+$oid at \Q$base\/ts1\E/, 'show lists the tablespace');

# Refused restores, with the original running again; none creates anything.
$node->start;
my $target = "$base/copy";
my $running = $node->data_dir;
mkdir "$base/full" or die;
PostgreSQL::Test::Utils::append_to_file("$base/full/precious", "keep me\n");
my @refusals = (
	[ 'a mapping inside the target', [ "$base/ts1=$target/ts" ], qr/puts a tablespace inside the restore target/ ],
	[ 'a mapping at the target', [ "$base/ts1=$target" ], qr/puts a tablespace at the restore target/ ],
	[ 'the same mapping twice', [ "$base/ts1=$base/a", "$base/ts1=$base/b" ], qr/maps "\Q$base\/ts1\E" again/ ],
	[ 'a mapping inside a running cluster', [ "$base/ts1=$running/ts-copy" ],
		qr/tablespace $oid .* is inside the data directory ".*" of a running PostgreSQL server/ ],
	[ 'a mapping to a folder that is not empty', [ "$base/ts1=$base/full" ], qr/tablespace $oid .*"\Q$base\/full\E" is not empty/ ],
	[ 'no mapping: the tablespace is still in use', [], qr/tablespace $oid .*"\Q$base\/ts1\E" is not empty/ ],);
for my $case (@refusals)
{
	my ($what, $mappings, $want) = @$case;
	($rc, $out, $err) = run_stripebackup('restore', "$dests[0]/cold", '--target', $target,
		map { ('--tablespace-mapping', $_) } @$mappings);
	is($rc, 2, "$what: refused with exit status 2");
	like($err, $want, "$what: the refusal names it");
	ok(!-e $target && !-e "$target/ts" && !-e "$running/ts-copy" && !-e "$base/a",
		"$what: nothing was created");
}
($rc, $out, $err) = run_stripebackup('restore', "$dests[0]/cold", '--target', "$running/copy",
	'--tablespace-mapping', "$base/ts1=$base/ts-elsewhere");
is($rc, 2, 'a target inside a running cluster is refused');
like($err, qr/restore target .* is inside the data directory/, 'the refusal says so');
ok(!-e "$running/copy" && !-e "$base/ts-elsewhere", 'and nothing was created');
is(slurp_file("$base/full/precious"), "keep me\n", 'the folder that was not empty is untouched');

# Restored with the tablespace mapped elsewhere, beside the running original.
my $copy = PostgreSQL::Test::Cluster->new('cold_ts_copy');
($rc, $out, $err) = run_stripebackup('restore', "$dests[1]/cold", '--target', $copy->data_dir,
	'--tablespace-mapping', "$base/ts1=$base/ts1-moved");
is($rc, 0, 'restore with the tablespace mapped') or diag($err);
is(readlink($copy->data_dir . "/pg_tblspc/$oid"), "$base/ts1-moved", 'pg_tblspc links to the new place');
ok(-d $copy->data_dir . '/pg_wal' && !-l $copy->data_dir . '/pg_wal', 'pg_wal is a directory of the copy');
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
$copy->start;
is($copy->safe_psql('postgres', $query), $expected, 'the copy returns the same results');
is($copy->safe_psql('postgres', "SELECT pg_tablespace_location($oid)"), "$base/ts1-moved",
	'the copy finds its tablespace at the new place');
is($copy->safe_psql('tsdb', 'SELECT count(*) FROM t'), '1000', 'a database in the tablespace is back');
$copy->stop;
$node->stop;

# A damaged pg_control (a byte of its system identifier flipped): its
# figures are not trusted, the backup records none of them and says so.
my $control = $node->data_dir . '/global/pg_control';
open(my $fh, '+<', $control) or die "open: $!";
binmode $fh;
sysread($fh, my $byte, 1);
sysseek($fh, 0, 0);
syswrite($fh, chr(ord($byte) ^ 0x01));
close($fh);
my @damaged_dests = make_destinations(1);
($rc, $out, $err) = run_stripebackup('create', '--source', $node->data_dir,
	'--dest', $damaged_dests[0], '--name', 'damaged');
is($rc, 0, 'a cluster with a damaged pg_control is still copied');
like($err, qr/warning: ".*global\/pg_control" is damaged \(its CRC-32C is [0-9a-f]{8}, its contents give [0-9a-f]{8}\): the backup records no system identifier or timeline/,
	'with a warning that its pg_control is not trusted');
($rc, $out) = run_stripebackup('show', '--json', "$damaged_dests[0]/damaged");
$meta = decode_json($out)->{metadata};
ok(!exists $meta->{system_identifier} && !exists $meta->{timeline},
	'and no system identifier or timeline from it in the manifest');

# A pg_control of a layout the command does not read (PostgreSQL 12's, then
# one of no release): named, and nothing read from it.
for my $case ([1201, qr/\(PostgreSQL 12\)/], [1900, qr/\(no PostgreSQL release it knows, or a damaged file\)/])
{
	my ($version, $named) = @$case;
	open($fh, '+<', $control) or die "open: $!";
	binmode $fh;
	sysseek($fh, 8, 0);
	syswrite($fh, pack('L', $version));
	close($fh);
	my @layout_dests = make_destinations(1);
	($rc, $out, $err) = run_stripebackup('create', '--source', $node->data_dir,
		'--dest', $layout_dests[0], '--name', "layout$version");
	is($rc, 0, "a cluster whose pg_control is of version $version is still copied");
	like($err, qr/warning: ".*global\/pg_control" is of version $version $named, a layout this command does not read \(it reads those of PostgreSQL 13 to 18\): the backup records no system identifier or timeline/,
		"with a warning naming version $version");
	($rc, $out) = run_stripebackup('show', '--json', "$layout_dests[0]/layout$version");
	$meta = decode_json($out)->{metadata};
	ok(!exists $meta->{system_identifier} && !exists $meta->{timeline},
		"and no system identifier or timeline from a pg_control of version $version");
}
done_testing();
