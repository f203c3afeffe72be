//! Unit tests of `free_set.rs`.
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
