# A backup cannot be swapped for another, nor stripped of its encryption,
# by whoever may write to the backup storage:
#
# - by id, stripe_verify, stripe_restore_plan and stripe_restore read only
#   the backup the history row names (its uuid; encrypted as recorded): a
#   plaintext backup copied under an encrypted one's folder names, another
#   encrypted backup under the same key, and a cold backup whose tablespace
#   points outside the target are each refused, naming the folder and what
#   differs, and nothing is written (not the tablespace outside);
# - once the right folders are back in one destination, the next recorded
#   folder is used;
# - by location, with a key in force, a backup in the clear is refused
#   unless the caller allows it (allow_unencrypted => true, the command's
#   --allow-unencrypted): from SQL and from the command;
# - a diff/incr's parent swapped for another full backup is refused.
use strict;
use warnings;

use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $keys = PostgreSQL::Test::Utils::tempdir();
my $key = "$keys/main.key";
PostgreSQL::Test::Utils::append_to_file($key, "a secret of more than thirty-two bytes, for these tests\n");
chmod(0600, $key) or die "chmod: $!";

my $node = backup_node('primary');
$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.encryption_key_file = '$key'");
$node->reload;
$node->safe_psql('postgres', "CREATE TABLE t AS SELECT 'encrypted era' AS era, g FROM generate_series(1, 1000) g");
my @dests = make_destinations(2);
my $arr = sql_array(@dests);

sub backup_row
{
	my ($id) = @_;
	return split /\|/, $node->safe_psql('postgres', "SELECT name, encrypted FROM stripe_backups WHERE id = $id");
}

my $encrypted = $node->safe_psql('postgres', "SELECT stripe_backup($arr, label => 'encrypted')");
$node->safe_psql('postgres', "UPDATE t SET era = 'plaintext era'");
my $plain = $node->safe_psql('postgres',
	"SET stripebackup.encryption_key_file = ''; SELECT stripe_backup($arr, label => 'plain')");
my $other = $node->safe_psql('postgres', "SELECT stripe_backup($arr, label => 'another encrypted')");
my ($enc_name, $enc_flag) = backup_row($encrypted);
my ($plain_name, $plain_flag) = backup_row($plain);
my ($other_name) = backup_row($other);
is("$enc_flag $plain_flag", 't f', 'one backup encrypted, one in the clear');

# Put backup FROM's folders under backup TO's names (TO's own set aside), or put them back.
sub swap_in
{
	my ($from, $to, @where) = @_;
	for my $d (@where ? @where : @dests)
	{
		rename("$d/$to", "$d/$to.aside") or die "rename: $!" if -d "$d/$to";
		system("cp", "-a", "$d/$from", "$d/$to") == 0 or die "cp: $?";
	}
}
sub put_back
{
	my ($to) = @_;
	for my $d (@dests)
	{
		rmtree("$d/$to");
		rename("$d/$to.aside", "$d/$to") or die "rename: $!";
	}
}

# Every by-id call on backup ID refused with RE, writing nothing.
sub refused_by_id
{
	my ($id, $re, $what) = @_;
	my $target = PostgreSQL::Test::Utils::tempdir() . '/copy';
	my ($rc, $out, $err) = $node->psql('postgres', "SELECT * FROM stripe_verify($id)");
	like("$out $err", $re, "$what: stripe_verify($id) says so");
	($rc, $out, $err) = $node->psql('postgres', "SELECT * FROM stripe_restore_plan($id)");
	like($err, $re, "$what: stripe_restore_plan($id) refuses");
	($rc, $out, $err) = $node->psql('postgres', "SELECT stripe_restore($id, '$target')");
	like($err, $re, "$what: stripe_restore($id) refuses");
	ok(!-e $target, "$what: and writes nothing");
}

# 1. A plaintext backup under the encrypted one's names: the downgrade.
swap_in($plain_name, $enc_name);
refused_by_id($encrypted, qr/backup $encrypted: .*manifest copy ".*$enc_name\/manifest.json" holds another backup: "$plain_name"/,
	'a plaintext backup under the encrypted one\'s names');

# 2. Another encrypted backup, same key, under its names: the swap.
put_back($enc_name);
swap_in($other_name, $enc_name);
refused_by_id($encrypted, qr/holds another backup: "$other_name", uuid [0-9a-f]{32}, where uuid [0-9a-f]{32} is recorded/,
	'another encrypted backup under its names');
like($node->safe_psql('postgres', "SET stripebackup.encryption_key_file = ''; SELECT problem FROM stripe_verify($encrypted)"),
	qr/holds another backup than its history records \(another uuid\)/,
	'without the key too, the envelope\'s uuid tells the swap');

# 3. The right folders back in the second destination only: that copy is used.
rmtree("$dests[1]/$enc_name");
rename("$dests[1]/$enc_name.aside", "$dests[1]/$enc_name") or die;
my ($rc, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM stripe_restore_plan($encrypted)");
is($rc, 0, 'with its folders back in one destination, the plan by id goes on') or diag($err);
like($err, qr/holds another backup: "$other_name".*using the copy in ".*$dests[1]\/$enc_name"/,
	'warning that a copy was set aside for the recorded backup\'s');
rmtree("$dests[0]/$enc_name");
rename("$dests[0]/$enc_name.aside", "$dests[0]/$enc_name") or die;
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify($encrypted)"), '0',
	'all back: the backup verifies by id');

# 4. By location, under the key: a backup in the clear is refused unless allowed.
my $plain_location = "$dests[0]/$plain_name";
($rc, $out, $err) = $node->psql('postgres', "SELECT * FROM stripe_verify('$plain_location')");
like("$out $err", qr/is in the clear while an encryption key is in force/, 'stripe_verify(location) refuses the clear');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify('$plain_location', allow_unencrypted => true)"),
	'0', 'allowed, it verifies');
my $loc_target = PostgreSQL::Test::Utils::tempdir() . '/by-location';
($rc, $out, $err) = $node->psql('postgres', "SELECT stripe_restore('$plain_location', '$loc_target')");
like($err, qr/is in the clear while an encryption key is in force/, 'stripe_restore(location) refuses the clear');
ok(!-e $loc_target, 'writing nothing');
($rc, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM stripe_restore_plan('$plain_location')");
like($err, qr/is in the clear while an encryption key is in force/, 'and so does stripe_restore_plan(location)');
is($node->safe_psql('postgres',
		"SELECT stripe_restore('$plain_location', '$loc_target', allow_unencrypted => true) > 0"),
	't', 'allowed, it restores');

# The command: the encrypted backup's location, a plaintext one swapped in.
swap_in($plain_name, $enc_name);
my $cli_target = PostgreSQL::Test::Utils::tempdir() . '/cli';
($rc, $out, $err) = run_stripebackup('restore', "$dests[0]/$enc_name", '--target', $cli_target,
	'--encryption-key-file', $key);
is($rc, 3, 'the command refuses a plaintext backup in an encrypted one\'s place (damage)');
like($err, qr/is in the clear while an encryption key is in force/, 'saying why');
ok(!-e $cli_target, 'writing nothing');
($rc, $out, $err) = run_stripebackup('verify', "$dests[0]/$enc_name", '--encryption-key-file', $key);
is($rc, 3, 'and so does verify');
($rc, $out, $err) = run_stripebackup('verify', "$dests[0]/$enc_name", '--encryption-key-file', $key,
	'--allow-unencrypted');
is($rc, 0, '--allow-unencrypted reads it as what it is, a backup in the clear') or diag($err);
put_back($enc_name);
($rc, $out, $err) = run_stripebackup('verify', "$dests[0]/$enc_name", '--encryption-key-file', $key);
is($rc, 0, 'the encrypted backup itself verifies with its key') or diag($err);

# 5. A cold backup whose tablespace points outside, under the encrypted one's names.
my $outside = PostgreSQL::Test::Utils::tempdir() . '/home/.ssh';
my $cold = PostgreSQL::Test::Cluster->new('cold');
$cold->init;
File::Path::make_path($outside);
$cold->start;
$cold->safe_psql('postgres', "CREATE TABLESPACE ssh LOCATION '$outside'");
$cold->safe_psql('postgres', "CREATE TABLE planted TABLESPACE ssh AS SELECT 'ssh-ed25519 AAAA attacker' AS authorized_keys");
$cold->stop;
my @cold_dests = make_destinations(2);
($rc, $out, $err) = run_stripebackup('create', '--source', $cold->data_dir,
	(map { ('--dest', $_) } @cold_dests), '--name', 'cold');
is($rc, 0, 'a cold backup with a tablespace outside any target') or diag($err);
rmtree($outside);
for my $i (0, 1)
{
	rename("$dests[$i]/$enc_name", "$dests[$i]/$enc_name.aside") or die;
	system("cp", "-a", "$cold_dests[$i]/cold", "$dests[$i]/$enc_name") == 0 or die "cp: $?";
}
refused_by_id($encrypted, qr/holds another backup: "cold"/, 'a cold backup with a tablespace outside, in its place');
ok(!-e $outside, 'the tablespace location it names is not created');
put_back($enc_name);

# 6. A chain: an incremental whose parent is swapped for another full backup.
my $incr = $node->safe_psql('postgres', "SELECT stripe_backup($arr, type => 'incr')");
is($node->safe_psql('postgres', "SELECT type, parent_id FROM stripe_backups WHERE id = $incr"),
	"incr|$other", 'an incremental on the newest backup');
swap_in($enc_name, $other_name);
($rc, $out, $err) = $node->psql('postgres', "SELECT * FROM stripe_verify($incr)");
like("$out $err", qr/"$other_name".*(another backup|not the one the child backup recorded)/,
	'its parent swapped for another backup: refused');
put_back($other_name);
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify($incr)"), '0', 'put back: the chain verifies');

done_testing();
