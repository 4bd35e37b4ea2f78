# Retention: stripe_expire() removes old backups' files from every
# destination and their history, never the newest completed backup, keeps a
# backup whose folder holds a file it did not write (even one named like a
# stripe) or is a link (to somewhere else entirely), or whose destination is
# a link, goes on with the others, and refuses meaningless arguments.
use strict;
use warnings;

use File::Path ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary');
$node->safe_psql('postgres', 'CREATE TABLE t AS SELECT g FROM generate_series(1, 10000) g');
my @dests = make_destinations(2);
my $arr = sql_array(@dests);
my @ids = map { $node->safe_psql('postgres', "SELECT stripe_backup($arr)") } 1 .. 7;
my %name = map { $_ => $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $_") } @ids;

my ($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM stripe_expire()');
like($err, qr/give keep_last, older_than, recovery_window or keep_full/, 'no condition is refused');
($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM stripe_expire(keep_last => 0)');
like($err, qr/keep_last 0 must be at least 1/, 'keep_last 0 is refused');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_expire(older_than => '1 hour')"), '0',
	'nothing is older than an hour');

# Backups 0 and 3 can go; 1 has a user's file named like a stripe, 2's folder
# in the second destination was replaced by a link to a folder of the user's.
my $mine = PostgreSQL::Test::Utils::tempdir();
append_to_file("$mine/precious", 'keep me');
append_to_file("$mine/stripe-2.sbs", 'mine too');
append_to_file("$dests[1]/$name{$ids[1]}/stripe-77.sbs", 'a user\'s file');
File::Path::rmtree("$dests[1]/$name{$ids[2]}");
symlink($mine, "$dests[1]/$name{$ids[2]}") or die;
my $removed = $node->safe_psql('postgres',
	'SELECT backup_id, files_removed, bytes_freed > 0, removed FROM stripe_expire(keep_last => 3) ORDER BY 1');
is($removed, "$ids[0]|4|t|t\n$ids[1]|0|f|f\n$ids[2]|0|f|f\n$ids[3]|4|t|t",
	'keep_last => 3 removes the backups it may, keeps the others, and says so');
for my $id (@ids[0, 3])
{
	ok(!-e "$dests[0]/$name{$id}" && !-e "$dests[1]/$name{$id}", "backup $id is gone from both destinations");
}
is(join(' ', folder_entries("$dests[1]/$name{$ids[1]}")), 'manifest.json stripe-2.sbs stripe-77.sbs',
	'the user\'s file named like a stripe is kept, and all of that backup with it');
ok(-e "$dests[0]/$name{$ids[1]}/stripe-1.sbs", 'in every destination');
is(join(' ', folder_entries($mine)), 'precious stripe-2.sbs', 'nothing is removed through a link');
ok(-l "$dests[1]/$name{$ids[2]}" && -e "$dests[0]/$name{$ids[2]}/manifest.json",
	'the linked backup is kept whole');
is($node->safe_psql('postgres', 'SELECT string_agg(id::text, \',\' ORDER BY id) FROM stripe_backups'),
	join(',', @ids[1, 2, 4, 5, 6]), 'the removed backups\' history is gone, the rest stays');
unlink("$dests[1]/$name{$ids[1]}/stripe-77.sbs");
unlink("$dests[1]/$name{$ids[2]}");

# A destination that is a link: its backups are kept.
my $real = PostgreSQL::Test::Utils::tempdir();
my $linked = "$real/linked";
symlink($dests[1], $linked) or die;
$node->safe_psql('postgres', "UPDATE stripe_backup_history SET destinations[2] = '$linked' WHERE id = $ids[4]");
($ret, $out, $err) = $node->psql('postgres',
	"SELECT backup_id, removed FROM stripe_expire(keep_last => 2) ORDER BY 1");
like($err, qr/backup "\Q$name{$ids[4]}\E" was kept: in destination "\Q$linked\E", its destination is a symbolic link/,
	'a destination that is a link keeps its backup, with a warning naming it');
is($out, join("\n", "$ids[1]|t", "$ids[2]|t", "$ids[4]|f"),
	'that backup is reported as not removed; the two kept before go now');
ok(-e "$dests[1]/$name{$ids[4]}/stripe-2.sbs", 'and nothing of it is removed');
$node->safe_psql('postgres', "UPDATE stripe_backup_history SET destinations[2] = '$dests[1]' WHERE id = $ids[4]");

# A folder with a file stripebackup did not write is kept, and so is its row.
append_to_file("$dests[1]/$name{$ids[5]}/notes.txt", "mine\n");
($ret, $out, $err) = $node->psql('postgres',
	"SELECT backup_id, removed FROM stripe_expire(older_than => '1 millisecond') ORDER BY 1");
like($err, qr/backup "\Q$name{$ids[5]}\E" was kept: in destination "\Q$dests[1]\E", it holds something the backup did not write/,
	'a foreign file keeps its backup, with a warning');
like($err, qr/notes\.txt/, 'which names the file');
is($out, join("\n", "$ids[4]|t", "$ids[5]|f"),
	'the others go; that backup is reported as not removed');
ok(-e "$dests[1]/$name{$ids[5]}/notes.txt" && -e "$dests[0]/$name{$ids[5]}/manifest.json"
	  && -e "$dests[1]/$name{$ids[5]}/stripe-2.sbs", 'the foreign file stays, and so does all of that backup');
is($node->safe_psql('postgres', 'SELECT string_agg(id::text, \',\' ORDER BY id) FROM stripe_backups'),
	"$ids[5],$ids[6]", 'its row stays; the newest completed backup is never expired');
$node->stop;
done_testing();
