//! Whether encoding would change a value, found without changing it.
//!
//! The encoder writes through `&mut` access, and a map or list of a copy-on-write `Value`
//! shared with another version of the object (the clone the field manager encodes, a body
//! parsed against the stored object) is copied, keys and all, the moment it is written
//! through, even when nothing in it changes. Most of an object a client sends already reads as
//! Go writes it, so the encoder first asks these functions, which walk without writing, and
//! leaves alone what would not change. Each mirrors the encoder's function of the same part
//! (`encode_struct_except`, `encode_present`, `encode_value`, `encode_element`): a value they
//! call unchanged is one the encoder would give back equal (the encoder's tests run through
//! them, and `a_precheck_changes_no_encoding` compares the two on every kind's objects).

use serde_json::{Map, Value};

use crate::rules::known_maps::{self, Check};

use super::{
    before, is_empty, is_scalar, leaves, named, shapes, writes_when_absent, zero_of, Field, Omit,
    Struct, Ty, Zero,
};

#[cfg(test)]
thread_local! {
    /// Set by tests that compare the encoder with and without its prechecks.
    pub(super) static WITHOUT_PRECHECKS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the encoder asks these functions before writing (always, outside the tests that
/// compare it with the encoder that does not).
#[inline]
pub(super) fn prechecked() -> bool {
    #[cfg(test)]
    if WITHOUT_PRECHECKS.with(std::cell::Cell::get) {
        return false;
    }
    true
}

/// Whether encoding the struct `shape`'s `object` (leaving the members `encoded` selects as
/// they are) would change it: a field Go writes is missing, a member would be dropped, or a
/// member's value would change.
pub(super) fn struct_changes(
    shape: &Struct,
    object: &Map<String, Value>,
    encoded: &impl Fn(&str) -> bool,
) -> bool {
    let mut fields = shape.fields.iter().peekable();
    for (key, value) in object {
        while let Some(field) = fields.next_if(|f| before(f.json, key)) {
            if writes_when_absent(field) {
                return true;
            }
        }
        if let Some(field) = fields.next_if(|f| named(f.json, key)) {
            if !encoded(key) && present_changes(field, value) {
                return true;
            }
        }
    }
    fields.any(writes_when_absent)
}

/// Whether encoding a field the object holds would change or drop it.
fn present_changes(field: &Field, value: &Value) -> bool {
    if value.is_null() {
        return match (zero_of(field.ty), field.omit) {
            (_, Omit::Zero) => true,
            (Zero::Struct(_), _) => true,
            (Zero::Value(_), Omit::Empty) if is_scalar(field.ty) => true,
            // A zero written as `null` (a time, a raw extension) leaves the `null` as it is.
            (Zero::Value(zero), _) => !zero.is_null(),
            (Zero::Nil, Omit::Empty) => true,
            (Zero::Nil, Omit::Never) => false,
            (Zero::Keep, _) => false,
        };
    }
    if field.omit != Omit::Never && is_empty(field.ty, value) {
        return true;
    }
    value_changes(field.ty, value)
}

/// Whether encoding a present, non-`null` value of type `ty` would change it.
fn value_changes(ty: Ty, value: &Value) -> bool {
    match (ty, value) {
        (Ty::Struct(index), Value::Object(map)) => {
            !known_maps::passes(Check::GoStruct(index), map, |map| {
                !struct_changes(&shapes::STRUCTS[usize::from(index)], map, &|_| false)
            })
        }
        (Ty::Ptr(inner), value) if !value.is_null() => value_changes(*inner, value),
        (Ty::Slice(inner), Value::Array(items)) => {
            items.iter().any(|item| element_changes(*inner, item))
        }
        (Ty::Map(inner), Value::Object(map)) => {
            map.values().any(|item| element_changes(*inner, item))
        }
        (Ty::Quantity, value) => leaves::quantity_changes(value),
        (Ty::Time, value) => leaves::time_changes(value, false),
        (Ty::MicroTime, value) => leaves::time_changes(value, true),
        _ => false,
    }
}

/// Whether encoding an element of a slice or a value of a map would change it (a `null` struct
/// element becomes the zero struct).
pub(super) fn element_changes(ty: Ty, value: &Value) -> bool {
    matches!((ty, value), (Ty::Struct(_), Value::Null)) || value_changes(ty, value)
}
