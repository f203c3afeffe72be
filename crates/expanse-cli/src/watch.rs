//! What a replay is watched for: a progress bar (only on a terminal and
//! only once the replay passes a second), samples for `--plot`, and the
//! snapshot with history for `--snapshot`.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use expanse_core::{DeviceAllocator, Snapshot};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::replay::Observer;

/// The plotted quantities at one point of a replay.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Trace events replayed.
    pub event: usize,
    /// Highest bytes reserved, allocated and requested since the previous
    /// sample (so no peak falls between samples).
    pub reserved: u64,
    pub allocated: u64,
    pub requested: u64,
    /// Page maps and page moves so far.
    pub pages_mapped: u64,
    pub pages_moved: u64,
}

/// About this many samples per replay.
const SAMPLES: usize = 1500;
/// Events between looks at the clock for the progress bar.
const PROGRESS_STRIDE: usize = 4096;
/// A replay shorter than this shows no progress bar.
const PROGRESS_AFTER: Duration = Duration::from_secs(1);

/// The watcher of one replay.
pub struct Watch {
    label: String,
    /// Ring-buffer bound of the history, when a snapshot is wanted.
    history: Option<usize>,
    /// Whether to sample for a plot.
    sample: bool,
    /// Whether stderr is a terminal.
    terminal: bool,
    stride: usize,
    pending: Sample,
    started: Option<Instant>,
    bar: Option<ProgressBar>,
    /// The trace's event count, when told (see [`Watch::expect`]).
    total: Option<usize>,
    /// The samples taken.
    pub samples: Vec<Sample>,
    /// The snapshot taken at the end.
    pub snapshot: Option<Snapshot>,
}

impl Watch {
    /// A watcher labelled `label` in the progress bar; `history`: record
    /// the history (at most this many entries) and take a snapshot at the
    /// end; `sample`: take samples for a plot.
    pub fn new(label: &str, history: Option<usize>, sample: bool) -> Self {
        Watch {
            label: label.to_owned(),
            history,
            sample,
            terminal: std::io::stderr().is_terminal(),
            stride: 1,
            pending: Sample::default(),
            started: None,
            bar: None,
            total: None,
            samples: Vec::new(),
            snapshot: None,
        }
    }

    /// Whether the watcher needs the event count before the replay: for
    /// the plot's sampling stride and the progress bar's length.
    pub fn wants_count(&self) -> bool {
        self.sample || self.terminal
    }

    /// The trace has `events` events (a streamed trace is counted apart).
    pub fn expect(&mut self, events: usize) {
        self.total = Some(events);
        self.stride = (events / SAMPLES).max(1);
    }

    fn tick_progress(&mut self, done: usize) {
        let Some(started) = self.started else { return };
        match &self.bar {
            Some(bar) => bar.set_position(done as u64),
            None if started.elapsed() >= PROGRESS_AFTER => {
                let bar = ProgressBar::with_draw_target(self.total.map(|n| n as u64), ProgressDrawTarget::hidden());
                if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} events, {eta} left") {
                    bar.set_style(style.progress_chars("=> "));
                }
                bar.set_message(self.label.clone());
                bar.set_position(done as u64);
                bar.set_draw_target(ProgressDrawTarget::stderr());
                self.bar = Some(bar);
            }
            None => {}
        }
    }
}

impl Observer for Watch {
    fn start(&mut self, alloc: &mut DeviceAllocator) {
        if let Some(n) = self.history {
            alloc.record_history(Some(n));
        }
        if self.terminal {
            self.started = Some(Instant::now());
        }
        if self.sample {
            self.samples.push(Sample::default());
        }
    }

    #[inline]
    fn event(&mut self, done: usize, alloc: &DeviceAllocator) {
        if self.sample {
            let s = alloc.stats();
            let p = &mut self.pending;
            p.reserved = p.reserved.max(s.reserved_bytes.all().current.max(0) as u64);
            p.allocated = p.allocated.max(s.allocated_bytes.all().current.max(0) as u64);
            p.requested = p.requested.max(s.requested_bytes.all().current.max(0) as u64);
            p.event = done;
            if done.is_multiple_of(self.stride) || Some(done) == self.total {
                p.pages_mapped = s.pages.mapped;
                p.pages_moved = s.pages.moved;
                self.samples.push(*p);
                *p = Sample::default();
            }
        }
        if self.terminal && done.is_multiple_of(PROGRESS_STRIDE) {
            self.tick_progress(done);
        }
    }

    fn end(&mut self, alloc: &mut DeviceAllocator) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if self.sample && self.pending.event != 0 {
            // The events since the last sample (the replay ended early).
            let s = alloc.stats();
            self.pending.pages_mapped = s.pages.mapped;
            self.pending.pages_moved = s.pages.moved;
            self.samples.push(self.pending);
        }
        if self.history.is_some() {
            self.snapshot = Some(Snapshot::from_devices(vec![alloc.snapshot()]));
        }
    }
}
