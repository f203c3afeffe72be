//! `release_threshold_mb` end to end: on a real trace, releasing idle
//! pages lowers the time-weighted mean of reserved bytes, and the report
//! carries that mean next to the peak in every mode.

use std::path::PathBuf;
use std::process::Command;

fn replay(conf: &str) -> serde_json::Value {
    let trace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../traces/resnet_train.trace.csv.gz");
    let out = Command::new(env!("CARGO_BIN_EXE_expanse"))
        .args(["replay", trace.to_str().unwrap(), "--backend", "sim", "--conf", conf, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn u(v: &serde_json::Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} missing in {v}"))
}

#[test]
fn a_release_threshold_lowers_the_time_weighted_mean_on_a_real_trace() {
    for mode in ["expandable_segments:True", "expandable_segments:True,pytorch_compat:True"] {
        let off = replay(mode);
        let on = replay(&format!("{mode},release_threshold_mb:256"));
        let (mean_off, mean_on) = (u(&off, "time_weighted_reserved_bytes"), u(&on, "time_weighted_reserved_bytes"));
        println!("{mode}: mean reserved {mean_off} -> {mean_on} with a 256 MiB threshold");
        assert!(mean_on < mean_off, "{mode}: {mean_on} not below {mean_off}");
        assert!(u(&on, "pages_released") > 0);
        assert_eq!(u(&off, "pages_released"), 0);
        for v in [&off, &on] {
            assert!(u(v, "peak_reserved_bytes") >= u(v, "peak_requested_bytes"));
            assert!(u(v, "time_weighted_reserved_bytes") <= u(v, "peak_reserved_bytes"));
            assert!(v["oom"].is_null());
        }
    }
}

#[test]
fn classic_mode_reports_the_time_weighted_mean_too() {
    let v = replay("expandable_segments:False");
    let mean = u(&v, "time_weighted_reserved_bytes");
    assert!(mean > 0 && mean <= u(&v, "peak_reserved_bytes"), "{v}");
}
