#!/usr/bin/env bash
# stripebackup against a PostgreSQL release Debian does not package (16, 18):
#
#   test/run-version.sh VERSION MATRIX_FILE
#
#   1. the release built and cached by scripts/build-postgres.sh (its
#      /opt/stripebackup-pg/X.Y prefix, with pg_cron and pgTAP);
#   2. the extension built against it with -Werror (the Makefile's
#      PG_CFLAGS) in a copy of the tree, so the checkout keeps its own
#      objects, and installed into that prefix only (no link in
#      /usr/local/bin); its exports checked (test/exports.sh);
#   3. pg_regress, pgTAP, then the TAP files of VERSION_TAP_TESTS (below)
#      with io_method auto.
#
# Appends one row to MATRIX_FILE (test/run-all.sh prints the matrix).  Run
# as root (the tests run as "postgres") or as a user who may write the prefix.
# TAP_TESTS overrides the list of TAP files; REGRESS_PORT, PGTAP_PORT the
# SQL tests' ports.
set -euo pipefail

version=${1:?usage: test/run-version.sh VERSION MATRIX_FILE}
matrix=${2:?usage: test/run-version.sh VERSION MATRIX_FILE}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$repo/test/sql-tests.sh"
. "$repo/test/version-tree.sh"

# The TAP files run on these versions: every area once (docs/DECISIONS.md,
# "PostgreSQL 15 to 18 from one tree", has each file's time).  The full
# suite runs on 15.
#   004 cold backup (pg_control's layout), 010 online backup and restore,
#   012 what a backup leaves out (pg_wal/summaries on 17+), 015 incremental,
#   018 standby, 019 delta restore, 020 restore from SQL, 021 encryption,
#   060 hostile database, 070 archive module, 071 PITR, 079 targets placed
#   by the WAL record reader (each version's page magic, in real WAL), 081
#   stripe_check (the archiver's statistics and settings), 089 incremental
#   backups from WAL summaries (17+)
VERSION_TAP_TESTS="t/004_cold_tablespaces.pl t/010_online_backup.pl t/012_exclusions.pl
	t/015_incremental.pl t/018_standby.pl t/019_delta.pl t/020_restore_sql.pl t/021_encrypted.pl
	t/060_hostile_database.pl t/070_wal_archive.pl t/071_pitr.pl t/079_timeline_targets.pl
	t/081_check_health.pl t/089_summary_incremental.pl"

runner=()
[[ $(id -u) -eq 0 ]] && runner=(runuser -u postgres --)

start=$SECONDS
pg_config=$(bash "$repo/scripts/build-postgres.sh" "$version" | tail -1)
t_build=$((SECONDS - start))
bindir=$("$pg_config" --bindir)
release=$("$pg_config" --version)
pgxs_src=$(dirname "$("$pg_config" --pgxs)")/..

work=$(mktemp -d "/tmp/stripebackup-pg$version.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT

echo "=== $release: build with -Werror"
t0=$SECONDS
sb_version_tree "$repo" "$work/tree" "$pg_config"
t_ext=$((SECONDS - t0))
echo "=== $release: the extension library's exports"
(cd "$work/tree" && bash test/exports.sh stripebackup.so .)

mkdir "$work/tmp" "$work/regress" "$work/source"
cp -r "$work/tree/test" "$work/test"
cp -r "$work/tree/sql" "$work/tree/expected" "$work/regress/"
mkdir "$work/source/src"
cp -r "$work/tree/src/extension" "$work/source/src/"
cp -r "$work/tree/sql" "$work/source/"
[[ $(id -u) -eq 0 ]] && chown -R postgres: "$work"

t0=$SECONDS
mkdir "$work/logs"
sb_sql_tests runner "$work" "$bindir" "$pgxs_src" "$work/logs"
t_sql=$((SECONDS - t0))

echo "=== $release: end-to-end tests (io_method auto)"
t0=$SECONDS
conf="$work/tmp/io-auto.conf"
echo "stripebackup.io_method = 'auto'" >"$conf"
[[ $(id -u) -eq 0 ]] && chown postgres: "$conf"
# PostgreSQL 16 and later put their test clusters and logs where
# TESTDATADIR and TESTLOGDIR say (15: under TESTDIR), as PGXS's
# prove_installcheck sets them.
(
	cd "$work/test"
	"${runner[@]}" env TESTDIR="$work" TESTDATADIR="$work/tmp_check" TESTLOGDIR="$work/tmp_check/log" \
		PATH="$bindir:$PATH" PG_REGRESS="$pgxs_src/test/regress/pg_regress" TEMP_CONFIG="$conf" \
		STRIPEBACKUP_IO_METHOD=auto SB_SOURCE_DIR="$work/source" SB_TEST_S3_SERVER=s3rver \
		SB_TEST_POSTGRES="$bindir/postgres" \
		prove -I "$pgxs_src/test/perl" -I perl ${PROVE_FLAGS:-} ${TAP_TESTS:-$VERSION_TAP_TESTS}
) 2>&1 | tee "$work/logs/tap.log"
t_tap=$((SECONDS - t0))

printf '%-18s pg_regress %s tests, pgTAP %s, TAP %s | build PostgreSQL %ss, extension %ss, SQL %ss, TAP %ss\n' \
	"$release" "$(sb_regress_count "$work/logs/regress.log")" "$(sb_counts "$work/logs/pgtap.log")" \
	"$(sb_counts "$work/logs/tap.log")" "$t_build" "$t_ext" "$t_sql" "$t_tap" >>"$matrix"
