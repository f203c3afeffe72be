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
//! | malloc / free   | read-write ranges of one reserved arena, placed as the CUDA  |
//! |                 | driver places `cuMemAlloc` in a PyTorch process             |
//! |                 | ([`VaHeap::as_in_pytorch`]); `PROT_NONE` again              |
//! | streams, events | opaque ids, trivially complete (no asynchronous work)       |
//!
//! Untouched pages cost no RAM: a replay that maps 150 GB of pages it never
//! writes stays at a few MiB of resident memory. Capacity is enforced by
//! byte accounting, so out-of-memory behaves like a real device's.
//!
//! The backend keeps its own record of what is reserved, mapped and
//! accessible, and checks every call against it before touching memory, so
//! a wrong call is a [`DeviceError::Misuse`], never a segfault.

use expanse_sys as sys;

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Mutex;

/// Address space the allocator may reserve on the host: half of x86-64's
/// 128 TiB of user addresses (47 bits), leaving the rest to the process.
/// The sim backend declares the same figure, so both replay alike.
pub const ADDRESS_SPACE: u64 = 64 << 40;

use expanse_device::{
    Device, DeviceError, DevicePtr, EventId, FreeRanges, Ledger, PageHandle, Result, StreamId, VaHeap,
};

/// Default capacity: 16 GiB.
pub const DEFAULT_CAPACITY: u64 = 16 << 30;
/// Largest capacity: segments of 9/8 of it, for several streams, must fit
/// the 128 TiB user address space.
pub const MAX_CAPACITY: u64 = 16 << 40;
/// Default granularity: 2 MiB, as on CUDA devices.
pub const DEFAULT_GRANULARITY: u64 = 2 << 20;

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    used: u64,
    /// The contract's bookkeeping: checked before every call.
    ledger: Ledger,
    /// memfd offset of each page.
    offsets: HashMap<u64, u64>,
    /// Free offsets of the memfd: start -> length.
    free_offsets: FreeRanges,
    next_event: u64,
    /// Events recorded and not released (the host's work is done when
    /// queued, so an event only needs to exist to be used).
    live_events: HashSet<u64>,
    /// Where classic `malloc`s go, reserved at the first one.
    classic: Option<ClassicArena>,
}

/// The address range of classic allocations and where each one goes in it:
/// where the CUDA driver would put it, so that PyTorch's native allocator,
/// which breaks ties between equal free blocks by address, decides on the
/// host as on a GPU.
#[derive(Debug)]
struct ClassicArena {
    base: u64,
    span: u64,
    heap: VaHeap,
}

impl ClassicArena {
    fn contains(&self, addr: u64) -> bool {
        addr >= self.base && addr - self.base < self.span
    }
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
        if capacity == 0 {
            return Err(DeviceError::misuse(
                "HostDevice::new",
                capacity,
                "capacity must be at least one page (the granularity)",
            ));
        }
        if capacity > MAX_CAPACITY {
            // Segments reserve 9/8 of the capacity in the 128 TiB user
            // address space, with room for several streams.
            return Err(DeviceError::misuse(
                "HostDevice::new",
                capacity,
                "capacity above 16 TiB does not fit the host address space",
            ));
        }
        // Twice the capacity of offset space, so that pages of mixed sizes
        // never fail for offset fragmentation before capacity runs out.
        let space = capacity
            .checked_mul(2)
            .ok_or_else(|| DeviceError::misuse("HostDevice::new", capacity, "capacity too large"))?
            .max(granularity);
        let memfd = sys::memfd(c"expanse-host-device", space).map_err(|e| os_error("memfd_create", e))?;
        let mut state = State { next_id: 1, next_event: 1, ledger: Ledger::new(granularity), ..State::default() };
        state.free_offsets.give(0, space);
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

    /// A fresh `PROT_NONE` reservation of `size` bytes aligned to the
    /// granularity (mapped larger, then trimmed).
    fn reserve_aligned(&self, size: u64) -> Result<u64> {
        sys::reserve_aligned(size, self.granularity).map_err(|e| with_request(os_error("reserve", e), size))
    }
}

/// An out-of-memory error that names the bytes asked for.
fn with_request(e: DeviceError, requested: u64) -> DeviceError {
    match e {
        DeviceError::OutOfMemory { call, .. } => DeviceError::OutOfMemory { call, requested },
        other => other,
    }
}

impl Drop for HostDevice {
    fn drop(&mut self) {
        let s = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        let live = s.ledger.live();
        if !live.is_empty() {
            eprintln!(
                "expanse-host: device {} dropped with {} page(s), {} malloc(s), {} reservation(s) still live; releasing them",
                self.ordinal,
                live.pages.len(),
                live.mallocs.len(),
                live.reservations.len()
            );
        }
        let arena = s.classic.as_ref().map(|a| (a.base, a.span));
        for (base, size) in live.reservations.into_iter().chain(live.mallocs).chain(arena) {
            // SAFETY: the range is ours (a reservation or a malloc mapping)
            // and the device is going away; nothing may use it any more.
            if let Err(e) = unsafe { sys::munmap(base, size) } {
                eprintln!("expanse-host: munmap of {base:#x} failed: {e}");
            }
        }
    }
}

impl HostDevice {
    /// `event` was recorded and not released, or `call` misused it.
    fn live_event(&self, call: &'static str, event: EventId) -> Result<()> {
        if self.lock().live_events.contains(&event.0) {
            Ok(())
        } else {
            Err(DeviceError::misuse(call, event.0, "unknown event"))
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

    fn address_space(&self) -> u64 {
        ADDRESS_SPACE
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
        let mut s = self.lock();
        s.ledger.reserve(size, |size| self.reserve_aligned(size))
    }

    fn release_reservation(&self, base: DevicePtr, size: u64) -> Result<()> {
        let mut s = self.lock();
        s.ledger.release_reservation(base, size, || {
            // SAFETY: the ledger checked that the range is a reservation
            // we own with nothing mapped in it.
            unsafe { sys::munmap(base, size) }.map_err(|e| os_error("release_reservation", e))
        })
    }

    fn create_page(&self, size: u64) -> Result<PageHandle> {
        let mut s = self.lock();
        let st = &mut *s;
        st.ledger.create_page(size, |size| {
            if st.used.saturating_add(size) > self.capacity {
                return Err(DeviceError::OutOfMemory { call: "create_page", requested: size });
            }
            let offset = st
                .free_offsets
                .take_lowest(size)
                .ok_or(DeviceError::OutOfMemory { call: "create_page", requested: size })?;
            st.used += size;
            let id = st.next_id;
            st.next_id += 1;
            st.offsets.insert(id, offset);
            Ok(id)
        })
    }

    fn release_page(&self, page: PageHandle) -> Result<()> {
        let mut s = self.lock();
        let st = &mut *s;
        st.ledger.release_page(page, |size| {
            let offset = st.offsets[&page.0];
            sys::punch_hole(self.memfd.as_raw_fd(), offset, size).map_err(|e| os_error("release_page", e))?;
            st.offsets.remove(&page.0);
            st.used -= size;
            st.free_offsets.give(offset, size);
            Ok(())
        })?;
        Ok(())
    }

    fn map(&self, addr: DevicePtr, page: PageHandle) -> Result<()> {
        let mut s = self.lock();
        let st = &mut *s;
        st.ledger.map(addr, page, |size| {
            let offset = st.offsets[&page.0];
            // SAFETY: the ledger checked that [addr, addr+size) lies inside
            // a reservation we own and is not mapped, so nothing (Rust or
            // user) holds memory there.
            unsafe { sys::map_fixed_shared(addr, size, self.memfd.as_raw_fd(), offset, sys::Access::None) }
                .map_err(|e| os_error("map", e))
        })
    }

    fn unmap(&self, addr: DevicePtr, size: u64) -> Result<()> {
        self.lock().ledger.unmap(addr, size, |_| {
            // SAFETY: the ledger checked that the range is exactly whole
            // pages we mapped inside one of our reservations; the allocator
            // hands out no memory there any more.
            unsafe { sys::map_fixed_none(addr, size) }.map_err(|e| os_error("unmap", e))
        })
    }

    fn set_access(&self, addr: DevicePtr, size: u64, devices: &[u32]) -> Result<()> {
        if let Some(d) = devices.iter().find(|d| **d != self.ordinal) {
            return Err(DeviceError::misuse("set_access", u64::from(*d), "the host backend has no peer devices"));
        }
        let for_us = devices.contains(&self.ordinal);
        self.lock().ledger.set_access(addr, size, for_us, |_| {
            if !for_us {
                return Ok(());
            }
            // SAFETY: the ledger checked the range is whole pages we mapped.
            unsafe { sys::protect(addr, size, sys::Access::ReadWrite) }.map_err(|e| os_error("set_access", e))
        })
    }

    fn malloc(&self, size: u64) -> Result<DevicePtr> {
        let mut s = self.lock();
        let st = &mut *s;
        if st.classic.is_none() {
            // Four times the capacity of addresses: chunks round up to 32
            // MiB and freed ranges fragment. No RAM until written.
            let span = self.capacity.saturating_mul(4).saturating_add(256 << 20) / self.granularity * self.granularity;
            let base = self.reserve_aligned(span)?;
            st.classic = Some(ClassicArena { base, span, heap: VaHeap::as_in_pytorch(span) });
        }
        let arena = st.classic.as_mut().expect("reserved above");
        st.ledger.malloc(size, |size| {
            if st.used.saturating_add(size) > self.capacity {
                return Err(DeviceError::OutOfMemory { call: "malloc", requested: size });
            }
            // Whole pages of the granularity, as the driver hands out.
            let whole = size.div_ceil(self.granularity) * self.granularity;
            let p = match arena.heap.alloc(whole) {
                Some(offset) => {
                    let p = arena.base + offset;
                    // SAFETY: the heap hands out each range of the arena
                    // once until it is freed, so nothing else uses it.
                    if let Err(e) = unsafe { sys::protect(p, whole, sys::Access::ReadWrite) } {
                        arena.heap.free(offset, whole);
                        return Err(with_request(os_error("malloc", e), size));
                    }
                    p
                }
                // The arena's addresses are used up (freed ranges too
                // fragmented): anywhere the kernel likes.
                None => sys::anonymous(size).map_err(|e| with_request(os_error("malloc", e), size))?,
            };
            st.used += size;
            Ok(p)
        })
    }

    fn free(&self, ptr: DevicePtr) -> Result<()> {
        let mut s = self.lock();
        let st = &mut *s;
        let arena = &mut st.classic;
        st.ledger.free(ptr, |size| {
            match arena.as_mut().filter(|a| a.contains(ptr)) {
                Some(a) => {
                    let whole = size.div_ceil(self.granularity) * self.granularity;
                    // SAFETY: the ledger checked that the range was
                    // returned by our malloc and not freed since; it lies in
                    // our arena, which takes it back as a reservation.
                    unsafe { sys::map_fixed_none(ptr, whole) }.map_err(|e| os_error("free", e))?;
                    a.heap.free(ptr - a.base, whole);
                }
                // SAFETY: the ledger checked that the range was returned by
                // our malloc (outside the arena) and not freed since.
                None => unsafe { sys::munmap(ptr, size) }.map_err(|e| os_error("free", e))?,
            }
            st.used -= size;
            Ok(())
        })?;
        Ok(())
    }

    fn create_stream(&self) -> Result<StreamId> {
        let mut s = self.lock();
        let st = &mut *s;
        st.ledger.create_stream(|| {
            st.next_id += 1;
            Ok(st.next_id - 1)
        })
    }

    fn destroy_stream(&self, stream: StreamId) -> Result<()> {
        self.lock().ledger.destroy_stream(stream, || Ok(()))
    }

    fn record_event(&self, _stream: StreamId) -> Result<EventId> {
        let mut s = self.lock();
        let id = s.next_event;
        s.next_event += 1;
        s.live_events.insert(id);
        Ok(EventId(id))
    }

    fn query_event(&self, event: EventId) -> Result<bool> {
        self.live_event("query_event", event).map(|()| true)
    }

    fn release_event(&self, event: EventId) -> Result<()> {
        if self.lock().live_events.remove(&event.0) {
            Ok(())
        } else {
            Err(DeviceError::misuse("release_event", event.0, "unknown event"))
        }
    }

    fn wait_event(&self, _stream: StreamId, event: EventId) -> Result<()> {
        self.live_event("wait_event", event)
    }

    fn synchronize_stream(&self, _stream: StreamId) -> Result<()> {
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    fn write(&self, dst: DevicePtr, src: &[u8]) -> Result<()> {
        self.lock().ledger.access("write", dst, src.len() as u64, || {
            // SAFETY: the ledger checked that the whole destination range is
            // read-write memory mapped by this backend, and `src` is a valid
            // slice; the two cannot overlap because device memory is never
            // handed to Rust as a slice.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
            Ok(())
        })
    }

    fn read(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()> {
        self.lock().ledger.access("read", src, dst.len() as u64, || {
            // SAFETY: as in `write`, with the roles swapped.
            unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len()) };
            Ok(())
        })
    }
}
