//! Parts and lanes: the state of one stream, lent whole to a lane so that
//! threads on different streams allocate and free cached blocks at once.
//!
//! Every block lives in the arena part of the stream whose segment holds
//! it (the first `PARTS - 1` streams that got a segment have a part each;
//! later ones share part 0). A part's blocks, its stream's free keys in
//! both shared pools and its entries of the active map are all that a
//! cached malloc (best fit on the stream, split) or a free (merge with
//! neighbours, which share the segment and so the part) touch. A lane is a
//! second `DeviceAllocator` holding just that: the same code runs on it,
//! so it decides as the whole state would. [`DeviceAllocator::malloc_cached`]
//! and [`DeviceAllocator::free_cached`] serve a request there only when the
//! whole state would serve it the same way without anything else (no
//! pending events, capture, history, garbage collection or release
//! threshold: [`DeviceAllocator::lane_paths`]); otherwise they change
//! nothing and answer `None`, and the caller takes the part back and asks
//! the whole state.

use expanse_device::StreamId;

use super::{DeviceAllocator, Request};
use crate::block::PARTS;
use crate::error::AllocError;
use crate::size_class::{round_size, MAX_REQUEST};
use crate::stats::DeviceStats;

/// Which arena part each stream's blocks live in.
#[derive(Debug, Default)]
pub(crate) struct PartTable {
    /// `streams[i]` owns part `i + 1`.
    streams: Vec<StreamId>,
}

impl PartTable {
    /// The part of `stream`, if it has one of its own.
    #[inline]
    pub(crate) fn find(&self, stream: StreamId) -> Option<usize> {
        self.streams.iter().position(|&s| s == stream).map(|i| i + 1)
    }

    /// The part of `stream`, given one of its own while any is left
    /// (else the shared part 0).
    pub(crate) fn part_for(&mut self, stream: StreamId) -> usize {
        if let Some(p) = self.find(stream) {
            return p;
        }
        if self.streams.len() + 1 < PARTS {
            self.streams.push(stream);
            return self.streams.len();
        }
        0
    }
}

/// Which requests a lane may serve on its own, as the whole state stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LanePaths {
    /// A malloc that hits in the lane's stream's cached blocks.
    pub(crate) malloc: bool,
    /// A free of one of the lane's blocks.
    pub(crate) free: bool,
}

impl DeviceAllocator {
    /// The streams with a part of their own: `streams()[i]` owns part `i + 1`.
    pub(crate) fn part_streams(&self) -> &[StreamId] {
        &self.parts.streams
    }

    /// The part of `stream`, if it has one of its own.
    pub(crate) fn part_of_stream(&self, stream: StreamId) -> Option<usize> {
        self.parts.find(stream)
    }

    /// An empty lane for this allocator's parts: same device, configuration
    /// and policy, no state; it never tears anything down.
    pub(crate) fn new_lane(&self) -> DeviceAllocator {
        let mut lane = DeviceAllocator::with_policy(self.device.clone(), self.config.clone(), self.policy.clone());
        lane.is_lane = true;
        lane
    }

    /// Which requests a lane may serve without the rest of the state: a
    /// cached malloc needs no pending events to process first, no capture
    /// routing, no release threshold, no garbage collection clock and no
    /// history; a free needs no release threshold and no history.
    pub(crate) fn lane_paths(&self) -> LanePaths {
        // The working-set rule's stamps and clock live in the whole state.
        let plain =
            self.policy.release.threshold.is_none() && self.history.is_none() && !self.policy.moving.watches_reuse();
        LanePaths {
            malloc: plain
                && self.events.is_empty()
                && self.deferred_block_count() == 0
                && !self.private.capturing()
                && !self.gc_enabled(),
            free: plain,
        }
    }

    /// Lend part `part` (owned by stream `part_streams()[part - 1]`) to
    /// `lane`: its blocks, its stream's free keys and its active entries.
    pub(crate) fn lend_part(&mut self, part: usize, lane: &mut DeviceAllocator) {
        let stream = self.parts.streams[part - 1];
        lane.blocks.put_part(part, self.blocks.take_part(part));
        for (mine, theirs) in self.pools.iter_mut().zip(lane.pools.iter_mut()) {
            mine.free.take_stream(stream, &mut theirs.free);
            theirs.free_block_searches = mine.free_block_searches;
        }
        lane.active.put_part(part, self.active.take_part(part));
    }

    /// Take part `part` back from `lane` (the reverse of [`Self::lend_part`]).
    pub(crate) fn take_back_part(&mut self, part: usize, lane: &mut DeviceAllocator) {
        self.blocks.put_part(part, lane.blocks.take_part(part));
        for (mine, theirs) in self.pools.iter_mut().zip(lane.pools.iter_mut()) {
            mine.free.put_back(&mut theirs.free);
        }
        self.active.put_part(part, lane.active.take_part(part));
        // Events a lane's cross-stream wait failed to release.
        self.unreleased_events.append(&mut lane.unreleased_events);
    }

    /// The statistics, to move them whole between the state and its lanes.
    pub(crate) fn stats_mut(&mut self) -> &mut DeviceStats {
        &mut self.stats
    }

    /// `malloc(orig_size, stream)` when the best fit among `stream`'s
    /// cached blocks serves it; `None` (nothing changed) otherwise. Only
    /// where [`Self::lane_paths`] allows a malloc: then `malloc` would
    /// decide exactly this (including the event waits that order the reuse
    /// of a block another stream used last, and their failure).
    /// (Errors boxed: they are rare, and the common answer stays small.)
    #[inline]
    pub(crate) fn malloc_cached(&mut self, orig_size: u64, stream: StreamId) -> Option<Result<u64, Box<AllocError>>> {
        if orig_size > MAX_REQUEST {
            return None;
        }
        let size = round_size(orig_size, &self.config);
        let pool = Self::pool_of(size);
        let p = Request { size, segment_size: 0, stream, pool, block: None };
        let (k, at) = self.get_free_block(&p)?;
        if self.blocks.get(k.block).last_use.all_are(stream) {
            // `order_reuse` would do nothing.
            return Some(Ok(self.hand_out(&p, k.block, Some(&(k, at)), orig_size)));
        }
        Some(self.reuse_after_waits(&p, k, at, orig_size))
    }

    /// [`Self::alloc_block_from`] for a cached block another stream used last.
    #[cold]
    #[inline(never)]
    fn reuse_after_waits(
        &mut self,
        p: &Request,
        k: crate::pool::FreeKey,
        at: Option<crate::free_set::Loc>,
        orig_size: u64,
    ) -> Result<u64, Box<AllocError>> {
        self.alloc_block_from(p, k.block, Some((k, at)), orig_size).map_err(Box::new)
    }

    /// `free(ptr)` when `ptr` is one of this state's blocks, of a shared
    /// pool, used on no other stream; false (nothing changed) otherwise.
    /// Only where [`Self::lane_paths`] allows a free: then `free` would
    /// decide exactly this.
    #[inline]
    pub(crate) fn free_cached(&mut self, ptr: u64) -> bool {
        let Some(id) = self.active.remove(ptr) else { return false };
        let b = self.blocks.get(id);
        if !b.stream_uses.is_empty() || b.private != 0 {
            self.active.insert(ptr, id);
            return false;
        }
        self.unallocate(ptr, id);
        self.free_block(id);
        true
    }
}
