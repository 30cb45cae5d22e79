//! The store's object keys, `(namespace, name)`, compared and ordered without calling
//! `memcmp` on an empty string.
//!
//! Every cluster-scoped object (Namespaces, Nodes, NodeClaims, CRDs) has an empty namespace,
//! and a B-tree lookup compares it at every level. An empty Rust string has a dangling pointer
//! (address 1), and `==`/`cmp` on strings call `memcmp` even for a length of 0: glibc's
//! AVX-512 `memcmp` answers that with a masked load that costs a ~100 ns microcode assist at
//! page 0 (see `make bench`'s last line). [`ObjectKey`] orders keys exactly as the tuple
//! `(namespace, name)` does: the namespaces are compared for equality by the vendored
//! serde_json's `eq_bytes` (lengths, then words), and only two non-empty strings are ordered by
//! `memcmp`.
//!
//! Lookups need no owned key: any [`KeyParts`] (an owned `(String, String)`, or a borrowed
//! `(&str, &str)`) is looked up as `&dyn KeyParts` ([`lookup`]).

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::ops::Bound;

use serde_json::short_bytes::eq_bytes;

/// Something that names an object of a resource: its namespace (empty for a cluster-scoped
/// object) and its name.
pub trait KeyParts {
    /// The namespace (empty for a cluster-scoped object) and the name: one call, so that a
    /// comparison through `dyn KeyParts` makes one indirect call per side.
    fn parts(&self) -> (&str, &str);
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

/// Whether two `(namespace, name)` pairs are equal.
fn eq_parts((a_ns, a_name): (&str, &str), (b_ns, b_name): (&str, &str)) -> bool {
    eq_bytes(a_name.as_bytes(), b_name.as_bytes()) && eq_bytes(a_ns.as_bytes(), b_ns.as_bytes())
}

/// The order of two `(namespace, name)` pairs, as the tuple's. The namespaces are most often
/// equal (a lookup among the objects of one namespace, or two cluster-scoped objects): that is
/// checked first, without `memcmp`.
fn cmp_parts((a_ns, a_name): (&str, &str), (b_ns, b_name): (&str, &str)) -> Ordering {
    if eq_bytes(a_ns.as_bytes(), b_ns.as_bytes()) {
        cmp_str(a_name, b_name)
    } else {
        cmp_str(a_ns, b_ns)
    }
}

/// `a.cmp(b)`, without calling `memcmp` when either is empty (two non-empty strings are
/// compared by `memcmp`, which is fast on them).
pub fn cmp_str(a: &str, b: &str) -> Ordering {
    if a.is_empty() || b.is_empty() {
        a.len().cmp(&b.len())
    } else {
        a.cmp(b)
    }
}

impl PartialEq for dyn KeyParts + '_ {
    fn eq(&self, other: &Self) -> bool {
        eq_parts(self.parts(), other.parts())
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
        cmp_parts(self.parts(), other.parts())
    }
}

/// `key` as the query type of the store's maps.
pub fn lookup<'a>(key: &'a impl KeyParts) -> &'a (dyn KeyParts + 'a) {
    key
}

/// The range of a map or set of [`ObjectKey`]s from `first` on (to the end): with `first` the
/// smallest key of a namespace, `(namespace, "")`, its keys come first, while
/// [`in_namespace`] holds.
pub fn from<'a>(
    first: &'a (&'a str, &'a str),
) -> (
    Bound<&'a (dyn KeyParts + 'a)>,
    Bound<&'a (dyn KeyParts + 'a)>,
) {
    (Bound::Included(lookup(first)), Bound::Unbounded)
}

/// Whether `key` is in `namespace`.
pub fn in_namespace(key: &impl KeyParts, namespace: &str) -> bool {
    eq_bytes(key.parts().0.as_bytes(), namespace.as_bytes())
}

/// An object's key in the store's maps: `(namespace, name)`, ordered as the tuple is.
#[derive(Clone, Debug, Default)]
pub struct ObjectKey(pub (String, String));

impl ObjectKey {
    /// The key as the `(namespace, name)` pair the store's callers see.
    pub fn pair(&self) -> &(String, String) {
        &self.0
    }
}

impl KeyParts for ObjectKey {
    fn parts(&self) -> (&str, &str) {
        self.0.parts()
    }
}

impl<'a> Borrow<dyn KeyParts + 'a> for ObjectKey {
    fn borrow(&self) -> &(dyn KeyParts + 'a) {
        self
    }
}

impl PartialEq for ObjectKey {
    fn eq(&self, other: &Self) -> bool {
        eq_parts(self.parts(), other.parts())
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
        cmp_parts(self.parts(), other.parts())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn key(namespace: &str, name: &str) -> ObjectKey {
        ObjectKey((namespace.to_string(), name.to_string()))
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
        ];
        let mut pairs = Vec::new();
        for namespace in parts {
            for name in parts {
                pairs.push((namespace.to_string(), name.to_string()));
            }
        }
        for a in &pairs {
            for b in &pairs {
                let (ka, kb) = (ObjectKey(a.clone()), ObjectKey(b.clone()));
                assert_eq!(ka.cmp(&kb), a.cmp(b), "{a:?} vs {b:?}");
                assert_eq!(ka == kb, a == b, "{a:?} vs {b:?}");
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
        assert_eq!(map.get(lookup(&owned)).map(String::as_str), Some("/node-2"));
        assert_eq!(
            map.get(lookup(&("ns", "node-1"))).map(String::as_str),
            Some("ns/node-1")
        );
        assert!(!map.contains_key(lookup(&("ns", "node-2"))));
        let first = ("ns", "");
        let in_ns: Vec<_> = map
            .range::<dyn KeyParts, _>(from(&first))
            .take_while(|(k, _)| in_namespace(*k, "ns"))
            .map(|(k, _)| k.pair().clone())
            .collect();
        assert_eq!(in_ns, vec![("ns".to_string(), "node-1".to_string())]);
    }
}
