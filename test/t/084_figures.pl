# Honest figures (issue 43): a stripe's data MB/s and stored MB/s are the
# same in stripe_backup_stripes, stripebackup report and show's JSON; the
# live progress has a whole-backup row beside the stripes' and never passes
# 100 %, while the cluster grows under the backup; the SVG chart is
# well-formed, with its axes titled in units, both rates in its legend and
# each stripe's line drawn in its own dash pattern.
use strict;
use warnings;

use JSON::PP;
use PostgreSQL::Test::BackgroundPsql;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use Time::HiRes qw(sleep);

my $node = backup_node('primary');
$node->safe_psql('postgres', q{
	CREATE TABLE filler AS
		SELECT g, md5(g::text) || md5((g * 3)::text) || md5((g * 7)::text) AS v
		FROM generate_series(1, 300000) g;
	CREATE TABLE growing (v text);
});
my @dests = make_destinations(2);
my $arr = sql_array(@dests);

# A rate-limited, compressed backup (data and stored differ), watched while
# a session makes the cluster grow under it.
$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.max_rate = '3'");
$node->reload;
my $id = $node->safe_psql('postgres', "SELECT stripe_backup($arr, compression => 'zstd', wait => false)");
my $grower = $node->background_psql('postgres');
my (@samples, $max_percent, $totals, $stripe_rows, $well_formed);
($max_percent, $totals, $stripe_rows, $well_formed) = (0, 0, 0, 1);
for (my $i = 0; $i < 240; $i++)
{
	my $rows = $node->safe_psql('postgres',
		"SELECT scope, coalesce(stripe::text, 'null'), coalesce(location, 'null'), bytes_done,
		        coalesce(bytes_total, 0), coalesce(percent, 0), coalesce(data_mb_per_s, 0),
		        coalesce(stored_mb_per_s, 0), phase
		 FROM stripe_backup_progress WHERE id = $id ORDER BY stripe NULLS FIRST");
	last if $rows eq '' && @samples > 0;
	if ($rows ne '')
	{
		push @samples, $rows;
		my @rows = map { [ split /\|/ ] } split /\n/, $rows;
		$well_formed &&= @rows == 3 && $rows[0][0] eq 'total' && $rows[0][1] eq 'null'
			&& $rows[0][2] eq 'null' && $rows[1][0] eq 'stripe' && $rows[2][0] eq 'stripe';
		$totals++ if $rows[0][0] eq 'total';
		for my $r (@rows)
		{
			$max_percent = $r->[5] if $r->[5] > $max_percent;
			$well_formed &&= $r->[4] == 0 || $r->[3] <= $r->[4];
		}
	}
	$grower->query_safe("INSERT INTO growing SELECT repeat(md5(g::text), 30) FROM generate_series(1, 2000) g");
	sleep 0.2;
}
$grower->quit;
note("a progress sample (scope|stripe|location|done|total|percent|data MB/s|stored MB/s|phase):\n"
	  . $samples[int(@samples / 2)]) if @samples;
cmp_ok(scalar @samples, '>=', 4, 'progress rows while the backup runs (' . scalar(@samples) . ' samples)');
is($totals, scalar @samples, 'every sample has the whole-backup row');
ok($well_formed, 'a total row (stripe and location NULL) first, then one per destination; done within the total');
cmp_ok($max_percent, '<=', 100, "percent never above 100 (highest $max_percent)");
ok($node->poll_query_until('postgres', "SELECT status = 'completed' FROM stripe_backups WHERE id = $id"),
	'the backup completes');
$node->safe_psql('postgres', "ALTER SYSTEM RESET stripebackup.max_rate");
$node->reload;

# The same stripe's rates in the view, the report and show's JSON.
my %view = map { my @f = split /\|/; ($f[0] => [ @f[1, 2] ]) } split /\n/, $node->safe_psql('postgres',
	"SELECT stripe, data_mb_per_s, stored_mb_per_s FROM stripe_backup_stripes WHERE backup_id = $id ORDER BY stripe");
is(scalar keys %view, 2, 'two stripes in stripe_backup_stripes');
ok(!grep({ $_->[0] <= $_->[1] } values %view), 'data MB/s above stored MB/s for compressed data')
	or diag(explain \%view);
my $location = backup_location($node, $id);
my ($rc, $out, $err) = run_stripebackup('report', $location);
is($rc, 0, 'stripebackup report') or diag($err);
note($out);
like($out, qr/data MB\/s\s+stored MB\/s/, 'the report labels both rates');
like($out, qr/data MB\/s: source data a stripe carried, before compression; stored MB\/s: bytes/,
	'and says what each counts');
my %report;
for (split /\n/, $out)
{
	# #, data MB, stored MB, data MB/s, stored MB/s, writing s, done after s, destination
	$report{$1} = [ $2, $3 ] if /^\s+(\d+)\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+\S/;
}
is(scalar keys %report, 2, 'a report row per stripe');
for my $s (sort keys %view)
{
	cmp_ok(abs($view{$s}[0] - $report{$s}[0]), '<=', 0.1,
		"stripe $s: data MB/s the same in the view ($view{$s}[0]) and the report ($report{$s}[0])");
	cmp_ok(abs($view{$s}[1] - $report{$s}[1]), '<=', 0.1,
		"stripe $s: stored MB/s the same in the view ($view{$s}[1]) and the report ($report{$s}[1])");
}
($rc, $out, $err) = run_stripebackup('show', $location, '--output=json');
is($rc, 0, 'show --output=json') or diag($err);
my $doc = decode_json($out);
for my $st (@{ $doc->{backup}{stripes} })
{
	my $s = $st->{number};
	cmp_ok(abs($view{$s}[0] - $st->{backup_data_mbps}), '<=', 0.051,
		"stripe $s: backup_data_mbps in the JSON is the view's data MB/s");
	cmp_ok(abs($view{$s}[1] - $st->{backup_stored_mbps}), '<=', 0.051,
		"stripe $s: backup_stored_mbps in the JSON is the view's stored MB/s");
}

# The chart.
my $svg_file = PostgreSQL::Test::Utils::tempdir() . '/figures.svg';
open my $fh, '>', $svg_file or die;
print $fh $node->safe_psql('postgres', "SELECT stripe_backup_svg($id)");
close $fh;
command_ok([ 'xmllint', '--noout', $svg_file ], 'the SVG is well-formed XML');
# kept beside the logs, to be looked at
system('cp', $svg_file, "$PostgreSQL::Test::Utils::tmp_check/084_figures.svg");
sub xpath
{
	my ($expr) = @_;
	my $v = `xmllint --xpath '$expr' $svg_file`;
	chomp $v;
	return $v;
}
like(xpath('string(//*[local-name()="text"][@class="y-title"])'),
	qr/^stored MB\/s: bytes written to the stripe, 1 s moving average$/, 'the rate axis: unit, what it counts, the window');
like(xpath('string(//*[local-name()="text"][@class="x-title"])'), qr/^time since the backup began \((s|min)\)/,
	'the time axis: its unit');
like(xpath('string(//*[local-name()="g"][@class="legend"])'),
	qr/data MB\/s: source data the stripe carried, before compression; stored MB\/s: bytes written to it/,
	'the legend says what each rate counts');
my @legend = map { xpath("string((//*[local-name()=\"text\"][\@class=\"legend-stripe\"])[$_])") } 1 .. 2;
is(scalar(grep { /^stripe \d: / } @legend), 2, 'a legend line per stripe');
for my $s (sort keys %view)
{
	# the same definition, rounded by printf there and by numeric here: within 0.1
	my ($data, $stored) = $legend[$s - 1] =~ /; ([\d.]+) data MB\/s, ([\d.]+) stored MB\/s;/;
	ok(defined $stored && abs($data - $view{$s}[0]) <= 0.1 && abs($stored - $view{$s}[1]) <= 0.1,
		"stripe $s: the legend's rates are the view's ($legend[$s - 1])");
}
isnt(xpath('string(//*[local-name()="polyline"][@data-stripe="1"]/@stroke-dasharray)'),
	xpath('string(//*[local-name()="polyline"][@data-stripe="2"]/@stroke-dasharray)'),
	'the two stripes are drawn in different dash patterns');

done_testing();
