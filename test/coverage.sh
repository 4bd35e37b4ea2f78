#!/usr/bin/env bash
# How much of the engine its unit tests run (make coverage, make coverage-check).
#
#   test/coverage.sh BUILD-DIR [MIN]
#
# Runs BUILD-DIR/unit_tests (built with --coverage) twice, as CI does: with
# the default I/O method (io_uring where the kernel allows it) and with
# synchronous I/O, then prints the lines and branches run per engine source
# file and in total (gcovr).  With MIN, fails when the total of lines run is
# below MIN percent.  Fails when a unit test fails.
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

awk -F, -v min="$min" '
	function pct(run, total) { return total ? 100 * run / total : 100 }
	function row(name, lt, lr, bt, br) {
		printf "%-28s %6d %6d %6.1f%% %7d %6d %6.1f%%\n", name, lt, lr, pct(lr, lt), bt, br, pct(br, bt)
	}
	NR == 1 && ($2 != "line_total" || $3 != "line_covered" || $5 != "branch_total" || $6 != "branch_covered") {
		print "coverage: gcovr wrote columns this script does not know: " $0 > "/dev/stderr"
		bad = 1
		exit 2
	}
	NR == 1 { printf "%-28s %6s %6s %7s %7s %6s %7s\n", "engine file", "lines", "run", "%", "branches", "run", "%"; next }
	{
		row($1, $2, $3, $5, $6)
		lt += $2; lr += $3; bt += $5; br += $6
	}
	END {
		if (bad)
			exit 2
		row("TOTAL", lt, lr, bt, br)
		if (min != "" && pct(lr, lt) < min) {
			printf("coverage: %.1f%% of the engine'"'"'s lines run, below the minimum of %s%%\n",
				pct(lr, lt), min) > "/dev/stderr"
			exit 1
		}
		if (min != "")
			printf("coverage: %.1f%% of the engine'"'"'s lines run (minimum %s%%)\n", pct(lr, lt), min)
	}' "$csv"
