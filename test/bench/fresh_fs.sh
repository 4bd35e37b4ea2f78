# A freshly made file system for every restore a benchmark times, for every
# tool alike.  Restoring into a folder where the previous restore was just
# removed measures the removal too: an ext4 without a journal (this machine's
# root file system) passes over recently freed inodes one at a time when it
# allocates, and that cost lands on whichever tool restores next.
#
# Making a file system needs root and the benchmark runs as postgres, so the
# root side (fresh_fs_serve, started by common.sh before it drops to
# postgres) makes one on request: an ext4 image on a loop device (direct I/O
# to its file, so its pages are not cached twice), mounted at
# $DIR/restore-fs.  The benchmark asks through a pipe (fresh_fs_make).

# As root, in the background: serve requests until process PID ends.
fresh_fs_serve() {	# DIR PID
	local dir=$1 pid=$2 mnt=$1/restore-fs img=$1/restore-fs.img dev="" size status
	rm -f "$dir/fresh-fs.req" "$dir/fresh-fs.ack"
	mkfifo -m 600 "$dir/fresh-fs.req" "$dir/fresh-fs.ack"
	chown postgres: "$dir/fresh-fs.req" "$dir/fresh-fs.ack"
	mkdir -p "$mnt"
	exec 3<> "$dir/fresh-fs.req"
	while kill -0 "$pid" 2>/dev/null; do
		read -r -t 1 -u 3 size || continue
		status=ok
		if mountpoint -q "$mnt"; then umount "$mnt" || status=fail; fi
		[[ -n $dev ]] && losetup -d "$dev"
		rm -f "$img"
		truncate -s "${size}G" "$img" &&
			mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$img" &&
			dev=$(losetup -f --show --direct-io=on "$img") &&
			mount "$dev" "$mnt" && chown postgres: "$mnt" || status=fail
		echo "$status" > "$dir/fresh-fs.ack"
	done
	mountpoint -q "$mnt" && umount "$mnt"
	[[ -n $dev ]] && losetup -d "$dev"
	rm -f "$img" "$dir/fresh-fs.req" "$dir/fresh-fs.ack"
}

# As postgres: a new file system of SIZE_GB at $DIR/restore-fs; false when
# there is no root side (the benchmark was started as postgres) or it failed.
fresh_fs_make() {	# DIR SIZE_GB
	local status
	[[ -p $1/fresh-fs.req ]] || return 1
	echo "$2" > "$1/fresh-fs.req"
	read -r status < "$1/fresh-fs.ack"
	[[ $status == ok ]]
}

# An empty folder NAME for the next timed write, in $fresh_dir: on a file
# system made anew when the root side serves, else a folder of DIR emptied
# (with the removal's cost on the next writer); $fresh_where says which.
fresh_target() {	# DIR SIZE_GB NAME
	if fresh_fs_make "$1" "$2"; then
		fresh_dir=$1/restore-fs/$3
		fresh_where="into a freshly made ext4 file system (a loop device) each time"
	else
		rm -rf "${1:?}/$3"
		fresh_dir=$1/$3
		fresh_where="into a folder emptied before each (run as root for a fresh file system each time)"
	fi
	mkdir -p "$fresh_dir"
}
