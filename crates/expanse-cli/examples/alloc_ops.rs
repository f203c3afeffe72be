//! Instruction counts of the fast path, one pattern at a time (the bench
//! runs every size in one process). On the strict mock device (the bench's
//! `--backend sim`), through `CachingAllocator`, default config:
//!
//! ```text
//! cargo build --release --example alloc_ops
//! valgrind --tool=callgrind target/release/examples/alloc_ops pair 512 20000
//! valgrind --tool=callgrind target/release/examples/alloc_ops pair 512 0
//! ```
//!
//! The difference of the two runs' instruction totals over 20,000 is the
//! count per pair; `mixed N` does the same for N steps of the bench's mixed
//! pattern (256 live, seed 42). `scripts/alloc_ops_instructions.sh` runs
//! every size and the mixed pattern.

use std::sync::Arc;

use expanse_core::{CachingAllocator, Config, StreamId};
use expanse_device::Device;

/// The bench's mixed-pattern numbers (`expanse_cli`'s bench `Lcg`).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn size(&mut self) -> u64 {
        let base = 1u64 << (9 + self.next() % 18);
        base + self.next() % base
    }
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| -> Result<u64, String> {
        let v = args.get(i).ok_or("usage: alloc_ops pair SIZE N | mixed N")?;
        v.parse().map_err(|_| format!("bad number '{v}'"))
    };
    let device =
        expanse_mock::MockDevice::new(143771 << 20, 2 << 20).with_strict_streams().with_address_space(64 << 40);
    let devices: Vec<Arc<dyn Device>> = vec![Arc::new(device)];
    let a = CachingAllocator::new(devices, Config::default());
    let s = StreamId::DEFAULT;
    let e = |e: expanse_core::AllocError| e.to_string();
    match args.first().map(String::as_str) {
        Some("pair") => {
            let (size, n) = (num(1)?, num(2)?);
            // A warm-up, as in the bench, then the counted pairs.
            for _ in 0..1000 + n {
                let p = a.malloc(0, size, s).map_err(e)?;
                a.free(0, p).map_err(e)?;
            }
        }
        Some("mixed") => {
            let n = num(1)?;
            let mut rng = Lcg(42);
            let mut slots = (0..256).map(|_| a.malloc(0, rng.size(), s)).collect::<Result<Vec<u64>, _>>().map_err(e)?;
            for _ in 0..2000 + n {
                let i = (rng.next() % 256) as usize;
                a.free(0, slots[i]).map_err(e)?;
                slots[i] = a.malloc(0, rng.size(), s).map_err(e)?;
            }
        }
        _ => return Err("usage: alloc_ops pair SIZE N | mixed N".into()),
    }
    Ok(())
}
