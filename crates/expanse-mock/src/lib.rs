//! A strict mock device.
//!
//! It simulates a device's address space with plain integers (no memory is
//! touched unless a test writes through it), and it *asserts the device
//! contract*: every reserve/map/unmap/set_access must be aligned and inside
//! a reservation, no address may be mapped twice, only mapped ranges may be
//! unmapped, pages are released only when unmapped, nothing may be left at
//! drop. A broken contract is returned as [`DeviceError::Misuse`] *and*
//! recorded; [`MockDevice::violations`] lists them so tests can assert that
//! the allocator never misused the device.
//!
//! Tests can make the N-th call of any kind fail ([`MockDevice::fail_nth`]),
//! hold recorded events pending until released ([`MockDevice::hold_events`])
//! to test stream-ordered reuse, and read call counts.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use expanse_device::{Call, Device, DeviceError, DevicePtr, EventId, PageHandle, Result, StreamId};

/// Where the mock's address space starts (non-zero so that 0 is never valid).
const BASE_ADDR: u64 = 1 << 40;

#[derive(Debug)]
struct Page {
    size: u64,
    mapped_at: Option<u64>,
    data: Option<Vec<u8>>,
}

#[derive(Debug)]
struct Mapping {
    handle: u64,
    size: u64,
    access: Vec<u32>,
}

#[derive(Debug)]
struct Event {
    done: bool,
    stream: StreamId,
}

#[derive(Debug, Default)]
struct State {
    next_addr: u64,
    next_id: u64,
    reservations: BTreeMap<u64, u64>,
    pages: HashMap<u64, Page>,
    mappings: BTreeMap<u64, Mapping>,
    mallocs: BTreeMap<u64, (u64, Option<Vec<u8>>)>,
    used: u64,
    events: HashMap<u64, Event>,
    hold_events: bool,
    calls: HashMap<Call, u64>,
    failures: HashMap<Call, (u64, DeviceError)>,
    violations: Vec<String>,
    synchronizations: u64,
}

/// A simulated device that checks every call against the device contract.
#[derive(Debug)]
pub struct MockDevice {
    ordinal: u32,
    capacity: u64,
    granularity: u64,
    virtual_memory: bool,
    peers: Vec<u32>,
    state: Mutex<State>,
    check_leaks_at_drop: bool,
}

impl MockDevice {
    /// A mock device with `capacity` bytes and a `granularity` page size.
    pub fn new(capacity: u64, granularity: u64) -> Self {
        MockDevice {
            ordinal: 0,
            capacity,
            granularity,
            virtual_memory: true,
            peers: Vec::new(),
            state: Mutex::new(State { next_addr: BASE_ADDR, next_id: 1, ..State::default() }),
            check_leaks_at_drop: true,
        }
    }

    /// Set the device ordinal. Each device gets its own address range, as
    /// with unified addressing on real GPUs.
    pub fn with_ordinal(mut self, ordinal: u32) -> Self {
        self.ordinal = ordinal;
        self.lock().next_addr = BASE_ADDR + (u64::from(ordinal) << 44);
        self
    }

    /// Declare devices that may be given access to this device's memory.
    pub fn with_peers(mut self, peers: &[u32]) -> Self {
        self.peers = peers.to_vec();
        self
    }

    /// A device without virtual memory support (classic segments only).
    pub fn without_virtual_memory(mut self) -> Self {
        self.virtual_memory = false;
        self
    }

    /// Do not panic at drop when something is left allocated (for tests
    /// that deliberately leak, e.g. after an injected failure).
    pub fn without_leak_check(mut self) -> Self {
        self.check_leaks_at_drop = false;
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock only means a test panicked mid-call; the state is
        // still the best record we have.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Make the `n`-th (1-based, counted from now) call of kind `call`
    /// fail with `error`.
    pub fn fail_nth(&self, call: Call, n: u64, error: DeviceError) {
        let mut s = self.lock();
        let done = s.calls.get(&call).copied().unwrap_or(0);
        s.failures.insert(call, (done + n.max(1), error));
    }

    /// Stop failing calls of kind `call`.
    pub fn clear_failure(&self, call: Call) {
        self.lock().failures.remove(&call);
    }

    /// While `hold` is true, recorded events stay pending until
    /// [`complete_events`](Self::complete_events) is called or their stream
    /// (or the device) is synchronized.
    pub fn hold_events(&self, hold: bool) {
        self.lock().hold_events = hold;
    }

    /// Complete every pending event.
    pub fn complete_events(&self) {
        for e in self.lock().events.values_mut() {
            e.done = true;
        }
    }

    /// Number of events still pending.
    pub fn pending_events(&self) -> usize {
        self.lock().events.values().filter(|e| !e.done).count()
    }

    /// How many calls of kind `call` were made.
    pub fn calls(&self, call: Call) -> u64 {
        self.lock().calls.get(&call).copied().unwrap_or(0)
    }

    /// Contract violations seen so far (empty for a correct caller).
    pub fn violations(&self) -> Vec<String> {
        self.lock().violations.clone()
    }

    /// Bytes of physical memory in use (pages plus mallocs).
    pub fn used(&self) -> u64 {
        self.lock().used
    }

    /// Bytes currently mapped.
    pub fn mapped_bytes(&self) -> u64 {
        self.lock().mappings.values().map(|m| m.size).sum()
    }

    /// Number of live physical pages.
    pub fn live_pages(&self) -> usize {
        self.lock().pages.len()
    }

    /// Access list of the mapping that contains `addr`, if mapped.
    pub fn access_at(&self, addr: u64) -> Option<Vec<u32>> {
        let s = self.lock();
        let (&base, m) = s.mappings.range(..=addr).next_back()?;
        (addr < base + m.size).then(|| m.access.clone())
    }

    /// Number of stream / device synchronizations.
    pub fn synchronizations(&self) -> u64 {
        self.lock().synchronizations
    }

    /// What is still allocated: a list of human-readable leak reports.
    pub fn leaks(&self) -> Vec<String> {
        let s = self.lock();
        let mut out = Vec::new();
        for (b, sz) in &s.reservations {
            out.push(format!("reservation {b:#x} ({sz} bytes)"));
        }
        for (h, p) in &s.pages {
            out.push(format!("page {h} ({} bytes)", p.size));
        }
        for (p, (sz, _)) in &s.mallocs {
            out.push(format!("malloc {p:#x} ({sz} bytes)"));
        }
        out
    }

    /// Count the call and apply any injected failure.
    fn enter(&self, s: &mut State, call: Call) -> Result<()> {
        let n = s.calls.entry(call).or_insert(0);
        *n += 1;
        let n = *n;
        if let Some((at, err)) = s.failures.get(&call) {
            if *at == n {
                let err = err.clone();
                s.failures.remove(&call);
                return Err(err);
            }
        }
        Ok(())
    }

    fn violation(s: &mut State, call: &'static str, addr: u64, what: &'static str) -> DeviceError {
        s.violations.push(format!("{call}: {what} (at {addr:#x})"));
        DeviceError::misuse(call, addr, what)
    }

    fn aligned(&self, x: u64) -> bool {
        x.is_multiple_of(self.granularity)
    }

    fn in_reservation(s: &State, addr: u64, size: u64) -> bool {
        match s.reservations.range(..=addr).next_back() {
            Some((&b, &sz)) => addr.checked_add(size).is_some_and(|end| end <= b + sz),
            None => false,
        }
    }

    fn bump(&self, s: &mut State, size: u64) -> u64 {
        let addr = s.next_addr;
        let step = size.div_ceil(self.granularity).max(1) * self.granularity;
        // Leave a gap so that neighbouring ranges are never adjacent.
        s.next_addr += step + self.granularity;
        addr
    }

    /// Run `f` on the bytes at `addr..addr+len` (mapped page or malloc),
    /// one contiguous piece at a time.
    fn with_bytes(
        &self,
        s: &mut State,
        call: &'static str,
        mut addr: u64,
        len: usize,
        mut f: impl FnMut(&mut [u8], usize),
    ) -> Result<()> {
        let mut done = 0usize;
        while done < len {
            let want = (len - done) as u64;
            if let Some((&b, m)) = s.mappings.range(..=addr).next_back() {
                if addr < b + m.size {
                    if !m.access.contains(&self.ordinal) {
                        return Err(Self::violation(s, call, addr, "access not set"));
                    }
                    let handle = m.handle;
                    let off = addr - b;
                    let n = want.min(m.size - off);
                    let page = s.pages.get_mut(&handle).expect("mapped page exists");
                    let data = page.data.get_or_insert_with(|| vec![0; page.size as usize]);
                    f(&mut data[off as usize..(off + n) as usize], done);
                    done += n as usize;
                    addr += n;
                    continue;
                }
            }
            if let Some((&p, (sz, data))) = s.mallocs.range_mut(..=addr).next_back() {
                if addr < p + *sz {
                    let off = addr - p;
                    let n = want.min(*sz - off);
                    let size = *sz as usize;
                    let data = data.get_or_insert_with(|| vec![0; size]);
                    f(&mut data[off as usize..(off + n) as usize], done);
                    done += n as usize;
                    addr += n;
                    continue;
                }
            }
            return Err(Self::violation(s, call, addr, "address not mapped"));
        }
        Ok(())
    }
}

impl Drop for MockDevice {
    fn drop(&mut self) {
        if !self.check_leaks_at_drop || std::thread::panicking() {
            return;
        }
        let leaks = self.leaks();
        // The mock is a test tool: a leak is a failed assertion.
        assert!(leaks.is_empty(), "mock device dropped with leaks: {leaks:?}");
    }
}

impl Device for MockDevice {
    fn ordinal(&self) -> u32 {
        self.ordinal
    }

    fn name(&self) -> String {
        format!("mock:{}", self.ordinal)
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
        self.virtual_memory
    }

    fn reserve(&self, size: u64) -> Result<DevicePtr> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Reserve)?;
        if !self.virtual_memory {
            return Err(DeviceError::Unsupported { what: "virtual memory".into() });
        }
        if size == 0 || !self.aligned(size) {
            return Err(Self::violation(&mut s, "reserve", size, "size not a non-zero multiple of the granularity"));
        }
        if size > 1 << 52 {
            return Err(DeviceError::OutOfMemory { call: "reserve", requested: size });
        }
        let addr = self.bump(&mut s, size);
        s.reservations.insert(addr, size);
        Ok(addr)
    }

    fn release_reservation(&self, base: DevicePtr, size: u64) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::ReleaseReservation)?;
        if s.reservations.get(&base) != Some(&size) {
            return Err(Self::violation(&mut s, "release_reservation", base, "not a reservation of that size"));
        }
        if s.mappings.range(base..base + size).next().is_some() {
            return Err(Self::violation(&mut s, "release_reservation", base, "reservation still has mappings"));
        }
        s.reservations.remove(&base);
        Ok(())
    }

    fn create_page(&self, size: u64) -> Result<PageHandle> {
        let mut s = self.lock();
        self.enter(&mut s, Call::CreatePage)?;
        if !self.virtual_memory {
            return Err(DeviceError::Unsupported { what: "virtual memory".into() });
        }
        if size == 0 || !self.aligned(size) {
            return Err(Self::violation(
                &mut s,
                "create_page",
                size,
                "size not a non-zero multiple of the granularity",
            ));
        }
        if s.used.saturating_add(size) > self.capacity {
            return Err(DeviceError::OutOfMemory { call: "create_page", requested: size });
        }
        s.used += size;
        let id = s.next_id;
        s.next_id += 1;
        s.pages.insert(id, Page { size, mapped_at: None, data: None });
        Ok(PageHandle(id))
    }

    fn release_page(&self, page: PageHandle) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::ReleasePage)?;
        match s.pages.get(&page.0) {
            None => Err(Self::violation(&mut s, "release_page", page.0, "unknown page handle")),
            Some(p) if p.mapped_at.is_some() => {
                Err(Self::violation(&mut s, "release_page", page.0, "page still mapped"))
            }
            Some(p) => {
                let size = p.size;
                s.pages.remove(&page.0);
                s.used -= size;
                Ok(())
            }
        }
    }

    fn map(&self, addr: DevicePtr, page: PageHandle) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Map)?;
        let size = match s.pages.get(&page.0) {
            None => return Err(Self::violation(&mut s, "map", page.0, "unknown page handle")),
            Some(p) if p.mapped_at.is_some() => {
                return Err(Self::violation(&mut s, "map", page.0, "page already mapped"))
            }
            Some(p) => p.size,
        };
        if !self.aligned(addr) {
            return Err(Self::violation(&mut s, "map", addr, "address not aligned to the granularity"));
        }
        if !Self::in_reservation(&s, addr, size) {
            return Err(Self::violation(&mut s, "map", addr, "range not inside one reservation"));
        }
        let overlaps_prev = s.mappings.range(..=addr).next_back().is_some_and(|(&b, m)| addr < b + m.size);
        let overlaps_next = s.mappings.range(addr..addr + size).next().is_some();
        if overlaps_prev || overlaps_next {
            return Err(Self::violation(&mut s, "map", addr, "address already mapped"));
        }
        s.pages.get_mut(&page.0).expect("checked").mapped_at = Some(addr);
        s.mappings.insert(addr, Mapping { handle: page.0, size, access: Vec::new() });
        Ok(())
    }

    fn unmap(&self, addr: DevicePtr, size: u64) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Unmap)?;
        if !self.aligned(addr) || !self.aligned(size) || size == 0 {
            return Err(Self::violation(&mut s, "unmap", addr, "range not aligned to the granularity"));
        }
        // The range must be exactly a union of whole, contiguous mappings.
        let mut at = addr;
        let end = addr + size;
        let mut bases = Vec::new();
        while at < end {
            match s.mappings.get(&at) {
                Some(m) if at + m.size <= end => {
                    bases.push(at);
                    at += m.size;
                }
                Some(_) => return Err(Self::violation(&mut s, "unmap", at, "range cuts a mapped page")),
                None => return Err(Self::violation(&mut s, "unmap", at, "address not mapped")),
            }
        }
        for b in bases {
            let m = s.mappings.remove(&b).expect("checked");
            s.pages.get_mut(&m.handle).expect("mapped page exists").mapped_at = None;
        }
        Ok(())
    }

    fn set_access(&self, addr: DevicePtr, size: u64, devices: &[u32]) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::SetAccess)?;
        if !self.aligned(addr) || !self.aligned(size) || size == 0 {
            return Err(Self::violation(&mut s, "set_access", addr, "range not aligned to the granularity"));
        }
        if let Some(d) = devices.iter().find(|d| **d != self.ordinal && !self.peers.contains(d)) {
            return Err(Self::violation(&mut s, "set_access", u64::from(*d), "device is not a peer"));
        }
        let mut at = addr;
        let end = addr + size;
        let mut bases = Vec::new();
        while at < end {
            match s.mappings.get(&at) {
                Some(m) if at + m.size <= end => {
                    bases.push(at);
                    at += m.size;
                }
                _ => return Err(Self::violation(&mut s, "set_access", at, "range is not whole mapped pages")),
            }
        }
        for b in bases {
            let m = s.mappings.get_mut(&b).expect("checked");
            for d in devices {
                if !m.access.contains(d) {
                    m.access.push(*d);
                }
            }
        }
        Ok(())
    }

    fn malloc(&self, size: u64) -> Result<DevicePtr> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Malloc)?;
        if size == 0 {
            return Err(Self::violation(&mut s, "malloc", 0, "zero-sized malloc"));
        }
        if s.used.saturating_add(size) > self.capacity {
            return Err(DeviceError::OutOfMemory { call: "malloc", requested: size });
        }
        s.used += size;
        let addr = self.bump(&mut s, size);
        s.mallocs.insert(addr, (size, None));
        Ok(addr)
    }

    fn free(&self, ptr: DevicePtr) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Free)?;
        match s.mallocs.remove(&ptr) {
            Some((size, _)) => {
                s.used -= size;
                Ok(())
            }
            None => Err(Self::violation(&mut s, "free", ptr, "not a malloc'd pointer")),
        }
    }

    fn record_event(&self, stream: StreamId) -> Result<EventId> {
        let mut s = self.lock();
        self.enter(&mut s, Call::RecordEvent)?;
        let id = s.next_id;
        s.next_id += 1;
        let done = !s.hold_events;
        s.events.insert(id, Event { done, stream });
        Ok(EventId(id))
    }

    fn query_event(&self, event: EventId) -> Result<bool> {
        let mut s = self.lock();
        self.enter(&mut s, Call::QueryEvent)?;
        match s.events.get(&event.0) {
            Some(e) => Ok(e.done),
            None => Err(Self::violation(&mut s, "query_event", event.0, "unknown event")),
        }
    }

    fn release_event(&self, event: EventId) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::ReleaseEvent)?;
        match s.events.remove(&event.0) {
            Some(_) => Ok(()),
            None => Err(Self::violation(&mut s, "release_event", event.0, "unknown event")),
        }
    }

    fn synchronize_stream(&self, stream: StreamId) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::SynchronizeStream)?;
        s.synchronizations += 1;
        // Synchronizing waits for the stream's work, held or not.
        for e in s.events.values_mut().filter(|e| e.stream == stream) {
            e.done = true;
        }
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Synchronize)?;
        s.synchronizations += 1;
        for e in s.events.values_mut() {
            e.done = true;
        }
        Ok(())
    }

    fn write(&self, dst: DevicePtr, src: &[u8]) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Copy)?;
        self.with_bytes(&mut s, "write", dst, src.len(), |bytes, off| {
            bytes.copy_from_slice(&src[off..off + bytes.len()]);
        })
    }

    fn read(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Copy)?;
        let len = dst.len();
        self.with_bytes(&mut s, "read", src, len, |bytes, off| {
            dst[off..off + bytes.len()].copy_from_slice(bytes);
        })
    }

    fn can_access_peer(&self, peer: u32) -> bool {
        peer == self.ordinal || self.peers.contains(&peer)
    }
}
