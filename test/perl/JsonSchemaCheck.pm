# JsonSchemaCheck: the part of JSON Schema (2020-12) that test/json/output.schema.json
# uses, enough to check the command's --output=json documents in the TAP
# tests without a module from the network: type (one or a list, "integer"
# for whole numbers), properties, required, additionalProperties (false),
# items, enum, const, pattern, minimum, and $ref to "#/$defs/NAME".
#
#	my $checker = JsonSchemaCheck->new('test/json/output.schema.json');
#	my @errors = $checker->check($document, 'list');   # against $defs/list; () when it fits
package JsonSchemaCheck;

use strict;
use warnings;

use B ();
use JSON::PP ();

sub new
{
	my ($class, $path) = @_;
	open(my $fh, '<', $path) or die "could not open $path: $!";
	local $/;
	my $schema = JSON::PP->new->decode(<$fh>);
	close($fh);
	return bless { root => $schema }, $class;
}

# Check DOC against $defs/NAME of the schema: the problems found, each naming where.
sub check
{
	my ($self, $doc, $name) = @_;
	my $def = $self->{root}{'$defs'}{$name} or die "no \$defs/$name in the schema";
	my @errors;
	$self->_check($doc, $def, '$', \@errors);
	return @errors;
}

# What JSON type VALUE is, as JSON::PP decoded it.
sub _type_of
{
	my ($value) = @_;
	return 'null' unless defined $value;
	return 'boolean' if JSON::PP::is_bool($value);
	return 'object' if ref $value eq 'HASH';
	return 'array' if ref $value eq 'ARRAY';
	my $flags = B::svref_2object(\$value)->FLAGS;
	return ($flags & (B::SVp_IOK() | B::SVp_NOK())) && !($flags & B::SVp_POK()) ? 'number' : 'string';
}

sub _type_ok
{
	my ($value, $type) = @_;
	my $actual = _type_of($value);
	return $actual eq 'number' && $value == int($value) if $type eq 'integer';
	return $actual eq $type;
}

sub _check
{
	my ($self, $value, $schema, $where, $errors) = @_;
	if (my $ref = $schema->{'$ref'})
	{
		$ref =~ m{^#/\$defs/(.+)$} or die "unsupported \$ref $ref";
		$schema = $self->{root}{'$defs'}{$1} or die "no \$defs/$1";
	}
	if (my $type = $schema->{type})
	{
		my @types = ref $type ? @$type : ($type);
		if (!grep { _type_ok($value, $_) } @types)
		{
			push @$errors, "$where: " . _type_of($value) . ', not ' . join(' or ', @types);
			return;
		}
	}
	return unless defined $value;
	push @$errors, "$where: \"$value\" is none of " . join(', ', @{ $schema->{enum} })
	  if $schema->{enum} && !grep { defined $_ && $_ eq $value } @{ $schema->{enum} };
	push @$errors, "$where: $value, not $schema->{const}"
	  if defined $schema->{const} && $value ne $schema->{const};
	push @$errors, "$where: \"$value\" does not match /$schema->{pattern}/"
	  if defined $schema->{pattern} && !ref $value && $value !~ /$schema->{pattern}/;
	push @$errors, "$where: $value is below $schema->{minimum}"
	  if defined $schema->{minimum} && !ref $value && $value < $schema->{minimum};
	$self->_check_object($value, $schema, $where, $errors) if ref $value eq 'HASH';
	if (ref $value eq 'ARRAY' && $schema->{items})
	{
		$self->_check($value->[$_], $schema->{items}, "$where\[$_\]", $errors) for 0 .. $#$value;
	}
	return;
}

sub _check_object
{
	my ($self, $value, $schema, $where, $errors) = @_;
	my $props = $schema->{properties} || {};
	for my $key (@{ $schema->{required} || [] })
	{
		push @$errors, "$where: \"$key\" is missing" unless exists $value->{$key};
	}
	for my $key (sort keys %$value)
	{
		if ($props->{$key})
		{
			$self->_check($value->{$key}, $props->{$key}, "$where.$key", $errors);
		}
		elsif (defined $schema->{additionalProperties} && !$schema->{additionalProperties})
		{
			push @$errors, "$where: \"$key\" is not in the schema";
		}
	}
	return;
}

1;
