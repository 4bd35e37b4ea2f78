/*
 * parity.c
 *		Parity groups across the stripes of a backup: where each member lives
 *		(parity.h), and the Reed-Solomon code over their records, with
 *		ISA-L's erasure-code functions.
 */
#include <isa-l/erasure_code.h>
#include <stdlib.h>
#include <string.h>

#include "format/parity.h"

bool
sb_parity_layout_init(SbParityLayout *l, uint32_t stripes, uint32_t parity, uint32_t run,
					  SbError *err)
{
	if (parity < 1 || parity > SB_PARITY_MAX)
		return sb_error_set(err, SB_EINVAL, "redundancy %u is out of range (1 to %d)", parity,
							SB_PARITY_MAX);
	if (stripes <= parity || stripes > SB_PARITY_MAX_STRIPES)
		return sb_error_set(err, SB_EINVAL,
							"redundancy %u needs at least %u destinations (the backup has %u)",
							parity, parity + 1, stripes);
	if (run < 1 || run > SB_PARITY_MAX_RUN)
		return sb_error_set(err, SB_EINVAL, "parity run %u is out of range (1 to %d)", run,
							SB_PARITY_MAX_RUN);
	l->stripes = stripes;
	l->parity = parity;
	l->data = stripes - parity;
	l->run = run;
	return true;
}

/* Data chunk ids a block holds: K runs of RUN. */
static uint64_t
block_chunks(const SbParityLayout *l)
{
	return (uint64_t) l->data * l->run;
}

SbParityPlace
sb_parity_place_of_chunk(const SbParityLayout *l, uint64_t chunk_id)
{
	uint64_t	block = chunk_id / block_chunks(l);
	uint64_t	within = chunk_id % block_chunks(l);
	SbParityPlace p = {block * l->run + within % l->run, (uint32_t) (within / l->run)};

	return p;
}

SbParityPlace
sb_parity_place_of_parity(const SbParityLayout *l, uint64_t parity_id)
{
	uint64_t	row = parity_id / l->run;	/* block * M + p */
	uint64_t	block = row / l->parity;
	SbParityPlace p = {block * l->run + parity_id % l->run, l->data + (uint32_t) (row % l->parity)};

	return p;
}

uint32_t
sb_parity_stripe(const SbParityLayout *l, uint64_t group, uint32_t member)
{
	return (uint32_t) ((group / l->run + member) % l->stripes);
}

uint32_t
sb_parity_chunk_stripe(const SbParityLayout *l, uint64_t chunk_id)
{
	SbParityPlace p = sb_parity_place_of_chunk(l, chunk_id);

	return sb_parity_stripe(l, p.group, p.member);
}

bool
sb_parity_member_chunk(const SbParityLayout *l, uint64_t group, uint32_t member,
					   uint64_t chunks, uint64_t *chunk_id)
{
	uint64_t	id = group / l->run * block_chunks(l) + (uint64_t) member * l->run + group % l->run;

	*chunk_id = id;
	return member < l->data && id < chunks;
}

uint64_t
sb_parity_id(const SbParityLayout *l, uint64_t group, uint32_t p)
{
	return (group / l->run * l->parity + p) * l->run + group % l->run;
}

/* Groups of block BLOCK: as many as its first member's chunks. */
static uint64_t
block_groups(const SbParityLayout *l, uint64_t block, uint64_t chunks)
{
	uint64_t	first = block * block_chunks(l);

	if (first >= chunks)
		return 0;
	return chunks - first < l->run ? chunks - first : l->run;
}

uint64_t
sb_parity_groups(const SbParityLayout *l, uint64_t chunks)
{
	uint64_t	full = chunks / block_chunks(l);

	return full * l->run + block_groups(l, full, chunks);
}

void
sb_parity_stripe_runs(const SbParityLayout *l, uint32_t stripe, uint64_t chunks,
					  SbParityRunFn fn, void *arg)
{
	uint64_t	block;

	for (block = 0; block * block_chunks(l) < chunks; block++)
	{
		uint32_t	member = (uint32_t) ((stripe + l->stripes - block % l->stripes) % l->stripes);

		if (member < l->data)
		{
			uint64_t	first = block * block_chunks(l) + (uint64_t) member * l->run;
			uint64_t	end = first + l->run < chunks ? first + l->run : chunks;

			if (first < chunks)
				fn(arg, SB_CHUNK_KIND_DATA, first, end - 1);
		}
		else
		{
			uint64_t	first = sb_parity_id(l, block * l->run, member - l->data);

			fn(arg, SB_CHUNK_KIND_PARITY, first, first + block_groups(l, block, chunks) - 1);
		}
	}
}

bool
sb_parity_coder_init(SbParityCoder *c, const SbParityLayout *l, SbError *err)
{
	c->data = l->data;
	c->parity = l->parity;
	gf_gen_cauchy1_matrix(c->matrix, (int) l->stripes, (int) l->data);
	c->tables = malloc((size_t) 32 * l->data * l->parity);
	if (c->tables == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory for the parity code");
	ec_init_tables((int) l->data, (int) l->parity, c->matrix + (size_t) l->data * l->data,
				   c->tables);
	return true;
}

void
sb_parity_coder_free(SbParityCoder *c)
{
	free(c->tables);
	c->tables = NULL;
}

void
sb_parity_add(const SbParityCoder *c, uint32_t member, const uint8_t *record, size_t len,
			  uint8_t *const *parity)
{
	if (len == 0)
		return;
	ec_encode_data_update((int) len, (int) c->data, (int) c->parity, (int) member, c->tables,
						  (unsigned char *) record, (unsigned char **) parity);
}

/*
 * The row of coefficients that gives member WANT from the members ROWS
 * (K of them): the inverse of their rows of the matrix, times WANT's row.
 */
static bool
recovery_row(const SbParityCoder *c, const uint32_t *rows, uint32_t want, uint8_t *coef,
			 SbError *err)
{
	uint32_t	k = c->data;
	uint8_t		chosen[SB_PARITY_MAX_STRIPES * SB_PARITY_MAX_STRIPES];
	uint8_t		inverse[SB_PARITY_MAX_STRIPES * SB_PARITY_MAX_STRIPES];
	uint32_t	i,
				j;

	for (i = 0; i < k; i++)
		memcpy(chosen + (size_t) i * k, c->matrix + (size_t) rows[i] * k, k);
	if (gf_invert_matrix(chosen, inverse, (int) k) != 0)
		return sb_error_set(err, SB_ECORRUPT, "the parity code cannot be inverted");
	for (i = 0; i < k; i++)
	{
		uint8_t		sum = 0;

		for (j = 0; j < k; j++)
			sum ^= gf_mul(c->matrix[(size_t) want * k + j], inverse[(size_t) j * k + i]);
		coef[i] = sum;
	}
	return true;
}

bool
sb_parity_recover(const SbParityCoder *c, const bool *present, uint8_t *const *members,
				  size_t len, uint32_t want, uint8_t *out, SbError *err)
{
	uint32_t	rows[SB_PARITY_MAX_STRIPES];
	unsigned char *sources[SB_PARITY_MAX_STRIPES];
	uint8_t		coef[SB_PARITY_MAX_STRIPES];
	unsigned char tables[32 * SB_PARITY_MAX_STRIPES];
	uint32_t	n = 0,
				j;

	for (j = 0; j < c->data + c->parity && n < c->data; j++)
		if (present[j] && j != want)
		{
			rows[n] = j;
			sources[n++] = members[j];
		}
	if (n < c->data)
		return sb_error_set(err, SB_ECORRUPT,
							"member %u of a parity group cannot be recovered: %u of the %u members it needs are there",
							want + 1, n, c->data);
	if (!recovery_row(c, rows, want, coef, err))
		return false;
	if (len == 0)
		return true;
	ec_init_tables((int) c->data, 1, coef, tables);
	ec_encode_data((int) len, (int) c->data, 1, tables, sources, &out);
	return true;
}

bool
sb_parity_decoder_init(SbParityDecoder *d, const SbParityCoder *c, const bool *use,
					   const uint32_t *want, uint32_t nwant, SbError *err)
{
	uint32_t	rows[SB_PARITY_MAX_STRIPES];
	uint8_t		coef[SB_PARITY_MAX * SB_PARITY_MAX_STRIPES];
	uint32_t	n = 0,
				i,
				j;

	memset(d, 0, sizeof(*d));
	d->data = c->data;
	d->nwant = nwant;
	for (j = 0; j < c->data + c->parity; j++)
	{
		d->column[j] = use[j] ? (int32_t) n : -1;
		if (use[j] && n < c->data)
			rows[n] = j;
		n += use[j] ? 1 : 0;
	}
	if (n != c->data || nwant == 0 || nwant > c->parity)
		return sb_error_set(err, SB_EINVAL,
							"a group is decoded from %u members to %u: it takes %u, to 1 to %u",
							n, nwant, c->data, c->parity);
	for (i = 0; i < nwant; i++)
	{
		if (use[want[i]])
			return sb_error_set(err, SB_EINVAL, "member %u is both wanted and used", want[i] + 1);
		if (!recovery_row(c, rows, want[i], coef + (size_t) i * c->data, err))
			return false;
	}
	ec_init_tables((int) c->data, (int) nwant, coef, d->tables);
	return true;
}

void
sb_parity_decoder_add(const SbParityDecoder *d, uint32_t member, const uint8_t *record, size_t len,
					  uint8_t *const *out)
{
	if (len == 0 || d->column[member] < 0)
		return;
	ec_encode_data_update((int) len, (int) d->data, (int) d->nwant, d->column[member],
						  (unsigned char *) d->tables, (unsigned char *) record,
						  (unsigned char **) out);
}
