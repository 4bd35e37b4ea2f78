#!/usr/bin/env bash
# Online backup wall time: SELECT stripe_backup(...) beside
# pg_basebackup -Ft -X fetch at the same compression, in paired runs
# (alternating the tools), medians and ratios.
#
#   test/bench/online_backup.sh [PGBENCH_SCALE] [PAIRS]   (default 270 = about 4 GB, 3 pairs)
#
# Runs as the postgres user when started as root.  BENCH_DIR picks the disk.
set -euo pipefail

scale=${1:-270}
pairs=${2:-3}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${BENCH_DIR:-/tmp/stripebackup-bench-online}
bindir=$(pg_config --bindir)
port=55499

if [[ $(id -u) -eq 0 ]]; then
	make -s -C "$repo" all install >/dev/null
	mkdir -p "$dir"
	chown postgres: "$dir"
	exec runuser -u postgres -- env BENCH_DIR="$dir" bash "${BASH_SOURCE[0]}" "$@"
fi
export PATH="$bindir:$PATH"
data="$dir/data"
psql_() { psql -h "$dir" -p "$port" -XAtq -d postgres "$@"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }

if [[ ! -f "$dir/.scale-$scale" ]]; then
	rm -rf "$data"
	initdb -D "$data" --data-checksums -A trust >/dev/null
	echo "shared_preload_libraries = 'stripebackup'" >> "$data/postgresql.conf"
	pg_ctl -D "$data" -o "-p $port -k $dir -c listen_addresses=''" -l "$dir/log" -w start >/dev/null
	echo "loading pgbench scale $scale ..." >&2
	pgbench -i -q -s "$scale" -h "$dir" -p "$port" postgres >&2
	psql_ -c 'CREATE EXTENSION stripebackup' -c 'CHECKPOINT'
	touch "$dir/.scale-$scale"
else
	pg_ctl -D "$data" -o "-p $port -k $dir -c listen_addresses=''" -l "$dir/log" -w start >/dev/null
fi
trap 'pg_ctl -D "$data" -m fast stop >/dev/null' EXIT
size=$(psql_ -c "SELECT pg_size_pretty(sum(size)) FROM pg_ls_dir('base', false, false) d, LATERAL (SELECT sum((pg_stat_file('base/' || d || '/' || f)).size) size FROM pg_ls_dir('base/' || d) f) s")

run_sb() {		# compression
	rm -rf "$dir/sb1" "$dir/sb2"
	mkdir -p "$dir/sb1" "$dir/sb2"
	local t0=$(now)
	psql_ -c "SELECT stripe_backup(ARRAY['$dir/sb1', '$dir/sb2'], compression => '$1', compression_level => 1)" >/dev/null
	elapsed "$t0"
}

run_pgbb() {	# none or zstd
	rm -rf "$dir/pgbb"
	local t0=$(now)
	if [[ $1 == zstd ]]; then
		pg_basebackup -h "$dir" -p "$port" -D "$dir/pgbb" -Ft -X fetch --checkpoint=fast \
			--compress=server-zstd:level=1,workers=2
	else
		pg_basebackup -h "$dir" -p "$port" -D "$dir/pgbb" -Ft -X fetch --checkpoint=fast
	fi
	sync -f "$dir/pgbb"/*
	elapsed "$t0"
}

declare -A t
for ((i = 1; i <= pairs; i++)); do
	t[sb_none]+="$(run_sb none) "
	t[bb_none]+="$(run_pgbb none) "
	t[sb_zstd]+="$(run_sb zstd) "
	t[bb_zstd]+="$(run_pgbb zstd) "
	echo "pair $i of $pairs done" >&2
done
rm -rf "$dir/sb1" "$dir/sb2" "$dir/pgbb"

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '\ncluster: pgbench scale %s (%s in base/), %d pairs, medians; %d CPUs, one disk\n\n' \
	"$scale" "$size" "$pairs" "$(nproc)"
printf '%-70s %9s %9s\n' "backup" "seconds" "ratio"
for c in none zstd; do
	s=$(echo "${t[sb_$c]}" | median)
	b=$(echo "${t[bb_$c]}" | median)
	if [[ $c == zstd ]]; then
		ls="stripe_backup(2 destinations, zstd level 1, 2 workers)"
		lb="pg_basebackup -Ft -X fetch --compress=server-zstd:level=1,workers=2"
	else
		ls="stripe_backup(2 destinations, compression => 'none')"
		lb="pg_basebackup -Ft -X fetch"
	fi
	printf '%-70s %9.2f %9s\n' "$ls" "$s" "$(awk "BEGIN { printf \"%.2f\", $s / $b }")"
	printf '%-70s %9.2f %9s\n' "$lb" "$b" "1.00"
done
echo
echo "(ratio = stripe_backup's time / pg_basebackup's: below 1 means stripe_backup is faster)"
