//! The fake driver's state and the API's rules, checked on every call.
//!
//! Handles are `kind << 48 | serial`, never reused, so a destroyed or
//! foreign handle is refused (`ZE_RESULT_ERROR_INVALID_ARGUMENT`) instead
//! of crashing as a real driver might. All devices' memory is one sparse
//! memfd, each device owning a region of it; reservations are `PROT_NONE`
//! host mappings, so device addresses are real host addresses and copies
//! are `memcpy` once the rules allow them.

use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsRawFd, OwnedFd};

use expanse_ze::sys::*;

use expanse_sys as os;

pub type R<T> = Result<T, ze_result_t>;

pub const KIND_DRIVER: u64 = 1;
pub const KIND_DEVICE: u64 = 2;
pub const KIND_CONTEXT: u64 = 3;
pub const KIND_PHYS: u64 = 4;
pub const KIND_LIST: u64 = 5;
pub const KIND_POOL: u64 = 6;
pub const KIND_EVENT: u64 = 7;

pub fn handle(kind: u64, serial: u64) -> u64 {
    (kind << 48) | serial
}

pub fn kind_of(h: u64) -> u64 {
    h >> 48
}

/// What the environment asked for at `zeInit`.
#[derive(Clone, Debug)]
pub struct Config {
    pub devices: u32,
    pub memory: u64,
    pub page: u64,
    pub peer: bool,
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.trim().parse().ok())
}

impl Config {
    /// `EXPANSE_ZE_FAKE_DEVICES` (0..=2, default 1), `EXPANSE_ZE_FAKE_MEMORY`
    /// (bytes per device, default 143771 MiB as an H200-sized device),
    /// `EXPANSE_ZE_FAKE_PAGE` (page size, default 2 MiB),
    /// `EXPANSE_ZE_FAKE_NO_P2P=1` (devices cannot reach each other).
    pub fn from_env() -> Config {
        let page = env_u64("EXPANSE_ZE_FAKE_PAGE").filter(|p| p.is_power_of_two() && *p >= 4096).unwrap_or(2 << 20);
        let memory = env_u64("EXPANSE_ZE_FAKE_MEMORY").unwrap_or(143771 << 20).max(page) / page * page;
        Config {
            devices: env_u64("EXPANSE_ZE_FAKE_DEVICES").unwrap_or(1).min(2) as u32,
            memory,
            page,
            peer: std::env::var("EXPANSE_ZE_FAKE_NO_P2P").as_deref() != Ok("1"),
        }
    }
}

#[derive(Debug)]
struct Phys {
    ctx: u64,
    device: u32,
    offset: u64,
    size: u64,
    mapped: bool,
}

#[derive(Debug)]
struct Mapping {
    phys: u64,
    size: u64,
    access: ze_memory_access_attribute_t,
    /// Devices other than the owner the range was made resident on.
    resident: Vec<u32>,
    owner: u32,
}

#[derive(Debug)]
struct Alloc {
    device: u32,
    offset: u64,
    size: u64,
    span: u64,
    resident: Vec<u32>,
}

#[derive(Debug, Default)]
struct Context {
    devices: Vec<u32>,
    reservations: BTreeMap<u64, u64>,
    mappings: BTreeMap<u64, Mapping>,
    allocs: BTreeMap<u64, Alloc>,
}

#[derive(Debug)]
struct List {
    ctx: u64,
    device: u32,
}

#[derive(Debug)]
struct Pool {
    ctx: u64,
    count: u32,
    used: Vec<bool>,
}

#[derive(Debug)]
struct Event {
    pool: u64,
    index: u32,
    signaled: bool,
}

/// Per-device memory: the memfd region's free offsets and bytes in use.
#[derive(Debug)]
struct DeviceMem {
    free: BTreeMap<u64, u64>,
    used: u64,
}

/// Counts of live objects, for tests' leak checks.
#[derive(Debug, Default, Clone, Copy)]
#[repr(C)]
pub struct LiveCounts {
    pub contexts: u64,
    pub reservations: u64,
    pub physical: u64,
    pub mappings: u64,
    pub allocations: u64,
    pub lists: u64,
    pub pools: u64,
    pub events: u64,
}

pub struct Driver {
    pub cfg: Config,
    memfd: OwnedFd,
    mem: Vec<DeviceMem>,
    next: u64,
    contexts: HashMap<u64, Context>,
    phys: HashMap<u64, Phys>,
    lists: HashMap<u64, List>,
    pools: HashMap<u64, Pool>,
    events: HashMap<u64, Event>,
}

fn region(cfg: &Config) -> u64 {
    // Twice the capacity: classic allocations round their slice up to 4 KiB.
    cfg.memory * 2
}

impl Driver {
    pub fn new(cfg: Config) -> R<Driver> {
        let memfd = os::memfd(c"expanse-ze-fake-device-memory", region(&cfg) * u64::from(cfg.devices.max(1)))
            .map_err(|_| ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)?;
        let mem = (0..cfg.devices)
            .map(|i| DeviceMem { free: BTreeMap::from([(u64::from(i) * region(&cfg), region(&cfg))]), used: 0 })
            .collect();
        Ok(Driver {
            cfg,
            memfd,
            mem,
            next: 1,
            contexts: HashMap::new(),
            phys: HashMap::new(),
            lists: HashMap::new(),
            pools: HashMap::new(),
            events: HashMap::new(),
        })
    }

    fn serial(&mut self, kind: u64) -> u64 {
        self.next += 1;
        handle(kind, self.next)
    }

    pub fn live(&self) -> LiveCounts {
        let mut c = LiveCounts { contexts: self.contexts.len() as u64, ..LiveCounts::default() };
        for x in self.contexts.values() {
            c.reservations += x.reservations.len() as u64;
            c.mappings += x.mappings.len() as u64;
            c.allocations += x.allocs.len() as u64;
        }
        c.physical = self.phys.len() as u64;
        c.lists = self.lists.len() as u64;
        c.pools = self.pools.len() as u64;
        c.events = self.events.len() as u64;
        c
    }

    // ------------------------------------------------------------ devices

    pub fn device(&self, h: u64) -> R<u32> {
        if kind_of(h) != KIND_DEVICE {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let i = (h & 0xffff) as u32;
        if i < self.cfg.devices {
            Ok(i)
        } else {
            Err(ZE_RESULT_ERROR_INVALID_ARGUMENT)
        }
    }

    pub fn can_access_peer(&self, a: u32, b: u32) -> bool {
        a == b || self.cfg.peer
    }

    // ----------------------------------------------------------- contexts

    pub fn context_create(&mut self, devices: Vec<u32>) -> u64 {
        let h = self.serial(KIND_CONTEXT);
        self.contexts.insert(h, Context { devices, ..Context::default() });
        h
    }

    fn ctx(&self, h: u64) -> R<&Context> {
        self.contexts.get(&h).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)
    }

    fn ctx_mut(&mut self, h: u64) -> R<&mut Context> {
        self.contexts.get_mut(&h).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)
    }

    fn ctx_device(&self, ctx: u64, dev: u64) -> R<u32> {
        let d = self.device(dev)?;
        if self.ctx(ctx)?.devices.contains(&d) {
            Ok(d)
        } else {
            Err(ZE_RESULT_ERROR_INVALID_ARGUMENT)
        }
    }

    /// Everything made in the context must be destroyed first.
    pub fn context_destroy(&mut self, h: u64) -> R<()> {
        let c = self.ctx(h)?;
        let busy = !c.reservations.is_empty()
            || !c.allocs.is_empty()
            || self.phys.values().any(|p| p.ctx == h)
            || self.lists.values().any(|l| l.ctx == h)
            || self.pools.values().any(|p| p.ctx == h);
        if busy {
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        self.contexts.remove(&h);
        Ok(())
    }

    // ----------------------------------------------------- virtual memory

    fn aligned(&self, x: u64) -> bool {
        x.is_multiple_of(self.cfg.page)
    }

    pub fn reserve(&mut self, ctx: u64, size: u64) -> R<u64> {
        self.ctx(ctx)?;
        if size == 0 || !self.aligned(size) {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
        }
        let base = os::reserve_aligned(size, self.cfg.page).map_err(|_| ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)?;
        self.ctx_mut(ctx)?.reservations.insert(base, size);
        Ok(base)
    }

    pub fn reserve_free(&mut self, ctx: u64, ptr: u64, size: u64) -> R<()> {
        let c = self.ctx(ctx)?;
        if c.reservations.get(&ptr) != Some(&size) {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        if c.mappings.range(ptr..ptr + size).next().is_some() {
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        // SAFETY: an exact reservation of ours with nothing mapped in it.
        unsafe { os::munmap(ptr, size) }.map_err(|_| ZE_RESULT_ERROR_UNKNOWN)?;
        self.ctx_mut(ctx)?.reservations.remove(&ptr);
        Ok(())
    }

    fn take_offset(&mut self, device: u32, size: u64) -> R<u64> {
        let m = &mut self.mem[device as usize];
        let (&start, &len) = m.free.iter().find(|(_, l)| **l >= size).ok_or(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)?;
        m.free.remove(&start);
        if len > size {
            m.free.insert(start + size, len - size);
        }
        Ok(start)
    }

    fn give_offset(&mut self, device: u32, mut start: u64, mut len: u64) {
        let _ = os::punch_hole(self.memfd.as_raw_fd(), start, len);
        let m = &mut self.mem[device as usize];
        if let Some((&p, &pl)) = m.free.range(..start).next_back() {
            if p + pl == start {
                m.free.remove(&p);
                start = p;
                len += pl;
            }
        }
        if let Some(nl) = m.free.remove(&(start + len)) {
            len += nl;
        }
        m.free.insert(start, len);
    }

    fn charge(&mut self, device: u32, size: u64) -> R<()> {
        let m = &mut self.mem[device as usize];
        if m.used.saturating_add(size) > self.cfg.memory {
            return Err(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
        }
        m.used += size;
        Ok(())
    }

    pub fn physical_create(&mut self, ctx: u64, dev: u64, size: u64) -> R<u64> {
        let device = self.ctx_device(ctx, dev)?;
        if size == 0 || !self.aligned(size) {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
        }
        self.charge(device, size)?;
        let offset = match self.take_offset(device, size) {
            Ok(o) => o,
            Err(e) => {
                self.mem[device as usize].used -= size;
                return Err(e);
            }
        };
        let h = self.serial(KIND_PHYS);
        self.phys.insert(h, Phys { ctx, device, offset, size, mapped: false });
        Ok(h)
    }

    pub fn physical_destroy(&mut self, ctx: u64, h: u64) -> R<()> {
        let p = self.phys.get(&h).filter(|p| p.ctx == ctx).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        if p.mapped {
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        let (device, offset, size) = (p.device, p.offset, p.size);
        self.phys.remove(&h);
        self.mem[device as usize].used -= size;
        self.give_offset(device, offset, size);
        Ok(())
    }

    /// What a Level Zero access attribute lets the host do; an unknown one
    /// is an invalid enumeration.
    fn host_access(access: ze_memory_access_attribute_t) -> R<os::Access> {
        match access {
            ZE_MEMORY_ACCESS_ATTRIBUTE_NONE => Ok(os::Access::None),
            ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE => Ok(os::Access::ReadWrite),
            ZE_MEMORY_ACCESS_ATTRIBUTE_READONLY => Ok(os::Access::Read),
            _ => Err(ZE_RESULT_ERROR_INVALID_ENUMERATION),
        }
    }

    pub fn map(&mut self, ctx: u64, ptr: u64, size: u64, ph: u64, offset: u64, access: u32) -> R<()> {
        let host = Self::host_access(access)?;
        if !self.aligned(ptr) || !self.aligned(offset) {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
        }
        if size == 0 || !self.aligned(size) {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
        }
        let p = self.phys.get(&ph).filter(|p| p.ctx == ctx).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        // The fake allows one mapping per physical object at a time: all
        // expanse needs, and a double map is then always a caller's bug.
        if p.mapped || offset.checked_add(size).is_none_or(|end| end > p.size) {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let (owner, file_off) = (p.device, p.offset + offset);
        let c = self.ctx(ctx)?;
        let end = ptr.checked_add(size).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        let inside = c.reservations.range(..=ptr).next_back().is_some_and(|(b, s)| end <= b + s);
        let overlaps = c.mappings.range(..end).next_back().is_some_and(|(b, m)| b + m.size > ptr);
        if !inside || overlaps {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        // SAFETY: the range lies unmapped inside one of our reservations.
        unsafe { os::map_fixed_shared(ptr, size, self.memfd.as_raw_fd(), file_off, host) }
            .map_err(|_| ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)?;
        self.phys.get_mut(&ph).expect("checked above").mapped = true;
        self.ctx_mut(ctx)?.mappings.insert(ptr, Mapping { phys: ph, size, access, resident: Vec::new(), owner });
        Ok(())
    }

    /// The mappings exactly covering `[ptr, ptr + size)`.
    fn whole_mappings(c: &Context, ptr: u64, size: u64) -> R<Vec<u64>> {
        let end = ptr.checked_add(size).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        let (mut at, mut out) = (ptr, Vec::new());
        while at < end {
            match c.mappings.get(&at) {
                Some(m) if at + m.size <= end => {
                    out.push(at);
                    at += m.size;
                }
                _ => return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
            }
        }
        if out.is_empty() {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
        }
        Ok(out)
    }

    pub fn unmap(&mut self, ctx: u64, ptr: u64, size: u64) -> R<()> {
        if !self.aligned(ptr) || !self.aligned(size) {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
        }
        let bases = Self::whole_mappings(self.ctx(ctx)?, ptr, size)?;
        // SAFETY: exactly our mappings, inside our reservation.
        unsafe { os::map_fixed_none(ptr, size) }.map_err(|_| ZE_RESULT_ERROR_UNKNOWN)?;
        for b in bases {
            // Residency on peers goes with the mapping.
            if let Some(m) = self.ctx_mut(ctx)?.mappings.remove(&b) {
                if let Some(p) = self.phys.get_mut(&m.phys) {
                    p.mapped = false;
                }
            }
        }
        Ok(())
    }

    pub fn set_access(&mut self, ctx: u64, ptr: u64, size: u64, access: u32) -> R<()> {
        let host = Self::host_access(access)?;
        if !self.aligned(ptr) || !self.aligned(size) {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
        }
        // Access only on mapped ranges (tracked per mapping: whole ones).
        let bases = Self::whole_mappings(self.ctx(ctx)?, ptr, size)?;
        // SAFETY: the range is exactly our mappings.
        unsafe { os::protect(ptr, size, host) }.map_err(|_| ZE_RESULT_ERROR_UNKNOWN)?;
        let c = self.ctx_mut(ctx)?;
        for b in bases {
            c.mappings.get_mut(&b).expect("checked above").access = access;
        }
        Ok(())
    }

    /// Make whole mappings, or one whole-or-part classic allocation,
    /// resident on `dev` (a peer's view of the memory).
    pub fn make_resident(&mut self, ctx: u64, dev: u64, ptr: u64, size: u64) -> R<()> {
        let d = self.ctx_device(ctx, dev)?;
        if size == 0 {
            return Err(ZE_RESULT_ERROR_INVALID_SIZE);
        }
        let c = self.ctx(ctx)?;
        if let Some((&b, a)) = c.allocs.range(..=ptr).next_back() {
            if ptr + size <= b + a.size {
                if !self.can_access_peer(d, a.device) {
                    return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
                }
                let a = self.ctx_mut(ctx)?.allocs.get_mut(&b).expect("found above");
                if !a.resident.contains(&d) {
                    a.resident.push(d);
                }
                return Ok(());
            }
        }
        let bases = Self::whole_mappings(c, ptr, size)?;
        if bases.iter().any(|b| !self.can_access_peer(d, c.mappings[b].owner)) {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let c = self.ctx_mut(ctx)?;
        for b in bases {
            let m = c.mappings.get_mut(&b).expect("checked above");
            if !m.resident.contains(&d) {
                m.resident.push(d);
            }
        }
        Ok(())
    }

    // ------------------------------------------------- classic allocations

    pub fn alloc_device(&mut self, ctx: u64, dev: u64, size: u64, align: u64) -> R<u64> {
        let device = self.ctx_device(ctx, dev)?;
        if size == 0 {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
        }
        if align != 0 && !align.is_power_of_two() {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
        }
        if size > self.cfg.memory {
            return Err(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
        }
        let span = size.div_ceil(4096) * 4096;
        self.charge(device, size)?;
        let placed = self.take_offset(device, span).and_then(|offset| {
            let at = os::reserve_aligned(span, align.max(4096)).map_err(|_| ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
            let mapped = at.and_then(|at| {
                // SAFETY: `at` is a reservation just made for this allocation.
                unsafe { os::map_fixed_shared(at, span, self.memfd.as_raw_fd(), offset, os::Access::ReadWrite) }
                    .map(|_| at)
                    .map_err(|_| ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)
            });
            match mapped {
                Ok(at) => Ok((at, offset)),
                Err(e) => {
                    self.give_offset(device, offset, span);
                    Err(e)
                }
            }
        });
        let (at, offset) = match placed {
            Ok(x) => x,
            Err(e) => {
                self.mem[device as usize].used -= size;
                return Err(e);
            }
        };
        self.ctx_mut(ctx)?.allocs.insert(at, Alloc { device, offset, size, span, resident: Vec::new() });
        Ok(at)
    }

    pub fn mem_free(&mut self, ctx: u64, ptr: u64) -> R<()> {
        let a = self.ctx_mut(ctx)?.allocs.remove(&ptr).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        // SAFETY: the allocation was ours and is forgotten above.
        unsafe { os::munmap(ptr, a.span) }.map_err(|_| ZE_RESULT_ERROR_UNKNOWN)?;
        self.mem[a.device as usize].used -= a.size;
        self.give_offset(a.device, a.offset, a.span);
        Ok(())
    }

    // ------------------------------------------------- lists and events

    pub fn list_create(&mut self, ctx: u64, dev: u64, desc: &ze_command_queue_desc_t) -> R<u64> {
        let device = self.ctx_device(ctx, dev)?;
        if desc.stype != ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        // One queue group (compute and copy) with one queue.
        if desc.ordinal != 0 || desc.index != 0 || desc.mode > 2 || desc.priority > 2 {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let h = self.serial(KIND_LIST);
        self.lists.insert(h, List { ctx, device });
        Ok(h)
    }

    pub fn list_destroy(&mut self, h: u64) -> R<()> {
        self.lists.remove(&h).map(|_| ()).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)
    }

    fn list(&self, h: u64) -> R<&List> {
        self.lists.get(&h).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)
    }

    /// Whether `device` may touch `[ptr, ptr + len)` of context `ctx`
    /// (`write` for the destination). Memory outside every reservation
    /// and allocation of the context is host memory: allowed.
    fn check_reach(&self, ctx: u64, device: u32, ptr: u64, len: u64, write: bool) -> R<()> {
        let c = self.ctx(ctx)?;
        let end = ptr.checked_add(len).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        if let Some((&b, a)) = c.allocs.range(..=ptr).next_back() {
            if ptr < b + a.size {
                let ok = end <= b + a.size && (a.device == device || a.resident.contains(&device));
                return if ok { Ok(()) } else { Err(ZE_RESULT_ERROR_INVALID_ARGUMENT) };
            }
        }
        let in_reservation = c.reservations.range(..end).next_back().is_some_and(|(b, s)| b + s > ptr);
        if !in_reservation {
            return Ok(());
        }
        let mut at = ptr;
        while at < end {
            let Some((&b, m)) = c.mappings.range(..=at).next_back().filter(|(b, m)| at < *b + m.size) else {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            };
            let permitted = if write {
                m.access == ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE
            } else {
                m.access != ZE_MEMORY_ACCESS_ATTRIBUTE_NONE
            };
            let reaches = m.owner == device || (m.resident.contains(&device) && self.can_access_peer(device, m.owner));
            if !permitted || !reaches {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            at = b + m.size;
        }
        Ok(())
    }

    fn event_mut(&mut self, h: u64) -> R<&mut Event> {
        self.events.get_mut(&h).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)
    }

    /// The fake runs every command when it is appended, so a wait on an
    /// event nobody signalled would hang forever: it is refused instead.
    fn check_waits(&self, waits: &[u64]) -> R<()> {
        for w in waits {
            match self.events.get(w) {
                Some(e) if e.signaled => {}
                Some(_) => return Err(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT),
                None => return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
            }
        }
        Ok(())
    }

    pub fn copy(&mut self, list: u64, dst: u64, src: u64, size: u64, signal: u64, waits: &[u64]) -> R<()> {
        let l = self.list(list)?;
        let (ctx, device) = (l.ctx, l.device);
        self.check_waits(waits)?;
        if signal != 0 {
            self.events.get(&signal).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        }
        if dst < src.saturating_add(size) && src < dst.saturating_add(size) {
            return Err(ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
        }
        self.check_reach(ctx, device, src, size, false)?;
        self.check_reach(ctx, device, dst, size, true)?;
        // SAFETY: both ranges are either the caller's host memory (its
        // contract) or device memory the rules above found mapped with the
        // needed protection; they do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, size as usize) };
        if signal != 0 {
            self.event_mut(signal)?.signaled = true;
        }
        Ok(())
    }

    pub fn signal(&mut self, list: u64, ev: u64) -> R<()> {
        self.list(list)?;
        self.event_mut(ev)?.signaled = true;
        Ok(())
    }

    pub fn wait(&mut self, list: u64, waits: &[u64]) -> R<()> {
        self.list(list)?;
        self.check_waits(waits)
    }

    pub fn pool_create(&mut self, ctx: u64, desc: &ze_event_pool_desc_t, devices: &[u64]) -> R<u64> {
        self.ctx(ctx)?;
        if desc.stype != ZE_STRUCTURE_TYPE_EVENT_POOL_DESC || desc.count == 0 {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        for d in devices {
            self.ctx_device(ctx, *d)?;
        }
        let h = self.serial(KIND_POOL);
        self.pools.insert(h, Pool { ctx, count: desc.count, used: vec![false; desc.count as usize] });
        Ok(h)
    }

    pub fn pool_destroy(&mut self, h: u64) -> R<()> {
        let p = self.pools.get(&h).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        if p.used.iter().any(|u| *u) {
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        self.pools.remove(&h);
        Ok(())
    }

    pub fn event_create(&mut self, pool: u64, desc: &ze_event_desc_t) -> R<u64> {
        if desc.stype != ZE_STRUCTURE_TYPE_EVENT_DESC {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let p = self.pools.get_mut(&pool).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        if desc.index >= p.count || p.used[desc.index as usize] {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        p.used[desc.index as usize] = true;
        let h = self.serial(KIND_EVENT);
        self.events.insert(h, Event { pool, index: desc.index, signaled: false });
        Ok(h)
    }

    pub fn event_destroy(&mut self, h: u64) -> R<()> {
        let e = self.events.remove(&h).ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        if let Some(p) = self.pools.get_mut(&e.pool) {
            p.used[e.index as usize] = false;
        }
        Ok(())
    }

    pub fn event_status(&mut self, h: u64) -> R<bool> {
        Ok(self.event_mut(h)?.signaled)
    }

    pub fn event_reset(&mut self, h: u64) -> R<()> {
        self.event_mut(h)?.signaled = false;
        Ok(())
    }

    pub fn event_host_signal(&mut self, h: u64) -> R<()> {
        self.event_mut(h)?.signaled = true;
        Ok(())
    }
}
