//! Replaying a trace through the allocator.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use expanse_core::{AllocError, Config, DeviceAllocator, PageOps};
use expanse_device::{Device, TraceStreams};

use crate::trace::{Event, TraceError};

/// What a replay measured.
#[derive(Clone, Debug)]
pub struct Report {
    pub events: usize,
    /// Stream indices seen (highest + 1).
    pub streams: u64,
    pub peak_requested_bytes: u64,
    pub peak_allocated_bytes: u64,
    pub peak_reserved_bytes: u64,
    /// Events replayed when reserved bytes first reached their peak (the
    /// peak was reached during that event; 0 when nothing was reserved),
    /// and that event's trace line.
    pub peak_reserved_event: usize,
    pub peak_reserved_line: usize,
    /// The bytes that event requested, when it was an allocation.
    pub peak_request_bytes: Option<u64>,
    pub final_reserved_bytes: u64,
    /// Mean of reserved bytes over the events replayed, each event weighing
    /// the same (the trace has no clock: "time" is the event index),
    /// sampled after every event.
    pub time_weighted_reserved_bytes: u64,
    pub num_alloc_retries: u64,
    pub num_ooms: u64,
    pub seconds: f64,
    pub pages: PageOps,
    /// Event waits that ordered a block's reuse after another stream's
    /// work (each an event recorded, waited on and released).
    pub cross_stream_waits: u64,
    /// The OOM that ended the replay early: (trace line, message).
    pub oom: Option<(usize, String)>,
}

impl Report {
    /// Peak reserved over peak requested (1.0 is the floor); none when
    /// nothing was requested (only size-0 allocations, or none), where no
    /// ratio means anything though memory may be reserved.
    pub fn fragmentation(&self) -> Option<f64> {
        (self.peak_requested_bytes > 0).then(|| self.peak_reserved_bytes as f64 / self.peak_requested_bytes as f64)
    }

    /// The fragmentation for people: four decimals, or why there is none.
    pub fn fragmentation_text(&self) -> String {
        match self.fragmentation() {
            Some(f) => format!("{f:.4}"),
            None => format!("n/a (nothing requested, {} bytes reserved)", self.peak_reserved_bytes),
        }
    }

    /// Nanoseconds per trace event.
    pub fn ns_per_event(&self) -> f64 {
        if self.events == 0 {
            0.0
        } else {
            self.seconds * 1e9 / self.events as f64
        }
    }

    /// The report as one JSON object.
    pub fn to_json(&self, trace: &str, backend: &str, conf: &str) -> serde_json::Value {
        serde_json::json!({
            "trace": trace,
            "backend": backend,
            "conf": conf,
            "events": self.events,
            "peak_requested_bytes": self.peak_requested_bytes,
            "peak_allocated_bytes": self.peak_allocated_bytes,
            "peak_reserved_bytes": self.peak_reserved_bytes,
            "peak_reserved_event": self.peak_reserved_event,
            "peak_reserved_line": self.peak_reserved_line,
            "peak_request_bytes": self.peak_request_bytes,
            "final_reserved_bytes": self.final_reserved_bytes,
            "time_weighted_reserved_bytes": self.time_weighted_reserved_bytes,
            "fragmentation": self.fragmentation(),
            "num_alloc_retries": self.num_alloc_retries,
            "num_ooms": self.num_ooms,
            "seconds": self.seconds,
            "ns_per_event": self.ns_per_event(),
            "pages_created": self.pages.created,
            "pages_mapped": self.pages.mapped,
            "pages_moved": self.pages.moved,
            "pages_unmapped": self.pages.unmapped,
            "pages_released": self.pages.released,
            "access_sets": self.pages.access_sets,
            "stream_syncs": self.pages.stream_syncs,
            "cross_stream_waits": self.cross_stream_waits,
            "driver_us_estimate": self.pages.driver_us_estimate(),
            "oom": self.oom.as_ref().map(|(line, msg)| serde_json::json!({"line": line, "message": msg})),
        })
    }
}

/// Watches a replay: before the first event, after every event, and
/// after the last one while every allocation is still live.
pub trait Observer {
    /// Before the first event.
    fn start(&mut self, _alloc: &mut DeviceAllocator) {}
    /// After `done` events.
    fn event(&mut self, _done: usize, _alloc: &DeviceAllocator) {}
    /// After the last event (or the OOM or failure that ended the replay).
    fn end(&mut self, _alloc: &mut DeviceAllocator) {}
}

/// An observer that watches nothing.
pub struct Quiet;

impl Observer for Quiet {}

/// Why a replay stopped short of a report.
#[derive(Debug)]
pub enum Failed {
    /// The trace is malformed (found while replaying it).
    Trace(TraceError),
    /// The allocator failed other than out of memory, at this trace line.
    Alloc(usize, AllocError),
}

/// Replay the trace's `events` (as [`crate::trace::open`] streams them,
/// with their lines) on `device` with `config`, watched by `observer`. An
/// allocation that cannot be served ends the replay (reported in
/// `Report::oom`); a malformed line or any other allocator error is
/// returned.
///
/// Trace stream 0 is the device's default stream; every other index gets a
/// stream the device creates at its first allocation, destroyed at the end.
pub fn run(
    events: impl IntoIterator<Item = Result<(usize, Event), TraceError>>,
    device: Arc<dyn Device>,
    config: Config,
    observer: &mut dyn Observer,
) -> Result<Report, Failed> {
    let mut streams = TraceStreams::new(Arc::clone(&device));
    let mut alloc = DeviceAllocator::new(device, config);
    let mut p = Progress { live: HashMap::with_capacity(4096), ..Progress::default() };
    observer.start(&mut alloc);
    let start = Instant::now();
    // On a failure too, what is live is freed below: the device is left clean.
    let outcome = play(events, &mut streams, &mut alloc, &mut p, observer);
    let seconds = start.elapsed().as_secs_f64();
    let live = std::mem::take(&mut p.live);
    observer.end(&mut alloc);
    let report = p.report(seconds, &alloc);
    // Free what is still live so the device is left clean.
    for (_, (ptr, _)) in live {
        let _ = alloc.free(ptr);
    }
    // The allocator's segments and events refer to the streams: it goes
    // first, then the streams are destroyed.
    drop(alloc);
    outcome?;
    streams.release().map_err(|e| Failed::Alloc(0, AllocError::from(e)))?;
    Ok(report)
}

/// Where a replay got to.
#[derive(Default)]
struct Progress {
    /// Trace id -> (address, size).
    live: HashMap<u64, (u64, u64)>,
    requested: u64,
    peak_requested: u64,
    oom: Option<(usize, String)>,
    done: usize,
    stream_count: u64,
    /// Reserved bytes summed after every event (for the time-weighted mean).
    reserved_sum: u128,
    /// The reserved peak so far, and the event count and trace line at
    /// which it was first reached.
    peak_reserved: i64,
    peak_event: usize,
    peak_line: usize,
    /// The bytes the event that reached the peak requested (an allocation).
    peak_request: Option<u64>,
}

impl Progress {
    /// The report of a replay that got this far in `seconds`, with the
    /// figures `alloc`'s statistics hold after it.
    fn report(self, seconds: f64, alloc: &DeviceAllocator) -> Report {
        let s = alloc.stats();
        let done = self.done;
        Report {
            events: done,
            streams: self.stream_count,
            peak_requested_bytes: self.peak_requested,
            peak_allocated_bytes: s.allocated_bytes.all().peak as u64,
            peak_reserved_bytes: s.reserved_bytes.all().peak as u64,
            peak_reserved_event: self.peak_event,
            peak_reserved_line: self.peak_line,
            peak_request_bytes: self.peak_request,
            final_reserved_bytes: s.reserved_bytes.all().current as u64,
            time_weighted_reserved_bytes: if done == 0 { 0 } else { (self.reserved_sum / done as u128) as u64 },
            num_alloc_retries: s.num_alloc_retries,
            num_ooms: s.num_ooms,
            seconds,
            pages: s.pages,
            cross_stream_waits: s.cross_stream_waits,
            oom: self.oom,
        }
    }
}

/// Replay `events` until the end, an out-of-memory (recorded in `p`) or a
/// failure (returned).
fn play(
    events: impl IntoIterator<Item = Result<(usize, Event), TraceError>>,
    streams: &mut TraceStreams,
    alloc: &mut DeviceAllocator,
    p: &mut Progress,
    observer: &mut dyn Observer,
) -> Result<(), Failed> {
    for ev in events {
        let (line, ev) = ev.map_err(Failed::Trace)?;
        let request = match ev {
            Event::Alloc { size, .. } => Some(size),
            Event::Free { .. } => None,
        };
        match ev {
            Event::Alloc { id, size, stream } => {
                p.stream_count = p.stream_count.max(stream + 1);
                match streams.get(stream).map_err(AllocError::from).and_then(|s| alloc.malloc(size, s)) {
                    Ok(ptr) => {
                        p.live.insert(id, (ptr, size));
                        p.requested += size;
                        p.peak_requested = p.peak_requested.max(p.requested);
                    }
                    Err(e @ (AllocError::OutOfMemory { .. } | AllocError::TooLarge { .. })) => {
                        p.oom = Some((line, e.to_string()));
                        return Ok(());
                    }
                    Err(e) => return Err(Failed::Alloc(line, e)),
                }
            }
            Event::Free { id } => {
                let (ptr, size) = p.live.remove(&id).expect("the trace reader checked: a freed id is live");
                alloc.free(ptr).map_err(|e| Failed::Alloc(line, e))?;
                p.requested -= size;
            }
        }
        p.done += 1;
        p.reserved_sum += u128::from(alloc.reserved_bytes());
        // The statistics' peak, not the reserved bytes after the event: a
        // peak reached and left within one event counts too.
        let peak = alloc.stats().reserved_bytes.all().peak;
        if peak > p.peak_reserved {
            (p.peak_reserved, p.peak_event, p.peak_line, p.peak_request) = (peak, p.done, line, request);
        }
        observer.event(p.done, alloc);
    }
    Ok(())
}
