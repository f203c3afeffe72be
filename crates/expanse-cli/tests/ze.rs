//! `--backend ze` end to end on the fake Level Zero driver (loaded
//! directly): the same peaks as the host backend in every mode, and clean
//! errors without a library or a device.

use std::path::PathBuf;
use std::process::{Command, Output};

fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_expanse"))
}

fn trace(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../traces").join(format!("{name}.trace.csv.gz"));
    p.to_str().unwrap().to_string()
}

/// The fake driver cargo built as this crate's dev-dependency.
fn fake() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps.join("libexpanse_ze_fake.so"), deps.parent().unwrap().join("libexpanse_ze_fake.so")]
        .into_iter()
        .find(|p| p.exists())
        .expect("libexpanse_ze_fake.so not built (it is a dev-dependency of this crate)")
}

fn peak(out: &Output) -> u64 {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["peak_reserved_bytes"].as_u64().unwrap()
}

#[test]
fn ze_on_fake_driver_reserves_exactly_what_host_does() {
    for conf in
        ["expandable_segments:False", "expandable_segments:True,pytorch_compat:True", "expandable_segments:True"]
    {
        let args = ["replay", &trace("resnet_train"), "--conf", conf, "--json"];
        let host = peak(&exe().args(args).output().unwrap());
        let ze = peak(&exe().args(args).args(["--backend", "ze"]).env("EXPANSE_ZE_LIBRARY", fake()).output().unwrap());
        assert_eq!(ze, host, "{conf}");
    }
}

fn assert_clean_failure(out: &Output, want: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "succeeded: {err}");
    assert!(err.contains(want), "stderr lacks '{want}': {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn ze_without_library_or_device_fails_cleanly() {
    let t = trace("resnet_train");
    let out = exe()
        .args(["replay", &t, "--backend", "ze"])
        .env("EXPANSE_ZE_LIBRARY", "/nonexistent/libze_loader.so.1")
        .output()
        .unwrap();
    assert_clean_failure(&out, "Level Zero library not found: /nonexistent/libze_loader.so.1");
    let out = exe()
        .args(["replay", &t, "--backend", "ze"])
        .env("EXPANSE_ZE_LIBRARY", fake())
        .env("EXPANSE_ZE_FAKE_DEVICES", "0")
        .output()
        .unwrap();
    assert_clean_failure(&out, "no GPU device");
}

#[test]
fn backends_lists_every_backend_and_why_not() {
    let out = exe().args(["backends", "--json"]).env("EXPANSE_ZE_LIBRARY", "/nonexistent/libze.so").output().unwrap();
    assert!(out.status.success());
    let rows: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let names: Vec<&str> = rows.iter().map(|r| r["backend"].as_str().unwrap()).collect();
    assert_eq!(names, ["host", "sim", "cuda", "ze"]);
    assert_eq!(rows[0]["usable"], true);
    assert_eq!(rows[3]["usable"], false);
    assert!(rows[3]["detail"].as_str().unwrap().contains("/nonexistent/libze.so"), "{}", rows[3]);
    let out = exe().args(["backends", "--json"]).env("EXPANSE_ZE_LIBRARY", fake()).output().unwrap();
    let ze: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(ze["usable"], true, "{ze}");
}
