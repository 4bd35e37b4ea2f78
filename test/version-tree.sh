# The project built against another PostgreSQL than the checkout's own, in a
# copy of the tree so the checkout keeps its objects: src/extension's objects
# are of one server's headers and are left out; the engine's and the
# command's (build/, no PostgreSQL in them) are reused.  Installed into that
# server's prefix only (no link in /usr/local/bin).  Sourced by
# test/run-version.sh and the benchmarks that run on 17 and later.
sb_version_tree() {	# REPO TREE PG_CONFIG
	local repo=$1 tree=$2 pg_config=$3
	mkdir "$tree"
	(cd "$repo" && cp -a Makefile stripebackup.control include src sql expected test docs "$tree/")
	find "$tree/src/extension" \( -name '*.o' -o -name '*.d' -o -name '*.bc' \) -delete
	if [[ -d $repo/build ]]; then
		mkdir "$tree/build"
		cp -a "$repo/build/libsbengine.a" "$repo/build/src" "$tree/build/" 2>/dev/null || true
	fi
	make -C "$tree" -s -j2 all PG_CONFIG="$pg_config"
	make -C "$tree" -s install PG_CONFIG="$pg_config" CLI_LINK_DIR=
}
