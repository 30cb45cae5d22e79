//! Defaults of `core/v1` kinds other than pods (`pkg/apis/core/v1/defaults.go`): Services and
//! ReplicationControllers.

use serde_json::{json, Map, Value};

use super::{pod_spec, set_default};

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
            set_default(p, "protocol", json!("TCP"));
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
