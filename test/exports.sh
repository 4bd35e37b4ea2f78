#!/usr/bin/env bash
# The symbols the extension's library exports, against what the server looks
# up in it by name (make export-check).
#
#   test/exports.sh LIBRARY [SOURCE-DIR]    check LIBRARY (stripebackup.so)
#   test/exports.sh --expected [SOURCE-DIR] print the expected set only
#
# The expected set is read from the sources (SOURCE-DIR, default the checkout),
# not kept as a list:
#   - every C function a SQL file declares (AS 'MODULE_PATHNAME', 'name'), and
#     its pg_finfo_name; the SQL files and PG_FUNCTION_INFO_V1 must name the
#     same functions (one without the other cannot be called, or is dead);
#   - every background worker's entry point: a function of src/extension
#     defined as "void NAME(Datum ...)", each of which must be named by a
#     string literal there (bgw_function_name takes it by name);
#   - the module's hooks the sources define: Pg_magic_func (PG_MODULE_MAGIC),
#     _PG_init, _PG_archive_module_init.
# Fails when LIBRARY exports a symbol outside the set (a symbol that escaped
# -fvisibility=hidden) or lacks one of it (a function the server would not find).
set -euo pipefail

if [[ ${1:-} == --expected ]]; then
	library=
else
	library=${1:?usage: test/exports.sh LIBRARY|--expected [SOURCE-DIR]}
fi
src=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
ext_files=$(find "$src/src/extension" -name '*.c' | LC_ALL=C sort)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "exports: $*" >&2; exit 1; }

# The C names of the SQL files' functions; a MODULE_PATHNAME line in another form is an error.
sql_functions() {
	local pattern="AS 'MODULE_PATHNAME', *'[A-Za-z_][A-Za-z0-9_]*'"

	if grep -Hn 'MODULE_PATHNAME' "$src"/sql/*.sql | grep -v "$pattern" >&2; then
		fail "the lines above name the library in a form this check does not read: write AS 'MODULE_PATHNAME', 'c_name'"
	fi
	grep -ho "$pattern" "$src"/sql/*.sql | sed "s/.*, *'\(.*\)'/\1/" | LC_ALL=C sort -u
}

# Functions defined "void\nNAME(Datum ...)" at the start of a line: background workers' mains.
worker_functions() {
	# shellcheck disable=SC2086
	awk 'prev == "void" && match($0, /^[A-Za-z_][A-Za-z0-9_]*\(Datum [A-Za-z_]+\)$/) {
		print substr($0, 1, index($0, "(") - 1) } { prev = $0 }' $ext_files | LC_ALL=C sort -u
}

expected_set() {
	local name

	sql_functions > "$work/sql"
	# shellcheck disable=SC2086
	grep -ho 'PG_FUNCTION_INFO_V1([A-Za-z0-9_]*)' $ext_files | sed 's/.*(\(.*\))/\1/' |
		LC_ALL=C sort -u > "$work/v1"
	if [[ -n $(LC_ALL=C comm -23 "$work/sql" "$work/v1") ]]; then
		fail "SQL functions without PG_FUNCTION_INFO_V1 (the server cannot call them):" \
			$(LC_ALL=C comm -23 "$work/sql" "$work/v1")
	fi
	if [[ -n $(LC_ALL=C comm -13 "$work/sql" "$work/v1") ]]; then
		fail "PG_FUNCTION_INFO_V1 without a SQL function in sql/ (exported, never called):" \
			$(LC_ALL=C comm -13 "$work/sql" "$work/v1")
	fi
	worker_functions > "$work/workers"
	while read -r name; do
		# shellcheck disable=SC2086
		grep -q "\"$name\"" $ext_files ||
			fail "background worker entry point $name is named by no string literal in src/extension"
	done < "$work/workers"
	{
		sed 'p; s/^/pg_finfo_/' "$work/sql"
		cat "$work/workers"
		# shellcheck disable=SC2086
		grep -q '^PG_MODULE_MAGIC;' $ext_files && echo Pg_magic_func
		for name in _PG_init _PG_archive_module_init; do
			# shellcheck disable=SC2086
			grep -q "^$name(" $ext_files && echo "$name"
		done
	} | LC_ALL=C sort -u
}

expected_set > "$work/expected"
if [[ -z $library ]]; then
	cat "$work/expected"
	exit 0
fi
[[ -r $library ]] || fail "no library \"$library\" to check"
nm -D --defined-only "$library" | awk '{ print $NF }' | LC_ALL=C sort -u > "$work/exported"
extra=$(LC_ALL=C comm -13 "$work/expected" "$work/exported")
missing=$(LC_ALL=C comm -23 "$work/expected" "$work/exported")
if [[ -n $extra ]]; then
	echo "exports: $library exports symbols the server never looks up (mark them static, or hidden):" >&2
	echo "$extra" | sed 's/^/  /' >&2
fi
if [[ -n $missing ]]; then
	echo "exports: $library does not export what the server looks up by name (declare them PGDLLEXPORT):" >&2
	echo "$missing" | sed 's/^/  /' >&2
fi
[[ -z $extra && -z $missing ]] || exit 1
echo "exports: $library exports the $(wc -l < "$work/expected") symbols the server looks up, and nothing else"
