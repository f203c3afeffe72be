//! Unit tests of `config.rs`: parsing, printing and their round trip.

use super::*;
use proptest::prelude::*;

fn power_of_two_or_zero() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), (0u32..8).prop_map(|k| 1u64 << k)]
}

fn page_size() -> impl Strategy<Value = u64> {
    (1u64..=512).prop_map(|n| 2 * n * MIB)
}

prop_compose! {
    fn any_config()(
        expandable_segments in any::<bool>(),
        pytorch_compat in any::<bool>(),
        max_split in prop_oneof![Just(None), (21u64..1 << 20).prop_map(Some)],
        rounding_mb in 0u64..1 << 20,
        divisions in proptest::array::uniform16(power_of_two_or_zero()),
        gc in prop_oneof![Just(0.0), 0.001f64..0.999],
        fraction in proptest::option::of(0.0f64..=1.0),
        pages in (page_size(), page_size(), page_size(), page_size()),
        move_budget in prop_oneof![Just(0.0), 0.0f64..100.0],
        move_reuse_window in prop_oneof![Just(0u64), 0u64..1 << 20],
        lend_across_streams in any::<bool>(),
        share_segments in any::<bool>(),
        small_from_large in any::<bool>(),
        grow_fewest in any::<bool>(),
        move_whole_first in any::<bool>(),
        move_above_peak_only in any::<bool>(),
        overshoot_share in prop_oneof![Just(0u64), 1u64..=1 << 20],
        release_mb in proptest::option::of(0u64..1 << 20),
    ) -> Config {
        Config {
            expandable_segments,
            pytorch_compat,
            max_split_size: max_split.map_or(u64::MAX, |mb| mb * MIB),
            max_non_split_rounding: rounding_mb * MIB,
            roundup_power2_divisions: divisions,
            garbage_collection_threshold: gc,
            per_process_memory_fraction: fraction,
            small_page_size: pages.0,
            large_page_size: pages.1,
            min_grow_size: pages.2.min(pages.3),
            max_page_size: pages.2.max(pages.3),
            move_budget,
            move_reuse_window,
            lend_across_streams,
            share_segments,
            small_from_large,
            grow_fewest,
            move_whole_first,
            move_above_peak_only,
            overshoot_share,
            release_threshold: release_mb.map(|mb| mb * MIB),
        }
    }
}

proptest! {
    #[test]
    fn conf_string_round_trips(c in any_config()) {
        let s = c.to_conf_string();
        prop_assert_eq!(Config::parse(&s), Ok(c), "{}", s);
    }
}

#[test]
fn conf_string_of_defaults_names_only_the_segments() {
    assert_eq!(Config::default().to_conf_string(), "expandable_segments:True");
    let c = Config::parse("move_budget:0.5,max_page_size_mb:8,roundup_power2_divisions:[64:8,>:1]").unwrap();
    let s = c.to_conf_string();
    assert!(s.contains("move_budget:0.5") && s.contains("max_page_size_mb:8"), "{s}");
    assert_eq!(Config::parse(&s).unwrap(), c);
}

#[test]
fn parses_pytorch_strings() {
    let c = Config::parse("expandable_segments:False,max_split_size_mb:128,garbage_collection_threshold:0.6").unwrap();
    assert!(!c.expandable_segments);
    assert_eq!(c.max_split_size, 128 * MIB);
    assert_eq!(c.garbage_collection_threshold, 0.6);
    let c = Config::parse("roundup_power2_divisions:[64:8,256:4,>:1],pytorch_compat:True").unwrap();
    assert!(c.pytorch_compat);
    assert_eq!(c.divisions_for(MIB), 8);
    assert_eq!(c.divisions_for(64 * MIB), 8);
    assert_eq!(c.divisions_for(128 * MIB), 0);
    assert_eq!(c.divisions_for(256 * MIB), 4);
    assert_eq!(c.divisions_for(512 * MIB), 1);
    assert_eq!(c.divisions_for(1 << 40), 1);
    let c = Config::parse("roundup_power2_divisions:4").unwrap();
    assert!(c.roundup_power2_divisions.iter().all(|d| *d == 4));
    assert_eq!(Config::default().release_threshold, None);
    let c = Config::parse("release_threshold_mb:512").unwrap();
    assert_eq!(c.release_threshold, Some(512 * MIB));
    assert!(c.to_conf_string().contains("release_threshold_mb:512"));
    assert_eq!(Config::parse("release_threshold_mb:0").unwrap().release_threshold, Some(0));
}

#[test]
fn unknown_key_is_named() {
    let e = Config::parse("expandable_segments:True,max_splitsize_mb:4").unwrap_err();
    assert_eq!(e, ConfigError::UnknownKey { key: "max_splitsize_mb".into() });
    assert!(e.to_string().contains("max_splitsize_mb"));
}

#[test]
fn bad_values_name_key_and_accepted_values() {
    for (s, key) in [
        ("expandable_segments:true", "expandable_segments"),
        ("expandable_segments:1", "expandable_segments"),
        ("lend_across_streams:no", "lend_across_streams"),
        ("max_split_size_mb:20", "max_split_size_mb"),
        ("max_split_size_mb:abc", "max_split_size_mb"),
        ("garbage_collection_threshold:1.0", "garbage_collection_threshold"),
        ("garbage_collection_threshold:0", "garbage_collection_threshold"),
        ("per_process_memory_fraction:1.5", "per_process_memory_fraction"),
        ("per_process_memory_fraction:-0.1", "per_process_memory_fraction"),
        ("per_process_memory_fraction:NaN", "per_process_memory_fraction"),
        ("garbage_collection_threshold:NaN", "garbage_collection_threshold"),
        ("max_split_size_mb:99999999999999999", "max_split_size_mb"),
        ("max_non_split_rounding_mb:-1", "max_non_split_rounding_mb"),
        ("pinned_num_register_threads:3", "pinned_num_register_threads"),
        ("pinned_num_register_threads:256", "pinned_num_register_threads"),
        ("pinned_num_register_threads:0", "pinned_num_register_threads"),
        ("roundup_power2_divisions:3", "roundup_power2_divisions"),
        ("roundup_power2_divisions:[65:4]", "roundup_power2_divisions"),
        ("large_page_size_mb:3", "large_page_size_mb"),
        ("move_budget:-1", "move_budget"),
        ("move_budget:inf", "move_budget"),
        ("move_budget:NaN", "move_budget"),
        ("small_page_size_mb:0", "small_page_size_mb"),
        ("max_page_size_mb:2097152", "max_page_size_mb"),
        ("move_reuse_window:-1", "move_reuse_window"),
        ("move_reuse_window:1e9", "move_reuse_window"),
        ("move_reuse_window:281474976710657", "move_reuse_window"),
        ("release_threshold_mb:-1", "release_threshold_mb"),
        ("release_threshold_mb:1.5", "release_threshold_mb"),
        ("release_threshold_mb:99999999999999", "release_threshold_mb"),
    ] {
        match Config::parse(s) {
            Err(ConfigError::BadValue { key: k, expected, .. }) => {
                assert_eq!(k, key, "{s}");
                assert!(!expected.is_empty());
            }
            other => panic!("{s}: {other:?}"),
        }
    }
    let e = Config::parse("expandable_segments:yes").unwrap_err().to_string();
    assert!(e.contains("True or False"), "{e}");
}

#[test]
fn apply_is_all_or_nothing() {
    let mut c = Config::default();
    assert!(c.apply("max_split_size_mb:64,bogus:1").is_err());
    assert_eq!(c, Config::default());
    c.apply("max_split_size_mb:64").unwrap();
    assert_eq!(c.max_split_size, 64 * MIB);
}

#[test]
fn syntax_errors_are_errors() {
    assert!(matches!(Config::parse("expandable_segments"), Err(ConfigError::Syntax { .. })));
    assert!(matches!(Config::parse("roundup_power2_divisions:[1:2"), Err(ConfigError::Syntax { .. })));
    assert!(matches!(Config::parse(":True"), Err(ConfigError::Syntax { .. })));
    assert_eq!(Config::parse("").unwrap(), Config::default());
}

#[test]
fn values_at_the_ends_of_each_range_are_accepted() {
    let c = Config::parse("max_split_size_mb:21,per_process_memory_fraction:0").unwrap();
    assert_eq!(c.max_split_size, 21 * MIB);
    assert_eq!(c.per_process_memory_fraction, Some(0.0));
    let c = Config::parse("per_process_memory_fraction:1,garbage_collection_threshold:0.999").unwrap();
    assert_eq!(c.per_process_memory_fraction, Some(1.0));
    assert_eq!(c.garbage_collection_threshold, 0.999);
    for n in ["1", "2", "128"] {
        assert!(Config::parse(&format!("pinned_num_register_threads:{n}")).is_ok(), "{n}");
    }
}
