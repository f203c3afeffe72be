//! Release: `empty_cache`, the opt-in release above a threshold, the
//! oversize release of the out-of-memory path, garbage collection of old
//! classic segments, and teardown.

use std::sync::Arc;

use super::{DeviceAllocator, PendingEvent, Request};
use crate::block::{Arena, BlockId, PoolKind};
use crate::error::AllocError;
use crate::expandable_segment::release_pages;
use crate::history::Action;

/// A free classic segment as garbage collection sees it.
struct Aged {
    block: BlockId,
    /// Free-block searches since it was cached.
    age: u64,
    expandable: bool,
}

impl DeviceAllocator {
    /// Return every wholly free cached segment (classic) and every wholly
    /// free page (expandable) to the device, after synchronizing.
    pub fn empty_cache(&mut self) -> Result<(), AllocError> {
        self.settle();
        self.release_cached_blocks()
    }

    /// Synchronize, then free every wholly free cached segment and page.
    pub(super) fn release_cached_blocks(&mut self) -> Result<(), AllocError> {
        self.synchronize_and_free_events()?;
        self.stats.num_sync_all_streams += 1;
        self.release_blocks(PoolKind::Large)?;
        self.release_blocks(PoolKind::Small)
    }

    /// Free the cached blocks of `pool`: unsplit classic segments, and the
    /// wholly free pages of expandable ones.
    fn release_blocks(&mut self, pool: PoolKind) -> Result<(), AllocError> {
        if self.nothing_to_release(pool) {
            return Ok(());
        }
        let free: Vec<BlockId> = self.pools[pool as usize].free.iter().map(|k| k.block).collect();
        let mut to_unmap = Vec::new();
        let mut released = false;
        for id in free {
            let b = self.blocks.get(id);
            if b.is_expandable() {
                to_unmap.push(id);
            } else if !b.is_split() {
                released = true;
                self.release_block(id)?;
            }
        }
        let mut unmapped = false;
        for id in to_unmap {
            if !self.has_work_to_unmap(id) {
                continue;
            }
            unmapped = true;
            self.unmap_block(id)?;
            self.release_expandable_segment(id)?;
        }
        if !released && !unmapped {
            self.refused.nothing_to_release[pool as usize] = Some(self.stamp());
        }
        Ok(())
    }

    /// Whether [`Self::release_blocks`] would do anything in `pool`: a free
    /// unsplit classic segment, or a free expandable block with work to
    /// unmap (checked against [`Self::nothing_to_release`] by
    /// `check_invariants`).
    pub(super) fn has_work_to_release(&self, pool: PoolKind) -> bool {
        self.pools[pool as usize].free.iter().any(|k| {
            let b = self.blocks.get(k.block);
            if b.is_expandable() {
                self.has_work_to_unmap(k.block)
            } else {
                !b.is_split()
            }
        })
    }

    /// Whether unmapping free expandable block `id` would do anything: it
    /// holds a wholly free page, or another stream used it last (unmapping
    /// synchronizes that stream first). A block with neither stays as it is
    /// (it is mapped, so its segment stays too); the out-of-memory path
    /// empties the cache on every failure and skips such blocks cheaply.
    fn has_work_to_unmap(&self, id: BlockId) -> bool {
        let b = self.blocks.get(id);
        let Some(slot) = b.segment.slot() else {
            return true;
        };
        let Some(seg) = self.segments[slot].as_ref() else {
            return true;
        };
        !b.last_use.all_are(b.stream) || seg.has_pages_within(b.addr, b.size)
    }

    /// The release threshold's rule ([`ReleasePolicy::threshold`]): while
    /// cached bytes (reserved minus allocated) exceed the threshold, unmap
    /// and release wholly free pages of expandable segments, from the top
    /// of the largest free block first (highest address among equals), only
    /// as many pages as the excess needs. Each unmap first synchronizes the
    /// segment's stream and every stream that last used the block, so the
    /// pages are idle when they go (counted in `pages.stream_syncs`).
    /// Nothing happens during graph capture, where no stream may be
    /// synchronized. Called at `free` and at `malloc` entry when a
    /// threshold is set.
    ///
    /// [`ReleasePolicy::threshold`]: crate::policy::ReleasePolicy::threshold
    pub(super) fn release_over_threshold(&mut self) -> Result<(), AllocError> {
        let allocated = self.stats.allocated_bytes.all().current.max(0) as u64;
        let mut excess = self.policy.release.excess(self.reserved, allocated);
        if excess == 0 || self.private.capturing() {
            return Ok(());
        }
        let mut candidates: Vec<(u64, u64, BlockId)> = self
            .pools
            .iter()
            .flat_map(|p| p.free.iter())
            .filter(|k| self.blocks.get(k.block).is_expandable())
            .map(|k| (k.size, k.addr, k.block))
            .collect();
        candidates.sort_unstable_by(|a, b| b.cmp(a));
        for (_, _, id) in candidates {
            if excess == 0 {
                break;
            }
            let b = self.blocks.get(id);
            let (end, Some(slot)) = (b.end(), b.segment.slot()) else {
                continue;
            };
            let pages = self.segments[slot].as_ref().expect("live segment").pages_within(b.addr, b.size);
            // The fewest pages from the block's top that cover the excess.
            let (mut start, mut bytes) = (end, 0u64);
            for &(addr, size) in pages.iter().rev() {
                if bytes >= excess {
                    break;
                }
                start = addr;
                bytes += size;
            }
            if bytes == 0 {
                continue;
            }
            let released = self.unmap_block_range(id, start, end - start)?;
            release_pages(self.device.as_ref(), released, &mut self.stats.pages)?;
            self.release_expandable_segment(id)?;
            excess = excess.saturating_sub(bytes);
        }
        Ok(())
    }

    /// Free the segment of `id` if `id` is its only block and unmapped.
    fn release_expandable_segment(&mut self, id: BlockId) -> Result<(), AllocError> {
        let b = self.blocks.get(id);
        if b.mapped || b.is_split() {
            return Ok(());
        }
        let Some(slot) = b.segment.slot() else {
            return Ok(());
        };
        let device = Arc::clone(&self.device);
        let seg = self.segments[slot].as_mut().expect("live segment");
        seg.release_all(device.as_ref(), &mut self.stats.pages)?;
        self.segments[slot] = None;
        self.remove_from_pool(id);
        self.blocks.remove(id);
        Ok(())
    }

    /// Free the classic segment whose only block is `id`.
    pub(super) fn release_block(&mut self, id: BlockId) -> Result<(), AllocError> {
        let b = self.blocks.get(id).clone();
        self.device.free(b.addr)?;
        self.remove_from_pool(id);
        self.blocks.remove(id);
        self.reserved -= b.size;
        let st = b.pool;
        self.stats.segment.decrease(st, 1);
        self.stats.reserved_bytes.decrease(st, b.size);
        if b.size >= self.config.max_split_size {
            self.stats.oversize_segments.decrease(1);
        }
        self.stats.num_device_free += 1;
        self.record(Action::SegmentFree, b.addr, b.size, b.stream);
        Ok(())
    }

    /// Free oversize cached blocks (>= max_split_size) of the request's
    /// stream until the request could fit.
    pub(super) fn release_available_cached_blocks(&mut self, p: &Request) -> Result<bool, AllocError> {
        let max_split = self.config.max_split_size;
        if max_split == u64::MAX {
            return Ok(false);
        }
        let key_size = p.size.max(max_split);
        let pool = &self.pools[p.pool as usize];
        let first = pool.free.at_least(p.stream, key_size).next().copied();
        match first {
            Some(k) if k.stream == p.stream && !self.blocks.get(k.block).is_expandable() => {
                self.release_block(k.block)?;
                Ok(true)
            }
            _ => {
                // Free several oversize blocks, largest first.
                let below = pool.free.below(p.stream, key_size);
                let mut released = 0u64;
                for k in below {
                    if released >= key_size || k.size < max_split || k.stream != p.stream {
                        break;
                    }
                    if !self.blocks.get(k.block).is_expandable() {
                        self.release_block(k.block)?;
                        released += k.size;
                    }
                }
                Ok(released >= key_size)
            }
        }
    }

    /// Free old cached classic segments once reserved memory passes the
    /// garbage-collection threshold of the allowed memory.
    pub(super) fn garbage_collect_cached_blocks(&mut self) -> Result<(), AllocError> {
        let threshold = (self.config.garbage_collection_threshold * self.allowed_memory_maximum as f64) as u64;
        if self.reserved <= threshold {
            return Ok(());
        }
        let target = self.reserved - threshold;
        let clock = self.pools[PoolKind::Large as usize].free_block_searches;
        let include_expandable = self.policy.release.gc_ages_include_expandable;
        let ages: Vec<Aged> = self.pools[PoolKind::Large as usize]
            .free
            .iter()
            .map(|k| (k.block, self.blocks.get(k.block)))
            .filter(|(_, b)| !(b.is_split() || (!include_expandable && b.is_expandable())))
            .map(|(block, b)| Aged { block, age: clock - b.gc_base, expandable: b.is_expandable() })
            .collect();
        let mut total_age: u64 = ages.iter().map(|a| a.age).sum();
        let mut count = ages.len() as u64;
        let mut reclaimed = 0u64;
        let mut freed_any = true;
        let mut live = ages;
        while reclaimed < target && freed_any && count > 0 {
            let threshold_age = total_age as f64 / count as f64;
            freed_any = false;
            let mut keep = Vec::with_capacity(live.len());
            for a in live {
                if !a.expandable && a.age as f64 >= threshold_age {
                    let size = self.blocks.get(a.block).size;
                    self.release_block(a.block)?;
                    reclaimed += size;
                    total_age -= a.age;
                    count -= 1;
                    freed_any = true;
                } else {
                    keep.push(a);
                }
            }
            live = keep;
        }
        Ok(())
    }

    /// Release everything back to the device (used by `Drop`); errors are
    /// collected, not raised.
    pub(super) fn teardown(&mut self) {
        self.settle();
        if !self.active.is_empty() {
            self.teardown_errors.push(format!("{} allocation(s) still live at shutdown", self.active.len()));
        }
        if let Err(e) = self.device.synchronize() {
            self.teardown_errors.push(format!("synchronize: {e}"));
        }
        let mut unreleased = std::mem::take(&mut self.unreleased_events);
        unreleased.extend(self.take_mark_events());
        let pending = std::mem::take(&mut self.events).into_values().flatten().map(|PendingEvent { event, .. }| event);
        for event in unreleased.into_iter().chain(pending.collect::<Vec<_>>()) {
            {
                if let Err(e) = self.device.release_event(event) {
                    self.teardown_errors.push(format!("releasing event {event:?}: {e}"));
                }
            }
        }
        let device = Arc::clone(&self.device);
        for seg in self.segments.iter_mut().flatten() {
            if let Err(e) = seg.release_all(device.as_ref(), &mut self.stats.pages) {
                self.teardown_errors.push(format!("releasing segment {:#x}: {e}", seg.base()));
            }
        }
        self.segments.clear();
        for p in std::mem::take(&mut self.unreleased_pages) {
            if let Err(e) = device.release_page(p.handle) {
                self.teardown_errors.push(format!("releasing page {:?}: {e}", p.handle));
            }
        }
        let classic: Vec<u64> =
            self.blocks.iter().filter(|(_, b)| !b.is_expandable() && b.prev.is_none()).map(|(_, b)| b.addr).collect();
        for addr in classic {
            if let Err(e) = device.free(addr) {
                self.teardown_errors.push(format!("freeing segment {addr:#x}: {e}"));
            }
        }
        self.blocks = Arena::default();
        self.active.clear();
    }
}
