# stripe_backup(wait => false) returns at once and the row goes from running
# to completed; stripe_cancel() and a cancelled caller (statement_timeout)
# stop a backup cleanly; a pg_cron job takes a backup.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use Time::HiRes qw(time);

my $node = backup_node('primary', cron => 1, conf => "cron.database_name = 'postgres'");
$node->append_conf('postgresql.conf', "cron.host = '" . $node->host . "'");
$node->restart;
# About 30 MB that zstd at level 19 takes seconds to compress: slow on purpose.
$node->safe_psql('postgres', q{
	CREATE TABLE slow AS
		SELECT g, md5(g::text) || md5((g * 7)::text) || md5((g * 13)::text) AS v
		FROM generate_series(1, 250000) g;
});
my @dests = make_destinations(2);
my $slow = 'SELECT stripe_backup(' . sql_array(@dests) . ', compression_level => 19, wait => false)';

sub status_of
{
	my ($id) = @_;
	return $node->safe_psql('postgres', "SELECT status FROM stripe_backups WHERE id = $id");
}

# wait => false
my $t0 = time;
my $id = $node->safe_psql('postgres', $slow);
my $took = time - $t0;
cmp_ok($took, '<', 3, "wait => false returns at once (${took}s)");
is(status_of($id), 'running', 'the row says running meanwhile');
($node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'stripebackup'"))
  eq '1' or diag('no backup worker seen');
my ($ret, $out, $err) = $node->psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
like($err, qr/backup $id is already running/, 'a second backup is refused while one runs');
ok($node->poll_query_until('postgres', "SELECT status = 'completed' FROM stripe_backups WHERE id = $id"),
	'the row goes from running to completed');

# stripe_cancel
$id = $node->safe_psql('postgres', $slow);
is($node->safe_psql('postgres', "SELECT stripe_cancel($id)"), 't', 'stripe_cancel accepts a running backup');
ok($node->poll_query_until('postgres', "SELECT status = 'cancelled' FROM stripe_backups WHERE id = $id"),
	'the cancelled backup is recorded as cancelled');
like($node->safe_psql('postgres', "SELECT error FROM stripe_backups WHERE id = $id"), qr/canceled by stripe_cancel\(\)/,
	'with the reason');
ok(!-e "$dests[0]/" . $node->safe_psql('postgres', "SELECT name FROM stripe_backups WHERE id = $id"),
	'its partial files are removed');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_replication_slots'), '0', 'and its WAL slot');
($ret, $out, $err) = $node->psql('postgres', "SELECT stripe_cancel($id)");
like($err, qr/backup $id is not running/, 'cancelling a finished backup says it is not running');

# A cancelled caller cancels the backup it waits for.
($ret, $out, $err) = $node->psql('postgres',
	"SET statement_timeout = '1s'; SELECT stripe_backup(" . sql_array(@dests) . ', compression_level => 19)');
like($err, qr/statement timeout/, 'statement_timeout cancels the waiting caller');
ok($node->poll_query_until('postgres',
		"SELECT status = 'cancelled' FROM stripe_backups ORDER BY id DESC LIMIT 1"),
	'and the backup it was waiting for is cancelled');
like($node->safe_psql('postgres', 'SELECT error FROM stripe_backups ORDER BY id DESC LIMIT 1'),
	qr/session waiting for it was interrupted/, 'the history says the caller was interrupted');

# pg_cron: the job runs at the start of the next minute.
$node->safe_psql('postgres', 'CREATE EXTENSION pg_cron');
my $before = $node->safe_psql('postgres', 'SELECT count(*) FROM stripe_backups');
$node->safe_psql('postgres', "SELECT cron.schedule('nightly', '* * * * *', \$\$SELECT stripe_backup("
	  . sql_array(@dests) . ", label => 'from cron')\$\$)");
ok($node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM stripe_backups WHERE label = 'from cron' AND status = 'completed'"),
	'a pg_cron job took a backup');
$node->safe_psql('postgres', "SELECT cron.unschedule('nightly')");
is($node->safe_psql('postgres', q{SELECT status FROM cron.job_run_details ORDER BY runid DESC LIMIT 1}),
	'succeeded', 'pg_cron records the job as succeeded');
$node->stop;
done_testing();
