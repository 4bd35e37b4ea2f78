/*
 * manifest_text.h
 *		The manifest's text read a piece at a time (manifest_stream.c), and
 *		the pieces the JSON reader (manifest_json.c) parses for it.
 */
#ifndef SB_MANIFEST_TEXT_H
#define SB_MANIFEST_TEXT_H

#include <stddef.h>

#include "stripebackup/sb_crypto.h"
#include "stripebackup/sb_manifest.h"
#include "stripebackup/sb_s3.h"

/* One entry's JSON object, exactly its text: checked, parsed and added to M. */
extern bool sb_manifest_parse_entry_text(const char *text, size_t len, SbManifest *m,
										 SbError *err);

/*
 * DOC is the manifest's top-level object without its entries (or the
 * members before them): the format and its version, which entries need.
 */
extern bool sb_manifest_parse_version_text(const char *doc, size_t len, SbManifest *m,
										   SbError *err);

/* Everything DOC (the top-level object, "entries": [] in its place) says. */
extern bool sb_manifest_parse_head_text(const char *doc, size_t len, SbManifest *m,
										SbError *err);

/*
 * The manifest at PATH (a file, or an object reached with S3), opened with KEY when it is
 * an encrypted backup's envelope.  A manifest in the clear is read as a
 * stream, never whole in memory, its entries kept as KEEP says (with
 * SB_KEEP_COUNTS only counted, m->tally, when its layout comes before
 * them); so is an envelope, a sealed segment at a time (manifest_envelope.c).
 * SB_ENOTFOUND when PATH is absent.
 */
extern SbManifest *sb_manifest_read_path(const char *path, const SbS3Settings *s3, const SbKey *key,
										 SbEntryKeep keep, const char *spool_dir, SbError *err);

/*
 * The manifest in the clear whose text READ hands over, its entries kept as
 * KEEP says (in a spool in SPOOL_DIR for SB_KEEP_STREAMED and LOOKUP).
 */
extern SbManifest *sb_manifest_read_stream(SbManifestReadFn read, void *arg, SbEntryKeep keep,
										   const char *spool_dir, SbError *err);

/*
 * As sb_manifest_from_stream, the entries counted (m->tally), none kept,
 * when the members before them make the manifest's layout; else kept.
 */
extern SbManifest *sb_manifest_tally_stream(SbManifestReadFn read, void *arg, SbError *err);

/* The manifest TEXT (LEN bytes), its entries kept in a spool in SPOOL_DIR (SB_KEEP_STREAMED). */
extern SbManifest *sb_manifest_spool_json(const char *text, size_t len, const char *spool_dir,
										  SbError *err);

/* The same, its entries with their stamps in a spool, to be looked up (SB_KEEP_LOOKUP). */
extern SbManifest *sb_manifest_lookup_json(const char *text, size_t len, const char *spool_dir,
										   SbError *err);

/* The manifest TEXT (LEN bytes), its members alone (SB_KEEP_HEAD). */
extern SbManifest *sb_manifest_head_json(const char *text, size_t len, SbError *err);

/* The SHA-256 and length of what PATH holds, read a block at a time. */
extern bool sb_manifest_digest_path(const char *path, const SbS3Settings *s3, uint8_t sha256[32],
									uint64_t *len, SbError *err);

#endif							/* SB_MANIFEST_TEXT_H */
