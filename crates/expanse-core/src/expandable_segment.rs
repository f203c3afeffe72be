//! `ExpandableSegment`: one huge reservation of device address space into
//! which physical pages are mapped on demand.
//!
//! The segment reserves `page * ceil(9/8 * device_total / page)` bytes once
//! (9/8 leaves room to move pages towards the end while earlier ones are
//! still mapped), or less where the device's address space is scarce
//! (`allocator/address_space.rs` picks the size) and records which physical page is mapped at which offset.
//! It knows nothing of blocks: the allocator asks it to map or unmap
//! address ranges and keeps its own block list in step.
//!
//! Two page disciplines share this code:
//! - *uniform pages* (PyTorch's): every page is `unit` bytes at a
//!   `unit`-aligned offset; `map` rounds outward and creates every missing
//!   page; `unmap` rounds inward.
//! - *variable pages* (expanse's default): `unit` is the device granularity,
//!   and a page may be any multiple of it. `map` first places pages taken
//!   from elsewhere (moved pages: no create, no release), then creates
//!   pages of at least `grow` bytes for what is still missing. `unmap`
//!   releases every page wholly inside the range.
//!
//! Every map sets access for the device and every peer; `add_peer` grants a
//! new peer access to every page already mapped. A failed map undoes all it
//! did: the segment is left exactly as it was.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;

use expanse_device::{Device, DeviceError, PageHandle, StreamId};

use crate::stats::PageOps;

/// Address space oversubscription: reserve 9/8 of device memory.
pub const VA_NUMERATOR: u64 = 9;
/// See [`VA_NUMERATOR`].
pub const VA_DENOMINATOR: u64 = 8;

/// A whole segment's reservation on a device of `total` bytes:
/// `unit * ceil(floor(9/8 * total) / unit)`, or `None` when it does not fit in
/// 64 bits (computed in 128 bits: no intermediate overflows).
pub fn full_reservation(total: u64, unit: u64) -> Option<u64> {
    if unit == 0 {
        return None;
    }
    let want = u128::from(total) * u128::from(VA_NUMERATOR) / u128::from(VA_DENOMINATOR);
    let size = want.div_ceil(u128::from(unit)).max(1) * u128::from(unit);
    u64::try_from(size).ok()
}

/// A physical page: its handle and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page {
    /// The device's handle.
    pub handle: PageHandle,
    /// Bytes (a multiple of the granularity).
    pub size: u64,
}

/// A range of addresses `[addr, addr + size)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SegmentRange {
    /// Start address.
    pub addr: u64,
    /// Length in bytes (0: empty).
    pub size: u64,
}

impl SegmentRange {
    /// End address (exclusive).
    pub fn end(&self) -> u64 {
        self.addr + self.size
    }
}

/// Where and how [`ExpandableSegment::map`] may place pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// End of the unmapped run being mapped: no page may reach past it.
    pub limit: u64,
    /// Smallest page to create; 0 selects uniform pages of the segment's unit.
    pub min_page: u64,
    /// Largest page to create (variable pages only).
    pub max_page: u64,
}

impl Placement {
    /// PyTorch's discipline: pages of exactly the segment's unit.
    pub fn uniform(limit: u64) -> Self {
        Placement { limit, min_page: 0, max_page: 0 }
    }

    /// expanse's discipline: pages of `min_page..=max_page` bytes, sized to
    /// the growth.
    pub fn variable(limit: u64, min_page: u64, max_page: u64) -> Self {
        Placement { limit, min_page, max_page }
    }
}

/// A page chosen for an offset by [`ExpandableSegment::map`].
struct Placed {
    /// Offset from the segment's base.
    offset: u64,
    page: Page,
    /// Created by this map (else taken from the supply).
    created: bool,
}

/// One expandable segment.
#[derive(Debug)]
pub struct ExpandableSegment {
    base: u64,
    size: u64,
    unit: u64,
    stream: StreamId,
    /// This device first, then every peer with access.
    devices: Vec<u32>,
    /// Mapped pages by offset from `base`.
    pages: BTreeMap<u64, Page>,
    mapped_bytes: u64,
    /// Pages unmapped whose release the driver failed: retried by
    /// `release_all`, so none is lost.
    unreleased: Vec<Page>,
}

impl ExpandableSegment {
    /// Reserve a segment for `stream` on `device` whose ranges are aligned
    /// to `unit` bytes (a multiple of the device granularity), with access
    /// for `peers` on every page it will map.
    pub fn new(device: &dyn Device, stream: StreamId, unit: u64, peers: &[u32]) -> Result<Self, DeviceError> {
        let size = full_reservation(device.total_memory(), unit)
            .ok_or_else(|| DeviceError::misuse("ExpandableSegment::new", unit, "address space size overflows"))?;
        Self::with_size(device, stream, unit, size, peers)
    }

    /// Reserve a segment of `size` bytes (a multiple of `unit`), otherwise
    /// like [`Self::new`].
    pub fn with_size(
        device: &dyn Device,
        stream: StreamId,
        unit: u64,
        size: u64,
        peers: &[u32],
    ) -> Result<Self, DeviceError> {
        let g = device.granularity();
        if unit == 0 || !unit.is_multiple_of(g) {
            return Err(DeviceError::misuse(
                "ExpandableSegment::new",
                unit,
                "page size is not a multiple of the device granularity",
            ));
        }
        if size == 0 || !size.is_multiple_of(unit) {
            return Err(DeviceError::misuse("ExpandableSegment::new", size, "size is not a multiple of the page size"));
        }
        let base = device.reserve(size)?;
        let mut devices = vec![device.ordinal()];
        devices.extend(peers.iter().copied().filter(|p| *p != device.ordinal()));
        Ok(ExpandableSegment {
            base,
            size,
            unit,
            stream,
            devices,
            pages: BTreeMap::new(),
            mapped_bytes: 0,
            unreleased: Vec::new(),
        })
    }

    /// First address of the reservation.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Bytes of address space reserved.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Alignment unit of map ranges.
    pub fn unit(&self) -> u64 {
        self.unit
    }

    /// The stream this segment serves.
    pub fn stream(&self) -> StreamId {
        self.stream
    }

    /// Bytes currently mapped.
    pub fn mapped_bytes(&self) -> u64 {
        self.mapped_bytes
    }

    /// Number of pages currently mapped.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// Devices with access to every mapped page (this device first).
    pub fn devices(&self) -> &[u32] {
        &self.devices
    }

    /// Offset of `addr` from the base, or a misuse error when `addr` is
    /// below the base or past the end (never a wrap-around).
    fn offset(&self, call: &'static str, addr: u64) -> Result<u64, DeviceError> {
        if addr < self.base {
            return Err(DeviceError::misuse(call, addr, "address below the segment's base"));
        }
        let off = addr - self.base;
        if off > self.size {
            return Err(DeviceError::misuse(call, addr, "address past the segment's end"));
        }
        Ok(off)
    }

    /// Index of the unit containing `addr` (rounding down).
    pub fn unit_left(&self, addr: u64) -> Result<u64, DeviceError> {
        Ok(self.offset("unit_left", addr)? / self.unit)
    }

    /// Index of the first unit boundary at or above `addr` (rounding up).
    pub fn unit_right(&self, addr: u64) -> Result<u64, DeviceError> {
        Ok(self.offset("unit_right", addr)?.div_ceil(self.unit))
    }

    /// Whether every byte of `[addr, addr + size)` is mapped.
    pub fn is_mapped(&self, addr: u64, size: u64) -> bool {
        let Ok(mut off) = self.offset("is_mapped", addr) else {
            return false;
        };
        let end = off + size;
        while off < end {
            match self.pages.range(..=off).next_back() {
                Some((&o, p)) if off < o + p.size => off = o + p.size,
                _ => return false,
            }
        }
        true
    }

    /// Whether any byte of `[addr, addr + size)` is mapped.
    pub fn any_mapped(&self, addr: u64, size: u64) -> bool {
        let Ok(off) = self.offset("any_mapped", addr) else {
            return false;
        };
        let end = off + size;
        self.pages.range(..=off).next_back().is_some_and(|(&o, p)| off < o + p.size)
            || self.pages.range(off..end).next().is_some()
    }

    /// Pages wholly inside `[addr, addr + size)`, as `(address, size)`.
    pub fn pages_within(&self, addr: u64, size: u64) -> Vec<(u64, u64)> {
        self.pages_inside(addr, size).collect()
    }

    /// Whether any page lies wholly inside `[addr, addr + size)`: whether
    /// [`Self::pages_within`] is non-empty, without listing them.
    pub fn has_pages_within(&self, addr: u64, size: u64) -> bool {
        self.pages_inside(addr, size).next().is_some()
    }

    /// The pages wholly inside `[addr, addr + size)`, in address order
    /// (none when `addr` is outside the segment).
    fn pages_inside(&self, addr: u64, size: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let (off, end) = match self.offset("pages_within", addr) {
            Ok(off) => (off, off + size),
            Err(_) => (0, 0),
        };
        self.pages.range(off..end).filter(move |(&o, p)| o + p.size <= end).map(|(&o, p)| (self.base + o, p.size))
    }

    /// Map `[addr, addr + size)`, rounded outward to the unit. `addr` must
    /// be unit-aligned and nothing in the rounded range may be mapped.
    ///
    /// Pages are taken first from `supply` (moved pages), each placed only
    /// where it fits below `placement.limit` (the end of the unmapped run);
    /// what is still missing gets new pages of `max(missing, min_page)`
    /// bytes capped at `max_page` (variable discipline) or of one unit each
    /// (uniform).
    /// Supply pages not used stay in `supply`.
    ///
    /// Returns the mapped range, which starts at `addr`. On out-of-memory
    /// while creating pages, everything this call did is undone and the
    /// result is empty (supply pages it took go back to `supply`). Other
    /// device errors are also undone and then returned.
    pub fn map(
        &mut self,
        device: &dyn Device,
        addr: u64,
        size: u64,
        placement: Placement,
        supply: &mut Vec<Page>,
        ops: &mut PageOps,
    ) -> Result<SegmentRange, DeviceError> {
        let off = self.offset("map", addr)?;
        if !off.is_multiple_of(self.unit) {
            return Err(DeviceError::misuse("map", addr, "range start not aligned to the segment's page size"));
        }
        let end_off = self
            .offset("map", addr.saturating_add(size))
            .map_err(|_| DeviceError::misuse("map", addr, "range runs past the segment's end"))?
            .div_ceil(self.unit)
            * self.unit;
        if size == 0 {
            return Ok(SegmentRange { addr, size: 0 });
        }
        let limit_off = self.offset("map", placement.limit.min(self.base + self.size))?.max(end_off);
        if end_off > self.size || self.any_mapped(addr, end_off - off) {
            return Err(DeviceError::misuse("map", addr, "range already mapped or past the segment's end"));
        }
        let (placed, mut result) = self.place_pages(device, off..end_off, limit_off, placement, supply, ops);
        let mut mapped = 0;
        if result.is_ok() {
            result = self.map_placed(device, addr, &placed, &mut mapped, ops);
        }
        match result {
            Ok(()) => {
                let mut at = off;
                for p in placed {
                    if !p.created {
                        ops.moved += 1;
                    }
                    at = p.offset + p.page.size;
                    self.mapped_bytes += p.page.size;
                    self.pages.insert(p.offset, p.page);
                }
                Ok(SegmentRange { addr, size: at - off })
            }
            Err(e) => {
                self.undo_map(device, placed, mapped, supply, ops)?;
                if e.is_out_of_memory() {
                    Ok(SegmentRange { addr, size: 0 })
                } else {
                    Err(e)
                }
            }
        }
    }

    /// Choose the pages for offsets `range`: supply pages first, each only
    /// where it fits below `limit_off`, then new ones. Stops at the first
    /// device error; returns the pages chosen so far and that error.
    fn place_pages(
        &self,
        device: &dyn Device,
        range: std::ops::Range<u64>,
        limit_off: u64,
        placement: Placement,
        supply: &mut Vec<Page>,
        ops: &mut PageOps,
    ) -> (Vec<Placed>, Result<(), DeviceError>) {
        let mut placed = Vec::new();
        let g = device.granularity();
        let mut at = range.start;
        while at < range.end {
            let room = limit_off - at;
            if let Some(i) = supply.iter().position(|p| p.size <= room) {
                let page = supply.swap_remove(i);
                placed.push(Placed { offset: at, page, created: false });
                at += page.size;
                continue;
            }
            let Placement { min_page, max_page, .. } = placement;
            let want = if min_page == 0 {
                self.unit
            } else {
                (range.end - at).max(min_page).min(max_page.max(min_page)).div_ceil(g).saturating_mul(g).min(room)
            };
            match device.create_page(want) {
                Ok(handle) => {
                    ops.created += 1;
                    placed.push(Placed { offset: at, page: Page { handle, size: want }, created: true });
                    at += want;
                }
                Err(e) => return (placed, Err(e)),
            }
        }
        (placed, Ok(()))
    }

    /// Map the `placed` pages, counting them in `mapped`, then set access
    /// for every device on the whole range from `addr`.
    fn map_placed(
        &self,
        device: &dyn Device,
        addr: u64,
        placed: &[Placed],
        mapped: &mut usize,
        ops: &mut PageOps,
    ) -> Result<(), DeviceError> {
        for p in placed {
            device.map(self.base + p.offset, p.page.handle)?;
            ops.mapped += 1;
            *mapped += 1;
        }
        let total: u64 = placed.iter().map(|p| p.page.size).sum();
        device.set_access(addr, total, &self.devices)?;
        ops.access_sets += placed.len() as u64 * self.devices.len() as u64;
        Ok(())
    }

    /// Undo a failed map: unmap the first `mapped` pages, release the
    /// created ones, hand supplied ones back.
    fn undo_map(
        &self,
        device: &dyn Device,
        placed: Vec<Placed>,
        mapped: usize,
        supply: &mut Vec<Page>,
        ops: &mut PageOps,
    ) -> Result<(), DeviceError> {
        let mut undo_error = None;
        for (i, p) in placed.into_iter().enumerate() {
            if i < mapped {
                match device.unmap(self.base + p.offset, p.page.size) {
                    Ok(()) => ops.unmapped += 1,
                    Err(err) => undo_error = Some(err),
                }
            }
            if p.created {
                match device.release_page(p.page.handle) {
                    Ok(()) => ops.released += 1,
                    Err(err) => undo_error = Some(err),
                }
            } else {
                supply.push(p.page);
            }
        }
        undo_error.map_or(Ok(()), Err)
    }

    /// Unmap the pages wholly inside `[addr, addr + size)` (rounding
    /// inward), after synchronizing the segment's stream. Returns the
    /// unmapped range (empty if no page is wholly inside) and the pages,
    /// still alive: the caller releases them or maps them elsewhere.
    pub fn unmap(
        &mut self,
        device: &dyn Device,
        addr: u64,
        size: u64,
        ops: &mut PageOps,
    ) -> Result<(SegmentRange, Vec<Page>), DeviceError> {
        let off = self.offset("unmap", addr)?;
        self.offset("unmap", addr.saturating_add(size))?;
        let inside = self.pages_within(addr, size);
        let Some(&(first, _)) = inside.first() else {
            return Ok((SegmentRange { addr: off + self.base, size: 0 }, Vec::new()));
        };
        // The pages wholly inside must be one contiguous run.
        let mut end = first;
        for &(a, s) in &inside {
            if a != end {
                return Err(DeviceError::misuse("unmap", a, "range has an unmapped hole"));
            }
            end = a + s;
        }
        device.synchronize_stream(self.stream)?;
        ops.stream_syncs += 1;
        device.unmap(first, end - first)?;
        ops.unmapped += inside.len() as u64;
        let mut pages = Vec::with_capacity(inside.len());
        for (a, _) in inside {
            let page = self.pages.remove(&(a - self.base)).expect("page listed above");
            self.mapped_bytes -= page.size;
            pages.push(page);
        }
        Ok((SegmentRange { addr: first, size: end - first }, pages))
    }

    /// Give `peer` access to every mapped page, and to every page mapped
    /// from now on.
    pub fn add_peer(&mut self, device: &dyn Device, peer: u32, ops: &mut PageOps) -> Result<(), DeviceError> {
        if self.devices.contains(&peer) {
            return Ok(());
        }
        for (&o, p) in &self.pages {
            device.set_access(self.base + o, p.size, &[peer])?;
            ops.access_sets += 1;
        }
        self.devices.push(peer);
        Ok(())
    }

    /// Unmap and release every page, then free the reservation. On error
    /// the segment keeps what it could not release, and it can be retried.
    pub fn release_all(&mut self, device: &dyn Device, ops: &mut PageOps) -> Result<(), DeviceError> {
        if !self.pages.is_empty() {
            device.synchronize_stream(self.stream)?;
            ops.stream_syncs += 1;
        }
        while let Some(p) = self.unreleased.pop() {
            if let Err(e) = device.release_page(p.handle) {
                self.unreleased.push(p);
                return Err(e);
            }
            ops.released += 1;
        }
        while let Some((&o, &p)) = self.pages.iter().next() {
            device.unmap(self.base + o, p.size)?;
            ops.unmapped += 1;
            self.pages.remove(&o);
            self.mapped_bytes -= p.size;
            if let Err(e) = device.release_page(p.handle) {
                self.unreleased.push(p);
                return Err(e);
            }
            ops.released += 1;
        }
        if self.size > 0 {
            device.release_reservation(self.base, self.size)?;
            self.size = 0;
        }
        Ok(())
    }
}

/// Release pages that were unmapped and not reused.
pub fn release_pages(device: &dyn Device, pages: Vec<Page>, ops: &mut PageOps) -> Result<(), DeviceError> {
    let mut kept = Vec::new();
    release_pages_keeping(device, pages, ops, &mut kept)
}

/// [`release_pages`], keeping the pages the driver failed to release in
/// `kept` (for a later retry: nothing is lost).
pub fn release_pages_keeping(
    device: &dyn Device,
    pages: Vec<Page>,
    ops: &mut PageOps,
    kept: &mut Vec<Page>,
) -> Result<(), DeviceError> {
    let mut first_error = None;
    for p in pages {
        match device.release_page(p.handle) {
            Ok(()) => ops.released += 1,
            Err(e) => {
                kept.push(p);
                first_error = first_error.or(Some(e));
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}
