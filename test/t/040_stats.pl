# Statistics: live progress of a running backup, the timeline (a sample every
# tenth of a second) and
# its SVG chart, throughput per destination, calibration whose figures
# become the weights of the next backup, and the reset of it all.
use strict;
use warnings;

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
});
my @dests = make_destinations(2);
my $arr = sql_array(@dests);

# Progress: a rate-limited backup (about 8 s) is watched while it runs.
$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.max_rate = '10'");
$node->reload;
my $id = $node->safe_psql('postgres', "SELECT stripe_backup($arr, compression => 'none', wait => false)");
my @samples;
for (my $i = 0; $i < 200; $i++)
{
	my $rows = $node->safe_psql('postgres',
		"SELECT stripe, bytes_done, coalesce(bytes_total, 0), recent_data_mb_per_s, percent, data_mb_per_s,
		        queue_depth, eta_seconds, phase
		 FROM stripe_backup_progress WHERE id = $id AND scope = 'stripe' ORDER BY stripe");
	last if $rows eq '' && @samples > 0;
	push @samples, $rows if $rows ne '';
	sleep 0.25;
}
note("a progress sample (stripe|bytes done|bytes total|recent data MB/s|percent|data MB/s|queue depth|seconds left|phase):\n" . $samples[int(@samples / 2)])
	if @samples;
cmp_ok(scalar @samples, '>=', 4, 'progress rows appear while the backup runs (' . scalar(@samples) . ' samples)');
my ($monotonic, $two_rows, $moving) = (1, 1, 0);
my @last = (0, 0);
for my $sample (@samples)
{
	my @rows = split /\n/, $sample;
	$two_rows &&= @rows == 2;
	for my $row (@rows)
	{
		my ($stripe, $done, $total, $rate) = split /\|/, $row;
		$monotonic &&= $done >= $last[$stripe - 1];
		$moving ||= $done > $last[$stripe - 1] && $rate > 0;
		$last[$stripe - 1] = $done;
	}
}
ok($two_rows, 'one row per destination');
ok($monotonic, 'bytes done never go back');
ok($moving, 'and advance, at a rate');
ok($node->poll_query_until('postgres', "SELECT status = 'completed' FROM stripe_backups WHERE id = $id"),
	'the backup completes');
is($node->safe_psql('postgres', 'SELECT count(*) FROM stripe_backup_progress'), '0',
	'no progress rows once it has ended');

# The timeline and the chart.  Per stripe: the number of samples, the first
# and last one's time, whether the last one is the stripe's total, and the
# MB it adds up to from mb_per_s (rounded to 0.1 MB/s) times the time
# between samples, next to the MB it stored.
my $timeline = $node->safe_psql('postgres', "
	SELECT t.stripe, count(*), min(t.seconds), max(t.seconds),
	       (array_agg(t.stored_bytes ORDER BY t.seconds DESC))[1] = s.stored_bytes,
	       round(sum(t.mb_per_s * (t.seconds - t.before))), round(s.stored_bytes / 1e6)
	FROM (SELECT *, coalesce(lag(seconds) OVER (PARTITION BY stripe ORDER BY seconds), 0) AS before
	      FROM stripe_backup_timeline WHERE backup_id = $id) t
	JOIN stripe_backup_stripes s ON s.backup_id = $id AND s.stripe = t.stripe
	GROUP BY t.stripe, s.stored_bytes ORDER BY t.stripe");
note("timeline (stripe|samples|first at|last at|ends at the total|MB from mb_per_s|MB stored):\n$timeline");
my @stripes = map { [ split /\|/ ] } split /\n/, $timeline;
is(scalar @stripes, 2, 'a timeline for each stripe');
ok(!grep({ $_->[1] < 20 || $_->[1] < 10 * $_->[3] - 1 } @stripes),
	'with a sample every tenth of a second of a backup of seconds');
ok(!grep({ $_->[2] != 0.1 } @stripes), 'the first at 0.1 s');
ok(!grep({ $_->[4] ne 't' } @stripes), 'the last one the stripe\'s stored bytes');
ok(!grep({ abs($_->[5] - $_->[6]) > 1 } @stripes), 'and mb_per_s the rate between samples');
my $svg_file = PostgreSQL::Test::Utils::tempdir() . '/backup.svg';
open my $fh, '>', $svg_file or die;
print $fh $node->safe_psql('postgres', "SELECT stripe_backup_svg($id)");
close $fh;
command_ok([ 'xmllint', '--noout', $svg_file ], 'the SVG from SQL is well-formed XML');
my $series = `xmllint --xpath 'count(//*[local-name()="polyline"][\@class="series"])' $svg_file`;
chomp $series;
is($series, '2', 'with one series per stripe');
my $points = `xmllint --xpath 'string(//*[local-name()="polyline"][\@data-stripe="1"]/\@points)' $svg_file`;
is(scalar(() = $points =~ /,/g), $stripes[0][1], 'a point for each sample of the timeline');
my $location = backup_location($node, $id);
my $cli_svg = PostgreSQL::Test::Utils::tempdir() . '/cli.svg';
command_ok([ 'stripebackup', 'report', $location, '--svg', $cli_svg ], 'stripebackup report --svg');
command_ok([ 'xmllint', '--noout', $cli_svg ], 'its SVG is well-formed XML too');

# Throughput per destination.
$node->safe_psql('postgres', "ALTER SYSTEM RESET stripebackup.max_rate");
$node->reload;
$node->safe_psql('postgres', "SELECT stripe_backup($arr, compression => 'none')") for 1 .. 2;
is($node->safe_psql('postgres',
		"SELECT count(*) FROM stripe_throughput WHERE kind = 'backup' AND runs = 3 AND trend <> 'too few runs'"),
	'2', 'throughput per destination over its last runs, with a trend');

# Calibration: the rate-limited destination measures slower, and the next
# backup without weights follows the measurements.
my $cal = $node->safe_psql('postgres',
	"SET stripebackup.max_rate = '20,80';
	 SELECT destination, test, round(mb_per_s) FROM stripe_calibrate($arr, size_mb => 16, block_kb => 256, queue_depth => 4)
	 ORDER BY destination, test");
note("calibration (destination|test|MB/s):\n$cal");
my %rate = map { my ($d, $t, $r) = split /\|/; ("$d $t" => $r) } split /\n/, $cal;
cmp_ok($rate{"$dests[0] sequential write"}, '<', $rate{"$dests[1] sequential write"},
	'the slower destination has the smaller write figure');
cmp_ok($rate{"$dests[0] sequential read"}, '<', $rate{"$dests[1] sequential read"},
	'and the smaller read figure');
opendir my $dh, $dests[0] or die;
is(scalar(grep { /calibration/ } readdir $dh), 0, 'the test files are removed');
is($node->safe_psql('postgres', 'SELECT count(*) FROM stripe_calibrations'), '4', 'the results are kept');
$id = $node->safe_psql('postgres', "SELECT stripe_backup($arr, balance => 'weighted', compression => 'none')");
my ($w1, $w2) = split /\|/, $node->safe_psql('postgres', "SELECT weights[1], weights[2] FROM stripe_backups WHERE id = $id");
cmp_ok($w1, '<', $w2, "weights => NULL takes the calibrated speeds ($w1, $w2)");
my ($c1, $c2) = split /\|/, $node->safe_psql('postgres',
	"SELECT (SELECT chunks FROM stripe_backup_stripes WHERE backup_id = $id AND stripe = 1),
	        (SELECT chunks FROM stripe_backup_stripes WHERE backup_id = $id AND stripe = 2)");
my $share = ($c1 + $c2) * $w1 / ($w1 + $w2);
cmp_ok(abs($c1 - $share), '<=', 1, "and the backup splits accordingly ($c1 and $c2 chunks)");

# A calibration with the matrix and random reads.
is($node->safe_psql('postgres',
		"SELECT count(*) FILTER (WHERE test = 'random read' AND iops > 0), count(*) > 6
		 FROM stripe_calibrate(ARRAY['$dests[1]'], size_mb => 8, random_iops => true, matrix => true)"),
	'1|t', 'random IOPS and a block size by queue depth matrix when asked');

# Reset.
$node->safe_psql('postgres', 'SELECT stripe_stats_reset()');
is($node->safe_psql('postgres',
		'SELECT (SELECT count(*) FROM stripe_calibrations), (SELECT count(*) FROM stripe_backup_timeline),
		        (SELECT count(*) FROM stripe_throughput), (SELECT count(*) FROM stripe_backups)'),
	'0|0|0|4', 'the statistics are cleared; the backups stay');
$node->stop;
done_testing();
