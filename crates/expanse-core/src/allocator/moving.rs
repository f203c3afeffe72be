//! Page moving: wholly free pages anywhere on the device are unmapped and
//! mapped again where a segment must grow (no create, no release), as
//! far as the policy's driver budget allows; and unmapping in general.

use std::sync::Arc;

use expanse_device::StreamId;

use super::growth::Pressure;
use super::DeviceAllocator;
use crate::block::{BlockId, PoolKind};
use crate::error::AllocError;
use crate::expandable_segment::{release_pages_keeping, Page};
use crate::history::Action;
use crate::pool::FreeKey;

/// Which free block gives its pages first: the greatest rank. Small-pool
/// pages first (idle small-pool space is rarely reused by large requests),
/// then the blocks the policy's [donor order](crate::policy::DonorOrder)
/// ranks first, then the highest offset in its segment: segments stay
/// compact at their low end, where allocation looks first. Never raw
/// addresses: the result must not depend on where the backend put the
/// reservations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct DonorRank {
    small_pool: bool,
    first: bool,
    offset: u64,
    stream: StreamId,
    slot: usize,
}

/// A free block that can give pages away.
struct Donor {
    rank: DonorRank,
    block: BlockId,
    /// Its wholly free pages, as (address, size), in address order.
    pages: Vec<(u64, u64)>,
}

impl DeviceAllocator {
    /// expanse: unmap wholly free pages anywhere on the device (any pool,
    /// any stream, after synchronizing that stream) to map them where a
    /// segment must grow by `need` bytes, instead of creating new pages.
    /// `target` (the unmapped block being mapped) and its neighbours are
    /// never touched.
    pub(super) fn take_free_pages(
        &mut self,
        need: u64,
        target: BlockId,
        pressure: Pressure,
    ) -> Result<Vec<Page>, AllocError> {
        // A pool with nothing to release has no wholly free page to give;
        // and during a CUDA graph capture no page moves (unmapping one
        // synchronizes the streams that used it, which a capture forbids).
        if self.private.capturing()
            || (self.nothing_to_release(PoolKind::Small) && self.nothing_to_release(PoolKind::Large))
        {
            return Ok(Vec::new());
        }
        let (mut allowed, need) = self.move_allowance(need, pressure);
        if allowed == 0 || need == 0 {
            return Ok(Vec::new());
        }
        let t = self.blocks.get(target);
        let room = t.size;
        let exclude = [Some(target), t.prev, t.next];
        let mut candidates = self.donors(&exclude);
        candidates.sort_unstable_by_key(|c| std::cmp::Reverse(c.rank));
        let mut supply = Vec::new();
        let mut got = 0u64;
        for Donor { block: id, pages, rank } in candidates {
            if got >= need || allowed == 0 {
                break;
            }
            let Some((lo, hi)) = self.suffix_run(&pages, rank.slot, need, room, &mut got, &mut allowed) else {
                continue;
            };
            match self.unmap_block_range(id, lo, hi - lo) {
                Ok(pages) => {
                    let stream = self.blocks.get(id).stream;
                    self.record(Action::PageMove, lo, pages.iter().map(|p| p.size).sum(), stream);
                    supply.extend(pages);
                }
                Err(e) => {
                    // The pages taken so far go back to the device.
                    let device = Arc::clone(&self.device);
                    let _ = release_pages_keeping(
                        device.as_ref(),
                        supply,
                        &mut self.stats.pages,
                        &mut self.unreleased_pages,
                    );
                    return Err(e);
                }
            }
        }
        Ok(supply)
    }

    /// The pages a donor gives: a suffix run of its wholly free `pages`
    /// (in address order, in segment `slot`), taken from the highest down
    /// while the bytes taken (`got`) are short of `need`, the next page
    /// still fits in `room` with them, a move is `allowed` and the page is
    /// not in the workload's working set; `got` and `allowed` are updated.
    /// The run as `(lo, hi)`, None when no page is taken.
    fn suffix_run(
        &self,
        pages: &[(u64, u64)],
        slot: usize,
        need: u64,
        room: u64,
        got: &mut u64,
        allowed: &mut u64,
    ) -> Option<(u64, u64)> {
        let mut lo = None;
        let mut hi = 0;
        for &(a, s) in pages.iter().rev() {
            if *got >= need || *got + s > room || *allowed == 0 || self.in_working_set(slot, a, s) {
                break;
            }
            *allowed -= 1;
            if lo.is_none() {
                hi = a + s;
            }
            lo = Some(a);
            *got += s;
        }
        lo.map(|lo| (lo, hi))
    }

    /// How many pages may move, and how many of the `need` bytes of a
    /// growth they may cover.
    fn move_allowance(&self, need: u64, pressure: Pressure) -> (u64, u64) {
        match pressure {
            // Moving is bounded by the driver-time budget: past it, segments
            // grow by new pages only, and the cost stays within
            // `move_budget` times what uniform pages would cost however long
            // the program runs. Below the device's high-water mark a move
            // lowers no peak: the policy may keep moves for the bytes above.
            Pressure::Normal => (
                self.policy.moving.moves_allowed(&self.cost_state()),
                self.policy.moving.movable_bytes(need, self.reserved, self.reserved_high_water),
            ),
            // At the device's limit memory is what counts: the budget no
            // longer applies (a run that keeps hitting the limit pays for
            // it), and every byte moved is one the device need not find.
            Pressure::AtLimit if self.policy.moving.moves() => (u64::MAX, need),
            Pressure::AtLimit => (0, need),
        }
    }

    /// Free blocks with wholly free pages to give, except the `exclude`d.
    fn donors(&self, exclude: &[Option<BlockId>; 3]) -> Vec<Donor> {
        let g = self.device.granularity();
        let mut donors = Vec::new();
        // Only blocks of at least a page can hold one: each stream's keys
        // from that size on (the order does not matter, donors are sorted
        // by their distinct ranks).
        for pool in &self.pools {
            for key in pool.free.streams().flat_map(|s| pool.free.at_least(s, g)) {
                let FreeKey { size, addr, block: id, .. } = *key;
                if size < g || exclude.contains(&Some(id)) {
                    continue;
                }
                let b = self.blocks.get(id);
                let Some(slot) = b.segment.slot() else { continue };
                if !b.is_allocatable() {
                    continue;
                }
                let Some(seg) = self.segments[slot].as_ref() else { continue };
                if seg.has_pages_within(addr, size) {
                    let pages = seg.pages_within(addr, size);
                    let whole = pages.iter().map(|&(_, s)| s).sum::<u64>() == size;
                    let rank = DonorRank {
                        small_pool: b.pool == PoolKind::Small,
                        first: self.policy.moving.donor_ranks_first(whole),
                        offset: addr - seg.base(),
                        stream: b.stream,
                        slot,
                    };
                    donors.push(Donor { rank, block: id, pages });
                }
            }
        }
        donors
    }

    /// Unmap the pages wholly inside `[addr, addr + size)` of free block
    /// `id`; the block is split around the unmapped part, which merges
    /// with unmapped neighbours. Returns the unmapped pages, still alive.
    pub(super) fn unmap_block_range(&mut self, id: BlockId, addr: u64, size: u64) -> Result<Vec<Page>, AllocError> {
        let b = self.blocks.get(id).clone();
        let Some(slot) = b.segment.slot() else {
            return Ok(Vec::new());
        };
        // The segment synchronizes its own stream; streams that borrowed
        // this memory must be finished with it too.
        for s in b.last_use.iter().filter(|s| *s != b.stream) {
            self.device.synchronize_stream(s)?;
            self.stats.pages.stream_syncs += 1;
        }
        let device = Arc::clone(&self.device);
        let seg = self.segments[slot].as_mut().expect("live segment");
        let (range, pages) = seg.unmap(device.as_ref(), addr, size, &mut self.stats.pages)?;
        if range.size == 0 {
            return Ok(pages);
        }
        self.remove_from_pool(id);
        // [free before][unmapped range][free after]: the block keeps the
        // unmapped middle.
        if range.addr > b.addr {
            let before = self.split_front(id, range.addr - b.addr);
            self.insert_into_pool(before);
        }
        if range.end() < b.end() {
            let after = self.split_back(id, range.end());
            self.insert_into_pool(after);
        }
        {
            let blk = self.blocks.get_mut(id);
            blk.mapped = false;
            // Unmapped memory has no users.
            blk.last_use.clear();
        }
        let prev = self.blocks.get(id).prev;
        let next = self.blocks.get(id).next;
        self.try_merge_blocks(id, prev);
        self.try_merge_blocks(id, next);
        self.insert_into_pool(id);
        self.reserved -= range.size;
        self.stats.reserved_bytes.decrease(b.pool, range.size);
        self.stats.num_device_free += 1;
        self.record(Action::SegmentUnmap, range.addr, range.size, b.stream);
        Ok(pages)
    }

    /// Unmap and release the wholly free pages of free block `id`.
    pub(super) fn unmap_block(&mut self, id: BlockId) -> Result<(), AllocError> {
        let b = self.blocks.get(id);
        let (addr, size) = (b.addr, b.size);
        let pages = self.unmap_block_range(id, addr, size)?;
        release_pages_keeping(self.device.as_ref(), pages, &mut self.stats.pages, &mut self.unreleased_pages)?;
        Ok(())
    }
}
