//! The active map: allocated blocks by address, one look-up per `free`
//! and one insertion per `malloc`.
//!
//! An open-addressing table with linear probing, at most a quarter full:
//! most look-ups read one slot, and a removal seldom has entries to shift. It does less than a general hash map (no
//! generic hashing, no SIMD group probing, no tombstones: a removal shifts
//! the entries after it back), which is what the hot path pays for.
#![forbid(unsafe_code)]

use crate::block::BlockId;

/// Marks an empty slot. Never a block's address: a block of at least one
/// byte at `u64::MAX` would end past the address space.
const EMPTY: u64 = u64::MAX;

/// Slots of the smallest table.
const MIN_SLOTS: usize = 64;

/// Allocated blocks by address.
#[derive(Debug)]
pub(super) struct ActiveMap {
    /// `(address, block)`, `EMPTY` addresses free; a power of two long.
    slots: Vec<(u64, BlockId)>,
    /// 64 minus log2 of the slots: the hash's top bits index them.
    shift: u32,
    len: usize,
}

impl Default for ActiveMap {
    fn default() -> Self {
        ActiveMap { slots: vec![(EMPTY, 0); MIN_SLOTS], shift: 64 - MIN_SLOTS.trailing_zeros(), len: 0 }
    }
}

impl ActiveMap {
    /// The slot where the probe for `addr` starts: the top bits of a
    /// multiplicative hash of the address above its 512-byte alignment
    /// (the low bits of block addresses carry nothing).
    #[inline(always)]
    fn home(&self, addr: u64) -> usize {
        ((addr >> 9).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot holding `addr`, if any.
    #[inline(always)]
    fn find(&self, addr: u64) -> Option<usize> {
        let mask = self.mask();
        let mut i = self.home(addr);
        loop {
            let k = self.slots[i].0;
            if k == addr {
                return Some(i);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// The block at `addr`, if allocated.
    #[inline]
    pub fn get(&self, addr: u64) -> Option<BlockId> {
        self.find(addr).map(|i| self.slots[i].1)
    }

    /// `addr` is now block `id` (replacing any entry for it).
    #[inline]
    pub fn insert(&mut self, addr: u64, id: BlockId) {
        debug_assert_ne!(addr, EMPTY);
        if 4 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.mask();
        let mut i = self.home(addr);
        loop {
            let k = self.slots[i].0;
            if k == EMPTY {
                self.len += 1;
                break;
            }
            if k == addr {
                break;
            }
            i = (i + 1) & mask;
        }
        self.slots[i] = (addr, id);
    }

    /// Remove `addr`; returns its block, if it was there.
    #[inline]
    pub fn remove(&mut self, addr: u64) -> Option<BlockId> {
        let mut hole = self.find(addr)?;
        let id = self.slots[hole].1;
        self.len -= 1;
        // Shift back every later entry of the run that the hole would hide
        // from its probe: one whose home is not cyclically in (hole, j].
        let mask = self.mask();
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let k = self.slots[j].0;
            if k == EMPTY {
                break;
            }
            let home = self.home(k);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
        }
        self.slots[hole] = (EMPTY, 0);
        Some(id)
    }

    /// Twice the slots, every entry placed again.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let bigger = vec![(EMPTY, 0); 2 * self.slots.len()];
        let old = std::mem::replace(&mut self.slots, bigger);
        self.shift -= 1;
        self.len = 0;
        for (addr, id) in old {
            if addr != EMPTY {
                self.insert(addr, id);
            }
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Remove every entry.
    pub fn clear(&mut self) {
        *self = ActiveMap::default();
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Random inserts, removals and look-ups agree with a `HashMap`, with
    /// few distinct addresses (long probe runs, removals inside runs and
    /// across the table's end) and through several growths.
    #[test]
    fn agrees_with_a_hash_map() {
        for spread in [40u64, 3000] {
            let mut map = ActiveMap::default();
            let mut model = HashMap::new();
            let mut x = 3u64;
            for step in 0..60_000u32 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let r = x >> 33;
                let addr = (r % spread) << 9;
                match r % 5 {
                    0 | 1 => {
                        map.insert(addr, step);
                        model.insert(addr, step);
                    }
                    2 | 3 => assert_eq!(map.remove(addr), model.remove(&addr)),
                    _ => assert_eq!(map.get(addr), model.get(&addr).copied()),
                }
                assert_eq!(map.len(), model.len());
                if step % 1000 == 0 {
                    assert!(model.iter().all(|(&a, &id)| map.get(a) == Some(id)));
                }
            }
            assert!(map.slots.len() > MIN_SLOTS || spread < 32);
        }
    }

    /// Addresses that share a home slot, removed in every order.
    #[test]
    fn colliding_addresses_stay_reachable() {
        let probe = ActiveMap::default();
        let home = probe.home(1 << 20);
        let same: Vec<u64> = (1u64..).map(|k| k << 9).filter(|&a| probe.home(a) == home).take(5).collect();
        for first in 0..same.len() {
            let mut map = ActiveMap::default();
            for (i, &a) in same.iter().enumerate() {
                map.insert(a, i as BlockId);
            }
            assert_eq!(map.remove(same[first]), Some(first as BlockId));
            for (i, &a) in same.iter().enumerate() {
                assert_eq!(map.get(a), (i != first).then_some(i as BlockId), "removed {first}, looking up {i}");
            }
            assert_eq!(map.remove(same[first]), None);
        }
        let mut map = ActiveMap::default();
        map.insert(same[0], 1);
        map.clear();
        assert!(map.is_empty() && map.get(same[0]).is_none());
    }
}
