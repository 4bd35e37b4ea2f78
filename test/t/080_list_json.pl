# The command's catalog (issue 43): "stripebackup list DEST..." over three
# destinations holding a chain (a full backup and an incremental one), a
# damaged backup and one that did not complete, one row each, newest first;
# every --output=json document checked against test/json/output.schema.json (docs/JSON.md); and
# the exit statuses: 1 for a path that is not there, 2 for bad usage, 3 for
# a damaged backup.
use strict;
use warnings;

use File::Basename qw(dirname);
use File::Copy qw(copy);
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use JsonSchemaCheck;
use Test::More;

my $schema = JsonSchemaCheck->new(dirname(__FILE__) . '/../json/output.schema.json');

# Run the command with --output=json; its status and the document, checked against $defs/DEF.
sub json_of
{
	my ($def, @args) = @_;
	my ($rc, $out, $err) = run_stripebackup(@args, '--output=json');
	my $doc = eval { decode_json($out) };
	ok(defined $doc, "$args[0] --output=json prints one JSON document") or diag("$err\n$out");
	my @problems = defined $doc ? $schema->check($doc, $def) : ('not JSON');
	is_deeply(\@problems, [], "$args[0] --output=json fits \$defs/$def of the schema");
	return ($rc, $doc, $err);
}

my @dests = make_destinations(3);
my @archive = make_destinations(2);
my $node = backup_node('lister', conf => archiving_conf(@archive));
$node->safe_psql('postgres', 'CREATE TABLE t AS SELECT g, md5(g::text) AS h FROM generate_series(1, 20000) g');
my $arr = sql_array(@dests);
my $full = $node->safe_psql('postgres', "SELECT stripe_backup($arr, label => 'base')");
$node->safe_psql('postgres', 'INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 5000) g');
my $incr = $node->safe_psql('postgres', "SELECT stripe_backup($arr, type => 'incr')");
my $broken = $node->safe_psql('postgres', "SELECT stripe_backup($arr)");
$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
wait_for_archive($node);
my %name;
for my $id ($full, $incr, $broken)
{
	($name{$id}) = backup_location($node, $id) =~ m{([^/]+)$};
}
# the broken backup loses its second stripe; a backup cut short left a stripe and no manifest
unlink("$dests[1]/$name{$broken}/stripe-2.sbs") or die "unlink: $!";
mkdir("$dests[2]/cut") or die;
copy("$dests[2]/$name{$full}/stripe-3.sbs", "$dests[2]/cut/stripe-3.sbs") or die;

my ($rc, $out, $err) = run_stripebackup('list', @dests);
is($rc, 3, 'list: exit 3, a backup listed is damaged');
my @rows = grep { /^\S+\s+(full|diff|incr|\?)\s/ } split /\n/, $out;
is(scalar @rows, 4, 'four rows: a backup over three destinations is one row') or diag($out);
like($rows[0] // '', qr/^\Q$name{$broken}\E\s+full\s+damaged\s/, 'newest first: the damaged backup');
like($rows[1] // '', qr/^\Q$name{$incr}\E\s+incr of \Q$name{$full}\E\s+complete\s/,
	'then the incremental one, with the backup it completes');
like($rows[2] // '', qr/^\Q$name{$full}\E\s+full\s+complete\s.*\s[0-9A-F]+\/[0-9A-F]+-[0-9A-F]+\/[0-9A-F]+ tl 1\s+no\s+no$/,
	'then the full one, its WAL range and timeline');
like($rows[3] // '', qr/^cut\s+\?\s+incomplete\s/, 'the one that did not complete last');
like($out, qr/^\Q$name{$broken}\E: damaged: stripe 2, "\Q$dests[1]\/$name{$broken}\E\/stripe-2.sbs", is missing/m,
	'the damage named: the stripe file');

my $doc;
my $nowhere = "$dests[0]/not-there";
($rc, $doc, $err) = json_of('list', 'list', @dests);
is($rc, 3, 'list --output=json: the same exit status');
my %by = map { $_->{name} => $_ } @{ $doc->{backups} };
is_deeply([ map { $_->{name} } @{ $doc->{backups} } ], [ $name{$broken}, $name{$incr}, $name{$full}, 'cut' ],
	'the rows newest first');
is($by{ $name{$incr} }{type}, 'incr', 'the incremental backup\'s type');
is($by{ $name{$incr} }{parent}{name}, $name{$full}, 'and the backup it completes');
is($by{ $name{$full} }{label}, 'base', 'the label');
is($by{ $name{$full} }{status}, 'complete', 'complete');
is(scalar @{ $by{ $name{$full} }{folders} }, 3, 'its three folders');
is($by{ $name{$full} }{stripes}, 3, 'its three stripes');
ok($by{ $name{$full} }{data_bytes} > 1_000_000 && $by{ $name{$full} }{stored_bytes} > 0, 'its sizes');
is($by{ $name{$full} }{wal}{timeline}, 1, 'its timeline');
is($by{ $name{$full} }{encrypted}, JSON::PP::false, 'not encrypted');
is($by{ $name{$broken} }{status}, 'damaged', 'the damaged backup');
is($by{cut}{status}, 'incomplete', 'the backup that did not complete');
is($by{cut}{id}, undef, 'which has no id: no manifest was read');

# show, plan and verify of one backup; of the incremental one, its chain.
my $full_at = "$dests[0]/$name{$full}";
($rc, $doc, $err) = json_of('show', 'show', $full_at);
is($rc, 0, 'show --output=json: exit 0');
is($doc->{backup}{name}, $name{$full}, 'show: the backup');
is(scalar @{ $doc->{backup}{stripes} }, 3, 'show: its three stripes');
is($doc->{backup}{cluster}{system_identifier}, $by{ $name{$full} }{system_identifier}, 'show: the cluster');
cmp_ok(length($out = JSON::PP->new->encode($doc)), '<', 20_000, 'show: a summary, not the manifest');
($rc, $out, $err) = run_stripebackup('show', $full_at, '--json', '--output=json');
is($rc, 2, 'show --json --output=json: exit 2');
($rc, $doc, $err) = json_of('plan', 'plan', "$dests[0]/$name{$incr}");
is($rc, 0, 'plan --output=json: exit 0');
is($doc->{status}, 'ready', 'plan: ready');
is_deeply([ map { $_->{name} } @{ $doc->{chain} } ], [ $name{$full} ], 'plan: the chain it reads after it');
($rc, $doc, $err) = json_of('plan', 'plan', "$dests[0]/$name{$broken}");
is($rc, 3, 'plan --output=json of the damaged backup: exit 3');
is($doc->{status}, 'damaged', 'plan: damaged');
($rc, $doc, $err) = json_of('plan', 'plan', $full_at, '--target', "$dests[0]/new-target");
is($rc, 0, 'plan --output=json --target DIR (to be made): exit 0');
is($doc->{target}{usable}, JSON::PP::true, 'plan: the target will do');
is($doc->{target}{will_create}, JSON::PP::true, 'plan: it will be created');
cmp_ok($doc->{target}{free_bytes}, '>=', $doc->{target}{needed_bytes}, 'plan: the free space and the need');
($rc, $doc, $err) = json_of('plan', 'plan', $full_at, '--target', $dests[0]);
is($rc, 2, 'plan --output=json --target of a folder not empty: exit 2');
is($doc->{target}{usable}, JSON::PP::false, 'plan: the target will not do');
like($doc->{target}{problem}, qr/not empty/, 'plan: and why');
($rc, $doc, $err) = json_of('plan', 'plan', $full_at, '--target-latest');
is($rc, 0, 'plan --output=json --target-latest: exit 0') or diag($err);
is($doc->{recovery}{target}, 'latest', 'plan: the recovery target');
is($doc->{recovery}{checked} && $doc->{recovery}{complete}, JSON::PP::true,
	'plan: the archive it recorded holds every segment recovery replays');
like($err, qr/WAL/, 'plan: what the text says of the WAL went to stderr');
($rc, $doc, $err) = json_of('plan', 'plan', $full_at, '--target-immediate');
is($doc->{recovery}{checked}, JSON::PP::false, 'plan --target-immediate: no archived WAL needed');
($rc, $out, $err) = run_stripebackup('plan', $full_at, '--output=json', '--detail');
is($rc, 2, 'plan --output=json --detail: exit 2');
($rc, $doc, $err) = json_of('verify', 'verify', $full_at);
is($rc, 0, 'verify --output=json: exit 0') or diag($err);
is($doc->{status}, 'good', 'verify: good');
is($doc->{chunks} > 0 && scalar @{ $doc->{problems} }, 0, 'verify: chunks checked, no problem');
ok(defined $doc->{wal} && $doc->{wal}{files} > 0, 'verify: the WAL archive beside it checked');
($rc, $doc, $err) = json_of('verify', 'verify', "$dests[0]/$name{$broken}");
is($rc, 3, 'verify --output=json of the damaged backup: exit 3');
is($doc->{status}, 'damaged', 'verify: damaged');
ok((grep { ($_->{stripe} // 0) == 2 } @{ $doc->{problems} }), 'verify: the problem names stripe 2');

# The WAL archive.
my $sysid = $by{ $name{$full} }{system_identifier};
my @wal = ('--archive', join(',', @archive), '--system-identifier', $sysid);
($rc, $doc, $err) = json_of('wal-list', 'wal-list', @wal);
is($rc, 0, 'wal-list --output=json: exit 0') or diag($err);
cmp_ok(scalar @{ $doc->{files} }, '>', 0, 'wal-list: the archived files');
is($doc->{total}{files}, scalar @{ $doc->{files} }, 'wal-list: and their total');
my @segments = sort map { $_->{name} } grep { $_->{name} =~ /^[0-9A-F]{24}$/ } @{ $doc->{files} };
($rc, $doc, $err) = json_of('wal-verify', 'wal-verify', @wal, '--from', $segments[0], '--to', $segments[-1]);
is($rc, 0, 'wal-verify --output=json: exit 0') or diag($err);
is($doc->{status}, 'good', 'wal-verify: good');
is($doc->{range}{complete}, JSON::PP::true, 'wal-verify: the range complete');
($rc, $doc, $err) = json_of('wal-list', 'wal-list', "$nowhere/wal/$sysid");
is($rc, 1, 'wal-list --output=json of a path that is not there: exit 1');
($rc, $out, $err) = run_stripebackup('wal-verify', '--archive', "$archive[0],$nowhere", '--system-identifier', $sysid);
is($rc, 1, 'wal-verify with a destination that is not there: exit 1, not 3');
like($err, qr/"\Q$nowhere\E" does not exist/, 'named');

# One destination: the backup's other folders are where its manifest says.
($rc, $doc, $err) = json_of('list', 'list', $dests[0]);
is(scalar @{ $doc->{backups} }, 3, 'one destination: its three backups');

# Exit statuses.
($rc, $out, $err) = run_stripebackup('list', $nowhere);
is($rc, 1, 'list of a destination that is not there: exit 1');
like($err, qr/"\Q$nowhere\E" does not exist/, 'named');
my $empty = PostgreSQL::Test::Utils::tempdir();
($rc, $doc, $err) = json_of('list', 'list', $empty);
is($rc, 0, 'list of an empty destination: exit 0');
is_deeply($doc->{backups}, [], 'no backups');
($rc, $out, $err) = run_stripebackup('list');
is($rc, 2, 'list without a destination: exit 2');
($rc, $out, $err) = run_stripebackup('list', $dests[0], '--output=xml');
is($rc, 2, 'list --output=xml: exit 2');
like($err, qr/--output "xml": text or json/, 'named');
($rc, $out, $err) = run_stripebackup('list', 'relative/dest');
is($rc, 2, 'a relative destination: exit 2');
($rc, $out, $err) = run_stripebackup('show', $nowhere);
is($rc, 1, 'show of a path that is not there: exit 1');
($rc, $out, $err) = run_stripebackup('verify', "$dests[0]/$name{$broken}");
is($rc, 3, 'verify of the damaged backup: exit 3');

# The manual page is installed beside PostgreSQL's.
my $mandir = `pg_config --mandir`;
chomp $mandir;
ok(-f "$mandir/man1/stripebackup.1", 'stripebackup(1) is installed in pg_config --mandir');

done_testing();
