# test/s3/radosgw.sh through test/perl/SbS3.pm: Ceph's gateway starts on
# 127.0.0.1 with its buckets and its user, checks signatures as S3 does
# (a wrong secret, an unknown key, no signature, a wrong body hash are
# refused, each with its S3 error), takes a test's secret as a key of its
# user, lists multipart uploads with their parts by the API, enforces S3's
# 5 MiB minimum part, and stops leaving no daemon.
#
#	prove -I test/perl test/s3/selftest_radosgw.pl    (radosgw, ceph-mon, ceph-osd installed)
use strict;
use warnings;

use File::Temp ();
use IPC::Run ();
use Test::More;

use SbS3;

my $s3 = SbS3::start(buckets => [ 'bk1', 'bk2' ], server => 'radosgw');
like($s3->endpoint, qr{^http://127\.0\.0\.1:\d+$}, 'the gateway gives its endpoint');
ok($s3->verifies_signatures, 'and is known to check signatures');
my $dir = $s3->dir;

# The pids radosgw.sh keeps, and whether each runs with our configuration.
sub daemons
{
	my @running;
	for my $d (qw(mon osd rgw))
	{
		open(my $fh, '<', "$dir/$d.daemon-pid") or next;
		my $pid = <$fh>;
		chomp $pid;
		open(my $cf, '<', "/proc/$pid/cmdline") or next;
		my $cmdline = do { local $/; <$cf> } // '';
		push @running, $d if $cmdline =~ /\Q$dir\E\/ceph\.conf/;
	}
	return @running;
}
is(join(',', daemons()), 'mon,osd,rgw', 'monitor, OSD and gateway run');

$s3->put_object('bk1', 'a/b', 'hello');
is($s3->get_object('bk1', 'a/b'), 'hello', 'an object comes back');
is(join(',', $s3->list_objects('bk1')), 'a/b', 'and is listed');
is(join(',', $s3->list_objects('bk2')), '', 'the other bucket is empty');

# curl signing as someone else.
sub as
{
	my ($user, @args) = @_;
	my @cmd = ('curl', '-sS', '-o', '-', '-w', '\n%{http_code}', @args, $s3->endpoint . '/bk1/a/b');
	splice(@cmd, 2, 0, '--aws-sigv4', 'aws:amz:us-east-1:s3', '--user', $user) if defined $user;
	my ($out, $err) = ('', '');
	IPC::Run::run(\@cmd, '<', \undef, '>', \$out, '2>', \$err);
	return $out;
}

like(as($s3->access_key . ':wrong-secret', '-H', 'x-amz-content-sha256: UNSIGNED-PAYLOAD'),
	qr{<Code>SignatureDoesNotMatch</Code>.*\n403$}s, 'a wrong secret: 403 SignatureDoesNotMatch');
like(as('NOSUCHKEYID:' . $s3->secret_key, '-H', 'x-amz-content-sha256: UNSIGNED-PAYLOAD'),
	qr{<Code>InvalidAccessKeyId</Code>.*\n403$}s, 'an unknown key id: 403 InvalidAccessKeyId');
like(as(undef), qr{<Code>AccessDenied</Code>.*\n403$}s, 'no signature: 403 AccessDenied');
like(as($s3->access_key . ':' . $s3->secret_key, '-X', 'PUT', '--data-binary', 'body',
		'-H', 'x-amz-content-sha256: ' . ('0' x 64)),
	qr{<Code>XAmzContentSHA256Mismatch</Code>.*\n400$}s, 'a wrong body hash: 400 XAmzContentSHA256Mismatch');

my $secret = 'sb-selftest-secret-77';
$s3->accept_secret($secret);
like(as($s3->key_id_for($secret) . ":$secret", '-H', 'x-amz-content-sha256: UNSIGNED-PAYLOAD'),
	qr{^hello\n200$}, "a test's secret, accepted, reads under its key id");
my $tmp = File::Temp->newdir;
my $file = $s3->use_credentials("$tmp", 'sb-selftest-other-secret');
like(SbS3::_slurp($file), qr/aws_access_key_id = SBT[0-9A-F]{17}\naws_secret_access_key = sb-selftest-other-secret\n/,
	'use_credentials writes a key id the gateway knows for the secret');

# Multipart uploads, by the API.
my ($st, $body) = $s3->request('POST', '/bk1/mp/x?uploads=');
my ($up) = $body =~ m{<UploadId>(.*?)</UploadId>};
ok(defined $up, 'an upload begins') or diag("$st $body");
my $small = 'p' x 1000;
($st) = $s3->request('PUT', "/bk1/mp/x?partNumber=1&uploadId=" . SbS3::uri_escape($up), body => $small);
($st) = $s3->request('PUT', "/bk1/mp/x?partNumber=2&uploadId=" . SbS3::uri_escape($up), body => $small) if $st == 200;
is($st, 200, 'two parts sent');
is_deeply([ $s3->list_multipart_uploads('bk1') ], [ { key => 'mp/x', upload_id => $up, parts => [ 1, 2 ] } ],
	'list_multipart_uploads sees it and its parts');
my ($p1) = $s3->request('GET', '/bk1/mp/x?uploadId=' . SbS3::uri_escape($up));
($st, $body) = $s3->request('POST', '/bk1/mp/x?uploadId=' . SbS3::uri_escape($up),
	body => '<CompleteMultipartUpload>'
	  . join('', map { "<Part><PartNumber>$_</PartNumber><ETag>\"" . Digest::MD5::md5_hex($small) . "\"</ETag></Part>" } 1, 2)
	  . '</CompleteMultipartUpload>');
like("$st $body", qr{^400 .*EntityTooSmall}s, 'a first part under 5 MiB: 400 EntityTooSmall, as S3');
($st) = $s3->request('DELETE', '/bk1/mp/x?uploadId=' . SbS3::uri_escape($up));
is($st, 204, 'aborted');
is_deeply([ $s3->list_multipart_uploads('bk1') ], [], 'and no longer listed');

$s3->stop;
is(join(',', daemons()), '', 'stop leaves no daemon running');
ok(!-e "$dir/port", 'nor its port file');
done_testing();
