//! The library half of the `expanse` command: what other crates (the
//! fuzzer) need of it. The trace reader lives here.

pub mod trace;
