# StripeBackupTest: what the end-to-end tests share.
package StripeBackupTest;

use strict;
use warnings;

use Exporter 'import';
use File::Path ();
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(make_destinations load_sample_data sample_data_fingerprint run_stripebackup
  backup_node restore_node sql_array backup_location load_slow_data worker_pid folder_entries
  check_backup_cleaned_up check_next_backup start_slow_backup wait_for_stripe pgbench_invariant
  damage_page archiving_conf wait_for_archive archived_segment_target promote_archiving_copy
  expected_incremental_method check_incremental_method server_io wait_for_server_idle);

# Create N empty destination folders under a fresh temporary directory.
sub make_destinations
{
	my ($n) = @_;
	my $base = PostgreSQL::Test::Utils::tempdir();
	my @dests;
	for my $i (1 .. $n)
	{
		my $d = "$base/dest$i";
		mkdir $d or die "mkdir $d: $!";
		push @dests, $d;
	}
	return @dests;
}

# Tables, indexes, a second database, TOAST and a sequence: enough variety
# that a bad restore shows in the fingerprint below.
sub load_sample_data
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
		CREATE TABLE items (id int PRIMARY KEY, name text, payload bytea);
		INSERT INTO items
			SELECT g, md5(g::text), decode(repeat(md5(g::text), 1 + g % 40), 'hex')
			FROM generate_series(1, 100000) g;
		CREATE INDEX items_name ON items (name);
		CREATE TABLE wide (id serial, doc text);
		INSERT INTO wide (doc) SELECT repeat(md5(g::text), 500) FROM generate_series(1, 300) g;
		CREATE DATABASE other;
	});
	$node->safe_psql('other', q{
		CREATE TABLE notes AS SELECT g AS id, 'note ' || g AS body FROM generate_series(1, 5000) g;
	});
	$node->command_ok([ 'pgbench', '-i', '-s', '1', '-q', '-p', $node->port, '-h', $node->host, 'postgres' ],
		'pgbench tables loaded');
}

# One line of query results that changes if any row or index entry does.
sub sample_data_fingerprint
{
	my ($node) = @_;
	my $main = $node->safe_psql('postgres', q{
		SELECT count(*), sum(hashtext(name)), sum(length(payload)),
		       (SELECT sum(hashtext(doc)) FROM wide),
		       (SELECT sum(abalance) FROM pgbench_accounts),
		       (SELECT count(*) FROM items WHERE name = md5('4242')),
		       (SELECT last_value FROM wide_id_seq)
		FROM items
	});
	my $other = $node->safe_psql('other', 'SELECT count(*), sum(hashtext(body)) FROM notes');
	return "$main|$other";
}

# A started cluster with data checksums, stripebackup preloaded and created.
sub backup_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(extra => ['--data-checksums'], allows_streaming => 1);
	my $preload = 'stripebackup' . ($opts{cron} ? ',pg_cron' : '');
	$node->append_conf('postgresql.conf', "shared_preload_libraries = '$preload'");
	$node->append_conf('postgresql.conf', $opts{conf}) if $opts{conf};
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION stripebackup');
	return $node;
}

# The settings that archive WAL into the destinations given, with the archive module.
sub archiving_conf
{
	return "archive_mode = on\narchive_library = 'stripebackup'\n"
	  . "stripebackup.archive_destinations = '" . join(', ', @_) . "'\n";
}

# Wait until NODE has archived the segment before its current insert position.
sub wait_for_archive
{
	my ($node) = @_;
	my $segment = archived_segment_target($node);
	$node->poll_query_until('postgres', "SELECT last_archived_wal >= '$segment' FROM pg_stat_archiver")
	  or die $node->name . " does not archive (waiting for $segment): "
	  . $node->safe_psql('postgres', 'SELECT last_archived_wal, failed_count, last_failed_wal FROM pg_stat_archiver');
}

# The segment NODE has to archive for everything written so far to be in the
# archive, completed now if need be.  Not the one holding
# pg_current_wal_lsn() - 1: any record written after the caller's switch
# (the background writer's every 15 s, a checkpoint) puts that in a segment
# nothing completes, and a wait for it never ends.  pg_switch_wal() returns
# the end of the segment it completed, or, with nothing written since the
# last switch, the start of the segment in use: one byte before either is
# in the segment to wait for.
sub archived_segment_target
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal() - 1)');
}

# The trap of issue 42: a copy of NODE restored to TIME (its newest backup,
# by stripe_restore) with archive_mode => 'keep', started, promoted, written
# to (INSERT INTO marks VALUES (200)) and stopped once it has archived: its
# timeline into NODE's archive.  The copy, a PostgreSQL::Test::Cluster NAME.
sub promote_archiving_copy
{
	my ($node, $time, $name) = @_;
	my $copy = PostgreSQL::Test::Cluster->new($name);
	$node->safe_psql('postgres', "SELECT stripe_restore(target_dir => '" . $copy->data_dir
		  . "', target_time => '$time', archive_mode => 'keep')");
	$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die "$name did not promote";
	$copy->safe_psql('postgres', 'INSERT INTO marks VALUES (200); SELECT pg_switch_wal()');
	wait_for_archive($copy);
	$copy->stop;
	return $copy;
}

# ARRAY['a','b'] for SQL.
sub sql_array
{
	return 'ARRAY[' . join(',', map { "'$_'" } @_) . ']';
}

# The backup folder of backup ID in its first destination.
sub backup_location
{
	my ($node, $id) = @_;
	return $node->safe_psql('postgres', "SELECT location FROM stripe_backups WHERE id = $id");
}

# Restore LOCATION with the command into a new node's data directory, check
# it with PostgreSQL's pg_verifybackup, and give the node its own port;
# extra command arguments may follow.
sub restore_node
{
	my ($name, $location, @extra) = @_;
	my $copy = PostgreSQL::Test::Cluster->new($name);
	my ($rc, $out, $err) = run_stripebackup('restore', $location, '--target', $copy->data_dir, @extra);
	is($rc, 0, "restore of $location as $name") or diag($err);
	PostgreSQL::Test::Utils::command_ok([ 'pg_verifybackup', $copy->data_dir ],
		"pg_verifybackup accepts the restored $name");
	$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
	return $copy;
}

# 't' when pgbench's balances agree with each other and with its history,
# as every committed transaction of pgbench's leaves them.
sub pgbench_invariant
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SELECT (SELECT sum(bbalance) FROM pgbench_branches) = (SELECT sum(tbalance) FROM pgbench_tellers)
		   AND (SELECT sum(tbalance) FROM pgbench_tellers) = (SELECT sum(abalance) FROM pgbench_accounts)
		   AND (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)});
}

# Run the stripebackup command; returns (exit status, stdout, stderr).
sub run_stripebackup
{
	my @args = @_;
	my ($stdout, $stderr);
	IPC::Run::run([ 'stripebackup', @args ], '>', \$stdout, '2>', \$stderr);
	return ($? >> 8, $stdout, $stderr);
}

# About 30 MB of text (74 MB of cluster): at zstd level 19, or at
# stripebackup.max_rate, a backup of it takes seconds, long enough to break.
sub load_slow_data
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
		CREATE TABLE slow AS
			SELECT g, md5(g::text) || md5((g * 7)::text) || md5((g * 13)::text) AS v
			FROM generate_series(1, 250000) g;
	});
}

# The pid of the running backup or restore worker, once it is there.
sub worker_pid
{
	my ($node) = @_;
	my $query = "SELECT pid FROM pg_stat_activity WHERE backend_type = 'stripebackup'";
	$node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($query) w")
	  or die 'no stripebackup worker is running';
	return $node->safe_psql('postgres', $query);
}

# Four bytes flipped in the middle of block BLOCK of the file at PATH (the
# server stopped), away from the page header: its checksum no longer matches.
sub damage_page
{
	my ($path, $block) = @_;
	open my $fh, '+<', $path or die "$path: $!";
	binmode $fh;
	seek($fh, $block * 8192 + 4000, 0) or die "$path: $!";
	print $fh "\xde\xad\xbe\xef";
	close $fh or die "$path: $!";
	return;
}

# The names in DIR (none when DIR does not exist).
sub folder_entries
{
	my ($dir) = @_;
	opendir(my $dh, $dir) or return ();
	my @names = sort grep { !/^\.\.?$/ } readdir $dh;
	closedir $dh;
	return @names;
}

# Backup ID stopped: its history row says STATUS (a pattern) with an error matching
# ERROR_RE, no destination holds anything of it, no WAL slot is left.
sub check_backup_cleaned_up
{
	my ($node, $id, $status, $error_re, @dests) = @_;
	my ($got, $error) = split /\|/, $node->safe_psql('postgres',
		"SELECT status, error FROM stripe_backup_history WHERE id = $id"), 2;
	like($got, qr/^(?:$status)$/, "backup $id is recorded as $status");
	like($error, $error_re, "backup ${id}'s history row gives the reason");
	for my $d (@dests)
	{
		is(join(' ', folder_entries($d)), '', "nothing of backup $id is left in $d");
	}
	is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_replication_slots'), '0',
		"backup ${id}'s WAL slot is dropped");
}

# The next backup over DESTS completes (so backup mode was ended); its
# folders are removed again, so the destinations are left empty.
sub check_next_backup
{
	my ($node, @dests) = @_;
	my $id = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
	is($node->safe_psql('postgres', "SELECT status FROM stripe_backup_history WHERE id = $id"),
		'completed', 'the next backup completes');
	my $name = $node->safe_psql('postgres', "SELECT name FROM stripe_backup_history WHERE id = $id");
	File::Path::rmtree("$_/$name") for @dests;
	return $id;
}

# Start an uncompressed backup of the slow data (load_slow_data) to DESTS at
# 4 MB/s per destination: about ten seconds.  Returns its id at once.
sub start_slow_backup
{
	my ($node, @dests) = @_;
	return $node->safe_psql('postgres', 'SET stripebackup.max_rate = 4; SELECT stripe_backup('
		  . sql_array(@dests) . ", compression => 'none', wait => false)");
}

# The stripe file of backup ID in DEST, once it holds MB megabytes.
sub wait_for_stripe
{
	my ($node, $id, $dest, $mb) = @_;
	my $name = $node->safe_psql('postgres', "SELECT name FROM stripe_backup_history WHERE id = $id");
	for (1 .. $PostgreSQL::Test::Utils::timeout_default * 10)
	{
		my ($stripe) = glob("$dest/$name/stripe-*.sbs");
		return $stripe if defined $stripe && -s $stripe >= $mb * 1024 * 1024;
		select(undef, undef, undef, 0.1);
	}
	die "backup $id writes nothing to $dest";
}

# How NODE's diff and incr backups must find their changed blocks, read from
# the server's settings (not from what the backups recorded, so a run meant
# for one method cannot pass with the other): from WAL summaries
# ("wal_summaries") when it summarizes WAL, PostgreSQL 17+ with
# summarize_wal on; else by every page's LSN ("page_lsn").
# A run meant for one method (test/run-version.sh's second run, with
# summarize_wal on) names it in SB_TEST_INCREMENTAL_METHOD: a server set
# otherwise is an error of the run, not a pass with the other method.
sub expected_incremental_method
{
	my ($node) = @_;
	my $method = 'page_lsn';
	$method = 'wal_summaries'
	  if $node->safe_psql('postgres', 'SHOW server_version_num') >= 170000
	  && $node->safe_psql('postgres', 'SHOW summarize_wal') eq 'on';
	my $want = $ENV{SB_TEST_INCREMENTAL_METHOD};
	die "this run is for incremental_method $want, but node " . $node->name . "'s settings choose $method"
	  if $want && $want ne $method;
	return $method;
}

# That backup ID of NODE recorded METHOD in stripe_backups.incremental_method
# ("none": no method, a full backup).  On a mismatch, the server's LOG lines
# saying why summaries were not used.
sub check_incremental_method
{
	my ($node, $id, $method, $what) = @_;
	my $got = $node->safe_psql('postgres',
		"SELECT coalesce(incremental_method, 'none') FROM stripe_backups WHERE id = $id");
	is($got, $method, "$what: changed blocks found by $method")
	  or diag(join('', grep { /are found by reading every page/ } split /^/, slurp_file($node->logfile)));
}

# NODE's postmaster and its children: pid => process title ('' for a child
# that exited and is not reaped yet), read from /proc.
sub server_processes
{
	my ($node) = @_;
	open my $fh, '<', $node->data_dir . '/postmaster.pid' or die $node->name . " postmaster.pid: $!";
	my $postmaster = <$fh> + 0;
	close $fh;
	my %procs = ($postmaster => 'postmaster');
	for my $stat (glob '/proc/[0-9]*/stat')
	{
		open my $sf, '<', $stat or next;
		my $line = <$sf> // '';
		close $sf;
		# pid (comm) state ppid ...: comm may hold spaces and parentheses
		next unless $line =~ /^(\d+) \(.*\) \S+ (\d+) / && $2 == $postmaster;
		my $pid = $1;
		my $title = -r "/proc/$pid/cmdline" ? slurp_file("/proc/$pid/cmdline") : '';
		$title =~ s/\0+/ /g;
		$title =~ s/\s+$//;
		$procs{$pid} = $title;
	}
	return \%procs;
}

# What NODE's processes (server_processes) have read so far, from
# /proc/PID/io: pid => [rchar, read_bytes, process title]; undef when the
# postmaster's is not readable.  A child's counts join the postmaster's when
# it is reaped: before a first reading, wait_for_server_idle, so that no
# backend of an earlier query is reaped between two readings.
sub server_io
{
	my ($node) = @_;
	my $procs = server_processes($node);
	my %io;
	for my $pid (keys %$procs)
	{
		open my $fh, '<', "/proc/$pid/io" or do
		{
			return undef if $procs->{$pid} eq 'postmaster';
			next;	# gone meanwhile
		};
		my %f = map { /^(\w+): (\d+)/ ? ($1, $2) : () } <$fh>;
		close $fh;
		$io{$pid} = [ $f{rchar} // 0, $f{read_bytes} // 0, $procs->{$pid} ];
	}
	return \%io;
}

# Until NODE runs no backend (nothing but its auxiliary processes and
# walsenders), the last query's reaped.
sub wait_for_server_idle
{
	my ($node) = @_;
	my $aux = qr/^postmaster$|: (?:checkpointer|background writer|walwriter|autovacuum launcher|logical replication launcher|walsender|archiver|walreceiver|startup|walsummarizer|io worker \d+)/;
	for (1 .. $PostgreSQL::Test::Utils::timeout_default * 10)
	{
		return unless grep { !/$aux/ } values %{ server_processes($node) };
		select(undef, undef, undef, 0.1);
	}
	die $node->name . ' runs backends still: ' . join(', ', grep { !/$aux/ } values %{ server_processes($node) });
}

1;
