//! Out of memory: the report (PyTorch's wording) and its observers.

use std::sync::Arc;

use super::{DeviceAllocator, Request};
use crate::error::{AllocError, OomReport};
use crate::history::Action;

/// What an out-of-memory observer is told.
#[derive(Clone, Debug)]
pub struct OomInfo {
    /// Device index.
    pub device: u32,
    /// Bytes the failed request needed.
    pub alloc_size: u64,
    /// Memory this process may use (fraction applied) or device total.
    pub allowed: u64,
    /// Free device memory reported by the driver.
    pub device_free: u64,
}

/// An out-of-memory observer.
pub type OomObserver = Arc<dyn Fn(&OomInfo) + Send + Sync>;

/// Out-of-memory failures whose observers are still to be told, and the
/// observers: what [`DeviceAllocator::take_oom_notices`] hands over.
pub struct OomNotices {
    /// The failures, oldest first.
    pub failures: Vec<OomInfo>,
    /// Every observer, to be told of each failure.
    pub observers: Vec<OomObserver>,
}

impl OomNotices {
    /// Tell every observer of every failure.
    pub fn deliver(self) {
        for info in &self.failures {
            self.observers.iter().for_each(|obs| obs(info));
        }
    }
}

impl DeviceAllocator {
    /// Hold out-of-memory failures for [`DeviceAllocator::take_oom_notices`]
    /// instead of telling the observers at once. A thread-safe wrapper
    /// does this so that observers run after its lock is released, as
    /// PyTorch's do: an observer may then call the allocator (take a
    /// snapshot, free memory) without deadlocking, and a panicking observer
    /// leaves a state that is whole.
    pub fn defer_oom_observers(&mut self) {
        self.oom_deferred = true;
    }

    /// Whether failures are held for the observers (one load: the wrapper
    /// asks after every call).
    #[inline(always)]
    pub fn has_oom_notices(&self) -> bool {
        !self.oom_held.is_empty()
    }

    /// The failures held since the last call and the observers to tell.
    pub fn take_oom_notices(&mut self) -> OomNotices {
        OomNotices { failures: std::mem::take(&mut self.oom_held), observers: self.oom_observers.clone() }
    }
}

impl DeviceAllocator {
    /// Count the failure, tell the observers and describe it.
    pub(super) fn out_of_memory(&mut self, p: &Request) -> AllocError {
        if let Some(x) = self.exhausted.take() {
            return AllocError::AddressSpace {
                device: self.device.ordinal(),
                requested: x.needed,
                reserved: x.reserved,
                limit: x.limit,
            };
        }
        self.stats.num_ooms += 1;
        let total = self.device.total_memory();
        let device_free = self.device.free_memory();
        let allowed = if self.memory_fraction.is_some() { self.allowed_memory_maximum } else { total };
        let info = OomInfo { device: self.device.ordinal(), alloc_size: p.segment_size, allowed, device_free };
        if self.oom_deferred {
            self.oom_held.push(info);
        } else {
            self.oom_observers.iter().for_each(|obs| obs(&info));
        }
        let allocated = self.stats.allocated_bytes.all().current.max(0) as u64;
        let reserved = self.stats.reserved_bytes.all().current.max(0) as u64;
        let report = OomReport {
            total,
            device_free,
            allowed: self.memory_fraction.map(|_| self.allowed_memory_maximum),
            allocated,
            cached: reserved.saturating_sub(allocated),
            suggest_expandable: !self.policy.expandable(),
        };
        let request = if self.policy.expandable() { p.size } else { p.segment_size };
        self.record(Action::Oom, device_free, request, p.stream);
        AllocError::OutOfMemory { device: self.device.ordinal(), requested: request, report }
    }
}
