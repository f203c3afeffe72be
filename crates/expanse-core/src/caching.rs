//! The thread-safe allocator: one [`DeviceAllocator`] per device, each
//! behind its own lock. Out-of-memory observers are told after the lock
//! is released ([`DeviceGuard`]), as PyTorch's are.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, MutexGuard};

use expanse_device::{Device, StreamId};

use crate::allocator::{bad_device, DeviceAllocator, OomObserver};
use crate::combining::Combining;
use crate::config::Config;
use crate::error::AllocError;
use crate::snapshot::Snapshot;
use crate::stats::DeviceStats;

/// A caching allocator over one or more devices; `Send + Sync`.
#[derive(Debug)]
pub struct CachingAllocator {
    /// Each device's state behind its mutex, with the slots where threads
    /// that find it locked post their mallocs and frees (`combining.rs`).
    devices: Vec<Combining>,
}

impl CachingAllocator {
    /// One allocator state per device, all with `config`.
    pub fn new(devices: Vec<Arc<dyn Device>>, config: Config) -> Self {
        CachingAllocator {
            devices: devices
                .into_iter()
                .enumerate()
                .map(|(i, d)| {
                    let mut a = DeviceAllocator::new(d, config.clone());
                    a.defer_oom_observers();
                    Combining::new(a, i as u32)
                })
                .collect(),
        }
    }

    /// Number of devices.
    pub fn device_count(&self) -> usize {
        self.devices.len()
    }

    /// Lock the allocator of `device`. Out-of-memory failures met while it
    /// is locked are told to the observers when the guard is dropped,
    /// after the lock is released.
    pub fn lock(&self, device: u32) -> Result<DeviceGuard<'_>, AllocError> {
        self.lock_raw(device).map(|g| DeviceGuard { guard: Some(g) })
    }

    /// Lock the allocator of `device`; out-of-memory failures stay held
    /// until the caller hands them over ([`DeviceAllocator::take_oom_notices`]).
    /// Inlined: a call costs as much as its body (the error paths stay
    /// out of line).
    #[inline(always)]
    fn lock_raw(&self, device: u32) -> Result<MutexGuard<'_, DeviceAllocator>, AllocError> {
        let m = self.device(device)?.mutex();
        // A panic while holding the lock may have left the state half-done
        // (a block out of every set, a stat not updated): never serve it
        // again. Every later caller gets the error.
        m.lock().map_err(|_| AllocError::Poisoned { device })
    }

    /// The device's state; an index past the devices is an error (out of
    /// line: the hot paths only test it).
    #[inline(always)]
    fn device(&self, device: u32) -> Result<&Combining, AllocError> {
        match self.devices.get(device as usize) {
            Some(d) => Ok(d),
            None => Err(self.no_device(device)),
        }
    }

    #[cold]
    #[inline(never)]
    fn no_device(&self, device: u32) -> AllocError {
        bad_device(device, self.devices.len())
    }

    /// Allocate `size` bytes on `device` for `stream`. (The hot path: the
    /// lock, or a slot when it is taken; the observers told only after a
    /// failure, once no lock is held.)
    pub fn malloc(&self, device: u32, size: u64, stream: StreamId) -> Result<u64, AllocError> {
        self.device(device)?.malloc(size, stream)
    }

    /// Free `ptr` (allocated on `device`). A free fails no allocation, so
    /// no observer is told.
    pub fn free(&self, device: u32, ptr: u64) -> Result<(), AllocError> {
        self.device(device)?.free(ptr)
    }

    /// Free `ptr` without knowing its device: the device that owns it.
    pub fn free_any(&self, ptr: u64) -> Result<(), AllocError> {
        for (i, m) in self.devices.iter().enumerate() {
            let a = m.mutex().lock().map_err(|_| AllocError::Poisoned { device: i as u32 })?;
            if a.allocation_size(ptr).is_some() {
                drop(a);
                return self.free(i as u32, ptr);
            }
        }
        Err(AllocError::Misuse {
            message: format!("free of unknown pointer {ptr:#x}: not allocated by this allocator, or already freed"),
        })
    }

    /// For tests of combining (`combining.rs`): on `device`, the requests
    /// posted and waiting, and those a combiner ran for another thread.
    #[cfg(feature = "testing")]
    pub fn combining_counts(&self, device: u32) -> Result<(usize, u64), AllocError> {
        Ok(self.device(device)?.counts())
    }

    /// Which device owns the allocation at `ptr`.
    pub fn device_of(&self, ptr: u64) -> Option<u32> {
        self.devices
            .iter()
            .position(|m| m.mutex().lock().is_ok_and(|a| a.allocation_size(ptr).is_some()))
            .map(|i| i as u32)
    }

    /// `record_stream` for `ptr` on whichever device owns it.
    pub fn record_stream(&self, ptr: u64, stream: StreamId) -> Result<(), AllocError> {
        let d = self
            .device_of(ptr)
            .ok_or_else(|| AllocError::Misuse { message: format!("record_stream on unknown pointer {ptr:#x}") })?;
        self.lock(d)?.record_stream(ptr, stream)
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

/// The locked allocator of one device ([`CachingAllocator::lock`]). When
/// dropped it releases the lock, then tells the out-of-memory observers of
/// every failure met meanwhile: an observer may call the allocator again
/// (take a snapshot, free memory), and one that panics leaves the state
/// whole (the device stays usable; the panic reaches the caller).
pub struct DeviceGuard<'a> {
    /// `Some` until dropped.
    guard: Option<MutexGuard<'a, DeviceAllocator>>,
}

impl std::fmt::Debug for DeviceGuard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DeviceGuard").field(&self.guard.as_deref()).finish()
    }
}

impl Deref for DeviceGuard<'_> {
    type Target = DeviceAllocator;

    fn deref(&self) -> &DeviceAllocator {
        self.guard.as_deref().expect("a DeviceGuard holds its lock until dropped")
    }
}

impl DerefMut for DeviceGuard<'_> {
    fn deref_mut(&mut self) -> &mut DeviceAllocator {
        self.guard.as_deref_mut().expect("a DeviceGuard holds its lock until dropped")
    }
}

impl Drop for DeviceGuard<'_> {
    fn drop(&mut self) {
        if let Some(a) = self.guard.take() {
            unlock_then_tell(a);
        }
    }
}

/// Unlock `a`, then tell the observers of the out-of-memory failures it
/// held, unless a panic is unwinding (the lock is then poisoned and the
/// state not trusted).
fn unlock_then_tell(mut a: MutexGuard<'_, DeviceAllocator>) {
    if !a.has_oom_notices() {
        return;
    }
    let notices = a.take_oom_notices();
    drop(a);
    if !std::thread::panicking() {
        notices.deliver();
    }
}
