//! expanse's CUDA backend: layer 3, the safe device over the driver's
//! virtual memory management API.
//!
//! - [`sys`]: the raw symbols, loaded from `libcuda.so.1` at run time (no
//!   CUDA is needed to build expanse or to run it on another backend);
//! - [`result`]: every status code turned into `Result<_, DeviceError>`;
//! - [`CudaDevice`]: the [`Device`] implementation, one per GPU, using the
//!   device's primary context (the one PyTorch uses).
//!
//! Pages are `cuMemCreate` allocations of pinned device memory; `map` is
//! `cuMemMap`, `set_access` one `cuMemSetAccess` for this device and every
//! peer; classic segments are `cuMemAlloc`. Streams and events are the
//! caller's `CUstream` values (0: the default stream) and `CUevent`s this
//! backend creates.

pub mod result;
pub mod sys;

use std::sync::{Arc, Mutex};

use expanse_device::{Device, DeviceError, DevicePtr, EventId, Ledger, PageHandle, Result, StreamId};

use crate::sys::{CUdevice, Driver, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED};

/// Load the driver, initialise it and open every GPU. A machine without
/// the driver or without GPUs gets `Err(Unsupported)`, never a panic.
pub fn open_all() -> Result<Vec<Arc<CudaDevice>>> {
    let driver = Arc::new(Driver::load().map_err(|what| DeviceError::Unsupported { what })?);
    result::init(&driver)?;
    let n = result::device_count(&driver)?;
    if n == 0 {
        return Err(DeviceError::Unsupported { what: "no CUDA device".into() });
    }
    (0..n).map(|i| CudaDevice::open(Arc::clone(&driver), i).map(Arc::new)).collect()
}

/// Whether a CUDA driver with at least one device is present.
pub fn available() -> bool {
    Driver::load()
        .ok()
        .and_then(|d| result::init(&d).ok().and_then(|_| result::device_count(&d).ok()))
        .is_some_and(|n| n > 0)
}

/// One GPU.
pub struct CudaDevice {
    driver: Arc<Driver>,
    ordinal: u32,
    dev: CUdevice,
    /// The primary context, as an address: CUDA contexts may be made
    /// current on any thread.
    ctx: usize,
    total: u64,
    granularity: u64,
    vmm: bool,
    /// The contract's bookkeeping, checked before every driver call: the
    /// driver itself accepts some misuse (an unmap of an unmapped range)
    /// and reports the rest as generic errors.
    ledger: Mutex<Ledger>,
}

impl std::fmt::Debug for CudaDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaDevice").field("ordinal", &self.ordinal).field("total", &self.total).finish()
    }
}

impl CudaDevice {
    /// Open GPU `ordinal` with an already loaded driver.
    pub fn open(driver: Arc<Driver>, ordinal: i32) -> Result<Self> {
        result::init(&driver)?;
        let dev = result::device(&driver, ordinal)?;
        let ctx = result::primary_ctx_retain(&driver, dev)?;
        // SAFETY: `ctx` was retained just above.
        unsafe { result::set_current(&driver, ctx)? };
        let total = result::total_mem(&driver, dev)?;
        let vmm = result::attribute(&driver, dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)? != 0;
        let granularity = if vmm { result::granularity(&driver, &result::device_prop(ordinal))? } else { 2 << 20 };
        Ok(CudaDevice {
            driver,
            ordinal: ordinal as u32,
            dev,
            ctx: ctx as usize,
            total,
            granularity,
            vmm,
            ledger: Mutex::new(Ledger::new(granularity)),
        })
    }

    fn current(&self) -> Result<&Driver> {
        // SAFETY: the primary context stays retained until `Drop`.
        unsafe { result::set_current(&self.driver, self.ctx as sys::CUcontext)? };
        Ok(&self.driver)
    }

    /// Let this device's kernels and copies reach `peer`'s memory at the
    /// driver level (`cuCtxEnablePeerAccess`). VMM mappings additionally
    /// need access entries per peer, which the allocator sets.
    pub fn enable_peer_access(&self, peer: &CudaDevice) -> Result<()> {
        let d = self.current()?;
        // SAFETY: `peer` keeps its primary context retained while it lives.
        unsafe { result::enable_peer_access(d, peer.ctx as sys::CUcontext) }
    }

    /// The driver's description of a status code.
    pub fn error_string(&self, code: i32) -> String {
        result::error_string(&self.driver, code)
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        let live = self.ledger().page_count();
        if live > 0 {
            eprintln!("expanse-cuda: device {} dropped with {live} physical page(s) still alive", self.ordinal);
        }
        if let Err(e) = result::primary_ctx_release(&self.driver, self.dev) {
            eprintln!("expanse-cuda: releasing the primary context of device {}: {e}", self.ordinal);
        }
    }
}

impl Device for CudaDevice {
    fn ordinal(&self) -> u32 {
        self.ordinal
    }

    fn name(&self) -> String {
        format!("cuda:{}", self.ordinal)
    }

    fn total_memory(&self) -> u64 {
        self.total
    }

    fn free_memory(&self) -> u64 {
        self.current().and_then(result::mem_info).map(|(free, _)| free).unwrap_or(0)
    }

    fn granularity(&self) -> u64 {
        self.granularity
    }

    fn supports_virtual_memory(&self) -> bool {
        self.vmm
    }

    fn reserve(&self, size: u64) -> Result<DevicePtr> {
        let mut l = self.ledger();
        l.check_size("reserve", size)?;
        let base = result::address_reserve(self.current()?, size, self.granularity)?;
        l.add_reservation(base, size);
        Ok(base)
    }

    fn release_reservation(&self, base: DevicePtr, size: u64) -> Result<()> {
        let mut l = self.ledger();
        l.check_release_reservation(base, size)?;
        result::address_free(self.current()?, base, size)?;
        l.remove_reservation(base);
        Ok(())
    }

    fn create_page(&self, size: u64) -> Result<PageHandle> {
        let mut l = self.ledger();
        l.check_size("create_page", size)?;
        let h = result::mem_create(self.current()?, size, &result::device_prop(self.ordinal as i32))?;
        l.add_page(h, size);
        Ok(PageHandle(h))
    }

    fn release_page(&self, page: PageHandle) -> Result<()> {
        let mut l = self.ledger();
        l.check_release_page(page.0)?;
        result::mem_release(self.current()?, page.0)?;
        l.remove_page(page.0);
        Ok(())
    }

    fn map(&self, addr: DevicePtr, page: PageHandle) -> Result<()> {
        let mut l = self.ledger();
        let size = l.check_map(addr, page.0)?;
        result::mem_map(self.current()?, addr, size, page.0)?;
        l.add_mapping(addr, page.0, size);
        Ok(())
    }

    fn unmap(&self, addr: DevicePtr, size: u64) -> Result<()> {
        let mut l = self.ledger();
        let bases = l.whole_pages("unmap", addr, size)?;
        result::mem_unmap(self.current()?, addr, size)?;
        l.remove_mappings(&bases);
        Ok(())
    }

    fn set_access(&self, addr: DevicePtr, size: u64, devices: &[u32]) -> Result<()> {
        let mut l = self.ledger();
        let bases = l.whole_pages("set_access", addr, size)?;
        result::mem_set_access(self.current()?, addr, size, devices)?;
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
        let p = result::mem_alloc(self.current()?, size)?;
        l.add_malloc(p, size);
        Ok(p)
    }

    fn free(&self, ptr: DevicePtr) -> Result<()> {
        let mut l = self.ledger();
        l.check_free(ptr)?;
        result::mem_free(self.current()?, ptr)?;
        l.remove_malloc(ptr);
        Ok(())
    }

    fn record_event(&self, stream: StreamId) -> Result<EventId> {
        result::event_record_new(self.current()?, stream.0).map(EventId)
    }

    fn query_event(&self, event: EventId) -> Result<bool> {
        result::event_query(self.current()?, event.0)
    }

    fn release_event(&self, event: EventId) -> Result<()> {
        result::event_destroy(self.current()?, event.0)
    }

    fn wait_event(&self, stream: StreamId, event: EventId) -> Result<()> {
        result::stream_wait_event(self.current()?, stream.0, event.0)
    }

    fn synchronize_stream(&self, stream: StreamId) -> Result<()> {
        result::stream_synchronize(self.current()?, stream.0)
    }

    fn synchronize(&self) -> Result<()> {
        result::ctx_synchronize(self.current()?)
    }

    fn write(&self, dst: DevicePtr, src: &[u8]) -> Result<()> {
        self.ledger().check_accessible("write", dst, src.len() as u64)?;
        result::memcpy_htod(self.current()?, dst, src)
    }

    fn read(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()> {
        self.ledger().check_accessible("read", src, dst.len() as u64)?;
        result::memcpy_dtoh(self.current()?, dst, src)
    }

    fn can_access_peer(&self, peer: u32) -> bool {
        if peer == self.ordinal {
            return true;
        }
        let Ok(d) = self.current() else { return false };
        result::device(d, peer as i32).and_then(|p| result::can_access_peer(d, self.dev, p)).unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn missing_driver_is_an_error_value() {
        // On machines without CUDA this must be Err, not a panic; on GPU
        // machines it must open at least one device.
        match super::open_all() {
            Ok(devs) => assert!(!devs.is_empty()),
            Err(e) => assert!(
                matches!(
                    e,
                    expanse_device::DeviceError::Unsupported { .. } | expanse_device::DeviceError::Driver { .. }
                ),
                "{e:?}"
            ),
        }
    }
}
