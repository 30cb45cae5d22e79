//! `apiequality.Semantic.DeepEqual` (and the plain `reflect.DeepEqual` a few strategies use) over
//! decoded JSON: whether two values of a built-in Go type are the same value to a strategy (what
//! decides a generation bump).
//!
//! As the Go type reads them: an absent or `null` field is its zero value; a nil pointer differs
//! from a pointer to a zero struct; keys the type does not have are not compared (the decode
//! drops them). [`Equality::Semantic`] also holds a nil and an empty slice or map equal (the
//! forked `reflect.DeepEqual` equates them), compares quantities by value (`1` and `1000m` are
//! equal) and times as instants; [`Equality::Reflect`] holds `[]` apart from a nil list and
//! compares quantities and times as written.

use serde_json::Value;

use super::{shapes, Ty};
use crate::rules::Quantity;

/// Which deep equality a strategy uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Equality {
    /// `apiequality.Semantic.DeepEqual`.
    Semantic,
    /// `reflect.DeepEqual`.
    Reflect,
}

/// Whether `a` and `b` (absent: `None`) are equal values of type `ty` to `Semantic.DeepEqual`.
#[cfg(test)]
pub(crate) fn equal(ty: Ty, a: Option<&Value>, b: Option<&Value>) -> bool {
    equal_as(Equality::Semantic, ty, a, b)
}

/// Whether the top-level fields of two objects of the built-in kind `group`/`kind` are equal
/// (`equality`), but for those `skip` names; `None` when the tables do not have the kind.
pub(crate) fn fields_equal(
    equality: Equality,
    group: &str,
    kind: &str,
    a: &Value,
    b: &Value,
    skip: impl Fn(&str) -> bool,
) -> Option<bool> {
    let root = super::root_of(group, kind)?;
    Some(
        root.fields
            .iter()
            .filter(|f| !skip(f.json))
            .all(|f| equal_as(equality, f.ty, a.get(f.json), b.get(f.json))),
    )
}

/// Whether the values at `path` (field names from the root of the built-in kind
/// `group`/`kind`, through pointers; `[]` steps into a slice's or map's element) are equal to
/// `Semantic.DeepEqual`, as `ValidateImmutableField` and the update rules compare them; `None`
/// when the tables do not have that path.
pub(crate) fn equal_at(
    group: &str,
    kind: &str,
    path: &[&str],
    a: Option<&Value>,
    b: Option<&Value>,
) -> Option<bool> {
    let mut index = super::kind_struct(group, kind)?;
    let mut ty = Ty::Struct(index);
    for name in path {
        ty = match (*name, ty) {
            ("[]", Ty::Slice(inner) | Ty::Map(inner)) => *inner,
            ("[]", _) => return None,
            (name, _) => super::struct_field(index, name)?.1,
        };
        while let Ty::Ptr(inner) = ty {
            ty = *inner;
        }
        if let Ty::Struct(next) = ty {
            index = next;
        }
    }
    Some(equal_as(Equality::Semantic, ty, a, b))
}

/// Whether `a` and `b` (absent: `None`) are equal values of type `ty` to `equality`.
pub(crate) fn equal_as(equality: Equality, ty: Ty, a: Option<&Value>, b: Option<&Value>) -> bool {
    let equal = |ty: Ty, a: Option<&Value>, b: Option<&Value>| equal_as(equality, ty, a, b);
    let a = a.filter(|v| !v.is_null());
    let b = b.filter(|v| !v.is_null());
    if let (Some(x), Some(y)) = (a, b) {
        // The common case: nothing changed.
        if crate::store::value_eq::equal(x, y) {
            return true;
        }
    }
    match ty {
        Ty::Ptr(inner) => match (a, b) {
            (None, None) => true,
            (Some(_), Some(_)) => equal(*inner, a, b),
            _ => false,
        },
        Ty::Slice(_) | Ty::Map(_) | Ty::Bytes
            if equality == Equality::Reflect && a.is_some() != b.is_some() =>
        {
            false
        }
        Ty::Quantity | Ty::Time | Ty::MicroTime if equality == Equality::Reflect => {
            json_equal(a, b)
        }
        Ty::Slice(inner) => match (items(a), items(b)) {
            (Some(x), Some(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|(p, q)| equal(*inner, Some(p), Some(q)))
            }
            _ => json_equal(a, b),
        },
        Ty::Map(inner) => match (entries(a), entries(b)) {
            (Some(x), Some(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| equal(*inner, Some(v), Some(w))))
            }
            _ => json_equal(a, b),
        },
        // A struct's fields; absent is the zero struct (no fields set).
        Ty::Struct(index) => match (entries(a), entries(b)) {
            (Some(x), Some(y)) => shapes::STRUCTS[usize::from(index)]
                .fields
                .iter()
                .all(|f| equal(f.ty, x.get(f.json), y.get(f.json))),
            _ => json_equal(a, b),
        },
        Ty::Str | Ty::Bytes => text(a) == text(b),
        Ty::Duration => {
            a.and_then(Value::as_str).unwrap_or("0s") == b.and_then(Value::as_str).unwrap_or("0s")
        }
        Ty::Int | Ty::Float => number(a) == number(b),
        Ty::Bool => {
            a.and_then(Value::as_bool).unwrap_or(false)
                == b.and_then(Value::as_bool).unwrap_or(false)
        }
        Ty::IntOrString => {
            let zero = Value::from(0);
            json_equal(Some(a.unwrap_or(&zero)), Some(b.unwrap_or(&zero)))
        }
        Ty::Quantity => match (quantity(a), quantity(b)) {
            (Some(x), Some(y)) => x.nanos() == y.nanos(),
            _ => json_equal(a, b),
        },
        Ty::Time | Ty::MicroTime => match (a.map(instant), b.map(instant)) {
            (Some(Some(x)), Some(Some(y))) => x == y,
            _ => json_equal(a, b),
        },
        Ty::Raw | Ty::Opaque => json_equal(a, b),
    }
}

/// A slice's items; absent is nil (no items). `None` when the value is not a list.
fn items(v: Option<&Value>) -> Option<&[Value]> {
    match v {
        None => Some(&[]),
        Some(Value::Array(items)) => Some(items),
        Some(_) => None,
    }
}

/// A map's entries; absent is nil (no entries). `None` when the value is not an object.
fn entries(v: Option<&Value>) -> Option<&serde_json::Map<String, Value>> {
    static EMPTY: std::sync::OnceLock<serde_json::Map<String, Value>> = std::sync::OnceLock::new();
    match v {
        None => Some(EMPTY.get_or_init(serde_json::Map::new)),
        Some(Value::Object(map)) => Some(map),
        Some(_) => None,
    }
}

fn text(v: Option<&Value>) -> Option<&str> {
    match v {
        None => Some(""),
        Some(v) => v.as_str(),
    }
}

fn number(v: Option<&Value>) -> Option<f64> {
    match v {
        None => Some(0.0),
        Some(v) => v.as_f64(),
    }
}

/// A quantity; absent is the zero quantity.
fn quantity(v: Option<&Value>) -> Option<Quantity> {
    match v {
        None => Quantity::parse("0"),
        Some(v) => Quantity::from_value(v),
    }
}

fn instant(v: &Value) -> Option<jiff::Timestamp> {
    v.as_str()?.parse().ok()
}

/// Plain JSON equality, absent and `null` alike.
fn json_equal(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => crate::store::value_eq::equal(x, y),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn deployment_spec() -> Ty {
        let index = super::super::kind_struct("apps", "Deployment").unwrap();
        let (_, ty) = super::super::struct_field(index, "spec").unwrap();
        ty
    }

    #[rstest]
    #[case::nil_and_empty_lists(json!({"podSelector": {}}), json!({"podSelector": {}, "ingress": []}), false)]
    #[case::null_and_absent(json!({"podSelector": {}, "ingress": null}), json!({"podSelector": {}}), true)]
    #[case::zero_scalars(json!({"ingress": [{"from": [{"ipBlock": {"cidr": ""}}]}]}), json!({"ingress": [{"from": [{"ipBlock": {}}]}]}), true)]
    #[case::nil_pointer_and_zero_value(json!({"ingress": [{"ports": [{"protocol": ""}]}]}), json!({"ingress": [{"ports": [{}]}]}), false)]
    #[case::values(json!({"policyTypes": ["Ingress"]}), json!({"policyTypes": ["Egress"]}), false)]
    fn network_policy_specs_by_reflect(#[case] a: Value, #[case] b: Value, #[case] same: bool) {
        let index = super::super::kind_struct("networking.k8s.io", "NetworkPolicy").unwrap();
        let (_, ty) = super::super::struct_field(index, "spec").unwrap();
        assert_eq!(equal_as(Equality::Reflect, ty, Some(&a), Some(&b)), same);
        assert_eq!(equal_as(Equality::Reflect, ty, Some(&b), Some(&a)), same);
    }

    #[rstest]
    #[case::nil_and_empty_lists(json!({"template": {"spec": {"containers": [{"name": "c"}]}}}), json!({"template": {"spec": {"containers": [{"name": "c", "env": []}], "tolerations": []}}}), true)]
    #[case::nil_and_empty_maps(json!({"template": {"spec": {}}}), json!({"template": {"spec": {"nodeSelector": {}}}}), true)]
    #[case::null_is_absent(json!({"replicas": null}), json!({}), true)]
    #[case::zero_scalars(json!({"paused": false, "minReadySeconds": 0}), json!({}), true)]
    #[case::quantities_by_value(json!({"template": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]}}}), json!({"template": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1000m"}}}]}}}), true)]
    #[case::different_quantities(json!({"template": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]}}}), json!({"template": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2"}}}]}}}), false)]
    #[case::nil_pointer_and_zero_struct(json!({"template": {"spec": {}}}), json!({"template": {"spec": {"securityContext": {}}}}), false)]
    #[case::values_differ(json!({"replicas": 1}), json!({"replicas": 2}), false)]
    #[case::list_lengths(json!({"template": {"spec": {"containers": [{"name": "c"}]}}}), json!({"template": {"spec": {"containers": [{"name": "c"}, {"name": "d"}]}}}), false)]
    #[case::unknown_keys_ignored(json!({"bogus": 1}), json!({}), true)]
    #[case::times_as_instants(json!({"template": {"metadata": {"creationTimestamp": "2024-01-01T01:00:00+01:00"}}}), json!({"template": {"metadata": {"creationTimestamp": "2024-01-01T00:00:00Z"}}}), true)]
    fn deployment_specs(#[case] a: Value, #[case] b: Value, #[case] same: bool) {
        assert_eq!(equal(deployment_spec(), Some(&a), Some(&b)), same);
        assert_eq!(equal(deployment_spec(), Some(&b), Some(&a)), same);
    }
}
