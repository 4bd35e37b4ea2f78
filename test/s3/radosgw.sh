#!/usr/bin/env bash
# A local S3 server that verifies signatures (Ceph's radosgw, Debian's
# packages radosgw, ceph-mon, ceph-osd) for the S3 tests.
#
#   radosgw.sh start STATE_DIR [BUCKET...]   start it; prints http://127.0.0.1:PORT
#   radosgw.sh stop STATE_DIR                stop it and wait until every daemon is gone
#
# start makes a cluster of its own under STATE_DIR: one monitor, one OSD
# keeping objects in memory (memstore), one gateway; everything listens on
# 127.0.0.1 only, messenger v2, cluster authentication off (the gateway's
# S3 authentication is on: it checks every signature as S3 does).  Its ports
# are a block of 10 (monitor, 8 for the OSD, gateway) picked at random in
# 20000-59999 and checked free; if a daemon still cannot bind, start tries
# another block (3 tries).  It creates a user whose keys are
# SB_RGW_ACCESS_KEY / SB_RGW_SECRET_KEY (defaults below; also written to
# STATE_DIR/access_key and STATE_DIR/secret_key) and the buckets (default:
# bk1 bk2), and returns once the gateway answers, at most about
# SB_RGW_START_TIMEOUT seconds (default 120) after it began.  The daemons'
# logs are STATE_DIR/*.log; a failed start prints the end of the log that
# says why and leaves no daemon running.
#
# Runs as any user who can write STATE_DIR.
set -euo pipefail

access_key=${SB_RGW_ACCESS_KEY:-SBTESTRGWACCESSKEY01}
secret_key=${SB_RGW_SECRET_KEY:-sb-rgw-test-secret-5e2d41c7}
timeout_s=${SB_RGW_START_TIMEOUT:-120}
daemons=(rgw osd mon)	# in the order they are stopped

die() {
	echo "radosgw.sh: $*" >&2
	exit 1
}

# The cluster's configuration: every path under STATE, every port in the
# block at BASE.  ms_mon_client_mode = crc: without it the gateway retries
# its monitor connection for 300 s and gives up without a word.
write_conf() {	# STATE BASE FSID
	local s=$1 base=$2
	cat > "$s/ceph.conf" <<-EOF
	[global]
	fsid = $3
	mon_host = v2:127.0.0.1:$base
	public_addr = 127.0.0.1
	ms_bind_msgr1 = false
	ms_bind_ipv6 = false
	ms_bind_port_min = $((base + 1))
	ms_bind_port_max = $((base + 8))
	ms_mon_client_mode = crc
	auth_cluster_required = none
	auth_service_required = none
	auth_client_required = none
	keyring = $s/keyring
	run_dir = $s
	admin_socket = $s/\$name.asok
	log_file = $s/\$name.log
	pid_file = $s/\$name.pid
	mon_data = $s/mon
	osd_data = $s/osd
	crash_dir = $s/crash
	osd_objectstore = memstore
	memstore_device_bytes = $((8 << 30))
	osd_pool_default_size = 1
	osd_pool_default_min_size = 1
	mon_allow_pool_size_one = true
	mon_warn_on_pool_no_redundancy = false
	osd_pool_default_pg_num = 8
	osd_pool_default_pgp_num = 8
	osd_pool_default_pg_autoscale_mode = off
	mon_max_pg_per_osd = 1000

	[client.rgw]
	rgw_frontends = beast endpoint=127.0.0.1:$((base + 9))
	rgw_data = $s/rgw
	EOF
}

# Does something listen on 127.0.0.1:PORT?
listening() {	# PORT
	(exec 3<> "/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# A block of 10 ports of which none is listened on now.
pick_ports() {
	local base p i
	for ((i = 0; i < 50; i++)); do
		base=$((20000 + (RANDOM * 32768 + RANDOM) % 4000 * 10))
		for ((p = base; p < base + 10; p++)); do
			listening "$p" && continue 2
		done
		echo "$base"
		return 0
	done
	die "no free block of 10 ports found in 20000-59999"
}

# Is PID alive and running PROGRAM with our configuration file?
is_ours() {	# PID PROGRAM STATE
	local cmdline
	[[ $1 =~ ^[0-9]+$ ]] || return 1
	cmdline=$(tr '\0' ' ' 2>/dev/null < "/proc/$1/cmdline") || return 1
	[[ $cmdline == "$2 "*"-c $3/ceph.conf "* ]]
}

program_of() {	# DAEMON
	case "$1" in
		mon) echo ceph-mon ;;
		osd) echo ceph-osd ;;
		rgw) echo radosgw ;;
	esac
}

# Start DAEMON in the foreground of a background job (so that its pid is
# ours to stop), its output to STATE/DAEMON.out.
launch() {	# STATE DAEMON ARGS...
	local s=$1 d=$2
	shift 2
	"$(program_of "$d")" -c "$s/ceph.conf" "$@" -f < /dev/null > "$s/$d.out" 2>&1 &
	echo $! > "$s/$d.daemon-pid"
}

# Seconds left before the start's deadline.
left() {
	echo $((deadline - SECONDS))
}

# The end of what DAEMON wrote: its own log and its output.
log_tail() {	# STATE DAEMON
	local f
	for f in "$1/$2.out" "$1/$(case $2 in mon) echo mon.a ;; osd) echo osd.0 ;; rgw) echo client.rgw ;; esac).log"; do
		[[ -s $f ]] || continue
		echo "--- last lines of $f" >&2
		tail -n 20 "$f" >&2
	done
}

# Fail the start: DAEMON's log, then every daemon stopped.
fail() {	# STATE DAEMON MESSAGE
	log_tail "$1" "$2"
	stop "$1" || true
	die "$3 (logs in $1)"
}

# Wait until CHECK (a command) succeeds, while DAEMON runs, until the deadline.
await() {	# STATE DAEMON WHAT CHECK...
	local s=$1 d=$2 what=$3 pid
	shift 3
	pid=$(cat "$s/$d.daemon-pid")
	while ! "$@" > /dev/null 2>&1; do
		if ! kill -0 "$pid" 2>/dev/null; then
			if grep -qs 'Address already in use' "$s/$d.out" "$s"/*.log; then
				return 2
			fi
			fail "$s" "$d" "$(program_of "$d") exited before $what"
		fi
		[[ $(left) -gt 0 ]] || fail "$s" "$d" "$what: not within ${timeout_s} s"
		sleep 0.3
	done
}

ceph_cli() {	# STATE ARGS...
	local s=$1
	shift
	timeout 30 ceph -c "$s/ceph.conf" --connect-timeout 10 "$@"
}

osd_up() {	# STATE
	ceph_cli "$1" osd dump | grep -q '^osd\.0 up'
}

gateway_answers() {	# PORT
	local code
	code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$1/" 2>/dev/null) || true
	[[ -n $code && $code != 000 ]]
}

# A request signed with the user's keys; fails unless the answer is 2xx.
signed() {	# METHOD URL
	curl -sS -f -o /dev/null -m 30 --aws-sigv4 "aws:amz:us-east-1:s3" --user "$access_key:$secret_key" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -X "$1" "$2"
}

# One try at the whole cluster on the block of ports at BASE; 2 when a
# daemon could not bind its port (the caller tries another block).
start_cluster() {	# STATE BASE
	local s=$1 base=$2 fsid osd_uuid status
	fsid=$(cat /proc/sys/kernel/random/uuid)
	osd_uuid=$(cat /proc/sys/kernel/random/uuid)
	rm -rf "$s/mon" "$s/osd" "$s/rgw" "$s"/*.log "$s"/*.out "$s"/*.asok
	mkdir -p "$s/mon" "$s/osd" "$s/rgw" "$s/crash"
	: > "$s/keyring"
	write_conf "$s" "$base" "$fsid"

	monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$base]" "$s/monmap" > "$s/mkfs.out" 2>&1 ||
		{ cat "$s/mkfs.out" >&2; die "monmaptool failed"; }
	ceph-mon -c "$s/ceph.conf" -i a --mkfs --monmap "$s/monmap" >> "$s/mkfs.out" 2>&1 ||
		{ cat "$s/mkfs.out" >&2; die "ceph-mon --mkfs failed"; }
	launch "$s" mon -i a
	status=0
	await "$s" mon "the monitor answers" ceph_cli "$s" mon stat || status=$?
	[[ $status -eq 0 ]] || return "$status"

	[[ $(ceph_cli "$s" osd new "$osd_uuid" 2>> "$s/mkfs.out") == 0 ]] ||
		fail "$s" mon "ceph osd new did not make osd.0"
	ceph-osd -c "$s/ceph.conf" -i 0 --mkfs --osd-uuid "$osd_uuid" >> "$s/mkfs.out" 2>&1 ||
		{ cat "$s/mkfs.out" >&2; fail "$s" mon "ceph-osd --mkfs failed"; }
	launch "$s" osd -i 0
	await "$s" osd "the OSD is up" osd_up "$s" || status=$?
	[[ $status -eq 0 ]] || return "$status"

	launch "$s" rgw -n client.rgw
	await "$s" rgw "the gateway answers on port $((base + 9))" gateway_answers $((base + 9)) || status=$?
	return "$status"
}

start() {
	local state=$1
	shift
	local buckets=("$@") b base try status port

	[[ ${#buckets[@]} -gt 0 ]] || buckets=(bk1 bk2)
	for b in radosgw ceph-mon ceph-osd monmaptool radosgw-admin ceph curl; do
		command -v "$b" > /dev/null || die "$b is not installed (scripts/install-deps.sh installs radosgw, ceph-mon, ceph-osd)"
	done
	mkdir -p "$state"
	state=$(cd "$state" && pwd)
	for b in "${daemons[@]}"; do
		if [[ -f $state/$b.daemon-pid ]] && is_ours "$(cat "$state/$b.daemon-pid")" "$(program_of "$b")" "$state"; then
			die "a cluster already runs for $state ($(program_of "$b"), pid $(cat "$state/$b.daemon-pid"))"
		fi
	done
	rm -f "$state/port"
	deadline=$((SECONDS + timeout_s))

	for ((try = 1; ; try++)); do
		base=$(pick_ports)
		status=0
		start_cluster "$state" "$base" || status=$?
		[[ $status -eq 0 ]] && break
		stop "$state" || true
		[[ $try -lt 3 ]] || die "a daemon could not bind its port three times (logs in $state)"
	done
	port=$((base + 9))

	radosgw-admin -c "$state/ceph.conf" user create --uid=sbtest --display-name="stripebackup tests" \
		--access-key="$access_key" --secret-key="$secret_key" > "$state/user.out" 2>&1 ||
		fail "$state" rgw "radosgw-admin user create failed: $(tail -n 5 "$state/user.out")"
	for b in "${buckets[@]}"; do
		signed PUT "http://127.0.0.1:$port/$b" 2> "$state/bucket.out" ||
			fail "$state" rgw "creating bucket $b failed: $(cat "$state/bucket.out")"
	done
	echo "$access_key" > "$state/access_key"
	echo "$secret_key" > "$state/secret_key"
	echo "$port" > "$state/port"
	echo "http://127.0.0.1:$port"
}

# Wait up to TENTHS tenths of a second while PID still runs PROGRAM for STATE.
wait_gone() {	# PID PROGRAM STATE TENTHS
	local i
	for ((i = 0; i < $4; i++)); do
		is_ours "$1" "$2" "$3" || return 0
		sleep 0.1
	done
	! is_ours "$1" "$2" "$3"
}

# Stop the daemons, gateway first, each with TERM, then KILL after 10 s;
# returns once none runs (a zombie's cmdline is empty: it no longer counts).
stop() {	# STATE
	local state=$1 d pid program i
	for d in "${daemons[@]}"; do
		[[ -f $state/$d.daemon-pid ]] || continue
		pid=$(cat "$state/$d.daemon-pid")
		program=$(program_of "$d")
		if is_ours "$pid" "$program" "$state"; then
			kill -TERM "$pid" 2>/dev/null || true
			if ! wait_gone "$pid" "$program" "$state" 100; then
				kill -KILL "$pid" 2>/dev/null || true
				wait_gone "$pid" "$program" "$state" 50 || die "$program (pid $pid) does not stop"
			fi
			# Until the zombie it leaves is reaped (by init: the start
			# script that was its parent has exited), briefly.
			for ((i = 0; i < 50; i++)); do
				[[ -e /proc/$pid ]] || break
				sleep 0.1
			done
		fi
		rm -f "$state/$d.daemon-pid"
	done
	rm -f "$state/port" "$state"/*.pid "$state"/*.asok
	# The objects were in the OSD's memory; its folders hold only metadata.
	rm -rf "$state/mon" "$state/osd" "$state/rgw"
}

case "${1:-}" in
	start)
		[[ $# -ge 2 ]] || die "usage: $0 start STATE_DIR [BUCKET...]"
		shift
		start "$@"
		;;
	stop)
		[[ $# -eq 2 ]] || die "usage: $0 stop STATE_DIR"
		[[ -d $2 ]] || exit 0
		stop "$(cd "$2" && pwd)"
		;;
	*)
		echo "usage: $0 start STATE_DIR [BUCKET...] | stop STATE_DIR" >&2
		exit 2
		;;
esac
