//! Marks (`allocator/marks.rs`): a stream that reuses memory another
//! stream freed waits for that stream's work up to the free, on an event
//! recorded at the free, and not at all once that event completed; never
//! on an event recorded at the reuse, which would also order it after all
//! the work the other stream queued since (a prefetching side stream's
//! next upload, say). On the strict mock device, whose ordering log says
//! when each waited or completed event was recorded; invariants checked
//! after every step.

use std::sync::Arc;

use expanse_core::{Config, DeviceAllocator, StreamId};
use expanse_device::Device;
use expanse_mock::{Call, MockDevice, Ordering};

const MIB: u64 = 1 << 20;
const S0: StreamId = StreamId(0);
const S1: StreamId = StreamId(1);

fn on_mock(conf: &str) -> (Arc<MockDevice>, DeviceAllocator) {
    let mock = Arc::new(MockDevice::new(1 << 30, 2 * MIB));
    let a = DeviceAllocator::new(Arc::clone(&mock) as Arc<dyn Device>, Config::parse(conf).unwrap());
    (mock, a)
}

fn ok(a: &DeviceAllocator, d: &MockDevice) {
    a.check_invariants().unwrap();
    assert!(d.violations().is_empty(), "device contract violated: {:?}", d.violations());
}

/// The waits in the ordering log: (waiter, on, log length when the event
/// waited on was recorded).
fn waits(d: &MockDevice) -> Vec<(StreamId, StreamId, usize)> {
    d.ordering()
        .into_iter()
        .filter_map(|o| match o {
            Ordering::Wait { waiter, on, recorded_at } => Some((waiter, on, recorded_at)),
            _ => None,
        })
        .collect()
}

/// Free `ptrs`, let every event complete, empty the cache: nothing is
/// left, every mark released.
fn release_all(a: &mut DeviceAllocator, d: &MockDevice, ptrs: impl IntoIterator<Item = u64>) {
    for p in ptrs {
        a.free(p).unwrap();
    }
    d.hold_events(false);
    d.complete_events();
    a.empty_cache().unwrap();
    ok(a, d);
    assert_eq!(d.live_events(), 0, "every mark released");
}

/// S1 borrows a block of S0's segment, frees it, and S0 takes it back: the
/// first time ordered by an event recorded at the reuse (nobody had reused
/// S1's memory yet, so S1's free recorded nothing). Returns the block's
/// address; from then on S1 marks its frees.
fn s0_reused_s1s_memory(a: &mut DeviceAllocator, d: &MockDevice) -> u64 {
    let x = a.malloc(2 * MIB, S0).unwrap();
    a.free(x).unwrap();
    let y = a.malloc(2 * MIB, S1).unwrap();
    assert_eq!(y, x, "S0's free block lent to S1");
    let records = d.calls(Call::RecordEvent);
    a.free(y).unwrap();
    assert_eq!(d.calls(Call::RecordEvent), records, "no mark: nobody reused S1's memory yet");
    let z = a.malloc(2 * MIB, S0).unwrap();
    assert_eq!(z, x);
    assert_eq!(d.calls(Call::RecordEvent), records + 1, "an event recorded on S1 at the reuse");
    a.free(z).unwrap();
    ok(a, d);
    x
}

/// Once S0 reused S1's memory, S1's next free of a borrowed block records
/// an event, and S0 taking the memory back while S1's work is still
/// running waits on that event: no event is recorded at the reuse.
#[test]
fn a_reuse_waits_on_the_event_of_the_free() {
    let (d, mut a) = on_mock("");
    d.hold_events(true);
    let x = s0_reused_s1s_memory(&mut a, &d);
    let y = a.malloc(2 * MIB, S1).unwrap();
    assert_eq!(y, x, "lent to S1 again");
    let records = d.calls(Call::RecordEvent);
    let at_free = d.ordering().len();
    a.free(y).unwrap();
    assert_eq!(d.calls(Call::RecordEvent), records + 1, "one event recorded on S1 at its free");
    let z = a.malloc(2 * MIB, S0).unwrap();
    assert_eq!(z, x);
    ok(&a, &d);
    assert_eq!(waits(&d).last(), Some(&(S0, S1, at_free)), "S0 waits on the event recorded at S1's free");
    assert_eq!(d.calls(Call::RecordEvent), records + 1, "no event recorded at the reuse");
    release_all(&mut a, &d, [z]);
}

/// Once the event recorded at S1's free completed, S0 reuses the memory
/// with no wait at all, and the completed mark is released.
#[test]
fn a_completed_mark_means_no_wait() {
    let (d, mut a) = on_mock("");
    let x = s0_reused_s1s_memory(&mut a, &d);
    let y = a.malloc(2 * MIB, S1).unwrap();
    assert_eq!(y, x);
    a.free(y).unwrap();
    let before = waits(&d).len();
    // The mock completes every event at once.
    let z = a.malloc(2 * MIB, S0).unwrap();
    assert_eq!(z, x);
    assert_eq!(waits(&d).len(), before, "no wait: S1's work up to its free is done");
    assert!(
        d.ordering().iter().any(|o| matches!(o, Ordering::Completed { on, .. } if *on == S1)),
        "the allocator asked whether S1's mark completed"
    );
    assert_eq!(d.live_events(), 0, "the completed mark was released");
    a.free(z).unwrap();
    ok(&a, &d);
}

/// A stream whose memory no other stream reuses records no mark: one
/// thread on a stream of its own, borrowing from another stream's segment,
/// frees without an event (each would cost a driver call).
#[test]
fn no_mark_without_reuse_by_another_stream() {
    let (d, mut a) = on_mock("");
    let x = a.malloc(64 * MIB, S0).unwrap();
    a.free(x).unwrap();
    let (records, waited) = (d.calls(Call::RecordEvent), waits(&d).len());
    for _ in 0..100 {
        let p = a.malloc(2 * MIB, S1).unwrap();
        a.free(p).unwrap();
    }
    let new_waits = waits(&d).len() - waited;
    assert!(new_waits >= 1, "S1 borrowed S0's memory");
    assert_eq!(
        d.calls(Call::RecordEvent) - records,
        new_waits as u64,
        "every event recorded was one waited on at a reuse: no mark"
    );
    ok(&a, &d);
}

/// A stream keeps a bounded number of marks: 200 borrowed frees while
/// nothing completes hold a bounded number of events. A block whose mark
/// was dropped is still ordered, by the oldest mark kept, which covers it
/// and every block freed before; each later block waits on its own mark,
/// and no event is recorded at the reuse.
#[test]
fn marks_are_bounded_and_reuse_stays_ordered() {
    let (d, mut a) = on_mock("");
    d.hold_events(true);
    s0_reused_s1s_memory(&mut a, &d);
    // 400 blocks of S0's segment; S1 borrows the 200 even ones, which its
    // odd neighbours keep apart, and frees them in address order.
    let own: Vec<u64> = (0..400).map(|_| a.malloc(2 * MIB, S0).unwrap()).collect();
    for p in own.iter().step_by(2) {
        a.free(*p).unwrap();
    }
    let lent: Vec<u64> = (0..200).map(|_| a.malloc(2 * MIB, S1).unwrap()).collect();
    let mut holes: Vec<u64> = own.iter().step_by(2).copied().collect();
    let mut sorted = lent.clone();
    sorted.sort_unstable();
    holes.sort_unstable();
    assert_eq!(sorted, holes, "S1 borrowed S0's free blocks");
    for p in &sorted {
        a.free(*p).unwrap();
    }
    ok(&a, &d);
    assert!(d.live_events() <= 100, "{} events held for 200 frees", d.live_events());
    // S0 takes them back, lowest (freed first, its mark dropped) first.
    let (records, before) = (d.calls(Call::RecordEvent), waits(&d).len());
    let back: Vec<u64> = (0..200).map(|_| a.malloc(2 * MIB, S0).unwrap()).collect();
    ok(&a, &d);
    let new_waits = &waits(&d)[before..];
    assert!(new_waits.iter().all(|&(w, on, _)| (w, on) == (S0, S1)), "{new_waits:?}");
    assert!(!new_waits.is_empty() && new_waits.len() <= 65, "{} waits for 200 reuses", new_waits.len());
    assert_eq!(d.calls(Call::RecordEvent), records, "no event recorded at the reuse");
    release_all(&mut a, &d, back.into_iter().chain(own.iter().skip(1).step_by(2).copied()));
}

/// PyTorch's modes never reuse across streams and record no mark.
#[test]
fn pytorch_modes_record_no_mark() {
    for conf in ["expandable_segments:False", "expandable_segments:True,pytorch_compat:True"] {
        let (d, mut a) = on_mock(conf);
        let x = a.malloc(2 * MIB, S0).unwrap();
        a.record_stream(x, S1).unwrap();
        a.free(x).unwrap();
        // One event: on S1, for record_stream; none on S0.
        assert_eq!(d.calls(Call::RecordEvent), 1, "{conf}");
        let y = a.malloc(2 * MIB, S1).unwrap();
        assert_ne!(y, x, "{conf}: no reuse across streams");
        a.free(y).unwrap();
        assert_eq!(d.calls(Call::RecordEvent), 1, "{conf}");
        ok(&a, &d);
    }
}

/// A block `record_stream`ed to S1 and freed on S0, once S1 reused S0's
/// memory: the default also marks S0 at the user's free, so S1 reusing the
/// block later waits on that event (or not at all once it completed), not
/// on one recorded at the reuse.
#[test]
fn record_stream_frees_mark_their_own_stream() {
    let (d, mut a) = on_mock("");
    d.hold_events(true);
    let w = a.malloc(2 * MIB, S0).unwrap();
    a.free(w).unwrap();
    let v = a.malloc(2 * MIB, S1).unwrap();
    assert_eq!(v, w, "S1 reuses S0's memory");
    let x = a.malloc(2 * MIB, S0).unwrap();
    a.record_stream(x, S1).unwrap();
    let records = d.calls(Call::RecordEvent);
    let at_free = d.ordering().len();
    a.free(x).unwrap();
    assert_eq!(d.calls(Call::RecordEvent), records + 2, "an event on S1 (record_stream) and a mark on S0");
    let before = waits(&d).len();
    d.complete_events();
    let y = a.malloc(2 * MIB, S1).unwrap();
    assert_eq!(y, x, "lent to S1 once its event completed");
    assert_eq!(waits(&d).len(), before, "the mark on S0, recorded at the free, completed: no wait");
    assert!(d
        .ordering()
        .iter()
        .any(|o| matches!(*o, Ordering::Completed { on, recorded_at } if on == S0 && recorded_at == at_free)));
    release_all(&mut a, &d, [v, y]);
}
