#!/usr/bin/env bash
# Devices whose speed stripebackup does not choose (make bench-devices): file
# systems on loop devices, slowed by the kernel's block throttling (cgroup v1
# blkio limits on the root group, so that the page cache's writeback is
# slowed as much as direct writes are).  Figures, not a test.
#
#   test/bench/devices.sh [SCALE] [SLOW] [FAST] [SOURCE]
#     SCALE   pgbench scale of the cluster (default 20, about 300 MB; as much
#             again goes into a tablespace on a second device)
#     SLOW, FAST   write MB/s of the two destination devices (default 30, 120)
#     SOURCE  read MB/s of each of the two source devices (default 50)
#   BENCH_DIR   where the device images and mounts go (default /var/tmp/stripebackup-devices)
#
# Two scenarios of the issue "Throughput, second round", each as a share of
# what the devices can do together:
#   mismatched destinations: a backup to a SLOW and a FAST device with default
#     settings, from SQL and by the command (and the command with --no-direct-io);
#   source devices: a cluster whose data directory and tablespace sit on two
#     devices reading SOURCE MB/s each, backed up to an unthrottled folder from
#     SQL, and (stopped) by the command;
#   target devices: that SQL backup restored by the command onto the same two
#     devices (the tablespace mapped to the second), each writing SOURCE MB/s.
# Needs root (loop devices, mounts, cgroup limits); runs the tools as postgres.
set -euo pipefail

scale=${1:-20}
slow=${2:-30}
fast=${3:-120}
source_rate=${4:-50}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${BENCH_DIR:-/var/tmp/stripebackup-devices}
blkio=/sys/fs/cgroup/blkio

[[ $(id -u) -eq 0 ]] || { echo "devices.sh needs root: loop devices, mounts and cgroup limits" >&2; exit 2; }
[[ -w $blkio/blkio.throttle.write_bps_device ]] ||
	{ echo "devices.sh needs cgroup v1 blkio throttling ($blkio)" >&2; exit 2; }
bash "$REPO/scripts/install-deps.sh" --bench
make -s -C "$REPO" all install >/dev/null

bindir=$(pg_config --bindir)
export PATH="$bindir:$PATH"
port=55494
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
say() { printf '\033[1m%s\033[0m\n' "$*" >&2; }
as_pg() { runuser -u postgres -- env PATH="$PATH" "$@"; }
psql_() { as_pg psql -h "$dir" -p "$port" -XAtq -d postgres -v ON_ERROR_STOP=1 "$@"; }

# ---------- the devices ----------

declare -A dev	# name -> /dev/loopN
make_device() {	# NAME SIZE_GB
	local img="$dir/$1.img" mnt="$dir/$1"
	truncate -s "${2}G" "$img"
	dev[$1]=$(losetup --show --direct-io=on -f "$img")
	mkfs.ext4 -q -F "${dev[$1]}"
	mkdir -p "$mnt"
	mount "${dev[$1]}" "$mnt"
	chown postgres: "$mnt"
}
majmin() { lsblk -dno MAJ:MIN "${dev[$1]}" | tr -d ' '; }
throttle() {	# NAME read|write MB/s (0: no limit)
	echo "$(majmin "$1") $(($3 * 1000000))" > "$blkio/blkio.throttle.$2_bps_device"
}
unthrottle_all() {
	local name
	for name in "${!dev[@]}"; do throttle "$name" read 0; throttle "$name" write 0; done
}
cleanup() {
	as_pg pg_ctl -D "$dir/src1/data" -m immediate stop >/dev/null 2>&1 || true
	unthrottle_all 2>/dev/null || true
	local name
	for name in "${!dev[@]}"; do
		umount "$dir/$name" 2>/dev/null || true
		losetup -d "${dev[$name]}" 2>/dev/null || true
	done
	rm -f "$dir"/*.img
}
trap cleanup EXIT

rm -rf "$dir"
mkdir -p "$dir"
chown postgres: "$dir"
for name in src1 src2 slow fast; do make_device "$name" 4; done

# ---------- the cluster: data directory on src1, a tablespace on src2 ----------

say "a cluster of pgbench scale $scale on one device and as much in a tablespace on another"
data="$dir/src1/data"
as_pg initdb -D "$data" -A trust >/dev/null
cat >> "$data/postgresql.conf" <<EOF
port = $port
unix_socket_directories = '$dir'
listen_addresses = ''
shared_preload_libraries = 'stripebackup'
max_wal_size = 4GB
EOF
as_pg pg_ctl -D "$data" -l "$dir/cluster.log" -w start >/dev/null
mkdir "$dir/src2/ts" && chown postgres: "$dir/src2/ts"	# not the file system's root: lost+found
psql_ -c "CREATE EXTENSION stripebackup" -c "CREATE TABLESPACE far LOCATION '$dir/src2/ts'"
as_pg pgbench -h "$dir" -p "$port" -i -s "$scale" -q postgres >/dev/null 2>&1
psql_ -c "CREATE TABLE far_copy TABLESPACE far AS SELECT * FROM pgbench_accounts" -c CHECKPOINT
cluster_mb=$(psql_ -c "SELECT pg_database_size('postgres') / 1000000")

# A backup from SQL, uncompressed; prints "SECONDS STORED_MB SPLIT".
sql_backup() {	# DEST...
	local dests="ARRAY['$(IFS=,; echo "$*" | sed "s/,/','/g")']" t0 id
	t0=$(now)
	id=$(psql_ -c "SELECT stripe_backup($dests, compression => 'none')")
	echo "$(calc "$(now) - $t0" 3) $(psql_ -c "SELECT (bytes_written / 1000000)::int8 FROM stripe_backups WHERE id = $id") \
$(psql_ -c "SELECT string_agg((stored_bytes / 1000000)::text, '/' ORDER BY stripe) FROM stripe_backup_stripes WHERE backup_id = $id")"
}
# A backup by the command of the stopped cluster, uncompressed; same figures.
cli_backup() {	# NAME "DEST..." FLAGS...
	local name=$1 dests=() d t0 out
	for d in $2; do dests+=(--dest "$d"); done
	shift 2
	t0=$(now)
	out=$(as_pg stripebackup create --source "$data" "${dests[@]}" \
		--name "$name" --compression none --no-progress "$@")
	echo "$(calc "$(now) - $t0" 3) $(echo "$out" | awk '/^  stripe/ { m = $NF == "GiB" ? $(NF-1) * 1024 : $NF == "KiB" ? $(NF-1) / 1024 : $(NF-1)
			mb += m; s = s (s ? "/" : "") int(m * 1.048576) }
		END { print int(mb * 1.048576), s }')"
}
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }
# MB/s the two source devices allow for what a backup reads of them (the data
# directory's device also holds pg_wal, which only the command reads whole):
# all of it over the time the busier device needs at SOURCE MB/s.
source_limit() {	# WITH_WAL (0 or 1)
	local a b w
	a=$(du -sb "$data" | cut -f1)
	w=$(du -sb "$data/pg_wal" | cut -f1)
	b=$(du -sb "$dir/src2/ts" | cut -f1)
	[[ $1 == 1 ]] || a=$((a - w))
	calc "($a + $b) / ($a > $b ? $a : $b) * $source_rate" 0
}
report() {	# WHAT "SECONDS MB SPLIT" DEVICES_MBPS
	local s mb split
	read -r s mb split <<< "$2"
	printf '%-52s %7s s %6s MB/s  %5s %%  split %s MB\n' "$1" "$s" "$(calc "$mb / $s" 0)" \
		"$(calc "100 * $mb / $s / $3" 0)" "$split"
}

# ---------- source devices ----------

say "source devices: data directory and tablespace each read at $source_rate MB/s"
mkdir -p "$dir/out" && chown postgres: "$dir/out"
throttle src1 read "$source_rate"
throttle src2 read "$source_rate"
drop_caches
source_fig=$(sql_backup "$dir/out")
source_sql_limit=$(source_limit 0)
throttle src1 read 0
throttle src2 read 0

say "target devices: that backup restored onto both devices, each writing at $source_rate MB/s"
for d in src1 src2; do mkdir -p "$dir/$d/restored" && chown postgres: "$dir/$d/restored"; done
restore_location=$(psql_ -c "SELECT location FROM stripe_backups ORDER BY id DESC LIMIT 1")
tablespace_at=$(readlink "$data/pg_tblspc/$(ls "$data/pg_tblspc")")
throttle src1 write "$source_rate"
throttle src2 write "$source_rate"
drop_caches
t0=$(now)
as_pg stripebackup restore "$restore_location" --target "$dir/src1/restored/data" --no-progress \
	--tablespace-mapping "$tablespace_at=$dir/src2/restored/ts" >/dev/null
target_seconds=$(calc "$(now) - $t0" 3)
throttle src1 write 0
throttle src2 write 0
target_a=$(du -sb "$dir/src1/restored" | cut -f1)
target_b=$(du -sb "$dir/src2/restored" | cut -f1)
target_fig="$target_seconds $(calc "($target_a + $target_b) / 1000000" 0) $(calc "$target_a / 1000000" 0)/$(calc "$target_b / 1000000" 0)"
target_limit=$(calc "($target_a + $target_b) / ($target_a > $target_b ? $target_a : $target_b) * $source_rate" 0)
rm -rf "$dir/src1/restored" "$dir/src2/restored"

# ---------- mismatched destinations ----------

say "mismatched destinations: $slow and $fast MB/s"
for d in slow fast; do mkdir -p "$dir/$d/bk" && chown postgres: "$dir/$d/bk"; done
throttle slow write "$slow"
throttle fast write "$fast"
drop_caches
sql_fig=$(sql_backup "$dir/slow/bk" "$dir/fast/bk")
as_pg pg_ctl -D "$data" -m fast -w stop >/dev/null
drop_caches
cli_fig=$(cli_backup default "$dir/slow/bk $dir/fast/bk")
drop_caches
cli_buffered_fig=$(cli_backup buffered "$dir/slow/bk $dir/fast/bk" --no-direct-io)
throttle slow write 0
throttle fast write 0

say "source devices, the command: the stopped cluster's two devices each read at $source_rate MB/s"
throttle src1 read "$source_rate"
throttle src2 read "$source_rate"
drop_caches
source_cli_fig=$(cli_backup cli-source "$dir/out")
source_cli_limit=$(source_limit 1)
throttle src1 read 0
throttle src2 read 0

echo
echo "Devices slowed by the kernel's block throttling (cgroup v1 blkio), cluster $cluster_mb MB, no compression"
echo "(share: the backup's MB/s as a share of what the devices can do together; for two"
echo " source devices holding unequal amounts, of what they allow: all of it over the time the"
echo " busier one needs. Source devices: $source_sql_limit MB/s for what stripe_backup() reads,"
echo " $source_cli_limit MB/s for what create reads of the stopped cluster, pg_wal whole;"
echo " target devices: $target_limit MB/s for what the restore writes, made durable, split data/tablespace)"
report "source devices: stripe_backup(), 2 x $source_rate MB/s read" "$source_fig" "$source_sql_limit"
report "source devices: create, 2 x $source_rate MB/s read" "$source_cli_fig" "$source_cli_limit"
report "target devices: restore, 2 x $source_rate MB/s write" "$target_fig" "$target_limit"
report "destinations $slow + $fast MB/s: stripe_backup() defaults" "$sql_fig" $((slow + fast))
report "destinations $slow + $fast MB/s: create, defaults" "$cli_fig" $((slow + fast))
report "destinations $slow + $fast MB/s: create --no-direct-io" "$cli_buffered_fig" $((slow + fast))
echo "targets: source and target devices at least 85 %, destinations (defaults) at least 90 %"
