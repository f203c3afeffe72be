//! Unit tests of the policies' decisions, with hand-computed figures.
use super::*;
use crate::config::MIB;
use crate::cost::CostState;

fn state(spent_us: f64) -> CostState {
    CostState {
        high_water_small: 0,
        high_water_large: 200 * MIB,
        allocated_small: 0,
        allocated_large: 200 * MIB,
        devices: 1,
        spent_us,
    }
}

#[test]
fn modes_pick_their_policies() {
    let c = Config::default();
    assert_eq!(Policy::from_config(&c), Policy::expanse(&c));
    let native = Config::pytorch_native();
    assert_eq!(Policy::from_config(&native).segments, SegmentPolicy::Classic);
    let p = Policy::from_config(&Config::pytorch_expandable());
    assert_eq!(p.moving, MovePolicy::Never);
    assert!(!p.lending.lends());
    assert_eq!(p.pages.unit(PoolKind::Large, 2 * MIB), 20 * MIB);
    assert_eq!(Policy::expanse(&c).pages.unit(PoolKind::Large, 2 * MIB), 2 * MIB);
}

/// Budget 1.75 x (10 uniform 20 MiB pages x 37.1 µs) = 649.25 µs; a
/// move costs 43.7 µs.
#[test]
fn moves_stop_at_the_budget() {
    let moving = Policy::expanse(&Config::default()).moving;
    assert_eq!(moving.moves_allowed(&state(0.0)), 14); // 649.25 / 43.7
    assert_eq!(moving.moves_allowed(&state(600.0)), 1); // 49.25 / 43.7
    assert_eq!(moving.moves_allowed(&state(700.0)), 0);
    assert_eq!(MovePolicy::Never.moves_allowed(&state(0.0)), 0);
}

/// Reserved high-water marks twice the allocated peak (moving left
/// holes): the budget of the marks, 1.75 x 20 pages x 37.1 µs =
/// 1298.5 µs, would allow 29 moves of 43.7 µs; the floor, 2 x 10 pages
/// x 37.1 µs = 742 µs, allows 16. With `move_budget:100` the floor's
/// multiple is 100 too: 100 x 10 x 37.1 = 37,100 µs, 848 moves.
#[test]
fn moves_stop_at_twice_what_the_allocated_peak_costs() {
    let inflated = CostState { high_water_large: 400 * MIB, ..state(0.0) };
    let moving = Policy::expanse(&Config::default()).moving;
    assert_eq!(moving.moves_allowed(&inflated), 16);
    let lavish = Policy::expanse(&Config::parse("move_budget:100").unwrap()).moving;
    assert_eq!(lavish.moves_allowed(&inflated), 848);
    // Reserved equal to allocated: the first bound is the lower one.
    assert_eq!(moving.moves_allowed(&state(0.0)), 14);
}

/// A window of 128: memory allocated twice, the earlier time 128
/// allocations ago, is in the working set; 129 ago, or allocated only
/// once (0), it is not; a window of 0 keeps nothing.
#[test]
fn the_working_set_is_memory_reused_within_the_window() {
    let moving = Policy::expanse(&Config::parse("move_reuse_window:128").unwrap()).moving;
    assert!(moving.watches_reuse());
    assert!(moving.in_working_set(1000 - 128, 1000));
    assert!(!moving.in_working_set(1000 - 129, 1000));
    assert!(!moving.in_working_set(0, 100));
    let off = Policy::expanse(&Config::default()).moving;
    assert!(!off.watches_reuse(), "the default moves every free page");
    assert!(!off.in_working_set(999, 1000));
    assert!(!MovePolicy::Never.in_working_set(999, 1000));
}

/// `overshoot_share:32` with the budget spent (smallest page 20 MiB)
/// and a large pool that reached 320 MiB: the smallest page is at most
/// 320 / 32 = 10 MiB or the need, whichever is larger; without the
/// bound it stays 20 MiB.
#[test]
fn the_overshoot_bound_caps_the_smallest_page_by_the_pools_size() {
    let memory = DeviceMemory { free: 1 << 40, total: 1 << 40 };
    let spent = CostState { high_water_large: 320 * MIB, ..state(1e9) };
    let g = 2 * MIB;
    let min_page = |conf: &str, need: u64| {
        let pages = Policy::expanse(&Config::parse(conf).unwrap()).pages;
        pages.placement(PoolKind::Large, u64::MAX, need, g, g, &spent, memory).min_page
    };
    assert_eq!(min_page("overshoot_share:32", 2 * MIB), 10 * MIB);
    assert_eq!(min_page("overshoot_share:32", 16 * MIB), 16 * MIB);
    assert_eq!(min_page("overshoot_share:32", 30 * MIB), 20 * MIB);
    // 15 MiB rounds to the 2 MiB granularity first.
    assert_eq!(min_page("overshoot_share:32", 15 * MIB), 16 * MIB);
    assert_eq!(min_page("overshoot_share:0", 2 * MIB), 20 * MIB);
    // A pool under 64 MiB: the bound is the granularity.
    let small = CostState { high_water_large: 40 * MIB, ..spent };
    let pages = Policy::expanse(&Config::parse("overshoot_share:32").unwrap()).pages;
    assert_eq!(pages.placement(PoolKind::Large, u64::MAX, MIB, g, g, &small, memory).min_page, 2 * MIB);
}

/// Pages grow from 2 MiB towards 20 MiB as the budget is used.
#[test]
fn pages_grow_with_the_budget_used() {
    let pages = Policy::expanse(&Config::default()).pages;
    let g = 2 * MIB;
    assert_eq!(pages.grow_size(&state(0.0), 20 * MIB, g), 2 * MIB);
    // 11 pages after growth: budget 1.75 x 11 x 37.1 = 714.175 µs; half
    // of it used gives 2 + 18 / 2 = 11 MiB, rounded up to 12 MiB.
    assert_eq!(pages.grow_size(&state(714.175 / 2.0), 20 * MIB, g), 12 * MIB);
    assert_eq!(pages.grow_size(&state(1e9), 20 * MIB, g), 20 * MIB);
}

/// `move_above_peak_only`: a growth of 60 MiB with 100 MiB reserved and a
/// high-water mark of 140 MiB may take 20 MiB from moves (160 - 140); one
/// that stays at or below the mark none; one that starts at the mark all
/// of it. Without the rule every byte may come from moves, and PyTorch's
/// policies move nothing.
#[test]
fn moves_cover_only_the_bytes_above_the_high_water_mark() {
    let mut c = Config::default();
    let free_moves = Policy::expanse(&c).moving;
    c.move_above_peak_only = true;
    let above = Policy::expanse(&c).moving;
    assert_eq!(above.movable_bytes(60 * MIB, 100 * MIB, 140 * MIB), 20 * MIB);
    assert_eq!(above.movable_bytes(40 * MIB, 100 * MIB, 140 * MIB), 0);
    assert_eq!(above.movable_bytes(30 * MIB, 100 * MIB, 140 * MIB), 0);
    assert_eq!(above.movable_bytes(60 * MIB, 140 * MIB, 140 * MIB), 60 * MIB);
    assert_eq!(above.movable_bytes(u64::MAX, 100 * MIB, 140 * MIB), u64::MAX - 40 * MIB);
    assert_eq!(free_moves.movable_bytes(30 * MIB, 100 * MIB, 140 * MIB), 30 * MIB);
    assert_eq!(MovePolicy::Never.movable_bytes(60 * MIB, 100 * MIB, 140 * MIB), 0);
}
