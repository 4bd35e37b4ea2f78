#!/usr/bin/env bash
# test/exports.sh can fail (make export-check runs this after it):
#
#   test/exports-selftest.sh LIBRARY
#
# LIBRARY (stripebackup.so, which passes the check) is checked against copies
# of the sources made wrong on purpose, and a library that exports one symbol
# too many is checked against the real sources: each must fail, naming the
# symbol or the function that is wrong.
set -euo pipefail

library=${1:?usage: test/exports-selftest.sh LIBRARY}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
check="$repo/test/exports.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# A copy of the sources the check reads (sql/, src/extension/) in DIR.
copy_sources() {
	mkdir -p "$1/src"
	cp -r "$repo/sql" "$1/"
	cp -r "$repo/src/extension" "$1/src/"
}

# CHECK-ARGS... must fail, saying WANT: expect_failure DESCRIPTION WANT CHECK-ARGS...
expect_failure() {
	local what=$1 want=$2 out

	shift 2
	if out=$(bash "$check" "$@" 2>&1); then
		echo "not ok - $what: the check passed" >&2
		failures=$((failures + 1))
	elif ! grep -q -- "$want" <<<"$out"; then
		echo "not ok - $what: the check failed without naming $want:" >&2
		echo "$out" >&2
		failures=$((failures + 1))
	else
		echo "ok - $what"
	fi
}

# 1. A SQL function (and its PG_FUNCTION_INFO_V1) the library lacks.
copy_sources "$work/extra-sql"
printf "CREATE FUNCTION stripe_nowhere() RETURNS void\nAS 'MODULE_PATHNAME', 'stripe_nowhere'\nLANGUAGE C;\n" \
	>> "$work/extra-sql/sql/stripebackup--0.1.sql"
echo 'PG_FUNCTION_INFO_V1(stripe_nowhere);' >> "$work/extra-sql/src/extension/stripebackup.c"
expect_failure "a function the server would not find" "pg_finfo_stripe_nowhere" "$library" "$work/extra-sql"

# 2. A function the library exports that the sources no longer declare.
copy_sources "$work/fewer"
sed -i "/AS 'MODULE_PATHNAME', 'stripebackup_version'/d" "$work/fewer/sql/stripebackup--0.1.sql"
sed -i '/PG_FUNCTION_INFO_V1(stripebackup_version)/d' "$work/fewer/src/extension/stripebackup.c"
expect_failure "an export nothing looks up" "pg_finfo_stripebackup_version" "$library" "$work/fewer"

# 3. The SQL file and PG_FUNCTION_INFO_V1 disagree.
copy_sources "$work/no-finfo"
sed -i '/PG_FUNCTION_INFO_V1(stripe_expire)/d' "$work/no-finfo/src/extension/sb_sql_expire.c"
expect_failure "a SQL function without PG_FUNCTION_INFO_V1" "stripe_expire" "$library" "$work/no-finfo"

# 4. A worker entry point that nothing starts by name.
copy_sources "$work/worker"
printf 'void\nstripebackup_orphan_main(Datum main_arg)\n{\n}\n' >> "$work/worker/src/extension/sb_worker.c"
expect_failure "a worker entry point no code names" "stripebackup_orphan_main" --expected "$work/worker"

# 5. A library exporting every expected symbol and one engine function more.
{
	bash "$check" --expected "$repo" | sed 's/.*/void &(void) {}/'
	echo 'void sb_leaked_helper(void) {}'
} > "$work/stub.c"
${CC:-cc} -shared -fPIC -o "$work/stub.so" "$work/stub.c"
expect_failure "a library exporting an engine symbol" "sb_leaked_helper" "$work/stub.so" "$repo"

if ((failures > 0)); then
	echo "exports-selftest: $failures of the wrong cases passed test/exports.sh" >&2
	exit 1
fi
echo "exports-selftest: test/exports.sh refused each wrong case"
