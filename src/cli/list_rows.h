/*
 * list_rows.h
 *		"stripebackup list": the backups found in one or more destinations,
 *		one row each however many of the destinations hold a part of it,
 *		with what the cheap checks say of it (sb_catalog_check_backup).
 */
#ifndef SB_LIST_ROWS_H
#define SB_LIST_ROWS_H

#include "cli.h"

typedef enum ListStatus
{
	LIST_COMPLETE,				/* manifest and stripes all there, sizes as recorded */
	LIST_INCOMPLETE,			/* stripe files without a manifest: it did not complete */
	LIST_DAMAGED,				/* a manifest or stripe missing, of another size, or refused */
	LIST_UNKNOWN				/* encrypted, and no key to open its manifest */
} ListStatus;

typedef struct ListRow
{
	char	   *name;
	char		uuid[33];		/* hex; "" when no manifest could be read */
	char	   *label;
	SbBackupType type;
	char	   *parent_name;	/* the backup it completes, or NULL */
	char		parent_uuid[33];
	ListStatus	status;
	char	   *problem;		/* unless complete: why, naming the file */
	uint64_t	data_bytes;		/* its chunks' bytes before compression */
	uint64_t	stored_bytes;	/* what its stripes hold */
	uint32_t	nstripes;
	char	   *started_at;		/* as the manifest says (ISO 8601, UTC) */
	char	   *finished_at;
	char	   *system_identifier;
	char	   *start_lsn;		/* NULL for a cold backup */
	char	   *stop_lsn;
	unsigned	timeline;
	bool		encrypted;
	bool		kept;			/* a label (keep.json) says stripe_keep kept it */
	char	   *note;			/* the label's note, as written: NULL when none */
	char	   *folders[SB_MAX_STRIPES];	/* its folders in the destinations given */
	uint32_t	nfolders;
	char	   *stripe_folders[SB_MAX_STRIPES];	/* where its stripes are, as recorded */
	uint32_t	nstripe_folders;
} ListRow;

typedef struct ListRows
{
	ListRow    *rows;
	size_t		count;
	uint32_t	missing_destinations;	/* destinations not there (said on stderr) */
	uint32_t	unlisted_destinations;	/* destinations that could not be listed */
} ListRows;

/*
 * The backups of DESTS (NDESTS of them), newest first (by start time; the
 * ones without a manifest last, by name); KEY (NULL: none) opens encrypted
 * ones.  A destination that cannot be listed is said on stderr and
 * counted; false only when out of memory.
 */
extern bool list_rows_gather(const char *const *dests, uint32_t ndests, const SbKey *key, ListRows *rows);
extern void list_rows_free(ListRows *rows);

/* "complete", "incomplete", "damaged", "unknown". */
extern const char *list_status_name(ListStatus status);

#endif							/* SB_LIST_ROWS_H */
