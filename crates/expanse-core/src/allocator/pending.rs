//! Lazy merging: the hot pair of a split block without its split and merge.
//!
//! A `free` whose block has exactly one free neighbour to merge with, the
//! one after it (most often the remainder it was split from), leaves the
//! two unmerged: a *pending merge*. The statistics are counted as merged
//! at once; only the block records and the free set wait. The next
//! `malloc`, when it asks for the freed block's size on its stream and the
//! merged block would be its best fit and be split again, gets the freed
//! block back as it is: the split would make the very same two blocks.
//! Every other call first completes the merge exactly as `free` would have
//! (nothing changed in between), so every decision and every observable
//! (addresses, statistics, snapshots, history) is the eager allocator's.
//!
//! What differs from the eager allocator is internal only: which block id
//! is the front and which the remainder afterwards (ids are never
//! observable and never order anything), and the arena's generation
//! (compared only for equality with stamps taken after the last pending
//! merge was created, by a `free` that moves it in both).
#![forbid(unsafe_code)]

use expanse_device::StreamId;

use super::DeviceAllocator;
use crate::block::{Block, BlockId, PoolKind};
use crate::size_class::{round_size, MAX_REQUEST};

/// A freed block left unmerged with the free block after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PendingMerge {
    /// The freed block: free, in no set, cached only through the pending
    /// merge.
    pub front: BlockId,
    /// Its upper neighbour, free and in its pool's free set.
    pub rest: BlockId,
}

impl DeviceAllocator {
    /// Free block `id` (allocated until now, no stream uses): merged now,
    /// or, when its only merge is with the block after it, left pending.
    #[inline(always)]
    pub(super) fn free_block_lazily(&mut self, id: BlockId) {
        debug_assert!(self.pending.is_none());
        match self.lazy_merge_partner(id) {
            Some(rest) => self.leave_merge_pending(id, rest),
            None => self.free_block(id),
        }
    }

    /// Free block `id` and leave its merge with `rest` pending.
    #[inline(never)]
    fn leave_merge_pending(&mut self, id: BlockId, rest: BlockId) {
        let freed = self.begin_free_block(id);
        let (b, r) = (self.blocks.get(id), self.blocks.get(rest));
        // What `merge_free_block` will return: the rest absorbed, the
        // merged block counted when it is part of a split segment.
        let split = b.prev.is_some() || r.next.is_some();
        let merged = (b.size + r.size) as i64;
        let (d_blocks, d_bytes) = if split { (0, merged - r.size as i64) } else { (-1, -(r.size as i64)) };
        self.count_free(freed, d_blocks, d_bytes);
        self.pending = Some(PendingMerge { front: id, rest });
    }

    /// The block that freed block `id` would merge with when that is its
    /// only merge, the block after it, in a shared pool, and nothing runs
    /// after the free that would see the merge (a release threshold:
    /// `lazy_merge` is off then).
    #[inline(always)]
    fn lazy_merge_partner(&self, id: BlockId) -> Option<BlockId> {
        let b = self.blocks.get(id);
        let mergeable = |x: &Block| x.mapped && x.is_allocatable();
        let rest = b.next?;
        if !self.lazy_merge || !mergeable(self.blocks.get(rest)) || !b.mapped || b.private != 0 {
            return None;
        }
        match b.prev {
            Some(p) if mergeable(self.blocks.get(p)) => None,
            _ => Some(rest),
        }
    }

    /// Complete the pending merge, if any, as `free` would have.
    #[inline]
    pub(super) fn settle(&mut self) {
        if let Some(m) = self.pending.take() {
            self.settle_now(m);
        }
    }

    #[inline(never)]
    fn settle_now(&mut self, m: PendingMerge) {
        debug_assert_eq!(self.blocks.get(m.front).next, Some(m.rest));
        // Counted when the block was freed.
        let _ = self.merge_free_block(m.front);
    }

    /// `malloc(orig_size, stream)` served by the pending merge's freed
    /// block when the eager allocator would split the merged block into
    /// the same two blocks; otherwise the merge is completed and `None`
    /// returned for the ordinary path.
    #[inline(never)]
    pub(super) fn malloc_pending(&mut self, orig_size: u64, stream: StreamId) -> Option<u64> {
        let m = self.pending.take()?;
        let Some((size, pool)) = self.pending_serves(m, orig_size, stream) else {
            self.settle_now(m);
            return None;
        };
        #[cfg(feature = "testing")]
        {
            self.pending_served += 1;
        }
        // What `malloc` does before its search, then the search's count.
        self.exhausted = None;
        if self.policy.moving.watches_reuse() {
            self.reuse.tick();
        }
        let gc = self.gc_enabled();
        let set = &mut self.pools[pool as usize];
        if gc {
            set.free_block_searches += 1;
        }
        // The split: the rest is the remainder, cached since the search.
        let searches = set.free_block_searches;
        let r = self.blocks.get_mut(m.rest);
        r.gc_base = searches;
        let (rest_size, rest_split) = (r.size, r.next.is_some());
        let b = self.blocks.get(m.front);
        let (already_split, expandable) = (b.prev.is_some() || rest_split, b.is_expandable());
        self.count_split(pool, already_split, expandable, size, rest_size);
        Some(self.hand_out(m.front, stream, pool, orig_size))
    }

    /// The rounded size and pool of `malloc(orig_size, stream)` when the eager allocator,
    /// with `m` merged, would do nothing before its search, find the
    /// merged block as its best fit, wait on no other stream and split it
    /// into `m.front` and `m.rest`; `None` otherwise.
    fn pending_serves(&self, m: PendingMerge, orig_size: u64, stream: StreamId) -> Option<(u64, PoolKind)> {
        // Stream events to process (blocks to free and merge) or a capture
        // would change the state before the search.
        if orig_size > MAX_REQUEST
            || self.private.capturing()
            || !self.events.is_empty()
            || self.deferred_block_count() != 0
        {
            return None;
        }
        let size = round_size(orig_size, &self.config);
        let pool = Self::pool_of(size);
        let (b, r) = (self.blocks.get(m.front), self.blocks.get(m.rest));
        if b.size != size || b.stream != stream || b.pool != pool {
            return None;
        }
        // The merged block's users are both blocks' (no other stream to
        // wait on), and the remainder's after the split.
        if !b.last_use.is_only(stream) || !r.last_use.is_only(stream) {
            return None;
        }
        let merged = size + r.size;
        let max_split = self.config.max_split_size;
        if !self.policy.should_split(pool, merged, size, max_split) {
            return None;
        }
        if self.policy.oversize_rules_apply(b.is_expandable())
            && ((size < max_split && merged >= max_split)
                || (size >= max_split && merged >= size.saturating_add(self.config.max_non_split_rounding)))
        {
            return None;
        }
        if !self.merged_is_best_fit(m, size, stream, merged) {
            return None;
        }
        Some((size, pool))
    }

    /// Whether `get_free_block` would pick the merged block (`merged`
    /// bytes at the front's address) for `size` bytes on `stream`. The
    /// eager free set is this one with the rest's key replaced by the
    /// merged block's, which is above it: the merged block is first when
    /// the first key at or above the request other than the rest's is
    /// another stream's or above it, and stays the choice when it reaches
    /// no further than its size or that key reaches no less.
    fn merged_is_best_fit(&self, m: PendingMerge, size: u64, stream: StreamId, merged: u64) -> bool {
        let blocks = &self.blocks;
        let b = blocks.get(m.front);
        let mut it = self.pools[b.pool as usize].free.at_least(stream, size);
        let next = it.find(|k| k.block != m.rest).filter(|k| k.stream == stream);
        if next.is_some_and(|k| (k.size, k.addr) < (merged, b.addr)) {
            return false;
        }
        let reach = |id: BlockId| {
            let x = blocks.get(id);
            x.next.map(|n| blocks.get(n)).filter(|n| !n.mapped).map_or(0, |n| n.size)
        };
        let merged_reach = merged + reach(m.rest);
        if !b.is_expandable() || merged_reach == merged {
            return true;
        }
        next.is_none_or(|k| k.size + reach(k.block) >= merged_reach)
    }
}
