//! The streams a block was used on or freed by: [`StreamList`], one word
//! in the block, and [`StreamSet`], two inline with their free stamps.

use expanse_device::StreamId;

/// A list of streams, most often empty: one word in the block (a vector
/// on the heap once a stream is added), so that blocks stay small.
#[derive(Clone, Debug, Default)]
#[allow(clippy::box_collection, reason = "one pointer in the block, not a vector's three words")]
pub struct StreamList(Option<Box<Vec<StreamId>>>);

impl StreamList {
    /// Add `s` at the end.
    pub fn push(&mut self, s: StreamId) {
        self.0.get_or_insert_with(Box::default).push(s);
    }

    /// Remove every stream (the heap vector is kept for reuse).
    pub fn clear(&mut self) {
        if let Some(v) = self.0.as_mut() {
            v.clear();
        }
    }
}

impl std::ops::Deref for StreamList {
    type Target = [StreamId];

    fn deref(&self) -> &[StreamId] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl PartialEq for StreamList {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for StreamList {}

/// A small set of streams: two inline (the common case), more on the heap.
/// Copying one with at most two streams never allocates.
///
/// Each inline stream carries when it last freed the memory, as a lag
/// behind its block's [`Block::freed_at`](super::Block::freed_at) (the latest of its users'): the
/// block's stamp minus the user's, kept in the set's padding, so that a
/// block stays two cache lines. A lag is at most `u16::MAX`: a longer one
/// is kept as that, a later stamp than the user's, which asks for a wait
/// where none was needed and never the other way. A lag of 0, and every
/// stream on the heap, stand for the block's own stamp.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamSet {
    inline: [StreamId; 2],
    lags: [u16; 2],
    len: u8,
    more: StreamList,
}

impl StreamSet {
    /// The streams, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = StreamId> + '_ {
        self.inline[..usize::from(self.len)].iter().copied().chain(self.more.iter().copied())
    }

    /// Whether `s` is in the set.
    #[inline]
    pub fn contains(&self, s: StreamId) -> bool {
        self.inline[..usize::from(self.len)].contains(&s) || self.more.contains(&s)
    }

    /// Whether every stream in the set is `s` (true when empty).
    #[inline]
    pub fn all_are(&self, s: StreamId) -> bool {
        self.more.is_empty() && self.inline[..usize::from(self.len)].iter().all(|&x| x == s)
    }

    /// Add `s` if absent.
    #[inline]
    pub fn insert(&mut self, s: StreamId) {
        if self.contains(s) {
            return;
        }
        if usize::from(self.len) < self.inline.len() {
            self.inline[usize::from(self.len)] = s;
            self.lags[usize::from(self.len)] = 0;
            self.len += 1;
        } else {
            self.more.push(s);
        }
    }

    /// The block's free stamp moves from `old` to `new` (not earlier):
    /// keep each inline stream's own stamp.
    #[inline]
    pub fn rebase(&mut self, old: u64, new: u64) {
        let by = new - old;
        for lag in &mut self.lags[..usize::from(self.len)] {
            *lag = u16::try_from(u64::from(*lag) + by).unwrap_or(u16::MAX);
        }
    }

    /// Take the users of `other`, whose block's free stamp is
    /// `other_freed`, into this set of a block stamped `freed` (at least
    /// `other_freed`): a stream in both keeps the later of its two stamps;
    /// `add`: streams only in `other` join (else they are all here).
    #[inline(always)]
    pub fn merge_from(&mut self, other: &StreamSet, other_freed: u64, freed: u64, add: bool) {
        // The common case, inline: `other`'s one user is this set's first
        // (a block merging with its neighbour on one stream).
        if other.len == 1 && self.len >= 1 && self.inline[0] == other.inline[0] && other.more.is_empty() {
            let lag = u16::try_from(freed - other_freed + u64::from(other.lags[0])).unwrap_or(u16::MAX);
            self.lags[0] = self.lags[0].min(lag);
            return;
        }
        if other.len == 0 && other.more.is_empty() {
            return;
        }
        self.merge_from_any(other, other_freed, freed, add);
    }

    /// [`merge_from`](Self::merge_from) for any two sets.
    #[inline(never)]
    fn merge_from_any(&mut self, other: &StreamSet, other_freed: u64, freed: u64, add: bool) {
        for (i, &s) in other.inline[..usize::from(other.len)].iter().enumerate() {
            let lag = u16::try_from(freed - other_freed + u64::from(other.lags[i])).unwrap_or(u16::MAX);
            match self.inline[..usize::from(self.len)].iter().position(|&x| x == s) {
                Some(j) => self.lags[j] = self.lags[j].min(lag),
                None if add => {
                    let was_inline = usize::from(self.len) < self.inline.len() && !self.more.contains(&s);
                    self.insert(s);
                    if was_inline {
                        self.lags[usize::from(self.len) - 1] = lag;
                    }
                }
                None => {}
            }
        }
        // `other`'s streams on the heap freed at `other_freed`, as far as
        // its set knows.
        let lag = u16::try_from(freed - other_freed).unwrap_or(u16::MAX);
        for &s in other.more.iter() {
            match self.inline[..usize::from(self.len)].iter().position(|&x| x == s) {
                Some(j) => self.lags[j] = self.lags[j].min(lag),
                None if add => self.insert(s),
                None => {}
            }
        }
    }

    /// Every user freed the memory at the block's stamp.
    #[inline(always)]
    pub fn stamp_all(&mut self) {
        self.lags = [0; 2];
    }

    /// When `s` last freed the memory, for a block stamped `freed`.
    #[inline]
    pub fn stamp_of(&self, s: StreamId, freed: u64) -> u64 {
        match self.inline[..usize::from(self.len)].iter().position(|&x| x == s) {
            Some(i) => freed - u64::from(self.lags[i]),
            None => freed,
        }
    }

    /// Whether no lag reaches back before clock 0 for a block stamped
    /// `freed` (for `check_invariants`).
    pub fn lags_within(&self, freed: u64) -> bool {
        self.lags[..usize::from(self.len)].iter().all(|&l| u64::from(l) <= freed)
    }

    /// Whether `s` is the one stream in the set.
    /// Make `s` the only stream (nothing changes when it already is).
    #[inline]
    pub fn set_only(&mut self, s: StreamId) {
        if !self.is_only(s) {
            self.clear();
            self.insert(s);
        }
    }

    #[inline]
    pub fn is_only(&self, s: StreamId) -> bool {
        self.len == 1 && self.inline[0] == s && self.more.is_empty()
    }

    /// Whether every stream of `other` is in the set.
    #[inline]
    pub fn includes(&self, other: &StreamSet) -> bool {
        // The common case: both are the same one stream.
        if other.len == 1 && other.more.is_empty() && self.len >= 1 && self.inline[0] == other.inline[0] {
            return true;
        }
        other.inline[..usize::from(other.len)].iter().all(|&s| self.contains(s))
            && other.more.iter().all(|&s| self.contains(s))
    }

    /// Remove every stream.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
        self.more.clear();
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_lists_and_sets_behave_like_vectors() {
        let mut l = StreamList::default();
        assert!(l.is_empty() && l.iter().next().is_none());
        l.push(StreamId(3));
        l.push(StreamId(5));
        assert_eq!(&l[..], &[StreamId(3), StreamId(5)]);
        assert!(l.contains(&StreamId(5)) && !l.contains(&StreamId(4)));
        let taken = std::mem::take(&mut l);
        assert!(l.is_empty() && taken.len() == 2);
        let mut cleared = taken.clone();
        cleared.clear();
        // An emptied list equals one that never held a stream.
        assert_eq!(cleared, StreamList::default());

        let mut s = StreamSet::default();
        for id in [1, 2, 3, 2, 4] {
            s.insert(StreamId(id));
        }
        assert_eq!(s.iter().collect::<Vec<_>>(), [1, 2, 3, 4].map(StreamId));
        let mut t = StreamSet::default();
        t.insert(StreamId(4));
        assert!(s.includes(&t) && !t.includes(&s));
        t.merge_from(&s, 0, 0, true);
        assert!(t.includes(&s) && s.includes(&t));
        s.clear();
        assert!(s.is_empty() && s.all_are(StreamId(9)));
    }

    /// `includes`, `is_only` and each stream's free stamp against sets of
    /// a model, over random inserts, merges (a block merged into another),
    /// frees and clears (sets past the two inline streams too). A set's
    /// block has a free stamp of its own; the model keeps each stream's
    /// stamp exactly: the set's may only be later (never earlier, which
    /// would skip a wait), and is exact for a set of at most two streams.
    #[test]
    fn stream_set_queries_agree_with_a_model() {
        use std::collections::BTreeMap;
        let mut sets = [StreamSet::default(), StreamSet::default(), StreamSet::default()];
        let mut model: [BTreeMap<u64, u64>; 3] = Default::default();
        let mut freed = [0u64; 3];
        let mut clock = 0u64;
        let mut x = 5u64;
        for _ in 0..5_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = x >> 33;
            let (i, j, s) = ((r % 3) as usize, ((r >> 2) % 3) as usize, (r >> 4) % 4);
            clock += (r >> 9) % 3;
            match (r >> 6) % 8 {
                0 => {
                    sets[i].clear();
                    model[i].clear();
                }
                1 if i != j => {
                    // Block j merged into block i.
                    let other = sets[j].clone();
                    let merged = freed[i].max(freed[j]);
                    let add = !sets[i].includes(&other);
                    sets[i].rebase(freed[i], merged);
                    sets[i].merge_from(&other, freed[j], merged, add);
                    freed[i] = merged;
                    for (&t, &at) in &model[j].clone() {
                        let e = model[i].entry(t).or_insert(at);
                        *e = (*e).max(at);
                    }
                }
                2 => {
                    // Block i freed now by all its users.
                    freed[i] = clock;
                    sets[i].stamp_all();
                    model[i].values_mut().for_each(|at| *at = clock);
                }
                _ => {
                    sets[i].insert(StreamId(s));
                    model[i].entry(s).or_insert(freed[i]);
                }
            }
            for a in 0..3 {
                assert_eq!(sets[a].is_only(StreamId(s)), model[a].len() == 1 && model[a].contains_key(&s));
                for b in 0..3 {
                    let (ma, mb) = (model[a].keys().collect::<Vec<_>>(), model[b].keys().collect::<Vec<_>>());
                    assert_eq!(sets[a].includes(&sets[b]), mb.iter().all(|k| ma.contains(k)));
                }
                assert!(sets[a].lags_within(freed[a]));
                for (&t, &at) in &model[a] {
                    let got = sets[a].stamp_of(StreamId(t), freed[a]);
                    assert!(got >= at && got <= freed[a], "stream {t}: stamp {got}, freed at {at}");
                    if model[a].len() <= 2 {
                        assert_eq!(got, at, "stream {t} of a set of at most two streams");
                    }
                }
            }
        }
    }
}
