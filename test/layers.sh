#!/usr/bin/env bash
# The engine's folders use only the folders below them (make layer-check;
# src/engine/README.md draws the arrows).  Reads every #include "FOLDER/..."
# of src/engine and fails, naming the file and the include, on one that a
# folder may not use.
#
#   test/layers.sh [ENGINE-DIR]    check ENGINE-DIR (default: src/engine)
#   test/layers.sh --selftest      show the check failing and passing
set -euo pipefail

# A folder, then the engine folders its files may include.  store/s3/ is
# store's; include/stripebackup/ (the public API) is open to every folder.
allowed() {
	case $1 in
		util) echo "" ;;
		format) echo "util" ;;
		crypto) echo "util" ;;
		store) echo "format util" ;;
		manifest) echo "store crypto format util" ;;
		policy) echo "store crypto format util" ;;
		backup | restore | wal) echo "policy manifest store crypto format util" ;;
		*) return 1 ;;
	esac
}

# The one exception: a memory ceiling is the sum of what the pipelines
# allocate, so policy_memory.c reads the sizes their headers declare.
excepted() {	# FILE FOLDER-INCLUDED
	[[ $1 == policy/policy_memory.c && $2 =~ ^(backup|restore|wal)$ ]]
}

check() {	# ENGINE-DIR
	local dir=$1 bad=0 file folder used

	cd "$dir"
	while IFS= read -r file; do
		folder=${file%%/*}
		[[ $file == */* ]] || continue		# the top: README.md only
		if ! allowed "$folder" >/dev/null; then
			echo "layers: $file is in a folder this check does not know ($folder/): add it to test/layers.sh" >&2
			bad=1
			continue
		fi
		while IFS= read -r used; do
			[[ $used == "$folder" || $used == stripebackup ]] && continue
			[[ " $(allowed "$folder") " == *" $used "* ]] && continue
			excepted "$file" "$used" && continue
			echo "layers: $file includes \"$used/...\": $folder/ may use $(allowed "$folder" | sed 's/^$/no other folder/')" >&2
			bad=1
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z0-9_]*\)\/.*/\1/p' "$file" | sort -u)
	done < <(find . -name '*.[ch]' | sed 's|^\./||' | LC_ALL=C sort)
	return $bad
}

selftest() {
	local t
	t=$(mktemp -d)
	trap 'rm -rf "$t"' RETURN
	mkdir -p "$t/util" "$t/backup" "$t/policy"
	echo '#include "util/arena.h"' > "$t/backup/a.c"
	echo '#include "restore/x.h"' > "$t/policy/policy_memory.c"
	(check "$t") || { echo "layers selftest: a good tree failed" >&2; return 1; }
	echo '#include "backup/x.h"' > "$t/util/b.c"
	if (check "$t") 2>/dev/null; then
		echo "layers selftest: util/ including backup/ passed" >&2
		return 1
	fi
	rm "$t/util/b.c"
	echo '#include "restore/x.h"' > "$t/policy/policy.c"
	if (check "$t") 2>/dev/null; then
		echo "layers selftest: policy.c including restore/ passed" >&2
		return 1
	fi
	echo "layers selftest: passed and failed as it should"
}

if [[ ${1:-} == --selftest ]]; then
	selftest
else
	check "${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/src/engine}"
	echo "layers: every engine folder uses only the folders below it"
fi
