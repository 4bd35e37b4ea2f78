# Restore planning, verification and restore from SQL: plan totals match the
# manifest; verify finds nothing on a good backup and names stripe, chunk and
# file on a bad one; stripe_restore() restores while the server runs and the
# copy starts on another port; a second restore is estimated within 30% from
# what the first measured; plan and verify work from a location on a server
# that never took the backup.
use strict;
use warnings;

use File::Copy qw(copy move);
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary');
$node->command_ok([ 'pgbench', '-i', '-s', '20', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');
$node->safe_psql('postgres', 'CREATE TABLE extra AS SELECT g, md5(g::text) AS h FROM generate_series(1, 100000) g');
my $query = 'SELECT count(*), sum(abalance), (SELECT sum(hashtext(h)) FROM extra) FROM pgbench_accounts';
my $expected = $node->safe_psql('postgres', $query);
my @dests = make_destinations(3);
my $id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ", compression => 'none')");
my $location = backup_location($node, $id);
my $manifest = decode_json(slurp_file("$location/manifest.json"));

# The plan adds up to the manifest.
my $total = $node->safe_psql('postgres',
	"SELECT chunks, stored_bytes, raw_bytes, files, present FROM stripe_restore_plan($id) WHERE stripe IS NULL");
my $files = grep { $_->{type} eq 'file' } @{ $manifest->{entries} };
is($total, join('|', $manifest->{chunks}, $manifest->{stored_bytes}, $manifest->{stream_bytes}, $files, 't'),
	'plan totals equal the manifest totals');
is($node->safe_psql('postgres',
		"SELECT sum(chunks) = $manifest->{chunks} AND sum(stored_bytes) = $manifest->{stored_bytes} "
		  . "FROM stripe_restore_plan($id) WHERE stripe IS NOT NULL"),
	't', 'the stripes add up to the totals');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_restore_plan($id) WHERE estimated_seconds IS NOT NULL"),
	'0', 'no estimate before any restore or calibration measured the destinations');

# Calibrated, the destinations have a read speed before any restore read them.
$node->safe_psql('postgres', 'SELECT count(*) FROM stripe_calibrate(' . sql_array(@dests) . ', size_mb => 8)');
my ($ret, $out, $err) = $node->psql('postgres',
	"SELECT count(*) FROM stripe_restore_plan($id) WHERE estimated_seconds > 0 AND estimate_from = 'calibration'");
is($out, '4', 'calibrated: every stripe and the total estimated, from the calibration');
like($err, qr/NOTICE:  the estimate of [\d.]+ s reads at the speeds stripe_calibrate measured: no restore has read from every one of these destinations yet/,
	'the plan says where its estimate comes from');
like($err, qr/DETAIL:  Decompressing and writing cost what a sample of the backup took here \([\d.]+ MB in \d+ chunks, 1024 files created\), written in "base\/pgsql_tmp"; creating and finishing the files cost what the sample paid, but for the final sync \(give target_directory to measure it\); opening the backup, twice \(stripe_restore\(\) checks it, then its worker reads it\), [\d.]+ s each, as for this plan\./,
	'and that the rest was measured on a sample of the backup, and the opening on this plan');
is($node->safe_psql('postgres',
		"SELECT (SELECT estimated_seconds FROM stripe_restore_plan($id) WHERE stripe IS NULL) > "
		  . "(SELECT max(estimated_seconds) FROM stripe_restore_plan($id) WHERE stripe IS NOT NULL)"),
	't', 'the whole takes longer than reading the slowest stripe');
opendir(my $tmp, $node->data_dir . '/base/pgsql_tmp') or die "pgsql_tmp: $!";
is(scalar(grep { /stripebackup-sample/ } readdir $tmp), 0, 'the sample left nothing in the temporary folder');
closedir $tmp;

# Where the restore will write: the sample is taken there.
my $planned = PostgreSQL::Test::Utils::tempdir();
($ret, $out, $err) = $node->psql('postgres',
	"SELECT estimated_seconds > 0 FROM stripe_restore_plan($id, target_directory => '$planned/copy') WHERE stripe IS NULL");
is($out, 't', 'a plan for a target not made yet estimates');
like($err, qr/written in "\Q$planned\E"; creating and finishing the files cost what the sample paid, its file system synced as a restore ends/,
	"its sample was written in the folder the target will be made in, that file system synced");
ok(!-e "$planned/copy", 'which is left as it was: no target made');
opendir(my $left, $planned) or die "$planned: $!";
is(scalar(grep { !/^\.\.?$/ } readdir $left), 0, 'and nothing left in it');
closedir $left;
mkdir "$planned/copy" or die;
($ret, $out, $err) = $node->psql('postgres',
	"SELECT count(*) FROM stripe_restore_plan($id, target_directory => '$planned/copy') WHERE stripe IS NULL");
like($err, qr/written in "\Q$planned\E\/copy"/, 'a target that is there: the sample is written in it');
PostgreSQL::Test::Utils::append_to_file("$planned/afile", 'x');
for my $bad ([ 'relative/path', qr/target_directory "relative\/path" is not an absolute path/ ],
	[ $node->data_dir . '/copy', qr/target_directory ".*\/copy" is inside the data directory/ ],
	[ "$planned/no/copy", qr/target_directory ".*\/no\/copy" cannot be made: its folder ".*\/no" is not a directory/ ],
	[ "$planned/afile", qr/target_directory ".*\/afile" is not a directory/ ])
{
	($ret, $out, $err) = $node->psql('postgres',
		"SELECT count(*) FROM stripe_restore_plan($id, target_directory => '$bad->[0]')");
	like($err, $bad->[1], "target_directory $bad->[0]: refused, named");
}
$node->safe_psql('postgres', "CREATE ROLE sb_reader LOGIN; GRANT pg_read_server_files TO sb_reader;
	GRANT EXECUTE ON FUNCTION stripe_restore_plan(bigint, boolean, timestamptz, pg_lsn, xid8, text, text, boolean,
	text, text, text, text[], text) TO sb_reader");
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_restore_plan($id)", extra_params => [ '-U', 'sb_reader' ]),
	'4', 'a role that may read server files plans, its sample in the temporary folder');
($ret, $out, $err) = $node->psql('postgres',
	"SELECT count(*) FROM stripe_restore_plan($id, target_directory => '$planned/copy')",
	extra_params => [ '-U', 'sb_reader' ]);
like($err, qr/permission denied to write a restore's sample into target_directory/,
	'but writes no sample where it names without the right to write server files');
my $data_files = grep { $_->{type} eq 'file' && $_->{stream_length} > 0 } @{ $manifest->{entries} };
is($node->safe_psql('postgres',
		"SELECT sum(length) = $manifest->{stream_bytes} AND count(DISTINCT file) = $data_files "
		  . "FROM stripe_restore_plan($id, detail => true) WHERE file IS NOT NULL"),
	't', 'the detail rows cover every byte of every file');

is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify($id)"), '0',
	'stripe_verify finds nothing wrong with a good backup');

# Restore from SQL while the server runs; start the copy on another port.
my $base = PostgreSQL::Test::Utils::tempdir();
my $copy = PostgreSQL::Test::Cluster->new('copy');
my $restore1 = $node->safe_psql('postgres', "SELECT stripe_restore($id, '" . $copy->data_dir . "')");
is($node->safe_psql('postgres', "SELECT status FROM stripe_restores WHERE id = $restore1"), 'completed',
	'stripe_restore completed');
command_ok([ 'pg_verifybackup', $copy->data_dir ], 'pg_verifybackup accepts the restore made from SQL');
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
$copy->start;
is($copy->safe_psql('postgres', $query), $expected, 'the copy restored from SQL returns the same results');
$copy->stop;

# The plan now expects what the first restore measured.  Restores that read
# each stripe at 40 MB/s (stripebackup.max_rate, as one would restore beside
# production) measure steadily; the second one comes within 30% of its estimate.
my ($estimate, $from) = split /\|/, $node->safe_psql('postgres',
	"SELECT estimated_seconds, estimate_from FROM stripe_restore_plan($id) WHERE stripe IS NULL");
ok($estimate > 0, "the plan estimates ${estimate}s from the measured restore");
is($from, 'restore', 'and says so');
$node->safe_psql('postgres', "SET stripebackup.max_rate = 40; SELECT stripe_restore($id, '$base/warm')");
my $restore2 = $node->safe_psql('postgres', "SET stripebackup.max_rate = 40; SELECT stripe_restore($id, '$base/second')");
my ($est, $actual) = split /\|/, $node->safe_psql('postgres',
	"SELECT estimated_seconds, actual_seconds FROM stripe_restores WHERE id = $restore2");
note("estimated $est s, actual $actual s");
cmp_ok(abs($est - $actual) / $actual, '<=', 0.30, "estimate ${est}s within 30% of actual ${actual}s");
is($node->safe_psql('postgres',
		"SELECT count(*) FROM stripe_restore_stripes WHERE restore_id = $restore2 AND estimated_seconds > 0 AND actual_seconds > 0"),
	'3', 'each stripe has its estimate beside its measured time');

# A backup on new destinations, calibrated but never restored from, while
# restores are on record: what a restore costs per file is still the
# sample's (the record's figure is of creating the tree alone, not of the
# files the read creates and fills), and only the final sync, where the sample
# did not sync, is the latest restore's.
my @fresh = make_destinations(3);
my $fresh_id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@fresh) . ", compression => 'none')");
$node->safe_psql('postgres', 'SELECT count(*) FROM stripe_calibrate(' . sql_array(@fresh) . ', size_mb => 8)');
($ret, $out, $err) = $node->psql('postgres',
	"SELECT estimate_from FROM stripe_restore_plan($fresh_id) WHERE stripe IS NULL");
is($out, 'calibration', 'restores on record, new destinations are estimated from their calibration');
like($err, qr/creating and finishing the files cost what the sample paid, and the final sync what the latest restore paid;/,
	'creating the files costs what the sample paid, the final sync what the latest restore paid');
($ret, $out, $err) = $node->psql('postgres',
	"SELECT estimate_from FROM stripe_restore_plan($fresh_id, target_directory => '$base/planned') WHERE stripe IS NULL");
like($err, qr/creating and finishing the files cost what the sample paid, its file system synced as a restore ends/,
	'and both what the sample paid when it synced where the restore will write');

# Bad targets are refused before anything starts.
($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_restore($id, '$base/second')");
like($err, qr/restore target "\Q$base\E\/second" is not empty/, 'a non-empty target is refused');
($ret, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore($id, current_setting('data_directory') || '/restore-here')");
like($err, qr/is inside the data directory/, 'a target inside the data directory is refused');

# Damage: each reported with stripe, chunk and file.
my $stripe2 = "$dests[1]/" . $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $id") . '/stripe-2.sbs';
copy($stripe2, "$base/stripe-2.good") or die;
my $size = -s $stripe2;
open my $fh, '+<', $stripe2 or die;
binmode $fh;
seek($fh, int($size / 2), 0);
print $fh "\xff\x00\xff\x00";
close $fh;
my $problem = $node->safe_psql('postgres', "SELECT stripe, chunk IS NOT NULL, file IS NOT NULL, problem FROM stripe_verify($id)");
like($problem, qr/^2\|t\|t\|stripe 2 of 3 .*chunk \d+.*holds "[^"]+"/, 'a flipped byte: stripe, chunk and file named');
copy("$base/stripe-2.good", $stripe2) or die;
truncate($stripe2, $size - 1000) or die;
like($node->safe_psql('postgres', "SELECT stripe || ': ' || problem FROM stripe_verify($id)"),
	qr/^2: stripe 2 of 3 .*(truncated|does not match its index)/, 'a truncated stripe is reported');
unlink $stripe2;
like($node->safe_psql('postgres', "SELECT stripe || ': ' || problem FROM stripe_verify($id)"),
	qr/^2: stripe 2 of 3 .*No such file/, 'a missing stripe is reported');
copy("$base/stripe-2.good", $stripe2) or die;
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify('$location')"), '0',
	'put back, the backup verifies again (by location)');

# A server that never took this backup plans, verifies and restores it from its location.
my $other = backup_node('other');
is($other->safe_psql('postgres', "SELECT count(*) FROM stripe_restore_plan('$location') WHERE stripe IS NOT NULL"),
	'3', 'another server plans the restore from the location alone');
is($other->safe_psql('postgres', "SELECT count(*) FROM stripe_verify('$location')"), '0',
	'and verifies it');
my $third = PostgreSQL::Test::Cluster->new('third');
$other->safe_psql('postgres', "SELECT stripe_restore('$location', '" . $third->data_dir . "')");
$third->append_conf('postgresql.conf', 'port = ' . $third->port);
$third->start;
is($third->safe_psql('postgres', $query), $expected, 'and restores it');
$third->stop;
$other->stop;
$node->stop;
done_testing();
