//! PyTorch-native mode on the backends without a driver: classic segments
//! placed as `cuMemAlloc` places them (`expanse_device::VaHeap`), so that
//! the host and sim replays give the peak PyTorch's own allocator gave on
//! the H200 (`traces/corpus.json`, recorded there by
//! `scripts/traces/torch_replay.py`), to the byte.
//!
//! The two traces are those where placement decided: with kernel-chosen
//! addresses the host was 2 MiB above PyTorch on serving and 6 MiB above on
//! t5_seq2seq, and the sim backend's upward bump 2 MiB below on serving.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn recorded_native_peak(trace: &str) -> u64 {
    let corpus: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("traces/corpus.json")).unwrap()).unwrap();
    corpus["traces"][trace]["replay"]["native"]["peak_reserved_bytes"].as_u64().unwrap()
}

fn native_mode_peak(trace: &str, backend: &str) -> u64 {
    let path = root().join(format!("traces/{trace}.trace.csv.gz"));
    let out = Command::new(env!("CARGO_BIN_EXE_expanse"))
        .args(["replay", path.to_str().unwrap(), "--backend", backend])
        .args(["--conf", "expandable_segments:False", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{trace} on {backend}: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["peak_reserved_bytes"].as_u64().unwrap()
}

#[test]
fn native_mode_gives_pytorchs_peak_on_the_host_and_sim_backends() {
    for trace in ["serving", "t5_seq2seq"] {
        let want = recorded_native_peak(trace);
        for backend in ["host", "sim"] {
            assert_eq!(native_mode_peak(trace, backend), want, "{trace} on {backend}");
        }
    }
}
