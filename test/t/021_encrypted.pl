# Encrypted backups (stripebackup.encryption_key_file): a backup taken under
# pgbench load with a key file is unreadable without it (no table data, no
# file name in a stripe or the manifest's envelope); it restores from SQL and
# with the command given the key, passes pg_verifybackup, starts, and holds
# pgbench's invariant; an incremental on top of it too.  Without the key, or
# with another, both fail closed with a clear error and write nothing (verify
# without the key checks what it can in the clear, from SQL too); an
# unusable key file stops a backup before any row or file; only a superuser
# may set the setting; the secret is in no log or history row.
use strict;
use warnings;

use File::Find ();
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $keys = PostgreSQL::Test::Utils::tempdir();
my $secret = 'Q29ycmVjdCBob3JzZSBiYXR0ZXJ5IHN0YXBsZSwgYnV0IGxvbmdlcg';
sub write_key
{
	my ($name, $text, $mode) = @_;
	PostgreSQL::Test::Utils::append_to_file("$keys/$name", $text);
	chmod($mode // 0600, "$keys/$name") or die "chmod: $!";
	return "$keys/$name";
}
my $key = write_key('main.key', "$secret\n");
my $other_key = write_key('other.key', 'another secret of more than thirty-two bytes, not the one');
my $open_key = write_key('readable.key', "$secret\n", 0644);

sub seek_restore_byte
{
	my ($file, $offset, $byte) = @_;
	open(my $fh, '+<', $file) or die "open: $!";
	binmode $fh;
	seek($fh, $offset, 0);
	print $fh $byte;
	close($fh);
}

my $node = backup_node('primary');
my @dests = make_destinations(2);
my $arr = sql_array(@dests);
$node->safe_psql('postgres', "ALTER SYSTEM SET stripebackup.encryption_key_file = '$key'");
$node->reload;
$node->command_ok([ 'pgbench', '-i', '-s', '3', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench tables loaded');
$node->safe_psql('postgres',
	"CREATE TABLE payroll_secrets AS SELECT g, 'plaintext-nobody-may-read-' || g AS v FROM generate_series(1, 20000) g");

# Under load.
my $pgbench = IPC::Run::start(
	[ 'pgbench', '-c', '2', '-T', '600', '-n', '-p', $node->port, '-h', $node->host, 'postgres' ],
	'>', \my $pgbench_out, '2>', \my $pgbench_err);
$node->poll_query_until('postgres', 'SELECT count(*) > 100 FROM pgbench_history') or die 'pgbench does not write';
my $full = $node->safe_psql('postgres', "SELECT stripe_backup($arr)");
$node->safe_psql('postgres', "UPDATE payroll_secrets SET v = v || '-changed' WHERE g % 10 = 0");
my $incr = $node->safe_psql('postgres', "SELECT stripe_backup($arr, type => 'incr')");
$pgbench->signal('TERM');
$pgbench->finish;

# Nothing readable in what the backups wrote.
my @leaks;
File::Find::find({ no_chdir => 1, wanted => sub {
	return unless -f $_;
	my $bytes = PostgreSQL::Test::Utils::slurp_file($_);
	push @leaks, $_ if $bytes =~ /plaintext-nobody-may-read|pgbench_accounts|payroll_secrets|PG_VERSION/;
} }, @dests);
is(join(', ', @leaks), '', 'no table data, table or file name shows in any stripe or manifest');
is($node->safe_psql('postgres', "SELECT string_agg(encrypted::text, ',' ORDER BY id) FROM stripe_backups"), 'true,true',
	'stripe_backups says both are encrypted');
my $location = backup_location($node, $full);
like(PostgreSQL::Test::Utils::slurp_file("$location/manifest.json"), qr/^\{"format":"stripebackup-encrypted"/,
	'the manifest is an envelope');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_verify($full)"), '0',
	'stripe_verify finds nothing wrong with the key');

# Restored from SQL (the chain) and with the command.
my $copy = PostgreSQL::Test::Cluster->new('copy');
$node->safe_psql('postgres', "SELECT stripe_restore($incr, '" . $copy->data_dir . "')");
command_ok([ 'pg_verifybackup', $copy->data_dir ], 'pg_verifybackup accepts the chain restored from SQL');
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port . "\narchive_mode = off");
$copy->start;
is(pgbench_invariant($copy), 't', 'it starts and pgbench\'s invariant holds');
is($copy->safe_psql('postgres', "SELECT count(*) FROM payroll_secrets WHERE v LIKE '%-changed'"), '2000',
	'with the incremental\'s changes');
$copy->stop;

my $target = PostgreSQL::Test::Utils::tempdir() . '/cmd';
my ($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $target, '--no-progress');
is($rc, 2, 'the command without the key fails') ;
like($err, qr/the backup is encrypted: its key is needed/, 'saying the key is needed');
ok(!-e $target, 'and writes nothing');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $target, '--encryption-key-file', $other_key);
like($err, qr/the encryption key is not the one this backup was encrypted with/, 'another key fails closed');
ok(!-e $target, 'writing nothing');
# list: without the key an encrypted backup's status cannot be told; with it, complete.
($rc, $out, $err) = run_stripebackup('list', @dests, '--output=json');
is($rc, 0, 'list without the key: exit 0') or diag($err);
my @statuses = map { "$_->{status}:" . ($_->{encrypted} ? 'encrypted' : 'plain') } @{ decode_json($out)->{backups} };
is_deeply(\@statuses, [ 'unknown:encrypted', 'unknown:encrypted' ], 'both backups: encrypted, status unknown');
($rc, $out, $err) = run_stripebackup('list', @dests, '--output=json', '--encryption-key-file', $key);
@statuses = map { "$_->{status}:" . ($_->{encrypted} ? 'encrypted' : 'plain') } @{ decode_json($out)->{backups} };
is_deeply(\@statuses, [ 'complete:encrypted', 'complete:encrypted' ], 'with the key: complete, encrypted');
($rc, $out, $err) = run_stripebackup('verify', $location, '--encryption-key-file', $open_key);
like($err, qr/may be read or written by others \(mode 0644\)/, 'a key file others may read is refused');
unlike($err, qr/\Q$secret\E/, 'without showing its secret');
($rc, $out, $err) = run_stripebackup('report', $location, '--encryption-key-file', $key);
like($out, qr/^backup ".*": 2 stripes/m, 'the command\'s report reads it with the key') or diag($err);
($rc, $out, $err) = run_stripebackup('report', $location);
like($err, qr/its key is needed/, 'and not without');
my $restored = restore_node('cmd', $location, '--encryption-key-file', $key, '--no-progress');
$restored->append_conf('postgresql.conf', "archive_mode = off");
$restored->start;
is(pgbench_invariant($restored), 't', 'the command\'s restore starts and holds pgbench\'s invariant');
$restored->stop;

# A cold backup with the command, encrypted the same way.
my $cold = PostgreSQL::Test::Utils::tempdir();
($rc, $out, $err) = run_stripebackup('create', '--source', $restored->data_dir, '--dest', $cold, '--name', 'cold',
	'--no-progress', '--encryption-key-file', $key);
is($rc, 0, 'the command makes an encrypted cold backup') or diag($err);
($rc, $out, $err) = run_stripebackup('verify', "$cold/cold");
is($rc, 0, 'verify without the key checks what it can') or diag($err);
like($out, qr/is encrypted; without its key: \d+ chunks in 1 stripes are intact/, 'and says what it checked');
my ($cold_stripe) = glob("$cold/cold/stripe-*.sbs");
open(my $fh, '+<', $cold_stripe) or die "open: $!";
binmode $fh;
seek($fh, 300, 0);
read($fh, my $byte, 1);
seek($fh, 300, 0);
print $fh chr(ord($byte) ^ 0x20);
close($fh);
($rc, $out, $err) = run_stripebackup('verify', "$cold/cold");
is($rc, 3, 'a changed byte is found without the key');
like($err, qr/stripe 1 of 1, chunk \d+: checksum mismatch/, 'naming the stripe and the chunk');
seek_restore_byte($cold_stripe, 300, $byte);
($rc, $out, $err) = run_stripebackup('verify', "$cold/cold", '--encryption-key-file', $key);
is($rc, 0, 'and verifies with it') or diag($err);
($rc, $out, $err) = run_stripebackup('show', "$cold/cold", '--encryption-key-file', $key);
like($out, qr/^encryption:   AES-256-GCM/m, 'show says it is encrypted');

# From SQL with another key, or an unusable one: refused, nothing written.
my $sql_target = PostgreSQL::Test::Utils::tempdir() . '/sql';
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"SET stripebackup.encryption_key_file = '$other_key'; SELECT stripe_restore($full, '$sql_target')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($stderr, qr/28000: the encryption key is not the one this backup was encrypted with/,
	'a restore from SQL with another key fails with SQLSTATE 28000');
ok(!-e $sql_target, 'writing nothing');

# Verify from SQL without a key: what can be checked in the clear is, and the NOTICE says so.
($ret, $stdout, $stderr) = $node->psql('postgres',
	"SET stripebackup.encryption_key_file = ''; SELECT count(*) FROM stripe_verify($full)");
is($stdout, '0', 'stripe_verify without the key finds nothing wrong') or diag($stderr);
like($stderr, qr/is encrypted and stripebackup.encryption_key_file is not set: checked without its key, [1-9]\d* chunks/,
	'saying it checked the chunks without the key');
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM stripe_backups');
($ret, $stdout, $stderr) = $node->psql('postgres',
	"SET stripebackup.encryption_key_file = '$open_key'; SELECT stripe_backup($arr)");
like($stderr, qr/may be read or written by others \(mode 0644\)/, 'a backup with a key file others may read is refused');
is($node->safe_psql('postgres', 'SELECT count(*) FROM stripe_backups'), $rows, 'before any row');

# Only a superuser sets it; the secret is nowhere.
$node->safe_psql('postgres', 'CREATE ROLE oscar LOGIN; GRANT pg_read_server_files, pg_write_server_files TO oscar');
($ret, $stdout, $stderr) = $node->psql('postgres', "SET stripebackup.encryption_key_file = '$other_key'",
	extra_params => [ '-U', 'oscar' ]);
like($stderr, qr/permission denied to set parameter "stripebackup.encryption_key_file"/,
	'a member of pg_write_server_files may not set the key file');
# Where the key, the WAL archive and the object store are: not for every role to read.
my @paths = map { "stripebackup.$_" }
  qw(encryption_key_file archive_destinations s3_endpoint s3_credentials_file s3_ca_file s3_bucket_endpoints);
for my $setting (@paths)
{
	($ret, $stdout, $stderr) = $node->psql('postgres', "SHOW $setting", extra_params => [ '-U', 'oscar' ]);
	# PostgreSQL 15's words, then 16's and later
	like($stderr, qr/(?:must be superuser or have privileges of pg_read_all_settings to examine|permission denied to examine) "\Q$setting\E"/,
		"$setting: hidden from SHOW for a role that is no superuser");
}
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_settings WHERE setting LIKE '%main.key%'",
		extra_params => [ '-U', 'oscar' ]), '0', 'and from pg_settings');
$node->safe_psql('postgres', 'GRANT pg_read_all_settings TO oscar');
is($node->safe_psql('postgres', 'SHOW stripebackup.encryption_key_file', extra_params => [ '-U', 'oscar' ]),
	$key, 'pg_read_all_settings may read the path (never the key)');
unlike(PostgreSQL::Test::Utils::slurp_file($node->logfile), qr/\Q$secret\E/, 'the secret is not in the server log');
is($node->safe_psql('postgres', "SELECT count(*) FROM stripe_backups b WHERE b::text LIKE '%$secret%'")
	  + $node->safe_psql('postgres', "SELECT count(*) FROM stripe_restores r WHERE r::text LIKE '%$secret%'"),
	0, 'nor in the history');

done_testing();
