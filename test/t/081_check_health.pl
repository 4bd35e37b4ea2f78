# stripe_check() and stripe_health (issue 43): a good setup passes (but for
# the warning that test destinations share the data directory's device);
# each misconfiguration is caught and named: archive_mode off with archive
# destinations set, stripebackup.database_name elsewhere, a read-only
# destination, a full one (SB_TEST_SMALL_FS), an archive that takes nothing,
# an old last backup; raise => true turns failures into an ERROR naming
# them; a failing backup run by pg_cron shows in stripe_health and the check.
use strict;
use warnings;

use File::Basename qw(dirname);
use File::Path qw(rmtree);
use JSON::PP qw(decode_json);
use JsonSchemaCheck;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my @archive = make_destinations(1);
my $node = backup_node('primary', cron => 1,
	conf => archiving_conf(@archive) . "cron.database_name = 'postgres'\n");
$node->append_conf('postgresql.conf', "cron.host = '" . $node->host . "'");
$node->reload;
my @dests = make_destinations(2);
my $schema = JsonSchemaCheck->new(dirname(__FILE__) . '/../json/output.schema.json');

# stripebackup check ARGS --output=json: its status and its document, checked against the schema.
sub check_json
{
	my (@args) = @_;
	my ($rc, $out, $err) = run_stripebackup('check', @args, '--output=json');
	my $doc = eval { decode_json($out) };
	ok(defined $doc, 'check --output=json prints one JSON document') or diag("$err\n$out");
	my @problems = defined $doc ? $schema->check($doc, 'check') : ('not JSON');
	is_deeply(\@problems, [], 'check --output=json fits $defs/check of the schema');
	return ($rc, $doc);
}

# The rows of stripe_check(ARGS) on NODE: check => [severity, detail].
sub checks
{
	my ($n, $args, $pre) = @_;
	my $out = $n->safe_psql('postgres',
		($pre // '') . 'SELECT "check", severity, detail FROM stripe_check(' . ($args // '') . ')');
	note($out);
	my %rows;
	for my $line (split /\n/, $out)
	{
		my ($check, $severity, $detail) = split /\|/, $line, 3;
		$rows{$check} = [ $severity, $detail ];
	}
	return \%rows;
}

sub failures
{
	my ($rows) = @_;
	return join(', ', sort grep { $rows->{$_}[0] eq 'failure' } keys %$rows);
}

# --- before any backup: the age check says none completed
my $rows = checks($node);
is(failures($rows), 'backup age', 'with no backup yet, only the backup age fails');
like($rows->{'backup age'}[1], qr/no backup has completed/, 'saying none completed');

# --- a good setup
my $id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
$rows = checks($node);
is(failures($rows), '', 'a good setup: no failure');
is($rows->{'WAL archived'}[0], 'ok', 'a segment switched by the check reached the archive');
like($rows->{'WAL archived'}[1], qr/segment [0-9A-F]{24}, switched now, was archived/, 'naming it');
is($rows->{"destination $dests[0]"}[0], 'ok', 'the last backup\'s destinations are checked');
like($rows->{"destination $dests[1]"}[1], qr/writable, [\d.]+ MB free for the [\d.]+ MB the newest full backup stored there/,
	'with their free space against what the last full backup stored there');
is($rows->{"WAL archive destination $archive[0]"}[0], 'ok', 'so is the archive\'s');
is($rows->{"device of $dests[0]"}[0], 'warning', 'a destination on the data directory\'s device is a warning');
is($rows->{'archive_mode'}[0], 'ok', 'archive_mode and archive_library fit the destinations');
is($rows->{'shared_preload_libraries'}[0], 'ok', 'preloaded');
is($rows->{'stripebackup.database_name'}[0], 'ok', 'database_name names this database');

# The command: the same checks, an exit status, a Nagios line.
my $conn = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
my ($rc, $cmd_out, $cmd_err) = run_stripebackup('check', '-d', $conn);
is($rc, 0, 'stripebackup check: exit 0 on a good setup');
like($cmd_out, qr/^warning  device of \Q$dests[0]\E: on the data directory's device/m, 'printing the warnings');
like($cmd_out, qr/^ok       WAL archived: segment /m, 'and what passed');
($rc, $cmd_out) = run_stripebackup('check', '-d', $conn, '--nagios');
is($rc, 1, 'with --nagios: WARNING, 1');
like($cmd_out, qr/\ASTRIPEBACKUP WARNING - 0 failed, \d+ warnings: device of .* \| failures=0 warnings=\d+ checks=\d+\n\z/,
	'on one line, with performance data');
my ($json_rc, $doc) = check_json('-d', $conn);
is($json_rc, 0, 'check --output=json: exit 0 on a good setup');
is($doc->{status} . '|' . $doc->{failures}, 'warning|0', 'its status the worst severity, no failure');
my %by_name = map { $_->{check} => $_ } @{ $doc->{checks} };
ok($by_name{'WAL archived'}{ok} && $by_name{'WAL archived'}{severity} eq 'ok', 'each check with its severity');
($rc) = run_stripebackup('check', '-d', $conn, '--nagios', '--output=json');
is($rc, 3, '--nagios with --output=json: two answers, refused (UNKNOWN)');

my $health = $node->safe_psql('postgres', 'SELECT last_backup_id, last_backup_type, last_backup_failed, '
	  . 'last_full_age_seconds >= 0, last_diff_age_seconds IS NULL, failures_since_last_completed, '
	  . 'archive_lag_segments IS NOT NULL FROM stripe_health');
is($health, "$id|full|f|t|t|0|t", 'stripe_health: the newest backup, its age, no failure, the archive\'s lag');

# --- a read-only destination
chmod 0555, $dests[1] or die;
$rows = checks($node);
is(failures($rows), "destination $dests[1]", 'a read-only destination fails, alone');
like($rows->{"destination $dests[1]"}[1], qr/not writable: .*Permission denied/, 'saying why');
($rc, $cmd_out) = run_stripebackup('check', '-d', $conn);
is($rc, 1, 'stripebackup check: exit 1 with a read-only destination');
like($cmd_out, qr/^failure  destination \Q$dests[1]\E: not writable: /m, 'naming it');
chmod 0700, $dests[1] or die;

# --- a full destination
SKIP:
{
	my $small = $ENV{SB_TEST_SMALL_FS};
	skip 'SB_TEST_SMALL_FS (a small file system to fill) is not set', 4 unless $small && -d $small && -w $small;
	my $base = "$small/081";
	rmtree($base);
	mkdir $base or die "mkdir $base: $!";
	$node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array($dests[0], $base) . ')');
	system("dd if=/dev/zero of=$small/081-fill bs=1M status=none 2>/dev/null");
	$rows = checks($node);
	is($rows->{"destination $base"}[0], 'failure', 'a full destination fails');
	like($rows->{"destination $base"}[1], qr/No space left on device|less than the/, 'saying it is full');
	unlink "$small/081-fill";
	$node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
	rmtree($base);

	# A WAL archive destination with less room than its share of the WAL
	# written since the newest full backup started (each check switches a
	# segment): a warning, not a failure.
	my $wal = "$small/081-wal";
	mkdir $wal or die "mkdir $wal: $!";
	system("dd if=/dev/zero of=$small/081-fill bs=1M count=30 status=none 2>/dev/null");
	$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.archive_destinations = '$wal'");
	$node->reload;
	$node->poll_query_until('postgres', "SELECT current_setting('stripebackup.archive_destinations') = '$wal'")
	  or die 'the setting does not take';
	checks($node);
	$rows = checks($node);
	is($rows->{"room in WAL archive destination $wal"}[0], 'warning',
		'an archive destination with less room than a cycle\'s WAL: a warning');
	like($rows->{"room in WAL archive destination $wal"}[1],
		qr/[\d.]+ MB free, less than its share \([\d.]+ MB\) of the WAL written since the newest full backup started/,
		'saying how much');
	unlink "$small/081-fill";
	$node->safe_psql('postgres', 'ALTER SYSTEM RESET stripebackup.archive_destinations');
	$node->reload;
	$node->poll_query_until('postgres', "SELECT current_setting('stripebackup.archive_destinations') = '$archive[0]'")
	  or die 'the setting does not come back';
	rmtree($wal);
}

# --- an archive that takes nothing (its folders, DEST/wal/<system>/, read-only)
system('chmod', '-R', 'a-w', $archive[0]) == 0 or die;
$rows = checks($node, "timeout => '2 s'");
is($rows->{'WAL archived'}[0], 'failure', 'a segment that does not reach the archive fails the check');
like($rows->{'WAL archived'}[1], qr/was not archived within 2\.0 s: the archiver last archived .*failed \d+ times/,
	'saying how long it waited and what the archiver said');
is($rows->{'WAL archive lag'}[0], 'failure', 'and the archive\'s lag says archiving fails');
($rc, $cmd_out) = run_stripebackup('check', '-d', $conn, '--timeout', '1');
is($rc, 1, 'stripebackup check: exit 1 when a check fails');
like($cmd_out, qr/^failure  WAL archived: segment .* was not archived within 1\.0 s/m, 'naming it');
like($cmd_out, qr/^         hint: See the server log/m, 'with its hint');
($rc, $cmd_out) = run_stripebackup('check', '-d', $conn, '--timeout', '1', '--nagios');
is($rc, 2, 'with --nagios: CRITICAL, 2');
like($cmd_out, qr/\ASTRIPEBACKUP CRITICAL - \d+ failed, \d+ warnings: WAL archived: segment /, 'naming the first failure');
($json_rc, $doc) = check_json('-d', $conn, '--timeout', '1');
is($json_rc, 1, 'check --output=json: exit 1 when a check fails');
my ($failed) = grep { $_->{check} eq 'WAL archived' } @{ $doc->{checks} };
ok($doc->{status} eq 'failure' && !$failed->{ok} && $failed->{hint} =~ /server log/,
	'the document says which check failed, and its hint');
my ($ret, $out, $err) = $node->psql('postgres', "SELECT * FROM stripe_check(timeout => '1 s', raise => true)");
isnt($ret, 0, 'raise => true: an ERROR');
like($err, qr/stripebackup check failed: .*WAL archived/, 'naming the failing checks');
system('chmod', '-R', 'u+w', $archive[0]) == 0 or die;
# Each check switches a segment, which wakes the archiver from its wait after failures.
ok($node->poll_query_until('postgres',
	q{SELECT severity = 'ok' FROM stripe_check(timeout => '10 s') WHERE "check" = 'WAL archived'}),
	'archiving resumes once the archive is writable again');
is(failures(checks($node)), '', 'archiving again: no failure');

# --- an old last backup
$rows = checks($node, '', "SET stripebackup.check_max_backup_age = '1s'; SELECT pg_sleep(1.2);");
is($rows->{'backup age'}[0], 'failure', 'a backup older than stripebackup.check_max_backup_age fails');
like($rows->{'backup age'}[1], qr/ended \d+ s ago, more than stripebackup.check_max_backup_age \(1 s\)/, 'saying by how much');
($rc, $cmd_out) = run_stripebackup('check', '-d', "$conn options='-c stripebackup.check_max_backup_age=1s'", '--nagios');
is($rc, 2, 'stripebackup check --nagios with an old last backup: CRITICAL, 2');
like($cmd_out, qr/\ASTRIPEBACKUP CRITICAL - 1 failed, \d+ warnings: backup age: .*ended \d+ s ago, more than stripebackup.check_max_backup_age \(1 s\)/, 'naming the backup age');

# --- bad input changes nothing
($ret, $out, $err) = $node->psql('postgres', "SELECT * FROM stripe_check(timeout => '-5 s')");
like($err, qr/timeout "-00:00:05" must be a positive interval/, 'a timeout that is not positive is refused, named');
($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM stripe_check(raise => NULL)');
like($err, qr/must not be NULL/, 'so is NULL');

# --- monitoring roles read stripe_health, and only that
$node->safe_psql('postgres', 'CREATE ROLE watcher LOGIN IN ROLE pg_monitor');
is($node->safe_psql('postgres', 'SET ROLE watcher; SELECT count(*) FROM stripe_health'), '1',
	'pg_monitor reads stripe_health: one row');
($ret, $out, $err) = $node->psql('postgres', 'SET ROLE watcher; SELECT * FROM stripe_check()');
like($err, qr/permission denied/, 'but may not run the check (it writes into destinations)');

# --- a backup run by pg_cron that fails (a damaged page): stripe_health and the check say so
$node->safe_psql('postgres', 'CREATE TABLE victim AS SELECT g AS id, md5(g::text) AS v FROM generate_series(1, 20000) g; CHECKPOINT');
my $file = $node->safe_psql('postgres', "SELECT pg_relation_filepath('victim')");
$node->stop;
damage_page($node->data_dir . "/$file", 3);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_cron');
$node->safe_psql('postgres', "SELECT cron.schedule('nightly', '* * * * *', \$\$SELECT stripe_backup("
	  . sql_array(@dests) . ", label => 'from cron', wait => true)\$\$)");
ok($node->poll_query_until('postgres', "SELECT count(*) > 0 FROM cron.job_run_details WHERE status = 'failed'"),
	'with wait => true, pg_cron records the failing backup as failed');
$node->safe_psql('postgres', "SELECT cron.unschedule('nightly')");
$health = $node->safe_psql('postgres', 'SELECT last_backup_failed, last_failure_sqlstate, failures_since_last_completed > 0, '
	  . "last_failure_id = (SELECT max(id) FROM stripe_backups WHERE label = 'from cron') FROM stripe_health");
is($health, 't|XX001|t|t', 'stripe_health: the newest backup failed, with its SQLSTATE');
$rows = checks($node);
like($rows->{'last backup'}[1], qr/backup \d+ failed at .*page checksum verification failed.*\(SQLSTATE XX001\)/,
	'stripe_check names the failed backup, its error and SQLSTATE');
# The README's second cron job: the check, raising; pg_cron records it failed, naming the check.
$node->safe_psql('postgres', "SELECT cron.schedule('check-backups', '* * * * *', "
	  . "\$\$SELECT * FROM stripe_check(timeout => '30 s', raise => true)\$\$)");
ok($node->poll_query_until('postgres', "SELECT count(*) > 0 FROM cron.job_run_details d JOIN cron.job j USING (jobid) "
	  . "WHERE j.jobname = 'check-backups' AND d.status = 'failed' AND d.return_message LIKE '%stripebackup check failed: %last backup%'"),
	'a second cron job, stripe_check(raise => true), is recorded as failed, naming the failed backup');
$node->safe_psql('postgres', "SELECT cron.unschedule('check-backups')");
$node->safe_psql('postgres', 'DROP TABLE victim');
$node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
is($node->safe_psql('postgres', 'SELECT last_backup_failed FROM stripe_health'), 'f',
	'a completed backup clears it');

# --- archive_mode off with archive destinations set; database_name elsewhere
my @other = make_destinations(1);
my $off = backup_node('off', conf => "stripebackup.archive_destinations = '$other[0]'\nstripebackup.database_name = 'nosuch'");
$rows = checks($off);
is($rows->{'archive_mode'}[0], 'failure', 'archive_mode off with archive destinations set fails');
like($rows->{'archive_mode'}[1], qr/archive_mode is off but stripebackup.archive_destinations is set/, 'saying so');
ok(!exists $rows->{'WAL archived'}, 'no switch is tried without archiving');
is($rows->{'stripebackup.database_name'}[0], 'failure', 'database_name naming another database fails');
($rc, $cmd_out) = run_stripebackup('check', '-d', 'host=' . $off->host . ' port=' . $off->port . ' dbname=postgres');
is($rc, 1, 'stripebackup check with archive_mode off: exit 1');
like($cmd_out, qr/^failure  archive_mode: archive_mode is off but stripebackup.archive_destinations is set/m, 'naming it');
$off->stop;
$node->stop;
($rc, $cmd_out) = run_stripebackup('check', '-d', $conn, '--nagios');
is($rc, 3, 'with --nagios, a server that does not answer: UNKNOWN, 3');
like($cmd_out, qr/\ASTRIPEBACKUP UNKNOWN - connection to server .* failed[^\n]*\n\z/, 'on one line');
($rc, $cmd_out, $cmd_err) = run_stripebackup('check', '-d', $conn);
is($rc, 1, 'without: exit 1');
($rc, $cmd_out, $cmd_err) = run_stripebackup('check', '--timeout', 'soon');
is($rc, 2, 'a bad --timeout is a usage error');
like($cmd_err, qr/--timeout "soon" must be 1 to 86400 seconds/, 'naming the value');
done_testing();
