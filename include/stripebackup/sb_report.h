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

/*
 * A stripe's rates, the one definition that the report, the chart, the
 * JSON and the views (stripe_backup_stripes) share: data MB/s counts the
 * source data it carried (before compression), stored MB/s the bytes
 * written to it, both per second of its writing (the time its writer had
 * writes in flight, SbStripeInfo.seconds); 0 when it wrote nothing.
 */
extern double sb_stripe_data_mb_per_s(const SbStripeInfo *s);
extern double sb_stripe_stored_mb_per_s(const SbStripeInfo *s);

/* The chart's moving window, in seconds: this many, or two intervals of a coarser timeline. */
#define SB_REPORT_WINDOW 1.0

/* The width of the window that smooths stripe S's line. */
extern double sb_report_window(const SbStripeInfo *s);

/*
 * Stripe S's stored MB/s over the window centred on T seconds into the
 * backup (cut at its start and end), from its timeline drawn straight
 * between figures: what the chart draws.
 */
extern double sb_report_rate_at(const SbStripeInfo *s, double t);

#endif							/* SB_REPORT_H */
