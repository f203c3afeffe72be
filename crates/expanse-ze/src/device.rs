//! [`Device`] for [`ZeDevice`]: every contract-bound call is the ledger's
//! check / driver / record protocol, with the Level Zero call as the
//! driver closure.

use expanse_device::{Device, DeviceError, DevicePtr, EventId, PageHandle, Result, StreamId};

use crate::{result, ZeDevice, MALLOC_ALIGNMENT};

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
        self.total.saturating_sub(self.lock().used)
    }

    fn granularity(&self) -> u64 {
        self.granularity
    }

    fn supports_virtual_memory(&self) -> bool {
        true
    }

    fn reserve(&self, size: u64) -> Result<DevicePtr> {
        let (a, ctx) = (self.platform.api(), self.platform.context());
        self.lock().ledger.reserve(size, |size| {
            // SAFETY: the platform keeps the context alive.
            let base = unsafe { result::reserve(a, ctx, size, self.granularity)? };
            if !base.is_multiple_of(self.granularity) {
                // SAFETY: the reservation was just made and nothing is mapped.
                let _ = unsafe { result::reserve_free(a, ctx, base, size) };
                return Err(DeviceError::Driver { call: "zeVirtualMemReserve", code: base as i64 });
            }
            Ok(base)
        })
    }

    fn release_reservation(&self, base: DevicePtr, size: u64) -> Result<()> {
        self.lock().ledger.release_reservation(base, size, || {
            // SAFETY: the ledger checked it is our reservation with nothing mapped.
            unsafe { result::reserve_free(self.platform.api(), self.platform.context(), base, size) }
        })
    }

    fn create_page(&self, size: u64) -> Result<PageHandle> {
        let mut s = self.lock();
        let st = &mut *s;
        st.ledger.create_page(size, |size| {
            let dev = self.platform.device(self.ordinal)?;
            // SAFETY: the platform keeps the context and device alive.
            let h = unsafe { result::physical_create(self.platform.api(), self.platform.context(), dev, size)? };
            st.used += size;
            Ok(h as u64)
        })
    }

    fn release_page(&self, page: PageHandle) -> Result<()> {
        let mut s = self.lock();
        let st = &mut *s;
        st.ledger.release_page(page, |size| {
            // SAFETY: the ledger checked the handle is ours, live and unmapped.
            unsafe { result::physical_destroy(self.platform.api(), self.platform.context(), page.0 as *mut _)? };
            st.used -= size;
            Ok(())
        })?;
        Ok(())
    }

    fn map(&self, addr: DevicePtr, page: PageHandle) -> Result<()> {
        self.lock().ledger.map(addr, page, |size| {
            // SAFETY: the ledger checked the page is ours and unmapped, and
            // the range lies unmapped inside one of our reservations.
            unsafe { result::map(self.platform.api(), self.platform.context(), addr, size, page.0 as *mut _) }
        })
    }

    fn unmap(&self, addr: DevicePtr, size: u64) -> Result<()> {
        self.lock().ledger.unmap(addr, size, |_| {
            // SAFETY: the ledger checked the range is exactly mapped pages.
            unsafe { result::unmap(self.platform.api(), self.platform.context(), addr, size) }
        })
    }

    fn set_access(&self, addr: DevicePtr, size: u64, devices: &[u32]) -> Result<()> {
        self.check_peers(devices)?;
        let (a, ctx) = (self.platform.api(), self.platform.context());
        let for_us = devices.contains(&self.ordinal);
        self.lock().ledger.set_access(addr, size, for_us, |_| {
            if for_us {
                // SAFETY: the ledger checked the range is our mapped pages.
                unsafe { result::set_access_rw(a, ctx, addr, size)? };
            }
            for &d in devices.iter().filter(|d| **d != self.ordinal) {
                // SAFETY: as above; the peer handle is kept alive by the platform.
                unsafe { result::make_resident(a, ctx, self.platform.device(d)?, addr, size)? };
            }
            Ok(())
        })
    }

    fn malloc(&self, size: u64) -> Result<DevicePtr> {
        let (a, ctx) = (self.platform.api(), self.platform.context());
        let mut s = self.lock();
        let st = &mut *s;
        st.ledger.malloc(size, |size| {
            let dev = self.platform.device(self.ordinal)?;
            // SAFETY: the platform keeps the context and device alive.
            let p = unsafe { result::mem_alloc_device(a, ctx, dev, size, MALLOC_ALIGNMENT)? };
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
            Ok(p)
        })
    }

    fn free(&self, ptr: DevicePtr) -> Result<()> {
        let mut s = self.lock();
        let st = &mut *s;
        st.ledger.free(ptr, |size| {
            // SAFETY: the ledger checked `ptr` is a live allocation of ours.
            unsafe { result::mem_free(self.platform.api(), self.platform.context(), ptr)? };
            st.used -= size;
            Ok(())
        })?;
        Ok(())
    }

    fn create_stream(&self) -> Result<StreamId> {
        self.lock().ledger.create_stream(|| self.streams.create())
    }

    fn destroy_stream(&self, stream: StreamId) -> Result<()> {
        self.lock().ledger.destroy_stream(stream, || self.streams.destroy(stream.0))
    }

    fn record_event(&self, stream: StreamId) -> Result<EventId> {
        self.lock().ledger.on_stream("record_event", stream, || self.streams.record(stream.0).map(EventId))
    }

    fn query_event(&self, event: EventId) -> Result<bool> {
        self.streams.query(event.0)
    }

    fn release_event(&self, event: EventId) -> Result<()> {
        self.streams.release(event.0)
    }

    fn wait_event(&self, stream: StreamId, event: EventId) -> Result<()> {
        self.lock().ledger.on_stream("wait_event", stream, || self.streams.wait(stream.0, event.0))
    }

    fn synchronize_stream(&self, stream: StreamId) -> Result<()> {
        self.lock().ledger.on_stream("synchronize_stream", stream, || self.streams.synchronize(stream.0))
    }

    fn synchronize(&self) -> Result<()> {
        self.streams.synchronize_all()
    }

    fn write(&self, dst: DevicePtr, src: &[u8]) -> Result<()> {
        self.lock().ledger.access("write", dst, src.len() as u64, || {
            // SAFETY: the destination is checked accessible memory of ours;
            // `src` is a live slice and `copy` waits for the copy to complete.
            unsafe { self.streams.copy(dst as *mut _, src.as_ptr().cast(), src.len()) }
        })
    }

    fn read(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()> {
        self.lock().ledger.access("read", src, dst.len() as u64, || self.read_as(src, dst))
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
