//! `expanse bench` end to end: every part runs and reports in `--json`,
//! bad options are refused by name.

use std::path::PathBuf;
use std::process::Command;

fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_expanse"))
}

#[test]
fn quick_json_reports_every_part() {
    // One small trace (800 events in the file) to replay.
    let dir = std::env::temp_dir().join(format!("expanse-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../traces/five_streams.trace.csv");
    std::fs::copy(&src, dir.join("five_streams.trace.csv")).unwrap();
    let out = exe()
        .args(["bench", "--quick", "--json", "--backend", "sim", "--threads", "2", "--traces", dir.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["backend"], "sim");
    for size in ["512", "65536", "1048576", "8388608", "67108864"] {
        assert!(j["hot_pair_ns"][size].as_f64().is_some_and(|ns| ns > 0.0), "hot pair {size} in {j}");
    }
    assert!(j["mixed_ns"].as_f64().is_some_and(|ns| ns > 0.0));
    assert!(j["growth"]["one_1gib_alloc_us"].as_f64().is_some_and(|us| us > 0.0));
    for n in ["1", "2"] {
        assert!(j["threads"][n]["own_streams_ops_per_s"].as_f64().is_some_and(|v| v > 0.0), "threads {n}");
        assert!(j["threads"][n]["one_stream_ops_per_s"].as_f64().is_some_and(|v| v > 0.0), "threads {n}");
        assert!(j["threads"][n]["own_allocators_ops_per_s"].as_f64().is_some_and(|v| v > 0.0), "threads {n}");
    }
    // An allocator each shares no state, so no malloc waits on another stream.
    assert_eq!(j["threads"]["2"]["own_allocators_cross_stream_waits_per_malloc"], 0.0);
    assert!(j["threads"]["4"].is_null(), "--threads 2 stops at 2");
    assert_eq!(j["replay_events"]["five_streams"], 800);
    assert!(j["replay_ns_per_event"]["five_streams"].as_f64().is_some_and(|ns| ns > 0.0));
}

#[test]
fn bad_options_are_named() {
    for (args, needle) in [
        (&["bench", "--threads", "0"][..], "--threads"),
        (&["bench", "--only", "pair,fast"][..], "'fast'"),
        (&["bench", "--frobnicate"][..], "--frobnicate"),
        (&["bench", "--traces", "/nonexistent-expanse-dir", "--only", "replay"][..], "nonexistent-expanse-dir"),
    ] {
        let out = exe().args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// Arguments are bytes (issue 10, item 2): a non-UTF-8 traces folder is
/// read like any other; a non-UTF-8 option or value is a clean error.
#[cfg(unix)]
#[test]
fn non_utf8_arguments_are_accepted_or_reported_cleanly() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let name = [&b"expanse-bench-\xff"[..], std::process::id().to_string().as_bytes()].concat();
    let dir = std::env::temp_dir().join(OsStr::from_bytes(&name));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tiny.trace.csv"), "a,1,4096,0\na,2,8192,0\nf,1\nf,2\n").unwrap();
    let out = exe().args(["bench", "--quick", "--json", "--only", "replay", "--traces"]).arg(&dir).output().unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["replay_events"]["tiny"], 4);
    for (bad, needle) in [(&["--conf"][..], "--conf: value"), (&[][..], "unknown bench option")] {
        let out = exe().arg("bench").args(bad).arg(OsStr::from_bytes(b"x\xffy")).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(needle) && err.contains("not valid UTF-8") == (needle == "--conf: value"), "{err}");
    }
}
