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

# stripe_backup to two fresh folders $dir/sb1 and $dir/sb2 (no waiting on
# it), the worker's peak RSS sampled from /proc while it runs: prints its
# seconds and that peak in KiB; exits when the backup did not complete.
# With TYPE (diff, incr) the backup is of that type, beside the ones there.
sampled_backup() {	# [TYPE]
	local pid peak=0 hwm t0 secs type=${1:-}
	if [[ -z $type ]]; then
		rm -rf "$dir/sb1" "$dir/sb2" && mkdir -p "$dir/sb1" "$dir/sb2"
	fi
	sync
	t0=$(now)
	psql_ -c "SELECT stripe_backup(ARRAY['$dir/sb1', '$dir/sb2'], wait => false${type:+, type => '$type'})" >/dev/null
	while :; do
		pid=$(psql_ -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'stripebackup'")
		[[ -z $pid ]] && break
		hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
		((hwm > peak)) && peak=$hwm
		sleep 0.05
	done
	secs=$(elapsed "$t0")
	psql_ -c "SELECT status FROM stripe_backups ORDER BY id DESC LIMIT 1" | grep -qx completed ||
		{ echo "stripe_backup did not complete" >&2; exit 1; }
	[[ -z $type ]] || psql_ -c "SELECT type FROM stripe_backups ORDER BY id DESC LIMIT 1" | grep -qx "$type" ||
		{ echo "stripe_backup did not take a $type backup" >&2; exit 1; }
	echo "$secs $peak"
}
