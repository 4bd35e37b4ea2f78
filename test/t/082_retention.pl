# Retention by recovery window, by count of full backups, and kept backups
# (issue 43): stripe_expire(recovery_window => ...) keeps the newest backup
# that completed before the window opens (with the chain it needs) and
# removes older ones; stripe_keep() keeps a backup (and the chain it needs)
# through keep_last => 1, annotates it, refuses what it cannot keep; with
# stripebackup.retention_full_count set, each completed backup expires the
# older ones.
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

sub backup
{
	my ($type) = @_;
	$node->safe_psql('postgres', 'INSERT INTO t SELECT g FROM generate_series(1, 1000) g');
	return $node->safe_psql('postgres', "SELECT stripe_backup($arr, type => '$type')");
}

sub name_of { $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $_[0]") }

# Backup ID as if it ran DAYS ago.
sub age
{
	my ($id, $days) = @_;
	$node->safe_psql('postgres', "UPDATE stripe_backup_history SET started_at = now() - interval '$days days',"
		  . " finished_at = now() - interval '$days days' + interval '1 minute' WHERE id = $id");
}

sub remaining { $node->safe_psql('postgres', 'SELECT string_agg(id::text, \',\' ORDER BY id) FROM stripe_backups') }

# --- a recovery window: F1 20 days ago, F2 12, I3 (incr of F2) 9, F4 2.
my $f1 = backup('full');
my $f2 = backup('full');
my $i3 = backup('incr');
my $f4 = backup('full');
is($node->safe_psql('postgres', "SELECT parent_id FROM stripe_backups WHERE id = $i3"), $f2, 'I3 completes F2');
age($f1, 20);
age($f2, 12);
age($i3, 9);
age($f4, 2);
my $f1_name = name_of($f1);
my ($ret, $out, $err) = $node->psql('postgres',
	"SELECT backup_id, removed FROM stripe_expire(recovery_window => '7 days') ORDER BY 1");
is($out, "$f1|t", 'a 7-day window removes only what is older than the backup it starts from');
like($err, qr/backup $f2 is kept: backup $i3, which stays, depends on it/,
	'I3, which ended before the window opened, stays, and with it F2');
is(remaining(), "$f2,$i3,$f4", 'F2, I3 and F4 stay');
ok(!-e "$dests[0]/$f1_name", 'F1\'s folder is gone');

$out = $node->safe_psql('postgres',
	"SELECT string_agg(backup_id::text, ',' ORDER BY backup_id) FROM stripe_expire(recovery_window => '1 day')");
is($out, "$f2,$i3", 'a 1-day window starts from F4: the chain before it goes');
is(remaining(), "$f4", 'F4 stays');

# --- kept backups survive keep_last => 1, and keep what they need
my $f5 = backup('full');
$node->safe_psql('postgres', "SELECT stripe_keep($f5, note => 'before the upgrade')");
my $f6 = backup('full');
my $i7 = backup('incr');
$node->safe_psql('postgres', "SELECT stripe_keep($i7)");
my $f8 = backup('full');
is($node->safe_psql('postgres', "SELECT kept, note FROM stripe_backups WHERE id = $f5"), 't|before the upgrade',
	'stripe_backups shows a backup kept, and its note');
$out = $node->safe_psql('postgres',
	"SELECT string_agg(backup_id::text, ',' ORDER BY backup_id) FROM stripe_expire(keep_last => 1)");
is($out, "$f4", 'keep_last => 1 removes only what is not kept');
is(remaining(), "$f5,$f6,$i7,$f8", 'the kept F5 survives, the kept I7 keeps its parent F6');
$node->safe_psql('postgres', "SELECT stripe_keep($i7, keep => false, note => 'given back')");
is($node->safe_psql('postgres', "SELECT kept, note FROM stripe_backups WHERE id = $i7"), 'f|given back',
	'keep => false gives a backup back, with a new note');
$node->safe_psql('postgres', "SELECT stripe_keep($f5, keep => true)");
is($node->safe_psql('postgres', "SELECT note FROM stripe_backups WHERE id = $f5"), 'before the upgrade',
	'note NULL leaves the note as it was');

($ret, $out, $err) = $node->psql('postgres', 'SELECT stripe_keep(999999)');
like($err, qr/backup 999999 does not exist/, 'a backup that does not exist is refused, named');
$node->safe_psql('postgres', "UPDATE stripe_backup_history SET status = 'failed' WHERE id = $i7");
($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_keep($i7)");
like($err, qr/backup $i7 is failed: only a completed backup can be kept/, 'so is a backup that did not complete');
$node->safe_psql('postgres', "UPDATE stripe_backup_history SET status = 'completed' WHERE id = $i7");
($ret, $out, $err) = $node->psql('postgres', "SELECT * FROM stripe_expire(recovery_window => '0')");
like($err, qr/recovery_window "00:00:00" must be a positive interval/, 'an empty window is refused');
($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM stripe_expire(keep_full => 0)');
like($err, qr/keep_full 0 must be at least 1/, 'so is keep_full 0');

# --- stripebackup.retention_full_count: every completed backup expires the older ones
$node->safe_psql('postgres', 'ALTER SYSTEM SET stripebackup.retention_full_count = 1');
$node->reload;
my $f9 = backup('full');
ok($node->poll_query_until('postgres', "SELECT count(*) = 0 FROM stripe_backups WHERE id IN ($i7, $f8)"),
	'the backup that completed removed the backups before the newest full one');
is(remaining(), "$f5,$f9", 'but for the kept one');
like(slurp_file($node->logfile), qr/retention removed backup "[^"]+": \d+ files/,
	'the server log says what it removed');

# --- stripebackup.retention_window: every completed backup keeps the window, and what it starts from
$node->safe_psql('postgres', 'ALTER SYSTEM RESET stripebackup.retention_full_count');
$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.retention_window = '1d'");
$node->reload;
$node->poll_query_until('postgres', "SELECT current_setting('stripebackup.retention_full_count') = '0' "
	  . "AND current_setting('stripebackup.retention_window') = '1d'") or die 'the settings do not take';
my $f10 = backup('full');
is(remaining(), "$f5,$f9,$f10", 'a window: nothing inside it goes');
age($f9, 3);
age($f10, 2);
my $f11 = backup('full');
ok($node->poll_query_until('postgres', "SELECT count(*) = 0 FROM stripe_backups WHERE id = $f9"),
	'the backup that completed removed the one older than the window\'s first backup');
is(remaining(), "$f5,$f10,$f11", 'F10, which completed before the window opened, stays, with what is newer');
$node->stop;
done_testing();
