# stripe_check() and object-storage destinations (issue 43): a bucket the
# last backup wrote to is reached with the server's settings (listed, a
# small object put and removed) and passes; wrong credentials (a server
# that checks signatures: SB_TEST_S3_SERVER=radosgw), an unreachable
# endpoint and a bucket stripebackup.s3_allowed_buckets no longer allows
# each fail the destination's check, named, without the secret.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SbS3;
use StripeBackupTest;
use Test::More;

my $s3 = SbS3::start(buckets => ['bk1']);
diag('S3 server: ' . $s3->kind);
my $secret = 'sb-check-secret-1a2b3c4d';
my $conf_dir = PostgreSQL::Test::Utils::tempdir();
my $credentials = $s3->use_credentials($conf_dir, $secret);

my $node = backup_node('primary');
sub set_conf
{
	my ($name, $value) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET $name = '$value'");
	$node->reload;
	$node->poll_query_until('postgres', "SELECT current_setting('$name') = '$value'") or die "$name does not take";
}
set_conf('stripebackup.s3_endpoint', $s3->endpoint);
set_conf('stripebackup.s3_credentials_file', $credentials);
set_conf('stripebackup.s3_timeout', '10s');

my @local = make_destinations(1);
my $bucket = 's3://bk1/pg/main';
$node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array($local[0], $bucket) . ')');

# The check of DEST: severity|detail.
sub check_of
{
	my ($dest) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT severity || '|' || detail FROM stripe_check() WHERE \"check\" = 'destination $dest'");
	note($out, $err);
	return $out;
}

like(check_of($bucket), qr/^ok\|reachable \(listed, \d+ entries\) and writable$/,
	'a bucket reached with the server\'s settings passes');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_check() WHERE \"check\" = 'device of $bucket'"), '0',
	'a bucket has no device to compare');
is(scalar(grep { /\.stripebackup-check/ } $s3->list_objects('bk1', 'pg/main/')), 0,
	'the check leaves no object behind');

SKIP:
{
	skip 's3rver checks no signature (SB_TEST_S3_SERVER=radosgw does)', 4 unless $s3->verifies_signatures;
	my $wrong = SbS3::write_credentials("$conf_dir/wrong", $s3->key_id_for($secret), 'not-the-secret-5e6f');
	set_conf('stripebackup.s3_credentials_file', $wrong);
	my $got = check_of($bucket);
	like($got, qr/^failure\|not reachable: .*SignatureDoesNotMatch/, 'a wrong secret fails, named');
	unlike($got, qr/not-the-secret/, 'without the secret');
	my $unknown = SbS3::write_credentials("$conf_dir/unknown", 'SBTNOSUCHKEY000000', $secret);
	set_conf('stripebackup.s3_credentials_file', $unknown);
	like(check_of($bucket), qr/^failure\|not reachable: .*InvalidAccessKeyId/, 'an unknown key fails, named');
	set_conf('stripebackup.s3_credentials_file', $credentials);
	like(check_of($bucket), qr/^ok\|/, 'the right key passes again');
}

set_conf('stripebackup.s3_endpoint', 'http://127.0.0.1:9');
like(check_of($bucket), qr/^failure\|not reachable: /, 'an unreachable endpoint fails');
set_conf('stripebackup.s3_endpoint', $s3->endpoint);

set_conf('stripebackup.s3_allowed_buckets', 'other');
like(check_of($bucket), qr/^failure\|bucket "bk1" is not allowed by stripebackup\.s3_allowed_buckets/,
	'a bucket no longer allowed fails without being reached');
set_conf('stripebackup.s3_allowed_buckets', '');
like(check_of($bucket), qr/^ok\|/, 'and passes once allowed');

$node->stop;
$s3->stop;
done_testing();
