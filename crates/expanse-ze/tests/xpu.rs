//! Tests on a real Level Zero device (Intel XPU): the conformance suite,
//! the allocator with contents checked, and out-of-memory recovery.
//! Opt-in: every test is `#[ignore]`d, so without an Intel GPU they show as
//! ignored, never as passed. On an XPU machine run them with
//! `EXPANSE_ZE_TESTS=1 cargo test --release -p expanse-ze --test xpu --
//! --include-ignored`; run without `EXPANSE_ZE_TESTS=1` they fail. On
//! machines without an Intel GPU the same suite runs on the fake driver
//! instead (crates/expanse-ze-fake/tests/backend.rs).

use std::sync::Arc;

use expanse_core::ops::{random_ops, Runner};
use expanse_core::{Config, DeviceAllocator, StreamId};
use expanse_device::Device;
use expanse_ze::ZeDevice;

fn xpu() -> Arc<ZeDevice> {
    assert_eq!(
        std::env::var("EXPANSE_ZE_TESTS").as_deref(),
        Ok("1"),
        "XPU tests were asked for (--include-ignored) without EXPANSE_ZE_TESTS=1"
    );
    let devs = expanse_ze::open_all().expect("EXPANSE_ZE_TESTS=1 but no usable Level Zero device");
    println!("device 0: {} ({} bytes, page {})", devs[0].device_name(), devs[0].total_memory(), devs[0].granularity());
    Arc::clone(&devs[0])
}

#[test]
#[ignore = "needs an Intel GPU: EXPANSE_ZE_TESTS=1 and --include-ignored"]
fn conformance_suite_on_xpu() {
    let d = xpu();
    let mut failed = Vec::new();
    for (name, check) in expanse_conformance::CHECKS {
        match check(d.as_ref()) {
            Ok(()) => println!("conformance {name}: ok"),
            Err(e) => {
                println!("conformance {name}: FAILED: {e}");
                failed.push(*name);
            }
        }
    }
    assert!(failed.is_empty(), "failed: {failed:?}");
}

#[test]
#[ignore = "needs an Intel GPU: EXPANSE_ZE_TESTS=1 and --include-ignored"]
fn allocator_random_ops_with_contents_on_xpu() {
    let d = xpu();
    for (i, conf) in
        ["expandable_segments:False", "expandable_segments:True", "expandable_segments:True,pytorch_compat:True"]
            .iter()
            .enumerate()
    {
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, Config::parse(conf).unwrap());
        let mut r = Runner::default();
        r.check_contents = true;
        for op in random_ops(0x5EED + i as u64, 3000, 256 << 20, false) {
            r.step(&mut a, op).unwrap_or_else(|e| panic!("after {op:?}: {e}"));
        }
        r.finish(&mut a).unwrap();
        println!("random ops with contents, {conf}: ok");
    }
}

#[test]
#[ignore = "needs an Intel GPU: EXPANSE_ZE_TESTS=1 and --include-ignored"]
fn out_of_memory_on_xpu_is_recoverable() {
    let d = xpu();
    for conf in ["expandable_segments:False", "expandable_segments:True"] {
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, Config::parse(conf).unwrap());
        let total = d.total_memory();
        let keep = a.malloc(total / 4, StreamId(0)).unwrap();
        let e = a.malloc(total, StreamId(0)).unwrap_err();
        let p = a.malloc(total / 4, StreamId(0)).expect("usable after OOM");
        a.free(p).unwrap();
        a.free(keep).unwrap();
        a.empty_cache().unwrap();
        assert_eq!(a.reserved_bytes(), 0);
        println!("OOM and recovery, {conf}: ok ({e})");
    }
}
