//! String equality without a `memcmp` call for short strings (not part of upstream serde_json;
//! see `vendor/README.md` in the workspace).
//!
//! Map keys and most string values of a Kubernetes object are a few bytes long; comparing them
//! with `==` calls `memcmp`, whose call and size dispatch cost more than the comparison itself.

/// `a == b` for the short byte strings keys and most string values are, without a `memcmp`
/// call: lengths first, then two overlapping words that together cover every byte (up to 16
/// bytes); longer strings are compared by `==`. The map's lookups, its equality and `Value`'s
/// compare strings with it.
#[inline]
pub(crate) fn eq_bytes(a: &[u8], b: &[u8]) -> bool {
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

#[cfg(test)]
mod tests {
    use super::eq_bytes;

    #[test]
    fn agrees_with_eq_on_every_length_and_every_differing_byte() {
        for n in 0..40usize {
            let a: alloc::vec::Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(eq_bytes(&a, &a.clone()));
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x20;
                assert!(!eq_bytes(&a, &b), "length {n}, byte {i}");
            }
            let mut longer = a.clone();
            longer.push(b'a');
            assert!(!eq_bytes(&a, &longer));
        }
    }
}
