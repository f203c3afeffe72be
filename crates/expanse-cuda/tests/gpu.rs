//! GPU tests: the conformance suite and the allocator on a real GPU.
//! Opt-in: they run only with `EXPANSE_CUDA_TESTS=1` and skip (pass with a
//! note) otherwise, so CI without a GPU stays green.

use std::sync::Arc;

use expanse_core::ops::{random_ops, Runner};
use expanse_core::{Config, DeviceAllocator, StreamId};
use expanse_cuda::CudaDevice;
use expanse_device::Device;

fn gpu() -> Option<Arc<CudaDevice>> {
    if std::env::var("EXPANSE_CUDA_TESTS").as_deref() != Ok("1") {
        eprintln!("skipped: set EXPANSE_CUDA_TESTS=1 on a machine with a GPU");
        return None;
    }
    let devs = expanse_cuda::open_all().expect("EXPANSE_CUDA_TESTS=1 but no usable CUDA device");
    Some(Arc::clone(&devs[0]))
}

#[test]
fn conformance_suite_on_cuda() {
    let Some(d) = gpu() else { return };
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

fn random_ops_on(d: &Arc<CudaDevice>, config: Config, seed: u64) {
    let mut a = DeviceAllocator::new(Arc::clone(d) as Arc<dyn Device>, config);
    let mut r = Runner::default();
    r.check_contents = true;
    for op in random_ops(seed, 3000, 256 << 20, false) {
        r.step(&mut a, op).unwrap_or_else(|e| panic!("after {op:?}: {e}"));
    }
    r.finish(&mut a).unwrap();
}

#[test]
fn allocator_random_ops_with_contents_on_cuda() {
    let Some(d) = gpu() else { return };
    for (i, conf) in
        ["expandable_segments:False", "expandable_segments:True", "expandable_segments:True,pytorch_compat:True"]
            .iter()
            .enumerate()
    {
        random_ops_on(&d, Config::parse(conf).unwrap(), 0x5EED + i as u64);
        println!("random ops with contents, {conf}: ok");
    }
}

#[test]
fn out_of_memory_on_cuda_is_recoverable() {
    let Some(d) = gpu() else { return };
    for conf in ["expandable_segments:False", "expandable_segments:True"] {
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, Config::parse(conf).unwrap());
        let total = d.total_memory();
        let keep = a.malloc(total / 4, StreamId(0)).unwrap();
        let e = a.malloc(total, StreamId(0)).unwrap_err();
        assert!(e.to_string().contains("Tried to allocate"), "{e}");
        let p = a.malloc(total / 4, StreamId(0)).expect("usable after OOM");
        a.free(p).unwrap();
        a.free(keep).unwrap();
        a.empty_cache().unwrap();
        assert_eq!(a.reserved_bytes(), 0);
        println!("OOM and recovery, {conf}: ok ({e})");
    }
}
