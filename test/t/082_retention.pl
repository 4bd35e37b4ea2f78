# Retention by recovery window, by count of full backups, and kept backups
# (issue 43): stripe_expire(recovery_window => ...) keeps the newest backup
# that completed before the window opens (with the chain it needs) and
# removes older ones; stripe_keep() keeps a backup (and the chain it needs)
# through keep_last => 1, annotates it, refuses what it cannot keep, and
# labels its folders (keep.json) so that "stripebackup list" shows it kept,
# with its note escaped; with stripebackup.retention_full_count set, each
# completed backup expires the older ones, a label left in a folder too.
use strict;
use warnings;

use File::Basename qw(dirname);
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use JsonSchemaCheck;
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

# --- the label in every folder, and what the command's list shows of it
my %n = map { $_ => name_of($_) } ($f5, $f6, $i7);
is(scalar(grep { -f "$_/$n{$f5}/keep.json" } @dests), 2, 'the kept F5 has a label in each of its folders');
is(scalar(grep { -e "$_/$n{$i7}/keep.json" } @dests), 0, 'I7, given back, has none left');
# a note with a line break and a terminal escape: JSON-escaped in the label, escaped again on a terminal
$node->safe_psql('postgres', "SELECT stripe_keep($f6, note => E'line\\nbreak \\x1b[31mred')");
like(slurp_file("$dests[0]/$n{$f6}/keep.json"), qr/"note":"line\\nbreak \\u001b\[31mred"/,
	'the label holds the note JSON-escaped');
($ret, $out, $err) = run_stripebackup('list', @dests);
is($ret, 0, 'list: exit 0') or diag($err);
like($out, qr/^\Q$n{$f5}\E\s.*\skept$/m, 'the text row of F5 says kept');
like($out, qr/^\Q$n{$i7}\E\s.*\sno$/m, 'the text row of I7 does not');
like($out, qr/^\Q$n{$f5}\E: kept: before the upgrade$/m, 'F5\'s note follows the table');
like($out, qr/^\Q$n{$f6}\E: kept: line\\nbreak \\x1b\[31mred$/m, 'F6\'s, its control characters escaped');
unlike($out, qr/\x1b/, 'no terminal escape reaches the terminal');
my $schema = JsonSchemaCheck->new(dirname(__FILE__) . '/../json/output.schema.json');
($ret, $out, $err) = run_stripebackup('list', @dests, '--output=json');
my $doc = decode_json($out);
is_deeply([ $schema->check($doc, 'list') ], [], 'list --output=json fits $defs/list of the schema');
my %row = map { $_->{name} => $_ } @{ $doc->{backups} };
is_deeply([ map { [ $row{ $n{$_} }{kept}, $row{ $n{$_} }{note} ] } ($f5, $f6, $i7) ],
	[ [ JSON::PP::true, 'before the upgrade' ], [ JSON::PP::true, "line\nbreak \e[31mred" ], [ JSON::PP::false, undef ] ],
	'JSON: kept and note of F5 and F6, I7 not kept');
$node->safe_psql('postgres', "SELECT stripe_keep($f6, keep => false)");
is(scalar(grep { -e "$_/$n{$f6}/keep.json" } @dests), 0, 'keep => false removes the label from every folder');
($ret, $out, $err) = run_stripebackup('list', @dests, '--output=json');
%row = map { $_->{name} => $_ } @{ decode_json($out)->{backups} };
ok(!$row{ $n{$f6} }{kept}, 'and the list no longer shows F6 kept');
($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_keep($f6, note => repeat('x', 1025))");
like($err, qr/a note is at most 1024 bytes; this one is 1025/, 'a note longer than a label holds is refused');
# kept again, then given back by the history alone (as if the label's removal had failed): the label stays
$node->safe_psql('postgres', "SELECT stripe_keep($f6, note => 'stale')");
$node->safe_psql('postgres', "UPDATE stripe_backup_history SET keep = false WHERE id = $f6");
is(scalar(grep { -f "$_/$n{$f6}/keep.json" } @dests), 2, 'F6 given back with its labels left');

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
is(scalar(grep { -e "$_/$n{$f6}" || -e "$_/$n{$i7}" } @dests), 0,
	'the folders of F6 (its label left in them) and I7 (kept, then given back) are removed whole');
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
