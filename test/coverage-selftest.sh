#!/usr/bin/env bash
# test/coverage-report.awk can fail (make coverage-check runs this first):
# made-up gcovr figures against made-up subsystem tables, each case with the
# exit status and the message it must give.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# gcovr's columns; wal 95 of 100 lines, backup 80 of 100, a file in a folder 50 of 50.
cat > "$work/coverage.csv" <<'CSV'
filename,line_total,line_covered,line_percent,branch_total,branch_covered,branch_percent,function_total,function_covered,function_percent
src/engine/wal_push.c,100,95,0.95,10,9,0.9,5,5,1.0
src/engine/backup.c,100,80,0.8,10,8,0.8,5,4,0.8
src/engine/store/store_posix.c,50,50,1.0,0,0,1.0,2,2,1.0
CSV
printf 'wal 90 wal_*\nbackup 75 backup*\nother 90 *\n' > "$work/pass"
printf '# a comment\nwal 90 wal_*\nbackup 85 backup*\nother 90 *\n' > "$work/backup-low"
printf 'wal 90 wal_*\nbackup 75 backup*\n' > "$work/no-catch-all"
printf 'wal 90 wal_*\nbackup 75 backup*\nstore 100 store/*\n' > "$work/folder"
printf 'wal ninety wal_*\nother 90 *\n' > "$work/malformed"
printf 'wal 90 wal_*\ns3 90 s3_*\nother 75 *\n' > "$work/stale"

# case DESCRIPTION STATUS WANT TABLE MIN [CSV]: the report exits STATUS, its output containing WANT.
case_() {
	local what=$1 status=$2 want=$3 out rc=0

	out=$(awk -F, -v min="$5" -f "$repo/test/coverage-report.awk" "$work/$4" "$work/${6:-coverage.csv}" 2>&1) ||
		rc=$?
	if [[ $rc -ne $status ]] || ! grep -qF -- "$want" <<<"$out"; then
		echo "not ok - $what: exit $rc (want $status), output:" >&2
		echo "$out" >&2
		failures=$((failures + 1))
	else
		echo "ok - $what"
	fi
}

case_ "every subsystem at its floor passes" 0 "every subsystem at or above its floor" pass 80
case_ "a subsystem below its floor fails" 1 "80.0% of the lines of the backup subsystem run, below its floor of 85%" backup-low 80
case_ "minimum 0 only reports" 0 "nothing checked" backup-low 0
case_ "the engine below the minimum fails" 1 "90.0% of the engine's lines run, below the minimum of 91%" pass 91
case_ "a file no subsystem takes fails" 2 "takes store/store_posix.c" no-catch-all 80
case_ "a folder's pattern takes its files" 0 "store/store_posix.c            store" folder 80
case_ "a malformed table fails" 2 "is not \"name floor pattern...\"" malformed 80
case_ "a subsystem that takes no file fails" 2 "the s3 subsystem of $work/stale takes no engine file" stale 80
head -n 1 "$work/coverage.csv" > "$work/empty.csv"
case_ "a report of no file fails" 2 "takes no engine file" pass 80 empty.csv

if ((failures > 0)); then
	echo "coverage-selftest: $failures cases went wrong" >&2
	exit 1
fi
echo "coverage-selftest: test/coverage-report.awk passed and failed as it should"
