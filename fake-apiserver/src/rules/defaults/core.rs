//! Defaults of `core/v1` kinds other than pods (`pkg/apis/core/v1/defaults.go`): Services,
//! ReplicationControllers, Secrets, Nodes, persistent volumes and claims, Endpoints.

use serde_json::{json, Map, Value};

use super::{fill_missing_resources, pod_spec, set_default, set_if_empty};

/// `SetDefaults_Secret`: a secret without a type is `Opaque`.
pub fn secret(object: &mut Map<String, Value>) {
    set_if_empty(object, "type", json!("Opaque"));
}

/// `SetDefaults_NodeStatus`: a node that reports capacity but no allocatable resources can
/// allocate all of its capacity.
pub fn node(object: &mut Map<String, Value>) {
    let Some(status) = object.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    if !status.get("allocatable").is_none_or(Value::is_null) {
        return;
    }
    // An empty capacity would give an empty allocatable, which the real server's encoding omits.
    if let Some(capacity) = status
        .get("capacity")
        .filter(|c| c.as_object().is_some_and(|c| !c.is_empty()))
        .cloned()
    {
        status.insert("allocatable".into(), capacity);
    }
}

/// `SetDefaults_PersistentVolume`: phase `Pending`, reclaim policy `Retain`, filesystem mode.
pub fn persistent_volume(object: &mut Map<String, Value>) {
    pending_phase(object);
    if let Some(spec) = object_at(object, "spec") {
        set_if_empty(spec, "persistentVolumeReclaimPolicy", json!("Retain"));
        set_default(spec, "volumeMode", json!("Filesystem"));
        super::volume_sources::default_plugin_sources(spec);
    }
}

/// `SetDefaults_PersistentVolumeClaim` and `SetDefaults_PersistentVolumeClaimSpec`: phase
/// `Pending`, filesystem mode.
pub fn persistent_volume_claim(object: &mut Map<String, Value>) {
    pending_phase(object);
    if let Some(spec) = object_at(object, "spec") {
        set_default(spec, "volumeMode", json!("Filesystem"));
    }
}

/// `SetDefaults_Namespace`: a named namespace carries its name as the
/// `kubernetes.io/metadata.name` label (on every decode, so an update cannot take it away).
pub fn namespace(object: &mut Map<String, Value>) {
    let Some(name) = object
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
    else {
        return;
    };
    if let Some(labels) = object_at(object, "metadata").and_then(|m| object_at(m, "labels")) {
        labels.insert("kubernetes.io/metadata.name".into(), json!(name));
    }
}

/// `SetDefaults_Endpoints`: ports without a protocol are TCP.
pub fn endpoints(object: &mut Map<String, Value>) {
    let Some(subsets) = object.get_mut("subsets").and_then(Value::as_array_mut) else {
        return;
    };
    let ports = subsets
        .iter_mut()
        .filter_map(|s| s.get_mut("ports").and_then(Value::as_array_mut))
        .flatten()
        .filter_map(Value::as_object_mut);
    for port in ports {
        set_if_empty(port, "protocol", json!("TCP"));
    }
}

/// `SetDefaults_LimitRangeItem` of each container item: the default limit is the maximum where
/// unset, and the default request the default limit, else the minimum.
pub fn limit_range(object: &mut Map<String, Value>) {
    let items = object
        .get_mut("spec")
        .and_then(|s| s.get_mut("limits"))
        .and_then(Value::as_array_mut);
    for item in items.into_iter().flatten().filter_map(Value::as_object_mut) {
        if item.get("type").and_then(Value::as_str) != Some("Container") {
            continue;
        }
        fill_missing_resources(item, "default", "max");
        fill_missing_resources(item, "defaultRequest", "default");
        fill_missing_resources(item, "defaultRequest", "min");
    }
}

/// A volume's or claim's status phase is `Pending` until something sets it (the status is a
/// struct in Go, so it is always there).
pub fn pending_phase(object: &mut Map<String, Value>) {
    if let Some(status) = object_at(object, "status") {
        set_if_empty(status, "phase", json!("Pending"));
    }
}

/// The object at `key`, made an empty one when it is missing or not an object (a Go struct
/// field, never absent once decoded).
fn object_at<'a>(
    object: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    let slot = object.entry(key).or_insert(Value::Null);
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
}

/// `SetDefaults_Service`, with the single-stack IPv4 family the service registry records.
pub fn service(spec: &mut Map<String, Value>) {
    set_default(spec, "sessionAffinity", json!("None"));
    if spec["sessionAffinity"] == "None" {
        spec.remove("sessionAffinityConfig");
    } else if spec["sessionAffinity"] == "ClientIP" {
        let config = spec
            .entry("sessionAffinityConfig")
            .or_insert_with(|| json!({}));
        if !config["clientIP"].is_object() {
            config["clientIP"] = json!({});
        }
        if config["clientIP"]["timeoutSeconds"].is_null() {
            config["clientIP"]["timeoutSeconds"] = json!(10800);
        }
    }
    set_default(spec, "type", json!("ClusterIP"));
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            set_if_empty(p, "protocol", json!("TCP"));
            let target_unset = match p.get("targetPort") {
                None | Some(Value::Null) => true,
                Some(Value::Number(n)) => n.as_i64() == Some(0),
                Some(Value::String(s)) => s.is_empty(),
                Some(_) => false,
            };
            if target_unset {
                if let Some(port) = p.get("port").cloned() {
                    p.insert("targetPort".into(), port);
                }
            }
        }
    }
    let service_type = spec["type"].as_str().unwrap_or_default().to_string();
    let has_external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|ips| !ips.is_empty());
    let externally_accessible = matches!(service_type.as_str(), "LoadBalancer" | "NodePort")
        || (service_type == "ClusterIP" && has_external_ips);
    if externally_accessible {
        set_default(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if matches!(
        service_type.as_str(),
        "ClusterIP" | "NodePort" | "LoadBalancer"
    ) {
        set_default(spec, "internalTrafficPolicy", json!("Cluster"));
        set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
        set_default(spec, "ipFamilies", json!(["IPv4"]));
    }
    if service_type == "LoadBalancer" {
        set_default(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}

/// `SetDefaults_ReplicationController`: the selector and the controller's labels default to the
/// template's labels; one replica. Returns the labels for the metadata (when it has none).
pub fn replication_controller(spec: &mut Map<String, Value>) -> Option<Value> {
    let labels = spec
        .get("template")
        .and_then(|t| t.pointer("/metadata/labels"))
        .filter(|l| l.is_object())
        .cloned();
    if let Some(labels) = &labels {
        let empty = spec
            .get("selector")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if empty {
            spec.insert("selector".into(), labels.clone());
        }
    }
    set_default(spec, "replicas", json!(1));
    if let Some(t) = spec.get_mut("template") {
        pod_spec::default_template(t);
    }
    labels
}
