#!/usr/bin/env bash
# The WAL archive benchmark (make bench-wal): archiving a backlog of WAL
# segments with the archive module (archive_library = 'stripebackup') beside
# pgBackRest's archive-push (asynchronous, zstd level 1, 2 processes: its
# fastest) and PostgreSQL's own basic_archive (a durable copy, no
# compression); then fetching them back, one restore_command call per segment
# as recovery makes them, with stripebackup wal-get (prefetch 8) beside
# pgBackRest's archive-get (asynchronous, queue of 128 MB).  The same
# segments for every tool, the tools alternating, several runs each; prints
# medians and ratios.  Figures, not a test.
#
#   test/bench/wal_archive.sh [SEGMENTS] [RUNS] [LAG_SECONDS]
#     SEGMENTS     WAL segments of 16 MB in the backlog (default 64: 1 GB)
#     RUNS         runs per tool (default 3)
#     LAG_SECONDS  then pgbench at full speed this long with each archiver, the
#                  archive's largest lag behind the server sampled every second
#                  (default 300; 0 skips it)
#   BENCH_DIR   where everything goes (default /tmp/stripebackup-bench-wal)
#
# Every tool makes each file durable (fsync) before it reports it archived.
# The segments are in the page cache for every tool alike: the server just
# wrote them, and each run reads the same ones.
set -euo pipefail

segments=${1:-64}
runs=${2:-3}
lag_seconds=${3:-300}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${BENCH_DIR:-/tmp/stripebackup-bench-wal}
BENCH_ARGS=("$@")
. "$REPO/test/bench/common.sh"
repo=$REPO
dir=$DIR
port=55496
data="$dir/data"

start_cluster() { pg_ctl -D "$data" -o "-p $port -k $dir -c listen_addresses=''" -l "$data.log" -w start >/dev/null; }
stop_cluster() { pg_ctl -D "$data" -m fast stop >/dev/null 2>&1 || true; }
trap stop_cluster EXIT

pgbr() { pgbackrest --config="$dir/pgbackrest.conf" --stanza=bench "$@"; }

pgbackrest_conf() {
	cat > "$dir/pgbackrest.conf" <<-EOF
	[global]
	repo1-path=$dir/pgbackrest-repo
	archive-async=y
	archive-get-queue-max=128MB
	process-max=2
	compress-type=zst
	compress-level=1
	log-level-console=warn
	log-level-file=off
	lock-path=$dir/pgbackrest-lock
	spool-path=$dir/pgbackrest-spool
	[bench]
	pg1-path=$data
	pg1-socket-path=$dir
	pg1-port=$port
	EOF
}

# Which archiver the server runs: one of the tools, or none (a command that fails).
archiver_conf() {	# stripebackup | pgbackrest | basic_archive | none
	local conf
	case $1 in
		stripebackup) conf="archive_library = 'stripebackup'
stripebackup.archive_destinations = '$dir/sb-archive'" ;;
		pgbackrest) conf="archive_library = ''
archive_command = 'pgbackrest --config=$dir/pgbackrest.conf --stanza=bench archive-push %p'" ;;
		basic_archive) conf="archive_library = 'basic_archive'
basic_archive.archive_directory = '$dir/basic-archive'" ;;
		none) conf="archive_library = ''
archive_command = 'false'" ;;
	esac
	printf '%s\n' "$conf" > "$data/archiver.conf"
}

# A cluster whose archiving fails, so that every segment written stays ready.
init_cluster() {
	rm -rf "$data"
	initdb -D "$data" -A trust >/dev/null
	cat >> "$data/postgresql.conf" <<-EOF
	shared_preload_libraries = 'stripebackup'
	archive_mode = on
	wal_keep_size = 16GB
	max_wal_size = 16GB
	checkpoint_timeout = 1h
	include = 'archiver.conf'
	EOF
	archiver_conf none
	start_cluster
}

ready_count() { find "$data/pg_wal/archive_status" -name '*.ready' | wc -l; }

# Write SEGMENTS segments of WAL: rows of random hex text (about 2x compressible).
make_backlog() {
	psql_ -c "CREATE TABLE filler (id bigint, v text)"
	while (($(ready_count) < segments)); do
		psql_ -c "INSERT INTO filler SELECT g, md5(random()::text) || md5(random()::text)
			FROM generate_series(1, 100000) g" -c "SELECT pg_switch_wal()" >/dev/null
	done
	psql_ -c "CHECKPOINT"
	stop_cluster
	find "$data/pg_wal/archive_status" -name '*.ready' -printf '%f\n' | sed 's/\.ready$//' | sort > "$results/backlog"
	backlog_bytes=$(cd "$data/pg_wal" && cat "$results/backlog" | xargs stat -c %s | awk '{ s += $1 } END { print s }')
}

# Every segment of the backlog ready again (the server stopped).
rearm_backlog() {
	local f
	stop_cluster
	while read -r f; do
		rm -f "$data/pg_wal/archive_status/$f.done"
		touch "$data/pg_wal/archive_status/$f.ready"
	done < "$results/backlog"
}

# That, with every archive empty.
reset_backlog() {
	rearm_backlog
	rm -rf "$dir/sb-archive" "$dir/basic-archive" "$dir/pgbackrest-spool"
	mkdir -p "$dir/sb-archive" "$dir/basic-archive"
	if [[ -d $dir/pgbackrest-repo/archive/bench ]]; then
		find "$dir/pgbackrest-repo/archive/bench" -mindepth 2 -name '[0-9A-F]*' -exec rm -rf {} +
	fi
}

# Start the server with TOOL archiving, until no segment is left ready; stop it.
archive_all() {	# TOOL
	archiver_conf "$1"
	start_cluster
	while (($(ready_count) > 0)); do sleep 0.05; done
	stop_cluster
}

archive_run() {	# TOOL
	local start
	reset_backlog
	start=$(now)
	archive_all "$1"
	record "archive_$1" "$(elapsed "$start")"
}

# Fetch every segment of the backlog as recovery does, one call each, into a scratch pg_wal.
get_run() {	# TOOL
	local start f target="$dir/get/pg_wal"
	rm -rf "$dir/get" "$dir/pgbackrest-spool"
	mkdir -p "$target"
	start=$(now)
	while read -r f; do
		case $1 in
			stripebackup) stripebackup wal-get --archive "$dir/sb-archive" --system-identifier "$sysid" \
				--prefetch 8 "$f" "$target/RECOVERYXLOG" ;;
			pgbackrest) pgbr archive-get "$f" "$target/RECOVERYXLOG" ;;
		esac
		mv "$target/RECOVERYXLOG" "$target/$f"
	done < "$results/backlog"
	record "get_$1" "$(elapsed "$start")"
	cmp -s "$target/$(tail -1 "$results/backlog")" "$data/pg_wal/$(tail -1 "$results/backlog")" ||
		{ echo "$1: the last segment fetched differs from the original" >&2; exit 1; }
	rm -rf "$dir/get"
}

# pgbench at full speed for LAG_SECONDS with TOOL archiving: the largest
# number of segments completed but not yet archived, sampled every second.
lag_run() {	# TOOL
	local end max=0 n
	reset_backlog
	archive_all "$1"
	archiver_conf "$1"
	start_cluster
	pgbench -i -q -s 20 -h "$dir" -p "$port" postgres >/dev/null 2>&1
	pgbench -n -c 4 -j 2 -T "$lag_seconds" -h "$dir" -p "$port" postgres >/dev/null 2>&1 &
	end=$((SECONDS + lag_seconds))
	while ((SECONDS < end)); do
		n=$(ready_count)
		((n > max)) && max=$n
		sleep 1
	done
	wait
	echo "$1 $max" >> "$results/lag"
	psql_ -c "SELECT pg_size_pretty(pg_current_wal_lsn() - '0/0'::pg_lsn)" > "$results/lag_wal_$1"
	stop_cluster
}

# ---------- the run ----------

stop_cluster
rm -rf "$dir/pgbackrest-repo" "$results"/*
: > "$results/times"
pgbackrest_conf
say "a backlog of $segments WAL segments"
init_cluster
sysid=$(psql_ -c "SELECT system_identifier FROM pg_control_system()")
make_backlog
start_cluster
pgbr stanza-create >/dev/null
stop_cluster
say "backlog: $(wc -l < "$results/backlog") segments, $(calc "$backlog_bytes / 1e9" 2) GB; $runs runs of each tool, alternating"

for ((r = 1; r <= runs; r++)); do
	say "round $r of $runs: archiving"
	archive_run stripebackup
	sb_stored=$(du -sb "$dir/sb-archive" | cut -f1)
	archive_run pgbackrest
	br_stored=$(du -sb "$dir/pgbackrest-repo/archive" | cut -f1)
	archive_run basic_archive
done
say "fetching back, one restore_command call per segment"
reset_backlog
archive_all stripebackup
rearm_backlog
archive_all pgbackrest
for ((r = 1; r <= runs; r++)); do
	get_run stripebackup
	get_run pgbackrest
done

if ((lag_seconds > 0)); then
	: > "$results/lag"
	say "pgbench at full speed for $lag_seconds s with each archiver: the archive's lag"
	lag_run stripebackup
	lag_run pgbackrest
fi

# ---------- the report ----------

mbps() { calc "$backlog_bytes / 1e6 / $1" 0; }
row() {	# LABEL KEY REFERENCE_KEY
	local t ref
	t=$(median "$2")
	ref=$(median "$3")
	printf '%-44s %8.2f s %7s MB/s %7s\n' "$1" "$t" "$(mbps "$t")" \
		"$(if [[ $2 == "$3" ]]; then echo 1.00x; else calc "$t / $ref" 2; echo -n x; fi)"
}
echo
echo "WAL archive: $(wc -l < "$results/backlog") segments, $(calc "$backlog_bytes / 1e9" 2) GB, median of $runs runs"
echo "(time relative to stripebackup's; below 1.00x is faster than stripebackup)"
printf '%-44s %10s %12s %7s\n' "" "seconds" "" "ratio"
row "archive: stripebackup module (zstd 1)" archive_stripebackup archive_stripebackup
row "archive: pgBackRest async (zst 1, 2 procs)" archive_pgbackrest archive_stripebackup
row "archive: basic_archive (no compression)" archive_basic_archive archive_stripebackup
row "fetch:   stripebackup wal-get (prefetch 8)" get_stripebackup get_stripebackup
row "fetch:   pgBackRest archive-get async" get_pgbackrest get_stripebackup
echo
echo "stored: stripebackup $(calc "$sb_stored / 1e6" 0) MB, pgBackRest $(calc "$br_stored / 1e6" 0) MB" \
	"(of $(calc "$backlog_bytes / 1e6" 0) MB)"
if ((lag_seconds > 0)); then
	echo
	echo "under pgbench (-c 4, $lag_seconds s), the most segments waiting to be archived:"
	while read -r tool max; do
		printf '  %-14s %3d segments (of %s of WAL written)\n' "$tool" "$max" "$(cat "$results/lag_wal_$tool")"
	done < "$results/lag"
fi
