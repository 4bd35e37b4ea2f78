/*
 * sb_report.h
 *		A picture of a backup from its manifest alone.
 */
#ifndef SB_REPORT_H
#define SB_REPORT_H

#include "stripebackup/sb_manifest.h"

/*
 * An SVG chart of each stripe's write throughput over time, a point per
 * interval of its timeline, one <polyline class="series"> per stripe, axes
 * labelled at round values, and a legend.  Malloc'd text.  A stripe
 * without a timeline has an empty series.
 */
extern char *sb_report_svg(const SbManifest *m, SbError *err);

#endif							/* SB_REPORT_H */
