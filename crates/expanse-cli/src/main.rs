//! The `expanse` command.

mod backends;
mod replay;
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
    compare TRACE... Replay traces under PyTorch's native, PyTorch's expandable
                     and expanse's default allocator and print a table
    bench            Time the allocator's hot path (cached malloc + free pairs
                     and a mixed pattern) under PyTorch's and expanse's modes
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
    let mut o =
        Options { conf: None, backend: BackendKind::Host, device_memory: 143771 << 20, json: false, files: Vec::new() };
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

/// Replay the trace at `path`, streamed from the file.
fn replay_one(path: &Path, o: &Options, config: Config) -> Result<replay::Report, String> {
    let device = make_device(o.backend, o.device_memory)?;
    config.check_device(device.total_memory(), device.granularity()).map_err(|e| e.to_string())?;
    let events = trace::open(path).map_err(|e| e.to_string())?;
    replay::run(events, device, config).map_err(|f| match f {
        replay::Failed::Trace(e) => e.to_string(),
        replay::Failed::Alloc(line, e) => format!("{}:{line}: {e}", path.display()),
    })
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
    let r = replay_one(path, &o, config)?;
    if o.json {
        println!("{}", r.to_json(&path.display().to_string(), o.backend.name(), &conf_str));
    } else {
        println!("trace            {}", path.display());
        println!("backend          {} ({} device memory)", o.backend.name(), gib(o.device_memory));
        println!("config           {conf_str}");
        println!("events           {} on {} stream(s)", r.events, r.streams);
        println!("peak requested   {} ({} bytes)", gib(r.peak_requested_bytes), r.peak_requested_bytes);
        println!("peak allocated   {} ({} bytes)", gib(r.peak_allocated_bytes), r.peak_allocated_bytes);
        println!("peak reserved    {} ({} bytes)", gib(r.peak_reserved_bytes), r.peak_reserved_bytes);
        println!("fragmentation    {} (peak reserved / peak requested)", r.fragmentation_text());
        println!("retries / OOMs   {} / {}", r.num_alloc_retries, r.num_ooms);
        println!(
            "pages            created {} mapped {} moved {} unmapped {} released {} access sets {}",
            r.pages.created, r.pages.mapped, r.pages.moved, r.pages.unmapped, r.pages.released, r.pages.access_sets
        );
        println!("driver estimate  {:.1} ms (H200 per-call costs)", r.pages.driver_us_estimate() / 1000.0);
        println!("time             {:.3} s, {:.0} ns per event", r.seconds, r.ns_per_event());
    }
    if let Some((line, msg)) = &r.oom {
        return Err(format!("{}:{line}: {msg}", path.display()));
    }
    Ok(())
}

fn cmd_compare(args: &[OsString]) -> Result<(), String> {
    let o = parse_options(args)?;
    if o.files.is_empty() {
        return Err("compare needs at least one trace file".into());
    }
    let modes: [(&str, Config); 3] = [
        ("pytorch native", Config::pytorch_native()),
        ("pytorch expandable", Config::pytorch_expandable()),
        ("expanse", config_of(&o.conf)?),
    ];
    if !o.json {
        println!("| trace | allocator | peak reserved | fragmentation | pages created | pages moved | driver estimate | ns/event |");
        println!("|---|---|---:|---:|---:|---:|---:|---:|");
    }
    let mut logs = Vec::new();
    for path in &o.files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().replace(".trace.csv.gz", "").replace(".trace.csv", ""))
            .unwrap_or_default();
        let mut ests = Vec::new();
        for (label, config) in &modes {
            let conf_str = config.to_conf_string();
            let r = replay_one(path, &o, config.clone())?;
            ests.push(r.pages.driver_us_estimate());
            if o.json {
                println!("{}", r.to_json(&path.display().to_string(), o.backend.name(), &conf_str));
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
            if let Some((line, msg)) = r.oom {
                logs.push(format!("{name} / {label}: ran out of memory at line {line}: {msg}"));
            }
        }
        if ests[1] > 0.0 {
            logs.push(format!("{name}: expanse driver estimate is {:.2}x PyTorch expandable's", ests[2] / ests[1]));
        }
    }
    for l in logs {
        eprintln!("{l}");
    }
    Ok(())
}

/// Nanoseconds per malloc + free pair: `rounds` pairs over `sizes`, after
/// a warm-up that puts every size in the cache.
fn time_pairs(
    alloc: &mut expanse_core::DeviceAllocator,
    sizes: &[u64],
    rounds: usize,
    live: usize,
) -> Result<f64, String> {
    use expanse_core::StreamId;
    let s0 = StreamId(0);
    let mut held: std::collections::VecDeque<u64> = std::collections::VecDeque::new();
    let mut step = |i: usize, held: &mut std::collections::VecDeque<u64>| -> Result<(), String> {
        held.push_back(alloc.malloc(sizes[i % sizes.len()], s0).map_err(|e| e.to_string())?);
        if held.len() > live {
            alloc.free(held.pop_front().expect("non-empty")).map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    for i in 0..sizes.len() * 4 {
        step(i, &mut held)?;
    }
    let start = std::time::Instant::now();
    for i in 0..rounds {
        step(i, &mut held)?;
    }
    let ns = start.elapsed().as_nanos() as f64 / rounds as f64;
    for p in held {
        alloc.free(p).map_err(|e| e.to_string())?;
    }
    Ok(ns)
}

fn cmd_bench(args: &[OsString]) -> Result<(), String> {
    let o = parse_options(args)?;
    let modes: [(&str, Config); 3] = [
        ("pytorch native", Config::pytorch_native()),
        ("pytorch expandable", Config::pytorch_expandable()),
        ("expanse", config_of(&o.conf)?),
    ];
    const MIB: u64 = 1 << 20;
    let small: Vec<u64> = vec![512, 4096, 30_000, 200_000, 1 << 20];
    let mixed: Vec<u64> = vec![3000, 5 * MIB, 700, 48 * MIB, 2 * MIB + 100, 130_000, 12 * MIB, 9000];
    println!("| allocator | same small size (ns/pair) | five small sizes (ns/pair) | mixed sizes, 64 live (ns/pair) |");
    println!("|---|---:|---:|---:|");
    for (label, config) in modes {
        let device = make_device(o.backend, o.device_memory)?;
        let mut a = expanse_core::DeviceAllocator::new(device, config);
        let one = time_pairs(&mut a, &[4096], 2_000_000, 0)?;
        let five = time_pairs(&mut a, &small, 2_000_000, 0)?;
        let mix = time_pairs(&mut a, &mixed, 1_000_000, 64)?;
        println!("| {label} | {one:.0} | {five:.0} | {mix:.0} |");
    }
    Ok(())
}

fn run(args: &[OsString]) -> Result<(), String> {
    match args.first().map(|a| a.to_str().ok_or_else(|| format!("unknown command {a:?} (see 'expanse help')"))) {
        Some(Err(e)) => Err(e),
        None | Some(Ok("help" | "--help" | "-h")) => {
            print!("{HELP}");
            Ok(())
        }
        Some(Ok("replay")) => cmd_replay(&args[1..]),
        Some(Ok("compare")) => cmd_compare(&args[1..]),
        Some(Ok("bench")) => cmd_bench(&args[1..]),
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
