//! Comparisons of short byte strings without a `memcmp` call (not part of upstream serde_json;
//! see `vendor/README.md` in the workspace).
//!
//! Map keys and most string values of a Kubernetes object are a few bytes long; comparing them
//! with `==` or `cmp` calls `memcmp`, whose call and size dispatch cost more than the comparison
//! itself. The workspace's `tests/tests/integration/vendored_serde_json.rs` holds them to `==` and
//! `cmp` on strings of every length up to past their limits.

use core::cmp::Ordering;

/// `a == b` for the short byte strings keys and most string values are, without a `memcmp`
/// call: lengths first, then two overlapping words that together cover every byte (up to 16
/// bytes); longer strings are compared by `==`. The map's lookups, its equality and `Value`'s
/// compare strings with it.
#[inline]
pub fn eq_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => {
            a.first_chunk::<4>() == b.first_chunk::<4>()
                && a.last_chunk::<4>() == b.last_chunk::<4>()
        }
        8..=16 => {
            a.first_chunk::<8>() == b.first_chunk::<8>()
                && a.last_chunk::<8>() == b.last_chunk::<8>()
        }
        _ => a == b,
    }
}

/// The first eight bytes of `s` as a big-endian word, zero-padded when `s` is shorter: for two
/// strings, the words compare as the strings' first eight bytes do, except that a shorter
/// string and one that continues it with zero bytes read the same.
#[inline]
fn prefix_word(s: &[u8]) -> u64 {
    let n = s.len();
    match n {
        0 => 0,
        1..=3 => {
            let byte = |i: usize| u64::from(s[i]) << (56 - 8 * i);
            byte(0) | byte(n / 2) | byte(n - 1)
        }
        4..=7 => {
            let word = |c: Option<&[u8; 4]>| c.map_or(0, |c| u64::from(u32::from_be_bytes(*c)));
            (word(s.first_chunk::<4>()) << 32) | (word(s.last_chunk::<4>()) << (8 * (8 - n)))
        }
        _ => s.first_chunk::<8>().map_or(0, |c| u64::from_be_bytes(*c)),
    }
}

/// `a.cmp(b)`, without a `memcmp` call when the first eight bytes decide or both are at most
/// eight bytes long.
#[inline]
pub fn cmp_bytes(a: &[u8], b: &[u8]) -> Ordering {
    match prefix_word(a).cmp(&prefix_word(b)) {
        Ordering::Equal if a.len() <= 8 && b.len() <= 8 => a.len().cmp(&b.len()),
        Ordering::Equal => a.cmp(b),
        decided => decided,
    }
}
