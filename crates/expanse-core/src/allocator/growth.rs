//! Growth: new classic segments, and expandable segments that grow by
//! mapping pages (moved ones first, as the policy allows, then new ones
//! of the size the policy picks).

use std::sync::Arc;

use expanse_device::StreamId;

use super::refusal::RefusedGrowth;
use super::{DeviceAllocator, Request};
use crate::block::{Block, BlockId, PoolKind, SegmentRef};
use crate::cost::CostState;
use crate::error::AllocError;
use crate::expandable_segment::{release_pages_keeping, Page, Placement, SegmentRange};
use crate::history::Action;
use crate::policy::DeviceMemory;
use crate::pool::UnmappedKey;

/// How hard growth may push: normally within the policy's budget and page
/// sizes; at the device's limit, whatever lets the missing bytes fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pressure {
    /// Within the policy's driver budget and page sizes.
    Normal,
    /// Creating pages failed for lack of device memory.
    AtLimit,
}

/// What one growth attempt did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Growth {
    /// The block is mapped.
    Mapped,
    /// Nothing was mapped.
    Failed,
    /// Nothing was mapped: the device refused a request for all the
    /// `missing` bytes, and no free page anywhere could have moved.
    Refused { missing: u64 },
}

/// Whether a growth can succeed, as far as the free memory tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hope {
    /// It may: try.
    Some,
    /// The free memory cannot cover it.
    None,
    /// The free memory cannot cover it and the device refused a request
    /// for all the `missing` bytes.
    Refused { missing: u64 },
}

impl DeviceAllocator {
    /// Get a new block from the device: a classic segment, or growth of an
    /// expandable segment.
    pub(super) fn alloc_block(&mut self, p: &mut Request, is_retry: bool) -> Result<bool, AllocError> {
        if is_retry {
            self.stats.num_alloc_retries += 1;
        }
        if self.memory_fraction.is_some() && self.reserved + p.segment_size > self.allowed_memory_maximum {
            return Ok(false);
        }
        if self.policy.expandable() && self.device.supports_virtual_memory() {
            p.block = self.try_allocate_expandable_block(p.stream, p.pool, p.size)?;
            return Ok(p.block.is_some());
        }
        self.new_classic_segment(p, 0)
    }

    /// A new classic segment of `p.segment_size` bytes for `p`, in private
    /// pool `private` (0: the shared pools); false when the device is out
    /// of memory.
    pub(super) fn new_classic_segment(&mut self, p: &mut Request, private: u32) -> Result<bool, AllocError> {
        let size = p.segment_size;
        let addr = match self.device.malloc(size) {
            Ok(a) => a,
            Err(e) if e.is_out_of_memory() => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        self.reserved += size;
        let mut b = Block::new(addr, size, p.stream, p.pool, SegmentRef::Classic);
        b.private = private;
        let id = self.blocks.insert(b);
        self.stats.segment.increase(p.pool, 1);
        self.stats.reserved_bytes.increase(p.pool, size);
        self.note_high_water(p.pool);
        if size >= self.config.max_split_size {
            self.stats.oversize_segments.increase(1);
        }
        self.stats.num_device_alloc += 1;
        self.record(Action::SegmentAlloc, addr, size, p.stream);
        p.block = Some(id);
        Ok(true)
    }

    /// Alignment unit of a new expandable segment of `pool`.
    fn page_unit(&self, pool: PoolKind) -> u64 {
        self.policy.pages.unit(pool, self.device.granularity())
    }

    /// The numbers the policy's budget decisions need.
    pub(super) fn cost_state(&self) -> CostState {
        CostState {
            high_water_small: self.high_water[PoolKind::Small as usize],
            high_water_large: self.high_water[PoolKind::Large as usize],
            allocated_small: self.stats.allocated_bytes.pool(PoolKind::Small).peak.max(0) as u64,
            allocated_large: self.stats.allocated_bytes.pool(PoolKind::Large).peak.max(0) as u64,
            devices: 1 + self.peers.len() as u64,
            spent_us: self.stats.pages.driver_us_estimate(),
        }
    }

    /// Grow an expandable segment of `stream` and `pool` (or reserve a new
    /// one) until a free block of `size` bytes is mapped; returns it.
    fn try_allocate_expandable_block(
        &mut self,
        stream: StreamId,
        pool: PoolKind,
        size: u64,
    ) -> Result<Option<BlockId>, AllocError> {
        if self.refused_again(stream, pool, size)? {
            return Ok(None);
        }
        // A shared segment grows for every stream; its stream owns the
        // grown block, lent to `stream` (`alloc_block_from` orders it).
        let owner =
            if self.policy.lending.shares_segments() { self.shared_segment_stream(pool, stream) } else { stream };
        let Some(mut candidate) = self.find_expandable_block(owner, stream, pool, size)? else {
            return Ok(None);
        };
        // candidate: unmapped -> *, or free -> unmapped -> *
        let mut first = true;
        loop {
            let b = self.blocks.get(candidate);
            let (id, want) = if !b.mapped {
                (candidate, b.size.min(size))
            } else if b.size < size {
                let next = b.next.expect("free block followed by unmapped space");
                (next, (size - b.size).min(self.blocks.get(next).size))
            } else {
                break;
            };
            match self.map_block(id, want)? {
                Growth::Mapped => candidate = id,
                Growth::Refused { missing } if first => {
                    // Nothing changed since the search: remembered.
                    let stamp = self.stamp();
                    self.refused.growth = Some(RefusedGrowth { stream, pool, size, missing, stamp });
                    return Ok(None);
                }
                _ => return Ok(None),
            }
            first = false;
        }
        self.remove_from_pool(candidate);
        Ok(Some(candidate))
    }

    /// The stream whose expandable segment of `pool` every stream grows
    /// when segments are shared: the lowest stream with one (`stream` when
    /// there is none yet). Every live expandable segment has unmapped
    /// address space after its last mapped page, so it has an unmapped key.
    fn shared_segment_stream(&self, pool: PoolKind, stream: StreamId) -> StreamId {
        self.pools[pool as usize].unmapped.iter().next().map_or(stream, |k| k.stream)
    }

    /// An unmapped block of `stream` and `pool` (with the free block just
    /// before it, if any) that can hold `size` bytes, in a new segment if
    /// no existing one can; among several, the one the policy's
    /// [growth site](crate::policy::GrowthSite) scores lowest, the lowest
    /// address on ties. During a CUDA graph capture, only one whose
    /// growth keeps out memory `requester` may not reuse now
    /// ([`Self::run_is_clean`]); else a new segment.
    fn find_expandable_block(
        &mut self,
        stream: StreamId,
        requester: StreamId,
        pool: PoolKind,
        size: u64,
    ) -> Result<Option<BlockId>, AllocError> {
        if let Some(c) = self.best_growth_site(stream, requester, pool, size) {
            return Ok(Some(c));
        }
        self.new_expandable_segment(stream, pool, size)
    }

    /// Among `stream`'s unmapped blocks of `pool` (each with the free block
    /// just before it, if any), the one whose growth to `size` bytes the
    /// policy's growth site scores lowest, the lowest address on ties; None
    /// when no segment of the stream can hold `size` bytes.
    fn best_growth_site(&self, stream: StreamId, requester: StreamId, pool: PoolKind, size: u64) -> Option<BlockId> {
        let blocks = &self.blocks;
        let capturing = self.private.capturing();
        let site = self.policy.growth_site;
        let mut best: Option<(u64, BlockId)> = None;
        let from = UnmappedKey { stream, addr: 0, block: 0 };
        for &UnmappedKey { stream: s, block: id, .. } in self.pools[pool as usize].unmapped.range(from..) {
            if s != stream {
                break;
            }
            let mut c = id;
            if let Some(prev) = blocks.get(c).prev {
                if blocks.get(prev).is_allocatable() {
                    c = prev;
                }
            }
            let Some(new) = self.growth_new_bytes(c, size) else { continue };
            if capturing && !self.run_is_clean(c, size, requester) {
                continue;
            }
            let score = site.score(new);
            if best.is_none_or(|(b, _)| score < b) {
                best = Some((score, c));
            }
            if score == 0 {
                break;
            }
        }
        best.map(|(_, c)| c)
    }

    /// The bytes a growth of `size` bytes from block `id` on would map
    /// (the unmapped part of the run of free and unmapped blocks from it
    /// covering `size`); None when that run is too short.
    fn growth_new_bytes(&self, id: BlockId, size: u64) -> Option<u64> {
        let (mut bytes, mut unmapped) = (0u64, 0u64);
        let mut id = Some(id);
        while bytes < size {
            match id.map(|i| self.blocks.get(i)) {
                Some(b) if b.is_allocatable() => {
                    if !b.mapped {
                        unmapped += b.size.min(size - bytes);
                    }
                    bytes += b.size;
                    id = b.next;
                }
                _ => break,
            }
        }
        (bytes >= size).then_some(unmapped)
    }

    /// A new expandable segment of `stream` and `pool` that can hold
    /// `size` bytes, as one unmapped block in the pool; None when the
    /// device has no address space for it.
    fn new_expandable_segment(
        &mut self,
        stream: StreamId,
        pool: PoolKind,
        size: u64,
    ) -> Result<Option<BlockId>, AllocError> {
        let unit = self.page_unit(pool);
        let slot = self.segments.iter().position(Option::is_none).unwrap_or(self.segments.len());
        // Each slot holds a reservation of at least one page: the address
        // space runs out long before 2^32 of them.
        let Ok(slot_ref) = u32::try_from(slot) else {
            return Ok(None);
        };
        let Some(seg) = self.reserve_segment(stream, unit, size)? else {
            return Ok(None);
        };
        if slot == self.segments.len() {
            self.segments.push(None);
        }
        let mut b = Block::new(seg.base(), seg.size(), stream, pool, SegmentRef::Expandable(slot_ref));
        b.mapped = false;
        self.segments[slot] = Some(seg);
        self.reuse.forget(slot);
        let id = self.blocks.insert(b);
        self.insert_into_pool(id);
        Ok(Some(id))
    }

    /// During a CUDA graph capture, whether growing `size` bytes from
    /// block `c` for `requester` keeps out free memory it may not reuse now
    /// (`reusable_now`: another stream last used it), in the run of blocks
    /// grown into and next to it (mapped pages merge with their mapped free
    /// neighbours).
    fn run_is_clean(&self, c: BlockId, size: u64, requester: StreamId) -> bool {
        let blocks = &self.blocks;
        let clean = |i: Option<BlockId>| {
            i.is_none_or(|i| {
                let b = blocks.get(i);
                !b.is_allocatable() || !b.mapped || self.reusable_now(i, requester)
            })
        };
        if !clean(blocks.get(c).prev) {
            return false;
        }
        let mut id = Some(c);
        let mut bytes = 0u64;
        while let Some(i) = id.filter(|&i| bytes < size && blocks.get(i).is_allocatable()) {
            if !clean(Some(i)) {
                return false;
            }
            bytes += blocks.get(i).size;
            id = blocks.get(i).next;
        }
        clean(id)
    }

    /// Map at least `size` bytes at the start of unmapped block `id`.
    ///
    /// When the device has no memory left for the pages the policy picks,
    /// a policy that [adapts at the limit](crate::policy::PagePolicy::adapts_at_limit)
    /// tries once more at the limit: moves are no longer bounded by the
    /// driver budget and new pages are of the device granularity, so a
    /// large page does not fail where the missing bytes would fit.
    ///
    /// When the device refused all the missing bytes and no free page
    /// anywhere could move, the try at the limit (the same bytes, nothing
    /// more to move) would fail the same way and is not made.
    fn map_block(&mut self, id: BlockId, size: u64) -> Result<Growth, AllocError> {
        match self.map_block_under(id, size, Pressure::Normal)? {
            Growth::Failed if self.policy.pages.adapts_at_limit() => self.map_block_under(id, size, Pressure::AtLimit),
            other => Ok(other),
        }
    }

    fn map_block_under(&mut self, id: BlockId, size: u64, pressure: Pressure) -> Result<Growth, AllocError> {
        let b = self.blocks.get(id).clone();
        let Some(slot) = b.segment.slot() else {
            return Err(AllocError::Misuse { message: "map_block on a classic segment".into() });
        };
        let unit = self.page_unit(b.pool);
        let need = size.div_ceil(unit) * unit;
        let mut supply = self.take_free_pages(need, id, pressure)?;
        let free = self.device.free_memory();
        // Pages are created one by one until the device refuses, and a
        // refusal undoes them all: when the moved pages and the device's
        // free memory cannot cover the growth, that is certain, and the
        // creates and their undoing are skipped (the moved pages are
        // released below either way).
        let moved: u64 = supply.iter().map(|p| p.size).sum();
        let hope = self.growth_is_hopeless(need, moved, free, pressure);
        let refused = match hope {
            Ok(Hope::Refused { missing }) => Some(missing),
            _ => None,
        };
        let mapped = match hope {
            Ok(Hope::None | Hope::Refused { .. }) => Ok(SegmentRange { addr: b.addr, size: 0 }),
            Ok(Hope::Some) => self.map_pages(&b, slot, size, free, pressure, &mut supply),
            Err(e) => Err(e),
        };
        let device = Arc::clone(&self.device);
        // Pages taken for moving but not placed go back to the device.
        let released =
            release_pages_keeping(device.as_ref(), supply, &mut self.stats.pages, &mut self.unreleased_pages);
        let range = mapped?;
        if range.size == 0 {
            released?;
            let nothing_moves = self.nothing_to_release(PoolKind::Small) && self.nothing_to_release(PoolKind::Large);
            return Ok(match refused {
                Some(missing) if nothing_moves => Growth::Refused { missing },
                _ => Growth::Failed,
            });
        }
        debug_assert!(range.size >= size);
        self.take_mapped_range(id, &b, range);
        // A page the driver failed to release is kept for teardown; the
        // mapping above stands and the blocks say so.
        released?;
        Ok(Growth::Mapped)
    }

    /// Map at least `size` bytes (rounded up to the pool's page unit) at
    /// the start of unmapped block `b` of segment `slot`: the moved pages
    /// in `supply` first, then new pages of the size the policy picks for
    /// the driver time spent (of the device granularity at the limit).
    /// `free` is the device's free memory.
    fn map_pages(
        &mut self,
        b: &Block,
        slot: usize,
        size: u64,
        free: u64,
        pressure: Pressure,
        supply: &mut Vec<Page>,
    ) -> Result<SegmentRange, AllocError> {
        let unit = self.page_unit(b.pool);
        let need = size.div_ceil(unit) * unit;
        let cost = self.cost_state();
        let g = self.device.granularity();
        let placement = match pressure {
            Pressure::Normal => {
                let memory = DeviceMemory { free, total: self.device.total_memory() };
                self.policy.pages.placement(b.pool, b.end(), need, unit, g, &cost, memory)
            }
            Pressure::AtLimit => Placement::variable(b.end(), unit.max(g), unit.max(g)),
        };
        let device = Arc::clone(&self.device);
        let seg = self.segments[slot].as_mut().expect("live segment");
        seg.map(device.as_ref(), b.addr, size, placement, supply, &mut self.stats.pages).map_err(AllocError::from)
    }

    /// Block `id` (whose state before the growth is `b`) had `range`
    /// mapped at its start: it becomes a free mapped block of that size,
    /// the unmapped rest a block of its own, merged with its free mapped
    /// neighbours; the reserved bytes and high-water marks rise.
    fn take_mapped_range(&mut self, id: BlockId, b: &Block, range: SegmentRange) {
        debug_assert!(range.addr == b.addr && range.size <= b.size);
        self.remove_from_pool(id);
        self.blocks.get_mut(id).mapped = true;
        if range.size < b.size {
            let rest = self.split_back(id, b.addr + range.size);
            self.blocks.get_mut(rest).mapped = false;
            self.insert_into_pool(rest);
        }
        let prev = self.blocks.get(id).prev;
        let next = self.blocks.get(id).next;
        self.try_merge_blocks(id, prev);
        self.try_merge_blocks(id, next);
        self.insert_into_pool(id);
        self.reserved += range.size;
        self.stats.reserved_bytes.increase(b.pool, range.size);
        self.note_high_water(b.pool);
        self.stats.num_device_alloc += 1;
        self.record(Action::SegmentMap, range.addr, range.size, b.stream);
    }

    /// Whether a growth by `need` bytes, with `moved` bytes of moved pages
    /// in hand and `free` bytes free on the device, certainly fails: the
    /// pages to create (at least `need - moved` bytes) exceed the free
    /// memory. Under normal pressure that is confirmed by one request to
    /// the device for all the missing bytes, as a classic segment's growth
    /// asks once for the whole segment: memory that another process freed
    /// meanwhile is not missed. A page the device grants then goes straight
    /// back, and the growth is tried as usual. At the limit, which follows
    /// a normal try at once, the free memory alone decides.
    fn growth_is_hopeless(&mut self, need: u64, moved: u64, free: u64, pressure: Pressure) -> Result<Hope, AllocError> {
        if moved.saturating_add(free) >= need {
            return Ok(Hope::Some);
        }
        if pressure == Pressure::AtLimit {
            return Ok(Hope::None);
        }
        let g = self.device.granularity();
        let missing = (need - moved).div_ceil(g).saturating_mul(g);
        Ok(if self.refuses(missing)? { Hope::Refused { missing } } else { Hope::Some })
    }

    /// Raise `pool`'s high-water mark to its reserved bytes, and the
    /// device's to its own.
    pub(super) fn note_high_water(&mut self, pool: PoolKind) {
        let current = self.stats.reserved_bytes.pool(pool).current.max(0) as u64;
        let hw = &mut self.high_water[pool as usize];
        *hw = (*hw).max(current);
        self.reserved_high_water = self.reserved_high_water.max(self.reserved);
    }
}
