# What test/run-all.sh and test/run-version.sh share (sourced, not run):
# the SQL tests of one server, and the pass counts of their logs.

# pg_regress (SCRATCH/regress: sql/ and expected/), then pgTAP
# (SCRATCH/test/pgtap), as RUNNER (an array's name: empty, or runuser)
# against the server of BINDIR; their output into LOGDIR/regress.log and
# LOGDIR/pgtap.log.  REGRESS_PORT and PGTAP_PORT choose the ports.
sb_sql_tests() {	# RUNNER SCRATCH BINDIR PGXS_SRC LOGDIR
	local -n as=$1
	local scratch=$2 bindir=$3 pgxs_src=$4 logs=$5 tests

	echo "=== SQL output (pg_regress)"
	tests=$(cd "$scratch/regress/expected" && ls *.out | sed 's/\.out$//')
	if ! "${as[@]}" "$pgxs_src/test/regress/pg_regress" --inputdir="$scratch/regress" \
		--outputdir="$scratch/regress" --bindir="$bindir" --temp-instance="$scratch/regress/instance" \
		--temp-config="$scratch/test/regress.conf" --port="${REGRESS_PORT:-65430}" $tests \
		2>&1 | tee "$logs/regress.log"; then
		cat "$scratch/regress/regression.diffs"
		return 1
	fi
	echo "=== SQL behaviour (pgTAP)"
	"${as[@]}" env PATH="$bindir:$PATH" PGTAP_PORT="${PGTAP_PORT:-65431}" \
		bash "$scratch/test/pgtap/run.sh" "$scratch" 2>&1 | tee "$logs/pgtap.log"
}

# "N files, M tests" from the summary of prove or pg_prove in LOG (its
# last), added up over the LOGs given (several runs counted as one part).
sb_counts() {		# LOG...
	local log
	for log in "$@"; do
		sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\),.*/\1 \2/p' "$log" | tail -1
	done | awk '{ files += $1; tests += $2 } END { if (NR) print files " files, " tests " tests" }'
}

# N of pg_regress's "All N tests passed" in LOG.
sb_regress_count() {	# LOG
	sed -n 's/.*All \([0-9]*\) tests passed.*/\1/p' "$1"
}
