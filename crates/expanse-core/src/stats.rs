//! Statistics, with PyTorch's vocabulary.
//!
//! - *segment*: one device allocation of the classic allocator
//!   (`cudaMalloc`). Expandable segments are not counted as segments.
//! - *block*: a contiguous piece of a segment, allocated or free.
//! - *allocation*: a block handed to a user.
//! - *reserved*: device memory this allocator holds (classic segments plus
//!   mapped pages of expandable segments).
//! - *active*: blocks in use by a user or waiting for stream events.
//! - *inactive split*: free blocks of classic segments that are split.
//! - *requested*: bytes users asked for, before rounding.
//!
//! Every counter is `{current, peak, allocated, freed}` for `all`,
//! `small_pool` and `large_pool`.

use crate::block::PoolKind;
use crate::cost::DriverCosts;

/// One counter: current value, its peak, and totals added and removed.
///
/// The total removed is not stored: it follows from the others
/// ([`Stat::freed`]), so a decrease writes one field. (The hot pair's
/// free path lowers ten counters: a store each less.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    /// Current value.
    pub current: i64,
    /// Highest `current` since the last peak reset.
    pub peak: i64,
    /// Sum of all increases.
    pub allocated: i64,
    /// `current` when the totals were last reset (0 before): what
    /// `current` was made of then, neither allocated nor freed since.
    base: i64,
}

impl Stat {
    /// Sum of all decreases (since the totals were last reset).
    #[inline]
    pub fn freed(&self) -> i64 {
        self.allocated + self.base - self.current
    }

    /// Add `amount`.
    #[inline(always)]
    pub fn increase(&mut self, amount: u64) {
        let a = amount as i64;
        self.current += a;
        // A branch, not `max`: the peak seldom moves, and an unconditional
        // store of it costs every increase two instructions.
        if self.current > self.peak {
            self.peak = self.current;
        }
        self.allocated += a;
    }

    /// Subtract `amount`.
    #[inline(always)]
    pub fn decrease(&mut self, amount: u64) {
        self.current -= amount as i64;
    }

    /// Reset the peak to the current value.
    pub fn reset_peak(&mut self) {
        self.peak = self.current;
    }

    /// Reset the totals added and removed to zero.
    pub fn reset_totals(&mut self) {
        self.allocated = 0;
        self.base = self.current;
    }
}

/// One counter for each pool, and both pools together.
///
/// Both pools together is the sum of the two (every change goes to one
/// pool), so only its peak is stored ([`PoolStats::all`]): a change
/// writes one pool's counter and, when the sum passes the peak, the peak.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// The small pool (requests up to 1 MiB).
    pub small_pool: Stat,
    /// The large pool.
    pub large_pool: Stat,
    /// Highest sum of the two pools' `current` since the last peak reset.
    all_peak: i64,
}

impl PoolStats {
    /// Both pools together.
    #[inline]
    pub fn all(&self) -> Stat {
        let (s, l) = (&self.small_pool, &self.large_pool);
        Stat {
            current: s.current + l.current,
            peak: self.all_peak,
            allocated: s.allocated + l.allocated,
            base: s.base + l.base,
        }
    }

    /// The counter of `pool` alone.
    pub fn pool(&self, pool: PoolKind) -> &Stat {
        match pool {
            PoolKind::Small => &self.small_pool,
            PoolKind::Large => &self.large_pool,
        }
    }

    fn pool_mut(&mut self, pool: PoolKind) -> &mut Stat {
        match pool {
            PoolKind::Small => &mut self.small_pool,
            PoolKind::Large => &mut self.large_pool,
        }
    }

    /// Raise the peak of both pools together to their sum, if above.
    #[inline(always)]
    fn raise_all_peak(&mut self) {
        let sum = self.small_pool.current + self.large_pool.current;
        if sum > self.all_peak {
            self.all_peak = sum;
        }
    }

    /// Add `amount` to `pool`'s counter (and so to both pools').
    pub fn increase(&mut self, pool: PoolKind, amount: u64) {
        self.pool_mut(pool).increase(amount);
        self.raise_all_peak();
    }

    /// Subtract `amount` from `pool`'s counter (and so from both pools').
    pub fn decrease(&mut self, pool: PoolKind, amount: u64) {
        self.pool_mut(pool).decrease(amount);
    }

    /// The three counters with PyTorch's names for them.
    fn named(&self) -> [(&'static str, Stat); 3] {
        [("all", self.all()), ("small_pool", self.small_pool), ("large_pool", self.large_pool)]
    }

    fn reset_peaks(&mut self) {
        self.small_pool.reset_peak();
        self.large_pool.reset_peak();
        self.all_peak = self.small_pool.current + self.large_pool.current;
    }

    fn reset_totals(&mut self) {
        self.small_pool.reset_totals();
        self.large_pool.reset_totals();
    }
}

/// Counts of driver-level page operations (expandable segments).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageOps {
    /// Physical pages created.
    pub created: u64,
    /// Page mappings made (a moved page counts here too).
    pub mapped: u64,
    /// Pages moved: unmapped from a wholly free place and mapped where a
    /// segment had to grow, without create or release.
    pub moved: u64,
    /// Page unmappings (a moved page counts here too).
    pub unmapped: u64,
    /// Physical pages released.
    pub released: u64,
    /// Access grants: one per page per device given access.
    pub access_sets: u64,
    /// Stream synchronizations made before unmapping.
    pub stream_syncs: u64,
}

impl PageOps {
    /// Estimated driver time in microseconds, with the reference's H200
    /// costs ([`DriverCosts::H200`]).
    pub fn driver_us_estimate(&self) -> f64 {
        DriverCosts::H200.estimate(self)
    }
}

/// All statistics of one device's allocator.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceStats {
    /// Allocations handed out.
    pub allocation: PoolStats,
    /// Classic segments.
    pub segment: PoolStats,
    /// Active blocks.
    pub active: PoolStats,
    /// Free split blocks of classic segments.
    pub inactive_split: PoolStats,
    /// Bytes handed out (rounded sizes).
    pub allocated_bytes: PoolStats,
    /// Bytes reserved from the device.
    pub reserved_bytes: PoolStats,
    /// Bytes of active blocks.
    pub active_bytes: PoolStats,
    /// Bytes of free split blocks of classic segments.
    pub inactive_split_bytes: PoolStats,
    /// Bytes users asked for.
    pub requested_bytes: PoolStats,
    /// Times all cached memory was freed to retry an allocation.
    pub num_alloc_retries: u64,
    /// Allocations that failed for lack of memory.
    pub num_ooms: u64,
    /// Device-wide synchronizations (empty_cache, OOM retry).
    pub num_sync_all_streams: u64,
    /// Device allocations (classic malloc or expandable map).
    pub num_device_alloc: u64,
    /// Device frees (classic free or expandable unmap).
    pub num_device_free: u64,
    /// The configured max split size.
    pub max_split_size: u64,
    /// Allocations of at least max split size.
    pub oversize_allocations: Stat,
    /// Segments of at least max split size.
    pub oversize_segments: Stat,
    /// Page operations of expandable segments.
    pub pages: PageOps,
    /// Reuses of a block on another stream than its last user's, ordered
    /// by an event wait (expanse's cross-stream lending).
    pub cross_stream_waits: u64,
}

/// The counter of one pool in every [`PoolStats`]: `small_pool` or
/// `large_pool`, chosen once for several counters.
fn small(p: &mut PoolStats) -> &mut Stat {
    &mut p.small_pool
}

fn large(p: &mut PoolStats) -> &mut Stat {
    &mut p.large_pool
}

impl DeviceStats {
    /// An allocation handed out from `pool`: `size` bytes, `requested`
    /// asked for. The same as `increase(pool, ..)` on each counter, with
    /// the pool chosen once (the hot path paid a few instructions a
    /// counter to choose it every time).
    #[inline(always)]
    pub(crate) fn count_hand_out(&mut self, pool: PoolKind, size: u64, requested: u64) {
        match pool {
            PoolKind::Small => self.hand_out_in(small, size, requested),
            PoolKind::Large => self.hand_out_in(large, size, requested),
        }
    }

    #[inline(always)]
    fn hand_out_in(&mut self, of: impl Fn(&mut PoolStats) -> &mut Stat, size: u64, requested: u64) {
        for (p, amount) in [
            (&mut self.allocation, 1),
            (&mut self.allocated_bytes, size),
            (&mut self.active, 1),
            (&mut self.active_bytes, size),
            (&mut self.requested_bytes, requested),
        ] {
            of(p).increase(amount);
            p.raise_all_peak();
        }
    }

    /// An allocation of `pool` freed by its user: `size` bytes
    /// (`decrease(pool, ..)` on each counter, the pool chosen once). Its
    /// requested bytes stay counted until the block is freed
    /// ([`Self::count_free`]): after the events of the streams that used
    /// it, as PyTorch's `free_block` counts them (with `active`).
    #[inline(always)]
    pub(crate) fn count_user_free(&mut self, pool: PoolKind, size: u64) {
        match pool {
            PoolKind::Small => self.user_free_in(small, size),
            PoolKind::Large => self.user_free_in(large, size),
        }
    }

    #[inline(always)]
    fn user_free_in(&mut self, of: impl Fn(&mut PoolStats) -> &mut Stat, size: u64) {
        of(&mut self.allocation).decrease(1);
        of(&mut self.allocated_bytes).decrease(size);
    }

    /// A block of `pool` (`size` bytes, `requested` of them asked for,
    /// `expandable` or not) freed, its merges changing the split blocks by
    /// `d_blocks` and their bytes by `d_bytes` (counted for classic
    /// segments only); the pool chosen once.
    #[inline(always)]
    pub(crate) fn count_free(&mut self, pool: PoolKind, expandable: bool, d: (i64, i64), size: u64, requested: u64) {
        match pool {
            PoolKind::Small => self.free_in(small, expandable, d, size, requested),
            PoolKind::Large => self.free_in(large, expandable, d, size, requested),
        }
    }

    #[inline(always)]
    fn free_in(
        &mut self,
        of: impl Fn(&mut PoolStats) -> &mut Stat,
        expandable: bool,
        (d_blocks, d_bytes): (i64, i64),
        size: u64,
        requested: u64,
    ) {
        let change = |p: &mut PoolStats, d: i64| {
            if d > 0 {
                of(p).increase(d as u64);
                p.raise_all_peak();
            } else if d < 0 {
                of(p).decrease(d.unsigned_abs());
            }
        };
        if !expandable {
            change(&mut self.inactive_split, d_blocks);
            change(&mut self.inactive_split_bytes, d_bytes);
        }
        of(&mut self.active).decrease(1);
        of(&mut self.active_bytes).decrease(size);
        of(&mut self.requested_bytes).decrease(requested);
    }

    /// Reset every peak to its current value.
    pub fn reset_peaks(&mut self) {
        for arr in self.arrays_mut() {
            arr.reset_peaks();
        }
        self.oversize_allocations.reset_peak();
        self.oversize_segments.reset_peak();
    }

    /// Reset the accumulated totals (`allocated`, `freed`) and event counts.
    pub fn reset_accumulated(&mut self) {
        for arr in self.arrays_mut() {
            arr.reset_totals();
        }
        self.oversize_allocations.reset_totals();
        self.oversize_segments.reset_totals();
        self.num_alloc_retries = 0;
        self.num_ooms = 0;
        self.num_sync_all_streams = 0;
        self.num_device_alloc = 0;
        self.num_device_free = 0;
    }

    fn arrays_mut(&mut self) -> [&mut PoolStats; 9] {
        [
            &mut self.allocation,
            &mut self.segment,
            &mut self.active,
            &mut self.inactive_split,
            &mut self.allocated_bytes,
            &mut self.reserved_bytes,
            &mut self.active_bytes,
            &mut self.inactive_split_bytes,
            &mut self.requested_bytes,
        ]
    }

    fn arrays(&self) -> [(&'static str, &PoolStats); 9] {
        [
            ("allocation", &self.allocation),
            ("segment", &self.segment),
            ("active", &self.active),
            ("inactive_split", &self.inactive_split),
            ("allocated_bytes", &self.allocated_bytes),
            ("reserved_bytes", &self.reserved_bytes),
            ("active_bytes", &self.active_bytes),
            ("inactive_split_bytes", &self.inactive_split_bytes),
            ("requested_bytes", &self.requested_bytes),
        ]
    }

    /// Flat `(key, value)` pairs keyed exactly like PyTorch's
    /// `torch.cuda.memory_stats()` (e.g. `reserved_bytes.all.peak`).
    pub fn to_pairs(&self) -> Vec<(String, i64)> {
        let mut out = Vec::with_capacity(120);
        for (name, arr) in self.arrays() {
            for (ty, s) in arr.named() {
                out.push((format!("{name}.{ty}.current"), s.current));
                out.push((format!("{name}.{ty}.peak"), s.peak));
                out.push((format!("{name}.{ty}.allocated"), s.allocated));
                out.push((format!("{name}.{ty}.freed"), s.freed()));
            }
        }
        for (name, s) in
            [("oversize_allocations", self.oversize_allocations), ("oversize_segments", self.oversize_segments)]
        {
            out.push((format!("{name}.current"), s.current));
            out.push((format!("{name}.peak"), s.peak));
            out.push((format!("{name}.allocated"), s.allocated));
            out.push((format!("{name}.freed"), s.freed()));
        }
        let clamp = |v: u64| v.min(i64::MAX as u64) as i64;
        out.push(("num_alloc_retries".into(), clamp(self.num_alloc_retries)));
        out.push(("num_ooms".into(), clamp(self.num_ooms)));
        out.push(("num_sync_all_streams".into(), clamp(self.num_sync_all_streams)));
        out.push(("num_device_alloc".into(), clamp(self.num_device_alloc)));
        out.push(("num_device_free".into(), clamp(self.num_device_free)));
        // expanse's own counters, after PyTorch's keys.
        out.push(("num_cross_stream_waits".into(), clamp(self.cross_stream_waits)));
        out.push(("num_pages_moved".into(), clamp(self.pages.moved)));
        out.push((
            "max_split_size".into(),
            if self.max_split_size == u64::MAX { -1 } else { clamp(self.max_split_size) },
        ));
        out
    }

    /// The stats as one flat JSON object (no dependencies needed).
    pub fn to_json(&self) -> String {
        let body: Vec<String> = self.to_pairs().into_iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!("{{{}}}", body.join(","))
    }
}

#[cfg(test)]
mod tests;
