//! The backing store of [`crate::Map`] in this vendored copy (not part of upstream serde_json;
//! see `vendor/README.md` in the workspace): a small map is one vector of entries sorted by key,
//! a large one is upstream's `BTreeMap`.
//!
//! It iterates in exactly the order a `BTreeMap` does (ascending keys), so every output is the
//! upstream crate's, byte for byte; it differs in cost. Kubernetes objects are made of many small
//! maps (a pod has ~60, most with fewer than ten keys): a `BTreeMap` allocates an 11-slot node
//! (~640 bytes for `String` keys and `Value`s) for each, searches it key by key with `memcmp`
//! and frees it node by node; here such a map is one right-sized allocation, scanned by length
//! first, cloned as one slice. Inserting at a key's place moves the entries after it, which a
//! vector only does cheaply while it is short: a map that grows past [`SMALL`] entries becomes a
//! `BTreeMap`, so no order of insertions costs more than upstream's asymptotically.
//!
//! Clones share their entries until one of them changes (copy on write): a small map's vector is
//! a [`SharedVec`] (its reference count in the same allocation as its entries), a large map's tree
//! is behind an `Arc`. Cloning a map, and so a whole tree of objects, costs one reference count;
//! the first change through a clone copies that map's entries (the maps nested in them stay
//! shared), and a lookup for a change that finds nothing copies nothing. Two maps that share
//! their entries are equal without comparing them ([`VecMap::shares_entries`]).

use alloc::collections::{btree_map, BTreeMap};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::borrow::Borrow;
use core::fmt::{self, Debug};
use core::hash::{Hash, Hasher};
use core::iter::FusedIterator;
use core::{mem, slice};

use crate::shared_vec::SharedVec;
use crate::short_bytes::{cmp_bytes, eq_bytes};

/// The most entries a map keeps in a vector.
const SMALL: usize = 32;

/// A map, small or large.
#[derive(Clone)]
pub(crate) enum VecMap<K, V> {
    /// At most [`SMALL`] entries, sorted by key, no two keys equal.
    Small(SharedVec<(K, V)>),
    /// More than [`SMALL`] entries at some point (a large map stays large). Behind a pointer,
    /// so that the enum is no larger than the vector (a `Value` stays 32 bytes).
    Large(Arc<BTreeMap<K, V>>),
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap::Small(SharedVec::new())
    }
}

impl<K: Ord + AsRef<[u8]> + Clone, V: Clone> VecMap<K, V> {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        if capacity > SMALL {
            VecMap::Large(Arc::default())
        } else {
            VecMap::Small(SharedVec::with_capacity(capacity))
        }
    }

    /// Where `key` is in a small map's entries (`Ok`) or would go (`Err`). Appending in key
    /// order is how maps are mostly built, so the end is looked at first.
    #[inline]
    fn search(entries: &[(K, V)], key: &K) -> Result<usize, usize> {
        let key = key.as_ref();
        match entries.last() {
            None => Err(0),
            Some((last, _)) => match cmp_bytes(last.as_ref(), key) {
                core::cmp::Ordering::Less => Err(entries.len()),
                core::cmp::Ordering::Equal => Ok(entries.len() - 1),
                core::cmp::Ordering::Greater => {
                    entries.binary_search_by(|(k, _)| cmp_bytes(k.as_ref(), key))
                }
            },
        }
    }

    /// Where `key` is in a small map's entries, if it is there: the entries are scanned for an
    /// equal key (`==` on strings compares their lengths before their bytes, so most entries
    /// cost no byte comparison).
    #[inline]
    fn position<Q>(entries: &[(K, V)], key: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
        Q: ?Sized + Ord,
    {
        entries.iter().position(|(k, _)| k.borrow() == key)
    }

    /// Where the key whose bytes are `key` is in a small map's entries, if it is there: as
    /// [`VecMap::position`], comparing by [`eq_bytes`] (no `memcmp` call for a short key).
    #[inline]
    fn position_bytes(entries: &[(K, V)], key: &[u8]) -> Option<usize>
    where
        K: AsRef<[u8]>,
    {
        entries.iter().position(|(k, _)| eq_bytes(k.as_ref(), key))
    }

    /// [`VecMap::get`] of a `str` key (the `Value` index of a `str`).
    ///
    /// The small map's scan of a key of at most 16 bytes is inlined into the caller (the
    /// `Value` index); a longer key's scan and the tree's search are not: they call `memcmp`,
    /// and a function that calls keeps its values in registers it must save and restore, on
    /// every lookup.
    #[inline]
    pub(crate) fn get_str(&self, key: &str) -> Option<&V>
    where
        K: AsRef<[u8]> + Borrow<str>,
    {
        match self {
            VecMap::Small(entries) if key.len() <= 16 => Self::scan(entries, key.as_bytes()),
            VecMap::Small(entries) => Self::long_get_str(entries, key),
            VecMap::Large(map) => Self::tree_get_str(map, key),
        }
    }

    /// [`VecMap::get_str`] of a key longer than 16 bytes in a small map, out of line: its
    /// comparison calls `memcmp` (see there).
    #[inline(never)]
    fn long_get_str<'m>(entries: &'m [(K, V)], key: &str) -> Option<&'m V>
    where
        K: AsRef<[u8]>,
    {
        Self::scan(entries, key.as_bytes())
    }

    /// The value of the key whose bytes are `key` among a small map's entries, compared by
    /// [`eq_bytes`]; walking the entries (no position counted) is one instruction less per
    /// entry than [`VecMap::position_bytes`].
    #[inline(always)]
    fn scan<'m>(entries: &'m [(K, V)], key: &[u8]) -> Option<&'m V>
    where
        K: AsRef<[u8]>,
    {
        entries
            .iter()
            .find(|(k, _)| eq_bytes(k.as_ref(), key))
            .map(|(_, v)| v)
    }

    /// [`VecMap::get_str`] of a large map, out of line (see there).
    #[inline(never)]
    fn tree_get_str<'m>(map: &'m BTreeMap<K, V>, key: &str) -> Option<&'m V>
    where
        K: Borrow<str>,
    {
        map.get(key)
    }

    /// [`VecMap::get_mut`] of a `str` key.
    #[inline]
    pub(crate) fn get_str_mut(&mut self, key: &str) -> Option<&mut V>
    where
        K: AsRef<[u8]> + Borrow<str>,
    {
        match self {
            VecMap::Small(entries) => match Self::position_bytes(entries, key.as_bytes()) {
                Some(i) => Some(&mut entries.make_mut()[i].1),
                None => None,
            },
            VecMap::Large(map) => Self::tree_mut_holding(map, key)?.get_mut(key),
        }
    }

    /// Makes room for `key`: a full small map that does not hold it becomes a large one.
    fn make_room_for(&mut self, key: &K) {
        if let VecMap::Small(entries) = self {
            if entries.len() >= SMALL && Self::search(entries, key).is_err() {
                let entries = mem::take(entries);
                *self = VecMap::Large(Arc::new(entries.into_iter().collect()));
            }
        }
    }

    /// A large map's tree for a change that needs `key` there: `None` when it is not, so that a
    /// shared tree is not copied for nothing.
    #[inline]
    fn tree_mut_holding<'m, Q>(
        map: &'m mut Arc<BTreeMap<K, V>>,
        key: &Q,
    ) -> Option<&'m mut BTreeMap<K, V>>
    where
        K: Borrow<Q>,
        Q: ?Sized + Ord,
    {
        if map.contains_key(key) {
            Some(Arc::make_mut(map))
        } else {
            None
        }
    }

    #[inline]
    pub(crate) fn clear(&mut self) {
        *self = VecMap::default();
    }

    #[inline]
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: ?Sized + Ord,
    {
        match self {
            VecMap::Small(entries) => Self::position(entries, key).map(|i| &entries[i].1),
            VecMap::Large(map) => map.get(key),
        }
    }

    #[inline]
    pub(crate) fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: ?Sized + Ord,
    {
        self.get(key).is_some()
    }

    #[inline]
    pub(crate) fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: ?Sized + Ord,
    {
        match self {
            VecMap::Small(entries) => match Self::position(entries, key) {
                Some(i) => Some(&mut entries.make_mut()[i].1),
                None => None,
            },
            VecMap::Large(map) => Self::tree_mut_holding(map, key)?.get_mut(key),
        }
    }

    #[inline]
    pub(crate) fn get_key_value<Q>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
        Q: ?Sized + Ord,
    {
        match self {
            VecMap::Small(entries) => Self::position(entries, key).map(|i| {
                let (k, v) = &entries[i];
                (k, v)
            }),
            VecMap::Large(map) => map.get_key_value(key),
        }
    }

    /// As `BTreeMap::insert`: an existing key keeps its `K` and gets the new value.
    #[inline]
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        self.make_room_for(&key);
        match self {
            VecMap::Small(entries) => match Self::search(entries, &key) {
                Ok(i) => Some(mem::replace(&mut entries.make_mut()[i].1, value)),
                Err(i) => {
                    entries.insert(i, (key, value));
                    None
                }
            },
            VecMap::Large(map) => Arc::make_mut(map).insert(key, value),
        }
    }

    #[inline]
    pub(crate) fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: ?Sized + Ord,
    {
        self.remove_entry(key).map(|(_, v)| v)
    }

    #[inline]
    pub(crate) fn remove_entry<Q>(&mut self, key: &Q) -> Option<(K, V)>
    where
        K: Borrow<Q>,
        Q: ?Sized + Ord,
    {
        match self {
            VecMap::Small(entries) => match Self::position(entries, key) {
                Some(i) => Some(entries.remove(i)),
                None => None,
            },
            VecMap::Large(map) => Self::tree_mut_holding(map, key)?.remove_entry(key),
        }
    }

    /// As `BTreeMap::append`: `other`'s entries move here, winning over equal keys.
    pub(crate) fn append(&mut self, other: &mut Self) {
        if self.is_empty() {
            mem::swap(self, other);
            return;
        }
        for (k, v) in mem::take(other) {
            self.insert(k, v);
        }
    }

    pub(crate) fn entry(&mut self, key: K) -> Entry<'_, K, V> {
        self.make_room_for(&key);
        match self {
            VecMap::Small(entries) => match Self::search(entries, &key) {
                Ok(index) => {
                    Entry::Occupied(OccupiedEntry(OccupiedInner::Small { entries, index }))
                }
                Err(index) => Entry::Vacant(VacantEntry(VacantInner::Small {
                    entries,
                    index,
                    key,
                })),
            },
            VecMap::Large(map) => match Arc::make_mut(map).entry(key) {
                btree_map::Entry::Vacant(e) => Entry::Vacant(VacantEntry(VacantInner::Large(e))),
                btree_map::Entry::Occupied(e) => {
                    Entry::Occupied(OccupiedEntry(OccupiedInner::Large(e)))
                }
            },
        }
    }

    #[inline]
    pub(crate) fn retain<F>(&mut self, mut f: F)
    where
        F: FnMut(&K, &mut V) -> bool,
    {
        match self {
            VecMap::Small(entries) => entries.retain(|(k, v)| f(k, v)),
            VecMap::Large(map) => Arc::make_mut(map).retain(f),
        }
    }

    #[inline]
    pub(crate) fn iter_mut(&mut self) -> IterMut<'_, K, V> {
        match self {
            VecMap::Small(entries) => IterMut::Small(entries.make_mut().iter_mut()),
            VecMap::Large(map) => IterMut::Large(Arc::make_mut(map).iter_mut()),
        }
    }

    #[inline]
    pub(crate) fn values_mut(&mut self) -> ValuesMut<'_, K, V> {
        ValuesMut(self.iter_mut())
    }

    #[inline]
    pub(crate) fn into_values(self) -> IntoValues<K, V> {
        IntoValues(self.into_iter())
    }
}

impl<K, V> VecMap<K, V> {
    /// The address of the entries' allocation (the vector's, or the tree's `Arc`), `None`
    /// for an empty small map without one.
    #[inline]
    pub(crate) fn entries_id(&self) -> Option<usize> {
        match self {
            VecMap::Small(entries) => entries.allocation(),
            VecMap::Large(map) => Some(Arc::as_ptr(map) as *const () as usize),
        }
    }

    /// Whether both maps share their entries (so are equal): one is a clone of the other, or
    /// both of one map, and neither has changed since. Two empty small maps share nothing and
    /// are equal anyway.
    #[inline]
    pub(crate) fn shares_entries(&self, other: &Self) -> bool {
        match (self, other) {
            (VecMap::Small(a), VecMap::Small(b)) => a.shares_allocation(b),
            (VecMap::Large(a), VecMap::Large(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// Whether another map shares these entries (so a change through this one copies them
    /// first). An empty small map without an allocation shares nothing.
    #[inline]
    pub(crate) fn is_shared(&self) -> bool {
        match self {
            VecMap::Small(entries) => entries.allocation().is_some() && !entries.is_unique(),
            VecMap::Large(map) => Arc::strong_count(map) > 1,
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        match self {
            VecMap::Small(entries) => entries.len(),
            VecMap::Large(map) => map.len(),
        }
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub(crate) fn iter(&self) -> Iter<'_, K, V> {
        match self {
            VecMap::Small(entries) => Iter::Small(entries.iter()),
            VecMap::Large(map) => Iter::Large(map.iter()),
        }
    }

    #[inline]
    pub(crate) fn keys(&self) -> Keys<'_, K, V> {
        Keys(self.iter())
    }

    #[inline]
    pub(crate) fn values(&self) -> Values<'_, K, V> {
        Values(self.iter())
    }
}

/// Defines an iterator over either representation: `$small` and `$large` are the two
/// iterators, `$from_small` turns the vector's item into the map's.
macro_rules! either_iterator {
    (
        $(#[$attr:meta])*
        $name:ident<$($lt:lifetime,)? K, V> => $item:ty,
        $small:ty => $from_small:expr,
        $large:ty
        $(, where $($bound:tt)*)?
    ) => {
        $(#[$attr])*
        pub(crate) enum $name<$($lt,)? K, V> {
            Small($small),
            Large($large),
        }

        impl<$($lt,)? K, V> Iterator for $name<$($lt,)? K, V> where $($($bound)*)? {
            type Item = $item;

            #[inline]
            fn next(&mut self) -> Option<Self::Item> {
                match self {
                    $name::Small(it) => it.next().map($from_small),
                    $name::Large(it) => it.next(),
                }
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                match self {
                    $name::Small(it) => it.size_hint(),
                    $name::Large(it) => it.size_hint(),
                }
            }
        }

        impl<$($lt,)? K, V> DoubleEndedIterator for $name<$($lt,)? K, V> where $($($bound)*)? {
            #[inline]
            fn next_back(&mut self) -> Option<Self::Item> {
                match self {
                    $name::Small(it) => it.next_back().map($from_small),
                    $name::Large(it) => it.next_back(),
                }
            }
        }

        impl<$($lt,)? K, V> ExactSizeIterator for $name<$($lt,)? K, V> where $($($bound)*)? {}

        impl<$($lt,)? K, V> FusedIterator for $name<$($lt,)? K, V> where $($($bound)*)? {}
    };
}

either_iterator!(
    #[derive(Clone, Debug)]
    Iter<'a, K, V> => (&'a K, &'a V),
    slice::Iter<'a, (K, V)> => |(k, v): &'a (K, V)| (k, v),
    btree_map::Iter<'a, K, V>
);

either_iterator!(
    #[derive(Debug)]
    IterMut<'a, K, V> => (&'a K, &'a mut V),
    slice::IterMut<'a, (K, V)> => |(k, v): &'a mut (K, V)| (&*k, v),
    btree_map::IterMut<'a, K, V>
);

either_iterator!(
    #[derive(Debug)]
    IntoIter<K, V> => (K, V),
    crate::shared_vec::IntoIter<(K, V)> => |entry: (K, V)| entry,
    btree_map::IntoIter<K, V>,
    where K: Clone, V: Clone
);

/// Defines an iterator that yields one half of another's items.
macro_rules! projection {
    (
        $(#[$attr:meta])*
        $name:ident<$($lt:lifetime,)? K, V>($inner:ty) => $item:ty, $project:expr
        $(, where $($bound:tt)*)?
    ) => {
        $(#[$attr])*
        pub(crate) struct $name<$($lt,)? K, V>($inner);

        impl<$($lt,)? K, V> Iterator for $name<$($lt,)? K, V> where $($($bound)*)? {
            type Item = $item;

            #[inline]
            fn next(&mut self) -> Option<Self::Item> {
                self.0.next().map($project)
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.0.size_hint()
            }
        }

        impl<$($lt,)? K, V> DoubleEndedIterator for $name<$($lt,)? K, V> where $($($bound)*)? {
            #[inline]
            fn next_back(&mut self) -> Option<Self::Item> {
                self.0.next_back().map($project)
            }
        }

        impl<$($lt,)? K, V> ExactSizeIterator for $name<$($lt,)? K, V> where $($($bound)*)? {}

        impl<$($lt,)? K, V> FusedIterator for $name<$($lt,)? K, V> where $($($bound)*)? {}
    };
}

projection!(
    #[derive(Clone, Debug)]
    Keys<'a, K, V>(Iter<'a, K, V>) => &'a K, |(k, _): (&'a K, &'a V)| k
);
projection!(
    #[derive(Clone, Debug)]
    Values<'a, K, V>(Iter<'a, K, V>) => &'a V, |(_, v): (&'a K, &'a V)| v
);
projection!(
    #[derive(Debug)]
    ValuesMut<'a, K, V>(IterMut<'a, K, V>) => &'a mut V, |(_, v): (&'a K, &'a mut V)| v
);
projection!(
    #[derive(Debug)]
    IntoValues<K, V>(IntoIter<K, V>) => V, |(_, v): (K, V)| v,
    where K: Clone, V: Clone
);

impl<K: Clone, V: Clone> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = IntoIter<K, V>;

    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        match self {
            VecMap::Small(entries) => IntoIter::Small(entries.into_iter()),
            VecMap::Large(map) => IntoIter::Large(Arc::unwrap_or_clone(map).into_iter()),
        }
    }
}

impl<K: Ord + AsRef<[u8]> + Clone, V: Clone> FromIterator<(K, V)> for VecMap<K, V> {
    /// As `BTreeMap::from_iter`: sorted once (stably), the last of equal keys kept.
    fn from_iter<T: IntoIterator<Item = (K, V)>>(iter: T) -> Self {
        let mut entries: SharedVec<(K, V)> = iter.into_iter().collect();
        if entries.len() > SMALL {
            return VecMap::Large(Arc::new(entries.into_iter().collect()));
        }
        let sorted = entries.make_mut();
        sorted.sort_by(|a, b| cmp_bytes(a.0.as_ref(), b.0.as_ref()));
        if sorted.windows(2).any(|w| w[0].0 == w[1].0) {
            // Keep the last of each run of equal keys: walking backwards, keep the first seen.
            let mut kept: Vec<(K, V)> = entries.into_iter().rev().collect();
            kept.dedup_by(|later, kept| later.0 == kept.0);
            kept.reverse();
            entries = kept.into_iter().collect();
        }
        VecMap::Small(entries)
    }
}

impl<K: Ord + AsRef<[u8]> + Clone, V: Clone> Extend<(K, V)> for VecMap<K, V> {
    fn extend<T: IntoIterator<Item = (K, V)>>(&mut self, iter: T) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<K: PartialEq + AsRef<[u8]>, V: PartialEq> PartialEq for VecMap<K, V> {
    /// As `BTreeMap`'s: the same entries in the same order, whatever each side's form (keys
    /// compared by [`eq_bytes`], which is `==` on their bytes).
    fn eq(&self, other: &Self) -> bool {
        if self.shares_entries(other) {
            return true;
        }
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|((ka, va), (kb, vb))| eq_bytes(ka.as_ref(), kb.as_ref()) && va == vb)
    }
}

impl<K: Eq + AsRef<[u8]>, V: Eq> Eq for VecMap<K, V> {}

impl<K, Q, V> core::ops::Index<&Q> for VecMap<K, V>
where
    K: Borrow<Q> + Ord + AsRef<[u8]> + Clone,
    V: Clone,
    Q: ?Sized + Ord,
{
    type Output = V;

    /// As `BTreeMap`'s: panics when the key is not there.
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

impl<K: Hash, V: Hash> Hash for VecMap<K, V> {
    /// As `BTreeMap`'s: the length, then each key and value in order, whatever the form.
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for (k, v) in self.iter() {
            k.hash(state);
            v.hash(state);
        }
    }
}

impl<K: Debug, V: Debug> Debug for VecMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A place for a key, as `btree_map::Entry`.
pub(crate) enum Entry<'a, K, V> {
    Vacant(VacantEntry<'a, K, V>),
    Occupied(OccupiedEntry<'a, K, V>),
}

pub(crate) struct VacantEntry<'a, K, V>(VacantInner<'a, K, V>);

enum VacantInner<'a, K, V> {
    Small {
        entries: &'a mut SharedVec<(K, V)>,
        index: usize,
        key: K,
    },
    Large(btree_map::VacantEntry<'a, K, V>),
}

impl<'a, K: Ord + Clone, V: Clone> VacantEntry<'a, K, V> {
    #[inline]
    pub(crate) fn key(&self) -> &K {
        match &self.0 {
            VacantInner::Small { key, .. } => key,
            VacantInner::Large(e) => e.key(),
        }
    }

    #[inline]
    pub(crate) fn insert(self, value: V) -> &'a mut V {
        match self.0 {
            VacantInner::Small {
                entries,
                index,
                key,
            } => {
                entries.insert(index, (key, value));
                &mut entries.make_mut()[index].1
            }
            VacantInner::Large(e) => e.insert(value),
        }
    }
}

pub(crate) struct OccupiedEntry<'a, K, V>(OccupiedInner<'a, K, V>);

enum OccupiedInner<'a, K, V> {
    Small {
        entries: &'a mut SharedVec<(K, V)>,
        index: usize,
    },
    Large(btree_map::OccupiedEntry<'a, K, V>),
}

impl<'a, K: Ord + Clone, V: Clone> OccupiedEntry<'a, K, V> {
    #[inline]
    pub(crate) fn key(&self) -> &K {
        match &self.0 {
            OccupiedInner::Small { entries, index } => &entries[*index].0,
            OccupiedInner::Large(e) => e.key(),
        }
    }

    #[inline]
    pub(crate) fn get(&self) -> &V {
        match &self.0 {
            OccupiedInner::Small { entries, index } => &entries[*index].1,
            OccupiedInner::Large(e) => e.get(),
        }
    }

    #[inline]
    pub(crate) fn get_mut(&mut self) -> &mut V {
        match &mut self.0 {
            OccupiedInner::Small { entries, index } => &mut entries.make_mut()[*index].1,
            OccupiedInner::Large(e) => e.get_mut(),
        }
    }

    #[inline]
    pub(crate) fn into_mut(self) -> &'a mut V {
        match self.0 {
            OccupiedInner::Small { entries, index } => &mut entries.make_mut()[index].1,
            OccupiedInner::Large(e) => e.into_mut(),
        }
    }

    #[inline]
    pub(crate) fn insert(&mut self, value: V) -> V {
        mem::replace(self.get_mut(), value)
    }

    #[inline]
    pub(crate) fn remove(self) -> V {
        self.remove_entry().1
    }

    #[inline]
    pub(crate) fn remove_entry(self) -> (K, V) {
        match self.0 {
            OccupiedInner::Small { entries, index } => entries.remove(index),
            OccupiedInner::Large(e) => e.remove_entry(),
        }
    }
}
