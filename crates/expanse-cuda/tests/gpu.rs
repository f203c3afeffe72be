//! GPU tests: the conformance suite and the allocator on a real GPU.
//! Opt-in: every test is `#[ignore]`d, so without a GPU they show as
//! ignored, never as passed. On a GPU machine run them with
//! `EXPANSE_CUDA_TESTS=1 <test binary> --include-ignored` (see
//! scripts/gpu/verify.sh); run without `EXPANSE_CUDA_TESTS=1` they fail.

use std::sync::Arc;

use expanse_core::ops::{random_ops, Runner};
use expanse_core::{Config, DeviceAllocator, StreamId};
use expanse_cuda::CudaDevice;
use expanse_device::Device;

fn gpu() -> Option<Arc<CudaDevice>> {
    assert_eq!(
        std::env::var("EXPANSE_CUDA_TESTS").as_deref(),
        Ok("1"),
        "GPU tests were asked for (--include-ignored) without EXPANSE_CUDA_TESTS=1"
    );
    let devs = expanse_cuda::open_all().expect("EXPANSE_CUDA_TESTS=1 but no usable CUDA device");
    Some(Arc::clone(&devs[0]))
}

#[test]
#[ignore = "needs a GPU: EXPANSE_CUDA_TESTS=1 and --include-ignored"]
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
#[ignore = "needs a GPU: EXPANSE_CUDA_TESTS=1 and --include-ignored"]
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
#[ignore = "needs a GPU: EXPANSE_CUDA_TESTS=1 and --include-ignored"]
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

/// A trace with five streams (indices 0..=4), replayed as the `expanse
/// replay` command does: index 0 on the legacy default stream, each other
/// index on a real stream created at first use. Blocks move between
/// streams, and each allocation is written and read back on the device.
#[test]
#[ignore = "needs a GPU: EXPANSE_CUDA_TESTS=1 and --include-ignored"]
fn five_stream_trace_replays_on_real_streams() {
    use expanse_device::TraceStreams;
    let Some(d) = gpu() else { return };
    let device = Arc::clone(&d) as Arc<dyn Device>;
    for conf in ["expandable_segments:False", "expandable_segments:True"] {
        let mut streams = TraceStreams::new(Arc::clone(&device));
        let mut a = DeviceAllocator::new(Arc::clone(&device), Config::parse(conf).unwrap());
        let mut live = Vec::new();
        for i in 0..200u64 {
            let index = i % 5;
            let size = (1 + i % 7) << 20;
            let s = streams.get(index).unwrap();
            let p = a.malloc(size, s).unwrap_or_else(|e| panic!("alloc {i} on trace stream {index}: {e}"));
            let data = vec![i as u8; 4096];
            d.write(p, &data).unwrap();
            let mut back = vec![0u8; 4096];
            d.read(p, &mut back).unwrap();
            assert_eq!(back, data, "alloc {i}");
            live.push(p);
            if live.len() > 12 {
                a.free(live.remove(0)).unwrap();
            }
        }
        assert_eq!(streams.created(), 4, "four real streams besides the default one");
        assert_eq!(d.live_streams(), 4);
        for p in live {
            a.free(p).unwrap();
        }
        a.empty_cache().unwrap();
        drop(a);
        streams.release().unwrap();
        assert_eq!(d.live_streams(), 0, "every created stream destroyed");
        println!("five-stream replay, {conf}: ok");
    }
}

/// Issue 11: NCCL saw two ranks on one GPU because expanse's start-up left
/// the last device's context current. Every device is opened and used on a
/// thread whose current context is device 0's primary context (as after
/// `torch.cuda.set_device(0)`); afterwards that context must still be
/// current, and on a thread with none, none.
#[test]
#[ignore = "needs a GPU: EXPANSE_CUDA_TESTS=1 and --include-ignored"]
fn opening_and_using_devices_keeps_the_callers_context() {
    gpu();
    std::thread::spawn(|| {
        let driver = expanse_cuda::sys::Driver::load().expect("driver");
        expanse_cuda::result::init(&driver).expect("cuInit");
        assert!(expanse_cuda::result::get_current(&driver).expect("get").is_null(), "fresh thread has no context");
        let devs = expanse_cuda::open_all().expect("devices");
        let last = devs.last().expect("a device");
        let a = DeviceAllocator::new(Arc::clone(last) as Arc<dyn Device>, Config::default());
        drop(a);
        assert!(expanse_cuda::result::get_current(&driver).expect("get").is_null(), "open/use left a context current");
        let dev0 = expanse_cuda::result::device(&driver, 0).expect("device 0");
        let ctx0 = expanse_cuda::result::primary_ctx_retain(&driver, dev0).expect("retain");
        // SAFETY: retained just above and released below.
        unsafe { expanse_cuda::result::set_current(&driver, ctx0) }.expect("set");
        let mut a = DeviceAllocator::new(Arc::clone(last) as Arc<dyn Device>, Config::default());
        let p = a.malloc(3 << 20, StreamId::DEFAULT).expect("malloc");
        a.free(p).expect("free");
        a.empty_cache().expect("empty_cache");
        drop(a);
        assert_eq!(expanse_cuda::result::get_current(&driver).expect("get"), ctx0, "device 0 must stay current");
        // SAFETY: unbind, then give up the retain taken above.
        unsafe {
            expanse_cuda::result::set_current(&driver, std::ptr::null_mut()).expect("unset");
            expanse_cuda::result::primary_ctx_release(&driver, dev0).expect("release");
        }
    })
    .join()
    .expect("thread");
}
