//! The free set of one pool: free blocks ordered by stream, size, address,
//! found in constant time.
//!
//! The order is exactly a sorted set of [`FreeKey`]s (stream, then size,
//! then address), so best fit is the same block a `BTreeSet` would give.
//! Per stream, keys sit in size bins: sizes up to 8 KiB one bin per 512 B,
//! above that 16 bins per power of two (two-level segregated fit). Bin
//! order follows size order, and each bin keeps its keys sorted, so the
//! first key at or above a size is in its bin or the first key of the
//! next non-empty bin, found with a bitmap. Bins keep their capacity:
//! the hot path does not allocate once a size was seen.

use expanse_device::StreamId;

use crate::block::BlockId;
use crate::pool::FreeKey;

/// Sizes are multiples of this (the smallest block).
const UNIT_SHIFT: u32 = 9;
/// Sub-bins per power of two (and the linear bins below 16 units).
const SUB_BITS: u32 = 4;
const SUBS: u64 = 1 << SUB_BITS;
/// Bins for every size a `u64` can hold.
const BINS: usize = (SUBS as usize) * (64 - UNIT_SHIFT as usize - SUB_BITS as usize + 1);
const WORDS: usize = BINS.div_ceil(64);
// One summary word covers every bitmap word.
const _: () = assert!(WORDS <= 64);

/// The bin of `size`: monotonic in `size`.
fn bin_of(size: u64) -> usize {
    let units = size >> UNIT_SHIFT;
    if units < SUBS {
        return units as usize;
    }
    let log = 63 - units.leading_zeros();
    let sub = (units >> (log - SUB_BITS)) & (SUBS - 1);
    (SUBS + u64::from(log - SUB_BITS) * SUBS + sub) as usize
}

/// A key's order among the keys of one stream (they share the stream):
/// size, then address. Two keys of one set never share an address, so this
/// is [`FreeKey`]'s order; the block breaks ties all the same.
fn rank(k: &FreeKey) -> u128 {
    (u128::from(k.size) << 64) | u128::from(k.addr)
}

/// Whether `a` sorts before `b` (keys of one stream).
#[inline]
fn before(a: &FreeKey, b: &FreeKey) -> bool {
    (rank(a), a.block) < (rank(b), b.block)
}

/// Position of `k` in `keys` (sorted), as `binary_search` gives it.
#[inline]
fn search(keys: &[FreeKey], k: &FreeKey) -> Result<usize, usize> {
    // Most bins hold one key or none: no bisection for them.
    match keys {
        [] => Err(0),
        [x] if x == k => Ok(0),
        [x] => Err(usize::from(before(x, k))),
        _ => {
            let r = rank(k);
            keys.binary_search_by(|x| rank(x).cmp(&r).then(x.block.cmp(&k.block)))
        }
    }
}

/// Where a key sits in a [`FreeSet`]: its stream, bin and index there.
/// Valid until the set changes; every use checks it still holds the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    stream: u32,
    bin: u32,
    index: u32,
}

/// The free keys of one stream.
#[derive(Debug)]
struct StreamBins {
    stream: StreamId,
    /// Non-empty bins.
    bitmap: [u64; WORDS],
    /// Non-zero words of `bitmap`.
    summary: u64,
    /// Each bin's keys, sorted.
    bins: Vec<Vec<FreeKey>>,
}

impl StreamBins {
    fn new(stream: StreamId) -> Self {
        StreamBins { stream, bitmap: [0; WORDS], summary: 0, bins: (0..BINS).map(|_| Vec::new()).collect() }
    }

    /// The first non-empty bin at or after `from`.
    fn next_bin(&self, from: usize) -> Option<usize> {
        let w = from / 64;
        if w >= WORDS {
            return None;
        }
        let bits = self.bitmap[w] & (!0u64 << (from % 64));
        if bits != 0 {
            return Some(w * 64 + bits.trailing_zeros() as usize);
        }
        let words = self.summary & (!0u64).checked_shl(w as u32 + 1).unwrap_or(0);
        if words == 0 {
            return None;
        }
        let w = words.trailing_zeros() as usize;
        Some(w * 64 + self.bitmap[w].trailing_zeros() as usize)
    }

    #[inline]
    fn mark(&mut self, b: usize) {
        self.bitmap[b / 64] |= 1 << (b % 64);
        self.summary |= 1 << (b / 64);
    }

    #[inline]
    fn unmark(&mut self, b: usize) {
        self.bitmap[b / 64] &= !(1 << (b % 64));
        if self.bitmap[b / 64] == 0 {
            self.summary &= !(1 << (b / 64));
        }
    }

    /// Remove the key at index `i` of bin `b`.
    #[inline(always)]
    fn remove(&mut self, b: usize, i: usize) {
        let keys = &mut self.bins[b];
        if i + 1 == keys.len() {
            keys.pop();
        } else {
            keys.remove(i);
        }
        if keys.is_empty() {
            self.unmark(b);
        }
    }

    /// Add `k` to bin `b` (`k`'s bin); returns false if it was there.
    #[inline(always)]
    fn insert(&mut self, b: usize, k: FreeKey) -> bool {
        let keys = &mut self.bins[b];
        match keys.last() {
            // An empty bin, or a key after the bin's last (the common
            // cases: few keys a bin): no search, no shift.
            None => {
                keys.push(k);
                self.mark(b);
            }
            Some(last) if before(last, &k) => keys.push(k),
            Some(_) => match search(keys, &k) {
                Ok(_) => return false,
                Err(i) => keys.insert(i, k),
            },
        }
        true
    }

    /// Position of the first key with at least `size` bytes.
    fn lower_bound(&self, size: u64) -> Option<(usize, usize)> {
        let b = bin_of(size);
        let keys = &self.bins[b];
        let i =
            if keys.len() == 1 { usize::from(keys[0].size < size) } else { keys.partition_point(|k| k.size < size) };
        if i < keys.len() {
            return Some((b, i));
        }
        self.next_bin(b + 1).map(|n| (n, 0))
    }
}

/// Free keys in [`FreeKey`] order; see the module documentation.
#[derive(Debug, Default)]
pub struct FreeSet {
    /// Sorted by stream; a stream stays once seen.
    streams: Vec<StreamBins>,
    len: usize,
    /// The last answer of [`Self::first_other`]; every change of the set
    /// forgets it.
    memo: Option<Memo>,
}

/// A question [`FreeSet::first_other`] answered, and its answer.
#[derive(Clone, Copy, Debug)]
struct Memo {
    stream: StreamId,
    size: u64,
    other_than: BlockId,
    first: Option<FreeKey>,
}

impl FreeSet {
    #[inline]
    fn stream_index(&self, stream: StreamId) -> Result<usize, usize> {
        self.streams.binary_search_by(|s| s.stream.cmp(&stream))
    }

    /// Add `k`; returns false if it was there already.
    pub fn insert(&mut self, k: FreeKey) -> bool {
        let si = match self.stream_index(k.stream) {
            Ok(i) => i,
            Err(i) => {
                self.streams.insert(i, StreamBins::new(k.stream));
                i
            }
        };
        self.insert_in(si, k)
    }

    /// Add `k` to the bins of stream `si` (which is `k`'s stream).
    #[inline]
    fn insert_in(&mut self, si: usize, k: FreeKey) -> bool {
        self.insert_bin(si, bin_of(k.size), k)
    }

    /// Add `k` to bin `b` (`k`'s bin) of stream `si` (`k`'s stream).
    #[inline(always)]
    fn insert_bin(&mut self, si: usize, b: usize, k: FreeKey) -> bool {
        self.memo = None;
        let added = self.streams[si].insert(b, k);
        self.len += usize::from(added);
        added
    }

    /// Where `k` is, if it is in the set.
    #[inline]
    fn find(&self, k: &FreeKey) -> Option<Loc> {
        let si = self.stream_index(k.stream).ok()?;
        let b = bin_of(k.size);
        let i = search(&self.streams[si].bins[b], k).ok()?;
        Some(Loc { stream: si as u32, bin: b as u32, index: i as u32 })
    }

    /// `at` if it holds `k`, else where `k` is.
    #[inline]
    fn find_hinted(&self, k: &FreeKey, at: Option<Loc>) -> Option<Loc> {
        let holds = |l: Loc| {
            self.streams.get(l.stream as usize).and_then(|s| s.bins[l.bin as usize].get(l.index as usize)) == Some(k)
        };
        at.filter(|&l| holds(l)).or_else(|| self.find(k))
    }

    /// Remove the key at `at` (which holds one).
    #[inline(always)]
    fn remove_loc(&mut self, at: Loc) {
        self.memo = None;
        self.streams[at.stream as usize].remove(at.bin as usize, at.index as usize);
        self.len -= 1;
    }

    /// Remove `k`; returns whether it was there.
    pub fn remove(&mut self, k: &FreeKey) -> bool {
        self.remove_at(k, None)
    }

    /// Remove `k`, found at `at` by [`Keys::loc`] if the set did not
    /// change since (looked up otherwise); returns whether it was there.
    pub fn remove_at(&mut self, k: &FreeKey, at: Option<Loc>) -> bool {
        match self.find_hinted(k, at) {
            Some(l) => {
                self.remove_loc(l);
                true
            }
            None => false,
        }
    }

    /// Remove `old` (found at `at`, as for [`Self::remove_at`]) and add
    /// `new`, as `remove` then `insert` would; in place when `new` sorts
    /// into `old`'s position. Returns whether `old` was there.
    // Inlined into its few callers: one a split and one a merge, and the
    // call cost a sixth of it (mixed step 1739 -> 1715 instructions).
    #[inline(always)]
    pub fn replace(&mut self, old: &FreeKey, at: Option<Loc>, new: FreeKey) -> bool {
        let Some(l) = self.find_hinted(old, at) else {
            self.insert(new);
            return false;
        };
        if old.stream != new.stream {
            self.remove_loc(l);
            self.insert(new);
            return true;
        }
        // Both keys are of one stream: its bins are borrowed once for the
        // removal and the insertion.
        self.memo = None;
        let s = &mut self.streams[l.stream as usize];
        let (old_bin, i) = (l.bin as usize, l.index as usize);
        let b = bin_of(new.size);
        if b == old_bin {
            let keys = &mut s.bins[b];
            let r = rank(&new);
            if (i == 0 || rank(&keys[i - 1]) < r) && keys.get(i + 1).is_none_or(|n| r < rank(n)) {
                keys[i] = new;
                return true;
            }
        }
        s.remove(old_bin, i);
        if !s.insert(b, new) {
            // `new` was there already: one key less.
            self.len -= 1;
        }
        true
    }

    /// Whether `k` is in the set.
    pub fn contains(&self, k: &FreeKey) -> bool {
        self.find(k).is_some()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The keys of `stream` with at least `size` bytes, smallest first.
    pub fn at_least(&self, stream: StreamId, size: u64) -> Keys<'_> {
        let si = self.stream_index(stream).ok();
        let pos = si.and_then(|si| {
            let s = &self.streams[si];
            s.lower_bound(size).map(|p| (s, p))
        });
        Keys { pos, stream: si.unwrap_or(0), last: None }
    }

    /// The first key of `stream` with at least `size` bytes and where it
    /// is: `at_least(stream, size).next()` without moving on past it
    /// (most searches look at that key only; [`Self::after`] goes on).
    #[inline]
    pub fn first_at_least(&self, stream: StreamId, size: u64) -> Option<(&FreeKey, Loc)> {
        let si = self.stream_index(stream).ok()?;
        let s = &self.streams[si];
        let (b, i) = s.lower_bound(size)?;
        Some((&s.bins[b][i], Loc { stream: si as u32, bin: b as u32, index: i as u32 }))
    }

    /// The first key of `stream` with at least `size` bytes whose block is
    /// not `other_than` (`at_least(stream, size).find(..)`). The answer is
    /// kept until the set changes: a pending merge asks the same question
    /// of the same set at every hot pair (`allocator/pending.rs`).
    #[inline]
    pub fn first_other(&mut self, stream: StreamId, size: u64, other_than: BlockId) -> Option<FreeKey> {
        if let Some(m) = &self.memo {
            if m.stream == stream && m.size == size && m.other_than == other_than {
                return m.first;
            }
        }
        self.first_other_now(stream, size, other_than)
    }

    #[inline(never)]
    fn first_other_now(&mut self, stream: StreamId, size: u64, other_than: BlockId) -> Option<FreeKey> {
        let first = self.at_least(stream, size).find(|k| k.block != other_than).copied();
        self.memo = Some(Memo { stream, size, other_than, first });
        first
    }

    /// The keys of the stream of the key at `at` that come after it, in
    /// order (`at` as returned by [`Self::first_at_least`], the set
    /// unchanged since).
    pub fn after(&self, at: Loc) -> Keys<'_> {
        let s = &self.streams[at.stream as usize];
        let (b, i) = (at.bin as usize, at.index as usize);
        let pos = if i + 1 < s.bins[b].len() { Some((b, i + 1)) } else { s.next_bin(b + 1).map(|n| (n, 0)) };
        Keys { pos: pos.map(|p| (s, p)), stream: at.stream as usize, last: None }
    }

    /// The keys of `stream` with fewer than `size` bytes, largest first.
    pub fn below(&self, stream: StreamId, size: u64) -> Vec<FreeKey> {
        let mut v: Vec<FreeKey> = self.of_stream(stream).take_while(|k| k.size < size).copied().collect();
        v.reverse();
        v
    }

    /// Streams that have (or had) free keys, in order.
    pub fn streams(&self) -> impl Iterator<Item = StreamId> + '_ {
        self.streams.iter().map(|s| s.stream)
    }

    fn of_stream(&self, stream: StreamId) -> Keys<'_> {
        self.at_least(stream, 0)
    }

    /// Every key, in order.
    pub fn iter(&self) -> impl Iterator<Item = &FreeKey> + '_ {
        self.streams.iter().enumerate().flat_map(|(i, s)| Keys {
            pos: s.lower_bound(0).map(|p| (s, p)),
            stream: i,
            last: None,
        })
    }
}

/// Keys of one stream from a position on, in order.
pub struct Keys<'a> {
    pos: Option<(&'a StreamBins, (usize, usize))>,
    /// The stream's index in the set.
    stream: usize,
    /// Where the key last returned is.
    last: Option<Loc>,
}

impl Keys<'_> {
    /// Where the key last returned is (for [`FreeSet::remove_at`] and
    /// [`FreeSet::replace`]).
    pub fn loc(&self) -> Option<Loc> {
        self.last
    }
}

impl<'a> Iterator for Keys<'a> {
    type Item = &'a FreeKey;

    #[inline]
    fn next(&mut self) -> Option<&'a FreeKey> {
        let (s, (b, i)) = self.pos?;
        self.last = Some(Loc { stream: self.stream as u32, bin: b as u32, index: i as u32 });
        let k = &s.bins[b][i];
        self.pos = if i + 1 < s.bins[b].len() { Some((s, (b, i + 1))) } else { s.next_bin(b + 1).map(|n| (s, (n, 0))) };
        Some(k)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn key(stream: u64, size: u64, addr: u64) -> FreeKey {
        FreeKey { stream: StreamId(stream), size, addr, block: (addr >> 9) as u32 }
    }

    #[test]
    fn bins_follow_size_order() {
        let mut sizes: Vec<u64> = (1..4096).map(|k| k * 512).collect();
        for shift in 0..54 {
            for k in [1u64, 17, 31, 33, 1000] {
                sizes.push((k << shift) * 512);
                sizes.push((k << shift) * 512 - 1);
            }
        }
        sizes.push(u64::MAX);
        sizes.sort_unstable();
        assert!(sizes.windows(2).all(|w| bin_of(w[0]) <= bin_of(w[1])));
        assert!(bin_of(u64::MAX) < BINS);
        // Exact bins up to 8 KiB; above, a bin spans a sixteenth of its power of two.
        assert_eq!(bin_of(512), 1);
        assert_eq!(bin_of(7680), 15);
        assert_ne!(bin_of(8192), bin_of(8192 + 512));
        assert_eq!(bin_of(1 << 30), bin_of((1 << 30) + (1 << 26) - 1));
        assert_ne!(bin_of(1 << 30), bin_of((1 << 30) + (1 << 26)));
    }

    /// Crowded bins: few sizes and addresses, so that bins hold several
    /// keys, inserts land before, between and after them, and duplicate
    /// inserts and replaces onto present keys are frequent.
    #[test]
    fn crowded_bins_agree_with_a_sorted_set() {
        let mut set = FreeSet::default();
        let mut reference = BTreeSet::new();
        let mut x = 11u64;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = x >> 33;
            // Sizes 8 KiB + 0..4 KiB share a bin; 512 B and 1 KiB have their own.
            let size = [512, 1024, 8192, 8192 + 512, 8192 + 2048, 8192 + 4096][(r % 6) as usize];
            let k = key(r % 2, size, ((r >> 3) % 8) << 20);
            match r % 4 {
                0 | 1 => assert_eq!(set.insert(k), reference.insert(k)),
                2 => assert_eq!(set.remove(&k), reference.remove(&k)),
                _ => {
                    let old = reference.iter().nth((r as usize >> 5) % reference.len().max(1)).copied().unwrap_or(k);
                    let want = reference.remove(&old);
                    reference.insert(k);
                    assert_eq!(set.replace(&old, None, k), want);
                }
            }
            assert_eq!(set.len(), reference.len());
            assert!(set.iter().eq(reference.iter()));
            // The remembered answer: the same question after every change
            // (a stale answer fails it), and now and then another one
            // that replaces it.
            let (stream, size, other) = if r.is_multiple_of(8) { (1, 1024, 3 << 11) } else { (0, 8192, 1 << 11) };
            let want = reference.range(FreeKey::at_least(StreamId(stream), size)..);
            let want = want.take_while(|k| k.stream.0 == stream).find(|k| k.block != other).copied();
            assert_eq!(set.first_other(StreamId(stream), size, other), want);
            assert_eq!(set.first_other(StreamId(stream), size, other), want);
        }
    }

    /// The same operations on a `BTreeSet`, the reference order.
    #[test]
    fn agrees_with_a_sorted_set() {
        let mut set = FreeSet::default();
        let mut reference = BTreeSet::new();
        let mut x = 7u64;
        for step in 0..20_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = x >> 33;
            let size = (1 + (r % 7) * (r % 3000)) << 9 << (r % 23);
            let k = key(r % 3, size, (r % 512) << 20);
            if r % 5 < 2 {
                assert_eq!(set.insert(k), reference.insert(k));
            } else if r % 5 == 2 {
                // Replace a present key (split-like: same address region,
                // nearby size) or an absent one; the reference removes
                // then inserts.
                let present = reference.iter().nth((r as usize) % reference.len().max(1)).copied();
                let old = present.filter(|_| !r.is_multiple_of(7)).unwrap_or(k);
                let new = FreeKey { size: (old.size + ((r % 5) << 9)).saturating_sub(1024).max(512), ..k };
                let new =
                    if r.is_multiple_of(3) { FreeKey { stream: old.stream, addr: old.addr + 512, ..new } } else { new };
                let want = reference.remove(&old);
                reference.insert(new);
                // The location: found by a look-up (right), none, or another
                // key's (stale: must be checked, not trusted).
                let at = match r % 4 {
                    0 => None,
                    1 => {
                        let mut it = set.at_least(StreamId(r % 3), 0);
                        it.next().and_then(|_| it.loc())
                    }
                    _ => {
                        let mut it = set.at_least(old.stream, old.size);
                        it.find(|x| **x == old).and_then(|_| it.loc())
                    }
                };
                // Remember an answer that is `old` when present, so that a
                // replace in place must forget it.
                let ask = |set: &mut FreeSet| set.first_other(old.stream, old.size, u32::MAX);
                ask(&mut set);
                assert_eq!(set.replace(&old, at, new), want);
                let first = reference.range(FreeKey::at_least(old.stream, old.size)..).next();
                assert_eq!(ask(&mut set), first.filter(|k| k.stream == old.stream).copied());
            } else {
                let victim = reference.iter().nth((r as usize) % reference.len().max(1)).copied().unwrap_or(k);
                let mut it = set.at_least(victim.stream, victim.size);
                let at = if r.is_multiple_of(2) { it.find(|x| **x == victim).and_then(|_| it.loc()) } else { None };
                assert_eq!(set.remove_at(&victim, at), reference.remove(&victim));
            }
            if step % 97 == 0 {
                assert_eq!(set.len(), reference.len());
                assert!(set.iter().eq(reference.iter()));
                for s in 0..3 {
                    let want = reference.range(FreeKey::at_least(StreamId(s), size)..).take_while(|k| k.stream.0 == s);
                    assert!(set.at_least(StreamId(s), size).eq(want.clone()));
                    // The first key, then the ones after it.
                    let first = set.first_at_least(StreamId(s), size);
                    assert_eq!(first.map(|(k, _)| k), want.clone().next());
                    if let Some((_, at)) = first {
                        assert!(set.after(at).eq(want.skip(1)));
                    }
                    let below = reference.range(..FreeKey::at_least(StreamId(s), size)).rev();
                    let below: Vec<_> = below.take_while(|k| k.stream.0 == s).copied().collect();
                    assert_eq!(set.below(StreamId(s), size), below);
                }
                assert!(reference.iter().all(|k| set.contains(k)));
            }
        }
        assert!(set.len() > 0);
    }
}
