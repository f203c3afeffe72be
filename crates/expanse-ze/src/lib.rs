//! expanse's Level Zero backend (Intel XPU): layer 3, the safe device over
//! the virtual memory API.
//!
//! - [`sys`]: the raw symbols, loaded at run time from Intel's loader
//!   (`libze_loader.so.1`) or the file in `EXPANSE_ZE_LIBRARY` (no Level
//!   Zero is needed to build expanse or to run it on another backend);
//! - [`result`]: every status code turned into `Result<_, DeviceError>`;
//! - [`ZeDevice`]: the [`Device`] implementation, one per GPU, all sharing
//!   one context over every device of the driver (as SYCL's default
//!   platform context does).
//!
//! | device call     | Level Zero                                                     |
//! |-----------------|----------------------------------------------------------------|
//! | granularity     | `zeVirtualMemQueryPageSize` for 2 MiB, 2 MiB rounded up to it  |
//! | reserve / release | `zeVirtualMemReserve` / `zeVirtualMemFree`                   |
//! | create / release page | `zePhysicalMemCreate` / `zePhysicalMemDestroy`           |
//! | map / unmap     | `zeVirtualMemMap` (no access) / `zeVirtualMemUnmap`            |
//! | set_access      | `zeVirtualMemSetAccessAttribute(READWRITE)` for this device; `zeContextMakeMemoryResident` on each peer |
//! | malloc / free   | `zeMemAllocDevice` / `zeMemFree`                                |
//! | streams         | one immediate in-order command list per stream id (0: default) |
//! | events          | host-visible events from pools: signal, query, wait, host sync |
//! | read / write    | `zeCommandListAppendMemoryCopy` on the default list, then an event host sync |
//!
//! Peer access follows the XPU allocator's P2P change: a peer is given
//! every page already mapped and every page mapped later (the allocator
//! calls `set_access` with its peers), and, through
//! [`ZeDevice::enable_peer_access`], every classic allocation now and later.
//!
//! Verified against expanse's own test driver (`expanse-ze-fake`), directly
//! and through Intel's loader with its validation layer; not yet on Intel
//! hardware.

mod platform;
pub mod result;
mod streams;
pub mod sys;

use std::sync::{Arc, Mutex};

use expanse_device::{Device, DeviceError, DevicePtr, EventId, Ledger, PageHandle, Result, StreamId};

pub use platform::{open_all, probe, Platform};
use streams::Streams;

/// Alignment of classic allocations (as PyTorch's XPU allocator asks).
const MALLOC_ALIGNMENT: u64 = 512;

/// One Level Zero GPU.
pub struct ZeDevice {
    platform: Arc<Platform>,
    ordinal: u32,
    name: String,
    total: u64,
    granularity: u64,
    streams: Streams,
    /// The contract's bookkeeping, checked before every driver call.
    ledger: Mutex<Ledger>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Bytes of pages and classic allocations live on this device.
    used: u64,
    /// Devices given access to this device's classic allocations.
    malloc_peers: Vec<u32>,
}

impl std::fmt::Debug for ZeDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZeDevice").field("ordinal", &self.ordinal).field("name", &self.name).finish()
    }
}

impl ZeDevice {
    fn open(platform: Arc<Platform>, ordinal: u32) -> Result<Self> {
        let (a, ctx, dev) = (platform.api(), platform.context(), platform.device(ordinal)?);
        // SAFETY: the platform keeps the context and its devices alive.
        let (name, total, page, queue) = unsafe {
            let (_, name, _) = result::device_properties(a, dev)?;
            let total = result::total_memory(a, dev)?;
            let page = result::query_page_size(a, ctx, dev, 2 << 20)?;
            (name, total, page, result::copy_queue_ordinal(a, dev)?)
        };
        if page == 0 || !page.is_power_of_two() {
            return Err(DeviceError::Driver { call: "zeVirtualMemQueryPageSize", code: page as i64 });
        }
        // Pages respect what the driver reports: 2 MiB (the allocator's
        // unit, as on CUDA) rounded up to a multiple of the driver's page.
        let granularity = (2u64 << 20).div_ceil(page) * page;
        let streams = Streams::new(Arc::clone(&platform), ordinal, queue)?;
        Ok(ZeDevice {
            platform,
            ordinal,
            name,
            total,
            granularity,
            streams,
            ledger: Mutex::new(Ledger::new(granularity)),
            state: Mutex::new(State::default()),
        })
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The driver's name for this device.
    pub fn device_name(&self) -> &str {
        &self.name
    }

    /// The platform (driver, context, devices) this device belongs to.
    pub fn platform(&self) -> &Arc<Platform> {
        &self.platform
    }

    /// Let device `peer` reach this device's classic (`malloc`) memory, now
    /// and for every later allocation (`zeContextMakeMemoryResident` on the
    /// peer). Expandable segments get their peers through `set_access`.
    pub fn enable_peer_access(&self, peer: u32) -> Result<()> {
        if peer == self.ordinal {
            return Ok(());
        }
        if !self.can_access_peer(peer) {
            return Err(DeviceError::Unsupported {
                what: format!("Level Zero device {peer} cannot access device {}", self.ordinal),
            });
        }
        let mut st = self.state();
        if st.malloc_peers.contains(&peer) {
            return Ok(());
        }
        let peer_dev = self.platform.device(peer)?;
        for (p, size) in self.ledger().live().mallocs {
            // SAFETY: the allocation is live in our context (the ledger).
            unsafe { result::make_resident(self.platform.api(), self.platform.context(), peer_dev, p, size)? };
        }
        st.malloc_peers.push(peer);
        Ok(())
    }

    /// Read device memory at any address through this device's command
    /// list, without this device's own bookkeeping: the driver decides
    /// whether this device may reach it (a peer's memory needs access).
    pub fn read_as(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()> {
        // SAFETY: `dst` is a live slice the copy writes into, and `copy`
        // waits for it to complete; `src` is device memory the driver checks.
        unsafe { self.streams.copy(dst.as_mut_ptr().cast(), src as *const _, dst.len()) }
    }
}

impl Drop for ZeDevice {
    fn drop(&mut self) {
        let live = self.ledger().live();
        if !live.is_empty() {
            eprintln!(
                "expanse-ze: device {} dropped with {} page(s), {} allocation(s), {} reservation(s) still live",
                self.ordinal,
                live.pages.len(),
                live.mallocs.len(),
                live.reservations.len()
            );
        }
    }
}

impl Device for ZeDevice {
    fn ordinal(&self) -> u32 {
        self.ordinal
    }

    fn name(&self) -> String {
        format!("ze:{}", self.ordinal)
    }

    fn total_memory(&self) -> u64 {
        self.total
    }

    /// Level Zero's core API has no free-memory query: total memory less
    /// what this backend holds.
    fn free_memory(&self) -> u64 {
        self.total.saturating_sub(self.state().used)
    }

    fn granularity(&self) -> u64 {
        self.granularity
    }

    fn supports_virtual_memory(&self) -> bool {
        true
    }

    fn reserve(&self, size: u64) -> Result<DevicePtr> {
        let mut l = self.ledger();
        l.check_size("reserve", size)?;
        // SAFETY: the platform keeps the context alive.
        let base = unsafe { result::reserve(self.platform.api(), self.platform.context(), size, self.granularity)? };
        if !base.is_multiple_of(self.granularity) {
            // SAFETY: the reservation was just made and nothing is mapped.
            let _ = unsafe { result::reserve_free(self.platform.api(), self.platform.context(), base, size) };
            return Err(DeviceError::Driver { call: "zeVirtualMemReserve", code: base as i64 });
        }
        l.add_reservation(base, size);
        Ok(base)
    }

    fn release_reservation(&self, base: DevicePtr, size: u64) -> Result<()> {
        let mut l = self.ledger();
        l.check_release_reservation(base, size)?;
        // SAFETY: the ledger says it is our reservation with nothing mapped.
        unsafe { result::reserve_free(self.platform.api(), self.platform.context(), base, size)? };
        l.remove_reservation(base);
        Ok(())
    }

    fn create_page(&self, size: u64) -> Result<PageHandle> {
        let mut l = self.ledger();
        l.check_size("create_page", size)?;
        let dev = self.platform.device(self.ordinal)?;
        // SAFETY: the platform keeps the context and device alive.
        let h = unsafe { result::physical_create(self.platform.api(), self.platform.context(), dev, size)? };
        l.add_page(h as u64, size);
        self.state().used += size;
        Ok(PageHandle(h as u64))
    }

    fn release_page(&self, page: PageHandle) -> Result<()> {
        let mut l = self.ledger();
        let size = l.check_release_page(page.0)?;
        // SAFETY: the ledger says the handle is ours, live and unmapped.
        unsafe { result::physical_destroy(self.platform.api(), self.platform.context(), page.0 as *mut _)? };
        l.remove_page(page.0);
        self.state().used -= size;
        Ok(())
    }

    fn map(&self, addr: DevicePtr, page: PageHandle) -> Result<()> {
        let mut l = self.ledger();
        let size = l.check_map(addr, page.0)?;
        // SAFETY: the ledger checked the page is ours and unmapped, and the
        // range lies unmapped inside one of our reservations.
        unsafe { result::map(self.platform.api(), self.platform.context(), addr, size, page.0 as *mut _)? };
        l.add_mapping(addr, page.0, size);
        Ok(())
    }

    fn unmap(&self, addr: DevicePtr, size: u64) -> Result<()> {
        let mut l = self.ledger();
        let bases = l.whole_pages("unmap", addr, size)?;
        // SAFETY: the ledger checked the range is exactly mapped pages.
        unsafe { result::unmap(self.platform.api(), self.platform.context(), addr, size)? };
        l.remove_mappings(&bases);
        Ok(())
    }

    fn set_access(&self, addr: DevicePtr, size: u64, devices: &[u32]) -> Result<()> {
        let mut l = self.ledger();
        let bases = l.whole_pages("set_access", addr, size)?;
        let (a, ctx) = (self.platform.api(), self.platform.context());
        for &d in devices.iter().filter(|d| **d != self.ordinal) {
            if !self.can_access_peer(d) {
                return Err(DeviceError::misuse(
                    "set_access",
                    u64::from(d),
                    "device cannot access this device (no peer path)",
                ));
            }
        }
        if devices.contains(&self.ordinal) {
            // SAFETY: the ledger checked the range is our mapped pages.
            unsafe { result::set_access_rw(a, ctx, addr, size)? };
        }
        for &d in devices.iter().filter(|d| **d != self.ordinal) {
            // SAFETY: as above; the peer handle is kept alive by the platform.
            unsafe { result::make_resident(a, ctx, self.platform.device(d)?, addr, size)? };
        }
        if devices.contains(&self.ordinal) {
            l.mark_accessible(&bases);
        }
        Ok(())
    }

    fn malloc(&self, size: u64) -> Result<DevicePtr> {
        if size == 0 {
            return Err(DeviceError::misuse("malloc", 0, "zero-sized malloc"));
        }
        let mut l = self.ledger();
        let (a, ctx, dev) = (self.platform.api(), self.platform.context(), self.platform.device(self.ordinal)?);
        // SAFETY: the platform keeps the context and device alive.
        let p = unsafe { result::mem_alloc_device(a, ctx, dev, size, MALLOC_ALIGNMENT)? };
        let mut st = self.state();
        for &peer in &st.malloc_peers {
            // SAFETY: `p` was just allocated in our context.
            let r = self.platform.device(peer).and_then(|pd| unsafe { result::make_resident(a, ctx, pd, p, size) });
            if let Err(e) = r {
                // SAFETY: `p` is ours and unused.
                let _ = unsafe { result::mem_free(a, ctx, p) };
                return Err(e);
            }
        }
        st.used += size;
        l.add_malloc(p, size);
        Ok(p)
    }

    fn free(&self, ptr: DevicePtr) -> Result<()> {
        let mut l = self.ledger();
        let size = l.check_free(ptr)?;
        // SAFETY: the ledger says `ptr` is a live allocation of ours.
        unsafe { result::mem_free(self.platform.api(), self.platform.context(), ptr)? };
        l.remove_malloc(ptr);
        self.state().used -= size;
        Ok(())
    }

    fn record_event(&self, stream: StreamId) -> Result<EventId> {
        self.streams.record(stream.0).map(EventId)
    }

    fn query_event(&self, event: EventId) -> Result<bool> {
        self.streams.query(event.0)
    }

    fn release_event(&self, event: EventId) -> Result<()> {
        self.streams.release(event.0)
    }

    fn wait_event(&self, stream: StreamId, event: EventId) -> Result<()> {
        self.streams.wait(stream.0, event.0)
    }

    fn synchronize_stream(&self, stream: StreamId) -> Result<()> {
        self.streams.synchronize(stream.0)
    }

    fn synchronize(&self) -> Result<()> {
        self.streams.synchronize_all()
    }

    fn write(&self, dst: DevicePtr, src: &[u8]) -> Result<()> {
        self.ledger().check_accessible("write", dst, src.len() as u64)?;
        // SAFETY: the destination is checked accessible memory of ours; `src`
        // is a live slice and `copy` waits for the copy to complete.
        unsafe { self.streams.copy(dst as *mut _, src.as_ptr().cast(), src.len()) }
    }

    fn read(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()> {
        self.ledger().check_accessible("read", src, dst.len() as u64)?;
        self.read_as(src, dst)
    }

    fn can_access_peer(&self, peer: u32) -> bool {
        if peer == self.ordinal {
            return true;
        }
        let (Ok(me), Ok(other)) = (self.platform.device(self.ordinal), self.platform.device(peer)) else {
            return false;
        };
        // "Can `peer` access my memory": zeDeviceCanAccessPeer(accessor, owner).
        // SAFETY: the platform keeps both device handles alive.
        unsafe { result::can_access_peer(self.platform.api(), other, me) }.unwrap_or(false)
    }
}
