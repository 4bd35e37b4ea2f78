#!/usr/bin/env bash
# Delta restore (make bench-delta): a copy of a pgbench cluster restored from
# one full backup goes stale while the cluster changes; a second full backup
# is then restored into it in place (stripebackup restore --delta,
# pgBackRest restore --delta), beside each tool's restore of the same backup
# into an empty directory.  For each scale, five kinds of change, each from
# the same starting cluster:
#   scattered-1%  pgbench transactions touching about 1% of the pages
#   scattered-5%  the same, about 5%
#   appended      a table appended to (5% of pgbench_accounts' rows)
#   dropped       a table of 5% of the cluster dropped
#   none          nothing changed
# Prints times, ratios, and what stripebackup's delta compared, read of the
# stripes and wrote.  Figures, not a test.
#
#   test/bench/delta.sh [SCALES]   (default "40 200": about 0.65 and 3.2 GB)
#   BENCH_DIR   where everything goes (default /tmp/stripebackup-bench-delta)
#   ROUNDS      restores of each kind per change (default 3; medians)
#   FRAME_SIZE  stripebackup.frame_size of stripebackup's backups (default 64kB)
#
# Every restore is made durable (stripebackup syncs its file systems; after
# pgBackRest's, sync -f) and starts with nothing dirty in the page cache; the
# stale copy each delta restore refreshes is copied afresh, untimed, before
# it; both tools' backups are read from the page cache.  zstd level 1, two
# processes each.  Every other round runs in the other order.
set -euo pipefail

scales=${1:-40 200}
rounds=${ROUNDS:-3}
frame_size=${FRAME_SIZE:-64kB}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${BENCH_DIR:-/tmp/stripebackup-bench-delta}
BENCH_ARGS=("$@")
. "$REPO/test/bench/common.sh"
dir=$DIR
port=55495
data="$dir/data"
pristine="$dir/pristine"
changes="scattered-1% scattered-5% appended dropped none"

trap stop_cluster EXIT

pgbackrest_conf() { bench_pgbackrest_conf; }

# The starting cluster, stopped and kept: every change starts from it.
init_cluster() {	# SCALE
	rm -rf "$data" "$pristine" "$dir/pgbackrest-repo"
	bench_pgbench_cluster "$1"
	psql_ -c 'CREATE TABLE bench_dropped AS SELECT * FROM pgbench_accounts WHERE aid % 20 = 0' \
		-c 'VACUUM ANALYZE' -c 'CHECKPOINT'
	stop_cluster
	cp -a "$data" "$pristine"
}

# The starting cluster again, with empty repositories: its WAL is made
# again under the same names, which pgBackRest's archive would refuse.
reset_cluster() {
	stop_cluster
	rm -rf "$data" "$dir/pgbackrest-repo" "$dir/sb1" "$dir/sb2" "$dir"/*-stale "$dir/work"
	mkdir -p "$dir/sb1" "$dir/sb2"
	cp -a "$pristine" "$data"
	start_cluster
	pgbr stanza-create >/dev/null
}

backups() {	# the newest full backup of each tool
	psql_ -c "SET stripebackup.frame_size = '$frame_size'" \
		-c "SELECT stripe_backup(ARRAY['$dir/sb1', '$dir/sb2'], compression_level => 1)" >/dev/null
	pgbr --type=full backup
	sb_location=$(psql_ -c "SELECT location FROM stripe_backups ORDER BY id DESC LIMIT 1")
	br_set=$(pgbr info --output=json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["backup"][-1]["label"])')
}

change() {	# KIND BYTES
	local pages=$(($2 / 8192)) rows
	case $1 in
	scattered-1%) pgbench -n -c 2 -t $((pages / 500)) -h "$dir" -p "$port" postgres >/dev/null 2>&1 ;;
	scattered-5%) pgbench -n -c 2 -t $((pages / 100)) -h "$dir" -p "$port" postgres >/dev/null 2>&1 ;;
	appended)
		rows=$(psql_ -c 'SELECT max(aid) FROM pgbench_accounts')
		psql_ -c "INSERT INTO pgbench_accounts SELECT aid + $rows, bid, abalance, filler
			FROM pgbench_accounts WHERE aid <= $((rows / 20))" ;;
	dropped) psql_ -c 'DROP TABLE bench_dropped' ;;
	none) ;;
	esac
	psql_ -c 'CHECKPOINT'
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

# The restores of one change, ROUNDS of each, named KEY_*.
restores() {	# KEY
	local k=$1 round
	find "$dir/sb1" "$dir/sb2" "$dir/pgbackrest-repo" -type f -exec cat {} + >/dev/null
	fresh_work
	stripebackup restore "$sb_location" --target "$dir/work" --no-progress >/dev/null	# untimed: the first allocation
	for ((round = 1; round <= rounds; round++)); do
		if ((round % 2 == 1)); then
			fresh_work; sb_restore "${k}_sb_full"
			stale_work sb; sb_restore "${k}_sb_delta" --delta
			fresh_work; pgbr_restore "${k}_br_full"
			stale_work br; pgbr_restore "${k}_br_delta" --delta
		else
			stale_work br; pgbr_restore "${k}_br_delta" --delta
			fresh_work; pgbr_restore "${k}_br_full"
			stale_work sb; sb_restore "${k}_sb_delta" --delta
			fresh_work; sb_restore "${k}_sb_full"
		fi
	done
	fresh_work
}

# MB in the Nth "delta:" line of a restore's output, after WORD: "compared", "written", ...
delta_mb() {	# KEY WORD
	grep -o "[0-9.]* MB $2" "$results/$1_sb_delta.out" | head -1 | cut -d' ' -f1
}

stripes_read() {	# KEY: "read / stored" MB
	sed -n 's/^delta: \([0-9.]*\) MB of the stripes. \([0-9.]*\) MB read$/\1 \/ \2/p' "$results/$1_sb_delta.out"
}

# ---------- the run ----------

rm -rf "$results"/*
: > "$results/times"
pgbackrest_conf
stop_cluster
for scale in $scales; do
	init_cluster "$scale"
	for kind in $changes; do
		key="${scale}_${kind}"
		say "scale $scale, $kind: first backups and the stale copies"
		reset_cluster
		bytes=$(psql_ -c "SELECT sum(pg_database_size(oid)) FROM pg_database")
		echo "$bytes" > "$results/${scale}.bytes"
		backups
		stripebackup restore "$sb_location" --target "$dir/sb-stale" --no-progress >/dev/null
		pgbr --pg1-path="$dir/br-stale" --set="$br_set" restore
		say "scale $scale, $kind: changing, second backups"
		change "$kind" "$bytes"
		backups
		stop_cluster
		say "scale $scale, $kind: restores"
		restores "$key"
	done
done

# ---------- the report ----------

ratio() { calc "$1 / $2"; }
{
echo
echo "delta restore: a stale copy of a pgbench cluster refreshed from a newer full backup"
echo "$(nproc) CPUs, zstd level 1 (stripebackup in frames of $frame_size), two processes each, medians of $rounds; $(date -u +%F)"
echo "(ratio: the delta restore's time / the same tool's restore of that backup into an empty directory;"
echo " written: what stripebackup's delta wrote, of the cluster's size)"
echo
printf '%-6s %-13s %7s %7s %6s %17s %9s %13s %7s %7s %6s\n' "scale" "change" "sb full" "delta" "ratio" \
	"stripes read MB" "compared" "written" "br full" "delta" "ratio"
for scale in $scales; do
	bytes=$(cat "$results/${scale}.bytes")
	for kind in $changes; do
		k="${scale}_${kind}"
		written=$(delta_mb "$k" written)
		printf '%-6s %-13s %7.2f %7.2f %6s %17s %9s %13s %7.2f %7.2f %6s\n' "$scale" "$kind" \
			"$(median "${k}_sb_full")" "$(median "${k}_sb_delta")" \
			"$(ratio "$(median "${k}_sb_delta")" "$(median "${k}_sb_full")")" \
			"$(stripes_read "$k")" "$(delta_mb "$k" compared)" \
			"$written ($(calc "$written * 1e6 * 100 / $bytes" 1)%)" \
			"$(median "${k}_br_full")" "$(median "${k}_br_delta")" \
			"$(ratio "$(median "${k}_br_delta")" "$(median "${k}_br_full")")"
	done
done
echo
echo "goal: stripebackup's delta <= 0.3x its full restore with scattered changes, <= 0.1x at 1% and scale 200"
} | tee "$results/report"
