//! `expanse bench`: the allocator's fast path, timed through the
//! thread-safe [`CachingAllocator`] (the path `libexpanse.so` takes).
//!
//! Every figure is the median of 5 timed runs after a warm-up:
//! - hot pair: malloc then free of one size (512 B to 64 MiB);
//! - mixed: 256 live allocations, each step frees a random slot and
//!   allocates a random size into it (the sequence of [`Lcg`], shared with
//!   `scripts/gpu/bench_alloc.cpp`, so figures compare across machines);
//! - growth: an expandable segment grown by 1 GiB at once and in 2 MiB
//!   steps, then given back by `empty_cache`;
//! - threads: the mixed pattern on 1, 2, 4, 8 threads at once, each on its
//!   own stream and all on one stream (total steps per second), and, as
//!   the bound a per-stream split of the state could reach, each thread on
//!   an allocator of its own;
//! - replay: ns per event of each trace in `traces/` (one run each, the
//!   first events only unless `--full`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::Instant;

use expanse_backends::BackendKind;
use expanse_core::{CachingAllocator, Config, StreamId};
use expanse_device::Device;

const MIB: u64 = 1 << 20;
/// Sizes of the hot-pair figure.
pub const PAIR_SIZES: [u64; 5] = [512, 64 << 10, MIB, 8 * MIB, 64 * MIB];
/// Live allocations of the mixed pattern.
pub const SLOTS: usize = 256;
const REPS: usize = 5;
/// The parts of a run, for `--only`.
const PARTS: [&str; 5] = ["pair", "mixed", "growth", "threads", "replay"];

/// How long to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scale {
    Quick,
    Default,
    Full,
}

impl Scale {
    fn name(self) -> &'static str {
        match self {
            Scale::Quick => "quick",
            Scale::Default => "default",
            Scale::Full => "full",
        }
    }

    /// Pairs per timed run of the hot pair.
    fn pairs(self) -> usize {
        [20_000, 200_000, 1_000_000][self as usize]
    }

    /// Steps per timed run of the mixed pattern (and per thread).
    fn steps(self) -> usize {
        [20_000, 200_000, 1_000_000][self as usize]
    }

    /// Steps per thread per timed run of the threaded pattern.
    fn thread_steps(self) -> usize {
        [5_000, 40_000, 200_000][self as usize]
    }

    /// Events replayed per trace (`None`: all).
    fn replay_cap(self) -> Option<usize> {
        [Some(10_000), Some(100_000), None][self as usize]
    }
}

/// The options of `expanse bench`.
struct BenchOptions {
    backend: BackendKind,
    conf: Option<String>,
    device_memory: u64,
    threads: usize,
    /// Parts to run: pair, mixed, growth, threads, replay.
    only: Vec<String>,
    json: bool,
    scale: Scale,
    traces: PathBuf,
}

fn parse(args: &[OsString]) -> Result<BenchOptions, String> {
    let mut o = BenchOptions {
        backend: BackendKind::Host,
        conf: None,
        device_memory: 143771 << 20,
        threads: 8,
        only: PARTS.iter().map(|s| s.to_string()).collect(),
        json: false,
        scale: Scale::Default,
        traces: PathBuf::from("traces"),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut raw = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        let Some(text) = a.to_str() else {
            return Err(format!("unknown bench option {a:?} (see 'expanse help')"));
        };
        if text == "--traces" {
            // A path: any bytes.
            o.traces = PathBuf::from(raw("--traces")?);
            continue;
        }
        let mut value = |name: &str| {
            let v = raw(name)?;
            v.to_str().map(str::to_owned).ok_or_else(|| format!("{name}: value {v:?} is not valid UTF-8"))
        };
        match text {
            "--backend" => o.backend = BackendKind::from_name(&value("--backend")?).map_err(|e| e.to_string())?,
            "--conf" => o.conf = Some(value("--conf")?),
            "--device-memory" => o.device_memory = crate::parse_size(&value("--device-memory")?)?,
            "--threads" => {
                let v = value("--threads")?;
                o.threads = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=256).contains(n))
                    .ok_or_else(|| format!("bad --threads '{v}': expected a number from 1 to 256"))?;
            }
            "--only" => {
                let v = value("--only")?;
                o.only = v.split(',').map(|s| s.trim().to_string()).collect();
                if let Some(bad) = o.only.iter().find(|s| !PARTS.contains(&s.as_str())) {
                    return Err(format!("bad --only part '{bad}': expected some of {}", PARTS.join(",")));
                }
            }
            "--json" => o.json = true,
            "--quick" => o.scale = Scale::Quick,
            "--full" => o.scale = Scale::Full,
            s => return Err(format!("unknown bench option '{s}' (see 'expanse help')")),
        }
    }
    Ok(o)
}

/// The mixed pattern's random numbers: a 64-bit LCG (Knuth's MMIX
/// constants), upper 31 bits out.
#[derive(Clone, Debug)]
pub struct Lcg(pub u64);

impl Lcg {
    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// A random size: a power of two from 512 B to 64 MiB, plus up to as
    /// much again.
    pub fn size(&mut self) -> u64 {
        let base = 1u64 << (9 + self.next() % 18);
        base + self.next() % base
    }
}

/// The state of one mixed run: 256 live allocations.
struct Mixed {
    rng: Lcg,
    slots: Vec<u64>,
    stream: StreamId,
}

impl Mixed {
    /// Fill the 256 slots (seeded with `seed`).
    fn fill(a: &CachingAllocator, seed: u64, stream: StreamId) -> Result<Self, String> {
        let mut rng = Lcg(seed);
        let mut slots = Vec::with_capacity(SLOTS);
        for _ in 0..SLOTS {
            slots.push(a.malloc(0, rng.size(), stream).map_err(|e| e.to_string())?);
        }
        Ok(Mixed { rng, slots, stream })
    }

    /// `n` steps: free a random slot, allocate a random size into it.
    fn steps(&mut self, a: &CachingAllocator, n: usize) -> Result<(), String> {
        for _ in 0..n {
            let slot = (self.rng.next() % SLOTS as u64) as usize;
            a.free(0, self.slots[slot]).map_err(|e| e.to_string())?;
            self.slots[slot] = a.malloc(0, self.rng.size(), self.stream).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn free_all(self, a: &CachingAllocator) -> Result<(), String> {
        self.slots.into_iter().try_for_each(|p| a.free(0, p).map_err(|e| e.to_string()))
    }
}

/// The median of `REPS` runs of `f`.
fn median(mut f: impl FnMut() -> Result<f64, String>) -> Result<f64, String> {
    let mut v = (0..REPS).map(|_| f()).collect::<Result<Vec<f64>, String>>()?;
    v.sort_by(f64::total_cmp);
    Ok(v[REPS / 2])
}

fn ns_per(start: Instant, n: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / n as f64
}

/// Nanoseconds per malloc + free pair of `size`.
fn hot_pair(a: &CachingAllocator, size: u64, pairs: usize) -> Result<f64, String> {
    let pair = || -> Result<(), String> {
        let p = a.malloc(0, size, StreamId::DEFAULT).map_err(|e| e.to_string())?;
        a.free(0, p).map_err(|e| e.to_string())
    };
    for _ in 0..1000 {
        pair()?;
    }
    median(|| {
        let t = Instant::now();
        for _ in 0..pairs {
            pair()?;
        }
        Ok(ns_per(t, pairs))
    })
}

/// Nanoseconds per step (one free + one malloc) of the mixed pattern.
fn mixed(a: &CachingAllocator, steps: usize) -> Result<f64, String> {
    let mut m = Mixed::fill(a, 42, StreamId::DEFAULT)?;
    m.steps(a, steps / 10)?;
    let ns = median(|| {
        let t = Instant::now();
        m.steps(a, steps)?;
        Ok(ns_per(t, steps))
    })?;
    m.free_all(a)?;
    Ok(ns)
}

/// Growth figures, microseconds (medians over fresh allocators).
#[derive(Debug, Default)]
struct Growth {
    one_alloc_us: f64,
    one_empty_cache_us: f64,
    steps_alloc_us: f64,
    steps_empty_cache_us: f64,
}

fn growth(device: &Arc<dyn Device>, config: &Config) -> Result<Growth, String> {
    const GIB: u64 = 1 << 30;
    let e = |e: expanse_core::AllocError| e.to_string();
    let mut g = Growth::default();
    let (mut one, mut one_e, mut st, mut st_e) = (vec![], vec![], vec![], vec![]);
    for _ in 0..REPS {
        let a = CachingAllocator::new(vec![Arc::clone(device)], config.clone());
        let t = Instant::now();
        let p = a.malloc(0, GIB, StreamId::DEFAULT).map_err(e)?;
        one.push(t.elapsed().as_secs_f64() * 1e6);
        a.free(0, p).map_err(e)?;
        let t = Instant::now();
        a.empty_cache().map_err(e)?;
        one_e.push(t.elapsed().as_secs_f64() * 1e6);
        let t = Instant::now();
        let ps = (0..GIB / (2 * MIB)).map(|_| a.malloc(0, 2 * MIB, StreamId::DEFAULT)).collect::<Result<Vec<_>, _>>();
        st.push(t.elapsed().as_secs_f64() * 1e6);
        for p in ps.map_err(e)? {
            a.free(0, p).map_err(e)?;
        }
        let t = Instant::now();
        a.empty_cache().map_err(e)?;
        st_e.push(t.elapsed().as_secs_f64() * 1e6);
    }
    for (v, out) in [
        (one, &mut g.one_alloc_us),
        (one_e, &mut g.one_empty_cache_us),
        (st, &mut g.steps_alloc_us),
        (st_e, &mut g.steps_empty_cache_us),
    ] {
        let mut v = v;
        v.sort_by(f64::total_cmp);
        *out = v[REPS / 2];
    }
    Ok(g)
}

/// How the threads of the threaded pattern share the allocator.
#[derive(Clone, Copy, PartialEq)]
enum Layout {
    /// One allocator, every thread on the default stream.
    OneStream,
    /// One allocator, each thread on a stream of its own.
    OwnStreams,
    /// Each thread its own allocator (over the same device) and stream:
    /// nothing shared but the device, so no lock is contended. Not a
    /// configuration anyone runs (no lending, no common statistics): the
    /// bound a per-stream split of the allocator's state could reach.
    OwnAllocators,
}

/// Total mixed steps per second of `n` threads laid out as `layout`, and
/// the cross-stream event waits a malloc asked of the device (each an
/// event recorded, waited on and released, under the device lock).
fn threaded(
    device: &Arc<dyn Device>,
    config: &Config,
    n: usize,
    layout: Layout,
    steps: usize,
) -> Result<(f64, f64), String> {
    let streams: Vec<StreamId> = (0..n)
        .map(|_| if layout == Layout::OneStream { Ok(StreamId::DEFAULT) } else { device.create_stream() })
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let count = if layout == Layout::OwnAllocators { n } else { 1 };
    let allocators: Vec<CachingAllocator> =
        (0..count).map(|_| CachingAllocator::new(vec![Arc::clone(device)], config.clone())).collect();
    let result = median(|| threaded_run(&allocators, &streams, steps));
    let (mut waits, mut mallocs) = (0u64, 0i64);
    for a in &allocators {
        let st = a.stats(0).map_err(|e| e.to_string())?;
        waits += st.cross_stream_waits;
        mallocs += st.allocation.all().allocated;
    }
    drop(allocators);
    for s in streams.into_iter().filter(|s| *s != StreamId::DEFAULT) {
        device.destroy_stream(s).map_err(|e| e.to_string())?;
    }
    result.map(|ops| (ops, waits as f64 / mallocs.max(1) as f64))
}

/// One timed run of the threaded pattern: a thread per stream of
/// `streams`, thread `i` on allocator `i % allocators.len()`, each filling
/// its slots, warming up, then taking `steps` mixed steps; returns the
/// total steps per second.
fn threaded_run(allocators: &[CachingAllocator], streams: &[StreamId], steps: usize) -> Result<f64, String> {
    let (n, count) = (streams.len(), allocators.len());
    // Each thread times itself from the barrier to its last step; the
    // run lasts from the first start to the last end (a clock read by
    // this thread after the barrier would start late whenever the
    // workers take every core).
    let barrier = Barrier::new(n);
    let spans = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (a, barrier, stream) = (&allocators[i % count], &barrier, streams[i]);
                scope.spawn(move || -> Result<(Instant, Instant), String> {
                    let mut m = Mixed::fill(a, 42 + i as u64, stream);
                    if let Ok(m) = &mut m {
                        m.steps(a, steps / 10)?;
                    }
                    barrier.wait();
                    let start = Instant::now();
                    let mut m = m?;
                    m.steps(a, steps)?;
                    let end = Instant::now();
                    m.free_all(a)?;
                    Ok((start, end))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("bench thread")).collect::<Result<Vec<_>, String>>()
    })?;
    let start = spans.iter().map(|s| s.0).min().expect("at least one thread");
    let end = spans.iter().map(|s| s.1).max().expect("at least one thread");
    Ok((n * steps) as f64 / (end - start).as_secs_f64())
}

/// One row of the threaded pattern: the thread count, then (steps per
/// second, cross-stream waits a malloc) with a stream each and with one
/// stream for all, then steps per second with an allocator each.
type Threads = (usize, (f64, f64), (f64, f64), (f64, f64));

/// Thread counts: powers of two up to `max`, and `max`.
fn thread_counts(max: usize) -> Vec<usize> {
    let mut v: Vec<usize> = [1, 2, 4, 8].into_iter().filter(|&n| n <= max).collect();
    if !v.contains(&max) {
        v.push(max);
    }
    v
}

/// ns per event of each trace in `dir` (at most `cap` events each).
fn replays(o: &BenchOptions, config: &Config) -> Result<Vec<(String, usize, f64)>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(&o.traces)
        .map_err(|e| format!("{}: {e}", o.traces.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains(".trace.csv")))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        // Read before the clock starts: the figure is the allocator's, not the parser's.
        let cap = o.scale.replay_cap().unwrap_or(usize::MAX);
        let events: Vec<_> = crate::trace::open(&path)
            .and_then(|events| events.take(cap).collect::<Result<_, _>>())
            .map_err(|e| e.to_string())?;
        let device = crate::make_device(o.backend, o.device_memory)?;
        let r = crate::replay::run(events.into_iter().map(Ok), device, config.clone(), &mut crate::replay::Quiet)
            .map_err(|f| match f {
                crate::replay::Failed::Trace(e) => e.to_string(),
                crate::replay::Failed::Alloc(line, e) => format!("{}:{line}: {e}", path.display()),
            })?;
        out.push((trace_name(&path), r.events, r.ns_per_event()));
    }
    Ok(out)
}

fn trace_name(path: &Path) -> String {
    let n = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    n.split(".trace").next().unwrap_or_default().to_string()
}

/// Everything one bench run measured.
struct Figures {
    hot_pair: Vec<(u64, f64)>,
    mixed: Option<f64>,
    growth: Option<Growth>,
    /// (threads, own streams, one stream, own allocators).
    threads: Vec<Threads>,
    replay: Vec<(String, usize, f64)>,
    seconds: f64,
}

fn measure(o: &BenchOptions, config: &Config) -> Result<Figures, String> {
    let start = Instant::now();
    let runs = |part: &str| o.only.iter().any(|p| p == part);
    let device = crate::make_device(o.backend, o.device_memory)?;
    let a = CachingAllocator::new(vec![Arc::clone(&device)], config.clone());
    let sizes = if runs("pair") { &PAIR_SIZES[..] } else { &[] };
    let hot_pair =
        sizes.iter().map(|&s| hot_pair(&a, s, o.scale.pairs()).map(|ns| (s, ns))).collect::<Result<_, _>>()?;
    let mixed = if runs("mixed") { Some(mixed(&a, o.scale.steps())?) } else { None };
    drop(a);
    let growth = if runs("growth") { Some(growth(&device, config)?) } else { None };
    let mut threads = Vec::new();
    for n in thread_counts(o.threads).into_iter().filter(|_| runs("threads")) {
        let own = threaded(&device, config, n, Layout::OwnStreams, o.scale.thread_steps())?;
        let one = threaded(&device, config, n, Layout::OneStream, o.scale.thread_steps())?;
        let apart = threaded(&device, config, n, Layout::OwnAllocators, o.scale.thread_steps())?;
        threads.push((n, own, one, apart));
    }
    drop(device);
    let replay = if runs("replay") { replays(o, config)? } else { Vec::new() };
    Ok(Figures { hot_pair, mixed, growth, threads, replay, seconds: start.elapsed().as_secs_f64() })
}

fn to_json(o: &BenchOptions, conf: &str, f: &Figures) -> serde_json::Value {
    let obj = |pairs: Vec<(String, serde_json::Value)>| serde_json::Value::Object(pairs.into_iter().collect());
    let base = f.threads.first().map_or(1.0, |t| t.1 .0);
    serde_json::json!({
        "backend": o.backend.name(),
        "conf": conf,
        "scale": o.scale.name(),
        "hot_pair_ns": obj(f.hot_pair.iter().map(|(s, ns)| (s.to_string(), (*ns).into())).collect()),
        "mixed_ns": f.mixed,
        "growth": f.growth.as_ref().map(|g| serde_json::json!({
            "one_1gib_alloc_us": g.one_alloc_us,
            "one_1gib_empty_cache_us": g.one_empty_cache_us,
            "steps_2mib_x512_alloc_us": g.steps_alloc_us,
            "steps_2mib_x512_empty_cache_us": g.steps_empty_cache_us,
        })),
        "threads": obj(f.threads.iter().map(|(n, (own, waits), (one, _), apart)| (n.to_string(), serde_json::json!({
            "own_streams_ops_per_s": own,
            "one_stream_ops_per_s": one,
            "own_allocators_ops_per_s": apart.0,
            "own_allocators_cross_stream_waits_per_malloc": apart.1,
            "own_streams_speedup": own / base,
            "own_streams_cross_stream_waits_per_malloc": waits,
        }))).collect()),
        "replay_ns_per_event": obj(f.replay.iter().map(|(n, _, ns)| (n.clone(), (*ns).into())).collect()),
        "replay_events": obj(f.replay.iter().map(|(n, ev, _)| (n.clone(), (*ev).into())).collect()),
        "replay_events_cap": o.scale.replay_cap(),
        "seconds": f.seconds,
    })
}

fn print_table(o: &BenchOptions, conf: &str, f: &Figures) {
    println!("backend {}, config {conf}, {} run, median of {REPS}", o.backend.name(), o.scale.name());
    println!("\n| ns per operation | expanse |\n|---|---:|");
    for (s, ns) in &f.hot_pair {
        let label = match *s {
            s if s >= MIB => format!("{} MiB", s / MIB),
            s if s >= 1024 => format!("{} KiB", s >> 10),
            s => format!("{s} B"),
        };
        println!("| alloc+free pair, {label} | {ns:.0} |");
    }
    if let Some(m) = f.mixed {
        println!("| mixed: 256 live, free a random slot, allocate a random size | {m:.0} |");
    }
    if let Some(g) = &f.growth {
        println!("\ngrowth (µs): 1 GiB in one allocation {:.0}, its empty_cache {:.0}; in 512 x 2 MiB {:.0}, its empty_cache {:.0}",
        g.one_alloc_us, g.one_empty_cache_us, g.steps_alloc_us, g.steps_empty_cache_us);
    }
    if !f.threads.is_empty() {
        println!("\n| threads | own streams (steps/s) | speed-up | cross-stream waits a malloc | one stream (steps/s) | an allocator each (steps/s; no state shared) | its speed-up |\n|---:|---:|---:|---:|---:|---:|---:|");
        let base = f.threads.first().map_or(1.0, |t| t.1 .0);
        let base_apart = f.threads.first().map_or(1.0, |t| t.3 .0);
        for (n, (own, waits), (one, _), (apart, _)) in &f.threads {
            println!(
                "| {n} | {own:.0} | {:.2}x | {waits:.3} | {one:.0} | {apart:.0} | {:.2}x |",
                own / base,
                apart / base_apart
            );
        }
    }
    if !f.replay.is_empty() {
        let cap = o.scale.replay_cap().map_or("all events".into(), |c| format!("first {c} events"));
        println!("\n| trace ({cap}) | events | ns/event |\n|---|---:|---:|");
        for (n, ev, ns) in &f.replay {
            println!("| {n} | {ev} | {ns:.0} |");
        }
    }
    println!("\ntotal {:.1} s", f.seconds);
}

/// `expanse bench`.
pub fn cmd_bench(args: &[OsString]) -> Result<(), String> {
    let o = parse(args)?;
    let config = crate::config_of(&o.conf)?;
    let conf = config.to_conf_string();
    let f = measure(&o, &config)?;
    if o.json {
        println!("{}", to_json(&o, &conf, &f));
    } else {
        print_table(&o, &conf, &f);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcg_follows_the_published_recurrence() {
        // s1 = 42 * 6364136223846793005 + 1442695040888963407 mod 2^64,
        // computed with Python's integers: 10481999410520546993.
        let mut r = Lcg(42);
        assert_eq!(r.next(), 10481999410520546993 >> 33);
        let s: Vec<u64> = (0..10_000).map(|_| r.size()).collect();
        assert!(s.iter().all(|x| (512..128 * MIB).contains(x)));
        // Every power of two from 512 B to 64 MiB is a base: both ends occur.
        assert!(s.iter().any(|&x| x < 1024) && s.iter().any(|&x| x >= 64 * MIB));
    }

    #[test]
    fn thread_counts_cover_the_maximum() {
        assert_eq!(thread_counts(8), vec![1, 2, 4, 8]);
        assert_eq!(thread_counts(3), vec![1, 2, 3]);
        assert_eq!(thread_counts(1), vec![1]);
    }
}
