//! Fuzz the allocator with random operation sequences (the decoder and
//! checks of the property tests). Run: `cargo +nightly fuzz run ops`.
#![no_main]

use std::sync::Arc;

use expanse_core::ops::{decode, Runner};
use expanse_core::{Config, DeviceAllocator};
use expanse_device::Device;
use expanse_mock::MockDevice;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let config = match mode % 3 {
        0 => Config::parse("expandable_segments:False").unwrap(),
        1 => Config::default(),
        _ => Config::pytorch_expandable(),
    };
    let d = Arc::new(MockDevice::new(512 << 20, 2 << 20));
    let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, config);
    let mut r = Runner::default();
    for op in decode(rest, 300 << 20) {
        if let Err(e) = r.step(&mut a, op) {
            panic!("{op:?}: {e}");
        }
        assert!(d.violations().is_empty(), "{:?}", d.violations());
    }
    r.finish(&mut a).unwrap();
});
