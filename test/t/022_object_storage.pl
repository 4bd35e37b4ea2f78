# Object-storage destinations (s3://bucket/prefix) beside local folders,
# against a real S3-protocol server (s3rver, test/s3): a backup under pgbench
# load to two local folders and two buckets, restored from SQL and with the
# command (from a bucket), checked by pg_verifybackup, started, pgbench's
# invariant holding; verify and plan read the buckets; the same encrypted;
# a bucket that does not exist, an unreachable endpoint and missing
# credentials fail with clear errors leaving nothing behind; faults injected
# between the server and the bucket (5xx, 429, dropped connections, a wrong
# ETag) are retried, or fail the backup cleanly with no multipart upload
# left; buckets of two servers in one backup (stripebackup.s3_bucket_endpoints);
# the secret key is in no log or history row.
use strict;
use warnings;

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SbS3;
use StripeBackupTest;
use Test::More;

my $s3 = SbS3::start(buckets => [ 'bk1', 'bk2' ]);
diag("S3 server: " . $s3->kind);
my $secret = 'sb-test-secret-9f8e7d6c';    # s3rver checks no signature; radosgw is given it
my $conf_dir = PostgreSQL::Test::Utils::tempdir();
# The command reads the same server and keys from the environment.
my $credentials = $s3->use_credentials($conf_dir, $secret);

my $node = backup_node('primary');
sub set_s3
{
	my ($endpoint, $file) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.s3_endpoint = '$endpoint'");
	$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.s3_credentials_file = '$file'");
	$node->reload;
	$node->poll_query_until('postgres', "SELECT current_setting('stripebackup.s3_endpoint') = '$endpoint'")
	  or die 'the setting does not take';
}
set_s3($s3->endpoint, $credentials);

# The settings hold across a restart (ALTER SYSTEM: postgresql.auto.conf, read before the
# library defines them).
$node->restart;
unlike(PostgreSQL::Test::Utils::slurp_file($node->logfile), qr/invalid configuration parameter name "stripebackup\.s3/,
	'the server keeps the S3 settings at its start');

my @local = make_destinations(2);
my @remote = ('s3://bk1/pg/main', 's3://bk2/pg/main');
my $arr = sql_array(@local, @remote);
$node->command_ok([ 'pgbench', '-i', '-s', '3', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');

my $pgbench = IPC::Run::start(
	[ 'pgbench', '-c', '2', '-T', '600', '-n', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'>', \my $pgbench_out, '2>', \my $pgbench_err);
$node->poll_query_until('postgres', 'SELECT count(*) > 100 FROM pgbench_history') or die 'pgbench does not write';
my $id = $node->safe_psql('postgres', "SELECT stripe_backup($arr, compression => 'none')");
$pgbench->signal('TERM');
$pgbench->finish;

my ($name, $status) = split /\|/,
  $node->safe_psql('postgres', "SELECT name, status FROM stripe_backups WHERE id = $id");
is($status, 'completed', 'a backup to two folders and two buckets completes');
is(join(',', $s3->list_objects('bk1', "pg/main/$name/")),
	"pg/main/$name/manifest.json,pg/main/$name/stripe-3.sbs", 'bucket 1 holds its stripe and the manifest');
is(join(',', $s3->list_objects('bk2', "pg/main/$name/")),
	"pg/main/$name/manifest.json,pg/main/$name/stripe-4.sbs", 'bucket 2 too');
my %sizes = map { $_->{key} => $_->{size} } $s3->list_object_details('bk1');
cmp_ok($sizes{"pg/main/$name/stripe-3.sbs"}, '>', 8 * 1024 * 1024,
	'a stripe larger than one part (a multipart upload)');
my @uploads = ($s3->list_multipart_uploads('bk1'), $s3->list_multipart_uploads('bk2'));
is(scalar(@uploads), 0, 'no multipart upload is left');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify($id)"), '0',
	'stripe_verify reads every stripe, the buckets\' too');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_restore_plan($id) WHERE stripe IS NOT NULL AND present"),
	'4', 'the plan finds every stripe, the buckets\' too');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify('s3://bk2/pg/main/$name')"), '0',
	'stripe_verify takes a bucket\'s location');

# Restored from SQL, and with the command from a bucket.
my $copy = PostgreSQL::Test::Cluster->new('copy');
$node->safe_psql('postgres', "SELECT stripe_restore($id, '" . $copy->data_dir . "')");
command_ok([ 'pg_verifybackup', $copy->data_dir ], 'pg_verifybackup accepts the restore from SQL');
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port . "\narchive_mode = off");
$copy->start;
is(pgbench_invariant($copy), 't', 'it starts and pgbench\'s invariant holds');
$copy->stop;
my $restored = restore_node('cmd', "s3://bk2/pg/main/$name", '--no-progress');
$restored->append_conf('postgresql.conf', 'archive_mode = off');
$restored->start;
is(pgbench_invariant($restored), 't', 'the command\'s restore from a bucket starts, the invariant holds');
$restored->stop;
my ($rc, $out, $err) = run_stripebackup('verify', "s3://bk1/pg/main/$name");
is($rc, 0, 'the command verifies it from a bucket') or diag($err);
($rc, $out, $err) = run_stripebackup('list', @remote, '--output=json');
is($rc, 0, 'list of two buckets\' prefixes: exit 0') or diag($err);
my @listed = grep { $_->{name} eq $name } @{ decode_json($out)->{backups} };
is(scalar @listed, 1, 'the backup over two folders and two buckets is one row');
is($listed[0]{status}, 'complete', 'complete, its stripes found in the folders and the buckets');
is_deeply([ sort @{ $listed[0]{folders} } ], [ map { "$_/$name" } @remote ], 'its folders in the buckets given');
($rc, $out, $err) = run_stripebackup('create', '--source', $restored->data_dir, '--dest', $local[1],
	'--dest', 's3://bk2/cold', '--name', 'cold', '--no-progress');
is($rc, 0, 'the command backs up a stopped cluster to a folder and a bucket') or diag($err);
($rc, $out, $err) = run_stripebackup('verify', 's3://bk2/cold/cold');
is($rc, 0, 'and verifies it from the bucket') or diag($err);

# Failures with clear errors, nothing left behind.
sub backup_fails
{
	my ($dests, $pattern, $what, $options) = @_;
	my $rows = $node->safe_psql('postgres', "SELECT count(*) FROM stripe_backups WHERE status = 'completed'");
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		'SELECT stripe_backup(' . sql_array(@$dests) . ($options ? ", $options" : '') . ')');
	like($stderr, $pattern, $what) or diag($stderr);
	is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_backups WHERE status = 'completed'"), $rows,
		"$what: no backup completed");
	return $stderr;
}
backup_fails([ $local[0], 's3://no-such-bucket/pg' ], qr/NoSuchBucket/, 'a bucket that does not exist');
is(scalar(() = glob("$local[0]/*")), 1, 'the local destination keeps only the first backup');
my $no_bucket_id = $node->safe_psql('postgres',
	"SELECT id FROM stripe_backups WHERE status = 'failed' AND 's3://no-such-bucket/pg' = ANY (destinations)");
like($no_bucket_id, qr/^\d+$/, 'the failed backup to a missing bucket is in the history');
# A missing bucket is said as one, never as a missing backup or object.
($rc, $out, $err) = run_stripebackup('show', 's3://no-such-bucket/pg/x');
like($err, qr/NoSuchBucket: bucket "no-such-bucket" does not exist/, 'show names the missing bucket')
  or diag($err);
unlike($err, qr/no manifest\.json|not a stripebackup backup folder/, 'and does not call it a missing backup');
is($rc, 1, 'exit status 1 (a failure), not 3 (a damaged or incomplete backup)');
($rc, $out, $err) = run_stripebackup('verify', 's3://no-such-bucket/pg/x');
like($err, qr/bucket "no-such-bucket" does not exist/, 'so does verify');
($rc, $out, $err) = run_stripebackup('show', "s3://bk1/pg/main/no-such-backup");
like($err, qr/"s3:\/\/bk1\/pg\/main\/no-such-backup" does not exist/,
	'a backup that is not in a bucket that is: nothing there');
is($rc, 1, 'exit status 1 (not found), not 3 (damaged)');
($rc, $out, $err) = run_stripebackup('show', "s3://bk1/pg/main");
is($rc, 1, 'show of a destination in a bucket: exit status 1');
like($err, qr/"s3:\/\/bk1\/pg\/main" is a destination, not a backup's folder/, 'and says it is one');
my ($ret, $sql_out, $sql_err) = $node->psql('postgres', "SELECT count(*) FROM stripe_verify('s3://no-such-bucket/pg/x')");
like($sql_err, qr/bucket "no-such-bucket" does not exist/, 'stripe_verify names the missing bucket too');

# Wrong credentials (a server that checks signatures refuses them; s3rver
# takes any secret): the S3 error is named, through the command and SQL.
SKIP:
{
	skip 's3rver checks no signature (SB_TEST_S3_SERVER=radosgw does)', 8 unless $s3->verifies_signatures;
	my $wrong = SbS3::write_credentials("$conf_dir/wrong-credentials", $s3->key_id_for($secret),
		'not-the-secret-4b3a');
	{
		local $ENV{AWS_SHARED_CREDENTIALS_FILE} = $wrong;
		($rc, $out, $err) = run_stripebackup('show', "s3://bk1/pg/main/$name");
		like($err, qr/HTTP 403 SignatureDoesNotMatch/, 'show with a wrong secret names SignatureDoesNotMatch')
		  or diag($err);
		unlike($err, qr/not-the-secret/, 'without the secret');
		($rc, $out, $err) = run_stripebackup('verify', "s3://bk1/pg/main/$name");
		like($err, qr/SignatureDoesNotMatch/, 'so does verify');
	}
	set_s3($s3->endpoint, $wrong);
	my $stderr = backup_fails([ $local[0], $remote[0] ], qr/HTTP 403 SignatureDoesNotMatch/,
		'stripe_backup with a wrong secret names SignatureDoesNotMatch');
	unlike($stderr, qr/not-the-secret/, 'without the secret');
	# The local stripes are read; each bucket's is a problem row naming the refusal.
	($ret, $sql_out, $sql_err) = $node->psql('postgres',
		"SELECT string_agg(stripe || ': ' || problem, E'\\n' ORDER BY stripe) FROM stripe_verify($id)");
	like($sql_out . $sql_err, qr/^3: .*SignatureDoesNotMatch/m, 'stripe_verify with a wrong secret names it too')
	  or diag("$sql_out $sql_err");
	set_s3($s3->endpoint, $credentials);
}
set_s3('http://127.0.0.1:9', $credentials);
backup_fails([ $remote[0] ], qr/127\.0\.0\.1:9|Could not connect|Couldn't connect/i, 'an unreachable endpoint');
set_s3($s3->endpoint, "$conf_dir/missing");
backup_fails([ $remote[0] ], qr/S3 credentials file "\Q$conf_dir\E\/missing"/, 'a credentials file that is not there');
set_s3($s3->endpoint, $credentials);
is(join(',', map { s{/.*}{}r } grep { !m{^pg/main/\Q$name\E/} } $s3->list_objects('bk1', 'pg/')), '',
	'the failed backups left no object');

# Faults between the server and a bucket: a proxy in front of it.
my $proxy = SbS3::start_proxy(upstream => $s3->endpoint);
set_s3($proxy->endpoint, $credentials);
$proxy->set_rules([
	{ id => 'part503', method => 'PUT', query => 'partNumber', count => 2, action => { status => 503 } },
	{ id => 'slowdown', method => 'PUT', query => 'partNumber', count => 1, action => { status => 429 } },
	{ id => 'drop', method => 'PUT', query => 'partNumber', count => 1, action => { drop => 1 } },
	{ id => 'head500', method => 'GET', count => 1, action => { status => 500 } },
]);
my $faulted = $node->safe_psql('postgres',
	'SELECT stripe_backup(' . sql_array($local[0], $remote[0]) . ", compression => 'none')");
is($node->safe_psql('postgres', "SELECT status FROM stripe_backups WHERE id = $faulted"), 'completed',
	'503s, a 429 and a dropped connection during the upload are retried: the backup completes');
my %applied = map { $_->{id} => 1 } $proxy->log_entries;
is(join(',', sort keys %applied), 'drop,head500,part503,slowdown', 'every fault was injected');
$proxy->set_rules([ { id => 'get503', method => 'GET', count => 3, action => { status => 503 } } ]);
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify($faulted)"), '0',
	'a verify through 503s on its reads is retried and finds nothing wrong');
$proxy->set_rules([ { id => 'etag', method => 'PUT', query => 'partNumber', action => { etag => 'wrong' } } ]);
backup_fails([ $local[0], $remote[0] ], qr/ETag .* is not the MD5 of what was sent/,
	'a part whose ETag is not what was sent fails the backup after its tries', "compression => 'none'");
@uploads = $s3->list_multipart_uploads('bk1');
is(scalar(@uploads), 0, 'and its multipart upload was aborted');
# A slow bucket (the proxy lets 5 MB/s a connection through to it) beside a fast one.
$proxy->set_rules([ { id => 'slow', path => '^/bk1/', action => { rate_bps => 5_000_000 } } ]);
my $balanced = $node->safe_psql('postgres',
	'SELECT stripe_backup(' . sql_array(@remote) . ", compression => 'none')");
my ($slow_bytes, $fast_bytes, $slow_s, $fast_s) = split /\|/, $node->safe_psql('postgres',
	"SELECT string_agg(stored_bytes::text, '|' ORDER BY stripe) || '|' || string_agg(seconds::text, '|' ORDER BY stripe)
	 FROM stripe_backup_stripes WHERE backup_id = $balanced");
diag(sprintf('slow bucket %.1f MB in %.1f s, fast bucket %.1f MB in %.1f s',
	$slow_bytes / 1e6, $slow_s, $fast_bytes / 1e6, $fast_s));
# The rate is per connection and two parts go at once (10 MB/s in all): the
# slow bucket holds little more than the parts its writer had in hand (two
# or three of 8 MiB), the fast one the rest even when a loaded machine slows
# it to 30 MB/s; an even split would be all of it.  (At 12 MB/s a
# connection, a loaded moment gave the slow one 33.6 MB to the fast one's
# 54.8.)
cmp_ok($slow_bytes, '<', $fast_bytes * 0.6, 'adaptive balance gives the slow bucket much less than the fast one\'s share');
# When the two stripes end is a timing, which a test on a loaded machine
# cannot bound (the stripes' seconds count each writer's busy time, not its
# end): the balance of mismatched devices is measured by make bench-devices,
# beside the best possible; here the shares above prove the mechanism.
$proxy->set_rules([]);
set_s3($s3->endpoint, $credentials);
$proxy->stop;

my $calibrated = $node->safe_psql('postgres',
	"SELECT string_agg(test || ':' || (mb_per_s > 0)::text, ',' ORDER BY test) FROM stripe_calibrate(ARRAY['s3://bk2/cal'], size_mb => 32)");
is($calibrated, 'sequential read:true,sequential write:true', 'stripe_calibrate measures a bucket');
is(join(',', $s3->list_objects('bk2', 'cal/')), '', 'leaving no test object');

# A bucket of another service (a second server) beside one of the first: stripebackup.s3_bucket_endpoints.
my $s3b = SbS3::start(buckets => ['bk9']);
$s3b->accept_secret($secret);    # the same credentials file is good at both
my ($bad_ret, $bad_out, $bad_err) = $node->psql('postgres', "ALTER SYSTEM SET stripebackup.s3_bucket_endpoints = 'bk9'");
like($bad_err, qr/bucket endpoint "bk9" is not bucket=endpoint/, 'a bucket endpoint without its endpoint is refused');
$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.s3_bucket_endpoints = 'bk9=" . $s3b->endpoint . "'");
$node->reload;
$node->poll_query_until('postgres', "SELECT current_setting('stripebackup.s3_bucket_endpoints') <> ''")
  or die 'the setting does not take';
my $two = $node->safe_psql('postgres', "SELECT stripe_backup(ARRAY['s3://bk1/two', 's3://bk9/two'])");
my $two_name = $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $two AND status = 'completed'");
isnt($two_name, '', 'a backup to buckets of two servers completes');
is(join(',', $s3b->list_objects('bk9', "two/$two_name/")), "two/$two_name/manifest.json,two/$two_name/stripe-2.sbs",
	'the second server holds its stripe');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify($two)"), '0', 'stripe_verify reads both servers');
{
	local $ENV{STRIPEBACKUP_S3_BUCKET_ENDPOINTS} = 'bk9=' . $s3b->endpoint;
	($rc, $out, $err) = run_stripebackup('verify', "s3://bk9/two/$two_name");
	is($rc, 0, 'the command reaches the second server by STRIPEBACKUP_S3_BUCKET_ENDPOINTS') or diag($err);
}
($rc, $out, $err) = run_stripebackup('verify', "s3://bk9/two/$two_name");
isnt($rc, 0, 'and without it looks for the bucket at the first server, which has none');

# Encrypted, to a folder and a bucket.
my $key = "$conf_dir/backup.key";
PostgreSQL::Test::Utils::append_to_file($key, 'a secret of more than thirty-two bytes for the tests');
chmod(0600, $key) or die "chmod: $!";
$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.encryption_key_file = '$key'");
$node->reload;
my $enc = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array($local[1], $remote[1]) . ')');
my $enc_name = $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $enc");
my ($st, $manifest) = $s3->request('GET', "/bk2/pg/main/$enc_name/manifest.json");
like($manifest, qr/^\{"format":"stripebackup-encrypted"/, 'the bucket\'s manifest is an envelope');
($rc, $out, $err) = run_stripebackup('verify', "s3://bk2/pg/main/$enc_name");
like($out, qr/is encrypted; without its key: \d+ chunks in 2 stripes are intact/,
	'the command checks it from the bucket without the key, saying what needs the key') or diag($err);
my $enc_copy = restore_node('enc', "s3://bk2/pg/main/$enc_name", '--encryption-key-file', $key, '--no-progress');
$enc_copy->append_conf('postgresql.conf', 'archive_mode = off');
$enc_copy->start;
is(pgbench_invariant($enc_copy), 't', 'with it, the encrypted backup restores from the bucket and starts');
$enc_copy->stop;

# A kept backup's label in a bucket: put beside the manifest, shown by the
# command's list; given back by the history alone (the label left there),
# retention proves the label the backup's and removes it with the rest.
$node->safe_psql('postgres', "SELECT stripe_keep($id, note => 'quarter end')");
my ($label_st, $label) = $s3->request('GET', "/bk1/pg/main/$name/keep.json");
is($label_st, 200, 'stripe_keep labels the backup\'s folder in the bucket');
like($label, qr/"kept":\s*true.*"note":\s*"quarter end"/s, 'kept, with its note');
($rc, $out, $err) = run_stripebackup('list', 's3://bk1/pg/main', '--output=json');
my ($listed) = grep { $_->{name} eq $name } @{ decode_json($out)->{backups} };
ok($listed && $listed->{kept} && $listed->{note} eq 'quarter end', 'the command lists it kept from the bucket')
  or diag($out, $err);
$node->safe_psql('postgres', "UPDATE stripe_backup_history SET keep = false WHERE id = $id");

# Retention removes a backup's objects, and only when every one is the backup's
# (the first: its 8 files and the label in each of its 4 folders).
my $faulted_name = $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $faulted");
my ($put) = $s3->request('PUT', "/bk1/pg/main/$faulted_name/notes.txt", body => 'a user\'s object');
is($put, 200, 'a user\'s object put beside a backup\'s');
my ($expire_ret, $expired, $expire_err) = $node->psql('postgres',
	"SELECT backup_id, files_removed, removed FROM stripe_expire(keep_last => 1) WHERE backup_id IN ($id, $faulted, $no_bucket_id) ORDER BY 1");
is($expired, join("\n", map { $_->[1] } sort { $a->[0] <=> $b->[0] } ([ $id, "$id|12|t" ],
			[ $faulted, "$faulted|0|f" ], [ $no_bucket_id, "$no_bucket_id|0|t" ])),
	'stripe_expire removes the backup whose objects are all its own, keeps the other, forgets the one whose bucket is missing');
unlike($expire_err, qr/no-such-bucket/, 'that one without a warning') or diag($expire_err);
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_backups WHERE id = $no_bucket_id"), '0',
	'its row is gone');
is(join(',', $s3->list_objects('bk1', "pg/main/$name/"), $s3->list_objects('bk2', "pg/main/$name/")), '',
	'its objects are gone from both buckets');
ok(!-e "$local[0]/$name", 'and its local folders');
is(join(',', $s3->list_objects('bk1', "pg/main/$faulted_name/")),
	"pg/main/$faulted_name/manifest.json,pg/main/$faulted_name/notes.txt,pg/main/$faulted_name/stripe-2.sbs",
	'the backup beside a user\'s object is kept whole');

unlike(PostgreSQL::Test::Utils::slurp_file($node->logfile), qr/aws_secret_access_key|\Q$secret\E/,
	'the secret key is not in the server log');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_backups b WHERE b::text LIKE '%$secret%'"), '0',
	'nor in the history');
$s3->stop;
done_testing();
