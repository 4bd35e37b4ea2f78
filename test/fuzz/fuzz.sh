#!/usr/bin/env bash
# Runs the libFuzzer targets built by "make fuzz" (test/fuzz/README.md).
#
#   fuzz.sh run SECONDS   every target at once, SECONDS each; new inputs go to
#                         build/fuzz/corpus/TARGET, crashes to build/fuzz/artifacts/
#   fuzz.sh merge         minimize test/fuzz/corpus/TARGET plus what runs found
#                         back into test/fuzz/corpus/TARGET: libFuzzer's merge, in
#                         its set-cover form over edges (-set_cover_merge=1
#                         -use_counters=0), keeps every edge the inputs reach
#                         with as few files as it can
#
# Fails if a target crashes, leaks, hangs (10 s per input) or trips a sanitizer.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
bin=build/fuzz
targets=(manifest stripe wal walrec)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

options() {
	local t=$1
	echo -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
	if [[ $t == manifest ]]; then
		echo -dict=test/fuzz/manifest.dict
	fi
}

run() {
	local seconds=$1 t status=0 dirs
	local -A pids
	mkdir -p "$bin/artifacts"
	for t in "${targets[@]}"; do
		mkdir -p "$bin/corpus/$t"
		# The first folder receives new inputs; the kept corpus and the
		# regression inputs are only read.
		dirs=("$bin/corpus/$t" "test/fuzz/corpus/$t")
		if [[ -d test/fuzz/regress/$t ]]; then
			dirs+=("test/fuzz/regress/$t")
		fi
		"$bin/fuzz_$t" $(options "$t") -max_total_time="$seconds" \
			-artifact_prefix="$bin/artifacts/$t-" "${dirs[@]}" >"$bin/$t.log" 2>&1 &
		pids[$t]=$!
		echo "fuzz_$t: running for $seconds s (log: $bin/$t.log)"
	done
	for t in "${targets[@]}"; do
		if wait "${pids[$t]}"; then
			echo "=== fuzz_$t: no failure"
		else
			echo "=== fuzz_$t: FAILED (exit status $?; see $bin/$t.log, $bin/artifacts/)"
			status=1
		fi
		grep -E '^#[0-9]+.*DONE|^stat::|^Done [0-9]+ runs' "$bin/$t.log" || tail -n 40 "$bin/$t.log"
	done
	return $status
}

merge() {
	local t new
	for t in "${targets[@]}"; do
		new=$(mktemp -d "$bin/merge-$t.XXXXXX")
		mkdir -p "$bin/corpus/$t"
		"$bin/fuzz_$t" $(options "$t") -set_cover_merge=1 -use_counters=0 \
			"$new" "test/fuzz/corpus/$t" "$bin/corpus/$t" \
			>"$bin/merge-$t.log" 2>&1 || { tail -n 20 "$bin/merge-$t.log"; exit 1; }
		rm -rf "test/fuzz/corpus/$t"
		mv "$new" "test/fuzz/corpus/$t"
		chmod 755 "test/fuzz/corpus/$t"
		echo "fuzz_$t: corpus minimized to $(ls "test/fuzz/corpus/$t" | wc -l) files," \
			"$(cat "test/fuzz/corpus/$t"/* | wc -c) bytes"
	done
}

case "${1:-}" in
	run) run "${2:-600}" ;;
	merge) merge ;;
	*) echo "usage: fuzz.sh run SECONDS | fuzz.sh merge" >&2; exit 2 ;;
esac
