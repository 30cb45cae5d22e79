//! How each kind's strategy moves `metadata.generation` on an update.
//!
//! The generic update path first gives the new object the stored generation (`rest.BeforeUpdate`);
//! then the kind's `PrepareForUpdate` decides whether it is one more. Most strategies bump it
//! when `apiequality.Semantic.DeepEqual` finds the spec changed, so a client sending `[]` where
//! the stored object has no list, or `1000m` where it has `1`, starts no new generation. The
//! exceptions, each read in its strategy:
//! - Deployments also when the annotations change (they are copied to the replica sets);
//! - EndpointSlices compare the whole object but its metadata, and also the labels;
//! - NetworkPolicies and webhook configurations use `reflect.DeepEqual` (`[]` is not a nil list);
//! - CSIDrivers bump on a spec change though they do not start at 1 (`PrepareForCreate` leaves
//!   the generation as sent);
//! - PriorityClasses start at 1 and never move;
//! - custom resources compare everything but `metadata` (and `status` with a status
//!   subresource), as the unstructured content it is.
//!
//! Only the main resource's strategy, and a pod's `ephemeralcontainers` and `resize`
//! subresources (which then run `updatePodGeneration`), bump it; status strategies never do.

use serde_json::Value;

use crate::resource::ResourceInfo;
use crate::rules::go_encoding::semantic::{self, Equality};
use crate::store::value_eq::{equal, maps_equal_where};

/// What an update compares to decide a new generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// The generation never moves on update.
    Never,
    /// The spec (every top-level field but `metadata`, the type and a subresource's `status`),
    /// compared as the Go type with `equality`; `annotations`/`labels`: those too.
    Spec {
        equality: Equality,
        annotations: bool,
        labels: bool,
    },
}

fn rule(info: &ResourceInfo) -> Rule {
    let spec = |equality| Rule::Spec {
        equality,
        annotations: false,
        labels: false,
    };
    if info.custom {
        return spec(Equality::Semantic);
    }
    match (info.group.as_str(), info.kind.as_str()) {
        ("apps", "Deployment") => Rule::Spec {
            equality: Equality::Semantic,
            annotations: true,
            labels: false,
        },
        ("discovery.k8s.io", "EndpointSlice") => Rule::Spec {
            equality: Equality::Semantic,
            annotations: false,
            labels: true,
        },
        ("networking.k8s.io", "NetworkPolicy")
        | (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration",
        ) => spec(Equality::Reflect),
        ("storage.k8s.io", "CSIDriver") => spec(Equality::Semantic),
        ("scheduling.k8s.io", "PriorityClass") => Rule::Never,
        _ if info.tracks_generation => spec(Equality::Semantic),
        _ => Rule::Never,
    }
}

/// Whether a top-level key is compared as part of the spec: anything but `metadata`, the type
/// and `status` where a status subresource owns it.
pub fn is_spec_key(info: &ResourceInfo, key: &str) -> bool {
    let owned_elsewhere =
        matches!(key, "metadata" | "apiVersion" | "kind") || (info.has_status && key == "status");
    !owned_elsewhere
}

/// Whether anything of the spec differs at all, as JSON (the cheap test every update makes; an
/// identical spec is also semantically equal).
pub fn spec_differs_as_json(info: &ResourceInfo, old: &Value, new: &Value) -> bool {
    match (old.as_object(), new.as_object()) {
        (Some(old), Some(new)) => !maps_equal_where(old, new, |k| is_spec_key(info, k)),
        _ => !equal(old, new),
    }
}

/// [`spec_differs_as_json`] given the top-level members `new` holds exactly as `old` does
/// (`crate::apply::unchanged_members`): the spec differs when a spec key of either is not one.
pub fn spec_differs_given(
    info: &ResourceInfo,
    old: &Value,
    new: &Value,
    unchanged: &[&str],
) -> bool {
    match (old.as_object(), new.as_object()) {
        (Some(old), Some(new)) => old
            .keys()
            .chain(new.keys())
            .any(|k| is_spec_key(info, k) && !unchanged.contains(&k.as_str())),
        _ => spec_differs_as_json(info, old, new),
    }
}

/// Whether the update from `old` to `new` starts a new generation for the kind's strategy.
/// `spec_differs`: what [`spec_differs_as_json`] found for them.
pub fn bumps(info: &ResourceInfo, old: &Value, new: &Value, spec_differs: bool) -> bool {
    let Rule::Spec {
        equality,
        annotations,
        labels,
    } = rule(info)
    else {
        return false;
    };
    // Custom resources are unstructured content, and a kind the tables lack has no Go type to
    // compare as: any difference counts.
    let spec_changed = spec_differs
        && (info.custom
            || semantic::fields_equal(equality, &info.group, &info.kind, old, new, |k| {
                !is_spec_key(info, k)
            })
            .is_none_or(|same| !same));
    let metadata_changed =
        |key: &str| !string_maps_equal(&old["metadata"][key], &new["metadata"][key]);
    spec_changed
        || (annotations && metadata_changed("annotations"))
        || (labels && metadata_changed("labels"))
}

/// `Semantic.DeepEqual` of two `map[string]string` (labels, annotations): nil and empty alike.
fn string_maps_equal(a: &Value, b: &Value) -> bool {
    let empty = |v: &Value| v.is_null() || v.as_object().is_some_and(serde_json::Map::is_empty);
    (empty(a) && empty(b)) || equal(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    use crate::resource::builtin_info as info;

    /// Given the members found unchanged, the spec test answers as the full comparison does.
    #[rstest]
    #[case::same(json!({"spec": {"a": 1}, "status": {"x": 1}}), json!({"spec": {"a": 1}, "status": {"x": 2}}))]
    #[case::changed(json!({"spec": {"a": 1}}), json!({"spec": {"a": 2}}))]
    #[case::added(json!({"spec": {"a": 1}}), json!({"spec": {"a": 1}, "extra": true}))]
    #[case::removed(json!({"spec": {"a": 1}, "extra": true}), json!({"spec": {"a": 1}}))]
    #[case::only_metadata(json!({"metadata": {"name": "a"}}), json!({"metadata": {"name": "b"}}))]
    #[case::not_objects(json!([1]), json!([2]))]
    fn spec_differs_given_unchanged_members_is_spec_differs_as_json(
        #[case] old: Value,
        #[case] new: Value,
    ) {
        for kind in ["Pod", "ConfigMap"] {
            let info = info("", kind);
            let unchanged = crate::apply::unchanged_members(Some(&old), &new);
            assert_eq!(
                spec_differs_given(&info, &old, &new, &unchanged),
                spec_differs_as_json(&info, &old, &new),
                "{kind}: {old} -> {new}"
            );
        }
    }

    #[rstest]
    #[case::empty_list_is_no_list("apps", "Deployment", json!({"spec": {"template": {"spec": {"tolerations": []}}}}), false)]
    #[case::annotations_of_a_deployment("apps", "Deployment", json!({"metadata": {"annotations": {"a": "b"}}}), true)]
    #[case::annotations_of_a_replica_set("apps", "ReplicaSet", json!({"metadata": {"annotations": {"a": "b"}}}), false)]
    #[case::labels_of_an_endpoint_slice("discovery.k8s.io", "EndpointSlice", json!({"metadata": {"labels": {"a": "b"}}}), true)]
    #[case::empty_list_by_reflect("networking.k8s.io", "NetworkPolicy", json!({"spec": {"ingress": []}}), true)]
    #[case::a_priority_class_never("scheduling.k8s.io", "PriorityClass", json!({"value": 5}), false)]
    #[case::a_config_map_never("", "ConfigMap", json!({"data": {"a": "b"}}), false)]
    #[case::a_status_is_not_the_spec("apps", "Deployment", json!({"status": {"replicas": 3}}), false)]
    fn what_moves_a_generation(
        #[case] group: &str,
        #[case] kind: &str,
        #[case] change: Value,
        #[case] bumps_it: bool,
    ) {
        let info = info(group, kind);
        let old = json!({"metadata": {"name": "x"}, "spec": {}});
        let mut new = old.clone();
        for (key, value) in change.as_object().unwrap() {
            match (new.get_mut(key), value) {
                (Some(Value::Object(target)), Value::Object(fields)) => {
                    target.extend(fields.clone());
                }
                _ => new[key] = value.clone(),
            }
        }
        let differs = spec_differs_as_json(&info, &old, &new);
        assert_eq!(bumps(&info, &old, &new, differs), bumps_it);
    }
}
