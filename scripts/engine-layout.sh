#!/usr/bin/env bash
# scripts/engine-layout.sh CHECKOUT
#
# A one-off, kept here only until it has run: it moves src/engine's flat files
# into subfolders that show the architecture (store/, format/, manifest/,
# backup/, restore/, wal/, crypto/, policy/, util/), and the commit that makes
# the move deletes this script.  It runs on any checkout, and again on one it
# already laid out (then it changes nothing):
#
#   1. every flat src/engine file is placed by the table below; a flat file
#      the table does not name is an error listing it (nothing is changed),
#      files already in a subfolder (store/, store/s3/) stay where they are;
#   2. every #include "x.h" that resolves to an engine header (as the compiler
#      resolves it: the including file's folder, then include/, then
#      src/engine) is rewritten to the header's path relative to src/engine,
#      in every tracked .c and .h (engine, tests, fuzz, bench, command,
#      extension); <...> includes and quoted ones that resolve elsewhere are
#      never touched, and a name that an engine header shares with a
#      PostgreSQL or system header stops the script;
#   3. git mv of every placed file (so git shows renames);
#   4. "src/engine/NAME" in tracked .md, .c and .h files (docs, comments) follows NAME;
#   5. the Makefile takes the engine's sources and the .d files at any depth;
#   6. each folder's README.md (generated: what lives there, what it may use,
#      its files with their first comment line) and README.md's Layout section.
#
# It commits nothing: review with git status / git diff -M --stat.
set -euo pipefail

die() { echo "engine-layout.sh: $*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: engine-layout.sh CHECKOUT"
repo=$(cd "$1" && pwd) || die "no such folder: $1"
cd "$repo"
[[ -d src/engine && -f Makefile && -f README.md ]] || die "$repo is not a stripebackup checkout"
git rev-parse --git-dir >/dev/null 2>&1 || die "$repo is not a git checkout"

# ---------- the table: folder, then the flat files that go there ----------
# A file named here but absent (removed by a later change) is skipped.
placement() {
	cat <<'EOF'
store       store.c store.h
store/s3    s3_client.c s3_client.h s3_config.c s3_object.c s3_sign.c s3_sign.h s3_upload.c s3_upload.h
store/s3    s3_xml.c s3_xml.h io_s3.c io_s3.h
format      format.c format.h codec.c codec.h checksum.c checksum.h crc32c_shift.c
crypto      crypto.c crypto.h
manifest    manifest.c manifest_json.c manifest_numbers.c manifest_numbers.h manifest_pieces.c
manifest    manifest_stream.c manifest_tally.c manifest_tally.h manifest_text.h
manifest    manifest_envelope.c manifest_envelope.h pgmeta.c
manifest    entry_lookup.c entry_lookup.h entry_spool.c entry_spool.h entry_window.c entry_window.h
manifest    path_index.c path_index.h path_set.c path_set.h json_scan.c json_scan.h hash_sort.c hash_sort.h
backup      backup.c backup_dest.c backup_incremental.c backup_internal.h backup_lanes.c backup_lanes.h
backup      backup_manifest.c backup_prefetch.c backup_prefetch.h backup_source.c backup_stream.c
backup      backup_threads.c source_reader.c source_reader.h stripe_writer.c scheduler.c scheduler.h
backup      timeline.c timeline.h report.c calibrate.c merge.c
backup      folder.c folder_identity.c folder_internal.h folder_s3.c folder_store.c
restore     archive.c archive_auth.c archive_auth.h chain.c chain.h read_pipeline.c read_pipeline.h
restore     stripe_reader.c stripe_reader.h restore.c restore_internal.h restore_delta.c
restore     restore_marker.c restore_marker.h restore_sample.c restore_writeback.c restore_writeback.h
restore     file_check.c file_check.h verify.c verify_sealed.c pgrecovery.c
wal         wal_bucket.c wal_continuity.c wal_dest.c wal_file.c wal_find.c wal_format.c wal_get.c
wal         wal_internal.h wal_list.c wal_name.c wal_push.c wal_recent.c wal_recent.h wal_retention.c
wal         wal_seal.c wal_spool.c wal_spool.h recovery_wal.c
policy      policy.c policy_delta.c policy_memory.c policy_numbers.c
util        arena.c arena.h queue.c queue.h thread.c thread.h parallel.c parallel.h rate.c rate.h
util        ticker.c ticker.h error.c fsutil.c fsutil.h page_cache.c page_cache.h io.c io.h
EOF
}

# Folder, one line of what lives there (README.md's Layout), then what it may use.
folders() {	# folder|its line in README.md's Layout|what lives there|what it may use
	cat <<'EOF'
backup|files in, stripes out; retention, merge|files in, stripes out: the backup pipeline (source reading, lanes, prefetch, stream, stripe writers, scheduler, manifest), destinations, incremental backups, weights (calibration), the write timeline and its chart, merging a chain, removing a backup folder (retention)|store/, manifest/, format/, crypto/, policy/, util/ (merge.c runs a restore through the public API).
restore|stripes in, files out; verify|stripes in, files out: opening and authenticating a backup, chains, the read pipeline and stripe reader, restore and delta restore, write-out, file checks, verify (also of a sealed backup without its key), point-in-time settings|store/, manifest/, format/, crypto/, policy/, util/.
wal|the WAL archive: push, get, list, retention|the WAL archive: archiving (push), fetching (get, spool), listing, verifying, continuity, retention, sealing|store/, manifest/, format/, crypto/, policy/, util/.
policy|what is allowed, memory ceilings|what is allowed: where a restore may write, memory ceilings, numbers as users write them|util/, format/, crypto/, store/; policy_memory.c also reads the sizes the pipelines declare (backup/, restore/, wal/ headers), since a ceiling is the sum of what they allocate.
manifest|the manifest: JSON, entries, paths, envelope|a backup's manifest: in memory, as JSON written and read as a stream, its entries spooled to a file and found by path, its encrypted envelope, its PostgreSQL metadata|store/, crypto/, format/, util/.
store|a destination's storage, folder or bucket (s3/)|a destination's storage, a local folder or an S3 bucket, behind one interface; s3/ holds the S3 driver's own parts (client, request signing, XML replies, uploads, connection settings)|format/ and util/; nothing in store/ knows a backup from a WAL file.
crypto|a backup's keys and seals|encryption of a backup: the user's key file, a backup's keys, sealing and opening chunks and manifests (OpenSSL)|util/ only.
format|bytes on disk: stripe structures, codec, checksums|bytes on disk without I/O: the stripe file's fixed structures, chunk compression (zstd), checksums (XXH3, CRC-32C)|util/ only.
util|helpers: errors, files, I/O, threads, queues, rates|engine-wide helpers that know nothing of backups: errors, file-system calls, the engine's file I/O (io_uring or synchronous), threads, task sharing, queues, arenas, rate limits, tickers, page-cache residency|nothing else in the engine: every other folder may use util/.
EOF
}

# ---------- 1. where every engine file goes ----------
declare -A dest=()		# flat name -> folder
while read -r folder names; do
	for name in $names; do
		[[ -z ${dest[$name]:-} ]] || die "the table names $name twice"
		dest[$name]=$folder
	done
done < <(placement)

map=$(mktemp)
trap 'rm -f "$map"' EXIT
unplaced=() moves=()
while IFS= read -r path; do
	rel=${path#src/engine/}
	if [[ $rel == README.md ]]; then
		continue	# written below
	elif [[ $rel == */* ]]; then
		printf '%s\t%s\n' "$rel" "$rel" >>"$map"	# in a subfolder already: stays
	elif [[ $rel == *.c || $rel == *.h ]]; then
		if [[ -z ${dest[$rel]:-} ]]; then
			unplaced+=("$rel")
			continue
		fi
		new=${dest[$rel]}/$rel
		[[ ! -e src/engine/$new ]] || die "src/engine/$rel and src/engine/$new both exist"
		printf '%s\t%s\n' "$rel" "$new" >>"$map"
		moves+=("$rel")
	else
		unplaced+=("$rel")
	fi
done < <(git ls-files src/engine)
if ((${#unplaced[@]})); then
	die "not in the table (add each to placement() in $0): ${unplaced[*]}"
fi
# Untracked engine sources would be built (the Makefile finds them) but not moved.
untracked=$(git ls-files --others --exclude-standard src/engine | grep -E '\.[ch]$' || true)
[[ -z $untracked ]] || die "untracked engine sources (commit or remove them first): $untracked"

# No engine header may share its include name with a PostgreSQL or system header.
sys_dirs="$(pg_config --includedir-server 2>/dev/null || true) $(pg_config --includedir 2>/dev/null || true)"
sys_dirs+=" /usr/include /usr/include/$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu) /usr/include/libxml2"

# ---------- 2. includes ----------
# All files are read and checked first; they are written only if no include is ambiguous.
git ls-files -z '*.c' '*.h' | SB_MAP="$map" SB_SYS_DIRS="$sys_dirs" perl -0 -ne '
	BEGIN {
		local $/ = "\n";
		open my $m, "<", $ENV{SB_MAP} or die "$ENV{SB_MAP}: $!";
		while (<$m>) { chomp; my ($o, $n) = split /\t/; $new{$o} = $n; }
		@sys = grep { length && -d } split / /, $ENV{SB_SYS_DIRS};
		$bad = 0;
	}
	sub norm {		# a/b/../c -> a/c, ./a -> a
		my @out;
		for my $p (split m{/}, shift) {
			next if $p eq "." || $p eq "";
			if ($p eq "..") { return undef unless @out; pop @out; next; }
			push @out, $p;
		}
		return join "/", @out;
	}
	sub resolve {		# FILE, INCLUDE: the engine header it names (old path under src/engine), or undef
		my ($file, $inc) = @_;
		(my $dir = $file) =~ s{/?[^/]*$}{};
		for my $base ($dir, "include", "src/engine") {
			my $p = norm($base eq "" ? $inc : "$base/$inc");
			next unless defined $p && -f $p;
			return $p =~ m{^src/engine/(.+)$} && exists $new{$1} ? $1 : undef;
		}
		return undef;
	}
	chomp(my $file = $_);
	open my $in, "<", $file or die "$file: $!";
	my $text = do { local $/; <$in> };
	close $in;
	my $before = $text;
	$text =~ s{^([ \t]*#[ \t]*include[ \t]*")([^"]+)(")}{
		my ($pre, $inc, $post) = ($1, $2, $3);
		my $old = resolve($file, $inc);
		if (defined $old) {
			my $to = $new{$old};
			for my $s (@sys) {
				for my $name ($inc, $to) {
					next unless -e "$s/$name";
					print STDERR "$file: \"$inc\" is an engine header and also $s/$name: decide by hand\n";
					$bad = 1;
				}
			}
			$inc = $to;
		}
		"$pre$inc$post";
	}gme;
	$out{$file} = $text if $text ne $before;
	END {
		exit 1 if $bad;
		for my $f (sort keys %out) {
			open my $o, ">", $f or die "$f: $!";
			print $o $out{$f};
			close $o or die "$f: $!";
		}
	}
' || die "an include names a header that is both an engine header and a PostgreSQL or system one (above); nothing was changed"

# ---------- 3. the moves ----------
for rel in "${moves[@]}"; do
	mkdir -p "src/engine/${dest[$rel]}"
	git mv "src/engine/$rel" "src/engine/${dest[$rel]}/$rel"
done

# ---------- 4. "src/engine/NAME" in text ----------
# Documents and comments only: a script's made-up paths (test fixtures) stay.
if ((${#moves[@]})); then
	git ls-files -z -- '*.md' '*.c' '*.h' |
		SB_MAP="$map" perl -0 -ne '
		BEGIN {
			local $/ = "\n";
			open my $m, "<", $ENV{SB_MAP} or die "$ENV{SB_MAP}: $!";
			while (<$m>) { chomp; my ($o, $n) = split /\t/; $new{$o} = $n if $o ne $n; }
			$re = join "|", map { quotemeta } sort { length $b <=> length $a } keys %new;
		}
		chomp(my $file = $_);
		open my $in, "<", $file or die "$file: $!";
		my $text = do { local $/; <$in> };
		close $in;
		if ($text =~ s{\bsrc/engine/($re)(?![\w/]|\.\w)}{src/engine/$new{$1}}g) {
			open my $out, ">", $file or die "$file: $!";
			print $out $text;
			close $out;
		}
	'
fi

# ---------- 5. the Makefile: sources and dependency files at any depth ----------
perl -0pi -e '
	s{^ENGINE_SRCS[ \t]*=(?:[^\n]*\\\n)*[^\n]*$}{ENGINE_SRCS = \$(sort \$(shell find src/engine -name \x27*.c\x27))}m
		or die "Makefile: no ENGINE_SRCS line\n";
	s{^-include[ \t](?:[^\n]*\\\n)*[^\n]*\.d\b[^\n]*$}{-include \$(wildcard src/extension/*.d) \$(shell find build -name \x27*.d\x27 2>/dev/null)}m
		or die "Makefile: no -include line of .d files\n";
	# The comment above ENGINE_SRCS (if any) says what the line does.
	s{(?:^#[^\n]*\n)*(?=^ENGINE_SRCS =)}{# The engine is src/engine and its subfolders (src/engine/README.md lists them).\n}m;
	s{^# The header dependencies recorded by every build above[^\n]*$}{# The header dependencies recorded by every build above, at any depth (none before a first build).}m;
' Makefile

# ---------- 5b. coverage subsystems by folder ----------
# test/coverage-subsystems (where it exists) takes files by patterns over their
# paths under src/engine: a subsystem named like a folder takes that folder,
# s3 takes store/s3/, "other" the rest; names and floors stay, other lines too.
if [[ -f test/coverage-subsystems ]]; then
	perl -pi -e '
		next if /^\s*(#|$)/;
		my %by = (s3 => "store/s3/*", other => "*");
		$by{$_} = "$_/*" for qw(wal backup manifest restore policy store crypto format util);
		if (/^(\s*)(\S+)(\s+)(\S+)(\s+)(.*)$/ && exists $by{$2}) {
			$_ = "$1$2$3$4$5$by{$2}\n";
		}
	' test/coverage-subsystems
	sed -i 's|^# rest\.  When files move into folders, add their folder.s pattern (wal/\*)\.$|# rest: since src/engine is in folders (engine-layout.sh), a folder a line.|' test/coverage-subsystems
fi

# ---------- 6. the folders' README.md and README.md's Layout ----------
marker='<!-- written by engine-layout.sh: what lives here, what it may use, its files -->'
summary() {	# FILE: the first sentence of its header comment
	perl -ne '
		if ($. == 1) { next; }
		if (!$started) { $started = 1 if /^ \*\s+\S+\.[ch]\s*$/; next; }
		last if /^ \*\/?\s*$/ || /^ \*\//;
		s/^ \*\s*//; chomp; $t .= ($t eq "" ? "" : " ") . $_;
		END { $t =~ s/^(.*?[.?])(\s.*)?$/$1/; $t =~ s/\s+/ /g; print $t; }
	' "$1"
}
layout=""
while IFS='|' read -r folder short what uses; do
	d=src/engine/$folder
	[[ -d $d ]] || continue
	layout+=$(printf '    %-24s%s' "src/engine/$folder/" "$short")$'\n'
	readme=$d/README.md
	if [[ -f $readme ]] && ! grep -qF "$marker" "$readme"; then
		echo "engine-layout.sh: $readme was written by hand: left alone" >&2
		continue
	fi
	{
		echo "$marker"
		echo "# src/engine/$folder"
		echo
		echo "What lives here: ${what}."
		echo
		echo "What it may use (arrows point down, src/engine/README.md): $uses"
		echo
		while IFS= read -r f; do
			echo "- \`${f#$d/}\` ($(wc -l <"$f") lines): $(summary "$f")"
		done < <(find "$d" -name '*.[ch]' | sort)
	} >"$readme"
	git add "$readme"
done < <(folders)

top=src/engine/README.md
if [[ ! -f $top ]] || grep -qF "$marker" "$top"; then
	{
		echo "$marker"
		echo "# src/engine"
		echo
		echo "The engine: everything a backup, a restore and the WAL archive do, without PostgreSQL"
		echo "(no server header compiles here). Sources include each other by their path from this"
		echo "folder (\`#include \"manifest/manifest.h\"\`), built with \`-I src/engine\` only; the"
		echo "public API is include/stripebackup/."
		echo
		echo "Arrows point down: a folder uses the ones below it, never one above."
		echo
		echo "    backup/  restore/  wal/        the three pipelines"
		echo "    policy/                        what is allowed, memory ceilings"
		echo "    manifest/                      a backup's manifest"
		echo "    store/ (store/s3/)             a destination's storage: folder or bucket"
		echo "    crypto/  format/               encryption; bytes on disk"
		echo "    util/                          helpers that know nothing of backups"
		echo
		echo "Each folder's README.md lists its files."
		echo
		echo '```'
		printf '%s' "$layout" | sed 's/^    //'
		echo '```'
	} >"$top"
	git add "$top"
fi

# README.md: the folder lines right under "src/engine/" in its Layout section.
SB_LAYOUT="$layout" perl -0pi -e '
	my $l = $ENV{SB_LAYOUT};
	s{(^## Layout\n(?:(?!^## )[^\n]*\n)*?^    src/engine/ +)[^\n]*\n(?:^    (?:src/engine/\S+/|\s{10,})[^\n]*\n)*}{$1the engine, no PostgreSQL (src/engine/README.md):\n$l}m
		or die "README.md: no \"    src/engine/ ...\" line in ## Layout\n";
' README.md

echo "engine-layout.sh: ${#moves[@]} files moved; review with: git -C $repo diff -M --stat HEAD"
