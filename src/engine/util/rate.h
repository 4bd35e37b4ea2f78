/*
 * rate.h
 *		A rate limit for one stream of I/O (a stripe's writes or reads), like
 *		pg_basebackup --max-rate but per device.
 */
#ifndef SB_RATE_H
#define SB_RATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct SbRate
{
	double		bytes_per_second;	/* 0 = no limit */
	double		start;
	uint64_t	bytes;
} SbRate;

/* A limit of MB_PER_SECOND (0 or less: none). */
extern void sb_rate_init(SbRate *r, double mb_per_second);

/*
 * Wait until N more bytes keep the stream within its rate.  Naps are short
 * and STOPPED(ARG) is asked between them, so a stopped operation ends promptly.
 */
extern void sb_rate_wait(SbRate *r, size_t n, bool (*stopped) (void *arg), void *arg);

#endif							/* SB_RATE_H */
