//! Failure injection along every trace in traces/, in every mode, for
//! every kind of driver call: after each failure the caller gets a clean
//! error (driver error or out-of-memory), the allocator's invariants hold,
//! the next allocations work, and after teardown the mock's ledger is
//! empty (no reservation, page, malloc or event left).
//!
//! Sampling (the corpus has ~4 million events): the first
//! `EXPANSE_FAULT_EVENTS` events of each trace (default 3000), and for
//! each call kind the failure lands at the 1st, 2nd, 3rd call and at
//! `EXPANSE_FAULT_SAMPLES` (default 4) evenly spaced calls up to the last
//! one made there. `EXPANSE_FAULT_EVENTS=0` replays whole traces;
//! `EXPANSE_FAULT_SAMPLES=0` fails at every call (exhaustive, hours).
//!
//! The traces have no `record_stream` or `empty_cache`; the replay adds
//! them (every 7th allocation is also used on the next stream, every
//! 997th event empties the cache, events are held and completed every
//! 13th event) so that event record / query / release, stream and device
//! synchronization are reached too.

#[allow(dead_code)]
#[path = "../src/trace.rs"]
mod trace;

use std::collections::HashMap;
use std::sync::Arc;

use expanse_core::{AllocError, Config, DeviceAllocator, DeviceError, StreamId};
use expanse_device::Device;
use expanse_mock::{Call, MockDevice};

/// Every driver call kind the allocator makes: the mock's whole list but
/// stream creation (the replay's, not the allocator's) and test copies.
fn call_kinds() -> Vec<Call> {
    Call::ALL.into_iter().filter(|c| !matches!(c, Call::CreateStream | Call::DestroyStream | Call::Copy)).collect()
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn modes() -> [(&'static str, Config); 3] {
    [
        ("classic", Config::pytorch_native()),
        ("expanse", Config::default()),
        ("pytorch_expandable", Config::pytorch_expandable()),
    ]
}

/// What one replay saw.
#[derive(Default)]
struct Outcome {
    /// Calls of each kind before teardown.
    calls: HashMap<Call, u64>,
    /// Operations that returned the injected error (or out-of-memory).
    failed_ops: u64,
}

/// Replay `events` on a fresh mock with `fail` injected; every check of
/// the module's contract is asserted here.
fn replay(events: &[trace::Event], config: &Config, fail: Option<(Call, u64)>, what: &str) -> Outcome {
    let d = Arc::new(MockDevice::new(143771 << 20, 2 << 20));
    d.hold_events(true);
    if let Some((call, n)) = fail {
        d.fail_nth(call, n, DeviceError::Driver { call: call.name(), code: 999 });
    }
    let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, config.clone());
    let mut live: HashMap<u64, u64> = HashMap::new();
    let mut out = Outcome::default();
    let mut after_failure = None;
    for (i, ev) in events.iter().enumerate() {
        let r = match *ev {
            trace::Event::Alloc { id, size, stream } => a.malloc(size, StreamId(stream)).map(|p| {
                live.insert(id, p);
                if id % 7 == 0 {
                    a.record_stream(p, StreamId(stream + 1)).unwrap();
                }
            }),
            trace::Event::Free { id } => match live.get(&id) {
                Some(&p) => {
                    let r = a.free(p);
                    if a.allocation_size(p).is_none() {
                        live.remove(&id);
                    }
                    r
                }
                None => Ok(()), // its allocation failed
            },
        };
        let r = r.and_then(|()| if i % 997 == 996 { a.empty_cache() } else { Ok(()) });
        if i % 13 == 12 {
            d.complete_events();
        }
        match r {
            Ok(()) => {}
            Err(AllocError::Device(DeviceError::Driver { code: 999, .. }) | AllocError::OutOfMemory { .. }) => {
                out.failed_ops += 1;
                after_failure.get_or_insert(i);
            }
            Err(e) => panic!("{what}: event {i}: not a clean error: {e}"),
        }
        if after_failure.is_some() {
            a.check_invariants().unwrap_or_else(|e| panic!("{what}: event {i}: {e}"));
        }
        if after_failure.is_some_and(|f| i > f + 200) {
            break;
        }
    }
    assert!(d.violations().is_empty(), "{what}: {:?}", d.violations());
    a.check_invariants().unwrap_or_else(|e| panic!("{what}: {e}"));
    // The next allocation works (at the second try if the injected failure
    // was still to come), then everything is given back; the failure may
    // land here too.
    let clean = |r: Result<(), AllocError>, step: &str| match r {
        Ok(()) => false,
        Err(AllocError::Device(DeviceError::Driver { code: 999, .. }) | AllocError::OutOfMemory { .. }) => true,
        Err(e) => panic!("{what}: {step}: not a clean error: {e}"),
    };
    let mut next = || a.malloc(1 << 20, StreamId(0)).map(|p| live.insert(u64::MAX, p)).map(|_| ());
    if clean(next(), "next allocation") {
        out.failed_ops += 1;
        clean(next(), "next allocation, again").then(|| panic!("{what}: the allocation after the failure failed"));
    }
    for (_, p) in std::mem::take(&mut live) {
        if clean(a.free(p), "free") {
            out.failed_ops += 1;
            assert_eq!(a.allocation_size(p), None, "{what}: a failed free leaves the block freed");
        }
    }
    if clean(a.empty_cache(), "empty_cache") {
        out.failed_ops += 1;
        a.empty_cache().unwrap_or_else(|e| panic!("{what}: empty_cache again: {e}"));
    }
    a.check_invariants().unwrap_or_else(|e| panic!("{what}: {e}"));
    out.calls = call_kinds().into_iter().map(|k| (k, d.calls(k))).collect();
    if let Some((call, _)) = fail {
        d.clear_failure(call);
    }
    drop(a);
    assert!(d.leaks().is_empty(), "{what}: leaked {:?}", d.leaks());
    assert_eq!(d.live_events(), 0, "{what}: events leaked");
    out
}

/// The call numbers to fail for a kind made `count` times.
fn samples(count: u64, spaced: u64) -> Vec<u64> {
    if spaced == 0 {
        return (1..=count).collect();
    }
    let mut v: Vec<u64> =
        (1..=3.min(count)).chain((1..=spaced).map(|k| count * k / spaced)).filter(|&n| n > 0).collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn injected_failures_along_every_trace_in_every_mode() {
    let limit = env("EXPANSE_FAULT_EVENTS", 3000);
    let spaced = env("EXPANSE_FAULT_SAMPLES", 4) as u64;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".trace.csv"))
        .filter(|p| {
            std::env::var("EXPANSE_FAULT_TRACE").is_ok_and(|t| p.to_string_lossy().contains(&t))
                || std::env::var("EXPANSE_FAULT_TRACE").is_err()
        })
        .collect();
    paths.sort();
    assert!(paths.len() >= 16 || std::env::var("EXPANSE_FAULT_TRACE").is_ok(), "traces/ holds {} traces", paths.len());
    let mut injected: HashMap<Call, u64> = HashMap::new();
    let mut runs = 0u64;
    for path in &paths {
        let t: Vec<trace::Event> = trace::open(path).unwrap().map(|e| e.unwrap().1).collect();
        let events = if limit == 0 { &t[..] } else { &t[..t.len().min(limit)] };
        for (mode, config) in modes() {
            let name = format!("{} / {mode}", path.file_name().unwrap().to_string_lossy());
            let clean = replay(events, &config, None, &name);
            assert_eq!(clean.failed_ops, 0, "{name}: failed without injection");
            for kind in call_kinds() {
                for n in samples(clean.calls[&kind], spaced) {
                    let o = replay(events, &config, Some((kind, n)), &format!("{name}: {kind:?} #{n}"));
                    // The injected failure was seen by a caller (or
                    // absorbed: a failed query is retried at the next malloc).
                    *injected.entry(kind).or_default() += 1;
                    runs += 1;
                    let _ = o;
                }
            }
        }
    }
    let mut kinds: Vec<_> = injected.into_iter().collect();
    kinds.sort_by_key(|(k, _)| k.name());
    eprintln!(
        "fault injection: {runs} failing replays over {} traces x 3 modes; per call kind: {kinds:?}",
        paths.len()
    );
    for kind in call_kinds() {
        assert!(kinds.iter().any(|(k, n)| *k == kind && *n > 0), "{kind:?} was never reached");
    }
}
