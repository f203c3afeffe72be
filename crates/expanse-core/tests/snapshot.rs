//! Allocation history and snapshots: hand-worked cases on the strict mock
//! device, and the pickle decoded by an independent reader
//! (`support/unpickle.rs`) that refuses any opcode outside the subset.

#[path = "support/unpickle.rs"]
mod unpickle;

use std::sync::Arc;

use expanse_core::snapshot::BlockState;
use expanse_core::{Action, CachingAllocator, Clock, Config, DeviceAllocator, PoolId, Snapshot, StreamId};
use expanse_device::Device;
use expanse_mock::MockDevice;
use unpickle::Value;

const MIB: u64 = 1 << 20;
const S0: StreamId = StreamId(0);
const S1: StreamId = StreamId(1);

fn mock(capacity: u64) -> Arc<MockDevice> {
    Arc::new(MockDevice::new(capacity, 2 * MIB))
}

/// An allocator recording its history, with a clock that ticks 1 µs per entry.
fn recording(device: &Arc<MockDevice>, config: Config) -> DeviceAllocator {
    let mut a = DeviceAllocator::new(Arc::clone(device) as Arc<dyn Device>, config);
    let mut t = 0;
    a.record_history_with_clock(
        1000,
        Clock::Custom(Box::new(move || {
            t += 1;
            t
        })),
    );
    a
}

fn actions(a: &DeviceAllocator) -> Vec<(Action, u64, u64, u64)> {
    a.history().unwrap().entries().map(|e| (e.action, e.addr, e.size, e.stream.0)).collect()
}

#[test]
fn classic_segments_history_and_snapshot() {
    let d = mock(1 << 30);
    let mut a = recording(&d, Config::pytorch_native());
    let p = a.malloc(3 * MIB, S0).unwrap();
    let q = a.malloc(1000, S1).unwrap();
    a.free(p).unwrap();
    // PyTorch: a 3 MiB request gets a 20 MiB segment, 1000 bytes a 2 MiB
    // small-pool segment and a 1024-byte block.
    assert_eq!(
        actions(&a),
        [
            (Action::SegmentAlloc, p, 20 * MIB, 0),
            (Action::Alloc, p, 3 * MIB, 0),
            (Action::SegmentAlloc, q, 2 * MIB, 1),
            (Action::Alloc, q, 1000, 1),
            (Action::FreeRequested, p, 3 * MIB, 0),
            (Action::FreeCompleted, p, 3 * MIB, 0),
        ]
    );
    let s = a.snapshot();
    assert_eq!(s.trace.iter().map(|e| e.time_us).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(s.trace.last().unwrap().action, Action::Snapshot);
    assert_eq!(s.segments.len(), 2);
    let large = s.segments.iter().find(|g| g.address == p).unwrap();
    assert_eq!((large.total_size, large.allocated_size, large.active_size), (20 * MIB, 0, 0));
    assert_eq!(large.blocks.len(), 1);
    assert_eq!(large.blocks[0].state, BlockState::Inactive);
    assert!(!large.is_expandable);
    let small = s.segments.iter().find(|g| g.address == q).unwrap();
    assert_eq!(small.stream, S1);
    assert_eq!((small.total_size, small.allocated_size, small.requested_size), (2 * MIB, 1024, 1000));
    let states: Vec<_> = small.blocks.iter().map(|b| (b.address, b.size, b.requested_size, b.state)).collect();
    assert_eq!(
        states,
        [(q, 1024, 1000, BlockState::ActiveAllocated), (q + 1024, 2 * MIB - 1024, 0, BlockState::Inactive)]
    );
    a.empty_cache().unwrap();
    assert!(actions(&a).contains(&(Action::SegmentFree, p, 20 * MIB, 0)));
    assert_eq!(a.snapshot().segments.len(), 1);
    a.free(q).unwrap();
}

#[test]
fn a_private_pools_segment_is_recorded() {
    // Private pools (CUDA graphs) take classic segments of their own even
    // under expanse's expandable default: 3 MiB gets a 20 MiB segment.
    let d = mock(1 << 30);
    let mut a = recording(&d, Config::default());
    let pool = PoolId(7, 0);
    a.begin_allocate_to_pool(pool, S0).unwrap();
    let p = a.malloc(3 * MIB, S0).unwrap();
    a.end_allocate_to_pool(pool).unwrap();
    assert_eq!(actions(&a), [(Action::SegmentAlloc, p, 20 * MIB, 0), (Action::Alloc, p, 3 * MIB, 0)]);
    let shared = a.malloc(3 * MIB, S0).unwrap();
    let s = a.snapshot();
    let seg = s.segments.iter().find(|g| g.address == p).unwrap();
    assert_eq!((seg.total_size, seg.requested_size, seg.is_expandable), (20 * MIB, 3 * MIB, false));
    // PyTorch's segment_pool_id: the pool's id, (0, 0) for the shared pools.
    assert_eq!(seg.pool_id, pool);
    let other = s.segments.iter().find(|g| g.address <= shared && shared < g.address + g.total_size).unwrap().clone();
    assert_eq!(other.pool_id, PoolId(0, 0));
    let v = decode(&Snapshot::from_devices(vec![s]));
    let ids: Vec<_> =
        v.at("segments").list().iter().map(|g| (g.at("address").int(), g.at("segment_pool_id").clone())).collect();
    assert!(ids.contains(&(i128::from(p), Value::Tuple(vec![Value::Int(7), Value::Int(0)]))), "{ids:?}");
    assert!(ids.contains(&(i128::from(other.address), Value::Tuple(vec![Value::Int(0), Value::Int(0)]))), "{ids:?}");
    a.free(p).unwrap();
    a.free(shared).unwrap();
    a.release_pool(pool).unwrap();
    // Released and wholly free: the segment is the shared cache's now.
    let s = a.snapshot();
    assert_eq!(s.segments.iter().find(|g| g.address == p).unwrap().pool_id, PoolId(0, 0));
    a.empty_cache().unwrap();
    assert!(actions(&a).contains(&(Action::SegmentFree, p, 20 * MIB, 0)));
}

#[test]
fn an_expandable_segment_is_one_segment_per_mapped_run() {
    let d = mock(1 << 30);
    let mut a = recording(&d, Config::pytorch_expandable());
    let x = a.malloc(20 * MIB, S0).unwrap();
    let y = a.malloc(20 * MIB, S0).unwrap();
    let z = a.malloc(20 * MIB, S0).unwrap();
    // PyTorch's 20 MiB pages, one per request, in address order.
    assert_eq!((y, z), (x + 20 * MIB, x + 40 * MIB));
    a.free(y).unwrap();
    a.empty_cache().unwrap();
    let mib20 = 20 * MIB;
    assert_eq!(
        actions(&a),
        [
            (Action::SegmentMap, x, mib20, 0),
            (Action::Alloc, x, mib20, 0),
            (Action::SegmentMap, y, mib20, 0),
            (Action::Alloc, y, mib20, 0),
            (Action::SegmentMap, z, mib20, 0),
            (Action::Alloc, z, mib20, 0),
            (Action::FreeRequested, y, mib20, 0),
            (Action::FreeCompleted, y, mib20, 0),
            (Action::SegmentUnmap, y, mib20, 0),
        ]
    );
    let s = a.snapshot();
    let runs: Vec<_> = s.segments.iter().map(|g| (g.address, g.total_size, g.is_expandable, g.blocks.len())).collect();
    assert_eq!(runs, [(x, mib20, true, 1), (z, mib20, true, 1)]);
    a.free(x).unwrap();
    a.free(z).unwrap();
}

#[test]
fn a_block_waiting_for_stream_events_is_pending_free() {
    let d = mock(1 << 30);
    let mut a = recording(&d, Config::pytorch_native());
    d.hold_events(true);
    let p = a.malloc(4 * MIB, S0).unwrap();
    a.record_stream(p, StreamId(7)).unwrap();
    a.free(p).unwrap();
    let s = a.snapshot();
    let seg = s.segments.iter().find(|g| g.address == p).unwrap();
    assert_eq!(seg.blocks[0].state, BlockState::ActivePendingFree);
    assert_eq!(seg.blocks[0].requested_size, 4 * MIB);
    assert_eq!((seg.allocated_size, seg.active_size), (0, 4 * MIB));
    assert!(!actions(&a).iter().any(|e| e.0 == Action::FreeCompleted));
    d.complete_events();
    // Events are processed at the next malloc: the free completes then.
    let q = a.malloc(1000, S0).unwrap();
    assert!(actions(&a).contains(&(Action::FreeCompleted, p, 4 * MIB, 0)));
    a.free(q).unwrap();
}

#[test]
fn history_is_off_by_default_and_bounded_when_on() {
    let d = mock(1 << 30);
    let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, Config::pytorch_native());
    let p = a.malloc(MIB, S0).unwrap();
    assert!(a.history().is_none());
    assert!(a.snapshot().trace.is_empty());
    a.record_history(Some(3));
    for _ in 0..4 {
        let q = a.malloc(1000, S0).unwrap();
        a.free(q).unwrap();
    }
    let h = a.history().unwrap();
    assert_eq!(h.len(), 3);
    let kinds: Vec<Action> = h.entries().map(|e| e.action).collect();
    assert_eq!(kinds, [Action::Alloc, Action::FreeRequested, Action::FreeCompleted]);
    a.record_history(None);
    assert!(a.history().is_none());
    a.free(p).unwrap();
}

#[test]
fn out_of_memory_is_recorded_with_the_free_memory() {
    let d = mock(64 * MIB);
    let mut a = recording(&d, Config::pytorch_native());
    assert!(a.malloc(100 * MIB, S0).is_err());
    let oom: Vec<_> = actions(&a).into_iter().filter(|e| e.0 == Action::Oom).collect();
    assert_eq!(oom, [(Action::Oom, 64 * MIB, 100 * MIB, 0)]);
    let v = decode(&Snapshot::from_devices(vec![a.snapshot()]));
    let e = &v.at("device_traces").list()[0].list()[0];
    assert_eq!(e.at("action").str(), "oom");
    assert_eq!(e.at("device_free").int(), i128::from(64 * MIB));
}

/// Decode with the independent reader; every opcode must be in the subset.
fn decode(s: &Snapshot) -> Value {
    let bytes = s.to_pickle();
    let (v, counts) = unpickle::load(&bytes).unwrap_or_else(|e| panic!("snapshot pickle: {e}"));
    assert!(counts.contains_key("PROTO") && counts.contains_key("STOP"));
    v
}

fn keys(names: &[&str]) -> std::collections::BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_pickle_has_pytorchs_structure() {
    let d = mock(1 << 30);
    let mut a = recording(&d, Config::pytorch_expandable());
    let x = a.malloc(30 * MIB, S0).unwrap();
    let y = a.malloc(1000, S1).unwrap();
    let snap = Snapshot::from_devices(vec![a.snapshot()]);
    let v = decode(&snap);
    assert_eq!(v.keys(), keys(&["segments", "device_traces"]));
    let segs = v.at("segments").list();
    assert_eq!(segs.len(), snap.segments.len());
    for (g, want) in segs.iter().zip(&snap.segments) {
        assert_eq!(
            g.keys(),
            keys(&[
                "device",
                "address",
                "total_size",
                "allocated_size",
                "active_size",
                "requested_size",
                "stream",
                "segment_type",
                "segment_pool_id",
                "is_expandable",
                "frames",
                "blocks"
            ])
        );
        assert_eq!(g.at("address").int(), i128::from(want.address));
        assert_eq!(g.at("is_expandable"), &Value::Bool(true));
        assert_eq!(g.at("segment_pool_id"), &Value::Tuple(vec![Value::Int(0), Value::Int(0)]));
        assert_eq!(g.at("frames"), &Value::List(vec![]));
        let mut at = g.at("address").int();
        for b in g.at("blocks").list() {
            assert_eq!(b.keys(), keys(&["address", "size", "requested_size", "state", "frames"]));
            assert_eq!(b.at("address").int(), at, "blocks cover the segment in order");
            at += b.at("size").int();
        }
        assert_eq!(at, g.at("address").int() + g.at("total_size").int());
    }
    let small = segs.iter().find(|g| g.at("segment_type").str() == "small").unwrap();
    assert_eq!(small.at("stream").int(), 1);
    assert_eq!(small.at("blocks").list()[0].at("state").str(), "active_allocated");
    assert_eq!(small.at("requested_size").int(), 1000);
    let traces = v.at("device_traces").list();
    assert_eq!(traces.len(), 1);
    let names: Vec<&str> = traces[0].list().iter().map(|e| e.at("action").str()).collect();
    assert_eq!(names, ["segment_map", "alloc", "segment_map", "alloc", "snapshot"]);
    for e in traces[0].list() {
        assert_eq!(e.keys(), keys(&["action", "addr", "size", "stream", "time_us", "frames"]));
    }
    assert_eq!(traces[0].list()[1].at("addr").int(), i128::from(x));
    assert_eq!(traces[0].list()[3].at("size").int(), 1000);
    a.free(x).unwrap();
    a.free(y).unwrap();
}

#[test]
fn every_device_has_its_trace() {
    let d0: Arc<dyn Device> = mock(1 << 30);
    let d1: Arc<dyn Device> = Arc::new(MockDevice::new(1 << 30, 2 * MIB).with_ordinal(1));
    let c = CachingAllocator::new(vec![d0, d1], Config::pytorch_native());
    c.record_history(Some(100)).unwrap();
    let p = c.malloc(1, 5 * MIB, S0).unwrap();
    let v = decode(&c.snapshot().unwrap());
    let traces = v.at("device_traces").list();
    let names =
        |i: usize| -> Vec<String> { traces[i].list().iter().map(|e| e.at("action").str().to_owned()).collect() };
    assert_eq!(names(0), ["snapshot"]);
    assert_eq!(names(1), ["segment_alloc", "alloc", "snapshot"]);
    let segs = v.at("segments").list();
    assert_eq!(segs.len(), 1);
    assert_eq!(segs[0].at("device").int(), 1);
    c.free(1, p).unwrap();
}

/// After random operations in every mode, the snapshot agrees with the
/// statistics, and the history replayed from the start agrees with the
/// snapshot: the bytes mapped by its segment events are the reserved
/// bytes, and its live allocations are the active_allocated blocks.
#[test]
fn history_and_snapshot_agree_with_the_state_after_random_operations() {
    use expanse_core::ops::{random_ops, Runner};
    use std::collections::BTreeMap;
    for config in [Config::pytorch_native(), Config::pytorch_expandable(), Config::default()] {
        let d = mock(2 << 30);
        d.hold_events(true);
        let mut a = recording(&d, config.clone());
        a.record_history(Some(1 << 24));
        let mut r = Runner::default();
        for (i, op) in random_ops(13, 3000, 200 * MIB, true).into_iter().enumerate() {
            r.step(&mut a, op).unwrap();
            if i % 5 == 0 {
                d.complete_events();
            }
            if i % 250 != 0 {
                continue;
            }
            let s = a.snapshot();
            let st = a.stats();
            let sum = |f: fn(&expanse_core::snapshot::SegmentInfo) -> u64| s.segments.iter().map(f).sum::<u64>() as i64;
            assert_eq!(sum(|g| g.total_size), st.reserved_bytes.all().current, "{config:?} op {i}");
            assert_eq!(sum(|g| g.allocated_size), st.allocated_bytes.all().current);
            assert_eq!(sum(|g| g.requested_size), st.requested_bytes.all().current);
            assert_eq!(sum(|g| g.active_size), st.active_bytes.all().current);
            let mut mapped: i64 = 0;
            let mut live = BTreeMap::new();
            for e in &s.trace {
                match e.action {
                    Action::SegmentAlloc | Action::SegmentMap => mapped += e.size as i64,
                    Action::SegmentFree | Action::SegmentUnmap => mapped -= e.size as i64,
                    Action::Alloc => assert!(live.insert(e.addr, e.size).is_none(), "alloc of a live address"),
                    Action::FreeRequested => assert_eq!(live.remove(&e.addr), Some(e.size)),
                    _ => {}
                }
            }
            assert_eq!(mapped, st.reserved_bytes.all().current, "{config:?} op {i}");
            let allocated: BTreeMap<u64, u64> = s
                .segments
                .iter()
                .flat_map(|g| &g.blocks)
                .filter(|b| b.state == BlockState::ActiveAllocated)
                .map(|b| (b.address, b.requested_size))
                .collect();
            assert_eq!(live, allocated, "{config:?} op {i}");
        }
        d.complete_events();
        r.finish(&mut a).unwrap();
    }
}
