//! Server-side defaults a real API server fills in on create (for the built-in kinds that have
//! some that clients rely on): pods, namespaces.

use serde_json::{json, Map, Value};

/// Fills pod spec and container defaults and the initial status, as the real server's defaulting,
/// the ServiceAccount and DefaultTolerationSeconds admission plugins and the pod strategy do.
pub fn default_pod(pod: &mut Value, api_access_suffix: &str) {
    let Some(obj) = pod.as_object_mut() else {
        return;
    };
    let spec = obj.entry("spec").or_insert_with(|| json!({}));
    if let Some(spec) = spec.as_object_mut() {
        set_default(spec, "restartPolicy", json!("Always"));
        set_default(spec, "terminationGracePeriodSeconds", json!(30));
        set_default(spec, "dnsPolicy", json!("ClusterFirst"));
        set_default(spec, "securityContext", json!({}));
        set_default(spec, "schedulerName", json!("default-scheduler"));
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
                    default_container(c);
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

fn default_container(c: &mut Map<String, Value>) {
    let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
    let policy = if image_has_tag_other_than_latest(image) {
        "IfNotPresent"
    } else {
        "Always"
    };
    set_default(c, "imagePullPolicy", json!(policy));
    set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
    set_default(c, "terminationMessagePolicy", json!("File"));
    set_default(c, "resources", json!({}));
}

fn image_has_tag_other_than_latest(image: &str) -> bool {
    if image.contains('@') {
        return true;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag != "latest",
        None => false,
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

    #[test]
    fn garbage_pods_do_not_panic() {
        for mut v in [
            json!(null),
            json!({"spec": 5}),
            json!({"spec": {"containers": "x"}}),
        ] {
            default_pod(&mut v, "x");
        }
    }
}
