/*
 * tests.h
 *		Every unit test, run in this order by main.c.
 */
#ifndef SB_UNIT_TESTS_H
#define SB_UNIT_TESTS_H

/* test_roundtrip.c */
extern void test_roundtrip_empty_file(void);
extern void test_roundtrip_one_chunk(void);
extern void test_roundtrip_sparse_5g(void);
extern void test_roundtrip_many_files(void);
extern void test_roundtrip_spilled(void);
extern void test_roundtrip_modes_and_links(void);
extern void test_roundtrip_links_refused(void);
extern void test_roundtrip_non_utf8_names(void);
extern void test_roundtrip_gathered_folder(void);
extern void test_roundtrip_pipeline_limits(void);

/* test_lanes.c */
extern void test_source_lanes(void);
extern void test_source_lanes_failures(void);
extern void test_restore_writeback(void);

/* test_queue.c */
extern void test_queue_order(void);

/* test_file_runs.c */
extern void test_file_runs(void);
extern void test_file_runs_refused(void);

/* test_crypto.c */
extern void test_crypto_vectors(void);
extern void test_crypto_streams(void);
extern void test_crypto_backup_keys(void);
extern void test_crypto_key_file(void);

/* test_s3.c */
extern void test_s3_sign_vectors(void);
extern void test_s3_locations(void);
extern void test_s3_config(void);
extern void test_s3_xml(void);
extern void test_s3_xml_hostile(void);

/* test_s3_live.c */
extern void test_s3_live_objects(void);
extern void test_s3_live_multipart(void);
extern void test_s3_live_failures(void);
extern void test_s3_live_upload(void);
extern void test_s3_live_calibrate(void);
extern void test_s3_live_backup(void);

/* test_store.c */
extern void test_store_destinations(void);
extern void test_store_drivers(void);

/* test_s3_wal.c */
extern void test_s3_wal(void);

/* test_s3_faults.c */
extern void test_s3_faults(void);
extern void test_s3_faults_upload(void);
extern void test_s3_faults_listing(void);
extern void test_s3_faults_stop(void);
extern void test_s3_faults_allowed(void);

/* test_encrypted.c */
extern void test_encrypted_backup(void);
extern void test_encrypted_segments(void);

/* test_delta.c */
extern void test_delta_restore(void);
extern void test_delta_writes_pages(void);
extern void test_delta_plan_seconds(void);
extern void test_plan_estimate(void);
extern void test_restore_sample(void);

/* test_incremental.c */
extern void test_incremental_chain(void);
extern void test_incremental_broken_chain(void);
extern void test_incremental_damaged_parent(void);
extern void test_incremental_uncovered_bytes(void);
extern void test_incremental_missing_in_parent(void);
extern void test_incremental_unchanged_files(void);
extern void test_incremental_nothing_from_parent(void);
extern void test_incremental_merge(void);
extern void test_incremental_delta(void);

/* test_weights.c */
extern void test_weights_weighted(void);
extern void test_weights_adaptive(void);

/* test_corruption.c */
extern void test_corruption_flipped_payload(void);
extern void test_corruption_truncated_stripe(void);
extern void test_corruption_missing_stripe(void);
extern void test_corruption_versions(void);
extern void test_corruption_unsafe_paths(void);
extern void test_corruption_target_not_empty(void);
extern void test_corruption_foreign_stripe(void);

/* test_auth.c */
extern void test_auth_one_copy_damaged(void);
extern void test_auth_stripes_unreachable(void);
extern void test_auth_forged_manifest(void);

/* test_bitflip.c */
extern void test_bitflip_manifest(void);
extern void test_bitflip_every_copy_edited(void);

/* test_manifest.c */
extern void test_manifest_json_roundtrip(void);
extern void test_manifest_rejects(void);
extern void test_manifest_strict_text(void);
extern void test_manifest_huge_claims(void);
extern void test_manifest_stream(void);
extern void test_manifest_tally(void);
extern void test_manifest_spill(void);
extern void test_manifest_no_stamps(void);
extern void test_manifest_streamed(void);
extern void test_entry_spool(void);
extern void test_entry_spool_stamps(void);
extern void test_entry_lookup(void);
extern void test_hash_sort(void);
extern void test_path_set(void);

/* test_options.c */
extern void test_options_refused(void);
extern void test_options_existing_name(void);
extern void test_options_backup_contract(void);
extern void test_options_write_failure(void);
extern void test_options_repointed_destination(void);
extern void test_options_given_uuid(void);

/* test_durability.c */
extern void test_durability_backup_order(void);
extern void test_durability_backup_sync_fails(void);
extern void test_durability_restore_sync(void);

/* test_crc.c */
extern void test_crc_conventions(void);
extern void test_crc_shift_large(void);
extern void test_crc_combine_pieces(void);
extern void test_crc_combine_detects(void);
extern void test_hash64_is_xxh3(void);

/* test_page_cache.c */
extern void test_page_cache_direct_reads(void);

/* test_pgmeta.c */
extern void test_pgmeta_read(void);
extern void test_pgmeta_relocations(void);

/* test_timeline.c */
extern void test_timeline_short_backup(void);
extern void test_timeline_long_backup(void);
extern void test_timeline_wait_and_coarsen(void);
extern void test_timeline_export_end(void);

/* test_report.c */
extern void test_report_svg_series(void);
extern void test_report_svg_ticks(void);
extern void test_report_svg_empty(void);
extern void test_report_svg_large(void);
extern void test_report_svg_backup(void);
extern void test_report_svg_two_seconds(void);

/* test_calibrate.c */
extern void test_calibrate_refused(void);
extern void test_calibrate_sequential(void);
extern void test_calibrate_matrix(void);
extern void test_calibrate_rate(void);
extern void test_calibrate_canceled(void);

/* test_relocations.c */
extern void test_relocations_restore(void);
extern void test_relocations_refused(void);
extern void test_relocations_canceled(void);

/* test_io.c */
extern void test_io_methods(void);
extern void test_io_method_names(void);

/* test_codec.c */
extern void test_codec_zstd_cli(void);
extern void test_codec_stored(void);
extern void test_codec_stream(void);

/* test_error.c */
extern void test_error_errno(void);
extern void test_error_prefix(void);
extern void test_error_code_names(void);

/* test_fsutil.c */
extern void test_fsutil_io_errors(void);
extern void test_fsutil_small_files(void);
extern void test_fsutil_beneath(void);
extern void test_fsutil_remove_contents(void);
/* test_policy.c */
extern void test_policy_paths(void);
extern void test_policy_empty_or_absent(void);
extern void test_policy_running_cluster(void);
extern void test_policy_restore_places(void);
extern void test_policy_mappings(void);
extern void test_policy_folder_names(void);
extern void test_policy_numbers(void);
extern void test_policy_memory(void);
extern void test_policy_memory_hooks(void);

/* test_folder.c */
extern void test_folder_removes_own_files(void);
extern void test_folder_partial(void);
extern void test_folder_foreign(void);
extern void test_folder_links(void);
extern void test_folder_identity(void);

/* test_restore_marker.c */
extern void test_restore_marker_complete(void);
extern void test_restore_marker_incomplete(void);

/* test_pgrecovery.c */
extern void test_pgrecovery_settings(void);
extern void test_pgrecovery_refused(void);
extern void test_pgrecovery_standby(void);
extern void test_pgrecovery_bucket(void);
extern void test_pgrecovery_sealed(void);

/* test_expect.c */
extern void test_expect_recorded_backup(void);
extern void test_expect_claimed_encryption(void);

/* test_pgrecovery_values.c */
extern void test_pgrecovery_values(void);
extern void test_pgrecovery_restore_command_words(void);

/* test_recovery_wal.c */
extern void test_recovery_wal_gaps(void);
extern void test_recovery_wal_timelines(void);
extern void test_recovery_wal_verify(void);
/* test_wal_name.c */
extern void test_wal_name_forms(void);
extern void test_wal_name_segments(void);
extern void test_wal_name_files(void);
extern void test_wal_name_headers(void);

/* test_wal_push.c */
extern void test_wal_push_roundtrip(void);
extern void test_wal_push_history_everywhere(void);
extern void test_wal_push_weighted_spread(void);
extern void test_wal_push_adaptive(void);
extern void test_wal_push_again(void);
extern void test_wal_push_repairs(void);
extern void test_wal_push_refused(void);
extern void test_wal_push_options(void);
extern void test_wal_push_missing_destination(void);
extern void test_wal_push_full_destination(void);
extern void test_wal_push_many(void);
extern void test_wal_push_foreign(void);

/* test_wal_durability.c */
extern void test_wal_durability_order(void);
extern void test_wal_durability_failures(void);
extern void test_wal_durability_folder_sync(void);
extern void test_wal_durability_get(void);

/* test_wal_get.c */
extern void test_wal_get_bitflips(void);
extern void test_wal_get_refusals(void);
extern void test_wal_get_copies(void);
extern void test_wal_get_prefetch(void);
extern void test_wal_get_foreign_spool(void);
extern void test_wal_get_forged(void);

/* test_wal_sealed.c */
extern void test_wal_sealed_header(void);
extern void test_wal_sealed_roundtrip(void);
extern void test_wal_sealed_refusals(void);
extern void test_wal_sealed_damage(void);
extern void test_wal_sealed_push_over(void);
extern void test_wal_sealed_retention(void);

/* test_wal_list.c */
extern void test_wal_list_entries(void);
extern void test_wal_list_continuity(void);
extern void test_wal_list_verify(void);
extern void test_wal_list_retention(void);

#endif							/* SB_UNIT_TESTS_H */
