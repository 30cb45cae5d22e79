//! A pod's `/resize` subresource (in-place vertical scaling, GA since 1.35): the resize
//! strategy's `dropNonResizeUpdates` (`pkg/registry/core/pod/strategy.go`), which keeps only
//! the containers' `resources` and `resizePolicy` of a request, and `ValidatePodResize`
//! (`pkg/apis/core/validation/validation.go`), which lets only CPU and memory change, never
//! removes a request or limit, and never changes the pod's QoS class.
//!
//! Two points follow the newer releases rather than the copy of `validation.go` read: a resize
//! that adds, removes, renames or reorders containers is refused for that alone (`containers may
//! not be renamed or reordered on resize`, as the in-place resize e2e tests expect), and memory
//! limits may be lowered or added whatever the container's `resizePolicy` (the restriction was
//! lifted in 1.34). A container's `resizePolicy` is carried over by the strategy but, as in the
//! source read, validation compares whole containers, so changing it is refused.

use serde_json::{Map, Value};

use super::super::quantity::Quantity;
use super::pod_spec;
use crate::rules::validation::Cause;

/// The container lists a resize may touch: regular containers and (restartable) init
/// containers.
const LISTS: [&str; 2] = ["containers", "initContainers"];

/// `dropNonResizeUpdates`: the stored pod with the request's container `resources` and
/// `resizePolicy` (its metadata and status the stored ones, as for a status write). A request
/// that adds, removes, renames or reorders containers is returned as sent, for validation to
/// refuse.
pub fn drop_non_resize_updates(old: &Value, new: Value) -> Value {
    let len = |pod: &Value, list: &str| pod["spec"][list].as_array().map_or(0, Vec::len);
    if LISTS.iter().any(|list| len(old, list) != len(&new, list)) {
        return new;
    }
    let mut next = old.clone();
    for list in LISTS {
        let (Some(sent), Some(stored)) = (
            new["spec"][list].as_array(),
            next["spec"][list].as_array_mut(),
        ) else {
            continue;
        };
        if sent
            .iter()
            .zip(stored.iter())
            .any(|(s, o)| s.get("name") != o.get("name"))
        {
            return new;
        }
        for (stored, sent) in stored.iter_mut().zip(sent) {
            for key in ["resources", "resizePolicy"] {
                match (stored.as_object_mut(), sent.get(key)) {
                    (Some(c), Some(value)) => {
                        c.insert(key.into(), value.clone());
                    }
                    (Some(c), None) => {
                        c.remove(key);
                    }
                    (None, _) => {}
                }
            }
        }
    }
    next
}

/// The causes of a resize (`ValidatePodResize`, beyond the metadata rules).
pub fn validate(old: &Value, new: &Value) -> Vec<Cause> {
    let opts = pod_spec::PodOpts {
        is_pod: true,
        pod_name: new["metadata"]["name"].as_str(),
    };
    let mut causes = pod_spec::validate(&new["spec"], &"spec", opts);
    causes.extend(pod_spec::pod_only(&new["spec"], false));

    if pod_level_resources_set(old) || pod_level_resources_set(new) {
        return vec![Cause::forbidden(
            "",
            "pods with pod-level resources cannot be resized",
        )];
    }
    if old["metadata"]["annotations"]
        .get("kubernetes.io/config.mirror")
        .is_some()
    {
        return vec![Cause::forbidden("", "static pods cannot be resized")];
    }
    if old["spec"]["os"]["name"].as_str() == Some("windows") {
        return vec![Cause::forbidden("", "windows pods cannot be resized")];
    }
    let ordering = ordering_causes(old, new);
    if !ordering.is_empty() {
        causes.extend(ordering);
        return causes;
    }

    let old_qos = match old["status"]["qosClass"].as_str() {
        Some(qos) if !qos.is_empty() => qos,
        _ => crate::rules::defaults::qos_class(&old["spec"]),
    };
    if old_qos != crate::rules::defaults::qos_class(&new["spec"]) {
        causes.push(Cause::invalid_str(
            "spec",
            new["status"]["qosClass"].as_str().unwrap_or_default(),
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    if !resize_supported(old) {
        causes.push(Cause::forbidden(
            "spec",
            "Pod running on node without support for resize",
        ));
    }
    for list in LISTS {
        for (i, (sent, stored)) in containers(new, list).zip(containers(old, list)).enumerate() {
            if list == "initContainers" && !restartable(stored) {
                continue;
            }
            causes.extend(container_resize_causes(
                &sent["resources"],
                &stored["resources"],
                &format!("spec.{list}[{i}].resources"),
            ));
        }
    }

    // Only CPU and memory may change: each container, with those put back to the stored
    // values, must be the stored container.
    for list in LISTS {
        for (sent, stored) in containers(new, list).zip(containers(old, list)) {
            let munged = with_stored_cpu_and_memory(sent, stored);
            if semantic_equal(&munged, stored) {
                continue;
            }
            let detail = match (list, restartable(stored)) {
                ("containers", _) => "only cpu and memory resources are mutable",
                (_, true) => "only cpu and memory resources for sidecar containers are mutable",
                (_, false) => "resources for non-sidecar init containers are immutable",
            };
            causes.push(Cause::forbidden("spec", detail));
        }
    }
    if !causes.is_empty() {
        return causes;
    }
    let mut munged_spec = new["spec"].clone();
    for list in LISTS {
        let stored: Vec<&Value> = containers(old, list).collect();
        if let Some(sent) = munged_spec.get_mut(list).and_then(Value::as_array_mut) {
            for (c, stored) in sent.iter_mut().zip(stored) {
                *c = with_stored_cpu_and_memory(c, stored);
            }
        }
    }
    if !semantic_equal(&munged_spec, &old["spec"]) {
        causes.push(Cause::forbidden(
            "spec",
            "only cpu and memory resources are mutable",
        ));
    }
    causes
}

/// The containers of one list of a pod.
fn containers<'a>(pod: &'a Value, list: &str) -> impl Iterator<Item = &'a Value> {
    pod["spec"][list].as_array().into_iter().flatten()
}

/// A sidecar: an init container with `restartPolicy: Always`.
fn restartable(container: &Value) -> bool {
    container["restartPolicy"].as_str() == Some("Always")
}

/// Pod-level `resources` with any request or limit.
fn pod_level_resources_set(pod: &Value) -> bool {
    let resources = &pod["spec"]["resources"];
    ["requests", "limits"]
        .iter()
        .any(|k| resources[*k].as_object().is_some_and(|m| !m.is_empty()))
}

/// Containers may not be added, removed, renamed or reordered by a resize.
fn ordering_causes(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for list in LISTS {
        let (sent, stored): (Vec<&Value>, Vec<&Value>) = (
            containers(new, list).collect(),
            containers(old, list).collect(),
        );
        if sent.len() != stored.len() {
            causes.push(Cause::forbidden(
                format!("spec.{list}"),
                &format!("{list} may not be added or removed on resize"),
            ));
            continue;
        }
        for (i, (s, o)) in sent.iter().zip(&stored).enumerate() {
            if s.get("name") != o.get("name") {
                causes.push(Cause::forbidden(
                    format!("spec.{list}[{i}].name"),
                    &format!("{list} may not be renamed or reordered on resize"),
                ));
            }
        }
    }
    causes
}

/// `isPodResizeRequestSupported`: a pod whose first running container reports no
/// `resources` runs on a node that cannot resize (version skew); with none running, it may.
fn resize_supported(pod: &Value) -> bool {
    pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["state"].get("running").is_some_and(|r| !r.is_null()))
        .is_none_or(|s| s.get("resources").is_some_and(|r| !r.is_null()))
}

/// `validateContainerResize`: requests and limits may change but not go away.
fn container_resize_causes(new: &Value, old: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (list, what) in [("requests", "requests"), ("limits", "limits")] {
        let removed = old[list]
            .as_object()
            .into_iter()
            .flatten()
            .any(|(name, _)| new[list].get(name).is_none());
        if removed {
            causes.push(Cause::forbidden(
                format!("{path}.{list}"),
                &format!("resource {what} cannot be removed"),
            ));
        }
    }
    causes
}

/// `dropCPUMemoryResourcesFromContainer`: `sent` with its CPU and memory requests and limits
/// replaced by the stored container's (a list the stored container does not have is dropped;
/// `resources` keeps only `requests` and `limits`).
fn with_stored_cpu_and_memory(sent: &Value, stored: &Value) -> Value {
    let munge = |list: &str| -> Option<Value> {
        let old = stored["resources"][list].as_object()?;
        let mut munged: Map<String, Value> = sent["resources"][list]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for name in ["cpu", "memory"] {
            munged.remove(name);
            if let Some(value) = old.get(name) {
                munged.insert(name.into(), value.clone());
            }
        }
        Some(Value::Object(munged))
    };
    let mut resources = Map::new();
    for list in ["limits", "requests"] {
        if let Some(value) = munge(list) {
            resources.insert(list.into(), value);
        }
    }
    let mut container = sent.clone();
    if let Some(c) = container.as_object_mut() {
        c.insert("resources".into(), Value::Object(resources));
    }
    container
}

/// `apiequality.Semantic.DeepEqual` over JSON: an absent field, `null`, an empty list and an
/// empty object are all Go's zero (nil) value, and quantities (the values of `requests` and
/// `limits`) compare by amount.
fn semantic_equal(a: &Value, b: &Value) -> bool {
    fn empty(v: Option<&Value>) -> bool {
        match v {
            None | Some(Value::Null) => true,
            Some(Value::Array(a)) => a.is_empty(),
            Some(Value::Object(m)) => m.is_empty(),
            _ => false,
        }
    }
    fn eq(a: Option<&Value>, b: Option<&Value>, quantities: bool) -> bool {
        if empty(a) && empty(b) {
            return true;
        }
        match (a, b) {
            (Some(Value::Object(x)), Some(Value::Object(y))) => x.keys().chain(y.keys()).all(|k| {
                let quantities = matches!(k.as_str(), "requests" | "limits");
                eq(x.get(k), y.get(k), quantities)
            }),
            (Some(Value::Array(x)), Some(Value::Array(y))) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| eq(Some(x), Some(y), false))
            }
            (Some(Value::String(x)), Some(Value::String(y))) if quantities => {
                match (Quantity::parse(x), Quantity::parse(y)) {
                    (Some(p), Some(q)) => p.partial_cmp(&q) == Some(std::cmp::Ordering::Equal),
                    _ => x == y,
                }
            }
            (Some(x), Some(y)) => crate::store::value_eq::equal(x, y),
            _ => false,
        }
    }
    eq(Some(a), Some(b), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(containers: Value, qos: &str) -> Value {
        json!({
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": containers, "restartPolicy": "Always", "dnsPolicy": "ClusterFirst"},
            "status": {"qosClass": qos},
        })
    }

    fn container(name: &str, resources: Value) -> Value {
        json!({"name": name, "image": "nginx", "resources": resources,
               "imagePullPolicy": "Always", "terminationMessagePolicy": "File"})
    }

    use crate::rules::validation::error_texts as texts;

    /// The stored pod: Burstable, one container with a CPU request and limit and a memory
    /// request.
    fn stored() -> Value {
        pod(
            json!([container(
                "c",
                json!({"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m"}})
            )]),
            "Burstable",
        )
    }

    #[test]
    fn only_resources_and_resize_policy_are_taken_from_the_request() {
        let old = stored();
        let mut new = old.clone();
        new["spec"]["containers"][0]["resources"]["limits"]["cpu"] = json!("300m");
        new["spec"]["containers"][0]["resizePolicy"] =
            json!([{"resourceName": "cpu", "restartPolicy": "NotRequired"}]);
        new["spec"]["containers"][0]["image"] = json!("nginx:2");
        new["metadata"]["labels"] = json!({"added": "by-resize"});
        new["status"]["phase"] = json!("Failed");
        let next = drop_non_resize_updates(&old, new);
        let c = &next["spec"]["containers"][0];
        assert_eq!(c["resources"]["limits"]["cpu"], "300m");
        assert_eq!(c["resizePolicy"][0]["resourceName"], "cpu");
        assert_eq!(c["image"], "nginx", "the image is the stored one");
        assert_eq!(next["metadata"].get("labels"), None);
        assert_eq!(next["status"], old["status"]);
        // The policy is carried over, but validation compares whole containers once their CPU
        // and memory are put back, so a changed policy is refused as the real server does.
        assert_eq!(
            texts(validate(&old, &next)),
            ["spec: Forbidden: only cpu and memory resources are mutable"]
        );
        let mut unchanged_policy = next.clone();
        unchanged_policy["spec"]["containers"][0]
            .as_object_mut()
            .unwrap()
            .remove("resizePolicy");
        assert_eq!(
            texts(validate(&old, &unchanged_policy)),
            Vec::<String>::new()
        );
    }

    #[rstest::rstest]
    #[case::a_cpu_request_that_keeps_the_class(json!({"requests": {"cpu": "150m", "memory": "64Mi"}, "limits": {"cpu": "200m"}}), &[])]
    #[case::the_same_amount_written_otherwise(json!({"requests": {"cpu": "0.1", "memory": "64Mi"}, "limits": {"cpu": "200m"}}), &[])]
    #[case::a_removed_request(json!({"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}),
        &["spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed"])]
    #[case::a_removed_limit(json!({"requests": {"cpu": "100m", "memory": "64Mi"}}),
        &["spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed"])]
    #[case::another_resource(json!({"requests": {"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "1Gi"}, "limits": {"cpu": "200m"}}),
        &["spec: Forbidden: only cpu and memory resources are mutable"])]
    #[case::a_change_of_class(json!({"requests": {"cpu": "200m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "64Mi"}}),
        &["spec: Invalid value: \"Burstable\": Pod QOS Class may not change as a result of resizing"])]
    #[case::a_lower_memory_limit_is_allowed(json!({"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "128Mi"}}), &[])]
    fn resizes_are_checked_as_validate_pod_resize_checks_them(
        #[case] resources: Value,
        #[case] expected: &[&str],
    ) {
        let old = stored();
        let mut new = old.clone();
        new["spec"]["containers"][0]["resources"] = resources;
        let next = drop_non_resize_updates(&old, new);
        assert_eq!(texts(validate(&old, &next)), expected);
    }

    #[test]
    fn containers_may_not_be_reordered_added_or_removed() {
        let both = |a: &str, b: &str| {
            pod(
                json!([
                    container(a, json!({"requests": {"cpu": "1"}})),
                    container(b, json!({"requests": {"cpu": "1"}}))
                ]),
                "Burstable",
            )
        };
        let old = both("a", "b");
        let next = drop_non_resize_updates(&old, both("b", "a"));
        assert_eq!(
            texts(validate(&old, &next)),
            [
                "spec.containers[0].name: Forbidden: containers may not be renamed or reordered on resize",
                "spec.containers[1].name: Forbidden: containers may not be renamed or reordered on resize"
            ]
        );
        let one = stored();
        let next = drop_non_resize_updates(&old, one);
        assert_eq!(
            texts(validate(&old, &next)),
            ["spec.containers: Forbidden: containers may not be added or removed on resize"]
        );
    }

    #[test]
    fn pods_that_cannot_be_resized() {
        let mut old = stored();
        old["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "x"});
        assert_eq!(
            texts(validate(&old, &old.clone())),
            [": Forbidden: static pods cannot be resized"]
        );
        let mut old = stored();
        old["status"]["containerStatuses"] =
            json!([{"name": "c", "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}}]);
        assert_eq!(
            texts(validate(&old, &old.clone())),
            ["spec: Forbidden: Pod running on node without support for resize"]
        );
        old["status"]["containerStatuses"][0]["resources"] = json!({});
        assert!(texts(validate(&old, &old.clone())).is_empty());
    }
}
