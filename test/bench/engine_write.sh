#!/usr/bin/env bash
# Engine write throughput on a directory tree, beside tar | zstd on the same
# tree, alternating the tools in one run; prints medians and ratios.
#
#   test/bench/engine_write.sh [SIZE_MB] [RUNS]      (default 2048 MB, 3 runs)
#
# The tree is half large files, half small ones (2,000 of 512 KiB), and its
# data compresses about 2x.  Page cache stays warm for every tool alike; each
# writer's output is synced before its clock stops (stripebackup syncs its
# stripes itself; tar's file gets "sync FILE").  BENCH_DIR picks the disk.
set -euo pipefail

size_mb=${1:-2048}
runs=${2:-3}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${BENCH_DIR:-/tmp/stripebackup-bench}
sb="$repo/src/cli/stripebackup"

make -s -C "$repo" all
mkdir -p "$dir"
tree="$dir/tree"

make_tree() {
	python3 - "$tree" "$size_mb" <<'PY'
import os, sys
root, size_mb = sys.argv[1], int(sys.argv[2])
block = 1 << 20
def chunk():
    # half random, half zeros: zstd gets about 2x
    return os.urandom(block // 2) + bytes(block // 2)
os.makedirs(f"{root}/big", exist_ok=True)
big = size_mb // 2
nbig = max(1, big // 128)
for i in range(nbig):
    with open(f"{root}/big/file{i:03d}", "wb") as f:
        for _ in range(big // nbig):
            f.write(chunk())
small_bytes = (size_mb - big) * block
nsmall = 2000
per = small_bytes // nsmall
for i in range(nsmall):
    d = f"{root}/small/d{i % 20:02d}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/f{i:05d}", "wb") as f:
        f.write(os.urandom(per // 2) + bytes(per - per // 2))
PY
}

if [[ ! -f "$tree/.complete-$size_mb" ]]; then
	rm -rf "$tree"
	echo "building a ${size_mb} MB tree in $tree ..."
	make_tree
	touch "$tree/.complete-$size_mb"
fi
bytes=$(du -sb --exclude=".complete-*" "$tree" | cut -f1)
cat "$tree"/big/* > /dev/null   # warm the cache for everyone

now() { date +%s.%N; }
elapsed() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }

run_sb() {		# compression, level
	rm -rf "$dir/d1" "$dir/d2"
	mkdir -p "$dir/d1" "$dir/d2"
	local t0=$(now)
	"$sb" create --source "$tree" --dest "$dir/d1" --dest "$dir/d2" --name b \
		--compression "$1" --level "$2" --no-progress > /dev/null
	elapsed "$t0"
}

run_tar() {		# zstd or none
	rm -f "$dir/out.tar"*
	local t0=$(now)
	if [[ $1 == zstd ]]; then
		tar -cf - -C "$tree" . | zstd -q -1 -T2 > "$dir/out.tar.zst"
		sync "$dir/out.tar.zst"
	else
		tar -cf "$dir/out.tar" -C "$tree" .
		sync "$dir/out.tar"
	fi
	elapsed "$t0"
}

declare -A times
for ((r = 1; r <= runs; r++)); do
	times[sb_none]+="$(run_sb none 1) "
	times[tar_none]+="$(run_tar none) "
	times[sb_zstd]+="$(run_sb zstd 1) "
	times[tar_zstd]+="$(run_tar zstd) "
	echo "run $r of $runs done" >&2
done
rm -rf "$dir/d1" "$dir/d2" "$dir/out.tar"*

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '\n%s of data (%s files), %d runs each, medians; %d CPUs\n\n' \
	"$(numfmt --to=iec "$bytes")" "$(find "$tree" -type f | wc -l)" "$runs" "$(nproc)"
printf '%-44s %10s %10s %10s\n' "writer" "seconds" "MB/s" "vs tar"
for c in none zstd; do
	s=$(echo "${times[sb_$c]}" | median)
	t=$(echo "${times[tar_$c]}" | median)
	if [[ $c == zstd ]]; then label_sb="stripebackup, 2 stripes, zstd -1 (2 workers)"; label_tar="tar -cf - | zstd -1 -T2"
	else label_sb="stripebackup, 2 stripes, no compression"; label_tar="tar -cf"; fi
	printf '%-44s %10.2f %10.0f %10s\n' "$label_sb" "$s" "$(calc "$bytes / $s / 1000000")" "$(calc "$t / $s")x"
	printf '%-44s %10.2f %10.0f %10s\n' "$label_tar" "$t" "$(calc "$bytes / $t / 1000000")" "1.00x"
done
echo
echo "(\"vs tar\" = tar's time / stripebackup's time: above 1 means stripebackup is faster)"
