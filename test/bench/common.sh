# Shared by the benchmarks: run as postgres (installing what they need first
# when started as root), and the timing helpers.  Source it after setting
# REPO and DIR; it sets bindir, PATH, results and empties the times file.

if [[ $(id -u) -eq 0 ]]; then
	bash "$REPO/scripts/install-deps.sh" --bench
	make -s -C "$REPO" all install >/dev/null
	mkdir -p "$DIR"
	chown postgres: "$DIR"
	exec runuser -u postgres -- env BENCH_DIR="$DIR" bash "$0" "${BENCH_ARGS[@]}"
fi

bindir=$(pg_config --bindir)
export PATH="$bindir:$PATH"
results="$DIR/results"
mkdir -p "$results"
: > "$results/times"

now() { date +%s.%N; }
elapsed() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
psql_() { psql -h "$DIR" -p "${PORT:-$port}" -XAtq -d postgres -v ON_ERROR_STOP=1 "$@"; }
record() { echo "$1 $2" >> "$results/times"; }	# name seconds
median() { awk -v k="$1" '$1 == k { print $2 }' "$results/times" | sort -g |
	awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print 0 }'; }
say() { printf '\033[1m%s\033[0m\n' "$*" >&2; }
