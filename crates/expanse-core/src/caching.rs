//! The thread-safe allocator: one [`DeviceAllocator`] per device behind a
//! lock, and beside it one lane per stream with a part of its own.
//!
//! A lane holds its stream's part of the state while lent (`allocator/lanes.rs`):
//! a malloc on that stream that hits in its cached blocks, and a free of one
//! of its blocks, take the lane's lock only, so threads on different streams
//! run at once. Everything else (a miss, growth, lending across streams,
//! events, `empty_cache`, statistics, snapshots, every [`CachingAllocator::lock`])
//! takes the device's lock, then every lent lane's lock in part order, takes
//! the parts back, runs on the whole state as a single thread would, and
//! lends them again when done ([`Exclusive`]). Lock order: device, then
//! lanes by part, then the shared statistics; a lane's own request takes
//! only its lane (and then the shared statistics), never the device's lock.
//!
//! Decisions are the single-threaded ones: a lane runs the same code on
//! the same blocks and keys, and serves a request only where the whole
//! state would serve it from that part alone. Statistics: while one lane
//! is out it holds them; while several are, the current values and peaks
//! of the counters lanes change sit behind their own lock and each lane
//! request applies its recorded changes under it, its totals kept by the
//! lane (`lane_stats.rs`): current values and peaks are those of the
//! requests in the order they took that lock, totals are sums.

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use expanse_device::{Device, StreamId};

use crate::allocator::{bad_device, DeviceAllocator, LanePaths, OomObserver};
use crate::block::PARTS;
use crate::config::Config;
use crate::error::AllocError;
use crate::lane_stats::{LaneTotals, SharedCounters};
use crate::snapshot::Snapshot;
use crate::stats::DeviceStats;

/// Allocator ids, for [`FREE_HINT`].
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// `(allocator id, device, part)` of this thread's last malloc on a
    /// stream with a lane: a free tries that lane first (it holds the
    /// block when the thread frees what it allocated). A wrong guess costs
    /// one uncontended lock, never a different decision.
    static FREE_HINT: Cell<(u64, u32, usize)> = const { Cell::new((0, 0, 0)) };
}

/// A caching allocator over one or more devices; `Send + Sync`.
#[derive(Debug)]
pub struct CachingAllocator {
    devices: Vec<DeviceSlot>,
    id: u64,
}

/// One stream's part of a device's state, lent out.
#[derive(Debug, Default)]
struct Lane {
    /// The lent state (a lane `DeviceAllocator`), made at the first lending.
    alloc: Option<DeviceAllocator>,
    /// Whether the part is lent now.
    out: bool,
    /// What the lane may serve (as the whole state stood when lent).
    paths: LanePaths,
    /// Whether the lane holds the device's statistics (it is the only lane
    /// out); otherwise its own record one request's changes (all zero
    /// between requests), whose current values and peaks go to
    /// [`DeviceSlot::shared_stats`] and whose totals to `totals`.
    owns_stats: bool,
    /// Totals of the lane's requests while several lanes are out.
    totals: LaneTotals,
    /// Requests the lane served.
    served: u64,
}

/// Keeps each lane's lock on cache lines of its own.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Padded<T>(T);

/// The whole state of a device, and which parts are lent.
#[derive(Debug)]
struct Whole {
    alloc: DeviceAllocator,
    /// Lent parts (bit `p`: part `p`).
    out: u32,
}

const _: () = assert!(PARTS <= 32);

#[derive(Debug)]
struct DeviceSlot {
    /// (Padded: whole-state requests write its lock word, lane requests
    /// only read the fields below.)
    whole: Padded<Mutex<Whole>>,
    /// Lane `p` for part `p` (part 0, shared by streams past the first
    /// `PARTS - 1`, is never lent).
    lanes: Box<[Padded<Mutex<Lane>>]>,
    /// Stream of part `p`, for `p` in `1..=lane_count`: read without a lock
    /// to find a stream's lane; written (under the device's lock) only when
    /// a stream gets a part, never changed after.
    lane_streams: Padded<[AtomicU64; PARTS]>,
    lane_count: AtomicUsize,
    /// Current values and peaks of the counters lanes change, while more
    /// than one lane is out (the rest of the statistics wait in the whole
    /// state).
    shared_stats: Padded<Mutex<SharedCounters>>,
}

impl DeviceSlot {
    fn new(alloc: DeviceAllocator) -> Self {
        DeviceSlot {
            whole: Padded(Mutex::new(Whole { alloc, out: 0 })),
            lanes: (0..PARTS).map(|_| Padded::default()).collect(),
            lane_streams: Padded(std::array::from_fn(|_| AtomicU64::new(0))),
            lane_count: AtomicUsize::new(0),
            shared_stats: Padded::default(),
        }
    }

    /// The part (and lane) of `stream`, if it has one.
    #[inline]
    fn lane_of(&self, stream: StreamId) -> Option<usize> {
        let n = self.lane_count.load(Ordering::Acquire);
        (1..=n).find(|&p| self.lane_streams.0[p].load(Ordering::Relaxed) == stream.0)
    }

    /// Run `f` on lane `part` if it is out and allows it: `None` when the
    /// whole state must serve the request instead.
    #[inline]
    fn on_lane<T>(
        &self,
        device: u32,
        part: usize,
        allowed: impl FnOnce(&LanePaths) -> bool,
        f: impl FnOnce(&mut DeviceAllocator) -> Option<Result<T, Box<AllocError>>>,
    ) -> Option<Result<T, Box<AllocError>>> {
        let Some(mut guard) = lock_briefly(&self.lanes[part].0) else {
            return Some(Err(Box::new(AllocError::Poisoned { device })));
        };
        let lane = &mut *guard;
        if !lane.out || !allowed(&lane.paths) {
            return None;
        }
        let a = lane.alloc.as_mut().expect("a lent lane holds its state");
        let r = f(a)?;
        lane.served += 1;
        if !lane.owns_stats {
            let changes = lane.totals.record(a.stats_mut());
            let Some(mut shared) = lock_briefly(&self.shared_stats.0) else {
                return Some(Err(Box::new(AllocError::Poisoned { device })));
            };
            shared.apply(&changes);
        }
        Some(r)
    }

    /// Malloc on the whole state (a miss in the lane, or no lane).
    #[cold]
    #[inline(never)]
    fn malloc_whole(&self, device: u32, size: u64, stream: StreamId) -> Result<u64, AllocError> {
        self.exclusive(device, Some(stream))?.malloc(size, stream)
    }

    /// Free `ptr`, not in lane `tried`: another stream's block (allocated
    /// by another thread, or lent to this thread's stream) is freed by its
    /// owner's lane, anything else by the whole state.
    #[cold]
    #[inline(never)]
    fn free_elsewhere(&self, device: u32, ptr: u64, tried: usize) -> Result<(), AllocError> {
        for p in (1..=self.lane_count.load(Ordering::Acquire)).filter(|&p| p != tried) {
            if let Some(r) = self.on_lane(device, p, |p| p.free, |a| a.free_cached(ptr).then_some(Ok(()))) {
                return r.map_err(|e| *e);
            }
        }
        self.exclusive(device, None)?.free(ptr)
    }

    /// The whole state, every lent part taken back: see [`Exclusive`].
    /// `want`: a stream whose part to lend when done, besides those lent now.
    fn exclusive(&self, device: u32, want: Option<StreamId>) -> Result<Exclusive<'_>, AllocError> {
        let poisoned = AllocError::Poisoned { device };
        let mut whole = self.whole.0.lock().map_err(|_| poisoned.clone())?;
        let mut lanes: [Option<MutexGuard<'_, Lane>>; PARTS] = std::array::from_fn(|_| None);
        let out = whole.out;
        for p in bits(out) {
            lanes[p] = Some(lock_briefly(&self.lanes[p].0).ok_or_else(|| poisoned.clone())?);
        }
        let shared = if out.count_ones() > 1 { Some(self.shared_stats.0.lock().map_err(|_| poisoned)?) } else { None };
        // Nothing has changed yet: from here on, nothing fails.
        let w = &mut *whole;
        if let Some(s) = &shared {
            s.write_to(w.alloc.stats_mut());
        }
        drop(shared);
        for p in bits(out) {
            let lane = lanes[p].as_deref_mut().expect("locked above");
            let la = lane.alloc.as_mut().expect("a lent lane holds its state");
            w.alloc.take_back_part(p, la);
            if lane.owns_stats {
                std::mem::swap(w.alloc.stats_mut(), la.stats_mut());
            } else {
                lane.totals.add_to(w.alloc.stats_mut());
            }
            lane.out = false;
            lane.owns_stats = false;
        }
        w.out = 0;
        Ok(Exclusive { slot: self, whole, lanes, was_out: out, want })
    }
}

impl Drop for DeviceSlot {
    /// Take every lent part back, so that the whole state tears down all of
    /// it. A poisoned lock leaves things where they are.
    fn drop(&mut self) {
        let Ok(whole) = self.whole.0.get_mut() else { return };
        let out = whole.out;
        if out.count_ones() > 1 {
            if let Ok(s) = self.shared_stats.0.get_mut() {
                s.write_to(whole.alloc.stats_mut());
            }
        }
        for p in bits(out) {
            let Ok(lane) = self.lanes[p].0.get_mut() else { continue };
            let Some(la) = lane.alloc.as_mut() else { continue };
            whole.alloc.take_back_part(p, la);
            if lane.owns_stats {
                std::mem::swap(whole.alloc.stats_mut(), la.stats_mut());
            } else {
                lane.totals.add_to(whole.alloc.stats_mut());
            }
        }
        whole.out = 0;
    }
}

/// Lock `m`, held only for a few dozen instructions by anyone: spin a
/// little before sleeping (a sleeping waiter makes every unlock a system
/// call). `None`: poisoned.
#[inline]
fn lock_briefly<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    if let Ok(g) = m.try_lock() {
        return Some(g);
    }
    lock_contended(m)
}

#[cold]
#[inline(never)]
fn lock_contended<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    for _ in 0..64 {
        match m.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(_)) => return None,
            Err(TryLockError::WouldBlock) => std::hint::spin_loop(),
        }
    }
    m.lock().ok()
}

/// The set bits of `m`, lowest first.
fn bits(mut m: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let p = m.trailing_zeros() as usize;
            m &= m - 1;
            p
        })
    })
}

/// The whole state of one device, held alone: the device's lock and every
/// lent lane's, their parts taken back. Dereferences to the
/// [`DeviceAllocator`]. When dropped, the parts lent before (and the
/// requesting stream's, if it has one now) are lent again, with what the
/// state now allows them to serve.
pub struct Exclusive<'a> {
    slot: &'a DeviceSlot,
    whole: MutexGuard<'a, Whole>,
    lanes: [Option<MutexGuard<'a, Lane>>; PARTS],
    was_out: u32,
    want: Option<StreamId>,
}

impl std::fmt::Debug for Exclusive<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exclusive").field("alloc", &self.whole.alloc).field("was_out", &self.was_out).finish()
    }
}

impl Deref for Exclusive<'_> {
    type Target = DeviceAllocator;

    fn deref(&self) -> &DeviceAllocator {
        &self.whole.alloc
    }
}

impl DerefMut for Exclusive<'_> {
    fn deref_mut(&mut self) -> &mut DeviceAllocator {
        &mut self.whole.alloc
    }
}

impl Drop for Exclusive<'_> {
    fn drop(&mut self) {
        // A panic may have left the state half-done: keep it whole (the
        // device's lock is poisoned, and so is every lane's held here).
        if std::thread::panicking() {
            return;
        }
        let slot = self.slot;
        let w = &mut *self.whole;
        // Publish the streams that got a part meanwhile.
        let streams = w.alloc.part_streams();
        let known = slot.lane_count.load(Ordering::Relaxed);
        for (i, s) in streams.iter().enumerate().skip(known) {
            slot.lane_streams.0[i + 1].store(s.0, Ordering::Relaxed);
        }
        slot.lane_count.store(streams.len(), Ordering::Release);

        let paths = w.alloc.lane_paths();
        let mut lend = self.was_out;
        if let Some(p) = self.want.and_then(|s| w.alloc.part_of_stream(s)) {
            lend |= 1 << p;
        }
        if !paths.malloc && !paths.free {
            lend = 0;
        }
        for p in bits(lend) {
            if self.lanes[p].is_none() {
                // A lane request may hold it for a moment; it never waits
                // for the device's lock, so this wait ends.
                match lock_briefly(&slot.lanes[p].0) {
                    Some(g) => self.lanes[p] = Some(g),
                    None => lend &= !(1 << p),
                }
            }
        }
        let mut shared = None;
        if lend.count_ones() > 1 {
            match slot.shared_stats.0.lock() {
                Ok(s) => shared = Some(s),
                Err(_) => lend = 0,
            }
        }
        if let Some(s) = shared.as_deref_mut() {
            *s = SharedCounters::of(w.alloc.stats_mut());
        }
        drop(shared);
        for p in bits(lend) {
            let lane = self.lanes[p].as_deref_mut().expect("locked above");
            let la = lane.alloc.get_or_insert_with(|| w.alloc.new_lane());
            w.alloc.lend_part(p, la);
            lane.out = true;
            lane.paths = paths;
            lane.owns_stats = lend.count_ones() == 1;
            if lane.owns_stats {
                std::mem::swap(w.alloc.stats_mut(), la.stats_mut());
            }
        }
        w.out = lend;
    }
}

impl CachingAllocator {
    /// One allocator state per device, all with `config`.
    pub fn new(devices: Vec<Arc<dyn Device>>, config: Config) -> Self {
        CachingAllocator {
            devices: devices.into_iter().map(|d| DeviceSlot::new(DeviceAllocator::new(d, config.clone()))).collect(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Number of devices.
    pub fn device_count(&self) -> usize {
        self.devices.len()
    }

    fn slot(&self, device: u32) -> Result<&DeviceSlot, AllocError> {
        self.devices.get(device as usize).ok_or_else(|| bad_device(device, self.devices.len()))
    }

    /// The whole allocator state of `device`, held alone until the guard
    /// is dropped.
    pub fn lock(&self, device: u32) -> Result<Exclusive<'_>, AllocError> {
        // A panic while holding the lock may have left the state half-done
        // (a block out of every set, a stat not updated): never serve it
        // again. Every later caller gets the error.
        self.slot(device)?.exclusive(device, None)
    }

    /// Allocate `size` bytes on `device` for `stream`.
    pub fn malloc(&self, device: u32, size: u64, stream: StreamId) -> Result<u64, AllocError> {
        let slot = self.slot(device)?;
        if let Some(part) = slot.lane_of(stream) {
            FREE_HINT.set((self.id, device, part));
            if let Some(r) = slot.on_lane(device, part, |p| p.malloc, |a| a.malloc_cached(size, stream)) {
                return r.map_err(|e| *e);
            }
        }
        slot.malloc_whole(device, size, stream)
    }

    /// Free `ptr` (allocated on `device`).
    pub fn free(&self, device: u32, ptr: u64) -> Result<(), AllocError> {
        let slot = self.slot(device)?;
        let (id, d, hint) = FREE_HINT.get();
        let hint = if id == self.id && d == device { hint } else { 0 };
        if hint != 0 {
            if let Some(r) = slot.on_lane(device, hint, |p| p.free, |a| a.free_cached(ptr).then_some(Ok(()))) {
                return r.map_err(|e| *e);
            }
        }
        slot.free_elsewhere(device, ptr, hint)
    }

    /// Requests served by `device`'s lanes so far, without the device's
    /// lock (a figure for tests and benchmarks).
    pub fn lane_requests(&self, device: u32) -> Result<u64, AllocError> {
        let slot = self.slot(device)?;
        let mut n = 0;
        for lane in slot.lanes.iter() {
            n += lane.0.lock().map_err(|_| AllocError::Poisoned { device })?.served;
        }
        Ok(n)
    }

    /// Free `ptr` without knowing its device: the device that owns it.
    pub fn free_any(&self, ptr: u64) -> Result<(), AllocError> {
        for i in 0..self.devices.len() {
            let mut a = self.lock(i as u32)?;
            if a.allocation_size(ptr).is_some() {
                return a.free(ptr);
            }
        }
        Err(AllocError::Misuse {
            message: format!("free of unknown pointer {ptr:#x}: not allocated by this allocator, or already freed"),
        })
    }

    /// Which device owns the allocation at `ptr`.
    pub fn device_of(&self, ptr: u64) -> Option<u32> {
        (0..self.devices.len() as u32).find(|&i| self.lock(i).is_ok_and(|a| a.allocation_size(ptr).is_some()))
    }

    /// `record_stream` for `ptr` on whichever device owns it.
    pub fn record_stream(&self, ptr: u64, stream: StreamId) -> Result<(), AllocError> {
        for i in 0..self.devices.len() {
            let mut a = self.lock(i as u32)?;
            if a.allocation_size(ptr).is_some() {
                return a.record_stream(ptr, stream);
            }
        }
        Err(AllocError::Misuse { message: format!("record_stream on unknown pointer {ptr:#x}") })
    }

    /// `empty_cache` on every device.
    pub fn empty_cache(&self) -> Result<(), AllocError> {
        for i in 0..self.devices.len() {
            self.lock(i as u32)?.empty_cache()?;
        }
        Ok(())
    }

    /// A copy of `device`'s statistics.
    pub fn stats(&self, device: u32) -> Result<DeviceStats, AllocError> {
        Ok(self.lock(device)?.stats().clone())
    }

    /// Reset peak statistics of `device`.
    pub fn reset_peak_stats(&self, device: u32) -> Result<(), AllocError> {
        self.lock(device)?.reset_peak_stats();
        Ok(())
    }

    /// Limit `device` to `fraction` of its memory.
    pub fn set_memory_fraction(&self, device: u32, fraction: f64) -> Result<(), AllocError> {
        if !(0.0..=1.0).contains(&fraction) {
            return Err(AllocError::Misuse { message: format!("memory fraction {fraction} is not between 0 and 1") });
        }
        self.lock(device)?.set_memory_fraction(fraction);
        Ok(())
    }

    /// Let `device` access `peer`'s memory... in the allocator's terms: give
    /// device `accessor` access to every page of device `owner`.
    pub fn enable_peer_access(&self, accessor: u32, owner: u32) -> Result<(), AllocError> {
        if accessor as usize >= self.devices.len() {
            return Err(bad_device(accessor, self.devices.len()));
        }
        self.lock(owner)?.add_peer(accessor)
    }

    /// Record the allocation history of every device (at most
    /// `max_entries` entries each), or stop and forget it (`None`).
    pub fn record_history(&self, max_entries: Option<usize>) -> Result<(), AllocError> {
        for i in 0..self.devices.len() {
            self.lock(i as u32)?.record_history(max_entries);
        }
        Ok(())
    }

    /// A snapshot of every device: segments, blocks and history.
    pub fn snapshot(&self) -> Result<Snapshot, AllocError> {
        let mut parts = Vec::with_capacity(self.devices.len());
        for i in 0..self.devices.len() {
            parts.push(self.lock(i as u32)?.snapshot());
        }
        Ok(Snapshot::from_devices(parts))
    }

    /// Add an out-of-memory observer to every device.
    pub fn add_oom_observer(&self, observer: OomObserver) {
        for i in 0..self.devices.len() {
            if let Ok(mut a) = self.lock(i as u32) {
                a.add_oom_observer(Arc::clone(&observer));
            }
        }
    }
}
