//! The rule `move_whole_first`: when pages move to where a segment grows,
//! a free block whose wholly free pages cover all of it gives its pages
//! before the other free blocks of its pool; without it, the block at the
//! highest offset gives first, whole or not.
//!
//! Every scene: a mock device of 2 MiB granularity, 2 MiB pages, moving
//! without a driver budget. One segment is laid out as
//! `[a: 4 MiB free][x: 2 MiB live][c: 5 MiB free][y: 3 MiB live][unmapped]`:
//! `a` is two whole pages; `c` holds the whole pages at 6 and 8 MiB, and
//! shares the page at 10 MiB with `y`. A 6 MiB request then fits no free
//! block and grows the segment's end by three moved pages. Expectations
//! are hand-computed from those sizes.

use expanse_core::{DeviceAllocator, StreamId};
use expanse_mock::MockDevice;

#[path = "support/mock_scene.rs"]
mod mock_scene;
use mock_scene::{check, MIB};
const S0: StreamId = StreamId(0);

/// The scene under `move_whole_first:{rule}`: the device, the allocator,
/// the segment's base (where `a` was) and where `c` was.
fn scene(rule: &str) -> (std::sync::Arc<MockDevice>, DeviceAllocator, u64, u64) {
    let (device, mut alloc) = mock_scene::allocator(
        "min_grow_size_mb:2,max_page_size_mb:2,move_budget:1000000000,grow_fewest:True",
        &format!("move_whole_first:{rule}"),
    );
    let a = alloc.malloc(4 * MIB, S0).unwrap();
    let x = alloc.malloc(2 * MIB, S0).unwrap();
    let c = alloc.malloc(5 * MIB, S0).unwrap();
    let y = alloc.malloc(3 * MIB, S0).unwrap();
    assert_eq!((x - a, c - a, y - a), (4 * MIB, 6 * MIB, 11 * MIB), "laid out one after another");
    assert_eq!(alloc.reserved_bytes(), 14 * MIB, "seven 2 MiB pages");
    alloc.free(a).unwrap();
    alloc.free(c).unwrap();
    check(&device, &alloc);
    (device, alloc, a, c)
}

#[test]
fn whole_free_blocks_give_their_pages_first() {
    let (device, mut alloc, a, c) = scene("True");
    let p = alloc.malloc(6 * MIB, S0).unwrap();
    check(&device, &alloc);
    assert_eq!(p, a + 14 * MIB, "after y, at the segment's unmapped end");
    assert_eq!(alloc.reserved_bytes(), 14 * MIB, "three pages moved, none created");
    // a's two pages and c's top whole page (8 MiB) moved: c's 2 MiB at
    // its start is the only free 2 MiB block left mapped.
    assert_eq!(alloc.malloc(2 * MIB, S0).unwrap(), c);
    check(&device, &alloc);
}

#[test]
fn without_the_rule_the_highest_offset_gives_first() {
    let (device, mut alloc, a, _) = scene("False");
    let p = alloc.malloc(6 * MIB, S0).unwrap();
    check(&device, &alloc);
    assert_eq!(p, a + 14 * MIB);
    assert_eq!(alloc.reserved_bytes(), 14 * MIB, "three pages moved, none created");
    // c's two whole pages and a's top page (2 MiB) moved: a's 2 MiB at the
    // base is the only free 2 MiB block left mapped.
    assert_eq!(alloc.malloc(2 * MIB, S0).unwrap(), a);
    check(&device, &alloc);
}

#[test]
fn pytorch_modes_never_move_whatever_the_key_says() {
    // PyTorch's expandable segments create pages and never move them; the
    // key changes nothing there.
    for rule in ["True", "False"] {
        let (device, mut alloc) = mock_scene::allocator(
            "pytorch_compat:True,small_page_size_mb:2,large_page_size_mb:2",
            &format!("move_whole_first:{rule}"),
        );
        let a = alloc.malloc(4 * MIB, S0).unwrap();
        let _x = alloc.malloc(2 * MIB, S0).unwrap();
        alloc.free(a).unwrap();
        let p = alloc.malloc(6 * MIB, S0).unwrap();
        assert_eq!(p, a + 6 * MIB, "move_whole_first:{rule}: grown after x");
        assert_eq!(alloc.reserved_bytes(), 12 * MIB, "move_whole_first:{rule}: three new pages, a kept");
        check(&device, &alloc);
    }
}
