//! The device contract as bookkeeping: what is reserved, which pages exist,
//! what is mapped where and with access, what was `malloc`'d, which streams
//! the device handed out.
//!
//! The protocol of every contract-bound call is written once, here: each
//! public operation (`reserve`, `map`, `free`, ...) takes the driver action
//! as a closure and
//! 1. checks the call against the ledger; a broken contract comes back as
//!    [`DeviceError::Misuse`] and the driver is never called;
//! 2. calls the driver;
//! 3. records the call only if the driver succeeded.
//!
//! The check and record steps are private, so no backend can run them in
//! the wrong order or forget one: whatever the driver would have done with
//! a bad call (a real driver may accept an unmap of an unmapped range, or
//! fault on a bad pointer), the backend never makes it.

use std::collections::{BTreeMap, HashMap};

use crate::{DeviceError, PageHandle, Result, StreamId};

#[derive(Clone, Copy, Debug)]
struct PageEntry {
    size: u64,
    mapped_at: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
struct MapEntry {
    handle: u64,
    size: u64,
    accessible: bool,
}

/// What a ledger still holds: `(address or handle, bytes)` of each
/// reservation, page and classic allocation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Live {
    /// Reservations: (base, size).
    pub reservations: Vec<(u64, u64)>,
    /// Pages: (handle, size).
    pub pages: Vec<(u64, u64)>,
    /// Classic allocations: (pointer, size).
    pub mallocs: Vec<(u64, u64)>,
}

impl Live {
    /// Whether nothing is left.
    pub fn is_empty(&self) -> bool {
        self.reservations.is_empty() && self.pages.is_empty() && self.mallocs.is_empty()
    }
}

/// Bookkeeping of one device's reservations, pages, mappings and mallocs.
#[derive(Debug, Default)]
pub struct Ledger {
    granularity: u64,
    reservations: BTreeMap<u64, u64>,
    pages: HashMap<u64, PageEntry>,
    mappings: BTreeMap<u64, MapEntry>,
    mallocs: BTreeMap<u64, u64>,
    /// Known streams (the default stream is always known): `true` for
    /// those made by `create_stream`, `false` for adopted ones (streams of
    /// the caller's, which the device never destroys).
    streams: HashMap<u64, bool>,
}

fn misuse(call: &'static str, addr: u64, what: &'static str) -> DeviceError {
    DeviceError::misuse(call, addr, what)
}

impl Ledger {
    /// An empty ledger for a device of this page granularity.
    pub fn new(granularity: u64) -> Self {
        Ledger { granularity: granularity.max(1), ..Ledger::default() }
    }

    fn aligned(&self, x: u64) -> bool {
        x.is_multiple_of(self.granularity)
    }

    /// `size` is a valid reservation or page size.
    fn check_size(&self, call: &'static str, size: u64) -> Result<()> {
        if size == 0 || !self.aligned(size) {
            return Err(misuse(call, size, "size not a non-zero multiple of the granularity"));
        }
        Ok(())
    }

    /// Record a reservation made by the driver.
    fn add_reservation(&mut self, base: u64, size: u64) {
        self.reservations.insert(base, size);
    }

    /// A reservation of exactly this size exists at `base` with nothing mapped.
    fn check_release_reservation(&self, base: u64, size: u64) -> Result<()> {
        if self.reservations.get(&base) != Some(&size) {
            return Err(misuse("release_reservation", base, "not a reservation of that size"));
        }
        if self.mappings.range(base..base.saturating_add(size)).next().is_some() {
            return Err(misuse("release_reservation", base, "reservation still has mappings"));
        }
        Ok(())
    }

    /// Forget a released reservation.
    fn remove_reservation(&mut self, base: u64) {
        self.reservations.remove(&base);
    }

    /// Record a page created by the driver.
    fn add_page(&mut self, handle: u64, size: u64) {
        self.pages.insert(handle, PageEntry { size, mapped_at: None });
    }

    /// The page exists and is not mapped; returns its size.
    fn check_release_page(&self, handle: u64) -> Result<u64> {
        match self.pages.get(&handle) {
            None => Err(misuse("release_page", handle, "unknown page handle")),
            Some(p) if p.mapped_at.is_some() => Err(misuse("release_page", handle, "page still mapped")),
            Some(p) => Ok(p.size),
        }
    }

    /// Forget a released page.
    fn remove_page(&mut self, handle: u64) {
        self.pages.remove(&handle);
    }

    /// Size of page `handle`, if it exists.
    pub fn page_size(&self, handle: u64) -> Option<u64> {
        self.pages.get(&handle).map(|p| p.size)
    }

    /// Number of live pages.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// Page `handle` may be mapped whole at `addr`; returns its size.
    fn check_map(&self, addr: u64, handle: u64) -> Result<u64> {
        let size = match self.pages.get(&handle) {
            None => return Err(misuse("map", handle, "unknown page handle")),
            Some(p) if p.mapped_at.is_some() => return Err(misuse("map", handle, "page already mapped")),
            Some(p) => p.size,
        };
        if !self.aligned(addr) {
            return Err(misuse("map", addr, "address not aligned to the granularity"));
        }
        let inside = self
            .reservations
            .range(..=addr)
            .next_back()
            .is_some_and(|(&b, &sz)| addr.checked_add(size).is_some_and(|end| end <= b + sz));
        if !inside {
            return Err(misuse("map", addr, "range not inside one reservation"));
        }
        let overlaps = self.mappings.range(..=addr).next_back().is_some_and(|(&b, m)| addr < b + m.size)
            || self.mappings.range(addr..addr + size).next().is_some();
        if overlaps {
            return Err(misuse("map", addr, "address already mapped"));
        }
        Ok(size)
    }

    /// Record a mapping made by the driver (no access yet).
    fn add_mapping(&mut self, addr: u64, handle: u64, size: u64) {
        if let Some(p) = self.pages.get_mut(&handle) {
            p.mapped_at = Some(addr);
        }
        self.mappings.insert(addr, MapEntry { handle, size, accessible: false });
    }

    /// `[addr, addr + size)` is exactly whole mapped pages; returns their bases.
    fn whole_pages(&self, call: &'static str, addr: u64, size: u64) -> Result<Vec<u64>> {
        if size == 0 || !self.aligned(addr) || !self.aligned(size) {
            return Err(misuse(call, addr, "range not aligned to the granularity"));
        }
        let end = addr.checked_add(size).ok_or_else(|| misuse(call, addr, "range overflows"))?;
        let mut at = addr;
        let mut bases = Vec::new();
        while at < end {
            match self.mappings.get(&at) {
                Some(m) if at + m.size <= end => {
                    bases.push(at);
                    at += m.size;
                }
                Some(_) => return Err(misuse(call, at, "range cuts a mapped page")),
                None => return Err(misuse(call, at, "address not mapped")),
            }
        }
        Ok(bases)
    }

    /// Forget the mappings at `bases` (after a successful unmap).
    fn remove_mappings(&mut self, bases: &[u64]) {
        for b in bases {
            if let Some(m) = self.mappings.remove(b) {
                if let Some(p) = self.pages.get_mut(&m.handle) {
                    p.mapped_at = None;
                }
            }
        }
    }

    /// Mark the mappings at `bases` accessible by this device.
    fn mark_accessible(&mut self, bases: &[u64]) {
        for b in bases {
            if let Some(m) = self.mappings.get_mut(b) {
                m.accessible = true;
            }
        }
    }

    /// Record a classic allocation.
    fn add_malloc(&mut self, ptr: u64, size: u64) {
        self.mallocs.insert(ptr, size);
    }

    /// `ptr` is a live classic allocation; returns its size.
    fn check_free(&self, ptr: u64) -> Result<u64> {
        self.mallocs.get(&ptr).copied().ok_or_else(|| misuse("free", ptr, "not a malloc'd pointer (or already freed)"))
    }

    /// Forget a freed classic allocation.
    fn remove_malloc(&mut self, ptr: u64) {
        self.mallocs.remove(&ptr);
    }

    /// `[addr, addr + len)` is memory this device may read and write.
    fn check_accessible(&self, call: &'static str, addr: u64, len: u64) -> Result<()> {
        let end = addr.checked_add(len).ok_or_else(|| misuse(call, addr, "range overflows"))?;
        let mut at = addr;
        while at < end {
            if let Some((&b, m)) = self.mappings.range(..=at).next_back() {
                if at < b + m.size {
                    if !m.accessible {
                        return Err(misuse(call, at, "access not set"));
                    }
                    at = b + m.size;
                    continue;
                }
            }
            if let Some((&p, &sz)) = self.mallocs.range(..=at).next_back() {
                if at < p + sz {
                    at = p + sz;
                    continue;
                }
            }
            return Err(misuse(call, at, "address not mapped"));
        }
        Ok(())
    }

    /// What is still live, for leak reports and teardown.
    pub fn live(&self) -> Live {
        Live {
            reservations: self.reservations.iter().map(|(a, b)| (*a, *b)).collect(),
            pages: self.pages.iter().map(|(h, p)| (*h, p.size)).collect(),
            mallocs: self.mallocs.iter().map(|(a, b)| (*a, *b)).collect(),
        }
    }

    /// The classic allocation containing `addr`, if any: (base, size).
    pub fn malloc_at(&self, addr: u64) -> Option<(u64, u64)> {
        let (&p, &sz) = self.mallocs.range(..=addr).next_back()?;
        (addr < p + sz).then_some((p, sz))
    }

    /// Bytes mapped.
    pub fn mapped_bytes(&self) -> u64 {
        self.mappings.values().map(|m| m.size).sum()
    }

    /// The page mapped at `addr`'s mapping, if any: (base, handle, size).
    pub fn mapping_at(&self, addr: u64) -> Option<(u64, u64, u64)> {
        let (&b, m) = self.mappings.range(..=addr).next_back()?;
        (addr < b + m.size).then_some((b, m.handle, m.size))
    }
}

/// The contract-bound calls: check, call the driver, record on success.
impl Ledger {
    /// Reserve `size` bytes: `driver(size)` returns the base address.
    pub fn reserve(&mut self, size: u64, driver: impl FnOnce(u64) -> Result<u64>) -> Result<u64> {
        self.check_size("reserve", size)?;
        let base = driver(size)?;
        if !self.aligned(base) {
            return Err(misuse("reserve", base, "driver returned an unaligned reservation"));
        }
        self.add_reservation(base, size);
        Ok(base)
    }

    /// Release the reservation `[base, base + size)` with nothing mapped in it.
    pub fn release_reservation(&mut self, base: u64, size: u64, driver: impl FnOnce() -> Result<()>) -> Result<()> {
        self.check_release_reservation(base, size)?;
        driver()?;
        self.remove_reservation(base);
        Ok(())
    }

    /// Create a page of `size` bytes: `driver(size)` returns its raw handle.
    pub fn create_page(&mut self, size: u64, driver: impl FnOnce(u64) -> Result<u64>) -> Result<PageHandle> {
        self.check_size("create_page", size)?;
        let handle = driver(size)?;
        if self.pages.contains_key(&handle) {
            return Err(misuse("create_page", handle, "driver returned a live page handle"));
        }
        self.add_page(handle, size);
        Ok(PageHandle(handle))
    }

    /// Release an unmapped page: `driver(size)` frees it. Returns its size.
    pub fn release_page(&mut self, page: PageHandle, driver: impl FnOnce(u64) -> Result<()>) -> Result<u64> {
        let size = self.check_release_page(page.0)?;
        driver(size)?;
        self.remove_page(page.0);
        Ok(size)
    }

    /// Map the whole of `page` at `addr`: `driver(size)` maps it.
    pub fn map(&mut self, addr: u64, page: PageHandle, driver: impl FnOnce(u64) -> Result<()>) -> Result<()> {
        let size = self.check_map(addr, page.0)?;
        driver(size)?;
        self.add_mapping(addr, page.0, size);
        Ok(())
    }

    /// Unmap `[addr, addr + size)`, exactly whole mapped pages: `driver(bases)`
    /// unmaps them (the bases of the pages, in address order).
    pub fn unmap(&mut self, addr: u64, size: u64, driver: impl FnOnce(&[u64]) -> Result<()>) -> Result<()> {
        let bases = self.whole_pages("unmap", addr, size)?;
        driver(&bases)?;
        self.remove_mappings(&bases);
        Ok(())
    }

    /// Set access on `[addr, addr + size)`, exactly whole mapped pages:
    /// `driver(bases)` sets it. When `for_this_device`, the range becomes
    /// usable by reads and writes.
    pub fn set_access(
        &mut self,
        addr: u64,
        size: u64,
        for_this_device: bool,
        driver: impl FnOnce(&[u64]) -> Result<()>,
    ) -> Result<()> {
        let bases = self.whole_pages("set_access", addr, size)?;
        driver(&bases)?;
        if for_this_device {
            self.mark_accessible(&bases);
        }
        Ok(())
    }

    /// Classic allocation of `size` bytes: `driver(size)` returns the pointer.
    pub fn malloc(&mut self, size: u64, driver: impl FnOnce(u64) -> Result<u64>) -> Result<u64> {
        if size == 0 {
            return Err(misuse("malloc", 0, "zero-sized malloc"));
        }
        let ptr = driver(size)?;
        self.add_malloc(ptr, size);
        Ok(ptr)
    }

    /// Free a classic allocation: `driver(size)` frees it. Returns its size.
    pub fn free(&mut self, ptr: u64, driver: impl FnOnce(u64) -> Result<()>) -> Result<u64> {
        let size = self.check_free(ptr)?;
        driver(size)?;
        self.remove_malloc(ptr);
        Ok(size)
    }

    /// Read or write `[addr, addr + len)`, which must be memory this device
    /// may use: `driver()` does the copy. Nothing is recorded.
    pub fn access<T>(&self, call: &'static str, addr: u64, len: u64, driver: impl FnOnce() -> Result<T>) -> Result<T> {
        self.check_accessible(call, addr, len)?;
        driver()
    }

    /// Create a stream: `driver()` returns its id, never the default
    /// stream's and never a live stream's.
    pub fn create_stream(&mut self, driver: impl FnOnce() -> Result<u64>) -> Result<StreamId> {
        let id = driver()?;
        if id == StreamId::DEFAULT.0 || self.streams.contains_key(&id) {
            return Err(misuse("create_stream", id, "driver returned the default or a live stream id"));
        }
        self.streams.insert(id, true);
        Ok(StreamId(id))
    }

    /// Know `id`, a stream the caller owns (e.g. a `CUstream` handed over
    /// the C ABI), from now on; adopting it again is a no-op. It cannot be
    /// destroyed through the device. Fails if `id` was made by
    /// `create_stream` (a stale handle of the caller's, reused by the
    /// driver for one of ours).
    pub fn adopt_stream(&mut self, id: u64) -> Result<StreamId> {
        if id != StreamId::DEFAULT.0 && *self.streams.entry(id).or_insert(false) {
            return Err(misuse("adopt_stream", id, "a stream this device created, not the caller's"));
        }
        Ok(StreamId(id))
    }

    /// Destroy a stream made by `create_stream`: `driver()` destroys it.
    pub fn destroy_stream(&mut self, stream: StreamId, driver: impl FnOnce() -> Result<()>) -> Result<()> {
        if self.streams.get(&stream.0) != Some(&true) {
            return Err(misuse("destroy_stream", stream.0, "not a stream this device created"));
        }
        driver()?;
        self.streams.remove(&stream.0);
        Ok(())
    }

    /// Use `stream`, the default stream or one made by `create_stream`:
    /// `driver()` does the stream operation. Nothing is recorded.
    pub fn on_stream<T>(&self, call: &'static str, stream: StreamId, driver: impl FnOnce() -> Result<T>) -> Result<T> {
        self.check_stream(call, stream)?;
        driver()
    }

    /// `stream` is the default stream or one this device created.
    pub fn check_stream(&self, call: &'static str, stream: StreamId) -> Result<()> {
        if stream != StreamId::DEFAULT && !self.streams.contains_key(&stream.0) {
            return Err(misuse(call, stream.0, "unknown stream (not created by this device)"));
        }
        Ok(())
    }

    /// Number of live streams made by `create_stream`.
    pub fn stream_count(&self) -> usize {
        self.streams.values().filter(|created| **created).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 2 << 20;

    fn ok<T: Default>() -> impl FnOnce() -> Result<T> {
        || Ok(T::default())
    }

    #[test]
    fn refuses_what_the_contract_forbids() {
        let mut l = Ledger::new(G);
        l.reserve(4 * G, |_| Ok(10 * G)).unwrap();
        let p1 = l.create_page(2 * G, |_| Ok(1)).unwrap();
        let never = |_: u64| -> Result<()> { panic!("driver called for a refused call") };
        assert!(l.map(10 * G + 512, p1, never).is_err());
        assert!(l.map(13 * G, p1, never).is_err(), "runs past the reservation");
        assert!(l.map(10 * G, PageHandle(9), never).is_err(), "unknown page");
        l.map(11 * G, p1, |size| if size == 2 * G { Ok(()) } else { panic!("size {size}") }).unwrap();
        assert!(l.map(11 * G, p1, never).is_err(), "page mapped twice");
        let p2 = l.create_page(G, |_| Ok(2)).unwrap();
        assert!(l.map(12 * G, p2, never).is_err(), "address already mapped");
        assert!(l.unmap(11 * G, G, |_| panic!("cuts a page")).is_err());
        assert!(l.unmap(10 * G, G, |_| panic!("not mapped")).is_err());
        assert!(l.access("read", 11 * G, 8, ok::<()>()).is_err(), "no access yet");
        l.set_access(11 * G, 2 * G, true, |b| if b == [11 * G] { Ok(()) } else { panic!("{b:?}") }).unwrap();
        assert!(l.access("read", 11 * G, 8, ok::<()>()).is_ok());
        assert!(l.release_page(p1, never).is_err(), "still mapped");
        assert!(l.release_reservation(10 * G, 4 * G, || panic!("has mappings")).is_err());
        assert!(l.free(5, never).is_err());
    }

    #[test]
    fn a_failed_driver_call_records_nothing() {
        let mut l = Ledger::new(G);
        let fail = DeviceError::Driver { call: "x", code: 1 };
        assert!(l.reserve(2 * G, |_| Err(fail.clone())).is_err());
        assert!(l.live().is_empty());
        l.reserve(2 * G, |_| Ok(4 * G)).unwrap();
        let p = l.create_page(2 * G, |_| Ok(7)).unwrap();
        assert!(l.map(4 * G, p, |_| Err(fail.clone())).is_err());
        // Not mapped: it can be mapped now, and released after the unmap.
        l.map(4 * G, p, |_| Ok(())).unwrap();
        assert!(l.unmap(4 * G, 2 * G, |_| Err(fail.clone())).is_err());
        assert!(l.release_page(p, |_| Ok(())).is_err(), "still mapped after a failed unmap");
        l.unmap(4 * G, 2 * G, |_| Ok(())).unwrap();
        assert_eq!(l.release_page(p, |_| Ok(())).unwrap(), 2 * G);
        l.release_reservation(4 * G, 2 * G, || Ok(())).unwrap();
        assert!(l.live().is_empty());
    }

    #[test]
    fn only_known_streams_are_used() {
        let mut l = Ledger::new(G);
        assert!(l.check_stream("record_event", StreamId::DEFAULT).is_ok());
        assert!(l.on_stream("record_event", StreamId(3), || -> Result<()> { panic!("unknown stream") }).is_err());
        let s = l.create_stream(|| Ok(3)).unwrap();
        assert!(l.create_stream(|| Ok(3)).is_err(), "a live id handed out twice");
        assert!(l.create_stream(|| Ok(0)).is_err(), "the default stream is not created");
        assert_eq!(l.on_stream("record_event", s, || Ok(5)).unwrap(), 5);
        l.destroy_stream(s, || Ok(())).unwrap();
        assert!(l.check_stream("record_event", s).is_err(), "destroyed");
        assert!(l.destroy_stream(StreamId::DEFAULT, || Ok(())).is_err());
        let theirs = l.adopt_stream(9).unwrap();
        assert!(l.check_stream("wait_event", theirs).is_ok());
        assert!(l.destroy_stream(theirs, || Ok(())).is_err(), "the caller's stream is not ours to destroy");
        let ours = l.create_stream(|| Ok(4)).unwrap();
        assert!(l.adopt_stream(ours.0).is_err());
    }

    /// What lets the CUDA backend remember adopted streams per thread: an
    /// adopted stream stays known, and adopting it again succeeds, whatever
    /// streams are made and destroyed meanwhile.
    #[test]
    fn an_adopted_stream_stays_adopted() {
        let mut l = Ledger::new(G);
        let theirs = l.adopt_stream(9).unwrap();
        assert!(l.create_stream(|| Ok(9)).is_err(), "the driver reusing an adopted handle is refused");
        assert!(l.destroy_stream(theirs, || Ok(())).is_err());
        let ours = l.create_stream(|| Ok(5)).unwrap();
        l.destroy_stream(ours, || Ok(())).unwrap();
        assert_eq!(l.adopt_stream(9).unwrap(), theirs);
        assert!(l.check_stream("record_event", theirs).is_ok());
    }
}
