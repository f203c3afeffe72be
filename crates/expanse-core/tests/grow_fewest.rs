//! The rule `grow_fewest`: a growth maps the unmapped stretch of its
//! segment that needs the fewest new bytes, the free mapped blocks next to
//! it covering the rest; without it (PyTorch's rule) the lowest stretch
//! that can hold the request.
//!
//! Every scene: a mock device of 2 MiB granularity, 2 MiB pages, no page
//! moving (growth maps new pages only). One segment is laid out as
//! `[16 MiB unmapped][b: 2 MiB live][f: 8 MiB free][unmapped to its end]`
//! (`a` of 16 MiB freed and released by `empty_cache`, `f` freed after).
//! Expectations are hand-computed from those sizes.

use std::sync::Arc;

use expanse_core::{Config, DeviceAllocator, StreamId};
use expanse_mock::MockDevice;

#[path = "support/mock_scene.rs"]
mod mock_scene;
use mock_scene::MIB;
const S0: StreamId = StreamId(0);

struct Scene {
    device: Arc<MockDevice>,
    alloc: DeviceAllocator,
    /// Where `a` was: the segment's base.
    a: u64,
    /// The free 8 MiB block before the segment's unmapped end.
    f: u64,
}

fn check(s: &Scene) {
    mock_scene::check(&s.device, &s.alloc);
}

fn scene(conf: &str) -> Scene {
    let (device, mut alloc) = mock_scene::allocator("min_grow_size_mb:2,max_page_size_mb:2,move_budget:0", conf);
    let a = alloc.malloc(16 * MIB, S0).unwrap();
    let b = alloc.malloc(2 * MIB, S0).unwrap();
    let f = alloc.malloc(8 * MIB, S0).unwrap();
    assert_eq!((b - a, f - a), (16 * MIB, 18 * MIB), "laid out one after another");
    alloc.free(a).unwrap();
    alloc.empty_cache().unwrap();
    alloc.free(f).unwrap();
    assert_eq!(alloc.reserved_bytes(), 10 * MIB, "b and f mapped, a's 16 MiB released");
    let s = Scene { device, alloc, a, f };
    check(&s);
    s
}

#[test]
fn growth_maps_where_the_fewest_new_bytes_are_needed() {
    let mut s = scene("grow_fewest:True");
    let p = s.alloc.malloc(12 * MIB, S0).unwrap();
    check(&s);
    assert_eq!(p, s.f, "f's 8 MiB and 4 MiB mapped after it");
    assert_eq!(s.alloc.reserved_bytes(), 14 * MIB);
    // Freed, it is one 12 MiB free block again: a second request of that
    // size maps nothing.
    s.alloc.free(p).unwrap();
    assert_eq!(s.alloc.malloc(12 * MIB, S0).unwrap(), s.f);
    assert_eq!(s.alloc.reserved_bytes(), 14 * MIB);
    check(&s);
}

#[test]
fn without_the_rule_growth_maps_the_lowest_stretch_that_fits() {
    let mut s = scene("grow_fewest:False");
    let p = s.alloc.malloc(12 * MIB, S0).unwrap();
    check(&s);
    assert_eq!(p, s.a, "12 of the 16 unmapped MiB at the segment's base");
    assert_eq!(s.alloc.reserved_bytes(), 22 * MIB);
}

#[test]
fn a_stretch_too_short_is_passed_over_whatever_it_would_save() {
    // 18 MiB: the base's 16 unmapped MiB cannot hold it (b follows them);
    // both rules grow after f (10 MiB new).
    for rule in ["True", "False"] {
        let mut s = scene(&format!("grow_fewest:{rule}"));
        assert_eq!(s.alloc.malloc(18 * MIB, S0).unwrap(), s.f, "grow_fewest:{rule}");
        assert_eq!(s.alloc.reserved_bytes(), 20 * MIB, "grow_fewest:{rule}");
        check(&s);
    }
}

#[test]
fn on_equal_new_bytes_the_lowest_address_wins() {
    // With f taken again (8 MiB, nothing new), 16 MiB needs 16 new MiB
    // at the base and 16 after f: a tie, the base.
    let mut s = scene("grow_fewest:True");
    let held = s.alloc.malloc(8 * MIB, S0).unwrap();
    assert_eq!(held, s.f, "f reused as it is");
    let p = s.alloc.malloc(16 * MIB, S0).unwrap();
    check(&s);
    assert_eq!(p, s.a, "16 new MiB at the base or after f: the base");
    assert_eq!(s.alloc.reserved_bytes(), 26 * MIB);
}

#[test]
fn pytorchs_expandable_mode_keeps_its_rule() {
    // PyTorch-expandable mode ignores the key (its policy is PyTorch's),
    // as it does every expanse-only key; the layout needs 2 MiB pages there.
    let mut s = scene("pytorch_compat:True,large_page_size_mb:2,grow_fewest:True");
    assert_eq!(s.alloc.malloc(12 * MIB, S0).unwrap(), s.a);
    assert_eq!(s.alloc.reserved_bytes(), 22 * MIB);
    check(&s);
}

#[test]
fn a_bad_value_is_refused_by_name() {
    let e = Config::parse("grow_fewest:maybe").unwrap_err().to_string();
    assert!(e.contains("grow_fewest") && e.contains("True or False"), "{e}");
}
