//! Block search, split and merge: best fit among a stream's cached blocks,
//! PyTorch's split and oversize rules (as the policy applies them), and
//! the address-ordered block list of each segment.

use super::{DeviceAllocator, Request};
use crate::block::{Block, BlockId, PoolKind};
use crate::free_set::Loc;
use crate::history::Action;
use crate::pool::{FreeKey, Pool};

/// A block being freed, as [`DeviceAllocator::count_free`] counts it: its
/// pool, size, the bytes its user asked for (counted as requested until
/// now, after the events of the streams that used it) and whether it is
/// expandable.
#[derive(Clone, Copy, Debug)]
pub(super) struct Freed {
    pool: PoolKind,
    size: u64,
    requested: u64,
    expandable: bool,
}

impl DeviceAllocator {
    /// Best fit among cached free blocks on the same stream: its key and
    /// where it is, left in the free set for the caller to take out or
    /// replace.
    pub(super) fn get_free_block(&mut self, p: &Request) -> Option<(FreeKey, Option<Loc>)> {
        let gc = self.gc_enabled();
        let max_split = self.config.max_split_size;
        let rounding = self.config.max_non_split_rounding;
        let blocks = &self.blocks;
        let pool = &mut self.pools[p.pool as usize];
        if gc {
            pool.free_block_searches += 1;
        }
        let (&first, first_at) = pool.free.first_at_least(p.stream, p.size)?;
        let mut cur = first;
        let mut at = Some(first_at);
        let reach = |id: BlockId| {
            let b = blocks.get(id);
            b.size + b.next.map(|n| blocks.get(n)).filter(|n| !n.mapped).map_or(0, |n| n.size)
        };
        // A block followed by unmapped space can grow to any size: for best
        // fit, compare blocks by the size they can reach, so that such a
        // block is taken only when nothing else fits. A block that reaches
        // only its own size is the best already (later keys are no smaller).
        if blocks.get(cur.block).is_expandable() && reach(cur.block) > cur.size {
            let mut it = pool.free.after(first_at);
            while let Some(&next) = it.next() {
                if !blocks.get(cur.block).is_expandable()
                    || next.stream != p.stream
                    || reach(next.block) >= reach(cur.block)
                {
                    break;
                }
                cur = next;
                at = it.loc();
            }
        }
        let b = blocks.get(cur.block);
        if self.policy.oversize_rules_apply(b.is_expandable()) {
            if p.size < max_split && b.size >= max_split {
                return None;
            }
            if p.size >= max_split && b.size >= p.size.saturating_add(rounding) {
                return None;
            }
        }
        Some((cur, at))
    }

    /// Best fit for `size` in `pool` across streams, for lending and
    /// `small_from_large`: one look-up per stream (its smallest free block
    /// that fits), streams in order, the smallest of those `accept` takes
    /// (the earlier stream's on a tie). The key stays in the free set.
    pub(super) fn best_fit_across_streams(
        &self,
        pool: PoolKind,
        size: u64,
        accept: impl Fn(&FreeKey, &Block) -> bool,
    ) -> Option<FreeKey> {
        let free = &self.pools[pool as usize].free;
        let mut best: Option<FreeKey> = None;
        for s in free.streams() {
            let Some(&k) = free.at_least(s, size).next() else { continue };
            if accept(&k, self.blocks.get(k.block)) && best.is_none_or(|b| k.size < b.size) {
                best = Some(k);
            }
        }
        best
    }

    /// The rule `small_from_large`: for small request `p`, which found no
    /// small-pool block of its stream nor one to borrow, the best fit among
    /// the large pool's free mapped expandable blocks (every stream's where
    /// blocks are lent, else its own), taken out of the free set; `None`
    /// when none fits or the best may not be used on `p.stream` now.
    pub(super) fn large_block_for_small(&mut self, p: &Request) -> Option<BlockId> {
        let lends = self.policy.lending.lends();
        let k = self.best_fit_across_streams(PoolKind::Large, p.size, |k, b| {
            (lends || k.stream == p.stream) && b.is_expandable() && b.mapped
        })?;
        if !self.reusable_now(k.block, p.stream) {
            return None;
        }
        self.pools[PoolKind::Large as usize].free.remove(&k);
        if k.stream != p.stream {
            self.record(Action::Lend, k.addr, k.size, p.stream);
        }
        Some(k.block)
    }

    /// Split the first `size` bytes of block `id` off into a new block just
    /// before it, with the same segment, stream, pool, mapping state and
    /// users. Neither block is in a pool set afterwards: the caller files
    /// them. Returns the new block.
    pub(super) fn split_front(&mut self, id: BlockId, size: u64) -> BlockId {
        let b = self.blocks.get(id);
        let (addr, prev) = (b.addr, b.prev);
        let fid = self.blocks.insert_part_of(id, addr, size);
        let f = self.blocks.get_mut(fid);
        f.prev = prev;
        f.next = Some(id);
        if let Some(p) = prev {
            self.blocks.get_mut(p).next = Some(fid);
        }
        let blk = self.blocks.get_mut(id);
        blk.prev = Some(fid);
        blk.addr += size;
        blk.size -= size;
        fid
    }

    /// Split block `id` at address `at` (strictly inside it): the bytes from
    /// `at` on become a new block just after it, like [`Self::split_front`].
    pub(super) fn split_back(&mut self, id: BlockId, at: u64) -> BlockId {
        let b = self.blocks.get(id);
        let mut f = Block::new(at, b.end() - at, b.stream, b.pool, b.segment);
        f.mapped = b.mapped;
        f.private = b.private;
        f.last_use = b.last_use.clone();
        f.freed_at = b.freed_at;
        f.prev = Some(id);
        f.next = b.next;
        let (next, start) = (b.next, b.addr);
        let fid = self.blocks.insert(f);
        if let Some(n) = next {
            self.blocks.get_mut(n).prev = Some(fid);
        }
        let blk = self.blocks.get_mut(id);
        blk.next = Some(fid);
        blk.size = at - start;
        fid
    }

    /// Merge `src` into `dst` when `src` is free with the same mapping
    /// state; returns the bytes taken over (0: no merge).
    pub(super) fn try_merge_blocks(&mut self, dst: BlockId, src: Option<BlockId>) -> u64 {
        let mut vacated = None;
        let taken = self.merge_keeping_key(dst, src, &mut vacated);
        if let Some((pool, k)) = vacated {
            self.pools[pool as usize].free.remove(&k);
        }
        taken
    }

    /// [`Self::try_merge_blocks`], except that a merged `src` cached in a
    /// shared pool's free set stays there, its key left in `vacated` for
    /// the merged block to take over (a key already there is removed).
    /// Inlined with the merge into the few callers (a free, a settled
    /// merge, page moving): the calls cost more than the code they shared
    /// (mixed step 1715 -> 1678 instructions).
    #[inline(always)]
    fn merge_keeping_key(
        &mut self,
        dst: BlockId,
        src: Option<BlockId>,
        vacated: &mut Option<(PoolKind, FreeKey)>,
    ) -> u64 {
        let Some(src) = src else { return 0 };
        let s = self.blocks.get(src);
        if s.allocated || s.event_count > 0 || !s.stream_uses.is_empty() || s.mapped != self.blocks.get(dst).mapped {
            return 0;
        }
        self.merge_into(dst, src, vacated)
    }

    /// Merge free block `src` (with `dst`'s mapping state) into `dst`, as
    /// [`Self::merge_keeping_key`] does.
    #[inline(always)]
    pub(super) fn merge_into(&mut self, dst: BlockId, src: BlockId, vacated: &mut Option<(PoolKind, FreeKey)>) -> u64 {
        let s = self.blocks.get(src);
        let d = self.blocks.get(dst);
        let src_is_prev = d.prev == Some(src);
        let (s_addr, s_size, s_prev, s_next, s_freed) = (s.addr, s.size, s.prev, s.next, s.users_freed_at());
        // The merged block's users are both blocks' (most often the same).
        let same_users = d.last_use.includes(&s.last_use);
        if s.mapped && s.private == 0 {
            let key = (s.pool, Pool::free_key(src, s));
            if let Some((pool, k)) = vacated.replace(key) {
                self.pools[pool as usize].free.remove(&k);
            }
        } else {
            self.remove_from_pool(src);
        }
        let s_last_use = std::mem::take(&mut self.blocks.get_mut(src).last_use);
        self.blocks.discard(src);
        if src_is_prev {
            if let Some(pp) = s_prev {
                self.blocks.get_mut(pp).next = Some(dst);
            }
        } else if let Some(nn) = s_next {
            self.blocks.get_mut(nn).prev = Some(dst);
        }
        let d = self.blocks.get_mut(dst);
        d.absorb_users(&s_last_use, s_freed, !same_users);
        if src_is_prev {
            d.addr = s_addr;
            d.prev = s_prev;
        } else {
            d.next = s_next;
        }
        d.size += s_size;
        s_size
    }

    /// Return block `id` to its pool, merged with its free neighbours.
    pub(super) fn free_block(&mut self, id: BlockId) {
        self.free_block_stamped(id, false);
    }

    /// [`Self::free_block`]; `stamped`: the block's free stamp was taken
    /// already, at the user's free (`marks.rs`), and is kept.
    pub(super) fn free_block_stamped(&mut self, id: BlockId, stamped: bool) {
        let freed = if stamped { self.begin_free_block_unstamped(id) } else { self.begin_free_block(id) };
        let (d_blocks, d_bytes) = self.merge_free_block(id);
        self.count_free(freed, d_blocks, d_bytes);
    }

    /// The first step of freeing block `id`: recorded, its request
    /// forgotten. Returns what [`Self::count_free`] counts.
    #[inline(always)]
    pub(super) fn begin_free_block(&mut self, id: BlockId) -> Freed {
        let t = self.order.tick();
        self.blocks.get_mut(id).stamp_free(t);
        self.begin_free_block_unstamped(id)
    }

    /// [`Self::begin_free_block`] but the free stamp.
    #[inline(always)]
    fn begin_free_block_unstamped(&mut self, id: BlockId) -> Freed {
        let b = self.blocks.get_mut(id);
        let (addr, requested, stream) = (b.addr, std::mem::take(&mut b.requested), b.stream);
        let freed = Freed { pool: b.pool, size: b.size, requested, expandable: b.is_expandable() };
        self.record(Action::FreeCompleted, addr, requested, stream);
        freed
    }

    /// Merge free block `id` with its free neighbours and cache the result.
    /// Returns the change in split blocks and their bytes.
    #[inline(always)]
    pub(super) fn merge_free_block(&mut self, id: BlockId) -> (i64, i64) {
        let b = self.blocks.get(id);
        let (prev, next) = (b.prev, b.next);
        let mut d_blocks: i64 = 0;
        let mut d_bytes: i64 = 0;
        let mut vacated = None;
        for cand in [prev, next].into_iter().flatten() {
            let taken = self.merge_keeping_key(id, Some(cand), &mut vacated);
            if taken > 0 {
                d_blocks -= 1;
                d_bytes -= taken as i64;
            }
        }
        self.file_merged(id, vacated);
        let b = self.blocks.get(id);
        if b.is_split() {
            d_blocks += 1;
            d_bytes += b.size as i64;
        }
        (d_blocks, d_bytes)
    }

    /// Cache free block `id`, merged with its free neighbours: in its pool,
    /// in place of the key a merged neighbour `vacated` in a free set.
    #[inline(always)]
    pub(super) fn file_merged(&mut self, id: BlockId, vacated: Option<(PoolKind, FreeKey)>) {
        match vacated {
            // The merged block takes its neighbour's place in the free set.
            Some((pool, k)) if self.blocks.get(id).private == 0 => {
                self.pools[pool as usize].replace(&k, None, id, self.blocks.get_mut(id));
            }
            Some((pool, k)) => {
                self.pools[pool as usize].free.remove(&k);
                self.insert_into_pool(id);
            }
            None => self.insert_into_pool(id),
        }
    }

    /// The statistics of a freed block (`freed`: its pool, size, requested
    /// bytes and whether it is expandable) whose merges changed the split
    /// blocks by `d_blocks` and their bytes by `d_bytes`.
    #[inline(always)]
    pub(super) fn count_free(&mut self, freed: Freed, d_blocks: i64, d_bytes: i64) {
        let Freed { pool, size, requested, expandable } = freed;
        self.stats.count_free(pool, expandable, (d_blocks, d_bytes), size, requested);
    }

    pub(super) fn insert_into_pool(&mut self, id: BlockId) {
        let b = self.blocks.get_mut(id);
        if b.private != 0 {
            return self.insert_private(id);
        }
        self.pools[b.pool as usize].insert(id, b);
    }

    pub(super) fn remove_from_pool(&mut self, id: BlockId) -> bool {
        let b = self.blocks.get(id);
        if b.private != 0 {
            return self.remove_private(id);
        }
        self.pools[b.pool as usize].remove(id, b)
    }
}
