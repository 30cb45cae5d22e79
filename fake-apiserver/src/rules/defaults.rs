//! Server-side defaults a real API server fills in (`pkg/apis/<group>/v1/defaults.go` and what
//! the kinds' create strategies add): pods and namespaces on create here, every other built-in
//! kind with defaults on each decoded write ([`on_decode`]) in the per-group modules.

use serde_json::{json, Map, Value};

use crate::resource::ResourceInfo;

mod admissionregistration;
mod apps;
pub(crate) mod batch;
mod core;
mod pod_spec;

/// Applies the kind's defaulting functions to a written object (create, update, patch, apply),
/// as the real server's decoder does. Kinds without defaults are left as they are.
pub fn on_decode(info: &ResourceInfo, object: &mut Value) {
    if info.custom || !object.is_object() {
        return;
    }
    let group = info.group.as_str();
    let kind = info.kind.as_str();
    if group == "admissionregistration.k8s.io" {
        match kind {
            "MutatingWebhookConfiguration" => admissionregistration::webhooks(object, true),
            "ValidatingWebhookConfiguration" => admissionregistration::webhooks(object, false),
            _ => {}
        }
        return;
    }
    let defaulted_by_spec = matches!(
        (group, kind),
        (
            "apps",
            "Deployment" | "DaemonSet" | "StatefulSet" | "ReplicaSet"
        ) | ("batch", "Job" | "CronJob")
            | ("", "Service" | "ReplicationController" | "PodTemplate")
    );
    if !defaulted_by_spec {
        return;
    }
    if group.is_empty() && kind == "PodTemplate" {
        if let Some(t) = object.get_mut("template") {
            pod_spec::default_template(t);
        }
        return;
    }
    if !object["spec"].is_object() {
        object["spec"] = json!({});
    }
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let template_labels = match (group, kind) {
        ("apps", "Deployment") => {
            apps::deployment(spec);
            None
        }
        ("apps", "DaemonSet") => {
            apps::daemon_set(spec);
            None
        }
        ("apps", "StatefulSet") => {
            apps::stateful_set(spec);
            None
        }
        ("apps", "ReplicaSet") => {
            apps::replica_set(spec);
            None
        }
        ("batch", "Job") => batch::job(spec),
        ("batch", "CronJob") => {
            batch::cron_job(spec);
            None
        }
        ("", "Service") => {
            core::service(spec);
            None
        }
        ("", "ReplicationController") => core::replication_controller(spec),
        _ => None,
    };
    // Jobs and ReplicationControllers without labels take their template's.
    if let Some(labels) = template_labels {
        let has_labels = object["metadata"]["labels"]
            .as_object()
            .is_some_and(|l| !l.is_empty());
        if !has_labels && object["metadata"].is_object() {
            object["metadata"]["labels"] = labels;
        }
    }
}

/// What the kinds' create strategies add beyond defaulting: a Job's generated selector, a
/// Service's empty load-balancer status.
pub fn on_create(info: &ResourceInfo, object: &mut Value) {
    match (info.group.as_str(), info.kind.as_str()) {
        ("batch", "Job") if !info.custom => batch::generate_selector(object),
        ("", "Service") if !info.custom => {
            object["status"] = json!({"loadBalancer": {}});
        }
        _ => {}
    }
}

/// Fills pod spec and container defaults and the initial status, as the real server's defaulting,
/// the ServiceAccount and DefaultTolerationSeconds admission plugins and the pod strategy do.
pub fn default_pod(pod: &mut Value, api_access_suffix: &str) {
    let Some(obj) = pod.as_object_mut() else {
        return;
    };
    let spec = obj.entry("spec").or_insert_with(|| json!({}));
    if let Some(spec) = spec.as_object_mut() {
        set_default(spec, "enableServiceLinks", json!(true));
        set_default(spec, "priority", json!(0));
        set_default(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
        let sa = spec
            .get("serviceAccountName")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("default")
            .to_string();
        spec.insert("serviceAccountName".into(), json!(sa));
        spec.insert("serviceAccount".into(), json!(sa));
        let automount = spec
            .get("automountServiceAccountToken")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let volume_name = format!("kube-api-access-{api_access_suffix}");
        if automount {
            let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
            if let Some(volumes) = volumes.as_array_mut() {
                volumes.push(api_access_volume(&volume_name));
            }
        }
        for list in ["containers", "initContainers"] {
            if let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) {
                for c in containers.iter_mut().filter_map(Value::as_object_mut) {
                    if automount {
                        let mounts = c.entry("volumeMounts").or_insert_with(|| json!([]));
                        if let Some(mounts) = mounts.as_array_mut() {
                            mounts.push(json!({
                                "name": volume_name,
                                "readOnly": true,
                                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"
                            }));
                        }
                    }
                }
            }
        }
        let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
        if let Some(tolerations) = tolerations.as_array_mut() {
            for key in [
                "node.kubernetes.io/not-ready",
                "node.kubernetes.io/unreachable",
            ] {
                let present = tolerations.iter().any(|t| {
                    t["key"] == key && (t["effect"] == "NoExecute" || t["effect"].is_null())
                });
                if !present {
                    tolerations.push(json!({
                        "key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300
                    }));
                }
            }
        }
    }
    if let Some(spec) = obj.get_mut("spec") {
        pod_spec::default_pod_spec(spec);
    }
    let qos = qos_class(obj.get("spec").unwrap_or(&Value::Null));
    obj.insert(
        "status".into(),
        json!({"phase": "Pending", "qosClass": qos}),
    );
}

fn set_default(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.into(), value);
    }
}

fn api_access_volume(name: &str) -> Value {
    json!({
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
            ]
        }
    })
}

/// The pod's QoS class from its containers' requests and limits.
fn qos_class(spec: &Value) -> &'static str {
    let containers = spec["containers"].as_array().cloned().unwrap_or_default();
    let mut any = false;
    let mut guaranteed = !containers.is_empty();
    for c in &containers {
        let requests = c.pointer("/resources/requests").and_then(Value::as_object);
        let limits = c.pointer("/resources/limits").and_then(Value::as_object);
        if requests.is_some_and(|r| !r.is_empty()) || limits.is_some_and(|l| !l.is_empty()) {
            any = true;
        }
        let full = limits.is_some_and(|l| l.contains_key("cpu") && l.contains_key("memory"));
        let equal = match (requests, limits) {
            (Some(r), Some(l)) => r.iter().all(|(k, v)| l.get(k) == Some(v)),
            (None, Some(_)) => true,
            _ => false,
        };
        if !(full && equal) {
            guaranteed = false;
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// Namespace defaults: the `kubernetes` finalizer, phase Active, and the name label.
pub fn default_namespace(ns: &mut Value) {
    let name = ns["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if let Some(meta) = ns.get_mut("metadata").and_then(Value::as_object_mut) {
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert("kubernetes.io/metadata.name".into(), json!(name));
        }
    }
    if let Some(obj) = ns.as_object_mut() {
        obj.insert("spec".into(), json!({"finalizers": ["kubernetes"]}));
        obj.insert("status".into(), json!({"phase": "Active"}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_defaults_match_a_real_server() {
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}, {"name": "d", "image": "busybox:1.36"}]}});
        default_pod(&mut pod, "abcde");
        assert_eq!(pod["spec"]["containers"][0]["imagePullPolicy"], "Always");
        assert_eq!(
            pod["spec"]["containers"][1]["imagePullPolicy"],
            "IfNotPresent"
        );
        assert_eq!(pod["spec"]["serviceAccountName"], "default");
        assert_eq!(pod["spec"]["tolerations"].as_array().unwrap().len(), 2);
        assert_eq!(pod["spec"]["volumes"][0]["name"], "kube-api-access-abcde");
        assert_eq!(
            pod["status"],
            json!({"phase": "Pending", "qosClass": "BestEffort"})
        );
    }

    #[test]
    fn qos_classes() {
        let g = json!({"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]});
        assert_eq!(qos_class(&g), "Guaranteed");
        let b = json!({"containers": [{"resources": {"requests": {"cpu": "1"}}}]});
        assert_eq!(qos_class(&b), "Burstable");
    }

    fn info(group: &str, kind: &str) -> ResourceInfo {
        crate::resource::builtin_resources()
            .into_iter()
            .find(|r| r.group == group && r.kind == kind)
            .expect("a built-in kind")
    }

    #[test]
    fn a_set_field_is_kept_and_a_missing_one_defaulted() {
        let mut d = json!({"metadata": {}, "spec": {"replicas": 3,
            "strategy": {"type": "Recreate"}}});
        on_decode(&info("apps", "Deployment"), &mut d);
        assert_eq!(d["spec"]["replicas"], 3);
        assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
    }

    #[test]
    fn per_index_backoff_and_failure_policies_change_the_job_defaults() {
        let mut j = json!({"metadata": {}, "spec": {"completions": 4, "backoffLimitPerIndex": 1,
            "podFailurePolicy": {"rules": [{"action": "Ignore",
                "onPodConditions": [{"type": "DisruptionTarget"}]}]}}});
        on_decode(&info("batch", "Job"), &mut j);
        assert_eq!(j["spec"]["parallelism"], 1);
        assert_eq!(j["spec"]["backoffLimit"], i64::from(i32::MAX));
        assert_eq!(j["spec"]["podReplacementPolicy"], "Failed");
        assert_eq!(
            j["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
            "True"
        );
    }

    #[test]
    fn replication_controllers_take_selector_and_labels_from_the_template() {
        let mut rc =
            json!({"metadata": {}, "spec": {"template": {"metadata": {"labels": {"a": "b"}}}}});
        on_decode(&info("", "ReplicationController"), &mut rc);
        assert_eq!(rc["spec"]["selector"], json!({"a": "b"}));
        assert_eq!(rc["metadata"]["labels"], json!({"a": "b"}));
        assert_eq!(rc["spec"]["replicas"], 1);
    }

    #[test]
    fn client_ip_affinity_gets_its_timeout() {
        let mut s = json!({"metadata": {}, "spec": {"sessionAffinity": "ClientIP", "type": "ExternalName"}});
        on_decode(&info("", "Service"), &mut s);
        assert_eq!(
            s["spec"]["sessionAffinityConfig"],
            json!({"clientIP": {"timeoutSeconds": 10800}})
        );
        assert!(s["spec"].get("ipFamilies").is_none());
    }

    #[test]
    fn garbage_pods_do_not_panic() {
        for mut v in [
            json!(null),
            json!({"spec": 5}),
            json!({"spec": {"containers": "x"}}),
        ] {
            default_pod(&mut v, "x");
            for (group, kind) in [
                ("apps", "Deployment"),
                ("batch", "Job"),
                ("batch", "CronJob"),
                ("", "Service"),
                ("apps", "StatefulSet"),
                ("", "ReplicationController"),
            ] {
                on_decode(&info(group, kind), &mut v.clone());
            }
        }
    }
}
