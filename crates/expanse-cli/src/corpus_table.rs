//! The corpus comparison's rows, their summaries per split and their
//! output as a Markdown table or JSON lines.

use crate::corpus::Recorded;
use crate::replay::Report;

/// Column names of PyTorch's three allocators, as recorded.
const PYTORCH: [&str; 3] = ["PyTorch native (GPU)", "PyTorch expandable (GPU)", "PyTorch cudaMallocAsync (GPU)"];
/// What stands in for them when a trace has no recorded figures.
const REPLICAS: [&str; 2] = ["expanse in PyTorch-native mode", "expanse in PyTorch-expandable mode"];

/// One trace's figures.
pub struct Row {
    pub name: String,
    pub recorded: Option<Recorded>,
    /// expanse in PyTorch-native mode, run when nothing was recorded.
    pub native: Option<Report>,
    /// expanse in PyTorch-expandable mode.
    pub compat: Report,
    /// expanse with the configuration asked for (its default unless `--conf`).
    pub expanse: Report,
    /// Smallest capacities (expanse in PyTorch-expandable mode, expanse),
    /// when measured; `None` inside when even the unconstrained peak failed.
    pub capacities: Option<(Option<u64>, Option<u64>)>,
}

/// Win, tie or loss of expanse against the best PyTorch figure.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Win,
    Tie,
    Loss,
}

impl Row {
    fn split(&self) -> &str {
        self.recorded.as_ref().map_or("unrecorded", |r| r.split.as_str())
    }

    fn requested(&self) -> u64 {
        self.expanse.peak_requested_bytes.max(1)
    }

    /// Peak reserved of PyTorch's three allocators: recorded, or from
    /// expanse's byte-exact modes (no cudaMallocAsync figure then).
    fn pytorch_peaks(&self) -> [Option<u64>; 3] {
        match &self.recorded {
            Some(r) => r.peaks.map(Some),
            None => [self.native.as_ref().map(|n| n.peak_reserved_bytes), Some(self.compat.peak_reserved_bytes), None],
        }
    }

    fn ratio(&self, bytes: u64) -> f64 {
        bytes as f64 / self.requested() as f64
    }

    fn outcome(&self) -> Outcome {
        let best = self.pytorch_peaks().into_iter().flatten().min().unwrap_or(u64::MAX);
        match self.expanse.peak_reserved_bytes.cmp(&best) {
            std::cmp::Ordering::Less => Outcome::Win,
            std::cmp::Ordering::Equal => Outcome::Tie,
            std::cmp::Ordering::Greater => Outcome::Loss,
        }
    }

    /// expanse's driver estimate over expanse in PyTorch-expandable mode's.
    fn driver_ratio(&self) -> Option<f64> {
        let base = self.compat.pages.driver_us_estimate();
        (base > 0.0).then(|| self.expanse.pages.driver_us_estimate() / base)
    }

    fn ran_out(&self) -> bool {
        self.expanse.oom.is_some() || self.compat.oom.is_some()
    }
}

fn geomean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for x in xs.filter(|x| *x > 0.0) {
        sum += x.ln();
        n += 1;
    }
    (n > 0).then(|| (sum / n as f64).exp())
}

/// Geometric means and counts over a group of rows.
struct Summary {
    traces: usize,
    /// PyTorch native, expandable, cudaMallocAsync, expanse.
    fragmentation: [Option<f64>; 4],
    wins: usize,
    ties: usize,
    losses: usize,
    driver_ratio: Option<f64>,
    /// Smallest capacity over peak requested: PyTorch-expandable mode, expanse.
    capacity: [Option<f64>; 2],
    /// Traces where expanse needs strictly less capacity.
    capacity_wins: usize,
    capacity_losses: usize,
}

fn summarize(rows: &[&Row]) -> Summary {
    let pt = |k: usize| geomean(rows.iter().filter_map(|r| r.pytorch_peaks()[k].map(|p| r.ratio(p))));
    let caps: Vec<(&Row, u64, u64)> = rows
        .iter()
        .filter_map(|r| match r.capacities {
            Some((Some(a), Some(b))) => Some((*r, a, b)),
            _ => None,
        })
        .collect();
    let count = |o: Outcome| rows.iter().filter(|r| !r.ran_out() && r.outcome() == o).count();
    Summary {
        traces: rows.len(),
        fragmentation: [pt(0), pt(1), pt(2), geomean(rows.iter().map(|r| r.ratio(r.expanse.peak_reserved_bytes)))],
        wins: count(Outcome::Win),
        ties: count(Outcome::Tie),
        losses: count(Outcome::Loss),
        driver_ratio: geomean(rows.iter().filter_map(|r| r.driver_ratio())),
        capacity: [
            geomean(caps.iter().map(|(r, a, _)| r.ratio(*a))),
            geomean(caps.iter().map(|(r, _, b)| r.ratio(*b))),
        ],
        capacity_wins: caps.iter().filter(|(_, a, b)| b < a).count(),
        capacity_losses: caps.iter().filter(|(_, a, b)| b > a).count(),
    }
}

/// The groups in order: tuning, held-out, any other split, unrecorded;
/// then all.
fn groups(rows: &[Row]) -> Vec<(String, Vec<&Row>)> {
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.split()) {
            names.push(r.split());
        }
    }
    let rank = |n: &str| match n {
        "tuning" => 0,
        "held-out" => 1,
        "unrecorded" => 3,
        _ => 2,
    };
    names.sort_by_key(|n| rank(n));
    names.into_iter().map(|n| (n.to_string(), rows.iter().filter(|r| r.split() == n).collect())).collect()
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.digits$}"))
}

fn mib(bytes: u64) -> String {
    let m = (bytes >> 20).to_string();
    let mut out = String::new();
    for (i, c) in m.chars().enumerate() {
        if i > 0 && (m.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{out} MiB")
}

/// The table in Markdown, one section of rows per split, each closed by
/// its geometric means, then the overall ones.
pub fn print_table(rows: &[Row], capacity: bool) {
    println!(
        "| trace | split | peak requested | {} | {} | {} | expanse | expanse below the best | driver estimate vs {} | smallest capacity, {} | smallest capacity, expanse |",
        PYTORCH[0], PYTORCH[1], PYTORCH[2], REPLICAS[1], REPLICAS[1]
    );
    println!("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|");
    let mut any_replica = false;
    let groups = groups(rows);
    for (name, members) in &groups {
        for r in members {
            any_replica |= r.recorded.is_none();
            print_row(r);
        }
        print_summary(&format!("{name}: geometric mean"), &summarize(members));
    }
    if groups.len() > 1 {
        print_summary("all: geometric mean", &summarize(&rows.iter().collect::<Vec<_>>()));
    }
    print_notes(capacity, any_replica);
}

/// One trace's row of the table (its PyTorch figures marked † when they
/// are expanse's replicas, not recorded ones).
fn print_row(r: &Row) {
    let mark = if r.recorded.is_none() { " †" } else { "" };
    let pt: Vec<String> =
        r.pytorch_peaks().iter().map(|p| p.map_or("-".into(), |p| format!("{:.4}{mark}", r.ratio(p)))).collect();
    let outcome = if r.ran_out() {
        "out of memory".to_string()
    } else {
        match r.outcome() {
            Outcome::Win => "win",
            Outcome::Tie => "tie",
            Outcome::Loss => "loss",
        }
        .to_string()
    };
    let cap = |c: Option<u64>| c.map_or("none".into(), |c| format!("{} ({:.4})", mib(c), r.ratio(c)));
    let (ca, cb) = match r.capacities {
        Some((a, b)) => (cap(a), cap(b)),
        None => ("-".into(), "-".into()),
    };
    println!(
        "| {} | {} | {} | {} | {} | {} | {:.4} | {outcome} | {}x | {ca} | {cb} |",
        r.name,
        r.split(),
        mib(r.expanse.peak_requested_bytes),
        pt[0],
        pt[1],
        pt[2],
        r.ratio(r.expanse.peak_reserved_bytes),
        opt(r.driver_ratio(), 2),
    );
}

/// The notes under the table: what its columns mean, the capacity
/// columns' when they were measured, and the † mark's when a row has it.
fn print_notes(capacity: bool, any_replica: bool) {
    println!();
    println!("Fragmentation = peak reserved / peak requested. PyTorch columns: PyTorch's own allocators");
    println!("replaying the trace on the GPU it was recorded on (corpus.json: an H200 unless live.device names");
    println!("another card). expanse below the best: expanse's peak strictly");
    println!("below the lowest PyTorch figure. Driver estimate: expanse's estimated driver time (H200");
    println!("per-call costs) over that of {}, whose driver calls are PyTorch's.", REPLICAS[1]);
    if capacity {
        println!("Smallest capacity: least device memory, in 2 MiB steps on the sim backend, on which the replay");
        println!("completes without running out of memory (over peak requested in parentheses); summary rows:");
        println!("geometric mean of that ratio, and on how many traces expanse needs less / more.");
    }
    if any_replica {
        println!(
            "† no recorded figure: {} and {} (byte-exact replicas); no cudaMallocAsync figure.",
            REPLICAS[0], REPLICAS[1]
        );
    }
}

fn print_summary(label: &str, s: &Summary) {
    let f = |k: usize| opt(s.fragmentation[k], 4);
    let ties = if s.ties > 0 { format!(", {} ties", s.ties) } else { String::new() };
    let caps = |k: usize| opt(s.capacity[k], 4);
    let cap_count = if s.capacity[1].is_some() {
        format!(" ({} smaller, {} larger)", s.capacity_wins, s.capacity_losses)
    } else {
        String::new()
    };
    println!(
        "| **{label}** ({} traces) | | | {} | {} | {} | **{}** | **{} wins, {} losses{ties}** | {}x | {} | {}{cap_count} |",
        s.traces,
        f(0),
        f(1),
        f(2),
        f(3),
        s.wins,
        s.losses,
        opt(s.driver_ratio, 2),
        caps(0),
        caps(1),
    );
}

/// One JSON object per trace, then one per group and one for all.
pub fn print_json(rows: &[Row], backend: &str, conf: &str) {
    for r in rows {
        let peaks = r.pytorch_peaks();
        let source = if r.recorded.is_some() { "recorded: PyTorch on the GPU" } else { "expanse's byte-exact modes" };
        let caps = r.capacities.map(|(a, b)| {
            serde_json::json!({"expanse_in_pytorch_expandable_mode": a, "expanse": b, "step_bytes": crate::capacity::STEP})
        });
        let v = serde_json::json!({
            "trace": r.name,
            "split": r.split(),
            "peak_requested_bytes": r.expanse.peak_requested_bytes,
            "pytorch_source": source,
            "pytorch_native_peak_reserved_bytes": peaks[0],
            "pytorch_expandable_peak_reserved_bytes": peaks[1],
            "pytorch_async_peak_reserved_bytes": peaks[2],
            "fragmentation": {
                "pytorch_native": peaks[0].map(|p| r.ratio(p)),
                "pytorch_expandable": peaks[1].map(|p| r.ratio(p)),
                "pytorch_async": peaks[2].map(|p| r.ratio(p)),
                "expanse": r.ratio(r.expanse.peak_reserved_bytes),
            },
            "expanse_below_best": !r.ran_out() && r.outcome() == Outcome::Win,
            "driver_estimate_ratio": r.driver_ratio(),
            "smallest_capacity_bytes": caps,
            "expanse": r.expanse.to_json(&r.name, backend, conf),
            "expanse_in_pytorch_expandable_mode": r.compat.to_json(&r.name, backend, "expandable_segments:True,pytorch_compat:True"),
        });
        println!("{v}");
    }
    let groups = groups(rows);
    let all: Vec<&Row> = rows.iter().collect();
    for (name, members) in groups.iter().map(|(n, m)| (n.as_str(), m)).chain(std::iter::once(("all", &all))) {
        let s = summarize(members);
        println!(
            "{}",
            serde_json::json!({
                "group": name,
                "traces": s.traces,
                "geomean_fragmentation": {
                    "pytorch_native": s.fragmentation[0], "pytorch_expandable": s.fragmentation[1],
                    "pytorch_async": s.fragmentation[2], "expanse": s.fragmentation[3],
                },
                "wins": s.wins, "ties": s.ties, "losses": s.losses,
                "geomean_driver_estimate_ratio": s.driver_ratio,
                "geomean_smallest_capacity_over_requested": {
                    "expanse_in_pytorch_expandable_mode": s.capacity[0], "expanse": s.capacity[1],
                },
                "capacity_smaller": s.capacity_wins, "capacity_larger": s.capacity_losses,
            })
        );
    }
}
