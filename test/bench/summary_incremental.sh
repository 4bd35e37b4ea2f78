#!/usr/bin/env bash
# Incremental backups from WAL summaries (make bench-summary): on PostgreSQL
# 18 with summarize_wal = on, a cluster of pgbench scale 200 (about 3 GB),
# one table changed (random rows of pgbench_accounts updated, so the change
# lies in pages all over its 2.6 GB), then a diff backup taken both ways:
# from the WAL summaries (only the blocks they name read) and by page LSNs
# (stripebackup.use_wal_summaries = off: every page of a changed relation
# file read and judged), beside a full backup, and pg_basebackup's own full
# and --incremental backups (which read summaries too) as the peer.  Each
# round takes new full backups, changes the table, then the incrementals in
# alternating order.  Figures, not a test.
#
#   test/bench/summary_incremental.sh [SCALE] [RUNS] [ROWS]
#       (default 200 = about 3 GB, 3 rounds, 2000 rows updated)
#   BENCH_DIR   where everything goes (default /tmp/stripebackup-bench-summary)
#
# Run as root: PostgreSQL 18 is built (scripts/build-postgres.sh, cached)
# and the extension installed into its prefix, then the benchmark runs as
# postgres.  Both tools sync what they write, start each timed step with
# nothing dirty in the page cache, read a warm page cache alike (the cluster
# fits in memory), compress with zstd level 1 and run two processes
# (stripebackup: two stripes, two compression workers; pg_basebackup:
# server-side zstd with two workers).  Medians of the rounds.
set -euo pipefail

scale=${1:-200}
runs=${2:-3}
rows=${3:-2000}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${BENCH_DIR:-/tmp/stripebackup-bench-summary}
VERSION=${SB_BENCH_PG_VERSION:-18}

if [[ $(id -u) -eq 0 ]]; then
	. "$REPO/test/version-tree.sh"
	pg_config=$(bash "$REPO/scripts/build-postgres.sh" "$VERSION" | tail -1)
	rm -rf "$DIR" && mkdir -p "$DIR"
	make -s -C "$REPO" all >/dev/null
	sb_version_tree "$REPO" "$DIR/tree" "$pg_config" >/dev/null
	chown -R postgres: "$DIR"
	exec runuser -u postgres -- env BENCH_DIR="$DIR" SB_BENCH_PG_CONFIG="$pg_config" \
		bash "$0" "$scale" "$runs" "$rows"
fi
[[ -n ${SB_BENCH_PG_CONFIG:-} ]] || { echo "run as root: it builds PostgreSQL $VERSION and installs into it" >&2; exit 2; }

export PATH="$("$SB_BENCH_PG_CONFIG" --bindir):$PATH"	# pg_config is 18's from here on
. "$REPO/test/bench/common.sh"	# as postgres: the timing helpers, start_cluster, stop_cluster
dir=$DIR
port=55496
data="$dir/data"
trap stop_cluster EXIT

init_cluster() {
	rm -rf "$data"
	initdb -D "$data" --data-checksums -A trust >/dev/null
	cat >> "$data/postgresql.conf" <<-CONF
	shared_preload_libraries = 'stripebackup'
	summarize_wal = on
	max_wal_size = 8GB
	checkpoint_timeout = 1h
	autovacuum = off
	stripebackup.compression_workers = 2
	CONF
	start_cluster
	psql_ -c 'CREATE EXTENSION stripebackup'
	say "loading pgbench scale $scale"
	pgbench -i -q -s "$scale" -h "$dir" -p "$port" postgres 2>&1 | tail -1 >&2
	psql_ -c 'CHECKPOINT'
}

# One table changed: ROWS random accounts updated (each in a page of its
# own, mostly: 2000 rows touch some 2000 of the table's 330,000 pages).
change() {
	psql_ -c "UPDATE pgbench_accounts SET abalance = abalance + 1
		WHERE aid IN (SELECT 1 + (random() * ($scale * 100000 - 1))::int FROM generate_series(1, $rows))" \
		-c 'CHECKPOINT'
}

newest() { psql_ -c "SELECT $1 FROM stripe_backups ORDER BY id DESC LIMIT 1"; }

# The pages the newest backup read and judged, from its manifest's metadata.
pages_read() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1] + "/manifest.json"))["metadata"]["pages_checked"])' "$(newest location)"
}

sb_backup() {	# NAME TYPE [SETTING]
	sync
	local t0=$(now)
	psql_ -c "${3:+SET $3; }SELECT stripe_backup(ARRAY['$dir/sb1', '$dir/sb2'], compression_level => 1, type => '$2')" >/dev/null
	record "$1" "$(elapsed "$t0")"
	[[ $(newest status) == completed ]] || { echo "$1: the backup did not complete" >&2; exit 1; }
	record "$1.stored" "$(newest bytes_written)"
	record "$1.pages" "$(pages_read)"
	record "$1.method" "$(newest "coalesce(incremental_method, 'none')")"
}

bb_backup() {	# NAME FOLDER [--incremental=MANIFEST]
	rm -rf "$2"
	sync
	local t0=$(now)
	pg_basebackup -h "$dir" -p "$port" -D "$2" -Ft -X fetch -c fast \
		--compress=server-zstd:level=1,workers=2 ${3:-}
	record "$1" "$(elapsed "$t0")"
	record "$1.stored" "$(du -sb "$2" | cut -f1)"
}

rm -rf "$dir/sb1" "$dir/sb2" && mkdir -p "$dir/sb1" "$dir/sb2"
init_cluster
bytes=$(psql_ -c "SELECT sum(pg_database_size(oid)) FROM pg_database")
say "cluster: $(calc "$bytes / 1e9" 2) GB, PostgreSQL $(pg_config --version)"
for ((r = 1; r <= runs; r++)); do
	say "round $r of $runs: full backups"
	sb_backup sb_full full
	bb_backup bb_full "$dir/bb_full"
	say "round $r of $runs: $rows rows of pgbench_accounts updated, then the incrementals"
	change
	if ((r % 2 == 1)); then
		sb_backup sb_summary diff
		sb_backup sb_lsn diff "stripebackup.use_wal_summaries = off"
		bb_backup bb_incr "$dir/bb_incr" "--incremental=$dir/bb_full/backup_manifest"
	else
		bb_backup bb_incr "$dir/bb_incr" "--incremental=$dir/bb_full/backup_manifest"
		sb_backup sb_lsn diff "stripebackup.use_wal_summaries = off"
		sb_backup sb_summary diff
	fi
	psql_ -c "SELECT stripe_expire(keep_last => 1)" >/dev/null
done
stop_cluster

for k in sb_summary sb_lsn; do
	want=$([[ $k == sb_summary ]] && echo wal_summaries || echo page_lsn)
	got=$(awk -v k="$k.method" '$1 == k { print $2 }' "$results/times" | sort -u | paste -sd,)
	[[ $got == "$want" ]] || { echo "$k: the backups used $got, not $want" >&2; exit 1; }
done

mb() { calc "$1 / 1e6" 1; }
row() {	# LABEL KEY [FULL_KEY]
	local pages="" ratio=""
	[[ $2 == sb_* ]] && pages=$(mb "$(median "$2.pages") * 8192")
	[[ -n ${3:-} ]] && ratio=$(calc "$(median "$2") / $(median "$3")" 3)
	printf '%-58s %9s %9s %8.2f %8s\n' "$1" "$pages" "$(mb "$(median "$2.stored")")" "$(median "$2")" "$ratio"
}
{
echo
echo "incremental backups from WAL summaries: $(calc "$bytes / 1e9" 2) GB cluster (pgbench scale $scale),"
echo "$(pg_config --version), summarize_wal = on, $(nproc) CPUs, zstd level 1, two processes each,"
echo "warm cache; one table changed: $rows random rows of pgbench_accounts updated; medians of $runs rounds; $(date -u +%F)"
echo
printf '%-58s %9s %9s %8s %8s\n' "" "MB read" "MB stored" "seconds" "x full"
row "stripebackup full" sb_full
row "stripebackup diff, WAL summaries" sb_summary sb_full
row "stripebackup diff, page LSNs (use_wal_summaries = off)" sb_lsn sb_full
row "pg_basebackup -Ft full, server-zstd 1" bb_full
row "pg_basebackup -Ft --incremental (WAL summaries)" bb_incr bb_full
echo "(MB read: the pages stripebackup read and judged; x full: the backup's time / the same tool's full backup's)"
echo
echo "goal: the diff from WAL summaries takes at most 0.05x a full backup's time and reads a fraction of the pages"
} | tee "$results/report"
