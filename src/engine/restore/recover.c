/*
 * recover.c
 *		A lost or damaged member of a parity group, from the others
 *		(docs/FORMAT.md section 10.4; recover.h says how the layers split).
 *
 * The code covers each data member's whole record (header and stored
 * payload) and each parity record's payload, all padded with zeros to the
 * group's length L: a parity record's payload is L bytes, and without one
 * (every data member there but the one wanted, or rebuilding a parity
 * record) L is the longest data record.  K other members are read, data
 * members first; one that reads but is inconsistent with the rest is left
 * out and the next one read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/checksum.h"
#include "crypto/crypto.h"
#include "util/fsutil.h"
#include "restore/recover.h"

/* Append "member J: WHY" to the list of members that could not be used. */
static void
note_unused(char *buf, size_t buflen, uint32_t member, const char *why)
{
	size_t		used = strlen(buf);

	if (used < buflen)
		snprintf(buf + used, buflen - used, "%smember %u: %.300s", used ? "; " : "", member + 1, why);
}

/*
 * Member J through READ into the group's tally: *N good ones, *L the
 * parity records' length once one is read (*HAVE_PARITY), else the longest
 * data record's.
 */
static void
read_one(const SbParityLayout *layout, uint64_t group, uint32_t j, SbMemberReadFn read,
		 void *arg, size_t cap, uint8_t *const *bufs, size_t *lens, bool *present,
		 size_t *L, bool *have_parity, uint32_t *n, char *unused, size_t unused_len)
{
	SbError		why;
	SbMemberStatus st;

	sb_error_clear(&why);
	st = read(arg, group, j, bufs[j], cap, &lens[j], &why);
	if (st == SB_MEMBER_LOST)
	{
		note_unused(unused, unused_len, j, why.message);
		return;
	}
	if (st == SB_MEMBER_NONE)
		lens[j] = 0;
	else if (j >= layout->data && !*have_parity)
	{
		*have_parity = true;
		*L = lens[j];
	}
	else if (j >= layout->data && lens[j] != *L)
	{
		/* parity records of one group all have L: this one was not written with the others */
		note_unused(unused, unused_len, j, "its length differs from the group's other parity records");
		return;
	}
	else if (j < layout->data && !*have_parity && lens[j] > *L)
		*L = lens[j];
	present[j] = true;
	(*n)++;
}

/* A data record longer than the parity says is not the one the parity was made of: dropped. */
static void
drop_too_long(const SbParityLayout *layout, size_t L, bool *present, const size_t *lens,
			  uint32_t *n, char *unused, size_t unused_len)
{
	uint32_t	j;

	for (j = 0; j < layout->data; j++)
		if (present[j] && lens[j] > L)
		{
			present[j] = false;
			note_unused(unused, unused_len, j, "longer than the group's parity records");
			(*n)--;
		}
}

/*
 * The other members through READ, data members first, until K are good
 * (each read costs a device a random read: reading all of them, as a first
 * version did, costs M - 1 more reads a record and buys nothing unless one
 * turns out bad, when the next is read); *L the group's length.  Returns
 * how many are good.
 */
static uint32_t
read_members(const SbParityLayout *layout, uint64_t group, uint32_t want, SbMemberReadFn read,
			 void *arg, size_t cap, uint8_t *const *bufs, size_t *lens, bool *present,
			 size_t *L, char *unused, size_t unused_len)
{
	uint32_t	total = layout->data + layout->parity;
	uint32_t	n = 0,
				j;
	bool		have_parity = false;

	*L = 0;
	for (j = 0; j < total; j++)
	{
		present[j] = false;
		lens[j] = 0;
	}
	for (j = 0; j < total; j++)
	{
		if (j == want || n >= layout->data)
			continue;
		read_one(layout, group, j, read, arg, cap, bufs, lens, present, L, &have_parity, &n,
				 unused, unused_len);
		if (have_parity && j >= layout->data)
			drop_too_long(layout, *L, present, lens, &n, unused, unused_len);
	}
	return n;
}

/* A recovered data record: its header, its length (at most L), zeros after it, its stored hash. */
bool
sb_recover_check_record(const uint8_t *out, size_t L, uint64_t want_id, size_t *len,
				  SbChunkHeader *h, SbError *err)
{
	size_t		i;

	if (L < SB_CHUNK_HEADER_SIZE)
		return sb_error_set(err, SB_ECORRUPT, "the group's records are %zu bytes, shorter than a chunk header", L);
	if (!sb_format_decode_chunk(out, h, err))
		return false;
	if (h->kind != SB_CHUNK_KIND_DATA || h->chunk_id != want_id)
		return sb_error_set(err, SB_ECORRUPT,
							"the recovered record is %s %" PRIu64 ", not chunk %" PRIu64,
							h->kind == SB_CHUNK_KIND_DATA ? "chunk" : "parity record",
							h->chunk_id, want_id);
	*len = SB_CHUNK_HEADER_SIZE + (size_t) h->stored_len;
	if (*len > L)
		return sb_error_set(err, SB_ECORRUPT,
							"the recovered record says it is %zu bytes, longer than its group's %zu",
							*len, L);
	for (i = *len; i < L; i++)
		if (out[i] != 0)
			return sb_error_set(err, SB_ECORRUPT,
								"the recovered record has nonzero bytes after its end (at %zu of %zu)",
								i, L);
	if (sb_hash64(out + SB_CHUNK_HEADER_SIZE, h->stored_len) != h->stored_hash)
		return sb_error_set(err, SB_ECORRUPT, "the recovered record's checksum does not match");
	return true;
}

/* A recovered parity payload (at OUT + 48): its record's header, as a writer makes it. */
static void
seal_parity_record(uint8_t *out, size_t L, uint64_t parity_id, size_t *len, SbChunkHeader *h)
{
	memset(h, 0, sizeof(*h));
	h->kind = SB_CHUNK_KIND_PARITY;
	h->chunk_id = parity_id;
	h->raw_len = h->stored_len = (uint32_t) L;
	h->raw_hash = h->stored_hash = sb_hash64(out + SB_CHUNK_HEADER_SIZE, L);
	sb_format_encode_chunk(h, out);
	*len = SB_CHUNK_HEADER_SIZE + L;
}

bool
sb_recover_member(const SbParityLayout *layout, const SbParityCoder *coder, uint64_t group,
				  uint32_t want, int want_kind, uint64_t want_id, SbMemberReadFn read, void *arg,
				  size_t cap, uint8_t *out, size_t *len, SbChunkHeader *header, SbError *err)
{
	uint32_t	total = layout->data + layout->parity;
	uint8_t    *bufs[SB_PARITY_MAX_STRIPES] = {0};
	size_t		lens[SB_PARITY_MAX_STRIPES];
	bool		present[SB_PARITY_MAX_STRIPES];
	char		unused[1024] = "";
	size_t		L;
	uint32_t	j,
				n;
	bool		ok = true;

	for (j = 0; ok && j < total; j++)
		ok = j == want || (bufs[j] = sb_alloc(cap, err)) != NULL;
	n = ok ? read_members(layout, group, want, read, arg, cap, bufs, lens, present, &L,
						  unused, sizeof(unused)) : 0;
	if (ok && n < layout->data)
		ok = sb_error_set(err, SB_ECORRUPT,
						  "member %u of parity group %" PRIu64 " cannot be recovered: %u of the %u other members it needs are good (%s)",
						  want + 1, group, n, layout->data, unused);
	if (ok && L + SB_CHUNK_HEADER_SIZE > cap)
		ok = sb_error_set(err, SB_ECORRUPT, "parity group %" PRIu64 " has records of %zu bytes, more than a chunk's",
						  group, L);
	for (j = 0; ok && j < total; j++)
		if (present[j])
			memset(bufs[j] + lens[j], 0, L - lens[j]);
	if (ok)
	{
		uint8_t    *dest = want_kind == SB_CHUNK_KIND_PARITY ? out + SB_CHUNK_HEADER_SIZE : out;

		ok = sb_parity_recover(coder, present, bufs, L, want, dest, err);
	}
	if (ok && want_kind == SB_CHUNK_KIND_PARITY)
		seal_parity_record(out, L, want_id, len, header);
	else if (ok)
		ok = sb_recover_check_record(out, L, want_id, len, header, err);
	for (j = 0; j < total; j++)
		free(bufs[j]);
	return ok;
}

bool
sb_recover_check_manifest(const SbManifest *m, const SbChunkHeader *header, uint64_t chunk_id,
						  SbError *err)
{
	SbIndexEntry e;

	/* what the stripe's index would have been checked for (stripe_reader.c) */
	if (header->raw_len != sb_manifest_chunk_length(m, chunk_id) ||
		header->cipher != (m->encrypted ? SB_CIPHER_AES_256_GCM : SB_CIPHER_NONE) ||
		(header->codec != SB_CODEC_NONE && m->codec == SB_CODEC_NONE) ||
		header->codec > SB_CODEC_ZSTD ||
		(header->cipher != SB_CIPHER_NONE && header->stored_len < SB_CRYPTO_OVERHEAD))
		return sb_error_set(err, SB_ECORRUPT,
							"the recovered record of chunk %" PRIu64 " disagrees with the manifest",
							chunk_id);
	sb_recover_entry(header, &e);
	if (sb_entry_payload_len(&e) > e.raw_len ||
		(e.codec == SB_CODEC_NONE && sb_entry_payload_len(&e) != e.raw_len))
		return sb_error_set(err, SB_ECORRUPT,
							"the recovered record of chunk %" PRIu64 " has an impossible length",
							chunk_id);
	return true;
}

size_t
sb_recover_record_cap(const SbManifest *m)
{
	/* a parity record is a header over a payload as long as the longest data record */
	return 2 * SB_CHUNK_HEADER_SIZE + (size_t) m->chunk_size + SB_CRYPTO_OVERHEAD;
}

void
sb_recover_entry(const SbChunkHeader *h, SbIndexEntry *e)
{
	memset(e, 0, sizeof(*e));
	e->chunk_id = h->chunk_id;
	e->raw_len = h->raw_len;
	e->stored_len = h->stored_len;
	e->codec = h->codec;
	e->cipher = h->cipher;
	e->kind = h->kind;
	e->raw_hash = h->raw_hash;
	e->stored_hash = h->stored_hash;
}
