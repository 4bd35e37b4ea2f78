/*
 * recover_stripes.c
 *		SbRecovery (recover.h): the members of a parity group read from the
 *		stripes that are not lost, each checked as a reader checks it, through
 *		handles of the recovery's own.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/checksum.h"
#include "crypto/crypto.h"
#include "util/fsutil.h"
#include "restore/recover.h"

/*
 * The position of ID among ENTRIES (N of them), or N.  A stripe with
 * redundancy holds its data chunks and its parity records each in
 * ascending order (FORMAT.md 10.1): a binary search, with a scan behind it
 * for a stripe that is not ordered so.
 */
static uint64_t
find_entry(const SbIndexEntry *entries, uint64_t n, uint64_t id)
{
	uint64_t	lo = 0,
				hi = n,
				i;

	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (entries[mid].chunk_id == id)
			return mid;
		if (entries[mid].chunk_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = 0; i < n; i++)
		if (entries[i].chunk_id == id)
			return i;
	return n;
}

static bool
read_record(SbStripeReader *reader, const SbIndexEntry *e, uint8_t *buf, size_t cap,
			size_t *got, SbError *err)
{
	size_t		len = SB_CHUNK_HEADER_SIZE + (size_t) e->stored_len;
	ssize_t		n;

	if (len > cap)
		return sb_error_set(err, SB_ECORRUPT, "its index says it is %zu bytes, more than a chunk record", len);
	n = sb_store_pread(&reader->file, buf, len, e->offset, err);
	if (n < 0)
		return false;
	*got = (size_t) n;
	return true;
}

/* Data member: the chunk's record, checked against its stripe's index. */
static SbMemberStatus
read_data(SbRecovery *r, SbStripeReader *reader, uint64_t chunk_id, uint8_t *buf, size_t cap,
		  size_t *len, SbError *why)
{
	uint64_t	i = find_entry(reader->entries, reader->nentries, chunk_id);
	size_t		got = 0;

	if (i == reader->nentries)
	{
		sb_error_set(why, SB_ECORRUPT, "stripe %u does not list chunk %" PRIu64, reader->index + 1,
					 chunk_id);
		return SB_MEMBER_LOST;
	}
	if (!read_record(reader, &reader->entries[i], buf, cap, &got, why) ||
		!sb_stripe_check_record(reader, i, buf, got, why))
	{
		sb_error_prefix(why, "chunk %" PRIu64 " in stripe %u", chunk_id, reader->index + 1);
		return SB_MEMBER_LOST;
	}
	*len = sb_stripe_record_length(reader, i);
	(void) r;
	return SB_MEMBER_GOOD;
}

static SbMemberStatus
read_parity(SbRecovery *r, SbStripeReader *reader, uint64_t parity_id, uint8_t *buf,
			size_t cap, size_t *len, SbError *why)
{
	uint64_t	i = find_entry(reader->parity_entries, reader->nparity, parity_id);
	const SbIndexEntry *e;
	size_t		got = 0;

	if (i == reader->nparity)
	{
		sb_error_set(why, SB_ECORRUPT, "stripe %u does not list parity record %" PRIu64,
					 reader->index + 1, parity_id);
		return SB_MEMBER_LOST;
	}
	e = &reader->parity_entries[i];
	if (!read_record(reader, e, r->record, r->cap, &got, why) ||
		!sb_stripe_check_parity_record(e, r->record, got, why) || e->stored_len > cap)
	{
		sb_error_prefix(why, "parity record %" PRIu64 " in stripe %u", parity_id, reader->index + 1);
		return SB_MEMBER_LOST;
	}
	memcpy(buf, r->record + SB_CHUNK_HEADER_SIZE, e->stored_len);
	*len = e->stored_len;
	return SB_MEMBER_GOOD;
}

static SbMemberStatus
read_member(void *arg, uint64_t group, uint32_t member, uint8_t *buf, size_t cap, size_t *len,
			SbError *why)
{
	SbRecovery *r = arg;
	uint32_t	stripe = sb_parity_stripe(&r->layout, group, member);
	uint64_t	chunk_id;

	if (member < r->layout.data &&
		!sb_parity_member_chunk(&r->layout, group, member, r->manifest->total_chunks, &chunk_id))
		return SB_MEMBER_NONE;
	if (r->lost[stripe])
	{
		sb_error_set(why, SB_ECORRUPT, "stripe %u is lost", stripe + 1);
		return SB_MEMBER_LOST;
	}
	if (member < r->layout.data)
		return read_data(r, &r->readers[stripe], chunk_id, buf, cap, len, why);
	return read_parity(r, &r->readers[stripe], sb_parity_id(&r->layout, group, member - r->layout.data),
					   buf, cap, len, why);
}

bool
sb_recovery_open(SbRecovery *r, const SbManifest *m, char *const *paths, const SbS3Settings *s3,
				 const bool *lost, SbError *err)
{
	uint32_t	i;

	memset(r, 0, sizeof(*r));
	r->manifest = m;
	for (i = 0; i < m->nstripes; i++)
		r->readers[i].file.fd = -1;
	if (m->redundancy.parity == 0)
		return sb_error_set(err, SB_EINVAL, "the backup has no redundancy: nothing can be recovered");
	if (!sb_parity_layout_init(&r->layout, m->nstripes, m->redundancy.parity, m->redundancy.run, err) ||
		!sb_parity_coder_init(&r->coder, &r->layout, err))
		return false;
	r->cap = sb_recover_record_cap(m);
	r->record = sb_alloc(r->cap, err);
	if (r->record == NULL)
		return false;
	for (i = 0; i < m->nstripes; i++)
	{
		SbError		ignored;

		/* a stripe that fails to open now is as lost as one known lost */
		r->lost[i] = lost[i] || paths[i] == NULL ||
			!sb_stripe_open(&r->readers[i], m, i, paths[i], s3, &ignored);
		if (r->lost[i])
			sb_stripe_close(&r->readers[i]);
	}
	return true;
}

bool
sb_recovery_chunk(SbRecovery *r, uint64_t chunk_id, uint8_t *out, size_t *len,
				  SbChunkHeader *header, SbError *err)
{
	SbParityPlace place = sb_parity_place_of_chunk(&r->layout, chunk_id);
	const SbManifest *m = r->manifest;

	if (chunk_id >= m->total_chunks)
		return sb_error_set(err, SB_EINVAL, "chunk %" PRIu64 " is not in the backup", chunk_id);
	if (!sb_recover_member(&r->layout, &r->coder, place.group, place.member, SB_CHUNK_KIND_DATA,
						   chunk_id, read_member, r, r->cap, out, len, header, err))
		return false;
	return sb_recover_check_manifest(m, header, chunk_id, err);
}

bool
sb_recovery_parity(SbRecovery *r, uint64_t parity_id, uint8_t *out, size_t *len,
				   SbChunkHeader *header, SbError *err)
{
	SbParityPlace place = sb_parity_place_of_parity(&r->layout, parity_id);

	if (place.group >= sb_parity_groups(&r->layout, r->manifest->total_chunks))
		return sb_error_set(err, SB_EINVAL, "parity record %" PRIu64 " is not in the backup", parity_id);
	return sb_recover_member(&r->layout, &r->coder, place.group, place.member, SB_CHUNK_KIND_PARITY,
							 parity_id, read_member, r, r->cap, out, len, header, err);
}

void
sb_recovery_close(SbRecovery *r)
{
	uint32_t	i;

	for (i = 0; r->manifest != NULL && i < r->manifest->nstripes; i++)
		if (!r->lost[i])
			sb_stripe_close(&r->readers[i]);
	sb_parity_coder_free(&r->coder);
	free(r->record);
	r->record = NULL;
}
