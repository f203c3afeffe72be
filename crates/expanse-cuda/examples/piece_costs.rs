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
//!
//! Result on the H200 (driver 580.159.04, CUDA 13.0; `docs/gpu-results.md`
//! 46): every map at a nonzero offset into a handle is refused with 801
//! (`CUDA_ERROR_NOT_SUPPORTED`), so the piece cases time failed calls, and
//! access over ten 2 MiB handles in one call costs 6.5 times access over
//! one 20 MiB handle.

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

    fn create(&self, size: usize) -> Result<Handle, String> {
        let mut h = 0;
        // SAFETY: the context is current; `h` and `prop` are live.
        ok(unsafe { (self.d.mem_create)(&mut h, size, &self.prop, 0) }, "cuMemCreate")?;
        Ok(Handle(h))
    }

    fn release(&self, h: Handle) -> CUresult {
        // SAFETY: `h` came from `create` and is consumed here, so it is
        // released once; a mapping still using it keeps its memory alive.
        unsafe { (self.d.mem_release)(h.0) }
    }

    fn reserve(&self, size: usize) -> Result<Reservation, String> {
        let mut va = 0;
        // SAFETY: the context is current; `va` is a live local.
        ok(unsafe { (self.d.mem_address_reserve)(&mut va, size, 0, 0, 0) }, "cuMemAddressReserve")?;
        Ok(Reservation { va, size })
    }

    fn free_reservation(&self, r: Reservation) -> CUresult {
        // SAFETY: `r` came from `reserve` and is consumed here; the driver
        // refuses (with a status) a reservation that still has mappings.
        unsafe { (self.d.mem_address_free)(r.va, r.size) }
    }

    /// Map `size` bytes of `h` from `offset` at `at` bytes into `r`.
    fn map(&self, r: &Reservation, at: usize, size: usize, h: &Handle, offset: usize) -> CUresult {
        let Some(va) = r.range(at, size) else { return INVALID };
        // SAFETY: the range lies in a reservation of ours and `h` is live;
        // the driver checks sizes and offsets and answers with a status.
        unsafe { (self.d.mem_map)(va, size, offset, h.0, 0) }
    }

    /// Unmap `size` bytes at `at` bytes into `r`.
    fn unmap(&self, r: &Reservation, at: usize, size: usize) -> CUresult {
        let Some(va) = r.range(at, size) else { return INVALID };
        // SAFETY: the range lies in a reservation of ours, so no mapping
        // of anyone else's goes; a range the driver does not accept is a
        // status.
        unsafe { (self.d.mem_unmap)(va, size) }
    }

    /// Grant GPU 0 read-write access to `size` bytes at `at` bytes into `r`.
    fn set_access(&self, r: &Reservation, at: usize, size: usize) -> CUresult {
        let Some(va) = r.range(at, size) else { return INVALID };
        // SAFETY: `access` is live for the call; the range is ours.
        unsafe { (self.d.mem_set_access)(va, size, &self.access, 1) }
    }

    /// Write `len` bytes at offset `a` of `r`, read them back at offset
    /// `b`; whether they match.
    fn aliases(&self, r: &Reservation, a: usize, b: usize, len: usize) -> Result<bool, String> {
        let (Some(va), Some(vb)) = (r.range(a, len), r.range(b, len)) else {
            return Err("alias check outside the reservation".into());
        };
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let mut back = vec![0u8; len];
        // SAFETY: both ranges lie in our reservation (the driver refuses
        // them with a status if unmapped); the host buffers are live and
        // `len` bytes long.
        unsafe {
            ok((self.d.memcpy_htod)(va, data.as_ptr().cast::<c_void>(), len), "cuMemcpyHtoD")?;
            ok((self.d.memcpy_dtoh)(back.as_mut_ptr().cast::<c_void>(), vb, len), "cuMemcpyDtoH")?;
        }
        Ok(data == back)
    }
}

/// A physical allocation of ours, released by [`Probe::release`].
struct Handle(CUmemGenericAllocationHandle);

/// A reservation of address space of ours, freed by
/// [`Probe::free_reservation`]; every map, unmap and access grant stays
/// inside one.
struct Reservation {
    va: CUdeviceptr,
    size: usize,
}

impl Reservation {
    /// The address `at` bytes in, when `size` bytes from there fit.
    fn range(&self, at: usize, size: usize) -> Option<CUdeviceptr> {
        (at.checked_add(size)? <= self.size).then(|| self.va + at as u64)
    }
}

/// `CUDA_ERROR_INVALID_VALUE`: a range outside the reservation, refused
/// before the driver sees it.
const INVALID: CUresult = 1;

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

/// Microseconds `n` calls took together, and the last status other than
/// success (success if none).
fn timed_each(n: usize, mut f: impl FnMut(usize) -> CUresult) -> (f64, CUresult) {
    let t = Instant::now();
    let mut rc = sys::CUDA_SUCCESS;
    for i in 0..n {
        let r = f(i);
        if r != sys::CUDA_SUCCESS {
            rc = r;
        }
    }
    (t.elapsed().as_secs_f64() * 1e6, rc)
}

fn round(p: &Probe, c: &mut Cases, check: &mut Vec<bool>) -> Result<(), String> {
    let a = p.reserve(HANDLE * 2)?;
    let b = p.reserve(HANDLE * 2)?;
    // One 20 MiB handle, one mapping.
    let h = p.create(HANDLE)?;
    c.add("map 20 MiB handle whole", timed(|| p.map(&a, 0, HANDLE, &h, 0)));
    c.add("set access 20 MiB, one mapping", timed(|| p.set_access(&a, 0, HANDLE)));
    c.add("unmap 20 MiB, one mapping", timed(|| p.unmap(&a, 0, HANDLE)));
    // The same handle as ten 2 MiB pieces.
    c.add("map 10 pieces of one handle (10 calls)", timed_each(PIECES, |i| p.map(&a, i * PIECE, PIECE, &h, i * PIECE)));
    c.add("set access over 10 pieces of one handle, one call", timed(|| p.set_access(&a, 0, HANDLE)));
    c.add("set access piece by piece (10 calls)", timed_each(PIECES, |i| p.set_access(&a, i * PIECE, PIECE)));
    // Move one piece (the fourth) to the other reservation.
    let k = 3 * PIECE;
    c.add("move 1 piece: unmap", timed(|| p.unmap(&a, k, PIECE)));
    c.add("move 1 piece: map at its offset", timed(|| p.map(&b, 0, PIECE, &h, k)));
    c.add("move 1 piece: set access", timed(|| p.set_access(&b, 0, PIECE)));
    // The piece at a second address too: both must show the same bytes.
    let alias = 4 * PIECE;
    if p.map(&b, alias, PIECE, &h, k) == sys::CUDA_SUCCESS && p.set_access(&b, alias, PIECE) == sys::CUDA_SUCCESS {
        check.push(p.aliases(&b, 0, alias, 4096)?);
        p.unmap(&b, alias, PIECE);
    }
    p.unmap(&b, 0, PIECE);
    // Move a run of four pieces (pieces 4-7, four mappings) as one mapping.
    let run = 4 * PIECE;
    c.add("move 4 pieces: one unmap over 4 mappings", timed(|| p.unmap(&a, run, 4 * PIECE)));
    c.add("move 4 pieces: one map of 8 MiB at the offset", timed(|| p.map(&b, 0, 4 * PIECE, &h, run)));
    c.add("move 4 pieces: set access 8 MiB", timed(|| p.set_access(&b, 0, 4 * PIECE)));
    p.unmap(&b, 0, 4 * PIECE);
    // What is left of the first reservation: pieces 0-2 and 8-9 (the
    // run's unmap may have been refused; then 4-7 are still there).
    for i in [0, 1, 2, 4, 5, 6, 7, 8, 9] {
        p.unmap(&a, i * PIECE, PIECE);
    }
    c.add("release 20 MiB handle", timed(|| p.release(h)));
    // Ten 2 MiB handles, for comparison.
    let mut hs = Vec::new();
    for _ in 0..PIECES {
        let t = Instant::now();
        hs.push(p.create(PIECE)?);
        c.add("create 2 MiB handle", (t.elapsed().as_secs_f64() * 1e6, sys::CUDA_SUCCESS));
    }
    for (i, h) in hs.iter().enumerate() {
        c.add("map 2 MiB handle", timed(|| p.map(&a, i * PIECE, PIECE, h, 0)));
    }
    c.add("set access over 10 handles of 2 MiB, one call", timed(|| p.set_access(&a, 0, HANDLE)));
    for (i, h) in hs.into_iter().enumerate() {
        p.unmap(&a, i * PIECE, PIECE);
        p.release(h);
    }
    let t = Instant::now();
    let h = p.create(HANDLE)?;
    c.add("create 20 MiB handle", (t.elapsed().as_secs_f64() * 1e6, sys::CUDA_SUCCESS));
    p.release(h);
    p.free_reservation(a);
    p.free_reservation(b);
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
