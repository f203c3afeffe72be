//! Unit tests of `stats.rs`.
use super::*;

#[test]
fn stat_tracks_peak_and_totals() {
    let mut s = Stat::default();
    s.increase(10);
    s.increase(5);
    s.decrease(12);
    assert_eq!((s.current, s.peak, s.allocated, s.freed()), (3, 15, 15, 12));
    s.reset_peak();
    assert_eq!(s.peak, 3);
}

/// The grouped counts of the hot path change every counter as the
/// counter-by-counter calls do, in both pools, peaks included.
#[test]
fn grouped_counts_match_counter_by_counter() {
    let (mut grouped, mut single) = (DeviceStats::default(), DeviceStats::default());
    let mut x = 5u64;
    for step in 0..4000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let r = x >> 33;
        let pool = if r.is_multiple_of(2) { PoolKind::Small } else { PoolKind::Large };
        let (size, requested) = ((r % 977 + 1) << 9, r % 5000 + 1);
        let (d_blocks, d_bytes) = ((r % 5) as i64 - 2, (r % 7) as i64 * 512 - 1536);
        let expandable = r.is_multiple_of(3);
        match step % 3 {
            0 => {
                grouped.count_hand_out(pool, size, requested);
                single.allocation.increase(pool, 1);
                single.allocated_bytes.increase(pool, size);
                single.active.increase(pool, 1);
                single.active_bytes.increase(pool, size);
                single.requested_bytes.increase(pool, requested);
            }
            1 => {
                grouped.count_user_free(pool, size);
                single.allocation.decrease(pool, 1);
                single.allocated_bytes.decrease(pool, size);
            }
            _ => {
                grouped.count_free(pool, expandable, (d_blocks, d_bytes), size, requested);
                if !expandable {
                    for (s, d) in [(&mut single.inactive_split, d_blocks), (&mut single.inactive_split_bytes, d_bytes)]
                    {
                        if d > 0 {
                            s.increase(pool, d as u64);
                        } else if d < 0 {
                            s.decrease(pool, (-d) as u64);
                        }
                    }
                }
                single.active.decrease(pool, 1);
                single.active_bytes.decrease(pool, size);
                single.requested_bytes.decrease(pool, requested);
            }
        }
        assert_eq!(grouped, single, "step {step}");
    }
    assert!(single.allocation.small_pool.peak > 0 && single.active_bytes.large_pool.peak > 0);
}

/// A counter kept the plain way: every field written at every change.
#[derive(Default, Debug, PartialEq)]
struct Plain {
    current: i64,
    peak: i64,
    allocated: i64,
    freed: i64,
}

fn observed(s: Stat) -> Plain {
    Plain { current: s.current, peak: s.peak, allocated: s.allocated, freed: s.freed() }
}

/// Both pools together, and every total removed, are derived rather
/// than stored; under random changes and resets they read exactly as
/// counters written at every change do.
#[test]
fn derived_counters_read_as_stored_ones() {
    let mut p = PoolStats::default();
    let mut plain: [Plain; 3] = Default::default(); // all, small, large
    let mut x = 11u64;
    for step in 0..20_000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let r = x >> 33;
        let (pool, i) = if r.is_multiple_of(2) { (PoolKind::Small, 1) } else { (PoolKind::Large, 2) };
        let amount = r % 1000;
        match r % 23 {
            0 => {
                p.reset_peaks();
                for c in &mut plain {
                    c.peak = c.current;
                }
            }
            1 => {
                p.reset_totals();
                for c in &mut plain {
                    c.allocated = 0;
                    c.freed = 0;
                }
            }
            k if k < 13 || plain[i].current < amount as i64 => {
                p.increase(pool, amount);
                for j in [0, i] {
                    plain[j].current += amount as i64;
                    plain[j].allocated += amount as i64;
                    plain[j].peak = plain[j].peak.max(plain[j].current);
                }
            }
            _ => {
                p.decrease(pool, amount);
                for j in [0, i] {
                    plain[j].current -= amount as i64;
                    plain[j].freed += amount as i64;
                }
            }
        }
        let got = [observed(p.all()), observed(p.small_pool), observed(p.large_pool)];
        assert_eq!(got, plain, "step {step}");
    }
    // The sequence reached what it tests: a peak of both pools below
    // the sum of the pools' peaks, and totals after a reset.
    assert!(p.all().peak < p.small_pool.peak + p.large_pool.peak);
    assert!(p.all().freed() > 0);
}

/// `reset_accumulated` zeroes the oversize counters' totals too, as
/// PyTorch's `resetAccumulatedStats` does
/// (`reset_accumulated_stat(stats.oversize_allocations)` and
/// `oversize_segments`), leaving their current values and peaks.
#[test]
fn reset_accumulated_covers_the_oversize_counters() {
    let mut st = DeviceStats::default();
    st.oversize_allocations.increase(3);
    st.oversize_allocations.decrease(1);
    st.oversize_segments.increase(2);
    st.reset_accumulated();
    for s in [st.oversize_allocations, st.oversize_segments] {
        assert_eq!((s.allocated, s.freed()), (0, 0));
    }
    assert_eq!((st.oversize_allocations.current, st.oversize_allocations.peak), (2, 3));
    st.oversize_allocations.decrease(2);
    assert_eq!(st.oversize_allocations.freed(), 2);
}

#[test]
fn keys_match_pytorch_spelling() {
    let st = DeviceStats::default();
    let keys: Vec<_> = st.to_pairs().into_iter().map(|(k, _)| k).collect();
    for k in [
        "reserved_bytes.all.peak",
        "allocated_bytes.small_pool.current",
        "inactive_split.large_pool.freed",
        "num_alloc_retries",
        "num_ooms",
        "oversize_segments.peak",
    ] {
        assert!(keys.iter().any(|x| x == k), "missing {k}");
    }
    assert!(st.to_json().starts_with("{\"allocation.all.current\":0"));
}
