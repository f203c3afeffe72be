//! The statistics while several lanes are out (`caching.rs`).
//!
//! A lane request changes only the counters of allocations, active blocks
//! and bytes, split blocks and bytes, allocated and requested bytes (each
//! for both pools and its own pool) and oversize allocations, and adds
//! cross-stream waits. Their current values and peaks must follow one
//! order of the requests, so they sit behind one lock, packed by pool so
//! that a request writes two or three cache lines there
//! ([`SharedCounters`]). Totals (`allocated`, `freed`) and waits are sums:
//! each lane keeps its own ([`LaneTotals`]), added to the device's when
//! the parts come back.
#![forbid(unsafe_code)]

use crate::stats::{DeviceStats, PoolStats, Stat};

/// Counters a lane request changes: seven per pool kind (`all`, small,
/// large), then oversize allocations.
pub const COUNTERS: usize = 22;

/// The counters a lane request changes, in [`COUNTERS`] order.
fn counters(s: &mut DeviceStats) -> [&mut Stat; COUNTERS] {
    let [a, b, c, d, e, f, g] = [
        &mut s.allocation,
        &mut s.active,
        &mut s.inactive_split,
        &mut s.allocated_bytes,
        &mut s.active_bytes,
        &mut s.inactive_split_bytes,
        &mut s.requested_bytes,
    ]
    .map(|p: &mut PoolStats| [&mut p.all, &mut p.small_pool, &mut p.large_pool]);
    let [a0, a1, a2] = a;
    let [b0, b1, b2] = b;
    let [c0, c1, c2] = c;
    let [d0, d1, d2] = d;
    let [e0, e1, e2] = e;
    let [f0, f1, f2] = f;
    let [g0, g1, g2] = g;
    [a0, b0, c0, d0, e0, f0, g0, a1, b1, c1, d1, e1, f1, g1, a2, b2, c2, d2, e2, f2, g2, &mut s.oversize_allocations]
}

/// Current values and peaks of the [`COUNTERS`], shared by the lanes out.
#[derive(Clone, Debug, Default)]
pub struct SharedCounters {
    current: [i64; COUNTERS],
    peak: [i64; COUNTERS],
}

/// One lane request's changes to current values and peaks: `(counter,
/// change of the current value, largest prefix of changes ending on an
/// increase)`, as [`Stat::absorb`] takes them.
#[derive(Debug)]
pub struct Changes {
    list: [(u8, i64, i64); COUNTERS],
    len: usize,
}

impl SharedCounters {
    /// The current values and peaks of `s`.
    pub fn of(s: &mut DeviceStats) -> Self {
        let mut c = SharedCounters::default();
        for (i, st) in counters(s).into_iter().enumerate() {
            (c.current[i], c.peak[i]) = (st.current, st.peak);
        }
        c
    }

    /// Write the current values and peaks back into `s`.
    pub fn write_to(&self, s: &mut DeviceStats) {
        for (i, st) in counters(s).into_iter().enumerate() {
            (st.current, st.peak) = (self.current[i], self.peak[i]);
        }
    }

    /// Apply one request's changes, as [`Stat::absorb`] would.
    #[inline]
    pub fn apply(&mut self, changes: &Changes) {
        for &(i, current, peak) in &changes.list[..changes.len] {
            let i = usize::from(i);
            self.peak[i] = self.peak[i].max(self.current[i] + peak);
            self.current[i] += current;
        }
    }
}

/// A lane's totals since its part was lent.
#[derive(Clone, Debug, Default)]
pub struct LaneTotals {
    allocated: [i64; COUNTERS],
    freed: [i64; COUNTERS],
    cross_stream_waits: u64,
}

impl LaneTotals {
    /// Take one request's changes, recorded from zero in `delta` (left all
    /// zero): totals here, current values and peaks returned.
    #[inline]
    pub fn record(&mut self, delta: &mut DeviceStats) -> Changes {
        let mut changes = Changes { list: [(0, 0, 0); COUNTERS], len: 0 };
        for (i, d) in counters(delta).into_iter().enumerate() {
            if *d != Stat::default() {
                self.allocated[i] += d.allocated;
                self.freed[i] += d.freed;
                changes.list[changes.len] = (i as u8, d.current, d.peak);
                changes.len += 1;
                *d = Stat::default();
            }
        }
        self.cross_stream_waits += std::mem::take(&mut delta.cross_stream_waits);
        changes
    }

    /// Add the totals to `s`, and start again from zero.
    pub fn add_to(&mut self, s: &mut DeviceStats) {
        for (i, st) in counters(s).into_iter().enumerate() {
            st.allocated += self.allocated[i];
            st.freed += self.freed[i];
        }
        s.cross_stream_waits += self.cross_stream_waits;
        *self = LaneTotals::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::PoolKind;

    /// Two lanes' requests, interleaved, through the shared counters and
    /// the lanes' totals, give exactly the statistics the same requests
    /// make on one `DeviceStats`, peaks included.
    #[test]
    fn lanes_and_shared_counters_equal_one_state() {
        let mut direct = DeviceStats::default();
        direct.allocated_bytes.increase(PoolKind::Large, 1000);
        direct.oversize_allocations.increase(1);
        let mut whole = direct.clone();
        let mut shared = SharedCounters::of(&mut whole);
        let mut lanes = [LaneTotals::default(), LaneTotals::default()];
        let mut x = 5u64;
        for step in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let (r, lane) = (x >> 33, step % 2);
            let pool = if r % 3 == 0 { PoolKind::Small } else { PoolKind::Large };
            let n = (r >> 4) % 5000;
            let mut delta = DeviceStats::default();
            for s in [&mut direct, &mut delta] {
                // A request: one counter up, another down, then up again.
                s.allocated_bytes.increase(pool, n);
                s.active.decrease(pool, r % 3);
                s.active.increase(pool, (r >> 8) % 4);
                s.inactive_split_bytes.increase(pool, n / 3);
                s.cross_stream_waits += r % 2;
            }
            let changes = lanes[lane].record(&mut delta);
            assert_eq!(delta, DeviceStats::default(), "recorded changes are taken");
            shared.apply(&changes);
        }
        shared.write_to(&mut whole);
        for l in &mut lanes {
            l.add_to(&mut whole);
        }
        assert_eq!(whole, direct);
    }
}
