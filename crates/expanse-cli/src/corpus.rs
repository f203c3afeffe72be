//! `expanse compare` over a corpus: a folder of traces (or trace files)
//! with a `corpus.json` next to them holding PyTorch's own figures for each
//! (peak reserved under its native, expandable and cudaMallocAsync
//! allocators, replayed on an H200). Per trace: those figures, expanse's
//! default, expanse's driver estimate against expanse in PyTorch-expandable
//! mode (the byte-exact replica, whose driver calls are PyTorch's), and the
//! smallest device capacity on which the trace completes, for expanse in
//! PyTorch-expandable mode and for expanse. Rows are grouped by the
//! corpus's split, with geometric means and wins and losses.
//!
//! A trace without a `corpus.json` entry gets its PyTorch columns from
//! expanse's byte-exact modes, labelled as such. Explicit files with no
//! `corpus.json` at all keep the plain per-mode table of `crate::cmd_compare`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use expanse_core::Config;

use crate::corpus_table::{print_json, print_table, Row};
use crate::{capacity, Options};

/// PyTorch's recorded figures for one trace.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub split: String,
    pub peak_requested: u64,
    /// Peak reserved bytes: native, expandable, cudaMallocAsync.
    pub peaks: [u64; 3],
}

/// The trace's name: its file name without `.trace.csv[.gz]` / `.csv[.gz]`.
pub fn trace_name(path: &Path) -> String {
    let n = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let n = n.strip_suffix(".gz").unwrap_or(&n);
    let n = n.strip_suffix(".csv").unwrap_or(n);
    n.strip_suffix(".trace").unwrap_or(n).to_string()
}

/// The entries of `dir/corpus.json`, if there is one.
fn load(dir: &Path) -> Result<Option<HashMap<String, Recorded>>, String> {
    let path = dir.join("corpus.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: cannot read: {e}", path.display())),
    };
    let bad = |what: String| format!("{}: {what}", path.display());
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let traces = v["traces"].as_object().ok_or_else(|| bad("no 'traces' object".into()))?;
    let mut out = HashMap::new();
    for (name, t) in traces {
        let num = |p: &str| {
            t.pointer(p)
                .and_then(|x| x.as_u64())
                .ok_or_else(|| bad(format!("trace '{name}': {p} missing or not a count")))
        };
        let split = t["split"].as_str().ok_or_else(|| bad(format!("trace '{name}': /split missing")))?;
        let peaks = [
            num("/replay/native/peak_reserved_bytes")?,
            num("/replay/expandable/peak_reserved_bytes")?,
            num("/replay/async/peak_reserved_bytes")?,
        ];
        out.insert(
            name.clone(),
            Recorded { split: split.replace('_', "-"), peak_requested: num("/peak_requested_bytes")?, peaks },
        );
    }
    Ok(Some(out))
}

/// Trace files of the arguments: a folder stands for its `*.csv` and
/// `*.csv.gz` files, sorted by name.
fn expand(args: &[PathBuf]) -> Result<(Vec<PathBuf>, bool), String> {
    let mut files = Vec::new();
    let mut any_dir = false;
    for a in args {
        if a.is_dir() {
            any_dir = true;
            let mut found: Vec<PathBuf> = std::fs::read_dir(a)
                .map_err(|e| format!("{}: cannot list: {e}", a.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.is_file() && (p.to_string_lossy().ends_with(".csv") || p.to_string_lossy().ends_with(".csv.gz"))
                })
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(format!("{}: no trace files (*.csv, *.csv.gz) in this folder", a.display()));
            }
            files.extend(found);
        } else {
            files.push(a.clone());
        }
    }
    Ok((files, any_dir))
}

/// `expanse compare`: the corpus table when a folder is given or a trace
/// has a `corpus.json` entry, else the plain table of `crate::cmd_compare`.
pub fn cmd_compare(args: &[std::ffi::OsString]) -> Result<(), String> {
    let mut capacity = true;
    let rest: Vec<std::ffi::OsString> = args
        .iter()
        .filter(|a| match a.to_str().unwrap_or("") {
            "--no-capacity" => {
                capacity = false;
                false
            }
            "--capacity" => {
                capacity = true;
                false
            }
            _ => true,
        })
        .cloned()
        .collect();
    let o = crate::parse_options(&rest)?;
    if o.files.is_empty() {
        return Err("compare needs a folder of traces or at least one trace file".into());
    }
    let (files, any_dir) = expand(&o.files)?;
    let mut corpora: HashMap<PathBuf, Option<HashMap<String, Recorded>>> = HashMap::new();
    let mut jobs = Vec::new();
    for f in files {
        let dir = f.parent().map(Path::to_path_buf).unwrap_or_default();
        let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
        if !corpora.contains_key(&dir) {
            corpora.insert(dir.clone(), load(&dir)?);
        }
        let recorded = corpora[&dir].as_ref().and_then(|c| c.get(&trace_name(&f)).cloned());
        jobs.push((f, recorded));
    }
    // Plots and snapshots are per replay: the per-mode table draws them
    // (and refuses a snapshot) for explicit files, recorded or not.
    let per_replay = o.plot.is_some() || o.snapshot.is_some() || o.peak_snapshot.is_some();
    if !any_dir && (per_replay || jobs.iter().all(|(_, r)| r.is_none())) {
        return crate::cmd_compare(&rest);
    }
    if per_replay {
        return Err("compare over a folder draws no plot and writes no snapshot: name the trace files".into());
    }
    let config = crate::config_of(&o.conf)?;
    let rows = run_all(&jobs, &o, &config, capacity)?;
    if o.json {
        print_json(&rows, o.backend.name(), &config.to_conf_string());
    } else {
        print_table(&rows, capacity);
    }
    Ok(())
}

/// Every trace's row, traces spread over the machine's cores.
fn run_all(
    jobs: &[(PathBuf, Option<Recorded>)],
    o: &Options,
    config: &Config,
    capacity: bool,
) -> Result<Vec<Row>, String> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(jobs.len()).max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<Result<Row, String>>> = (0..jobs.len()).map(|_| None).collect();
    let done: Vec<(usize, Result<Row, String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((path, recorded)) = jobs.get(i) else { break };
                        mine.push((i, row(path, recorded.clone(), o, config, capacity)));
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    for (i, r) in done {
        results[i] = Some(r);
    }
    results.into_iter().map(|r| r.unwrap_or_else(|| Err("a worker thread panicked".into()))).collect()
}

/// Replays of one trace: expanse's default and expanse in
/// PyTorch-expandable mode (plus PyTorch-native mode when nothing was
/// recorded), then the two smallest capacities.
fn row(path: &Path, recorded: Option<Recorded>, o: &Options, config: &Config, capacity: bool) -> Result<Row, String> {
    let compat_config = Config::pytorch_expandable();
    let quiet = &mut crate::replay::Quiet;
    let expanse = crate::replay_one(path, o, config.clone(), quiet)?;
    let compat = crate::replay_one(path, o, compat_config.clone(), quiet)?;
    let native =
        if recorded.is_none() { Some(crate::replay_one(path, o, Config::pytorch_native(), quiet)?) } else { None };
    let peak_requested = expanse.peak_requested_bytes;
    if let Some(r) = &recorded {
        if r.peak_requested != peak_requested {
            eprintln!(
                "{}: peak requested {peak_requested} differs from corpus.json's {}",
                path.display(),
                r.peak_requested
            );
        }
    }
    let capacities = if capacity && expanse.oom.is_none() && compat.oom.is_none() {
        let t: Vec<_> =
            crate::trace::open(path).and_then(|events| events.collect::<Result<_, _>>()).map_err(|e| e.to_string())?;
        let at = |c: &Config, peak| {
            capacity::smallest(&t, c, peak_requested, peak).map_err(|e| format!("{}: {e}", path.display()))
        };
        Some((at(&compat_config, compat.peak_reserved_bytes)?, at(config, expanse.peak_reserved_bytes)?))
    } else {
        None
    };
    Ok(Row { name: trace_name(path), recorded, native, compat, expanse, capacities })
}
