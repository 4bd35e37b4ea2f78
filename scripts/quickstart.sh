#!/usr/bin/env bash
# stripebackup end to end, on a throwaway cluster:
#   build and install; initdb a cluster with data checksums; load pgbench data;
#   stop it; back it up striped over three folders with weights 1,2,3;
#   show, plan and verify the backup; restore it; start the copy on another
#   port and compare it with the original.
#
# Everything lives under $QUICKSTART_DIR (default /tmp/stripebackup-quickstart)
# and is removed at the end unless KEEP=1.
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
mkdir -p "$dir"/{dest1,dest2,dest3}
[[ $(id -u) -eq 0 ]] && chown -R postgres: "$dir"
run() { "${as_user[@]}" env PATH="$PATH" "$@"; }
cleanup() {
	run pg_ctl -D "$dir/primary" -m immediate stop >/dev/null 2>&1 || true
	run pg_ctl -D "$dir/copy" -m immediate stop >/dev/null 2>&1 || true
	[[ "${KEEP:-0}" == 1 ]] || rm -rf "$dir"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "a throwaway cluster with data checksums, pgbench scale $scale"
run initdb -D "$dir/primary" --data-checksums -A trust >/dev/null
run pg_ctl -D "$dir/primary" -o "-p 55432 -k $dir" -l "$dir/primary.log" -w start >/dev/null
run pgbench -i -q -s "$scale" -h "$dir" -p 55432 postgres 2>&1 | tail -1
run pgbench -c 2 -T 3 -h "$dir" -p 55432 postgres 2>&1 | grep -E "^(tps|number of transactions actually)"
query="SELECT count(*) AS accounts, sum(abalance) AS balance, (SELECT count(*) FROM pgbench_branches) AS branches FROM pgbench_accounts"
before=$(run psql -h "$dir" -p 55432 -XAtc "$query" postgres)
run pg_ctl -D "$dir/primary" -w stop >/dev/null

step "back it up, striped over three folders in shares of 1:2:3"
run stripebackup create --source "$dir/primary" \
	--dest "$dir/dest1" --dest "$dir/dest2" --dest "$dir/dest3" \
	--weights 1,2,3 --balance weighted --compression zstd --level 1 --name quickstart

step "what the backup holds (any one destination's folder will do)"
run stripebackup show "$dir/dest1/quickstart"

step "plan and verify it"
run stripebackup plan "$dir/dest2/quickstart" --target "$dir/copy"
run stripebackup verify "$dir/dest3/quickstart"

step "restore it and start the copy on another port"
run stripebackup restore "$dir/dest1/quickstart" --target "$dir/copy"
run pg_ctl -D "$dir/copy" -o "-p 55433 -k $dir" -l "$dir/copy.log" -w start >/dev/null
after=$(run psql -h "$dir" -p 55433 -XAtc "$query" postgres)

step "result"
echo "original: $before"
echo "restored: $after"
if [[ "$before" != "$after" ]]; then
	echo "MISMATCH" >&2
	exit 1
fi
echo "the restored cluster returns the same results"
