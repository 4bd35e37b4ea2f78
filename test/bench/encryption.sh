#!/usr/bin/env bash
# The cost of encryption (make bench-encryption): backups of a pgbench
# cluster with stripe_backup() in the clear and with
# stripebackup.encryption_key_file set, and their restores with the command,
# alternating, on the same data.  Prints MB/s and the encrypted/clear ratio
# of times.  Figures, not a test.
#
#   test/bench/encryption.sh [SCALE] [ROUNDS]   (default 200: about 3 GB; 5)
#   BENCH_DIR   where everything goes (default /tmp/stripebackup-bench-encryption)
#
# Both kinds write two stripes, compress with zstd level 1, sync what they
# write, start each timed step with nothing dirty in the page cache and read
# a warm one (the cluster and the backups fit in memory).  Every other round
# in the other order; medians.
set -euo pipefail

scale=${1:-200}
rounds=${2:-5}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${BENCH_DIR:-/tmp/stripebackup-bench-encryption}
BENCH_ARGS=("$@")
. "$REPO/test/bench/common.sh"
dir=$DIR
port=55496
data="$dir/data"
key="$dir/backup.key"

trap stop_cluster EXIT

backup() {	# NAME KEYFILE ('' for none)
	rm -rf "$dir/sb1" "$dir/sb2"
	mkdir -p "$dir/sb1" "$dir/sb2"
	sync
	local t0=$(now)
	psql_ -c "SET stripebackup.encryption_key_file = '$2'" \
		-c "SELECT stripe_backup(ARRAY['$dir/sb1', '$dir/sb2'], compression_level => 1)" >/dev/null
	record "$1" "$(elapsed "$t0")"
	location=$(psql_ -c "SELECT location FROM stripe_backups ORDER BY id DESC LIMIT 1")
}

restore() {	# NAME [--encryption-key-file FILE]
	rm -rf "$dir/work"
	cat "$dir"/sb1/*/* "$dir"/sb2/*/* >/dev/null
	sync
	local t0=$(now)
	stripebackup restore "$location" --target "$dir/work" --no-progress "${@:2}" >/dev/null
	record "$1" "$(elapsed "$t0")"
}

round() {	# clear first, or encrypted first
	local kind
	for kind in "$@"; do
		if [[ $kind == clear ]]; then
			backup backup_clear ''
			restore restore_clear
		else
			backup backup_enc "$key"
			restore restore_enc --encryption-key-file "$key"
		fi
	done
}

# ---------- the run ----------

rm -rf "$data" "$dir/pgbackrest-repo" "$dir/work"
stop_cluster
(umask 077; openssl rand -base64 48 > "$key")
bench_pgbackrest_conf
bench_pgbench_cluster "$scale"
psql_ -c 'VACUUM ANALYZE' -c 'CHECKPOINT'
bytes=$(psql_ -c "SELECT sum(pg_database_size(oid)) FROM pg_database")
backup warmup ''
restore warmup	# untimed in effect: the target's first allocation, writeback settling
for ((r = 1; r <= rounds; r++)); do
	say "round $r of $rounds"
	if ((r % 2 == 1)); then round clear encrypted; else round encrypted clear; fi
done
rm -rf "$dir/work" "$dir/sb1" "$dir/sb2"

# ---------- the report ----------

mbps() { calc "$bytes / 1e6 / $1" 0; }
{
echo
echo "encryption: $(calc "$bytes / 1e9" 2) GB cluster (pgbench scale $scale), two stripes, zstd level 1,"
echo "$(nproc) CPUs, medians of $rounds rounds; $(date -u +%F)"
echo
printf '%-10s %14s %14s %14s %14s %8s\n' "" "clear s" "clear MB/s" "encrypted s" "encrypted MB/s" "ratio"
for step in backup restore; do
	c=$(median "${step}_clear")
	e=$(median "${step}_enc")
	printf '%-10s %14.2f %14s %14.2f %14s %8s\n' "$step" "$c" "$(mbps "$c")" "$e" "$(mbps "$e")" "$(calc "$e / $c")"
done
echo "(ratio: encrypted time / time in the clear; goal: under 1.10)"
} | tee "$results/report"
