//! Fuzz the trace reader: any bytes are events or an error naming a line,
//! never a panic, and memory stays bounded (lines over 4 KiB refused).
//! Run: `cargo +nightly fuzz run trace`.
#![no_main]

use expanse_cli::trace::{parse, Event};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut live = std::collections::HashSet::new();
    for r in parse(data, "fuzz") {
        match r {
            Ok((line, Event::Alloc { id, .. })) => assert!(line >= 1 && live.insert(id)),
            Ok((line, Event::Free { id })) => assert!(line >= 1 && live.remove(&id)),
            Err(e) => assert!(e.line >= 1 && !e.message.is_empty(), "{e}"),
        }
    }
});
