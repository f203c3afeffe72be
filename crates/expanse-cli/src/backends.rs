//! `expanse backends`: every backend, whether it is usable on this machine,
//! and why not (library missing, no driver, no device).

use std::sync::Arc;

use expanse_device::Device;

/// (name, what it is, usable: Ok(detail) or Err(why not)).
fn probe_all() -> Vec<(&'static str, &'static str, Result<String, String>)> {
    let host = expanse_host::HostDevice::with_capacity(1 << 30, expanse_host::DEFAULT_GRANULARITY)
        .map(|_| "Linux virtual memory (mmap + memfd)".to_string())
        .map_err(|e| e.to_string());
    let cuda = expanse_cuda::open_all()
        .map(|devs| {
            let d: &Arc<expanse_cuda::CudaDevice> = &devs[0];
            format!("{} GPU(s); device 0: {} bytes, page {} bytes", devs.len(), d.total_memory(), d.granularity())
        })
        .map_err(|e| e.to_string());
    vec![
        ("host", "real Linux virtual memory, no GPU (default)", host),
        ("sim", "the strict mock device (addresses only)", Ok("always available".into())),
        ("cuda", "NVIDIA GPUs through libcuda.so.1", cuda),
        ("ze", "Intel GPUs (XPU) through Level Zero: libze_loader.so.1 or EXPANSE_ZE_LIBRARY", expanse_ze::probe()),
    ]
}

/// Print the table; `--json` prints one object per backend.
pub fn cmd_backends(args: &[String]) -> Result<(), String> {
    let json = match args {
        [] => false,
        [a] if a == "--json" => true,
        _ => return Err("backends takes no arguments but --json".into()),
    };
    for (name, what, usable) in probe_all() {
        if json {
            let (ok, detail) = match &usable {
                Ok(d) => (true, d.as_str()),
                Err(e) => (false, e.as_str()),
            };
            println!("{}", serde_json::json!({"backend": name, "description": what, "usable": ok, "detail": detail}));
        } else {
            match usable {
                Ok(d) => println!("{name:<5} usable      {what}\n      {d}"),
                Err(e) => println!("{name:<5} not usable  {what}\n      why: {e}"),
            }
        }
    }
    Ok(())
}
