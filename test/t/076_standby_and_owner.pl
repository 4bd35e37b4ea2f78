# A backup on a hot standby is taken (issue 45; not "cannot execute
# nextval() in a read-only transaction"), and a restore from SQL there is
# refused, saying what to do (issue 42); a command restore run as root hands its files to the
# owner of the target's parent folder or to --owner USER, and refuses when
# that would be root.  Run as another user, --owner names only that user.
use strict;
use warnings;

use File::Find;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $node = backup_node('primary');
$node->safe_psql('postgres', 'CREATE TABLE t AS SELECT g FROM generate_series(1, 1000) g');
my @dests = make_destinations(1);
my $backup = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
my $location = backup_location($node, $backup);

# A streaming standby of the primary.
$node->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'base', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);
my @standby_dests = make_destinations(1);
# A backup there is the standby's own (t/090 takes them under load): its
# id from the standby's range, its row in the standby's file, shown.
my ($rc, $out, $err) = $standby->psql('postgres', 'SELECT stripe_backup(' . sql_array(@standby_dests) . ')');
is($rc, 0, 'a backup on a standby: taken') or diag($err);
cmp_ok($out, '>=', 1e15, 'with an id of the standby\'s range');
is($standby->safe_psql('postgres', "SELECT status, from_standby, timeline FROM stripe_backups WHERE id = $out"),
	'completed|t|1', 'shown by stripe_backups on the standby: completed, from a standby, timeline 1');
is($standby->safe_psql('postgres', "SELECT count(*) FROM stripe_backups WHERE id = $backup"), '1',
	'beside the primary\'s backup');
ok(-f $standby->data_dir . '/pg_stripebackup/standby_history.jsonl', 'its row is in the standby\'s file');
my $standby_location = $standby->safe_psql('postgres', "SELECT location FROM stripe_backups WHERE id = $out");
($rc, $out, $err) = run_stripebackup('show', $standby_location);
like($out, qr/^WAL: .* on timeline 1, taken on a standby$/m, 'show: taken on a standby');
($rc, $out, $err) = run_stripebackup('show', '--output=json', $standby_location);
like($out, qr/"from_standby":\s*true/, 'show --json: from_standby true');
($rc, $out, $err) = run_stripebackup('show', '--output=json', $location);
like($out, qr/"from_standby":\s*false/, 'and false for the primary\'s');
my $never = PostgreSQL::Test::Utils::tempdir() . '/never';
($rc, $out, $err) = $standby->psql('postgres', "SELECT stripe_restore('$location', '$never')");
like($err, qr/ERROR: +a restore cannot run on a standby: it records its history in tables a standby cannot write/,
	'a restore from SQL on a standby: said why');
like($err, qr/HINT: +Run it on the primary, or restore with the stripebackup command/, 'and what to do');
ok(!-e $never, 'nothing created');

# The standby's chains and retention are its own: an incr's parent is the
# standby's full, not the primary's newer backup (the primary's retention,
# which does not see the standby's backups, could remove it); stripe_expire
# there removes the standby's backups only.
my $first = $standby->safe_psql('postgres', 'SELECT max(id) FROM stripe_backups WHERE from_standby');
my $newer = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
$node->wait_for_catchup($standby);
my $incr = $standby->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@standby_dests) . ", type => 'incr')");
is($standby->safe_psql('postgres', "SELECT type, parent_id FROM stripe_backups WHERE id = $incr"), "incr|$first",
	"a standby's incr: its parent the standby's full, not the primary's newer backup $newer");
my $last = $standby->safe_psql('postgres', "SELECT stripe_merge($incr)");
is($standby->safe_psql('postgres', "SELECT status, type, merged_from, from_standby FROM stripe_backups WHERE id = $last"),
	"completed|full|$incr|t", 'stripe_merge on the standby: its chain folded into a full backup of its own');
my $first_name = $standby->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $first");
($rc, $out, $err) = $standby->psql('postgres', 'SELECT backup_id, status, removed FROM stripe_expire(keep_last => 1) ORDER BY backup_id');
is($out, "$first|completed|t\n$incr|completed|t", 'stripe_expire on the standby: its two older backups go') or diag($err);
is($standby->safe_psql('postgres', 'SELECT string_agg(id::text, \',\' ORDER BY id) FROM stripe_backups'),
	"$backup,$newer,$last", 'the primary\'s backups stay shown, and the standby\'s newest');
ok(!-e "$standby_dests[0]/$first_name", 'the folder of the removed one is gone');
is($node->safe_psql('postgres', 'SELECT count(*) FROM stripe_backups'), '2', 'the primary keeps its two');
($rc, $out, $err) = $standby->psql('postgres', "SELECT stripe_keep($last)");
like($err, qr/ERROR: +stripe_keep\(\) cannot run on a standby: it writes tables a standby cannot write/,
	'stripe_keep on a standby: refused, saying why');

# A line of its history file the disk damaged hides that line, not the history.
append_to_file($standby->data_dir . '/pg_stripebackup/standby_history.jsonl',
	qq({"id": 1000000000000999, "status": damaged\n));
($rc, $out, $err) = $standby->psql('postgres', 'SELECT count(*) FROM stripe_backups');
is($out, '3', 'a damaged line of the standby\'s history: the views still show its backups and the primary\'s');
like($err, qr/WARNING: +a line of "pg_stripebackup\/standby_history.jsonl" is not a backup's row/, 'with a warning');
$standby->stop;

# Not root: --owner may name only this user.
my $me = getpwuid($>);
my $base = PostgreSQL::Test::Utils::tempdir();
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', "$base/as_root", '--owner', 'root');
is($rc, 2, 'not root: --owner root refused');
like($err, qr/--owner "root" needs root/, 'saying it needs root');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', "$base/nobody", '--owner', 'no_such_user_42');
like($err, qr/--owner "no_such_user_42": there is no such user/, 'an unknown user refused, named');
ok(!-e "$base/as_root" && !-e "$base/nobody", 'nothing created');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', "$base/mine", '--owner', $me);
is($rc, 0, "not root: --owner $me (this user) goes ahead") or diag($err);
unlike($out, qr/^owner:/m, 'and hands nothing over');

# As root (when this user may run the command as root without a password).
SKIP:
{
	# the command the tests run, from PATH (a shell builtin would not do: perl execs "command" itself)
	my ($dir) = grep { -x "$_/stripebackup" } split(/:/, $ENV{PATH});
	my $bin = defined($dir) ? "$dir/stripebackup" : 'stripebackup';
	# run-all.sh, run as root, lets the test user run this command alone as root
	my $sudo_ok = system("sudo -n '$bin' --version >/dev/null 2>&1") == 0;
	skip 'running as root needs "sudo -n stripebackup" for this user (make test as root allows it)', 7
	  unless $sudo_ok;
	my $run_root = sub {
		my ($stdout, $stderr);
		IPC::Run::run([ 'sudo', '-n', $bin, @_ ], '>', \$stdout, '2>', \$stderr);
		return ($? >> 8, $stdout, $stderr);
	};
	mkdir("$base/pg") or die;
	($rc, $out, $err) = $run_root->('restore', $location, '--target', "$base/pg/a/copy", '--no-progress');
	is($rc, 0, 'as root, into a folder of this user\'s') or diag($err);
	like($out, qr/^owner: +the files belong to \Q$me\E .*the owner of "\Q$base\/pg\E"/m, 'saying whose they are');
	my @foreign;
	find(sub { push @foreign, $File::Find::name if (lstat($_))[4] != $> }, "$base/pg");
	is(scalar(@foreign), 0, 'every file, and the folder made above the target, belongs to this user')
	  or diag("@foreign");
	($rc, $out, $err) = $run_root->('restore', $location, '--target', '/root-owned-by-root-42/copy');
	is($rc, 2, 'as root, below a folder of root\'s: refused');
	like($err, qr/running as root, the restored files would belong to root.*give --owner USER/, 'saying what to do');
	($rc, $out, $err) = $run_root->('restore', $location, '--target', "$base/by_option/copy", '--owner', $me,
		'--no-progress');
	is($rc, 0, 'as root with --owner') or diag($err);
	is((lstat("$base/by_option/copy/PG_VERSION"))[4], $>, 'the files belong to the user named');
}

$node->stop;
done_testing();
