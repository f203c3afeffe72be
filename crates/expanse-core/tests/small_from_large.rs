//! The rule `small_from_large`: a small request that finds no free
//! small-pool block takes a free large-pool block before the small pool
//! grows; without it (PyTorch's rule) the small pool maps a new page.
//!
//! Every scene: a mock device of 2 MiB granularity, 20 MiB large-pool
//! pages, no page moving (so that growth is the only way to new memory);
//! the small pool's one 2 MiB page is filled by two 1 MiB requests, and the
//! large pool holds `x` (20 MiB, freed) and `y` (20 MiB, live), one page
//! each. Expectations are hand-computed from those sizes.

use std::sync::Arc;

use expanse_core::{DeviceAllocator, PoolKind, StreamId};
use expanse_mock::MockDevice;

#[path = "support/mock_scene.rs"]
mod mock_scene;
use mock_scene::MIB;
const S0: StreamId = StreamId(0);
const S1: StreamId = StreamId(1);

struct Scene {
    device: Arc<MockDevice>,
    alloc: DeviceAllocator,
    x: u64,
}

fn check(s: &Scene) {
    mock_scene::check(&s.device, &s.alloc);
}

fn scene(conf: &str) -> Scene {
    let (device, mut alloc) = mock_scene::allocator("min_grow_size_mb:20,max_page_size_mb:20,move_budget:0", conf);
    for _ in 0..2 {
        alloc.malloc(MIB, S0).unwrap();
    }
    let x = alloc.malloc(20 * MIB, S0).unwrap();
    alloc.malloc(20 * MIB, S0).unwrap();
    alloc.free(x).unwrap();
    assert_eq!(alloc.reserved_bytes(), 42 * MIB, "one small page and two large ones");
    let s = Scene { device, alloc, x };
    check(&s);
    s
}

#[test]
fn a_small_request_takes_a_free_large_block_instead_of_a_new_page() {
    let mut s = scene("small_from_large:True");
    let p = s.alloc.malloc(4096, S0).unwrap();
    check(&s);
    assert_eq!(p, s.x, "the front of the freed 20 MiB block");
    assert_eq!(s.alloc.reserved_bytes(), 42 * MIB, "nothing mapped");
    let st = s.alloc.stats();
    assert_eq!(st.allocated_bytes.pool(PoolKind::Large).current, (20 * MIB + 4096) as i64, "counted in the large pool");
    assert_eq!(st.allocated_bytes.pool(PoolKind::Small).current, (2 * MIB) as i64);
    // Freed, it merges back: the whole 20 MiB fits there again.
    s.alloc.free(p).unwrap();
    check(&s);
    assert_eq!(s.alloc.malloc(20 * MIB, S0).unwrap(), s.x);
    assert_eq!(s.alloc.reserved_bytes(), 42 * MIB);
    check(&s);
}

#[test]
fn without_the_rule_the_small_pool_grows() {
    let mut s = scene("small_from_large:False");
    let p = s.alloc.malloc(4096, S0).unwrap();
    check(&s);
    assert!(!(s.x..s.x + 20 * MIB).contains(&p), "not in the large block");
    assert_eq!(s.alloc.reserved_bytes(), 44 * MIB, "a second 2 MiB small page");
}

#[test]
fn a_free_small_block_still_comes_first() {
    let mut s = scene("small_from_large:True");
    let a = s.alloc.malloc(1024, S0).unwrap(); // from x: the small pool is full
    assert_eq!(a, s.x);
    let small = s.alloc.malloc(MIB, S0).ok();
    assert_eq!(small, Some(s.x + 1024), "x again, after a");
    check(&s);
}

#[test]
fn the_smallest_large_block_that_fits_is_taken() {
    let mut s = scene("small_from_large:True");
    // A 20 MiB page of 16 + 4 MiB: freeing the 4 MiB block leaves a free
    // block smaller than x.
    let a = s.alloc.malloc(16 * MIB, S0).unwrap();
    let b = s.alloc.malloc(4 * MIB, S0).unwrap();
    assert_eq!((a, b), (s.x, s.x + 16 * MIB), "both in x's page");
    let c = s.alloc.malloc(20 * MIB, S0).unwrap(); // a new page after y
    s.alloc.free(b).unwrap();
    check(&s);
    let p = s.alloc.malloc(512, S0).unwrap();
    assert_eq!(p, b, "the 4 MiB block, not a 20 MiB one");
    assert_eq!(s.alloc.reserved_bytes(), 62 * MIB);
    for q in [p, a, c] {
        s.alloc.free(q).unwrap();
        check(&s);
    }
}

#[test]
fn another_streams_block_only_where_blocks_are_lent() {
    // A segment per stream, so that x stays stream 0's block.
    let mut lent = scene("small_from_large:True,share_segments:False");
    let p = lent.alloc.malloc(4096, S1).unwrap();
    check(&lent);
    assert_eq!(p, lent.x, "lent to stream 1 (after an event wait)");
    assert_eq!(lent.alloc.reserved_bytes(), 42 * MIB);

    let mut own = scene("small_from_large:True,lend_across_streams:False");
    let q = own.alloc.malloc(4096, S1).unwrap();
    check(&own);
    assert!(!(own.x..own.x + 20 * MIB).contains(&q), "stream 1 keeps to its own blocks");
    assert_eq!(own.alloc.reserved_bytes(), 44 * MIB, "a small page for stream 1");
}

#[test]
fn pytorch_modes_never_take_large_blocks() {
    for mode in ["expandable_segments:True,pytorch_compat:True", "expandable_segments:False"] {
        let (device, mut alloc) = mock_scene::allocator(mode, "small_from_large:True");
        let small: Vec<u64> = (0..2).map(|_| alloc.malloc(MIB, S0).unwrap()).collect();
        let x = alloc.malloc(20 * MIB, S0).unwrap();
        alloc.free(x).unwrap();
        let p = alloc.malloc(4096, S0).unwrap();
        mock_scene::check(&device, &alloc);
        assert!(!(x..x + 20 * MIB).contains(&p), "{mode}: a small request stays in the small pool");
        assert!(!small.contains(&p));
    }
}
