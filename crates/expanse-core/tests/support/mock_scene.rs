//! What the scene-based policy tests share (`grow_fewest.rs`, `move_whole_first.rs`,
//! `small_from_large.rs`, `working_set.rs`): an allocator on a strict mock
//! device of 80 GiB with 2 MiB granularity (large enough that new pages
//! may be 20 MiB: at most 1/1024 of the free and 1/3578 of the total
//! memory), and the check run after every step.

use std::sync::Arc;

use expanse_core::{Config, DeviceAllocator};
use expanse_device::Device;
use expanse_mock::MockDevice;

pub const MIB: u64 = 1 << 20;

/// The mock device and an allocator on it with configuration `base`, then
/// `conf` on top.
pub fn allocator(base: &str, conf: &str) -> (Arc<MockDevice>, DeviceAllocator) {
    let device = Arc::new(MockDevice::new(80 * 1024 * MIB, 2 * MIB));
    let mut c = Config::parse(base).unwrap();
    c.apply(conf).unwrap();
    let alloc = DeviceAllocator::new(Arc::clone(&device) as Arc<dyn Device>, c);
    (device, alloc)
}

/// The allocator's invariants hold and the device saw no contract violation.
pub fn check(device: &MockDevice, alloc: &DeviceAllocator) {
    alloc.check_invariants().unwrap();
    assert!(device.violations().is_empty(), "device contract violated: {:?}", device.violations());
}
