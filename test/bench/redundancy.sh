#!/usr/bin/env bash
# Redundancy across the stripes (make bench-redundancy): what surviving the
# loss of a destination costs, on devices whose speed stripebackup does not
# choose (loop-device file systems slowed by the kernel's block throttling,
# cgroup v1 blkio, reads and writes alike).  Figures, not a test.
#
#   test/bench/redundancy.sh [SCALE] [SEGMENTS]
#     SCALE     pgbench scale of the cluster (default 20, about 300 MB)
#     SEGMENTS  WAL segments of 16 MB archived in the archive scenario (default 24)
#   BENCH_DIR   where the device images and mounts go (default /var/tmp/stripebackup-redundancy)
#
# Destinations d1..d4 run at 30, 60, 120 and 120 MB/s, d5 (the new disk a
# rebuild writes to) at 120.  Scenarios, one run each, printed side by side:
#   backups from SQL, no compression: redundancy 0 and 1 over d1..d3 and over
#     d1..d4, each with the time its layout forces (each destination's bytes
#     over its speed, the slowest of them) and, for redundancy 0, the time of
#     all the devices together; against the anchors' way of surviving a lost
#     device: two full backups (stripebackup over d1+d2 then over d3+d4, and
#     pgBackRest with two repositories, on d3 and d4, its best two devices);
#   restore by the command of the redundancy-1 backup over d1..d4, with every
#     destination, and with the fastest one's folder gone;
#   rebuild of that stripe onto d5;
#   the WAL archive: a backlog of SEGMENTS segments archived by the archive
#     module over d1..d3 with archive_redundancy 0 and 1, beside pgBackRest's
#     archive-push to two repositories (d2 and d3).
# Needs root (loop devices, mounts, cgroup limits); runs the tools as postgres.
set -euo pipefail

scale=${1:-20}
segments=${2:-24}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${BENCH_DIR:-/var/tmp/stripebackup-redundancy}
blkio=/sys/fs/cgroup/blkio
declare -A speed=([d1]=30 [d2]=60 [d3]=120 [d4]=120 [d5]=120)

[[ $(id -u) -eq 0 ]] || { echo "redundancy.sh needs root: loop devices, mounts and cgroup limits" >&2; exit 2; }
[[ -w $blkio/blkio.throttle.write_bps_device ]] ||
	{ echo "redundancy.sh needs cgroup v1 blkio throttling ($blkio)" >&2; exit 2; }
bash "$REPO/scripts/install-deps.sh" --bench
make -s -C "$REPO" all install >/dev/null

bindir=$(pg_config --bindir)
export PATH="$bindir:$PATH"
port=55497
data="$dir/data"
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
say() { printf '\033[1m%s\033[0m\n' "$*" >&2; }
as_pg() { runuser -u postgres -- env PATH="$PATH" "$@"; }
psql_() { as_pg psql -h "$dir" -p "$port" -XAtq -d postgres -v ON_ERROR_STOP=1 "$@"; }
start_cluster() { as_pg pg_ctl -D "$data" -l "$dir/cluster.log" -w start >/dev/null; }
stop_cluster() { as_pg pg_ctl -D "$data" -m fast -w stop >/dev/null 2>&1 || true; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }
pgbr() { as_pg pgbackrest --config="$dir/pgbackrest.conf" --stanza=bench "$@"; }

# ---------- the devices ----------

declare -A dev
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
throttle() {	# NAME MB/s (0: no limit), reads and writes
	echo "$(majmin "$1") $(($2 * 1000000))" > "$blkio/blkio.throttle.read_bps_device"
	echo "$(majmin "$1") $(($2 * 1000000))" > "$blkio/blkio.throttle.write_bps_device"
}
throttle_all() { local n; for n in "${!dev[@]}"; do throttle "$n" "${speed[$n]}"; done; }
unthrottle_all() { local n; for n in "${!dev[@]}"; do throttle "$n" 0; done; }
cleanup() {
	stop_cluster
	unthrottle_all 2>/dev/null || true
	local n
	for n in "${!dev[@]}"; do
		umount "$dir/$n" 2>/dev/null || true
		losetup -d "${dev[$n]}" 2>/dev/null || true
	done
	rm -f "$dir"/*.img
}
trap cleanup EXIT

stop_cluster
rm -rf "$dir"
mkdir -p "$dir"
chown postgres: "$dir"
for n in d1 d2 d3 d4 d5; do make_device "$n" 3; done
fresh() {	# DIR...: empty folders, owned by postgres
	local d
	for d in "$@"; do rm -rf "$d"; mkdir -p "$d"; chown postgres: "$d"; done
}

# ---------- the cluster ----------

say "a cluster of pgbench scale $scale"
as_pg initdb -D "$data" -A trust >/dev/null
cat >> "$data/postgresql.conf" <<EOF
port = $port
unix_socket_directories = '$dir'
listen_addresses = ''
shared_preload_libraries = 'stripebackup'
archive_mode = on
archive_library = 'stripebackup'
max_wal_size = 4GB
wal_keep_size = 16GB
checkpoint_timeout = 1h
autovacuum = off
include_if_exists = 'archiver.conf'
EOF
cat > "$dir/pgbackrest.conf" <<EOF
[global]
repo1-path=$dir/d3/pgbackrest
repo2-path=$dir/d4/pgbackrest
repo1-retention-full=2
repo2-retention-full=2
process-max=2
compress-type=none
start-fast=y
archive-check=n
log-level-console=warn
log-level-file=off
lock-path=$dir/pgbackrest-lock
[bench]
pg1-path=$data
pg1-socket-path=$dir
pg1-port=$port
EOF
chown postgres: "$dir/pgbackrest.conf"
# Archiving goes nowhere until the archive scenario: destinations unset, every segment stays ready.
start_cluster
psql_ -c "CREATE EXTENSION stripebackup"
as_pg pgbench -h "$dir" -p "$port" -i -s "$scale" -q postgres >/dev/null 2>&1
psql_ -c CHECKPOINT
cluster_mb=$(psql_ -c "SELECT pg_database_size('postgres') / 1000000")

# Bytes of backup NAME's folder in each of DESTS, in MB, "a/b/c".
split_of() {	# NAME DEST...
	local name=$1 d out=""
	shift
	for d in "$@"; do out+="${out:+/}$(calc "$(du -sb "$d/$name" | cut -f1) / 1000000" 0)"; done
	echo "$out"
}
# The time a split forces: the slowest destination's bytes over its speed.
forced_seconds() {	# SPLIT DEVICE...
	local split=$1 n speeds=""
	shift
	for n in "$@"; do speeds+="${speeds:+/}${speed[$n]}"; done
	awk -v mb="$split" -v rate="$speeds" 'BEGIN {
		n = split(mb, m, "/"); split(rate, r, "/")
		for (i = 1; i <= n; i++) if (m[i] / r[i] > worst) worst = m[i] / r[i]
		printf "%.3f", worst }'
}
total_of() { echo "$1" | tr / '\n' | awk '{ s += $1 } END { print s }'; }

declare -a rows
add_row() { rows+=("$1"); say "$1"; }	# as it comes, and in the table at the end
row() {	# WHAT SECONDS MB SPLIT FORCED
	add_row "$(printf '%-46s %7s s %6s MB  split %-18s forced %6s s (%s %%)' "$1" "$2" "$3" "$4" "$5" \
		"$(calc "100 * $5 / $2" 0)")"
}

# A backup from SQL over DEVICES with redundancy M (uncompressed unless
# $codec says); a row, and its location in $last_location.
codec=none
sql_backup() {	# M DEVICE...
	local m=$1 dests=() n t0 s id name split
	shift
	for n in "$@"; do dests+=("'$dir/$n/bk'"); done
	drop_caches
	throttle_all
	t0=$(now)
	id=$(psql_ -c "SELECT stripe_backup(ARRAY[$(IFS=,; echo "${dests[*]}")], compression => '${codec#, }', redundancy => $m)")
	s=$(calc "$(now) - $t0" 3)
	unthrottle_all
	last_location=$(psql_ -c "SELECT location FROM stripe_backups WHERE id = $id")
	name=$(basename "$last_location")
	split=$(split_of "$name" "${dests[@]//\'/}")
	row "backup, redundancy $m over $*${codec#none}" "$s" "$(total_of "$split")" "$split" "$(forced_seconds "$split" "$@")"
}

say "backups"
for n in d1 d2 d3 d4; do fresh "$dir/$n/bk"; done
sql_backup 0 d1 d2 d3
sql_backup 1 d1 d2 d3
sql_backup 0 d1 d2 d3 d4
together=$(calc "$(total_of "$(split_of "$(basename "$last_location")" "$dir"/d{1,2,3,4}/bk)") / 330" 3)
sql_backup 1 d1 d2 d3 d4
redundant_location=$last_location
# With compression a group's parity is as long as its longest record.
codec=", zstd"
sql_backup 0 d1 d2 d3 d4
sql_backup 1 d1 d2 d3 d4

# The overhead alone at 3, 4 and 8 destinations (unthrottled folders): parity bytes over data bytes.
overhead() {	# N M CODEC
	local dests=() i id
	for ((i = 1; i <= $1; i++)); do fresh "$dir/plain/$i"; dests+=("'$dir/plain/$i'"); done
	id=$(psql_ -c "SELECT stripe_backup(ARRAY[$(IFS=,; echo "${dests[*]}")], compression => '$3', redundancy => $2)")
	overheads+=("$(psql_ -c "SELECT format('overhead, redundancy %s over %s, %-4s  %s MB of parity for %s MB of data: %s %% (m/(N-m): %s %%)',
		$2, $1, '$3', parity_bytes / 1000000, stored_bytes / 1000000,
		round(100.0 * parity_bytes / nullif(stored_bytes, 0), 1), round(100.0 * $2 / ($1 - $2), 1))
		FROM stripe_backup_history WHERE id = $id")")
	say "${overheads[-1]}"
	rm -rf "$dir/plain"
}
declare -a overheads
for codec in none zstd; do overhead 3 1 $codec; overhead 4 1 $codec; overhead 8 1 $codec; overhead 8 2 $codec; done

say "the anchors: two full backups"
drop_caches
throttle_all
t0=$(now)
psql_ -c "SELECT stripe_backup(ARRAY['$dir/d1/bk', '$dir/d2/bk'], compression => 'none')" >/dev/null
psql_ -c "SELECT stripe_backup(ARRAY['$dir/d3/bk', '$dir/d4/bk'], compression => 'none')" >/dev/null
two_sb=$(calc "$(now) - $t0" 3)
unthrottle_all
fresh "$dir/d3/pgbackrest" "$dir/d4/pgbackrest"
pgbr stanza-create >/dev/null
drop_caches
throttle_all
t0=$(now)
pgbr --repo=1 --type=full backup >/dev/null
pgbr --repo=2 --type=full backup >/dev/null
two_pgbr=$(calc "$(now) - $t0" 3)
unthrottle_all
pgbr_mb=$(calc "($(du -sb "$dir/d3/pgbackrest" | cut -f1) + $(du -sb "$dir/d4/pgbackrest" | cut -f1)) / 1000000" 0)

say "restores of the redundancy-1 backup over d1..d4"
restore_run() {	# WHAT
	fresh "$dir/restored"
	drop_caches
	throttle_all
	t0=$(now)
	as_pg stripebackup restore "$redundant_location" --target "$dir/restored/data" --no-progress >/dev/null
	add_row "$(printf '%-46s %7s s' "$1" "$(calc "$(now) - $t0" 3)")"
	unthrottle_all
	rm -rf "$dir/restored"
}
restore_run "restore, every destination"
name=$(basename "$redundant_location")
mv "$dir/d4/bk/$name" "$dir/d4/bk/$name.gone"
restore_location=$redundant_location
[[ $redundant_location == "$dir/d4/"* ]] && redundant_location="$dir/d1/bk/$name"
restore_run "restore, d4 (120 MB/s) gone"

say "rebuild of d4's stripe onto d5"
fresh "$dir/d5/bk"
stripe=$(ls "$dir/d4/bk/$name.gone" | sed -n 's/^stripe-\([0-9]*\)\.sbs$/\1/p')
drop_caches
throttle_all
t0=$(now)
as_pg stripebackup rebuild "$redundant_location" --stripe "$stripe" --dest "$dir/d5/bk" >/dev/null
rebuild_s=$(calc "$(now) - $t0" 3)
unthrottle_all
rebuild_mb=$(calc "$(du -sb "$dir/d5/bk/$name" | cut -f1) / 1000000" 0)

# ---------- the WAL archive ----------

say "the WAL archive: a backlog of $segments segments"
ready_count() { find "$data/pg_wal/archive_status" -name '*.ready' | wc -l; }
psql_ -c "CREATE TABLE filler (id bigint, v text)"
while (($(ready_count) < segments)); do
	psql_ -c "INSERT INTO filler SELECT g, md5(random()::text) || md5(random()::text)
		FROM generate_series(1, 100000) g" -c "SELECT pg_switch_wal()" >/dev/null
done
psql_ -c CHECKPOINT
stop_cluster
find "$data/pg_wal/archive_status" -name '*.ready' -printf '%f\n' | sed 's/\.ready$//' > "$dir/backlog"
backlog_mb=$(cd "$data/pg_wal" && xargs stat -c %s < "$dir/backlog" | awk '{ s += $1 } END { printf "%d", s / 1000000 }')
rearm() {
	local f
	while read -r f; do
		rm -f "$data/pg_wal/archive_status/$f.done"
		touch "$data/pg_wal/archive_status/$f.ready"
	done < "$dir/backlog"
	chown -R postgres: "$data/pg_wal/archive_status"
}
# Start the server archiving as CONF says until nothing is ready, stopped again; the seconds.
archive_run() {	# WHAT CONF
	local t0
	rearm
	printf '%s\n' "$2" > "$data/archiver.conf"
	chown postgres: "$data/archiver.conf"
	drop_caches
	throttle_all
	t0=$(now)
	start_cluster
	while (($(ready_count) > 0)); do sleep 0.05; done
	add_row "$(printf '%-46s %7s s %6s MB/s of WAL' "$1" "$(calc "$(now) - $t0" 3)" \
		"$(calc "$backlog_mb / ($(now) - $t0)" 0)")"
	stop_cluster
	unthrottle_all
}
archive_dests="$dir/d1/wal,$dir/d2/wal,$dir/d3/wal"
fresh "$dir/d1/wal" "$dir/d2/wal" "$dir/d3/wal"
archive_run "archive, archive_redundancy 0 over d1..d3" \
	"stripebackup.archive_destinations = '$archive_dests'
stripebackup.archive_compression = 'none'"
fresh "$dir/d1/wal" "$dir/d2/wal" "$dir/d3/wal"
archive_run "archive, archive_redundancy 1 over d1..d3" \
	"stripebackup.archive_destinations = '$archive_dests'
stripebackup.archive_compression = 'none'
stripebackup.archive_redundancy = 1"
# The archive module's default is a worker per CPU, for compression; uncompressed, the devices set the pace.
fresh "$dir/d1/wal" "$dir/d2/wal" "$dir/d3/wal"
archive_run "archive, archive_redundancy 1, 6 workers" \
	"stripebackup.archive_destinations = '$archive_dests'
stripebackup.archive_compression = 'none'
stripebackup.archive_redundancy = 1
stripebackup.archive_workers = 6"
fresh "$dir/d3/pgbackrest" "$dir/d4/pgbackrest"
sed -i "s|^repo1-path=.*|repo1-path=$dir/d2/pgbackrest|; s|^repo2-path=.*|repo2-path=$dir/d3/pgbackrest|" "$dir/pgbackrest.conf"
fresh "$dir/d2/pgbackrest" "$dir/d3/pgbackrest"
printf '%s\n' "archive_library = ''" > "$data/archiver.conf"
chown postgres: "$data/archiver.conf"
start_cluster
pgbr stanza-create >/dev/null
stop_cluster
archive_run "archive, pgBackRest, two repositories (d2, d3)" \
	"archive_library = ''
archive_command = 'pgbackrest --config=$dir/pgbackrest.conf --stanza=bench archive-push %p'"

echo
echo "Redundancy across the stripes: cluster $cluster_mb MB, no compression, destinations"
echo "d1..d5 at 30/60/120/120/120 MB/s (reads and writes throttled alike)."
echo "(forced: the time the backup's own split forces, each destination's bytes over its"
echo " speed, the slowest; all four devices together could write redundancy 0's bytes in $together s)"
printf '%s\n' "${rows[@]:0:6}"
printf '%s\n' "${overheads[@]}"
printf '%-46s %7s s\n' "two full backups, stripebackup (d1+d2, d3+d4)" "$two_sb"
printf '%-46s %7s s %6s MB\n' "two full backups, pgBackRest (repos d3, d4)" "$two_pgbr" "$pgbr_mb"
printf '%s\n' "${rows[@]:6:2}"
printf '%-46s %7s s %6s MB\n' "rebuild of d4's stripe onto d5" "$rebuild_s" "$rebuild_mb"
printf '%s\n' "${rows[@]:8}"
echo "(the WAL backlog: $(wc -l < "$dir/backlog") segments, $backlog_mb MB; restore location: $restore_location)"
