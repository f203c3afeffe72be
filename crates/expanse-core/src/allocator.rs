//! The caching allocator of one device.
//!
//! Its decisions follow PyTorch's `CUDACachingAllocator` (pools, rounding,
//! best fit per stream, split and merge rules, oversize rules, OOM retry,
//! stream-ordered reuse, statistics); with `pytorch_compat` they are the
//! same decisions, byte for byte. Without it, expandable segments add
//! expanse's improvements:
//! - a stream with no cached block that fits borrows the best-fitting free
//!   block of another stream, ordered by an event wait (`lend_free_block`,
//!   `order_reuse`);
//! - segments grow by moving wholly free pages from anywhere on the device
//!   before creating new ones (`take_free_pages`);
//! - pages are sized to the growth, from 2 MiB up to 40 MiB;
//! - moving and page size are governed by a driver-time budget relative to
//!   PyTorch's uniform pages (`moves_allowed`, `grow_size`);
//! - the oversize and GC rules leave expandable blocks alone.
//!
//! Everything here works on integer addresses and opaque ids; the only
//! outside effect is calls on the [`Device`].
#![forbid(unsafe_code)]

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use expanse_device::{Device, EventId, StreamId};

use crate::block::{Arena, Block, BlockId, PoolKind, SegmentRef};
use crate::config::Config;
use crate::error::{format_size, AllocError};
use crate::expandable_segment::{release_pages, ExpandableSegment, Page, Placement};
use crate::pool::Pool;
use crate::size_class::{allocation_size, round_size, MAX_REQUEST, MIN_BLOCK_SIZE, SMALL_SIZE};
use crate::stats::{decrease, increase, DeviceStats, StatType};

/// Hash of a block address for the active map: addresses are multiples of
/// 512, so the low bits carry nothing; a multiplicative mix of the rest is
/// much cheaper than SipHash and not exposed to untrusted keys.
#[derive(Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (x >> 9).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// What an out-of-memory observer is told.
#[derive(Clone, Debug)]
pub struct OomInfo {
    /// Device index.
    pub device: u32,
    /// Bytes the failed request needed.
    pub alloc_size: u64,
    /// Memory this process may use (fraction applied) or device total.
    pub allowed: u64,
    /// Free device memory reported by the driver.
    pub device_free: u64,
}

/// An out-of-memory observer.
pub type OomObserver = Arc<dyn Fn(&OomInfo) + Send + Sync>;

/// A block that can give pages away: (preference, block, its whole pages).
type Donor = ((bool, u64, StreamId, usize), BlockId, Vec<(u64, u64)>);

/// A request being served.
struct Params {
    size: u64,
    alloc_size: u64,
    stream: StreamId,
    pool: PoolKind,
    block: Option<BlockId>,
}

fn stat_type(pool: PoolKind) -> StatType {
    match pool {
        PoolKind::Small => StatType::SmallPool,
        PoolKind::Large => StatType::LargePool,
    }
}

/// The allocator state of one device. Not thread-safe by itself:
/// [`CachingAllocator`](crate::CachingAllocator) wraps each in a mutex.
pub struct DeviceAllocator {
    device: Arc<dyn Device>,
    config: Config,
    blocks: Arena,
    pools: [Pool; 2],
    /// Allocated blocks by address.
    active: HashMap<u64, BlockId, BuildHasherDefault<AddrHasher>>,
    segments: Vec<Option<ExpandableSegment>>,
    /// Pending stream events, per stream, in record order.
    events: HashMap<StreamId, VecDeque<(EventId, BlockId)>>,
    stats: DeviceStats,
    /// Bytes reserved from the device (classic segments + mapped pages).
    total_allocated_memory: u64,
    memory_fraction: Option<f64>,
    allowed_memory_maximum: u64,
    peers: Vec<u32>,
    oom_observers: Vec<OomObserver>,
    /// Errors met while tearing down, reported by `Drop`.
    teardown_errors: Vec<String>,
    /// Highest reserved bytes ever per pool (small, large); never reset.
    high_water: [u64; 2],
}

impl std::fmt::Debug for DeviceAllocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceAllocator")
            .field("device", &self.device.name())
            .field("config", &self.config)
            .field("blocks", &self.blocks.len())
            .field("reserved", &self.total_allocated_memory)
            .finish()
    }
}

impl DeviceAllocator {
    /// An allocator for `device` with `config`.
    pub fn new(device: Arc<dyn Device>, config: Config) -> Self {
        let mut a = DeviceAllocator {
            device,
            config,
            blocks: Arena::default(),
            pools: [Pool::default(), Pool::default()],
            active: HashMap::default(),
            segments: Vec::new(),
            events: HashMap::new(),
            stats: DeviceStats::default(),
            total_allocated_memory: 0,
            memory_fraction: None,
            allowed_memory_maximum: 0,
            peers: Vec::new(),
            oom_observers: Vec::new(),
            teardown_errors: Vec::new(),
            high_water: [0; 2],
        };
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
        let f = fraction.clamp(0.0, 1.0);
        self.memory_fraction = Some(f);
        self.allowed_memory_maximum = (f * self.device.total_memory() as f64) as u64;
    }

    /// Call `observer` on every out-of-memory failure.
    pub fn add_oom_observer(&mut self, observer: OomObserver) {
        self.oom_observers.push(observer);
    }

    fn expanse_mode(&self) -> bool {
        !self.config.pytorch_compat
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

    fn insert_into_pool(&mut self, id: BlockId) {
        let b = self.blocks.get_mut(id);
        self.pools[b.pool as usize].insert(id, b);
    }

    fn remove_from_pool(&mut self, id: BlockId) -> bool {
        let b = self.blocks.get(id);
        self.pools[b.pool as usize].remove(id, b)
    }

    fn segment(&self, b: &Block) -> Option<&ExpandableSegment> {
        match b.segment {
            SegmentRef::Expandable(i) => self.segments[i].as_ref(),
            SegmentRef::Classic => None,
        }
    }

    // ----------------------------------------------------------------- malloc

    /// Allocate `size` bytes for use on `stream`; returns the address.
    pub fn malloc(&mut self, orig_size: u64, stream: StreamId) -> Result<u64, AllocError> {
        if orig_size > MAX_REQUEST {
            self.stats.num_ooms += 1;
            return Err(AllocError::TooLarge { requested: orig_size });
        }
        self.process_events()?;
        let size = round_size(orig_size, &self.config);
        let pool = Self::pool_of(size);
        let mut p = Params { size, alloc_size: allocation_size(size), stream, pool, block: None };

        let mut found = self.get_free_block(&mut p) || self.lend_free_block(&mut p);
        if !found {
            if self.gc_enabled() {
                self.garbage_collect_cached_blocks()?;
            }
            found = self.alloc_block(&mut p, false)?
                || (self.release_available_cached_blocks(&p)? && self.alloc_block(&mut p, false)?)
                || (self.release_cached_blocks()? && self.alloc_block(&mut p, true)?);
        }
        if !found {
            return Err(self.out_of_memory(&p));
        }
        let id = p.block.expect("found block");
        self.alloc_found_block(&p, id, orig_size)
    }

    fn out_of_memory(&mut self, p: &Params) -> AllocError {
        self.stats.num_ooms += 1;
        let total = self.device.total_memory();
        let device_free = self.device.free_memory();
        let allowed = if self.memory_fraction.is_some() { self.allowed_memory_maximum } else { total };
        let info = OomInfo { device: self.device.ordinal(), alloc_size: p.alloc_size, allowed, device_free };
        for obs in &self.oom_observers {
            obs(&info);
        }
        let allocated = self.stats.allocated_bytes[0].current.max(0) as u64;
        let reserved = self.stats.reserved_bytes[0].current.max(0) as u64;
        let allowed_info = if self.memory_fraction.is_some() {
            format!("{} allowed; ", format_size(self.allowed_memory_maximum))
        } else {
            String::new()
        };
        let hint = if self.config.expandable_segments {
            ""
        } else {
            " If reserved but unallocated memory is large try setting expandable_segments:True in EXPANSE_ALLOC_CONF to avoid fragmentation."
        };
        let request = if self.config.expandable_segments { p.size } else { p.alloc_size };
        let message = format!(
            "Out of memory. Tried to allocate {}. GPU {} has a total capacity of {} of which {} is free. {}Of the allocated memory {} is allocated by this allocator, and {} is reserved by this allocator but unallocated.{}",
            format_size(request),
            self.device.ordinal(),
            format_size(total),
            format_size(device_free),
            allowed_info,
            format_size(allocated),
            format_size(reserved.saturating_sub(allocated)),
            hint
        );
        AllocError::OutOfMemory { device: self.device.ordinal(), requested: request, message }
    }

    /// Best fit among cached free blocks on the same stream.
    fn get_free_block(&mut self, p: &mut Params) -> bool {
        let gc = self.gc_enabled();
        let expanse = self.expanse_mode();
        let max_split = self.config.max_split_size;
        let rounding = self.config.max_non_split_rounding;
        let blocks = &self.blocks;
        let pool = &mut self.pools[p.pool as usize];
        if gc {
            pool.free_block_searches += 1;
        }
        let mut it = pool.free.range((p.stream, p.size, 0, 0)..);
        let Some(&first) = it.next() else {
            return false;
        };
        if first.0 != p.stream {
            return false;
        }
        let mut cur = first;
        if blocks.get(cur.3).is_expandable() {
            // A block followed by unmapped space can grow to any size: for
            // best fit, compare blocks by the size they can reach, so that
            // such a block is taken only when nothing else fits.
            let reach = |id: BlockId| {
                let b = blocks.get(id);
                b.size + b.next.map(|n| blocks.get(n)).filter(|n| !n.mapped).map_or(0, |n| n.size)
            };
            for &next in it {
                if !blocks.get(cur.3).is_expandable() || next.0 != p.stream || reach(next.3) >= reach(cur.3) {
                    break;
                }
                cur = next;
            }
        }
        let b = blocks.get(cur.3);
        let oversize_rules = !(expanse && b.is_expandable());
        if oversize_rules {
            if p.size < max_split && b.size >= max_split {
                return false;
            }
            if p.size >= max_split && b.size >= p.size.saturating_add(rounding) {
                return false;
            }
        }
        pool.free.remove(&cur);
        p.block = Some(cur.3);
        true
    }

    /// Get a new block from the device: a classic segment, or growth of an
    /// expandable segment.
    fn alloc_block(&mut self, p: &mut Params, is_retry: bool) -> Result<bool, AllocError> {
        if is_retry {
            self.stats.num_alloc_retries += 1;
        }
        if self.memory_fraction.is_some() && self.total_allocated_memory + p.alloc_size > self.allowed_memory_maximum {
            return Ok(false);
        }
        if self.config.expandable_segments && self.device.supports_virtual_memory() {
            p.block = self.try_allocate_expandable_block(p.stream, p.pool, p.size)?;
            return Ok(p.block.is_some());
        }
        let size = p.alloc_size;
        let addr = match self.device.malloc(size) {
            Ok(a) => a,
            Err(e) if e.is_out_of_memory() => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        self.total_allocated_memory += size;
        let id = self.blocks.insert(Block::new(addr, size, p.stream, p.pool, SegmentRef::Classic));
        let st = stat_type(p.pool);
        increase(&mut self.stats.segment, st, 1);
        increase(&mut self.stats.reserved_bytes, st, size);
        self.note_high_water(p.pool);
        if size >= self.config.max_split_size {
            self.stats.oversize_segments.increase(1);
        }
        self.stats.num_device_alloc += 1;
        p.block = Some(id);
        Ok(true)
    }

    fn should_split(&self, b: &Block, size: u64) -> bool {
        let remaining = b.size - size;
        if b.pool == PoolKind::Small || self.config.expandable_segments {
            remaining >= MIN_BLOCK_SIZE
        } else {
            size < self.config.max_split_size && remaining > SMALL_SIZE
        }
    }

    fn alloc_found_block(&mut self, p: &Params, id: BlockId, orig_size: u64) -> Result<u64, AllocError> {
        let st = stat_type(p.pool);
        let split = self.should_split(self.blocks.get(id), p.size);
        let b = self.blocks.get(id);
        let already_split = b.is_split();
        let expandable = b.is_expandable();
        let mut id = id;
        if split {
            // [block of size][remaining] — the remaining keeps the old id.
            let remaining = id;
            let new_id = self.split_front(remaining, p.size);
            self.insert_into_pool(remaining);
            let rem_size = self.blocks.get(remaining).size;
            if already_split && !expandable {
                decrease(&mut self.stats.inactive_split_bytes, st, p.size);
            } else if !expandable {
                increase(&mut self.stats.inactive_split_bytes, st, rem_size);
                increase(&mut self.stats.inactive_split, st, 1);
            }
            id = new_id;
        } else if already_split && !expandable {
            let size = self.blocks.get(id).size;
            decrease(&mut self.stats.inactive_split_bytes, st, size);
            decrease(&mut self.stats.inactive_split, st, 1);
        }
        self.order_reuse(id, p.stream)?;
        let b = self.blocks.get_mut(id);
        b.allocated = true;
        b.requested = orig_size;
        let (addr, size) = (b.addr, b.size);
        self.active.insert(addr, id);
        increase(&mut self.stats.allocation, st, 1);
        increase(&mut self.stats.allocated_bytes, st, size);
        increase(&mut self.stats.active, st, 1);
        increase(&mut self.stats.active_bytes, st, size);
        increase(&mut self.stats.requested_bytes, st, orig_size);
        if size >= self.config.max_split_size {
            self.stats.oversize_allocations.increase(1);
        }
        Ok(addr)
    }

    /// Order `stream`'s coming work after every other stream that may still
    /// touch block `id`: an event recorded on each, waited on by `stream`
    /// (no host wait). Then `stream` is the block's only user.
    fn order_reuse(&mut self, id: BlockId, stream: StreamId) -> Result<(), AllocError> {
        let users = &self.blocks.get(id).last_use;
        if users.iter().all(|s| s == stream) {
            if users.is_empty() {
                self.blocks.get_mut(id).last_use.insert(stream);
            }
            return Ok(());
        }
        let others: Vec<StreamId> = users.iter().filter(|s| *s != stream).collect();
        for other in others {
            let e = self.device.record_event(other)?;
            let waited = self.device.wait_event(stream, e);
            let released = self.device.release_event(e);
            waited?;
            released?;
            self.stats.cross_stream_waits += 1;
        }
        let b = self.blocks.get_mut(id);
        b.last_use.clear();
        b.last_use.insert(stream);
        Ok(())
    }

    /// expanse: when the request's stream has no cached block that fits,
    /// take the best-fitting free block of another stream's expandable
    /// segment instead of growing. The reuse is stream-ordered by
    /// `order_reuse` (an event wait, no page operation, no host wait).
    fn lend_free_block(&mut self, p: &mut Params) -> bool {
        if !self.expanse_mode() || !self.config.expandable_segments {
            return false;
        }
        let blocks = &self.blocks;
        let pool = &mut self.pools[p.pool as usize];
        let mut best: Option<crate::pool::FreeKey> = None;
        let mut from = (StreamId(0), p.size, 0u64, 0 as BlockId);
        // One best-fit look-up per stream: keys are (stream, size, ...).
        while let Some(&k) = pool.free.range(from..).next() {
            if k.1 < p.size {
                // A new stream's first block is too small: jump to the size.
                from = (k.0, p.size, 0, 0);
                continue;
            }
            if k.0 != p.stream && blocks.get(k.3).is_expandable() && best.is_none_or(|b| k.1 < b.1) {
                best = Some(k);
            }
            match k.0 .0.checked_add(1) {
                Some(n) => from = (StreamId(n), 0, 0, 0),
                None => break,
            }
        }
        let Some(k) = best else { return false };
        pool.free.remove(&k);
        p.block = Some(k.3);
        true
    }

    // ------------------------------------------------------------ expandable

    fn page_unit(&self, pool: PoolKind) -> u64 {
        if self.expanse_mode() {
            self.device.granularity()
        } else {
            match pool {
                PoolKind::Small => self.config.small_page_size,
                PoolKind::Large => self.config.large_page_size,
            }
        }
    }

    fn try_allocate_expandable_block(
        &mut self,
        stream: StreamId,
        pool: PoolKind,
        size: u64,
    ) -> Result<Option<BlockId>, AllocError> {
        let Some(mut candidate) = self.find_expandable_block(stream, pool, size)? else {
            return Ok(None);
        };
        // candidate: unmapped -> *, or free -> unmapped -> *
        if !self.blocks.get(candidate).mapped {
            let want = self.blocks.get(candidate).size.min(size);
            if !self.map_block(candidate, want)? {
                return Ok(None);
            }
        }
        while self.blocks.get(candidate).size < size {
            let remaining = size - self.blocks.get(candidate).size;
            let next = self.blocks.get(candidate).next.expect("free block followed by unmapped space");
            let want = remaining.min(self.blocks.get(next).size);
            if !self.map_block(next, want)? {
                return Ok(None);
            }
            candidate = next;
        }
        self.remove_from_pool(candidate);
        Ok(Some(candidate))
    }

    fn find_expandable_block(
        &mut self,
        stream: StreamId,
        pool: PoolKind,
        size: u64,
    ) -> Result<Option<BlockId>, AllocError> {
        let blocks = &self.blocks;
        let has_room = |mut id: Option<BlockId>| {
            let mut bytes = 0u64;
            while bytes < size {
                match id.map(|i| blocks.get(i)) {
                    Some(b) if b.is_allocatable() => {
                        bytes += b.size;
                        id = b.next;
                    }
                    _ => break,
                }
            }
            bytes >= size
        };
        for &(s, _, id) in self.pools[pool as usize].unmapped.range((stream, 0, 0)..) {
            if s != stream {
                break;
            }
            let mut c = id;
            if let Some(prev) = blocks.get(c).prev {
                if blocks.get(prev).is_allocatable() {
                    c = prev;
                }
            }
            if has_room(Some(c)) {
                return Ok(Some(c));
            }
        }
        let unit = self.page_unit(pool);
        let seg = match ExpandableSegment::new(self.device.as_ref(), stream, unit, &self.peers) {
            Ok(s) => s,
            Err(e) if e.is_out_of_memory() => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let slot = match self.segments.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.segments.push(None);
                self.segments.len() - 1
            }
        };
        let mut b = Block::new(seg.base(), seg.size(), stream, pool, SegmentRef::Expandable(slot));
        b.mapped = false;
        self.segments[slot] = Some(seg);
        let id = self.blocks.insert(b);
        self.insert_into_pool(id);
        Ok(Some(id))
    }

    /// Map at least `size` bytes at the start of unmapped block `id`.
    fn map_block(&mut self, id: BlockId, size: u64) -> Result<bool, AllocError> {
        let b = self.blocks.get(id).clone();
        let SegmentRef::Expandable(slot) = b.segment else {
            return Err(AllocError::Misuse { message: "map_block on a classic segment".into() });
        };
        let unit = self.page_unit(b.pool);
        let need = size.div_ceil(unit) * unit;
        let mut supply = if self.expanse_mode() { self.take_free_pages(need, id)? } else { Vec::new() };
        let placement = match (self.expanse_mode(), b.pool) {
            (false, _) => Placement::uniform(b.end()),
            // Small-pool growth is small: pages of the small page size.
            (true, PoolKind::Small) => {
                let page = self.config.small_page_size.max(unit);
                Placement::variable(b.end(), page, page)
            }
            (true, PoolKind::Large) => {
                Placement::variable(b.end(), self.grow_size(need).max(unit), self.config.max_page_size)
            }
        };
        let device = Arc::clone(&self.device);
        let seg = self.segments[slot].as_mut().expect("live segment");
        let mapped = seg.map(device.as_ref(), b.addr, size, placement, &mut supply, &mut self.stats.pages);
        // Pages taken for moving but not placed go back to the device.
        let released = release_pages(device.as_ref(), supply, &mut self.stats.pages);
        let range = mapped?;
        released?;
        if range.size == 0 {
            return Ok(false);
        }
        debug_assert!(range.addr == b.addr && range.size >= size && range.size <= b.size);
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
        self.total_allocated_memory += range.size;
        increase(&mut self.stats.reserved_bytes, stat_type(b.pool), range.size);
        self.note_high_water(b.pool);
        self.stats.num_device_alloc += 1;
        Ok(true)
    }

    fn note_high_water(&mut self, pool: PoolKind) {
        let current = self.stats.reserved_bytes[stat_type(pool) as usize].current.max(0) as u64;
        let hw = &mut self.high_water[pool as usize];
        *hw = (*hw).max(current);
    }

    /// Driver time (µs, the reference's H200 costs) that PyTorch's uniform
    /// pages would at least spend to map this allocator's high-water marks:
    /// one create, map and access grant per small (2 MiB) and large
    /// (20 MiB) page.
    fn uniform_pages_cost(&self) -> f64 {
        let devices = 1.0 + self.peers.len() as f64;
        let per_page = 10.4 + 0.7 + 26.0 * devices;
        let small = self.high_water[0].div_ceil(self.config.small_page_size.max(1));
        let large = self.high_water[1].div_ceil(self.config.large_page_size.max(1));
        per_page * (small + large) as f64
    }

    /// Smallest page to create when the large pool grows by `need` bytes.
    ///
    /// Small pages waste less at the edges of free blocks but cost the same
    /// driver time per page as big ones. While the driver time spent is far
    /// below the budget, pages start at `min_grow_size`; as it approaches
    /// the budget they grow towards the large page size (PyTorch's 20 MiB),
    /// so a workload that grows often in small steps cannot run up many
    /// times PyTorch's driver time.
    fn grow_size(&self, need: u64) -> u64 {
        let floor = self.config.min_grow_size;
        let ceiling = self.config.large_page_size.max(floor);
        if self.config.move_budget <= 0.0 {
            return floor;
        }
        let devices = 1.0 + self.peers.len() as f64;
        let per_page = 10.4 + 0.7 + 26.0 * devices;
        let pages_after = (self.high_water[1] + need).div_ceil(self.config.large_page_size.max(1))
            + self.high_water[0].div_ceil(self.config.small_page_size.max(1));
        let budget = self.config.move_budget * per_page * pages_after as f64;
        let used = (self.stats.pages.driver_us_estimate() / budget).clamp(0.0, 1.0);
        let g = self.device.granularity();
        let size = (floor as f64 + (ceiling - floor) as f64 * used) as u64;
        size.div_ceil(g) * g
    }

    /// How many more pages may be moved within the driver-time budget.
    fn moves_allowed(&self) -> u64 {
        let devices = 1.0 + self.peers.len() as f64;
        let per_move = 17.0 + 0.7 + 26.0 * devices;
        let budget = self.config.move_budget * self.uniform_pages_cost() - self.stats.pages.driver_us_estimate();
        if budget <= 0.0 {
            0
        } else {
            (budget / per_move) as u64
        }
    }

    /// expanse: unmap wholly free pages anywhere on the device (any pool,
    /// any stream, after synchronizing that stream) to map them where a
    /// segment must grow by `need` bytes, instead of creating new pages.
    /// `target` (the unmapped block being mapped) and its neighbours are
    /// never touched.
    fn take_free_pages(&mut self, need: u64, target: BlockId) -> Result<Vec<Page>, AllocError> {
        // Moving is bounded by the driver-time budget: past it, segments grow
        // by new pages only, and the cost stays within `move_budget` times
        // what uniform pages would cost however long the program runs.
        let mut allowed = self.moves_allowed();
        if allowed == 0 || need == 0 {
            return Ok(Vec::new());
        }
        let t = self.blocks.get(target);
        let room = t.size;
        let exclude = [Some(target), t.prev, t.next];
        let g = self.device.granularity();
        // (preference, block, pages wholly inside)
        let mut candidates: Vec<Donor> = Vec::new();
        for pool in &self.pools {
            for &(_, size, addr, id) in pool.free.iter() {
                if size < g || exclude.contains(&Some(id)) {
                    continue;
                }
                let b = self.blocks.get(id);
                if !b.is_allocatable() {
                    continue;
                }
                if let Some(seg) = self.segment(b) {
                    let pages = seg.pages_within(addr, size);
                    if !pages.is_empty() {
                        // Small-pool pages first (idle small-pool space is
                        // rarely reused by large requests), then the highest
                        // offset in its segment: segments stay compact at
                        // their low end, where allocation looks first.
                        // Never raw addresses: the result must not depend on
                        // where the backend put the reservations.
                        let slot = match b.segment {
                            SegmentRef::Expandable(i) => i,
                            SegmentRef::Classic => 0,
                        };
                        candidates.push(((b.pool == PoolKind::Small, addr - seg.base(), b.stream, slot), id, pages));
                    }
                }
            }
        }
        candidates.sort_unstable_by_key(|c| std::cmp::Reverse(c.0));
        let mut supply = Vec::new();
        let mut got = 0u64;
        for (_, id, pages) in candidates {
            if got >= need || allowed == 0 {
                break;
            }
            // A suffix run of this block's pages, all of them fitting the
            // unmapped run they will be placed in.
            let mut lo = None;
            let mut hi = 0;
            for &(a, s) in pages.iter().rev() {
                if got >= need || got + s > room || allowed == 0 {
                    break;
                }
                allowed -= 1;
                if lo.is_none() {
                    hi = a + s;
                }
                lo = Some(a);
                got += s;
            }
            let Some(lo) = lo else { continue };
            let pages = self.unmap_block_range(id, lo, hi - lo)?;
            supply.extend(pages);
        }
        Ok(supply)
    }

    /// Unmap the pages wholly inside `[addr, addr + size)` of free block
    /// `id`; the block is split around the unmapped part, which merges
    /// with unmapped neighbours. Returns the unmapped pages, still alive.
    fn unmap_block_range(&mut self, id: BlockId, addr: u64, size: u64) -> Result<Vec<Page>, AllocError> {
        let b = self.blocks.get(id).clone();
        let SegmentRef::Expandable(slot) = b.segment else {
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
        self.total_allocated_memory -= range.size;
        decrease(&mut self.stats.reserved_bytes, stat_type(b.pool), range.size);
        self.stats.num_device_free += 1;
        Ok(pages)
    }

    /// Unmap and release the wholly free pages of free block `id`.
    fn unmap_block(&mut self, id: BlockId) -> Result<(), AllocError> {
        let b = self.blocks.get(id);
        let (addr, size) = (b.addr, b.size);
        let pages = self.unmap_block_range(id, addr, size)?;
        release_pages(self.device.as_ref(), pages, &mut self.stats.pages)?;
        Ok(())
    }

    /// Split the first `size` bytes of block `id` off into a new block just
    /// before it, with the same segment, stream, pool, mapping state and
    /// users. Neither block is in a pool set afterwards: the caller files
    /// them. Returns the new block.
    fn split_front(&mut self, id: BlockId, size: u64) -> BlockId {
        let b = self.blocks.get(id);
        let mut f = Block::new(b.addr, size, b.stream, b.pool, b.segment);
        f.mapped = b.mapped;
        f.last_use = b.last_use.clone();
        f.prev = b.prev;
        f.next = Some(id);
        let prev = b.prev;
        let fid = self.blocks.insert(f);
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
    fn split_back(&mut self, id: BlockId, at: u64) -> BlockId {
        let b = self.blocks.get(id);
        let mut f = Block::new(at, b.end() - at, b.stream, b.pool, b.segment);
        f.mapped = b.mapped;
        f.last_use = b.last_use.clone();
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
    fn try_merge_blocks(&mut self, dst: BlockId, src: Option<BlockId>) -> u64 {
        let Some(src) = src else { return 0 };
        let s = self.blocks.get(src);
        let d = self.blocks.get(dst);
        if s.allocated || s.event_count > 0 || !s.stream_uses.is_empty() || s.mapped != d.mapped {
            return 0;
        }
        let src_is_prev = d.prev == Some(src);
        self.remove_from_pool(src);
        let s = self.blocks.remove(src);
        if src_is_prev {
            if let Some(pp) = s.prev {
                self.blocks.get_mut(pp).next = Some(dst);
            }
        } else if let Some(nn) = s.next {
            self.blocks.get_mut(nn).prev = Some(dst);
        }
        let d = self.blocks.get_mut(dst);
        if src_is_prev {
            d.addr = s.addr;
            d.prev = s.prev;
        } else {
            d.next = s.next;
        }
        d.size += s.size;
        d.last_use.extend(&s.last_use);
        s.size
    }

    // ------------------------------------------------------------------ free

    /// Free the allocation at `ptr`. An unknown pointer (never allocated
    /// here, or already freed) is a misuse error and changes nothing.
    pub fn free(&mut self, ptr: u64) -> Result<(), AllocError> {
        let Some(id) = self.active.remove(&ptr) else {
            return Err(AllocError::Misuse {
                message: format!(
                    "free of unknown pointer {ptr:#x} on device {}: not allocated by this allocator, or already freed",
                    self.device.ordinal()
                ),
            });
        };
        let b = self.blocks.get_mut(id);
        b.allocated = false;
        let (pool, size, requested) = (b.pool, b.size, b.requested);
        b.requested = 0;
        let st = stat_type(pool);
        decrease(&mut self.stats.allocation, st, 1);
        decrease(&mut self.stats.allocated_bytes, st, size);
        decrease(&mut self.stats.requested_bytes, st, requested);
        if size >= self.config.max_split_size {
            self.stats.oversize_allocations.decrease(1);
        }
        if !self.blocks.get(id).stream_uses.is_empty() {
            self.insert_events(id)
        } else {
            self.free_block(id);
            Ok(())
        }
    }

    fn free_block(&mut self, id: BlockId) {
        let b = self.blocks.get(id);
        let (orig_size, pool, expandable) = (b.size, b.pool, b.is_expandable());
        let (prev, next) = (b.prev, b.next);
        let mut d_blocks: i64 = 0;
        let mut d_bytes: i64 = 0;
        for cand in [prev, next] {
            let taken = self.try_merge_blocks(id, cand);
            if taken > 0 {
                d_blocks -= 1;
                d_bytes -= taken as i64;
            }
        }
        self.insert_into_pool(id);
        let b = self.blocks.get(id);
        if b.is_split() {
            d_blocks += 1;
            d_bytes += b.size as i64;
        }
        let st = stat_type(pool);
        if !expandable {
            if d_blocks > 0 {
                increase(&mut self.stats.inactive_split, st, d_blocks as u64);
            } else if d_blocks < 0 {
                decrease(&mut self.stats.inactive_split, st, (-d_blocks) as u64);
            }
            if d_bytes > 0 {
                increase(&mut self.stats.inactive_split_bytes, st, d_bytes as u64);
            } else if d_bytes < 0 {
                decrease(&mut self.stats.inactive_split_bytes, st, (-d_bytes) as u64);
            }
        }
        decrease(&mut self.stats.active, st, 1);
        decrease(&mut self.stats.active_bytes, st, orig_size);
    }

    /// Mark the allocation at `ptr` as used on `stream` too: when freed, it
    /// is reused only after the work queued on `stream` by then completed.
    pub fn record_stream(&mut self, ptr: u64, stream: StreamId) -> Result<(), AllocError> {
        let Some(&id) = self.active.get(&ptr) else {
            return Err(AllocError::Misuse { message: format!("record_stream on unknown pointer {ptr:#x}") });
        };
        let b = self.blocks.get_mut(id);
        if stream != b.stream && !b.stream_uses.contains(&stream) {
            b.stream_uses.push(stream);
        }
        Ok(())
    }

    fn insert_events(&mut self, id: BlockId) -> Result<(), AllocError> {
        let streams = std::mem::take(&mut self.blocks.get_mut(id).stream_uses);
        for (i, s) in streams.iter().enumerate() {
            match self.device.record_event(*s) {
                Ok(e) => {
                    self.blocks.get_mut(id).event_count += 1;
                    self.events.entry(*s).or_default().push_back((e, id));
                }
                Err(err) => {
                    // Cannot order the reuse: wait for the streams instead,
                    // so the block is never handed out too early.
                    for rest in &streams[i..] {
                        self.device.synchronize_stream(*rest)?;
                    }
                    if self.blocks.get(id).event_count == 0 {
                        self.free_block(id);
                    }
                    return Err(err.into());
                }
            }
        }
        Ok(())
    }

    /// Free blocks whose stream events completed (lazily, at each malloc).
    fn process_events(&mut self) -> Result<(), AllocError> {
        if self.events.is_empty() {
            return Ok(());
        }
        let streams: Vec<StreamId> = self.events.keys().copied().collect();
        for s in streams {
            while let Some(&(e, id)) = self.events.get(&s).and_then(|q| q.front()) {
                if !self.device.query_event(e)? {
                    break;
                }
                self.events.get_mut(&s).expect("queue").pop_front();
                self.device.release_event(e)?;
                self.event_done(id);
            }
            if self.events.get(&s).is_some_and(VecDeque::is_empty) {
                self.events.remove(&s);
            }
        }
        Ok(())
    }

    fn event_done(&mut self, id: BlockId) {
        let b = self.blocks.get_mut(id);
        b.event_count -= 1;
        if b.event_count == 0 {
            self.free_block(id);
        }
    }

    fn synchronize_and_free_events(&mut self) -> Result<(), AllocError> {
        self.device.synchronize()?;
        let all: Vec<_> = self.events.drain().flat_map(|(_, q)| q).collect();
        for (e, id) in all {
            self.device.release_event(e)?;
            self.event_done(id);
        }
        Ok(())
    }

    // ------------------------------------------------------------- releasing

    /// Return every wholly free cached segment (classic) and every wholly
    /// free page (expandable) to the device, after synchronizing.
    pub fn empty_cache(&mut self) -> Result<(), AllocError> {
        self.release_cached_blocks().map(|_| ())
    }

    fn release_cached_blocks(&mut self) -> Result<bool, AllocError> {
        self.synchronize_and_free_events()?;
        self.stats.num_sync_all_streams += 1;
        self.release_blocks(PoolKind::Large)?;
        self.release_blocks(PoolKind::Small)?;
        Ok(true)
    }

    fn release_blocks(&mut self, pool: PoolKind) -> Result<(), AllocError> {
        let free: Vec<BlockId> = self.pools[pool as usize].free.iter().map(|k| k.3).collect();
        let mut to_unmap = Vec::new();
        for id in free {
            let b = self.blocks.get(id);
            if b.is_expandable() {
                to_unmap.push(id);
            } else if !b.is_split() {
                self.release_block(id)?;
            }
        }
        for id in to_unmap {
            self.unmap_block(id)?;
            self.release_expandable_segment(id)?;
        }
        Ok(())
    }

    /// Free the segment of `id` if `id` is its only block and unmapped.
    fn release_expandable_segment(&mut self, id: BlockId) -> Result<(), AllocError> {
        let b = self.blocks.get(id);
        if b.mapped || b.is_split() {
            return Ok(());
        }
        let SegmentRef::Expandable(slot) = b.segment else {
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

    fn release_block(&mut self, id: BlockId) -> Result<(), AllocError> {
        let b = self.blocks.get(id).clone();
        self.device.free(b.addr)?;
        self.remove_from_pool(id);
        self.blocks.remove(id);
        self.total_allocated_memory -= b.size;
        let st = stat_type(b.pool);
        decrease(&mut self.stats.segment, st, 1);
        decrease(&mut self.stats.reserved_bytes, st, b.size);
        if b.size >= self.config.max_split_size {
            self.stats.oversize_segments.decrease(1);
        }
        self.stats.num_device_free += 1;
        Ok(())
    }

    /// Free oversize cached blocks (>= max_split_size) of the request's
    /// stream until the request could fit.
    fn release_available_cached_blocks(&mut self, p: &Params) -> Result<bool, AllocError> {
        let max_split = self.config.max_split_size;
        if max_split == u64::MAX {
            return Ok(false);
        }
        let key_size = p.size.max(max_split);
        let pool = &self.pools[p.pool as usize];
        let first = pool.free.range((p.stream, key_size, 0, 0)..).next().copied();
        match first {
            Some(k) if k.0 == p.stream && !self.blocks.get(k.3).is_expandable() => {
                self.release_block(k.3)?;
                Ok(true)
            }
            _ => {
                // Free several oversize blocks, largest first.
                let below: Vec<_> = pool.free.range(..(p.stream, key_size, 0, 0)).rev().copied().collect();
                let mut released = 0u64;
                for k in below {
                    if released >= key_size || k.1 < max_split || k.0 != p.stream {
                        break;
                    }
                    if !self.blocks.get(k.3).is_expandable() {
                        self.release_block(k.3)?;
                        released += k.1;
                    }
                }
                Ok(released >= key_size)
            }
        }
    }

    /// Free old cached classic segments once reserved memory passes the
    /// garbage-collection threshold of the allowed memory.
    fn garbage_collect_cached_blocks(&mut self) -> Result<(), AllocError> {
        let threshold = (self.config.garbage_collection_threshold * self.allowed_memory_maximum as f64) as u64;
        if self.total_allocated_memory <= threshold {
            return Ok(());
        }
        let target = self.total_allocated_memory - threshold;
        let clock = self.pools[PoolKind::Large as usize].free_block_searches;
        let skip_expandable_in_age = self.expanse_mode();
        let ages: Vec<(BlockId, u64, bool)> = self.pools[PoolKind::Large as usize]
            .free
            .iter()
            .map(|k| self.blocks.get(k.3))
            .zip(self.pools[PoolKind::Large as usize].free.iter().map(|k| k.3))
            .filter(|(b, _)| !(b.is_split() || (skip_expandable_in_age && b.is_expandable())))
            .map(|(b, id)| (id, clock - b.gc_base, b.is_expandable()))
            .collect();
        let mut total_age: u64 = ages.iter().map(|a| a.1).sum();
        let mut count = ages.len() as u64;
        let mut reclaimed = 0u64;
        let mut freed_any = true;
        let mut live: Vec<(BlockId, u64, bool)> = ages;
        while reclaimed < target && freed_any && count > 0 {
            let threshold_age = total_age as f64 / count as f64;
            freed_any = false;
            let mut keep = Vec::with_capacity(live.len());
            for (id, age, expandable) in live {
                if !expandable && age as f64 >= threshold_age {
                    let size = self.blocks.get(id).size;
                    self.release_block(id)?;
                    reclaimed += size;
                    total_age -= age;
                    count -= 1;
                    freed_any = true;
                } else {
                    keep.push((id, age, expandable));
                }
            }
            live = keep;
        }
        Ok(())
    }

    // ------------------------------------------------------------------ peers

    /// Give device `peer` access to all memory of this device, now and
    /// later (every page of every expandable segment).
    pub fn add_peer(&mut self, peer: u32) -> Result<(), AllocError> {
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

    // ------------------------------------------------------------- inspection

    /// Size of the allocation at `ptr`, if it is one.
    pub fn allocation_size(&self, ptr: u64) -> Option<u64> {
        self.active.get(&ptr).map(|&id| self.blocks.get(id).size)
    }

    /// Bytes reserved from the device.
    pub fn reserved_bytes(&self) -> u64 {
        self.total_allocated_memory
    }

    /// Number of live expandable segments.
    pub fn expandable_segment_count(&self) -> usize {
        self.segments.iter().flatten().count()
    }

    /// Check every structural invariant; `Err` names the first broken one.
    /// Tests call this after every operation.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut free_count = 0usize;
        let mut unmapped_count = 0usize;
        let mut allocated_bytes = [0u64; 3];
        let mut mapped_exp = 0u64;
        let mut classic_bytes = 0u64;
        for (id, b) in self.blocks.iter() {
            if b.size == 0 {
                return Err(format!("block {id} has size 0"));
            }
            if let Some(n) = b.next {
                let nb = self.blocks.get(n);
                if nb.prev != Some(id) || nb.addr != b.end() {
                    return Err(format!("block {id} at {:#x}: next link broken", b.addr));
                }
                let mergeable = |x: &Block| !x.allocated && x.event_count == 0 && x.stream_uses.is_empty();
                if mergeable(b) && mergeable(nb) && b.mapped == nb.mapped {
                    return Err(format!("free neighbours {:#x} and {:#x} left unmerged", b.addr, nb.addr));
                }
            }
            if let Some(p) = b.prev {
                if self.blocks.get(p).next != Some(id) {
                    return Err(format!("block {id}: prev link broken"));
                }
            }
            let pool = &self.pools[b.pool as usize];
            let in_free = pool.free.contains(&Pool::free_key(id, b));
            let in_unmapped = pool.unmapped.contains(&Pool::unmapped_key(id, b));
            let should_free = b.mapped && !b.allocated && b.event_count == 0;
            if in_free != should_free {
                return Err(format!("block {:#x}: in free set {in_free}, should be {should_free}", b.addr));
            }
            if in_unmapped == b.mapped {
                return Err(format!("block {:#x}: in unmapped set {in_unmapped}, mapped {}", b.addr, b.mapped));
            }
            if !b.mapped && b.allocated {
                return Err(format!("unmapped block {:#x} is allocated", b.addr));
            }
            if b.allocated != self.active.contains_key(&b.addr) && b.event_count == 0 {
                return Err(format!("block {:#x}: allocated {} but active map disagrees", b.addr, b.allocated));
            }
            if b.allocated {
                allocated_bytes[0] += b.size;
                allocated_bytes[stat_type(b.pool) as usize] += b.size;
            }
            match self.segment(b) {
                Some(seg) => {
                    if b.stream != seg.stream() {
                        return Err(format!(
                            "block {:#x} on stream {:?} in a segment of stream {:?}",
                            b.addr,
                            b.stream,
                            seg.stream()
                        ));
                    }
                    if !b.mapped && !b.last_use.is_empty() {
                        return Err(format!("unmapped block {:#x} has users", b.addr));
                    }
                    if b.mapped {
                        if !seg.is_mapped(b.addr, b.size) {
                            return Err(format!("mapped block {:#x}+{} has unmapped bytes", b.addr, b.size));
                        }
                        mapped_exp += b.size;
                    } else if seg.any_mapped(b.addr, b.size) {
                        return Err(format!("unmapped block {:#x}+{} overlaps a mapped page", b.addr, b.size));
                    }
                }
                None if b.is_expandable() => return Err(format!("block {:#x} in a released segment", b.addr)),
                None => classic_bytes += b.size,
            }
            free_count += usize::from(in_free);
            unmapped_count += usize::from(in_unmapped);
        }
        let set_sizes: usize = self.pools.iter().map(|p| p.free.len()).sum();
        let unmapped_sizes: usize = self.pools.iter().map(|p| p.unmapped.len()).sum();
        if set_sizes != free_count || unmapped_sizes != unmapped_count {
            return Err(format!("pool sets hold stale entries ({set_sizes} free vs {free_count} blocks, {unmapped_sizes} unmapped vs {unmapped_count})"));
        }
        let seg_mapped: u64 = self.segments.iter().flatten().map(|s| s.mapped_bytes()).sum();
        if seg_mapped != mapped_exp {
            return Err(format!("segments map {seg_mapped} bytes but mapped blocks cover {mapped_exp}"));
        }
        if self.total_allocated_memory != classic_bytes + mapped_exp {
            return Err(format!(
                "reserved {} != classic {} + mapped {}",
                self.total_allocated_memory, classic_bytes, mapped_exp
            ));
        }
        if self.stats.reserved_bytes[0].current as u64 != self.total_allocated_memory {
            return Err(format!(
                "reserved_bytes stat {} != {}",
                self.stats.reserved_bytes[0].current, self.total_allocated_memory
            ));
        }
        for (i, bytes) in allocated_bytes.iter().enumerate() {
            if self.stats.allocated_bytes[i].current as u64 != *bytes {
                return Err(format!(
                    "allocated_bytes[{i}] stat {} != {}",
                    self.stats.allocated_bytes[i].current, bytes
                ));
            }
        }
        if self.active.len() as i64 != self.stats.allocation[0].current {
            return Err(format!(
                "{} active pointers but allocation stat {}",
                self.active.len(),
                self.stats.allocation[0].current
            ));
        }
        Ok(())
    }

    /// Release everything back to the device (used by `Drop`); errors are
    /// collected, not raised.
    fn teardown(&mut self) {
        if !self.active.is_empty() {
            self.teardown_errors.push(format!("{} allocation(s) still live at shutdown", self.active.len()));
        }
        if let Err(e) = self.device.synchronize() {
            self.teardown_errors.push(format!("synchronize: {e}"));
        }
        for (_, q) in self.events.drain() {
            for (e, _) in q {
                let _ = self.device.release_event(e);
            }
        }
        let device = Arc::clone(&self.device);
        for seg in self.segments.iter_mut().flatten() {
            if let Err(e) = seg.release_all(device.as_ref(), &mut self.stats.pages) {
                self.teardown_errors.push(format!("releasing segment {:#x}: {e}", seg.base()));
            }
        }
        self.segments.clear();
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
