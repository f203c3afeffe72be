//! The moving policy's working set (`allocator/reuse.rs`), with
//! `move_reuse_window:128` (the setting for Llama-style generation): a free
//! page whose memory was allocated twice within the reuse window stays
//! where it is when a segment grows; memory allocated once, or reused long
//! ago, moves as before; a window of 0 (the default) moves everything.
//!
//! Every scenario: on a mock device of 2 MiB granularity, with pages of
//! 20 MiB (`min_grow_size_mb:20,max_page_size_mb:20`), `x` and `y`
//! (20 MiB each) grow the large pool's segment by one 20 MiB page each;
//! `x` is freed, so its page is wholly free, and then a 40 MiB request
//! does not fit anywhere and grows the segment after `y`. The driver
//! budget then allows exactly one move: 1.75 x (2 uniform 20 MiB pages x
//! 37.1 µs) = 129.85 µs, 74.2 µs spent on the two creates, 43.7 µs a move.

use std::sync::Arc;

use expanse_core::{DeviceAllocator, StreamId};
use expanse_mock::MockDevice;

#[path = "support/mock_scene.rs"]
mod mock_scene;
use mock_scene::MIB;
const S0: StreamId = StreamId(0);

struct Scene {
    device: Arc<MockDevice>,
    alloc: DeviceAllocator,
    y: u64,
    x_addr: u64,
}

fn check(s: &Scene) {
    mock_scene::check(&s.device, &s.alloc);
}

/// `x` and `y` allocated, `x` freed; `conf` on top of the default.
fn scene(conf: &str) -> Scene {
    // Small requests stay in the small pool (`small_from_large:False`), so
    // that `tick` never lands in x's free page.
    let (device, mut alloc) =
        mock_scene::allocator("min_grow_size_mb:20,max_page_size_mb:20,small_from_large:False", conf);
    let x = alloc.malloc(20 * MIB, S0).unwrap();
    let y = alloc.malloc(20 * MIB, S0).unwrap();
    assert_eq!(alloc.stats().pages.created, 2, "one 20 MiB page each");
    alloc.free(x).unwrap();
    let s = Scene { device, alloc, y, x_addr: x };
    check(&s);
    s
}

/// Allocate 20 MiB and free it `times` times: best fit puts each at `x`'s
/// address (the only free block that fits).
fn reuse_x(s: &mut Scene, times: usize) {
    for _ in 0..times {
        let p = s.alloc.malloc(20 * MIB, S0).unwrap();
        assert_eq!(p, s.x_addr);
        s.alloc.free(p).unwrap();
        check(s);
    }
}

/// `n` live 512-byte allocations (small pool, see `scene`): they advance the
/// allocation clock without touching the large pool.
fn tick(s: &mut Scene, n: usize) -> Vec<u64> {
    let v: Vec<u64> = (0..n).map(|_| s.alloc.malloc(512, S0).unwrap()).collect();
    check(s);
    v
}

/// The 40 MiB growth; returns the pages it moved.
fn grow(s: &mut Scene) -> u64 {
    let before = s.alloc.stats().pages.moved;
    let big = s.alloc.malloc(40 * MIB, S0).unwrap();
    check(s);
    let moved = s.alloc.stats().pages.moved - before;
    s.alloc.free(big).unwrap();
    s.alloc.free(s.y).unwrap();
    check(s);
    moved
}

#[test]
fn memory_reused_within_the_window_is_not_moved() {
    let mut s = scene("move_reuse_window:128");
    reuse_x(&mut s, 2);
    assert_eq!(grow(&mut s), 0, "x's page was allocated three times in the last three allocations");
    // The growth created its 40 MiB instead: two more 20 MiB pages.
    assert_eq!(s.alloc.stats().pages.created, 4);
}

#[test]
fn memory_allocated_once_moves() {
    let mut s = scene("move_reuse_window:128");
    assert_eq!(grow(&mut s), 1, "x's page was allocated once: it moves");
}

/// `x` reused once, then `ticks` small allocations, then the growth:
/// the pages it moved.
fn moved_after_reuse_and(ticks: usize) -> u64 {
    let mut s = scene("move_reuse_window:128");
    reuse_x(&mut s, 1);
    let small = tick(&mut s, ticks);
    let moved = grow(&mut s);
    for p in small {
        s.alloc.free(p).unwrap();
    }
    check(&s);
    moved
}

#[test]
fn memory_allocated_twice_moves_when_the_earlier_time_is_outside_the_window() {
    // x at allocation 1 (y at 2), its reuse at 3; 125 more allocations
    // put the growth at allocation 129: the earlier of x's two last
    // allocations (1) is 128 allocations back, inside the window ...
    assert_eq!(moved_after_reuse_and(125), 0);
    // ... and one allocation more puts it 129 allocations back: moved.
    assert_eq!(moved_after_reuse_and(126), 1);
}

#[test]
fn a_window_of_zero_moves_the_working_set_too() {
    let mut s = scene("move_reuse_window:0");
    reuse_x(&mut s, 2);
    assert_eq!(grow(&mut s), 1);
}

#[test]
fn the_default_moves_the_working_set_too() {
    let mut s = scene("");
    reuse_x(&mut s, 2);
    assert_eq!(grow(&mut s), 1);
}
