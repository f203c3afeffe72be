//! The device contract as bookkeeping: what is reserved, which pages exist,
//! what is mapped where and with access, what was `malloc`'d.
//!
//! Backends check every call against a [`Ledger`] *before* they touch the
//! driver or the memory, and record the call only once it succeeded. A
//! broken contract therefore comes back as [`DeviceError::Misuse`] with
//! nothing changed, whatever the driver would have done (a real driver may
//! accept an unmap of an unmapped range, or fault on a bad pointer).

use std::collections::{BTreeMap, HashMap};

use crate::{DeviceError, Result};

#[derive(Clone, Copy, Debug)]
struct PageEntry {
    size: u64,
    mapped_at: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
struct MapEntry {
    handle: u64,
    size: u64,
    accessible: bool,
}

/// What a ledger still holds: `(address or handle, bytes)` of each
/// reservation, page and classic allocation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Live {
    /// Reservations: (base, size).
    pub reservations: Vec<(u64, u64)>,
    /// Pages: (handle, size).
    pub pages: Vec<(u64, u64)>,
    /// Classic allocations: (pointer, size).
    pub mallocs: Vec<(u64, u64)>,
}

impl Live {
    /// Whether nothing is left.
    pub fn is_empty(&self) -> bool {
        self.reservations.is_empty() && self.pages.is_empty() && self.mallocs.is_empty()
    }
}

/// Bookkeeping of one device's reservations, pages, mappings and mallocs.
#[derive(Debug, Default)]
pub struct Ledger {
    granularity: u64,
    reservations: BTreeMap<u64, u64>,
    pages: HashMap<u64, PageEntry>,
    mappings: BTreeMap<u64, MapEntry>,
    mallocs: BTreeMap<u64, u64>,
}

fn misuse(call: &'static str, addr: u64, what: &'static str) -> DeviceError {
    DeviceError::misuse(call, addr, what)
}

impl Ledger {
    /// An empty ledger for a device of this page granularity.
    pub fn new(granularity: u64) -> Self {
        Ledger { granularity: granularity.max(1), ..Ledger::default() }
    }

    fn aligned(&self, x: u64) -> bool {
        x.is_multiple_of(self.granularity)
    }

    /// `size` is a valid reservation or page size.
    pub fn check_size(&self, call: &'static str, size: u64) -> Result<()> {
        if size == 0 || !self.aligned(size) {
            return Err(misuse(call, size, "size not a non-zero multiple of the granularity"));
        }
        Ok(())
    }

    /// Record a reservation made by the driver.
    pub fn add_reservation(&mut self, base: u64, size: u64) {
        self.reservations.insert(base, size);
    }

    /// A reservation of exactly this size exists at `base` with nothing mapped.
    pub fn check_release_reservation(&self, base: u64, size: u64) -> Result<()> {
        if self.reservations.get(&base) != Some(&size) {
            return Err(misuse("release_reservation", base, "not a reservation of that size"));
        }
        if self.mappings.range(base..base.saturating_add(size)).next().is_some() {
            return Err(misuse("release_reservation", base, "reservation still has mappings"));
        }
        Ok(())
    }

    /// Forget a released reservation.
    pub fn remove_reservation(&mut self, base: u64) {
        self.reservations.remove(&base);
    }

    /// Record a page created by the driver.
    pub fn add_page(&mut self, handle: u64, size: u64) {
        self.pages.insert(handle, PageEntry { size, mapped_at: None });
    }

    /// The page exists and is not mapped; returns its size.
    pub fn check_release_page(&self, handle: u64) -> Result<u64> {
        match self.pages.get(&handle) {
            None => Err(misuse("release_page", handle, "unknown page handle")),
            Some(p) if p.mapped_at.is_some() => Err(misuse("release_page", handle, "page still mapped")),
            Some(p) => Ok(p.size),
        }
    }

    /// Forget a released page.
    pub fn remove_page(&mut self, handle: u64) {
        self.pages.remove(&handle);
    }

    /// Size of page `handle`, if it exists.
    pub fn page_size(&self, handle: u64) -> Option<u64> {
        self.pages.get(&handle).map(|p| p.size)
    }

    /// Number of live pages.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// Page `handle` may be mapped whole at `addr`; returns its size.
    pub fn check_map(&self, addr: u64, handle: u64) -> Result<u64> {
        let size = match self.pages.get(&handle) {
            None => return Err(misuse("map", handle, "unknown page handle")),
            Some(p) if p.mapped_at.is_some() => return Err(misuse("map", handle, "page already mapped")),
            Some(p) => p.size,
        };
        if !self.aligned(addr) {
            return Err(misuse("map", addr, "address not aligned to the granularity"));
        }
        let inside = self
            .reservations
            .range(..=addr)
            .next_back()
            .is_some_and(|(&b, &sz)| addr.checked_add(size).is_some_and(|end| end <= b + sz));
        if !inside {
            return Err(misuse("map", addr, "range not inside one reservation"));
        }
        let overlaps = self.mappings.range(..=addr).next_back().is_some_and(|(&b, m)| addr < b + m.size)
            || self.mappings.range(addr..addr + size).next().is_some();
        if overlaps {
            return Err(misuse("map", addr, "address already mapped"));
        }
        Ok(size)
    }

    /// Record a mapping made by the driver (no access yet).
    pub fn add_mapping(&mut self, addr: u64, handle: u64, size: u64) {
        if let Some(p) = self.pages.get_mut(&handle) {
            p.mapped_at = Some(addr);
        }
        self.mappings.insert(addr, MapEntry { handle, size, accessible: false });
    }

    /// `[addr, addr + size)` is exactly whole mapped pages; returns their bases.
    pub fn whole_pages(&self, call: &'static str, addr: u64, size: u64) -> Result<Vec<u64>> {
        if size == 0 || !self.aligned(addr) || !self.aligned(size) {
            return Err(misuse(call, addr, "range not aligned to the granularity"));
        }
        let end = addr.checked_add(size).ok_or_else(|| misuse(call, addr, "range overflows"))?;
        let mut at = addr;
        let mut bases = Vec::new();
        while at < end {
            match self.mappings.get(&at) {
                Some(m) if at + m.size <= end => {
                    bases.push(at);
                    at += m.size;
                }
                Some(_) => return Err(misuse(call, at, "range cuts a mapped page")),
                None => return Err(misuse(call, at, "address not mapped")),
            }
        }
        Ok(bases)
    }

    /// Forget the mappings at `bases` (after a successful unmap).
    pub fn remove_mappings(&mut self, bases: &[u64]) {
        for b in bases {
            if let Some(m) = self.mappings.remove(b) {
                if let Some(p) = self.pages.get_mut(&m.handle) {
                    p.mapped_at = None;
                }
            }
        }
    }

    /// Mark the mappings at `bases` accessible by this device.
    pub fn mark_accessible(&mut self, bases: &[u64]) {
        for b in bases {
            if let Some(m) = self.mappings.get_mut(b) {
                m.accessible = true;
            }
        }
    }

    /// Record a classic allocation.
    pub fn add_malloc(&mut self, ptr: u64, size: u64) {
        self.mallocs.insert(ptr, size);
    }

    /// `ptr` is a live classic allocation; returns its size.
    pub fn check_free(&self, ptr: u64) -> Result<u64> {
        self.mallocs.get(&ptr).copied().ok_or_else(|| misuse("free", ptr, "not a malloc'd pointer (or already freed)"))
    }

    /// Forget a freed classic allocation.
    pub fn remove_malloc(&mut self, ptr: u64) {
        self.mallocs.remove(&ptr);
    }

    /// `[addr, addr + len)` is memory this device may read and write.
    pub fn check_accessible(&self, call: &'static str, addr: u64, len: u64) -> Result<()> {
        let end = addr.checked_add(len).ok_or_else(|| misuse(call, addr, "range overflows"))?;
        let mut at = addr;
        while at < end {
            if let Some((&b, m)) = self.mappings.range(..=at).next_back() {
                if at < b + m.size {
                    if !m.accessible {
                        return Err(misuse(call, at, "access not set"));
                    }
                    at = b + m.size;
                    continue;
                }
            }
            if let Some((&p, &sz)) = self.mallocs.range(..=at).next_back() {
                if at < p + sz {
                    at = p + sz;
                    continue;
                }
            }
            return Err(misuse(call, at, "address not mapped"));
        }
        Ok(())
    }

    /// What is still live, for leak reports and teardown.
    pub fn live(&self) -> Live {
        Live {
            reservations: self.reservations.iter().map(|(a, b)| (*a, *b)).collect(),
            pages: self.pages.iter().map(|(h, p)| (*h, p.size)).collect(),
            mallocs: self.mallocs.iter().map(|(a, b)| (*a, *b)).collect(),
        }
    }

    /// The classic allocation containing `addr`, if any: (base, size).
    pub fn malloc_at(&self, addr: u64) -> Option<(u64, u64)> {
        let (&p, &sz) = self.mallocs.range(..=addr).next_back()?;
        (addr < p + sz).then_some((p, sz))
    }

    /// Bytes mapped.
    pub fn mapped_bytes(&self) -> u64 {
        self.mappings.values().map(|m| m.size).sum()
    }

    /// The page mapped at `addr`'s mapping, if any: (base, handle, size).
    pub fn mapping_at(&self, addr: u64) -> Option<(u64, u64, u64)> {
        let (&b, m) = self.mappings.range(..=addr).next_back()?;
        (addr < b + m.size).then_some((b, m.handle, m.size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 2 << 20;

    #[test]
    fn refuses_what_the_contract_forbids() {
        let mut l = Ledger::new(G);
        l.add_reservation(10 * G, 4 * G);
        l.add_page(1, 2 * G);
        assert!(l.check_map(10 * G + 512, 1).is_err());
        assert!(l.check_map(13 * G, 1).is_err(), "runs past the reservation");
        assert!(l.check_map(10 * G, 9).is_err(), "unknown page");
        assert_eq!(l.check_map(11 * G, 1).unwrap(), 2 * G);
        l.add_mapping(11 * G, 1, 2 * G);
        assert!(l.check_map(11 * G, 1).is_err(), "page mapped twice");
        l.add_page(2, G);
        assert!(l.check_map(12 * G, 2).is_err(), "address already mapped");
        assert!(l.whole_pages("unmap", 11 * G, G).is_err(), "cuts a page");
        assert!(l.whole_pages("unmap", 10 * G, G).is_err(), "not mapped");
        assert!(l.check_accessible("read", 11 * G, 8).is_err(), "no access yet");
        let bases = l.whole_pages("set_access", 11 * G, 2 * G).unwrap();
        l.mark_accessible(&bases);
        assert!(l.check_accessible("read", 11 * G, 8).is_ok());
        assert!(l.check_release_page(1).is_err(), "still mapped");
        assert!(l.check_release_reservation(10 * G, 4 * G).is_err(), "has mappings");
        l.remove_mappings(&bases);
        assert_eq!(l.check_release_page(1).unwrap(), 2 * G);
        assert!(l.check_free(5).is_err());
    }
}
