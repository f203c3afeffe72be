//! The host backend: expanse's embedded default device, built on real Linux
//! virtual memory so that the whole allocator runs without a GPU.
//!
//! | device call     | host implementation                                        |
//! |-----------------|------------------------------------------------------------|
//! | reserve         | `mmap(PROT_NONE, MAP_NORESERVE)`, trimmed to the granularity |
//! | create_page     | a slice of one sparse `memfd` (offsets handed out first-fit) |
//! | map             | `mmap(MAP_FIXED | MAP_SHARED)` of that slice, `PROT_NONE`    |
//! | set_access      | `mprotect(PROT_READ | PROT_WRITE)`                           |
//! | unmap           | a fresh `PROT_NONE` reservation mapped back over the range |
//! | release_page    | `fallocate(PUNCH_HOLE)`: the RAM goes back to the system    |
//! | malloc / free   | anonymous `mmap` / `munmap`                                  |
//! | streams, events | trivially complete (the host has no asynchronous work)      |
//!
//! Untouched pages cost no RAM: a replay that maps 150 GB of pages it never
//! writes stays at a few MiB of resident memory. Capacity is enforced by
//! byte accounting, so out-of-memory behaves like a real device's.
//!
//! The backend keeps its own record of what is reserved, mapped and
//! accessible, and checks every call against it before touching memory, so
//! a wrong call is a [`DeviceError::Misuse`], never a segfault.

mod sys;

use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Mutex;

use expanse_device::{Device, DeviceError, DevicePtr, EventId, PageHandle, Result, StreamId};

/// Default capacity: 16 GiB.
pub const DEFAULT_CAPACITY: u64 = 16 << 30;
/// Default granularity: 2 MiB, as on CUDA devices.
pub const DEFAULT_GRANULARITY: u64 = 2 << 20;

#[derive(Debug)]
struct Page {
    offset: u64,
    size: u64,
    mapped_at: Option<u64>,
}

#[derive(Debug)]
struct Mapping {
    handle: u64,
    size: u64,
    accessible: bool,
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    used: u64,
    reservations: BTreeMap<u64, u64>,
    pages: HashMap<u64, Page>,
    mappings: BTreeMap<u64, Mapping>,
    mallocs: BTreeMap<u64, u64>,
    /// Free offsets of the memfd: start -> length.
    free_offsets: BTreeMap<u64, u64>,
    next_event: u64,
}

/// A device backed by host virtual memory.
#[derive(Debug)]
pub struct HostDevice {
    ordinal: u32,
    capacity: u64,
    granularity: u64,
    memfd: OwnedFd,
    state: Mutex<State>,
}

fn os_error(call: &'static str, e: std::io::Error) -> DeviceError {
    match e.raw_os_error() {
        Some(libc::ENOMEM) => DeviceError::OutOfMemory { call, requested: 0 },
        code => DeviceError::Driver { call, code: i64::from(code.unwrap_or(-1)) },
    }
}

impl HostDevice {
    /// A host device with the default capacity (16 GiB) and granularity (2 MiB).
    pub fn new() -> Result<Self> {
        Self::with_capacity(DEFAULT_CAPACITY, DEFAULT_GRANULARITY)
    }

    /// A host device of `capacity` bytes with pages of `granularity` bytes
    /// (a multiple of the system page size).
    pub fn with_capacity(capacity: u64, granularity: u64) -> Result<Self> {
        if granularity == 0 || !granularity.is_multiple_of(4096) {
            return Err(DeviceError::misuse(
                "HostDevice::new",
                granularity,
                "granularity must be a non-zero multiple of 4096",
            ));
        }
        let capacity = capacity / granularity * granularity;
        // Twice the capacity of offset space, so that pages of mixed sizes
        // never fail for offset fragmentation before capacity runs out.
        let space = capacity
            .checked_mul(2)
            .ok_or_else(|| DeviceError::misuse("HostDevice::new", capacity, "capacity too large"))?;
        let memfd = sys::memfd(space.max(granularity)).map_err(|e| os_error("memfd_create", e))?;
        let mut state = State { next_id: 1, next_event: 1, ..State::default() };
        state.free_offsets.insert(0, space.max(granularity));
        Ok(HostDevice { ordinal: 0, capacity, granularity, memfd, state: Mutex::new(state) })
    }

    /// Set the device ordinal reported by [`Device::ordinal`].
    pub fn with_ordinal(mut self, ordinal: u32) -> Self {
        self.ordinal = ordinal;
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn aligned(&self, x: u64) -> bool {
        x.is_multiple_of(self.granularity)
    }

    fn take_offset(s: &mut State, size: u64) -> Option<u64> {
        let (&start, &len) = s.free_offsets.iter().find(|(_, &len)| len >= size)?;
        s.free_offsets.remove(&start);
        if len > size {
            s.free_offsets.insert(start + size, len - size);
        }
        Some(start)
    }

    fn give_offset(s: &mut State, mut start: u64, mut len: u64) {
        if let Some((&p, &plen)) = s.free_offsets.range(..start).next_back() {
            if p + plen == start {
                s.free_offsets.remove(&p);
                start = p;
                len += plen;
            }
        }
        if let Some(&nlen) = s.free_offsets.get(&(start + len)) {
            s.free_offsets.remove(&(start + len));
            len += nlen;
        }
        s.free_offsets.insert(start, len);
    }

    /// Check that `[addr, addr + len)` is readable memory of this device.
    fn check_accessible(&self, s: &State, call: &'static str, addr: u64, len: u64) -> Result<()> {
        let end = addr.checked_add(len).ok_or_else(|| DeviceError::misuse(call, addr, "range overflows"))?;
        let mut at = addr;
        while at < end {
            if let Some((&b, m)) = s.mappings.range(..=at).next_back() {
                if at < b + m.size {
                    if !m.accessible {
                        return Err(DeviceError::misuse(call, at, "access not set"));
                    }
                    at = b + m.size;
                    continue;
                }
            }
            if let Some((&p, &sz)) = s.mallocs.range(..=at).next_back() {
                if at < p + sz {
                    at = p + sz;
                    continue;
                }
            }
            return Err(DeviceError::misuse(call, at, "address not mapped"));
        }
        Ok(())
    }

    /// Whole mapped pages exactly covering `[addr, addr + size)`, by base.
    fn whole_pages(&self, s: &State, call: &'static str, addr: u64, size: u64) -> Result<Vec<u64>> {
        if size == 0 || !self.aligned(addr) || !self.aligned(size) {
            return Err(DeviceError::misuse(call, addr, "range not aligned to the granularity"));
        }
        let end = addr.checked_add(size).ok_or_else(|| DeviceError::misuse(call, addr, "range overflows"))?;
        let mut at = addr;
        let mut bases = Vec::new();
        while at < end {
            match s.mappings.get(&at) {
                Some(m) if at + m.size <= end => {
                    bases.push(at);
                    at += m.size;
                }
                Some(_) => return Err(DeviceError::misuse(call, at, "range cuts a mapped page")),
                None => return Err(DeviceError::misuse(call, at, "address not mapped")),
            }
        }
        Ok(bases)
    }
}

impl Drop for HostDevice {
    fn drop(&mut self) {
        let s = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        let leaked = s.pages.len() + s.mallocs.len() + s.reservations.len();
        if leaked > 0 {
            eprintln!(
                "expanse-host: device {} dropped with {} page(s), {} malloc(s), {} reservation(s) still live; releasing them",
                self.ordinal,
                s.pages.len(),
                s.mallocs.len(),
                s.reservations.len()
            );
        }
        for (&base, &size) in &s.reservations {
            // SAFETY: the reservation is ours and the device is going away;
            // nothing may use its memory any more.
            if let Err(e) = unsafe { sys::munmap(base, size) } {
                eprintln!("expanse-host: munmap of reservation {base:#x} failed: {e}");
            }
        }
        for (&p, &size) in &s.mallocs {
            // SAFETY: as above, for a malloc mapping we own.
            if let Err(e) = unsafe { sys::munmap(p, size) } {
                eprintln!("expanse-host: munmap of {p:#x} failed: {e}");
            }
        }
    }
}

impl Device for HostDevice {
    fn ordinal(&self) -> u32 {
        self.ordinal
    }

    fn name(&self) -> String {
        format!("host:{}", self.ordinal)
    }

    fn total_memory(&self) -> u64 {
        self.capacity
    }

    fn free_memory(&self) -> u64 {
        self.capacity.saturating_sub(self.lock().used)
    }

    fn granularity(&self) -> u64 {
        self.granularity
    }

    fn supports_virtual_memory(&self) -> bool {
        true
    }

    fn reserve(&self, size: u64) -> Result<DevicePtr> {
        if size == 0 || !self.aligned(size) {
            return Err(DeviceError::misuse("reserve", size, "size not a non-zero multiple of the granularity"));
        }
        let total =
            size.checked_add(self.granularity).ok_or(DeviceError::OutOfMemory { call: "reserve", requested: size })?;
        let raw = sys::reserve(total).map_err(|e| match os_error("reserve", e) {
            DeviceError::OutOfMemory { call, .. } => DeviceError::OutOfMemory { call, requested: size },
            other => other,
        })?;
        // Trim to a granularity-aligned range.
        let base = raw.div_ceil(self.granularity) * self.granularity;
        let head = base - raw;
        let tail = total - head - size;
        // SAFETY: both trimmed pieces are parts of the reservation we just
        // made and nothing refers to them.
        unsafe {
            if head > 0 {
                sys::munmap(raw, head).map_err(|e| os_error("reserve", e))?;
            }
            if tail > 0 {
                sys::munmap(base + size, tail).map_err(|e| os_error("reserve", e))?;
            }
        }
        self.lock().reservations.insert(base, size);
        Ok(base)
    }

    fn release_reservation(&self, base: DevicePtr, size: u64) -> Result<()> {
        let mut s = self.lock();
        if s.reservations.get(&base) != Some(&size) {
            return Err(DeviceError::misuse("release_reservation", base, "not a reservation of that size"));
        }
        if s.mappings.range(base..base + size).next().is_some() {
            return Err(DeviceError::misuse("release_reservation", base, "reservation still has mappings"));
        }
        // SAFETY: the range is a reservation we own with nothing mapped in it.
        unsafe { sys::munmap(base, size) }.map_err(|e| os_error("release_reservation", e))?;
        s.reservations.remove(&base);
        Ok(())
    }

    fn create_page(&self, size: u64) -> Result<PageHandle> {
        if size == 0 || !self.aligned(size) {
            return Err(DeviceError::misuse("create_page", size, "size not a non-zero multiple of the granularity"));
        }
        let mut s = self.lock();
        if s.used.saturating_add(size) > self.capacity {
            return Err(DeviceError::OutOfMemory { call: "create_page", requested: size });
        }
        let offset =
            Self::take_offset(&mut s, size).ok_or(DeviceError::OutOfMemory { call: "create_page", requested: size })?;
        s.used += size;
        let id = s.next_id;
        s.next_id += 1;
        s.pages.insert(id, Page { offset, size, mapped_at: None });
        Ok(PageHandle(id))
    }

    fn release_page(&self, page: PageHandle) -> Result<()> {
        let mut s = self.lock();
        let (offset, size) = match s.pages.get(&page.0) {
            None => return Err(DeviceError::misuse("release_page", page.0, "unknown page handle")),
            Some(p) if p.mapped_at.is_some() => {
                return Err(DeviceError::misuse("release_page", page.0, "page still mapped"))
            }
            Some(p) => (p.offset, p.size),
        };
        sys::punch_hole(self.memfd.as_raw_fd(), offset, size).map_err(|e| os_error("release_page", e))?;
        s.pages.remove(&page.0);
        s.used -= size;
        Self::give_offset(&mut s, offset, size);
        Ok(())
    }

    fn map(&self, addr: DevicePtr, page: PageHandle) -> Result<()> {
        let mut s = self.lock();
        let (offset, size) = match s.pages.get(&page.0) {
            None => return Err(DeviceError::misuse("map", page.0, "unknown page handle")),
            Some(p) if p.mapped_at.is_some() => return Err(DeviceError::misuse("map", page.0, "page already mapped")),
            Some(p) => (p.offset, p.size),
        };
        if !self.aligned(addr) {
            return Err(DeviceError::misuse("map", addr, "address not aligned to the granularity"));
        }
        let inside = s
            .reservations
            .range(..=addr)
            .next_back()
            .is_some_and(|(&b, &sz)| addr.checked_add(size).is_some_and(|end| end <= b + sz));
        if !inside {
            return Err(DeviceError::misuse("map", addr, "range not inside one reservation"));
        }
        let overlaps = s.mappings.range(..=addr).next_back().is_some_and(|(&b, m)| addr < b + m.size)
            || s.mappings.range(addr..addr + size).next().is_some();
        if overlaps {
            return Err(DeviceError::misuse("map", addr, "address already mapped"));
        }
        // SAFETY: [addr, addr+size) lies inside a reservation we own and is
        // not mapped, so nothing (Rust or user) holds memory there.
        unsafe { sys::map_fixed_shared(addr, size, self.memfd.as_raw_fd(), offset) }.map_err(|e| os_error("map", e))?;
        s.pages.get_mut(&page.0).expect("checked above").mapped_at = Some(addr);
        s.mappings.insert(addr, Mapping { handle: page.0, size, accessible: false });
        Ok(())
    }

    fn unmap(&self, addr: DevicePtr, size: u64) -> Result<()> {
        let mut s = self.lock();
        let bases = self.whole_pages(&s, "unmap", addr, size)?;
        // SAFETY: the range is exactly whole pages we mapped inside one of
        // our reservations; the allocator hands out no memory there any more.
        unsafe { sys::map_fixed_none(addr, size) }.map_err(|e| os_error("unmap", e))?;
        for b in bases {
            let m = s.mappings.remove(&b).expect("checked above");
            s.pages.get_mut(&m.handle).expect("mapped page exists").mapped_at = None;
        }
        Ok(())
    }

    fn set_access(&self, addr: DevicePtr, size: u64, devices: &[u32]) -> Result<()> {
        let mut s = self.lock();
        if let Some(d) = devices.iter().find(|d| **d != self.ordinal) {
            return Err(DeviceError::misuse("set_access", u64::from(*d), "the host backend has no peer devices"));
        }
        let bases = self.whole_pages(&s, "set_access", addr, size)?;
        if devices.contains(&self.ordinal) {
            // SAFETY: the range is whole pages we mapped.
            unsafe { sys::protect_rw(addr, size) }.map_err(|e| os_error("set_access", e))?;
            for b in bases {
                s.mappings.get_mut(&b).expect("checked above").accessible = true;
            }
        }
        Ok(())
    }

    fn malloc(&self, size: u64) -> Result<DevicePtr> {
        if size == 0 {
            return Err(DeviceError::misuse("malloc", 0, "zero-sized malloc"));
        }
        let mut s = self.lock();
        if s.used.saturating_add(size) > self.capacity {
            return Err(DeviceError::OutOfMemory { call: "malloc", requested: size });
        }
        let p = sys::anonymous(size).map_err(|e| match os_error("malloc", e) {
            DeviceError::OutOfMemory { call, .. } => DeviceError::OutOfMemory { call, requested: size },
            other => other,
        })?;
        s.used += size;
        s.mallocs.insert(p, size);
        Ok(p)
    }

    fn free(&self, ptr: DevicePtr) -> Result<()> {
        let mut s = self.lock();
        let size = *s.mallocs.get(&ptr).ok_or_else(|| DeviceError::misuse("free", ptr, "not a malloc'd pointer"))?;
        // SAFETY: the range was returned by our malloc and is being freed.
        unsafe { sys::munmap(ptr, size) }.map_err(|e| os_error("free", e))?;
        s.mallocs.remove(&ptr);
        s.used -= size;
        Ok(())
    }

    fn record_event(&self, _stream: StreamId) -> Result<EventId> {
        let mut s = self.lock();
        let id = s.next_event;
        s.next_event += 1;
        Ok(EventId(id))
    }

    fn query_event(&self, _event: EventId) -> Result<bool> {
        Ok(true)
    }

    fn release_event(&self, _event: EventId) -> Result<()> {
        Ok(())
    }

    fn synchronize_stream(&self, _stream: StreamId) -> Result<()> {
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    fn write(&self, dst: DevicePtr, src: &[u8]) -> Result<()> {
        let s = self.lock();
        self.check_accessible(&s, "write", dst, src.len() as u64)?;
        // SAFETY: the whole destination range was checked to be read-write
        // memory mapped by this backend, and `src` is a valid slice; the two
        // cannot overlap because device memory is never handed to Rust as a
        // slice.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
        Ok(())
    }

    fn read(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()> {
        let s = self.lock();
        self.check_accessible(&s, "read", src, dst.len() as u64)?;
        // SAFETY: as in `write`, with the roles swapped.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }
}
