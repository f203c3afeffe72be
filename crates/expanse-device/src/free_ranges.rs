//! Free ranges of a number line, handed out lowest first: the host
//! backend's memfd offsets and [`crate::VaHeap`]'s addresses.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;

/// Disjoint free ranges, merged with their neighbours when given back.
#[derive(Clone, Debug, Default)]
pub struct FreeRanges {
    /// start -> length.
    ranges: BTreeMap<u64, u64>,
}

impl FreeRanges {
    /// No free range.
    pub fn new() -> Self {
        Self::default()
    }

    /// Take `size` bytes from the lowest free range that holds them (first
    /// fit by address); `None` when none does.
    pub fn take_lowest(&mut self, size: u64) -> Option<u64> {
        let (&start, &len) = self.ranges.iter().find(|(_, &len)| len >= size)?;
        self.ranges.remove(&start);
        if len > size {
            self.ranges.insert(start + size, len - size);
        }
        Some(start)
    }

    /// `[start, start + len)` is free (again), merged with free neighbours.
    pub fn give(&mut self, mut start: u64, mut len: u64) {
        if len == 0 {
            return;
        }
        if let Some((&p, &plen)) = self.ranges.range(..start).next_back() {
            if p + plen == start {
                self.ranges.remove(&p);
                start = p;
                len += plen;
            }
        }
        if let Some(nlen) = self.ranges.remove(&(start + len)) {
            len += nlen;
        }
        self.ranges.insert(start, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_fit_and_merging() {
        let mut f = FreeRanges::new();
        f.give(100, 10);
        f.give(0, 10);
        assert_eq!(f.take_lowest(20), None, "two separate ranges of 10");
        f.give(10, 90);
        assert_eq!(f.take_lowest(110), Some(0), "0..10, 10..100 and 100..110 merged");
        f.give(50, 5);
        f.give(20, 5);
        assert_eq!(f.take_lowest(5), Some(20), "the lowest that fits");
        assert_eq!(f.take_lowest(3), Some(50));
        assert_eq!(f.take_lowest(2), Some(53));
        assert_eq!(f.take_lowest(1), None);
    }
}
