//! The reference tools of the CLI's interop tests: one test that says which
//! of those tests did not run on this machine, and how to install what they
//! need.
//!
//! A test whose tool is missing prints a `SKIPPED` line and returns, which
//! the test harness hides and counts as passed; this test fails instead,
//! unless `MDU_SKIP_TOOLS=1`. With `MDU_REQUIRE_TOOLS=1` (CI) the tests
//! themselves fail too. The tests run the tools by name, so they must be on
//! PATH (`veritysetup` is in /usr/sbin).

use mdu_testkit::tools::{self, Search, Tool};

/// Each tool with the tests that skip without it (keep in step with the
/// `have_tool` / `have_python_cryptography` calls).
const USES: [(Tool, &[&str]); 7] = [
    (
        Tool::Fsverity,
        &[
            "verity::fsverity::matches_fsverity_digest",
            "verity::fsverity::a_file_larger_than_one_mapping_window",
            "verity::fsverity::many_files_print_what_fsverity_digest_prints",
            "verity::fsverity::many_files_stop_at_the_first_that_fails_like_fsverity_digest",
            "verity::fsverity::the_null_device_has_the_empty_file_digest_like_fsverity_digest (its comparison with fsverity digest)",
            "inputs::fsverity_digest_of_a_file_that_ends_before_its_size_is_an_error_naming_the_offset (its comparison with fsverity digest)",
            "inputs::inputs_without_a_size_are_refused_up_front_where_hashing_has_no_end (its comparison with fsverity digest)",
            "inputs::non_utf8_file_names_are_printed_as_their_bytes_like_fsverity_digest_and_veritysetup (its comparison with fsverity digest)",
        ],
    ),
    (
        Tool::Veritysetup,
        &[
            "verity::veritysetup::matches_veritysetup",
            "verity::veritysetup::the_library_reader_reads_veritysetup_trees_and_refuses_a_flipped_bit",
            "verity::veritysetup::random_defaults_and_cross_verification",
            "verity::damage::tampered_images_never_verify (its comparison with veritysetup)",
            "verity::fec::fec_matches_veritysetup_format",
            "verity::fec::fec_verify_and_repair (its comparison with veritysetup)",
            "verity::veritysetup::dump_matches_veritysetup_and_json_says_the_same (its comparison with veritysetup)",
            "verity::veritysetup::every_hash_matches_veritysetup (its comparison with veritysetup)",
            "verity::veritysetup::hash_names_are_stored_and_printed_as_given_like_veritysetup (its comparison with veritysetup)",
            "verity::fsverity::a_file_larger_than_one_mapping_window",
            "inputs::inputs_without_a_size_are_refused_up_front_where_hashing_has_no_end (its comparison with veritysetup)",
            "inputs::verity_format_of_a_block_device_onto_itself_refuses_an_overlap_and_allows_an_offset_past_the_data (its check with veritysetup)",
            "inputs::fec_verify_of_a_block_device_without_a_superblock_corrects_it_like_veritysetup (its comparison with veritysetup)",
            "inputs::non_utf8_file_names_are_printed_as_their_bytes_like_fsverity_digest_and_veritysetup (its comparison with veritysetup)",
        ],
    ),
    (
        Tool::Cryptsetup,
        &[
            "luks::cryptsetup::mdu_images_open_dump_and_decrypt_in_cryptsetup",
            "luks::cryptsetup::cryptsetup_encrypted_images_decrypt_to_the_original",
            "luks::cryptsetup::luks_format_images_unlock_and_match_plain_mode",
            "luks::cryptsetup::keyslots_added_and_killed_by_cryptsetup_are_honoured",
            "luks::keyslots::each_verb_of_either_tool_is_honoured_by_the_other",
            "luks::keyslots::mdu_places_keyslots_where_cryptsetup_does",
            "luks::keyslots::a_kill_at_any_write_leaves_the_old_or_the_new_keyslots",
            "luks::keyslots::refusals_write_nothing",
            "luks::keyslots::the_new_passphrase_is_read_from_its_offset_and_size",
            "luks::luks1_verbs::luks1_keyslot_verbs_leave_the_slots_cryptsetup_leaves",
            "luks::luks1_verbs::luks1_header_verbs_match_cryptsetup",
            "luks::header::each_header_verb_interoperates_with_cryptsetup_both_ways",
            "luks::header::token_imports_cryptsetup_refuses_are_refused_by_mdu",
            "luks::header_crash::a_kill_at_any_header_write_leaves_the_old_or_the_new_header",
            "luks::cryptsetup::luks_format_writes_the_header_over_an_existing_image_only (its check with cryptsetup)",
            "luks::hostile::an_unbound_keyslot_opens_no_segment_and_dumps_only_with_unbound",
            "luks::hostile::hostile_headers_open_in_mdu_exactly_when_they_open_in_cryptsetup",
            "luks::hostile::a_segment_bound_to_two_digests_is_refused",
            "luks::reencrypt::interop::runs_of_either_tool_are_finished_by_the_other",
            "luks::reencrypt::crash::a_kill_at_any_sync_point_loses_nothing",
            "luks::reencrypt::interop::detached_headers_interoperate",
            "luks::reencrypt::interop::concurrent_reencryptions_exclude_each_other (its pairs with cryptsetup)",
            "luks::check::check_reports_leftovers_in_the_keyslots_area_and_wipes_them",
            "luks::cryptsetup::the_library_volume_reads_and_writes_what_cryptsetup_decrypts_and_encrypts",
            "luks::reencrypt::data_shift::an_encryption_with_a_data_shift_is_finished_by_either_tool",
            "luks::reencrypt::data_shift::a_decryption_that_moves_the_data_is_finished_by_either_tool",
            "luks::reencrypt::data_shift::a_backward_decryption_of_cryptsetup_is_finished_by_mdu",
            "luks::luks1::cryptsetup_luks1_images_dump_unlock_and_decrypt_in_mdu",
            "luks::luks1::mdu_luks1_images_open_dump_and_are_laid_out_as_in_cryptsetup",
            "luks::luks1::key_slots_added_or_killed_by_either_tool_are_honoured_by_the_other",
            "luks::luks1::conversions_match_cryptsetup_convert_both_ways",
            "luks::cost::the_keyslot_verbs_benchmark_to_iter_time_unless_forced",
            "luks::cost::luks1_format_benchmarks_to_iter_time_unless_forced",
            "luks::cost::reencrypt_benchmarks_the_new_keyslot_to_iter_time_unless_forced",
        ],
    ),
    (
        Tool::Strace,
        &[
            "luks::reencrypt::crash::a_kill_at_any_sync_point_loses_nothing",
            "luks::reencrypt::data_shift::an_encryption_with_a_data_shift_is_finished_by_either_tool",
            "luks::reencrypt::data_shift::a_decryption_that_moves_the_data_is_finished_by_either_tool",
            "luks::reencrypt::data_shift::a_backward_decryption_of_cryptsetup_is_finished_by_mdu",
            "luks::keyslots::a_kill_at_any_write_leaves_the_old_or_the_new_keyslots",
            "luks::header_crash::a_kill_at_any_header_write_leaves_the_old_or_the_new_header",
            "crypt::in_place::in_place_runs_killed_at_any_sync_point_resume_to_the_same_bytes",
            "outputs::signals::a_sigkill_while_the_output_is_named_leaves_no_temporary_file_for_long",
            "crypt::in_place::damaged_or_foreign_journals_are_refused_never_trusted",
            "crypt::in_place::a_second_in_place_run_on_one_image_is_refused_while_the_first_goes_on (its resume)",
            "safety::headers_and_journals_are_readable_by_their_owner_only (its journal)",
            "safety::the_same_command_again_goes_on_after_a_kill (its kill)",
            "safety::no_plaintext_or_old_keyslot_is_left_in_the_header_after_any_kill",
            "safety::a_damaged_luks2_journal_is_refused_never_copied_into_the_data",
        ],
    ),
    (
        Tool::PythonCryptography,
        &[
            "crypt::reference::matches_python_reference_for_every_mode",
            "crypt::reference::two_threads_match_reference_on_a_long_run",
            "luks::luks1::cryptsetup_luks1_images_dump_unlock_and_decrypt_in_mdu",
        ],
    ),
    (
        Tool::KernelFscrypt,
        &[
            "fscrypt::kernel::extract_and_ls_give_what_the_kernel_shows",
            "fscrypt::kernel::an_image_that_needs_journal_recovery_is_refused_until_replayed",
            "fscrypt::kernel::wrong_v1_keys_are_refused_by_ls_cat_and_extract",
            "fscrypt::extract::extract_keeps_holes_and_takes_the_space_cp_a_takes",
            "fscrypt::extract::extract_without_a_needed_key_writes_nothing",
            "fscrypt::extract::extract_recreates_fifos_and_devices_as_cp_a_does",
            "fscrypt::extract::extract_drops_setuid_and_setgid_bits",
            "fscrypt::extract::an_encrypted_file_flagged_inline_is_refused",
        ],
    ),
    (
        Tool::Python3,
        &["base64::round_trips_and_matches_python (its comparison with Python)"],
    ),
];

#[test]
fn reference_tools_of_the_interop_tests_are_installed() {
    tools::check_installed("mdu-cli", Search::PathOnly, &USES);
}
