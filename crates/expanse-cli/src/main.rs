//! The `expanse` command.

mod backends;
mod bench;
mod capacity;
mod corpus;
mod corpus_table;
mod peak;
mod plot;
mod replay;
mod watch;

use expanse_cli::trace;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use expanse_backends::{BackendKind, Options as BackendOptions};
use expanse_core::Config;
use expanse_device::Device;

const HELP: &str = "\
expanse: a device caching allocator with expandable segments

USAGE:
    expanse <COMMAND> [OPTIONS]

COMMANDS:
    replay TRACE     Replay an allocation trace and report fragmentation and speed
    compare DIR|TRACE...
                     With a corpus.json next to the traces (or a folder): per
                     trace, PyTorch's recorded figures, expanse's default, its
                     driver estimate against expanse in PyTorch-expandable mode
                     and the smallest capacity each needs; geometric means and
                     wins per split (--no-capacity skips the capacity search).
                     Otherwise: expanse in PyTorch-native mode, in
                     PyTorch-expandable mode and its default, per trace
    bench            Time the allocator's fast path: cached malloc + free pairs,
                     a mixed pattern, growth, threads, trace replay
    backends [--json] List every backend, whether it is usable here, and why not
    help             Show this help

REPLAY / COMPARE OPTIONS:
    --conf STRING          Allocator config, PyTorch syntax
                           (e.g. expandable_segments:True,max_split_size_mb:128);
                           default: EXPANSE_ALLOC_CONF / PYTORCH_ALLOC_CONF /
                           PYTORCH_CUDA_ALLOC_CONF, else expanse's defaults
    --backend host|sim|cuda|ze
                           host: real Linux virtual memory (default);
                           sim: the strict mock device (addresses only);
                           cuda: GPU 0 through the CUDA driver (its own capacity);
                           ze: Intel GPU 0 through Level Zero (its own capacity;
                           library: EXPANSE_ZE_LIBRARY, else libze_loader.so.1);
                           trace stream 0 is the device's default stream, every
                           other index a stream the device creates
    --device-memory SIZE   Device capacity: 143771MiB, 16GiB, or bytes
                           (default 143771MiB, an H200)
    --json                 One JSON object on stdout (replay) or one per trace
    --plot FILE.svg        Draw reserved, allocated and requested bytes and the
                           page maps and moves over the replay (compare: every
                           allocator overlaid; with several traces, one file
                           each, named FILE.<trace>.svg)

REPLAY OPTIONS:
    --snapshot FILE.pickle Write a snapshot with the allocation history at the
                           end, for PyTorch's memory viewer (pytorch.org/memory_viz,
                           python -m torch.cuda._memory_viz trace_plot FILE.pickle)
    --history-entries N    Keep only the newest N history entries (default: all)
    --peak-snapshot FILE.pickle
                           The same when reserved memory peaked (the trace
                           replayed again up to that event), where the
                           memory not in use sat then (free blocks, the
                           largest, the small pool's share), and what the
                           request that raised the peak found free before it

A progress bar shows on stderr when a replay passes a second and stderr is
a terminal.

BENCH OPTIONS (median of 5 after warm-up; default run about 20 s):
    --backend, --conf, --device-memory, --json as above
    --threads N            Threaded pattern on 1, 2, 4, 8 .. N threads (default 8)
    --quick | --full       Fewer iterations, 10k events per trace | more, whole traces
                           (default: 100k events per trace)
    --traces DIR           Traces to replay (default traces/)
    --only PARTS           Some of pair,mixed,growth,threads,replay (default all)
";

fn main() -> ExitCode {
    // args_os: a trace path need not be UTF-8 (std::env::args panics on one).
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("expanse: {msg}");
            ExitCode::FAILURE
        }
    }
}

struct Options {
    conf: Option<String>,
    backend: BackendKind,
    device_memory: u64,
    json: bool,
    files: Vec<PathBuf>,
    plot: Option<PathBuf>,
    snapshot: Option<PathBuf>,
    peak_snapshot: Option<PathBuf>,
    history_entries: usize,
}

/// Parse `143771MiB`, `16GiB`, `2MB`, `4096`.
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| {
        format!("bad size '{s}': expected a number with an optional unit (KiB, MiB, GiB, TiB, KB, MB, GB)")
    })?;
    let mul: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" | "K" => 1 << 10,
        "MiB" | "M" => 1 << 20,
        "GiB" | "G" => 1 << 30,
        "TiB" | "T" => 1 << 40,
        "KB" => 1000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        u => return Err(format!("bad size '{s}': unknown unit '{u}'")),
    };
    n.checked_mul(mul).filter(|v| *v > 0).ok_or_else(|| format!("bad size '{s}': zero or too large"))
}

fn parse_options(args: &[OsString]) -> Result<Options, String> {
    let mut o = Options {
        conf: None,
        backend: BackendKind::Host,
        device_memory: 143771 << 20,
        json: false,
        files: Vec::new(),
        plot: None,
        snapshot: None,
        peak_snapshot: None,
        history_entries: usize::MAX,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            let v = it.next().ok_or_else(|| format!("{name} needs a value"))?;
            v.to_str().map(str::to_owned).ok_or_else(|| format!("{name}: value {v:?} is not valid UTF-8"))
        };
        let Some(text) = a.to_str() else {
            // Not UTF-8: only a file path can be that (paths are bytes).
            o.files.push(PathBuf::from(a));
            continue;
        };
        match text {
            "--conf" => o.conf = Some(value("--conf")?),
            "--backend" => o.backend = BackendKind::from_name(&value("--backend")?).map_err(|e| e.to_string())?,
            "--device-memory" => o.device_memory = parse_size(&value("--device-memory")?)?,
            "--json" => o.json = true,
            "--plot" => o.plot = Some(PathBuf::from(value("--plot")?)),
            "--snapshot" => o.snapshot = Some(PathBuf::from(value("--snapshot")?)),
            "--peak-snapshot" => o.peak_snapshot = Some(PathBuf::from(value("--peak-snapshot")?)),
            "--history-entries" => {
                let v = value("--history-entries")?;
                o.history_entries = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("bad --history-entries '{v}': expected a positive number"))?;
            }
            s if s.starts_with("--") => return Err(format!("unknown option '{s}' (see 'expanse help')")),
            f => o.files.push(PathBuf::from(f)),
        }
    }
    Ok(o)
}

/// The first device of `backend` (GPU 0 on CUDA, whose own capacity
/// applies, not `--device-memory`).
fn make_device(backend: BackendKind, capacity: u64) -> Result<Arc<dyn Device>, String> {
    let options = BackendOptions { capacity, ..BackendOptions::default() };
    let mut devices = expanse_backends::open(backend, &options).map_err(|e| e.to_string())?.into_devices();
    Ok(devices.swap_remove(0))
}

/// `--conf`, else the environment chain of [`expanse_backends::load_config`].
fn config_of(conf: &Option<String>) -> Result<Config, String> {
    expanse_backends::load_config(conf.as_deref()).map_err(|e| e.to_string())
}

/// Replay the trace at `path`, streamed from the file, watched by `observer`.
fn replay_one(
    path: &Path,
    o: &Options,
    config: Config,
    observer: &mut dyn replay::Observer,
) -> Result<replay::Report, String> {
    replay_first(path, o, config, usize::MAX, observer)
}

/// [`replay_one`] of the trace's first `count` events only.
fn replay_first(
    path: &Path,
    o: &Options,
    config: Config,
    count: usize,
    observer: &mut dyn replay::Observer,
) -> Result<replay::Report, String> {
    let device = make_device(o.backend, o.device_memory)?;
    config.check_device(device.total_memory(), device.granularity()).map_err(|e| e.to_string())?;
    let events = trace::open(path).map_err(|e| e.to_string())?.take(count);
    replay::run(events, device, config, observer).map_err(|f| match f {
        replay::Failed::Trace(e) => e.to_string(),
        replay::Failed::Alloc(line, e) => format!("{}:{line}: {e}", path.display()),
    })
}

/// [`replay_one`] watched by `watch`, which is first told the trace's
/// event count (a streamed pass that only counts) when it needs it.
fn replay_watched(
    path: &Path,
    o: &Options,
    config: Config,
    watch: &mut watch::Watch,
) -> Result<replay::Report, String> {
    if watch.wants_count() {
        let events = trace::open(path).map_err(|e| e.to_string())?;
        watch.expect(events.take_while(Result::is_ok).count());
    }
    replay_one(path, o, config, watch)
}

/// The trace's name: its file name without `.trace.csv[.gz]`.
fn trace_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().replace(".trace.csv.gz", "").replace(".trace.csv", ""))
        .unwrap_or_default()
}

/// Write `--snapshot`'s pickle; returns a line saying what was written.
fn write_snapshot(path: &Path, snapshot: &expanse_core::Snapshot) -> Result<String, String> {
    std::fs::write(path, snapshot.to_pickle())
        .map_err(|e| format!("{}: cannot write the snapshot: {e}", path.display()))?;
    let entries: usize = snapshot.device_traces.iter().map(Vec::len).sum();
    Ok(format!("{} ({} segments, {entries} history entries)", path.display(), snapshot.segments.len()))
}

/// `--peak-snapshot FILE`: replay the trace again up to the event during
/// which reserved memory peaked in the replay `r`, snapshot it there and
/// write the snapshot; returns where the reserved memory sat then, and
/// just before that event (a third replay, one event shorter: where the
/// request that raised the peak looked for room). Replays are
/// deterministic (decisions never depend on raw addresses), and a second
/// replay that reserves another peak is an error, not a wrong snapshot.
fn peak_snapshot(
    path: &Path,
    o: &Options,
    config: Config,
    r: &replay::Report,
    file: &Path,
) -> Result<(peak::Layout, peak::Layout), String> {
    let mut before = watch::Watch::new(&format!("{} up to its peak", trace_name(path)), Some(1), false);
    replay_first(path, o, config.clone(), r.peak_reserved_event.saturating_sub(1), &mut before)?;
    let before = peak::Layout::of(before.snapshot.as_ref().ok_or("the replay before the peak took no snapshot")?);
    let mut watch = watch::Watch::new(&format!("{} up to its peak", trace_name(path)), Some(o.history_entries), false);
    let again = replay_first(path, o, config, r.peak_reserved_event, &mut watch)?;
    let snapshot = watch.snapshot.as_ref().ok_or("the peak replay took no snapshot")?;
    if again.peak_reserved_bytes != r.peak_reserved_bytes {
        return Err(format!(
            "{}: replaying up to the peak reserved {} bytes, the whole replay {}: the backend placed memory differently the second time, no peak snapshot written",
            path.display(),
            again.peak_reserved_bytes,
            r.peak_reserved_bytes
        ));
    }
    write_snapshot(file, snapshot)?;
    Ok((peak::Layout::of(snapshot), before))
}

/// `--plot FILE` for one of `count` traces: FILE itself, or FILE.<name>.svg.
fn plot_path(plot: &Path, name: &str, count: usize) -> PathBuf {
    if count == 1 {
        return plot.to_path_buf();
    }
    let stem = plot.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    plot.with_file_name(format!("{stem}.{name}.svg"))
}

fn gib(b: u64) -> String {
    format!("{:.3} GiB", b as f64 / (1u64 << 30) as f64)
}

fn cmd_replay(args: &[OsString]) -> Result<(), String> {
    let o = parse_options(args)?;
    let [path] = o.files.as_slice() else {
        return Err("replay takes exactly one trace file".into());
    };
    let config = config_of(&o.conf)?;
    let conf_str = config.to_conf_string();
    let history = o.snapshot.as_ref().map(|_| o.history_entries);
    let mut watch = watch::Watch::new(&trace_name(path), history, o.plot.is_some());
    let r = replay_watched(path, &o, config.clone(), &mut watch)?;
    let mut written = Vec::new();
    if let (Some(file), Some(s)) = (&o.snapshot, &watch.snapshot) {
        written.push(("snapshot", write_snapshot(file, s)?));
    }
    let mut at_peak = None;
    if let Some(file) = &o.peak_snapshot {
        let (line, j) = peak_snapshot_written(path, &o, config, &r, file)?;
        written.push(("peak snapshot", line));
        at_peak = Some(j);
    }
    if let Some(file) = &o.plot {
        let title = format!("{}: {} ({} backend)", trace_name(path), conf_str, o.backend.name());
        plot::draw(file, &title, &[plot::Run { label: "", samples: &watch.samples }])?;
        written.push(("plot", file.display().to_string()));
    }
    if o.json {
        let mut j = r.to_json(&path.display().to_string(), o.backend.name(), &conf_str);
        if let Some(p) = at_peak {
            j["peak_snapshot"] = p;
        }
        println!("{j}");
    } else {
        print_replay_text(path, &o, &conf_str, &r, &written);
    }
    if let Some((line, msg)) = &r.oom {
        return Err(format!("{}:{line}: {msg}", path.display()));
    }
    Ok(())
}

/// `--peak-snapshot FILE` of the replay `r`: writes the snapshot (see
/// [`peak_snapshot`]) and returns the line replay's text output shows for
/// it and the object its JSON output holds under `peak_snapshot`.
fn peak_snapshot_written(
    path: &Path,
    o: &Options,
    config: Config,
    r: &replay::Report,
    file: &Path,
) -> Result<(String, serde_json::Value), String> {
    let (layout, before) = peak_snapshot(path, o, config, r, file)?;
    let line = format!(
        "{} (after event {} of {}, trace line {}): {}{}",
        file.display(),
        r.peak_reserved_event,
        r.events,
        r.peak_reserved_line,
        layout.describe(),
        r.peak_request_bytes.map(|b| before.describe_request(b)).unwrap_or_default()
    );
    let mut j = layout.to_json(&file.display().to_string(), r.peak_reserved_event, r.peak_reserved_line);
    j["before"] = before.to_json_before(r.peak_reserved_event.saturating_sub(1), r.peak_request_bytes);
    Ok((line, j))
}

/// Replay's text output: the report `r` of the trace at `path`, then a
/// line for each file `written` (what it is, what was written).
fn print_replay_text(path: &Path, o: &Options, conf_str: &str, r: &replay::Report, written: &[(&str, String)]) {
    println!("trace            {}", path.display());
    println!("backend          {} ({} device memory)", o.backend.name(), gib(o.device_memory));
    println!("config           {conf_str}");
    println!("events           {} on {} stream(s)", r.events, r.streams);
    println!("peak requested   {} ({} bytes)", gib(r.peak_requested_bytes), r.peak_requested_bytes);
    println!("peak allocated   {} ({} bytes)", gib(r.peak_allocated_bytes), r.peak_allocated_bytes);
    println!("peak reserved    {} ({} bytes)", gib(r.peak_reserved_bytes), r.peak_reserved_bytes);
    println!(
        "mean reserved    {} ({} bytes, time-weighted: mean over events)",
        gib(r.time_weighted_reserved_bytes),
        r.time_weighted_reserved_bytes
    );
    println!("fragmentation    {} (peak reserved / peak requested)", r.fragmentation_text());
    println!("retries / OOMs   {} / {}", r.num_alloc_retries, r.num_ooms);
    println!(
        "pages            created {} mapped {} moved {} unmapped {} released {} access sets {}",
        r.pages.created, r.pages.mapped, r.pages.moved, r.pages.unmapped, r.pages.released, r.pages.access_sets
    );
    println!("driver estimate  {:.1} ms (H200 per-call costs)", r.pages.driver_us_estimate() / 1000.0);
    println!("time             {:.3} s, {:.0} ns per event", r.seconds, r.ns_per_event());
    for (what, line) in written {
        println!("{what:<17}{line}");
    }
}

fn cmd_compare(args: &[OsString]) -> Result<(), String> {
    let o = parse_options(args)?;
    if o.files.is_empty() {
        return Err("compare needs at least one trace file".into());
    }
    for (option, set) in [("--snapshot", o.snapshot.is_some()), ("--peak-snapshot", o.peak_snapshot.is_some())] {
        if set {
            return Err(format!("{option} is a replay option: snapshot one allocator with 'expanse replay'"));
        }
    }
    let modes: [(&str, Config); 3] = [
        ("expanse in PyTorch-native mode", Config::pytorch_native()),
        ("expanse in PyTorch-expandable mode", Config::pytorch_expandable()),
        ("expanse", config_of(&o.conf)?),
    ];
    if !o.json {
        println!("| trace | allocator | peak reserved | fragmentation | pages created | pages moved | driver estimate | ns/event |");
        println!("|---|---|---:|---:|---:|---:|---:|---:|");
    }
    let mut logs = Vec::new();
    for path in &o.files {
        compare_trace(path, &o, &modes, &mut logs)?;
    }
    for l in logs {
        eprintln!("{l}");
    }
    Ok(())
}

/// The plain compare of the trace at `path`: one replay per mode, each
/// printed as a table row (or JSON line), then its `--plot`; what to say
/// on stderr at the end (out of memory, the driver estimate ratio) is
/// added to `logs`.
fn compare_trace(path: &Path, o: &Options, modes: &[(&str, Config); 3], logs: &mut Vec<String>) -> Result<(), String> {
    let name = trace_name(path);
    let mut ests = Vec::new();
    let mut samples = Vec::new();
    for (label, config) in modes {
        let mut watch = watch::Watch::new(&format!("{name} / {label}"), None, o.plot.is_some());
        let r = replay_watched(path, o, config.clone(), &mut watch)?;
        samples.push(watch.samples);
        ests.push(r.pages.driver_us_estimate());
        print_compare_row(path, &name, label, &config.to_conf_string(), o, &r);
        if let Some((line, msg)) = r.oom {
            logs.push(format!("{name} / {label}: ran out of memory at line {line}: {msg}"));
        }
    }
    if let Some(plot) = &o.plot {
        let runs: Vec<plot::Run> =
            modes.iter().zip(&samples).map(|((label, _), s)| plot::Run { label, samples: s }).collect();
        let title = format!("{name}: memory over the replay ({} backend)", o.backend.name());
        plot::draw(&plot_path(plot, &name, o.files.len()), &title, &runs)?;
    }
    if ests[1] > 0.0 {
        logs.push(format!(
            "{name}: expanse driver estimate is {:.2}x expanse in PyTorch-expandable mode's",
            ests[2] / ests[1]
        ));
    }
    Ok(())
}

/// One replay `r` of the plain compare: a row of its table, or with
/// `--json` the report as one JSON line.
fn print_compare_row(path: &Path, name: &str, label: &str, conf_str: &str, o: &Options, r: &replay::Report) {
    if o.json {
        println!("{}", r.to_json(&path.display().to_string(), o.backend.name(), conf_str));
    } else {
        println!(
            "| {name} | {label} | {} | {} | {} | {} | {:.1} ms | {:.0} |",
            r.peak_reserved_bytes,
            r.fragmentation_text(),
            r.pages.created,
            r.pages.moved,
            r.pages.driver_us_estimate() / 1000.0,
            r.ns_per_event()
        );
    }
}

fn run(args: &[OsString]) -> Result<(), String> {
    match args.first().map(|a| a.to_str().ok_or_else(|| format!("unknown command {a:?} (see 'expanse help')"))) {
        Some(Err(e)) => Err(e),
        None | Some(Ok("help" | "--help" | "-h")) => {
            print!("{HELP}");
            Ok(())
        }
        Some(Ok("replay")) => cmd_replay(&args[1..]),
        Some(Ok("compare")) => corpus::cmd_compare(&args[1..]),
        Some(Ok("bench")) => bench::cmd_bench(&args[1..]),
        Some(Ok("backends")) => backends::cmd_backends(&args[1..]),
        Some(Ok(other)) => Err(format!("unknown command '{other}' (see 'expanse help')")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("143771MiB").unwrap(), 143771 << 20);
        assert_eq!(parse_size("16GiB").unwrap(), 16 << 30);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("12XB").unwrap_err().contains("unknown unit"));
        assert!(parse_size("abc").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("99999999999TiB").is_err());
    }
}
