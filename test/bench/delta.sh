#!/usr/bin/env bash
# Delta restore (make bench-delta): a copy of a pgbench cluster restored from
# one full backup goes stale while about 5% of the cluster's pages change;
# a second full backup is then restored into it in place (stripebackup
# restore --delta, pgBackRest restore --delta), beside each tool's restore of
# the same backup into an empty directory.  Prints times and ratios.  Figures,
# not a test.
#
#   test/bench/delta.sh [SCALE]   (default 270: about 4 GB)
#   BENCH_DIR   where everything goes (default /tmp/stripebackup-bench-delta)
#
# Every restore is made durable (stripebackup syncs its file systems; after
# pgBackRest's, sync -f) and starts with nothing dirty in the page cache; the
# stale copy each delta restore refreshes is copied afresh, untimed, before
# it; both tools' backups are read from the page cache.  zstd level 1, two
# processes each.  Three rounds, every other one in the other order; medians.
set -euo pipefail

scale=${1:-270}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${BENCH_DIR:-/tmp/stripebackup-bench-delta}
BENCH_ARGS=("$@")
. "$REPO/test/bench/common.sh"
dir=$DIR
port=55495
data="$dir/data"

trap stop_cluster EXIT

pgbackrest_conf() { bench_pgbackrest_conf; }

init_cluster() {
	rm -rf "$data" "$dir/pgbackrest-repo" "$dir"/sb[12] "$dir"/*-stale "$dir/work"
	mkdir -p "$dir/sb1" "$dir/sb2"
	bench_pgbench_cluster "$scale"
	psql_ -c 'VACUUM ANALYZE' -c 'CHECKPOINT'
}

backups() {	# the newest full backup of each tool
	psql_ -c "SELECT stripe_backup(ARRAY['$dir/sb1', '$dir/sb2'], compression_level => 1)" >/dev/null
	pgbr --type=full backup
	sb_location=$(psql_ -c "SELECT location FROM stripe_backups ORDER BY id DESC LIMIT 1")
	br_set=$(pgbr info --output=json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["backup"][-1]["label"])')
}

settle() { sync; }

sb_restore() {	# NAME [--delta]
	settle
	local t0=$(now)
	stripebackup restore "$sb_location" --target "$dir/work" --no-progress ${2:-} > "$results/$1.out"
	record "$1" "$(elapsed "$t0")"
}

pgbr_restore() {	# NAME [--delta]
	settle
	local t0=$(now)
	pgbr --pg1-path="$dir/work" --set="$br_set" ${2:-} restore
	sync -f "$dir/work"
	record "$1" "$(elapsed "$t0")"
}

fresh_work() { rm -rf "$dir/work"; }
stale_work() { rm -rf "$dir/work"; cp -a "$dir/$1-stale" "$dir/work"; }	# TOOL

# ---------- the run ----------

rm -rf "$results"/*
: > "$results/times"
pgbackrest_conf
stop_cluster
init_cluster
bytes=$(psql_ -c "SELECT sum(pg_database_size(oid)) FROM pg_database")
say "cluster: $(calc "$bytes / 1e9" 2) GB; first backups and the stale copies"
backups
stripebackup restore "$sb_location" --target "$dir/sb-stale" --no-progress >/dev/null
pgbr --pg1-path="$dir/br-stale" --set="$br_set" restore

# pgbench touches two or three pages a transaction: about 5% of the pages.
say "changing about 5% of the pages"
pgbench -n -c 2 -t $((bytes / 8192 / 100)) -h "$dir" -p "$port" postgres >/dev/null 2>&1
psql_ -c 'CHECKPOINT'
say "second backups"
backups
stop_cluster

find "$dir/sb1" "$dir/sb2" "$dir/pgbackrest-repo" -type f -exec cat {} + >/dev/null
fresh_work
stripebackup restore "$sb_location" --target "$dir/work" --no-progress >/dev/null	# untimed: the first allocation
for round in 1 2 3; do
	say "restores, round $round of 3"
	if ((round % 2 == 1)); then
		fresh_work; sb_restore sb_full
		stale_work sb; sb_restore sb_delta --delta
		fresh_work; pgbr_restore br_full
		stale_work br; pgbr_restore br_delta --delta
	else
		stale_work br; pgbr_restore br_delta --delta
		fresh_work; pgbr_restore br_full
		stale_work sb; sb_restore sb_delta --delta
		fresh_work; sb_restore sb_full
	fi
done
fresh_work

# ---------- the report ----------

ratio() { calc "$1 / $2"; }
delta_line=$(grep '^delta:' "$results/sb_delta.out" || true)
{
echo
echo "delta restore: $(calc "$bytes / 1e9" 2) GB cluster (pgbench scale $scale), about 5% of its pages"
echo "changed since the stale copy's backup; $(nproc) CPUs, zstd level 1, two processes each; $(date -u +%F)"
echo
printf '%-52s %10s %10s\n' "restore" "seconds" "ratio"
printf '%-52s %10.2f %10s\n' "stripebackup, into an empty directory" "$(median sb_full)" ""
printf '%-52s %10.2f %10s\n' "stripebackup --delta, into the stale copy" "$(median sb_delta)" \
	"$(ratio "$(median sb_delta)" "$(median sb_full)")"
printf '%-52s %10.2f %10s\n' "pgBackRest 2.45, into an empty directory" "$(median br_full)" ""
printf '%-52s %10.2f %10s\n' "pgBackRest 2.45 --delta, into the stale copy" "$(median br_delta)" \
	"$(ratio "$(median br_delta)" "$(median br_full)")"
echo "(ratio: the delta restore's time / the same tool's restore into an empty directory)"
echo "stripebackup's $delta_line"
echo
echo "goal: stripebackup's delta restore <= 0.3x its restore into an empty directory"
} | tee "$results/report"
