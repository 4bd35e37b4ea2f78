# SbS3: a local S3 server and a fault-injecting proxy for the S3 tests
# (test/s3/README.md).
#
#	my $s3 = SbS3::start(buckets => ['bk1', 'bk2']);    # dir => ... optional
#	$s3->endpoint;                  # http://127.0.0.1:PORT
#	$s3->use_credentials($dir, $secret);     # a credentials file; AWS_* set for the command
#	$s3->list_objects('bk1', 'prefix/');      # keys, in S3's order
#	$s3->list_object_details('bk1');         # { key, size, etag }, ...
#	$s3->list_multipart_uploads('bk1');      # { key, upload_id, parts }, ...
#	my ($status, $body) = $s3->request('PUT', '/bk1/k', body => 'data');
#
#	my $proxy = SbS3::start_proxy(upstream => $s3->endpoint);
#	$proxy->set_rules([{ id => 'r1', method => 'PUT', count => 2, action => { status => 503 } }]);
#	$proxy->endpoint;               # give this one to the client under test
#	$proxy->log_entries;            # the faults applied, { time, id, method, url, action }, ...
#	$proxy->stop; $s3->stop;        # also done at exit for whatever still runs
#
# Or SbS3::from_env() for the server test/s3/with-s3.sh started.  The
# server is s3rver 3.7.1 with test/s3/s3rver-patches.js (test/s3/README.md
# says what they change; credentials S3RVER and any secret), or with
# SB_TEST_S3_SERVER=radosgw (or start(server => 'radosgw')) Ceph's gateway
# (test/s3/radosgw.sh), which checks every signature: use_credentials
# makes the test's secret one the server accepts, whichever it is.
package SbS3;

use strict;
use warnings;

use Carp;
use Digest::MD5 ();
use File::Basename ();
use File::Path ();
use File::Spec;
use File::Temp ();
use IPC::Run ();
use JSON::PP ();
use POSIX ();
use Time::HiRes ();

our $S3_DIR = File::Spec->rel2abs(File::Spec->catdir(File::Basename::dirname(__FILE__), '..', 's3'));
# What each server is started by, and whether it checks signatures.
my %SERVERS = (
	s3rver => { script => 's3server.sh', verifies => 0, log => 's3rver.log' },
	radosgw => { script => 'radosgw.sh', verifies => 1, log => 'client.rgw.log' },
);

# What runs, to stop at exit whatever a test left running (a test that dies).
my %running;

# A folder of our own: the test framework's (kept when a test fails) when
# it is loaded, else one removed at exit.
sub _tempdir
{
	return PostgreSQL::Test::Utils::tempdir() if defined &PostgreSQL::Test::Utils::tempdir;
	return File::Temp::tempdir('sb-s3-XXXXXX', TMPDIR => 1, CLEANUP => 1);
}

# ---------- the server ----------

# The server the tests use unless told: SB_TEST_S3_SERVER, else s3rver.
sub server_kind
{
	my $kind = $ENV{SB_TEST_S3_SERVER} // 's3rver';
	croak "SB_TEST_S3_SERVER=$kind is neither s3rver nor radosgw" unless $SERVERS{$kind};
	return $kind;
}

# Start a server on 127.0.0.1, in DIR (default: a new temporary folder),
# with the buckets (default bk1 bk2); server => 's3rver' or 'radosgw'
# (default: server_kind()).
sub start
{
	my (%args) = @_;
	my $dir = $args{dir} // _tempdir();
	my @buckets = @{ $args{buckets} // [ 'bk1', 'bk2' ] };
	my $kind = $args{server} // server_kind();
	my $script = ($SERVERS{$kind} // croak "no S3 server $kind")->{script};
	File::Path::make_path($dir) unless -d $dir;
	$dir = File::Spec->rel2abs($dir);

	my ($out, $err) = ('', '');
	IPC::Run::run([ 'bash', "$S3_DIR/$script", 'start', $dir, @buckets ],
		'<', \undef, '>', \$out, '2>', \$err)
	  or croak "$script start $dir failed: $err";
	chomp $out;
	croak "$script start printed no endpoint: $out $err" unless $out =~ m{^http://127\.0\.0\.1:\d+$};
	my $self = bless {
		kind => $kind,
		endpoint => $out,
		dir => $dir,
		buckets => \@buckets,
		owner => $$,
		access_key => 'S3RVER',
		secret_key => 'S3RVER',
	}, 'SbS3';
	if ($kind eq 's3rver')
	{
		$self->{data_dir} = "$dir/data";
	}
	else
	{
		$self->{access_key} = _first_line("$dir/access_key");
		$self->{secret_key} = _first_line("$dir/secret_key");
	}
	$running{"$self"} = $self;
	return $self;
}

sub _first_line
{
	my ($file) = @_;
	open(my $fh, '<', $file) or croak "$file: $!";
	my $line = <$fh> // croak "$file is empty";
	chomp $line;
	return $line;
}

# The access key id under which SECRET is the test's: s3rver knows only
# S3RVER (and checks no secret); radosgw one made from the secret.
sub key_id_for
{
	my ($self, $secret) = @_;
	return 'S3RVER' unless $self->verifies_signatures;
	return $self->{access_key} if $secret eq $self->{secret_key};
	return 'SBT' . uc(substr(Digest::MD5::md5_hex($secret), 0, 17));
}

# Make SECRET (under key_id_for(SECRET)) a key the server accepts: a key of
# the test user on radosgw; s3rver takes any.
sub accept_secret
{
	my ($self, $secret) = @_;
	return unless $self->verifies_signatures;
	return if $secret eq $self->{secret_key} || $self->{accepted}{$secret};
	croak 'accept_secret: a server of with-s3.sh takes only its own keys' if $self->{external};
	my $err = '';
	IPC::Run::run([ 'radosgw-admin', '-c', "$self->{dir}/ceph.conf", 'key', 'create', '--uid=sbtest',
			'--key-type=s3', '--access-key=' . $self->key_id_for($secret), "--secret-key=$secret" ],
		'<', \undef, '>', \$err, '2>', \$err)
	  or croak "radosgw-admin key create: $err";
	$self->{accepted}{$secret} = 1;
	return;
}

# A credentials file of AWS's form: FILE holding KEY_ID and SECRET, only its
# owner may read it.
sub write_credentials
{
	my ($file, $key_id, $secret) = @_;
	open(my $fh, '>', $file) or croak "$file: $!";
	print $fh "[default]\naws_access_key_id = $key_id\naws_secret_access_key = $secret\n";
	close($fh) or croak "$file: $!";
	chmod(0600, $file) or croak "chmod $file: $!";
	return $file;
}

# A credentials file of AWS's form in DIR holding SECRET (accept_secret:
# one the server takes), and the environment the command reads pointed at
# this server and that file, with no other S3 variable: what a test's
# command and server use.
sub use_credentials
{
	my ($self, $dir, $secret) = @_;
	$self->accept_secret($secret);
	my $file = write_credentials("$dir/credentials", $self->key_id_for($secret), $secret);
	$ENV{AWS_ENDPOINT_URL} = $self->endpoint;
	$ENV{AWS_SHARED_CREDENTIALS_FILE} = $file;
	delete @ENV{qw(AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_PROFILE AWS_REGION AWS_ENDPOINT_URL_S3)};
	return $file;
}

# The server that test/s3/with-s3.sh started (not stopped by stop()).
sub from_env
{
	croak 'SB_TEST_S3_ENDPOINT is not set (run under test/s3/with-s3.sh)' unless $ENV{SB_TEST_S3_ENDPOINT};
	return bless {
		kind => server_kind(),
		endpoint => $ENV{SB_TEST_S3_ENDPOINT},
		data_dir => $ENV{SB_TEST_S3_DATA_DIR},
		buckets => [ split ' ', $ENV{SB_TEST_S3_BUCKETS} // 'bk1 bk2' ],
		owner => $$,
		external => 1,
		access_key => $ENV{AWS_ACCESS_KEY_ID} // 'S3RVER',
		secret_key => $ENV{AWS_SECRET_ACCESS_KEY} // 'S3RVER',
	}, 'SbS3';
}

sub kind { return $_[0]{kind} }
sub verifies_signatures { return $SERVERS{ $_[0]{kind} }{verifies} }
sub access_key { return $_[0]{access_key} }
sub secret_key { return $_[0]{secret_key} }
sub endpoint { return $_[0]{endpoint} }
sub data_dir { return $_[0]{data_dir} }
sub dir { return $_[0]{dir} }
sub buckets { return @{ $_[0]{buckets} } }
sub log_file { return "$_[0]{dir}/$SERVERS{$_[0]{kind}}{log}" }

sub stop
{
	my ($self) = @_;
	delete $running{"$self"};
	return if $self->{external} || $self->{stopped}++;
	return unless $self->{owner} == $$;    # a forked child's copy
	my $err = '';
	my $script = $SERVERS{ $self->{kind} }{script};
	IPC::Run::run([ 'bash', "$S3_DIR/$script", 'stop', $self->{dir} ], '<', \undef, '>', \$err, '2>', \$err)
	  or carp "$script stop $self->{dir}: $err";
	return;
}

# ---------- requests (curl, signed with the server's keys) ----------

# Percent-encode a key or a path (keeping "/"), or a query value (not), as
# UTF-8: keys are character strings here, as list_objects gives them.
sub uri_escape
{
	my ($s, $keep_slash) = @_;
	my $safe = $keep_slash ? 'A-Za-z0-9\-._~/' : 'A-Za-z0-9\-._~';
	utf8::encode($s);
	$s =~ s/([^$safe])/sprintf('%%%02X', ord($1))/ge;
	return $s;
}

# An HTTP request to the server: METHOD, the path and query (as sent, so
# already encoded).  Options: body => string, body_file => path,
# headers => [ 'Name: value', ... ], endpoint => another one (the proxy's).
# Returns (HTTP status, response body, response headers as one string), or
# (0, curl's message) when there is no complete HTTP answer.
sub request
{
	my ($self, $method, $path_query, %opts) = @_;
	my $endpoint = $opts{endpoint} // $self->{endpoint};
	my $headers = File::Temp->new(TEMPLATE => 'sb-s3-headers-XXXXXX', TMPDIR => 1);
	my @auth = ('--aws-sigv4', 'aws:amz:us-east-1:s3', '--user', "$self->{access_key}:$self->{secret_key}",
		'-H', 'x-amz-content-sha256: UNSIGNED-PAYLOAD');
	# curl 7.88 signs a header it is told to drop ("Name:") as if it were
	# sent, which a server that checks signatures refuses: for radosgw the
	# headers are given values instead of dropped.
	my $verifies = $self->verifies_signatures;
	my @cmd = ('curl', '-sS', @auth, ($verifies ? () : ('-H', 'Expect:')), '-D', $headers->filename,
		'-o', '-', '-w', '\n%{http_code}');
	push @cmd, map { ('-H', $_) } @{ $opts{headers} // [] };
	my $in;
	push @cmd, $method eq 'HEAD' ? '-I' : ('-X', $method);
	if (defined $opts{body_file})
	{
		push @cmd, '--data-binary', "\@$opts{body_file}";
	}
	elsif (defined $opts{body})
	{
		push @cmd, '--data-binary', '@-';
		$in = $opts{body};
	}
	push @cmd, '-H', ($verifies ? 'Content-Type: application/octet-stream' : 'Content-Type:')
	  if defined $opts{body} || defined $opts{body_file};
	push @cmd, $endpoint . $path_query;
	my ($out, $err) = ('', '');
	IPC::Run::run(\@cmd, '<', \$in, '>', \$out, '2>', \$err);
	return (0, $err) if $? != 0 || $out !~ s/\n?(\d{3})$//;
	my $status = $1;
	$out = '' if $method eq 'HEAD';
	return ($status, $out, SbS3::_slurp($headers->filename));
}

sub _xml_text
{
	my ($s) = @_;
	$s =~ s/&lt;/</g;
	$s =~ s/&gt;/>/g;
	$s =~ s/&quot;/"/g;
	$s =~ s/&apos;/'/g;
	$s =~ s/&#x([0-9a-fA-F]+);/chr(hex($1))/ge;
	$s =~ s/&#(\d+);/chr($1)/ge;
	$s =~ s/&amp;/&/g;
	return $s;
}

# The objects of BUCKET whose keys begin with PREFIX (default all), by
# ListObjectsV2 page after page: { key, size, etag (with its quotes) }.
sub list_object_details
{
	my ($self, $bucket, $prefix) = @_;
	my @objects;
	my $token;
	for (;;)
	{
		my $q = "/$bucket?list-type=2";
		$q .= '&prefix=' . uri_escape($prefix) if defined $prefix && $prefix ne '';
		$q .= '&continuation-token=' . uri_escape($token) if defined $token;
		my ($status, $body) = $self->request('GET', $q);
		croak "ListObjectsV2 $q: HTTP $status: $body" unless $status == 200;
		while ($body =~ m{<Contents>(.*?)</Contents>}gs)
		{
			my $c = $1;
			my %o;
			$o{key} = _xml_text($1) if $c =~ m{<Key>(.*?)</Key>}s;
			$o{size} = $1 if $c =~ m{<Size>(\d+)</Size>};
			$o{etag} = _xml_text($1) if $c =~ m{<ETag>(.*?)</ETag>}s;
			utf8::decode($o{key});
			push @objects, \%o;
		}
		last unless $body =~ m{<IsTruncated>true</IsTruncated>};
		($token) = $body =~ m{<NextContinuationToken>(.*?)</NextContinuationToken>}s
		  or croak "ListObjectsV2 $q: truncated without a continuation token";
		$token = _xml_text($token);
	}
	return @objects;
}

# The keys of BUCKET that begin with PREFIX (default all).
sub list_objects
{
	my ($self, $bucket, $prefix) = @_;
	return map { $_->{key} } $self->list_object_details($bucket, $prefix);
}

# The multipart uploads begun and neither completed nor aborted in BUCKET:
# { key, upload_id, parts => [ part numbers uploaded ] }, by key.
#
# s3rver 3.7.1 has no ListMultipartUploads (GET /bucket?uploads answers 501
# NotImplemented; test/s3/s3rver-patches.js adds one, without the parts).
# This reads s3rver's files instead: an upload in progress is a folder
# DATA/BUCKET/._S3rver_uploads/UPLOAD_ID/ holding "key" (the object's key),
# "metadata" (the headers of the initiating request), and N and N.md5 for
# each part N uploaded; completing or aborting the upload removes the folder.
#
# A server without such files (radosgw) is asked: ListMultipartUploads,
# then ListParts for each upload (one page each: a test has few).
sub list_multipart_uploads
{
	my ($self, $bucket) = @_;
	return $self->_uploads_by_api($bucket) if $self->{kind} ne 's3rver';
	croak 'no data directory known for this server' unless defined $self->{data_dir};
	my $base = "$self->{data_dir}/$bucket/._S3rver_uploads";
	opendir(my $dh, $base) or return ();
	my @uploads;
	for my $id (sort grep { !/^\./ } readdir $dh)
	{
		my $dir = "$base/$id";
		open(my $fh, '<', "$dir/key") or next;    # completed or aborted meanwhile
		my $key = do { local $/; <$fh> };
		close $fh;
		utf8::decode($key);
		opendir(my $ph, $dir) or next;
		my @parts = sort { $a <=> $b } grep { /^\d+$/ } readdir $ph;
		closedir $ph;
		push @uploads, { key => $key, upload_id => $id, parts => \@parts };
	}
	closedir $dh;
	return sort { $a->{key} cmp $b->{key} || $a->{upload_id} cmp $b->{upload_id} } @uploads;
}

sub _uploads_by_api
{
	my ($self, $bucket) = @_;
	# "uploads=", not "uploads": curl 7.88 signs a query parameter without
	# "=" wrongly (S3's canonical form has it).
	my ($status, $body) = $self->request('GET', "/$bucket?uploads=");
	croak "ListMultipartUploads $bucket: HTTP $status: $body" unless $status == 200;
	my @uploads;
	while ($body =~ m{<Upload>(.*?)</Upload>}gs)
	{
		my $u = $1;
		my ($key) = $u =~ m{<Key>(.*?)</Key>}s;
		my ($id) = $u =~ m{<UploadId>(.*?)</UploadId>}s;
		($key, $id) = (_xml_text($key), _xml_text($id));
		my ($st, $parts) = $self->request('GET',
			"/$bucket/" . uri_escape($key, 1) . '?uploadId=' . uri_escape($id));
		croak "ListParts $bucket/$key: HTTP $st: $parts" unless $st == 200;
		utf8::decode($key);
		push @uploads, { key => $key, upload_id => $id,
			parts => [ sort { $a <=> $b } $parts =~ m{<PartNumber>(\d+)</PartNumber>}g ] };
	}
	return sort { $a->{key} cmp $b->{key} || $a->{upload_id} cmp $b->{upload_id} } @uploads;
}

# Convenience for setting a test up: put or get an object.
sub put_object
{
	my ($self, $bucket, $key, $content) = @_;
	my ($status, $body) = $self->request('PUT', "/$bucket/" . uri_escape($key, 1), body => $content);
	croak "PUT $bucket/$key: HTTP $status: $body" unless $status == 200;
	return;
}

sub get_object
{
	my ($self, $bucket, $key) = @_;
	my ($status, $body) = $self->request('GET', "/$bucket/" . uri_escape($key, 1));
	return undef if $status == 404;
	croak "GET $bucket/$key: HTTP $status: $body" unless $status == 200;
	return $body;
}

# ---------- the fault proxy (test/s3/fault-proxy.js) ----------

# Start a proxy to UPSTREAM (an endpoint) on a free port; its rules, its log
# of faults and its own messages are in DIR (default: a new temporary folder).
sub start_proxy
{
	my (%args) = @_;
	my $upstream = $args{upstream} // croak 'start_proxy: upstream => ENDPOINT is needed';
	my $dir = $args{dir} // _tempdir();
	File::Path::make_path($dir) unless -d $dir;
	$dir = File::Spec->rel2abs($dir);
	my $self = bless {
		upstream => $upstream,
		dir => $dir,
		rules_file => "$dir/rules.json",
		log_file => "$dir/faults.jsonl",
		out_file => "$dir/proxy.port",
		stderr_file => "$dir/proxy.log",
		owner => $$,
	}, 'SbS3::Proxy';
	unlink $self->{out_file};
	$self->set_rules($args{rules} // []);

	my $pid = fork;
	croak "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		open(STDIN, '<', '/dev/null');
		open(STDOUT, '>', $self->{out_file}) or POSIX::_exit(126);
		open(STDERR, '>>', $self->{stderr_file}) or POSIX::_exit(126);
		exec('node', "$S3_DIR/fault-proxy.js", '--listen', '0', '--upstream', $upstream,
			'--rules', $self->{rules_file}, '--log', $self->{log_file})
		  or POSIX::_exit(127);
	}
	$self->{pid} = $pid;
	$running{"$self"} = $self;

	# The first line it prints is its port.
	for (1 .. 200)
	{
		if (open(my $fh, '<', $self->{out_file}))
		{
			my $line = <$fh>;
			if (defined $line && $line =~ /^(\d+)\n/)
			{
				$self->{port} = $1;
				$self->{endpoint} = "http://127.0.0.1:$1";
				return $self;
			}
		}
		if (waitpid($pid, POSIX::WNOHANG()) == $pid)
		{
			delete $running{"$self"};
			croak "fault-proxy.js exited at start: " . _slurp($self->{stderr_file});
		}
		Time::HiRes::sleep(0.05);
	}
	$self->stop;
	croak "fault-proxy.js printed no port within 10 seconds: " . _slurp($self->{stderr_file});
}

sub _slurp
{
	my ($file) = @_;
	open(my $fh, '<', $file) or return '';
	local $/;
	return scalar <$fh>;
}

package SbS3::Proxy;

use Carp;
use JSON::PP ();
use POSIX ();
use Time::HiRes ();

sub endpoint { return $_[0]{endpoint} }
sub port { return $_[0]{port} }
sub dir { return $_[0]{dir} }
sub pid { return $_[0]{pid} }
sub rules_file { return $_[0]{rules_file} }
sub log_file { return $_[0]{log_file} }

# Replace the rules (an arrayref of hashes, as in test/s3/fault-proxy.js);
# the next request sees them.  A rule's count goes on from what its id used
# before: give a new id for a fresh count.
sub set_rules
{
	my ($self, $rules) = @_;
	croak 'set_rules takes an arrayref' unless ref $rules eq 'ARRAY';
	my $tmp = "$self->{rules_file}.tmp";
	open(my $fh, '>', $tmp) or croak "$tmp: $!";
	print $fh JSON::PP->new->canonical->encode($rules);
	close $fh or croak "$tmp: $!";
	rename($tmp, $self->{rules_file}) or croak "rename $tmp: $!";
	return;
}

# The faults applied so far, oldest first: { time, id, method, url, action }.
sub log_entries
{
	my ($self) = @_;
	open(my $fh, '<', $self->{log_file}) or return ();
	my @entries;
	while (my $line = <$fh>)
	{
		next unless $line =~ /\S/;
		push @entries, JSON::PP::decode_json($line);
	}
	close $fh;
	return @entries;
}

# Forget the faults logged so far.
sub clear_log
{
	my ($self) = @_;
	truncate($self->{log_file}, 0) if -e $self->{log_file};
	return;
}

sub stop
{
	my ($self) = @_;
	delete $running{"$self"};
	return if $self->{stopped}++ || !$self->{pid};
	return unless $self->{owner} == $$;    # a forked child's copy
	kill 'TERM', $self->{pid};
	for (1 .. 100)
	{
		return if waitpid($self->{pid}, POSIX::WNOHANG()) != 0;
		Time::HiRes::sleep(0.05);
	}
	kill 'KILL', $self->{pid};
	waitpid($self->{pid}, 0);
	return;
}

package SbS3;

# A test that dies leaves nothing running.
END
{
	my $status = $?;
	for my $obj (values %running)
	{
		next unless $obj->{owner} == $$;
		$obj->stop;
	}
	$? = $status;
}

1;
