# Tablespaces at any path (issue 42): a tablespace at ".../tbl=spc" is
# relocated with "\=" for the "=" of a path in OLD and NEW, from SQL and
# from the command (one parser); the errors name the caller's spelling
# (tablespace_mapping in SQL, --tablespace-mapping in the command); the
# missing parents of the target and of a mapped place are made, mode 0700,
# as pg_basebackup makes them.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use StripeBackupTest;
use Test::More;

my $base = PostgreSQL::Test::Utils::tempdir();
my $tblspc = "$base/tbl=spc";
mkdir($tblspc) or die "mkdir $tblspc: $!";
my $node = backup_node('primary');
$node->safe_psql('postgres', "CREATE TABLESPACE spc LOCATION '$tblspc'");
$node->safe_psql('postgres', 'CREATE TABLE t TABLESPACE spc AS SELECT g, md5(g::text) AS h FROM generate_series(1, 5000) g');
my $expected = $node->safe_psql('postgres', 'SELECT count(*), sum(hashtext(h)) FROM t');
my @dests = make_destinations(1);
my $backup = $node->safe_psql('postgres', 'SELECT stripe_backup(' . sql_array(@dests) . ')');
my $location = backup_location($node, $backup);
(my $old = $tblspc) =~ s/=/\\=/g;

sub mode_of { return sprintf('%04o', (stat($_[0]))[2] & 07777) }

# SQL: the target and the mapped place below folders that are not there yet.
my $copy = PostgreSQL::Test::Cluster->new('by_sql');
my $copy_dir = "$base/new/parents/copy";
my $moved = "$base/moved/a=b/tbl=spc";
(my $new = $moved) =~ s/=/\\=/g;
my ($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore($backup, '$copy_dir', tablespace_mapping => ARRAY['$old=$new'])");
is($rc, 0, 'SQL: OLD and NEW with "\\=" for their "="') or diag($err);
my $oid = $node->safe_psql('postgres', "SELECT oid FROM pg_tablespace WHERE spcname = 'spc'");
is(readlink("$copy_dir/pg_tblspc/$oid"), $moved, 'the tablespace\'s link points to NEW, its "=" read back');
is(join(' ', map { mode_of($_) } "$base/new", "$base/new/parents", "$base/moved", "$base/moved/a=b"),
	'0700 0700 0700 0700', 'the missing parents of the target and of the place made, mode 0700');
is(mode_of($copy_dir), '0700', 'the target too');
# started as a node of the test (its data directory moved where the node has it)
rename($copy_dir, $copy->data_dir) or die "cannot move $copy_dir: $!";
$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
$copy->start;
is($copy->safe_psql('postgres', 'SELECT count(*), sum(hashtext(h)) FROM t'), $expected,
	'the copy starts and reads the table in the moved tablespace');
is($copy->safe_psql('postgres', "SELECT pg_tablespace_location($oid)"), $moved, 'at its new place');
$copy->stop;

# SQL errors: the argument's name, nothing created.
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore($backup, '$base/never/copy', tablespace_mapping => ARRAY['$tblspc=$base/never/ts'])");
like($err, qr/tablespace_mapping "\Q$tblspc=$base\E\/never\/ts" has more than one "="/,
	'SQL: an "=" of a path left unescaped is refused, named as the argument');
unlike($err, qr/--tablespace-mapping/, 'not as the command\'s option');
($rc, $out, $err) = $node->psql('postgres',
	"SELECT stripe_restore($backup, '$base/never/copy', tablespace_mapping => ARRAY['$base/elsewhere=$base/never/ts'])");
like($err, qr/tablespace_mapping "\Q$base\E\/elsewhere=\Q$base\E\/never\/ts": no tablespace of this backup is at/,
	'SQL: a mapping of no tablespace, named as the argument');
ok(!-e "$base/never", 'nothing created');

# The command: the same parser, its own option's name.
my $by_command = restore_node('by_command', $location, '--tablespace-mapping',
	"$old=$base/cmd/t\\=s");
is(readlink($by_command->data_dir . "/pg_tblspc/$oid"), "$base/cmd/t=s", 'the command: relocated to NEW, "\\=" read');
is(mode_of("$base/cmd"), '0700', 'its missing parent made, mode 0700');
$by_command->start;
is($by_command->safe_psql('postgres', 'SELECT count(*), sum(hashtext(h)) FROM t'), $expected,
	'the command\'s copy starts and reads the table');
$by_command->stop;
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', "$base/never/copy",
	'--tablespace-mapping', "$tblspc=$base/never/ts");
is($rc, 2, 'the command: an unescaped "=" of a path refused');
like($err, qr/--tablespace-mapping "\Q$tblspc=$base\E\/never\/ts" has more than one "="/, 'named as the option');
($rc, $out, $err) = run_stripebackup('restore', $location, '--target', "$base/never/copy",
	'--tablespace-mapping', "$old=relative");
like($err, qr/--tablespace-mapping ".*" is not of the form OLD=NEW with OLD and NEW absolute paths/,
	'a relative NEW: refused, the form said');
ok(!-e "$base/never", 'nothing created');

$node->stop;
done_testing();
