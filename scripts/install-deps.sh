#!/usr/bin/env bash
# Install what stripebackup needs to build and test, from Debian's archive,
# and s3rver for the S3 tests (test/s3) from the npm registry.
# Idempotent: does nothing when everything is already there.
#
#   scripts/install-deps.sh          build and test dependencies
#   scripts/install-deps.sh --bench  also the benchmark's peers (pgBackRest, fio)
#   scripts/install-deps.sh --fuzz   also clang and its libFuzzer and sanitizer
#                                    runtimes, for "make fuzz" (test/fuzz/README.md)
set -euo pipefail

packages=(
	make gcc
	postgresql-15 postgresql-client-15 postgresql-server-dev-15
	liburing-dev libzstd-dev libxxhash-dev libcjson-dev libisal-dev libssl-dev
	libcurl4-openssl-dev libxml2-dev
	libpq-dev
	libipc-run-perl postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl postgresql-15-cron
	zstd libxml2-utils time
	# Test only: t/076 restores as root through sudo (run-all.sh allows the command alone)
	sudo
	gcovr
	# To build PostgreSQL 16 and 18 for their tests (scripts/build-postgres.sh)
	bison flex liblz4-dev zlib1g-dev pkg-config
	# Test only: Ceph's S3 gateway and the one-OSD cluster under it
	# (test/s3/radosgw.sh), the server that checks signatures.  With
	# --no-install-recommends, 52 packages (lvm2, cryptsetup, parted,
	# xfsprogs and Ceph's Python tools among them): 62 MB fetched, 243 MB
	# installed, about 30 s.
	radosgw ceph-mon ceph-osd
)
for arg in "$@"; do
	case "$arg" in
		--bench) packages+=(pgbackrest fio stunnel4) ;;
		# Debian's default clang; libFuzzer, ASan and UBSan for it are only
		# recommended by clang, so named here.
		--fuzz) packages+=(clang libclang-rt-dev) ;;
		*) echo "usage: $0 [--bench] [--fuzz]" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
# The S3 tests' server (test/s3) runs on Node.js: Debian's, unless node and
# npm are already there (from Debian or elsewhere).
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)

sudo=""
if [[ $(id -u) -ne 0 ]]; then
	sudo="sudo"
fi
if [[ ${#missing[@]} -gt 0 ]]; then
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# s3rver, the local S3 server, at the version test/s3/package-lock.json
# pins (again when the lock file changed since).
s3=$(cd "$(dirname "${BASH_SOURCE[0]}")/../test/s3" && pwd)
if [[ ! -e $s3/node_modules/.bin/s3rver || $s3/package-lock.json -nt $s3/node_modules/.package-lock.json ]]; then
	echo "installing: s3rver (npm ci in test/s3)"
	(cd "$s3" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
