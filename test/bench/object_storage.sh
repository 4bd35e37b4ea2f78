#!/usr/bin/env bash
# Object-storage destinations (make bench-s3): stripe_backup() of a pgbench
# cluster to two local folders, to buckets of two endpoints (two s3rver
# processes, the second reached through stripebackup.s3_bucket_endpoints),
# to a folder and a bucket,
# and to one bucket beside pgBackRest's backup to a bucket of the same
# server (repo1-type=s3), and the restore of each (the command's,
# pgBackRest's), alternating, on the same data.  The buckets are served by
# s3rver (test/s3) on this machine behind stunnel (pgBackRest speaks only
# HTTPS; both tools go through it, trusting its self-signed certificate):
# its figures are those of one Node.js process on 127.0.0.1, not of a real
# object store; what they show is what each client costs and keeps up
# with, and how balance splits a backup between a folder and a bucket.
# Figures, not a test.
#
#   test/bench/object_storage.sh [SCALE] [ROUNDS]   (default 100: about 1.5 GB; 3)
#   BENCH_DIR   where everything goes (default /tmp/stripebackup-bench-s3)
#
# Every backup compresses with zstd level 1 and syncs what it writes
# locally (s3rver writes its files without fsync: its side is not made
# durable); each timed step starts with nothing dirty in the page cache.
# Medians.
set -euo pipefail

scale=${1:-100}
rounds=${2:-3}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${BENCH_DIR:-/tmp/stripebackup-bench-s3}
BENCH_ARGS=("$@")
. "$REPO/test/bench/common.sh"
dir=$DIR
port=55497
tls_port=4497
tls_port2=4498
data="$dir/data"
s3state="$dir/s3"
s3state2="$dir/s3b"

cleanup() {
	stop_cluster
	[[ -f $dir/stunnel.pid ]] && kill "$(cat "$dir/stunnel.pid")" 2>/dev/null
	bash "$REPO/test/s3/s3server.sh" stop "$s3state" 2>/dev/null || true
	bash "$REPO/test/s3/s3server.sh" stop "$s3state2" 2>/dev/null || true
}

# HTTPS in front of the s3rver at $1 (on $tls_port) and the one at $2 (on $tls_port2), a certificate for 127.0.0.1.
start_tls() {
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/tls.key" -out "$dir/tls.crt" -days 2 \
		-subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
	cat "$dir/tls.key" "$dir/tls.crt" > "$dir/tls.pem"
	printf '%s\n' "pid = $dir/stunnel.pid" "cert = $dir/tls.pem" \
		"[s3]" "accept = 127.0.0.1:$tls_port" "connect = 127.0.0.1:${1##*:}" \
		"[s3b]" "accept = 127.0.0.1:$tls_port2" "connect = 127.0.0.1:${2##*:}" > "$dir/stunnel.conf"
	stunnel4 "$dir/stunnel.conf"
}
trap cleanup EXIT

backup() {	# NAME DESTINATION...
	local name=$1 d
	shift
	rm -rf "$dir/sb1" "$dir/sb2"
	mkdir -p "$dir/sb1" "$dir/sb2"
	sync
	local t0=$(now)
	psql_ -c "SELECT stripe_backup(ARRAY[$(printf "'%s'," "$@" | sed 's/,$//')], compression_level => 1)" >/dev/null
	record "$name" "$(elapsed "$t0")"
	location=$(psql_ -c "SELECT location FROM stripe_backups ORDER BY id DESC LIMIT 1")
	psql_ -c "SELECT stripe, destination, stored_bytes, seconds FROM stripe_backup_stripes
		WHERE backup_id = (SELECT max(id) FROM stripe_backups)" | sed "s/^/$name /" >> "$results/stripes"
}

restore() {	# NAME
	rm -rf "$dir/work"
	sync
	local t0=$(now)
	stripebackup restore "$location" --target "$dir/work" --no-progress >/dev/null
	record "$1" "$(elapsed "$t0")"
}

pgbackrest_round() {
	sync
	local t0=$(now)
	pgbr --type=full backup
	record backup_pgbackrest "$(elapsed "$t0")"
	rm -rf "$dir/work"
	sync
	t0=$(now)
	pgbr --pg1-path="$dir/work" restore
	record restore_pgbackrest "$(elapsed "$t0")"
}

round() {
	local kind
	for kind in "$@"; do
		case $kind in
			local) backup backup_local "$dir/sb1" "$dir/sb2"; restore restore_local ;;
			s3) backup backup_s3 "s3://bk1/bench" "s3://bk3/bench"; restore restore_s3 ;;
			mixed) backup backup_mixed "$dir/sb1" "s3://bk1/mixed"; restore restore_mixed ;;
			one) backup backup_one "s3://bk1/one"; restore restore_one ;;
			pgbackrest) pgbackrest_round ;;
		esac
	done
}

# ---------- the run ----------

rm -rf "$data" "$dir/pgbackrest-repo" "$dir/work" "$s3state" "$s3state2"
stop_cluster
mkdir -p "$s3state" "$s3state2"
start_tls "$(bash "$REPO/test/s3/s3server.sh" start "$s3state" bk1 bk2)" \
	"$(bash "$REPO/test/s3/s3server.sh" start "$s3state2" bk3)"
endpoint=https://127.0.0.1:$tls_port
bucket_endpoints="bk3=https://127.0.0.1:$tls_port2"
credentials="$dir/credentials"
(umask 077; printf '[default]\naws_access_key_id = S3RVER\naws_secret_access_key = S3RVER\n' > "$credentials")
export AWS_ENDPOINT_URL=$endpoint AWS_SHARED_CREDENTIALS_FILE=$credentials AWS_CA_BUNDLE=$dir/tls.crt \
	STRIPEBACKUP_S3_BUCKET_ENDPOINTS=$bucket_endpoints
bench_pgbackrest_conf repo1-type=s3 repo1-s3-endpoint=127.0.0.1 repo1-storage-port=$tls_port \
	repo1-storage-verify-tls=n repo1-s3-bucket=bk2 repo1-s3-region=us-east-1 repo1-s3-key=S3RVER \
	repo1-s3-key-secret=S3RVER repo1-s3-uri-style=path expire-auto=n
bench_pgbench_cluster "$scale"
psql_ -c "ALTER SYSTEM SET stripebackup.s3_endpoint = '$endpoint'" \
	-c "ALTER SYSTEM SET stripebackup.s3_ca_file = '$dir/tls.crt'" \
	-c "ALTER SYSTEM SET stripebackup.s3_credentials_file = '$credentials'" \
	-c "ALTER SYSTEM SET stripebackup.s3_bucket_endpoints = '$bucket_endpoints'" -c 'SELECT pg_reload_conf()' >/dev/null
psql_ -c 'VACUUM ANALYZE' -c 'CHECKPOINT'
bytes=$(psql_ -c "SELECT sum(pg_database_size(oid)) FROM pg_database")
: > "$results/stripes"
backup warmup "$dir/sb1" "s3://bk1/warmup"
for ((r = 1; r <= rounds; r++)); do
	say "round $r of $rounds"
	case $((r % 3)) in
		1) round local s3 mixed one pgbackrest ;;
		2) round pgbackrest one s3 mixed local ;;
		0) round mixed local pgbackrest s3 one ;;
	esac
done
rm -rf "$dir/work" "$dir/sb1" "$dir/sb2"

# ---------- the report ----------

mbps() { calc "$bytes / 1e6 / $1" 0; }
share() {	# KIND: the bucket's share of the mixed backups' stored bytes, in %
	awk -v k="$1" '$1 == k { split($0, f, "|"); if (f[2] ~ /^s3:/) s += f[3]; t += f[3] }
		END { if (t) printf "%.0f", 100 * s / t; else print "-" }' "$results/stripes"
}
{
echo
echo "object storage: $(calc "$bytes / 1e9" 2) GB cluster (pgbench scale $scale), zstd level 1, two stripes,"
echo "buckets on s3rver 3.7.1 (a Node.js process per endpoint, 127.0.0.1, HTTPS by stunnel); $(nproc) CPUs, medians of $rounds rounds; $(date -u +%F)"
echo
printf '%-28s %10s %10s %10s %10s %9s\n' "" "backup s" "MB/s" "restore s" "MB/s" "vs local"
base_b=$(median backup_local)
base_r=$(median restore_local)
for kind in local s3 mixed one pgbackrest; do
	b=$(median "backup_$kind")
	r=$(median "restore_$kind")
	label=$kind
	case $kind in
		local) label="two local folders" ;;
		s3) label="two endpoints" ;;
		mixed) label="a folder and a bucket" ;;
		one) label="one bucket" ;;
		pgbackrest) label="pgBackRest, one bucket" ;;
	esac
	printf '%-28s %10.2f %10s %10.2f %10s %4s/%-4s\n' "$label" "$b" "$(mbps "$b")" "$r" "$(mbps "$r")" \
		"$(calc "$b / $base_b")" "$(calc "$r / $base_r")"
done
echo "(vs local: backup/restore time over the two local folders' time; the buckets over HTTPS through stunnel;"
echo " pgBackRest: process-max 2, zstd level 1, bundled, repo1-type=s3, expire-auto=n (its retention is not timed, as"
echo " stripebackup's is not), its backup (archive-check: until the last WAL segment is in the bucket)"
echo " and its restore into an empty folder)"
echo "stripebackup / pgBackRest, one bucket: backup $(calc "$(median backup_one) / $(median backup_pgbackrest)"), restore $(calc "$(median restore_one) / $(median restore_pgbackrest)")"
echo "a folder and a bucket: the bucket took $(share backup_mixed)% of the stored bytes (adaptive balance)"
} | tee "$results/report"
