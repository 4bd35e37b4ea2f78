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
#      with io_method auto; on 17+ those of SUMMARY_TAP_TESTS again with
#      summarize_wal on.
#
# Appends one row to MATRIX_FILE (test/run-all.sh prints the matrix).  Run
# as root (the tests run as "postgres") or as a user who may write the prefix.
# TAP_TESTS overrides the list of TAP files, SUMMARY_TAP_TESTS that of the
# second run (none by default when TAP_TESTS is given); REGRESS_PORT,
# PGTAP_PORT the SQL tests' ports.
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
	t/081_check_health.pl t/089_summary_incremental.pl t/090_standby_backup.pl"
# On 17+, run again with summarize_wal on: 015, the oracle of incremental
# backups (each restored chain is the cluster of its moment), then finds
# changed blocks from WAL summaries where the run above judges every page by
# its LSN, and checks each backup used the method its server's settings
# choose.  016 (its oracle under load, 3,000 partitions) would add about 50 s.
if [[ -z ${SUMMARY_TAP_TESTS+set} ]]; then
	if [[ -n ${TAP_TESTS:-} ]]; then SUMMARY_TAP_TESTS=; else SUMMARY_TAP_TESTS="t/015_incremental.pl"; fi
fi

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

# The TAP files given with io_method auto and the settings of CONF (the
# clusters' TEMP_CONFIG), the output into LOG.  PostgreSQL 16 and later put
# their test clusters and logs where TESTDATADIR and TESTLOGDIR say (15:
# under TESTDIR), as PGXS's prove_installcheck sets them: CHECK, one for
# each run, so that a second run's server logs do not go on from the
# first's.  SB_TEST_INCREMENTAL_METHOD, when set, names the method every
# incremental backup must use (test/perl/StripeBackupTest.pm).
run_tap() {	# CONF CHECK LOG FILE...
	local conf=$1 check=$2 log=$3
	shift 3
	echo "stripebackup.io_method = 'auto'" | cat - "$conf" >"$work/tmp/temp.conf"
	[[ $(id -u) -eq 0 ]] && chown postgres: "$work/tmp/temp.conf"
	(
		cd "$work/test"
		"${runner[@]}" env TESTDIR="$work" TESTDATADIR="$check" TESTLOGDIR="$check/log" \
			PATH="$bindir:$PATH" PG_REGRESS="$pgxs_src/test/regress/pg_regress" TEMP_CONFIG="$work/tmp/temp.conf" \
			STRIPEBACKUP_IO_METHOD=auto SB_SOURCE_DIR="$work/source" SB_TEST_S3_SERVER=s3rver \
			SB_TEST_POSTGRES="$bindir/postgres" SB_TEST_INCREMENTAL_METHOD="${SB_TEST_INCREMENTAL_METHOD:-}" \
			prove -I "$pgxs_src/test/perl" -I perl ${PROVE_FLAGS:-} "$@"
	) 2>&1 | tee "$log"
}

echo "=== $release: end-to-end tests (io_method auto)"
t0=$SECONDS
tap_logs=("$work/logs/tap.log")
run_tap /dev/null "$work/tmp_check" "${tap_logs[0]}" ${TAP_TESTS:-$VERSION_TAP_TESTS}
if [[ $release =~ ^PostgreSQL\ ([0-9]+) ]] && ((BASH_REMATCH[1] >= 17)) && [[ -n $SUMMARY_TAP_TESTS ]]; then
	echo "=== $release: incremental backups from WAL summaries (summarize_wal on)"
	echo "summarize_wal = on" >"$work/tmp/summaries.conf"
	tap_logs+=("$work/logs/tap-summaries.log")
	SB_TEST_INCREMENTAL_METHOD=wal_summaries \
		run_tap "$work/tmp/summaries.conf" "$work/tmp_check_summaries" "${tap_logs[1]}" $SUMMARY_TAP_TESTS
fi
t_tap=$((SECONDS - t0))

printf '%-18s pg_regress %s tests, pgTAP %s, TAP %s | build PostgreSQL %ss, extension %ss, SQL %ss, TAP %ss\n' \
	"$release" "$(sb_regress_count "$work/logs/regress.log")" "$(sb_counts "$work/logs/pgtap.log")" \
	"$(sb_counts "${tap_logs[@]}")" "$t_build" "$t_ext" "$t_sql" "$t_tap" >>"$matrix"
