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
//! | streams         | one immediate in-order command list per stream: the default (id 0), each `create_stream`'s, each adopted queue's |
//! | events          | host-visible events from pools: signal, query, wait, host sync |
//! | read / write    | `zeCommandListAppendMemoryCopy` on the default list, then an event host sync |
//!
//! Every contract-bound call goes through the device's [`Ledger`]: checked
//! first, the driver called only for a call that keeps the contract, and
//! recorded only when the driver succeeded.
//!
//! Peer access follows the XPU allocator's P2P change: a peer is given
//! every page already mapped and every page mapped later (the allocator
//! calls `set_access` with its peers), and, through
//! [`ZeDevice::enable_peer_access`], every classic allocation now and later.
//!
//! Verified against expanse's own test driver (`expanse-ze-fake`), directly
//! and through Intel's loader with its validation layer; not yet on Intel
//! hardware.

mod device;
mod platform;
pub mod result;
mod streams;
pub mod sys;

use std::sync::{Arc, Mutex};

use expanse_device::{Device, DeviceError, DevicePtr, Ledger, Result, StreamId};

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
    /// The contract's bookkeeping and what this backend holds, under one
    /// lock (the ledger is checked before every driver call).
    state: Mutex<State>,
}

struct State {
    ledger: Ledger,
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
        let state = State { ledger: Ledger::new(granularity), used: 0, malloc_peers: Vec::new() };
        Ok(ZeDevice { platform, ordinal, name, total, granularity, streams, state: Mutex::new(state) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
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

    /// Use the caller's stream `raw` (a `sycl::queue*` handed over the C
    /// ABI, never dereferenced) from now on: it gets a command list of its
    /// own. Adopting it again returns the same id; 0 is the default stream.
    /// Fails if `raw` is the id of a stream this device created.
    pub fn adopt_stream(&self, raw: u64) -> Result<StreamId> {
        let mut s = self.lock();
        let id = s.ledger.adopt_stream(raw)?;
        if id != StreamId::DEFAULT {
            self.streams.adopt(raw)?;
        }
        Ok(id)
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
        let mut st = self.lock();
        if st.malloc_peers.contains(&peer) {
            return Ok(());
        }
        let peer_dev = self.platform.device(peer)?;
        for (p, size) in st.ledger.live().mallocs {
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

    /// Number of live streams made by `create_stream`.
    pub fn live_streams(&self) -> usize {
        self.lock().ledger.stream_count()
    }

    /// Check every peer in `devices` other than this device can reach it.
    fn check_peers(&self, devices: &[u32]) -> Result<()> {
        match devices.iter().find(|&&d| d != self.ordinal && !self.can_access_peer(d)) {
            Some(&d) => {
                Err(DeviceError::misuse("set_access", u64::from(d), "device cannot access this device (no peer path)"))
            }
            None => Ok(()),
        }
    }
}

impl Drop for ZeDevice {
    fn drop(&mut self) {
        let live = self.lock().ledger.live();
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
