# Scheduling a standby's backups (issue 45): pg_cron runs no job on a
# standby (its launcher waits for recovery to end), so the primary's
# pg_cron runs it there, the job's nodename and nodeport set to the
# standby's; the backup is the standby's own.  And on the standby,
# stripe_check and stripe_health answer.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $primary = backup_node('primary', cron => 1, conf => "cron.database_name = 'postgres'");
$primary->append_conf('postgresql.conf', "cron.host = '" . $primary->host . "'");
$primary->restart;
$primary->safe_psql('postgres', 'CREATE EXTENSION pg_cron');
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);

my @dests = make_destinations(1);
my $job = $primary->safe_psql('postgres', "SELECT cron.schedule('standby backup', '* * * * *', "
	  . "\$\$SELECT stripe_backup(" . sql_array(@dests) . ", label => 'from cron')\$\$)");
$primary->safe_psql('postgres',
	"UPDATE cron.job SET nodename = '" . $standby->host . "', nodeport = " . $standby->port . " WHERE jobid = $job");
ok($standby->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM stripe_backups WHERE label = 'from cron' AND status = 'completed'"),
	'the primary\'s pg_cron job took a backup on the standby');
$primary->safe_psql('postgres', "SELECT cron.unschedule($job)");
is($standby->safe_psql('postgres', "SELECT bool_and(from_standby) FROM stripe_backups WHERE label = 'from cron'"),
	't', 'the standby\'s own backup');
is($primary->safe_psql('postgres', "SELECT count(*) FROM stripe_backups WHERE label = 'from cron'"), '0',
	'not in the primary\'s history');
is($primary->safe_psql('postgres', "SELECT status FROM cron.job_run_details WHERE jobid = $job ORDER BY runid LIMIT 1"),
	'succeeded', 'pg_cron records the job as succeeded');

# What the standby says of its backups.
my ($rc, $out, $err) = $standby->psql('postgres', 'SELECT "check", ok FROM stripe_check() ORDER BY 1');
is($rc, 0, 'stripe_check runs on the standby') or diag($err);
like($out, qr/\|t$/m, 'and reports') or diag($out);
is($standby->safe_psql('postgres', 'SELECT last_backup_id >= 1e15, last_backup_failed FROM stripe_health'), 't|f',
	'stripe_health on the standby: its newest backup is its own, not failed');

done_testing();
