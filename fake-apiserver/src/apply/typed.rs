//! Operations on JSON objects along their [`TypeSchema`], as structured-merge-diff's `typed`
//! package does them: the field set a value mentions, the comparison of two values (added,
//! modified, removed fields), the merge of an applied configuration into a live object, and the
//! removal of a set of fields.
//!
//! Lists and maps follow their declared type: an atomic list or map is one leaf; a set-like list
//! is identified element by element by value, a keyed list by its key fields; a struct's named
//! fields are not members of a field set themselves (only what is below them), a map's keys are.
//! Empty and null containers are leaves, so `{}` and `null` stay distinct.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::fieldpath::{path_string, Path, PathElement, Set};
use super::schema::{Atom, ListKind, TypeId, TypeSchema, DEDUCED, UNTYPED_ATOMIC};

/// What changed between two versions of an object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    /// Fields present before and gone after.
    pub removed: Set,
    /// Leaves present in both with different values.
    pub modified: Set,
    /// Fields absent before and present after.
    pub added: Set,
}

impl Comparison {
    /// Whether nothing changed.
    pub fn is_same(&self) -> bool {
        self.removed.is_empty() && self.modified.is_empty() && self.added.is_empty()
    }

    /// Drops `fields` (and everything below them) from each part.
    pub fn exclude(&mut self, fields: &Set) {
        if fields.is_empty() {
            return;
        }
        self.removed.remove_recursive(fields);
        self.modified.remove_recursive(fields);
        self.added.remove_recursive(fields);
    }
}

static ATOMIC_LIST: ListKind = ListKind::Atomic;

/// How a position is treated for a given value.
enum Shape<'s> {
    /// A scalar, or anything handled as one value.
    Leaf,
    /// A list of `elem`.
    List { elem: TypeId, kind: &'s ListKind },
    /// A map of type `ty`.
    Map { ty: TypeId, atomic: bool },
}

fn is_null(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}

/// The shape of `ty` for `v` (`None`/null fit any container).
fn shape_of<'s>(schema: &'s TypeSchema, ty: TypeId, v: Option<&Value>) -> Shape<'s> {
    match schema.atom(ty) {
        Atom::Scalar | Atom::UntypedAtomic => Shape::Leaf,
        Atom::List { elem, kind } => match v {
            None | Some(Value::Null | Value::Array(_)) => Shape::List { elem: *elem, kind },
            _ => Shape::Leaf,
        },
        Atom::Map { atomic, .. } => match v {
            None | Some(Value::Null | Value::Object(_)) => Shape::Map {
                ty,
                atomic: *atomic,
            },
            _ => Shape::Leaf,
        },
        Atom::Deduced => match v {
            Some(Value::Array(_)) => Shape::List {
                elem: UNTYPED_ATOMIC,
                kind: &ATOMIC_LIST,
            },
            Some(Value::Object(_)) => Shape::Map {
                ty: DEDUCED,
                atomic: false,
            },
            _ => Shape::Leaf,
        },
    }
}

/// The shape for a pair of values: the right one decides unless absent or null; values of
/// different shapes are compared as leaves.
fn shape_of_pair<'s>(
    schema: &'s TypeSchema,
    ty: TypeId,
    l: Option<&Value>,
    r: Option<&Value>,
) -> Shape<'s> {
    let decider = if is_null(r) { l } else { r };
    let shape = shape_of(schema, ty, decider);
    if !is_null(l) && !is_null(r) {
        let other = shape_of(schema, ty, l);
        let same = matches!(
            (&shape, &other),
            (Shape::Leaf, Shape::Leaf)
                | (Shape::List { .. }, Shape::List { .. })
                | (Shape::Map { .. }, Shape::Map { .. })
        );
        if !same {
            return Shape::Leaf;
        }
    }
    shape
}

fn is_empty_container(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(m)) => m.is_empty(),
        _ => false,
    }
}

/// The path element of a list item.
pub fn item_element(kind: &ListKind, item: &Value) -> Result<PathElement, String> {
    match kind {
        ListKind::Atomic => Err("invalid indexing of non-associative list".into()),
        ListKind::Map(keys) => {
            let Some(obj) = item.as_object() else {
                return Err(if item.is_null() {
                    "associative list with keys may not have a null element".into()
                } else {
                    "associative list with keys may not have non-map elements".into()
                });
            };
            let mut fields: Vec<(String, Value)> = keys
                .iter()
                .filter_map(|(name, default)| {
                    obj.get(name)
                        .or(default.as_ref())
                        .map(|v| (name.clone(), v.clone()))
                })
                .collect();
            if !keys.is_empty() && fields.is_empty() {
                let names: Vec<String> = keys
                    .iter()
                    .map(|(n, _)| crate::rules::validation::go_quote(n))
                    .collect();
                return Err(format!(
                    "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
                    names.join(" ")
                ));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(fields))
        }
        ListKind::Set => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            scalar => Ok(PathElement::Value(scalar.clone())),
        },
    }
}

/// The elements of a list by path element: first-seen order, and every value of each element.
struct Indexed<'v> {
    order: Vec<PathElement>,
    values: BTreeMap<PathElement, Vec<&'v Value>>,
}

fn index_list<'v>(kind: &ListKind, items: Option<&'v Vec<Value>>) -> Result<Indexed<'v>, String> {
    let mut out = Indexed {
        order: Vec::new(),
        values: BTreeMap::new(),
    };
    for (i, item) in items.into_iter().flatten().enumerate() {
        let pe = item_element(kind, item).map_err(|e| format!("element {i}: {e}"))?;
        match out.values.get_mut(&pe) {
            Some(v) => v.push(item),
            None => {
                out.values.insert(pe.clone(), vec![item]);
                out.order.push(pe);
            }
        }
    }
    Ok(out)
}

/// Errors found in an applied configuration (structured-merge-diff's validation of the patch
/// object): lists whose elements cannot be identified, duplicate elements, containers of the
/// wrong kind.
pub fn validate(schema: &TypeSchema, ty: TypeId, v: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    validate_at(schema, ty, v, &mut Vec::new(), &mut errors);
    errors
}

fn validate_at(
    schema: &TypeSchema,
    ty: TypeId,
    v: &Value,
    path: &mut Path,
    errors: &mut Vec<String>,
) {
    let at = |path: &Path, msg: String| {
        if path.is_empty() {
            msg
        } else {
            format!("{}: {msg}", path_string(path))
        }
    };
    match (schema.atom(ty), v) {
        (_, Value::Null) => {}
        (
            Atom::List { .. },
            Value::Object(_) | Value::String(_) | Value::Number(_) | Value::Bool(_),
        ) => {
            errors.push(at(path, format!("expected list, got {}", kind_name(v))));
        }
        (
            Atom::Map { .. },
            Value::Array(_) | Value::String(_) | Value::Number(_) | Value::Bool(_),
        ) => {
            errors.push(at(path, format!("expected map, got {}", kind_name(v))));
        }
        (Atom::Scalar, Value::Array(_) | Value::Object(_)) => {
            errors.push(at(path, format!("expected scalar, got {}", kind_name(v))));
        }
        (Atom::List { elem, kind }, Value::Array(items)) => {
            if *kind == ListKind::Atomic {
                return;
            }
            let mut seen = BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                match item_element(kind, item) {
                    Err(e) => errors.push(at(path, format!("element {i}: {e}"))),
                    Ok(pe) => {
                        if !seen.insert(pe.clone()) {
                            errors.push(at(path, format!("duplicate entries for key {pe}")));
                            continue;
                        }
                        path.push(pe);
                        validate_at(schema, *elem, item, path, errors);
                        path.pop();
                    }
                }
            }
        }
        (Atom::Map { .. }, Value::Object(m)) => {
            for (k, child) in m {
                let (pe, child_ty) = schema.member(ty, k);
                path.push(pe);
                validate_at(schema, child_ty, child, path, errors);
                path.pop();
            }
        }
        (Atom::Deduced, Value::Object(m)) => {
            for (k, child) in m {
                path.push(PathElement::Field(k.as_str().into()));
                validate_at(schema, DEDUCED, child, path, errors);
                path.pop();
            }
        }
        _ => {}
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

/// Every field `v` mentions: its leaves, the elements of its granular lists and the keys of its
/// granular maps (struct fields only through what is below them).
pub fn to_field_set(schema: &TypeSchema, ty: TypeId, v: &Value) -> Set {
    let mut out = Set::new();
    field_set_at(schema, ty, v, &mut Vec::new(), &mut out);
    out
}

fn field_set_at(schema: &TypeSchema, ty: TypeId, v: &Value, path: &mut Path, out: &mut Set) {
    match shape_of(schema, ty, Some(v)) {
        Shape::Leaf => out.insert(path),
        Shape::List { kind, .. } if *kind == ListKind::Atomic => out.insert(path),
        Shape::List { elem, kind } => {
            let Some(items) = v.as_array() else {
                return;
            };
            let Ok(indexed) = index_list(kind, Some(items)) else {
                // Elements that cannot be identified: the list is one value.
                out.insert(path);
                return;
            };
            for pe in &indexed.order {
                let values = &indexed.values[pe];
                path.push(pe.clone());
                if values.len() == 1 {
                    field_set_at(schema, elem, values[0], path, out);
                }
                out.insert(path);
                path.pop();
            }
        }
        Shape::Map { atomic: true, .. } => out.insert(path),
        Shape::Map { ty, .. } => {
            let Some(m) = v.as_object() else {
                return;
            };
            for (k, child) in m {
                let (pe, child_ty) = schema.member(ty, k);
                path.push(pe);
                field_set_at(schema, child_ty, child, path, out);
                let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                if empty || !schema.is_struct_field(ty, k) {
                    out.insert(path);
                }
                path.pop();
            }
        }
    }
}

/// Compares `lhs` (before) with `rhs` (after).
pub fn compare(schema: &TypeSchema, ty: TypeId, lhs: &Value, rhs: &Value) -> Comparison {
    let mut c = Comparison::default();
    compare_at(schema, ty, Some(lhs), Some(rhs), &mut Vec::new(), &mut c);
    c
}

/// [`compare`] of two objects as if neither had `metadata.managedFields` (`lhs` absent: `{}`),
/// without copying them: only a `metadata` that holds `managedFields` is copied, without it.
/// `known_equal` selects top-level members the caller found equal on both sides already.
pub fn compare_without_managed_fields(
    schema: &TypeSchema,
    ty: TypeId,
    lhs: Option<&Value>,
    rhs: &Value,
    known_equal: impl Fn(&str) -> bool,
) -> Comparison {
    let empty = Value::Object(Map::new());
    let lhs = lhs.unwrap_or(&empty);
    let stripped = |v: &Value| -> Option<Value> {
        let meta = v.get("metadata")?.as_object()?;
        meta.contains_key("managedFields").then(|| {
            Value::Object(
                meta.iter()
                    .filter(|(k, _)| *k != "managedFields")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            )
        })
    };
    let (lm, rm) = (stripped(lhs), stripped(rhs));
    let mut c = Comparison::default();
    let (Some(l), Some(r)) = (lhs.as_object(), rhs.as_object()) else {
        compare_at(schema, ty, Some(lhs), Some(rhs), &mut Vec::new(), &mut c);
        return c;
    };
    // The root as `compare_at` walks a granular map (what every kind's root is), with the
    // stripped `metadata` on either side; anything else takes the general path on copies.
    let map_ty = match shape_of_pair(schema, ty, Some(lhs), Some(rhs)) {
        Shape::Map { ty, atomic: false } if !(l.is_empty() && r.is_empty()) => ty,
        _ => {
            compare_copies(schema, ty, lhs, rhs, lm, rm, &mut c);
            return c;
        }
    };
    let mut path = Vec::new();
    for (k, lv, rv) in members_of_both(Some(l), Some(r)) {
        let (lv, rv) = if k == "metadata" {
            (lm.as_ref().or(lv), rm.as_ref().or(rv))
        } else {
            (lv, rv)
        };
        if known_equal(k) || both_equal(lv, rv) {
            continue;
        }
        let (pe, child_ty) = schema.member(map_ty, k);
        path.push(pe);
        compare_unequal(schema, child_ty, lv, rv, &mut path, &mut c);
        path.pop();
    }
    c
}

/// The general path of [`compare_without_managed_fields`]: the objects copied with their
/// stripped `metadata`.
fn compare_copies(
    schema: &TypeSchema,
    ty: TypeId,
    lhs: &Value,
    rhs: &Value,
    lm: Option<Value>,
    rm: Option<Value>,
    c: &mut Comparison,
) {
    let with = |v: &Value, meta: Option<Value>| {
        let mut v = v.clone();
        if let (Some(meta), Some(obj)) = (meta, v.as_object_mut()) {
            obj.insert("metadata".into(), meta);
        }
        v
    };
    compare_at(
        schema,
        ty,
        Some(&with(lhs, lm)),
        Some(&with(rhs, rm)),
        &mut Vec::new(),
        c,
    );
}

/// The members of two maps (either may be absent) in key order, each with its value on either
/// side: one merge over the two sorted maps, without collecting their keys.
fn members_of_both<'a>(
    l: Option<&'a Map<String, Value>>,
    r: Option<&'a Map<String, Value>>,
) -> impl Iterator<Item = (&'a String, Option<&'a Value>, Option<&'a Value>)> {
    let mut l = l.into_iter().flatten().peekable();
    let mut r = r.into_iter().flatten().peekable();
    std::iter::from_fn(move || {
        let order = match (l.peek(), r.peek()) {
            (None, None) => return None,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some((lk, _)), Some((rk, _))) => lk.as_str().cmp(rk.as_str()),
        };
        Some(match order {
            std::cmp::Ordering::Less => l.next().map(|(k, v)| (k, Some(v), None))?,
            std::cmp::Ordering::Greater => r.next().map(|(k, v)| (k, None, Some(v)))?,
            std::cmp::Ordering::Equal => {
                let (k, lv) = l.next()?;
                let (_, rv) = r.next()?;
                (k, Some(lv), Some(rv))
            }
        })
    })
}

/// Whether both sides are there and equal (a comparison finds nothing below them).
fn both_equal(l: Option<&Value>, r: Option<&Value>) -> bool {
    matches!((l, r), (Some(l), Some(r)) if crate::store::value_eq::equal(l, r))
}

fn compare_at(
    schema: &TypeSchema,
    ty: TypeId,
    l: Option<&Value>,
    r: Option<&Value>,
    path: &mut Path,
    c: &mut Comparison,
) {
    // Equal values compare to nothing, however deep: skip the walk.
    if both_equal(l, r) {
        return;
    }
    compare_unequal(schema, ty, l, r, path, c);
}

/// [`compare_at`] of two sides known not to be equal.
fn compare_unequal(
    schema: &TypeSchema,
    ty: TypeId,
    l: Option<&Value>,
    r: Option<&Value>,
    path: &mut Path,
    c: &mut Comparison,
) {
    // Present on one side only: the whole subtree was added (or went). Built in one piece
    // rather than leaf by leaf from the root (a create compares the whole object this way).
    match (l, r) {
        (None, Some(v)) => return c.added.graft(path, below(schema, ty, None, Some(v))),
        (Some(v), None) => return c.removed.graft(path, below(schema, ty, Some(v), None)),
        _ => {}
    }
    let leaf = |path: &Path, c: &mut Comparison| match (l, r) {
        (None, _) => c.added.insert(path),
        (_, None) => c.removed.insert(path),
        (Some(l), Some(r)) if l != r => c.modified.insert(path),
        _ => {}
    };
    let handled_as_leaf = match shape_of_pair(schema, ty, l, r) {
        Shape::Leaf => {
            leaf(path, c);
            true
        }
        Shape::List { elem, kind } => {
            if *kind == ListKind::Atomic || (is_empty_container(l) && is_empty_container(r)) {
                leaf(path, c);
                true
            } else {
                let la = l.and_then(Value::as_array);
                let ra = r.and_then(Value::as_array);
                match (index_list(kind, la), index_list(kind, ra)) {
                    (Ok(li), Ok(ri)) => {
                        compare_items(schema, elem, &li, &ri, path, c);
                        false
                    }
                    _ => {
                        leaf(path, c);
                        true
                    }
                }
            }
        }
        Shape::Map { ty, atomic } => {
            if atomic || (is_empty_container(l) && is_empty_container(r)) {
                leaf(path, c);
                true
            } else {
                let lm = l.and_then(Value::as_object);
                let rm = r.and_then(Value::as_object);
                for (k, lv, rv) in members_of_both(lm, rm) {
                    // Equal members compare to nothing: not even their path is made.
                    if both_equal(lv, rv) {
                        continue;
                    }
                    let (pe, child_ty) = schema.member(ty, k);
                    path.push(pe);
                    compare_unequal(schema, child_ty, lv, rv, path, c);
                    path.pop();
                }
                false
            }
        }
    };
    if !handled_as_leaf {
        if l.is_none() {
            c.added.insert(path);
        } else if r.is_none() {
            c.removed.insert(path);
        }
    }
}

/// The paths below a value present on one side only (`l` or `r` is `None`), relative to it, as
/// [`compare_at`] would record them one by one: what a map's or a granular list's subtree
/// holds; nothing for a leaf, an atomic or empty container, or a list whose elements cannot be
/// identified.
fn below(schema: &TypeSchema, ty: TypeId, l: Option<&Value>, r: Option<&Value>) -> Set {
    let v = l.or(r);
    let one_side = |child_ty: TypeId, value: &Value| {
        if l.is_some() {
            below(schema, child_ty, Some(value), None)
        } else {
            below(schema, child_ty, None, Some(value))
        }
    };
    let out = Set::default();
    match shape_of_pair(schema, ty, l, r) {
        Shape::Leaf => {}
        Shape::List { elem, kind } => {
            if *kind == ListKind::Atomic || is_empty_container(v) {
                return out;
            }
            let Ok(items) = index_list(kind, v.and_then(Value::as_array)) else {
                return out;
            };
            // In the list's order: sorted once at the end.
            let mut children = Vec::with_capacity(items.order.len());
            for pe in &items.order {
                // One element under this key: walked as a value of the element type
                // (duplicates on one side are recorded as the key alone).
                if let Some([one]) = items.values.get(pe).map(Vec::as_slice) {
                    children.push((pe.clone(), one_side(elem, one)));
                }
            }
            return Set::from_parts(items.order, children);
        }
        Shape::Map { ty, atomic } => {
            if atomic || is_empty_container(v) {
                return out;
            }
            // Every member (in key order, allocated once at its size) and a child for each that
            // has something below it (most struct fields are leaves: grown as needed).
            let map = v.and_then(Value::as_object);
            let mut members = Vec::with_capacity(map.map_or(0, Map::len));
            let mut children = Vec::new();
            // Every member is visited, in key order: the type's fields are walked beside them
            // (a comparison visits the few unequal members, each found by a search).
            let mut members_of = schema.members_in_order(ty);
            for (k, value) in map.into_iter().flatten() {
                let (pe, child_ty) = members_of.member(k);
                let child = one_side(child_ty, value);
                if !child.is_empty() {
                    children.push((pe.clone(), child));
                }
                members.push(pe);
            }
            // A map's keys come sorted, and a field's element sorts as its name does.
            return Set::from_sorted_parts(members, children);
        }
    }
    out
}

fn compare_items(
    schema: &TypeSchema,
    elem: TypeId,
    l: &Indexed<'_>,
    r: &Indexed<'_>,
    path: &mut Path,
    c: &mut Comparison,
) {
    let mut all: Vec<&PathElement> = l.order.iter().collect();
    all.extend(r.order.iter().filter(|pe| !l.values.contains_key(*pe)));
    for pe in all {
        let lv = l.values.get(pe).map(Vec::as_slice).unwrap_or_default();
        let rv = r.values.get(pe).map(Vec::as_slice).unwrap_or_default();
        path.push(pe.clone());
        match (lv.len(), rv.len()) {
            (0..=1, 0..=1) => compare_at(
                schema,
                elem,
                lv.first().copied(),
                rv.first().copied(),
                path,
                c,
            ),
            (2.., 2..) => {
                if lv != rv {
                    c.modified.insert(path);
                }
            }
            (2.., _) => {
                if let Some(first) = rv.first() {
                    compare_at(schema, elem, None, Some(first), path, c);
                }
                c.removed.insert(path);
            }
            (_, _) => {
                if let Some(first) = lv.first() {
                    compare_at(schema, elem, Some(first), None, path, c);
                }
                c.added.insert(path);
            }
        }
        path.pop();
    }
}

/// Merges an applied configuration `rhs` into `lhs`: the configuration's leaves win, nothing is
/// removed, granular lists keep the live order with the configuration's new elements placed
/// where it puts them. Fails on duplicate elements in the configuration.
pub fn merge(schema: &TypeSchema, ty: TypeId, lhs: &Value, rhs: &Value) -> Result<Value, String> {
    let mut path = Vec::new();
    Ok(merge_at(schema, ty, Some(lhs), Some(rhs), &mut path)?
        .unwrap_or_else(|| Value::Object(Map::new())))
}

fn merge_at(
    schema: &TypeSchema,
    ty: TypeId,
    l: Option<&Value>,
    r: Option<&Value>,
    path: &mut Path,
) -> Result<Option<Value>, String> {
    let keep_rhs = || Ok(r.or(l).cloned());
    match shape_of_pair(schema, ty, l, r) {
        Shape::Leaf => keep_rhs(),
        Shape::List { elem, kind } => {
            if *kind == ListKind::Atomic || (is_empty_container(l) && is_empty_container(r)) {
                return keep_rhs();
            }
            merge_list(
                schema,
                elem,
                kind,
                l.and_then(Value::as_array),
                r.and_then(Value::as_array),
                path,
            )
        }
        Shape::Map { ty, atomic } => {
            if atomic || (is_empty_container(l) && is_empty_container(r)) {
                return keep_rhs();
            }
            let lm = l.and_then(Value::as_object);
            let rm = r.and_then(Value::as_object);
            let mut out = Map::new();
            for (k, lv, rv) in members_of_both(lm, rm) {
                let (pe, child_ty) = schema.member(ty, k);
                path.push(pe);
                let merged = merge_at(schema, child_ty, lv, rv, path)?;
                path.pop();
                if let Some(v) = merged {
                    out.insert(k.clone(), v);
                }
            }
            Ok((!out.is_empty()).then_some(Value::Object(out)))
        }
    }
}

fn merge_list(
    schema: &TypeSchema,
    elem: TypeId,
    kind: &ListKind,
    l: Option<&Vec<Value>>,
    r: Option<&Vec<Value>>,
    path: &mut Path,
) -> Result<Option<Value>, String> {
    let prefix = || path_string(path);
    // The configuration may not repeat an element; the live object may (each copy is kept).
    let mut rhs_pes = Vec::new();
    let mut observed_rhs: BTreeMap<PathElement, &Value> = BTreeMap::new();
    for (i, item) in r.into_iter().flatten().enumerate() {
        let pe = item_element(kind, item).map_err(|e| format!("{}: element {i}: {e}", prefix()))?;
        if observed_rhs.insert(pe.clone(), item).is_some() {
            return Err(format!("{}: duplicate entries for key {pe}", prefix()));
        }
        rhs_pes.push(pe);
    }
    let mut lhs_pes = Vec::new();
    let mut observed_lhs: BTreeMap<PathElement, Option<&Value>> = BTreeMap::new();
    let lhs_items: Vec<&Value> = l.into_iter().flatten().collect();
    for (i, item) in lhs_items.iter().enumerate() {
        let pe = item_element(kind, item).map_err(|e| format!("{}: element {i}: {e}", prefix()))?;
        match observed_lhs.get_mut(&pe) {
            // A repeated element has no single value to merge with.
            Some(v) => *v = None,
            None => {
                observed_lhs.insert(pe.clone(), Some(item));
            }
        }
        lhs_pes.push(pe);
    }
    let null = Value::Null;
    let lhs_value =
        |pe: &PathElement| -> Option<&Value> { observed_lhs.get(pe).map(|v| v.unwrap_or(&null)) };
    let mut shared: std::collections::VecDeque<&PathElement> = rhs_pes
        .iter()
        .filter(|pe| observed_lhs.contains_key(*pe))
        .collect();
    let mut next_shared = shared.pop_front();
    let mut merged_rhs: BTreeSet<&PathElement> = BTreeSet::new();
    let mut out = Vec::new();
    let (l_len, r_len) = (lhs_pes.len(), rhs_pes.len());
    let (mut li, mut ri) = (0, 0);
    let merge_item = |pe: &PathElement,
                      lv: Option<&Value>,
                      rv: Option<&Value>,
                      out: &mut Vec<Value>,
                      path: &mut Path|
     -> Result<(), String> {
        path.push(pe.clone());
        let merged = merge_at(schema, elem, lv, rv, path)?;
        path.pop();
        if let Some(v) = merged {
            out.push(v);
        }
        Ok(())
    };
    while li < l_len || ri < r_len {
        if li < l_len && ri < r_len {
            let pe = &lhs_pes[li];
            if *pe == rhs_pes[ri] {
                merged_rhs.insert(pe);
                merge_item(
                    pe,
                    lhs_value(pe),
                    observed_rhs.get(pe).copied(),
                    &mut out,
                    path,
                )?;
                li += 1;
                ri += 1;
                next_shared = shared.pop_front();
                continue;
            }
            if observed_rhs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < l_len {
            let pe = &lhs_pes[li];
            if !observed_rhs.contains_key(pe) {
                merge_item(pe, Some(lhs_items[li]), None, &mut out, path)?;
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
            }
        }
        if ri < r_len {
            let pe = &rhs_pes[ri];
            merged_rhs.insert(pe);
            merge_item(
                pe,
                lhs_value(pe),
                observed_rhs.get(pe).copied(),
                &mut out,
                path,
            )?;
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.pop_front();
            }
        }
    }
    Ok((!out.is_empty()).then_some(Value::Array(out)))
}

/// Removes the fields of `set` (list elements and map entries with everything below them)
/// from `v`. A container left empty by the removal is dropped.
pub fn remove_items(schema: &TypeSchema, ty: TypeId, v: &Value, set: &Set) -> Value {
    remove_at(schema, ty, v, set).unwrap_or_else(|| Value::Object(Map::new()))
}

fn remove_at(schema: &TypeSchema, ty: TypeId, v: &Value, set: &Set) -> Option<Value> {
    match shape_of(schema, ty, Some(v)) {
        Shape::Leaf => Some(v.clone()),
        Shape::List { elem, kind } => {
            let items = v.as_array()?;
            if items.is_empty() || *kind == ListKind::Atomic {
                return Some(v.clone());
            }
            let mut kept = Vec::new();
            for item in items {
                let Ok(pe) = item_element(kind, item) else {
                    kept.push(item.clone());
                    continue;
                };
                if set.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                match set.with_prefix(&pe) {
                    Some(sub) => {
                        if let Some(item) = remove_at(schema, elem, item, sub) {
                            kept.push(item);
                        }
                    }
                    None => kept.push(item.clone()),
                }
            }
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        Shape::Map { ty, atomic } => {
            let m = v.as_object()?;
            if m.is_empty() || atomic {
                return Some(v.clone());
            }
            let mut out = Map::new();
            for (k, child) in m {
                let (pe, child_ty) = schema.member(ty, k);
                if set.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                match set.with_prefix(&pe) {
                    Some(sub) => {
                        if let Some(c) = remove_at(schema, child_ty, child, sub) {
                            out.insert(k.clone(), c);
                        }
                    }
                    None => {
                        out.insert(k.clone(), child.clone());
                    }
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
    }
}

/// `set` with every named struct field that has something below it made a member too (so that
/// removing a set of fields can remove such a field as a whole).
pub fn ensure_named_fields_are_members(schema: &TypeSchema, ty: TypeId, set: &Set) -> Set {
    let mut out = Set::new();
    for pe in set.members() {
        out.insert_member(pe.clone());
    }
    for (pe, child) in set.children() {
        let child_ty = match pe {
            PathElement::Field(name) => {
                if schema.is_struct_field(ty, name) {
                    out.insert_member(pe.clone());
                }
                schema.field_type(ty, name)
            }
            PathElement::Key(_) => match schema.atom(ty) {
                Atom::List { elem, .. } => *elem,
                _ => DEDUCED,
            },
            _ => DEDUCED,
        };
        out.set_child(
            pe.clone(),
            ensure_named_fields_are_members(schema, child_ty, child),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::schema::schema_for;
    use crate::resource::builtin_resources;
    use serde_json::json;

    fn schema(plural: &str) -> std::sync::Arc<TypeSchema> {
        let info = builtin_resources()
            .into_iter()
            .find(|r| r.plural == plural)
            .unwrap();
        schema_for(&info)
    }

    /// A subtree present on one side only is recorded whole: containers as members with their
    /// paths below, leaves, list elements by key (duplicates as the key alone), atomic and
    /// empty containers and unidentifiable lists as one member.
    #[test]
    fn a_one_sided_subtree_is_recorded_whole_in_either_direction() {
        let s = schema("pods");
        let empty = json!({});
        let pod = json!({
            "metadata": {"labels": {"app": "x"}, "finalizers": ["a.io/f"], "annotations": {}},
            "spec": {
                "containers": [
                    {"name": "app", "image": "i", "args": ["a", "b"], "resources": {},
                     "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                    {"name": "dup"}, {"name": "dup"}
                ],
                "volumes": [{"name": "v", "emptyDir": {}}],
                "nodeSelector": null
            }
        });
        let added = compare(&s, s.root, &empty, &pod);
        let removed = compare(&s, s.root, &pod, &empty);
        assert!(added.removed.is_empty() && added.modified.is_empty());
        assert!(removed.added.is_empty() && removed.modified.is_empty());
        assert_eq!(added.added, removed.removed);
        let container = json!({
            ".": {}, "f:args": {}, "f:image": {}, "f:name": {}, "f:resources": {},
            "f:ports": {".": {}, "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                ".": {}, "f:containerPort": {}, "f:protocol": {}
            }}
        });
        assert_eq!(
            added.added.to_fields_v1(),
            json!({
                "f:metadata": {
                    ".": {}, "f:annotations": {},
                    "f:finalizers": {".": {}, "v:\"a.io/f\"": {}},
                    "f:labels": {".": {}, "f:app": {}}
                },
                "f:spec": {
                    ".": {},
                    "f:containers": {
                        ".": {}, "k:{\"name\":\"app\"}": container, "k:{\"name\":\"dup\"}": {}
                    },
                    "f:nodeSelector": {},
                    "f:volumes": {".": {}, "k:{\"name\":\"v\"}": {".": {}, "f:emptyDir": {}, "f:name": {}}}
                }
            })
        );
        // Grafted below a path that already has members, the subtree joins them.
        let mut live = pod.clone();
        live["spec"]["containers"][0]["env"] = json!([{"name": "E", "value": "1"}]);
        let c = compare(&s, s.root, &pod, &live);
        assert_eq!(
            c.added.to_fields_v1(),
            json!({"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {"f:env": {
                ".": {}, "k:{\"name\":\"E\"}": {".": {}, "f:name": {}, "f:value": {}}
            }}}}})
        );
    }

    #[test]
    fn field_sets_mark_map_keys_list_elements_and_empty_structs() {
        let s = schema("pods");
        let pod = json!({
            "metadata": {"labels": {"app": "x"}, "finalizers": ["a.io/f"]},
            "spec": {
                "containers": [{"name": "app", "image": "i", "args": ["a", "b"], "resources": {}}],
                "volumes": [{"name": "v", "emptyDir": {}}]
            }
        });
        let set = to_field_set(&s, s.root, &pod);
        assert_eq!(
            set.to_fields_v1(),
            json!({
                "f:metadata": {"f:finalizers": {"v:\"a.io/f\"": {}}, "f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:containers": {"k:{\"name\":\"app\"}": {
                        ".": {}, "f:args": {}, "f:image": {}, "f:name": {}, "f:resources": {}
                    }},
                    "f:volumes": {"k:{\"name\":\"v\"}": {".": {}, "f:emptyDir": {}, "f:name": {}}}
                }
            })
        );
    }

    #[test]
    fn comparison_reports_added_containers_with_their_leaves() {
        let s = schema("configmaps");
        let before = json!({"data": {"a": "1", "b": "2"}});
        let after = json!({"data": {"a": "9", "c": "3"}, "metadata": {"labels": {"x": "y"}}});
        let c = compare(&s, s.root, &before, &after);
        assert_eq!(c.modified.to_fields_v1(), json!({"f:data": {"f:a": {}}}));
        assert_eq!(c.removed.to_fields_v1(), json!({"f:data": {"f:b": {}}}));
        assert_eq!(
            c.added.to_fields_v1(),
            json!({"f:data": {"f:c": {}}, "f:metadata": {".": {}, "f:labels": {".": {}, "f:x": {}}}})
        );
        assert!(compare(&s, s.root, &after, &after).is_same());
    }

    #[test]
    fn merge_keeps_live_fields_and_merges_keyed_lists_by_key() {
        let s = schema("pods");
        let live = json!({"spec": {"containers": [
            {"name": "a", "image": "a:1", "args": ["x"]},
            {"name": "b", "image": "b:1"}
        ]}});
        let config = json!({"spec": {"containers": [
            {"name": "b", "image": "b:2"},
            {"name": "c", "image": "c:1"}
        ]}});
        let merged = merge(&s, s.root, &live, &config).unwrap();
        assert_eq!(
            merged,
            json!({"spec": {"containers": [
                {"name": "a", "image": "a:1", "args": ["x"]},
                {"name": "b", "image": "b:2"},
                {"name": "c", "image": "c:1"}
            ]}})
        );
        // An atomic list is replaced whole.
        let config = json!({"spec": {"containers": [{"name": "a", "args": ["y"]}]}});
        let merged = merge(&s, s.root, &live, &config).unwrap();
        assert_eq!(merged["spec"]["containers"][0]["args"], json!(["y"]));
        assert_eq!(merged["spec"]["containers"][0]["image"], "a:1");
        // Duplicates in a configuration are refused.
        let dup = json!({"spec": {"containers": [{"name": "a"}, {"name": "a"}]}});
        let err = merge(&s, s.root, &live, &dup).unwrap_err();
        assert_eq!(
            err,
            ".spec.containers: duplicate entries for key [name=\"a\"]"
        );
    }

    #[test]
    fn merging_a_configuration_into_itself_changes_nothing() {
        let s = schema("pods");
        let v = json!({"metadata": {"labels": {"a": "b"}, "finalizers": ["x", "y"]},
            "spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}});
        assert_eq!(merge(&s, s.root, &v, &v).unwrap(), v);
        let merged = merge(&s, s.root, &json!({}), &v).unwrap();
        assert_eq!(merged, v);
    }

    #[test]
    fn remove_items_drops_elements_entries_and_emptied_containers() {
        let s = schema("pods");
        let v = json!({"metadata": {"labels": {"a": "1"}, "finalizers": ["x", "y"]},
            "spec": {"containers": [{"name": "a", "image": "i"}, {"name": "b"}]}});
        let mut set = Set::new();
        set.insert(&[
            PathElement::Field("metadata".into()),
            PathElement::Field("labels".into()),
            PathElement::Field("a".into()),
        ]);
        set.insert(&[
            PathElement::Field("metadata".into()),
            PathElement::Field("finalizers".into()),
            PathElement::Value(json!("x")),
        ]);
        set.insert(&[
            PathElement::Field("spec".into()),
            PathElement::Field("containers".into()),
            PathElement::Key(vec![("name".into(), json!("b"))]),
        ]);
        let out = remove_items(&s, s.root, &v, &set);
        assert_eq!(
            out,
            json!({"metadata": {"finalizers": ["y"]}, "spec": {"containers": [{"name": "a", "image": "i"}]}})
        );
    }

    #[test]
    fn keyed_lists_use_key_defaults_and_validation_names_bad_elements() {
        let s = schema("services");
        let v = json!({"spec": {"ports": [{"port": 80}, {"port": 80, "protocol": "TCP"}]}});
        let errors = validate(&s, s.root, &v);
        assert_eq!(
            errors,
            vec![".spec.ports: duplicate entries for key [port=80,protocol=\"TCP\"]".to_string()]
        );
        let v = json!({"spec": {"ports": [{"name": "x"}]}});
        assert_eq!(
            validate(&s, s.root, &v).len(),
            0,
            "protocol defaults to TCP"
        );
        let pods = schema("pods");
        let v = json!({"spec": {"containers": [{"image": "x"}]}});
        assert_eq!(
            validate(&pods, pods.root, &v),
            vec![".spec.containers: element 0: associative list with keys has an element that omits all key fields [\"name\"] (and doesn't have default values for any key fields)".to_string()]
        );
    }
}
