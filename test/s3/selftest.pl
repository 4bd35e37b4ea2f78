# The S3 test tools themselves: s3server.sh (through test/perl/SbS3.pm), the
# behaviour of s3rver with s3rver-patches.js that the client relies on, and
# every action of fault-proxy.js.
#
#	prove -I test/perl test/s3/selftest.pl      (from the repository, any user)
use strict;
use warnings;

use Digest::MD5 qw(md5_hex);
use JSON::PP ();
use Test::More;
use Time::HiRes ();

use SbS3;

my $s3 = SbS3::start(buckets => [ 'bk1', 'bk2' ], server => 's3rver');
like($s3->endpoint, qr{^http://127\.0\.0\.1:\d+$}, 'the server gives its endpoint');

# ---------- objects ----------

my @keys = ('p/a', 'p-a', 'p.a', 'p0', 'q/x/y', 'q/z', "sp ace+&", "\x{fc}/\x{e9}");
$s3->put_object('bk1', $_, "content of $_") for @keys;
is($s3->get_object('bk1', 'q/z'), 'content of q/z', 'an object comes back');
is($s3->get_object('bk1', 'nothing'), undef, 'a missing object is 404');
is_deeply([ $s3->list_objects('bk1') ],
	[ 'p-a', 'p.a', 'p/a', 'p0', 'q/x/y', 'q/z', 'sp ace+&', "\x{fc}/\x{e9}" ],
	"the keys in S3's order (by their UTF-8 bytes)");
is_deeply([ $s3->list_objects('bk1', 'q/') ], [ 'q/x/y', 'q/z' ], 'the keys under a prefix');
is_deeply([ $s3->list_objects('bk2') ], [], 'the other bucket is empty');

my ($status, $body) = $s3->request('GET', '/bk1?list-type=2&max-keys=2&delimiter=/');
is($status, 200, 'a truncated ListObjectsV2 answers');
ok($body =~ m{<KeyCount>2</KeyCount>} && $body =~ m{<IsTruncated>true</IsTruncated>}
	  && $body =~ m{<NextContinuationToken>[^<]+</NextContinuationToken>}, 'with a continuation token')
  or diag($body);
($status, $body) = $s3->request('GET', '/nobucket?list-type=2');
is($status, 404, 'listing a missing bucket is 404');
like($body, qr{<Code>NoSuchBucket</Code>}, 'NoSuchBucket');

# Ranges s3rver gets right (not bytes=-N, nor bytes=0-0: README.md)
($status, $body) = $s3->request('GET', '/bk1/q/z', headers => ['Range: bytes=3-6']);
is("$status $body", '206 tent', 'a range');

# ---------- multipart uploads ----------

sub initiate
{
	my ($key) = @_;
	my ($st, $b) = $s3->request('POST', "/bk1/$key?uploads");
	$b =~ m{<UploadId>(.*?)</UploadId>} or die "no upload id: $st $b";
	return $1;
}
my $part1 = 'a' x (5 * 1024 * 1024);
my $part2 = 'tail';
my $up = initiate('mp/done');
my ($st1, undef, $h1) = $s3->request('PUT', "/bk1/mp/done?partNumber=1&uploadId=$up", body => $part1);
my ($st2) = $s3->request('PUT', "/bk1/mp/done?partNumber=2&uploadId=$up", body => $part2);
is("$st1 $st2", '200 200', 'two parts uploaded');
my $aborted = initiate('mp/aborted');
$s3->request('PUT', "/bk1/mp/aborted?partNumber=1&uploadId=$aborted", body => 'x');

is_deeply([ $s3->list_multipart_uploads('bk1') ],
	[ { key => 'mp/aborted', upload_id => $aborted, parts => [1] },
	  { key => 'mp/done', upload_id => $up, parts => [ 1, 2 ] } ],
	'list_multipart_uploads sees both uploads and their parts');
($status, $body) = $s3->request('GET', '/bk1?uploads');
is($status, 200, 'ListMultipartUploads answers (s3rver-patches.js)');
is(scalar(() = $body =~ /<Upload>/g), 2, 'with both uploads');

($status) = $s3->request('DELETE', "/bk1/mp/aborted?uploadId=$aborted");
is($status, 204, 'AbortMultipartUpload (s3rver-patches.js)');
($status, $body) = $s3->request('PUT', "/bk1/mp/aborted?partNumber=2&uploadId=$aborted", body => 'x');
like("$status $body", qr{^404 .*NoSuchUpload}s, 'a part for an aborted upload is NoSuchUpload');

# A part's ETag is the quoted MD5 of the part; with s3rver-patches.js,
# CompleteMultipartUpload checks them.
my ($etag1) = $h1 =~ /^ETag: (\S+)\r?$/mi;
is($etag1, '"' . md5_hex($part1) . '"', "a part's ETag is its quoted MD5");
my $complete = sub {
	my (@parts) = @_;
	return '<CompleteMultipartUpload>'
	  . join('', map { "<Part><PartNumber>$_->[0]</PartNumber><ETag>\"$_->[1]\"</ETag></Part>" } @parts)
	  . '</CompleteMultipartUpload>';
};
($status, $body) = $s3->request('POST', "/bk1/mp/done?uploadId=$up",
	body => $complete->([ 1, md5_hex($part1) ], [ 2, md5_hex('wrong') ]));
like("$status $body", qr{^400 .*InvalidPart}s, 'a wrong part ETag is InvalidPart');
($status, $body) = $s3->request('POST', "/bk1/mp/done?uploadId=$up",
	body => $complete->([ 1, md5_hex($part1) ], [ 3, md5_hex($part2) ]));
like("$status $body", qr{^400 .*InvalidPart}s, 'a part never uploaded is InvalidPart (s3rver alone would exit)');
($status, $body) = $s3->request('POST', "/bk1/mp/done?uploadId=$up",
	body => $complete->([ 1, md5_hex($part1) ], [ 2, md5_hex($part2) ]));
is($status, 200, 'CompleteMultipartUpload');
like($body, qr{<ETag>&quot;${\ md5_hex($part1 . $part2)}&quot;</ETag>},
	"the object's ETag is the MD5 of the whole (not S3's MD5-of-MD5s-2)");
is(length($s3->get_object('bk1', 'mp/done')), length($part1) + 4, 'the object is whole');
is_deeply([ $s3->list_multipart_uploads('bk1') ], [], 'no upload is left');

# ---------- the fault proxy ----------

my $proxy = SbS3::start_proxy(upstream => $s3->endpoint);
like($proxy->endpoint, qr{^http://127\.0\.0\.1:\d+$}, 'the proxy gives its endpoint');
my $via = sub { my ($m, $p, %o) = @_; return $s3->request($m, $p, endpoint => $proxy->endpoint, %o) };

($status, $body) = $via->('PUT', '/bk2/obj', body => 'via the proxy');
is($status, 200, 'a PUT through the proxy');
($status, $body) = $via->('GET', '/bk2/obj');
is("$status $body", '200 via the proxy', 'a GET through the proxy');

$proxy->set_rules([ { id => 's503', method => 'GET', path => '^/bk2/', count => 2, action => { status => 503 } } ]);
my @got = map { ($via->('GET', '/bk2/obj'))[0] } 1 .. 3;
is("@got", '503 503 200', 'status 503, count 2: two fail, the third passes');
($status, $body) = $via->('GET', '/bk2/obj');
is($status, 200, 'and so do the next ones');
my @log = $proxy->log_entries;
is(scalar @log, 2, 'two faults logged');
is_deeply([ @{ $log[0] }{qw(id method url)} ], [ 's503', 'GET', '/bk2/obj' ], 'the log says which rule, which request');
is_deeply($log[0]{action}, { status => 503 }, 'and which action');

$proxy->set_rules([ { id => 's503', method => 'GET', count => 2, action => { status => 503 } } ]);
($status) = $via->('GET', '/bk2/obj');
is($status, 200, "a rule's count goes on across set_rules (same id)");

$proxy->set_rules([ { id => 'code', method => 'PUT', action => { status => 500 } } ]);
($status, $body) = $via->('PUT', '/bk2/x', body => 'x');
like("$status $body", qr{^500 .*<Code>InternalError</Code>}s, 'status 500: InternalError');

$proxy->set_rules([ { id => 'drop', query => 'partNumber', count => 1, action => { drop => JSON::PP::true } } ]);
($status) = $via->('GET', '/bk2/obj');
is($status, 200, 'a rule with a query filter leaves other requests alone');
($status, $body) = $via->('PUT', '/bk2/obj?partNumber=1&uploadId=none', body => 'x');
is($status, 0, 'drop: no answer');

my $big = join('', map { sprintf('%07d\n', $_) } 1 .. 20000);    # 160 kB
$s3->put_object('bk2', 'big', $big);
$proxy->set_rules([ { id => 'cut', path => '/big$', count => 1, action => { drop_after_bytes => 1000 } } ]);
($status, $body) = $via->('GET', '/bk2/big');
is($status, 0, 'drop_after_bytes: the answer breaks off');
($status, $body) = $via->('GET', '/bk2/big');
ok($status == 200 && $body eq $big, 'and the next GET is whole');

$proxy->set_rules([ { id => 'slow', method => 'HEAD', count => 1, action => { delay_ms => 1200 } } ]);
my $t0 = Time::HiRes::time();
($status) = $via->('HEAD', '/bk2/big');
my $took = Time::HiRes::time() - $t0;
ok($status == 200 && $took >= 1.2, sprintf('delay_ms 1200: answered in %.2f s', $took));

$proxy->set_rules([ { id => 'rate', path => '/big$', action => { rate_bps => 100_000 } } ]);
$t0 = Time::HiRes::time();
($status, $body) = $via->('GET', '/bk2/big');
$took = Time::HiRes::time() - $t0;
ok($status == 200 && $body eq $big && $took >= 1.4,
	sprintf('rate_bps 100 kB/s: 160 kB in %.2f s', $took));
$t0 = Time::HiRes::time();
($status) = $via->('PUT', '/bk2/big', body => $big);
$took = Time::HiRes::time() - $t0;
ok($status == 200 && $took >= 1.4, sprintf('and uploaded in %.2f s', $took));

$proxy->set_rules([ { id => 'etag', method => 'PUT', count => 1, action => { etag => 'wrong' } } ]);
my $md5 = '"' . md5_hex('via the proxy') . '"';
my ($h_wrong, $h_right);
($status, $body, $h_wrong) = $via->('PUT', '/bk2/obj', body => 'via the proxy');
($status, $body, $h_right) = $via->('PUT', '/bk2/obj', body => 'via the proxy');
my ($wrong) = $h_wrong =~ /^ETag: (\S+)\r?$/mi;
my ($right) = $h_right =~ /^ETag: (\S+)\r?$/mi;
ok($wrong =~ /^"[0-9a-f]{32}"$/ && $wrong ne $md5, "etag: a quoted ETag that is not the MD5 ($wrong)");
is($right, $md5, 'then (count 1) the right one');
is(scalar(grep { $_->{id} eq 'etag' } $proxy->log_entries), 1, 'the etag fault is logged once');

$proxy->set_rules([]);
$proxy->stop;
$s3->stop;
($status) = $s3->request('GET', '/');
is($status, 0, 'the server is stopped');

done_testing();
