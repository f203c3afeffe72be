//! `expanse backends`: every backend of [`BackendKind::all`], whether it is
//! usable on this machine, and why not (library missing, no driver, no
//! device), as found by the shared factory's [`expanse_backends::probe`].

use expanse_backends::BackendKind;

/// Print the table; `--json` prints one object per backend.
pub fn cmd_backends(args: &[std::ffi::OsString]) -> Result<(), String> {
    let json = match args {
        [] => false,
        [a] if a.as_os_str() == "--json" => true,
        _ => return Err("backends takes no arguments but --json".into()),
    };
    for &kind in BackendKind::all() {
        let (name, what, usable) = (kind.name(), kind.describe(), expanse_backends::probe(kind));
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
