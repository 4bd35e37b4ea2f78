/*
 * drivers.h
 *		Running a test once per store driver (src/engine/store/): a local
 *		folder always, and a prefix of a bucket of the test S3 server when
 *		one is there (test/s3/with-s3.sh sets SB_TEST_S3_ENDPOINT).  The
 *		test's body takes the driver, makes its destinations with
 *		th_driver_dests, and reads or damages what they hold with the
 *		th_dest_* helpers, which take a path or an s3:// location alike.
 *		Every assertion of the body is labelled with the driver's name.
 */
#ifndef SB_UNIT_DRIVERS_H
#define SB_UNIT_DRIVERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

/* The bucket of the test server the drivers' tests use (with-s3.sh makes it). */
#define TH_S3_BUCKET "bk1"

typedef struct ThDriver
{
	const char *name;			/* "posix" or "s3" */
	bool		s3;
	char		prefix[64];		/* s3: this run's own prefix in TH_S3_BUCKET */
} ThDriver;

/* The test S3 server's endpoint (test/s3/with-s3.sh), or NULL when there is none. */
extern const char *th_s3_endpoint(void);

/*
 * BODY(driver, ARG) once per driver: "posix", then "s3" when th_s3_endpoint()
 * (a diagnostic says it is skipped otherwise).  For s3 the process's S3
 * settings reach the server (AWS_ENDPOINT_URL, unset after), and what the
 * body left under its prefix is removed after it.
 */
extern void th_each_driver(void (*body) (const ThDriver *d, void *arg), void *arg);

/*
 * F's destinations on driver D: posix leaves F's folders as they are; s3
 * points F->dest[i] (and dests[i]) at s3://bucket/<prefix>/TAG/d<i+1>
 * instead (F's local folders stay, unused).
 */
extern void th_driver_dests(const ThDriver *d, ThFixture *f, const char *tag);

/* A file of a destination, a local path or an s3:// location: is it there (a regular file)? */
extern bool th_dest_exists(const char *path);

/* Its whole content, malloc'd (NULL, with a diagnostic, when unreadable). */
extern uint8_t *th_dest_read(const char *path, size_t *len);

/* Write it whole, replacing what is there. */
extern bool th_dest_write(const char *path, const void *data, size_t len);

/* Remove it; false when it could not be (or was not there). */
extern bool th_dest_remove(const char *path);

/* Its size, or 0 when it is not there. */
extern uint64_t th_dest_size(const char *path);

/* How many entries a destination's folder (or an object prefix) holds; -1 when unreadable. */
extern int	th_dest_count_entries(const char *dir);

/* Replace the first FROM of its text by TO. */
extern bool th_dest_edit(const char *path, const char *from, const char *to);

/* Cut it to its first SIZE bytes. */
extern bool th_dest_truncate(const char *path, uint64_t size);

/* Move FROM to TO (both of one driver): a rename, or an object copied and removed. */
extern bool th_dest_move(const char *from, const char *to);

/* XOR its byte at OFFSET with MASK (a local file in place, an object put again). */
extern bool th_dest_flip_byte(const char *path, uint64_t offset, uint8_t mask);

#endif							/* SB_UNIT_DRIVERS_H */
