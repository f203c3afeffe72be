//! Instruction counts of the fast path through the C ABI
//! (`expanse_alloc` / `expanse_free`, as `libexpanse.so` exports them),
//! the sizes and pattern of `expanse-cli`'s `alloc_ops` example, which
//! calls `CachingAllocator` directly. The difference between the two is
//! the ABI layer's own cost: the global, the panic guard, stream
//! adoption, the error mapping. On the host backend (the CUDA backend's
//! stream adoption is not measurable here), default config:
//!
//! ```text
//! cargo build --release --example capi_ops -p expanse-capi
//! EXPANSE_BACKEND=host valgrind --tool=callgrind target/release/examples/capi_ops pair 512 20000
//! ```
//!
//! `scripts/alloc_ops_instructions.sh --capi` runs every size and the
//! mixed pattern (a counted run minus one that counts nothing).

use std::ffi::c_void;

use expanse::{expanse_alloc, expanse_free};

/// The bench's mixed-pattern numbers (`expanse_cli`'s bench `Lcg`).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn size(&mut self) -> usize {
        let base = 1usize << (9 + self.next() % 18);
        base + self.next() as usize % base
    }
}

fn alloc(size: usize) -> Result<*mut c_void, String> {
    // SAFETY: the null stream is the default stream, always valid.
    let p = unsafe { expanse_alloc(size, 0, std::ptr::null_mut()) };
    if p.is_null() {
        return Err(format!("expanse_alloc({size}) failed"));
    }
    Ok(p)
}

fn free(p: *mut c_void) {
    expanse_free(p, 0, 0, std::ptr::null_mut());
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| -> Result<usize, String> {
        let v = args.get(i).ok_or("usage: capi_ops pair SIZE N | mixed N")?;
        v.parse().map_err(|_| format!("bad number '{v}'"))
    };
    match args.first().map(String::as_str) {
        Some("pair") => {
            let (size, n) = (num(1)?, num(2)?);
            // A warm-up, as in the bench, then the counted pairs.
            for _ in 0..1000 + n {
                free(alloc(size)?);
            }
        }
        Some("mixed") => {
            let n = num(1)?;
            let mut rng = Lcg(42);
            let mut slots = (0..256).map(|_| alloc(rng.size())).collect::<Result<Vec<_>, _>>()?;
            for _ in 0..2000 + n {
                let i = (rng.next() % 256) as usize;
                free(slots[i]);
                slots[i] = alloc(rng.size())?;
            }
        }
        _ => return Err("usage: capi_ops pair SIZE N | mixed N".into()),
    }
    Ok(())
}
