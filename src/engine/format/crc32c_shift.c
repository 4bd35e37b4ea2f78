/*
 * crc32c_shift.c
 *		Moving a CRC-32C register across zero bytes without reading them:
 *		multiplication by x^(8n) modulo the Castagnoli polynomial.
 *
 * CRC-32C is linear over GF(2).  The raw register of a message (started at
 * 0, never inverted) satisfies raw(A || B) = raw(A) * x^(8|B|) + raw(B)
 * (mod P), and feeding n zero bytes into any register multiplies it by
 * x^(8n).  So the pieces of a file, checked in any order by any thread,
 * combine into the CRC of the whole file, and a hole of n bytes costs
 * O(log n) multiplications instead of a pass over n zeros.
 *
 * Registers are reflected, as ISA-L's crc32_iscsi keeps them: the
 * coefficient of x^k is bit 31 - k, so x^0 is the top bit and the
 * polynomial P reads 0x82F63B78.
 */
#include <pthread.h>

#include "format/checksum.h"

#define CASTAGNOLI_REFLECTED 0x82F63B78u
#define X_TO_THE_0 0x80000000u

/* x^(8 * 2^k) mod P for k = 0..63: what n's bit k shifts by. */
static uint32_t byte_shift_powers[64];
static pthread_once_t powers_once = PTHREAD_ONCE_INIT;

/* A(x) * x mod P: one step of the register. */
static uint32_t
times_x(uint32_t a)
{
	return (a & 1) ? (a >> 1) ^ CASTAGNOLI_REFLECTED : a >> 1;
}

/* A(x) * B(x) mod P: add B * x^k for every x^k that A holds. */
static uint32_t
multiply_mod_p(uint32_t a, uint32_t b)
{
	uint32_t	product = 0;
	uint32_t	term = X_TO_THE_0;	/* x^k, walking down A's bits */

	while (a != 0)
	{
		if (a & term)
		{
			product ^= b;
			a &= ~term;
		}
		term >>= 1;
		b = times_x(b);			/* b(x) * x^(k+1) for the next term */
	}
	return product;
}

/* Square x^8 repeatedly: x^(8 * 2^(k+1)) = (x^(8 * 2^k))^2. */
static void
compute_powers(void)
{
	uint32_t	power = X_TO_THE_0 >> 8;	/* x^8 */
	int			k;

	for (k = 0; k < 64; k++)
	{
		byte_shift_powers[k] = power;
		power = multiply_mod_p(power, power);
	}
}

uint32_t
sb_crc32c_shift(uint32_t crc, uint64_t len)
{
	int			k;

	pthread_once(&powers_once, compute_powers);
	for (k = 0; len != 0 && crc != 0; k++, len >>= 1)
		if (len & 1)
			crc = multiply_mod_p(crc, byte_shift_powers[k]);
	return crc;
}
