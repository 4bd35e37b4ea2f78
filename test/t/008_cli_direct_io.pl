# The command keeps its backup out of the page cache by default, as the
# server does: buffered writes would make every destination look fast until
# the final sync, and adaptive balance would split by the cache, not by the
# devices.  --no-direct-io goes through the cache (and shows the test can fail).
use strict;
use warnings;

use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

# fincore(1) reports how much of a file the page cache holds.
sub cached_share
{
	my @files = @_;
	my ($cached, $size) = (0, 0);
	for my $f (@files)
	{
		my ($out, $err);
		IPC::Run::run([ 'fincore', '--bytes', '--noheadings', '--raw', '-o', 'RES,SIZE', $f ],
			'>', \$out, '2>', \$err)
		  or die "fincore $f: $err";
		my ($res, $bytes) = split ' ', $out;
		$cached += $res;
		$size += $bytes;
	}
	return $cached / $size;
}

my $source = PostgreSQL::Test::Utils::tempdir();
# Random bytes: zstd stores them as they are, so the stripes are 48 MB.
for my $f ([ 'a', 32 ], [ 'b', 16 ])
{
	open(my $out, '>', "$source/$f->[0]") or die $!;
	open(my $rnd, '<', '/dev/urandom') or die $!;
	for (1 .. $f->[1])
	{
		read($rnd, my $mb, 1 << 20) == 1 << 20 or die $!;
		print $out $mb;
	}
	close $out or die $!;
}
my @dests = make_destinations(2);

for my $case ([ 'default', [], sub { $_[0] < 0.05 }, 'less than 5 %' ],
	[ 'no-direct-io', ['--no-direct-io'], sub { $_[0] > 0.5 }, 'more than half' ])
{
	my ($name, $flags, $check, $what) = @$case;
	my ($rc, $out, $err) = run_stripebackup('create', '--source', $source, '--dest', $dests[0],
		'--dest', $dests[1], '--name', $name, '--no-progress', @$flags);
	is($rc, 0, "create ($name) succeeds") or diag($err);
	my @stripes = map { glob("$_/$name/stripe-*.sbs") } @dests;
	is(scalar @stripes, 2, "create ($name) wrote two stripes");
	my $share = cached_share(@stripes);
	ok($check->($share), sprintf("create ($name): the page cache holds %s of the stripes (%.0f %%)",
			$what, 100 * $share));
	($rc, $out, $err) = run_stripebackup('verify', "$dests[0]/$name");
	is($rc, 0, "the backup ($name) verifies") or diag($err);
}

done_testing();
