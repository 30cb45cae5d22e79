//! Defaults of a pod template's spec (`SetDefaults_PodSpec`, `SetDefaults_Container` and the
//! defaulters of what a container holds in `core/v1`), shared by every kind that embeds one.
//! Pods get these plus what admission adds, in [`super::default_pod`].

use serde_json::{json, Map, Value};

use super::{fill_missing_resources, set_default, set_if_empty};

/// Fills the defaults of a `PodTemplateSpec` (its `spec`), as the generated defaulters of the
/// workload kinds do for their templates.
pub fn default_template(template: &mut Value) {
    if let Some(spec) = template.get_mut("spec") {
        default_pod_spec(spec);
    }
}

/// Fills the defaults of a `PodSpec`.
pub fn default_pod_spec(spec: &mut Value) {
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "securityContext", json!({}));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    // `SetDefaults_EphemeralContainer` is the container defaulter on the common fields.
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        if let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) {
            for c in containers.iter_mut().filter_map(Value::as_object_mut) {
                default_container(c);
            }
        }
    }
    if let Some(volumes) = spec.get_mut("volumes").and_then(Value::as_array_mut) {
        for v in volumes.iter_mut().filter_map(Value::as_object_mut) {
            default_volume(v);
        }
    }
}

/// `SetDefaults_Pod`: what a pod's spec (not a pod template's) gets on every decode. A
/// container's (or init container's) request of a resource it limits but does not request is
/// the limit; service links are on unless turned off; with the host's network, a container
/// port's host port is the container port.
pub fn set_defaults_pod(spec: &mut Value) {
    let host_network = spec["hostNetwork"].as_bool() == Some(true);
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    for list in ["containers", "initContainers"] {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(resources) = container
                .get_mut("resources")
                .and_then(Value::as_object_mut)
            {
                // A resource limited but not requested is requested at its limit.
                fill_missing_resources(resources, "requests", "limits");
            }
            if host_network {
                default_host_network_ports(container);
            }
        }
    }
    set_default(spec, "enableServiceLinks", json!(true));
}

/// `defaultHostNetworkPorts`: a port without a host port gets its container port.
fn default_host_network_ports(container: &mut Map<String, Value>) {
    let Some(ports) = container.get_mut("ports").and_then(Value::as_array_mut) else {
        return;
    };
    for port in ports.iter_mut().filter_map(Value::as_object_mut) {
        let unset = port
            .get("hostPort")
            .is_none_or(|p| p.as_i64() == Some(0) || p.is_null());
        if let (true, Some(container_port)) = (unset, port.get("containerPort").cloned()) {
            port.insert("hostPort".into(), container_port);
        }
    }
}

/// `SetDefaults_Container` and what a container holds: pull policy from the image tag,
/// termination message, empty resources, port protocols, probe timings, env field references.
pub fn default_container(c: &mut Map<String, Value>) {
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
    if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            set_if_empty(p, "protocol", json!("TCP"));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe).and_then(Value::as_object_mut) {
            set_default(p, "timeoutSeconds", json!(1));
            set_default(p, "periodSeconds", json!(10));
            set_default(p, "successThreshold", json!(1));
            set_default(p, "failureThreshold", json!(3));
            default_http_get(p);
            // `GRPCAction.Service`'s marker: no service is the empty one (written, the field
            // has no `omitempty`).
            if let Some(grpc) = p.get_mut("grpc").and_then(Value::as_object_mut) {
                set_default(grpc, "service", json!(""));
            }
        }
    }
    // `SetDefaults_HTTPGetAction` holds for lifecycle hooks as for probes.
    if let Some(lifecycle) = c.get_mut("lifecycle").and_then(Value::as_object_mut) {
        for hook in ["postStart", "preStop"] {
            if let Some(h) = lifecycle.get_mut(hook).and_then(Value::as_object_mut) {
                default_http_get(h);
            }
        }
    }
    if let Some(env) = c.get_mut("env").and_then(Value::as_array_mut) {
        for e in env.iter_mut() {
            if let Some(field_ref) = e
                .pointer_mut("/valueFrom/fieldRef")
                .and_then(Value::as_object_mut)
            {
                set_default(field_ref, "apiVersion", json!("v1"));
            }
        }
    }
}

/// `SetDefaults_HTTPGetAction` of a probe's or hook's `httpGet`: path `/`, scheme `HTTP`.
fn default_http_get(handler: &mut Map<String, Value>) {
    if let Some(get) = handler.get_mut("httpGet").and_then(Value::as_object_mut) {
        set_default(get, "path", json!("/"));
        set_default(get, "scheme", json!("HTTP"));
    }
}

/// `SetDefaults_ObjectFieldSelector` of downward API items: field references are to `v1`.
fn default_downward_items(source: &mut Map<String, Value>) {
    let Some(items) = source.get_mut("items").and_then(Value::as_array_mut) else {
        return;
    };
    for field_ref in items
        .iter_mut()
        .filter_map(|i| i.get_mut("fieldRef").and_then(Value::as_object_mut))
    {
        set_default(field_ref, "apiVersion", json!("v1"));
    }
}

/// Volume sources with a default file mode (`0644`, written 420) or type, a volume without a
/// source, and the plugin sources' markers ([`super::volume_sources`]).
fn default_volume(v: &mut Map<String, Value>) {
    super::volume_sources::default_volume_source(v);
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(s) = v.get_mut(source).and_then(Value::as_object_mut) {
            set_default(s, "defaultMode", json!(420));
        }
    }
    if let Some(host_path) = v.get_mut("hostPath").and_then(Value::as_object_mut) {
        set_default(host_path, "type", json!(""));
    }
    if let Some(downward) = v.get_mut("downwardAPI").and_then(Value::as_object_mut) {
        default_downward_items(downward);
    }
    // `SetDefaults_PersistentVolumeClaimSpec` of a generic ephemeral volume's claim.
    if let Some(claim_spec) = v
        .get_mut("ephemeral")
        .and_then(|e| e.pointer_mut("/volumeClaimTemplate/spec"))
        .and_then(Value::as_object_mut)
    {
        set_default(claim_spec, "volumeMode", json!("Filesystem"));
    }
    let projected_sources = v
        .get_mut("projected")
        .and_then(|p| p.get_mut("sources"))
        .and_then(Value::as_array_mut);
    for source in projected_sources
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        // `SetDefaults_ServiceAccountTokenProjection`: an hour.
        if let Some(token) = source
            .get_mut("serviceAccountToken")
            .and_then(Value::as_object_mut)
        {
            set_default(token, "expirationSeconds", json!(3600));
        }
        if let Some(downward) = source.get_mut("downwardAPI").and_then(Value::as_object_mut) {
            default_downward_items(downward);
        }
    }
}

/// An image pinned by digest or by a tag other than `latest` is pulled only when missing.
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
