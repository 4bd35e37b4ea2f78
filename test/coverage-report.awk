# Lines and branches run per engine file, per subsystem and in total, from
# gcovr's CSV (test/coverage.sh):
#
#   awk -F, -v min=MIN -f test/coverage-report.awk SUBSYSTEMS-TABLE COVERAGE.CSV
#
# The table (test/coverage-subsystems) names each subsystem, its floor and its
# files' patterns; a file no subsystem takes, or a subsystem that takes none,
# is an error.  With MIN (not 0), fails when the engine's lines run are below
# MIN percent, or a subsystem's below its floor.

function pct(run, total) { return total ? 100 * run / total : 100 }

function row(name, group, lt, lr, bt, br) {
	printf "%-30s %-9s %6d %6d %6.1f%% %7d %6d %6.1f%%\n", name, group, lt, lr, pct(lr, lt), bt, br, pct(br, bt)
}

# A shell pattern (*, ?) as an anchored regular expression.
function glob_regex(glob,    out, i, c) {
	out = "^"
	for (i = 1; i <= length(glob); i++) {
		c = substr(glob, i, 1)
		if (c == "*")
			out = out ".*"
		else if (c == "?")
			out = out "."
		else if (index("\\^$.[]|()+{}", c))
			out = out "\\" c
		else
			out = out c
	}
	return out "$"
}

function subsystem_of(path,    s, i) {
	for (s = 1; s <= nsub; s++)
		for (i = 1; i <= npat[s]; i++)
			if (path ~ pattern[s, i])
				return s
	return 0
}

# The table: "name floor pattern..." (words apart by blanks; the CSV is read with -F,), # comments.
FNR == NR {
	if ($0 ~ /^[ \t]*(#|$)/)
		next
	sub(/^[ \t]+/, "")
	nw = split($0, w, /[ \t]+/)
	if (nw < 3 || w[2] !~ /^[0-9]+(\.[0-9]+)?$/) {
		printf("coverage: %s line %d is not \"name floor pattern...\": %s\n", FILENAME, FNR, $0) > "/dev/stderr"
		bad = 1
		exit 2
	}
	name[++nsub] = w[1]
	floor_of[nsub] = w[2]
	for (i = 3; i <= nw; i++)
		pattern[nsub, ++npat[nsub]] = glob_regex(w[i])
	next
}

FNR == 1 && ($2 != "line_total" || $3 != "line_covered" || $5 != "branch_total" || $6 != "branch_covered") {
	print "coverage: gcovr wrote columns this script does not know: " $0 > "/dev/stderr"
	bad = 1
	exit 2
}

FNR == 1 { next }

{
	path = $1
	sub(/^(\.\/)?src\/engine\//, "", path)
	s = subsystem_of(path)
	if (s == 0) {
		printf("coverage: no subsystem of %s takes %s\n", ARGV[1], path) > "/dev/stderr"
		bad = 1
		exit 2
	}
	files[s] = files[s] sprintf("%s,%d,%d,%d,%d\n", path, $2, $3, $5, $6)
	lt[s] += $2; lr[s] += $3; bt[s] += $5; br[s] += $6
}

END {
	if (bad)
		exit 2
	# A subsystem that takes no file is a stale table (its files moved), and no file at all no report.
	for (s = 1; s <= nsub; s++)
		if (files[s] == "") {
			printf("coverage: the %s subsystem of %s takes no engine file: change its patterns\n",
				name[s], ARGV[1]) > "/dev/stderr"
			bad = 1
		}
	if (bad)
		exit 2
	printf "%-30s %-9s %6s %6s %7s %7s %6s %7s\n", "engine file", "subsystem", "lines", "run", "%", "branches",
		"run", "%"
	for (s = 1; s <= nsub; s++) {
		n = split(files[s], line, "\n")
		for (i = 1; i < n; i++) {
			split(line[i], f, ",")
			row(f[1], name[s], f[2], f[3], f[4], f[5])
		}
		total_lt += lt[s]; total_lr += lr[s]; total_bt += bt[s]; total_br += br[s]
	}
	printf "\n%-30s %-9s %6s %6s %7s %7s %6s %7s\n", "subsystem", "floor", "lines", "run", "%", "branches", "run", "%"
	for (s = 1; s <= nsub; s++) {
		row(name[s], floor_of[s] "%", lt[s], lr[s], bt[s], br[s])
		if (min != "" && min != 0 && pct(lr[s], lt[s]) < floor_of[s]) {
			failed[++nfailed] = sprintf("coverage: %.1f%% of the lines of the %s subsystem run, below its floor of %s%% (%s)",
				pct(lr[s], lt[s]), name[s], floor_of[s], ARGV[1])
		}
	}
	row("TOTAL", min != "" ? min "%" : "", total_lt, total_lr, total_bt, total_br)
	if (min != "" && pct(total_lr, total_lt) < min)
		failed[++nfailed] = sprintf("coverage: %.1f%% of the engine's lines run, below the minimum of %s%%",
			pct(total_lr, total_lt), min)
	for (i = 1; i <= nfailed; i++)
		print failed[i] > "/dev/stderr"
	if (nfailed)
		exit 1
	if (min != "" && min != 0)
		printf("coverage: %.1f%% of the engine's lines run (minimum %s%%), every subsystem at or above its floor\n",
			pct(total_lr, total_lt), min)
	else if (min != "")
		printf("coverage: %.1f%% of the engine's lines run (minimum 0: nothing checked)\n", pct(total_lr, total_lt))
}
