#!/usr/bin/env bash
# Build a PostgreSQL release that Debian does not package, with pg_cron and
# pgTAP, for building and testing stripebackup against it (issue 44).
#
#   scripts/build-postgres.sh VERSION     VERSION: 16, 18, or the full 16.2, 18.3
#
# The source is ../shared/postgres/postgresql-X.Y.tar.zst beside the
# repository (SB_PG_SOURCES=DIR to look elsewhere).  The build goes into a
# fixed prefix, SB_PG_PREFIX_ROOT/X.Y (default /opt/stripebackup-pg/X.Y), and
# is cached there: a second run with the same tarballs (their SHA-256 and this
# configure options, recorded in the prefix's .stripebackup-build) does nothing, so a
# machine builds each version once (about 5 minutes on 2 CPUs).  Prints the
# prefix's pg_config on its last line.
#
# Configured with TAP support (the project's TAP files), zstd and lz4 (the
# server's own compression, as Debian's packages have), liburing on 18 (its
# io_method = io_uring), without ICU and readline: the backups do not use
# them and a fresh machine then needs no more packages than
# scripts/install-deps.sh installs.
set -euo pipefail

usage() { echo "usage: $0 VERSION (16, 18, 16.2, 18.3)" >&2; exit 2; }
[[ $# -eq 1 ]] || usage
want=$1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
sources=${SB_PG_SOURCES:-$root/../shared/postgres}
[[ -d $sources ]] || { echo "build-postgres: no source folder $sources (set SB_PG_SOURCES)" >&2; exit 1; }
sources=$(cd "$sources" && pwd)

# The version's tarball: exactly X.Y, or the one release of major X there.
case "$want" in
	[0-9][0-9].[0-9]*) tarballs=("$sources/postgresql-$want.tar.zst") ;;
	[0-9][0-9]) tarballs=("$sources"/postgresql-"$want".[0-9]*.tar.zst) ;;
	*) usage ;;
esac
if [[ ${#tarballs[@]} -ne 1 || ! -f ${tarballs[0]} ]]; then
	echo "build-postgres: no single source tree for PostgreSQL $want in $sources" \
		"(found: ${tarballs[*]})" >&2
	exit 1
fi
tarball=${tarballs[0]}
release=$(basename "$tarball" .tar.zst); release=${release#postgresql-}
major=${release%%.*}
cron=$sources/pg_cron-1.6.tar.zst
pgtap=$sources/pgtap-1.3.5.tar.zst
for f in "$cron" "$pgtap"; do
	[[ -f $f ]] || { echo "build-postgres: missing $f" >&2; exit 1; }
done

prefix=${SB_PG_PREFIX_ROOT:-/opt/stripebackup-pg}/$release
stamp=$prefix/.stripebackup-build

configure=(--prefix="$prefix" --enable-tap-tests --with-zstd --with-lz4
	--without-icu --without-readline)
[[ $major -ge 18 ]] && configure+=(--with-liburing)

# What the cached build was made from: the three tarballs and the options.
checksums() {
	# The shared folder's SHA256SUMS names where the files came from; the
	# files themselves are what is checked.
	if [[ -f $sources/SHA256SUMS ]]; then
		(cd "$sources" && sha256sum --quiet -c --ignore-missing SHA256SUMS) >&2 ||
			{ echo "build-postgres: $sources does not match its SHA256SUMS" >&2; return 1; }
	fi
	sha256sum "$tarball" "$cron" "$pgtap" | awk '{ print $1 }'
	echo "configure ${configure[*]}"
}
want_stamp=$(checksums)

mkdir -p "$(dirname "$prefix")"
# One build of a prefix at a time (two runs on one machine wait for each other).
exec 9>"$prefix.lock"
flock 9

if [[ -f $stamp && $(cat "$stamp") == "$want_stamp" && -x $prefix/bin/pg_config ]]; then
	echo "build-postgres: PostgreSQL $release already built in $prefix" >&2
	echo "$prefix/bin/pg_config"
	exit 0
fi

for tool in bison flex; do
	command -v "$tool" >/dev/null ||
		{ echo "build-postgres: $tool is needed to build PostgreSQL $release (scripts/install-deps.sh)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/sb-pgbuild.XXXXXX")
trap 'rm -rf "$work"' EXIT
log=$work/build.log
start=$SECONDS
echo "build-postgres: building PostgreSQL $release into $prefix" >&2

step() {
	# Quiet unless it fails: then the last lines of the log say why.
	local what=$1; shift
	if ! "$@" >>"$log" 2>&1; then
		echo "build-postgres: $what failed; last lines of the log:" >&2
		tail -40 "$log" >&2
		exit 1
	fi
}

rm -rf "$prefix"
zstd -dc "$tarball" | tar -x -C "$work"
src=$work/postgresql-$release
jobs=${SB_BUILD_JOBS:-2}
(
	cd "$src"
	step configure ./configure "${configure[@]}"
	# world-bin: the server, its tools and contrib without the documentation
	# (the TAP tests use contrib modules such as amcheck).
	step make make -j"$jobs" world-bin
	step install make install-world-bin
)
t_pg=$((SECONDS - start))

for ext in "$cron" "$pgtap"; do
	name=$(basename "$ext" .tar.zst)
	zstd -dc "$ext" | tar -x -C "$work"
	(
		cd "$work/$name"
		step "$name build" make -j"$jobs" PG_CONFIG="$prefix/bin/pg_config"
		step "$name install" make install PG_CONFIG="$prefix/bin/pg_config"
	)
done

echo "$want_stamp" >"$stamp"
echo "build-postgres: PostgreSQL $release built in $t_pg s, pg_cron and pgTAP in $((SECONDS - start - t_pg)) s" >&2
echo "$prefix/bin/pg_config"
