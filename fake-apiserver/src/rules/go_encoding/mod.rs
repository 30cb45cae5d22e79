//! How a built-in object reads once the real server has encoded it: Go's `encoding/json` writing
//! the versioned struct (`k8s.io/api`).
//!
//! A real server never stores or returns the JSON a client sent; it decodes it into the Go
//! struct and encodes that struct. Two rules of Go's encoder show in every answer:
//! - a field without `omitempty` is always written, with its zero value when it was never set
//!   (`reportingComponent: ""` on a core Event, `rules: null` on a ClusterRole without rules,
//!   `replicas: 0` in a new StatefulSet's status);
//! - a struct-valued field is always written, `omitempty` or not (`status: {}` on a new
//!   Deployment, `lastProbeTime: null` in a pod condition, a Node's zeroed `nodeInfo`).
//!
//! And a field with `omitempty` is dropped when empty (`false`, `0`, `""`, `[]`, `{}` for a map,
//! `null`). Quantities and timestamps are written by their own encoders ([`leaves`]: `1000m`
//! comes back `1`, a time in another zone comes back in UTC).
//!
//! [`encode`] applies both to an object of a served built-in kind, from the struct tables in
//! [`shapes`] (generated from the Go sources by `fake-apiserver/tools/go_shapes.py`). Fields the
//! tables do not know are left as they are; custom resources are not touched (the real server
//! stores them as sent, after pruning).
//!
//! [`encode_stored`], the store's encoder, first applies the few conversions to the internal
//! type that change a stored core object ([`conversion`]: a Node's `podCIDR` and `podCIDRs`).

#[rustfmt::skip]
pub(crate) mod base64;
mod shapes;

mod changes;
mod conversion;
mod leaves;
pub(crate) mod semantic;

use serde_json::{json, short_bytes, Map, Value};

/// A Go field's `omitempty` / `omitzero` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Omit {
    /// No option: always written.
    Never,
    /// `omitempty`: dropped when empty (never for a struct value).
    Empty,
    /// `omitzero`: dropped when the zero value.
    Zero,
}

/// A Go field's type, as far as its encoding goes.
#[derive(Debug, Clone, Copy)]
#[allow(
    dead_code,
    reason = "the generator emits every type; today's kinds reach no float or Duration"
)]
pub(crate) enum Ty {
    /// `string` (and named string types).
    Str,
    /// Any integer type.
    Int,
    /// `float32` / `float64`.
    Float,
    /// `bool`.
    Bool,
    /// `[]byte` (a base64 string).
    Bytes,
    /// `metav1.Time`: RFC 3339 in UTC, whole seconds; the zero time is written as `null`.
    Time,
    /// `metav1.MicroTime`: RFC 3339 in UTC with six fractional digits; zero is `null`.
    MicroTime,
    /// `metav1.Duration`: the zero duration is `"0s"`.
    Duration,
    /// `resource.Quantity`: the zero quantity is `"0"`.
    Quantity,
    /// `intstr.IntOrString`: the zero value is `0`.
    IntOrString,
    /// `runtime.RawExtension`: nothing is `null`.
    Raw,
    /// Free-form JSON (a CRD's schema, `FieldsV1`, `interface{}`): kept as written.
    Opaque,
    /// A pointer.
    Ptr(&'static Ty),
    /// A slice.
    Slice(&'static Ty),
    /// A map with string keys.
    Map(&'static Ty),
    /// A struct value, by index into the generated table.
    Struct(u16),
}

/// One field of a Go struct.
#[derive(Debug)]
pub(crate) struct Field {
    /// The JSON name.
    pub json: &'static str,
    /// Its `omitempty` / `omitzero` option.
    pub omit: Omit,
    /// Its type.
    pub ty: Ty,
    /// Its strategic merge patch tags.
    pub patch: PatchTag,
}

/// A field's strategic merge patch tags (`patchStrategy`, `patchMergeKey`), as
/// `PatchMetaFromStruct` reads them off the Go type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchTag {
    /// No `patchStrategy`: a list is replaced, a map merged key by key.
    None,
    /// `patchStrategy:"merge"` (alone or with `retainKeys`), with its `patchMergeKey` for a list
    /// of objects.
    Merge(Option<&'static str>),
    /// `patchStrategy:"replace"`.
    Replace,
}

/// The index of a served built-in kind's struct in the generated table.
pub(crate) fn kind_struct(group: &str, kind: &str) -> Option<u16> {
    shapes::KINDS
        .iter()
        // The kind first, then the group (empty for most).
        .find(|(g, k, _, _)| *k == kind && crate::resource::same_group(g, group))
        .map(|(_, _, _, index)| *index)
}

/// The index of `metav1.ObjectMeta` in the generated table.
pub(crate) fn object_meta_struct() -> Option<u16> {
    static INDEX: std::sync::OnceLock<Option<u16>> = std::sync::OnceLock::new();
    *INDEX.get_or_init(|| {
        shapes::STRUCTS
            .iter()
            .position(|s| s.name == "meta/v1.ObjectMeta")
            .and_then(|i| u16::try_from(i).ok())
    })
}

/// The field `json` of the struct at `index`: its patch tags and type.
pub(crate) fn struct_field(index: u16, json: &str) -> Option<(PatchTag, Ty)> {
    let fields = shapes::STRUCTS.get(usize::from(index))?.fields;
    fields
        .binary_search_by(|f| f.json.cmp(json))
        .ok()
        .map(|i| (fields[i].patch, fields[i].ty))
}

/// A Go struct: its package-qualified name and its JSON fields (embedded structs' included).
#[derive(Debug)]
pub(crate) struct Struct {
    /// E.g. `core/v1.Pod`.
    pub name: &'static str,
    /// Sorted by JSON name.
    pub fields: &'static [Field],
}

/// The struct of a built-in kind, if the tables have it.
fn root_of(group: &str, kind: &str) -> Option<&'static Struct> {
    kind_struct(group, kind).map(|index| &shapes::STRUCTS[usize::from(index)])
}

/// An object of the built-in kind `group`/`kind` as the Go type sees it, in place: what
/// `runtime.DefaultUnstructuredConverter.ToUnstructured` gives the field manager, and what
/// [`encode_stored`] stores (`omitempty` fields that are empty gone, other fields written with
/// their zero values). Objects of kinds the tables do not have are left alone.
pub fn encode_kind(group: &str, kind: &str, object: &mut Value) {
    encode_kind_except(group, kind, object, |_| false);
}

/// [`encode_kind`], leaving the top-level members `encoded` selects as they are: the caller
/// knows them encoded already (equal to a stored object's, which is: encoding is idempotent).
pub fn encode_kind_except(
    group: &str,
    kind: &str,
    object: &mut Value,
    encoded: impl Fn(&str) -> bool,
) {
    let Some(root) = root_of(group, kind) else {
        return;
    };
    convert_decoded(group, kind, object);
    if let Value::Object(map) = object {
        encode_struct_except(root, map, encoded);
    }
}

/// The zero value of the built-in kind `group`/`kind` as the Go type sees it (a new, empty
/// object: what the field manager compares a created object with); `None` for other kinds.
pub fn zero_object(group: &str, kind: &str) -> Option<Value> {
    let root = root_of(group, kind)?;
    let mut map = Map::new();
    encode_struct(root, &mut map);
    Some(Value::Object(map))
}

/// The kind and struct of the built-in resource stored under `resource` (`group/plural`).
fn resource_root(resource: &str) -> Option<(&'static str, &'static str, &'static Struct)> {
    let (group, plural) = resource.split_once('/')?;
    shapes::KINDS
        .iter()
        .find(|(g, _, p, _)| *p == plural && crate::resource::same_group(g, group))
        .map(|(g, k, _, index)| (*g, *k, &shapes::STRUCTS[usize::from(*index)]))
}

/// Encodes an object of the resource stored under `resource` (`group/plural`) as the real
/// server would write it (see the module documentation); objects of other resources are left
/// alone.
pub fn encode_stored(resource: &str, object: &mut Value) {
    let Some((group, kind, root)) = resource_root(resource) else {
        return;
    };
    convert_decoded(group, kind, object);
    if let Value::Object(map) = object {
        encode_struct(root, map);
    }
}

/// Reads the `[]byte` fields (base64 text) of an object of the built-in kind `group`/`kind` as
/// Go's JSON decoder does ([`base64::decode_std`]): a value wrapped over lines (a certificate in
/// a YAML block) or with stray bits after its last symbol decodes, and is written back in the
/// canonical encoding; one that does not decode is the decoder's error (the first in key order).
/// Whether anything changed.
pub fn canonical_base64(group: &str, kind: &str, object: &mut Value) -> Result<bool, String> {
    fn walk(ty: Ty, value: &mut Value) -> Result<bool, String> {
        let mut changed = false;
        match (ty, value) {
            (Ty::Bytes, Value::String(s)) => {
                if let Some(canonical) = base64::canonical(s)? {
                    *s = canonical;
                    changed = true;
                }
            }
            (Ty::Ptr(inner), value) => changed = walk(*inner, value)?,
            (Ty::Slice(inner), Value::Array(items)) => {
                for item in items {
                    changed |= walk(*inner, item)?;
                }
            }
            (Ty::Map(inner), Value::Object(map)) => {
                for item in map.values_mut() {
                    changed |= walk(*inner, item)?;
                }
            }
            (Ty::Struct(index), Value::Object(map)) => {
                let shape = &shapes::STRUCTS[usize::from(index)];
                for (key, item) in map.iter_mut() {
                    if let Ok(i) = shape.fields.binary_search_by(|f| f.json.cmp(key.as_str())) {
                        changed |= walk(shape.fields[i].ty, item)?;
                    }
                }
            }
            _ => {}
        }
        Ok(changed)
    }
    match kind_struct(group, kind) {
        Some(index) => walk(Ty::Struct(index), object),
        None => Ok(false),
    }
}

/// The conversions a decoded built-in object goes through on its way to the internal type and
/// back ([`conversion`]): what validation and the stored object see. Other kinds are left alone.
pub fn convert_decoded(group: &str, kind: &str, object: &mut Value) {
    conversion::round_trip(group, kind, object);
}

/// Encodes an object of the built-in kind `group`/`kind` (see the module documentation); other
/// kinds are left alone. (The server goes through [`encode_stored`]; tests name the kind.)
#[cfg(test)]
fn encode(group: &str, kind: &str, object: &mut Value) {
    if let (Some(root), Value::Object(map)) = (root_of(group, kind), object) {
        encode_struct(root, map);
    }
}

/// Encodes one struct's object in a single pass: its keys and the struct's fields are both sorted
/// by name (a `serde_json::Map` iterates in key order), so each key meets its field in order; the
/// few changes to the key set (drops, zero values) are made after the pass.
fn encode_struct(shape: &Struct, object: &mut Map<String, Value>) {
    encode_struct_except(shape, object, |_| false);
}

/// [`encode_struct`], keeping the members `encoded` selects as they are (present, encoded).
#[inline]
fn encode_struct_except(
    shape: &Struct,
    object: &mut Map<String, Value>,
    encoded: impl Fn(&str) -> bool,
) {
    // A map that already reads as Go writes it is left untouched: writing through it would
    // copy it (and its keys) wherever it is shared with another version of the object.
    if changes::prechecked() && !changes::struct_changes(shape, object, &encoded) {
        return;
    }
    let mut fields = shape.fields.iter().peekable();
    let mut dropped: Vec<&'static str> = Vec::new();
    let mut missing: Vec<&'static Field> = Vec::new();
    for (key, value) in object.iter_mut() {
        while let Some(field) = fields.next_if(|f| before(f.json, key)) {
            if writes_when_absent(field) {
                missing.push(field);
            }
        }
        if let Some(field) = fields.next_if(|f| named(f.json, key)) {
            if !encoded(key) && !encode_present(field, value) {
                dropped.push(field.json);
            }
        }
    }
    missing.extend(fields.filter(|f| writes_when_absent(f)));
    for json in dropped {
        object.remove(json);
    }
    for field in missing {
        if let Some(zero) = absent(field) {
            object.insert(field.json.to_string(), zero);
        }
    }
}

/// Whether the field name `a` sorts before the key `b`. Names mostly differ in their first
/// byte, which decides; the rest are compared without the call into `memcmp` a string
/// comparison makes ([`serde_json::short_bytes::cmp_bytes`]).
#[inline]
fn before(a: &str, b: &str) -> bool {
    match (a.as_bytes().first(), b.as_bytes().first()) {
        (Some(x), Some(y)) if x != y => x < y,
        _ => short_bytes::cmp_bytes(a.as_bytes(), b.as_bytes()).is_lt(),
    }
}

/// Whether the field name `a` is the key `b` (without a `memcmp` call, as [`before`]).
#[inline]
fn named(a: &str, b: &str) -> bool {
    short_bytes::eq_bytes(a.as_bytes(), b.as_bytes())
}

/// Encodes a field the object holds; false when Go would leave it out.
fn encode_present(field: &Field, value: &mut Value) -> bool {
    if value.is_null() {
        // Decoding `null` leaves the Go zero value.
        return match (zero_of(field.ty), field.omit) {
            (_, Omit::Zero) => false,
            (Zero::Struct(shape), _) => {
                let mut map = Map::new();
                encode_struct(shape, &mut map);
                *value = Value::Object(map);
                true
            }
            (Zero::Value(_), Omit::Empty) if is_scalar(field.ty) => false,
            (Zero::Value(zero), _) => {
                *value = zero;
                true
            }
            (Zero::Nil, Omit::Empty) => false,
            (Zero::Nil, Omit::Never) => true,
            (Zero::Keep, _) => true,
        };
    }
    if field.omit != Omit::Never && is_empty(field.ty, value) {
        return false;
    }
    encode_value(field.ty, value);
    true
}

/// Encodes the value of a field, element or pointee that is present and not `null`.
fn encode_value(ty: Ty, value: &mut Value) {
    match (ty, value) {
        (Ty::Struct(index), Value::Object(map)) => {
            encode_struct(&shapes::STRUCTS[usize::from(index)], map)
        }
        (Ty::Ptr(inner), value) if !value.is_null() => encode_value(*inner, value),
        // Written through only when an element changes (see `changes`).
        (Ty::Slice(inner), Value::Array(items))
            if !changes::prechecked()
                || items.iter().any(|i| changes::element_changes(*inner, i)) =>
        {
            for item in items {
                encode_element(*inner, item);
            }
        }
        (Ty::Map(inner), Value::Object(map))
            if !changes::prechecked()
                || map.values().any(|i| changes::element_changes(*inner, i)) =>
        {
            for item in map.values_mut() {
                encode_element(*inner, item);
            }
        }
        (Ty::Quantity, value) => leaves::quantity(value),
        (Ty::Time, value) => leaves::time(value, false),
        (Ty::MicroTime, value) => leaves::time(value, true),
        _ => {}
    }
}

/// Encodes an element of a slice or a value of a map: a `null` struct element decodes to the
/// zero struct.
fn encode_element(ty: Ty, value: &mut Value) {
    if let (Ty::Struct(index), Value::Null) = (ty, &*value) {
        let mut map = Map::new();
        encode_struct(&shapes::STRUCTS[usize::from(index)], &mut map);
        *value = Value::Object(map);
        return;
    }
    encode_value(ty, value);
}

/// What an absent (or `null`) field decodes to.
enum Zero {
    /// A struct: written as `{}` with its own always-written fields.
    Struct(&'static Struct),
    /// A value written as this JSON.
    Value(Value),
    /// A nil slice, map or pointer: `null`.
    Nil,
    /// Free-form: nothing to say.
    Keep,
}

fn zero_of(ty: Ty) -> Zero {
    match ty {
        Ty::Str => Zero::Value(json!("")),
        Ty::Int | Ty::IntOrString => Zero::Value(json!(0)),
        Ty::Float => Zero::Value(json!(0.0)),
        Ty::Bool => Zero::Value(json!(false)),
        Ty::Duration => Zero::Value(json!("0s")),
        Ty::Quantity => Zero::Value(json!("0")),
        Ty::Time | Ty::MicroTime | Ty::Raw => Zero::Value(Value::Null),
        Ty::Bytes | Ty::Ptr(_) | Ty::Slice(_) | Ty::Map(_) => Zero::Nil,
        Ty::Opaque => Zero::Keep,
        Ty::Struct(index) => Zero::Struct(&shapes::STRUCTS[usize::from(index)]),
    }
}

/// Types `omitempty` applies to (structs, and the types with their own encoders, are never
/// empty).
fn is_scalar(ty: Ty) -> bool {
    matches!(ty, Ty::Str | Ty::Int | Ty::Float | Ty::Bool)
}

/// Whether Go writes a field the object does not hold (see [`absent`]).
fn writes_when_absent(field: &Field) -> bool {
    match field.omit {
        Omit::Zero => false,
        Omit::Never => !matches!(field.ty, Ty::Opaque),
        Omit::Empty => {
            !is_scalar(field.ty)
                && !matches!(
                    field.ty,
                    Ty::Bytes | Ty::Ptr(_) | Ty::Slice(_) | Ty::Map(_) | Ty::Opaque
                )
        }
    }
}

/// The value of a field never set, if Go writes one.
fn absent(field: &Field) -> Option<Value> {
    if !writes_when_absent(field) {
        return None;
    }
    match zero_of(field.ty) {
        Zero::Struct(shape) => {
            let mut map = Map::new();
            encode_struct(shape, &mut map);
            Some(Value::Object(map))
        }
        Zero::Value(value) => Some(value),
        Zero::Nil => Some(Value::Null),
        Zero::Keep => None,
    }
}

/// Whether `omitempty` drops this (non-null) value.
fn is_empty(ty: Ty, value: &Value) -> bool {
    match (ty, value) {
        (Ty::Str | Ty::Bytes, Value::String(s)) => s.is_empty(),
        (Ty::Int | Ty::Float, Value::Number(n)) => n.as_f64() == Some(0.0),
        (Ty::Bool, Value::Bool(b)) => !b,
        (Ty::Slice(_), Value::Array(items)) => items.is_empty(),
        (Ty::Map(_), Value::Object(map)) => map.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
