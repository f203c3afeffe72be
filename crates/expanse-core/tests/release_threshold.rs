//! `release_threshold_mb` on the host backend: cached memory above the
//! threshold goes back to the device once its streams are idle, and
//! nothing goes back when the option is off.

use std::sync::Arc;

use expanse_core::{Config, DeviceAllocator, StreamId};
use expanse_device::Device;
use expanse_host::HostDevice;

const MIB: u64 = 1 << 20;
const S0: StreamId = StreamId(0);

fn host() -> Arc<HostDevice> {
    Arc::new(HostDevice::with_capacity(2 << 30, 2 * MIB).unwrap())
}

fn allocator(device: &Arc<HostDevice>, conf: &str) -> DeviceAllocator {
    DeviceAllocator::new(Arc::clone(device) as Arc<dyn Device>, Config::parse(conf).unwrap())
}

/// Cached bytes: reserved but not allocated.
fn cached(a: &DeviceAllocator) -> u64 {
    a.reserved_bytes() - a.stats().allocated_bytes.all().current as u64
}

/// Ten 40 MiB blocks and a few small ones, written through host memory,
/// then freed one by one: `(device free memory at the peak, after the
/// frees, cached bytes after each free)`, invariants checked after every
/// step.
fn fill_and_free(a: &mut DeviceAllocator, device: &HostDevice) -> (u64, u64, Vec<u64>) {
    let mut ptrs = Vec::new();
    for i in 0..10u8 {
        let p = a.malloc(40 * MIB, S0).unwrap();
        device.write(p, &[i; 4096]).unwrap();
        ptrs.push(p);
        ptrs.push(a.malloc(300_000, S0).unwrap());
        a.check_invariants().unwrap();
    }
    let at_peak = device.free_memory();
    let mut after_each = Vec::new();
    // Free the big blocks first, checking that the ones still live keep
    // their contents while pages around them go.
    let (big, small): (Vec<_>, Vec<_>) = ptrs.iter().enumerate().partition(|(i, _)| i % 2 == 0);
    for (k, (_, &p)) in big.iter().enumerate() {
        a.free(p).unwrap();
        a.check_invariants().unwrap();
        after_each.push(cached(a));
        for (j, (_, &q)) in big.iter().enumerate().skip(k + 1) {
            let mut buf = [0u8; 4096];
            device.read(q, &mut buf).unwrap();
            assert!(buf.iter().all(|&b| b == j as u8), "block {j} lost its contents");
        }
    }
    for (_, &p) in small {
        a.free(p).unwrap();
        a.check_invariants().unwrap();
        after_each.push(cached(a));
    }
    (at_peak, device.free_memory(), after_each)
}

#[test]
fn memory_above_the_threshold_is_returned_after_frees() {
    let device = host();
    let mut a = allocator(&device, "release_threshold_mb:64");
    let (at_peak, after, cached_after_each) = fill_and_free(&mut a, &device);
    for (i, c) in cached_after_each.iter().enumerate() {
        assert!(*c <= 64 * MIB, "free {i}: {c} cached bytes above the 64 MiB threshold");
    }
    // At least 400 MiB were in use at the peak; all but 64 MiB of it is
    // back on the device, as the device itself counts it.
    assert!(after - at_peak >= 400 * MIB - 64 * MIB, "device got back only {} MiB", (after - at_peak) / MIB);
    assert!(a.reserved_bytes() <= 64 * MIB);
    assert!(a.stats().pages.released > 0 && a.stats().pages.stream_syncs > 0);
    // The allocator still works: the memory comes back on demand.
    let p = a.malloc(200 * MIB, S0).unwrap();
    a.check_invariants().unwrap();
    a.free(p).unwrap();
    a.check_invariants().unwrap();
    assert!(cached(&a) <= 64 * MIB);
}

#[test]
fn nothing_is_returned_when_the_option_is_off() {
    let device = host();
    let mut a = allocator(&device, "expandable_segments:True");
    let (at_peak, after, _) = fill_and_free(&mut a, &device);
    assert_eq!(after, at_peak, "memory went back to the device without the option");
    assert!(a.reserved_bytes() >= 400 * MIB);
    assert_eq!(a.stats().pages.released, 0);
}

#[test]
fn pytorch_compat_mode_releases_too_when_asked() {
    let device = host();
    let mut a = allocator(&device, "expandable_segments:True,pytorch_compat:True,release_threshold_mb:0");
    let (_, _, cached_after_each) = fill_and_free(&mut a, &device);
    assert_eq!(*cached_after_each.last().unwrap(), 0);
    assert_eq!(a.reserved_bytes(), 0);
}

/// A block used by a second stream is not released while that stream may
/// still use it: at its free, its event is pending; once the event has
/// completed, the next `malloc` releases it, after synchronizing.
#[test]
fn blocks_in_use_by_another_stream_wait_for_it() {
    let device = host();
    let mut a = allocator(&device, "release_threshold_mb:0");
    let s1 = device.create_stream().unwrap();
    let p = a.malloc(100 * MIB, S0).unwrap();
    a.record_stream(p, s1).unwrap();
    let syncs_before = a.stats().pages.stream_syncs;
    a.free(p).unwrap();
    a.check_invariants().unwrap();
    assert!(a.reserved_bytes() >= 100 * MIB, "released while stream {s1:?} may still use it");
    device.synchronize().unwrap();
    let q = a.malloc(512, S0).unwrap();
    a.check_invariants().unwrap();
    assert!(a.reserved_bytes() < 100 * MIB, "not released once idle: {}", a.reserved_bytes());
    assert!(a.stats().pages.stream_syncs > syncs_before);
    a.free(q).unwrap();
    drop(a);
    device.destroy_stream(s1).unwrap();
}
