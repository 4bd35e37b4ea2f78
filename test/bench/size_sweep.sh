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
# 68 is about 1 GB).  Each cluster is backed up three times, and as often by
# pg_basebackup; the last backup is restored three times, each time into a
# freshly made file system, made durable (the command syncs its file system)
# and started with the caches synced; fio writes as many bytes into another
# fresh one, the line beside it.  Medians of three count.
#
# A backup's time is its fixed cost (the worker, the slot, PostgreSQL's backup
# start with its WAL switch and checkpoint, its stop, the final syncs), paid
# whatever the size, and the copy: the sweep measures the first on the
# cluster as initdb leaves it (beside pg_basebackup's on the same cluster)
# and the second from each stripe's timeline (stripe_backup_timeline).
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

new_cluster() {
	stop_cluster
	rm -rf "$data" "$dir/restore-fs/restore"
	initdb -D "$data" --data-checksums -A trust >/dev/null
	printf '%s\n' "shared_preload_libraries = 'stripebackup'" "max_wal_size = 8GB" \
		"checkpoint_timeout = 1h" "autovacuum = off" >> "$data/postgresql.conf"
	start_cluster
	psql_ -c 'CREATE EXTENSION stripebackup'
}

pgbb_seconds() {	# pg_basebackup at zstd 1 as make bench runs it, synced
	local t0
	rm -rf "$dir/pgbb"
	sync
	t0=$(now)
	pg_basebackup -h "$dir" -p "$port" -D "$dir/pgbb" -Ft -X fetch --checkpoint=fast \
		--compress=server-zstd:level=1,workers=2
	sync -f "$dir/pgbb"/*
	elapsed "$t0"
	rm -rf "$dir/pgbb"
}

# The newest backup: seconds until its last stripe's last write, counted from
# when the engine began (after the backup start), and its stored bytes.
copy_seconds_and_stored() {
	psql_ -F ' ' -c "SELECT (SELECT max(t.seconds) FROM stripe_backup_timeline t WHERE t.backup_id = b.id),
		b.bytes_written FROM stripe_backups b ORDER BY b.id DESC LIMIT 1"
}

# Into a fresh file system of SIZE GB: seconds, peak RSS (KiB), and the
# command's own phases (tree, read and write, finish).
restore_measured() {	# LOCATION SIZE_GB
	fresh_fs_make "$dir" "$2" || { echo "the sweep needs root for its fresh file systems" >&2; exit 1; }
	sync
	{ /usr/bin/time -f '%e %M' stripebackup restore "$1" --target "$dir/restore-fs/restore" \
		--no-progress > "$results/restore.out"; } 2>&1 | tail -1 | tr '\n' ' '
	sed -n 's/.* s (\([0-9.]*\) s creating the tree, \([0-9.]*\) s reading and writing, \([0-9.]*\) s finishing.*/\1 \2 \3/p' \
		"$results/restore.out"
}

median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }

say "the fixed cost: backups of the cluster as initdb leaves it"
new_cluster
empty_bytes=$(psql_ -c "SELECT sum(pg_database_size(oid)) FROM pg_database")
sb_fixed=()
bb_fixed=()
for i in 1 2 3; do
	read -r secs _ <<< "$(sampled_backup)"
	sb_fixed+=("$secs")
	bb_fixed+=("$(pgbb_seconds)")
done
sb_fixed=$(median3 "${sb_fixed[@]}")
bb_fixed=$(median3 "${bb_fixed[@]}")

: > "$results/sweep"
IFS=, read -r -a gbs <<< "$sizes"
for gb in "${gbs[@]}"; do
	scale=$(calc "$gb * 68" 0)
	say "a cluster of about $gb GB (pgbench scale $scale)"
	new_cluster
	pgbench -i -q -s "$scale" -h "$dir" -p "$port" postgres 2>&1 | tail -1 >&2
	psql_ -c 'VACUUM ANALYZE' -c 'CHECKPOINT'
	bytes=$(psql_ -c "SELECT sum(pg_database_size(oid)) FROM pg_database")
	: > "$results/backups"
	for i in 1 2 3; do
		read -r bsecs bpeak <<< "$(sampled_backup)"
		[[ -n $bpeak ]] || { echo "the backup of $gb GB did not complete" >&2; exit 1; }
		echo "$bsecs $bpeak $(copy_seconds_and_stored) $(pgbb_seconds)" >> "$results/backups"
	done
	read -r bsecs _ copy stored _ <<< "$(sort -g "$results/backups" | sed -n 2p)"
	bbsecs=$(median3 $(awk '{ print $5 }' "$results/backups"))
	bpeak=$(awk '$2 > m { m = $2 } END { print m }' "$results/backups")	# the highest of the three
	location=$(psql_ -c "SELECT location FROM stripe_backups ORDER BY id DESC LIMIT 1")
	fs_gb=$((bytes * 5 / 4 / 1000000000 + 2))
	: > "$results/restores"
	for i in 1 2 3; do
		echo "$(restore_measured "$location" "$fs_gb")" >> "$results/restores"
		rm -rf "$dir/restore-fs/restore"
	done
	read -r rsecs rpeak tree rw finish <<< "$(sort -g "$results/restores" | sed -n 2p)"
	[[ -n $finish ]] || { echo "the restore of $gb GB did not say its phases" >&2; exit 1; }
	fresh_fs_make "$dir" "$fs_gb"
	write_rate=$(fio_rate write "$bytes" "$dir/restore-fs")
	echo "$gb $bytes $bsecs $bpeak $copy $stored $rsecs $rpeak $tree $rw $finish $write_rate $bbsecs" >> "$results/sweep"
	rm -rf "$dir/sb1" "$dir/sb2"
done
stop_cluster
rm -rf "$data"
fresh_fs_make "$dir" 1 || true		# the last big image's space back

mb() { calc "$1 / 1e6 / $2" 0; }
{
echo
echo "Size sweep: pgbench clusters, stripe_backup (2 folders, zstd 1) and stripebackup restore"
echo "(into a freshly made ext4 each time, synced); $(nproc) CPUs; $(date -u +%F)"
echo
echo "fixed cost of an online backup, the cluster as initdb leaves it ($(calc "$empty_bytes / 1e6" 0) MB), median of 3:"
echo "  stripe_backup ${sb_fixed} s, pg_basebackup (server-zstd:1) ${bb_fixed} s"
echo
printf '%-6s %6s | %9s %9s %8s %7s %8s | %9s %9s %9s %9s %7s %7s\n' "" "GB" "backup" "copying" "fixed s" "RSS" \
	"pgbb" "restore" "writing" "fio" "share" "fixed s" "RSS"
while read -r gb bytes bsecs bpeak copy stored rsecs rpeak tree rw finish wrate bbsecs; do
	printf '%-6s %6s | %9s %9s %8s %7s %8s | %9s %9s %9s %8s%% %7s %7s\n' "${gb} GB" "$(calc "$bytes / 1e9")" \
		"$(mb "$bytes" "$bsecs")" "$(mb "$bytes" "$copy")" "$(calc "$bsecs - $copy")" \
		"$(calc "$bpeak / 1024" 0)M" "$(mb "$bytes" "$bbsecs")" \
		"$(mb "$bytes" "$rsecs")" "$(mb "$bytes" "$rw")" "$(calc "$wrate / 1e6" 0)" \
		"$(calc "100 * $bytes / $wrate / $rsecs" 0)" "$(calc "$tree + $finish")" "$(calc "$rpeak / 1024" 0)M"
done < "$results/sweep"
echo "(MB/s, medians of three: backup, all of it as the caller waits; copying, until the"
echo " last stripe's last write; pgbb, pg_basebackup -Ft -X fetch --compress=server-zstd:level=1,"
echo " workers=2, synced; restore, all of it; writing, its read-and-write phase;"
echo " fio, writing as many bytes into a fresh ext4, synced; share, fio's time over the"
echo " restore's.  fixed s: the rest of each.)"
echo
read -r _ b1 s1 _ c1 _ r1 _ _ w1 _ f1 p1 <<< "$(head -1 "$results/sweep")"
read -r _ b2 s2 _ c2 _ r2 _ _ w2 _ f2 p2 <<< "$(tail -1 "$results/sweep")"
copy_ratio=$(calc "($b2 / $c2) / ($b1 / $c1)")
write_ratio=$(calc "($b2 / $w2) / ($b1 / $w1)")
echo "largest against smallest: backup MB/s $(calc "($b2 / $s2) / ($b1 / $s1)") x (copying $copy_ratio x;"
echo "  pg_basebackup's MB/s $(calc "($b2 / $p2) / ($b1 / $p1)") x),"
echo "  restore MB/s $(calc "($b2 / $r2) / ($b1 / $r1)") x (writing $write_ratio x; share of fio's rate"
echo "  $(calc "($b2 / $f2 / $r2) / ($b1 / $f1 / $r1)") x, fio's own rate $(calc "$f2 / $f1") x)"
peak=$(awk '{ if ($4 > m) m = $4; if ($8 > m) m = $8 } END { print m }' "$results/sweep")
echo "targets (issue \"Throughput, second round\": MB/s within 10% from 1 to 16 GB, memory within"
echo " the buffers, 36 MiB with the defaults, + 64 MiB):"
verdict() { awk "BEGIN { exit !($1) }" && echo met || echo "NOT met"; }
echo "  backup, copying MB/s within 10%: $(verdict "$copy_ratio >= 0.9 && $copy_ratio <= 1.1")"
echo "  restore, reading-and-writing MB/s within 10%: $(verdict "$write_ratio >= 0.9 && $write_ratio <= 1.1")"
echo "  memory, peak RSS $(calc "$peak / 1024" 0) MiB <= 100 MiB: $(verdict "$peak <= 102400")"
echo "  (the totals rise with the size as any tool's do, for the fixed costs: a backup's, above,"
echo "   ${sb_fixed} s against pg_basebackup's ${bb_fixed} s; a restore's final sync, the virtual"
echo "   disk's flush, whatever the size)"
} | tee "$results/sweep-report.txt"
