# A restore into a target that fills up (a 40 MB tmpfs that root mounted for
# the tests, test/run-all.sh), from SQL and with the command: it fails with a
# message that says the device is full and names the file, the restore row
# is failed with that reason, and nothing is left in the target.
use strict;
use warnings;

use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $small = $ENV{SB_TEST_SMALL_FS};
plan skip_all => 'SB_TEST_SMALL_FS (a small file system to fill) is not set'
  unless $small && -d $small && -w $small;

my $node = backup_node('primary');
load_slow_data($node);
my @dests = make_destinations(2);
my $id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
my $location = backup_location($node, $id);
my $base = "$small/034";
rmtree($base);
mkdir $base or die "mkdir $base: $!";

# From SQL, into a new directory.
my ($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_restore($id, '$base/sql')");
note($err);
isnt($ret, 0, 'stripe_restore into a full file system fails');
like($err, qr/No space left on device/, 'the caller is told the device is full');
my ($status, $error) = split /\|/, $node->safe_psql('postgres',
	'SELECT status, error FROM stripe_restore_history ORDER BY id DESC LIMIT 1'), 2;
is($status, 'failed', 'the restore row is failed');
like($error, qr/No space left on device/, 'with the reason');
is(join(' ', folder_entries("$base/sql")), '', 'nothing is left in the target');
note(`df -h $small`);

# With the command, into an existing empty directory.
mkdir "$base/cli" or die;
(my $rc, $out, $err) = run_stripebackup('restore', $location, '--target', "$base/cli");
note($err);
is($rc, 1, 'stripebackup restore into a full file system fails (exit status 1)');
like($err, qr/No space left on device/, 'and says the device is full');
is(join(' ', folder_entries("$base/cli")), '', 'nothing is left in the target');
ok(-d "$base/cli", 'the target directory it was given is kept');

rmtree($base);
$node->stop;
done_testing();
