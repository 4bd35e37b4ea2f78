#!/usr/bin/env bash
# How much of the engine its unit tests run (make coverage, make coverage-check).
#
#   test/coverage.sh BUILD-DIR [MIN]
#
# Runs BUILD-DIR/unit_tests (built with --coverage) twice, as CI does: with
# the default I/O method (io_uring where the kernel allows it) and with
# synchronous I/O, then prints the lines and branches run per engine source
# file, per subsystem (test/coverage-subsystems) and in total (gcovr,
# test/coverage-report.awk).  With MIN (not 0), fails when the total of lines
# run is below MIN percent or a subsystem's below its floor.  Fails when a
# unit test fails.
set -euo pipefail

dir=${1:?usage: test/coverage.sh BUILD-DIR [MIN-LINE-PERCENT]}
min=${2:-}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

if ! command -v gcovr >/dev/null; then
	echo "coverage: gcovr is not installed (scripts/install-deps.sh installs it)" >&2
	exit 1
fi

# Counts add up over runs: start from none.
find "$dir" -name '*.gcda' -delete
for io in auto sync; do
	log="$dir/unit-$io.log"
	if ! STRIPEBACKUP_IO_METHOD=$io "$dir/unit_tests" >"$log" 2>&1; then
		grep -E '^not ok|^Bail out' "$log" || tail -n 20 "$log"
		echo "coverage: the unit tests failed with io_method $io (all output: $log)" >&2
		exit 1
	fi
	echo "unit tests, io_method $io: $(grep -E '^# [0-9]+ assertions' "$log" | sed 's/^# //')"
done

# One row per file: name, lines, lines run, %, branches, branches run, %, ...
csv="$dir/coverage.csv"
gcovr --root . --object-directory "$dir" --filter 'src/engine/' -j 2 --csv "$csv"

awk -F, -v min="$min" -f test/coverage-report.awk test/coverage-subsystems "$csv"
