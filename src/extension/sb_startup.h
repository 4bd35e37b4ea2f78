/*
 * sb_startup.h
 *		At server start, and after a crash restart: backups and restores that
 *		were running when the server stopped are marked failed.
 */
#ifndef SB_STARTUP_H
#define SB_STARTUP_H

/*
 * Define stripebackup.database_name and, when preloading, register the
 * start-up worker.  From _PG_init, before the stripebackup.* prefix is
 * reserved.
 */
extern void sbx_startup_register(void);

/* stripebackup.database_name: where the start-up clean-up looks (stripe_check() compares it). */
extern const char *sbx_startup_database_name(void);

#endif							/* SB_STARTUP_H */
