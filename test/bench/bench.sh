#!/usr/bin/env bash
# The throughput benchmark (make bench): stripebackup beside pg_basebackup and
# pgBackRest on the same cluster, the same disk and in the same run, the tools
# alternating, several runs each; prints medians, ratios, and the targets of
# the throughput issue.  Figures, not a test: it never fails on a slow result.
#
#   test/bench/bench.sh [SCALE] [RUNS] [BIG_SCALE]
#     SCALE      pgbench scale of the main cluster (default 60, about 1 GB with the other tables)
#     RUNS       runs per tool (default 3)
#     BIG_SCALE  pgbench scale of a second cluster for the memory check (default 0: skip;
#                540 is about 8 GB)
#   BENCH_DIR   where everything goes (default /tmp/stripebackup-bench)
#   BENCH_ONLY  "partitions": only one table against 3,000 partitions (make bench-partitions)
#
# Started as root it installs what it needs (pgBackRest, fio) and runs as postgres.
set -euo pipefail

scale=${1:-60}
runs=${2:-3}
big_scale=${3:-0}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${BENCH_DIR:-/tmp/stripebackup-bench}
BENCH_ARGS=("$@")
. "$REPO/test/bench/common.sh"
repo=$REPO
dir=$DIR
port=55498
data="$dir/main"

# ---------- the clusters ----------

start_cluster() {	# DATA PORT
	pg_ctl -D "$1" -o "-p $2 -k $dir -c listen_addresses=''" -l "$1.log" -w start >/dev/null
}

stop_cluster() {
	pg_ctl -D "$1" -m fast stop >/dev/null 2>&1 || true
}

# A benchmark that fails half-way leaves no server running.
trap 'for d in "$data" "$dir/onetable" "$dir/manyparts" "$dir/big"; do stop_cluster "$d"; done' EXIT

init_cluster() {	# DATA PORT
	rm -rf "$1"
	initdb -D "$1" --data-checksums -A trust >/dev/null
	cat >> "$1/postgresql.conf" <<-EOF
	shared_preload_libraries = 'stripebackup'
	archive_mode = on
	archive_command = 'pgbackrest --config=$dir/pgbackrest.conf --stanza=bench archive-push %p'
	max_wal_size = 4GB
	checkpoint_timeout = 30min
	EOF
	start_cluster "$1" "$2"
	PORT=$2 psql_ -c 'CREATE EXTENSION stripebackup'
}

# pgbench, a table of random values (hex text: compresses about 2x), and a
# table with 3,000 partitions.
load_main() {
	say "loading the main cluster: pgbench scale $scale, random values, 3,000 partitions"
	pgbench -i -q -s "$scale" -h "$dir" -p "$port" postgres 2>&1 | tail -1 >&2
	psql_ -c "CREATE TABLE random_values AS
		SELECT g AS id, md5(random()::text) || md5(random()::text) || md5(random()::text) AS v
		FROM generate_series(1, $((scale * 25000))) g"
	load_partitions "$port" 3000 $((scale * 5000))
	settle "$port"
}

# After loading: vacuum and analyze now and checkpoint, so that autovacuum
# does not dirty thousands of relations during the runs, and a backup's start
# checkpoint writes what a steady server's would.
settle() {	# PORT
	PORT=$1 psql_ -c 'VACUUM ANALYZE' -c 'CHECKPOINT'
}

load_partitions() {	# PORT PARTITIONS ROWS
	PORT=$1 psql_ -c "CREATE TABLE parts (id bigint, v text) PARTITION BY HASH (id)"
	PORT=$1 psql_ -c "DO \$\$ BEGIN FOR i IN 0..$(($2 - 1)) LOOP
		EXECUTE format('CREATE TABLE parts_%s PARTITION OF parts FOR VALUES WITH (MODULUS $2, REMAINDER %s)', i, i);
		END LOOP; END \$\$"
	PORT=$1 psql_ -c "INSERT INTO parts SELECT g, md5(g::text) || md5(random()::text)
		FROM generate_series(1, $3) g"
}

# pgBackRest as its user guide sets it up for speed: parallel processes, and
# small files bundled (repo1-bundle, which its guide says saves backup time: with the
# 3,000 partitions' 16,000 files a zst backup took 20.3 s without, 7.5 s with).
# Its restore syncs every file it writes (16,052 fsyncs here, 20.6 s of wall
# time for 7 s of CPU), and no setting turns that off: that is its time.
pgbackrest_conf() {
	cat > "$dir/pgbackrest.conf" <<-EOF
	[global]
	repo1-path=$dir/pgbackrest-repo
	repo1-retention-full=1
	repo1-bundle=y
	process-max=2
	start-fast=y
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

pgbr() { pgbackrest --config="$dir/pgbackrest.conf" --stanza=bench "$@"; }

# ---------- the tools ----------

sb_backup() {	# NAME NDEST COMPRESSION
	local dests=() i
	for ((i = 1; i <= $2; i++)); do
		rm -rf "$dir/sb$i"
		mkdir -p "$dir/sb$i"
		dests+=("'$dir/sb$i'")
	done
	local t0=$(now)
	psql_ -c "SELECT stripe_backup(ARRAY[$(IFS=,; echo "${dests[*]}")], compression => '$3', compression_level => 1)" >/dev/null
	record "$1" "$(elapsed "$t0")"
}

pgbb_backup() {	# NAME none|zstd
	rm -rf "$dir/pgbb"
	local t0=$(now)
	if [[ $2 == zstd ]]; then
		pg_basebackup -h "$dir" -p "$port" -D "$dir/pgbb" -Ft -X fetch --checkpoint=fast \
			--compress=server-zstd:level=1,workers=2
	else
		pg_basebackup -h "$dir" -p "$port" -D "$dir/pgbb" -Ft -X fetch --checkpoint=fast
	fi
	sync -f "$dir/pgbb"/*
	record "$1" "$(elapsed "$t0")"
}

pgbr_backup() {	# NAME none|zst
	local t0=$(now)
	pgbr --type=full --compress-type="$2" --compress-level=1 backup
	record "$1" "$(elapsed "$t0")"
}

# An empty target for the next restore, $restore_dir (fresh_fs.sh).
restore_target() {
	fresh_target "$dir" "$restore_fs_gb" restore
	restore_dir=$fresh_dir
	restore_where=$fresh_where
}

sb_location() { psql_ -c "SELECT location FROM stripe_backups WHERE status = 'completed' ORDER BY id DESC LIMIT 1"; }

sb_restore() {	# [NAME]: the newest backup restored by the command
	restore_target
	local location
	location=$(sb_location)
	local t0=$(now)
	stripebackup restore "$location" --target "$restore_dir" --no-progress >/dev/null
	record "${1:-sb_restore}" "$(elapsed "$t0")"
}

pgbr_restore() {
	restore_target
	local t0=$(now)
	pgbr --pg1-path="$restore_dir" restore
	sync -f "$restore_dir"
	record br_restore "$(elapsed "$t0")"
}

pgbb_restore() {
	restore_target
	mkdir -p "$restore_dir/pg_wal"
	local t0=$(now)
	zstd -q -d -c "$dir/pgbb/base.tar.zst" | tar -xf - -C "$restore_dir"
	sync -f "$restore_dir"
	record bb_restore "$(elapsed "$t0")"
}

# ---------- a plan's estimate against the restore ----------

# stripe_restore_plan's estimate for the newest backup (its total row: seconds
# and where the figures came from), then that backup restored from SQL and
# timed, twice a round.  First as if no restore had read these destinations
# (their restore history removed): the estimate reads at stripe_calibrate's
# speeds and measures the rest on a sample of the backup; then from what
# that restore measured.  Each round gives one of each: a restore's time
# here varies from run to run (1.3 to 2.5 s for the same one), so the
# targets take the median ratio of each kind.
sql_restore() {
	psql_ -c "DELETE FROM stripe_restore_stripe_history" -c "DELETE FROM stripe_restore_history"
	sql_restore_timed
	sql_restore_timed
}

sql_restore_timed() {
	local estimate t0 location
	restore_target
	location=$(sb_location)
	estimate=$(psql_ -F ' ' -c "SELECT coalesce(round(estimated_seconds::numeric, 2)::text, '-'),
		coalesce(estimate_from, 'none') FROM stripe_restore_plan('$location'::text,
		target_directory => '$restore_dir') WHERE stripe IS NULL" 2>/dev/null)
	sync
	t0=$(now)
	psql_ -c "SELECT stripe_restore('$location'::text, '$restore_dir')" >/dev/null
	echo "$estimate $(elapsed "$t0")" >> "$results/estimates"
	record sql_restore "$(elapsed "$t0")"
}

# The destinations of the newest backup measured by stripe_calibrate, for the first estimate.
calibrate_destinations() {
	psql_ -c "SELECT count(*) FROM stripe_calibrate(ARRAY['$dir/sb1', '$dir/sb2', '$dir/sb3'])" >/dev/null
}

# ---------- CPU per byte: the engine's zstd level 1 against zstd -1 itself ----------

# The stopped cluster's files, in the page cache for both: compressed by
# `zstd -1` (one thread, to /dev/null) and backed up by `stripebackup create`
# at zstd level 1 to two folders; user plus system CPU seconds of each.
cpu_per_byte() {
	local out
	rm -rf "$dir/c1" "$dir/c2" && mkdir -p "$dir/c1" "$dir/c2"
	find "$data" -type f -exec cat {} + > /dev/null
	out=$( { /usr/bin/time -f 'cpu %U %S' zstd -1 -q -T1 -r -c "$data" > /dev/null; } 2>&1 | tail -1)
	echo "zstd $(awk '{ print $2 + $3 }' <<< "$out")" >> "$results/cpu"
	out=$( { /usr/bin/time -f 'cpu %U %S' stripebackup create --source "$data" --dest "$dir/c1" \
		--dest "$dir/c2" --name cpu --compression zstd --level 1 --no-progress > /dev/null; } 2>&1 | tail -1)
	echo "create $(awk '{ print $2 + $3 }' <<< "$out")" >> "$results/cpu"
	rm -rf "$dir/c1" "$dir/c2"
}

# ---------- memory and cache ----------

# Peak RSS of the backup worker (sampled) and the page cache's growth.
memory_and_cache() {	# LABEL PORT
	local caller peak before after read
	before=$(awk '/^Cached:/ { printf "%d", $2 * 1024 }' /proc/meminfo)
	rm -rf "$dir/m1" "$dir/m2" && mkdir -p "$dir/m1" "$dir/m2"
	PORT=$2 psql_ -c "SELECT stripe_backup(ARRAY['$dir/m1', '$dir/m2'])" >/dev/null &
	caller=$!
	peak=$(($(worker_peak_rss "$caller") * 1024))
	wait "$caller"
	after=$(awk '/^Cached:/ { printf "%d", $2 * 1024 }' /proc/meminfo)
	read=$(PORT=$2 psql_ -c "SELECT bytes_read FROM stripe_backups ORDER BY id DESC LIMIT 1")
	echo "$1 $peak $((after - before)) $read" >> "$results/memory"
	rm -rf "$dir/m1" "$dir/m2"
}

# ---------- balance: two destinations limited 1:4 ----------

balance() {	# LABEL BALANCE WEIGHTS
	local stored rate location
	stored=$(psql_ -c "SELECT sum(pg_database_size(oid)) FROM pg_database")
	rate=$(calc "$stored / 1e6 / 5 / 15" 1)	# about 15 s in all
	rm -rf "$dir/b1" "$dir/b2" && mkdir -p "$dir/b1" "$dir/b2"
	psql_ -c "SET stripebackup.max_rate = '$rate, $(calc "$rate * 4" 1)'" \
		-c "SELECT stripe_backup(ARRAY['$dir/b1', '$dir/b2'], weights => ARRAY[$3], balance => '$2',
			compression => 'none')" >/dev/null
	location=$(psql_ -c "SELECT location FROM stripe_backups ORDER BY id DESC LIMIT 1")
	python3 - "$location/manifest.json" "$1" <<-'PY' >> "$results/balance"
	import json, sys
	m = json.load(open(sys.argv[1]))
	f = [s["finished_after"] for s in m["stripes"]]
	print(sys.argv[2], f[0], f[1], max(f))
	PY
	rm -rf "$dir/b1" "$dir/b2"
}

# ---------- one table against 3,000 partitions ----------

partitions_vs_table() {
	local mb=$((scale * 5))
	say "one table against 3,000 partitions, ${mb} MB each"
	init_cluster "$dir/onetable" 55496
	PORT=55496 psql_ -c "CREATE TABLE t AS SELECT g AS id, md5(g::text) || md5(random()::text) AS v
		FROM generate_series(1, $((scale * 50000))) g"
	init_cluster "$dir/manyparts" 55495
	load_partitions 55495 3000 $((scale * 50000))
	settle 55496
	settle 55495
	for ((r = 1; r <= runs; r++)); do
		for c in onetable:55496 manyparts:55495; do
			rm -rf "$dir/p1" "$dir/p2" && mkdir -p "$dir/p1" "$dir/p2"
			# nothing dirty when it starts: the loads' and the last backup's
			# write-out would compete with the one timed, unevenly
			sync
			PORT=${c#*:} psql_ -c "SELECT stripe_backup(ARRAY['$dir/p1', '$dir/p2'], compression => 'none')" >/dev/null
			PORT=${c#*:} psql_ -c "SELECT bytes_read / 1e6 / extract(epoch FROM duration)
				FROM stripe_backups ORDER BY id DESC LIMIT 1" | xargs -I{} echo "${c%%:*} {}" >> "$results/times"
		done
	done
	stop_cluster "$dir/onetable"
	stop_cluster "$dir/manyparts"
	rm -rf "$dir/p1" "$dir/p2" "$dir/onetable" "$dir/manyparts"
}

# ---------- the run ----------

# make bench-partitions: that scenario alone, RUNS times.
if [[ ${BENCH_ONLY:-} == partitions ]]; then
	pgbackrest_conf
	mkdir -p "$results" && : > "$results/times"
	partitions_vs_table
	echo "3,000 partitions, ${runs} runs:" \
		"$(awk '$1 == "manyparts" { printf " %.0f", $2 }' "$results/times") MB/s; one table:" \
		"$(awk '$1 == "onetable" { printf " %.0f", $2 }' "$results/times") MB/s;" \
		"medians $(calc "$(median manyparts)" 0) against $(calc "$(median onetable)" 0)" \
		"($(calc "100 * $(median manyparts) / $(median onetable)" 0)%; the goal: 90% or more)"
	exit 0
fi

stop_cluster "$data"
pgbackrest_conf
rm -rf "$dir/pgbackrest-repo" "$results"/*
: > "$results/times"
: > "$results/estimates"
: > "$results/cpu"
init_cluster "$data" "$port"
pgbr stanza-create >/dev/null
load_main
bytes=$(psql_ -c "SELECT sum(pg_database_size(oid)) FROM pg_database")
restore_fs_gb=$((bytes * 2 / 1000000000 + 2))
say "main cluster: $(calc "$bytes / 1e9" 2) GB; $runs runs of each tool, alternating"

for ((r = 1; r <= runs; r++)); do
	say "round $r of $runs: backups"
	sb_backup sb2_none 2 none
	pgbb_backup bb_none none
	pgbr_backup br_none none
	sb_backup sb3_none 3 none
	sb_restore sb_restore_none	# beside fio's write rate into the same kind of file system
	sb_backup sb2_zstd 2 zstd
	pgbb_backup bb_zstd zstd
	pgbr_backup br_zstd zst
	sb_backup sb3_zstd 3 zstd
	say "round $r of $runs: restores"
	((r == 1)) && calibrate_destinations
	sb_restore
	pgbr_restore
	pgbb_restore
	sql_restore
done
rm -rf "$dir/pgbb" "$dir"/sb[123]

say "the limit: fio reading and writing $(calc "$bytes / 1e9" 2) GB, and writing where restores write"
read_rate=$(fio_rate read "$bytes" "$dir")
write_rate=$(fio_rate write "$bytes" "$dir")
restore_target
restore_write_rate=$(fio_rate write "$bytes" "$(dirname "$restore_dir")")

say "memory and page cache"
memory_and_cache "main" "$port"
say "balance: two destinations limited 1:4"
balance adaptive adaptive "1, 1"
balance weighted weighted "1, 4"
stop_cluster "$data"
say "CPU per byte: stripebackup create at zstd 1 against zstd -1, twice each"
cpu_per_byte
cpu_per_byte
if ((big_scale > 0)); then
	say "memory on a cluster of pgbench scale $big_scale"
	init_cluster "$dir/big" 55497
	PORT=55497 pgbench -i -q -s "$big_scale" -h "$dir" -p 55497 postgres 2>&1 | tail -1 >&2
	memory_and_cache "big" 55497
	stop_cluster "$dir/big"
	rm -rf "$dir/big"
fi
partitions_vs_table

# ---------- the report ----------

mbps() { calc "$bytes / 1e6 / $1" 0; }
row() {	# LABEL KEY [REFERENCE_KEY]
	local s ref=""
	s=$(median "$2")
	[[ -n ${3:-} ]] && ref=$(calc "$s / $(median "$3")")
	printf '%-62s %8.2f %8s %8s\n' "$1" "$s" "$(mbps "$s")" "$ref"
}
target() {	# TEXT MET
	printf '  %-80s %s\n' "$1" "$([[ $2 == 1 ]] && echo met || echo 'NOT met')"
}
{
echo
echo "stripebackup benchmark: $(calc "$bytes / 1e9" 2) GB cluster (pgbench scale $scale, random values,"
echo "3,000 partitions), $runs runs each, medians; $(nproc) CPUs; $(date -u +%F)"
echo
printf '%-62s %8s %8s %8s\n' "backup" "seconds" "MB/s" "ratio"
row "stripebackup, 2 destinations, none" sb2_none bb_none
row "stripebackup, 3 destinations, none" sb3_none bb_none
row "pg_basebackup -Ft -X fetch" bb_none
row "pgBackRest process-max=2 bundle, none" br_none bb_none
row "stripebackup, 2 destinations, zstd 1" sb2_zstd bb_zstd
row "stripebackup, 3 destinations, zstd 1" sb3_zstd bb_zstd
row "pg_basebackup -Ft -X fetch --compress=server-zstd:level=1,workers=2" bb_zstd
row "pgBackRest process-max=2 bundle, zst level 1" br_zstd bb_zstd
echo "(ratio: time / pg_basebackup's time at the same compression)"
echo
printf '%-62s %8s %8s %8s\n' "restore" "seconds" "MB/s" "ratio"
row "stripebackup restore (3 stripes, zstd 1)" sb_restore br_restore
row "stripebackup restore (3 stripes, none)" sb_restore_none br_restore
row "pgBackRest restore (process-max=2, zst 1)" br_restore
row "pg_basebackup tar | zstd -d | tar -x" bb_restore br_restore
row "stripe_restore() from SQL (the same backup)" sql_restore br_restore
echo "(ratio: time / pgBackRest's; every restore made durable, $restore_where;"
echo " pgBackRest syncs each file it restores, the others sync their file system once at the end)"
echo
echo "stripe_restore_plan's estimate against stripe_restore's time, run by run:"
while read -r est from took; do
	echo "  estimate ${est} s from ${from}; the restore took $(calc "$took") s$([[ $est != - ]] && echo " (estimate / actual $(calc "$est / $took"))")"
done < "$results/estimates"
echo
fio_copy=$(calc "$bytes / $read_rate + $bytes / $write_rate" 3)
echo "the limit (fio, 1 MiB, 16 in flight; reads direct, writes the faster of direct and buffered,"
echo "synced at their end):"
echo "  read $(calc "$read_rate / 1e6" 0) MB/s, write $(calc "$write_rate / 1e6" 0) MB/s;"
echo "  reading and writing the cluster's bytes once takes ${fio_copy} s ($(mbps "$fio_copy") MB/s);"
fio_restore=$(calc "$bytes / $read_rate + $bytes / $restore_write_rate" 3)
echo "  writing where the restores write: $(calc "$restore_write_rate / 1e6" 0) MB/s; reading the cluster's"
echo "  bytes here and writing them there takes ${fio_restore} s ($(mbps "$fio_restore") MB/s)"
echo
echo "memory and cache (peak RSS of the worker, page-cache growth during the backup):"
while read -r label peak growth read; do
	echo "  $label: peak RSS $(calc "$peak / 1048576" 0) MiB; page cache grew $(calc "$growth / 1048576" 0) MiB for $(calc "$read / 1048576" 0) MiB read ($(calc "100 * $growth / $read" 1)%)"
done < "$results/memory"
echo
echo "balance (seconds from the start to each stripe's last write):"
while read -r label f1 f2 wall; do
	echo "  $label: stripe 1 at $(calc "$f1"), stripe 2 at $(calc "$f2"): apart by $(calc "100 * ($f1 > $f2 ? $f1 - $f2 : $f2 - $f1) / $wall" 1)% of the backup's time"
done < "$results/balance"
echo
one=$(median onetable)
many=$(median manyparts)
echo "3,000 partitions: $(calc "$many" 0) MB/s against $(calc "$one" 0) MB/s for one table ($(calc "100 * $many / $one" 0)%)"
cpu() { awk -v k="$1" '$1 == k { print $2 }' "$results/cpu" | sort -g | head -1; }
cpu_gb=$(du -sb "$data" | awk '{ print $1 / 1e9 }')
echo
echo "CPU per byte, the stopped cluster's files from the page cache (least of two runs):"
echo "  zstd -1 -T1 -r: $(calc "$(cpu zstd) / $cpu_gb") CPU s/GB; stripebackup create, zstd 1, 2 folders:" \
	"$(calc "$(cpu create) / $cpu_gb") CPU s/GB ($(calc "$(cpu create) / $(cpu zstd)") x)"
echo
echo "targets:"
# buffer_count (16) chunks of transfer_size (1 MiB), twice with compression,
# plus queue_depth (4) read-ahead buffers: the defaults.
buffers_mib=$(calc "(16 * 2 + 4) * 1" 0)
target "backup zstd 1 <= 0.6 x pg_basebackup server-zstd ($(calc "$(median sb3_zstd) / $(median bb_zstd)"))" \
	"$(awk "BEGIN { print ($(median sb3_zstd) <= 0.6 * $(median bb_zstd)) }")"
target "backup zstd 1 <= 0.4 x pgBackRest zst 1 ($(calc "$(median sb3_zstd) / $(median br_zstd)"))" \
	"$(awk "BEGIN { print ($(median sb3_zstd) <= 0.4 * $(median br_zstd)) }")"
target "backup none >= 80% of fio's read-and-write rate ($(calc "100 * $fio_copy / $(median sb3_none)" 0)%)" \
	"$(awk "BEGIN { print ($fio_copy / $(median sb3_none) >= 0.8) }")"
target "restore none >= 80% of fio's rate, reading here and writing where it writes ($(calc "100 * $fio_restore / $(median sb_restore_none)" 0)%)" \
	"$(awk "BEGIN { print ($fio_restore / $(median sb_restore_none) >= 0.8) }")"
target "restore <= 0.5 x pgBackRest ($(calc "$(median sb_restore) / $(median br_restore)"))" \
	"$(awk "BEGIN { print ($(median sb_restore) <= 0.5 * $(median br_restore)) }")"
while read -r label f1 f2 wall; do
	target "balance, $label: stripes within 5% of the backup's time" \
		"$(awk "BEGIN { d = $f1 - $f2; if (d < 0) d = -d; print (d <= 0.05 * $wall) }")"
done < "$results/balance"
target "zstd 1 CPU s/GB <= 1.15 x zstd -1's ($(calc "$(cpu create) / $(cpu zstd)"))" \
	"$(awk "BEGIN { print ($(cpu create) <= 1.15 * $(cpu zstd)) }")"
# each kind of estimate (calibration and a sample; a restore before it): the median ratio
for from in calibration restore; do
	ratio=$(awk -v f="$from" '$2 == f && $1 != "-" { print $1 / $3 }' "$results/estimates" | sort -g |
		awk '{ r[NR] = $1 } END { if (NR) print (NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2) }')
	[[ -n $ratio ]] && target "restore estimate (from $from) within 20% of the restore (median $(calc "$ratio"))" \
		"$(awk "BEGIN { d = $ratio - 1; if (d < 0) d = -d; print (d <= 0.2) }")"
done
target "3,000 partitions >= 90% of one table's throughput" "$(awk "BEGIN { print ($many >= 0.9 * $one) }")"
while read -r label peak growth read; do
	target "memory ($label): peak RSS <= buffers ${buffers_mib} MiB + 64 MiB" \
		"$(awk "BEGIN { print ($peak <= ($buffers_mib + 64) * 1048576) }")"
	target "cache ($label): page-cache growth <= 10% of bytes read" \
		"$(awk "BEGIN { print ($growth <= 0.1 * $read) }")"
done < "$results/memory"
} | tee "$results/report.txt"
