//! Which memory the running workload reuses.
//!
//! All of it only while the policy watches reuse (`move_reuse_window` >
//! 0; off by default). Every allocation ticks a clock. Every large-pool
//! allocation in an expandable segment stamps the granules (device
//! granularity, from the segment's base) it covers with the clock, keeping
//! the last two stamps.
//! Memory whose two last allocations both fall within the policy's reuse
//! window ([`crate::policy::MovePolicy::in_working_set`]) is part of the
//! workload's working set: it is freed and allocated again, so moving its
//! pages elsewhere only moves the next growth to where they are needed
//! again (`docs/policy-study.md`, third round).
//!
//! Stamps belong to addresses, not to physical pages: memory moved to a
//! new place starts there unstamped.
#![forbid(unsafe_code)]

use super::DeviceAllocator;
use crate::block::BlockId;

impl DeviceAllocator {
    /// Allocated block `id` covers its memory now.
    pub(super) fn stamp_reuse(&mut self, id: BlockId) {
        let b = self.blocks.get(id);
        let Some(slot) = b.segment.slot() else { return };
        let Some(seg) = self.segments[slot].as_ref() else { return };
        let (offset, size) = (b.addr - seg.base(), b.size);
        self.reuse.stamp(slot, offset, size, self.device.granularity());
    }

    /// Whether the free page `[addr, addr + size)` of segment `slot` is in
    /// the workload's working set, which the policy does not move.
    pub(super) fn in_working_set(&self, slot: usize, addr: u64, size: u64) -> bool {
        if !self.policy.moving.watches_reuse() {
            return false;
        }
        let Some(seg) = self.segments[slot].as_ref() else { return false };
        let reused_at = self.reuse.reused_at(slot, addr - seg.base(), size, self.device.granularity());
        self.policy.moving.in_working_set(reused_at, self.reuse.now())
    }
}

/// The allocation clock and the stamps of every expandable segment.
#[derive(Debug, Default)]
pub(super) struct ReuseStamps {
    /// Allocations so far (the first is 1; 0 means "never").
    clock: u64,
    /// Per segment slot, per granule from the segment's base: the clock of
    /// the last and the previous allocation that covered it.
    segments: Vec<Vec<[u64; 2]>>,
}

impl ReuseStamps {
    /// One more allocation.
    pub(super) fn tick(&mut self) {
        self.clock += 1;
    }

    /// The allocation clock.
    pub(super) fn now(&self) -> u64 {
        self.clock
    }

    /// Granules `[first, end)` of `[offset, offset + size)`, `granule` bytes each.
    fn granules(offset: u64, size: u64, granule: u64) -> (usize, usize) {
        let first = offset / granule;
        let end = (offset + size).div_ceil(granule);
        (first as usize, end as usize)
    }

    /// The allocation now covers `[offset, offset + size)` of segment `slot`.
    pub(super) fn stamp(&mut self, slot: usize, offset: u64, size: u64, granule: u64) {
        if self.segments.len() <= slot {
            self.segments.resize_with(slot + 1, Vec::new);
        }
        let (first, end) = Self::granules(offset, size, granule);
        let stamps = &mut self.segments[slot];
        if stamps.len() < end {
            stamps.resize(end, [0, 0]);
        }
        let now = self.clock;
        for s in &mut stamps[first..end] {
            *s = [now, s[0]];
        }
    }

    /// The latest previous-to-last allocation of any granule of
    /// `[offset, offset + size)` in segment `slot` (0: no granule was
    /// allocated twice).
    pub(super) fn reused_at(&self, slot: usize, offset: u64, size: u64, granule: u64) -> u64 {
        let Some(stamps) = self.segments.get(slot) else {
            return 0;
        };
        let (first, end) = Self::granules(offset, size, granule);
        let end = end.min(stamps.len());
        stamps.get(first..end).map_or(0, |s| s.iter().map(|g| g[1]).max().unwrap_or(0))
    }

    /// Segment `slot` is new: nothing of it was allocated yet.
    pub(super) fn forget(&mut self, slot: usize) {
        if let Some(s) = self.segments.get_mut(slot) {
            s.clear();
        }
    }

    /// Whether every stamp is at most the clock and the last at least the
    /// previous (for `check_invariants`).
    pub(super) fn consistent(&self) -> bool {
        self.segments.iter().flatten().all(|&[last, prev]| last <= self.clock && prev <= last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 2 << 20;

    #[test]
    fn a_granule_reused_twice_reports_its_previous_allocation() {
        let mut r = ReuseStamps::default();
        r.tick(); // 1
        r.stamp(0, 0, 3 * G, G); // granules 0..3 at 1
        r.tick(); // 2
        r.tick(); // 3
        r.stamp(0, G + 5, 10, G); // granule 1 at 3 (previous 1)
        assert_eq!(r.reused_at(0, 0, G, G), 0, "granule 0 allocated once");
        assert_eq!(r.reused_at(0, G, G, G), 1, "granule 1: previous allocation at 1");
        assert_eq!(r.reused_at(0, 0, 3 * G, G), 1);
        assert_eq!(r.reused_at(0, 5 * G, G, G), 0, "never stamped");
        assert_eq!(r.reused_at(1, 0, G, G), 0, "another segment");
        assert!(r.consistent());
        r.forget(0);
        assert_eq!(r.reused_at(0, G, G, G), 0, "a new segment in the slot starts clean");
    }
}
