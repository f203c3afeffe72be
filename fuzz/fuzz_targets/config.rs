//! Fuzz the configuration parser: any string is parsed or refused with an
//! error, never a panic; what parses prints back to a string that parses
//! to the same configuration, and is checked against any device without
//! a panic. Run: `cargo +nightly fuzz run config`.
#![no_main]

use expanse_core::Config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(config) = Config::parse(text) else { return };
    let again = Config::parse(&config.to_conf_string())
        .unwrap_or_else(|e| panic!("'{text}' printed as '{}', refused: {e}", config.to_conf_string()));
    assert_eq!(again, config, "'{text}' does not survive printing");
    let word = |i: usize| data.get(i..i + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()));
    let _ = config.check_device(word(0), word(8));
});
