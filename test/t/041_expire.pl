# Retention: stripe_expire() removes old backups' files from every
# destination and their history, never the newest completed backup, keeps a
# folder holding files it did not write, and refuses meaningless arguments.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary');
$node->safe_psql('postgres', 'CREATE TABLE t AS SELECT g FROM generate_series(1, 10000) g');
my @dests = make_destinations(2);
my $arr = sql_array(@dests);
my @ids = map { $node->safe_psql('postgres', "SELECT stripe_backup($arr)") } 1 .. 4;
my %name = map { $_ => $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $_") } @ids;

my ($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM stripe_expire()');
like($err, qr/give keep_last, older_than or both/, 'no condition is refused');
($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM stripe_expire(keep_last => 0)');
like($err, qr/keep_last 0 must be at least 1/, 'keep_last 0 is refused');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_expire(older_than => '1 hour')"), '0',
	'nothing is older than an hour');

my $removed = $node->safe_psql('postgres',
	'SELECT backup_id, files_removed, bytes_freed > 0, removed FROM stripe_expire(keep_last => 2) ORDER BY 1');
is($removed, "$ids[0]|4|t|t\n$ids[1]|4|t|t", 'keep_last => 2 removes the two oldest, and says what went');
for my $id (@ids[0, 1])
{
	ok(!-e "$dests[0]/$name{$id}" && !-e "$dests[1]/$name{$id}", "backup $id is gone from both destinations");
}
ok(-e "$dests[0]/$name{$ids[2]}/manifest.json", 'the kept backups stay');
is($node->safe_psql('postgres', 'SELECT string_agg(id::text, \',\' ORDER BY id) FROM stripe_backups'),
	"$ids[2],$ids[3]", 'their history is gone, the rest stays');

# A folder with a file stripebackup did not write is kept, and so is its row.
open my $fh, '>', "$dests[1]/$name{$ids[2]}/notes.txt" or die;
print $fh "mine\n";
close $fh;
($ret, $out, $err) = $node->psql('postgres',
	"SELECT backup_id, removed FROM stripe_expire(older_than => '0 seconds')");
like($err, qr/holds files stripebackup did not write; the backup was kept/, 'a foreign file is named in a warning');
is($out, "$ids[2]|f", 'that backup is reported as not removed');
ok(-e "$dests[1]/$name{$ids[2]}/notes.txt" && -e "$dests[0]/$name{$ids[2]}/manifest.json"
	  && -e "$dests[1]/$name{$ids[2]}/stripe-2.sbs", 'the foreign file stays, and so does all of that backup');
is($node->safe_psql('postgres', 'SELECT string_agg(id::text, \',\' ORDER BY id) FROM stripe_backups'),
	"$ids[2],$ids[3]", 'its row stays; the newest completed backup is never expired');
$node->stop;
done_testing();
