//! `--snapshot` and `--plot` end to end: the snapshot of a replay of every
//! shared trace decodes with the independent reader of the pickle subset
//! (expanse-core's `tests/support/unpickle.rs`), and agrees with the
//! replay's own report; plots are SVG with their labels.

#[path = "../../expanse-core/tests/support/unpickle.rs"]
mod unpickle;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use unpickle::Value;

fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_expanse"))
}

fn traces_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../traces")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("expanse-snapshot-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Replay `trace` with `args`, writing the snapshot to `out`; returns the
/// JSON report and the decoded snapshot.
fn snapshot_of(trace: &Path, args: &[&str], out: &Path) -> (serde_json::Value, Value) {
    snapshot_with("--snapshot", trace, args, out)
}

/// [`snapshot_of`] with the snapshot option `option` (`--snapshot`, taken
/// at the end, or `--peak-snapshot`).
fn snapshot_with(option: &str, trace: &Path, args: &[&str], out: &Path) -> (serde_json::Value, Value) {
    let o = exe()
        .args(["replay", trace.to_str().unwrap(), "--json", option, out.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}: {}", trace.display(), String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "stderr is not a terminal: nothing on it, got {}", String::from_utf8_lossy(&o.stderr));
    let report = serde_json::from_slice(&o.stdout).unwrap();
    let bytes = std::fs::read(out).unwrap();
    let (v, _) = unpickle::load(&bytes).unwrap_or_else(|e| panic!("{}: {e}", trace.display()));
    (report, v)
}

/// Bytes mapped at the end by the history's segment events, and how often
/// each action occurs.
fn replay_history(entries: &[Value]) -> (i128, BTreeMap<String, usize>) {
    let mut mapped = 0;
    let mut counts = BTreeMap::new();
    for e in entries {
        let action = e.at("action").str();
        match action {
            "segment_alloc" | "segment_map" => mapped += e.at("size").int(),
            "segment_free" | "segment_unmap" => mapped -= e.at("size").int(),
            _ => {}
        }
        *counts.entry(action.to_owned()).or_insert(0) += 1;
    }
    (mapped, counts)
}

/// Segments' blocks tile them; their sizes add up to the replay's final
/// reserved bytes.
fn check_segments(v: &Value, report: &serde_json::Value, name: &str) {
    let mut reserved = 0;
    for g in v.at("segments").list() {
        let mut at = g.at("address").int();
        for b in g.at("blocks").list() {
            assert_eq!(b.at("address").int(), at, "{name}: blocks out of order");
            assert!(["active_allocated", "active_pending_free", "inactive"].contains(&b.at("state").str()));
            at += b.at("size").int();
        }
        assert_eq!(at - g.at("address").int(), g.at("total_size").int(), "{name}");
        reserved += g.at("total_size").int();
    }
    assert_eq!(reserved, i128::from(report["final_reserved_bytes"].as_u64().unwrap()), "{name}");
}

/// The snapshot of `trace` with a history of at most 20,000 entries.
fn check_bounded_snapshot(trace: &Path, out: &Path) {
    let name = trace.file_name().unwrap().to_string_lossy().into_owned();
    let (report, v) = snapshot_of(trace, &["--history-entries", "20000"], out);
    assert_eq!(v.keys().into_iter().collect::<Vec<_>>(), ["device_traces", "segments"], "{name}");
    check_segments(&v, &report, &name);
    let traces = v.at("device_traces").list();
    assert_eq!(traces.len(), 1, "{name}: one device");
    let entries = traces[0].list();
    assert!(entries.len() <= 20000, "{name}: bound not kept");
    assert!(entries.len() == 20000 || report["events"].as_u64().unwrap() < 20000, "{name}: history too short");
    assert_eq!(entries.last().unwrap().at("action").str(), "snapshot", "{name}");
}

#[test]
fn a_snapshot_of_every_shared_trace_uses_only_the_subset() {
    let dir = scratch("all");
    let mut names: Vec<PathBuf> = std::fs::read_dir(traces_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".trace.csv"))
        .collect();
    names.sort();
    assert!(names.len() >= 17, "traces/ has {} traces", names.len());
    // Two replays at a time (CI has two cores).
    let (even, odd): (Vec<_>, Vec<_>) = names.iter().enumerate().partition(|(i, _)| i % 2 == 0);
    std::thread::scope(|scope| {
        for (k, half) in [even, odd].into_iter().enumerate() {
            let out = dir.join(format!("s{k}.pickle"));
            scope.spawn(move || half.into_iter().for_each(|(_, trace)| check_bounded_snapshot(trace, &out)));
        }
    });
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_whole_history_adds_up_to_the_replay() {
    let dir = scratch("whole");
    let resnet = traces_dir().join("resnet_train.trace.csv.gz");
    for (conf, moves) in [
        ("expandable_segments:False", false),
        ("expandable_segments:True,pytorch_compat:True", false),
        // The default moves no page on this trace (its small pool takes
        // free large-pool blocks instead); without that rule it moves some.
        ("expandable_segments:True", false),
        ("expandable_segments:True,small_from_large:False", true),
    ] {
        let (report, v) = snapshot_of(&resnet, &["--conf", conf], &dir.join("s.pickle"));
        check_segments(&v, &report, conf);
        let entries = v.at("device_traces").list()[0].list();
        let (mapped, counts) = replay_history(entries);
        assert_eq!(mapped, i128::from(report["final_reserved_bytes"].as_u64().unwrap()), "{conf}");
        let events = report["events"].as_u64().unwrap() as usize;
        let allocs = counts.get("alloc").copied().unwrap_or(0);
        let frees = counts.get("free_requested").copied().unwrap_or(0);
        assert_eq!(allocs + frees, events, "{conf}: one entry per trace event");
        let classic = counts.contains_key("segment_alloc");
        assert_eq!(classic, conf.starts_with("expandable_segments:False"), "{conf}: {counts:?}");
        assert_eq!(counts.contains_key("segment_map"), !classic, "{conf}: {counts:?}");
        let moved = report["pages_moved"].as_u64().unwrap();
        assert_eq!(moved > 0, moves, "{conf}: pages moved {moved}");
        assert_eq!(counts.contains_key("page_move"), moves, "{conf}: {counts:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn several_streams_show_lending_in_the_history() {
    let dir = scratch("lend");
    let five = traces_dir().join("five_streams.trace.csv");
    let (_, v) = snapshot_of(&five, &[], &dir.join("s.pickle"));
    let entries = v.at("device_traces").list()[0].list();
    let streams: std::collections::BTreeSet<i128> = entries.iter().map(|e| e.at("stream").int()).collect();
    assert!(streams.len() >= 5, "streams in the history: {streams:?}");
    let (_, counts) = replay_history(entries);
    assert!(counts.contains_key("lend"), "{counts:?}");
    let (_, v) = snapshot_of(&five, &["--conf", "expandable_segments:True,pytorch_compat:True"], &dir.join("s.pickle"));
    let (_, counts) = replay_history(v.at("device_traces").list()[0].list());
    assert!(!counts.contains_key("lend") && !counts.contains_key("page_move"), "PyTorch's mode: {counts:?}");
    std::fs::remove_dir_all(&dir).ok();
}

fn svg_texts(path: &Path) -> String {
    let svg = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{}", path.display());
    svg
}

#[test]
fn plots_have_labelled_axes_and_a_legend() {
    let dir = scratch("plot");
    let resnet = traces_dir().join("resnet_train.trace.csv.gz");
    let five = traces_dir().join("five_streams.trace.csv");
    let one = dir.join("one.svg");
    let o = exe().args(["replay", resnet.to_str().unwrap(), "--plot", one.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "no progress bar off a terminal");
    let svg = svg_texts(&one);
    for label in [
        "trace event",
        "memory (GiB)",
        "pages (so far)",
        "reserved",
        "allocated",
        "requested",
        "pages mapped",
        "pages moved",
    ] {
        assert!(svg.contains(label), "replay plot lacks '{label}'");
    }
    let both = dir.join("both.svg");
    let o = exe()
        .args(["compare", resnet.to_str().unwrap(), five.to_str().unwrap(), "--plot", both.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for name in ["resnet_train", "five_streams"] {
        let svg = svg_texts(&dir.join(format!("both.{name}.svg")));
        for label in [
            "reserved, expanse in PyTorch-native mode",
            "reserved, expanse in PyTorch-expandable mode",
            "reserved, expanse",
            name,
        ] {
            assert!(svg.contains(label), "{name} compare plot lacks '{label}'");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_snapshot_and_plot_options_give_clear_errors() {
    let resnet = traces_dir().join("resnet_train.trace.csv.gz");
    let r = resnet.to_str().unwrap();
    let fails_with = |args: &[&str], expect: &str| {
        let o = exe().args(args).output().unwrap();
        assert!(!o.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(expect), "{args:?}: '{err}' lacks '{expect}'");
        assert!(!err.contains("panicked"), "{err}");
    };
    fails_with(&["replay", r, "--snapshot", "/nonexistent/dir/s.pickle"], "/nonexistent/dir/s.pickle: cannot write");
    fails_with(&["replay", r, "--plot", "/nonexistent/dir/p.svg"], "/nonexistent/dir/p.svg: cannot draw");
    fails_with(&["replay", r, "--snapshot", "x.pickle", "--history-entries", "0"], "bad --history-entries '0'");
    fails_with(&["replay", r, "--snapshot"], "--snapshot needs a value");
    fails_with(&["compare", r, "--snapshot", "x.pickle"], "--snapshot is a replay option");
    fails_with(&["compare", r, "--peak-snapshot", "x.pickle"], "--peak-snapshot is a replay option");
    fails_with(
        &["replay", r, "--peak-snapshot", "/nonexistent/dir/s.pickle"],
        "/nonexistent/dir/s.pickle: cannot write",
    );
}

/// Segments and the sizes of their blocks by state: (reserved, allocated, free).
fn tally(v: &Value) -> (i128, i128, i128) {
    let (mut reserved, mut allocated, mut free) = (0, 0, 0);
    for g in v.at("segments").list() {
        reserved += g.at("total_size").int();
        for b in g.at("blocks").list() {
            match b.at("state").str() {
                "active_allocated" => allocated += b.at("size").int(),
                "inactive" => free += b.at("size").int(),
                _ => {}
            }
        }
    }
    (reserved, allocated, free)
}

#[test]
fn the_peak_snapshot_shows_the_state_when_reserved_memory_peaked() {
    // PyTorch's native rules, worked by hand: 8 MiB takes a 20 MiB segment
    // (requests under 10 MiB share 20 MiB segments), the second 8 MiB its
    // rest (4 MiB left free), 16 MiB a segment of its own (rounded to
    // 2 MiB): 36 MiB reserved after the third event, never more. Then two
    // frees and an 8 MiB request that reuses the first segment.
    const MIB: u64 = 1 << 20;
    let dir = scratch("peak");
    let trace = dir.join("t.trace.csv");
    let text = format!("a,1,{},0\na,2,{},0\na,3,{},0\nf,1\nf,2\na,4,{},0\n", 8 * MIB, 8 * MIB, 16 * MIB, 8 * MIB);
    std::fs::write(&trace, text).unwrap();
    let (report, v) =
        snapshot_with("--peak-snapshot", &trace, &["--conf", "expandable_segments:False"], &dir.join("p.pickle"));
    assert_eq!(report["peak_reserved_bytes"], 36 * MIB);
    assert_eq!(report["peak_reserved_event"], 3);
    assert_eq!(report["peak_reserved_line"], 3);
    // At the end only 24 MiB are allocated; at the peak 32.
    assert_eq!(tally(&v), (36 << 20, 32 << 20, 4 << 20));
    assert_eq!(v.at("segments").list().len(), 2);
    let p = &report["peak_snapshot"];
    assert_eq!(p["event"], 3);
    assert_eq!(p["reserved_bytes"], 36 * MIB);
    assert_eq!(p["allocated_bytes"], 32 * MIB);
    assert_eq!((p["free_bytes"].as_u64(), p["free_blocks"].as_u64()), (Some(4 * MIB), Some(1)));
    assert_eq!(p["largest_free_block_bytes"], 4 * MIB);
    // The history stops at the peak: three allocations, no free.
    let (_, counts) = replay_history(v.at("device_traces").list()[0].list());
    assert_eq!((counts.get("alloc"), counts.get("free_requested")), (Some(&3), None), "{counts:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_peak_snapshot_says_what_the_peak_request_found_free() {
    // PyTorch's expandable segments, worked by hand: large-pool pages of
    // 20 MiB. 8 + 8 + 4 MiB fill the first page; freeing the first 8 and
    // the 4 leaves 12 MiB free in two blocks (8 at the start, 4 at the
    // end). A 10 MiB request fits neither: the segment maps a second page
    // (40 MiB reserved, the peak, at the sixth event), though 12 MiB were
    // free.
    const MIB: u64 = 1 << 20;
    let dir = scratch("peak-request");
    let trace = dir.join("t.trace.csv");
    let text = format!("a,1,{},0\na,2,{},0\na,3,{},0\nf,1\nf,3\na,4,{},0\n", 8 * MIB, 8 * MIB, 4 * MIB, 10 * MIB);
    std::fs::write(&trace, text).unwrap();
    let pickle = dir.join("p.pickle");
    let conf = ["--conf", "expandable_segments:True,pytorch_compat:True"];
    let (report, _) = snapshot_with("--peak-snapshot", &trace, &conf, &pickle);
    assert_eq!(report["peak_reserved_bytes"], 40 * MIB);
    assert_eq!(report["peak_reserved_event"], 6);
    assert_eq!(report["peak_request_bytes"], 10 * MIB);
    let before = &report["peak_snapshot"]["before"];
    assert_eq!(before["event"], 5);
    assert_eq!(before["request_bytes"], 10 * MIB);
    assert_eq!(before["reserved_bytes"], 20 * MIB);
    assert_eq!((before["free_bytes"].as_u64(), before["free_blocks"].as_u64()), (Some(12 * MIB), Some(2)));
    assert_eq!(before["largest_free_block_bytes"], 8 * MIB);
    // The line for people says the same.
    let o = exe()
        .args(["replay", trace.to_str().unwrap(), "--peak-snapshot", pickle.to_str().unwrap()])
        .args(conf)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("a request of 10.0 MiB when 12.0 MiB was free in 2 blocks, the largest 8.0 MiB: more than any one free block but not more than all of them"),
        "{out}"
    );
    // A peak set by a request larger than all the free memory: the first
    // allocation of a trace, with nothing free before it.
    let first = dir.join("first.trace.csv");
    std::fs::write(&first, format!("a,1,{},0\nf,1\n", 30 * MIB)).unwrap();
    let (report, _) = snapshot_with("--peak-snapshot", &first, &conf, &pickle);
    assert_eq!(report["peak_reserved_event"], 1);
    assert_eq!(report["peak_snapshot"]["before"]["free_bytes"], 0);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_peak_snapshot_of_a_real_trace_holds_its_peak() {
    // The default moves pages and lends across streams; the second replay
    // up to the peak must land on the same peak, and the snapshot's
    // segments must add up to it.
    let dir = scratch("peak-real");
    for name in ["resnet_train.trace.csv.gz", "five_streams.trace.csv"] {
        let (report, v) = snapshot_with("--peak-snapshot", &traces_dir().join(name), &[], &dir.join("p.pickle"));
        let peak = i128::from(report["peak_reserved_bytes"].as_u64().unwrap());
        let (reserved, allocated, free) = tally(&v);
        assert_eq!(reserved, peak, "{name}");
        assert!(allocated <= i128::from(report["peak_allocated_bytes"].as_u64().unwrap()), "{name}");
        assert_eq!(report["peak_snapshot"]["free_bytes"].as_u64().map(i128::from), Some(free), "{name}");
        let event = report["peak_reserved_event"].as_u64().unwrap();
        assert!(event > 0 && event <= report["events"].as_u64().unwrap(), "{name}: {event}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
