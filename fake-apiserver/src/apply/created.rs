//! The field sets of the objects a thread created last, kept with the objects.
//!
//! A create's field manager Go-encodes a copy of the decoded object and compares it with the
//! kind's zero value: every field the object holds becomes the creator's. For the realistic pod
//! that is a quarter of the create. Objects created one after another are mostly alike (a
//! controller's pods from one template, a test's objects, a harness exploring), and the set
//! depends on the object only through which fields it holds, except where the zero value holds
//! one (there the value decides). So an object equal to one created before, up to the values
//! of fields that count only by being there ([`same_fields`]), has that object's set: it takes
//! the kept set and its `FieldsV1` document, shared, instead of encoding and comparing again.
//!
//! The check is an exact comparison with the kept object, never a hash; debug builds also
//! compute the set and assert that it is the kept one. Kept per thread, so that no lock is
//! taken, and only for built-in kinds (a custom resource's schema changes with its CRD).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::fieldpath::Set;
use crate::resource::ResourceInfo;

/// How many created objects a thread keeps (the oldest goes first).
const KEPT: usize = 4;

/// What a create of an object gave: its creator's set with the set's `FieldsV1` document and
/// fingerprint, or nothing (an object whose every field is server-owned).
pub(super) type Owned = Option<(Arc<Set>, Value, u64)>;

/// One created object kept, with what identifies its kind's rules and what its create gave.
struct Created {
    group: String,
    version: String,
    kind: String,
    has_status: bool,
    /// The object as the field manager was given it (a copy of its own: sharing with the
    /// object the create went on to change only the maps shared already, see
    /// [`copy_unshared`]).
    object: Value,
    owned: Owned,
    /// `object` was replaced once by an object found equal to it (see [`find`]).
    replaced: bool,
}

impl Created {
    fn is_for(&self, info: &ResourceInfo) -> bool {
        self.kind == info.kind
            && crate::resource::same_group(&self.group, &info.group)
            && self.version == info.version
            && self.has_status == info.has_status
    }
}

thread_local! {
    /// The objects kept, oldest first.
    static KEPT_HERE: RefCell<VecDeque<Created>> = const { RefCell::new(VecDeque::new()) };
}

/// What the create of an object of `info` with the same fields as `object` gave, when this
/// thread kept one.
pub(super) fn find(info: &ResourceInfo, object: &Value) -> Option<Owned> {
    KEPT_HERE.with(|kept| {
        let mut kept = kept.borrow_mut();
        let created = kept
            .iter_mut()
            .rev()
            .find(|created| created.is_for(info) && same_fields(&created.object, object))?;
        // The object kept is a copy of the first create of a run, whose maps nobody else held
        // (its body's decode was not kept yet: see `http::created_bodies`), so every later
        // create from the kept decode compared all of it. The first object found whose maps
        // are held elsewhere (that decode) and not by the kept object takes its place: the
        // next comparison with an object of the same decode ends at their identity. Once
        // only: when every body differs (a name or a label each time), each object's maps are
        // its own decode's, and copying each would cost more than the comparisons it saves.
        if !created.replaced && held_elsewhere_only(object, &created.object) {
            created.object = copy_unshared(object);
            created.replaced = true;
        }
        Some(created.owned.clone())
    })
}

/// Whether `object`, or one of its members, is a map that something else holds too (see
/// [`copy_unshared`]) but that does not share its entries with `kept` or the same member of
/// `kept`.
pub(crate) fn held_elsewhere_only(object: &Value, kept: &Value) -> bool {
    let (Some(object), Some(kept)) = (object.as_object(), kept.as_object()) else {
        return false;
    };
    if object.shares_entries(kept) {
        return false;
    }
    object.is_shared()
        || object
            .iter()
            .any(|(key, value)| match (value, kept.get(key)) {
                (Value::Object(map), Some(Value::Object(kept_map))) => {
                    map.is_shared() && !map.shares_entries(kept_map)
                }
                _ => false,
            })
}

/// Keeps what the create of `object` (of `info`) gave.
pub(super) fn keep(info: &ResourceInfo, object: &Value, owned: Owned) {
    let created = Created {
        group: info.group.clone(),
        version: info.version.clone(),
        kind: info.kind.clone(),
        has_status: info.has_status,
        object: copy_unshared(object),
        owned,
        replaced: false,
    };
    KEPT_HERE.with(|kept| {
        let mut kept = kept.borrow_mut();
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back(created);
    });
}

/// Whether a create of `b` gives the creator the set a create of `a` gives: the objects are
/// equal, but for the values of metadata fields whose value never reaches the set. Those are
/// `name`, `generateName` and `namespace` (strings left out by the Go encoding when empty, so
/// only whether each is empty counts) and the values of `labels` and `annotations` (a key is a
/// field, its string value a leaf: only the keys count). The zero value of a kind holds none of
/// them, so no comparison with it reads their values.
pub(super) fn same_fields(a: &Value, b: &Value) -> bool {
    same_members(a, b, |key, a, b| match key {
        "metadata" => same_members(a, b, same_metadata_member),
        _ => a == b,
    })
}

fn same_metadata_member(key: &str, a: &Value, b: &Value) -> bool {
    match key {
        "name" | "generateName" | "namespace" => {
            let filled = |v: &Value| v.as_str().is_some_and(|s| !s.is_empty());
            a == b || (filled(a) && filled(b))
        }
        "labels" | "annotations" => {
            same_members(a, b, |_, a, b| a == b || (a.is_string() && b.is_string()))
        }
        _ => a == b,
    }
}

/// Whether `a` and `b` are maps with the same keys (a map lists them in order) whose values
/// `same` accepts, or else equal.
fn same_members(a: &Value, b: &Value, same: impl Fn(&str, &Value, &Value) -> bool) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    // The same entries: every member pair is equal, which `same` accepts (each of its tests
    // accepts equal values).
    if a.shares_entries(b) {
        return true;
    }
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && same(ka, va, vb))
}

/// A copy of `value` that shares with it only the maps something else shares already (the
/// decode of a repeated body, kept in `http::created_bodies`): a change through the object
/// copies those anyway, and sharing them makes the next comparison with an object made from
/// the same decode end at them. Every other map is copied (a clone would make every later
/// change of the object copy what it changes).
pub(crate) fn copy_unshared(value: &Value) -> Value {
    match value {
        Value::Object(map) if map.is_shared() => value.clone(),
        Value::Object(map) => {
            let mut copy = Map::with_capacity(map.len());
            for (key, value) in map {
                copy.insert(key.clone(), copy_unshared(value));
            }
            Value::Object(copy)
        }
        Value::Array(items) => Value::Array(items.iter().map(copy_unshared).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn pod(meta: Value, image: &str) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {"containers": [{"name": "app", "image": image}]}
        })
    }

    #[rstest]
    #[case::equal(json!({"name": "a"}), json!({"name": "a"}), true)]
    #[case::other_name(json!({"name": "a"}), json!({"name": "b"}), true)]
    #[case::other_generate_name(json!({"generateName": "a-"}), json!({"generateName": "b-"}), true)]
    #[case::other_namespace(json!({"name": "a", "namespace": "x"}), json!({"name": "a", "namespace": "y"}), true)]
    #[case::empty_name(json!({"name": ""}), json!({"name": "b"}), false)]
    #[case::name_not_text(json!({"name": 1}), json!({"name": "b"}), false)]
    #[case::name_missing(json!({"name": "a"}), json!({"generateName": "a"}), false)]
    #[case::other_label_value(json!({"labels": {"app": "a"}}), json!({"labels": {"app": "b"}}), true)]
    #[case::empty_label_value(json!({"labels": {"app": ""}}), json!({"labels": {"app": "b"}}), true)]
    #[case::other_label_key(json!({"labels": {"app": "a"}}), json!({"labels": {"web": "a"}}), false)]
    #[case::more_labels(json!({"labels": {"app": "a"}}), json!({"labels": {"app": "a", "b": "c"}}), false)]
    #[case::labels_null(json!({"labels": {}}), json!({"labels": null}), false)]
    #[case::label_not_text(json!({"labels": {"app": "a"}}), json!({"labels": {"app": 1}}), false)]
    #[case::other_annotation_value(json!({"annotations": {"n": "1"}}), json!({"annotations": {"n": "2"}}), true)]
    #[case::other_uid(json!({"uid": "1"}), json!({"uid": "2"}), false)]
    #[case::other_finalizer(json!({"finalizers": ["a"]}), json!({"finalizers": ["b"]}), false)]
    fn metadata_fields(#[case] a: Value, #[case] b: Value, #[case] same: bool) {
        assert_eq!(
            same_fields(&pod(a.clone(), "x"), &pod(b.clone(), "x")),
            same
        );
        assert_eq!(same_fields(&pod(b, "x"), &pod(a, "x")), same);
    }

    #[test]
    fn any_other_value_counts() {
        let meta = json!({"name": "a"});
        assert!(!same_fields(
            &pod(meta.clone(), "x"),
            &pod(meta.clone(), "y")
        ));
        let mut other_kind = pod(meta.clone(), "x");
        other_kind["kind"] = json!("Other");
        assert!(!same_fields(&pod(meta.clone(), "x"), &other_kind));
        let mut more = pod(meta.clone(), "x");
        more["status"] = json!({});
        assert!(!same_fields(&pod(meta, "x"), &more));
    }

    #[test]
    fn a_found_create_keeps_the_object_whose_maps_the_next_one_shares() {
        let pods = crate::resource::builtin_info("", "Pod");
        let owned: Owned = None;
        // The first create of a run: its maps are its own, and the kept copy's too.
        let first = pod(json!({"generateName": "web-"}), "x");
        keep(&pods, &first, owned.clone());
        // Later ones are clones of a decode kept elsewhere (`decode` holds their maps).
        let decode = pod(json!({"generateName": "web-"}), "x");
        let spec_of = |kept: &VecDeque<Created>| kept.back().unwrap().object["spec"].clone();
        let shares = |a: &Value, b: &Value| {
            a.as_object()
                .unwrap()
                .shares_entries(b.as_object().unwrap())
        };
        let second = decode.clone();
        assert!(find(&pods, &second).is_some(), "the same fields");
        let kept_spec = KEPT_HERE.with(|kept| spec_of(&kept.borrow()));
        assert!(
            shares(&kept_spec, &decode["spec"]),
            "the kept object is now the held one's"
        );
        // Found again, the kept object stays as it is: its maps are the decode's already.
        let third = decode.clone();
        assert!(find(&pods, &third).is_some());
        let again = KEPT_HERE.with(|kept| spec_of(&kept.borrow()));
        assert!(shares(&again, &kept_spec));
        // An object whose maps nobody else holds does not take the kept one's place.
        let own = pod(json!({"generateName": "web-"}), "x");
        assert!(find(&pods, &own).is_some());
        let still = KEPT_HERE.with(|kept| spec_of(&kept.borrow()));
        assert!(shares(&still, &decode["spec"]));
        assert!(!shares(&still, &own["spec"]));
        assert!(same_fields(&own, &decode), "what it found is unchanged");
        // Nor, once replaced, an object held elsewhere too (another decode).
        let other_decode = pod(json!({"generateName": "web-"}), "x");
        let fourth = other_decode.clone();
        assert!(find(&pods, &fourth).is_some());
        let last = KEPT_HERE.with(|kept| spec_of(&kept.borrow()));
        assert!(shares(&last, &decode["spec"]));
        assert!(!shares(&last, &other_decode["spec"]));
    }

    #[test]
    fn maps_sharing_their_entries_have_the_same_fields() {
        let a = pod(json!({"name": "a", "labels": {"app": "x"}}), "x");
        let b = a.clone();
        assert!(same_fields(&a, &b));
        assert!(
            same_members(&a["metadata"], &b["metadata"], |_, _, _| false),
            "ends at identity"
        );
    }

    #[test]
    fn a_copy_shares_only_the_maps_shared_already() {
        let original = json!({"a": {"b": [{"c": 1}]}, "d": "e", "f": {"g": 1}});
        let copy = copy_unshared(&original);
        assert_eq!(copy, original);
        let map = |v: &Value, key: &str| v[key].as_object().cloned().unwrap();
        assert!(!map(&original, "a").shares_entries(&map(&copy, "a")));
        let shared = original.clone();
        assert!(
            map(&original, "a").shares_entries(&map(&shared, "a")),
            "a clone shares: the assertion above means something"
        );
        // A map held by another owner too (`shared`'s) is shared by the copy; the rest is not.
        let mut object = json!({"f": {"g": 1}, "own": {"h": 2}});
        object["f"] = shared["f"].clone();
        let copy = copy_unshared(&object);
        assert!(map(&copy, "f").shares_entries(&map(&shared, "f")));
        assert!(!map(&copy, "own").shares_entries(&map(&object, "own")));
    }
}
