#!/usr/bin/env bash
# Many relations, online (make bench-relations): a cluster of RELATIONS
# relation files (tables of one row, each with its primary key, TOAST table
# and TOAST index) backed up from SQL beside pg_basebackup and pgBackRest,
# then restored by the command beside pgBackRest.  The backup worker's peak
# RSS is sampled from /proc while it runs; every command's comes from GNU time.
# Figures, not a test.
#
#   test/bench/many_relations.sh [RELATIONS]    (default 100000)
#   BENCH_DIR   where everything goes (default /tmp/stripebackup-relations)
#
# Every tool is timed the same way: its output made durable (sync) before the
# clock stops, and the caches synced before it starts.
set -euo pipefail

relations=${1:-100000}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${BENCH_DIR:-/tmp/stripebackup-relations}
BENCH_ARGS=("$@")
. "$REPO/test/bench/common.sh"
dir=$DIR
port=55493
data="$dir/data"
trap stop_cluster EXIT

# Four relation files a table: heap, primary key, TOAST table, TOAST index;
# committed a thousand tables at a time (each holds its locks to the commit).
make_relations() {	# TABLES
	psql_ -c "DO \$\$ BEGIN
		FOR i IN 1..$1 LOOP
			EXECUTE format('CREATE TABLE r%s (id int PRIMARY KEY, v text)', i);
			EXECUTE format('INSERT INTO r%s VALUES (1, %L)', i, md5(i::text));
			IF i % 1000 = 0 THEN COMMIT; END IF;
		END LOOP; END \$\$" -c 'CHECKPOINT'
}

# Run a command under GNU time; record its seconds and peak RSS (MiB) under NAME.
measured() {	# NAME COMMAND...
	local name=$1 out
	shift
	sync
	out=$( { /usr/bin/time -f 'peak %M %e' "$@" >/dev/null; } 2>&1 | tail -1)
	read -r _ rss secs <<< "$out"
	echo "$name $secs $(calc "$rss / 1024" 1)" >> "$results/relations"
}

# stripe_backup to two folders (TYPE: full, incr); the worker's peak RSS sampled while it runs.
sb_backup() {	# [TYPE]
	local secs peak
	read -r secs peak <<< "$(sampled_backup "${1:-}")"
	[[ -n $peak ]] || exit 1
	echo "sb_backup${1:+_$1} $secs $(calc "$peak / 1024" 1)" >> "$results/relations"
}

pgbb_backup() {
	rm -rf "$dir/pgbb"
	measured bb_backup bash -c "pg_basebackup -h '$dir' -p $port -D '$dir/pgbb' -Ft -X fetch \
		--checkpoint=fast --compress=server-zstd:level=1,workers=2 && sync -f '$dir/pgbb'/*"
}

pgbr_backup() {
	measured br_backup bash -c "pgbackrest --config='$dir/pgbackrest.conf' --stanza=bench --type=full backup"
}

sb_location() { psql_ -c "SELECT location FROM stripe_backups WHERE status = 'completed' ORDER BY id DESC LIMIT 1"; }

sb_restore() {	# [NAME]
	rm -rf "$dir/restore"
	measured "${1:-sb_restore}" stripebackup restore "$(sb_location)" --target "$dir/restore" --no-progress
}

pgbr_restore() {
	rm -rf "$dir/restore"
	measured br_restore bash -c "pgbackrest --config='$dir/pgbackrest.conf' --stanza=bench \
		--pg1-path='$dir/restore' restore && sync -f '$dir/restore'"
}

# ---------- the run ----------

stop_cluster
rm -rf "$data" "$dir/pgbackrest-repo" "$dir/restore" "$dir/pgbb" "$results/relations"
bench_pgbackrest_conf
initdb -D "$data" --data-checksums -A trust >/dev/null
cat >> "$data/postgresql.conf" <<CONF
shared_preload_libraries = 'stripebackup'
archive_mode = on
archive_command = 'pgbackrest --config=$dir/pgbackrest.conf --stanza=bench archive-push %p'
autovacuum = off
max_wal_size = 4GB
CONF
start_cluster
psql_ -c 'CREATE EXTENSION stripebackup'
pgbr stanza-create >/dev/null
say "creating $((relations / 4)) tables ($relations relation files)"
make_relations $((relations / 4))
files=$(find "$data" -type f | wc -l)
megabytes=$(du -sm "$data" | cut -f1)
say "the cluster holds $files files, $megabytes MB; backups"
sb_backup
pgbb_backup
pgbr_backup
say "plan, verify, restores"
measured sb_plan stripebackup plan "$(sb_location)"
measured sb_verify stripebackup verify "$(sb_location)"
sb_restore
restored=$(find "$dir/restore" -type f | wc -l)
pgbr_restore
say "an incremental backup after one table changed (it looks every file up in its parent)"
psql_ -c 'UPDATE r1 SET v = v || 1' -c 'CHECKPOINT' >/dev/null
sb_backup incr
say "the incremental restored (its chain: the full backup, then what changed)"
sb_restore sb_restore_incr
rm -rf "$dir/restore" "$dir/pgbb" "$dir/sb1" "$dir/sb2"

fig() { awk -v k="$1" -v c="$2" '$1 == k { print $c }' "$results/relations"; }
row() {	# LABEL KEY [PEER_KEY]
	local s
	s=$(fig "$2" 2)
	printf '%-58s %8.2f %9s %9s %8s\n' "$1" "$s" "$(calc "$files / $s" 0)" "$(fig "$2" 3)" \
		"$([[ -n ${3:-} ]] && calc "$s / $(fig "$3" 2)" || echo)"
}
{
echo
echo "A cluster of $files files, $megabytes MB ($relations relation files in $((relations / 4)) tables), online;"
echo "$(nproc) CPUs; $(date -u +%F)"
echo "(the restore by the command gave $restored files)"
printf '%-58s %8s %9s %9s %8s\n' "" seconds "files/s" "peak MiB" ratio
row "stripe_backup, 2 folders, zstd 1 (the worker's RSS)" sb_backup bb_backup
row "stripe_backup incr, one table changed (worker's RSS)" sb_backup_incr
row "pg_basebackup -Ft -X fetch, server-zstd:1, workers=2" bb_backup
row "pgBackRest backup, process-max=2 bundle, zst 1" br_backup bb_backup
row "stripebackup plan" sb_plan
row "stripebackup verify" sb_verify
row "stripebackup restore" sb_restore br_restore
row "pgBackRest restore, process-max=2" br_restore
row "stripebackup restore of the incremental (a chain of 2)" sb_restore_incr br_restore
echo "(backup ratio: time / pg_basebackup's; restore ratio: time / pgBackRest's; stripe_backup"
echo " timed from the call to its return, its worker's peak RSS read from /proc meanwhile; every"
echo " figure includes making the output durable)"
} | tee "$results/relations-report.txt"
