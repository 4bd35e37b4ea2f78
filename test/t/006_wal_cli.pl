# The WAL archive's commands on files made here, no server needed:
# wal-push as an archive_command, wal-get as a restore_command (exit status
# 0 restored, 1 quietly not there, 3 damaged or cannot tell, 2 bad usage),
# prefetch into the spool beside %p, wal-list and wal-verify.
use strict;
use warnings;

use Cwd qw(abs_path);
use File::Compare;
use File::Path qw(make_path);
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

for my $cmd (qw(wal-push wal-get wal-list wal-verify))
{
	my ($rc, $out) = run_stripebackup($cmd, '--help');
	is($rc, 0, "$cmd --help exits 0");
	like($out, qr/Usage:/, "$cmd --help prints usage");
}

my $sysid = '7301234567890123456';
my @dests = map { abs_path($_) } make_destinations(3);
my @archive = ('--archive', join(',', @dests), '--system-identifier', $sysid);
my $src = abs_path(PostgreSQL::Test::Utils::tempdir());
my $pgdata = abs_path(PostgreSQL::Test::Utils::tempdir());
make_path("$pgdata/pg_wal");

# Segments of 1 MB (the smallest PostgreSQL allows), text-like or random.
sub segment_name { return sprintf('%08X%08X%08X', $_[0], 0, $_[1]); }

sub write_file
{
	my ($path, $content) = @_;
	open my $fh, '>:raw', $path or die "$path: $!";
	print $fh $content;
	close $fh;
}

sub make_segment
{
	my ($name, $seed, $random) = @_;
	srand($seed);
	my $content = $random
	  ? join('', map { chr(int(rand(256))) } 1 .. 1024 * 1024)
	  : substr(("record $seed of the write-ahead log " x 40000), 0, 1024 * 1024);
	write_file("$src/$name", $content);
	return "$src/$name";
}

sub archived
{
	my ($name) = @_;
	return grep { -f "$_/wal/$sysid/$name.sbw" } @dests;
}

my ($rc, $out, $err);
for my $s (1 .. 6)
{
	my $name = segment_name(1, $s);
	($rc, $out, $err) = run_stripebackup('wal-push', @archive, $name, make_segment($name, $s, $s == 3));
	is($rc, 0, "wal-push of segment $s exits 0") or diag($err);
	is(scalar(archived($name)), 1, "segment $s is in one destination");
}
write_file("$src/00000002.history", "1\t0/5000A0\tno recovery target specified\n");
($rc, $out, $err) = run_stripebackup('wal-push', @archive, '00000002.history', "$src/00000002.history");
is($rc, 0, 'wal-push of a history file exits 0');
is(scalar(archived('00000002.history')), 3, 'the history file is in every destination');
is($out . $err, '', 'wal-push says nothing when all is well');

($rc, $out, $err) = run_stripebackup('wal-push', @archive, segment_name(1, 2), "$src/" . segment_name(1, 2));
is($rc, 0, 'the same segment pushed again: exit 0 (already archived)');
($rc, $out, $err) = run_stripebackup('wal-push', @archive, segment_name(1, 2), "$src/" . segment_name(1, 1));
is($rc, 2, 'other contents under an archived name: exit 2');
like($err, qr/already holds .* with other contents/, 'saying the archive holds other contents');
write_file("$src/short", 'x' x 1000);
($rc, $out, $err) = run_stripebackup('wal-push', @archive, segment_name(1, 9), "$src/short");
is($rc, 2, 'a segment of 1000 bytes is refused: exit 2');
like($err, qr/not a power of two/, 'its size is not a segment size');

# Restore, as restore_command does.
for my $s (1 .. 6)
{
	my $name = segment_name(1, $s);
	($rc, $out, $err) = run_stripebackup('wal-get', @archive, $name, "$pgdata/pg_wal/RECOVERYXLOG");
	is($rc, 0, "wal-get of segment $s exits 0") or diag($err);
	ok(compare("$src/$name", "$pgdata/pg_wal/RECOVERYXLOG") == 0, "segment $s restored exactly");
}
($rc, $out, $err) = run_stripebackup('wal-get', @archive, '00000003.history', "$pgdata/pg_wal/RECOVERYHISTORY");
is($rc, 1, 'a history file the archive lacks: exit 1');
is($out . $err, '', 'quietly (recovery asks for history files that may not exist)');
ok(!-e "$pgdata/pg_wal/RECOVERYHISTORY", 'nothing is written');

# Prefetch into the spool beside %p; the next calls are served from it.
unlink "$pgdata/pg_wal/RECOVERYXLOG";
($rc, $out, $err) = run_stripebackup('wal-get', @archive, '--prefetch', '3', segment_name(1, 1),
	"$pgdata/pg_wal/RECOVERYXLOG");
is($rc, 0, 'wal-get --prefetch 3 exits 0') or diag($err);
my $spool = "$pgdata/pg_wal/stripebackup-spool";
ok(-f "$spool/" . segment_name(1, $_) . '.sbw', "segment $_ is in the spool") for 2 .. 4;
($rc, $out, $err) = run_stripebackup('wal-get', @archive, '--prefetch', '3', segment_name(1, 2),
	"$pgdata/pg_wal/RECOVERYXLOG");
is($rc, 0, 'the next get exits 0');
ok(compare("$src/" . segment_name(1, 2), "$pgdata/pg_wal/RECOVERYXLOG") == 0, 'exactly');
ok(!-e "$spool/" . segment_name(1, 2) . '.sbw' && -f "$spool/" . segment_name(1, 5) . '.sbw',
	'served from the spool (its copy gone), and segment 5 fetched');

# Damage: exit 3, naming the file; nothing written.
my ($holder) = archived(segment_name(1, 6));
my $file = "$holder/wal/$sysid/" . segment_name(1, 6) . '.sbw';
open my $fh, '+<:raw', $file or die "$file: $!";
seek $fh, 200, 0;
print $fh 'X';
close $fh;
unlink "$pgdata/pg_wal/RECOVERYXLOG";
($rc, $out, $err) = run_stripebackup('wal-get', @archive, segment_name(1, 6), "$pgdata/pg_wal/RECOVERYXLOG");
is($rc, 126, 'a damaged segment: exit 126, which stops recovery');
like($err, qr/\Q$file\E/, 'the error names the file');
ok(!-e "$pgdata/pg_wal/RECOVERYXLOG", 'nothing is written');

($rc, $out, $err) = run_stripebackup('wal-list', @archive);
is($rc, 0, 'wal-list exits 0');
like($out, qr/^\Q${\segment_name(1, 3)}\E\s+\d\s+1\.0 MiB\s+1\.0 MiB\s+none/m, 'the random segment is stored as it is');
like($out, qr/9 files/, 'six segments and three copies of the history file, counted');
($rc, $out, $err) = run_stripebackup('wal-list', "$dests[0]/wal/$sysid");
is($rc, 0, 'wal-list LOCATION exits 0');
like($out, qr/00000002\.history/, 'and lists that destination');

($rc, $out, $err) = run_stripebackup('wal-verify', @archive);
is($rc, 3, 'wal-verify finds the damage: exit 3');
like($err, qr/problem: .*\Q${\segment_name(1, 6)}\E/, 'naming the file');
($rc, $out, $err) = run_stripebackup('wal-push', @archive, segment_name(1, 6), "$src/" . segment_name(1, 6));
is($rc, 0, 'pushed again, the damaged copy is rewritten');
($rc, $out, $err) = run_stripebackup('wal-verify', @archive, '--from', segment_name(1, 1), '--to', segment_name(1, 6));
is($rc, 0, 'wal-verify --from 1 --to 6: good') or diag($err);
like($out, qr/all 6 there/, 'all six segments there');
($rc, $out, $err) = run_stripebackup('wal-verify', @archive, '--from', segment_name(1, 1), '--to', segment_name(1, 8));
is($rc, 3, 'wal-verify --to 8: exit 3');
like($err, qr/\Q${\segment_name(1, 7)}\E" is not in the archive/, 'naming the first gap');

# A destination missing: pushes fail (exit 1, PostgreSQL retries); a get that cannot tell exits 3.
rename $dests[1], "$dests[1].away" or die;
($rc, $out, $err) = run_stripebackup('wal-push', @archive, segment_name(1, 7), make_segment(segment_name(1, 7), 7, 0));
is($rc, 1, 'wal-push with a destination missing: exit 1');
like($err, qr/\Q$dests[1]\E" does not exist \(is its device mounted\?\)/, 'naming it');
($rc, $out, $err) = run_stripebackup('wal-get', @archive, segment_name(1, 7), "$pgdata/pg_wal/RECOVERYXLOG");
is($rc, 126, 'wal-get of a file not found with a destination missing: exit 126, not 1');
like($err, qr/cannot tell/, 'saying the archive cannot tell');
rename "$dests[1].away", $dests[1] or die;

# Bad usage: exit 2.
my %bad = (
	'no system identifier' => [ '--archive', $dests[0], segment_name(1, 1), 'x' ],
	'a system identifier that is not a number' => [ '--archive', $dests[0], '--system-identifier', '12x', segment_name(1, 1), 'x' ],
	'a relative destination' => [ '--archive', 'relative', '--system-identifier', $sysid, segment_name(1, 1), 'x' ],
	'an empty destination' => [ '--archive', "$dests[0],,$dests[1]", '--system-identifier', $sysid, segment_name(1, 1), 'x' ],
	'a path as the WAL file name' => [ @archive, '../../etc/passwd', 'x' ],
	'prefetch beyond 64' => [ @archive, '--prefetch', '65', segment_name(1, 1), 'x' ],
	'a missing PATH' => [ @archive, segment_name(1, 1) ],
	'a push option' => [ @archive, '--level', '3', segment_name(1, 1), 'x' ],);
for my $case (sort keys %bad)
{
	($rc, $out, $err) = run_stripebackup('wal-get', @{ $bad{$case} });
	is($rc, 2, "wal-get with $case: exit 2");
}
($rc, $out, $err) = run_stripebackup('wal-push', @archive, '--weights', '1,2', segment_name(1, 1), "$src/" . segment_name(1, 1));
is($rc, 2, 'wal-push with 2 weights for 3 destinations: exit 2');
like($err, qr/2 weights given for 3 destinations/, 'saying so');

done_testing();
