# A tree of 100,000 small files round trips through the command (create,
# verify, plan, restore), and no command's memory grows with the file count
# past its budget: the chunk buffers (16 x 1 MiB by default) plus 64 MiB.
# Verify and restore hold a window of files, plan --detail one file at a
# time, not the file table: against a backup of one file of the same chunks,
# 100,000 files more cost them 16 MiB at most.  The files' names are long
# (some 185 characters) so that a table of them would cost some 26 MiB:
# what is measured without one (1-9 MiB more, from run to run and under
# load) and what one would add stay far apart on either side of the ceiling.
# The same 100,000 files put in a cluster's data directory do not grow the
# memory of the server's backup worker either, nor, for a chain of a full
# and an incremental backup, of its restore, verify and merge.  A million files is the
# benchmark's (issue "Millions of files").
use strict;
use warnings;

use File::Path qw(rmtree);

use Digest::MD5;
use File::Find;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $budget_kib = (16 + 64) * 1024;

# Every file's path and contents, in one digest.
sub tree_digest
{
	my ($root) = @_;
	my @files;
	find({ wanted => sub { push @files, $File::Find::name if -f $_ }, no_chdir => 1 }, $root);
	my $md5 = Digest::MD5->new;
	for my $f (sort @files)
	{
		open(my $in, '<', $f) or die "$f: $!";
		binmode $in;
		(my $rel = $f) =~ s/^\Q$root\E//;
		$md5->add($rel, "\0");
		$md5->addfile($in);
		close $in;
	}
	return (scalar @files, $md5->hexdigest);
}

# Run the command under GNU time: (exit status, peak RSS in KiB, stderr).
sub run_measured
{
	my @args = @_;
	my ($out, $err);
	IPC::Run::run([ '/usr/bin/time', '-f', 'peak-rss-kib %M', 'stripebackup', @args ],
		'>', \$out, '2>', \$err);
	my $rc = $? >> 8;
	my ($rss) = $err =~ /peak-rss-kib (\d+)/;
	return ($rc, $rss // 0, $err);
}

# 100 folders of 1,000 small files under ROOT, each named with some 185
# characters: a table of them (each path kept) costs some 26 MiB (the
# archive opened alone: 39.7 MiB with its entries kept, 13.6 streamed), far
# above what a window of them costs and what a peak RSS moves from run to run.
sub make_tree
{
	my ($root) = @_;
	my $long = 'a-file-name-long-enough-that-a-table-of-100000-of-them-shows-' x 3;
	mkdir $root or die $!;
	for my $d (0 .. 99)
	{
		mkdir "$root/$d" or die $!;
		for my $f (0 .. 999)
		{
			open(my $out, '>', "$root/$d/$long$f") or die $!;
			print $out "$d/$f\n" x (1 + $f % 16);
			close $out or die $!;
		}
	}
}

# A 20 MB text file at PATH: every chunk buffer used, and compressed.
sub write_big_file
{
	my ($path) = @_;
	open(my $out, '>', $path) or die "$path: $!";
	print $out "line $_ of the big file, " . ($_ * 7919 % 1000003) . "\n" for 1 .. 600_000;
	close $out or die $!;
}

my $base = PostgreSQL::Test::Utils::tempdir();
my $source = "$base/source";
make_tree($source);
write_big_file("$source/big");
my ($count, $digest) = tree_digest($source);
is($count, 100_001, 'the source holds 100,000 small files and a big one');

my @dests = make_destinations(2);
my $location = "$dests[0]/many";
my %steps = (
	create => [ 'create', '--source', $source, '--dest', $dests[0], '--dest', $dests[1],
		'--name', 'many', '--no-progress' ],
	verify => [ 'verify', $location ],
	plan => [ 'plan', $location ],
	restore => [ 'restore', $location, '--target', "$base/restored", '--no-progress' ],);
for my $step (qw(create verify plan restore))
{
	my ($rc, $rss, $err) = run_measured(@{ $steps{$step} });
	is($rc, 0, "$step of 100,000 files succeeds") or diag($err);
	ok($rss > 0 && $rss <= $budget_kib,
		sprintf('%s: peak RSS %.1f MiB, within %d MiB', $step, $rss / 1024, $budget_kib / 1024));
}
is_deeply([ tree_digest("$base/restored") ], [ $count, $digest ],
	'the restored tree is the source, file for file and byte for byte');

# The least peak RSS (KiB) of two runs of the command with ARGS, each of
# which must succeed (a restore's target is removed after each); 0 if one failed.
sub least_rss
{
	my ($args) = @_;
	my ($target) = map { $args->[ $_ + 1 ] } grep { $args->[$_] eq '--target' } 0 .. $#$args;
	my $least;
	for (1 .. 2)
	{
		my ($rc, $rss, $err) = run_measured(@$args);
		rmtree($target) if defined $target;
		if ($rc != 0)
		{
			diag("stripebackup @$args: $err");
			return 0;
		}
		$least = $rss if !defined $least || $rss < $least;
	}
	return $least;
}

# The same big file alone: the memory of the same chunks, without the files.
mkdir "$base/one" or die $!;
write_big_file("$base/one/big");
my ($one_rc) = run_measured('create', '--source', "$base/one", '--dest', $dests[0], '--dest', $dests[1], '--name', 'one',
	'--no-progress');
is($one_rc, 0, 'a backup of the big file alone');
my %alone = (
	verify => [ [ 'verify', "$dests[0]/one" ], $steps{verify} ],
	restore => [ [ 'restore', "$dests[0]/one", '--target', "$base/one-restored", '--no-progress' ],
		[ 'restore', $location, '--target', "$base/restored-again", '--no-progress' ] ],
	'plan --detail' => [ [ 'plan', "$dests[0]/one", '--detail' ], [ 'plan', $location, '--detail' ] ]);
for my $step ('verify', 'restore', 'plan --detail')
{
	my @one = @{ $alone{$step}[0] };
	my @many = @{ $alone{$step}[1] };
	# the least of two runs each: which threads touch which malloc arenas first
	# moves a peak RSS by up to a MiB from run to run, only ever upwards
	my $one_rss = least_rss(\@one);
	my $many_rss = least_rss(\@many);
	ok($one_rss > 0 && $many_rss > 0 && $many_rss - $one_rss <= 16 * 1024,
		sprintf('%s: 100,000 files more cost %.1f MiB (%.1f -> %.1f), 16 MiB at most',
			$step, ($many_rss - $one_rss) / 1024, $one_rss / 1024, $many_rss / 1024));
}

# The backup worker: its peak memory (which it logs as it ends) for the
# cluster as it is, then with the 100,000 files in its data directory.
my $node = backup_node('many');
my @server_dests = make_destinations(2);

# The worker of the job CALL starts (a backup by default): its id and peak memory.
sub worker_peak_mib
{
	my ($call) = @_;
	my $offset = -s $node->logfile;
	my $id = $node->safe_psql('postgres', $call // 'SELECT stripe_backup(' . sql_array(@server_dests) . ')');
	my $log = slurp_file($node->logfile, $offset);
	my ($mib) = $log =~ /stripebackup: backup $id completed \(peak memory (\d+) MiB\)/;
	ok(defined $mib, "backup $id logs the worker's peak memory") or diag($log);
	return ($id, $mib // 1e9);
}
my ($small_id, $small_mib) = worker_peak_mib();
# a merge of the cluster as it is, for its worker's memory: a restore's and a backup's
my ($small_incr_id) = worker_peak_mib('SELECT stripe_backup(' . sql_array(@server_dests) . ", type => 'incr')");
my (undef, $small_merge_mib) = worker_peak_mib("SELECT stripe_merge($small_incr_id)");
make_tree($node->data_dir . '/many');
my ($many_id, $many_mib) = worker_peak_mib();
ok($many_mib - $small_mib <= 16,
	"100,000 files more grow the backup worker's peak memory by 16 MiB at most ($small_mib -> $many_mib MiB)");
cmp_ok($node->safe_psql('postgres', "SELECT files FROM stripe_backups WHERE id = $many_id"),
	'>', 100_000, "the history counts the files of the worker's spilled table");
my ($rc) = run_measured('verify', backup_location($node, $many_id));
is($rc, 0, 'the backup of the cluster with 100,000 files more verifies');

# A chain of 100,000 files: an incremental (the files unchanged, each taken
# from the full backup) restored, verified and merged, each backup read a
# window at a time: no more memory than the full backup's.
my ($incr_id, $incr_mib) = worker_peak_mib(
	'SELECT stripe_backup(' . sql_array(@server_dests) . ", type => 'incr')");
ok($incr_mib - $small_mib <= 16,
	"the incremental's worker looks up 100,000 files in its parent within 16 MiB more ($small_mib -> $incr_mib MiB)");
my %chain = (
	full => [ 'restore', backup_location($node, $many_id), '--target', "$base/full-restored", '--no-progress' ],
	chain => [ 'restore', backup_location($node, $incr_id), '--target', "$base/chain-restored", '--no-progress' ]);
my (undef, $full_rss) = run_measured(@{ $chain{full} });
my ($chain_rc, $chain_rss, $chain_err) = run_measured(@{ $chain{chain} });
is($chain_rc, 0, 'the chain restores') or diag($chain_err);
ok($full_rss > 0 && $chain_rss - $full_rss <= 16 * 1024,
	sprintf('the chain restore costs %.1f MiB more than the full backup\'s (%.1f -> %.1f), 16 MiB at most',
		($chain_rss - $full_rss) / 1024, $full_rss / 1024, $chain_rss / 1024));
my @from_full = tree_digest("$base/full-restored/many");
is($from_full[0], 100_000, 'the full backup restores the 100,000 files');
is_deeply([ tree_digest("$base/chain-restored/many") ], \@from_full,
	'the chain restores the same 100,000 files, byte for byte');
my ($chain_verify_rc, $chain_verify_rss) = run_measured('verify', backup_location($node, $incr_id));
ok($chain_verify_rc == 0 && $chain_verify_rss <= $budget_kib,
	sprintf('the chain verifies within %d MiB (%.1f MiB)', $budget_kib / 1024, $chain_verify_rss / 1024));
my ($merged_id, $merged_mib) = worker_peak_mib("SELECT stripe_merge($incr_id)");
# it restores the chain (a window of files, 27 bytes a file of the newest)
# and backs the copy up: 11-17 MiB more from run to run; the tables of the
# chain would cost some 50 MiB more
ok($merged_mib - $small_merge_mib <= 32,
	"the merge's worker holds no file table: 100,000 files more cost it 32 MiB at most ($small_merge_mib -> $merged_mib MiB)");

done_testing();
