# The stripebackup command's contract: help, exit status, clear refusals,
# and problems reported with the stripe, chunk and file they concern.
use strict;
use warnings;

use File::Path qw(make_path);
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

for my $cmd (qw(create show list plan verify restore))
{
	my ($rc, $out) = run_stripebackup($cmd, '--help');
	is($rc, 0, "$cmd --help exits 0");
	like($out, qr/Usage:/, "$cmd --help prints usage");
}
my ($rc, $out, $err) = run_stripebackup('--help');
like($out, qr/^  126  wal-get/m, '--help ends with the exit-status table');
($rc, $out, $err) = run_stripebackup('frobnicate');
is($rc, 2, 'unknown command exits 2');

my $node = PostgreSQL::Test::Cluster->new('node');
$node->init(extra => ['--data-checksums']);
$node->start;
$node->safe_psql('postgres',
	'CREATE TABLE t AS SELECT g, md5(g::text) AS h FROM generate_series(1, 50000) g');
my @dests = make_destinations(2);
my @create = ('create', '--source', $node->data_dir, '--dest', $dests[0], '--dest', $dests[1]);

($rc, $out, $err) = run_stripebackup(@create, '--name', 'live');
is($rc, 2, 'a running server is refused');
like($err, qr/is running.*stripe_backup/, 'the refusal says why and what to do instead');
ok(!-e "$dests[0]/live", 'nothing was created for the refused backup');
$node->stop;

# Bad arguments: each a usage error naming the value, creating nothing.
my %bad = (
	'weights of the wrong length' => [ '--weights', '1,2,3' ],
	'a zero weight' => [ '--weights', '1,0' ],
	'a negative weight' => [ '--weights', '1,-2' ],
	'a NaN weight' => [ '--weights', '1,nan' ],
	'an unknown compression' => [ '--compression', 'lz4' ],
	'an unknown balance' => [ '--balance', 'random' ],
	'a bad chunk size' => [ '--chunk-size', '1000' ],
	'a frame size below 16k' => [ '--frame-size', '12k' ],
	'a frame size of 0' => [ '--frame-size', '0' ],
	'a bad backup name' => [ '--name', '../x' ],);
for my $case (sort keys %bad)
{
	($rc, $out, $err) = run_stripebackup(@create, '--name', 'bad', @{ $bad{$case} });
	$rc = $rc == 0 ? 0 : $rc;
	is($rc, 2, "$case is refused with exit status 2");
	ok(!-e "$dests[0]/bad" && !-e "$dests[1]/bad", "$case creates nothing");
}
($rc, $out, $err) = run_stripebackup(@create, '--name', 'bad', '--frame-size', '20000');
like($err, qr/frame size 20000 is not a multiple of 4096 between 16384 and 67108864/,
	'a frame size that is no multiple of 4k: the refusal names it and the range');
($rc, $out, $err) = run_stripebackup('create', '--source', $node->data_dir,
	'--dest', $dests[0], '--dest', $dests[0], '--name', 'dup');
is($rc, 2, 'the same destination twice is refused');
like($err, qr/same folder/, 'the refusal names the duplicate');
($rc, $out, $err) = run_stripebackup('create', '--source', $node->data_dir,
	'--dest', $dests[0], '--dest', $node->data_dir . '/base', '--name', 'inside');
is($rc, 2, 'a destination inside the source is refused');
# What a backup cannot store is refused, not skipped: a pipe, and a link other
# than a data directory's pg_wal and pg_tblspc/<oid>; in a folder of a few
# names and in one of many, whose names the walk that counts stats ahead.
for my $count (3, 200)
{
	my $src = PostgreSQL::Test::Utils::tempdir();
	make_path("$src/d");
	PostgreSQL::Test::Utils::append_to_file("$src/d/f$_", "x$_") for 1 .. $count;
	system('mkfifo', "$src/d/f2a") == 0 or die 'mkfifo failed';
	($rc, $out, $err) = run_stripebackup('create', '--source', $src, '--dest', $dests[0], '--name', "pipe$count");
	is($rc, 2, "a pipe among $count files is refused");
	like($err, qr{"\Q$src/d/f2a\E" is a socket, pipe or device}, 'naming it');
	unlink("$src/d/f2a");
	symlink('/etc', "$src/d/f3a") or die 'symlink failed';
	($rc, $out, $err) = run_stripebackup('create', '--source', $src, '--dest', $dests[0], '--name', "link$count");
	like($err, qr{"\Q$src/d/f3a\E" is a symbolic link: a backup stores none}, "so is a link among $count files");
	ok(!-e "$dests[0]/pipe$count" && !-e "$dests[0]/link$count", 'neither created anything');
	unlink("$src/d/f3a");
	($rc, $out, $err) = run_stripebackup('create', '--source', $src, '--dest', $dests[0], '--name', "ok$count");
	is($rc, 0, "without them, the $count files are backed up") or diag($err);
	($rc, $out) = run_stripebackup('show', "$dests[0]/ok$count");
	like($out, qr/contents:\s+$count files/, 'all of them');
}

# Rates: one strict grammar everywhere.  Each refusal names the value.
for my $rate ('1,,2', '1,', '1, ,2', '1x', '-1', 'nan', 'inf', '1e3')
{
	($rc, $out, $err) = run_stripebackup(@create, '--name', 'rate', '--max-rate', $rate);
	is($rc, 2, "create --max-rate '$rate' is refused");
	like($err, qr/\Q$rate\E/, "create --max-rate '$rate': the refusal names it");
}
ok(!-e "$dests[0]/rate", 'no refused rate created anything');
($rc, $out, $err) = run_stripebackup(@create, '--name', 'rate', '--max-rate', '1,2,3');
is($rc, 2, 'three rates for two destinations are refused');
like($err, qr/3 rates given for 2 destinations/, 'the refusal counts them');
($rc, $out, $err) = run_stripebackup(@create, '--name', 'weights', '--weights', '1,,2');
is($rc, 2, 'weights "1,,2" are refused');
like($err, qr/empty weight/, 'the refusal says a weight is empty');
($rc, $out, $err) = run_stripebackup(@create, '--name', 'mem', '--buffers', '4096', '--chunk-size', '64M');
is($rc, 2, 'settings that need half a terabyte of memory are refused');
like($err, qr/buffer_count 4096 x transfer_size 64 MB \(x2 with compression\).* above the default limit of 1 GB/,
	'the refusal adds the settings up and names the limit');
($rc, $out, $err) = run_stripebackup(@create, '--name', 'mem', '--max-memory', '16M');
is($rc, 2, 'the defaults are refused under --max-memory 16M');
like($err, qr/above the limit of 16 MB/, 'naming that limit');
($rc, $out, $err) = run_stripebackup(@create, '--name', 'mem', '--max-memory', '16 M');
is($rc, 2, 'a --max-memory that is not a size is refused');
ok(!-e "$dests[0]/mem" && !-e "$dests[0]/weights", 'no refused setting created anything');
($rc, $out, $err) = run_stripebackup('create', '--source', $node->data_dir,
	'--dest', 'relative/dir', '--name', 'rel');
is($rc, 2, 'a relative destination is refused');
like($err, qr/not an absolute path/, 'the refusal says the path is not absolute');
($rc, $out, $err) = run_stripebackup(@create, '--dest', "$dests[0]/not-there", '--name', 'nowhere');
is($rc, 1, 'a destination that is not there: exit 1 (not found)');
like($err, qr/"\Q$dests[0]\E\/not-there" does not exist/, 'named');

# A good backup, compressed with zstd at a fast negative level.
($rc, $out, $err) = run_stripebackup(@create, '--name', 'good', '--level', '-3', '--chunk-size', '256k');
is($rc, 0, 'cold backup with zstd level -3') or diag($err);
($rc, $out, $err) = run_stripebackup(@create, '--name', 'good');
is($rc, 2, 'a second backup of the same name is refused');
like($err, qr/already holds a backup named "good"/, 'the refusal names the existing backup');

# The frames of a compressed chunk (--frame-size): small ones cost space, one a chunk the least.
my %stored;
for my $frames ('16k', '1M')
{
	($rc, $out, $err) = run_stripebackup(@create, '--name', "frames$frames", '--frame-size', $frames);
	is($rc, 0, "a backup in frames of $frames") or diag($err);
	($rc, $out) = run_stripebackup('show', "$dests[0]/frames$frames", '--json');
	($stored{$frames}) = $out =~ /"stored_bytes":\s*(\d+)/;
}
cmp_ok($stored{'16k'}, '>', $stored{'1M'} * 1.05,
	"frames of 16k store more than one frame a chunk ($stored{'16k'} against $stored{'1M'} bytes)");
($rc, $out, $err) = run_stripebackup('verify', "$dests[1]/frames16k");
is($rc, 0, 'and the backup in small frames verifies') or diag($err);

($rc, $out) = run_stripebackup('show', "$dests[1]/good");
is($rc, 0, 'show works from the second destination');
like($out, qr/zstd level -3/, 'show reports the compression');

my $target = PostgreSQL::Test::Utils::tempdir() . '/restore';
($rc, $out) = run_stripebackup('plan', "$dests[0]/good", '--target', $target);
is($rc, 0, 'plan succeeds');
like($out, qr/will be created/, 'plan says the target will be created');
($rc, $out) = run_stripebackup('plan', "$dests[0]/good", '--detail');
like($out, qr/base\/\d+\/\d+/, 'plan --detail lists file pieces');

# The readers take the same rates, and a memory limit.
for my $cmd (qw(verify restore))
{
	my @read = ($cmd, "$dests[0]/good", $cmd eq 'restore' ? ('--target', "$target-rate") : ());
	for my $rate ('1,,2', '1,', '1x')
	{
		($rc, $out, $err) = run_stripebackup(@read, '--max-rate', $rate);
		is($rc, 2, "$cmd --max-rate '$rate' is refused");
		like($err, qr/invalid value for --max-rate: .*"\Q$rate\E"/, "$cmd --max-rate '$rate': the refusal names it");
	}
	($rc, $out, $err) = run_stripebackup(@read, '--max-memory', '1M');
	is($rc, 2, "$cmd refuses settings above --max-memory 1M");
	like($err, qr/buffer_count 16 x the backup's chunk size 256 kB .* above the limit of 1 MB/,
		"$cmd: the refusal adds the settings up");
}
ok(!-e "$target-rate", 'no refused restore created its target');
($rc, $out, $err) = run_stripebackup('plan', "$dests[0]/good", '--max-rate', '1');
is($rc, 2, 'plan takes no --max-rate');

# A non-empty target is refused and left alone.
make_path("$target");
open my $fh, '>', "$target/precious" or die;
print $fh "keep me\n";
close $fh;
($rc, $out, $err) = run_stripebackup('restore', "$dests[0]/good", '--target', $target);
is($rc, 2, 'a non-empty target is refused');
like($err, qr/not empty/, 'the refusal says the target is not empty');
is(slurp_file("$target/precious"), "keep me\n", 'the non-empty target is untouched');

# A flipped byte in the middle of stripe 2.
my $manifest = decode_json(slurp_file("$dests[1]/good/manifest.json"));
my $stripe2 = "$dests[1]/good/stripe-2.sbs";
my $size = -s $stripe2;
open my $sf, '+<', $stripe2 or die;
binmode $sf;
seek($sf, int($size / 2), 0);
my $byte;
read($sf, $byte, 1);
seek($sf, int($size / 2), 0);
print $sf chr(ord($byte) ^ 0xFF);
close $sf;
($rc, $out, $err) = run_stripebackup('verify', "$dests[0]/good");
is($rc, 3, 'verify of a damaged backup exits 3');
like($err, qr/stripe 2 of 2 .*chunk \d+ .*(checksum|header)/, 'the problem names stripe and chunk');
like($err, qr/holds "[^"]+" bytes \d+-\d+/, 'the problem names the file and bytes involved');
my $target2 = PostgreSQL::Test::Utils::tempdir() . '/restore2';
($rc, $out, $err) = run_stripebackup('restore', "$dests[0]/good", '--target', $target2);
is($rc, 3, 'restore of a damaged backup exits 3');
like($err, qr/stripe 2 of 2 .*chunk \d+/, 'the restore error names stripe and chunk');
ok(!-e $target2, 'the failed restore removed the target it created');

# A missing stripe, then found again with --stripe-path.
my $moved = PostgreSQL::Test::Utils::tempdir();
rename("$dests[0]/good/stripe-1.sbs", "$moved/stripe-1.sbs") or die;
($rc, $out, $err) = run_stripebackup('verify', "$dests[1]/good");
is($rc, 3, 'verify with a missing stripe exits 3');
like($err, qr/stripe 1 of 2 .*No such file/, 'the problem names the missing stripe');
($rc, $out) = run_stripebackup('plan', "$dests[1]/good");
is($rc, 3, 'plan with a missing stripe exits 3');
($rc, $out, $err) = run_stripebackup('verify', "$dests[1]/good", '--stripe-path', "1=$moved");
is($rc, 3, 'with --stripe-path the moved stripe is read (stripe 2 is still damaged)');
unlike($err, qr/stripe 1 of 2/, 'stripe 1 is found where --stripe-path says');

# A location that holds no backup.
($rc, $out, $err) = run_stripebackup('show', $moved);
is($rc, 3, 'a folder without a manifest exits 3');
like($err, qr/no manifest.json/, 'the error says there is no manifest');

# A path that holds no backup is "not found" (1), never "damaged" (3).
my $nowhere = "$moved/not-there";
foreach my $cmd ('show', 'plan', 'verify', 'report')
{
	($rc, $out, $err) = run_stripebackup($cmd, $nowhere);
	is($rc, 1, "$cmd of a path that does not exist exits 1");
	like($err, qr/"\Q$nowhere\E" does not exist/, "$cmd names the missing path");
}
($rc, $out, $err) = run_stripebackup('show', $dests[1]);
is($rc, 1, 'show of a destination exits 1');
like($err, qr/is a destination, not a backup's folder: "stripebackup list \Q$dests[1]\E"/,
	'and says how to list its backups');
($rc, $out, $err) = run_stripebackup('plan', $node->data_dir);
is($rc, 1, 'plan of a folder that holds no backup exits 1');
like($err, qr/holds no backup/, 'and says so');
($rc, $out, $err) = run_stripebackup('restore', $nowhere, '--target', "$moved/t", '--target-latest');
is($rc, 1, 'restore from a path that does not exist exits 1');
($rc, $out, $err) = run_stripebackup('wal-list', "$nowhere/wal/1");
is($rc, 1, 'wal-list of a path that does not exist exits 1');

done_testing();
