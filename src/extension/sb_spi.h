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

/*
 * SPI_connect for the extension's own tables in a caller's session: the
 * caller's right to call the function was checked, and the tables (which
 * PUBLIC cannot touch) are read and written as the bootstrap superuser, as
 * a SECURITY DEFINER function would.  sb_spi_finish_as_extension undoes it.
 */
typedef struct SbSavedUser
{
	Oid			user;
	int			context;
} SbSavedUser;

extern SbSavedUser sb_spi_connect_as_extension(void);
extern void sb_spi_finish_as_extension(SbSavedUser saved);

/* Run an INSERT or UPDATE with arguments; ERROR if it fails. */
extern void sb_spi_write(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls);

#endif							/* SB_SPI_H */
