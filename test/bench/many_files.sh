#!/usr/bin/env bash
# Millions of files (make bench-files): trees of many small files backed up,
# planned, verified, shown (--json) and restored by the command, side by
# side at several sizes, so that flat memory (or not) shows.  Figures, not a
# test.
#
#   test/bench/many_files.sh [COUNTS] [SIZE]
#     COUNTS  file counts, comma-separated (default 100000,300000,1000000)
#     SIZE    bytes per file (default 1024)
#   BENCH_DIR   where the trees go (default /tmp/stripebackup-files)
#
# Each tree is N files in folders of 1,000, random bytes (compressed, they
# cost the same as raw here; the file count is what is measured).  Every
# command's peak RSS comes from GNU time; the restore is compared with the
# source (file count and bytes).  The same backup encrypted shows that an
# envelope's memory is as flat.  Beside them, what a plain program does with
# the same files (files_floor.c, as many threads as CPUs): only read them
# (what a backup must do at least, the tree as cached as for the backup),
# and only create, write, time and make them durable with one syncfs (what
# a restore must do at least; stripebackup's io_uring restore can pass it).
set -euo pipefail

counts=${1:-100000,300000,1000000}
size=${2:-1024}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${BENCH_DIR:-/tmp/stripebackup-files}
BENCH_ARGS=("$@")
. "$REPO/test/bench/common.sh"
dir=$DIR
floor="$dir/files_floor"
mkdir -p "$dir"
cc -O2 -pthread -o "$floor" "$REPO/test/bench/files_floor.c"
threads=$(nproc)
printf '%.0sk' $(seq 48) > "$dir/key"
chmod 600 "$dir/key"

make_tree() {	# ROOT COUNT
	python3 - "$1" "$2" "$size" <<-'EOF'
	import os, sys
	root, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
	data = os.urandom(size)
	for i in range(count):
	    d = os.path.join(root, str(i // 1000))
	    if i % 1000 == 0:
	        os.makedirs(d)
	    with open(os.path.join(d, str(i % 1000)), "wb") as f:
	        f.write(data)
	EOF
}

# Run the command; record its seconds and peak RSS (MiB) under NAME.
measured() {	# NAME ARGS...
	local name=$1 out
	shift
	out=$( { /usr/bin/time -f 'peak %M %e' stripebackup "$@" >/dev/null; } 2>&1 | tail -1)
	read -r _ rss secs <<< "$out"
	echo "$name $secs $(calc "$rss / 1024" 1)" >> "$results/files"
}

: > "$results/files"
IFS=, read -r -a sizes <<< "$counts"
for n in "${sizes[@]}"; do
	say "$n files of $size bytes"
	rm -rf "$dir/tree" "$dir/d1" "$dir/d2" "$dir/restored" "$dir/copy"
	mkdir -p "$dir/tree" "$dir/d1" "$dir/d2"
	make_tree "$dir/tree" "$n"
	fs_gb=$((n / 40000 + 2))	# ext4 gives an inode per 16 KiB: room for n files
	sync
	measured "create_$n" create --source "$dir/tree" --dest "$dir/d1" --dest "$dir/d2" --name b --no-progress
	echo "read_floor_$n $("$floor" read "$dir/tree" "$n" "$threads")" >> "$results/files"
	measured "enc_create_$n" create --source "$dir/tree" --dest "$dir/d1" --dest "$dir/d2" --name e \
		--encryption-key-file "$dir/key" --no-progress
	measured "plan_$n" plan "$dir/d1/b"
	measured "verify_$n" verify "$dir/d1/b"
	measured "show_$n" show --json "$dir/d1/b"
	fresh_target "$dir" "$fs_gb" restored
	sync
	measured "restore_$n" restore "$dir/d1/b" --target "$fresh_dir" --no-progress
	restored=$(find "$fresh_dir" -type f | wc -l)
	[[ $restored -eq $n ]] || { echo "restore of $n files gave $restored" >&2; exit 1; }
	fresh_target "$dir" "$fs_gb" restored
	sync
	measured "enc_restore_$n" restore "$dir/d1/e" --target "$fresh_dir" --encryption-key-file "$dir/key" \
		--no-progress
	restored=$(find "$fresh_dir" -type f | wc -l)
	[[ $restored -eq $n ]] || { echo "encrypted restore of $n files gave $restored" >&2; exit 1; }
	fresh_target "$dir" "$fs_gb" floor
	sync
	echo "write_floor_$n $("$floor" write "$fresh_dir" "$n" "$size" "$threads")" >> "$results/files"
	# How fast this machine creates that many files: a plain copy, made durable as a restore is.
	fresh_target "$dir" "$fs_gb" copy
	sync
	t0=$(now)
	cp -a "$dir/tree" "$fresh_dir/tree"
	sync -f "$fresh_dir"
	echo "copy_$n $(elapsed "$t0")" >> "$results/files"
	echo "manifest_$n $(stat -c %s "$dir/d1/b/manifest.json")" >> "$results/files"
	rm -rf "$dir/tree" "$dir/d1" "$dir/d2" "$dir/restored" "$dir/floor" "$dir/copy"
done
fresh_fs_make "$dir" 1 || true		# the last big image's space back
rm -f "$floor" "$dir/key"

fig() { awk -v k="$1" -v c="$2" '$1 == k { print $c }' "$results/files"; }
echo
echo "Many small files ($size bytes each), stripebackup command, 2 destinations, zstd 1"
printf '%-8s %11s %11s %11s %11s %11s %11s %11s %11s %7s\n' files "create MiB" "restore MiB" \
	"plan MiB" "verify MiB" "show MiB" "create f/s" "restore f/s" "cp -a f/s" "B/file"
for n in "${sizes[@]}"; do
	printf '%-8s %11s %11s %11s %11s %11s %11s %11s %11s %7s\n' "$n" "$(fig "create_$n" 3)" \
		"$(fig "restore_$n" 3)" "$(fig "plan_$n" 3)" "$(fig "verify_$n" 3)" "$(fig "show_$n" 3)" \
		"$(calc "$n / $(fig "create_$n" 2)" 0)" "$(calc "$n / $(fig "restore_$n" 2)" 0)" \
		"$(calc "$n / $(fig "copy_$n" 2)" 0)" "$(calc "$(fig "manifest_$n" 2) / $n" 0)"
done
echo
echo "The same, encrypted, and what a plain program does with the same files ($threads threads)"
printf '%-8s %15s %15s %11s %11s %11s %11s\n' files "enc create MiB" "enc restore MiB" "create f/s" \
	"plain read" "restore f/s" "plain write"
for n in "${sizes[@]}"; do
	printf '%-8s %15s %15s %11s %11s %11s %11s\n' "$n" "$(fig "enc_create_$n" 3)" "$(fig "enc_restore_$n" 3)" \
		"$(calc "$n / $(fig "create_$n" 2)" 0)" "$(fig "read_floor_$n" 2)" \
		"$(calc "$n / $(fig "restore_$n" 2)" 0)" "$(fig "write_floor_$n" 2)"
done
echo "cp -a f/s: a plain copy of the same tree, then sync: how fast this machine creates (and"
echo "  makes durable) that many files; restore syncs its file system too"
echo "restores, plain writes and copies go $fresh_where"
echo "plain read: files_floor.c opens, reads and closes each file ($threads threads), the tree cached as"
echo "  for the backup; plain write: it creates, writes, times and closes each, then one syncfs"
echo "targets (issue \"Millions of files\"): peak RSS within the buffers + 64 MiB (80 MiB) at 1 M files;"
echo "  backup and restore at least 60,000 files a second"
