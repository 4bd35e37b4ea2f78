# The WAL archive sealed under the key (archive_library = 'stripebackup'
# with stripebackup.encryption_key_file set): every archived file is sealed
# and nothing of the WAL shows in the archive; the command reads it only
# with the key; point-in-time restores from SQL and from the command write
# the key file's path (never the key) into restore_command, and the copies
# recover through it.  A key file that cannot be loaded fails archiving
# (the WAL stays in pg_wal) and nothing is archived in the clear.  Then
# each forgery put in the archive under a segment recovery needs is refused
# by wal-get (exit 126: recovery stops), wal-verify (exit 3), the plans
# (SQL and command) and the restores, and a copy restored past it stops
# recovery there instead of replaying it: (a) a sealed segment renamed over
# another, (b) another cluster's sealed segment (same key) under this
# cluster's name, (c) the real segment in the clear, (d) the real segment
# sealed with another key.
use strict;
use warnings;

use File::Copy qw(copy);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use Time::HiRes qw(usleep);

my $keys = PostgreSQL::Test::Utils::tempdir();
my $secret = 'c2VhbGVkIFdBTCBhcmNoaXZlIGtleSwgbG9uZyBlbm91Z2ggZm9yIHVz';
sub write_key
{
	my ($name, $text) = @_;
	append_to_file("$keys/$name", $text);
	chmod(0600, "$keys/$name") or die "chmod: $!";
	return "$keys/$name";
}
my $key = write_key('wal.key', "$secret\n");
my $other_key = write_key('other.key', 'another secret of more than thirty-two bytes, not this one');

my @archive = make_destinations(2);
my $archive_conf = "archive_mode = on\narchive_library = 'stripebackup'\n"
  . "stripebackup.archive_destinations = '" . join(', ', @archive) . "'\n"
  . "stripebackup.encryption_key_file = '$key'\n";
my $node = backup_node('primary', conf => $archive_conf);
my $sysid = $node->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
my @with_key = ('--archive', join(',', @archive), '--system-identifier', $sysid, '--encryption-key-file', $key);
my @without_key = ('--archive', join(',', @archive), '--system-identifier', $sysid);

# Switch to a new segment and wait until the one just completed is archived
# (named from what the switch returns: a checkpoint may write WAL after it).
sub switch_and_archive
{
	my ($n) = @_;
	$n //= $node;
	my $target = $n->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
	return $n->poll_query_until('postgres', "SELECT last_archived_wal >= '$target' FROM pg_stat_archiver");
}

$node->safe_psql('postgres', 'CREATE TABLE marks (n int, note text, at timestamptz DEFAULT clock_timestamp())');
my @dests = make_destinations(2);
my $backup = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
my $location = backup_location($node, $backup);
for my $n (1 .. 4)
{
	$node->safe_psql('postgres',
		"INSERT INTO marks (n, note) SELECT $n, 'wal-plaintext-nobody-may-read-' || g FROM generate_series(1, 5000) g; "
		  . 'SELECT pg_switch_wal()');
}
my $mark_time = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
my $at_mark = $node->safe_psql('postgres', 'SELECT count(*) FROM marks');
usleep(200_000);
$node->safe_psql('postgres', "INSERT INTO marks (n, note) VALUES (5, 'after the mark')");
ok(switch_and_archive(), 'the archiver keeps up under the key');

# Sealed, all of it: format 2.0, nothing of the WAL readable.
my @files = map { glob("$_/wal/$sysid/*.sbw") } @archive;
my @not_sealed = grep { substr(slurp_file($_), 0, 10) ne "SBWALFIL\x02\x00" } @files;
ok(@files > 4, scalar(@files) . ' files archived');
is(join(', ', @not_sealed), '', 'every one sealed (format 2.0)');
my @leaks = grep { slurp_file($_) =~ /wal-plaintext-nobody-may-read/ } @files;
is(join(', ', @leaks), '', 'no row of the WAL shows in any archived file');

my ($rc, $out, $err) = run_stripebackup('wal-verify', @with_key);
is($rc, 0, 'wal-verify with the key: good') or diag($err);
($rc, $out, $err) = run_stripebackup('wal-verify', @without_key);
is($rc, 3, 'wal-verify without the key: exit 3');
like($err, qr/encryption key is needed/, 'saying the key is needed');
my $scratch = PostgreSQL::Test::Utils::tempdir();
my @timeline1 = sort map { m{/(\w{24})\.sbw$} ? $1 : () } grep { m{/00000001[0-9A-F]{16}\.sbw$} } @files;
($rc, $out, $err) = run_stripebackup('wal-get', @without_key, $timeline1[-1], "$scratch/got");
is($rc, 126, 'wal-get without the key: exit 126 (recovery stops rather than end there)');
like($err, qr/\Q$timeline1[-1]\E.*encryption key is needed/, 'naming the file, saying the key is needed');

# Point-in-time restores through the sealed archive, from SQL and from the command.
my $copy = PostgreSQL::Test::Cluster->new('sql_copy');
my $id = $node->safe_psql('postgres',
	"SELECT stripe_restore($backup, '" . $copy->data_dir . "', target_time => '$mark_time')");
is($node->safe_psql('postgres', "SELECT status FROM stripe_restores WHERE id = $id"), 'completed', 'SQL: restored');
my $conf = slurp_file($copy->data_dir . '/postgresql.auto.conf');
like($conf, qr/restore_command = '.*wal-get .*--encryption-key-file ''\Q$key\E'' --prefetch/,
	'restore_command gives wal-get the key file');
unlike($conf, qr/\Q$secret\E/, 'the path, never the key');
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port . "\narchive_mode = off");
$copy->start;
$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the SQL copy did not promote';
is($copy->safe_psql('postgres', 'SELECT count(*) FROM marks'), $at_mark, 'SQL: the copy recovered to the time, through the sealed archive');
$copy->stop;
my $by_command = restore_node('cmd_copy', $location, '--target-time', $mark_time, '--archive', join(',', @archive),
	'--encryption-key-file', $key, '--no-progress');
like(slurp_file($by_command->data_dir . '/postgresql.auto.conf'), qr/--encryption-key-file ''\Q$key\E''/,
	'the command writes the key file too');
$by_command->append_conf('postgresql.conf', 'archive_mode = off');
$by_command->start;
$by_command->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the command\'s copy did not promote';
is($by_command->safe_psql('postgres', 'SELECT count(*) FROM marks'), $at_mark, 'the command: the same');
$by_command->stop;

# A key file that cannot be loaded: archiving fails, the WAL stays, nothing goes in the clear.
chmod(0644, $key) or die;
my $log_offset = -s $node->logfile;
my $failures = $node->safe_psql('postgres', 'SELECT failed_count FROM pg_stat_archiver');
$node->safe_psql('postgres', "INSERT INTO marks (n, note) VALUES (6, 'while the key was unusable')");
my $waiting = $node->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
ok($node->poll_query_until('postgres', "SELECT failed_count > $failures FROM pg_stat_archiver"),
	'archiving fails while the key file may be read by others');
ok($node->log_contains(qr/encryption key file "\Q$key\E" may be read or written by others/, $log_offset),
	'the log says why, naming the key file');
unlike(slurp_file($node->logfile), qr/\Q$secret\E/, 'and never the key');
ok(-e $node->data_dir . "/pg_wal/$waiting", 'PostgreSQL keeps the WAL');
ok(!(grep { -e "$_/wal/$sysid/$waiting.sbw" } @archive), 'and nothing of it is archived (in the clear or otherwise)');
chmod(0600, $key) or die;
$node->safe_psql('postgres', "INSERT INTO marks (n, note) VALUES (6, 'the key fixed')");
ok(switch_and_archive(), 'the key file fixed, archiving catches up')
  or diag($node->safe_psql('postgres', "SELECT last_archived_wal, failed_count, last_failed_wal FROM pg_stat_archiver")
	  . ' ' . $node->safe_psql('postgres', "SELECT string_agg(f, ',') FROM pg_ls_dir('pg_wal/archive_status') f"));
my ($late) = grep { -e $_ } map { "$_/wal/$sysid/$waiting.sbw" } @archive;
is(substr(slurp_file($late), 0, 10), "SBWALFIL\x02\x00", 'sealed');

# Another cluster archiving sealed under the same key, into its own archive.
my @other_archive = make_destinations(1);
my $other = backup_node('other', conf => "archive_mode = on\narchive_library = 'stripebackup'\n"
	  . "stripebackup.archive_destinations = '$other_archive[0]'\nstripebackup.encryption_key_file = '$key'\n");
$other->safe_psql('postgres', 'CREATE TABLE t AS SELECT 1');
ok(switch_and_archive($other), 'another cluster archives sealed with the same key');
my $other_sysid = $other->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
my ($other_segment) = grep { m{/[0-9A-F]{24}\.sbw$} } glob("$other_archive[0]/wal/$other_sysid/*.sbw");
$other->stop;

# The segment every forgery takes the place of: one after the backup that recovery needs.
@files = map { glob("$_/wal/$sysid/*.sbw") } @archive;
@timeline1 = sort map { m{/(\w{24})\.sbw$} ? $1 : () } grep { m{/00000001[0-9A-F]{16}\.sbw$} } @files;
my $victim = $timeline1[-3];
my ($victim_file) = grep { -e $_ } map { "$_/wal/$sysid/$victim.sbw" } @archive;
my $end_time = $node->safe_psql('postgres', "INSERT INTO marks (n) VALUES (7); SELECT clock_timestamp()");
$node->safe_psql('postgres', "INSERT INTO marks (n) VALUES (8)");
ok(switch_and_archive(), 'the archive holds WAL past the end time');
copy($victim_file, "$scratch/victim.sbw") or die;
($rc, $out, $err) = run_stripebackup('wal-get', @with_key, $victim, "$scratch/$victim");
is($rc, 0, "the real $victim read back under the key") or diag($err);

# The real segment archived elsewhere in the clear, and sealed with another key: forgeries of it.
my ($plain_dest) = make_destinations(1);
my ($other_key_dest) = make_destinations(1);
($rc, $out, $err) = run_stripebackup('wal-push', '--archive', $plain_dest, '--system-identifier', $sysid,
	$victim, "$scratch/$victim");
is($rc, 0, 'a copy in the clear made') or diag($err);
($rc, $out, $err) = run_stripebackup('wal-push', '--archive', $other_key_dest, '--system-identifier', $sysid,
	'--encryption-key-file', $other_key, $victim, "$scratch/$victim");
is($rc, 0, 'a copy sealed with another key made') or diag($err);
my $donor = (grep { -e $_ } map { "$_/wal/$sysid/$timeline1[-4].sbw" } @archive)[0];

my %forgeries = (
	'a: another segment renamed over it' => [ $donor, qr/names "$timeline1[-4]", not "$victim"/ ],
	'b: another cluster\'s sealed segment' => [ $other_segment, qr/belongs to the cluster of system identifier $other_sysid/ ],
	'c: the segment in the clear' => [ "$plain_dest/wal/$sysid/$victim.sbw", qr/it is in the clear/ ],
	'd: the segment sealed with another key' =>
	  [ "$other_key_dest/wal/$sysid/$victim.sbw", qr/tag does not match/ ],);

# Start copy C by hand (the cluster object would stop it at the end) and wait
# for its postmaster to go: true when it went by itself.
sub starts_and_stops
{
	my ($c) = @_;
	PostgreSQL::Test::Utils::system_log('pg_ctl', '-w', '-D', $c->data_dir, '-l', $c->logfile, 'start');
	for (1 .. 600)
	{
		return 1 unless -e $c->data_dir . '/postmaster.pid';
		usleep(100_000);
	}
	PostgreSQL::Test::Utils::system_log('pg_ctl', '-D', $c->data_dir, '-m', 'immediate', 'stop');
	return 0;
}

# A restore past the forgery: what the copy does when it reaches it.
sub restore_past
{
	my ($name, $why) = @_;
	my $c = PostgreSQL::Test::Cluster->new($name);
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"SELECT stripe_restore($backup, '" . $c->data_dir . "', target_time => '$end_time')");
	like($stderr, qr/WARNING: +the WAL archive has a gap after the backup: segment "$victim" .*cannot be used/,
		"$name: the restore warns of the segment it cannot use");
	$c->append_conf('postgresql.conf', 'port = ' . $c->port . "\narchive_mode = off\nhot_standby = off");
	ok(starts_and_stops($c), "$name: the copy stops: recovery ends at the forgery, unfinished");
	my $log = slurp_file($c->logfile);
	like($log, qr/could not restore file "$victim" from archive/, "$name: PostgreSQL says where");
	like($log, $why, "$name: wal-get's refusal is in its log");
	unlike($log, qr/restored log file "$victim" from archive/, "$name: the forgery is never replayed");
	unlike($log, qr/archive recovery complete|ready to accept connections/, "$name: and the copy never promoted");
}

for my $case (sort keys %forgeries)
{
	my ($from, $why) = @{ $forgeries{$case} };
	copy($from, $victim_file) or die "copy $from: $!";
	($rc, $out, $err) = run_stripebackup('wal-get', @with_key, $victim, "$scratch/got");
	is($rc, 126, "$case: wal-get exits 126");
	like($err, $why, "$case: saying why");
	ok(!-e "$scratch/got", "$case: writing nothing");
	($rc, $out, $err) = run_stripebackup('wal-verify', @with_key);
	is($rc, 3, "$case: wal-verify exits 3");
	like($err, qr/problem: .*\Q$victim\E/, "$case: naming the file");
	($rc, $out, $err) = $node->psql('postgres',
		"SELECT count(*) FROM stripe_restore_plan($backup, target => 'latest')");
	like($err, qr/WARNING: +recovery to the latest target would stop short of it: segment "$victim" .*cannot be used/,
		"$case: stripe_restore_plan warns, as of a gap");
	($rc, $out, $err) = $node->psql('postgres',
		"SELECT stripe_restore($backup, '$scratch/never', target => 'latest')");
	like($err, qr/ERROR: +recovery to the latest target would stop short of it: segment "$victim"/,
		"$case: stripe_restore to the latest is refused");
	ok(!-e "$scratch/never", "$case: creating nothing");
	($rc, $out, $err) = run_stripebackup('plan', $location, '--target-latest', '--archive', join(',', @archive),
		'--encryption-key-file', $key);
	is($rc, 3, "$case: stripebackup plan exits 3");
	like($out, qr/would stop short of it: segment "$victim" .*cannot be used/, "$case: saying why");
	(my $short = $case) =~ s/^(\w).*/$1/;
	restore_past("forged_$short", $why);
}
copy("$scratch/victim.sbw", $victim_file) or die;
($rc, $out, $err) = run_stripebackup('wal-verify', @with_key);
is($rc, 0, 'the real segment put back: the archive verifies') or diag($err);
$node->stop;
done_testing();
