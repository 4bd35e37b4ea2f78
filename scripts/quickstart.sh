#!/usr/bin/env bash
# stripebackup end to end, on a throwaway cluster:
#   build and install; start a cluster that preloads stripebackup; load
#   pgbench data; while pgbench writes, take an online backup from SQL
#   striped over three folders in shares 1:2:3; look at it from SQL and with
#   the command; restore it with the command; check it with PostgreSQL's
#   pg_verifybackup; start the copy on another port and check it.
#
# Everything lives under $QUICKSTART_DIR (default /tmp/stripebackup-quickstart)
# and is removed at the end unless KEEP=1.  SCALE sets the pgbench scale.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
scale=${SCALE:-10}
dir=${QUICKSTART_DIR:-/tmp/stripebackup-quickstart}

bash scripts/install-deps.sh
make -s
if [[ $(id -u) -eq 0 ]]; then
	make -s install
	as_user=(runuser -u postgres --)
else
	sudo make -s install
	as_user=()
fi
bindir=$(pg_config --bindir)
export PATH="$bindir:$PATH"

rm -rf "$dir"
mkdir -p "$dir"/{nvme1,nvme2,sata}
[[ $(id -u) -eq 0 ]] && chown -R postgres: "$dir"
run() { "${as_user[@]}" env PATH="$PATH" "$@"; }
sql() { run psql -h "$dir" -p "$1" -X -d postgres -v ON_ERROR_STOP=1 "${@:2}"; }
cleanup() {
	run pg_ctl -D "$dir/primary" -m immediate stop >/dev/null 2>&1 || true
	run pg_ctl -D "$dir/copy" -m immediate stop >/dev/null 2>&1 || true
	[[ "${KEEP:-0}" == 1 ]] || rm -rf "$dir"
}
trap cleanup EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "a throwaway cluster with data checksums and stripebackup preloaded"
run initdb -D "$dir/primary" --data-checksums -A trust >/dev/null
echo "shared_preload_libraries = 'stripebackup'" >> "$dir/primary/postgresql.conf"
run pg_ctl -D "$dir/primary" -o "-p 55432 -k $dir -c listen_addresses=''" -l "$dir/primary.log" -w start >/dev/null
run pgbench -i -q -s "$scale" -h "$dir" -p 55432 postgres 2>&1 | tail -1
sql 55432 -qc "CREATE EXTENSION stripebackup"

step "while pgbench writes, back it up from SQL over three folders in shares 1:2:3"
# Five seconds of pgbench, the backup starting after two.  (It ends by itself:
# a background job of a script ignores SIGINT, so pgbench could not be
# interrupted.)
run pgbench -c 2 -T 5 -n -h "$dir" -p 55432 postgres >/dev/null 2>&1 &
pgbench_pid=$!
sleep 2
sql 55432 -c "\\timing on" -c "SELECT stripe_backup(ARRAY['$dir/nvme1', '$dir/nvme2', '$dir/sata'],
	weights => ARRAY[1, 2, 3], balance => 'weighted', label => 'quickstart')"
wait "$pgbench_pid" || true

step "the backup, as SQL sees it"
sql 55432 -c "SELECT id, status, label, duration, files, pg_size_pretty(bytes_read) AS read,
	pg_size_pretty(bytes_written) AS written, mb_per_s, start_lsn, stop_lsn FROM stripe_backups" \
	-c "SELECT stripe, destination, weight, chunks, pg_size_pretty(stored_bytes) AS stored, data_mb_per_s, stored_mb_per_s
	FROM stripe_backup_stripes"
location=$(sql 55432 -Atc "SELECT location FROM stripe_backups ORDER BY id DESC LIMIT 1")

step "the backup, as the stripebackup command sees it (no server needed)"
run stripebackup show "$location"
run stripebackup verify "$location"

step "restore it with the command, check it with pg_verifybackup, start the copy"
run stripebackup restore "$location" --target "$dir/copy"
run pg_verifybackup "$dir/copy"
run pg_ctl -D "$dir/copy" -o "-p 55433 -k $dir -c listen_addresses=''" -l "$dir/copy.log" -w start >/dev/null

step "result"
invariant="SELECT (SELECT sum(bbalance) FROM pgbench_branches) = (SELECT sum(tbalance) FROM pgbench_tellers)
	AND (SELECT sum(tbalance) FROM pgbench_tellers) = (SELECT sum(abalance) FROM pgbench_accounts)
	AND (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)"
history=$(sql 55433 -Atc "SELECT count(*) FROM pgbench_history")
holds=$(sql 55433 -Atc "$invariant")
echo "the copy holds $history pgbench transactions; pgbench's invariant holds: $holds"
[[ "$holds" == t ]]
echo "the restored cluster started with nothing else to do, and is consistent"
