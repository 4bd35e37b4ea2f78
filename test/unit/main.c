/*
 * main.c
 *		Runs every engine unit test and prints TAP: "ok N" lines, then the plan
 *		"1..N".  Exits non-zero if any assertion failed.
 *
 * Usage: unit_tests [NAME-SUBSTRING ...] runs only the tests whose names
 * contain one of the arguments.  SB_UNIT_TIMEOUT (seconds, default 300)
 * bounds each test, not the whole run: a slow machine or a sanitizer makes the
 * run longer without making any one test hang.  Raise it for long modes such as
 * SB_FLIP_FULL=1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "tests.h"

typedef struct UnitTest
{
	const char *name;
	void		(*fn) (void);
} UnitTest;

#define TEST(fn) {#fn, fn}

static const UnitTest tests[] = {
	TEST(test_crc_conventions),
	TEST(test_crc_shift_large),
	TEST(test_crc_combine_pieces),
	TEST(test_crc_combine_detects),
	TEST(test_hash64_is_xxh3),
	TEST(test_roundtrip_empty_file),
	TEST(test_roundtrip_one_chunk),
	TEST(test_roundtrip_sparse_5g),
	TEST(test_roundtrip_many_files),
	TEST(test_roundtrip_spilled),
	TEST(test_roundtrip_modes_and_links),
	TEST(test_roundtrip_links_refused),
	TEST(test_roundtrip_non_utf8_names),
	TEST(test_roundtrip_gathered_folder),
	TEST(test_roundtrip_pipeline_limits),
	TEST(test_file_runs),
	TEST(test_source_lanes),
	TEST(test_source_lanes_failures),
	TEST(test_restore_writeback),
	TEST(test_queue_order),
	TEST(test_file_runs_refused),
	TEST(test_weights_weighted),
	TEST(test_weights_adaptive),
	TEST(test_corruption_flipped_payload),
	TEST(test_corruption_truncated_stripe),
	TEST(test_corruption_missing_stripe),
	TEST(test_corruption_versions),
	TEST(test_corruption_unsafe_paths),
	TEST(test_corruption_target_not_empty),
	TEST(test_corruption_foreign_stripe),
	TEST(test_auth_one_copy_damaged),
	TEST(test_auth_stripes_unreachable),
	TEST(test_auth_forged_manifest),
	TEST(test_bitflip_every_copy_edited),
	TEST(test_bitflip_manifest),
	TEST(test_crypto_vectors),
	TEST(test_crypto_streams),
	TEST(test_crypto_backup_keys),
	TEST(test_crypto_key_file),
	TEST(test_s3_sign_vectors),
	TEST(test_s3_locations),
	TEST(test_s3_config),
	TEST(test_s3_xml),
	TEST(test_s3_xml_hostile),
	TEST(test_s3_live_objects),
	TEST(test_s3_live_multipart),
	TEST(test_s3_live_failures),
	TEST(test_s3_live_upload),
	TEST(test_s3_live_calibrate),
	TEST(test_s3_live_backup),
	TEST(test_store_destinations),
	TEST(test_store_drivers),
	TEST(test_s3_wal),
	TEST(test_s3_faults),
	TEST(test_s3_faults_upload),
	TEST(test_s3_faults_listing),
	TEST(test_s3_faults_stop),
	TEST(test_s3_faults_allowed),
	TEST(test_encrypted_backup),
	TEST(test_encrypted_segments),
	TEST(test_delta_restore),
	TEST(test_delta_writes_pages),
	TEST(test_delta_plan_seconds),
	TEST(test_plan_estimate),
	TEST(test_restore_sample),
	TEST(test_incremental_chain),
	TEST(test_incremental_broken_chain),
	TEST(test_incremental_damaged_parent),
	TEST(test_incremental_uncovered_bytes),
	TEST(test_incremental_missing_in_parent),
	TEST(test_incremental_unchanged_files),
	TEST(test_incremental_nothing_from_parent),
	TEST(test_incremental_merge),
	TEST(test_incremental_delta),
	TEST(test_manifest_json_roundtrip),
	TEST(test_manifest_rejects),
	TEST(test_manifest_strict_text),
	TEST(test_manifest_huge_claims),
	TEST(test_manifest_stream),
	TEST(test_manifest_tally),
	TEST(test_manifest_no_stamps),
	TEST(test_manifest_streamed),
	TEST(test_entry_spool),
	TEST(test_entry_spool_stamps),
	TEST(test_entry_lookup),
	TEST(test_hash_sort),
	TEST(test_path_set),
	TEST(test_manifest_spill),
	TEST(test_options_refused),
	TEST(test_options_existing_name),
	TEST(test_options_backup_contract),
	TEST(test_options_write_failure),
	TEST(test_options_repointed_destination),
	TEST(test_options_given_uuid),
	TEST(test_durability_backup_order),
	TEST(test_durability_backup_sync_fails),
	TEST(test_durability_restore_sync),
	TEST(test_page_cache_direct_reads),
	TEST(test_pgmeta_read),
	TEST(test_pgmeta_relocations),
	TEST(test_timeline_short_backup),
	TEST(test_timeline_long_backup),
	TEST(test_timeline_wait_and_coarsen),
	TEST(test_timeline_export_end),
	TEST(test_report_svg_series),
	TEST(test_report_svg_ticks),
	TEST(test_report_svg_empty),
	TEST(test_report_svg_large),
	TEST(test_report_svg_backup),
	TEST(test_report_svg_two_seconds),
	TEST(test_calibrate_refused),
	TEST(test_calibrate_sequential),
	TEST(test_calibrate_matrix),
	TEST(test_calibrate_rate),
	TEST(test_calibrate_canceled),
	TEST(test_relocations_restore),
	TEST(test_relocations_refused),
	TEST(test_relocations_canceled),
	TEST(test_io_methods),
	TEST(test_io_method_names),
	TEST(test_codec_zstd_cli),
	TEST(test_codec_stored),
	TEST(test_codec_stream),
	TEST(test_error_errno),
	TEST(test_error_prefix),
	TEST(test_error_code_names),
	TEST(test_fsutil_io_errors),
	TEST(test_fsutil_small_files),
	TEST(test_fsutil_beneath),
	TEST(test_fsutil_remove_contents),
	TEST(test_policy_paths),
	TEST(test_policy_empty_or_absent),
	TEST(test_policy_running_cluster),
	TEST(test_policy_restore_places),
	TEST(test_policy_mappings),
	TEST(test_policy_folder_names),
	TEST(test_policy_numbers),
	TEST(test_policy_memory),
	TEST(test_policy_memory_hooks),
	TEST(test_folder_removes_own_files),
	TEST(test_folder_partial),
	TEST(test_folder_foreign),
	TEST(test_folder_links),
	TEST(test_folder_identity),
	TEST(test_restore_marker_complete),
	TEST(test_restore_marker_incomplete),
	TEST(test_pgrecovery_settings),
	TEST(test_pgrecovery_refused),
	TEST(test_pgrecovery_standby),
	TEST(test_pgrecovery_bucket),
	TEST(test_pgrecovery_values),
	TEST(test_expect_recorded_backup),
	TEST(test_expect_claimed_encryption),
	TEST(test_pgrecovery_restore_command_words),
	TEST(test_pgrecovery_sealed),
	TEST(test_recovery_wal_gaps),
	TEST(test_recovery_wal_timelines),
	TEST(test_recovery_wal_verify),
	TEST(test_wal_name_forms),
	TEST(test_wal_name_segments),
	TEST(test_wal_name_files),
	TEST(test_wal_name_headers),
	TEST(test_wal_push_roundtrip),
	TEST(test_wal_push_history_everywhere),
	TEST(test_wal_push_weighted_spread),
	TEST(test_wal_push_adaptive),
	TEST(test_wal_push_again),
	TEST(test_wal_push_repairs),
	TEST(test_wal_push_refused),
	TEST(test_wal_push_options),
	TEST(test_wal_push_missing_destination),
	TEST(test_wal_push_full_destination),
	TEST(test_wal_push_many),
	TEST(test_wal_push_foreign),
	TEST(test_wal_durability_order),
	TEST(test_wal_durability_failures),
	TEST(test_wal_durability_folder_sync),
	TEST(test_wal_durability_get),
	TEST(test_wal_get_bitflips),
	TEST(test_wal_get_refusals),
	TEST(test_wal_get_copies),
	TEST(test_wal_get_prefetch),
	TEST(test_wal_get_foreign_spool),
	TEST(test_wal_get_forged),
	TEST(test_wal_sealed_header),
	TEST(test_wal_sealed_roundtrip),
	TEST(test_wal_sealed_refusals),
	TEST(test_wal_sealed_damage),
	TEST(test_wal_sealed_push_over),
	TEST(test_wal_sealed_retention),
	TEST(test_wal_list_entries),
	TEST(test_wal_list_continuity),
	TEST(test_wal_list_verify),
	TEST(test_wal_list_retention),
};

static bool
selected(const char *name, int argc, char **argv)
{
	int			i;

	if (argc < 2)
		return true;
	for (i = 1; i < argc; i++)
		if (strstr(name, argv[i]) != NULL)
			return true;
	return false;
}

int
main(int argc, char **argv)
{
	struct timespec t0,
				t1;
	size_t		i;
	unsigned	per_test;

	/* A deadlocked engine must not hang the run: SIGALRM ends it, non-zero. */
	th_install_signal_handlers();
	per_test = getenv("SB_UNIT_TIMEOUT") ? (unsigned) atoi(getenv("SB_UNIT_TIMEOUT")) : 300;
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
	{
		struct timespec s0,
					s1;

		if (!selected(tests[i].name, argc, argv))
			continue;
		th_begin(tests[i].name);
		alarm(per_test);
		clock_gettime(CLOCK_MONOTONIC, &s0);
		tests[i].fn();
		clock_gettime(CLOCK_MONOTONIC, &s1);
		diag("%s took %.2f s", tests[i].name,
			 (double) (s1.tv_sec - s0.tv_sec) + (double) (s1.tv_nsec - s0.tv_nsec) / 1e9);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	diag("%d assertions, %d failed, %.2f s", th_count(), th_failures(),
		 (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9);
	printf("1..%d\n", th_count());
	return th_failures() == 0 && th_count() > 0 ? 0 : 1;
}
