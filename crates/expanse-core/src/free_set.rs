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
mod tests;
