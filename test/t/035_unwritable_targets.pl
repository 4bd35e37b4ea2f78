# Places stripebackup cannot write: a destination or a restore target on a
# read-only file system (a tmpfs that root mounted read-only for the tests,
# test/run-all.sh), and a restore target in a folder the server's user may
# not write.  Each is refused before anything starts, with an error naming
# the path and the reason, and nothing is created: no history row, no file.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary');
my @dests = make_destinations(2);
my $id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
my $location = backup_location($node, $id);

# Run SQL that must fail; its error message.
sub refused
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	isnt($ret, 0, "refused: $sql");
	return $err;
}

# Nothing was recorded by the refused calls.
sub nothing_recorded
{
	my ($what) = @_;
	is($node->safe_psql('postgres',
			'SELECT (SELECT count(*) FROM stripe_backup_history) || \',\' || '
			  . '(SELECT count(*) FROM stripe_restore_history) || \',\' || '
			  . '(SELECT count(*) FROM pg_replication_slots)'),
		'1,0,0', "$what: no history row, no WAL slot");
}

# A restore target in a folder the server's user may not write (mode 0500).
my $locked = PostgreSQL::Test::Utils::tempdir();
mkdir "$locked/empty" or die;
chmod 0500, "$locked/empty", $locked or die;
my $err = refused("SELECT stripe_restore($id, '$locked/copy')");
like($err, qr/restore target "\Q$locked\E\/copy" cannot be created in "\Q$locked\E": Permission denied/,
	'a target that cannot be created names the folder and the reason');
$err = refused("SELECT stripe_restore($id, '$locked/empty')");
like($err, qr/restore target "\Q$locked\E\/empty" is not writable: Permission denied/,
	'an empty target that is not writable is refused');
nothing_recorded('unwritable restore targets');
my ($rc, $out);
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', "$locked/copy");
is($rc, 1, 'stripebackup restore into a folder it cannot write fails');
like($err, qr/\Q$locked\E.*Permission denied/, 'and names the folder and the reason');
is(join(' ', folder_entries($locked)), 'empty', 'nothing was created in the locked folder');
chmod 0700, "$locked/empty", $locked;

SKIP:
{
	my $ro = $ENV{SB_TEST_READONLY_FS};
	skip 'SB_TEST_READONLY_FS (a read-only file system) is not set', 10
	  unless $ro && -d $ro;

	$err = refused('SELECT stripe_backup(' . sql_array($ro, $dests[0]) . ')');
	like($err, qr/destination "\Q$ro\E" is not writable: Read-only file system/,
		'a destination on a read-only file system is refused, saying so');
	$err = refused("SELECT stripe_restore($id, '$ro/copy')");
	like($err, qr/restore target "\Q$ro\E\/copy" cannot be created in "\Q$ro\E": Read-only file system/,
		'a restore target on a read-only file system is refused, saying so');
	$err = refused("SELECT * FROM stripe_calibrate(ARRAY['$ro'], size_mb => 8)");
	like($err, qr/\Q$ro\E.*Read-only file system/, 'calibrating a read-only destination fails, saying so');
	nothing_recorded('a read-only file system');

	($rc, $out, $err) = run_stripebackup('restore', $location, '--target', "$ro/copy");
	is($rc, 1, 'stripebackup restore onto a read-only file system fails');
	like($err, qr/\Q$ro\E.*Read-only file system/, 'and says the file system is read-only');
	is(join(' ', folder_entries($ro)), '', 'nothing is on the read-only file system');
}

is(join(' ', map { folder_entries($_) } @dests), join(' ', ($node->safe_psql('postgres',
	"SELECT name FROM stripe_backups WHERE id = $id")) x 2), 'the destinations hold only the first backup');
$node->stop;
done_testing();
