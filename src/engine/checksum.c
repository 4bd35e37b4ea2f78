/*
 * checksum.c
 *		Thin wrappers over libxxhash and ISA-L's CRC-32C.
 */
#include <isa-l/crc.h>
#include <xxhash.h>

#include "checksum.h"

/* ISA-L takes an int length: feed it in pieces well below INT_MAX. */
#define CRC_STEP (1u << 30)

uint64_t
sb_hash64(const void *data, size_t len)
{
	return (uint64_t) XXH3_64bits(data, len);
}

uint32_t
sb_crc32c_update(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len > 0)
	{
		size_t		n = len < CRC_STEP ? len : CRC_STEP;

		crc = crc32_iscsi((unsigned char *) p, (int) n, crc);
		p += n;
		len -= n;
	}
	return crc;
}

uint32_t
sb_crc32c_zeros(uint32_t crc, uint64_t len)
{
	static const unsigned char zeros[64 * 1024];

	while (len > 0)
	{
		size_t		n = len < sizeof(zeros) ? (size_t) len : sizeof(zeros);

		crc = sb_crc32c_update(crc, zeros, n);
		len -= n;
	}
	return crc;
}

uint32_t
sb_crc32c_final(uint32_t crc)
{
	return crc ^ 0xFFFFFFFFu;
}
