# Backups with redundancy (docs/FORMAT.md section 10), every stripe present:
# online backups with redundancy 1 over 3 and 4 destinations and 2 over 5,
# compressed or not, encrypted, a differential one; each restored and
# started, its data the source's; the manifest puts every group's members on
# stripes of their own, and the parity costs about m / (N - m) of what is
# stored; bad redundancy refused, naming the value, with nothing written.
use strict;
use warnings;

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary');
load_sample_data($node);
my $key = PostgreSQL::Test::Utils::tempdir() . '/backup.key';
PostgreSQL::Test::Utils::append_to_file($key, 'a secret of more than thirty-two bytes, for redundancy');
chmod 0600, $key;

# Every data chunk and parity record where the layout puts it: no stripe
# holds two members of a group.  Returns the number of groups seen.
sub check_groups
{
	my ($m, $what) = @_;
	my ($M, $K, $R) = @{ $m->{redundancy} }{qw(parity data run)};
	my $N = scalar @{ $m->{stripes} };
	my (%stripes_of, $misplaced);
	for my $s (0 .. $N - 1)
	{
		my $st = $m->{stripes}[$s];
		for my $range (@{ $st->{chunk_ranges} })
		{
			for my $c ($range->[0] .. $range->[1])
			{
				my ($b, $r) = (int($c / ($K * $R)), $c % ($K * $R));
				my ($g, $j) = ($b * $R + $r % $R, int($r / $R));
				$misplaced++ if ($b + $j) % $N != $s;
				push @{ $stripes_of{$g} }, $s;
			}
		}
		for my $range (@{ $st->{parity_ranges} })
		{
			for my $q ($range->[0] .. $range->[1])
			{
				my $row = int($q / $R);
				my ($b, $p) = (int($row / $M), $row % $M);
				my $g = $b * $R + $q % $R;
				$misplaced++ if ($b + $K + $p) % $N != $s;
				push @{ $stripes_of{$g} }, $s;
			}
		}
	}
	is($misplaced // 0, 0, "$what: every member is where the layout puts it");
	my $shared = grep { my %seen; grep { $seen{$_}++ } @{ $stripes_of{$_} } } keys %stripes_of;
	is($shared, 0, "$what: no stripe holds two members of a group");
	return scalar keys %stripes_of;
}

# Backup ID's manifest (and its history row) checked; its restore started and compared.
sub check_backup
{
	my ($id, $n, $m, $what, %opts) = @_;
	my $row = $node->safe_psql('postgres',
		"SELECT status, redundancy, parity_bytes > 0, parity_overhead_pct FROM stripe_backups WHERE id = $id");
	my ($status, $redundancy, $has_parity, $pct) = split /\|/, $row;
	is("$status|$redundancy|$has_parity", "completed|$m|t", "$what: completed, with redundancy $m");
	my $location = backup_location($node, $id);
	my @key = $opts{key} ? ('--encryption-key-file', $opts{key}) : ();
	my ($rc, $out, $err) = run_stripebackup('show', $location, '--output=json', @key);
	my $show = decode_json($out);
	my $manifest;
	is($show->{backup}{redundancy}, $m, "$what: show says redundancy $m");
	if ($opts{key})
	{
		($rc, $out, $err) = run_stripebackup('show', $location, '--json', @key);
		$manifest = decode_json($out);
	}
	else
	{
		$manifest = decode_json(slurp_file("$location/manifest.json"));
	}
	is($manifest->{format_version}, '3.1', "$what: manifest 3.1");
	is_deeply($manifest->{redundancy},
		{ parity => $m, data => $n - $m, run => 16, code => 'rs-cauchy-gf256' },
		"$what: the manifest records the redundancy");
	cmp_ok(check_groups($manifest, $what), '>', 0, "$what: groups");
	# Each group's parity is as long as its longest record.  m / (N - m) of
	# the data, but the last block's groups have fewer members each (up to
	# m x 16 records more): without compression, every record but the
	# last's is a whole chunk and its header.
	my $ideal = 100 * $m / ($n - $m);
	if ($opts{exact})
	{
		my $records = 0;
		$records += $_->{parity_chunks} for @{ $manifest->{stripes} };
		my $want = 100 * $records * ($manifest->{chunk_size} + 48) / $manifest->{stored_bytes};
		my $one = 100 * ($manifest->{chunk_size} + 48) / $manifest->{stored_bytes};
		cmp_ok(abs($pct - $want), '<', $one + 0.1,
			"$what: parity is $pct % of stored, $records whole records (but the last chunk's group's)");
		cmp_ok($records, '<=', $manifest->{chunks} * $m / ($n - $m) + $m * 16,
			"$what: $records parity records for $manifest->{chunks} chunks, $ideal % and one block at most");
	}
	else
	{
		cmp_ok($pct, '>=', $ideal * 0.95, "$what: parity is $pct % of stored, at least about $ideal %");
		cmp_ok($pct, '<', $ideal * 3, "$what: and not far above");
	}
	is((run_stripebackup('verify', $location, @key))[0], 0, "$what: stripebackup verify passes");
	return $location;
}

sub restore_and_compare
{
	my ($name, $location, $fingerprint, @extra) = @_;
	my $copy = restore_node($name, $location, @extra);
	$copy->start;
	is(sample_data_fingerprint($copy), $fingerprint, "$name: the copy's data is the source's");
	$copy->stop;
}

my $fingerprint = sample_data_fingerprint($node);

# Redundancy 1 over 3, uncompressed.
my @three = make_destinations(3);
my $id = $node->safe_psql('postgres',
	'SELECT stripe_backup(' . sql_array(@three) . ", compression => 'none', redundancy => 1)");
my $location = check_backup($id, 3, 1, '1 over 3, uncompressed', exact => 1);
restore_and_compare('copy_3_1', $location, $fingerprint);

# A differential on top of it, with the same redundancy, from the setting.
$node->safe_psql('postgres', "UPDATE items SET name = name || 'x' WHERE id % 7 = 0");
my $diff_print = sample_data_fingerprint($node);
$id = $node->safe_psql('postgres',
	'SET stripebackup.redundancy = 1; SELECT stripe_backup(' . sql_array(@three) . ", type => 'diff')");
is($node->safe_psql('postgres', "SELECT type FROM stripe_backups WHERE id = $id"), 'diff', 'a differential');
$location = check_backup($id, 3, 1, 'differential 1 over 3, from the setting');
restore_and_compare('copy_diff', $location, $diff_print);

# The parameter overrides the setting.
$id = $node->safe_psql('postgres',
	'SET stripebackup.redundancy = 1; SELECT stripe_backup(' . sql_array(make_destinations(2)) . ', redundancy => 0)');
is($node->safe_psql('postgres', "SELECT redundancy, parity_bytes FROM stripe_backups WHERE id = $id"), '0|0',
	'redundancy => 0 overrides the setting');
is(decode_json(slurp_file(backup_location($node, $id) . '/manifest.json'))->{format_version}, '3.0',
	'a backup without redundancy is 3.0');

# Redundancy 1 over 4, compressed; 2 over 5.
$id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(make_destinations(4)) . ', redundancy => 1)');
restore_and_compare('copy_4_1', check_backup($id, 4, 1, '1 over 4, zstd'), $diff_print);
$id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(make_destinations(5)) . ', redundancy => 2)');
restore_and_compare('copy_5_2', check_backup($id, 5, 2, '2 over 5, zstd'), $diff_print);

# Encrypted, with redundancy.
$id = $node->safe_psql('postgres',
	"SET stripebackup.encryption_key_file = '$key'; SELECT stripe_backup(" . sql_array(make_destinations(3))
	  . ', redundancy => 1)');
$location = check_backup($id, 3, 1, 'encrypted 1 over 3', key => $key);
restore_and_compare('copy_sealed', $location, $diff_print, '--encryption-key-file', $key);

# Refusals: the value named, nothing written, no history row.
my @refused = make_destinations(3);
my $before = $node->safe_psql('postgres', 'SELECT count(*) FROM stripe_backups');
for my $case ([ 3, qr/redundancy 3 needs at least 4 destinations \(the backup has 3\)/ ],
	[ -1, qr/redundancy -1 is out of range/ ], [ 9, qr/redundancy 9 is out of range/ ])
{
	my ($value, $want) = @$case;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		'SELECT stripe_backup(' . sql_array(@refused) . ", redundancy => $value)");
	isnt($ret, 0, "redundancy $value over 3 destinations refused");
	like($stderr, $want, "redundancy $value: the error names it");
}
is($node->safe_psql('postgres', 'SELECT count(*) FROM stripe_backups'), $before, 'no history row for them');
is(scalar(map { folder_entries($_) } @refused), 0, 'nothing written in their destinations');

# The command: create --redundancy, and its refusal.
my $src = PostgreSQL::Test::Utils::tempdir();
PostgreSQL::Test::Utils::append_to_file("$src/file$_", ('stripes ' x 20000) . $_) for 1 .. 30;
my @cold = make_destinations(3);
my ($rc, $out, $err) = run_stripebackup('create', '--source', $src, (map { ('--dest', $_) } @cold),
	'--name', 'cold', '--redundancy', '1', '--chunk-size', '64k', '--no-progress');
is($rc, 0, 'stripebackup create --redundancy 1') or diag($err);
($rc, $out, $err) = run_stripebackup('show', "$cold[0]/cold");
like($out, qr/redundancy:   any 1 of the 3 destinations may be lost; parity .*, \d+\.\d % of stored/,
	'show says the redundancy and its cost');
is((run_stripebackup('verify', "$cold[0]/cold"))[0], 0, 'and it verifies');
($rc, $out, $err) = run_stripebackup('create', '--source', $src, (map { ('--dest', $_) } @cold),
	'--name', 'bad', '--redundancy', '3', '--no-progress');
isnt($rc, 0, 'create --redundancy 3 over 3 destinations refused');
like($err, qr/redundancy 3 needs at least 4 destinations/, 'the error names it');

$node->stop;
done_testing();
