/*
 * sb_report.h
 *		A picture of a backup from its manifest alone.
 */
#ifndef SB_REPORT_H
#define SB_REPORT_H

#include "stripebackup/sb_manifest.h"

/*
 * An SVG chart of each stripe's write throughput second by second, one
 * <polyline class="series"> per stripe, with a legend.  Malloc'd text.
 * A backup written before stripes kept timelines has empty series.
 */
extern char *sb_report_svg(const SbManifest *m, SbError *err);

#endif							/* SB_REPORT_H */
