# The rules every SQL statement of the extension follows (docs/SECURITY.md),
# checked on the source: no SPI call outside sb_spi.c, and in every statement
# of src/extension/sb_statements.c and every view, function body, default
# and constraint of the extension script, every function, operator, cast
# and relation named by schema.  test/t/060_hostile_database.pl shows the
# same end to end against planted objects.
use strict;
use warnings;

use File::Basename qw(dirname);
use Test::More;

my $root = dirname(__FILE__) . '/../..';
$root = $ENV{SB_SOURCE_DIR} if $ENV{SB_SOURCE_DIR};

sub slurp
{
	my ($path) = @_;
	open my $fh, '<', $path or die "$path: $!";
	local $/;
	return <$fh>;
}

# Words that may stand before "(" without a schema: SQL syntax, not functions.
my %syntax = map { $_ => 1 }
  qw(and or not where in values any all over filter from as coalesce exists case when then
  else select on using with returning set into by partition window conflict);

# What is wrong with one statement's text; empty when it follows the rules.
sub problems
{
	my ($sql) = @_;
	my @found;
	my $s = $sql;
	$s =~ s/'(?:[^']|'')*'/ LITERAL /g;                 # string literals
	$s =~ s/\$\$.*?\$\$/ BODY /gs;
	$s =~ s/\@extschema\@\./EXT_/g;
	$s =~ s/\$\d+/ PARAM /g;
	$s =~ s/--[^\n]*//g;

	# Every cast to a type of pg_catalog (or the row type of the extension's own table).
	while ($s =~ /::\s*(?!pg_catalog\.|EXT_)([\w.]+)/g) { push @found, "cast to unqualified type $1" }
	$s =~ s/::\s*(?:pg_catalog\.|EXT_)\w+(\[\])?/ CAST /g;

	# Every operator in OPERATOR(pg_catalog.x); nothing else looks like one.
	while ($s =~ /OPERATOR\s*\(\s*(?!pg_catalog\.)([^)]*)\)/gi) { push @found, "operator $1 not in pg_catalog" }
	$s =~ s/OPERATOR\s*\(\s*pg_catalog\.[^)\s]+\s*\)/ OP /gi;
	# UPDATE ... SET column = value, ... (or column[subscript] = value): assignments, not operators.
	$s =~ s/(\bSET\b|,)\s*\w+(?:\[\s*PARAM\s*\])?\s*=(?!=)/$1 ASSIGN /gi;
	(my $ops = $s) =~ s/\bcount\s*\(\s*\*\s*\)|\w+\.\*|\(\s*\*\s*\)/ /gi;
	while ($ops =~ m{([-+*/<>=~!@#%^&|`?]+)}g) { push @found, "bare operator \"$1\"" }

	# Every function call qualified by schema.
	while ($s =~ /(?<![\w.])(\w+)\s*\(/g)
	{
		my $word = lc $1;
		next if $syntax{$word} || $word =~ /^(?:op|literal|param|cast|body|assign)$|^ext_/i;
		next if $s =~ /\bAS\s+\Q$1\E\s*\(/i;    # a column alias list
		push @found, "unqualified function $1()";
	}

	# Every relation qualified by schema (a WITH query's own names excepted).
	my %ctes = map { lc($_) => 1 } ($s =~ /(?:\bWITH(?:\s+RECURSIVE)?|,)\s+(\w+)\s+AS\s*\(/gi);
	while ($s =~ /\b(?:FROM|JOIN|INTO|UPDATE)\s+(?!ROWS\b)([\w.]+)/gi)
	{
		my $rel = $1;
		next if $rel =~ /^(?:EXT_|pg_catalog\.)/ || $ctes{ lc $rel } || $rel eq '(';
		push @found, "unqualified relation $rel";
	}
	return @found;
}

# --- no SPI outside sb_spi.c
for my $file (glob "$root/src/extension/*.c")
{
	next if $file =~ m{/sb_spi\.c$};
	my $text = slurp($file);
	unlike($text, qr/\bSPI_\w+\s*\(/, "no SPI call in " . (split m{/}, $file)[-1]);
}

# --- the statements
my $c = slurp("$root/src/extension/sb_statements.c");
my @statements;
while ($c =~ /\{(SB_SQL_\w+),\s*((?:\s*"(?:[^"\\]|\\.)*")+)/g)
{
	my ($id, $literals) = ($1, $2);
	my $sql = join '', ($literals =~ /"((?:[^"\\]|\\.)*)"/g);
	push @statements, [ $id, $sql ];
}
ok(@statements >= 15, scalar(@statements) . ' statements found in sb_statements.c');
for my $st (@statements)
{
	my @p = problems($st->[1]);
	is_deeply(\@p, [], "$st->[0] names everything by schema") or diag($st->[1]);
}

# --- the extension script: views, SQL function bodies, defaults, constraints
for my $script (glob "$root/sql/stripebackup--*.sql")
{
	my $text = slurp($script);
	my @parts;
	push @parts, [ "view $1", $2 ] while $text =~ /CREATE VIEW (\w+) AS(.*?);\n/gs;
	push @parts, [ "body of $1", $2 ] while $text =~ /CREATE FUNCTION (\w+)[^\$]*?AS \$\$(.*?)\$\$/gs;
	push @parts, [ "CHECK", $1 ] while $text =~ /CHECK\s*(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))/gs;
	push @parts, [ "DEFAULT", $1 ] while $text =~ /DEFAULT\s+([^,\n]+)/g;
	ok(@parts >= 8, scalar(@parts) . ' checked parts in ' . (split m{/}, $script)[-1]);
	for my $part (@parts)
	{
		next if $part->[0] eq 'DEFAULT' && $part->[1] =~ /^(?:NULL|true|false|'[^']*'|-?\d+)\b/;
		my @p = problems($part->[1]);
		is_deeply(\@p, [], "$part->[0] names everything by schema") or diag($part->[1]);
	}
	unlike($text, qr/LANGUAGE\s+(?:sql|plpgsql)/i,
		'no SQL or PL/pgSQL function: their statements would run in the caller\'s search_path');
}

done_testing();
