//! The active map: allocated blocks by address, in the arena's parts (a
//! block's entry sits in its part's map), so that a part's entries move
//! with the part (`lanes.rs`).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::block::{part_of_block, BlockId, PARTS};

/// Hash of a block address: addresses are multiples of 512, so the low
/// bits carry nothing; a multiplicative mix of the rest is much cheaper
/// than SipHash and not exposed to untrusted keys.
#[derive(Default)]
pub(crate) struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (x >> 9).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The allocated blocks of one part, by address.
pub(crate) type PartMap = HashMap<u64, BlockId, BuildHasherDefault<AddrHasher>>;

/// Allocated blocks by address, one map per part of the arena.
#[derive(Debug)]
pub(crate) struct Active {
    /// Indexed by a block's part.
    parts: [PartMap; PARTS],
    /// Parts whose map is not empty (one bit each).
    nonempty: u32,
}

const _: () = assert!(PARTS <= 32);

impl Default for Active {
    fn default() -> Self {
        Active { parts: std::array::from_fn(|_| PartMap::default()), nonempty: 0 }
    }
}

impl Active {
    /// The block allocated at `ptr`.
    #[inline]
    pub(crate) fn get(&self, ptr: u64) -> Option<BlockId> {
        let mut m = self.nonempty;
        while m != 0 {
            if let Some(&id) = self.parts[m.trailing_zeros() as usize].get(&ptr) {
                return Some(id);
            }
            m &= m - 1;
        }
        None
    }

    /// Whether a block is allocated at `ptr`.
    pub(crate) fn contains(&self, ptr: u64) -> bool {
        self.get(ptr).is_some()
    }

    /// Record block `id` as allocated at `ptr`.
    #[inline]
    pub(crate) fn insert(&mut self, ptr: u64, id: BlockId) {
        let part = part_of_block(id);
        self.parts[part].insert(ptr, id);
        self.nonempty |= 1 << part;
    }

    /// Forget the block allocated at `ptr`; returns it.
    #[inline]
    pub(crate) fn remove(&mut self, ptr: u64) -> Option<BlockId> {
        let mut m = self.nonempty;
        while m != 0 {
            let part = m.trailing_zeros() as usize;
            let map = &mut self.parts[part];
            if let Some(id) = map.remove(&ptr) {
                if map.is_empty() {
                    self.nonempty &= !(1 << part);
                }
                return Some(id);
            }
            m &= m - 1;
        }
        None
    }

    /// Number of allocated blocks.
    pub(crate) fn len(&self) -> usize {
        self.parts.iter().map(HashMap::len).sum()
    }

    /// Whether nothing is allocated.
    pub(crate) fn is_empty(&self) -> bool {
        self.nonempty == 0
    }

    /// Forget everything.
    pub(crate) fn clear(&mut self) {
        self.parts.iter_mut().for_each(HashMap::clear);
        self.nonempty = 0;
    }

    /// Take part `part`'s map out, leaving an empty one.
    pub(crate) fn take_part(&mut self, part: usize) -> PartMap {
        self.nonempty &= !(1 << part);
        std::mem::take(&mut self.parts[part])
    }

    /// Put part `part`'s map (taken out by [`Self::take_part`]) back.
    pub(crate) fn put_part(&mut self, part: usize, map: PartMap) {
        debug_assert!(self.parts[part].is_empty(), "a part's map put back over a live one");
        if !map.is_empty() {
            self.nonempty |= 1 << part;
        }
        self.parts[part] = map;
    }
}
