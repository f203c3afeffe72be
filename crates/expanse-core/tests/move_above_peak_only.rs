//! The rule `move_above_peak_only`: pages move only for the bytes a
//! growth takes the device's reserved memory above the most it has ever
//! reserved; below that mark a growth gets new pages.
//!
//! Every scene: a mock device of 2 MiB granularity, 2 MiB pages, moving
//! without a driver budget. One segment is laid out as
//! `[a: 4 MiB][x: 2 MiB live][c: 5 MiB][y: 3 MiB live][z: 6 MiB]` (20 MiB
//! reserved, the high-water mark); `z` is freed and `empty_cache` gives its
//! three pages back (14 MiB reserved); then `a` and `c` are freed: `a` is
//! two whole free pages, `c` holds the whole pages at 6 and 8 MiB and
//! shares the page at 10 MiB with `y`. Expectations are hand-computed from
//! those sizes.

use expanse_core::{DeviceAllocator, StreamId};
use expanse_mock::MockDevice;

#[path = "support/mock_scene.rs"]
mod mock_scene;
use mock_scene::{check, MIB};
const S0: StreamId = StreamId(0);

/// The scene under `move_above_peak_only:{rule}`: the device, the
/// allocator and the segment's base (where `a` was).
fn scene(rule: &str) -> (std::sync::Arc<MockDevice>, DeviceAllocator, u64) {
    let (device, mut alloc) = mock_scene::allocator(
        "min_grow_size_mb:2,max_page_size_mb:2,move_budget:1000000000,grow_fewest:True",
        &format!("move_above_peak_only:{rule}"),
    );
    let a = alloc.malloc(4 * MIB, S0).unwrap();
    let _x = alloc.malloc(2 * MIB, S0).unwrap();
    let c = alloc.malloc(5 * MIB, S0).unwrap();
    let _y = alloc.malloc(3 * MIB, S0).unwrap();
    let z = alloc.malloc(6 * MIB, S0).unwrap();
    assert_eq!((c - a, z - a), (6 * MIB, 14 * MIB), "laid out one after another");
    assert_eq!(alloc.reserved_bytes(), 20 * MIB, "ten 2 MiB pages");
    alloc.free(z).unwrap();
    alloc.empty_cache().unwrap();
    assert_eq!(alloc.reserved_bytes(), 14 * MIB, "z's three pages given back");
    alloc.free(a).unwrap();
    alloc.free(c).unwrap();
    check(&device, &alloc);
    (device, alloc, a)
}

/// Allocate `size` bytes, check the scene: the address and how many pages
/// moved for it.
fn grow(device: &MockDevice, alloc: &mut DeviceAllocator, size: u64) -> (u64, u64) {
    let moved = alloc.stats().pages.moved;
    let p = alloc.malloc(size, S0).unwrap();
    check(device, alloc);
    (p, alloc.stats().pages.moved - moved)
}

#[test]
fn below_the_high_water_mark_a_growth_creates_its_pages() {
    let (device, mut alloc, a) = scene("True");
    assert_eq!(grow(&device, &mut alloc, 6 * MIB), (a + 14 * MIB, 0), "where z was, after y; nothing moved");
    assert_eq!(alloc.reserved_bytes(), 20 * MIB, "three new pages: back at the mark, not above it");
    // a's free pages stayed where they were.
    assert_eq!(grow(&device, &mut alloc, 4 * MIB), (a, 0));
}

#[test]
fn above_the_mark_only_the_excess_moves() {
    let (device, mut alloc, a) = scene("True");
    // 14 + 8 = 22 MiB: 2 MiB above the mark of 20; one page moves for it.
    assert_eq!(grow(&device, &mut alloc, 8 * MIB), (a + 14 * MIB, 1));
    assert_eq!(alloc.reserved_bytes(), 20 * MIB, "three new pages; the peak stays at 20 MiB");
}

#[test]
fn without_the_rule_free_pages_move_below_the_mark_too() {
    let (device, mut alloc, a) = scene("False");
    assert_eq!(grow(&device, &mut alloc, 6 * MIB), (a + 14 * MIB, 3), "three pages moved");
    assert_eq!(alloc.reserved_bytes(), 14 * MIB, "none created");
    assert_eq!(grow(&device, &mut alloc, 8 * MIB), (a + 20 * MIB, 1), "after p");
    assert_eq!(alloc.reserved_bytes(), 20 * MIB, "one more page moved, three created");
}
