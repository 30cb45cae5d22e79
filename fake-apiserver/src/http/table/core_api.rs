//! The core group's tables, but the pod's ([`super::pod`]) and the replication controller's
//! ([`super::workloads`]): `printNode` (`getNodeInternalIP`, `getNodeExternalIP`,
//! `findNodeRoles`), `printNamespace`, `printConfigMap`, `printSecret`, `printServiceAccount`,
//! `printPodTemplate`, `printService` (`getServiceExternalIP`, `loadBalancerStatusStringer`,
//! `makePortString`), `printEndpoints` (`formatEndpoints`), `printPersistentVolume`,
//! `printPersistentVolumeClaim` (`helper.GetAccessModesAsString`, `GetPersistentVolumeClass`,
//! `GetPersistentVolumeClaimClass`), `printEvent` (`formatEventSource`),
//! `printResourceQuota` and `printComponentStatus`. Events of `events.k8s.io/v1` print through `printEvent` too (the real
//! server stores both as the internal `core.Event`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::{
    age_col, arr, col, container_cols, format_labels, int_of, int_string_col, name_col, or_none,
    or_unset, quantity, since, since_time, str_of, text, timed, timestamp, Cell, Column, Now,
    NAME_DESCRIPTION,
};

/// The core kinds' columns, `None` for a kind this module does not print.
pub(super) fn columns(group: &str, kind: &str) -> Option<Vec<Column>> {
    if (group, kind) == ("events.k8s.io", "Event") {
        return Some(event());
    }
    if !group.is_empty() {
        return None;
    }
    Some(match kind {
        "Pod" => super::pod::columns(),
        "Node" => node(),
        "Namespace" => vec![
            name_col(),
            col(
                "Status",
                "string",
                "The status of the namespace",
                text(|o| str_of(&o["status"]["phase"]).into()),
            ),
            age_col(),
        ],
        "ComponentStatus" => component_status(),
        "ConfigMap" => vec![
            name_col(),
            int_string_col(
                "Data",
                "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
                |o| count(&o["data"]) + count(&o["binaryData"]),
            ),
            age_col(),
        ],
        "Secret" => vec![
            name_col(),
            col(
                "Type",
                "string",
                "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
                text(|o| str_of(&o["type"]).into()),
            ),
            int_string_col(
                "Data",
                "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
                |o| count(&o["data"]),
            ),
            age_col(),
        ],
        "ServiceAccount" => vec![
            name_col(),
            int_string_col(
                "Secrets",
                "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The \"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret",
                |o| arr(&o["secrets"]).len() as i64,
            ),
            age_col(),
        ],
        "PodTemplate" => {
            // `podTemplateColumnDefinitions`: the container columns are not wide here, and
            // there is no age.
            let [names, images] = container_cols("/template/spec/containers");
            vec![
                name_col(),
                names,
                images,
                col(
                    "Pod Labels",
                    "string",
                    "The labels for the pod template.",
                    text(|o| format_labels(&o["template"]["metadata"]["labels"])),
                ),
            ]
        }
        "Service" => service(),
        "Endpoints" => vec![
            name_col(),
            col(
                "Endpoints",
                "string",
                "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.",
                text(format_endpoints),
            ),
            age_col(),
        ],
        "PersistentVolume" => persistent_volume(),
        "PersistentVolumeClaim" => persistent_volume_claim(),
        "Event" => event(),
        "ResourceQuota" => vec![
            name_col(),
            col(
                "Request",
                "string",
                "Request represents a minimum amount of cpu/memory that a container may consume.",
                text(|o| resource_quota(o, false)),
            ),
            col(
                "Limit",
                "string",
                "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
                text(|o| resource_quota(o, true)),
            ),
            age_col(),
        ],
        _ => return None,
    })
}

/// The number of keys of a map field.
fn count(map: &Value) -> i64 {
    map.as_object().map_or(0, |m| m.len() as i64)
}

/// `nodeColumnDefinitions` and `printNode`.
fn node() -> Vec<Column> {
    let addresses = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";
    let info_or_unknown = |field: &'static str| {
        text(move |o| match str_of(&o["status"]["nodeInfo"][field]) {
            "" => "<unknown>".into(),
            v => v.into(),
        })
    };
    vec![
        name_col(),
        col("Status", "string", "The status of the node", text(node_status)),
        col("Roles", "string", "The roles of the node", text(node_roles)),
        age_col(),
        col(
            "Version",
            "string",
            "Kubelet Version reported by the node.",
            text(|o| str_of(&o["status"]["nodeInfo"]["kubeletVersion"]).into()),
        ),
        col(
            "Internal-IP",
            "string",
            addresses,
            text(|o| node_address(o, "InternalIP")),
        )
        .wide(),
        col(
            "External-IP",
            "string",
            addresses,
            text(|o| node_address(o, "ExternalIP")),
        )
        .wide(),
        col(
            "OS-Image",
            "string",
            "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
            info_or_unknown("osImage"),
        )
        .wide(),
        col(
            "Kernel-Version",
            "string",
            "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
            info_or_unknown("kernelVersion"),
        )
        .wide(),
        col(
            "Container-Runtime",
            "string",
            "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
            info_or_unknown("containerRuntimeVersion"),
        )
        .wide(),
    ]
}

/// `printNode`'s status: the `Ready` condition (the last of that type, as the condition map
/// keeps it) as `Ready` or `NotReady`, `Unknown` without one; `SchedulingDisabled` appended for
/// a cordoned node.
fn node_status(node: &Value) -> String {
    let ready = arr(&node["status"]["conditions"])
        .iter()
        .rev()
        .find(|c| c["type"] == "Ready");
    let mut status = vec![match ready {
        Some(c) if c["status"] == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if node["spec"]["unschedulable"] == true {
        status.push("SchedulingDisabled");
    }
    status.join(",")
}

/// `findNodeRoles`: the `node-role.kubernetes.io/<role>` labels and the `kubernetes.io/role`
/// label's value, sorted; `<none>` when there are none.
fn node_roles(node: &Value) -> String {
    let mut roles = BTreeSet::new();
    for (key, value) in node["metadata"]["labels"].as_object().into_iter().flatten() {
        if let Some(role) = key.strip_prefix("node-role.kubernetes.io/") {
            if !role.is_empty() {
                roles.insert(role);
            }
        } else if key == "kubernetes.io/role" && !str_of(value).is_empty() {
            roles.insert(str_of(value));
        }
    }
    or_none(&roles.into_iter().collect::<Vec<_>>().join(","))
}

/// The first address of the type (`getNodeInternalIP`, `getNodeExternalIP`), `<none>` if none.
fn node_address(node: &Value, kind: &str) -> String {
    arr(&node["status"]["addresses"])
        .iter()
        .find(|a| a["type"] == kind)
        .map_or_else(|| "<none>".into(), |a| str_of(&a["address"]).into())
}

/// `serviceColumnDefinitions` and `printService`.
fn service() -> Vec<Column> {
    vec![
        name_col(),
        col(
            "Type",
            "string",
            "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types",
            text(|o| str_of(&o["spec"]["type"]).into()),
        ),
        col(
            "Cluster-IP",
            "string",
            "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
            text(|o| match arr(&o["spec"]["clusterIPs"]).first() {
                Some(ip) => str_of(ip).into(),
                None => "<none>".into(),
            }),
        ),
        col(
            "External-IP",
            "string",
            "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.",
            text(service_external_ip),
        ),
        col(
            "Port(s)",
            "string",
            "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
            text(service_ports),
        ),
        age_col(),
        col(
            "Selector",
            "string",
            "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/",
            text(|o| format_labels(&o["spec"]["selector"])),
        )
        .wide(),
    ]
}

/// The load balancer's ingress points (IP, else hostname), sorted and without duplicates
/// (`loadBalancerStatusStringer`, `ingressLoadBalancerStatusStringer`), comma-joined. The real
/// server prints tables wide, so the list is never clipped.
pub(super) fn load_balancer_ingress(status: &Value) -> String {
    let points: BTreeSet<&str> = arr(&status["loadBalancer"]["ingress"])
        .iter()
        .filter_map(|i| match (str_of(&i["ip"]), str_of(&i["hostname"])) {
            ("", "") => None,
            ("", host) => Some(host),
            (ip, _) => Some(ip),
        })
        .collect();
    points.into_iter().collect::<Vec<_>>().join(",")
}

/// `getServiceExternalIP`.
fn service_external_ip(svc: &Value) -> String {
    let spec = &svc["spec"];
    let external: Vec<&str> = arr(&spec["externalIPs"]).iter().map(str_of).collect();
    match str_of(&spec["type"]) {
        "ClusterIP" | "NodePort" => or_none(&external.join(",")),
        "LoadBalancer" => {
            let lb = load_balancer_ingress(&svc["status"]);
            if !external.is_empty() {
                let mut results: Vec<&str> = Vec::new();
                if !lb.is_empty() {
                    results.extend(lb.split(','));
                }
                results.extend(external);
                results.join(",")
            } else if !lb.is_empty() {
                lb
            } else {
                "<pending>".into()
            }
        }
        "ExternalName" => str_of(&spec["externalName"]).into(),
        _ => "<unknown>".into(),
    }
}

/// `makePortString`: `port/protocol`, `port:nodePort/protocol`; `<none>` without ports.
fn service_ports(svc: &Value) -> String {
    let ports: Vec<String> = arr(&svc["spec"]["ports"])
        .iter()
        .map(|p| {
            let protocol = str_of(&p["protocol"]);
            match int_of(&p["nodePort"]) {
                n if n > 0 => format!("{}:{n}/{protocol}", int_of(&p["port"])),
                _ => format!("{}/{protocol}", int_of(&p["port"])),
            }
        })
        .collect();
    or_none(&ports.join(","))
}

/// `net.JoinHostPort`: IPv6 hosts in brackets.
fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// `formatEndpoints(endpoints, nil)`: up to three `ip:port` (or bare IPs of a subset without
/// ports), then `+ N more...`; `<none>` without subsets.
fn format_endpoints(endpoints: &Value) -> String {
    let subsets = arr(&endpoints["subsets"]);
    if subsets.is_empty() {
        return "<none>".into();
    }
    const MAX: usize = 3;
    let mut list: Vec<String> = Vec::new();
    let mut more = false;
    let mut count = 0;
    for subset in subsets {
        let addresses = arr(&subset["addresses"]);
        let ports = arr(&subset["ports"]);
        if ports.is_empty() {
            // Headless services may have no ports.
            count += addresses.len();
            for address in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(str_of(&address["ip"]).into());
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            for address in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(join_host_port(
                    str_of(&address["ip"]),
                    int_of(&port["port"]),
                ));
            }
        }
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", count - MAX)
    } else {
        joined
    }
}

/// `helper.GetAccessModesAsString`: `RWO`, `ROX`, `RWX`, `RWOP` in that order, once each.
fn access_modes(modes: &Value) -> String {
    let modes = arr(modes);
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| modes.iter().any(|m| m == *mode))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The phase, `Terminating` once deletion started (PV and PVC).
fn volume_phase(o: &Value) -> String {
    if o["metadata"]["deletionTimestamp"].is_null() {
        str_of(&o["status"]["phase"]).into()
    } else {
        "Terminating".into()
    }
}

/// A volume's or claim's storage class (`GetPersistentVolumeClass`,
/// `GetPersistentVolumeClaimClass`): the beta `volume.beta.kubernetes.io/storage-class`
/// annotation when set, else `spec.storageClassName`.
fn storage_class(o: &Value) -> String {
    o["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"]
        .as_str()
        .unwrap_or_else(|| str_of(&o["spec"]["storageClassName"]))
        .into()
}

/// `persistentVolumeColumnDefinitions` and `printPersistentVolume`.
fn persistent_volume() -> Vec<Column> {
    vec![
        name_col(),
        col(
            "Capacity",
            "string",
            "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity",
            text(|o| quantity(&o["spec"]["capacity"]["storage"])),
        ),
        col(
            "Access Modes",
            "string",
            "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes",
            text(|o| access_modes(&o["spec"]["accessModes"])),
        ),
        col(
            "Reclaim Policy",
            "string",
            "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming",
            text(|o| str_of(&o["spec"]["persistentVolumeReclaimPolicy"]).into()),
        ),
        col(
            "Status",
            "string",
            "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase",
            text(volume_phase),
        ),
        col(
            "Claim",
            "string",
            "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding",
            text(|o| {
                let claim = &o["spec"]["claimRef"];
                if claim.is_null() {
                    String::new()
                } else {
                    format!("{}/{}", str_of(&claim["namespace"]), str_of(&claim["name"]))
                }
            }),
        ),
        col(
            "StorageClass",
            "string",
            "StorageClass of the pv",
            text(storage_class),
        ),
        col(
            "VolumeAttributesClass",
            "string",
            "VolumeAttributesClass of the pv",
            text(|o| or_unset(&o["spec"]["volumeAttributesClassName"])),
        ),
        col(
            "Reason",
            "string",
            "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.",
            text(|o| str_of(&o["status"]["reason"]).into()),
        ),
        age_col(),
        col(
            "VolumeMode",
            "string",
            "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.",
            text(|o| or_unset(&o["spec"]["volumeMode"])),
        )
        .wide(),
    ]
}

/// `persistentVolumeClaimColumnDefinitions` and `printPersistentVolumeClaim`: capacity and
/// access modes are the bound volume's, empty while unbound.
fn persistent_volume_claim() -> Vec<Column> {
    let bound = |o: &Value| !str_of(&o["spec"]["volumeName"]).is_empty();
    vec![
        name_col(),
        col(
            "Status",
            "string",
            "phase represents the current phase of PersistentVolumeClaim.",
            text(volume_phase),
        ),
        col(
            "Volume",
            "string",
            "volumeName is the binding reference to the PersistentVolume backing this claim.",
            text(|o| str_of(&o["spec"]["volumeName"]).into()),
        ),
        col(
            "Capacity",
            "string",
            "capacity represents the actual resources of the underlying volume.",
            text(move |o| {
                if bound(o) {
                    quantity(&o["status"]["capacity"]["storage"])
                } else {
                    String::new()
                }
            }),
        ),
        col(
            "Access Modes",
            "string",
            "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1",
            text(move |o| {
                if bound(o) {
                    access_modes(&o["status"]["accessModes"])
                } else {
                    String::new()
                }
            }),
        ),
        col(
            "StorageClass",
            "string",
            "StorageClass of the pvc",
            text(storage_class),
        ),
        col(
            "VolumeAttributesClass",
            "string",
            "VolumeAttributesClass of the pvc",
            text(|o| or_unset(&o["spec"]["volumeAttributesClassName"])),
        ),
        age_col(),
        col(
            "VolumeMode",
            "string",
            "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.",
            text(|o| or_unset(&o["spec"]["volumeMode"])),
        )
        .wide(),
    ]
}

/// A field of an event under its core name, else its `events.k8s.io/v1` name (`regarding` for
/// `involvedObject`, `note` for `message`, `deprecatedCount` for `count`, ...).
fn event_field<'a>(event: &'a Value, core: &str, events_v1: &str) -> &'a Value {
    match &event[core] {
        Value::Null => &event[events_v1],
        v => v,
    }
}

/// `printEvent`'s first seen: `firstTimestamp`, else `eventTime`.
fn event_first_seen(event: &Value, now: Now) -> String {
    match timestamp(event_field(
        event,
        "firstTimestamp",
        "deprecatedFirstTimestamp",
    )) {
        Some(t) => since_time(t, now),
        None => since(&event["eventTime"], now),
    }
}

/// `printEvent`'s last seen: the series' last observation, else `lastTimestamp`, else the first
/// seen.
fn event_last_seen(event: &Value, now: Now) -> String {
    if event["series"].is_object() {
        return since(&event["series"]["lastObservedTime"], now);
    }
    match timestamp(event_field(
        event,
        "lastTimestamp",
        "deprecatedLastTimestamp",
    )) {
        Some(t) => since_time(t, now),
        None => event_first_seen(event, now),
    }
}

/// `printEvent`'s count: the series' count, else `count`, and 1 for a singleton event.
fn event_count(event: &Value) -> i64 {
    if event["series"].is_object() {
        return int_of(&event["series"]["count"]);
    }
    match int_of(event_field(event, "count", "deprecatedCount")) {
        0 => 1,
        n => n,
    }
}

/// `kind/name` of the involved object, lower-case kind.
fn event_object(event: &Value) -> String {
    let object = event_field(event, "involvedObject", "regarding");
    let kind = str_of(&object["kind"]).to_lowercase();
    match str_of(&object["name"]) {
        "" => kind,
        name => format!("{kind}/{name}"),
    }
}

/// `formatEventSource`: the component (else the reporting controller), then `, ` and the host
/// (else the reporting instance) when there is one.
fn event_source(event: &Value) -> String {
    let source = event_field(event, "source", "deprecatedSource");
    let first_non_empty = |a: &'static str, b: &Value| -> String {
        match str_of(&source[a]) {
            "" => str_of(b).into(),
            v => v.into(),
        }
    };
    let component = first_non_empty(
        "component",
        event_field(event, "reportingComponent", "reportingController"),
    );
    let instance = first_non_empty("host", &event["reportingInstance"]);
    if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    }
}

/// `eventColumnDefinitions` and `printEvent`: no age; the name comes last, and wide.
fn event() -> Vec<Column> {
    vec![
        col(
            "Last Seen",
            "string",
            "The time at which the most recent occurrence of this event was recorded.",
            timed(event_last_seen),
        ),
        col(
            "Type",
            "string",
            "Type of this event (Normal, Warning), new types could be added in the future",
            text(|o| str_of(&o["type"]).into()),
        ),
        col(
            "Reason",
            "string",
            "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
            text(|o| str_of(&o["reason"]).into()),
        ),
        col(
            "Object",
            "string",
            "The object that this event is about.",
            text(event_object),
        ),
        col(
            "Subobject",
            "string",
            "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.",
            text(|o| str_of(&event_field(o, "involvedObject", "regarding")["fieldPath"]).into()),
        )
        .wide(),
        col(
            "Source",
            "string",
            "The component reporting this event. Should be a short machine understandable string.",
            text(event_source),
        )
        .wide(),
        col(
            "Message",
            "string",
            "A human-readable description of the status of this operation.",
            text(|o| str_of(event_field(o, "message", "note")).trim().into()),
        ),
        col(
            "First Seen",
            "string",
            "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
            timed(event_first_seen),
        )
        .wide(),
        int_string_col(
            "Count",
            "The number of times this event has occurred.",
            event_count,
        )
        .wide(),
        col("Name", "string", NAME_DESCRIPTION, Cell::Name).wide(),
    ]
}

/// `printResourceQuota`: `resource: used/hard` for each hard limit, sorted by name; the
/// `limits.*` ones in the limit column, the rest in the request column.
fn resource_quota(quota: &Value, limits: bool) -> String {
    let status = &quota["status"];
    let mut resources: Vec<&String> = status["hard"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    resources.sort();
    resources
        .into_iter()
        .filter(|r| r.starts_with("limits.") == limits)
        .map(|r| {
            format!(
                "{r}: {}/{}",
                quantity(&status["used"][r.as_str()]),
                quantity(&status["hard"][r.as_str()])
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `printComponentStatus`: the first `Healthy` condition says `Healthy` (status `True`) or
/// `Unhealthy` (anything else), with its message and error; no such condition is `Unknown`.
fn component_status() -> Vec<Column> {
    let healthy = |o: &Value| -> Option<Value> {
        arr(&o["conditions"])
            .iter()
            .find(|c| str_of(&c["type"]) == "Healthy")
            .cloned()
    };
    vec![
        name_col(),
        col(
            "Status",
            "string",
            "Status of the component conditions",
            text(move |o| match healthy(o) {
                Some(c) if str_of(&c["status"]) == "True" => "Healthy".into(),
                Some(_) => "Unhealthy".into(),
                None => "Unknown".into(),
            }),
        ),
        col(
            "Message",
            "string",
            "Message of the component conditions",
            text(move |o| {
                healthy(o)
                    .map(|c| str_of(&c["message"]).to_string())
                    .unwrap_or_default()
            }),
        ),
        col(
            "Error",
            "string",
            "Error of the component conditions",
            text(move |o| {
                healthy(o)
                    .map(|c| str_of(&c["error"]).to_string())
                    .unwrap_or_default()
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::tests::table_of;
    use rstest::rstest;
    use serde_json::{json, Value};

    /// The columns `printers.go` gives these kinds (`*` marks a wide one), and their cells.
    #[rstest]
    #[case::node("nodes", json!({
        "metadata": {"labels": {"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/": "x", "kubernetes.io/role": "worker"}},
        "spec": {"unschedulable": true},
        "status": {"conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}],
            "addresses": [{"type": "Hostname", "address": "n"}, {"type": "InternalIP", "address": "10.0.0.1"}, {"type": "InternalIP", "address": "10.0.0.2"}],
            "nodeInfo": {"kubeletVersion": "v1.31.0", "osImage": "Ubuntu", "kernelVersion": "6.1", "containerRuntimeVersion": "containerd://1.7"}}}),
        &["Name", "Status", "Roles", "Age", "Version", "Internal-IP*", "External-IP*", "OS-Image*", "Kernel-Version*", "Container-Runtime*"],
        json!(["x", "Ready,SchedulingDisabled", "control-plane,worker", "60s", "v1.31.0", "10.0.0.1", "<none>", "Ubuntu", "6.1", "containerd://1.7"]))]
    #[case::node_not_ready(
        "nodes", json!({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}),
        &["Name", "Status", "Roles", "Age", "Version", "Internal-IP*", "External-IP*", "OS-Image*", "Kernel-Version*", "Container-Runtime*"],
        json!(["x", "NotReady", "<none>", "60s", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"]))]
    #[case::node_without_ready("nodes", json!({}),
        &["Name", "Status", "Roles", "Age", "Version", "Internal-IP*", "External-IP*", "OS-Image*", "Kernel-Version*", "Container-Runtime*"],
        json!(["x", "Unknown", "<none>", "60s", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"]))]
    #[case::namespace("namespaces", json!({"status": {"phase": "Active"}}),
        &["Name", "Status", "Age"], json!(["x", "Active", "60s"]))]
    #[case::config_map("configmaps", json!({"data": {"a": "1"}, "binaryData": {"b": "AA=="}}),
        &["Name", "Data", "Age"], json!(["x", 2, "60s"]))]
    #[case::secret("secrets", json!({"type": "Opaque", "data": {"a": "MQ==", "b": "Mg=="}}),
        &["Name", "Type", "Data", "Age"], json!(["x", "Opaque", 2, "60s"]))]
    #[case::service_account("serviceaccounts", json!({"secrets": [{"name": "s"}]}),
        &["Name", "Secrets", "Age"], json!(["x", 1, "60s"]))]
    #[case::pod_template("podtemplates", json!({"template": {"metadata": {"labels": {"app": "a"}},
        "spec": {"containers": [{"name": "a", "image": "busybox"}, {"name": "b", "image": "nginx:1"}]}}}),
        &["Name", "Containers", "Images", "Pod Labels"], json!(["x", "a,b", "busybox,nginx:1", "app=a"]))]
    #[case::service_cluster_ip("services", json!({"spec": {"type": "ClusterIP", "clusterIPs": ["10.96.0.10"],
        "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}], "selector": {"k8s-app": "dns"}}}),
        &["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector*"],
        json!(["x", "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP", "60s", "k8s-app=dns"]))]
    #[case::service_node_port("services", json!({"spec": {"type": "NodePort", "clusterIPs": ["10.96.0.11"], "externalIPs": ["1.2.3.4"],
        "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}]}}),
        &["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector*"],
        json!(["x", "NodePort", "10.96.0.11", "1.2.3.4", "80:30080/TCP", "60s", "<none>"]))]
    #[case::service_load_balancer_pending("services", json!({"spec": {"type": "LoadBalancer"}}),
        &["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector*"],
        json!(["x", "LoadBalancer", "<none>", "<pending>", "<none>", "60s", "<none>"]))]
    #[case::service_load_balancer("services", json!({"spec": {"type": "LoadBalancer", "externalIPs": ["9.9.9.9"]},
        "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}, {"ip": "5.6.7.8"}, {"ip": "5.6.7.8"}]}}}),
        &["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector*"],
        json!(["x", "LoadBalancer", "<none>", "5.6.7.8,lb.example.com,9.9.9.9", "<none>", "60s", "<none>"]))]
    #[case::service_external_name("services", json!({"spec": {"type": "ExternalName", "externalName": "db.example.com"}}),
        &["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector*"],
        json!(["x", "ExternalName", "<none>", "db.example.com", "<none>", "60s", "<none>"]))]
    #[case::endpoints("endpoints", json!({"subsets": [
        {"addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::2"}], "ports": [{"port": 80}, {"port": 443}]},
        {"addresses": [{"ip": "10.0.0.3"}]}]}),
        &["Name", "Endpoints", "Age"], json!(["x", "10.0.0.1:80,[fd00::2]:80,10.0.0.1:443 + 2 more...", "60s"]))]
    #[case::endpoints_headless("endpoints", json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}]}]}),
        &["Name", "Endpoints", "Age"], json!(["x", "10.0.0.1", "60s"]))]
    #[case::endpoints_none("endpoints", json!({}), &["Name", "Endpoints", "Age"], json!(["x", "<none>", "60s"]))]
    #[case::persistent_volume("persistentvolumes", json!({"spec": {"capacity": {"storage": "1536Mi"},
        "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain",
        "claimRef": {"namespace": "ns", "name": "c"}, "storageClassName": "fast", "volumeMode": "Filesystem"},
        "status": {"phase": "Bound"}}),
        &["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "VolumeAttributesClass", "Reason", "Age", "VolumeMode*"],
        json!(["x", "1536Mi", "RWO,RWX", "Retain", "Bound", "ns/c", "fast", "<unset>", "", "60s", "Filesystem"]))]
    #[case::persistent_volume_terminating("persistentvolumes", json!({
        "metadata": {"deletionTimestamp": "2024-01-01T00:00:30Z", "annotations": {"volume.beta.kubernetes.io/storage-class": "old"}},
        "spec": {"capacity": {"storage": "2000M"}, "storageClassName": "fast", "volumeAttributesClassName": "gold"},
        "status": {"phase": "Released", "reason": "Failed"}}),
        &["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "VolumeAttributesClass", "Reason", "Age", "VolumeMode*"],
        json!(["x", "2G", "", "", "Terminating", "", "old", "gold", "Failed", "60s", "<unset>"]))]
    #[case::pvc_bound("persistentvolumeclaims", json!({"spec": {"volumeName": "pv1", "storageClassName": "fast",
        "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Block"},
        "status": {"phase": "Bound", "capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteOncePod"]}}),
        &["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode*"],
        json!(["x", "Bound", "pv1", "2Gi", "RWOP", "fast", "<unset>", "60s", "Block"]))]
    #[case::pvc_pending("persistentvolumeclaims", json!({"spec": {"resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Pending", "capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteOnce"]}}),
        &["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode*"],
        json!(["x", "Pending", "", "", "", "", "<unset>", "60s", "<unset>"]))]
    #[case::resource_quota("resourcequotas", json!({"status": {
        "hard": {"pods": "10", "requests.cpu": "1", "limits.memory": "2Gi", "limits.cpu": "2000m"},
        "used": {"pods": "3", "requests.cpu": "500m", "limits.memory": "1024Mi"}}}),
        &["Name", "Request", "Limit", "Age"],
        json!(["x", "pods: 3/10, requests.cpu: 500m/1", "limits.cpu: 0/2, limits.memory: 1Gi/2Gi", "60s"]))]
    fn core_kinds_print_the_real_columns(
        #[case] plural: &str,
        #[case] object: Value,
        #[case] columns: &[&str],
        #[case] cells: Value,
    ) {
        let (names, got, _) = table_of(plural, object);
        assert_eq!(names, columns);
        assert_eq!(got, cells);
    }

    const EVENT_COLUMNS: &[&str] = &[
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "Subobject*",
        "Source*",
        "Message",
        "First Seen*",
        "Count*",
        "Name*",
    ];

    /// `printEvent`: last seen from the series, `lastTimestamp`, the first seen; count 1 for a
    /// singleton; the source's component and host, else the reporting controller and instance.
    #[rstest]
    #[case::core_event("events", json!({"metadata": {"name": "e"}, "type": "Warning", "reason": "BackOff",
        "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec.containers{c}"},
        "source": {"component": "kubelet", "host": "n1"}, "message": " Back-off restarting \n",
        "firstTimestamp": "2023-12-31T23:50:00Z", "lastTimestamp": "2024-01-01T00:00:00Z", "count": 3}),
        json!(["60s", "Warning", "BackOff", "pod/p", "spec.containers{c}", "kubelet, n1", "Back-off restarting", "11m", 3, "e"]))]
    #[case::series("events", json!({"metadata": {"name": "e"}, "type": "Normal", "reason": "R",
        "involvedObject": {"kind": "Node"}, "reportingComponent": "ctrl", "message": "m",
        "eventTime": "2023-12-31T23:56:00.000000Z", "series": {"count": 7, "lastObservedTime": "2024-01-01T00:00:30.000000Z"}}),
        json!(["30s", "Normal", "R", "node", "", "ctrl", "m", "5m", 7, "e"]))]
    #[case::singleton_without_times("events", json!({"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p"},
        "source": {}, "reportingInstance": "i"}),
        json!(["<unknown>", "", "", "pod/p", "", ", i", "", "<unknown>", 1, "e"]))]
    #[case::events_v1("events.events.k8s.io", json!({"metadata": {"name": "e"}, "type": "Normal", "reason": "Scheduled",
        "regarding": {"kind": "Pod", "name": "p"}, "note": "assigned", "reportingController": "default-scheduler",
        "reportingInstance": "sched-1", "eventTime": "2024-01-01T00:00:50.000000Z"}),
        json!(["10s", "Normal", "Scheduled", "pod/p", "", "default-scheduler, sched-1", "assigned", "10s", 1, "e"]))]
    #[case::events_v1_deprecated_fields("events.events.k8s.io", json!({"metadata": {"name": "e"},
        "regarding": {"kind": "Pod", "name": "p"}, "deprecatedSource": {"component": "kubelet"}, "deprecatedCount": 4,
        "deprecatedFirstTimestamp": "2023-12-31T23:00:00Z", "deprecatedLastTimestamp": "2024-01-01T00:00:58Z"}),
        json!(["2s", "", "", "pod/p", "", "kubelet", "", "61m", 4, "e"]))]
    fn events_print_last_seen_and_counts(
        #[case] plural: &str,
        #[case] object: Value,
        #[case] cells: Value,
    ) {
        let (names, got, t) = table_of(plural, object);
        assert_eq!(names, EVENT_COLUMNS);
        assert_eq!(got, cells);
        assert_eq!(t["columnDefinitions"][9]["format"], "name");
    }
}
