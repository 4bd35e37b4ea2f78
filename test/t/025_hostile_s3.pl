# An object store that misbehaves, between the server and the test's S3
# server (test/s3/fault-proxy.js: listings that loop, replies that never
# come, a 200 MB listing, a 403 on the manifest): stripe_expire,
# stripe_verify and stripe_restore_plan on an s3:// backup whose listing
# loops fail naming its prefix instead of hanging; a session waiting for a
# reply that never comes ends within a second of pg_cancel_backend,
# pg_terminate_backend or its statement_timeout, and a backup's worker of
# stripe_cancel; a 200 MB listing is refused with its size and the limit,
# the backend's peak memory growing by much less than it; a 403 is said as
# the 403 it is; stripebackup.s3_allowed_buckets keeps backups, locations
# and the command to the buckets it lists, no request sent elsewhere.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SbS3;
use StripeBackupTest;
use Test::More;
use Time::HiRes ();

# s3rver even under SB_TEST_S3_SERVER=radosgw: every hostile answer here is
# the proxy's own, never forwarded, so the server behind it is not what is
# tested; radosgw would add its start (some 17 s) and check nothing more.
my $s3 = SbS3::start(buckets => [ 'bk1', 'bk2' ], server => 's3rver');
my $conf_dir = PostgreSQL::Test::Utils::tempdir();
my $credentials = $s3->use_credentials($conf_dir, 'sb-hostile-secret');
my $proxy = SbS3::start_proxy(upstream => $s3->endpoint);
my $node = backup_node('primary',
	conf => "stripebackup.s3_endpoint = '" . $proxy->endpoint . "'\n"
	  . "stripebackup.s3_credentials_file = '$credentials'\n");
my $sysid = $node->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');

# Two backups in a bucket, through the proxy while it forwards everything.
my ($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_backup(ARRAY['s3://bk1/h'])");
my $first = $out;
like($err, qr/NOTICE:  stripebackup\.s3_allowed_buckets is empty, so any bucket the endpoints serve may be written: bucket "bk1" is/,
	'a backup to a bucket while every bucket is allowed says so');
my $second = $node->safe_psql('postgres', "SELECT stripe_backup(ARRAY['s3://bk1/h'])");
my $name = $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $second");
my $location = "s3://bk1/h/$name";
is($node->safe_psql('postgres', "SELECT string_agg(status, ',') FROM stripe_backups"), 'completed,completed',
	'two backups to a bucket');

# Run SQL; its stderr and how long it took (it must not hang: statement_timeout is the net).
sub timed_psql
{
	my ($sql) = @_;
	my $t0 = Time::HiRes::time();
	my ($r, $o, $e) = $node->psql('postgres', "SET statement_timeout = '60s'; $sql");
	return ($e, Time::HiRes::time() - $t0, $o);
}

sub set_conf
{
	my ($name, $value) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET $name = '$value'");
	$node->reload;
	$node->poll_query_until('postgres', "SELECT current_setting('$name') = '$value'")
	  or die "$name does not take";
}

# ---------- listings that loop: the same continuation token for ever ----------

$proxy->set_rules([ { id => 'loop', method => 'GET', query => 'list-type=2', action => { list_loop => 1 } } ]);
my ($stderr, $seconds, $rows) = timed_psql('SELECT backup_id, removed FROM stripe_expire(keep_last => 1)');
like($stderr, qr{WARNING:  could not remove backup folder "s3://bk1/h/[^"]+".*listing of s3://bk1/h/[^ ]+/ gives continuation "loop" a second time},
	'stripe_expire on a listing that loops: the backup is kept, the warning names the prefix');
is($rows, "$first|f", 'and the backup stays');
cmp_ok($seconds, '<', 10, sprintf('without hanging (%.2f s)', $seconds));

set_conf('stripebackup.archive_destinations', 's3://bk1/h');
($stderr, $seconds) = timed_psql("SELECT count(*) FROM stripe_verify($second)");
like($stderr, qr{ERROR:  .*listing of s3://bk1/h/wal/$sysid/ gives continuation "loop" a second time},
	'stripe_verify, whose WAL archive\'s listing loops, fails naming the prefix');
cmp_ok($seconds, '<', 10, sprintf('at once (%.2f s)', $seconds));
($stderr, $seconds) = timed_psql("SELECT count(*) FROM stripe_restore_plan($second, target_time => now())");
like($stderr, qr{ERROR:  .*listing of s3://bk1/h/wal/$sysid/ gives continuation "loop" a second time},
	'stripe_restore_plan to a target, the same');
my $pages = grep { $_->{id} eq 'loop' } $proxy->log_entries;
cmp_ok($pages, '<=', 10, "a handful of pages asked for in all ($pages)");

# ---------- a 200 MB listing ----------

$proxy->set_rules([ { id => 'big', method => 'GET', query => 'list-type=2', action => { list_bytes => 200_000_000 } } ]);
my $session = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $session->query_safe('SELECT pg_backend_pid()');
sub peak_kb
{
	my ($p) = @_;
	my ($kb) = PostgreSQL::Test::Utils::slurp_file("/proc/$p/status") =~ /^VmHWM:\s+(\d+) kB/m;
	return $kb;
}
my $peak_before = peak_kb($pid);
$session->query("SELECT count(*) FROM stripe_verify($second)");
my $peak_after = peak_kb($pid);
like($session->{stderr},
	qr/the server's answer \(200000000 bytes\) is larger than the 8388608 bytes that a listing page may be: refused/,
	'a 200 MB listing is refused with its size and the limit');
cmp_ok($peak_after - $peak_before, '<', 64 * 1024,
	sprintf('the backend\'s peak memory grew by %.1f MB (from %.1f MB)', ($peak_after - $peak_before) / 1024,
		$peak_before / 1024));
set_conf('stripebackup.archive_destinations', '');

# ---------- replies that never come ----------

# A query that waits in the session for a reply that never comes; its interrupter; how
# long after the interrupt the session said PATTERN.
sub interrupted_after
{
	my ($sql, $interrupt, $pattern) = @_;
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	my $p = $s->query_safe('SELECT pg_backend_pid()');
	$proxy->clear_log;
	$s->{stdin} .= "$sql;\n";
	$s->{run}->pump_nb;
	# the request is there, unanswered
	for (1 .. 500)
	{
		last if grep { $_->{id} eq 'silent' } $proxy->log_entries;
		Time::HiRes::sleep(0.01);
	}
	Time::HiRes::sleep(0.3);
	my $t0 = Time::HiRes::time();
	$node->safe_psql('postgres', $interrupt =~ s/PID/$p/r) if $interrupt;
	while ($s->{stderr} !~ $pattern && Time::HiRes::time() - $t0 < 30)
	{
		$s->{run}->pump_nb;
		Time::HiRes::sleep(0.002);
	}
	my $elapsed = Time::HiRes::time() - $t0;
	my $said = $s->{stderr};
	eval { $s->quit };
	return ($elapsed, $said);
}

$proxy->set_rules([ { id => 'silent', action => { silence => 1 } } ]);
my ($cancel_s, $said) = interrupted_after("SELECT count(*) FROM stripe_verify('$location')",
	'SELECT pg_cancel_backend(PID)', qr/ERROR:  canceling statement due to user request/);
like($said, qr/canceling statement due to user request/, 'pg_cancel_backend ends a session waiting for a reply that never comes');
cmp_ok($cancel_s, '<', 1, sprintf('within a second (%.3f s)', $cancel_s));
my ($terminate_s);
($terminate_s, $said) = interrupted_after("SELECT * FROM stripe_restore_plan('$location')",
	'SELECT pg_terminate_backend(PID)', qr/FATAL:  terminating connection due to administrator command/);
like($said, qr/terminating connection due to administrator command/, 'pg_terminate_backend too');
cmp_ok($terminate_s, '<', 1, sprintf('within a second (%.3f s)', $terminate_s));
my ($timeout_s);
($timeout_s, $said) = interrupted_after("SET statement_timeout = '1s'; SELECT count(*) FROM stripe_verify('$location')",
	undef, qr/ERROR:  canceling statement due to statement timeout/);
like($said, qr/canceling statement due to statement timeout/, 'statement_timeout too');
diag(sprintf('cancel %.3f s, terminate %.3f s after the interrupt; statement timeout of 1 s reached', $cancel_s,
		$terminate_s));

# A backup's worker whose uploads are never answered: stripe_cancel.
$proxy->set_rules([ { id => 'silent', method => 'PUT', action => { silence => 1 } } ]);
$proxy->clear_log;
my $stuck = $node->safe_psql('postgres', "SELECT stripe_backup(ARRAY['s3://bk1/h'], compression => 'none', wait => false)");
for (1 .. 1000)
{
	last if grep { $_->{id} eq 'silent' } $proxy->log_entries;
	Time::HiRes::sleep(0.01);
}
Time::HiRes::sleep(0.3);
my $t0 = Time::HiRes::time();
$node->safe_psql('postgres', "SELECT stripe_cancel($stuck)");
$node->poll_query_until('postgres', "SELECT status <> 'running' FROM stripe_backups WHERE id = $stuck")
  or die 'the backup does not stop';
my $worker_s = Time::HiRes::time() - $t0;
is($node->safe_psql('postgres', "SELECT status FROM stripe_backups WHERE id = $stuck"), 'cancelled',
	'stripe_cancel stops a backup whose uploads are never answered');
cmp_ok($worker_s, '<', 3, sprintf('its worker ends %.3f s after the cancel', $worker_s));
ok((grep { $_->{id} eq 'silent' && $_->{url} =~ /partNumber=/ } $proxy->log_entries),
	'what waited was a part of a multipart upload');
my @uploads = $s3->list_multipart_uploads('bk1');
is(scalar(@uploads), 0, 'its upload aborted (the abort is no PUT: it goes through)');
$proxy->set_rules([]);

# ---------- an HTTP error on the manifest ----------

# Refused to its GETs (its HEAD answered), then to every request (a HEAD's 403 has no body).
for my $which ([ 'GET', { method => 'GET' } ], [ 'every request', {} ])
{
	my ($what, $filter) = @$which;
	$proxy->set_rules([ { id => 'deny', %$filter, path => 'manifest\.json$', action => { status => 403 } } ]);
	for my $call ("stripe_verify('$location')", "stripe_verify($second)", "stripe_restore_plan($second)")
	{
		($stderr) = timed_psql("SELECT count(*) FROM $call");
		like($stderr, qr{ERROR:  S3 GET s3://bk1/h/$name/manifest\.json: HTTP 403 AccessDenied: Injected by fault-proxy},
			"$call, the manifest refused to $what: the 403, its S3 code and the object");
		unlike($stderr, qr/not valid JSON|holds its manifest|encrypted/, 'not a manifest damaged, missing or encrypted');
	}
}
$proxy->set_rules([]);

# ---------- the allowed buckets ----------

set_conf('stripebackup.s3_allowed_buckets', 'bk1/h');
$proxy->clear_log;
$proxy->set_rules([ { id => 'seen', path => '^/bk2', action => { delay_ms => 1 } } ]);
($stderr) = timed_psql("SELECT stripe_backup(ARRAY['s3://bk2/x'])");
like($stderr, qr/ERROR:  bucket "bk2" is not allowed by stripebackup\.s3_allowed_buckets \("bk1\/h"\)/,
	'a backup to a bucket the list does not hold is refused, naming the bucket and the setting');
($stderr) = timed_psql("SELECT count(*) FROM stripe_verify('s3://bk1/other/$name')");
like($stderr, qr{ERROR:  s3://bk1/other/$name/ is outside the prefixes of bucket "bk1"}, 'a location outside its prefix too');
is(scalar(grep { $_->{id} eq 'seen' } $proxy->log_entries), 0, 'no request reached bucket bk2');
($stderr) = timed_psql("SELECT stripe_backup(ARRAY['s3://bk1/h'])");
unlike($stderr, qr/ERROR|NOTICE/, 'a backup to the prefix the list holds: no error, no notice');
{
	local $ENV{AWS_ENDPOINT_URL} = $proxy->endpoint;
	local $ENV{STRIPEBACKUP_S3_ALLOWED_BUCKETS} = 'bk2';
	my ($rc, $o, $e) = run_stripebackup('verify', $location);
	isnt($rc, 0, 'the command with STRIPEBACKUP_S3_ALLOWED_BUCKETS refuses a bucket it does not hold');
	like($e, qr/bucket "bk1" is not allowed/, 'saying so') or diag($e);
}
set_conf('stripebackup.s3_allowed_buckets', '');

$proxy->stop;
$s3->stop;
done_testing();
