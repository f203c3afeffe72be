//! A strict mock device.
//!
//! It simulates a device's address space with plain integers (no memory is
//! touched unless a test writes through it), and it *asserts the device
//! contract* with the same [`Ledger`] the real backends use: every
//! reserve/map/unmap/set_access must be aligned and inside a reservation, no
//! address may be mapped twice, only mapped ranges may be unmapped, pages are
//! released only when unmapped, nothing may be left at drop. A broken
//! contract is returned as [`DeviceError::Misuse`] *and* recorded;
//! [`MockDevice::violations`] lists them so tests can assert that the
//! allocator never misused the device.
//!
//! Streams are opaque ids: any id is accepted unless the device was built
//! [`with_strict_streams`](MockDevice::with_strict_streams), which refuses
//! every stream but the default one and those made by `create_stream`.
//!
//! Tests can make the N-th call of any kind fail ([`MockDevice::fail_nth`]),
//! hold recorded events pending until released ([`MockDevice::hold_events`])
//! to test stream-ordered reuse, and read call counts.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod call;

use std::collections::HashMap;
use std::sync::Mutex;

pub use call::Call;
use expanse_device::{Device, DeviceError, DevicePtr, EventId, Ledger, PageHandle, Result, StreamId, VaHeap};

/// Where the mock's address space starts (non-zero so that 0 is never valid).
const BASE_ADDR: u64 = 1 << 40;

#[derive(Debug)]
struct Event {
    done: bool,
    stream: StreamId,
    /// The length of the ordering log when it was recorded: it covers the
    /// work its stream queued before that point.
    recorded_at: usize,
}

#[derive(Debug, Default)]
struct State {
    next_addr: u64,
    next_id: u64,
    /// The contract's bookkeeping (shared with the real backends).
    ledger: Ledger,
    /// Contents of pages (by handle) and mallocs (by pointer), made on
    /// first access.
    data: HashMap<u64, Vec<u8>>,
    /// Devices with access, per mapping base.
    access: HashMap<u64, Vec<u32>>,
    used: u64,
    /// Bytes of address space reserved.
    reserved: u64,
    events: HashMap<u64, Event>,
    hold_events: bool,
    calls: HashMap<Call, u64>,
    failures: HashMap<Call, (u64, DeviceError)>,
    violations: Vec<String>,
    synchronizations: u64,
    /// Every wait and synchronization, in order.
    ordering: Vec<Ordering>,
    /// Where `malloc` places, when asked to place as the CUDA driver does:
    /// the arena's base and the heap over it.
    classic: Option<(u64, VaHeap)>,
}

/// Offset of the CUDA-placement arena from a device's first address: far
/// above any reservation the mock hands out.
const CLASSIC_ARENA_OFFSET: u64 = 1 << 43;
/// Its size: 2 TiB of addresses.
const CLASSIC_ARENA_SPAN: u64 = 1 << 41;

/// The next address range of `size` bytes, with a one-page gap after it
/// so that neighbouring ranges are never adjacent.
fn bump(next_addr: &mut u64, granularity: u64, size: u64) -> u64 {
    let addr = *next_addr;
    *next_addr += size.div_ceil(granularity).max(1) * granularity + granularity;
    addr
}

/// A stream-ordering call, in the order the device saw them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ordering {
    /// `waiter` waits for an event recorded on `on`.
    Wait {
        /// The waiting stream.
        waiter: StreamId,
        /// The stream the event was recorded on.
        on: StreamId,
        /// The length of this log when the event was recorded.
        recorded_at: usize,
    },
    /// A query found complete an event recorded on `on` when this log was
    /// `recorded_at` long: `on`'s work queued before that is done.
    Completed {
        /// The stream the event was recorded on.
        on: StreamId,
        /// The length of this log when the event was recorded.
        recorded_at: usize,
    },
    /// The host waited for this stream.
    SyncStream(StreamId),
    /// The host waited for the whole device.
    SyncAll,
}

/// A simulated device that checks every call against the device contract.
#[derive(Debug)]
pub struct MockDevice {
    ordinal: u32,
    capacity: u64,
    granularity: u64,
    virtual_memory: bool,
    peers: Vec<u32>,
    /// Address space all reservations together may take.
    address_space: u64,
    state: Mutex<State>,
    check_leaks_at_drop: bool,
    strict_streams: bool,
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
            address_space: u64::MAX,
            state: Mutex::new(State {
                next_addr: BASE_ADDR,
                next_id: 1,
                ledger: Ledger::new(granularity),
                ..State::default()
            }),
            check_leaks_at_drop: true,
            strict_streams: false,
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

    /// Limit the address space all reservations together may take to
    /// `bytes` (default: unlimited); a reserve past it fails as out of
    /// memory, as on a real device.
    pub fn with_address_space(mut self, bytes: u64) -> Self {
        self.address_space = bytes;
        self
    }

    /// Place `malloc`s as the CUDA driver places `cuMemAlloc`s in a
    /// PyTorch process ([`VaHeap::as_in_pytorch`]): adjacent ranges, chunks top-down, first fit by
    /// address; so that PyTorch's native allocator, which breaks ties
    /// between free blocks by address, decides as on a GPU. By default each
    /// `malloc` gets a fresh range with a gap after it.
    pub fn with_cuda_placement(self) -> Self {
        {
            let mut s = self.lock();
            let base = s.next_addr + CLASSIC_ARENA_OFFSET;
            s.classic = Some((base, VaHeap::as_in_pytorch(CLASSIC_ARENA_SPAN)));
        }
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

    /// Refuse (as misuse) every stream but the default one and those made
    /// by `create_stream`, as the CUDA backend does.
    pub fn with_strict_streams(mut self) -> Self {
        self.strict_streams = true;
        self
    }

    /// Number of live streams made by `create_stream`.
    pub fn live_streams(&self) -> usize {
        self.lock().ledger.stream_count()
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

    /// Number of events recorded and not yet released (a leak at teardown).
    pub fn live_events(&self) -> usize {
        self.lock().events.len()
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
        self.lock().ledger.mapped_bytes()
    }

    /// Number of live physical pages.
    pub fn live_pages(&self) -> usize {
        self.lock().ledger.page_count()
    }

    /// Access list of the mapping that contains `addr`, if mapped.
    pub fn access_at(&self, addr: u64) -> Option<Vec<u32>> {
        let s = self.lock();
        let (base, _, _) = s.ledger.mapping_at(addr)?;
        Some(s.access.get(&base).cloned().unwrap_or_default())
    }

    /// Every `wait_event` so far: (waiting stream, stream the event was
    /// recorded on).
    pub fn waits(&self) -> Vec<(StreamId, StreamId)> {
        let s = self.lock();
        s.ordering
            .iter()
            .filter_map(|o| match o {
                Ordering::Wait { waiter, on, .. } => Some((*waiter, *on)),
                _ => None,
            })
            .collect()
    }

    /// Every wait and synchronization so far, in order.
    pub fn ordering(&self) -> Vec<Ordering> {
        self.lock().ordering.clone()
    }

    /// Number of stream / device synchronizations.
    pub fn synchronizations(&self) -> u64 {
        self.lock().synchronizations
    }

    /// What is still allocated: a list of human-readable leak reports.
    pub fn leaks(&self) -> Vec<String> {
        let live = self.lock().ledger.live();
        let mut out = Vec::new();
        out.extend(live.reservations.iter().map(|(b, sz)| format!("reservation {b:#x} ({sz} bytes)")));
        out.extend(live.pages.iter().map(|(h, sz)| format!("page {h} ({sz} bytes)")));
        out.extend(live.mallocs.iter().map(|(p, sz)| format!("malloc {p:#x} ({sz} bytes)")));
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

    /// Record a contract violation (and pass the error on).
    fn note<T>(s: &mut State, r: Result<T>) -> Result<T> {
        if let Err(DeviceError::Misuse(m)) = &r {
            s.violations.push(m.to_string());
        }
        r
    }

    /// Refuse unknown streams when strict (and record the violation).
    fn check_stream(&self, s: &mut State, call: &'static str, stream: StreamId) -> Result<()> {
        if !self.strict_streams {
            return Ok(());
        }
        let r = s.ledger.check_stream(call, stream);
        Self::note(s, r)
    }

    /// Run `f` on the bytes at `addr..addr+len` (mapped page or malloc),
    /// one contiguous piece at a time.
    fn with_bytes(
        &self,
        s: &mut State,
        call: &'static str,
        addr: u64,
        len: usize,
        mut f: impl FnMut(&mut [u8], usize),
    ) -> Result<()> {
        let (ledger, data) = (&s.ledger, &mut s.data);
        let r = ledger.access(call, addr, len as u64, || {
            let (mut at, mut done) = (addr, 0usize);
            while done < len {
                let (base, key, size) = match ledger.mapping_at(at) {
                    Some((base, handle, size)) => (base, handle, size),
                    None => {
                        let (p, size) = ledger.malloc_at(at).expect("checked accessible");
                        (p, p, size)
                    }
                };
                let off = at - base;
                let n = ((len - done) as u64).min(size - off);
                let bytes = data.entry(key).or_insert_with(|| vec![0; size as usize]);
                f(&mut bytes[off as usize..(off + n) as usize], done);
                done += n as usize;
                at += n;
            }
            Ok(())
        });
        Self::note(s, r)
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

    fn address_space(&self) -> u64 {
        self.address_space
    }

    fn reserve(&self, size: u64) -> Result<DevicePtr> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Reserve)?;
        if !self.virtual_memory {
            return Err(DeviceError::Unsupported { what: "virtual memory".into() });
        }
        let st = &mut *s;
        let r = st.ledger.reserve(size, |size| {
            if size > 1 << 52 || st.reserved.saturating_add(size) > self.address_space {
                return Err(DeviceError::OutOfMemory { call: "reserve", requested: size });
            }
            st.reserved += size;
            Ok(bump(&mut st.next_addr, self.granularity, size))
        });
        Self::note(st, r)
    }

    fn release_reservation(&self, base: DevicePtr, size: u64) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::ReleaseReservation)?;
        let st = &mut *s;
        let r = st.ledger.release_reservation(base, size, || {
            st.reserved -= size;
            Ok(())
        });
        Self::note(st, r)
    }

    fn create_page(&self, size: u64) -> Result<PageHandle> {
        let mut s = self.lock();
        self.enter(&mut s, Call::CreatePage)?;
        if !self.virtual_memory {
            return Err(DeviceError::Unsupported { what: "virtual memory".into() });
        }
        let st = &mut *s;
        let r = st.ledger.create_page(size, |size| {
            if st.used.saturating_add(size) > self.capacity {
                return Err(DeviceError::OutOfMemory { call: "create_page", requested: size });
            }
            st.used += size;
            st.next_id += 1;
            Ok(st.next_id - 1)
        });
        Self::note(st, r)
    }

    fn release_page(&self, page: PageHandle) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::ReleasePage)?;
        let st = &mut *s;
        let r = st.ledger.release_page(page, |size| {
            st.data.remove(&page.0);
            st.used -= size;
            Ok(())
        });
        Self::note(st, r).map(|_| ())
    }

    fn map(&self, addr: DevicePtr, page: PageHandle) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Map)?;
        let st = &mut *s;
        let r = st.ledger.map(addr, page, |_| {
            st.access.insert(addr, Vec::new());
            Ok(())
        });
        Self::note(st, r)
    }

    fn unmap(&self, addr: DevicePtr, size: u64) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Unmap)?;
        let st = &mut *s;
        let r = st.ledger.unmap(addr, size, |bases| {
            for b in bases {
                st.access.remove(b);
            }
            Ok(())
        });
        Self::note(st, r)
    }

    fn set_access(&self, addr: DevicePtr, size: u64, devices: &[u32]) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::SetAccess)?;
        if let Some(d) = devices.iter().find(|d| **d != self.ordinal && !self.peers.contains(d)) {
            return Self::note(&mut s, Err(DeviceError::misuse("set_access", u64::from(*d), "device is not a peer")));
        }
        let st = &mut *s;
        let r = st.ledger.set_access(addr, size, devices.contains(&self.ordinal), |bases| {
            for b in bases {
                let list = st.access.entry(*b).or_default();
                for d in devices {
                    if !list.contains(d) {
                        list.push(*d);
                    }
                }
            }
            Ok(())
        });
        Self::note(st, r)
    }

    fn malloc(&self, size: u64) -> Result<DevicePtr> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Malloc)?;
        let st = &mut *s;
        let r = st.ledger.malloc(size, |size| {
            if st.used.saturating_add(size) > self.capacity {
                return Err(DeviceError::OutOfMemory { call: "malloc", requested: size });
            }
            let whole = size.div_ceil(self.granularity).max(1) * self.granularity;
            let addr = match st.classic.as_mut().and_then(|(base, heap)| Some(*base + heap.alloc(whole)?)) {
                Some(addr) => addr,
                None => bump(&mut st.next_addr, self.granularity, size),
            };
            st.used += size;
            Ok(addr)
        });
        Self::note(st, r)
    }

    fn free(&self, ptr: DevicePtr) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::Free)?;
        let st = &mut *s;
        let granularity = self.granularity;
        let classic = &mut st.classic;
        let r = st.ledger.free(ptr, |size| {
            if let Some((base, heap)) =
                classic.as_mut().filter(|(base, _)| (*base..*base + CLASSIC_ARENA_SPAN).contains(&ptr))
            {
                heap.free(ptr - *base, size.div_ceil(granularity).max(1) * granularity);
            }
            st.data.remove(&ptr);
            st.used -= size;
            Ok(())
        });
        Self::note(st, r).map(|_| ())
    }

    fn create_stream(&self) -> Result<StreamId> {
        let mut s = self.lock();
        self.enter(&mut s, Call::CreateStream)?;
        let st = &mut *s;
        let r = st.ledger.create_stream(|| {
            st.next_id += 1;
            Ok(st.next_id - 1)
        });
        Self::note(st, r)
    }

    fn destroy_stream(&self, stream: StreamId) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::DestroyStream)?;
        let r = s.ledger.destroy_stream(stream, || Ok(()));
        Self::note(&mut s, r)
    }

    fn record_event(&self, stream: StreamId) -> Result<EventId> {
        let mut s = self.lock();
        self.enter(&mut s, Call::RecordEvent)?;
        self.check_stream(&mut s, "record_event", stream)?;
        let id = s.next_id;
        s.next_id += 1;
        let done = !s.hold_events;
        let recorded_at = s.ordering.len();
        s.events.insert(id, Event { done, stream, recorded_at });
        Ok(EventId(id))
    }

    fn query_event(&self, event: EventId) -> Result<bool> {
        let mut s = self.lock();
        self.enter(&mut s, Call::QueryEvent)?;
        match s.events.get(&event.0).map(|e| (e.done, e.stream, e.recorded_at)) {
            Some((done, on, recorded_at)) => {
                if done {
                    s.ordering.push(Ordering::Completed { on, recorded_at });
                }
                Ok(done)
            }
            None => Self::note(&mut s, Err(DeviceError::misuse("query_event", event.0, "unknown event"))),
        }
    }

    fn release_event(&self, event: EventId) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::ReleaseEvent)?;
        match s.events.remove(&event.0) {
            Some(_) => Ok(()),
            None => Self::note(&mut s, Err(DeviceError::misuse("release_event", event.0, "unknown event"))),
        }
    }

    fn wait_event(&self, stream: StreamId, event: EventId) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::WaitEvent)?;
        self.check_stream(&mut s, "wait_event", stream)?;
        let Some((recorded_on, recorded_at)) = s.events.get(&event.0).map(|e| (e.stream, e.recorded_at)) else {
            return Self::note(&mut s, Err(DeviceError::misuse("wait_event", event.0, "unknown event")));
        };
        s.ordering.push(Ordering::Wait { waiter: stream, on: recorded_on, recorded_at });
        Ok(())
    }

    fn synchronize_stream(&self, stream: StreamId) -> Result<()> {
        let mut s = self.lock();
        self.enter(&mut s, Call::SynchronizeStream)?;
        self.check_stream(&mut s, "synchronize_stream", stream)?;
        s.synchronizations += 1;
        s.ordering.push(Ordering::SyncStream(stream));
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
        s.ordering.push(Ordering::SyncAll);
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
