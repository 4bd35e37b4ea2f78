#!/usr/bin/env bash
# Run a command with a local S3 server for it:
#
#   test/s3/with-s3.sh CMD [ARGS...]
#
# SB_TEST_S3_SERVER says which: s3rver (s3server.sh, the default) or
# radosgw (radosgw.sh: Ceph's gateway, which checks signatures).  CMD sees
#   SB_TEST_S3_SERVER=s3rver|radosgw
#   SB_TEST_S3_ENDPOINT=http://127.0.0.1:PORT
#   SB_TEST_S3_BUCKETS="bk1 bk2"              (both exist, empty)
#   SB_TEST_S3_DATA_DIR=...                    (s3rver only: its files, for looking behind its back)
#   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY   (S3RVER / S3RVER; radosgw: its user's keys)
# The server is stopped and its folder removed however CMD ends; the exit
# status is CMD's.  INT, TERM or HUP to this script stop CMD with TERM.
set -euo pipefail

if [[ $# -eq 0 ]]; then
	echo "usage: $0 CMD [ARGS...]" >&2
	exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
buckets="bk1 bk2"
server=${SB_TEST_S3_SERVER:-s3rver}
case "$server" in
	s3rver) script=s3server.sh ;;
	radosgw) script=radosgw.sh ;;
	*) echo "$0: SB_TEST_S3_SERVER=$server is neither s3rver nor radosgw" >&2; exit 2 ;;
esac

state=$(mktemp -d "${TMPDIR:-/tmp}/sb-s3.XXXXXX")
# shellcheck disable=SC2317  # run by the trap
cleanup() {
	bash "$here/$script" stop "$state" || true
	rm -rf "$state"
}
trap cleanup EXIT

# shellcheck disable=SC2086  # the bucket names are words
endpoint=$(bash "$here/$script" start "$state" $buckets)

export SB_TEST_S3_SERVER="$server"
export SB_TEST_S3_ENDPOINT="$endpoint"
export SB_TEST_S3_BUCKETS="$buckets"
if [[ $server == s3rver ]]; then
	export SB_TEST_S3_DATA_DIR="$state/data"
	export AWS_ACCESS_KEY_ID=S3RVER
	export AWS_SECRET_ACCESS_KEY=S3RVER
else
	unset SB_TEST_S3_DATA_DIR
	AWS_ACCESS_KEY_ID=$(cat "$state/access_key")
	AWS_SECRET_ACCESS_KEY=$(cat "$state/secret_key")
	export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
fi
# Whatever else the caller's environment says about AWS is not for this server.
unset AWS_SESSION_TOKEN AWS_PROFILE

# CMD runs in the background so that a signal to this script reaches it at
# once (bash runs traps only between commands); it keeps our standard input.
# Bash starts background commands with SIGINT ignored, hence TERM for INT.
exec 3<&0
"$@" <&3 3<&- &
child=$!
exec 3<&-
trap 'kill -TERM "$child" 2>/dev/null || true' INT TERM HUP
while :; do
	status=0
	wait "$child" || status=$?
	# wait also returns when a trapped signal arrives; CMD may still run
	if ! kill -0 "$child" 2>/dev/null; then
		break
	fi
done
exit "$status"
