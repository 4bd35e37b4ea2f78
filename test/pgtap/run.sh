#!/usr/bin/env bash
# Run the pgTAP tests (test/pgtap/*.sql) with pg_prove against a throwaway
# cluster that preloads stripebackup.  Run as an unprivileged user:
#   test/pgtap/run.sh SCRATCH_DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
scratch=${1:?scratch directory}
bindir=$(pg_config --bindir)
port=${PGTAP_PORT:-65431}
data="$scratch/pgtap-data"

rm -rf "$data"
"$bindir/initdb" -D "$data" --data-checksums -A trust >/dev/null
cat "$here/../regress.conf" >> "$data/postgresql.conf"
"$bindir/pg_ctl" -D "$data" -o "-p $port -k $scratch -c listen_addresses=''" \
	-l "$scratch/pgtap.log" -w start >/dev/null
trap '"$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null' EXIT
pg_prove -h "$scratch" -p "$port" -d postgres "$here"/*.sql
