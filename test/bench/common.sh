# Shared by the benchmarks: run as postgres (installing what they need first
# when started as root), and the timing helpers.  Source it after setting
# REPO and DIR; it sets bindir, PATH, results and empties the times file.

. "$REPO/test/bench/fresh_fs.sh"

if [[ $(id -u) -eq 0 ]]; then
	bash "$REPO/scripts/install-deps.sh" --bench
	make -s -C "$REPO" all install >/dev/null
	mkdir -p "$DIR"
	chown postgres: "$DIR"
	fresh_fs_serve "$DIR" $$ &	# $$ stays the benchmark's through exec
	exec runuser -u postgres -- env BENCH_DIR="$DIR" bash "$0" "${BENCH_ARGS[@]}"
fi

bindir=$(pg_config --bindir)
export PATH="$bindir:$PATH"
results="$DIR/results"
mkdir -p "$results"
: > "$results/times"

now() { date +%s.%N; }
elapsed() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
psql_() { psql -h "$DIR" -p "${PORT:-$port}" -XAtq -d postgres -v ON_ERROR_STOP=1 "$@"; }
record() { echo "$1 $2" >> "$results/times"; }	# name seconds
median() { awk -v k="$1" '$1 == k { print $2 }' "$results/times" | sort -g |
	awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print 0 }'; }
say() { printf '\033[1m%s\033[0m\n' "$*" >&2; }

# The one cluster of a benchmark at $data (socket $dir, port $port), and
# pgBackRest on its stanza "bench".
start_cluster() { pg_ctl -D "$data" -o "-p $port -k $dir -c listen_addresses=''" -l "$data.log" -w start >/dev/null; }
stop_cluster() { pg_ctl -D "$data" -m fast stop >/dev/null 2>&1 || true; }
pgbr() { pgbackrest --config="$dir/pgbackrest.conf" --stanza=bench "$@"; }

# pgBackRest's configuration at $dir/pgbackrest.conf for the cluster at
# $data (socket $dir, port $port): zstd level 1, two processes, fast start,
# small files bundled (as its user guide sets it up for speed; make bench
# measured its backup of 16,000 files 20.3 s without, 7.5 s with); any
# further [global] lines as arguments.
bench_pgbackrest_conf() {
	{
		printf '%s\n' "[global]" "repo1-path=$dir/pgbackrest-repo" "repo1-retention-full=2" \
			"repo1-bundle=y" "process-max=2" "compress-type=zst" "compress-level=1" "start-fast=y" \
			"log-level-console=warn" "log-level-file=off" "lock-path=$dir/pgbackrest-lock" "$@"
		printf '%s\n' "[bench]" "pg1-path=$data" "pg1-socket-path=$dir" "pg1-port=$port"
	} > "$dir/pgbackrest.conf"
}

# A cluster at $data with data checksums, stripebackup preloaded and
# created, WAL archived by pgBackRest (its stanza made), no autovacuum, then
# pgbench's tables at scale SCALE.
bench_pgbench_cluster() {	# SCALE
	initdb -D "$data" --data-checksums -A trust >/dev/null
	cat >> "$data/postgresql.conf" <<-CONF
	shared_preload_libraries = 'stripebackup'
	archive_mode = on
	archive_command = 'pgbackrest --config=$dir/pgbackrest.conf --stanza=bench archive-push %p'
	max_wal_size = 8GB
	checkpoint_timeout = 1h
	autovacuum = off
	CONF
	start_cluster
	psql_ -c 'CREATE EXTENSION stripebackup'
	pgbr stanza-create >/dev/null
	say "loading pgbench scale $1"
	pgbench -i -q -s "$1" -h "$dir" -p "$port" postgres 2>&1 | tail -1 >&2
}

# The peak RSS (KiB) of the backup worker that starts now, read from /proc
# until it exits: a high-water mark, so a look every 0.1 s misses only the
# end, and a look costs the machine nothing (asking the server with a psql
# each time cost a loaded 2-CPU machine a third of a backup's speed).
# Stops looking, with 0, when process WAITER (the caller) ends first.
worker_peak_rss() {	# WAITER
	local pid="" line peak=0 hwm
	while [[ -z $pid ]]; do
		pid=$(pgrep -n -f '^postgres: stripebackup backup ' || true)
		[[ -z $pid ]] && { kill -0 "$1" 2>/dev/null || { echo 0; return; }; sleep 0.01; }
	done
	while [[ -r /proc/$pid/status ]]; do
		while read -r line; do
			[[ $line == VmHWM:* ]] || continue
			hwm=${line//[^0-9]/}
			((hwm > peak)) && peak=$hwm
			break
		done < "/proc/$pid/status" 2>/dev/null || true
		sleep 0.1
	done
	echo "$peak"
}

# stripe_backup to two fresh folders $dir/sb1 and $dir/sb2, waited for as a
# caller waits, its worker's peak RSS watched from /proc meanwhile: prints
# its seconds and that peak in KiB; exits when the backup did not complete.
# With TYPE (diff, incr) the backup is of that type, beside the ones there.
sampled_backup() {	# [TYPE]
	local caller peak secs t0 type=${1:-}
	if [[ -z $type ]]; then
		rm -rf "$dir/sb1" "$dir/sb2" && mkdir -p "$dir/sb1" "$dir/sb2"
	fi
	sync
	t0=$(now)
	psql_ -c "SELECT stripe_backup(ARRAY['$dir/sb1', '$dir/sb2']${type:+, type => '$type'})" >/dev/null &
	caller=$!
	peak=$(worker_peak_rss "$caller")
	wait "$caller" || { echo "stripe_backup failed" >&2; exit 1; }
	secs=$(elapsed "$t0")
	psql_ -c "SELECT status FROM stripe_backups ORDER BY id DESC LIMIT 1" | grep -qx completed ||
		{ echo "stripe_backup did not complete" >&2; exit 1; }
	[[ -z $type ]] || psql_ -c "SELECT type FROM stripe_backups ORDER BY id DESC LIMIT 1" | grep -qx "$type" ||
		{ echo "stripe_backup did not take a $type backup" >&2; exit 1; }
	echo "$secs $peak"
}

# ---------- the limit: fio reading and writing the same bytes ----------

# Bytes a second (direct I/O of 1 MiB, 16 in flight).  A write is made
# durable, synced at its end and in its time, as every tool's output is:
# direct I/O alone may stop in a volatile cache (this machine's virtual disk
# takes writes at 3-4 GB/s and pays at the flush).
fio_run() {	# read|write BYTES FOLDER DIRECT
	fio --name=limit --filename="$3/fio.dat" --size="$2" --rw="$1" --bs=1M --direct="$4" \
		--end_fsync="$([[ $1 == write ]] && echo 1 || echo 0)" \
		--ioengine=libaio --iodepth=16 --minimal 2>/dev/null |
		awk -F';' -v rw="$1" '{ print (rw == "read" ? $7 : $48) * 1024 }'
	rm -f "$3/fio.dat"
}

# What the disk can do: a read with direct I/O (the cache would hold what
# was just written); a write the faster of direct and buffered I/O, each
# synced at its end (on a fresh ext4 here the buffered one, whose writeback
# sends larger requests, synced at 1.0-1.1 GB/s where direct I/O did 0.5-0.6).
fio_rate() {	# read|write BYTES FOLDER
	local direct buffered
	direct=$(fio_run "$1" "$2" "$3" 1)
	if [[ $1 == read ]]; then
		echo "$direct"
		return
	fi
	buffered=$(fio_run "$1" "$2" "$3" 0)
	awk -v a="$direct" -v b="$buffered" 'BEGIN { print (a > b ? a : b) }'
}
