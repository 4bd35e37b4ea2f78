/*
 * sb_spi.h
 *		Running the extension's own SQL from a worker, each write in a
 *		transaction of its own.
 */
#ifndef SB_SPI_H
#define SB_SPI_H

/* Start a transaction with a snapshot, connected to SPI. */
extern void sb_spi_begin(void);

/* Disconnect and commit. */
extern void sb_spi_end(void);

/* Run an INSERT or UPDATE with arguments; ERROR if it fails. */
extern void sb_spi_write(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls);

#endif							/* SB_SPI_H */
