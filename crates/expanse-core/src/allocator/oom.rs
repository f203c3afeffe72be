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
        for obs in &self.oom_observers {
            obs(&info);
        }
        let allocated = self.stats.allocated_bytes.all.current.max(0) as u64;
        let reserved = self.stats.reserved_bytes.all.current.max(0) as u64;
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
