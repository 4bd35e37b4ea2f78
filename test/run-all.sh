#!/usr/bin/env bash
# Every test of stripebackup, as README.md and CI run it:
#   1. install the dependencies (Debian packages), build, install, check the
#      library exports only what the server looks up (make export-check);
#   2. engine unit tests (C, TAP output), then again under AddressSanitizer
#      and UndefinedBehaviorSanitizer, with the fuzz corpus replayed the same way,
#      then with --coverage (make coverage-check, SB_COVERAGE_MIN);
#   3. end-to-end TAP tests on real PostgreSQL clusters (test/t/*.pl);
#   4. the S3 tests once more against Ceph's radosgw (test/s3/radosgw.sh),
#      which checks signatures: the engine's S3 unit tests, the gateway's
#      own check (test/s3/selftest_radosgw.pl), test/t/022, 023 and 083;
#   5. PostgreSQL 16 and 18 (SB_TEST_PG_VERSIONS, default "16 18"; empty:
#      none), built from ../shared/postgres by scripts/build-postgres.sh in
#      the background while 1-4 run (cached on the machine: once per
#      machine), then test/run-version.sh for each: a -Werror build,
#      pg_regress, pgTAP and a subset of the TAP files;
#   6. a matrix of the versions with each part's pass counts and times.
#
# PostgreSQL refuses to run as root: when run as root, the tests run as the
# "postgres" user in a scratch directory it owns.  Exits non-zero if any test fails.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
. test/sql-tests.sh

bash scripts/install-deps.sh
bindir=$(pg_config --bindir)
pgxs_src=$(dirname "$(pg_config --pgxs)")/..
run_start=$SECONDS

# The other versions' servers build while the tests below run, at the
# lowest CPU priority so that those tests' timings hardly change (a build
# is about 6 minutes a version on 2 CPUs; a machine that has them skips it).
versions=(${SB_TEST_PG_VERSIONS-16 18})
pg_build_log=$(mktemp /tmp/stripebackup-pgbuild.XXXXXX)
pg_build_pid=
stop_pg_build() {
	if [[ -n $pg_build_pid ]] && kill -0 "$pg_build_pid" 2>/dev/null; then
		kill -- -"$pg_build_pid" 2>/dev/null || true
	fi
	rm -f "$pg_build_log"
}
trap stop_pg_build EXIT
if [[ ${#versions[@]} -gt 0 ]]; then
	sudo_build=()
	[[ $(id -u) -ne 0 ]] && sudo_build=(sudo)
	# Its own process group (setsid), so that a failed run stops all of it.
	setsid "${sudo_build[@]}" nice -n 19 bash -c 'for v in "$@"; do
		s=$SECONDS; bash scripts/build-postgres.sh "$v" || exit 1; echo "PostgreSQL $v: $((SECONDS - s)) s"
	done' build "${versions[@]}" >"$pg_build_log" 2>&1 &
	pg_build_pid=$!
fi

# The sanitized copies build under build/asan/, apart from the normal objects.
asan_bins=(build/asan/unit_tests build/asan/replay_manifest build/asan/replay_stripe build/asan/replay_wal
	build/asan/replay_walrec)
make -s all test/unit/unit_tests "${asan_bins[@]}"
if [[ $(id -u) -eq 0 ]]; then
	make -s install
	runner=(runuser -u postgres --)
else
	sudo make -s install
	runner=()
fi
echo "=== the extension library's exports"
make -s export-check
echo "=== the engine's layers"
make -s layer-check

# The tests run from a copy the test user can read, whatever the checkout's permissions.
scratch=$(mktemp -d /tmp/stripebackup-test.XXXXXX)
small_fs="$scratch/small-fs"
readonly_fs="$scratch/readonly-fs"
sudoers=""
cleanup() {
	local fs
	[[ -z $sudoers ]] || rm -f "$sudoers"
	stop_pg_build
	if [[ -d $scratch/s3 ]]; then
		bash "$scratch/test/s3/s3server.sh" stop "$scratch/s3" || true
	fi
	for fs in "$small_fs" "$readonly_fs"; do
		if [[ -n $fs ]] && mountpoint -q "$fs" 2>/dev/null; then
			umount "$fs"
		fi
	done
	rm -rf "$scratch"
}
trap cleanup EXIT
# test/t/076 restores as root, as a DBA does after losing the server, through
# "sudo -n stripebackup": for this run only (cleanup removes the rule), the
# test user may run the installed command, and nothing else, as root.
if [[ $(id -u) -eq 0 && -d /etc/sudoers.d ]]; then
	sudoers=/etc/sudoers.d/stripebackup-test
	echo "postgres ALL=(root) NOPASSWD: $bindir/stripebackup" > "$sudoers.new"
	chmod 0440 "$sudoers.new"
	if visudo -cqf "$sudoers.new"; then
		mv "$sudoers.new" "$sudoers"
	else
		rm -f "$sudoers.new"
		echo "=== no sudo rule for the root restore (visudo refused it): t/076's root part skips"
	fi
fi
cp -r test "$scratch/test"
# Each part's output, for the matrix's counts at the end.
logs="$scratch/logs"
mkdir "$logs"
matrix="$scratch/matrix"
part_start=$SECONDS
took() {		# NAME: t_NAME, the seconds since the last call (or the start)
	printf -v "t_$1" '%d' $((SECONDS - part_start))
	part_start=$SECONDS
}
# test/t/005_sql_rules.pl reads the extension's SQL from the sources.
mkdir -p "$scratch/source/src"
cp -r src/extension "$scratch/source/src/"
cp -r sql "$scratch/source/"
mkdir "$scratch/test/asan"
cp "${asan_bins[@]}" "$scratch/test/asan/"
mkdir "$scratch/tmp" "$scratch/regress"
cp -r sql expected "$scratch/regress/"
if [[ $(id -u) -eq 0 ]]; then
	chown -R postgres: "$scratch"
fi

# A small file system that a backup or a restore fills up (test/t/030, 034).
# Only root can mount one; without it, those tests skip.
if [[ $(id -u) -eq 0 ]] && mkdir "$small_fs" &&
	mount -t tmpfs -o size=40m,mode=0700 stripebackup-test "$small_fs"; then
	chown postgres: "$small_fs"
else
	echo "=== no small file system (root mounts a tmpfs): the full-disk tests skip"
	small_fs=
fi
# A read-only file system, owned by the test user (test/t/035).
if ! { [[ $(id -u) -eq 0 ]] && mkdir "$readonly_fs" &&
	mount -t tmpfs -o ro,size=1m,mode=0755,uid="$(id -u postgres)" stripebackup-ro "$readonly_fs"; }; then
	echo "=== no read-only file system (root mounts a tmpfs): its tests skip"
	readonly_fs=
fi
cd "$scratch/test"

# One S3 server (s3rver, test/s3) for every run of the unit tests, whose S3
# client tests need one; the end-to-end tests start their own.
s3_state="$scratch/s3"
mkdir "$s3_state"
SB_TEST_S3_ENDPOINT=$(bash "$scratch/test/s3/s3server.sh" start "$s3_state" bk1 bk2)
export SB_TEST_S3_ENDPOINT AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
# The unit tests read settings back with PostgreSQL itself (postgres -C).
export SB_TEST_POSTGRES="$bindir/postgres"

echo "=== engine unit tests"
took none
"${runner[@]}" env TMPDIR="$scratch/tmp" prove --exec '' ./unit/unit_tests 2>&1 | tee "$logs/unit.log"

# Any report (memory error, leak, undefined behaviour) ends the program with a
# non-zero status, which fails the run.
echo "=== engine unit tests under AddressSanitizer and UndefinedBehaviorSanitizer"
sanitized=(env TMPDIR="$scratch/tmp" ASAN_OPTIONS=detect_leaks=1
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
"${runner[@]}" "${sanitized[@]}" prove --exec '' ./asan/unit_tests
echo "=== fuzz corpus (test/fuzz) under AddressSanitizer and UndefinedBehaviorSanitizer"
"${runner[@]}" "${sanitized[@]}" ./asan/replay_manifest fuzz/corpus/manifest fuzz/regress/manifest
"${runner[@]}" "${sanitized[@]}" ./asan/replay_stripe fuzz/corpus/stripe fuzz/regress/stripe
"${runner[@]}" "${sanitized[@]}" ./asan/replay_wal fuzz/corpus/wal fuzz/regress/wal
"${runner[@]}" "${sanitized[@]}" ./asan/replay_walrec fuzz/corpus/walrec

# As root or the caller (the counts go to build/coverage in the checkout);
# below SB_COVERAGE_MIN percent of the engine's lines (default 90) the run
# fails, SB_COVERAGE_MIN=0 only reports.
echo "=== engine coverage by the unit tests (both I/O methods)"
make -C "$repo" -s coverage-check COVERAGE_MIN="${SB_COVERAGE_MIN:-90}"
took unit

sb_sql_tests runner "$scratch" "$bindir" "$pgxs_src" "$logs"
took sql

# The end-to-end tests run twice: with the default I/O (io_uring where the
# kernel allows it) and with synchronous I/O, the fallback.  The command takes
# the method from STRIPEBACKUP_IO_METHOD, the server from TEMP_CONFIG.
# SB_TEST_S3_SERVER (radosgw or s3rver) says which S3 server the S3 TAP
# files start, and TAP_TESTS which files run (default: all).
# PostgreSQL 15 puts the test clusters and logs under TESTDIR, 16 and later
# where TESTDATADIR and TESTLOGDIR say (as PGXS's prove_installcheck sets them).
run_tap() {		# IO_METHOD
	local conf="$scratch/tmp/io-$1.conf"

	echo "stripebackup.io_method = '$1'" > "$conf"
	rm -rf "$scratch/tmp_check"
	"${runner[@]}" env TESTDIR="$scratch" TESTDATADIR="$scratch/tmp_check" \
		TESTLOGDIR="$scratch/tmp_check/log" PATH="$bindir:$PATH" PGPORT="${PGPORT:-65432}" \
		PG_REGRESS="$pgxs_src/test/regress/pg_regress" TEMP_CONFIG="$conf" \
		STRIPEBACKUP_IO_METHOD="$1" SB_TEST_SMALL_FS="$small_fs" SB_TEST_READONLY_FS="$readonly_fs" \
		SB_SOURCE_DIR="$scratch/source" SB_TEST_S3_SERVER="${SB_TEST_S3_SERVER:-s3rver}" \
		prove -I "$pgxs_src/test/perl" -I perl ${PROVE_FLAGS:-} ${TAP_TESTS:-t/*.pl}
}

echo "=== the S3 test tools (test/s3: s3rver, its patches, the fault proxy)"
"${runner[@]}" prove -I perl s3/selftest.pl

echo "=== engine unit tests with synchronous I/O"
"${runner[@]}" env TMPDIR="$scratch/tmp" STRIPEBACKUP_IO_METHOD=sync prove --exec '' ./unit/unit_tests
took none
echo "=== end-to-end tests on PostgreSQL (io_method auto)"
run_tap auto 2>&1 | tee "$logs/tap-auto.log"
took tap_auto
# The synchronous pass repeats the files that read and write backups, WAL and
# restores; those whose subject is the SQL surface, monitoring or the
# command's output, with no I/O path of their own, run once (above).
sync_once=" t/005_sql_rules.pl t/060_hostile_database.pl t/080_list_json.pl t/081_check_health.pl
	t/082_retention.pl t/083_check_s3.pl t/084_figures.pl t/093_standby_cron.pl "
sync_files=$(cd "$scratch/test" && for f in t/*.pl; do [[ $sync_once == *[[:space:]]"$f"[[:space:]]* ]] || echo "$f"; done)
echo "=== end-to-end tests on PostgreSQL (io_method sync)"
TAP_TESTS=${TAP_TESTS:-$(echo $sync_files)} run_tap sync 2>&1 | tee "$logs/tap-sync.log"
took tap_sync

# The S3 tests against a server that checks signatures, as S3 does
# (s3rver takes any secret): Ceph's radosgw, in memory on 127.0.0.1.
echo "=== engine S3 unit tests against radosgw (test/s3/radosgw.sh)"
"${runner[@]}" env TMPDIR="$scratch/tmp" SB_TEST_S3_SERVER=radosgw \
	bash s3/with-s3.sh prove --exec '' ./unit/unit_tests :: test_s3_
echo "=== the radosgw test tool (test/s3/radosgw.sh)"
"${runner[@]}" prove -I perl s3/selftest_radosgw.pl
echo "=== end-to-end S3 tests against radosgw (io_method auto)"
SB_TEST_S3_SERVER=radosgw TAP_TESTS="t/022_object_storage.pl t/023_wal_object_storage.pl t/083_check_s3.pl" run_tap auto \
	2>&1 | tee "$logs/radosgw.log"
took radosgw
printf '%-18s unit %s, pg_regress %s tests, pgTAP %s, TAP auto %s, TAP sync %s, radosgw TAP %s | unit+asan+coverage %ss, SQL %ss, TAP auto %ss, sync %ss, radosgw %ss\n' \
	"$(pg_config --version)" "$(sb_counts "$logs/unit.log")" \
	"$(sb_regress_count "$logs/regress.log")" "$(sb_counts "$logs/pgtap.log")" \
	"$(sb_counts "$logs/tap-auto.log")" "$(sb_counts "$logs/tap-sync.log")" "$(sb_counts "$logs/radosgw.log")" \
	"$t_unit" "$t_sql" "$t_tap_auto" "$t_tap_sync" "$t_radosgw" >>"$matrix"

# The other versions: their servers were building meanwhile.
if [[ ${#versions[@]} -gt 0 ]]; then
	echo "=== building PostgreSQL ${versions[*]} (scripts/build-postgres.sh, started with the run)"
	if ! wait "$pg_build_pid"; then
		cat "$pg_build_log"
		echo "=== building PostgreSQL ${versions[*]} failed" >&2
		exit 1
	fi
	cat "$pg_build_log"
	took wait
	echo "=== waited $t_wait s for the builds"
	for v in "${versions[@]}"; do
		(cd "$repo" && bash test/run-version.sh "$v" "$matrix")
	done
fi

echo "=== version matrix (pass counts; each part's seconds)"
cat "$matrix"
echo "=== all tests passed in $(( (SECONDS - run_start) / 60 )) min $(( (SECONDS - run_start) % 60 )) s"
