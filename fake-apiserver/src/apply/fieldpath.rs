//! Field paths and field sets, as structured-merge-diff's `fieldpath` package models them, and
//! their `FieldsV1` encoding in `metadata.managedFields`.
//!
//! A path is a list of elements: a struct field or map key (`f:name`), an element of a list keyed
//! by some of its fields (`k:{"name":"x"}`), an element of a set-like list by its value (`v:"a"`),
//! or a list index (`i:0`, never produced by the server but accepted when read back). A [`Set`] is
//! a tree: the paths that are members at this level, and a child set per path element below it.
//! In `FieldsV1`, a member that also has children is written with a `"."` entry in its object.

use std::cmp::Ordering;
use std::fmt;
use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::fingerprint::{
    bytes_hash, entry_hash, head_tail_hash, map_fingerprint, map_hash, mix, EMPTY_MAP_FINGERPRINT,
};

use crate::rules::validation::{go_format_float, go_quote};

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathElement {
    /// A struct field or a map key: `f:<name>` (shared with the type schema's names where it is
    /// one of them, see `TypeSchema::member`).
    Field(Arc<str>),
    /// A list element identified by its key fields, sorted by name: `k:{...}`.
    Key(Vec<(String, Value)>),
    /// A set element identified by its (scalar) value: `v:<json>`.
    Value(Value),
    /// A list element by position: `i:<n>`.
    Index(usize),
}

fn variant_rank(pe: &PathElement) -> u8 {
    match pe {
        PathElement::Field(_) => 0,
        PathElement::Key(_) => 1,
        PathElement::Value(_) => 2,
        PathElement::Index(_) => 3,
    }
}

/// The order structured-merge-diff gives values: null, numbers, strings, booleans, lists, maps.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Number(_) => 1,
            Value::String(_) => 2,
            Value::Bool(_) => 3,
            Value::Array(_) => 4,
            Value::Object(_) => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x
                .as_f64()
                .unwrap_or_default()
                .total_cmp(&y.as_f64().unwrap_or_default()),
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (x, y) in x.iter().zip(y) {
                let c = compare_values(x, y);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            for ((kx, vx), (ky, vy)) in x.iter().zip(y) {
                let c = kx.cmp(ky).then_with(|| compare_values(vx, vy));
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for ((na, va), (nb, vb)) in a.iter().zip(b) {
                    let c = na.cmp(nb).then_with(|| compare_values(va, vb));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => variant_rank(self).cmp(&variant_rank(other)),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A value as structured-merge-diff prints it in paths (`value.ToString`): strings quoted.
fn value_to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => go_format_float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => go_quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(value_to_string).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k}={}", value_to_string(v)))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
    }
}

impl fmt::Display for PathElement {
    /// The form conflict messages use: `.name`, `[key="v",...]`, `[=value]`, `[0]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(n, v)| format!("{n}={}", value_to_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", value_to_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// Why a `FieldsV1` document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(pub String);

impl PathElement {
    /// A hash of this element (equal elements hash alike), without encoding it.
    fn element_hash(&self) -> u64 {
        match self {
            PathElement::Field(name) => mix(1, head_tail_hash(name.as_bytes())),
            PathElement::Key(fields) => fields.iter().fold(2, |hash, (name, value)| {
                mix(mix(hash, bytes_hash(name.as_bytes())), value_hash(value))
            }),
            PathElement::Value(value) => mix(3, value_hash(value)),
            PathElement::Index(i) => mix(4, *i as u64),
        }
    }

    /// The `FieldsV1` key of this element.
    pub fn encode(&self) -> String {
        match self {
            PathElement::Field(name) => {
                let mut key = String::with_capacity(2 + name.len());
                key.push_str("f:");
                key.push_str(name);
                key
            }
            PathElement::Key(fields) => encode_key(fields),
            PathElement::Value(v) => format!("v:{v}"),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Reads a `FieldsV1` key; `Ok(None)` for an unknown element type (skipped, as the real
    /// server skips it).
    pub fn decode(key: &str) -> Result<Option<Self>, DecodeError> {
        let Some((kind, rest)) = key.split_at_checked(2) else {
            return Err(DecodeError("key must be 2 characters long:".into()));
        };
        if !kind.ends_with(':') {
            return Err(DecodeError(format!("missing colon: {key}")));
        }
        let bad = |e: serde_json::Error| DecodeError(format!("parsing key as path element: {e}"));
        Ok(Some(match kind {
            "f:" => PathElement::Field(rest.into()),
            "v:" => PathElement::Value(serde_json::from_str(rest).map_err(bad)?),
            "k:" => {
                let map: Map<String, Value> = serde_json::from_str(rest).map_err(bad)?;
                PathElement::Key(map.into_iter().collect())
            }
            "i:" => PathElement::Index(
                rest.parse()
                    .map_err(|e| DecodeError(format!("parsing index: {e}")))?,
            ),
            _ => return Ok(None),
        }))
    }
}

/// `k:` and the key fields as a JSON object with sorted keys, written without copying them into
/// a map first (a key's field names are distinct: they come from a map or a list's merge keys).
fn encode_key(fields: &[(String, Value)]) -> String {
    let mut sorted: Vec<&(String, Value)> = fields.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::with_capacity(16 + 24 * fields.len());
    out.push_str("k:{");
    for (i, (name, value)) in sorted.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        // Writing JSON into a String cannot fail.
        let _ = write!(out, "{}:{value}", Value::from(name.as_str()));
    }
    out.push('}');
    out
}

/// A hash of a key field's or a set element's value (equal values hash alike).
fn value_hash(value: &Value) -> u64 {
    match value {
        Value::Null => 0x10,
        Value::Bool(b) => mix(0x11, u64::from(*b)),
        Value::String(s) => mix(0x12, bytes_hash(s.as_bytes())),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => mix(0x13, u),
            (None, Some(i), _) => mix(0x14, i as u64),
            (None, None, Some(f)) => mix(0x15, f.to_bits()),
            (None, None, None) => mix(0x16, bytes_hash(n.to_string().as_bytes())),
        },
        Value::Array(items) => items
            .iter()
            .fold(mix(0x17, items.len() as u64), |hash, item| {
                mix(hash, value_hash(item))
            }),
        Value::Object(map) => map
            .iter()
            .fold(mix(0x18, map.len() as u64), |hash, (k, v)| {
                mix(mix(hash, bytes_hash(k.as_bytes())), value_hash(v))
            }),
    }
}

/// A field path: the elements from the object's root.
pub type Path = Vec<PathElement>;

/// Renders a path as conflict messages do, e.g. `.spec.containers[name="app"].image`.
pub fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// A set of field paths, as a tree.
///
/// Each level keeps its members and its children in vectors sorted by [`PathElement`]'s order,
/// without repeats (as `BTreeSet`/`BTreeMap` would, in one right-sized allocation each: the walks
/// that build sets visit a level in order, so adding to one is mostly a push). A child set is
/// never empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    /// Paths that end at this level, sorted.
    members: Vec<PathElement>,
    /// Sets below each element, sorted by element (never empty).
    children: Vec<(PathElement, Set)>,
}

/// Above this many elements on the other side, a level is combined by one merge over both
/// sorted vectors rather than by a binary search (and an insert or removal) per element.
const MERGE_ABOVE: usize = 8;

/// The most entries a `serde_json::Map` keeps in a vector (reserving more makes it a tree).
const SMALL_MAP: usize = 32;

/// Where `pe` is in `items`, sorted by `key` (`Err`: where it would go). Checks the last item
/// first: sets are mostly built in order.
fn locate<T>(
    items: &[T],
    key: impl Fn(&T) -> &PathElement,
    pe: &PathElement,
) -> Result<usize, usize> {
    match items.last().map(|last| key(last).cmp(pe)) {
        None | Some(Ordering::Less) => Err(items.len()),
        Some(Ordering::Equal) => Ok(items.len() - 1),
        Some(Ordering::Greater) => items.binary_search_by(|item| key(item).cmp(pe)),
    }
}

/// The union of two sorted, repeat-free vectors of members (an element in both keeps `mine`'s).
fn merge_members(mine: Vec<PathElement>, theirs: &[PathElement]) -> Vec<PathElement> {
    let mut out = Vec::with_capacity(mine.len() + theirs.len());
    let mut theirs = theirs.iter().peekable();
    for pe in mine {
        while let Some(t) = theirs.next_if(|t| *t < &pe) {
            out.push(t.clone());
        }
        theirs.next_if(|t| t.cmp(&&pe) == Ordering::Equal);
        out.push(pe);
    }
    out.extend(theirs.cloned());
    out
}

/// A `FieldsV1` map being written by [`Set::emit`], with what its fingerprint needs.
struct Level {
    map: Map<String, Value>,
    /// The sum of the entries' [`entry_hash`]es.
    entries: u64,
    /// A key was inserted twice (no two elements of a set encode alike, but if they did the
    /// sum would count a replaced entry): the fingerprint is then taken from the map.
    replaced: bool,
}

impl Level {
    /// Adds `key` with `{}` below it.
    fn leaf(&mut self, key: String) {
        self.child(key, (Map::new(), EMPTY_MAP_FINGERPRINT));
    }

    /// Adds `key` with the map `below` and its fingerprint.
    fn child(&mut self, key: String, (below, fingerprint): (Map<String, Value>, u64)) {
        self.entries = self
            .entries
            .wrapping_add(entry_hash(key.as_bytes(), fingerprint));
        self.replaced |= self.map.insert(key, Value::Object(below)).is_some();
    }

    fn finish(self) -> (Map<String, Value>, u64) {
        let fingerprint = if self.replaced {
            map_fingerprint(&self.map)
        } else {
            map_hash(self.map.len(), self.entries)
        };
        (self.map, fingerprint)
    }
}

impl Set {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// A level made of `members` and `children` in any order: sorted here. Of repeated
    /// members the first is kept; of repeated children, the first element with the last set
    /// (as inserting them one by one into a `BTreeSet`/`BTreeMap` keeps them). Empty children
    /// are dropped.
    pub fn from_parts(mut members: Vec<PathElement>, mut children: Vec<(PathElement, Set)>) -> Set {
        members.sort();
        members.dedup_by(|later, kept| later.cmp(&kept) == Ordering::Equal);
        children.retain(|(_, child)| !child.is_empty());
        children.sort_by(|a, b| a.0.cmp(&b.0));
        children.dedup_by(|later, kept| {
            let same = later.0.cmp(&kept.0) == Ordering::Equal;
            if same {
                std::mem::swap(&mut later.1, &mut kept.1);
            }
            same
        });
        Set { members, children }
    }

    /// A level made of `members` and `children` already sorted, without repeats, and without
    /// empty children (the fields of a map, met in key order): kept as they are. Debug builds
    /// check it.
    pub fn from_sorted_parts(members: Vec<PathElement>, children: Vec<(PathElement, Set)>) -> Set {
        debug_assert!(members.windows(2).all(|w| w[0] < w[1]), "{members:?}");
        debug_assert!(children.windows(2).all(|w| w[0].0 < w[1].0));
        debug_assert!(children.iter().all(|(_, child)| !child.is_empty()));
        Set { members, children }
    }

    /// Whether the set holds no path.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    fn has_member(&self, pe: &PathElement) -> bool {
        locate(&self.members, |m| m, pe).is_ok()
    }

    fn add_member(&mut self, pe: &PathElement) {
        if let Err(at) = locate(&self.members, |m| m, pe) {
            self.members.insert(at, pe.clone());
        }
    }

    fn remove_member(&mut self, pe: &PathElement) {
        if let Ok(at) = locate(&self.members, |m| m, pe) {
            self.members.remove(at);
        }
    }

    fn child(&self, pe: &PathElement) -> Option<&Set> {
        let at = locate(&self.children, |c| &c.0, pe).ok()?;
        Some(&self.children[at].1)
    }

    /// The child set below `pe`, made empty if there is none (the caller adds to it).
    fn child_entry(&mut self, pe: &PathElement) -> &mut Set {
        let at = match locate(&self.children, |c| &c.0, pe) {
            Ok(at) => at,
            Err(at) => {
                self.children.insert(at, (pe.clone(), Set::default()));
                at
            }
        };
        &mut self.children[at].1
    }

    fn remove_child(&mut self, pe: &PathElement) {
        if let Ok(at) = locate(&self.children, |c| &c.0, pe) {
            self.children.remove(at);
        }
    }

    /// Adds a path (the empty path is ignored).
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => self.add_member(last),
            [first, rest @ ..] => self.child_entry(first).insert(rest),
        }
    }

    /// Inserts `path` and, below it, the paths of `below` (relative to `path`). The same as
    /// inserting each of them, without walking down from the root for every one.
    pub fn graft(&mut self, path: &[PathElement], below: Set) {
        match path {
            [] => self.union_in_place(&below),
            [last] => {
                self.add_member(last);
                if !below.is_empty() {
                    match locate(&self.children, |c| &c.0, last) {
                        Ok(at) => self.children[at].1.union_in_place(&below),
                        Err(at) => self.children.insert(at, (last.clone(), below)),
                    }
                }
            }
            [first, rest @ ..] => self.child_entry(first).graft(rest, below),
        }
    }

    /// Whether `path` is a member.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.has_member(last),
            [first, rest @ ..] => self.child(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Adds `pe` as a member at this level.
    pub fn insert_member(&mut self, pe: PathElement) {
        if let Err(at) = locate(&self.members, |m| m, &pe) {
            self.members.insert(at, pe);
        }
    }

    /// Puts `child` below `pe` (an empty child is not kept).
    pub fn set_child(&mut self, pe: PathElement, child: Set) {
        if child.is_empty() {
            self.remove_child(&pe);
            return;
        }
        match locate(&self.children, |c| &c.0, &pe) {
            Ok(at) => self.children[at].1 = child,
            Err(at) => self.children.insert(at, (pe, child)),
        }
    }

    /// The paths below `pe`, relative to it.
    pub fn with_prefix(&self, pe: &PathElement) -> Option<&Set> {
        self.child(pe)
    }

    /// The members at this level.
    pub fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.members.iter()
    }

    /// The child sets at this level.
    pub fn children(&self) -> impl Iterator<Item = (&PathElement, &Set)> {
        self.children.iter().map(|(pe, child)| (pe, child))
    }

    /// Every path in `self` or `other`.
    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.union_in_place(other);
        out
    }

    /// The union of two sets given away: the smaller is added to the larger, so that a set
    /// joined with an empty one costs nothing.
    pub fn union_owned(self, other: Set) -> Set {
        let (mut larger, smaller) = if self.weight() >= other.weight() {
            (self, other)
        } else {
            (other, self)
        };
        if !smaller.is_empty() {
            larger.union_in_place(&smaller);
        }
        larger
    }

    /// How many members and children this level holds (a cheap proxy for its size).
    fn weight(&self) -> usize {
        self.members.len() + self.children.len()
    }

    fn union_in_place(&mut self, other: &Set) {
        if other.members.len() > MERGE_ABOVE {
            self.members = merge_members(std::mem::take(&mut self.members), &other.members);
        } else {
            for pe in &other.members {
                self.add_member(pe);
            }
        }
        if other.children.len() > MERGE_ABOVE {
            let mine = std::mem::take(&mut self.children);
            let mut out = Vec::with_capacity(mine.len() + other.children.len());
            let mut theirs = other.children.iter().peekable();
            for (pe, mut child) in mine {
                while let Some((t, below)) = theirs.next_if(|(t, _)| *t < pe) {
                    out.push((t.clone(), below.clone()));
                }
                if let Some((_, below)) = theirs.next_if(|(t, _)| t.cmp(&pe) == Ordering::Equal) {
                    child.union_in_place(below);
                }
                out.push((pe, child));
            }
            out.extend(theirs.cloned());
            self.children = out;
        } else {
            for (pe, child) in &other.children {
                self.child_entry(pe).union_in_place(child);
            }
        }
    }

    /// The paths in both.
    pub fn intersection(&self, other: &Set) -> Set {
        let members = self
            .members
            .iter()
            .filter(|pe| other.has_member(pe))
            .cloned()
            .collect();
        let children = self
            .children
            .iter()
            .filter_map(|(pe, child)| {
                let both = child.intersection(other.child(pe)?);
                (!both.is_empty()).then(|| (pe.clone(), both))
            })
            .collect();
        Set { members, children }
    }

    /// This level's members that are not `other`'s.
    fn members_outside(&self, other: &Set) -> Vec<PathElement> {
        self.members
            .iter()
            .filter(|pe| !other.has_member(pe))
            .cloned()
            .collect()
    }

    /// The paths of `self` that are not in `other` (a parent in `other` removes only itself,
    /// not its children).
    pub fn difference(&self, other: &Set) -> Set {
        let members = self.members_outside(other);
        let children = self
            .children
            .iter()
            .filter_map(|(pe, child)| match other.child(pe) {
                Some(o) => {
                    let d = child.difference(o);
                    (!d.is_empty()).then(|| (pe.clone(), d))
                }
                None => Some((pe.clone(), child.clone())),
            })
            .collect();
        Set { members, children }
    }

    /// Whether [`Set::remove`] of `other` would take anything away.
    pub fn overlaps(&self, other: &Set) -> bool {
        other.members.iter().any(|m| self.has_member(m))
            || other
                .children
                .iter()
                .any(|(pe, o)| self.child(pe).is_some_and(|child| child.overlaps(o)))
    }

    /// Whether [`Set::add`] of `other` would change nothing.
    pub fn contains_all(&self, other: &Set) -> bool {
        other.members.iter().all(|m| self.has_member(m))
            && other
                .children
                .iter()
                .all(|(pe, o)| self.child(pe).is_some_and(|child| child.contains_all(o)))
    }

    /// Takes `other`'s members away from this level's.
    fn remove_members(&mut self, other: &Set) {
        if other.members.len() > MERGE_ABOVE {
            self.members.retain(|pe| !other.has_member(pe));
        } else {
            for pe in &other.members {
                self.remove_member(pe);
            }
        }
    }

    /// Applies `each` to the children `other` also has (with `other`'s child), dropping those it
    /// leaves empty.
    fn remove_below(&mut self, other: &Set, each: impl Fn(&mut Set, &Set)) {
        if other.children.len() > MERGE_ABOVE {
            self.children.retain_mut(|(pe, child)| {
                if let Some(o) = other.child(pe) {
                    each(child, o);
                }
                !child.is_empty()
            });
            return;
        }
        for (pe, o) in &other.children {
            if let Ok(at) = locate(&self.children, |c| &c.0, pe) {
                let child = &mut self.children[at].1;
                each(child, o);
                if child.is_empty() {
                    self.children.remove(at);
                }
            }
        }
    }

    /// [`Set::difference`] in place: touches only the paths `other` names, so removing a few
    /// paths from a big set costs little.
    pub fn remove(&mut self, other: &Set) {
        self.remove_members(other);
        self.remove_below(other, Set::remove);
    }

    /// [`Set::recursive_difference`] in place.
    pub fn remove_recursive(&mut self, other: &Set) {
        self.remove_members(other);
        if other.members.len() > MERGE_ABOVE {
            self.children.retain(|(pe, _)| !other.has_member(pe));
        } else {
            for pe in &other.members {
                self.remove_child(pe);
            }
        }
        self.remove_below(other, Set::remove_recursive);
    }

    /// [`Set::union`] in place.
    pub fn add(&mut self, other: &Set) {
        self.union_in_place(other);
    }

    /// Like [`Set::difference`], but a member of `other` also removes everything below it.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        let members = self.members_outside(other);
        let children = self
            .children
            .iter()
            .filter(|(pe, _)| !other.has_member(pe))
            .filter_map(|(pe, child)| match other.child(pe) {
                Some(o) => {
                    let d = child.recursive_difference(o);
                    (!d.is_empty()).then(|| (pe.clone(), d))
                }
                None => Some((pe.clone(), child.clone())),
            })
            .collect();
        Set { members, children }
    }

    /// Every path, in the set's order: this level's members, then each child's paths.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for pe in &self.members {
            let mut p = prefix.clone();
            p.push(pe.clone());
            out.push(p);
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// The `FieldsV1` object of this set.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.emit(false).0)
    }

    /// The `FieldsV1` object of this set and its [`super::fingerprint::fingerprint`], computed as
    /// it is written (or taken from the document written last for an equal set, see
    /// [`super::written`]).
    pub fn to_fields_v1_with_fingerprint(&self) -> (Value, u64) {
        let (map, fingerprint) = super::written::fields_v1_of(self, |set| set.emit(false));
        (Value::Object(map), fingerprint)
    }

    /// A hash of this set's elements and their nesting (equal sets hash alike), and how many
    /// elements it holds at every level.
    pub(super) fn shape_hash(&self) -> (u64, usize) {
        let mut hash = mix(0x5e7, self.members.len() as u64);
        let mut elements = self.members.len();
        for pe in &self.members {
            hash = mix(hash, pe.element_hash());
        }
        hash = mix(hash, self.children.len() as u64);
        for (pe, child) in &self.children {
            let (below, count) = child.shape_hash();
            hash = mix(mix(hash, pe.element_hash()), below);
            elements += 1 + count;
        }
        (hash, elements)
    }

    /// This level's `FieldsV1` map (`include_self`: with the `.` marker of a member that has
    /// paths below it) and the map's fingerprint.
    fn emit(&self, include_self: bool) -> (Map<String, Value>, u64) {
        // One merge over the sorted members and children, each key inserted as it comes: the
        // elements' order is the keys' text order for fields (`.` sorts before them), so a map
        // built this way mostly appends; where it is not (`k:`, `v:`, `i:` elements) the map's
        // insert puts the key in its place. At most a small map's worth is reserved: one with
        // more distinct keys becomes large when it gets them.
        let upper = usize::from(include_self) + self.members.len() + self.children.len();
        let mut out = Level {
            map: Map::with_capacity(upper.min(SMALL_MAP)),
            entries: 0,
            replaced: false,
        };
        if include_self && !self.is_empty() {
            out.leaf(".".to_string());
        }
        let mut children = self.children.iter().peekable();
        for pe in &self.members {
            // The children before this member, then the member: with its child, if it has one.
            loop {
                let order = children.peek().map(|(below, _)| below.cmp(pe));
                match order {
                    Some(Ordering::Less) | Some(Ordering::Equal) => {
                        if let Some((below, child)) = children.next() {
                            out.child(below.encode(), child.emit(order == Some(Ordering::Equal)));
                        }
                        if order == Some(Ordering::Equal) {
                            break;
                        }
                    }
                    _ => {
                        out.leaf(pe.encode());
                        break;
                    }
                }
            }
        }
        for (below, child) in children {
            out.child(below.encode(), child.emit(false));
        }
        out.finish()
    }

    /// Reads a `FieldsV1` object.
    pub fn from_fields_v1(value: &Value) -> Result<Set, DecodeError> {
        let Value::Object(map) = value else {
            return Err(DecodeError("FieldsV1 is not a JSON object".into()));
        };
        Ok(Self::read(map)?.0.unwrap_or_default())
    }

    /// Returns the children found in `map` (None when it has no entries) and whether `map`
    /// marks its own path as a member.
    fn read(map: &Map<String, Value>) -> Result<(Option<Set>, bool), DecodeError> {
        // The keys come in text order, which is not the elements' order: collected, then sorted.
        let mut members = Vec::new();
        let mut below = Vec::new();
        let mut any = false;
        let mut is_member = false;
        for (key, value) in map {
            if key == "." {
                is_member = true;
                continue;
            }
            let Some(pe) = PathElement::decode(key)? else {
                continue;
            };
            let Value::Object(inner) = value else {
                return Err(DecodeError(format!(
                    "parsing key as path element: {key} does not hold an object"
                )));
            };
            let (grandchildren, child_is_member) = Self::read(inner)?;
            any = true;
            if child_is_member {
                members.push(pe.clone());
            }
            if let Some(g) = grandchildren {
                below.push((pe, g));
            }
        }
        if !any {
            return Ok((None, true));
        }
        Ok((Some(Set::from_parts(members, below)), is_member))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::fingerprint::fingerprint;
    use rstest::rstest;
    use serde_json::json;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    #[test]
    fn key_elements_encode_as_a_sorted_json_object_and_decode_back() {
        let key = PathElement::Key(vec![
            ("protocol".into(), json!("TCP")),
            ("containerPort".into(), json!(8080)),
        ]);
        assert_eq!(key.encode(), r#"k:{"containerPort":8080,"protocol":"TCP"}"#);
        let odd = PathElement::Key(vec![(
            "a \"b\"\n".into(),
            json!({"z": [1, null], "a": 1.5}),
        )]);
        let encoded = odd.encode();
        assert_eq!(encoded, r#"k:{"a \"b\"\n":{"a":1.5,"z":[1,null]}}"#);
        let Some(PathElement::Key(back)) = PathElement::decode(&encoded).unwrap() else {
            panic!("not a key: {encoded}");
        };
        assert_eq!(PathElement::Key(back).encode(), encoded);
    }

    #[test]
    fn fields_v1_round_trips_with_self_markers() {
        let doc = json!({
            "f:data": {".": {}, "f:a": {}},
            "f:metadata": {"f:labels": {"f:x": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {}}}},
            "f:finalizers": {"v:\"a.io/x\"": {}}
        });
        let set = Set::from_fields_v1(&doc).unwrap();
        assert!(set.has(&[f("data")]));
        assert!(set.has(&[f("data"), f("a")]));
        assert!(!set.has(&[f("metadata")]), "no '.' means not a member");
        assert!(set.has(&[f("metadata"), f("labels"), f("x")]));
        let app = PathElement::Key(vec![("name".into(), json!("app"))]);
        assert!(set.has(&[f("spec"), f("containers"), app.clone()]));
        assert!(set.has(&[f("spec"), f("containers"), app, f("image")]));
        assert!(set.has(&[f("finalizers"), PathElement::Value(json!("a.io/x"))]));
        assert_eq!(set.to_fields_v1(), doc);
    }

    /// A seeded xorshift source of numbers below the bound asked for (the random tests'
    /// elements and paths, the same on every run).
    fn random_below(mut seed: u64) -> impl FnMut(usize) -> usize {
        move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        }
    }

    /// The `FieldsV1` document of a set of paths, built path by path: a key per element, `{}`
    /// at a path's end, `.` in a node that is a path's end and has paths below it.
    fn fields_v1_of_paths(paths: &[Path]) -> Value {
        fn node<'a>(
            doc: &'a mut Map<String, Value>,
            path: &[PathElement],
        ) -> &'a mut Map<String, Value> {
            let Some((first, rest)) = path.split_first() else {
                return doc;
            };
            let child = doc
                .entry(first.encode())
                .or_insert_with(|| Value::Object(Map::new()));
            node(child.as_object_mut().unwrap(), rest)
        }
        let mut doc = Map::new();
        for path in paths {
            node(&mut doc, path);
        }
        for path in paths {
            let end = node(&mut doc, path);
            if !end.is_empty() && !end.contains_key(".") {
                end.insert(".".into(), json!({}));
            }
        }
        Value::Object(doc)
    }

    #[test]
    fn fields_v1_is_the_document_of_the_sets_paths() {
        let mut next = random_below(0x2545_f491_4f6c_dd1d);
        // Elements whose keys sort in another order than the elements do (`i:10` before
        // `i:9`, `v:10` before `v:9`, `i:` before `k:`), as well as fields.
        let element = |next: &mut dyn FnMut(usize) -> usize| match next(4) {
            0 => f(["a", "b", "containers", "metadata", "spec"][next(5)]),
            1 => PathElement::Key(vec![
                ("name".into(), json!(["x", "y", "z"][next(3)])),
                ("port".into(), json!([9, 10, 80][next(3)])),
            ]),
            2 => {
                PathElement::Value([json!(9), json!(10), json!("9"), json!(null)][next(4)].clone())
            }
            _ => PathElement::Index([0, 1, 9, 10, 11][next(5)]),
        };
        for _ in 0..300 {
            let mut set = Set::new();
            for _ in 0..next(60) {
                let path: Path = (0..1 + next(4)).map(|_| element(&mut next)).collect();
                set.insert(&path);
            }
            let (doc, written_fingerprint) = set.to_fields_v1_with_fingerprint();
            assert_eq!(doc, fields_v1_of_paths(&set.paths()), "{set:?}");
            assert_eq!(Set::from_fields_v1(&doc).unwrap(), set);
            assert_eq!(written_fingerprint, fingerprint(&doc), "{doc}");
        }
    }

    /// A set's document is fingerprinted as it is written to what the document itself gives,
    /// whichever document the set reads back from.
    #[rstest]
    #[case::a_leaf(json!({"f:a": {}}))]
    #[case::a_marker(json!({"f:a": {".": {}, "f:x": {}}}))]
    #[case::keyed_elements(json!({"f:ports": {"k:{\"port\":10}": {".": {}, "f:port": {}}, "k:{\"port\":9}": {}}}))]
    #[case::indexes(json!({"i:10": {}, "i:9": {}}))]
    fn documents_are_fingerprinted_as_they_are_written(#[case] doc: Value) {
        let set = Set::from_fields_v1(&doc).unwrap();
        let (written, written_fingerprint) = set.to_fields_v1_with_fingerprint();
        assert_eq!(written, doc);
        assert_eq!(written_fingerprint, fingerprint(&doc));
    }

    #[test]
    fn unknown_element_types_are_skipped_and_bad_keys_fail() {
        let set = Set::from_fields_v1(&json!({"x:y": {}, "f:a": {}})).unwrap();
        assert_eq!(set.paths(), vec![vec![f("a")]]);
        assert!(Set::from_fields_v1(&json!({"fa": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"k:{": {}})).is_err());
    }

    #[test]
    fn set_algebra() {
        let mut a = Set::new();
        a.insert(&[f("a"), f("b")]);
        a.insert(&[f("a"), f("c")]);
        a.insert(&[f("a")]);
        let mut b = Set::new();
        b.insert(&[f("a")]);
        // Plain difference removes the parent only; recursive difference removes its subtree.
        let d = a.difference(&b);
        assert!(!d.has(&[f("a")]) && d.has(&[f("a"), f("b")]));
        assert!(a.recursive_difference(&b).is_empty());
        let mut c = Set::new();
        c.insert(&[f("a"), f("c")]);
        c.insert(&[f("z")]);
        let i = a.intersection(&c);
        assert_eq!(i.paths(), vec![vec![f("a"), f("c")]]);
        let u = a.union(&c);
        assert!(u.has(&[f("z")]) && u.has(&[f("a"), f("b")]));
        assert!(a.difference(&a).is_empty());
        // Values equal in order but not in form (1 and 1.0) are one element, as in a BTreeSet,
        // whether a level is merged (more than eight elements) or searched.
        for count in [3, 12] {
            let mut ones = Set::new();
            ones.insert(&[PathElement::Value(json!(1))]);
            let mut many = Set::new();
            for i in 0..count {
                let value = if i == 0 { json!(1.0) } else { json!(i + 1) };
                many.insert(&[PathElement::Value(value)]);
            }
            assert_eq!(ones.union(&many).paths().len(), count);
            assert_eq!(many.union(&ones).paths().len(), count);
            let parts = Set::from_parts(
                vec![PathElement::Value(json!(1)), PathElement::Value(json!(1.0))],
                Vec::new(),
            );
            assert_eq!(parts.paths(), vec![vec![PathElement::Value(json!(1))]]);
        }
    }

    /// Sets built in random orders, held to a model: a `BTreeSet` of whole paths, with each
    /// operation written out on paths.
    #[test]
    fn set_operations_agree_with_a_set_of_paths() {
        use std::collections::BTreeSet;
        type Model = BTreeSet<Path>;
        let mut next = random_below(0x9e37_79b9_7f4a_7c15);
        let element = |next: &mut dyn FnMut(usize) -> usize| match next(4) {
            0 => f(["a", "b", "c", "metadata", "spec"][next(5)]),
            1 => PathElement::Key(vec![("name".into(), json!(["x", "y"][next(2)]))]),
            2 => PathElement::Value([json!(1), json!("1"), json!(null)][next(3)].clone()),
            _ => PathElement::Index(next(3)),
        };
        let model_and_set = |next: &mut dyn FnMut(usize) -> usize| {
            let mut model = Model::new();
            let mut set = Set::new();
            for _ in 0..next(40) {
                let path: Path = (0..1 + next(3)).map(|_| element(next)).collect();
                if next(3) == 0 {
                    // By graft: the path with one more element below it.
                    let below = element(next);
                    let mut under = Set::new();
                    under.insert(std::slice::from_ref(&below));
                    set.graft(&path, under);
                    let mut longer = path.clone();
                    longer.push(below);
                    model.insert(longer);
                } else {
                    set.insert(&path);
                }
                model.insert(path);
            }
            (model, set)
        };
        let paths = |set: &Set| set.paths().into_iter().collect::<Model>();
        let is_below = |p: &Path, q: &Path| q.len() < p.len() && p.starts_with(q);
        for _ in 0..300 {
            let (ma, a) = model_and_set(&mut next);
            let (mb, b) = model_and_set(&mut next);
            assert_eq!(paths(&a), ma);
            assert_eq!(a.paths().len(), ma.len(), "no path twice");
            for p in &ma {
                assert!(a.has(p));
            }
            let union: Model = ma.union(&mb).cloned().collect();
            assert_eq!(paths(&a.union(&b)), union);
            assert_eq!(a.union(&b), b.union(&a), "one form per set");
            assert_eq!(a.clone().union_owned(b.clone()), a.union(&b));
            let both: Model = ma.intersection(&mb).cloned().collect();
            assert_eq!(paths(&a.intersection(&b)), both);
            assert_eq!(a.overlaps(&b), !both.is_empty());
            assert_eq!(a.contains_all(&b), mb.is_subset(&ma));
            let only_a: Model = ma.difference(&mb).cloned().collect();
            assert_eq!(paths(&a.difference(&b)), only_a);
            let mut removed = a.clone();
            removed.remove(&b);
            assert_eq!(removed, a.difference(&b));
            let outside: Model = ma
                .iter()
                .filter(|p| !mb.contains(*p) && !mb.iter().any(|q| is_below(p, q)))
                .cloned()
                .collect();
            assert_eq!(paths(&a.recursive_difference(&b)), outside);
            let mut removed = a.clone();
            removed.remove_recursive(&b);
            assert_eq!(removed, a.recursive_difference(&b));
            let mut added = a.clone();
            added.add(&b);
            assert_eq!(added, a.union(&b));
            assert_eq!(Set::from_fields_v1(&a.to_fields_v1()).unwrap(), a);
        }
    }

    #[test]
    fn paths_print_as_conflict_messages_do() {
        let path = vec![
            f("spec"),
            f("ports"),
            PathElement::Key(vec![
                ("port".into(), json!(80)),
                ("protocol".into(), json!("TCP")),
            ]),
            f("targetPort"),
        ];
        assert_eq!(
            path_string(&path),
            ".spec.ports[port=80,protocol=\"TCP\"].targetPort"
        );
        assert_eq!(
            path_string(&[f("finalizers"), PathElement::Value(json!("a"))]),
            ".finalizers[=\"a\"]"
        );
    }
}
