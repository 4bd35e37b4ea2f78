# CREATE EXTENSION stripebackup loads the library and its SQL script.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('ext');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION stripebackup');
my ($version) = `stripebackup --version` =~ /stripebackup (\S+)/;
is($node->safe_psql('postgres', 'SELECT stripebackup_version()'), $version,
	'the library and the command are the same version');
$node->safe_psql('postgres', 'DROP EXTENSION stripebackup');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_extension WHERE extname = 'stripebackup'"),
	'0', 'DROP EXTENSION removes it');
$node->stop;
done_testing();
