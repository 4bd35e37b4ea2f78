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
extern void test_roundtrip_modes_and_links(void);
extern void test_roundtrip_links_refused(void);
extern void test_roundtrip_non_utf8_names(void);
extern void test_roundtrip_gathered_folder(void);
extern void test_roundtrip_pipeline_limits(void);

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

/* test_page_cache.c */
extern void test_page_cache_direct_reads(void);

#endif							/* SB_UNIT_TESTS_H */
