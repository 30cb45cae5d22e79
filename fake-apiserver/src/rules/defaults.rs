//! Server-side defaults a real API server fills in (`pkg/apis/<group>/v1/defaults.go` and what
//! the kinds' create strategies add): pods and namespaces on create here, every other built-in
//! kind with defaults on each decoded write ([`on_decode`]) in the per-group modules.

use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use crate::resource::ResourceInfo;
use crate::rules::quantity::Quantity;

mod admissionregistration;
mod apps;
pub(crate) mod batch;
mod core;
mod pod_spec;
mod volume_sources;

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
    if group == "storage.k8s.io" {
        super::storage::defaults(kind, object);
        return;
    }
    if group.is_empty() && kind == "Pod" {
        // `SetDefaults_PodSpec` and the container defaulters run on every decoded pod, so an
        // update that leaves out a defaulted field keeps it.
        if let Some(spec) = object.get_mut("spec") {
            pod_spec::default_pod_spec(spec);
            pod_spec::set_defaults_pod(spec);
        }
        return;
    }
    if group.is_empty() {
        if let Some(map) = object.as_object_mut() {
            match kind {
                "Secret" => core::secret(map),
                "Node" => core::node(map),
                "PersistentVolume" => core::persistent_volume(map),
                "PersistentVolumeClaim" => core::persistent_volume_claim(map),
                "Endpoints" => core::endpoints(map),
                "LimitRange" => core::limit_range(map),
                "Namespace" => core::namespace(map),
                _ => {}
            }
        }
    }
    if (group, kind) == ("autoscaling", "HorizontalPodAutoscaler") {
        if !object["spec"].is_object() {
            object["spec"] = json!({});
        }
        super::autoscaling::default_hpa(object);
        return;
    }
    // The core group is told by `is_empty`, not by matching `""`: comparing an empty `String`
    // calls `memcmp` at a dangling pointer, ~100 ns on machines whose glibc picks the AVX-512
    // `memcmp` (see `make bench`'s last line), and every write of a core kind comes here.
    let core_group = group.is_empty();
    let defaulted_by_spec = match kind {
        "Deployment" | "DaemonSet" | "StatefulSet" | "ReplicaSet" => group == "apps",
        "Job" | "CronJob" => group == "batch",
        "Service" | "ReplicationController" | "PodTemplate" => core_group,
        _ => false,
    };
    if !defaulted_by_spec {
        return;
    }
    if core_group && kind == "PodTemplate" {
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
    // `defaulted_by_spec` checked the group: the kind tells which one.
    let template_labels = match kind {
        "Deployment" => {
            apps::deployment(spec);
            None
        }
        "DaemonSet" => {
            apps::daemon_set(spec);
            None
        }
        "StatefulSet" => {
            apps::stateful_set(spec);
            None
        }
        "ReplicaSet" => {
            apps::replica_set(spec);
            None
        }
        "Job" => batch::job(spec),
        "CronJob" => {
            batch::cron_job(spec);
            None
        }
        "Service" => {
            core::service(spec);
            None
        }
        "ReplicationController" => core::replication_controller(spec),
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

/// The status defaults of a kind whose create resets the status: the real server reads the
/// written object back through the defaulter, so a new volume or claim shows phase `Pending`.
pub fn after_status_reset(info: &ResourceInfo, object: &mut Value) {
    if info.custom || !info.group.is_empty() {
        return;
    }
    if let ("PersistentVolume" | "PersistentVolumeClaim", Some(map)) =
        (info.kind.as_str(), object.as_object_mut())
    {
        core::pending_phase(map);
    }
}

/// What the kinds' create strategies add beyond defaulting: a Job's generated selector. (A
/// Service's reset status reads as `{"loadBalancer": {}}`: a struct value, see
/// [`super::go_encoding`].)
pub fn on_create(info: &ResourceInfo, object: &mut Value) {
    if let ("batch", "Job") = (info.group.as_str(), info.kind.as_str()) {
        if !info.custom {
            batch::generate_selector(object);
        }
    }
}

/// How the name of the service account token volume a pod is given begins (ServiceAccount
/// admission's `kube-api-access-` and five random characters).
pub(crate) const API_ACCESS_PREFIX: &str = "kube-api-access-";

/// The name of the service account token volume drawn with `suffix`.
pub(crate) fn api_access_volume_name(suffix: &str) -> String {
    let mut name = String::with_capacity(API_ACCESS_PREFIX.len() + suffix.len());
    name.push_str(API_ACCESS_PREFIX);
    name.push_str(suffix);
    name
}

/// Adds to a decoded (so defaulted) pod what the ServiceAccount and DefaultTolerationSeconds
/// admission plugins add, and the initial status (its QoS class is `ComputePodQOS` of the
/// spec), as the pod strategy sets it.
pub fn default_pod(pod: &mut Value, api_access_suffix: &str) {
    let Some(obj) = pod.as_object_mut() else {
        return;
    };
    // A pod sent without a spec was decoded (in Go) with the zero spec, which is defaulted.
    let spec = obj.entry("spec").or_insert_with(|| {
        let mut spec = json!({});
        pod_spec::default_pod_spec(&mut spec);
        spec
    });
    if let Some(spec) = spec.as_object_mut() {
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
        let volume_name = api_access_volume_name(api_access_suffix);
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
            for (key, toleration) in DEFAULT_TOLERATION_KEYS.iter().zip(default_tolerations()) {
                let present = tolerations.iter().any(|t| {
                    t["key"] == *key && (t["effect"] == "NoExecute" || t["effect"].is_null())
                });
                if !present {
                    tolerations.push(toleration.clone());
                }
            }
        }
    }
    // No second defaulting here: the spec was defaulted when it was decoded, a mutating
    // webhook's patch is defaulted where it is applied (`admission::dispatch`), and what the
    // in-tree plugins above add is complete as they write it (the real server defaults neither
    // again). Debug builds check that defaulting again would change nothing.
    #[cfg(debug_assertions)]
    if let Some(spec) = obj.get("spec") {
        let mut again = spec.clone();
        pod_spec::default_pod_spec(&mut again);
        debug_assert_eq!(&again, spec, "a created pod's spec is left defaulted");
    }
    let qos = qos_class(obj.get("spec").unwrap_or(&Value::Null));
    obj.insert(
        "status".into(),
        json!({"phase": "Pending", "qosClass": qos}),
    );
}

/// Copies into the resource list at `to` the resources of the list at `from` that it lacks
/// (Go's "if _, exists := to[key]; !exists" loops). An empty or absent `from` adds nothing, so an
/// empty `to` never appears (Go's encoding omits an empty list).
fn fill_missing_resources(map: &mut Map<String, Value>, to: &str, from: &str) {
    let Some(source) = map
        .get(from)
        .and_then(Value::as_object)
        .filter(|s| !s.is_empty())
        .cloned()
    else {
        return;
    };
    let target = map.entry(to).or_insert(Value::Null);
    if target.is_null() {
        *target = Value::Object(Map::new());
    }
    let Some(target) = target.as_object_mut() else {
        return;
    };
    for (name, quantity) in source {
        target.entry(name).or_insert(quantity);
    }
}

/// Sets `key` when it is missing, null or the empty string (Go's zero value of a string, which
/// is what a `+default` marker on a string field replaces).
fn set_if_empty(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map
        .get(key)
        .is_none_or(|v| v.is_null() || v.as_str() == Some(""))
    {
        map.insert(key.into(), value);
    }
}

fn set_default(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.into(), value);
    }
}

fn api_access_volume(name: &str) -> Value {
    // Built once; each pod takes a clone, whose maps are shared copy-on-write until something
    // changes them.
    static PROJECTED: OnceLock<Value> = OnceLock::new();
    let projected = PROJECTED.get_or_init(|| {
        json!({
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
            ]
        })
    });
    let mut volume = Map::with_capacity(2);
    volume.insert("name".into(), Value::String(name.to_string()));
    volume.insert("projected".into(), projected.clone());
    Value::Object(volume)
}

/// The toleration for 300 s of each [`DEFAULT_TOLERATION_KEYS`] taint (`NoExecute`), built
/// once and cloned as [`api_access_volume`]'s part is.
fn default_tolerations() -> &'static [Value; 2] {
    static TOLERATIONS: OnceLock<[Value; 2]> = OnceLock::new();
    TOLERATIONS.get_or_init(|| {
        DEFAULT_TOLERATION_KEYS.map(|key| {
            json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
        })
    })
}

/// The taints every pod tolerates for 300 s (the `DefaultTolerationSeconds` admission plugin).
const DEFAULT_TOLERATION_KEYS: [&str; 2] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
];

/// The pod's QoS class from its containers' requests and limits.
pub(crate) fn qos_class(spec: &Value) -> &'static str {
    let mut requests = QosTotals::default();
    let mut limits = QosTotals::default();
    let mut guaranteed = true;
    let pod_level = &spec["resources"];
    if pod_level_resources_set(pod_level) {
        requests.add(&pod_level["requests"]);
        if pod_level["limits"]
            .as_object()
            .is_some_and(|l| !l.is_empty())
            && !limits.add(&pod_level["limits"])
        {
            guaranteed = false;
        }
    } else {
        // Ephemeral containers cannot have resources, so they never count.
        let containers = ["containers", "initContainers"]
            .into_iter()
            .filter_map(|list| spec[list].as_array())
            .flatten();
        for c in containers {
            requests.add(&c["resources"]["requests"]);
            if !limits.add(&c["resources"]["limits"]) {
                guaranteed = false;
            }
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    let matched = |r: Option<i128>, l: Option<i128>| r.is_none() || r == l;
    if guaranteed
        && matched(requests.cpu, limits.cpu)
        && matched(requests.memory, limits.memory)
        && requests.len() == limits.len()
    {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// `isPodLevelResourcesSet`: the pod itself requests or limits cpu, memory or huge pages (the
/// `PodLevelResourcesFixKubeletQOSClass` behaviour: a `resources` without any of them leaves
/// the containers to decide).
fn pod_level_resources_set(resources: &Value) -> bool {
    ["requests", "limits"].into_iter().any(|list| {
        resources[list].as_object().is_some_and(|m| {
            m.keys()
                .any(|k| k == "cpu" || k == "memory" || k.starts_with("hugepages-"))
        })
    })
}

/// The positive cpu and memory quantities (in nano-units) summed over resource lists, the only
/// resources the QoS class looks at.
#[derive(Debug, Default)]
struct QosTotals {
    cpu: Option<i128>,
    memory: Option<i128>,
}

impl QosTotals {
    /// Adds a resource list; whether it held both a positive cpu and a positive memory.
    fn add(&mut self, list: &Value) -> bool {
        let mut found = (false, false);
        for (name, total, seen) in [
            ("cpu", &mut self.cpu, &mut found.0),
            ("memory", &mut self.memory, &mut found.1),
        ] {
            let nanos = Quantity::from_value(&list[name]).map(|q| q.nanos());
            if let Some(nanos) = nanos.filter(|n| *n > 0) {
                *total = Some(total.unwrap_or(0).saturating_add(nanos));
                *seen = true;
            }
        }
        found.0 && found.1
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn len(&self) -> usize {
        usize::from(self.cpu.is_some()) + usize::from(self.memory.is_some())
    }
}

/// What the namespace strategy adds to a new namespace: the `kubernetes` finalizer, phase
/// Active, and the name label (`Canonicalize`, for a name generated after decoding; a named one
/// has it from [`on_decode`] already).
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
    fn empty_protocols_and_grpc_services_take_their_markers_defaults() {
        let mut spec = json!({"containers": [{"name": "c", "image": "i",
            "ports": [{"containerPort": 80, "protocol": ""}],
            "livenessProbe": {"grpc": {"port": 9000}}}],
            "volumes": [{"name": "scratch"}]});
        pod_spec::default_pod_spec(&mut spec);
        let c = &spec["containers"][0];
        assert_eq!(c["ports"][0]["protocol"], "TCP");
        assert_eq!(
            c["livenessProbe"]["grpc"],
            json!({"port": 9000, "service": ""})
        );
        assert_eq!(
            spec["volumes"][0],
            json!({"name": "scratch", "emptyDir": {}})
        );
        let mut service = json!({"ports": [{"port": 80, "protocol": ""}]});
        core::service(service.as_object_mut().unwrap());
        assert_eq!(service["ports"][0]["protocol"], "TCP");
    }

    /// A pod's decode-time defaults are idempotent: decoding a decoded pod changes nothing. The
    /// server relies on it to leave alone a spec it stored as its decode left it
    /// (`VersionMemo::pod_spec_decoded`).
    #[rstest::rstest]
    #[case::bare(json!({"containers": [{"name": "c", "image": "i"}]}))]
    #[case::limits_only(json!({"containers": [{"name": "c", "image": "i:1", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
        "initContainers": [{"name": "i", "image": "i", "resources": {"limits": {"memory": "64Mi"}, "requests": {}}}]}))]
    #[case::host_network(json!({"hostNetwork": true, "containers": [{"name": "c", "image": "i",
        "ports": [{"containerPort": 8080}, {"containerPort": 9090, "hostPort": 19090}, {"containerPort": 1, "hostPort": 0, "protocol": ""}]}]}))]
    #[case::probes_and_hooks(json!({"containers": [{"name": "c", "image": "i:latest",
        "livenessProbe": {"httpGet": {"port": 80}}, "readinessProbe": {"grpc": {"port": 9000}},
        "startupProbe": {"exec": {"command": ["true"]}, "periodSeconds": 3},
        "lifecycle": {"preStop": {"httpGet": {"port": 8080}}},
        "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}, {"name": "V", "value": "x"}]}],
        "ephemeralContainers": [{"name": "debug", "image": "busybox"}]}))]
    #[case::volumes(json!({"containers": [{"name": "c", "image": "i"}], "volumes": [
        {"name": "scratch"},
        {"name": "s", "secret": {"secretName": "s"}},
        {"name": "m", "configMap": {"name": "m", "defaultMode": 256}},
        {"name": "h", "hostPath": {"path": "/x"}},
        {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
        {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}},
            {"downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}}]}},
        {"name": "info", "downwardAPI": {"items": [{"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
        {"name": "iscsi", "iscsi": {"targetPortal": "t", "iqn": "q", "lun": 0}},
        {"name": "rbd", "rbd": {"monitors": ["m"], "image": "i"}}]}))]
    fn decoding_a_decoded_pod_changes_nothing(#[case] spec: Value) {
        let pods = info("", "Pod");
        let mut once = json!({"metadata": {"name": "p"}, "spec": spec});
        on_decode(&pods, &mut once);
        let mut twice = once.clone();
        on_decode(&pods, &mut twice);
        assert_eq!(twice, once);
    }

    #[test]
    fn pod_defaults_match_a_real_server() {
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}, {"name": "d", "image": "busybox:1.36"}]}});
        on_decode(&info("", "Pod"), &mut pod);
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

    /// Go decodes a pod sent without a spec with the zero spec and defaults it; ours has none
    /// after decoding, so the create gives it the defaulted zero spec.
    #[test]
    fn a_pod_created_without_a_spec_has_the_zero_specs_defaults() {
        let mut pod = json!({"metadata": {"name": "p"}});
        on_decode(&info("", "Pod"), &mut pod);
        default_pod(&mut pod, "abcde");
        let spec = &pod["spec"];
        assert_eq!(spec["dnsPolicy"], "ClusterFirst");
        assert_eq!(spec["restartPolicy"], "Always");
        assert_eq!(spec["schedulerName"], "default-scheduler");
        assert_eq!(spec["terminationGracePeriodSeconds"], 30);
        assert_eq!(spec["volumes"][0]["name"], "kube-api-access-abcde");
    }

    #[test]
    fn a_decoded_pod_requests_what_it_limits_and_a_template_does_not() {
        let spec = json!({"containers": [qos_tests::resources(json!({"cpu": "250m"}), json!({"cpu": "1", "memory": "1Gi"}))],
                          "initContainers": [{"name": "i", "resources": {"limits": {"memory": "64Mi"}}}]});
        let mut pod = json!({"spec": spec});
        on_decode(&info("", "Pod"), &mut pod);
        assert_eq!(
            pod["spec"]["containers"][0]["resources"]["requests"],
            json!({"cpu": "250m", "memory": "1Gi"})
        );
        assert_eq!(
            pod["spec"]["initContainers"][0]["resources"]["requests"],
            json!({"memory": "64Mi"})
        );
        let mut empty_limits = json!({"spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {}}}]}});
        on_decode(&info("", "Pod"), &mut empty_limits);
        assert!(empty_limits["spec"]["containers"][0]["resources"]
            .get("requests")
            .is_none());
        // Created, the limits-only pod is then guaranteed as on a real server.
        let mut limits_only = json!({"spec": {"containers": [qos_tests::resources(json!(null), json!({"cpu": "1", "memory": "1Gi"}))]}});
        on_decode(&info("", "Pod"), &mut limits_only);
        default_pod(&mut limits_only, "x");
        assert_eq!(limits_only["status"]["qosClass"], "Guaranteed");
        // `SetDefaults_Pod` is the pod's own: a template's containers keep no requests.
        let mut deployment = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1"}}}]}}}});
        on_decode(&info("apps", "Deployment"), &mut deployment);
        assert!(
            deployment["spec"]["template"]["spec"]["containers"][0]["resources"]
                .get("requests")
                .is_none()
        );
        assert!(deployment["spec"]["template"]["spec"]
            .get("enableServiceLinks")
            .is_none());
    }

    #[test]
    fn a_decoded_pod_gets_service_links_and_host_network_ports() {
        let mut pod = json!({"spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "i",
            "ports": [{"containerPort": 8080}, {"containerPort": 9090, "hostPort": 19090}]}]}});
        on_decode(&info("", "Pod"), &mut pod);
        assert_eq!(pod["spec"]["enableServiceLinks"], true);
        let ports = &pod["spec"]["containers"][0]["ports"];
        assert_eq!(ports[0]["hostPort"], 8080);
        assert_eq!(ports[1]["hostPort"], 19090);
        // Off stays off; without the host's network no host port is made up.
        let mut pod = json!({"spec": {"enableServiceLinks": false, "containers": [{"name": "c", "image": "i",
            "ports": [{"containerPort": 8080}]}]}});
        on_decode(&info("", "Pod"), &mut pod);
        assert_eq!(pod["spec"]["enableServiceLinks"], false);
        assert!(pod["spec"]["containers"][0]["ports"][0]
            .get("hostPort")
            .is_none());
    }

    #[test]
    fn hooks_ephemeral_containers_and_volume_sources_are_defaulted() {
        let mut pod = json!({"spec": {
        "containers": [{"name": "c", "image": "i:1",
            "lifecycle": {"preStop": {"httpGet": {"port": 8080}}, "postStart": {"exec": {"command": ["true"]}}}}],
        "ephemeralContainers": [{"name": "debug", "image": "busybox"}],
        "volumes": [
            {"name": "token", "projected": {"sources": [
                {"serviceAccountToken": {"path": "t"}},
                {"downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}}]}},
            {"name": "info", "downwardAPI": {"items": [{"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]}}
        ]}});
        on_decode(&info("", "Pod"), &mut pod);
        let spec = &pod["spec"];
        assert_eq!(
            spec["containers"][0]["lifecycle"]["preStop"]["httpGet"],
            json!({"port": 8080, "path": "/", "scheme": "HTTP"})
        );
        assert!(spec["containers"][0]["lifecycle"]["postStart"]
            .get("httpGet")
            .is_none());
        let debug = &spec["ephemeralContainers"][0];
        assert_eq!(debug["imagePullPolicy"], "Always");
        assert_eq!(debug["terminationMessagePath"], "/dev/termination-log");
        let sources = &spec["volumes"][0]["projected"]["sources"];
        assert_eq!(sources[0]["serviceAccountToken"]["expirationSeconds"], 3600);
        assert_eq!(
            sources[1]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"],
            "v1"
        );
        assert_eq!(spec["volumes"][0]["projected"]["defaultMode"], 420);
        assert_eq!(
            spec["volumes"][1]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"],
            "v1"
        );
    }

    #[test]
    fn claim_templates_are_defaulted_as_claims() {
        let mut set = json!({"spec": {"serviceName": "s", "template": {"spec": {"containers": [],
            "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}},
                                     {"metadata": {"name": "raw"}, "spec": {"volumeMode": "Block"}}]}});
        on_decode(&info("apps", "StatefulSet"), &mut set);
        let templates = &set["spec"]["volumeClaimTemplates"];
        assert_eq!(templates[0]["spec"]["volumeMode"], "Filesystem");
        assert_eq!(templates[0]["status"], json!({"phase": "Pending"}));
        assert_eq!(templates[1]["spec"]["volumeMode"], "Block");
        assert_eq!(
            set["spec"]["template"]["spec"]["volumes"][0]["ephemeral"]["volumeClaimTemplate"]
                ["spec"]["volumeMode"],
            "Filesystem"
        );
    }

    #[test]
    fn core_kinds_are_defaulted_on_decode() {
        let decoded = |kind: &str, mut object: Value| {
            on_decode(&info("", kind), &mut object);
            object
        };
        assert_eq!(decoded("Secret", json!({"type": ""}))["type"], "Opaque");
        assert_eq!(
            decoded("Secret", json!({"type": "kubernetes.io/tls"}))["type"],
            "kubernetes.io/tls"
        );
        let node = decoded("Node", json!({"status": {"capacity": {"cpu": "2"}}}));
        assert_eq!(node["status"]["allocatable"], json!({"cpu": "2"}));
        let node = decoded(
            "Node",
            json!({"status": {"capacity": {"cpu": "2"}, "allocatable": {"cpu": "1"}}}),
        );
        assert_eq!(node["status"]["allocatable"], json!({"cpu": "1"}));
        let empty = decoded("Node", json!({"status": {"capacity": {}}}));
        assert!(empty["status"].get("allocatable").is_none());
        let pv = decoded(
            "PersistentVolume",
            json!({"spec": {"capacity": {"storage": "1Gi"}}}),
        );
        assert_eq!(pv["status"]["phase"], "Pending");
        assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
        assert_eq!(pv["spec"]["volumeMode"], "Filesystem");
        let claim = decoded(
            "PersistentVolumeClaim",
            json!({"spec": {"volumeMode": "Block"}, "status": {"phase": "Bound"}}),
        );
        assert_eq!(claim["spec"]["volumeMode"], "Block");
        assert_eq!(claim["status"]["phase"], "Bound");
        let endpoints = decoded(
            "Endpoints",
            json!({"subsets": [{"ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}]}]}),
        );
        assert_eq!(endpoints["subsets"][0]["ports"][0]["protocol"], "TCP");
        assert_eq!(endpoints["subsets"][0]["ports"][1]["protocol"], "UDP");
        let limits = decoded(
            "LimitRange",
            json!({"spec": {"limits": [
                {"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "default": {"memory": "512Mi"}, "min": {"cpu": "100m", "ephemeral-storage": "1Gi"}},
                {"type": "Container", "min": {"cpu": "50m"}},
                {"type": "Pod", "max": {"cpu": "4"}}]}}),
        );
        let items = &limits["spec"]["limits"];
        assert_eq!(items[0]["default"], json!({"cpu": "2", "memory": "512Mi"}));
        assert_eq!(
            items[0]["defaultRequest"],
            json!({"cpu": "2", "memory": "512Mi", "ephemeral-storage": "1Gi"})
        );
        assert!(items[1].get("default").is_none(), "nothing to fill it with");
        assert_eq!(items[1]["defaultRequest"], json!({"cpu": "50m"}));
        assert!(items[2].get("default").is_none(), "only container items");
    }

    use crate::resource::builtin_info as info;

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
            on_decode(&info("", "Pod"), &mut v);
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

/// The QoS table, in a module of its own: the glob import of the parent's items would bring its
/// `core` module in, which the `rstest` expansion takes for the `core` crate.
#[cfg(test)]
mod qos_tests {
    use serde_json::{json, Value};

    use super::qos_class;

    pub(super) fn resources(requests: Value, limits: Value) -> Value {
        json!({"resources": {"requests": requests, "limits": limits}})
    }

    #[rstest::rstest]
    #[case::nothing(json!({"containers": [{}]}), "BestEffort")]
    #[case::equal_requests_and_limits(json!({"containers": [resources(json!({"cpu": "1", "memory": "1Gi"}), json!({"cpu": "1000m", "memory": "1024Mi"}))]}), "Guaranteed")]
    #[case::request_only(json!({"containers": [resources(json!({"cpu": "1"}), json!(null))]}), "Burstable")]
    // Before `SetDefaults_Pod` fills requests from limits, the requests are missing.
    #[case::limits_only_undefaulted(json!({"containers": [resources(json!(null), json!({"cpu": "1", "memory": "1Gi"}))]}), "Burstable")]
    #[case::cpu_limit_only(json!({"containers": [resources(json!({"cpu": "1"}), json!({"cpu": "1"}))]}), "Burstable")]
    // Only cpu and memory count; zero quantities do not.
    #[case::ephemeral_storage_only(json!({"containers": [resources(json!({"ephemeral-storage": "1Gi"}), json!({"ephemeral-storage": "1Gi"}))]}), "BestEffort")]
    #[case::zero_quantities(json!({"containers": [resources(json!({"cpu": "0", "memory": "0"}), json!(null))]}), "BestEffort")]
    // Init containers count, and a container without limits makes the pod burstable.
    #[case::init_container_without_limits(json!({"containers": [resources(json!({"cpu": "1", "memory": "1Gi"}), json!({"cpu": "1", "memory": "1Gi"}))], "initContainers": [resources(json!({"cpu": "100m"}), json!(null))]}), "Burstable")]
    #[case::init_container_requests_only(json!({"containers": [{}], "initContainers": [resources(json!({"memory": "64Mi"}), json!(null))]}), "Burstable")]
    // Requests and limits are summed over containers before they are compared.
    #[case::summed(json!({"containers": [resources(json!({"cpu": "1", "memory": "1Gi"}), json!({"cpu": "1", "memory": "1Gi"})), resources(json!({"cpu": "500m", "memory": "1Gi"}), json!({"cpu": "500m", "memory": "1Gi"}))]}), "Guaranteed")]
    #[case::unequal(json!({"containers": [resources(json!({"cpu": "500m", "memory": "1Gi"}), json!({"cpu": "1", "memory": "1Gi"}))]}), "Burstable")]
    // Pod-level resources, when set, decide alone.
    #[case::pod_level(json!({"resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}, "containers": [{}]}), "Guaranteed")]
    #[case::pod_level_requests_only(json!({"resources": {"requests": {"cpu": "1"}}, "containers": [resources(json!({"cpu": "1", "memory": "1Gi"}), json!({"cpu": "1", "memory": "1Gi"}))]}), "Burstable")]
    fn qos_classes(#[case] spec: Value, #[case] expected: &str) {
        assert_eq!(qos_class(&spec), expected);
    }
}
