//! What the CUDA driver charges for mapping one physical allocation in
//! pieces, and for moving a piece: the measurement a sub-page mapping
//! mechanism needs before it is built (`docs/policy-study.md`,
//! seventy-sixth round: at the peaks of the default's losses most free
//! memory sits in pages that also hold live blocks, so it cannot move).
//!
//! A 20 MiB handle is mapped once whole, then as ten 2 MiB pieces (each
//! its own `cuMemMap` at an offset into the handle); access is granted
//! over the whole range in one call and piece by piece; a piece and a run
//! of four pieces are moved to another reservation (unmap, map at the
//! handle's offset, grant access). For comparison, ten 2 MiB handles.
//! Each case runs `ROUNDS` times; the median in microseconds is printed,
//! with the driver's status where it was not success (`cuMemUnmap` over a
//! range of several mappings, for one, may be refused). A piece mapped at
//! two addresses at once is written through one and read through the
//! other, to check that pieces alias the handle's memory.
//!
//! `cargo build --release --example piece_costs -p expanse-cuda`, then on
//! a machine with a GPU: `target/release/examples/piece_costs`. Without a
//! CUDA driver it says so and exits with status 1.

use std::ffi::c_void;
use std::time::Instant;

use expanse_cuda::sys::{
    self, CUdeviceptr, CUmemAccessDesc, CUmemAllocationProp, CUmemGenericAllocationHandle, CUresult, Driver,
};

const MIB: usize = 1 << 20;
const HANDLE: usize = 20 * MIB;
const PIECE: usize = 2 * MIB;
const PIECES: usize = HANDLE / PIECE;
const ROUNDS: usize = 30;

/// The driver with the primary context of GPU 0 current.
struct Probe {
    d: Driver,
    dev: i32,
    prop: CUmemAllocationProp,
    access: CUmemAccessDesc,
}

impl Probe {
    fn new() -> Result<Probe, String> {
        let d = Driver::load()?;
        let mut dev = 0;
        let mut ctx = std::ptr::null_mut();
        // SAFETY: the driver is loaded; the out-pointers are live locals.
        let rc = unsafe {
            let mut rc = (d.init)(0);
            if rc == sys::CUDA_SUCCESS {
                rc = (d.device_get)(&mut dev, 0);
            }
            if rc == sys::CUDA_SUCCESS {
                rc = (d.primary_ctx_retain)(&mut ctx, dev);
            }
            if rc == sys::CUDA_SUCCESS {
                rc = (d.ctx_set_current)(ctx);
            }
            rc
        };
        if rc != sys::CUDA_SUCCESS {
            return Err(format!("no usable GPU 0 (CUDA status {rc})"));
        }
        let location = sys::CUmemLocation { type_: sys::CU_MEM_LOCATION_TYPE_DEVICE, id: dev };
        let prop = CUmemAllocationProp {
            type_: sys::CU_MEM_ALLOCATION_TYPE_PINNED,
            requestedHandleTypes: sys::CU_MEM_HANDLE_TYPE_NONE,
            location,
            win32HandleMetaData: std::ptr::null_mut(),
            allocFlags: sys::CUmemAllocFlags::default(),
        };
        let access = CUmemAccessDesc { location, flags: sys::CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
        Ok(Probe { d, dev, prop, access })
    }

    fn create(&self, size: usize) -> Result<CUmemGenericAllocationHandle, String> {
        let mut h = 0;
        // SAFETY: the context is current; `h` and `prop` are live.
        ok(unsafe { (self.d.mem_create)(&mut h, size, &self.prop, 0) }, "cuMemCreate")?;
        Ok(h)
    }

    fn release(&self, h: CUmemGenericAllocationHandle) -> CUresult {
        // SAFETY: `h` came from `create` and is released once.
        unsafe { (self.d.mem_release)(h) }
    }

    fn reserve(&self, size: usize) -> Result<CUdeviceptr, String> {
        let mut va = 0;
        // SAFETY: the context is current; `va` is a live local.
        ok(unsafe { (self.d.mem_address_reserve)(&mut va, size, 0, 0, 0) }, "cuMemAddressReserve")?;
        Ok(va)
    }

    fn free_reservation(&self, va: CUdeviceptr, size: usize) -> CUresult {
        // SAFETY: `va`/`size` is a reservation of ours with nothing mapped.
        unsafe { (self.d.mem_address_free)(va, size) }
    }

    fn map(&self, va: CUdeviceptr, size: usize, offset: usize, h: CUmemGenericAllocationHandle) -> CUresult {
        // SAFETY: `va` lies in a reservation of ours and `h` is live; the
        // driver checks ranges and offsets and answers with a status.
        unsafe { (self.d.mem_map)(va, size, offset, h, 0) }
    }

    fn unmap(&self, va: CUdeviceptr, size: usize) -> CUresult {
        // SAFETY: `va` lies in a reservation of ours; a range the driver
        // does not accept is a status, not undefined behaviour.
        unsafe { (self.d.mem_unmap)(va, size) }
    }

    fn set_access(&self, va: CUdeviceptr, size: usize) -> CUresult {
        // SAFETY: `access` is live for the call; the range is ours.
        unsafe { (self.d.mem_set_access)(va, size, &self.access, 1) }
    }

    /// Write `bytes` at `va`, read them back at `alias`; whether they match.
    fn aliases(&self, va: CUdeviceptr, alias: CUdeviceptr, len: usize) -> Result<bool, String> {
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let mut back = vec![0u8; len];
        // SAFETY: both ranges are mapped with access; the host buffers are
        // live and `len` bytes long.
        unsafe {
            ok((self.d.memcpy_htod)(va, data.as_ptr().cast::<c_void>(), len), "cuMemcpyHtoD")?;
            ok((self.d.memcpy_dtoh)(back.as_mut_ptr().cast::<c_void>(), alias, len), "cuMemcpyDtoH")?;
        }
        Ok(data == back)
    }
}

fn ok(rc: CUresult, what: &str) -> Result<(), String> {
    if rc == sys::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what}: CUDA status {rc}"))
    }
}

/// Microseconds one call took, and its status.
fn timed(f: impl FnOnce() -> CUresult) -> (f64, CUresult) {
    let t = Instant::now();
    let rc = f();
    (t.elapsed().as_secs_f64() * 1e6, rc)
}

/// Per case: the times of every round and the statuses met.
#[derive(Default)]
struct Cases(Vec<(&'static str, Vec<f64>, Vec<CUresult>)>);

impl Cases {
    fn add(&mut self, name: &'static str, (us, rc): (f64, CUresult)) {
        match self.0.iter_mut().find(|c| c.0 == name) {
            Some(c) => {
                c.1.push(us);
                c.2.push(rc);
            }
            None => self.0.push((name, vec![us], vec![rc])),
        }
    }

    fn print(&self) {
        println!("| case | median us | rounds | statuses other than success |");
        println!("|---|---:|---:|---|");
        for (name, us, rcs) in &self.0 {
            let mut s = us.clone();
            s.sort_by(f64::total_cmp);
            let bad: Vec<_> = rcs.iter().filter(|&&r| r != sys::CUDA_SUCCESS).collect();
            println!("| {name} | {:.1} | {} | {bad:?} |", s[s.len() / 2], s.len());
        }
    }
}

fn round(p: &Probe, c: &mut Cases, check: &mut Vec<bool>) -> Result<(), String> {
    let va = p.reserve(HANDLE * 2)?;
    let va2 = p.reserve(HANDLE * 2)?;
    // One 20 MiB handle, one mapping.
    let h = p.create(HANDLE)?;
    c.add("map 20 MiB handle whole", timed(|| p.map(va, HANDLE, 0, h)));
    c.add("set access 20 MiB, one mapping", timed(|| p.set_access(va, HANDLE)));
    c.add("unmap 20 MiB, one mapping", timed(|| p.unmap(va, HANDLE)));
    // The same handle as ten 2 MiB pieces.
    let t = Instant::now();
    let mut rc = sys::CUDA_SUCCESS;
    for i in 0..PIECES {
        let r = p.map(va + (i * PIECE) as u64, PIECE, i * PIECE, h);
        if r != sys::CUDA_SUCCESS {
            rc = r;
        }
    }
    c.add("map 10 pieces of one handle (10 calls)", (t.elapsed().as_secs_f64() * 1e6, rc));
    c.add("set access over 10 pieces of one handle, one call", timed(|| p.set_access(va, HANDLE)));
    let t = Instant::now();
    let mut rc = sys::CUDA_SUCCESS;
    for i in 0..PIECES {
        let r = p.set_access(va + (i * PIECE) as u64, PIECE);
        if r != sys::CUDA_SUCCESS {
            rc = r;
        }
    }
    c.add("set access piece by piece (10 calls)", (t.elapsed().as_secs_f64() * 1e6, rc));
    // Move one piece (the fourth) to the other reservation.
    let k = 3;
    c.add("move 1 piece: unmap", timed(|| p.unmap(va + (k * PIECE) as u64, PIECE)));
    c.add("move 1 piece: map at its offset", timed(|| p.map(va2, PIECE, k * PIECE, h)));
    c.add("move 1 piece: set access", timed(|| p.set_access(va2, PIECE)));
    // The piece at a second address too: both must show the same bytes.
    let alias = va2 + (4 * PIECE) as u64;
    if p.map(alias, PIECE, k * PIECE, h) == sys::CUDA_SUCCESS && p.set_access(alias, PIECE) == sys::CUDA_SUCCESS {
        check.push(p.aliases(va2, alias, 4096)?);
        p.unmap(alias, PIECE);
    }
    p.unmap(va2, PIECE);
    // Move a run of four pieces (pieces 4-7, four mappings) as one mapping.
    let run = va + (4 * PIECE) as u64;
    c.add("move 4 pieces: one unmap over 4 mappings", timed(|| p.unmap(run, 4 * PIECE)));
    c.add("move 4 pieces: one map of 8 MiB at the offset", timed(|| p.map(va2, 4 * PIECE, 4 * PIECE, h)));
    c.add("move 4 pieces: set access 8 MiB", timed(|| p.set_access(va2, 4 * PIECE)));
    p.unmap(va2, 4 * PIECE);
    // What is left of the first reservation: pieces 0-2 and 8-9 (the
    // run's unmap may have been refused; then 4-7 are still there).
    for i in [0, 1, 2, 4, 5, 6, 7, 8, 9] {
        p.unmap(va + (i * PIECE) as u64, PIECE);
    }
    c.add("release 20 MiB handle", timed(|| p.release(h)));
    // Ten 2 MiB handles, for comparison.
    let mut hs = Vec::new();
    for _ in 0..PIECES {
        let t = Instant::now();
        let h = p.create(PIECE)?;
        c.add("create 2 MiB handle", (t.elapsed().as_secs_f64() * 1e6, sys::CUDA_SUCCESS));
        hs.push(h);
    }
    for (i, &h) in hs.iter().enumerate() {
        c.add("map 2 MiB handle", timed(|| p.map(va + (i * PIECE) as u64, PIECE, 0, h)));
    }
    c.add("set access over 10 handles of 2 MiB, one call", timed(|| p.set_access(va, HANDLE)));
    for (i, &h) in hs.iter().enumerate() {
        p.unmap(va + (i * PIECE) as u64, PIECE);
        p.release(h);
    }
    let t = Instant::now();
    let h = p.create(HANDLE)?;
    c.add("create 20 MiB handle", (t.elapsed().as_secs_f64() * 1e6, sys::CUDA_SUCCESS));
    p.release(h);
    p.free_reservation(va, HANDLE * 2);
    p.free_reservation(va2, HANDLE * 2);
    Ok(())
}

fn main() {
    let p = match Probe::new() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("piece_costs: {e}");
            std::process::exit(1);
        }
    };
    let mut cases = Cases::default();
    let mut check = Vec::new();
    for _ in 0..ROUNDS {
        if let Err(e) = round(&p, &mut cases, &mut check) {
            eprintln!("piece_costs: {e}");
            std::process::exit(1);
        }
    }
    println!("GPU {}: handle {} MiB, pieces of {} MiB, {ROUNDS} rounds", p.dev, HANDLE / MIB, PIECE / MIB);
    cases.print();
    println!(
        "a piece mapped at two addresses shows the same bytes through both: {} of {} rounds",
        check.iter().filter(|&&b| b).count(),
        check.len()
    );
}
