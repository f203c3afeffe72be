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
//! peer; classic segments are `cuMemAlloc`.
//!
//! Streams are owned handles ([`handles::Stream`]): the legacy default
//! stream (id 0), non-blocking streams made by `create_stream` and
//! destroyed by `destroy_stream`, and the caller's streams adopted through
//! the unsafe [`CudaDevice::adopt_stream`]. Any other id is refused as
//! misuse, so a number never reaches the driver as a stream handle. Events
//! are owned [`handles::Event`]s kept by id.

mod adopted;
pub mod handles;
pub mod result;
pub mod sys;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use expanse_device::{Device, DeviceError, DevicePtr, EventId, Ledger, PageHandle, Result, StreamId};

use crate::handles::{Context, Current, Event, Stream};
use crate::sys::{CUstream, Driver, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED};

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

#[derive(Default)]
struct State {
    /// The contract's bookkeeping, checked before every driver call: the
    /// driver itself accepts some misuse (an unmap of an unmapped range)
    /// and reports the rest as generic errors.
    ledger: Ledger,
    /// Streams by id (the id is the raw handle's value); the default stream
    /// (id 0) is not in the map.
    streams: HashMap<u64, Stream>,
    /// Live events by id.
    events: HashMap<u64, Event>,
    next_event: u64,
    /// Released events kept for the next records (at most
    /// [`IDLE_EVENTS`]): a cross-stream wait then costs a record and a
    /// wait, not a create, a record, a wait and a destroy.
    idle_events: Vec<Event>,
}

/// Released events kept for reuse, at most (PyTorch's allocator keeps a
/// pool of events per device the same way).
const IDLE_EVENTS: usize = 64;

/// One GPU.
pub struct CudaDevice {
    ctx: Arc<Context>,
    /// Unique in the process, so the process-wide table of adopted streams
    /// never takes one device for another opened later.
    instance: u64,
    ordinal: u32,
    total: u64,
    granularity: u64,
    vmm: bool,
    default_stream: Stream,
    state: Mutex<State>,
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
        let ctx = Context::retain_primary(driver, dev)?;
        let (total, vmm, granularity) = {
            let d = ctx.enter()?;
            let total = result::total_mem(&d, dev)?;
            let vmm = result::attribute(&d, dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)? != 0;
            let granularity = if vmm { result::granularity(&d, &result::device_prop(ordinal))? } else { 2 << 20 };
            (total, vmm, granularity)
        };
        let state = State { ledger: Ledger::new(granularity), next_event: 1, ..State::default() };
        Ok(CudaDevice {
            instance: adopted::new_instance(),
            default_stream: Stream::legacy_default(&ctx),
            ctx,
            ordinal: ordinal as u32,
            total,
            granularity,
            vmm,
            state: Mutex::new(state),
        })
    }

    fn current(&self) -> Result<Current<'_>> {
        self.ctx.enter()
    }

    /// Let this device's kernels and copies reach `peer`'s memory at the
    /// driver level (`cuCtxEnablePeerAccess`). VMM mappings additionally
    /// need access entries per peer, which the allocator sets.
    pub fn enable_peer_access(&self, peer: &CudaDevice) -> Result<()> {
        let d = &*self.current()?;
        // SAFETY: `peer` keeps its primary context retained while it lives.
        unsafe { result::enable_peer_access(d, peer.ctx.raw()) }
    }

    /// Use the caller's stream `raw` (e.g. a `cudaStream_t` handed over the
    /// C ABI) on this device from now on; returns its id. Adopting the same
    /// stream again returns the same id. Null is the default stream.
    ///
    /// # Safety
    /// `raw` must be null or a live stream of this device's primary context
    /// that stays live while the allocator may still order work on it.
    // Inlined into the C ABI's every call (through `expanse-backends`):
    // the two checks of the hot path, without two calls and the copies of
    // their results; the adoption itself stays out of line.
    #[inline]
    pub unsafe fn adopt_stream(&self, raw: CUstream) -> Result<StreamId> {
        // The default stream needs no bookkeeping: no lock on the hot path.
        if raw.is_null() {
            return Ok(StreamId::DEFAULT);
        }
        // Adopting again would change nothing (see `adopted`): no lock.
        if adopted::seen(self.instance, raw as u64) {
            return Ok(StreamId(raw as u64));
        }
        // SAFETY: the caller's guarantee, passed on.
        unsafe { self.adopt_new_stream(raw) }
    }

    /// `adopt_stream` of a stream not seen adopted: the ledger, under the
    /// device's lock.
    ///
    /// # Safety
    /// As for [`Self::adopt_stream`].
    #[inline(never)]
    unsafe fn adopt_new_stream(&self, raw: CUstream) -> Result<StreamId> {
        let mut s = self.lock();
        let id = s.ledger.adopt_stream(raw as u64)?;
        if id != StreamId::DEFAULT && !s.streams.contains_key(&id.0) {
            // SAFETY: the caller guarantees the handle, as above.
            let stream = unsafe { Stream::borrowed(&self.ctx, raw) };
            s.streams.insert(id.0, stream);
        }
        drop(s);
        adopted::remember(self.instance, raw as u64);
        Ok(id)
    }

    /// Number of live streams made by `create_stream`.
    pub fn live_streams(&self) -> usize {
        self.lock().ledger.stream_count()
    }

    /// The driver's description of a status code.
    pub fn error_string(&self, code: i32) -> String {
        result::error_string(self.ctx.driver(), code)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Run `f` on stream `id` once the ledger knows it.
    fn with_stream<T>(&self, call: &'static str, id: StreamId, f: impl FnOnce(&Stream) -> Result<T>) -> Result<T> {
        let s = self.lock();
        s.ledger.on_stream(call, id, || match s.streams.get(&id.0) {
            Some(stream) => f(stream),
            None => f(&self.default_stream),
        })
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        let s = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        let live = s.ledger.page_count();
        if live > 0 {
            eprintln!("expanse-cuda: device {} dropped with {live} physical page(s) still alive", self.ordinal);
        }
        s.events.clear();
        s.idle_events.clear();
        s.streams.clear();
        for e in self.ctx.take_errors() {
            eprintln!("expanse-cuda: device {}: {e}", self.ordinal);
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
        self.current().and_then(|d| result::mem_info(&d)).map(|(free, _)| free).unwrap_or(0)
    }

    fn granularity(&self) -> u64 {
        self.granularity
    }

    fn supports_virtual_memory(&self) -> bool {
        self.vmm
    }

    fn reserve(&self, size: u64) -> Result<DevicePtr> {
        self.lock().ledger.reserve(size, |size| result::address_reserve(&*self.current()?, size, self.granularity))
    }

    fn release_reservation(&self, base: DevicePtr, size: u64) -> Result<()> {
        self.lock().ledger.release_reservation(base, size, || {
            // SAFETY: the ledger checked that this is our reservation with
            // nothing mapped in it.
            unsafe { result::address_free(&*self.current()?, base, size) }
        })
    }

    fn create_page(&self, size: u64) -> Result<PageHandle> {
        self.lock().ledger.create_page(size, |size| {
            result::mem_create(&*self.current()?, size, &result::device_prop(self.ordinal as i32))
        })
    }

    fn release_page(&self, page: PageHandle) -> Result<()> {
        self.lock().ledger.release_page(page, |_| {
            // SAFETY: the ledger checked that the page is ours and unmapped.
            unsafe { result::mem_release(&*self.current()?, page.0) }
        })?;
        Ok(())
    }

    fn map(&self, addr: DevicePtr, page: PageHandle) -> Result<()> {
        self.lock().ledger.map(addr, page, |size| {
            // SAFETY: the ledger checked that the page is ours, unmapped and
            // of `size` bytes, and that the range is unmapped inside one of
            // our reservations.
            unsafe { result::mem_map(&*self.current()?, addr, size, page.0) }
        })
    }

    fn unmap(&self, addr: DevicePtr, size: u64) -> Result<()> {
        self.lock().ledger.unmap(addr, size, |_| {
            // SAFETY: the ledger checked that the range is whole pages we
            // mapped; the allocator unmaps only memory it no longer hands out.
            unsafe { result::mem_unmap(&*self.current()?, addr, size) }
        })
    }

    fn set_access(&self, addr: DevicePtr, size: u64, devices: &[u32]) -> Result<()> {
        let for_us = devices.contains(&self.ordinal);
        self.lock()
            .ledger
            .set_access(addr, size, for_us, |_| result::mem_set_access(&*self.current()?, addr, size, devices))
    }

    fn malloc(&self, size: u64) -> Result<DevicePtr> {
        self.lock().ledger.malloc(size, |size| result::mem_alloc(&*self.current()?, size))
    }

    fn free(&self, ptr: DevicePtr) -> Result<()> {
        self.lock().ledger.free(ptr, |_| {
            // SAFETY: the ledger checked that `ptr` came from our malloc and
            // was not freed since.
            unsafe { result::mem_free(&*self.current()?, ptr) }
        })?;
        Ok(())
    }

    fn create_stream(&self) -> Result<StreamId> {
        let mut s = self.lock();
        let st = &mut *s;
        st.ledger.create_stream(|| {
            let stream = Stream::create(&self.ctx)?;
            let id = stream.raw() as u64;
            st.streams.insert(id, stream);
            Ok(id)
        })
    }

    fn destroy_stream(&self, stream: StreamId) -> Result<()> {
        let mut s = self.lock();
        let st = &mut *s;
        st.ledger.destroy_stream(stream, || match st.streams.remove(&stream.0) {
            Some(owned) => owned.destroy(),
            None => Err(DeviceError::misuse("destroy_stream", stream.0, "stream missing from the device's table")),
        })
    }

    fn record_event(&self, stream: StreamId) -> Result<EventId> {
        let idle = self.lock().idle_events.pop();
        let event = match idle {
            Some(e) => e,
            None => Event::create(&self.ctx)?,
        };
        if let Err(e) = self.with_stream("record_event", stream, |st| event.record_on(st)) {
            self.lock().idle_events.push(event);
            return Err(e);
        }
        let mut s = self.lock();
        let id = s.next_event;
        s.next_event += 1;
        s.events.insert(id, event);
        Ok(EventId(id))
    }

    fn query_event(&self, event: EventId) -> Result<bool> {
        match self.lock().events.get(&event.0) {
            Some(e) => e.query(),
            None => Err(DeviceError::misuse("query_event", event.0, "unknown event")),
        }
    }

    fn release_event(&self, event: EventId) -> Result<()> {
        let mut s = self.lock();
        match s.events.remove(&event.0) {
            Some(e) => {
                if s.idle_events.len() < IDLE_EVENTS {
                    // Every wait on it is queued (the allocator releases an
                    // event after its wait, or once it completed), so it
                    // may be recorded again.
                    s.idle_events.push(e);
                    return Ok(());
                }
                drop(s);
                drop(e);
                self.ctx.take_errors().into_iter().next().map_or(Ok(()), Err)
            }
            None => Err(DeviceError::misuse("release_event", event.0, "unknown event")),
        }
    }

    fn wait_event(&self, stream: StreamId, event: EventId) -> Result<()> {
        let s = self.lock();
        let Some(e) = s.events.get(&event.0) else {
            return Err(DeviceError::misuse("wait_event", event.0, "unknown event"));
        };
        s.ledger.on_stream("wait_event", stream, || s.streams.get(&stream.0).unwrap_or(&self.default_stream).wait(e))
    }

    fn synchronize_stream(&self, stream: StreamId) -> Result<()> {
        self.with_stream("synchronize_stream", stream, Stream::synchronize)
    }

    fn synchronize(&self) -> Result<()> {
        result::ctx_synchronize(&*self.current()?)
    }

    fn write(&self, dst: DevicePtr, src: &[u8]) -> Result<()> {
        self.lock().ledger.access("write", dst, src.len() as u64, || {
            // SAFETY: the ledger checked that the whole range is memory of
            // this device mapped with access or malloc'd, and ours.
            unsafe { result::memcpy_htod(&*self.current()?, dst, src) }
        })
    }

    fn read(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()> {
        self.lock().ledger.access("read", src, dst.len() as u64, || {
            // SAFETY: as in `write`.
            unsafe { result::memcpy_dtoh(&*self.current()?, dst, src) }
        })
    }

    fn can_access_peer(&self, peer: u32) -> bool {
        if peer == self.ordinal {
            return true;
        }
        let Ok(d) = self.current() else { return false };
        result::device(&d, peer as i32).and_then(|p| result::can_access_peer(&d, self.ctx.device(), p)).unwrap_or(false)
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
