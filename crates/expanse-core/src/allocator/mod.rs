//! The caching allocator of one device: the mechanism, one concern a file.
//!
//! Its decisions follow PyTorch's `CUDACachingAllocator` (pools, rounding,
//! best fit per stream, split and merge rules, oversize rules, OOM retry,
//! stream-ordered reuse, statistics). Where expanse decides differently,
//! the decision is asked of the [`Policy`] chosen when the allocator is
//! built, never of a mode flag:
//!
//! - `mod.rs` (this file): the state, `malloc` and `free`;
//! - `search.rs`: best fit among cached blocks, split and merge;
//! - `growth.rs`: new classic segments and growth of expandable segments;
//! - `moving.rs`: page moving under the driver budget, and unmapping;
//! - `streams.rs`: stream events, cross-stream ordering and lending;
//! - `release.rs`: `empty_cache`, the oversize release of the OOM path,
//!   garbage collection, teardown;
//! - `invariants.rs`: `check_invariants`;
//! - `oom.rs`: the out-of-memory report and its observers.
//! - `refusal.rs`: a growth the free memory cannot cover asks the device
//!   once; the out-of-memory path's fruitless searches, remembered.
//! - `reuse.rs`: the allocation clock and which memory the workload
//!   reuses (the moving policy's working set).
//! - `active.rs`: the active map, allocated blocks by address.
//! - `pending.rs`: lazy merging, a freed block left unmerged with the
//!   free block after it until the next call (which may take it back).
//!
//! Everything here works on integer addresses and opaque ids; the only
//! outside effect is calls on the [`Device`].
#![forbid(unsafe_code)]

mod active;
mod address_space;
mod growth;
mod invariants;
mod marks;
mod moving;
mod oom;
mod pending;
mod private_pools;
mod recording;
mod refusal;
mod release;
mod reuse;
mod search;
mod streams;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use expanse_device::{Device, EventId, StreamId};

use crate::block::{Arena, Block, BlockId, PoolKind, SegmentRef};
use crate::config::Config;
use crate::error::AllocError;
use crate::expandable_segment::ExpandableSegment;
use crate::free_set::Loc;
use crate::history::{Action, History};
use crate::policy::Policy;
use crate::pool::{FreeKey, Pool};
use crate::size_class::{allocation_size, round_size, MAX_REQUEST, SMALL_SIZE};
use crate::stats::DeviceStats;

pub use oom::{OomInfo, OomNotices, OomObserver};
pub use private_pools::PoolId;

/// A request being served.
struct Request {
    /// Bytes after rounding.
    size: u64,
    /// Bytes of a new classic segment for it.
    segment_size: u64,
    stream: StreamId,
    pool: PoolKind,
    /// The block found for it, once found.
    block: Option<BlockId>,
}

/// A stream event recorded after a block's use on that stream; the block
/// is reused only once every one of its events completed.
#[derive(Clone, Copy, Debug)]
struct PendingEvent {
    event: EventId,
    block: BlockId,
}

/// The allocator state of one device. Not thread-safe by itself:
/// [`CachingAllocator`](crate::CachingAllocator) wraps each in a mutex.
pub struct DeviceAllocator {
    device: Arc<dyn Device>,
    config: Config,
    /// The decisions that differ between PyTorch's allocators and expanse.
    policy: Policy,
    blocks: Arena,
    /// Small and large pool, indexed by [`PoolKind`].
    pools: [Pool; 2],
    /// Allocated blocks by address.
    active: active::ActiveMap,
    /// Expandable segments by slot ([`SegmentRef::Expandable`]); `None`
    /// once released.
    segments: Vec<Option<ExpandableSegment>>,
    /// Pending stream events, per stream, in record order; streams are
    /// visited in id order, so that blocks freed in one pass of
    /// `process_events` are freed in the same order in every run.
    events: BTreeMap<StreamId, VecDeque<PendingEvent>>,
    stats: DeviceStats,
    /// Bytes reserved from the device: classic segments plus mapped pages.
    reserved: u64,
    memory_fraction: Option<f64>,
    /// Bytes this process may reserve under `memory_fraction`.
    allowed_memory_maximum: u64,
    peers: Vec<u32>,
    oom_observers: Vec<OomObserver>,
    /// Whether out-of-memory failures are held for a wrapper that tells
    /// the observers after its lock (`oom.rs`), instead of told at once.
    oom_deferred: bool,
    /// The failures held, not yet told.
    oom_held: Vec<OomInfo>,
    /// Pages (taken off every segment) the driver failed to release,
    /// tried again at teardown.
    unreleased_pages: Vec<crate::expandable_segment::Page>,
    /// Events the driver failed to release, tried again at teardown.
    unreleased_events: Vec<EventId>,
    /// Errors met while tearing down, reported by `Drop`.
    teardown_errors: Vec<String>,
    /// Set when a reservation did not fit in the device's address space
    /// during the current malloc (reported instead of out-of-memory).
    exhausted: Option<address_space::Exhausted>,
    /// Highest reserved bytes ever per pool (indexed by [`PoolKind`]);
    /// never reset.
    high_water: [u64; 2],
    /// Highest bytes ever reserved on the device (both pools, private
    /// pools included); never reset.
    reserved_high_water: u64,
    /// Private pools (CUDA graphs) and the streams allocating to them.
    private: private_pools::PrivatePools,
    /// The allocation history, when recorded (`recording.rs`).
    history: Option<Box<History>>,
    /// The out-of-memory path's last fruitless searches (`refusal.rs`).
    refused: refusal::Refusals,
    /// The allocation clock and which memory the workload reuses, for the
    /// moving policy's working set (`reuse.rs`).
    reuse: reuse::ReuseStamps,
    /// A freed block not yet merged with the free block after it
    /// (`pending.rs`); every call but a `malloc` it serves completes it.
    pending: Option<pending::PendingMerge>,
    /// Whether `free` may leave a merge pending: not under a release
    /// threshold (which looks at the cache right after every free), and
    /// off to test against the eager allocator.
    lazy_merge: bool,
    /// Mallocs served by a pending merge, and by a pending whole block
    /// (tests check they happen).
    #[cfg(feature = "testing")]
    pending_served: [u64; 2],
    /// The free clock and which streams already waited on which
    /// (`streams.rs`).
    order: streams::StreamOrder,
    /// Events recorded at frees that another stream may reuse
    /// (`marks.rs`).
    marks: marks::Marks,
}

impl std::fmt::Debug for DeviceAllocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceAllocator")
            .field("device", &self.device.name())
            .field("config", &self.config)
            .field("blocks", &self.blocks.len())
            .field("reserved", &self.reserved)
            .finish()
    }
}

impl DeviceAllocator {
    /// An allocator for `device` with `config`.
    pub fn new(device: Arc<dyn Device>, config: Config) -> Self {
        let policy = Policy::from_config(&config);
        Self::with_policy(device, config, policy)
    }

    /// An allocator for `device` with `config`, deciding by `policy`
    /// instead of the one `config` asks for.
    pub fn with_policy(device: Arc<dyn Device>, config: Config, policy: Policy) -> Self {
        let mut a = DeviceAllocator {
            device,
            config,
            policy,
            blocks: Arena::default(),
            pools: [Pool::default(), Pool::default()],
            active: active::ActiveMap::default(),
            segments: Vec::new(),
            events: BTreeMap::new(),
            stats: DeviceStats::default(),
            reserved: 0,
            memory_fraction: None,
            allowed_memory_maximum: 0,
            peers: Vec::new(),
            oom_observers: Vec::new(),
            oom_deferred: false,
            oom_held: Vec::new(),
            teardown_errors: Vec::new(),
            unreleased_events: Vec::new(),
            unreleased_pages: Vec::new(),
            high_water: [0; 2],
            reserved_high_water: 0,
            private: private_pools::PrivatePools::default(),
            exhausted: None,
            history: None,
            refused: refusal::Refusals::default(),
            reuse: reuse::ReuseStamps::default(),
            pending: None,
            lazy_merge: false,
            #[cfg(feature = "testing")]
            pending_served: [0; 2],
            order: streams::StreamOrder::default(),
            marks: marks::Marks::default(),
        };
        a.lazy_merge = a.policy.release.threshold.is_none();
        a.stats.max_split_size = a.config.max_split_size;
        if let Some(f) = a.config.per_process_memory_fraction {
            a.set_memory_fraction(f);
        }
        a
    }

    /// The device.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The policy deciding what differs between PyTorch's allocators and
    /// expanse.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Current statistics.
    pub fn stats(&self) -> &DeviceStats {
        &self.stats
    }

    /// Reset peaks to current values.
    pub fn reset_peak_stats(&mut self) {
        self.stats.reset_peaks();
    }

    /// Reset accumulated totals.
    pub fn reset_accumulated_stats(&mut self) {
        self.stats.reset_accumulated();
    }

    /// Limit this process to `fraction` of the device's memory.
    pub fn set_memory_fraction(&mut self, fraction: f64) {
        self.settle();
        let f = fraction.clamp(0.0, 1.0);
        self.memory_fraction = Some(f);
        self.allowed_memory_maximum = (f * self.device.total_memory() as f64) as u64;
    }

    /// Whether `free` may leave a merge pending (on by default; decisions
    /// and observables are the same either way). For tests that compare
    /// the two.
    #[cfg(feature = "testing")]
    pub fn set_lazy_merge(&mut self, on: bool) {
        self.settle();
        self.lazy_merge = on && self.policy.release.threshold.is_none();
    }

    /// Whether a merge (or a whole block's insertion) is pending now, and
    /// how many mallocs a pending merge and a pending whole block served
    /// so far.
    #[cfg(feature = "testing")]
    pub fn pending_merge_counts(&self) -> (bool, u64, u64) {
        (self.pending.is_some(), self.pending_served[0], self.pending_served[1])
    }

    /// Call `observer` on every out-of-memory failure.
    pub fn add_oom_observer(&mut self, observer: OomObserver) {
        self.oom_observers.push(observer);
    }

    fn gc_enabled(&self) -> bool {
        self.memory_fraction.is_some() && self.config.garbage_collection_threshold > 0.0
    }

    fn pool_of(size: u64) -> PoolKind {
        if size <= SMALL_SIZE {
            PoolKind::Small
        } else {
            PoolKind::Large
        }
    }

    fn segment(&self, b: &Block) -> Option<&ExpandableSegment> {
        match b.segment {
            SegmentRef::Expandable(i) => self.segments[i as usize].as_ref(),
            SegmentRef::Classic => None,
        }
    }

    /// Allocate `size` bytes for use on `stream`; returns the address.
    pub fn malloc(&mut self, orig_size: u64, stream: StreamId) -> Result<u64, AllocError> {
        self.malloc_inline(orig_size, stream)
    }

    /// [`Self::malloc`], its pending-merge path inlined into the lock's
    /// fast path (`combining.rs`): one call less a hot pair.
    #[inline(always)]
    pub(crate) fn malloc_inline(&mut self, orig_size: u64, stream: StreamId) -> Result<u64, AllocError> {
        if self.pending.is_some() {
            if let Some(addr) = self.malloc_pending(orig_size, stream) {
                return Ok(addr);
            }
        }
        self.malloc_settled(orig_size, stream)
    }

    /// The rest of `malloc`, no merge pending (out of line: the mixed
    /// pattern's mallocs take it, and it needs a large frame).
    #[inline(never)]
    fn malloc_settled(&mut self, orig_size: u64, stream: StreamId) -> Result<u64, AllocError> {
        if orig_size > MAX_REQUEST {
            self.stats.num_ooms += 1;
            return Err(AllocError::TooLarge { requested: orig_size });
        }
        if self.private.capturing() {
            if let Some(slot) = self.private.route(stream) {
                return self.malloc_private(orig_size, stream, slot);
            }
        } else {
            self.process_events()?;
            if self.policy.release.threshold.is_some() {
                // Blocks whose events just completed are idle now.
                self.release_over_threshold()?;
            }
        }
        self.exhausted = None;
        if self.policy.moving.watches_reuse() {
            self.reuse.tick();
        }
        let size = round_size(orig_size, &self.config);
        let pool = Self::pool_of(size);
        let p = Request { size, segment_size: allocation_size(size), stream, pool, block: None };

        if let Some((k, at)) = self.get_free_block(&p) {
            if self.reusable_now(k.block, stream) {
                return self.alloc_block_from(&p, k.block, Some((k, at)), orig_size);
            }
        }
        self.malloc_uncached(p, orig_size)
    }

    /// The rest of `malloc` when the request's stream has no cached block
    /// for it: lending, growth, releasing cached blocks, out of memory.
    /// Out of line, so that the cached path keeps a small frame.
    #[inline(never)]
    fn malloc_uncached(&mut self, mut p: Request, orig_size: u64) -> Result<u64, AllocError> {
        let mut found = self.lend_free_block(&mut p);
        if !found && p.pool == PoolKind::Small && self.policy.small_from_large {
            if let Some(id) = self.large_block_for_small(&p) {
                // Handed out as a large-pool block: split there, counted
                // there, and cached there again once freed.
                let q = Request { pool: PoolKind::Large, ..p };
                return self.alloc_block_from(&q, id, None, orig_size);
            }
        }
        if !found {
            if self.gc_enabled() {
                self.garbage_collect_cached_blocks()?;
            }
            found = self.alloc_block(&mut p, false)?
                || (self.release_available_cached_blocks(&p)? && self.alloc_block(&mut p, false)?);
        }
        // As in PyTorch, not while a private pool is allocated to (a CUDA
        // graph capture may be under way, and this synchronizes streams).
        if !found && self.private.capturing() {
            return Err(self.out_of_memory(&p));
        }
        if !found {
            // Last resort: free every cached block and retry.
            self.release_cached_blocks()?;
            self.exhausted = None;
            found = self.alloc_block(&mut p, true)?;
        }
        if !found {
            return Err(self.out_of_memory(&p));
        }
        let id = p.block.expect("found block");
        self.alloc_found_block(&p, id, orig_size)
    }

    fn alloc_found_block(&mut self, p: &Request, id: BlockId, orig_size: u64) -> Result<u64, AllocError> {
        self.alloc_block_from(p, id, None, orig_size)
    }

    /// Hand out free block `id` for `p`, split if the policy says so.
    /// `cached`: the block's key (and where it is), still in its shared
    /// pool's free set (taken out here, or replaced in place by the
    /// split's remainder); `None`: the block is in no set.
    fn alloc_block_from(
        &mut self,
        p: &Request,
        id: BlockId,
        cached: Option<(FreeKey, Option<Loc>)>,
        orig_size: u64,
    ) -> Result<u64, AllocError> {
        // Wait first, while the block is whole: if the device fails, the
        // block goes back to its pool untouched (a split block's front keeps
        // the same users, so the waits are the same).
        if let Err(e) = self.order_reuse(id, p.stream) {
            if cached.is_none() {
                self.insert_into_pool(id);
            }
            return Err(e);
        }
        let st = p.pool;
        let b = self.blocks.get(id);
        let split = self.policy.should_split(b.pool, b.size, p.size, self.config.max_split_size);
        let (already_split, expandable, size) = (b.is_split(), b.is_expandable(), b.size);
        let mut id = id;
        if split {
            // [block of size][remaining] — the remaining keeps the old id.
            let remaining = id;
            let new_id = self.split_front(remaining, p.size);
            match cached {
                Some((k, at)) => self.pools[p.pool as usize].replace(&k, at, remaining, self.blocks.get_mut(remaining)),
                None => self.insert_into_pool(remaining),
            }
            // The remainder's size (`split_front` took `p.size` off it).
            self.count_split(st, already_split, expandable, p.size, size - p.size);
            id = new_id;
        } else if let Some((k, at)) = cached {
            self.pools[p.pool as usize].free.remove_at(&k, at);
        }
        if !split && already_split && !expandable {
            self.stats.inactive_split_bytes.decrease(st, size);
            self.stats.inactive_split.decrease(st, 1);
        }
        Ok(self.hand_out(id, p.stream, p.pool, orig_size))
    }

    /// The statistics of a split of a free block of pool `st` into `size`
    /// bytes handed out and `rem_size` bytes left cached; `already_split`:
    /// the block was part of a split segment before.
    #[inline(always)]
    fn count_split(&mut self, st: PoolKind, already_split: bool, expandable: bool, size: u64, rem_size: u64) {
        if already_split && !expandable {
            self.stats.inactive_split_bytes.decrease(st, size);
        } else if !expandable {
            self.stats.inactive_split_bytes.increase(st, rem_size);
            self.stats.inactive_split.increase(st, 1);
        }
    }

    /// Hand free block `id` of pool `st`, in no pool set and already split
    /// to size, out for `orig_size` bytes on `stream`: its users, the active map, the statistics, the history.
    // Inlined into its two callers (the cached path and a pending merge's):
    // out of line it cost more since the seventh pass (mixed step 1678 ->
    // 1667 instructions, pairs -17 to -19).
    #[inline(always)]
    fn hand_out(&mut self, id: BlockId, stream: StreamId, st: PoolKind, orig_size: u64) -> u64 {
        let b = self.blocks.get_mut(id);
        // The request's stream is its only user now (after `order_reuse`).
        b.last_use.set_only(stream);
        b.allocated = true;
        b.requested = orig_size;
        let (addr, size, expandable) = (b.addr, b.size, b.is_expandable());
        self.active.insert(addr, id);
        self.stats.count_hand_out(st, size, orig_size);
        if size >= self.config.max_split_size {
            self.stats.oversize_allocations.increase(1);
        }
        if expandable && st == PoolKind::Large && self.policy.moving.watches_reuse() {
            self.stamp_reuse(id);
        }
        self.record(Action::Alloc, addr, orig_size, stream);
        addr
    }

    /// Free the allocation at `ptr`. An unknown pointer (never allocated
    /// here, or already freed) is a misuse error and changes nothing.
    pub fn free(&mut self, ptr: u64) -> Result<(), AllocError> {
        self.settle();
        let Some(id) = self.active.remove(ptr) else {
            return Err(AllocError::Misuse {
                message: format!(
                    "free of unknown pointer {ptr:#x} on device {}: not allocated by this allocator, or already freed",
                    self.device.ordinal()
                ),
            });
        };
        let b = self.blocks.get_mut(id);
        b.allocated = false;
        let (pool, size, requested, stream, has_uses) =
            (b.pool, b.size, b.requested, b.stream, !b.stream_uses.is_empty());
        // Borrowed from `stream`'s segment by another stream, its only
        // user until now.
        let borrower = if b.last_use.is_only(stream) { None } else { b.last_use.iter().next() };
        self.record(Action::FreeRequested, ptr, requested, stream);
        self.stats.count_user_free(pool, size);
        if size >= self.config.max_split_size {
            self.stats.oversize_allocations.decrease(1);
        }
        if has_uses {
            if self.marks_frees() {
                self.mark_user_free(id);
            }
            self.insert_events_unless_capturing(id)?;
        } else {
            self.free_block_lazily(id);
            if let Some(user) = borrower.filter(|_| self.marks_frees()) {
                self.mark_lent_free(user);
            }
        }
        if self.policy.release.threshold.is_some() {
            self.release_over_threshold()?;
        }
        Ok(())
    }

    /// Give device `peer` access to all memory of this device, now and
    /// later (every page of every expandable segment).
    pub fn add_peer(&mut self, peer: u32) -> Result<(), AllocError> {
        self.settle();
        if peer == self.device.ordinal() || self.peers.contains(&peer) {
            return Ok(());
        }
        if !self.device.can_access_peer(peer) {
            return Err(AllocError::Misuse {
                message: format!("device {peer} cannot access device {} (no peer path)", self.device.ordinal()),
            });
        }
        let device = Arc::clone(&self.device);
        for seg in self.segments.iter_mut().flatten() {
            seg.add_peer(device.as_ref(), peer, &mut self.stats.pages)?;
        }
        self.peers.push(peer);
        Ok(())
    }

    /// Size of the allocation at `ptr`, if it is one.
    pub fn allocation_size(&self, ptr: u64) -> Option<u64> {
        self.active.get(ptr).map(|id| self.blocks.get(id).size)
    }

    /// Bytes reserved from the device.
    pub fn reserved_bytes(&self) -> u64 {
        self.reserved
    }

    /// Number of live expandable segments.
    pub fn expandable_segment_count(&self) -> usize {
        self.segments.iter().flatten().count()
    }
}

impl Drop for DeviceAllocator {
    fn drop(&mut self) {
        self.teardown();
        for e in &self.teardown_errors {
            eprintln!("expanse: device {}: {e}", self.device.ordinal());
        }
    }
}

/// Misuse error for a device index out of range.
pub(crate) fn bad_device(device: u32, count: usize) -> AllocError {
    AllocError::Misuse { message: format!("device index {device} out of range (allocator has {count} device(s))") }
}
