//! Reliability: driver failures at awkward moments, hostile configuration
//! and misuse leave the allocator consistent, with nothing lost.

use std::sync::Arc;

use expanse_core::{AllocError, Config, DeviceAllocator, StreamId};
use expanse_device::{Device, DeviceError};
use expanse_mock::{Call, MockDevice};

const MIB: u64 = 1 << 20;

fn modes() -> [(&'static str, Config); 3] {
    [
        ("classic", Config::parse("expandable_segments:False").unwrap()),
        ("expanse", Config::default()),
        ("pytorch_expandable", Config::pytorch_expandable()),
    ]
}

/// Issue 10, item 1: a failed wait while lending a block across streams
/// left the block out of its pool.
#[test]
fn failed_wait_during_cross_stream_reuse_loses_nothing() {
    for (name, config) in modes() {
        let d = Arc::new(MockDevice::new(1 << 30, 2 * MIB));
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, config);
        let p = a.malloc(2 * MIB, StreamId(0)).unwrap();
        a.free(p).unwrap();
        d.fail_nth(Call::WaitEvent, 1, DeviceError::Driver { call: "wait_event", code: 700 });
        let r = a.malloc(2 * MIB, StreamId(1));
        a.check_invariants().unwrap_or_else(|e| panic!("{name}: {e}"));
        let waits = d.calls(Call::WaitEvent);
        match r {
            Err(AllocError::Device(DeviceError::Driver { code: 700, .. })) => assert_eq!(waits, 1, "{name}"),
            Ok(q) => {
                // No cross-stream reuse in this mode: no wait was asked.
                assert_eq!(waits, 0, "{name}");
                a.free(q).unwrap();
            }
            Err(e) => panic!("{name}: {e}"),
        }
        // The next allocation works and the cached block is still there.
        let q = a.malloc(2 * MIB, StreamId(1)).unwrap();
        a.free(q).unwrap();
        a.check_invariants().unwrap();
        a.empty_cache().unwrap();
        assert_eq!(d.used(), 0, "{name}");
        assert!(d.violations().is_empty(), "{name}: {:?}", d.violations());
    }
}
