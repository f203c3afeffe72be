//! The backend conformance suite on real host virtual memory.
expanse_conformance::conformance_tests!(expanse_host::HostDevice::with_capacity(64 << 20, 2 << 20).unwrap());

#[test]
fn untouched_mappings_cost_no_resident_memory() {
    use expanse_device::Device;
    // 8 GiB of pages mapped and made accessible, never written.
    let d = expanse_host::HostDevice::with_capacity(16 << 30, 2 << 20).unwrap();
    let rss = || -> u64 {
        let s = std::fs::read_to_string("/proc/self/statm").unwrap();
        s.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 4096
    };
    let before = rss();
    let size = 8u64 << 30;
    let base = d.reserve(size).unwrap();
    let pages: Vec<_> = (0..size / (512 << 20)).map(|_| d.create_page(512 << 20).unwrap()).collect();
    for (i, p) in pages.iter().enumerate() {
        d.map(base + i as u64 * (512 << 20), *p).unwrap();
    }
    d.set_access(base, size, &[0]).unwrap();
    let after = rss();
    assert!(after < before + (64 << 20), "rss grew from {before} to {after}");
    d.unmap(base, size).unwrap();
    for p in pages {
        d.release_page(p).unwrap();
    }
    d.release_reservation(base, size).unwrap();
}

#[test]
fn pages_are_shared_memory_not_copies() {
    use expanse_device::Device;
    // Writing through a raw pointer (as a kernel would) is seen by read().
    let d = expanse_host::HostDevice::with_capacity(64 << 20, 2 << 20).unwrap();
    let base = d.reserve(2 << 20).unwrap();
    let p = d.create_page(2 << 20).unwrap();
    d.map(base, p).unwrap();
    d.set_access(base, 2 << 20, &[0]).unwrap();
    d.write(base + 100, &[1, 2, 3]).unwrap();
    let mut b = [0u8; 3];
    d.read(base + 100, &mut b).unwrap();
    assert_eq!(b, [1, 2, 3]);
    // Memory before set_access is refused, not a segfault.
    d.unmap(base, 2 << 20).unwrap();
    d.map(base, p).unwrap();
    assert!(d.read(base, &mut b).is_err());
    d.unmap(base, 2 << 20).unwrap();
    d.release_page(p).unwrap();
    d.release_reservation(base, 2 << 20).unwrap();
}

#[test]
fn absurd_capacities_are_refused() {
    use expanse_device::DeviceError;
    for cap in [0, 1, 1 << 20, 17 << 40, u64::MAX] {
        let r = expanse_host::HostDevice::with_capacity(cap, 2 << 20);
        assert!(matches!(r, Err(DeviceError::Misuse(_))), "{cap}: {r:?}");
    }
}

/// Classic mallocs go where the CUDA driver puts `cuMemAlloc`s: 40 MiB
/// opens a 64 MiB chunk, 12 MiB takes the chunk's rest right after it,
/// the lowest free range that fits is taken first, freed ranges included,
/// and a freed range is no longer accessible.
#[test]
fn classic_mallocs_are_placed_as_the_driver_places_them() {
    use expanse_device::Device;
    const MIB: u64 = 1 << 20;
    let d = expanse_host::HostDevice::with_capacity(1 << 30, 2 * MIB).unwrap();
    let a = d.malloc(40 * MIB).unwrap();
    let b = d.malloc(12 * MIB).unwrap();
    assert_eq!(b, a + 40 * MIB);
    let c = d.malloc(100 * MIB).unwrap();
    assert_eq!(c + 128 * MIB, a, "a 128 MiB chunk right below the first");
    d.write(b + 12 * MIB - 4, &[7, 8, 9, 10]).unwrap();
    let mut back = [0u8; 4];
    d.read(b + 12 * MIB - 4, &mut back).unwrap();
    assert_eq!(back, [7, 8, 9, 10]);
    d.free(b).unwrap();
    assert_eq!(d.malloc(6 * MIB).unwrap(), c + 100 * MIB, "the 100 MiB chunk's rest is lower than b's range");
    d.free(c).unwrap();
    assert_eq!(d.malloc(90 * MIB).unwrap(), c, "the lowest freed range first");
    assert!(d.write(b, &[1]).is_err(), "a freed malloc is no longer accessible");
    // Beyond the capacity: out of memory, nothing placed.
    assert!(d.malloc(2 << 30).is_err());
    for p in [a, c, c + 100 * MIB] {
        d.free(p).unwrap();
    }
}
