#!/usr/bin/env bash
# The size sweep (make bench-sweep): clusters of growing size backed up online
# (stripe_backup, zstd 1, two folders) and restored by the command, so that
# MB/s and memory staying flat as the cluster grows (or not) shows.  Figures,
# not a test.
#
#   test/bench/size_sweep.sh [SIZES_GB]    (default 1,4,16)
#   BENCH_DIR   where everything goes (default /tmp/stripebackup-sweep)
#
# Each cluster is pgbench at the scale that makes about that many GB (scale
# 68 is about 1 GB).  Every restore is made durable (the command syncs its
# file system) and starts with the caches synced.
set -euo pipefail

sizes=${1:-1,4,16}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${BENCH_DIR:-/tmp/stripebackup-sweep}
BENCH_ARGS=("$@")
. "$REPO/test/bench/common.sh"
dir=$DIR
port=55492
data="$dir/data"
trap stop_cluster EXIT

restore_measured() {	# LOCATION: seconds and peak RSS (KiB)
	rm -rf "$dir/restore"
	sync
	{ /usr/bin/time -f '%e %M' stripebackup restore "$1" --target "$dir/restore" --no-progress \
		>/dev/null; } 2>&1 | tail -1
}

: > "$results/sweep"
IFS=, read -r -a gbs <<< "$sizes"
for gb in "${gbs[@]}"; do
	scale=$(calc "$gb * 68" 0)
	stop_cluster
	rm -rf "$data" "$dir/restore"
	say "a cluster of about $gb GB (pgbench scale $scale)"
	initdb -D "$data" --data-checksums -A trust >/dev/null
	printf '%s\n' "shared_preload_libraries = 'stripebackup'" "max_wal_size = 8GB" \
		"checkpoint_timeout = 1h" "autovacuum = off" >> "$data/postgresql.conf"
	start_cluster
	psql_ -c 'CREATE EXTENSION stripebackup'
	pgbench -i -q -s "$scale" -h "$dir" -p "$port" postgres 2>&1 | tail -1 >&2
	psql_ -c 'VACUUM ANALYZE' -c 'CHECKPOINT'
	bytes=$(psql_ -c "SELECT sum(pg_database_size(oid)) FROM pg_database")
	read -r bsecs bpeak <<< "$(sampled_backup)"
	[[ -n $bpeak ]] || { echo "the backup of $gb GB did not complete" >&2; exit 1; }
	location=$(psql_ -c "SELECT location FROM stripe_backups ORDER BY id DESC LIMIT 1")
	read -r rsecs rpeak <<< "$(restore_measured "$location")"
	echo "$gb $bytes $bsecs $bpeak $rsecs $rpeak" >> "$results/sweep"
	rm -rf "$dir/sb1" "$dir/sb2" "$dir/restore"
done
stop_cluster
rm -rf "$data"

{
echo
echo "Size sweep: pgbench clusters, stripe_backup (2 folders, zstd 1) and stripebackup restore;"
echo "$(nproc) CPUs; $(date -u +%F)"
printf '%-8s %10s %12s %14s %12s %15s\n' "cluster" "GB" "backup MB/s" "worker MiB" "restore MB/s" "restore MiB"
while read -r gb bytes bsecs bpeak rsecs rpeak; do
	printf '%-8s %10s %12s %14s %12s %15s\n' "${gb} GB" "$(calc "$bytes / 1e9")" \
		"$(calc "$bytes / 1e6 / $bsecs" 0)" "$(calc "$bpeak / 1024" 0)" \
		"$(calc "$bytes / 1e6 / $rsecs" 0)" "$(calc "$rpeak / 1024" 0)"
done < "$results/sweep"
first=$(head -1 "$results/sweep")
last=$(tail -1 "$results/sweep")
read -r _ b1 s1 _ r1 _ <<< "$first"
read -r _ b2 s2 _ r2 _ <<< "$last"
echo "largest against smallest: backup MB/s $(calc "($b2 / $s2) / ($b1 / $s1)") x, restore MB/s $(calc "($b2 / $r2) / ($b1 / $r1)") x"
echo "(target, issue \"Throughput, second round\": MB/s within 10% from 1 to 16 GB, memory within"
echo " the buffers (36 MiB with the defaults) + 64 MiB)"
} | tee "$results/sweep-report.txt"
