# A cold backup of a real cluster: initdb with data checksums, load data,
# stop, back up into three folders with weights 1,2,3, restore, start the
# copy and compare query results; pg_checksums then checks every page.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use JSON::PP;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(extra => ['--data-checksums']);
$primary->start;
load_sample_data($primary);
my $expected = sample_data_fingerprint($primary);
$primary->stop;

my @dests = make_destinations(3);
command_ok(
	[ 'stripebackup', 'create', '--source', $primary->data_dir,
	  (map { ('--dest', $_) } @dests), '--weights', '1,2,3', '--name', 'cold',
	  '--balance', 'weighted' ],
	'cold backup into three destinations');

for my $i (0 .. 2)
{
	ok(-f "$dests[$i]/cold/manifest.json", "destination " . ($i + 1) . " holds a manifest copy");
	ok(-f "$dests[$i]/cold/stripe-" . ($i + 1) . ".sbs", "destination " . ($i + 1) . " holds its stripe");
}

# Weighted shares of 1:2:3, each within one chunk.
my ($rc, $out) = run_stripebackup('show', '--json', "$dests[0]/cold");
is($rc, 0, 'show --json succeeds');
# Printed a file at a time from a spool, it is the manifest the backup wrote, byte for byte.
is($out, slurp_file("$dests[0]/cold/manifest.json"), 'show --json prints the manifest as written');
my @chunks = map { $_->{chunks} } @{ JSON::PP::decode_json($out)->{stripes} };
is(scalar @chunks, 3, 'the manifest lists three stripes');
my $total = 0;
$total += $_ for @chunks;
for my $i (0 .. 2)
{
	my $share = $total * ($i + 1) / 6;
	cmp_ok(abs($chunks[$i] - $share), '<=', 1, 'stripe ' . ($i + 1) . " holds its weighted share ($chunks[$i] of $total)");
}

command_ok([ 'stripebackup', 'verify', "$dests[1]/cold" ], 'verify finds the backup good');

my $copy = PostgreSQL::Test::Cluster->new('copy');
command_ok([ 'stripebackup', 'restore', "$dests[2]/cold", '--target', $copy->data_dir ],
	'restore from the third destination');
# The copy carries the primary's settings; give it its own port.
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
$copy->start;
is(sample_data_fingerprint($copy), $expected, 'restored cluster returns the same query results');
is($copy->safe_psql('postgres', 'SHOW data_checksums'), 'on', 'data checksums still enabled');
$copy->stop;
command_ok([ 'pg_checksums', '--check', '-D', $copy->data_dir ], 'every page checksum of the copy is valid');

done_testing();
