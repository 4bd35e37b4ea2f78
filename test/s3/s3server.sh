#!/usr/bin/env bash
# A local S3 server (s3rver, from test/s3/node_modules) for the S3 tests.
#
#   s3server.sh start STATE_DIR [BUCKET...]   start it; prints http://127.0.0.1:PORT
#   s3server.sh stop STATE_DIR                stop it and wait until it is gone
#
# start listens on 127.0.0.1 on a port the kernel picks (s3rver -p 0: no other
# program can hold it, so there is no collision to retry), keeps the objects
# under STATE_DIR/data, its log in STATE_DIR/s3rver.log, its pid and port in
# STATE_DIR/pid and STATE_DIR/port, creates the buckets (default: bk1 bk2),
# and returns once the server answers HTTP (at most about 20 seconds).
# Credentials: S3RVER / S3RVER; s3rver checks no V4 signature.  s3rver runs
# with s3rver-patches.js, which makes it closer to S3 (README.md);
# SB_S3RVER_PATCHES=0 leaves s3rver 3.7.1 as it is.
#
# Runs as any user who can read this folder and write STATE_DIR; node_modules
# is found beside this script (scripts/install-deps.sh installs it).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
s3rver_js="$here/node_modules/s3rver/bin/s3rver.js"

die() {
	echo "s3server.sh: $*" >&2
	exit 1
}

# Is PID alive and one of our s3rver processes?
is_our_server() {	# PID
	local cmdline
	[[ $1 =~ ^[0-9]+$ ]] || return 1
	cmdline=$(tr '\0' ' ' 2>/dev/null < "/proc/$1/cmdline") || return 1
	[[ $cmdline == *s3rver.js* ]]
}

# Does an HTTP server answer at PORT?  (any status will do)
answers() {	# PORT
	local code
	code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$1/" 2>/dev/null) || true
	[[ -n $code && $code != 000 ]]
}

start() {
	local state=$1
	shift
	local buckets=("$@") args=() b pid port="" i

	[[ ${#buckets[@]} -gt 0 ]] || buckets=(bk1 bk2)
	command -v node > /dev/null || die "node is not installed (scripts/install-deps.sh installs it)"
	[[ -r $s3rver_js ]] || die "$s3rver_js is missing: run scripts/install-deps.sh (npm ci in test/s3)"
	mkdir -p "$state/data"
	state=$(cd "$state" && pwd)
	if [[ -f $state/pid ]] && is_our_server "$(cat "$state/pid")"; then
		die "a server already runs for $state (pid $(cat "$state/pid"))"
	fi
	rm -f "$state/pid" "$state/port"
	for b in "${buckets[@]}"; do
		args+=(--configure-bucket "$b")
	done

	# s3rver-patches.js lifts Node's 5-minute limit on one request and makes
	# multipart uploads behave as on S3 (SB_S3RVER_PATCHES=0: only the
	# former).  stdin, stdout and stderr leave the caller's, so that
	# $(s3server.sh start ...) returns at once.  The log is made first: the
	# background job opens it only once it runs, which under load came after
	# the loop below first read it ("sed: can't read .../s3rver.log").
	: > "$state/s3rver.log"
	FORCE_COLOR=0 node --require "$here/s3rver-patches.js" "$s3rver_js" \
		-d "$state/data" -a 127.0.0.1 -p 0 "${args[@]}" \
		< /dev/null > "$state/s3rver.log" 2>&1 &
	pid=$!
	echo "$pid" > "$state/pid"

	# s3rver prints "S3rver listening on 127.0.0.1:PORT" once it listens.
	for ((i = 0; i < 200; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			rm -f "$state/pid"
			cat "$state/s3rver.log" >&2
			die "s3rver exited at start (log above, $state/s3rver.log)"
		fi
		if [[ -z $port ]]; then
			port=$(sed -n 's/.*S3rver listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$state/s3rver.log" | head -n 1)
		fi
		if [[ -n $port ]] && answers "$port"; then
			echo "$port" > "$state/port"
			echo "http://127.0.0.1:$port"
			return 0
		fi
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$state/pid"
	cat "$state/s3rver.log" >&2
	die "s3rver did not answer within 20 seconds (log above, $state/s3rver.log)"
}

stop() {
	local state=$1 pid i

	[[ -f $state/pid ]] || return 0
	pid=$(cat "$state/pid")
	if is_our_server "$pid"; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			is_our_server "$pid" || break
			sleep 0.1
		done
		if is_our_server "$pid"; then
			kill -KILL "$pid" 2>/dev/null || true
			for ((i = 0; i < 50; i++)); do
				is_our_server "$pid" || break
				sleep 0.1
			done
		fi
		# A zombie (a parent that does not reap it) has an empty cmdline.
		is_our_server "$pid" && die "s3rver (pid $pid) does not stop"
	fi
	rm -f "$state/pid" "$state/port"
}

case "${1:-}" in
	start)
		[[ $# -ge 2 ]] || die "usage: $0 start STATE_DIR [BUCKET...]"
		shift
		start "$@"
		;;
	stop)
		[[ $# -eq 2 ]] || die "usage: $0 stop STATE_DIR"
		stop "$2"
		;;
	*)
		echo "usage: $0 start STATE_DIR [BUCKET...] | stop STATE_DIR" >&2
		exit 2
		;;
esac
