//! Lazy merging: the hot pair without its split, merge or free-set churn.
//!
//! A `free` whose block has exactly one free neighbour to merge with, the
//! one after it (most often the remainder it was split from), leaves the
//! two unmerged: a *pending merge*. A `free` whose block has no free
//! neighbour at all (a whole block, such as a large allocation alone in
//! its mapped pages) leaves it out of the free set: a pending merge with
//! nothing to merge. The statistics are counted at once; only the block
//! records and the free set wait. The next `malloc`, when it asks for the
//! freed block's size on its stream and the eager allocator would hand out
//! that very block (the merged block split again into the same two, or the
//! whole block as its best fit), gets the freed block back as it is.
//! Every other call first completes the free exactly as `free` would have
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

/// A freed block left unmerged with the free block after it, or left out
/// of the free set when it has nothing to merge with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PendingMerge {
    /// The freed block: free, in no set, cached only through the pending
    /// merge.
    pub front: BlockId,
    /// Its upper neighbour, free and in its pool's free set; `None`: no
    /// neighbour of the freed block is free.
    pub rest: Option<BlockId>,
}

impl DeviceAllocator {
    /// Free block `id` (allocated until now, no stream uses): merged now,
    /// or, when its only merge is with the block after it or it has none,
    /// left pending.
    #[inline(always)]
    pub(super) fn free_block_lazily(&mut self, id: BlockId) {
        debug_assert!(self.pending.is_none());
        match self.lazy_merge_partner(id) {
            Some(Some(rest)) => self.leave_merge_pending(id, rest),
            Some(None) => self.leave_whole_pending(id),
            None => self.free_block(id),
        }
    }

    /// Free block `id` and leave its merge with `rest` pending. (Both
    /// ways of leaving a free pending are inlined into `free`, their one
    /// caller: mixed step 1667 -> 1651 instructions, pairs -26 to -28.)
    #[inline(always)]
    fn leave_merge_pending(&mut self, id: BlockId, rest: BlockId) {
        let freed = self.begin_free_block(id);
        let (b, r) = (self.blocks.get(id), self.blocks.get(rest));
        // What `merge_free_block` will return: the rest absorbed, the
        // merged block counted when it is part of a split segment.
        let split = b.prev.is_some() || r.next.is_some();
        let merged = (b.size + r.size) as i64;
        let (d_blocks, d_bytes) = if split { (0, merged - r.size as i64) } else { (-1, -(r.size as i64)) };
        self.count_free(freed, d_blocks, d_bytes);
        self.pending = Some(PendingMerge { front: id, rest: Some(rest) });
    }

    /// Free block `id`, which merges with nothing, and leave its insertion
    /// into the free set pending.
    #[inline(always)]
    fn leave_whole_pending(&mut self, id: BlockId) {
        let freed = self.begin_free_block(id);
        let b = self.blocks.get(id);
        // What `merge_free_block` will return: no merge, the block counted
        // when it is part of a split segment.
        let (d_blocks, d_bytes) = if b.is_split() { (1, b.size as i64) } else { (0, 0) };
        self.count_free(freed, d_blocks, d_bytes);
        self.pending = Some(PendingMerge { front: id, rest: None });
    }

    /// What freed block `id` would merge with, when it may be left
    /// pending: `Some(Some(next))` when its only merge is with the block
    /// after it, `Some(None)` when it merges with nothing; `None` when it
    /// merges with the block before it, is not mapped, is in a private
    /// pool, or something runs after the free that would see the merge (a
    /// release threshold: `lazy_merge` is off then).
    #[inline(always)]
    fn lazy_merge_partner(&self, id: BlockId) -> Option<Option<BlockId>> {
        let b = self.blocks.get(id);
        if !self.lazy_merge || !b.mapped || b.private != 0 {
            return None;
        }
        let mergeable = |x: &Block| x.mapped && x.is_allocatable();
        if let Some(p) = b.prev {
            if mergeable(self.blocks.get(p)) {
                return None;
            }
        }
        match b.next {
            Some(n) if mergeable(self.blocks.get(n)) => Some(Some(n)),
            _ => Some(None),
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
        debug_assert!(m.rest.is_none_or(|r| self.blocks.get(m.front).next == Some(r)));
        // `merge_free_block`, knowing what it would find: nothing changed
        // since the free that left the merge pending (every other call
        // settles first), so the block before the front still does not
        // merge (`lazy_merge_partner`) and the rest, free and cached, does.
        // Counted when the block was freed; with no rest nothing merges and
        // the block goes into its free set.
        debug_assert!(self.blocks.get(m.front).prev.is_none_or(|p| {
            let p = self.blocks.get(p);
            !(p.mapped && p.is_allocatable())
        }));
        let mut vacated = None;
        if let Some(rest) = m.rest {
            self.merge_into(m.front, rest, &mut vacated);
        }
        self.file_merged(m.front, vacated);
    }

    /// `malloc(orig_size, stream)` served by the pending merge's freed
    /// block when the eager allocator would split the merged block into
    /// the same two blocks; otherwise the merge is completed and `None`
    /// returned for the ordinary path. Inlined into `malloc`, its one
    /// caller (mixed step 1651 -> 1641 instructions, pairs -22 to -23).
    #[inline(always)]
    pub(super) fn malloc_pending(&mut self, orig_size: u64, stream: StreamId) -> Option<u64> {
        let m = self.pending.take()?;
        let Some((size, pool)) = self.pending_serves(m, orig_size, stream) else {
            self.settle_now(m);
            return None;
        };
        #[cfg(feature = "testing")]
        {
            self.pending_served[usize::from(m.rest.is_none())] += 1;
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
        let Some(rest) = m.rest else {
            // The whole block, not split: `alloc_block_from`'s statistics.
            let b = self.blocks.get(m.front);
            if b.is_split() && !b.is_expandable() {
                self.stats.inactive_split_bytes.decrease(pool, size);
                self.stats.inactive_split.decrease(pool, 1);
            }
            return Some(self.hand_out(m.front, stream, pool, orig_size));
        };
        let front = self.blocks.get(m.front);
        // One stream, inline: copying the set does not allocate.
        let (front_freed, front_users) = (front.users_freed_at(), front.last_use.clone());
        let r = self.blocks.get_mut(rest);
        r.gc_base = searches;
        // The eager allocator split the merged block: its remainder kept
        // the merged block's free stamps, the later of the two.
        r.absorb_users(&front_users, front_freed, false);
        let (rest_size, rest_split) = (r.size, r.next.is_some());
        let b = self.blocks.get(m.front);
        let (already_split, expandable) = (b.prev.is_some() || rest_split, b.is_expandable());
        self.count_split(pool, already_split, expandable, size, rest_size);
        Some(self.hand_out(m.front, stream, pool, orig_size))
    }

    /// The rounded size and pool of `malloc(orig_size, stream)` when the eager allocator,
    /// with `m` merged, would do nothing before its search, find the
    /// merged block as its best fit, wait on no other stream and split it
    /// into `m.front` and `m.rest` (with no rest: hand `m.front` out
    /// whole); `None` otherwise.
    #[inline(always)]
    fn pending_serves(&mut self, m: PendingMerge, orig_size: u64, stream: StreamId) -> Option<(u64, PoolKind)> {
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
        let b = self.blocks.get(m.front);
        if b.size != size || b.stream != stream || b.pool != pool {
            return None;
        }
        let Some(rest) = m.rest else {
            return self.whole_serves(m.front, size, stream).then_some((size, pool));
        };
        let r = self.blocks.get(rest);
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
        if !self.merged_is_best_fit(m, rest, size, stream, merged) {
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
    #[inline(always)]
    fn merged_is_best_fit(&mut self, m: PendingMerge, rest: BlockId, size: u64, stream: StreamId, merged: u64) -> bool {
        let pool = self.blocks.get(m.front).pool;
        // The free set has not changed since the last hot pair asked this:
        // its answer is remembered (`FreeSet::first_other`).
        let next = self.pools[pool as usize].free.first_other(stream, size, rest);
        let blocks = &self.blocks;
        let b = blocks.get(m.front);
        if next.is_some_and(|k| (k.size, k.addr) < (merged, b.addr)) {
            return false;
        }
        let reach = |id: BlockId| {
            let x = blocks.get(id);
            x.next.map(|n| blocks.get(n)).filter(|n| !n.mapped).map_or(0, |n| n.size)
        };
        let merged_reach = merged + reach(rest);
        if !b.is_expandable() || merged_reach == merged {
            return true;
        }
        next.is_none_or(|k| k.size + reach(k.block) >= merged_reach)
    }

    /// Whether the eager allocator, with free block `id` (exactly `size`
    /// bytes, on `stream`, users only `stream`) in its free set, would
    /// hand it out whole for `size` bytes on `stream`: the
    /// block first among the stream's keys at or above the size and kept
    /// by the reach rule, and the oversize rules not refusing it.
    #[inline(always)]
    fn whole_serves(&mut self, id: BlockId, size: u64, stream: StreamId) -> bool {
        let b = self.blocks.get(id);
        // A block of exactly the size leaves no remainder: every split rule
        // needs one, so it is handed out whole.
        if !b.last_use.is_only(stream) {
            return false;
        }
        let max_split = self.config.max_split_size;
        if self.policy.oversize_rules_apply(b.is_expandable())
            && size >= max_split
            && size >= size.saturating_add(self.config.max_non_split_rounding)
        {
            return false;
        }
        // The first of the stream's keys at or above the size, the block's
        // being absent: it sorts after the block's key (same size, lower
        // address: found first), and is the key the reach rule compares.
        // (The block is in no set: no key is its own.)
        let next = self.pools[b.pool as usize].free.first_other(stream, size, id);
        let blocks = &self.blocks;
        let b = blocks.get(id);
        if next.is_some_and(|k| (k.size, k.addr) < (size, b.addr)) {
            return false;
        }
        let reach = |x: &Block| x.size + x.next.map(|n| blocks.get(n)).filter(|n| !n.mapped).map_or(0, |n| n.size);
        if !b.is_expandable() || reach(b) == size {
            return true;
        }
        next.is_none_or(|k| reach(blocks.get(k.block)) >= reach(b))
    }
}
