//! expanse's `ze` backend on the fake driver: the conformance suite, the
//! allocator, peer access on two devices, failure injection, and the
//! driver's own rules.
//!
//! By default the backend loads the fake directly (this crate's
//! `libexpanse_ze_fake.so`). With `EXPANSE_ZE_LIBRARY=libze_loader.so.1`
//! and `ZE_ENABLE_ALT_DRIVERS=<the fake>` (and the validation layer
//! variables) the same tests run through Intel's loader; `.ci/run` does both.
//! One driver serves the whole process, so the tests take turns.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use expanse_core::ops::{random_ops, Runner};
use expanse_core::{CachingAllocator, Config, DeviceAllocator, StreamId};
use expanse_device::{Device, DeviceError};
use expanse_ze::{result, sys, ZeDevice};
use expanse_ze_fake::LiveCounts;

static TURN: Mutex<()> = Mutex::new(());

/// The fake stays loaded for the whole process (its state would otherwise
/// go with the last device, before the leak checks read it).
static PIN: std::sync::OnceLock<libloading::Library> = std::sync::OnceLock::new();

/// The fake driver's file: `ZE_ENABLE_ALT_DRIVERS` when going through the
/// loader, else this crate's cdylib next to the test binary.
fn fake_path() -> PathBuf {
    if let Ok(p) = std::env::var("ZE_ENABLE_ALT_DRIVERS") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps directory");
    for dir in [deps, deps.parent().unwrap_or(deps)] {
        let p = dir.join("libexpanse_ze_fake.so");
        if p.exists() {
            return p;
        }
    }
    panic!("libexpanse_ze_fake.so not found next to {}: run cargo build --release", exe.display());
}

/// Take this test's turn and point the backend at the fake (two devices of
/// 256 MiB) unless the environment already chose a library.
fn turn() -> MutexGuard<'static, ()> {
    let g = TURN.lock().unwrap_or_else(|e| e.into_inner());
    if std::env::var_os("EXPANSE_ZE_LIBRARY").is_none() {
        std::env::set_var("EXPANSE_ZE_LIBRARY", fake_path());
    }
    std::env::set_var("EXPANSE_ZE_FAKE_DEVICES", "2");
    std::env::set_var("EXPANSE_ZE_FAKE_MEMORY", (256u64 << 20).to_string());
    // SAFETY: as in `fake_hook`.
    PIN.get_or_init(|| unsafe { libloading::Library::new(fake_path()) }.expect("load the fake driver"));
    g
}

fn fake_hook<T>(name: &[u8]) -> (libloading::Library, T)
where
    T: Copy,
{
    // SAFETY: the fake has no initialisers with preconditions; loading the
    // file the loader (or the backend) loaded returns the same instance.
    let lib = unsafe { libloading::Library::new(fake_path()) }.expect("load the fake driver");
    // SAFETY: the hook's C type is the one the caller names.
    let f = unsafe { *lib.get::<T>(name).expect("fake driver hook") };
    (lib, f)
}

fn live() -> LiveCounts {
    type Live = unsafe extern "C" fn(*mut LiveCounts) -> u32;
    let (_lib, f) = fake_hook::<Live>(b"expanse_ze_fake_live\0");
    let mut c = LiveCounts::default();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { f(&mut c) }, 0);
    c
}

fn fail_next(name: &str, nth: u32) {
    type Fail = unsafe extern "C" fn(*const std::ffi::c_char, u32, u32) -> u32;
    let (_lib, f) = fake_hook::<Fail>(b"expanse_ze_fake_fail\0");
    let c = std::ffi::CString::new(name).unwrap();
    // SAFETY: a NUL-terminated name.
    assert_eq!(unsafe { f(c.as_ptr(), nth, 0) }, 0);
}

fn devices() -> Vec<Arc<ZeDevice>> {
    expanse_ze::open_all().expect("the fake driver opens")
}

fn assert_nothing_live() {
    let c = live();
    assert_eq!(
        (c.contexts, c.reservations, c.physical, c.allocations, c.lists, c.pools, c.events),
        (0, 0, 0, 0, 0, 0, 0),
        "driver objects left behind: {c:?}"
    );
}

#[test]
fn conformance_suite_on_fake_driver() {
    let _t = turn();
    let mut failed = Vec::new();
    for (name, check) in expanse_conformance::CHECKS {
        let devs = devices();
        if let Err(e) = check(devs[0].as_ref()) {
            failed.push(format!("{name}: {e}"));
        }
        drop(devs);
        assert_nothing_live();
    }
    assert!(failed.is_empty(), "failed: {failed:#?}");
}

#[test]
fn allocator_random_ops_with_contents() {
    let _t = turn();
    for (i, conf) in
        ["expandable_segments:False", "expandable_segments:True", "expandable_segments:True,pytorch_compat:True"]
            .iter()
            .enumerate()
    {
        let d = devices().swap_remove(0);
        // The operations name streams 0 and 1 by number, as a caller of the
        // C ABI names its queues: stream 1 is adopted (its own command list).
        assert_eq!(d.adopt_stream(1).unwrap(), StreamId(1));
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, Config::parse(conf).unwrap());
        let mut r = Runner::default();
        r.check_contents = true;
        for op in random_ops(0x2E5EED + i as u64, 3000, 64 << 20, true) {
            r.step(&mut a, op).unwrap_or_else(|e| panic!("{conf}: after {op:?}: {e}"));
        }
        r.finish(&mut a).unwrap();
        a.empty_cache().unwrap();
        drop(a);
        drop(d);
        assert_nothing_live();
    }
}

/// A page mapped before peer access is enabled and one mapped after are
/// both readable through device 1's command list; before, the driver
/// refuses device 1.
#[test]
fn peer_reads_pages_mapped_before_and_after_enabling_access() {
    let _t = turn();
    let devs = devices();
    assert_eq!(devs.len(), 2, "the fake was asked for two devices");
    let (d0, d1) = (Arc::clone(&devs[0]), Arc::clone(&devs[1]));
    let all: Vec<Arc<dyn Device>> = devs.iter().map(|d| Arc::clone(d) as Arc<dyn Device>).collect();
    let alloc = CachingAllocator::new(all, Config::parse("expandable_segments:True").unwrap());
    let mib = 1u64 << 20;

    let before = alloc.malloc(0, 3 * mib, StreamId(0)).unwrap();
    let a: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
    d0.write(before, &a).unwrap();
    let mut back = vec![0u8; 4096];
    let refused = d1.read_as(before, &mut back);
    assert!(
        matches!(refused, Err(DeviceError::Driver { .. })),
        "device 1 read device 0's page without access: {refused:?}"
    );

    alloc.enable_peer_access(1, 0).unwrap();
    d1.read_as(before, &mut back).unwrap();
    assert_eq!(back, a, "page mapped before enabling peer access");

    // Enough to map new pages after the peer was added.
    let after = alloc.malloc(0, 40 * mib, StreamId(0)).unwrap();
    let b: Vec<u8> = (0..4096u32).map(|i| (i * 13 % 241) as u8).collect();
    let at = after + 40 * mib - 4096;
    d0.write(at, &b).unwrap();
    d1.read_as(at, &mut back).unwrap();
    assert_eq!(back, b, "page mapped after enabling peer access");

    alloc.free(0, before).unwrap();
    alloc.free(0, after).unwrap();
    alloc.empty_cache().unwrap();
    drop(alloc);
    drop((d0, d1, devs));
    assert_nothing_live();
}

/// Classic allocations: existing and later ones reach the peer.
#[test]
fn peer_reads_classic_allocations_before_and_after() {
    let _t = turn();
    let devs = devices();
    let (d0, d1) = (&devs[0], &devs[1]);
    let p = d0.malloc(1 << 20).unwrap();
    d0.write(p, &[5u8; 512]).unwrap();
    let mut back = vec![0u8; 512];
    assert!(d1.read_as(p, &mut back).is_err(), "peer read a classic allocation without access");
    d0.enable_peer_access(1).unwrap();
    d1.read_as(p, &mut back).unwrap();
    assert_eq!(back, [5u8; 512]);
    let q = d0.malloc(1 << 20).unwrap();
    d0.write(q + 4096, &[9u8; 512]).unwrap();
    d1.read_as(q + 4096, &mut back).unwrap();
    assert_eq!(back, [9u8; 512]);
    d0.free(p).unwrap();
    d0.free(q).unwrap();
    drop(devs);
    assert_nothing_live();
}

#[test]
fn injected_failures_are_errors_and_change_nothing() {
    let _t = turn();
    let d = devices().swap_remove(0);
    let g = d.granularity();
    fail_next("zePhysicalMemCreate", 1);
    assert!(d.create_page(g).unwrap_err().is_out_of_memory());
    let page = d.create_page(g).unwrap();
    let base = d.reserve(2 * g).unwrap();
    fail_next("zeVirtualMemMap", 1);
    assert!(matches!(d.map(base, page), Err(DeviceError::Driver { call: "zeVirtualMemMap", .. })));
    // Nothing was mapped: the page releases, the address maps again.
    d.map(base, page).unwrap();
    d.set_access(base, g, &[0]).unwrap();
    d.write(base, &[1, 2, 3]).unwrap();
    d.unmap(base, g).unwrap();
    d.release_page(page).unwrap();
    d.release_reservation(base, 2 * g).unwrap();

    // The allocator takes a failed page creation as out-of-memory. In
    // PyTorch's expandable mode it frees its cache and retries; in
    // expanse's default it first tries again at the limit (pages of the
    // granularity), which serves the request without that retry.
    for (conf, retries) in [("expandable_segments:True,pytorch_compat:True", 1), ("expandable_segments:True", 0)] {
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, Config::parse(conf).unwrap());
        fail_next("zePhysicalMemCreate", 1);
        let p = a.malloc(8 << 20, StreamId(0)).unwrap();
        assert_eq!(a.stats().num_alloc_retries, retries, "{conf}");
        a.free(p).unwrap();
        a.empty_cache().unwrap();
        drop(a);
    }
    drop(d);
    assert_nothing_live();
}

/// The driver's own rules, through raw calls that bypass the backend's
/// bookkeeping: each broken rule is refused with an error code.
#[test]
fn fake_driver_refuses_what_the_api_forbids() {
    let _t = turn();
    let devs = devices();
    let pf = devs[0].platform();
    let (a, ctx) = (pf.api(), pf.context());
    let g = devs[0].granularity();
    // SAFETY: the platform keeps the context and devices alive; every
    // address passed is a reservation of this context or refused.
    unsafe {
        let dev0 = pf.device(0).unwrap();
        assert!(result::reserve(a, ctx, g + 4096, g).is_err(), "unaligned reservation size");
        let base = result::reserve(a, ctx, 4 * g, g).unwrap();
        let ph = result::physical_create(a, ctx, dev0, g).unwrap();
        assert!(result::physical_create(a, ctx, dev0, 4096).is_err(), "unaligned page size");
        assert!(result::map(a, ctx, base + 4096, g, ph).is_err(), "unaligned map address");
        assert!(result::map(a, ctx, base + 4 * g, g, ph).is_err(), "map outside the reservation");
        assert!(result::set_access_rw(a, ctx, base, g).is_err(), "access on an unmapped range");
        result::map(a, ctx, base, g, ph).unwrap();
        let ph2 = result::physical_create(a, ctx, dev0, g).unwrap();
        assert!(result::map(a, ctx, base, g, ph2).is_err(), "double map of an address");
        assert!(result::map(a, ctx, base + g, g, ph).is_err(), "double map of a page");
        let mut buf = [0u8; 64];
        assert!(devs[0].read_as(base, &mut buf).is_err(), "read before access was set");
        result::set_access_rw(a, ctx, base, g).unwrap();
        devs[0].read_as(base, &mut buf).unwrap();
        let set_access = |attribute| (a.virtual_mem_set_access_attribute)(ctx, base as *const _, g as usize, attribute);
        assert_ne!(set_access(7), sys::ZE_RESULT_SUCCESS, "an unknown access attribute");
        assert_eq!(set_access(sys::ZE_MEMORY_ACCESS_ATTRIBUTE_READONLY), sys::ZE_RESULT_SUCCESS);
        devs[0].read_as(base, &mut buf).unwrap();
        assert_eq!(set_access(sys::ZE_MEMORY_ACCESS_ATTRIBUTE_NONE), sys::ZE_RESULT_SUCCESS);
        assert!(devs[0].read_as(base, &mut buf).is_err(), "read after access was taken away");
        result::set_access_rw(a, ctx, base, g).unwrap();
        assert!(devs[1].read_as(base, &mut buf).is_err(), "peer read without residency");
        assert!(result::physical_destroy(a, ctx, ph).is_err(), "destroying a mapped page");
        assert!(result::reserve_free(a, ctx, base, 4 * g).is_err(), "freeing a reservation with mappings");
        assert!(result::unmap(a, ctx, base, 2 * g).is_err(), "unmapping past the mapping");
        result::unmap(a, ctx, base, g).unwrap();
        result::physical_destroy(a, ctx, ph).unwrap();
        result::physical_destroy(a, ctx, ph2).unwrap();
        result::reserve_free(a, ctx, base, 4 * g).unwrap();
        assert!(result::physical_destroy(a, ctx, ph).is_err(), "destroying a destroyed handle");
    }
    drop(devs);
    assert_nothing_live();
}

#[test]
fn missing_library_is_a_clean_error() {
    let _t = turn();
    let saved = std::env::var_os("EXPANSE_ZE_LIBRARY");
    std::env::set_var("EXPANSE_ZE_LIBRARY", "/nonexistent/libze_loader.so.1");
    let r = expanse_ze::open_all();
    match saved {
        Some(v) => std::env::set_var("EXPANSE_ZE_LIBRARY", v),
        None => std::env::remove_var("EXPANSE_ZE_LIBRARY"),
    }
    match r {
        Err(DeviceError::Unsupported { what }) => {
            assert!(what.contains("Level Zero library not found") && what.contains("/nonexistent"), "{what}")
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn device_reports_the_fake_s_configuration() {
    let _t = turn();
    let devs = devices();
    assert_eq!(devs[0].total_memory(), 256 << 20);
    assert_eq!(devs[0].granularity(), 2 << 20);
    assert!(devs[0].device_name().contains("expanse-ze-fake"), "{}", devs[0].device_name());
    assert!(devs[0].can_access_peer(1) && devs[1].can_access_peer(0));
    let _ = sys::ZE_RESULT_SUCCESS;
}
