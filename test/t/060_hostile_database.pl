# A hostile database: its owner (mallory, not a superuser) and a role granted
# the extension's functions (oscar) plant functions, operators and
# aggregates named like the ones SQL uses, in a schema they put first on the
# search_path (ALTER DATABASE ... SET, ALTER ROLE ... SET, SET) and as
# exact-type matches in public, before and after CREATE EXTENSION.  The
# database's owner also sets what could stall the extension's worker.
# Then a superuser and oscar call every function of the extension (backups
# of every type; plan, verify and restore of a chain) and read
# every view (stripe_check() and stripe_health too), and the server restarts (its start-up clean-up runs there).
# No planted object may run with any privileges but its owner's: each one
# records who ran it and tries to make mallory a superuser.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;
use File::Path ();

my $node = PostgreSQL::Test::Cluster->new('hostile');
$node->init(extra => ['--data-checksums'], allows_streaming => 1);
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'stripebackup'");
$node->append_conf('postgresql.conf', "stripebackup.database_name = 'appdb'");
# WAL archived, so that point-in-time restores and WAL retention run their statements too.
my @archive = make_destinations(1);
$node->append_conf('postgresql.conf',
	"archive_mode = on\narchive_library = 'stripebackup'\nstripebackup.archive_destinations = '$archive[0]'");
# Retention after every backup, so that the backup worker runs its statements
# too (a count no backup here reaches: nothing goes).
$node->append_conf('postgresql.conf', 'stripebackup.retention_full_count = 100');
$node->start;

my @dests = make_destinations(2);
my $base = PostgreSQL::Test::Utils::tempdir();

$node->safe_psql('postgres', q{
	CREATE ROLE mallory LOGIN;
	CREATE ROLE oscar LOGIN IN ROLE pg_read_server_files, pg_write_server_files;
	CREATE DATABASE appdb OWNER mallory;
	GRANT CREATE ON DATABASE appdb TO oscar;
});

# What a trap records, and its attempt to make mallory a superuser.
$node->safe_psql('appdb', q{
	CREATE TABLE public.trap_log (ran_as name, session_as name, what text);
	GRANT INSERT, SELECT ON public.trap_log TO PUBLIC;
	CREATE FUNCTION public.sb_trap(what text) RETURNS void LANGUAGE plpgsql AS $$
	BEGIN
		RAISE LOG 'stripebackup trap % run by %', what, current_user;
		INSERT INTO public.trap_log VALUES (current_user, session_user, what);
		BEGIN
			EXECUTE 'ALTER ROLE mallory SUPERUSER';
		EXCEPTION WHEN OTHERS THEN NULL;
		END;
	END $$;
	GRANT EXECUTE ON FUNCTION public.sb_trap(text) TO PUBLIC;
});

# Traps in schema NSP: every operator the extension's SQL uses, for every
# pair of the types it applies them to, and functions and aggregates named
# like the ones it calls.
sub plant
{
	my ($role, $nsp) = @_;
	$node->safe_psql('appdb', qq{
		SET ROLE $role;
		CREATE SCHEMA IF NOT EXISTS $nsp;
		DO \$plant\$
		DECLARE
			types text[] := ARRAY['int2', 'int4', 'int8', 'float8', 'numeric', 'text', 'name',
				'timestamptz', 'interval', 'bool', 'uuid', 'pg_lsn'];
			ops text[] := ARRAY['=', '<>', '<', '>', '<=', '>=', '+', '-', '*', '/', '||'];
			l text; r text; op text; fn text; ret text; n int := 0;
		BEGIN
			FOREACH l IN ARRAY types LOOP
				FOREACH r IN ARRAY types LOOP
					FOREACH op IN ARRAY ops LOOP
						n := n + 1;
						fn := format('%I.op_trap_%s', '$nsp', n);
						ret := CASE WHEN op IN ('+', '-', '*', '/') THEN l
									WHEN op = '||' THEN 'text' ELSE 'bool' END;
						EXECUTE format('CREATE FUNCTION %s(%s, %s) RETURNS %s LANGUAGE plpgsql AS '
							'\$f\$ BEGIN PERFORM public.sb_trap(%L); RETURN NULL; END \$f\$',
							fn, l, r, ret, format('operator %s(%s, %s) of %s', op, l, r, '$nsp'));
						EXECUTE format('CREATE OPERATOR %I.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = %s)',
							'$nsp', op, l, r, fn);
					END LOOP;
				END LOOP;
			END LOOP;
		END \$plant\$;
		CREATE FUNCTION $nsp.now() RETURNS timestamptz LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('now() of $nsp'); RETURN NULL; END \$\$;
		CREATE FUNCTION $nsp.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('clock_timestamp() of $nsp'); RETURN NULL; END \$\$;
		CREATE FUNCTION $nsp.pg_database_size(oid) RETURNS int8 LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('pg_database_size() of $nsp'); RETURN 0; END \$\$;
		CREATE FUNCTION $nsp.date_part(text, interval) RETURNS float8 LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('date_part() of $nsp'); RETURN 0; END \$\$;
		CREATE FUNCTION $nsp.date_part(text, timestamptz) RETURNS float8 LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('date_part() of $nsp'); RETURN 0; END \$\$;
		CREATE FUNCTION $nsp.round(numeric, int4) RETURNS numeric LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('round() of $nsp'); RETURN 0; END \$\$;
		CREATE FUNCTION $nsp.unnest(anyarray) RETURNS SETOF anyelement LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('unnest() of $nsp'); END \$\$;
		CREATE FUNCTION $nsp.cardinality(anyarray) RETURNS int4 LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('cardinality() of $nsp'); RETURN 0; END \$\$;
		CREATE FUNCTION $nsp.agg_trap(int8) RETURNS int8 LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('aggregate of $nsp'); RETURN 0; END \$\$;
		CREATE FUNCTION $nsp.agg_trap2(float8, float8) RETURNS float8 LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('aggregate of $nsp'); RETURN 0; END \$\$;
		CREATE FUNCTION $nsp.agg_trap3(float8, float8, float8) RETURNS float8 LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('aggregate of $nsp'); RETURN 0; END \$\$;
		CREATE FUNCTION $nsp.agg_trap4(timestamptz, timestamptz) RETURNS timestamptz LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('aggregate of $nsp'); RETURN NULL; END \$\$;
		CREATE FUNCTION $nsp.agg_trap5(numeric, int8) RETURNS numeric LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('aggregate of $nsp'); RETURN 0; END \$\$;
		CREATE AGGREGATE $nsp.count(*) (SFUNC = $nsp.agg_trap, STYPE = int8);
		CREATE AGGREGATE $nsp.sum(int8) (SFUNC = $nsp.agg_trap5, STYPE = numeric);
		CREATE AGGREGATE $nsp.max(float8) (SFUNC = $nsp.agg_trap2, STYPE = float8);
		CREATE AGGREGATE $nsp.min(float8) (SFUNC = $nsp.agg_trap2, STYPE = float8);
		CREATE AGGREGATE $nsp.avg(float8) (SFUNC = $nsp.agg_trap2, STYPE = float8);
		CREATE AGGREGATE $nsp.max(timestamptz) (SFUNC = $nsp.agg_trap4, STYPE = timestamptz);
		CREATE AGGREGATE $nsp.regr_slope(float8, float8) (SFUNC = $nsp.agg_trap3, STYPE = float8);
	});
	# The extension's own function, shadowed from another schema (in its own
	# schema, the look-alike would only make CREATE EXTENSION fail).
	$node->safe_psql('appdb', qq{
		SET ROLE $role;
		CREATE FUNCTION $nsp.stripe_job_is_running(text, int8) RETURNS bool LANGUAGE plpgsql AS
			\$\$ BEGIN PERFORM public.sb_trap('stripe_job_is_running() of $nsp'); RETURN false; END \$\$;
	}) if $nsp ne 'public';
}

# Before CREATE EXTENSION: look-alikes in public, the extension's schema.
plant('mallory', 'public');
$node->safe_psql('appdb', 'CREATE EXTENSION stripebackup');

# After: mallory's own schema first for everyone in appdb, and settings
# that would stall or misdirect a worker that kept them.
plant('mallory', 'evil');
plant('oscar', 'oscar_evil');
$node->safe_psql('appdb', q{
	SET ROLE oscar;
	GRANT USAGE ON SCHEMA oscar_evil TO PUBLIC;
	ALTER ROLE oscar SET search_path = oscar_evil, evil, public, pg_catalog;
});
$node->safe_psql('appdb', q{
	GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO oscar;
	GRANT SELECT ON ALL TABLES IN SCHEMA public TO oscar;
});

$node->safe_psql('appdb', q{
	SET ROLE mallory;
	GRANT USAGE ON SCHEMA evil TO PUBLIC;
	ALTER DATABASE appdb SET search_path = evil, public, pg_catalog;
	ALTER DATABASE appdb SET default_transaction_read_only = on;
	ALTER DATABASE appdb SET lock_timeout = '1ms';
	ALTER DATABASE appdb SET statement_timeout = '50ms';
});
# The test's own queries in appdb, out of the traps' way: only pg_catalog on
# the path, everything else named by schema.
sub admin_sql
{
	my ($sql) = @_;
	return $node->safe_psql('appdb', 'SET default_transaction_read_only = off; '
		  . 'SET statement_timeout = 0; SET search_path = pg_catalog; ' . $sql);
}

# Wait until QUERY (of admin_sql) returns 't'.
sub admin_poll
{
	my ($query) = @_;
	for (1 .. $PostgreSQL::Test::Utils::timeout_default * 10)
	{
		return 1 if admin_sql($query) eq 't';
		select(undef, undef, undef, 0.1);
	}
	return 0;
}

# The traps work: unqualified SQL run by a superuser in appdb falls into them.
$node->safe_psql('appdb', 'SET default_transaction_read_only = off; SELECT now(), 1::int8 / 2::numeric');
is(admin_sql("SELECT count(*) > 0 FROM public.trap_log WHERE ran_as = 'postgres'::name"), 't',
	'control: an unqualified now() of a superuser in appdb runs a trap');
admin_sql('DELETE FROM public.trap_log; ALTER ROLE mallory NOSUPERUSER');

# Every function and view of the extension, as CALLER, with the search_path
# the database or role gives (the session sets only what its own statements
# need), on SERVER (the primary unless given).  The calls name the extension's functions and views by schema, as
# anyone must whose search_path an untrusted role chose; the arguments are
# plain values: what runs inside is the extension's own SQL.
sub session_sql
{
	my ($caller, $sql, $server) = @_;
	my $prefix = 'SET default_transaction_read_only = off; SET statement_timeout = 0; ';
	$prefix .= $caller eq 'oscar'
	  ? 'SET ROLE oscar; SET search_path = oscar_evil, evil, public, pg_catalog; '
	  : '';
	my ($rc, $out, $err) = ($server // $node)->psql('appdb', $prefix . $sql);
	return ($rc, $out, $err);
}

# The history file of a promoted standby (sb_standby_history.c) with the row
# of backup 10^15 + N in it, kept (no retention run here may look for it).
sub standby_row
{
	my ($n) = @_;
	my $id = 1000000000000000 + $n;
	my $dir = $node->data_dir . '/pg_stripebackup';
	mkdir $dir;
	append_to_file("$dir/standby_history.jsonl",
		qq({"id": $id, "status": "completed", "name": "on-standby-$n", "label": null, )
		  . qq("started_at": "2026-01-01T00:00:00+00:00", "destinations": ["$dests[0]"], "weights": [1], )
		  . qq("compression": "zstd", "compression_level": 1, "balance": "adaptive", "requested_by": "postgres", )
		  . qq("worker_pid": 1, "backup_uuid": null, "type": "full", "parent_id": null, "merged_from": null, )
		  . qq("encrypted": false, "keep": true, "note": null, "redundancy": 0, "finished_at": "2026-01-01T00:01:00+00:00", )
		  . qq("stripes": [{"backup_id": $id, "stripe": 1, "destination": "$dests[0]", "weight": 1, "chunks": 1, )
		  . qq("raw_bytes": 8192, "stored_bytes": 100, "seconds": 0.5}]}\n));
}

sub call_everything
{
	my ($caller) = @_;
	my $dests = sql_array(@dests);
	my $target = "$base/restore-$caller";
	my $target2 = "$base/restore2-$caller";
	# the newest backup taken here (not one standby_row() wrote)
	my $last = sub { admin_sql('SELECT max(id) FROM public.stripe_backup_history WHERE id < 1e15') };
	my $last_completed = sub {
		admin_sql("SELECT max(id) FROM public.stripe_backup_history WHERE status = 'completed' AND id < 1e15");
	};
	my $location = sub {
		admin_sql('SELECT location FROM public.stripe_backups WHERE id < 1e15 ORDER BY id DESC LIMIT 1');
	};
	my @calls = (
		sub { "SELECT public.stripe_calibrate(ARRAY['$dests[0]'], size_mb => 4)" },
		sub {
			# a row this server kept while it was a standby: the next backup's worker imports it
			standby_row($caller eq 'postgres' ? 1 : 2);
			"SELECT public.stripe_backup($dests)";
		},
		sub { "SELECT public.stripe_backup($dests, compression => 'none', balance => 'weighted')" },
		sub { "SELECT public.stripe_backup($dests, type => 'incr')" },
		sub { "SELECT public.stripe_backup($dests, type => 'diff')" },
		sub { 'SELECT public.stripe_merge(' . $last->() . ')' },
		sub { "SELECT public.stripe_backup($dests, type => 'incr')" },
		sub { 'SELECT public.stripe_merge(' . $last->() . ', redundancy => 1)' },
		sub { "SELECT public.stripe_backup($dests, redundancy => 1)" },
		sub {
			# its last stripe lost, then written again elsewhere and recorded there
			my $id = $last->();
			my $name = admin_sql("SELECT name FROM public.stripe_backup_history WHERE id = $id");
			my $new = "$base/rebuilt-$caller";
			File::Path::rmtree("$dests[-1]/$name");
			File::Path::make_path($new);
			"SELECT * FROM public.stripe_rebuild($id, '$dests[-1]', '$new')";
		},
		sub { 'SELECT * FROM public.stripe_backups' },
		sub { 'SELECT * FROM public.stripe_backup_stripes' },
		sub { 'SELECT * FROM public.stripe_backup_timeline' },
		sub { 'SELECT * FROM public.stripe_backup_progress' },
		sub { 'SELECT * FROM public.stripe_throughput' },
		sub { 'SELECT * FROM public.stripe_calibrations' },
		sub { 'SELECT * FROM public.stripe_wal_archive' },
		sub { 'SELECT public.stripe_backup_svg(' . $last->() . ')' },
		sub { 'SELECT * FROM public.stripe_restore_plan(' . $last->() . '::int8)' },
		sub { "SELECT * FROM public.stripe_restore_plan('" . $location->() . "', detail => true)" },
		sub { 'SELECT * FROM public.stripe_verify(' . $last->() . '::int8)' },
		sub { "SELECT * FROM public.stripe_verify('" . $location->() . "'::text)" },
		sub { 'SELECT public.stripe_restore(' . $last->() . "::int8, '$target')" },
		sub { "SELECT public.stripe_restore('" . $location->() . "'::text, '$target2')" },
		sub { 'SELECT public.stripe_restore(' . $last->() . "::int8, '$target-standby', standby => true,"
			  . " primary_conninfo => 'host=nowhere', primary_slot_name => 'slot_x')" },
		sub { 'SELECT public.stripe_restore(' . $last->() . "::int8, '$target-standby', delta => true)" },
		sub { 'SELECT * FROM public.stripe_restore_plan(' . $last->() . "::int8, delta_target => '$target-standby')" },
		sub { 'SELECT * FROM public.stripe_restore_plan(' . $last->() . '::int8)' },
		sub { 'SELECT * FROM public.stripe_restore_plan(' . $last->() . "::int8, target_time => '2100-01-01 00:00+00')" },
		sub { "SELECT public.stripe_restore(target_dir => '$target-immediate', target => 'immediate')" },
		sub { "SELECT public.stripe_restore(target_dir => '$target-time', target_time => '2100-01-01 00:00+00')" },
		sub { 'SELECT * FROM public.stripe_restores' },
		sub { 'SELECT * FROM public.stripe_restore_stripes' },
		sub { "SELECT public.stripe_backup($dests, wait => false)" },
		sub { 'SELECT public.stripe_cancel(' . $last->() . ')' },
		sub { 'SELECT public.stripe_cancel_restore(0)' },
		sub { "SELECT public.stripe_job_is_running('backup', 1)" },
		sub { 'SELECT public.stripebackup_version()' },
		sub { "SELECT * FROM public.stripe_check(timeout => '30 s')" },
		sub { 'SELECT * FROM public.stripe_health' },
		sub { 'SELECT public.stripe_keep(' . $last_completed->() . ", note => 'kept')" },
		sub { "SELECT * FROM public.stripe_expire(recovery_window => '1 day', keep_full => 1)" },
		sub { 'SELECT * FROM public.stripe_expire(keep_last => 1)' },
		sub { 'SELECT public.stripe_stats_reset()' },
	);
	for my $call (@calls)
	{
		my $sql = $call->();
		my ($rc, $out, $err) = session_sql($caller, $sql);
		ok($rc == 0, "$caller: $sql") or diag($err);
		admin_poll('SELECT count(*) = 0 FROM public.stripe_backup_progress')
		  if $sql =~ /wait => false|stripe_cancel\(/;
	}
}

call_everything('postgres');
call_everything('oscar');
is(admin_sql('SELECT count(*) FROM public.stripe_backup_history h JOIN public.stripe_backup_stripe_history s '
	  . 'ON s.backup_id = h.id WHERE h.id > 1000000000000000'), '2',
	'the rows kept as a standby were imported by the next backups, with their stripes');
ok(!-e $node->data_dir . '/pg_stripebackup/standby_history.jsonl', 'and their file removed');


# On a hot standby of this database (its traps and settings replicated): the
# statements only a standby runs (its parent, its retention, its rows left
# running) and the views over its file.  A trap there cannot log to a table
# (read-only): it would fail the call, and it logs a line.
$node->backup('hostile_base');
my $standby = PostgreSQL::Test::Cluster->new('hostile_standby');
$standby->init_from_backup($node, 'hostile_base', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);
my @standby_dests = make_destinations(1);
for my $caller ('postgres', 'oscar')
{
	my $dests = sql_array(@standby_dests);
	for my $sql ("SELECT public.stripe_backup($dests)", "SELECT public.stripe_backup($dests, type => 'incr')",
		'SELECT * FROM public.stripe_expire(keep_last => 1)', 'SELECT * FROM public.stripe_backups',
		'SELECT * FROM public.stripe_backup_stripes', 'SELECT * FROM public.stripe_health')
	{
		my ($rc, $out, $err) = session_sql($caller, $sql, $standby);
		ok($rc == 0, "on the standby, $caller: $sql") or diag($err);
	}
}
unlike(slurp_file($standby->logfile), qr/stripebackup trap/, 'no planted object ran on the standby');
$standby->stop;

# The start-up clean-up runs its statements in appdb too.
admin_sql(q{
	UPDATE public.stripe_backup_history SET status = 'running'
	WHERE id = (SELECT min(id) FROM public.stripe_backup_history)
	   OR id = (SELECT max(id) FROM public.stripe_backup_history WHERE merged_from IS NOT NULL);
});
$node->restart;
ok(admin_poll("SELECT count(*) = 0 FROM public.stripe_backup_history WHERE status = 'running'"),
	'the start-up clean-up marked the row left running');

my $trapped = admin_sql(
	"SELECT string_agg(DISTINCT ran_as::text || ': ' || what, '; ') FROM public.trap_log "
	  . "WHERE ran_as NOT IN ('mallory'::name, 'oscar'::name)");
is($trapped, '', 'no planted object ran with any privileges but its owner\'s');
unlike(slurp_file($node->logfile), qr/retention after the backup failed/,
	'retention after each backup ran in the workers without an error');
is($node->safe_psql('postgres', "SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'"), 'f',
	'mallory is not a superuser');
is($node->safe_psql('postgres', "SELECT rolsuper FROM pg_roles WHERE rolname = 'oscar'"), 'f',
	'oscar is not a superuser');
done_testing();
