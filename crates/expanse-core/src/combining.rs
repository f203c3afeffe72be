//! Combining: a thread that finds its device's allocator locked posts its
//! `malloc` or `free` in a slot and waits there; whichever thread holds
//! the lock for a `malloc` or `free` serves every posted request before it
//! unlocks (flat combining).
//!
//! Why: the allocator state of a device is one value behind one mutex.
//! When threads take turns on it, its cache lines move to another core at
//! every operation, and a waiter parked in the kernel costs a system call
//! to wake; on the H200's host eight threads on eight streams got 0.13x of
//! one thread's throughput that way. A combiner runs the posted requests
//! back to back on state that stays in its cache, and a waiter spins on a
//! cache line of its own, not on the lock.
//!
//! Decisions do not change: every request still runs alone on the whole
//! state, under the mutex, one after another; one thread alone never
//! posts (its `try_lock` succeeds), so single-threaded runs are the same
//! sequence of operations as before. What changes under contention is
//! which thread runs a request, never what it decides: the order among
//! requests that overlap in time was never defined.
//!
//! Out-of-memory observers are still told by the thread whose `malloc`
//! failed, after the lock is released: the combiner hands the failure's
//! notices back in the slot with the error.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use expanse_device::StreamId;

use crate::allocator::{DeviceAllocator, OomNotices};
use crate::error::AllocError;

/// Slots per device: requests that can wait at once. A thread that finds
/// every slot taken waits on the mutex instead, as without combining.
const SLOTS: usize = 32;

/// Spins on its own slot before a waiter tries the lock itself, and
/// before it yields its core.
const SPINS: u32 = 64;

/// A slot's states.
const FREE: u32 = 0;
/// Taken by a thread that is writing its request.
const CLAIMED: u32 = 1;
/// Request written, waiting for a combiner.
const POSTED: u32 = 2;
/// Being run by a combiner; the owner may no longer withdraw it.
const RUNNING: u32 = 3;
/// Result written; the owner reads it and frees the slot.
const DONE: u32 = 4;

/// What a request asks.
const OP_MALLOC: u32 = 0;
const OP_FREE: u32 = 1;

/// A request of one waiting thread, on a cache line of its own.
#[repr(align(128))]
#[derive(Default)]
struct Slot {
    state: AtomicU32,
    op: AtomicU32,
    /// The size of a malloc, the address of a free.
    arg: AtomicU64,
    /// The stream of a malloc.
    stream: AtomicU64,
    /// The address a malloc returned.
    value: AtomicU64,
    /// The request's error, and a failed malloc's out-of-memory notices.
    /// Taken only by a combiner that met an error and by the owner after
    /// `DONE`: never contended.
    error: Mutex<Option<(AllocError, Option<OomNotices>)>>,
}

/// One device's allocator, behind its mutex, with the slots of the
/// threads waiting for it.
#[derive(Debug)]
pub(crate) struct Combining {
    state: Mutex<DeviceAllocator>,
    slots: Box<[Slot]>,
    /// Requests posted and not yet taken by a combiner.
    posted: AtomicUsize,
    /// The device's index, for errors.
    index: u32,
    /// Requests a combiner ran for another thread (tests check it happens).
    #[cfg(feature = "testing")]
    combined: AtomicU64,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot").field("state", &self.state.load(Ordering::Relaxed)).finish()
    }
}

/// A request, as its owner states it.
#[derive(Clone, Copy)]
enum Request {
    Malloc { size: u64, stream: StreamId },
    Free { ptr: u64 },
}

/// A request's answer: an address (malloc) or nothing (free).
type Answer = Result<u64, (AllocError, Option<OomNotices>)>;

impl Combining {
    pub(crate) fn new(a: DeviceAllocator, index: u32) -> Self {
        let slots = (0..SLOTS).map(|_| Slot::default()).collect();
        Combining {
            state: Mutex::new(a),
            slots,
            posted: AtomicUsize::new(0),
            index,
            #[cfg(feature = "testing")]
            combined: AtomicU64::new(0),
        }
    }

    /// Requests posted and not yet taken (slots in that state), and
    /// requests run by a combiner for another thread so far.
    #[cfg(feature = "testing")]
    pub(crate) fn counts(&self) -> (usize, u64) {
        let posted = self.slots.iter().filter(|s| s.state.load(Ordering::Acquire) == POSTED).count();
        (posted, self.combined.load(Ordering::Acquire))
    }

    /// The mutex, for every call other than `malloc` and `free`.
    pub(crate) fn mutex(&self) -> &Mutex<DeviceAllocator> {
        &self.state
    }

    /// `malloc` on this device. After a failure the out-of-memory
    /// observers are told once no lock is held.
    #[inline]
    pub(crate) fn malloc(&self, size: u64, stream: StreamId) -> Result<u64, AllocError> {
        // The uncontended path: the lock, the request, one load.
        if let Ok(mut a) = self.state.try_lock() {
            return match a.malloc_inline(size, stream) {
                Ok(p) => {
                    if self.posted.load(Ordering::Relaxed) != 0 {
                        self.serve(&mut a, None);
                    }
                    Ok(p)
                }
                Err(e) => self.failed_locked(a, e),
            };
        }
        self.contended(Request::Malloc { size, stream }).map_err(told)
    }

    /// A malloc failed with the lock held: take its notices (they are this
    /// thread's), serve the waiting requests, unlock, tell the observers.
    #[cold]
    #[inline(never)]
    fn failed_locked(&self, mut a: MutexGuard<'_, DeviceAllocator>, e: AllocError) -> Result<u64, AllocError> {
        let failure = with_notices(&mut a, e);
        self.serve(&mut a, None);
        drop(a);
        Err(told(failure))
    }

    /// A free failed with the lock held: serve the waiting requests,
    /// unlock, return the error.
    #[cold]
    #[inline(never)]
    fn free_failed_locked(&self, mut a: MutexGuard<'_, DeviceAllocator>, e: AllocError) -> Result<(), AllocError> {
        self.serve(&mut a, None);
        drop(a);
        Err(e)
    }

    /// `free` on this device.
    #[inline]
    pub(crate) fn free(&self, ptr: u64) -> Result<(), AllocError> {
        if let Ok(mut a) = self.state.try_lock() {
            // The error, a large value, is moved only on its own path.
            return match a.free(ptr) {
                Ok(()) => {
                    if self.posted.load(Ordering::Relaxed) != 0 {
                        self.serve(&mut a, None);
                    }
                    Ok(())
                }
                Err(e) => self.free_failed_locked(a, e),
            };
        }
        self.contended(Request::Free { ptr }).map(|_| ()).map_err(|(e, _)| e)
    }

    /// The lock was taken (or poisoned): post the request and wait, or
    /// wait on the mutex when every slot is in use.
    #[cold]
    #[inline(never)]
    fn contended(&self, r: Request) -> Answer {
        let device = self.index;
        match self.state.try_lock() {
            Ok(mut a) => {
                let answer = execute(&mut a, r);
                self.serve(&mut a, None);
                answer
            }
            Err(TryLockError::Poisoned(_)) => Err((AllocError::Poisoned { device }, None)),
            Err(TryLockError::WouldBlock) => match self.claim() {
                Some(slot) => self.wait(slot, r),
                None => {
                    let mut a = self.state.lock().map_err(|_| (AllocError::Poisoned { device }, None))?;
                    let answer = execute(&mut a, r);
                    self.serve(&mut a, None);
                    answer
                }
            },
        }
    }

    /// A free slot, taken; `None` when every slot is in use.
    fn claim(&self) -> Option<&Slot> {
        // Threads start at different slots, so that they rarely race for one.
        let start = thread_hint() % SLOTS;
        (0..SLOTS).map(|i| &self.slots[(start + i) % SLOTS]).find(|s| {
            s.state.load(Ordering::Relaxed) == FREE
                && s.state.compare_exchange(FREE, CLAIMED, Ordering::Acquire, Ordering::Relaxed).is_ok()
        })
    }

    /// Post `r` in `slot`, then wait until a combiner answered it, or take
    /// the lock and combine.
    fn wait(&self, slot: &Slot, r: Request) -> Answer {
        match r {
            Request::Malloc { size, stream } => {
                slot.op.store(OP_MALLOC, Ordering::Relaxed);
                slot.arg.store(size, Ordering::Relaxed);
                slot.stream.store(stream.0, Ordering::Relaxed);
            }
            Request::Free { ptr } => {
                slot.op.store(OP_FREE, Ordering::Relaxed);
                slot.arg.store(ptr, Ordering::Relaxed);
            }
        }
        // Counted before it is posted, so that a combiner that takes it at
        // once never counts below zero.
        self.posted.fetch_add(1, Ordering::Release);
        slot.state.store(POSTED, Ordering::Release);
        let mut spins = 0u32;
        loop {
            if slot.state.load(Ordering::Acquire) == DONE {
                return take_answer(slot);
            }
            spins += 1;
            if !spins.is_multiple_of(SPINS) {
                std::hint::spin_loop();
                continue;
            }
            match self.state.try_lock() {
                Ok(mut a) => {
                    // Serves this slot too, unless a combiner runs it now.
                    self.serve(&mut a, Some(slot));
                }
                Err(TryLockError::Poisoned(_)) => {
                    // Nobody will serve it: withdraw, unless a combiner
                    // already runs it (then its answer comes).
                    if slot.state.compare_exchange(POSTED, FREE, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                        self.posted.fetch_sub(1, Ordering::Release);
                        return Err((AllocError::Poisoned { device: self.index }, None));
                    }
                }
                Err(TryLockError::WouldBlock) => std::thread::yield_now(),
            }
        }
    }

    /// Run every posted request; the lock is held (`own`: the slot of
    /// this thread's request, if it posted one). A few passes at most, so
    /// that a combiner is not kept serving forever.
    #[cold]
    #[inline(never)]
    fn serve(&self, a: &mut DeviceAllocator, own: Option<&Slot>) {
        #[cfg(not(feature = "testing"))]
        let _ = own;
        for _ in 0..4 {
            if self.posted.load(Ordering::Acquire) == 0 {
                return;
            }
            for slot in self.slots.iter() {
                if slot.state.load(Ordering::Relaxed) != POSTED
                    || slot.state.compare_exchange(POSTED, RUNNING, Ordering::Acquire, Ordering::Relaxed).is_err()
                {
                    continue;
                }
                self.posted.fetch_sub(1, Ordering::Release);
                #[cfg(feature = "testing")]
                if !own.is_some_and(|o| std::ptr::eq(o, slot)) {
                    self.combined.fetch_add(1, Ordering::Relaxed);
                }
                let r = match slot.op.load(Ordering::Relaxed) {
                    OP_MALLOC => Request::Malloc {
                        size: slot.arg.load(Ordering::Relaxed),
                        stream: StreamId(slot.stream.load(Ordering::Relaxed)),
                    },
                    _ => Request::Free { ptr: slot.arg.load(Ordering::Relaxed) },
                };
                // A panic here poisons the mutex; the request's owner must
                // still hear of it, or it would wait for ever.
                let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| execute(a, r)));
                let panic = match answer {
                    Ok(Ok(v)) => {
                        slot.value.store(v, Ordering::Relaxed);
                        None
                    }
                    Ok(Err(e)) => {
                        *lock_slot_error(slot) = Some(e);
                        None
                    }
                    Err(p) => {
                        *lock_slot_error(slot) = Some((AllocError::Poisoned { device: self.index }, None));
                        Some(p)
                    }
                };
                slot.state.store(DONE, Ordering::Release);
                if let Some(p) = panic {
                    std::panic::resume_unwind(p);
                }
            }
        }
    }
}

/// Run one request on the locked state. A failed malloc takes its
/// out-of-memory notices with it, so that its own thread tells the
/// observers (after the lock), whichever thread ran it.
fn execute(a: &mut DeviceAllocator, r: Request) -> Answer {
    match r {
        Request::Malloc { size, stream } => a.malloc(size, stream).map_err(|e| with_notices(a, e)),
        Request::Free { ptr } => a.free(ptr).map(|()| 0).map_err(|e| (e, None)),
    }
}

/// A failed malloc's error with the out-of-memory notices it left.
#[cold]
#[inline(never)]
fn with_notices(a: &mut DeviceAllocator, e: AllocError) -> (AllocError, Option<OomNotices>) {
    let notices = a.has_oom_notices().then(|| a.take_oom_notices());
    (e, notices)
}

/// The error of a failed request, once its out-of-memory notices (a
/// malloc's) are told; no lock is held.
#[cold]
#[inline(never)]
fn told((e, notices): (AllocError, Option<OomNotices>)) -> AllocError {
    if let Some(n) = notices {
        if !std::thread::panicking() {
            n.deliver();
        }
    }
    e
}

/// The owner's answer from a `DONE` slot, which it then frees.
fn take_answer(slot: &Slot) -> Answer {
    let error = lock_slot_error(slot).take();
    let value = slot.value.load(Ordering::Relaxed);
    slot.state.store(FREE, Ordering::Release);
    match error {
        Some(e) => Err(e),
        None => Ok(value),
    }
}

/// A slot's error cell. Its holder never panics while holding it, but a
/// poisoned cell still holds a whole value: take it.
fn lock_slot_error(slot: &Slot) -> MutexGuard<'_, Option<(AllocError, Option<OomNotices>)>> {
    slot.error.lock().unwrap_or_else(|p| p.into_inner())
}

/// A number that differs between threads, cheaply: the address of a
/// thread-local.
fn thread_hint() -> usize {
    thread_local!(static HINT: u8 = const { 0 });
    HINT.with(|h| std::ptr::from_ref(h) as usize >> 7)
}

#[allow(dead_code)]
fn _assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<Combining>();
}
