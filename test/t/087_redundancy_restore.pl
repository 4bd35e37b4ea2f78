# Backups with redundancy (docs/FORMAT.md section 10) with destinations lost
# or damaged: redundancy 1 over 4, each destination in turn with its folder
# removed, its stripe truncated, its chunk records damaged; restored by the
# command and by stripe_restore(), checked by pg_verifybackup (every file
# the source's), verify exit 4 "0 more may be lost"; two lost with m = 1
# refused before anything is written, naming both; 2 over 5 with two gone;
# a differential over a full that lost a stripe; a bucket destination gone;
# the plan with a folder gone; and the rebuild (SQL and command) bringing
# the backup back to full redundancy.
use strict;
use warnings;

use File::Copy;
use File::Path qw(rmtree make_path);
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SbS3;
use StripeBackupTest;
use Test::More;

my $s3 = SbS3::start(buckets => [ 'bk1', 'bk2' ]);
my $conf_dir = PostgreSQL::Test::Utils::tempdir();
my $credentials = $s3->use_credentials($conf_dir, 'sb-test-secret-9f8e7d6c');

my $node = backup_node('primary');
$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.s3_endpoint = '" . $s3->endpoint . "'");
$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.s3_credentials_file = '$credentials'");
$node->reload;
load_sample_data($node);
my $fingerprint = sample_data_fingerprint($node);
my $base = PostgreSQL::Test::Utils::tempdir();
my $serial = 0;

my @four = make_destinations(4);
my $id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@four) . ', redundancy => 1)');
my $name = $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $id");
is((run_stripebackup('verify', "$four[0]/$name"))[0], 0, 'redundancy 1 over 4: verify passes with every stripe');

# Restore LOCATION with the command, every file checked by pg_verifybackup; started when asked.
sub restore_by_command
{
	my ($location, $what, $start) = @_;
	my $copy = PostgreSQL::Test::Cluster->new('cmd' . ++$serial);
	my ($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $copy->data_dir, '--no-progress');
	is($rc, 0, "$what: the command restores") or diag($err);
	command_ok([ 'pg_verifybackup', '-n', $copy->data_dir ], "$what: pg_verifybackup accepts the command's restore");
	if ($start)
	{
		$copy->append_conf('postgresql.conf', 'port = ' . $copy->port . "\narchive_mode = off");
		$copy->start;
		is(sample_data_fingerprint($copy), $start, "$what: the copy started, its data the source's");
		$copy->stop;
	}
	rmtree($copy->data_dir);
}

# Restore backup ID by stripe_restore(), checked the same way.
sub restore_by_sql
{
	my ($backup, $what) = @_;
	my $target = "$base/sql" . ++$serial;
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_restore($backup, '$target')");
	is($ret, 0, "$what: stripe_restore restores") or diag($err);
	command_ok([ 'pg_verifybackup', '-n', $target ], "$what: pg_verifybackup accepts stripe_restore's");
	rmtree($target);
}

# Verify LOCATION: exit 4, degraded, no more may be lost.
sub verify_degraded
{
	my ($location, $what) = @_;
	my ($rc, $out, $err) = run_stripebackup('verify', $location, '--no-progress');
	is($rc, 4, "$what: verify exits 4") or diag("$out\n$err");
	like($out, qr/DEGRADED.*0 more may be lost/, "$what: verify says 0 more may be lost");
}

# Flip 64 bytes in the middle of FILE.
sub damage_middle
{
	my ($file) = @_;
	open(my $fh, '+<:raw', $file) or die "open $file: $!";
	my $at = int((-s $file) / 2);
	seek($fh, $at, 0);
	read($fh, my $bytes, 64);
	seek($fh, $at, 0);
	print $fh ($bytes ^ ("\xff" x 64));
	close($fh);
}

for my $i (0 .. 3)
{
	my $folder = "$four[$i]/$name";
	my $stripe = "$folder/stripe-" . ($i + 1) . '.sbs';
	my $from = "$four[($i + 1) % 4]/$name";
	my %how = (
		'folder removed' => sub { rename($folder, "$folder.gone") or die $! },
		'stripe truncated' => sub { truncate($stripe, int((-s $stripe) / 2)) or die $! },
		'chunks damaged' => sub { damage_middle($stripe) },);
	for my $kind ('folder removed', 'stripe truncated', 'chunks damaged')
	{
		my $what = "destination " . ($i + 1) . ", $kind";
		copy($stripe, "$base/saved.sbs") or die $!;
		$how{$kind}->();
		restore_by_command($from, $what, $i == 0 && $kind eq 'folder removed' ? $fingerprint : undef);
		restore_by_sql($id, $what);
		verify_degraded($from, $what);
		rename("$folder.gone", $folder) if -d "$folder.gone";
		copy("$base/saved.sbs", $stripe) or die $!;
	}
}
is((run_stripebackup('verify', "$four[0]/$name"))[0], 0, 'every destination back: verify passes');

# Two lost with redundancy 1: refused before anything is written, both named.
rename("$four[0]/$name", "$four[0]/$name.gone");
rename("$four[1]/$name", "$four[1]/$name.gone");
my $target = "$base/refused";
my ($rc, $out, $err) = run_stripebackup('restore', "$four[2]/$name", '--target', $target, '--no-progress');
is($rc, 3, 'two stripes lost with redundancy 1: the restore is refused');
like($err, qr/stripe 1 .*stripe 2 /s, 'the refusal names both lost stripes') or diag($err);
ok(!-e $target, 'nothing was written: the target was not made');
my ($ret, $sout, $serr) = $node->psql('postgres', "SELECT stripe_restore($id, '$target')");
isnt($ret, 0, 'stripe_restore is refused too');
like($serr, qr/stripe 1 .*stripe 2 /s, 'naming both') or diag($serr);
ok(!-e $target || !glob("$target/*"), 'nothing was written by stripe_restore');
rename("$four[0]/$name.gone", "$four[0]/$name");

# The plan with one folder gone: the stripe lost, the restore still possible.
($rc, $out, $err) = run_stripebackup('plan', "$four[2]/$name", '--output=json');
my $plan = decode_json($out);
ok(!$plan->{stripes}[1]{present}, 'plan: stripe 2 is not there');
like($err . $out, qr/restorable: 1 of 4 destinations lost, 0 more may be lost/, 'plan: the restore is still possible');
rename("$four[1]/$name.gone", "$four[1]/$name");

# Rebuild by SQL: stripe 2's folder gone, written again into a new folder and recorded there.
rename("$four[1]/$name", "$four[1]/$name.gone");
my $new = "$base/new-disk";
make_path($new);
like($node->safe_psql('postgres', "SELECT stripe, location FROM stripe_rebuild($id, '$four[1]', '$new')"),
	qr/^2\|\Q$new\/$name\E$/, 'stripe_rebuild writes stripe 2 into the new destination');
is($node->safe_psql('postgres', "SELECT destinations[2] FROM stripe_backup_history WHERE id = $id"), $new,
	'the history records stripe 2 in the new destination');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify($id)"), '0',
	'stripe_verify by id finds nothing lost: full redundancy again');
restore_by_sql($id, 'after stripe_rebuild, its old folder still gone');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_restore_plan($id) WHERE stripe IS NOT NULL AND present"),
	'4', 'the plan by id finds every stripe');
($ret, $sout, $serr) = $node->psql('postgres', "SELECT * FROM stripe_rebuild($id, '$four[2]', '$base')");
like($serr, qr/stripe 3 of backup "\Q$name\E".*is not lost/, 'stripe_rebuild of a stripe not lost is refused');
rename("$four[1]/$name.gone", "$four[1]/$name");

# Rebuild by the command: stripe 3's folder gone.
rename("$four[2]/$name", "$four[2]/$name.gone");
my $new2 = "$base/new-disk-2";
make_path($new2);
($rc, $out, $err) = run_stripebackup('rebuild', "$four[0]/$name", '--stripe', '3', '--dest', $new2);
is($rc, 0, 'stripebackup rebuild writes stripe 3 again') or diag($err);
($rc, $out, $err) = run_stripebackup('verify', "$new2/$name", '--no-progress');
is($rc, 0, 'verify from the new location exits 0') or diag("$out\n$err");
like($out, qr/0 of 4 destinations lost, 1 more may be lost/, 'full redundancy again');
($rc, $out, $err) = run_stripebackup('rebuild', "$four[0]/$name", '--stripe', '3', '--dest', $new2);
is($rc, 2, 'a new destination holding the stripe already is refused');
($rc, $out, $err) = run_stripebackup('rebuild', "$four[0]/$name", '--stripe', '9', '--dest', $new2);
like($err, qr/stripe 9 does not exist/, 'a stripe out of range is refused');
rename("$four[2]/$name.gone", "$four[2]/$name");

# A differential with redundancy over the full one, which lost a stripe.
$node->safe_psql('postgres', "UPDATE items SET name = name || 'x' WHERE id % 7 = 0");
my $diff_print = sample_data_fingerprint($node);
my $diff = $node->safe_psql('postgres',
	'SELECT stripe_backup(' . sql_array(@four) . ", type => 'diff', redundancy => 1)");
my $diff_name = $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $diff");
rename("$four[3]/$name", "$four[3]/$name.gone");
restore_by_command("$four[0]/$diff_name", 'a differential over a full that lost stripe 4', $diff_print);
rename("$four[3]/$name.gone", "$four[3]/$name");

# Redundancy 2 over 5: two folders gone, it restores.
my @five = make_destinations(5);
my $id5 = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@five) . ', redundancy => 2)');
my $name5 = $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $id5");
rmtree("$five[1]/$name5");
rmtree("$five[3]/$name5");
restore_by_command("$five[0]/$name5", 'redundancy 2 over 5, two folders gone', $diff_print);
restore_by_sql($id5, 'redundancy 2 over 5, two folders gone');

# A bucket destination whose backup's objects are gone.
my @three = make_destinations(3);
my $ids3 = $node->safe_psql('postgres',
	'SELECT stripe_backup(' . sql_array(@three, 's3://bk1/pg') . ', redundancy => 1)');
my $name_s3 = $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $ids3");
if (defined $s3->data_dir && -d $s3->data_dir . '/bk1')
{
	rmtree($s3->data_dir . '/bk1');
	restore_by_command("$three[0]/$name_s3", 'the bucket of stripe 4 gone');
	restore_by_sql($ids3, 'the bucket of stripe 4 gone');
}
else
{
	note('the S3 server keeps no data folder here: the bucket is not removed');
}

$s3->stop;
done_testing();
