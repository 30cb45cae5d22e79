//! The store's object keys, `(namespace, name)`, compared and ordered without reaching into
//! the strings' bytes when their first bytes decide, and without calling `memcmp` on an empty
//! string.
//!
//! A B-tree lookup compares the key looked up with a key at every step. The keys' strings sit
//! each in an allocation of its own, away from the tree's nodes: in a store of many objects the
//! nodes near the leaves hold keys whose bytes are no longer in the CPU's caches, and reading
//! them was most of what a create spent in the store's maps (the namespace, nearly always equal
//! and so always read, first). An [`ObjectKey`] therefore keeps the first bytes of its namespace
//! and name beside the strings, as big-endian words ([`KeyView`]): keys that differ there are
//! ordered by the words alone, and namespaces and names short enough to fit (nearly every
//! namespace; generated names) are compared without reading their bytes at all.
//!
//! Every cluster-scoped object (Namespaces, Nodes, NodeClaims, CRDs) has an empty namespace.
//! An empty Rust string has a dangling pointer (address 1), and `==`/`cmp` on strings call
//! `memcmp` even for a length of 0: glibc's AVX-512 `memcmp` answers that with a masked load
//! that costs a ~100 ns microcode assist at page 0 (see `make bench`'s last line). Strings the
//! words do not decide are compared by serde_json's `eq_bytes` and `cmp_bytes`, and only two
//! non-empty strings ever reach `memcmp`.
//!
//! Keys order exactly as the tuple `(namespace, name)` does. Lookups need no owned key: any
//! [`KeyParts`] (an owned `(String, String)`, or a borrowed `(&str, &str)`) is looked up as
//! `&dyn KeyParts`, best through [`lookup`], which computes its words once for the whole
//! lookup.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::ops::Bound;

use serde_json::short_bytes::{cmp_bytes, eq_bytes};

/// Something that names an object of a resource: its namespace (empty for a cluster-scoped
/// object) and its name.
pub trait KeyParts {
    /// The namespace (empty for a cluster-scoped object) and the name.
    fn parts(&self) -> (&str, &str);

    /// The parts with their words: one call, so that a comparison through `dyn KeyParts`
    /// makes one indirect call per side. Computed from [`KeyParts::parts`] unless kept.
    fn view(&self) -> KeyView<'_> {
        KeyView::of(self.parts())
    }
}

impl KeyParts for (String, String) {
    fn parts(&self) -> (&str, &str) {
        (&self.0, &self.1)
    }
}

impl KeyParts for (&str, &str) {
    fn parts(&self) -> (&str, &str) {
        *self
    }
}

/// How many of a namespace's first bytes [`KeyView`] keeps as a word.
const NAMESPACE_BYTES: usize = 8;
/// How many of a name's first bytes [`KeyView`] keeps as two words.
const NAME_BYTES: usize = 16;

/// A key's namespace and name with their first bytes as big-endian words, zero-padded: the
/// namespace's first [`NAMESPACE_BYTES`] in one, the name's first [`NAME_BYTES`] in two.
/// Two keys whose words differ are ordered as their words are (a string that ends within a
/// word and one that continues it with zero bytes read the same, so only equal words leave
/// the strings to compare).
#[derive(Debug, Clone, Copy)]
pub struct KeyView<'a> {
    namespace: &'a str,
    name: &'a str,
    words: [u64; 3],
}

impl<'a> KeyView<'a> {
    /// The view of `(namespace, name)`.
    pub fn of((namespace, name): (&'a str, &'a str)) -> Self {
        let name_bytes = name.as_bytes();
        let rest = name_bytes.get(8..).unwrap_or_default();
        KeyView {
            namespace,
            name,
            words: [
                prefix_word(namespace.as_bytes()),
                prefix_word(name_bytes),
                prefix_word(rest),
            ],
        }
    }

    /// The order of two keys, as the tuples `(namespace, name)` are ordered.
    fn cmp(&self, other: &KeyView<'_>) -> Ordering {
        let (a, b) = (self, other);
        if a.words[0] != b.words[0] {
            return a.words[0].cmp(&b.words[0]);
        }
        let namespaces = cmp_rest(a.namespace, b.namespace, NAMESPACE_BYTES);
        if namespaces != Ordering::Equal {
            return namespaces;
        }
        let (a_name, b_name) = ([a.words[1], a.words[2]], [b.words[1], b.words[2]]);
        if a_name != b_name {
            return a_name.cmp(&b_name);
        }
        cmp_rest(a.name, b.name, NAME_BYTES)
    }

    /// Whether two keys are equal.
    fn eq(&self, other: &KeyView<'_>) -> bool {
        let (a, b) = (self, other);
        a.words == b.words
            && eq_rest(a.name, b.name, NAME_BYTES)
            && eq_rest(a.namespace, b.namespace, NAMESPACE_BYTES)
    }
}

/// The order of two strings whose first `kept` bytes read the same as words: by their lengths
/// when both fit in those bytes, else by their bytes.
fn cmp_rest(a: &str, b: &str, kept: usize) -> Ordering {
    if a.len() <= kept && b.len() <= kept {
        a.len().cmp(&b.len())
    } else {
        cmp_str(a, b)
    }
}

/// Whether two strings whose first `kept` bytes read the same as words are equal.
fn eq_rest(a: &str, b: &str, kept: usize) -> bool {
    a.len() == b.len() && (a.len() <= kept || eq_bytes(a.as_bytes(), b.as_bytes()))
}

/// The first eight bytes of `s` as a big-endian word, zero-padded.
fn prefix_word(s: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    let n = s.len().min(8);
    word[..n].copy_from_slice(&s[..n]);
    u64::from_be_bytes(word)
}

/// `a.cmp(b)`, without calling `memcmp` when either is empty, nor when their first eight
/// bytes decide or both are that short (serde_json's `cmp_bytes`); other non-empty strings
/// are compared by `memcmp`.
pub fn cmp_str(a: &str, b: &str) -> Ordering {
    if a.is_empty() || b.is_empty() {
        a.len().cmp(&b.len())
    } else {
        cmp_bytes(a.as_bytes(), b.as_bytes())
    }
}

impl PartialEq for dyn KeyParts + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.view().eq(&other.view())
    }
}

impl Eq for dyn KeyParts + '_ {}

impl PartialOrd for dyn KeyParts + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn KeyParts + '_ {
    /// `(namespace, name)` order, as the tuple's.
    fn cmp(&self, other: &Self) -> Ordering {
        self.view().cmp(&other.view())
    }
}

/// A key to look up the store's maps with, its words computed once for the whole lookup.
#[derive(Debug, Clone, Copy)]
pub struct Lookup<'a>(KeyView<'a>);

impl<'a> Lookup<'a> {
    /// The lookup of `(namespace, name)`.
    pub fn new(namespace: &'a str, name: &'a str) -> Self {
        Lookup(KeyView::of((namespace, name)))
    }

    /// The key as the query type of the store's maps.
    pub fn as_key(&self) -> &(dyn KeyParts + 'a) {
        self
    }
}

impl KeyParts for Lookup<'_> {
    fn parts(&self) -> (&str, &str) {
        (self.0.namespace, self.0.name)
    }

    fn view(&self) -> KeyView<'_> {
        self.0
    }
}

/// `key` to look up the store's maps with ([`Lookup::as_key`]).
pub fn lookup(key: &(impl KeyParts + ?Sized)) -> Lookup<'_> {
    Lookup(key.view())
}

/// The range of a map or set of [`ObjectKey`]s from `first` on (to the end): with `first` the
/// smallest key of a namespace, `(namespace, "")`, its keys come first, while
/// [`in_namespace`] holds.
pub fn from<'a>(
    first: &'a Lookup<'a>,
) -> (
    Bound<&'a (dyn KeyParts + 'a)>,
    Bound<&'a (dyn KeyParts + 'a)>,
) {
    (Bound::Included(first.as_key()), Bound::Unbounded)
}

/// Whether `key` is in `namespace`.
pub fn in_namespace(key: &impl KeyParts, namespace: &str) -> bool {
    eq_bytes(key.parts().0.as_bytes(), namespace.as_bytes())
}

/// An object's key in the store's maps: `(namespace, name)`, ordered as the tuple is, with the
/// words of its [`KeyView`] kept beside it.
#[derive(Clone, Debug, Default)]
pub struct ObjectKey {
    pair: (String, String),
    words: [u64; 3],
}

impl ObjectKey {
    /// The key of `(namespace, name)`.
    pub fn new(pair: (String, String)) -> Self {
        let words = KeyView::of(pair.parts()).words;
        ObjectKey { pair, words }
    }

    /// The key as the `(namespace, name)` pair the store's callers see.
    pub fn pair(&self) -> &(String, String) {
        &self.pair
    }
}

impl KeyParts for ObjectKey {
    fn parts(&self) -> (&str, &str) {
        self.pair.parts()
    }

    fn view(&self) -> KeyView<'_> {
        KeyView {
            namespace: &self.pair.0,
            name: &self.pair.1,
            words: self.words,
        }
    }
}

impl<'a> Borrow<dyn KeyParts + 'a> for ObjectKey {
    fn borrow(&self) -> &(dyn KeyParts + 'a) {
        self
    }
}

impl PartialEq for ObjectKey {
    fn eq(&self, other: &Self) -> bool {
        self.view().eq(&other.view())
    }
}

impl Eq for ObjectKey {}

impl PartialOrd for ObjectKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ObjectKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.view().cmp(&other.view())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn key(namespace: &str, name: &str) -> ObjectKey {
        ObjectKey::new((namespace.to_string(), name.to_string()))
    }

    #[test]
    fn keys_order_and_compare_as_the_tuple_does() {
        let parts = [
            "",
            "a",
            "a-b",
            "ab",
            "default",
            "kube-system",
            "node-1",
            "node-10",
            // Names that the first eight bytes decide, and that they do not.
            "bench-2b4c6",
            "bench-2b4c7",
            "bench-2c",
            "checkout-7d9f8b6c5d-x2v4q",
            "checkout-7d9f8b6c5d-x2v4",
            "a\0",
            // Around the words' ends: zero bytes that the zero padding reads the same.
            "kube-sys",
            "kube-sys\0",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghijklmno\0",
            "abcdefghijklmnop",
            "abcdefghijklmnop\0",
            "abcdefghijklmnopq",
        ];
        let mut pairs = Vec::new();
        for namespace in parts {
            for name in parts {
                pairs.push((namespace.to_string(), name.to_string()));
            }
        }
        for a in &pairs {
            for b in &pairs {
                let (ka, kb) = (ObjectKey::new(a.clone()), ObjectKey::new(b.clone()));
                assert_eq!(ka.cmp(&kb), a.cmp(b), "{a:?} vs {b:?}");
                assert_eq!(ka == kb, a == b, "{a:?} vs {b:?}");
                // A lookup against a kept key, and a pair whose words are computed as it is
                // compared, through `dyn KeyParts` as the maps compare them.
                let (la, pb) = (lookup(a), (b.0.as_str(), b.1.as_str()));
                let (la, pb): (&dyn KeyParts, &dyn KeyParts) = (la.as_key(), &pb);
                assert_eq!(la.cmp(kb.borrow()), a.cmp(b), "{a:?} vs {b:?}");
                assert_eq!(la.cmp(pb), a.cmp(b), "{a:?} vs {b:?}");
                assert_eq!(la == pb, a == b, "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn maps_are_looked_up_by_borrowed_or_owned_pairs() {
        let mut map = BTreeMap::new();
        for (namespace, name) in [("", "node-1"), ("", "node-2"), ("ns", "node-1")] {
            map.insert(key(namespace, name), format!("{namespace}/{name}"));
        }
        let owned = (String::new(), "node-2".to_string());
        assert_eq!(
            map.get(lookup(&owned).as_key()).map(String::as_str),
            Some("/node-2")
        );
        assert_eq!(
            map.get(lookup(&("ns", "node-1")).as_key())
                .map(String::as_str),
            Some("ns/node-1")
        );
        assert!(!map.contains_key(lookup(&("ns", "node-2")).as_key()));
        let first = Lookup::new("ns", "");
        let in_ns: Vec<_> = map
            .range::<dyn KeyParts, _>(from(&first))
            .take_while(|(k, _)| in_namespace(*k, "ns"))
            .map(|(k, _)| k.pair().clone())
            .collect();
        assert_eq!(in_ns, vec![("ns".to_string(), "node-1".to_string())]);
    }
}
