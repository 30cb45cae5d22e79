//! `ValidatePodSpec` and what it calls (`pkg/apis/core/validation/validation.go`): volumes and
//! their sources, containers (names, images, ports, env, mounts, resources, probes, lifecycle,
//! security context), init containers, DNS, affinity, topology spread, scheduling fields.
//!
//! Fields the real server always defaults before validating (`imagePullPolicy`,
//! `terminationMessagePolicy`, `dnsPolicy`, `terminationGracePeriodSeconds`, a probe's
//! thresholds, a field reference's `apiVersion`) are checked only when present: a client can not
//! make them empty on a real server, and the rules must not refuse what defaulting would fill.

use crate::rules::field_path::FieldPath;
use crate::rules::known_maps::{self, Check};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;

use serde_json::{short_bytes, Value};

use super::super::quantity::Quantity;
use super::super::{port_name_errors, selector, str_of};
use super::{is_config_map_key, tolerations};
use crate::rules::validation::{
    is_dns1123_label, is_dns1123_subdomain, is_label_value, is_qualified_name, validate_labels,
    Cause,
};

const MAX_INT32: i64 = i32::MAX as i64;
const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";
const FILE_MODE: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// What the spec is embedded in.
#[derive(Debug, Clone, Copy, Default)]
pub struct PodOpts<'a> {
    /// The spec is a Pod's own (`opts.ResourceIsPod`), not a template's.
    pub is_pod: bool,
    /// The pod's name, for generic ephemeral volumes' claim names.
    pub pod_name: Option<&'a str>,
}

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn present(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

/// `ValidatePodSpec`. `path` is the spec's path (`spec`, `spec.template.spec`).
pub fn validate(spec: &Value, path: &dyn Display, opts: PodOpts<'_>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let grace = spec["terminationGracePeriodSeconds"].as_i64();
    let volumes = volumes(spec, &FieldPath::field(&path, "volumes"), opts, &mut causes);
    let restart = str_of(spec, "restartPolicy");
    causes.extend(containers(spec, &volumes, grace, path, restart));
    causes.extend(init_containers(spec, &volumes, grace, path, restart));
    causes.extend(ephemeral_containers(spec, &volumes, path));
    causes.extend(host_network_deps(spec, path, opts));
    if !matches!(restart, "" | "Always" | "OnFailure" | "Never") {
        // `validateRestartPolicy`.
        causes.push(Cause::not_supported(
            format!("{path}.restartPolicy"),
            &Value::from(restart),
            &strings(&["Always", "OnFailure", "Never"]),
        ));
    }
    let dns_policy = str_of(spec, "dnsPolicy");
    if !matches!(
        dns_policy,
        "" | "ClusterFirstWithHostNet" | "ClusterFirst" | "Default" | "None"
    ) {
        // `validateDNSPolicy`.
        causes.push(Cause::not_supported(
            format!("{path}.dnsPolicy"),
            &Value::from(dns_policy),
            &strings(&["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]),
        ));
    }
    causes.extend(validate_labels(
        spec.get("nodeSelector").filter(|v| !v.is_null()),
        &FieldPath::field(&path, "nodeSelector"),
    ));
    causes.extend(pod_security_context(spec, path));
    for (i, secret) in arr(spec, "imagePullSecrets").iter().enumerate() {
        // `validateImagePullSecrets`: only `name` may be set.
        let only_name = secret
            .as_object()
            .is_some_and(|m| m.keys().all(|k| k == "name"));
        if !only_name {
            causes.push(Cause::invalid(
                format!("{path}.imagePullSecrets[{i}]"),
                secret,
                "only name may be set",
            ));
        }
    }
    causes.extend(affinity(
        &spec["affinity"],
        &FieldPath::field(&path, "affinity"),
    ));
    causes.extend(dns_config(spec, &FieldPath::field(&path, "dnsConfig")));
    for (i, gate) in arr(spec, "readinessGates").iter().enumerate() {
        let t = str_of(gate, "conditionType");
        for msg in is_qualified_name(t) {
            causes.push(Cause::invalid_str(
                format!("{path}.readinessGates[{i}].conditionType"),
                t,
                &msg,
            ));
        }
    }
    let mut gates = BTreeSet::new();
    for (i, gate) in arr(spec, "schedulingGates").iter().enumerate() {
        // `validateSchedulingGates`.
        let name = str_of(gate, "name");
        let at = format!("{path}.schedulingGates[{i}]");
        for msg in is_qualified_name(name) {
            causes.push(Cause::invalid_str(&at, name, &msg));
        }
        if !gates.insert(name) {
            causes.push(Cause::duplicate(&at, &Value::from(name)));
        }
    }
    causes.extend(topology_spread(
        spec,
        &FieldPath::field(&path, "topologySpreadConstraints"),
    ));
    if spec["hostUsers"] == Value::Bool(false) {
        // `validateHostUsers`.
        for (field, shown) in [
            ("hostNetwork", "hostNetwork"),
            ("hostPID", "HostPID"),
            ("hostIPC", "HostIPC"),
        ] {
            if spec[field] == Value::Bool(true) {
                causes.push(Cause::forbidden(
                    format!("{path}.{shown}"),
                    "when `pod.Spec.HostUsers` is false",
                ));
            }
        }
    }
    let subdomain_field = |field: &str, causes: &mut Vec<Cause>| {
        // `ValidateServiceAccountName`, `ValidateNodeName`, `ValidatePriorityClassName`: DNS
        // subdomains.
        let value = str_of(spec, field);
        if !value.is_empty() {
            for msg in is_dns1123_subdomain(value) {
                causes.push(Cause::invalid_str(format!("{path}.{field}"), value, &msg));
            }
        }
    };
    subdomain_field("serviceAccountName", &mut causes);
    subdomain_field("nodeName", &mut causes);
    if let Some(n) = spec["activeDeadlineSeconds"].as_i64() {
        if !(1..=MAX_INT32).contains(&n) {
            causes.push(Cause::invalid(
                format!("{path}.activeDeadlineSeconds"),
                &Value::from(n),
                &format!("must be between 1 and {MAX_INT32}, inclusive"),
            ));
        }
    }
    for f in ["hostname", "subdomain"] {
        let v = str_of(spec, f);
        if !v.is_empty() {
            causes.extend(dns_label(v, &FieldPath::field(&path, f)));
        }
    }
    causes.extend(tolerations(
        &spec["tolerations"],
        &FieldPath::field(&path, "tolerations"),
    ));
    for (i, alias) in arr(spec, "hostAliases").iter().enumerate() {
        // `ValidateHostAliases`.
        let at = format!("{path}.hostAliases[{i}]");
        causes.extend(valid_ip(str_of(alias, "ip"), &FieldPath::field(&at, "ip")));
        for (j, host) in arr(alias, "hostnames").iter().enumerate() {
            let host = host.as_str().unwrap_or_default();
            for msg in is_dns1123_subdomain(host) {
                causes.push(Cause::invalid_str(
                    format!("{at}.hostnames[{j}]"),
                    host,
                    &msg,
                ));
            }
        }
    }
    subdomain_field("priorityClassName", &mut causes);
    if let Some(class) = spec.get("runtimeClassName").and_then(Value::as_str) {
        for msg in is_dns1123_subdomain(class) {
            causes.push(Cause::invalid_str(
                format!("{path}.runtimeClassName"),
                class,
                &msg,
            ));
        }
    }
    if let Some(policy) = spec.get("preemptionPolicy").and_then(Value::as_str) {
        // `ValidatePreemptionPolicy`.
        if !matches!(policy, "PreemptLowerPriority" | "Never") {
            causes.push(Cause::not_supported(
                format!("{path}.preemptionPolicy"),
                &Value::from(policy),
                &strings(&["PreemptLowerPriority", "Never"]),
            ));
        }
    }
    if let Some(os) = spec.get("os").filter(|v| v.is_object()) {
        // `validateOS`.
        let name = str_of(os, "name");
        if name.is_empty() {
            causes.push(Cause::required(
                format!("{path}.os.name"),
                "cannot be empty",
            ));
        } else if !matches!(name, "linux" | "windows") {
            causes.push(Cause::not_supported(
                format!("{path}.os"),
                &Value::from(name),
                &strings(&["linux", "windows"]),
            ));
        }
    }
    causes
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| (*s).to_string()).collect()
}

/// `ValidateDNS1123Label` at `path`.
fn dns_label(value: &str, path: &dyn Display) -> Vec<Cause> {
    is_dns1123_label(value)
        .into_iter()
        .map(|msg| Cause::invalid_str(path, value, &msg))
        .collect()
}

/// `validation.IsValidIP`.
fn valid_ip(ip: &str, path: &dyn Display) -> Vec<Cause> {
    if ip.parse::<std::net::IpAddr>().is_ok() {
        return Vec::new();
    }
    vec![Cause::invalid_str(
        path,
        ip,
        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
    )]
}

/// The volume sources in `validateVolumeSource`'s order: (JSON key, path name in its errors).
const VOLUME_SOURCES: [(&str, &str); 30] = [
    ("emptyDir", "emptyDir"),
    ("hostPath", "hostPath"),
    ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephFS"),
    ("quobyte", "quobyte"),
    // Upstream spells this path `downwarAPI`.
    ("downwardAPI", "downwarAPI"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("configMap", "configMap"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
];

/// The sources `vol` sets (present, not `null`) with their values, in [`VOLUME_SOURCES`]' order
/// (the Go struct's): found among the volume's own keys (its name and, mostly, one source)
/// rather than by looking each of the thirty up in it.
fn present_sources(
    vol: &Value,
) -> impl Iterator<Item = (&'static (&'static str, &'static str), &Value)> {
    const _: () = assert!(VOLUME_SOURCES.len() <= 32);
    let mut set = 0u32;
    for (key, value) in vol.as_object().into_iter().flatten() {
        if value.is_null() {
            continue;
        }
        if let Some(i) = VOLUME_SOURCES
            .iter()
            .position(|(source, _)| short_bytes::eq_bytes(source.as_bytes(), key.as_bytes()))
        {
            set |= 1 << i;
        }
    }
    VOLUME_SOURCES
        .iter()
        .enumerate()
        .filter(move |(i, _)| set & (1 << i) != 0)
        .filter_map(move |(_, source)| Some((source, vol.get(source.0)?)))
}

/// `ValidateVolumes`: names (DNS labels, unique) and exactly one valid source each. Returns the
/// volumes that passed, by name, with their source kind; causes go to `causes`.
fn volumes<'a>(
    spec: &'a Value,
    path: &dyn Display,
    opts: PodOpts<'_>,
    causes: &mut Vec<Cause>,
) -> BTreeMap<&'a str, &'a str> {
    let mut good = BTreeMap::new();
    let mut names = BTreeSet::new();
    for (i, vol) in arr(spec, "volumes").iter().enumerate() {
        let at = FieldPath::index(&path, i);
        let name = str_of(vol, "name");
        let mut el = volume_source(vol, &at, name, opts);
        if name.is_empty() {
            el.push(Cause::required(format!("{at}.name"), ""));
        } else {
            el.extend(dns_label(name, &FieldPath::field(&at, "name")));
        }
        if names.contains(name) {
            el.push(Cause::duplicate(format!("{at}.name"), &Value::from(name)));
        }
        if el.is_empty() {
            names.insert(name);
            let kind = present_sources(vol).next().map_or("", |((key, _), _)| *key);
            good.insert(name, kind);
        } else {
            causes.extend(el);
        }
    }
    good
}

/// `validateVolumeSource`.
fn volume_source(vol: &Value, at: &dyn Display, name: &str, opts: PodOpts<'_>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut count = 0;
    for (&(key, shown), source) in present_sources(vol) {
        if count > 0 {
            causes.push(Cause::forbidden(
                format!("{at}.{shown}"),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        let p = FieldPath::field(&at, key);
        match key {
            "emptyDir" => {
                let limit = source["sizeLimit"].as_str().and_then(Quantity::parse);
                if limit.is_some_and(|q| q.is_negative()) {
                    causes.push(Cause::forbidden(
                        format!("{p}.sizeLimit"),
                        "SizeLimit field must be a valid resource quantity",
                    ));
                }
            }
            "hostPath" => {
                let hp = str_of(source, "path");
                if hp.is_empty() {
                    causes.push(Cause::required(format!("{p}.path"), ""));
                } else {
                    causes.extend(no_backsteps(hp, &FieldPath::field(&p, "path")));
                    let t = source.get("type").and_then(Value::as_str);
                    if let Some(t) = t {
                        let supported = [
                            "",
                            "BlockDevice",
                            "CharDevice",
                            "Directory",
                            "DirectoryOrCreate",
                            "File",
                            "FileOrCreate",
                            "Socket",
                        ];
                        if !supported.contains(&t) {
                            causes.push(Cause::not_supported(
                                format!("{p}.type"),
                                &Value::from(t),
                                &strings(&supported),
                            ));
                        }
                    }
                }
            }
            "secret" | "configMap" => {
                let name_key = if key == "secret" {
                    "secretName"
                } else {
                    "name"
                };
                if str_of(source, name_key).is_empty() {
                    causes.push(Cause::required(format!("{p}.{name_key}"), ""));
                }
                causes.extend(file_mode(
                    &source["defaultMode"],
                    &FieldPath::field(&p, "defaultMode"),
                ));
                let items = FieldPath::field(&p, "items");
                for (j, item) in arr(source, "items").iter().enumerate() {
                    causes.extend(key_to_path(item, &FieldPath::index(&items, j)));
                }
            }
            "nfs" => {
                if str_of(source, "server").is_empty() {
                    causes.push(Cause::required(format!("{p}.server"), ""));
                }
                let np = str_of(source, "path");
                if np.is_empty() {
                    causes.push(Cause::required(format!("{p}.path"), ""));
                }
                if !np.starts_with('/') {
                    causes.push(Cause::invalid_str(
                        format!("{p}.path"),
                        np,
                        "must be an absolute path",
                    ));
                }
            }
            "persistentVolumeClaim" if str_of(source, "claimName").is_empty() => {
                causes.push(Cause::required(format!("{p}.claimName"), ""));
            }
            "downwardAPI" => {
                causes.extend(file_mode(
                    &source["defaultMode"],
                    &FieldPath::field(&p, "defaultMode"),
                ));
                for item in arr(source, "items") {
                    causes.extend(downward_api_file(item, &p));
                }
            }
            // A projection sharing its entries with one that passed passes (the service
            // account token volume every pod gets is cloned from one template).
            "projected" => {
                causes.extend(known_maps::causes(Check::ProjectedVolume, source, || {
                    let mut found =
                        file_mode(&source["defaultMode"], &FieldPath::field(&p, "defaultMode"));
                    found.extend(projection_sources(source, &p));
                    found
                }))
            }
            "csi" => causes.extend(csi_driver_name(
                str_of(source, "driver"),
                &FieldPath::field(&p, "driver"),
            )),
            "ephemeral" => {
                if !present(source, "volumeClaimTemplate") {
                    causes.push(Cause::required(format!("{p}.volumeClaimTemplate"), ""));
                } else if let Some(pod) =
                    opts.pod_name.filter(|n| !n.is_empty() && !name.is_empty())
                {
                    let claim = format!("{pod}-{name}");
                    for msg in is_dns1123_subdomain(&claim) {
                        causes.push(Cause::invalid_str(
                            format!("{at}.name"),
                            name,
                            &format!(
                                "PVC name {}: {msg}",
                                crate::rules::validation::go_quote(&claim)
                            ),
                        ));
                    }
                }
            }
            "gitRepo" if str_of(source, "repository").is_empty() => {
                causes.push(Cause::required(format!("{p}.repository"), ""));
            }
            "image" => {
                if opts.is_pod && str_of(source, "reference").is_empty() {
                    causes.push(Cause::required(format!("{p}.reference"), ""));
                }
                if let Some(policy) = source.get("pullPolicy").and_then(Value::as_str) {
                    causes.extend(pull_policy(policy, &FieldPath::field(&p, "pullPolicy")));
                }
            }
            _ => {}
        }
    }
    if count == 0 {
        causes.push(Cause::required(at, "must specify a volume type"));
    }
    causes
}

/// `ValidateCSIDriverName`.
pub(crate) fn csi_driver_name(driver: &str, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    if driver.is_empty() {
        causes.push(Cause::required(path, ""));
    }
    if driver.len() > 63 {
        causes.push(Cause::too_long(path, 63));
    }
    for msg in is_dns1123_subdomain(&driver.to_lowercase()) {
        causes.push(Cause::invalid_str(path, driver, &msg));
    }
    causes
}

fn file_mode(mode: &Value, path: &dyn Display) -> Vec<Cause> {
    match mode.as_i64() {
        Some(m) if !(0..=0o777).contains(&m) => {
            vec![Cause::invalid(path, &Value::from(m), FILE_MODE)]
        }
        _ => Vec::new(),
    }
}

/// `validateKeyToPath`.
fn key_to_path(item: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    if str_of(item, "key").is_empty() {
        causes.push(Cause::required(format!("{path}.key"), ""));
    }
    let p = str_of(item, "path");
    if p.is_empty() {
        causes.push(Cause::required(format!("{path}.path"), ""));
    }
    causes.extend(local_non_reserved_path(p, &FieldPath::field(&path, "path")));
    causes.extend(file_mode(&item["mode"], &FieldPath::field(&path, "mode")));
    causes
}

/// `validatePathNoBacksteps`.
fn no_backsteps(p: &str, path: &dyn Display) -> Vec<Cause> {
    if p.split('/').any(|part| part == "..") {
        return vec![Cause::invalid_str(path, p, "must not contain '..'")];
    }
    Vec::new()
}

/// `validateLocalDescendingPath`.
fn local_descending_path(p: &str, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    if p.starts_with('/') {
        causes.push(Cause::invalid_str(path, p, "must be a relative path"));
    }
    causes.extend(no_backsteps(p, path));
    causes
}

/// `ValidateLocalNonReservedPath`.
fn local_non_reserved_path(p: &str, path: &dyn Display) -> Vec<Cause> {
    let mut causes = local_descending_path(p, path);
    if p.starts_with("..") && !p.starts_with("../") {
        causes.push(Cause::invalid_str(path, p, "must not start with '..'"));
    }
    causes
}

const VOLUME_FIELD_PATHS: [&str; 5] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
];
const ENV_FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];
const RESOURCE_FIELD_PATHS: [&str; 6] = [
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

/// `validateDownwardAPIVolumeFile` (upstream reports at the source's path, not the item's).
fn downward_api_file(file: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let p = str_of(file, "path");
    if p.is_empty() {
        causes.push(Cause::required(format!("{path}.path"), ""));
    }
    causes.extend(local_non_reserved_path(p, &FieldPath::field(&path, "path")));
    if present(file, "fieldRef") {
        causes.extend(object_field_selector(
            &file["fieldRef"],
            &VOLUME_FIELD_PATHS,
            &FieldPath::field(&path, "fieldRef"),
        ));
        if present(file, "resourceFieldRef") {
            causes.push(Cause::invalid_str(
                path,
                "resource",
                "fieldRef and resourceFieldRef can not be specified simultaneously",
            ));
        }
    } else if present(file, "resourceFieldRef") {
        causes.extend(resource_field_selector(
            &file["resourceFieldRef"],
            &FieldPath::field(&path, "resourceFieldRef"),
            true,
        ));
    } else {
        causes.push(Cause::required(
            path,
            "one of fieldRef and resourceFieldRef is required",
        ));
    }
    causes.extend(file_mode(&file["mode"], &FieldPath::field(&path, "mode")));
    causes
}

/// `validateProjectionSources`.
fn projection_sources(projected: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut paths: BTreeSet<&str> = BTreeSet::new();
    for (i, source) in arr(projected, "sources").iter().enumerate() {
        let sources = FieldPath::field(&path, "sources");
        let src = FieldPath::index(&sources, i);
        let mut count = 0;
        for key in ["secret", "configMap"] {
            let Some(s) = source.get(key).filter(|v| !v.is_null()) else {
                continue;
            };
            count += 1;
            let name = str_of(s, "name");
            if name.is_empty() {
                causes.push(Cause::required(format!("{src}.{key}.name"), ""));
            }
            let of_key = FieldPath::field(&src, key);
            let items = FieldPath::field(&of_key, "items");
            for (j, item) in arr(s, "items").iter().enumerate() {
                causes.extend(key_to_path(item, &FieldPath::index(&items, j)));
                let p = str_of(item, "path");
                if !p.is_empty() && !paths.insert(p) {
                    causes.push(Cause::invalid_str(
                        path,
                        name,
                        "conflicting duplicate paths",
                    ));
                }
            }
        }
        if let Some(d) = source.get("downwardAPI").filter(|v| !v.is_null()) {
            count += 1;
            for item in arr(d, "items") {
                causes.extend(downward_api_file(
                    item,
                    &FieldPath::field(&src, "downwardAPI"),
                ));
                let p = str_of(item, "path");
                if !p.is_empty() && !paths.insert(p) {
                    causes.push(Cause::invalid_str(path, p, "conflicting duplicate paths"));
                }
            }
        }
        if let Some(t) = source.get("serviceAccountToken").filter(|v| !v.is_null()) {
            count += 1;
            // `expirationSeconds` defaults to one hour.
            let seconds = t["expirationSeconds"].as_i64().unwrap_or(3600);
            let token = FieldPath::field(&src, "serviceAccountToken");
            let at = FieldPath::field(&token, "expirationSeconds");
            if seconds < 600 {
                causes.push(Cause::invalid(
                    at,
                    &Value::from(seconds),
                    "may not specify a duration less than 10 minutes",
                ));
            }
            if seconds > 1 << 32 {
                causes.push(Cause::invalid(
                    at,
                    &Value::from(seconds),
                    "may not specify a duration larger than 2^32 seconds",
                ));
            }
            let p = str_of(t, "path");
            if p.is_empty() {
                causes.push(Cause::required(format!("{path}.path"), ""));
            } else {
                causes.extend(local_non_reserved_path(p, &FieldPath::field(&path, "path")));
            }
        }
        if present(source, "clusterTrustBundle") {
            count += 1;
        }
        if count > 1 {
            causes.push(Cause::forbidden(
                src,
                "may not specify more than 1 volume type per source",
            ));
        }
    }
    causes
}

/// `validateObjectFieldSelector` with `podshelper.ConvertDownwardAPIFieldLabel`.
fn object_field_selector(fs: &Value, expressions: &[&str], path: &dyn Display) -> Vec<Cause> {
    // `apiVersion` defaults to `v1`.
    let version = fs["apiVersion"].as_str().unwrap_or("v1");
    let field_path = str_of(fs, "fieldPath");
    if version.is_empty() {
        return vec![Cause::required(format!("{path}.apiVersion"), "")];
    }
    if field_path.is_empty() {
        return vec![Cause::required(format!("{path}.fieldPath"), "")];
    }
    let (base, subscript) = match field_path.split_once("['") {
        Some((base, rest)) if rest.ends_with("']") => (base, Some(&rest[..rest.len() - 2])),
        _ => (field_path, None),
    };
    let conversion_error = if version != "v1" {
        Some(format!("unsupported pod version: {version}"))
    } else {
        let supported = match subscript {
            Some(_) => matches!(base, "metadata.annotations" | "metadata.labels"),
            None => matches!(
                base,
                "metadata.annotations"
                    | "metadata.labels"
                    | "metadata.name"
                    | "metadata.namespace"
                    | "metadata.uid"
                    | "spec.nodeName"
                    | "spec.restartPolicy"
                    | "spec.serviceAccountName"
                    | "spec.schedulerName"
                    | "status.phase"
                    | "status.hostIP"
                    | "status.hostIPs"
                    | "status.podIP"
                    | "status.podIPs"
            ),
        };
        (!supported).then(|| format!("field label not supported: {field_path}"))
    };
    if let Some(err) = conversion_error {
        return vec![Cause::invalid_str(
            format!("{path}.fieldPath"),
            field_path,
            &format!("error converting fieldPath: {err}"),
        )];
    }
    match subscript {
        Some(key) => {
            let key = if base == "metadata.annotations" {
                key.to_lowercase()
            } else {
                key.to_string()
            };
            is_qualified_name(&key)
                .into_iter()
                .map(|msg| Cause::invalid_str(path, &key, &msg))
                .collect()
        }
        None if !expressions.contains(&base) => vec![Cause::not_supported(
            format!("{path}.fieldPath"),
            &Value::from(base),
            &strings(expressions),
        )],
        None => Vec::new(),
    }
}

/// `validateContainerResourceFieldSelector`.
fn resource_field_selector(fs: &Value, path: &dyn Display, volume: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    let resource = str_of(fs, "resource");
    if volume && str_of(fs, "containerName").is_empty() {
        causes.push(Cause::required(format!("{path}.containerName"), ""));
    } else if resource.is_empty() {
        causes.push(Cause::required(format!("{path}.resource"), ""));
    } else if !RESOURCE_FIELD_PATHS.contains(&resource)
        && !resource.starts_with("requests.hugepages-")
        && !resource.starts_with("limits.hugepages-")
    {
        causes.push(Cause::not_supported(
            format!("{path}.resource"),
            &Value::from(resource),
            &strings(&RESOURCE_FIELD_PATHS),
        ));
    }
    causes
}

/// `ValidatePortNumOrName` for an int-or-string port.
fn port_num_or_name(port: &Value, path: &dyn Display) -> Vec<Cause> {
    match port {
        Value::String(name) => port_name_errors(name)
            .into_iter()
            .map(|msg| Cause::invalid_str(path, name, &msg))
            .collect(),
        Value::Number(n) => {
            let n = n.as_i64().unwrap_or(0);
            if (1..=65535).contains(&n) {
                Vec::new()
            } else {
                vec![Cause::invalid(path, &Value::from(n), PORT_RANGE)]
            }
        }
        _ => vec![Cause::invalid(path, &Value::from(0), PORT_RANGE)],
    }
}

/// `validateContainerPorts`.
fn container_ports(c: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut names = BTreeSet::new();
    for (i, port) in arr(c, "ports").iter().enumerate() {
        let at = FieldPath::index(&path, i);
        let name = str_of(port, "name");
        if !name.is_empty() {
            let errs = port_name_errors(name);
            if !errs.is_empty() {
                for msg in errs {
                    causes.push(Cause::invalid_str(format!("{at}.name"), name, &msg));
                }
            } else if !names.insert(name) {
                causes.push(Cause::duplicate(format!("{at}.name"), &Value::from(name)));
            }
        }
        let container_port = port["containerPort"].as_i64().unwrap_or(0);
        if container_port == 0 {
            causes.push(Cause::required(format!("{at}.containerPort"), ""));
        } else if !(1..=65535).contains(&container_port) {
            causes.push(Cause::invalid(
                format!("{at}.containerPort"),
                &Value::from(container_port),
                PORT_RANGE,
            ));
        }
        let host_port = port["hostPort"].as_i64().unwrap_or(0);
        if host_port != 0 && !(1..=65535).contains(&host_port) {
            causes.push(Cause::invalid(
                format!("{at}.hostPort"),
                &Value::from(host_port),
                PORT_RANGE,
            ));
        }
        if let Some(protocol) = port.get("protocol").and_then(Value::as_str) {
            causes.extend(protocol_causes(
                protocol,
                &FieldPath::field(&at, "protocol"),
            ));
        }
    }
    causes
}

/// A port protocol: required, one of `SCTP`, `TCP`, `UDP`.
pub(super) fn protocol_causes(protocol: &str, path: &dyn Display) -> Vec<Cause> {
    if protocol.is_empty() {
        vec![Cause::required(path, "")]
    } else if !matches!(protocol, "TCP" | "UDP" | "SCTP") {
        vec![Cause::not_supported(
            path,
            &Value::from(protocol),
            &strings(&["SCTP", "TCP", "UDP"]),
        )]
    } else {
        Vec::new()
    }
}

/// `IsRelaxedEnvVarName` (relaxed names are the only rule since `RelaxedEnvironmentVariableValidation` went GA).
fn env_name_errors(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push("environment variable name must be non-empty".into());
    }
    if name.chars().any(|c| !(' '..='~').contains(&c) || c == '=') {
        errs.push(
            "a valid environment variable name must consist only of printable ASCII characters other than '='"
                .into(),
        );
    }
    errs
}

/// `ValidateEnv`.
fn env(c: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, ev) in arr(c, "env").iter().enumerate() {
        let at = FieldPath::index(&path, i);
        // A variable sharing its entries with one that passed passes (see `rules::known_maps`).
        causes.extend(known_maps::causes(Check::EnvVar, ev, || env_var(ev, &at)));
    }
    causes
}

/// `ValidateEnv` of one variable, at `at`.
fn env_var(ev: &Value, at: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let name = str_of(ev, "name");
    if name.is_empty() {
        causes.push(Cause::required(format!("{at}.name"), ""));
    } else {
        for msg in env_name_errors(name) {
            causes.push(Cause::invalid_str(format!("{at}.name"), name, &msg));
        }
    }
    let Some(from) = ev.get("valueFrom").filter(|v| !v.is_null()) else {
        return causes;
    };
    // `validateEnvVarValueFrom`.
    let vf = FieldPath::field(&at, "valueFrom");
    let mut count = 0;
    if present(from, "fieldRef") {
        count += 1;
        causes.extend(object_field_selector(
            &from["fieldRef"],
            &ENV_FIELD_PATHS,
            &FieldPath::field(&vf, "fieldRef"),
        ));
    }
    if present(from, "resourceFieldRef") {
        count += 1;
        causes.extend(resource_field_selector(
            &from["resourceFieldRef"],
            &FieldPath::field(&vf, "resourceFieldRef"),
            false,
        ));
    }
    for key in ["configMapKeyRef", "secretKeyRef"] {
        if let Some(sel) = from.get(key).filter(|v| !v.is_null()) {
            count += 1;
            let sp = FieldPath::field(&vf, key);
            let n = str_of(sel, "name");
            for msg in is_dns1123_subdomain(n) {
                causes.push(Cause::invalid_str(format!("{sp}.name"), n, &msg));
            }
            let k = str_of(sel, "key");
            if k.is_empty() {
                causes.push(Cause::required(format!("{sp}.key"), ""));
            } else {
                for msg in is_config_map_key(k) {
                    causes.push(Cause::invalid_str(format!("{sp}.key"), k, &msg));
                }
            }
        }
    }
    if count == 0 {
        causes.push(Cause::invalid_str(
            vf,
            "",
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        ));
    } else if !str_of(ev, "value").is_empty() {
        causes.push(Cause::invalid_str(
            vf,
            "",
            "may not be specified when `value` is not empty",
        ));
    } else if count > 1 {
        causes.push(Cause::invalid_str(
            vf,
            "",
            "may not have more than one field specified at a time",
        ));
    }
    causes
}

/// `ValidateEnvFrom` (a missing source is reported at the list's path, as upstream does).
fn env_from(c: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, ev) in arr(c, "envFrom").iter().enumerate() {
        let at = FieldPath::index(&path, i);
        let prefix = str_of(ev, "prefix");
        if !prefix.is_empty() {
            for msg in env_name_errors(prefix) {
                causes.push(Cause::invalid_str(format!("{at}.prefix"), prefix, &msg));
            }
        }
        let mut count = 0;
        for key in ["configMapRef", "secretRef"] {
            if let Some(r) = ev.get(key).filter(|v| !v.is_null()) {
                count += 1;
                let name = str_of(r, "name");
                if name.is_empty() {
                    causes.push(Cause::required(format!("{at}.{key}.name"), ""));
                } else {
                    // `NameIsDNSSubdomain(name, prefix=true)`: a trailing dash is allowed.
                    let masked = match name.strip_suffix('-') {
                        Some(rest) => format!("{rest}a"),
                        None => name.to_string(),
                    };
                    for msg in is_dns1123_subdomain(&masked) {
                        causes.push(Cause::invalid_str(format!("{at}.{key}.name"), name, &msg));
                    }
                }
            }
        }
        if count == 0 {
            causes.push(Cause::invalid_str(
                path,
                "",
                "must specify one of: `configMapRef` or `secretRef`",
            ));
        } else if count > 1 {
            causes.push(Cause::invalid_str(
                path,
                "",
                "may not have more than one field specified at a time",
            ));
        }
    }
    causes
}

/// `ValidateVolumeMounts` (and the overlap half of `ValidateVolumeDevices`).
fn volume_mounts(c: &Value, volumes: &BTreeMap<&str, &str>, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut mount_points = BTreeSet::new();
    let devices: BTreeMap<&str, &str> = arr(c, "volumeDevices")
        .iter()
        .map(|d| (str_of(d, "name"), str_of(d, "devicePath")))
        .collect();
    let privileged = c["securityContext"]["privileged"] == Value::Bool(true);
    for (i, mnt) in arr(c, "volumeMounts").iter().enumerate() {
        let at = FieldPath::index(&path, i);
        let name = str_of(mnt, "name");
        let mount_path = str_of(mnt, "mountPath");
        if name.is_empty() {
            causes.push(Cause::required(format!("{at}.name"), ""));
        }
        if !volumes.contains_key(name) {
            causes.push(Cause::not_found(format!("{at}.name"), &Value::from(name)));
        }
        if mount_path.is_empty() {
            causes.push(Cause::required(format!("{at}.mountPath"), ""));
        }
        if !mount_points.insert(mount_path) {
            causes.push(Cause::invalid_str(
                format!("{at}.mountPath"),
                mount_path,
                "must be unique",
            ));
        }
        if devices.contains_key(name) {
            causes.push(Cause::invalid_str(
                format!("{at}.name"),
                name,
                "must not already exist in volumeDevices",
            ));
        }
        if devices.values().any(|p| *p == mount_path) {
            causes.push(Cause::invalid_str(
                format!("{at}.mountPath"),
                mount_path,
                "must not already exist as a path in volumeDevices",
            ));
        }
        let sub_path = str_of(mnt, "subPath");
        let sub_path_expr = str_of(mnt, "subPathExpr");
        if volumes.get(name) == Some(&"image") {
            for (f, v) in [("subPath", sub_path), ("subPathExpr", sub_path_expr)] {
                if !v.is_empty() {
                    causes.push(Cause::invalid_str(
                        format!("{at}.{f}"),
                        v,
                        "not allowed in image volume sources",
                    ));
                }
            }
        }
        if !sub_path.is_empty() {
            causes.extend(local_descending_path(
                sub_path,
                &FieldPath::field(&path, "subPath"),
            ));
        }
        if !sub_path_expr.is_empty() {
            if !sub_path.is_empty() {
                causes.push(Cause::invalid_str(
                    format!("{at}.subPathExpr"),
                    sub_path_expr,
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            causes.extend(local_descending_path(
                sub_path_expr,
                &FieldPath::field(&path, "subPathExpr"),
            ));
        }
        let propagation = mnt.get("mountPropagation").and_then(Value::as_str);
        if let Some(mp) = propagation {
            // `validateMountPropagation`.
            let p = FieldPath::field(&path, "mountPropagation");
            if !matches!(mp, "Bidirectional" | "HostToContainer" | "None") {
                causes.push(Cause::not_supported(
                    p,
                    &Value::from(mp),
                    &strings(&["Bidirectional", "HostToContainer", "None"]),
                ));
            }
            if mp == "Bidirectional" && !privileged {
                causes.push(Cause::forbidden(
                    p,
                    "Bidirectional mount propagation is available only to privileged containers",
                ));
            }
        }
        if let Some(rro) = mnt.get("recursiveReadOnly").and_then(Value::as_str) {
            // `validateMountRecursiveReadOnly`.
            let p = FieldPath::field(&path, "recursiveReadOnly");
            match rro {
                "Disabled" => {}
                "Enabled" | "IfPossible" => {
                    if mnt["readOnly"] != Value::Bool(true) {
                        causes.push(Cause::forbidden(
                            p,
                            "may only be specified when readOnly is true",
                        ));
                    }
                    if propagation.is_some_and(|mp| mp != "None") {
                        causes.push(Cause::forbidden(
                            p,
                            "may only be specified when mountPropagation is None or not specified",
                        ));
                    }
                }
                _ => causes.push(Cause::not_supported(
                    p,
                    &Value::from(rro),
                    &strings(&["Disabled", "Enabled", "IfPossible"]),
                )),
            }
        }
    }
    // `ValidateVolumeDevices` (nothing to check, nor paths to name, without devices).
    let devices = arr(c, "volumeDevices");
    if devices.is_empty() {
        return causes;
    }
    let mounts: BTreeMap<&str, &str> = arr(c, "volumeMounts")
        .iter()
        .map(|m| (str_of(m, "name"), str_of(m, "mountPath")))
        .collect();
    let device_path_list = path.to_string().replace("volumeMounts", "volumeDevices");
    let mut device_names = BTreeSet::new();
    let mut device_paths = BTreeSet::new();
    for (i, dev) in devices.iter().enumerate() {
        let at = FieldPath::index(&device_path_list, i);
        let name = str_of(dev, "name");
        let dev_path = str_of(dev, "devicePath");
        if name.is_empty() {
            causes.push(Cause::required(format!("{at}.name"), ""));
        }
        if device_names.contains(name) {
            causes.push(Cause::invalid_str(
                format!("{at}.name"),
                name,
                "must be unique",
            ));
        }
        match volumes.get(name) {
            Some(kind) if !matches!(*kind, "persistentVolumeClaim" | "ephemeral") => {
                causes.push(Cause::invalid_str(
                    format!("{at}.name"),
                    name,
                    "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
                ));
            }
            Some(_) => {}
            None => causes.push(Cause::not_found(format!("{at}.name"), &Value::from(name))),
        }
        if dev_path.is_empty() {
            causes.push(Cause::required(format!("{at}.devicePath"), ""));
        }
        if device_paths.contains(dev_path) {
            causes.push(Cause::invalid_str(
                format!("{at}.devicePath"),
                dev_path,
                "must be unique",
            ));
        }
        if !dev_path.is_empty() && dev_path.split('/').any(|p| p == "..") {
            causes.push(Cause::invalid_str(
                format!("{at}.devicePath"),
                dev_path,
                "can not contain backsteps ('..')",
            ));
        } else {
            device_paths.insert(dev_path);
        }
        if mounts.contains_key(name) {
            causes.push(Cause::invalid_str(
                format!("{at}.name"),
                name,
                "must not already exist in volumeMounts",
            ));
        }
        if mounts.values().any(|p| *p == dev_path) {
            causes.push(Cause::invalid_str(
                format!("{at}.devicePath"),
                dev_path,
                "must not already exist as a path in volumeMounts",
            ));
        }
        if !name.is_empty() {
            device_names.insert(name);
        }
    }
    causes
}

fn pull_policy(policy: &str, path: &dyn Display) -> Vec<Cause> {
    match policy {
        "Always" | "IfNotPresent" | "Never" => Vec::new(),
        "" => vec![Cause::required(path, "")],
        other => vec![Cause::not_supported(
            path,
            &Value::from(other),
            &strings(&["Always", "IfNotPresent", "Never"]),
        )],
    }
}

const STANDARD_CONTAINER_RESOURCES: [&str; 3] = ["cpu", "memory", "ephemeral-storage"];
pub(super) const STANDARD_RESOURCES: [&str; 20] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
    "storage",
];

fn is_huge_pages(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// `helper.IsNativeResource`: no domain, or a `kubernetes.io` one.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `helper.IsOvercommitAllowed`.
fn overcommit_allowed(name: &str) -> bool {
    is_native(name) && !is_huge_pages(name)
}

/// `validateContainerResourceName` (which runs `validateResourceName` first).
pub(crate) fn container_resource_name(name: &str, path: &dyn Display) -> Vec<Cause> {
    let mut causes: Vec<Cause> = is_qualified_name(name)
        .into_iter()
        .map(|msg| Cause::invalid_str(path, name, &msg))
        .collect();
    if causes.is_empty()
        && !name.contains('/')
        && !STANDARD_RESOURCES.contains(&name)
        && !is_huge_pages(name)
        && !name.starts_with("requests.hugepages-")
    {
        causes.push(Cause::invalid_str(
            path,
            name,
            "must be a standard resource type or fully qualified",
        ));
    }
    if !name.contains('/') {
        if !STANDARD_CONTAINER_RESOURCES.contains(&name) && !is_huge_pages(name) {
            causes.push(Cause::invalid_str(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native(name) && name.starts_with("requests.") {
        causes.push(Cause::invalid_str(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    causes
}

/// `ValidateResourceQuantityValue` for a container resource.
fn quantity_value(name: &str, q: &Quantity, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    if q.is_negative() {
        causes.push(Cause::invalid_str(
            path,
            &q.canonical(),
            "must be greater than or equal to 0",
        ));
    }
    if !is_native(name) && !q.is_integer() {
        causes.push(Cause::invalid_str(
            path,
            &q.canonical(),
            "must be an integer",
        ));
    }
    causes
}

/// The entries of a resource list (`limits`, `requests`) with their quantities parsed (`None`:
/// not a quantity); a number is read as its JSON text.
fn named_quantities(list: &Value) -> Vec<(&str, Option<Quantity>)> {
    list.as_object()
        .into_iter()
        .flatten()
        .map(|(name, value)| {
            let quantity = match value {
                Value::Number(n) => Quantity::parse(&n.to_string()),
                other => Quantity::parse(other.as_str().unwrap_or_default()),
            };
            (name.as_str(), quantity)
        })
        .collect()
}

/// `ValidateContainerResourceRequirements`: names, quantities, requests within limits.
pub(crate) fn resources(resources: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let lim_path = FieldPath::field(&path, "limits");
    let req_path = FieldPath::field(&path, "requests");
    let limits = named_quantities(&resources["limits"]);
    let requests = named_quantities(&resources["requests"]);
    let (mut lim_cpu_mem, mut req_cpu_mem, mut huge) = (false, false, false);
    for (name, q) in &limits {
        let at = FieldPath::key(&lim_path, name);
        causes.extend(container_resource_name(name, &at));
        if let Some(q) = q {
            causes.extend(quantity_value(name, q, &at));
        }
        huge |= is_huge_pages(name);
        lim_cpu_mem |= matches!(*name, "cpu" | "memory");
    }
    for (name, q) in &requests {
        let at = FieldPath::key(&req_path, name);
        causes.extend(container_resource_name(name, &at));
        if let Some(q) = q {
            causes.extend(quantity_value(name, q, &at));
        }
        let limit = limits.iter().find(|(n, _)| n == name);
        match (limit, q) {
            (Some((_, Some(l))), Some(r)) => {
                if r != l && !overcommit_allowed(name) {
                    causes.push(Cause::invalid_str(
                        req_path,
                        &r.canonical(),
                        &format!("must be equal to {name} limit of {}", l.canonical()),
                    ));
                } else if r > l {
                    causes.push(Cause::invalid_str(
                        req_path,
                        &r.canonical(),
                        &format!(
                            "must be less than or equal to {name} limit of {}",
                            l.canonical()
                        ),
                    ));
                }
            }
            (None, _) if !overcommit_allowed(name) => causes.push(Cause::required(
                lim_path,
                "Limit must be set for non overcommitable resources",
            )),
            _ => {}
        }
        huge |= is_huge_pages(name);
        req_cpu_mem |= matches!(*name, "cpu" | "memory");
    }
    if !lim_cpu_mem && !req_cpu_mem && huge {
        causes.push(Cause::forbidden(path, "HugePages require cpu or memory"));
    }
    causes
}

/// `ValidateSecurityContext` of a container.
fn security_context(sc: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    if !sc.is_object() {
        return causes;
    }
    for f in ["runAsUser", "runAsGroup"] {
        if let Some(id) = sc[f].as_i64() {
            if !(0..=MAX_INT32).contains(&id) {
                causes.push(Cause::invalid(
                    format!("{path}.{f}"),
                    &Value::from(id),
                    &format!("must be between 0 and {MAX_INT32}, inclusive"),
                ));
            }
        }
    }
    if let Some(pm) = sc.get("procMount").and_then(Value::as_str) {
        if !matches!(pm, "Default" | "Unmasked") {
            causes.push(Cause::not_supported(
                format!("{path}.procMount"),
                &Value::from(pm),
                &strings(&["Default", "Unmasked"]),
            ));
        }
    }
    causes.extend(seccomp_profile(
        &sc["seccompProfile"],
        &FieldPath::field(&path, "seccompProfile"),
    ));
    if sc["allowPrivilegeEscalation"] == Value::Bool(false) {
        if sc["privileged"] == Value::Bool(true) {
            causes.push(Cause::invalid(
                path,
                sc,
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        if arr(&sc["capabilities"], "add")
            .iter()
            .any(|c| c == "CAP_SYS_ADMIN")
        {
            causes.push(Cause::invalid(
                path,
                sc,
                "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
            ));
        }
    }
    causes
}

/// `validateSeccompProfileField`.
fn seccomp_profile(sp: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    if !sp.is_object() {
        return causes;
    }
    let t = str_of(sp, "type");
    match t {
        "Localhost" | "RuntimeDefault" | "Unconfined" => {}
        "" => causes.push(Cause::required(
            format!("{path}.type"),
            "type is required when seccompProfile is set",
        )),
        other => causes.push(Cause::not_supported(
            format!("{path}.type"),
            &Value::from(other),
            &strings(&["Localhost", "RuntimeDefault", "Unconfined"]),
        )),
    }
    let local = sp.get("localhostProfile").and_then(Value::as_str);
    if t == "Localhost" {
        match local {
            None => causes.push(Cause::required(
                format!("{path}.localhostProfile"),
                "must be set when seccomp type is Localhost",
            )),
            Some(p) => causes.extend(local_descending_path(
                p,
                &FieldPath::field(&path, "localhostProfile"),
            )),
        }
    } else if local.is_some() {
        causes.push(Cause::invalid(
            format!("{path}.localhostProfile"),
            sp,
            "can only be set when seccomp type is Localhost",
        ));
    }
    causes
}

/// `validateProbe` (with `validateHandler`) and the per-kind extras of
/// `validateLivenessProbe`/`validateReadinessProbe`/`validateStartupProbe`.
fn probe(p: &Value, kind: &str, path: &dyn Display) -> Vec<Cause> {
    let mut causes = handler(p, &["exec", "httpGet", "tcpSocket", "grpc"], path);
    for f in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        super::super::nonnegative(&mut causes, p.get(f), &FieldPath::field(&path, f));
    }
    let grace = p
        .get("terminationGracePeriodSeconds")
        .filter(|v| !v.is_null());
    if let Some(g) = grace.and_then(Value::as_i64) {
        if g <= 0 {
            causes.push(Cause::invalid(
                format!("{path}.terminationGracePeriodSeconds"),
                &Value::from(g),
                "must be greater than 0",
            ));
        }
    }
    match kind {
        "livenessProbe" | "startupProbe" => {
            let success = p["successThreshold"].as_i64().unwrap_or(1);
            if success != 1 {
                causes.push(Cause::invalid(
                    format!("{path}.successThreshold"),
                    &Value::from(success),
                    "must be 1",
                ));
            }
        }
        _ => {
            if let Some(g) = grace {
                causes.push(Cause::invalid(
                    format!("{path}.terminationGracePeriodSeconds"),
                    g,
                    "must not be set for readinessProbes",
                ));
            }
        }
    }
    causes
}

/// `validateHandler` over the handler kinds `kinds` allows (a probe's or a lifecycle hook's).
fn handler(h: &Value, kinds: &[&str], path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut count = 0;
    for kind in kinds {
        let Some(action) = h.get(*kind).filter(|v| !v.is_null()) else {
            continue;
        };
        let at = FieldPath::field(&path, kind);
        if count > 0 {
            causes.push(Cause::forbidden(
                at,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        count += 1;
        match *kind {
            "exec" if arr(action, "command").is_empty() => {
                causes.push(Cause::required(format!("{at}.command"), ""));
            }
            "httpGet" => {
                // `path` and `scheme` default to `/` and `HTTP`.
                if action.get("path").and_then(Value::as_str) == Some("") {
                    causes.push(Cause::required(format!("{at}.path"), ""));
                }
                causes.extend(port_num_or_name(
                    action.get("port").unwrap_or(&Value::Null),
                    &FieldPath::field(&at, "port"),
                ));
                if let Some(scheme) = action.get("scheme").and_then(Value::as_str) {
                    if !matches!(scheme, "HTTP" | "HTTPS") {
                        causes.push(Cause::not_supported(
                            format!("{at}.scheme"),
                            &Value::from(scheme),
                            &strings(&["HTTP", "HTTPS"]),
                        ));
                    }
                }
                for header in arr(action, "httpHeaders") {
                    let name = str_of(header, "name");
                    let ok = !name.is_empty()
                        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
                    if !ok {
                        causes.push(Cause::invalid_str(
                            format!("{at}.httpHeaders"),
                            name,
                            &crate::rules::validation::regex_error(
                                "a valid HTTP header must consist of alphanumeric characters or '-'",
                                "[-A-Za-z0-9]+",
                                &["X-Header-Name"],
                            ),
                        ));
                    }
                }
            }
            "tcpSocket" => causes.extend(port_num_or_name(
                action.get("port").unwrap_or(&Value::Null),
                &FieldPath::field(&at, "port"),
            )),
            "grpc" => {
                let port = action["port"].as_i64().unwrap_or(0);
                if !(1..=65535).contains(&port) {
                    causes.push(Cause::invalid(
                        format!("{at}.port"),
                        &Value::from(port),
                        PORT_RANGE,
                    ));
                }
            }
            _ => {}
        }
    }
    if count == 0 {
        causes.push(Cause::required(path, "must specify a handler type"));
    }
    causes
}

/// `validateLifecycle`.
fn lifecycle(l: &Value, grace: Option<i64>, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    for hook in ["postStart", "preStop"] {
        let Some(h) = l.get(hook).filter(|v| !v.is_null()) else {
            continue;
        };
        let at = FieldPath::field(&path, hook);
        causes.extend(handler(h, &["exec", "httpGet", "tcpSocket", "sleep"], &at));
        if let (Some(seconds), Some(grace)) = (h["sleep"]["seconds"].as_i64(), grace) {
            // `validateSleepAction` (zero allowed: `PodLifecycleSleepActionAllowZero` is GA).
            if seconds < 0 || seconds > grace {
                causes.push(Cause::invalid(
                    format!("{at}.sleep"),
                    &Value::from(seconds),
                    &format!(
                        "must be non-negative and less than terminationGracePeriodSeconds ({grace})"
                    ),
                ));
            }
        }
    }
    causes
}

/// `validateContainerCommon`.
fn container_common(c: &Value, volumes: &BTreeMap<&str, &str>, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let name = str_of(c, "name");
    if name.is_empty() {
        causes.push(Cause::required(format!("{path}.name"), ""));
    } else {
        causes.extend(dns_label(name, &FieldPath::field(&path, "name")));
    }
    if str_of(c, "image").is_empty() {
        causes.push(Cause::required(format!("{path}.image"), ""));
    }
    if let Some(policy) = c.get("terminationMessagePolicy").and_then(Value::as_str) {
        match policy {
            "File" | "FallbackToLogsOnError" => {}
            "" => causes.push(Cause::required(
                format!("{path}.terminationMessagePolicy"),
                "",
            )),
            other => causes.push(Cause::not_supported(
                format!("{path}.terminationMessagePolicy"),
                &Value::from(other),
                &strings(&["File", "FallbackToLogsOnError"]),
            )),
        }
    }
    causes.extend(container_ports(c, &FieldPath::field(&path, "ports")));
    causes.extend(env(c, &FieldPath::field(&path, "env")));
    causes.extend(env_from(c, &FieldPath::field(&path, "envFrom")));
    causes.extend(volume_mounts(
        c,
        volumes,
        &FieldPath::field(&path, "volumeMounts"),
    ));
    if let Some(policy) = c.get("imagePullPolicy").and_then(Value::as_str) {
        causes.extend(pull_policy(
            policy,
            &FieldPath::field(&path, "imagePullPolicy"),
        ));
    }
    // Skipped for a map sharing its entries with one that passed (see `rules::known_maps`).
    let resources_path = FieldPath::field(&path, "resources");
    causes.extend(known_maps::causes(
        Check::ContainerResources,
        &c["resources"],
        || resources(&c["resources"], &resources_path),
    ));
    causes.extend(security_context(
        &c["securityContext"],
        &FieldPath::field(&path, "securityContext"),
    ));
    causes
}

/// `checkHostPortConflicts` over `containers`, paths under `path`.
fn host_port_conflicts(containers: &[&Value], indices: &[usize], path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut seen = BTreeSet::new();
    for (c, ci) in containers.iter().zip(indices) {
        for (pi, port) in arr(c, "ports").iter().enumerate() {
            let host_port = port["hostPort"].as_i64().unwrap_or(0);
            if host_port == 0 {
                continue;
            }
            let key = format!(
                "{}/{}/{host_port}",
                str_of(port, "protocol"),
                str_of(port, "hostIP")
            );
            if !seen.insert(key.clone()) {
                causes.push(Cause::duplicate(
                    format!("{path}[{ci}].ports[{pi}].hostPort"),
                    &Value::from(key),
                ));
            }
        }
    }
    causes
}

/// `validateContainers`: at least one, names unique, probes and lifecycle, no restart policy.
fn containers(
    spec: &Value,
    volumes: &BTreeMap<&str, &str>,
    grace: Option<i64>,
    path: &dyn Display,
    _restart: &str,
) -> Vec<Cause> {
    let list = arr(spec, "containers");
    let path = FieldPath::field(&path, "containers");
    if list.is_empty() {
        return vec![Cause::required(path, "")];
    }
    let mut causes = Vec::new();
    let mut names = BTreeSet::new();
    for (i, c) in list.iter().enumerate() {
        let at = FieldPath::index(&path, i);
        causes.extend(container_common(c, volumes, &at));
        let name = str_of(c, "name");
        if !names.insert(name) {
            causes.push(Cause::duplicate(format!("{at}.name"), &Value::from(name)));
        }
        if let Some(l) = c.get("lifecycle").filter(|v| !v.is_null()) {
            causes.extend(lifecycle(l, grace, &FieldPath::field(&at, "lifecycle")));
        }
        for kind in ["livenessProbe", "readinessProbe", "startupProbe"] {
            if let Some(p) = c.get(kind).filter(|v| !v.is_null()) {
                causes.extend(probe(p, kind, &FieldPath::field(&at, kind)));
            }
        }
        if present(c, "restartPolicy") {
            causes.push(Cause::forbidden(
                format!("{at}.restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }
    let all: Vec<&Value> = list.iter().collect();
    let indices: Vec<usize> = (0..list.len()).collect();
    causes.extend(host_port_conflicts(&all, &indices, &path));
    causes
}

/// `validateInitContainers`: names unique across init and regular containers; probes and
/// lifecycle only for restartable (sidecar) init containers.
fn init_containers(
    spec: &Value,
    volumes: &BTreeMap<&str, &str>,
    grace: Option<i64>,
    path: &dyn Display,
    _restart: &str,
) -> Vec<Cause> {
    let path = FieldPath::field(&path, "initContainers");
    let mut causes = Vec::new();
    let mut names: BTreeSet<&str> = arr(spec, "containers")
        .iter()
        .map(|c| str_of(c, "name"))
        .collect();
    for (i, c) in arr(spec, "initContainers").iter().enumerate() {
        let at = FieldPath::index(&path, i);
        causes.extend(container_common(c, volumes, &at));
        let restart = c.get("restartPolicy").and_then(Value::as_str);
        if let Some(r) = restart {
            if r != "Always" {
                causes.push(Cause::not_supported(
                    format!("{at}.restartPolicy"),
                    &Value::from(r),
                    &strings(&["Always"]),
                ));
            }
        }
        let name = str_of(c, "name");
        if names.contains(name) {
            causes.push(Cause::duplicate(format!("{at}.name"), &Value::from(name)));
        } else if !name.is_empty() {
            names.insert(name);
        }
        causes.extend(host_port_conflicts(&[c], &[i], &path));
        if restart == Some("Always") {
            if let Some(l) = c.get("lifecycle").filter(|v| !v.is_null()) {
                causes.extend(lifecycle(l, grace, &FieldPath::field(&at, "lifecycle")));
            }
            for kind in ["livenessProbe", "readinessProbe", "startupProbe"] {
                if let Some(p) = c.get(kind).filter(|v| !v.is_null()) {
                    causes.extend(probe(p, kind, &FieldPath::field(&at, kind)));
                }
            }
        } else {
            for kind in [
                "lifecycle",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
            ] {
                if present(c, kind) {
                    causes.push(Cause::forbidden(
                        format!("{at}.{kind}"),
                        "may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
        }
        if !arr(c, "resizePolicy").is_empty() {
            causes.push(Cause::invalid(
                format!("{at}.resizePolicy"),
                &c["resizePolicy"],
                "must not be set for init containers",
            ));
        }
    }
    causes
}

/// The fields of an ephemeral container that `validateFieldAllowList` refuses
/// (`allowedEphemeralContainerFields` false), in the struct's order: an ephemeral container is
/// not relied upon for the pod's services, so it has no ports, resources, probes or lifecycle.
const EPHEMERAL_FORBIDDEN_FIELDS: [&str; 9] = [
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
];

/// Whether a container field is set (not absent, null, empty or zero), as Go's zero-value test
/// sees the decoded field.
fn is_set(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => o.values().any(|v| is_set(Some(v))),
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
    }
}

/// `validateEphemeralContainers`: each is a container (`validateContainerCommon`, an image
/// without surrounding whitespace) named uniquely across every container of the pod, targeting
/// one of its containers or init containers if it targets one, without the fields an ephemeral
/// container may not have and without volume sub-paths.
fn ephemeral_containers(
    spec: &Value,
    volumes: &BTreeMap<&str, &str>,
    path: &dyn Display,
) -> Vec<Cause> {
    let list = arr(spec, "ephemeralContainers");
    let path = FieldPath::field(&path, "ephemeralContainers");
    let mut causes = Vec::new();
    if list.is_empty() {
        return causes;
    }
    let others: BTreeSet<&str> = arr(spec, "containers")
        .iter()
        .chain(arr(spec, "initContainers"))
        .map(|c| str_of(c, "name"))
        .collect();
    let mut names = others.clone();
    for (i, c) in list.iter().enumerate() {
        let at = FieldPath::index(&path, i);
        causes.extend(container_common(c, volumes, &at));
        let image = str_of(c, "image");
        if image.trim() != image {
            causes.push(Cause::invalid_str(
                format!("{at}.image"),
                image,
                "must not have leading or trailing whitespace",
            ));
        }
        let name = str_of(c, "name");
        if !names.insert(name) {
            causes.push(Cause::duplicate(format!("{at}.name"), &Value::from(name)));
        }
        let target = str_of(c, "targetContainerName");
        if !target.is_empty() && !others.contains(target) {
            causes.push(Cause::not_found(
                format!("{at}.targetContainerName"),
                &Value::from(target),
            ));
        }
        for field in EPHEMERAL_FORBIDDEN_FIELDS {
            if is_set(c.get(field)) {
                causes.push(Cause::forbidden(
                    format!("{at}.{field}"),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
        for (m, mount) in arr(c, "volumeMounts").iter().enumerate() {
            for field in ["subPath", "subPathExpr"] {
                if !str_of(mount, field).is_empty() {
                    causes.push(Cause::forbidden(
                        format!("{at}.volumeMounts[{m}].{field}"),
                        "cannot be set for an Ephemeral Container",
                    ));
                }
            }
        }
    }
    causes
}

/// `validatePodHostNetworkDeps`: with `hostNetwork`, a host port must equal its container port
/// (a pod's unset host port is defaulted to it).
fn host_network_deps(spec: &Value, path: &dyn Display, _opts: PodOpts<'_>) -> Vec<Cause> {
    let mut causes = Vec::new();
    if spec["hostNetwork"] != Value::Bool(true) {
        return causes;
    }
    for (i, c) in arr(spec, "containers").iter().enumerate() {
        for (j, port) in arr(c, "ports").iter().enumerate() {
            let hp = port["hostPort"].as_i64().unwrap_or(0);
            let cp = port["containerPort"].as_i64().unwrap_or(0);
            if hp != 0 && hp != cp {
                causes.push(Cause::invalid(
                    format!("{path}.containers[{i}].ports[{j}].hostPort"),
                    &Value::from(hp),
                    "must match `containerPort` when `hostNetwork` is true",
                ));
            }
        }
    }
    causes
}

/// `validatePodSpecSecurityContext`.
fn pod_security_context(spec: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let sc = &spec["securityContext"];
    if !sc.is_object() {
        return causes;
    }
    let at = FieldPath::field(&path, "securityContext");
    let id_range = format!("must be between 0 and {MAX_INT32}, inclusive");
    for f in ["fsGroup", "runAsUser", "runAsGroup"] {
        if let Some(id) = sc[f].as_i64() {
            if !(0..=MAX_INT32).contains(&id) {
                causes.push(Cause::invalid(
                    format!("{at}.{f}"),
                    &Value::from(id),
                    &id_range,
                ));
            }
        }
    }
    for (i, gid) in arr(sc, "supplementalGroups").iter().enumerate() {
        if let Some(id) = gid.as_i64() {
            if !(0..=MAX_INT32).contains(&id) {
                causes.push(Cause::invalid(
                    format!("{at}.supplementalGroups[{i}]"),
                    &Value::from(id),
                    &id_range,
                ));
            }
        }
    }
    if spec["shareProcessNamespace"] == Value::Bool(true) && spec["hostPID"] == Value::Bool(true) {
        causes.push(Cause::invalid(
            format!("{at}.shareProcessNamespace"),
            &Value::Bool(true),
            "ShareProcessNamespace and HostPID cannot both be enabled",
        ));
    }
    let mut sysctl_names = BTreeSet::new();
    for (i, s) in arr(sc, "sysctls").iter().enumerate() {
        let name = str_of(s, "name");
        let p = format!("{at}.sysctls[{i}].name");
        if name.is_empty() {
            causes.push(Cause::required(&p, ""));
        } else if !is_sysctl_name(name) {
            causes.push(Cause::invalid_str(
                &p,
                name,
                "must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$",
            ));
        } else if sysctl_names.contains(name) {
            causes.push(Cause::duplicate(&p, &Value::from(name)));
        }
        sysctl_names.insert(name);
    }
    if let Some(policy) = sc.get("fsGroupChangePolicy").and_then(Value::as_str) {
        if !matches!(policy, "OnRootMismatch" | "Always") {
            causes.push(Cause::not_supported(
                format!("{at}.fsGroupChangePolicy"),
                &Value::from(policy),
                &strings(&["Always", "OnRootMismatch"]),
            ));
        }
    }
    causes.extend(seccomp_profile(
        &sc["seccompProfile"],
        &FieldPath::field(&at, "seccompProfile"),
    ));
    if let Some(policy) = sc.get("supplementalGroupsPolicy").and_then(Value::as_str) {
        if !matches!(policy, "Merge" | "Strict") {
            causes.push(Cause::not_supported(
                format!("{at}.supplementalGroupsPolicy"),
                &Value::from(policy),
                &strings(&["Merge", "Strict"]),
            ));
        }
    }
    causes
}

fn is_sysctl_name(name: &str) -> bool {
    if name.len() > 253 {
        return false;
    }
    name.split(['.', '/']).all(|seg| {
        let b = seg.as_bytes();
        let edge = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty()
            && b.first().is_some_and(edge)
            && b.last().is_some_and(edge)
            && b.iter().all(|c| edge(c) || *c == b'-' || *c == b'_')
    })
}

/// `validateAffinity`.
fn affinity(a: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    if !a.is_object() {
        return causes;
    }
    let na = &a["nodeAffinity"];
    if na.is_object() {
        let np = FieldPath::field(&path, "nodeAffinity");
        let required = &na["requiredDuringSchedulingIgnoredDuringExecution"];
        if required.is_object() {
            causes.extend(node_selector(
                required,
                &FieldPath::field(&np, "requiredDuringSchedulingIgnoredDuringExecution"),
                false,
            ));
        }
        for (i, term) in arr(na, "preferredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            let at = format!("{np}.preferredDuringSchedulingIgnoredDuringExecution[{i}]");
            let weight = term["weight"].as_i64().unwrap_or(0);
            if !(1..=100).contains(&weight) {
                causes.push(Cause::invalid(
                    format!("{at}.weight"),
                    &Value::from(weight),
                    "must be in the range 1-100",
                ));
            }
            causes.extend(node_selector_term(
                &term["preference"],
                &FieldPath::field(&at, "preference"),
                true,
            ));
        }
    }
    for kind in ["podAffinity", "podAntiAffinity"] {
        let pa = &a[kind];
        if !pa.is_object() {
            continue;
        }
        let kp = FieldPath::field(&path, kind);
        for (i, term) in arr(pa, "requiredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            causes.extend(pod_affinity_term(
                term,
                &format!("{kp}.requiredDuringSchedulingIgnoredDuringExecution[{i}]"),
            ));
        }
        for (i, term) in arr(pa, "preferredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            let at = format!("{kp}.preferredDuringSchedulingIgnoredDuringExecution[{i}]");
            let weight = term["weight"].as_i64().unwrap_or(0);
            if !(1..=100).contains(&weight) {
                causes.push(Cause::invalid(
                    format!("{at}.weight"),
                    &Value::from(weight),
                    "must be in the range 1-100",
                ));
            }
            causes.extend(pod_affinity_term(
                &term["podAffinityTerm"],
                &FieldPath::field(&at, "podAffinityTerm"),
            ));
        }
    }
    causes
}

/// `ValidateNodeSelector`.
pub(super) fn node_selector(
    ns: &Value,
    path: &dyn Display,
    allow_invalid_values: bool,
) -> Vec<Cause> {
    let terms = arr(ns, "nodeSelectorTerms");
    let tp = FieldPath::field(&path, "nodeSelectorTerms");
    if terms.is_empty() {
        return vec![Cause::required(
            tp,
            "must have at least one node selector term",
        )];
    }
    terms
        .iter()
        .enumerate()
        .flat_map(|(i, t)| node_selector_term(t, &FieldPath::index(&tp, i), allow_invalid_values))
        .collect()
}

/// `ValidateNodeSelectorTerm`.
fn node_selector_term(term: &Value, path: &dyn Display, allow_invalid_values: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (j, req) in arr(term, "matchExpressions").iter().enumerate() {
        let at = format!("{path}.matchExpressions[{j}]");
        let values = arr(req, "values");
        let op = str_of(req, "operator");
        match op {
            "In" | "NotIn" if values.is_empty() => causes.push(Cause::required(
                format!("{at}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => causes.push(Cause::forbidden(
                format!("{at}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "Gt" | "Lt" if values.len() != 1 => causes.push(Cause::required(
                format!("{at}.values"),
                "must be specified single value when `operator` is 'Lt' or 'Gt'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
            _ => causes.push(Cause::invalid_str(
                format!("{at}.operator"),
                op,
                "not a valid selector operator",
            )),
        }
        let key = str_of(req, "key");
        for msg in is_qualified_name(key) {
            causes.push(Cause::invalid_str(format!("{at}.key"), key, &msg));
        }
        if !allow_invalid_values {
            for (k, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or_default();
                for msg in is_label_value(v) {
                    causes.push(Cause::invalid_str(format!("{at}.values[{k}]"), v, &msg));
                }
            }
        }
    }
    for (j, req) in arr(term, "matchFields").iter().enumerate() {
        // `ValidateNodeFieldSelectorRequirement`.
        let at = format!("{path}.matchFields[{j}]");
        let values = arr(req, "values");
        let op = str_of(req, "operator");
        match op {
            "In" | "NotIn" if values.len() != 1 => causes.push(Cause::required(
                format!("{at}.values"),
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )),
            "In" | "NotIn" => {}
            _ => causes.push(Cause::invalid_str(
                format!("{at}.operator"),
                op,
                "not a valid selector operator",
            )),
        }
        let key = str_of(req, "key");
        if key != "metadata.name" {
            causes.push(Cause::invalid_str(
                format!("{at}.key"),
                key,
                "not a valid field selector key",
            ));
        } else {
            for (k, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or_default();
                for msg in is_dns1123_subdomain(v) {
                    causes.push(Cause::invalid_str(format!("{at}.values[{k}]"), v, &msg));
                }
            }
        }
    }
    causes
}

/// `validatePodAffinityTerm`.
fn pod_affinity_term(term: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    for key in ["labelSelector", "namespaceSelector"] {
        if let Some(sel) = term.get(key).filter(|v| v.is_object()) {
            causes.extend(selector::causes(
                sel,
                &FieldPath::field(&path, key).to_string(),
            ));
        }
    }
    for ns in arr(term, "namespaces") {
        let ns = ns.as_str().unwrap_or_default();
        for msg in is_dns1123_label(ns) {
            causes.push(Cause::invalid_str(format!("{path}.namespace"), ns, &msg));
        }
    }
    let topology = str_of(term, "topologyKey");
    if topology.is_empty() {
        causes.push(Cause::required(
            format!("{path}.topologyKey"),
            "can not be empty",
        ));
    }
    for msg in is_qualified_name(topology) {
        causes.push(Cause::invalid_str(
            format!("{path}.topologyKey"),
            topology,
            &msg,
        ));
    }
    causes
}

/// `validatePodDNSConfig`.
fn dns_config(spec: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let config = spec.get("dnsConfig").filter(|v| !v.is_null());
    if str_of(spec, "dnsPolicy") == "None" {
        match config {
            None => {
                return vec![Cause::required(
                    path,
                    "must provide `dnsConfig` when `dnsPolicy` is None",
                )]
            }
            Some(c) if arr(c, "nameservers").is_empty() => {
                return vec![Cause::required(
                    format!("{path}.nameservers"),
                    "must provide at least one DNS nameserver when `dnsPolicy` is None",
                )]
            }
            _ => {}
        }
    }
    let Some(config) = config else {
        return causes;
    };
    let nameservers = arr(config, "nameservers");
    if nameservers.len() > 3 {
        causes.push(Cause::invalid(
            format!("{path}.nameservers"),
            &config["nameservers"],
            "must not have more than 3 nameservers",
        ));
    }
    for (i, ns) in nameservers.iter().enumerate() {
        causes.extend(valid_ip(
            ns.as_str().unwrap_or_default(),
            &format!("{path}.nameservers[{i}]"),
        ));
    }
    let searches = arr(config, "searches");
    if searches.len() > 32 {
        causes.push(Cause::invalid(
            format!("{path}.searches"),
            &config["searches"],
            "must not have more than 32 search paths",
        ));
    }
    let joined: usize = searches
        .iter()
        .map(|s| s.as_str().unwrap_or_default().len())
        .sum::<usize>()
        + searches.len().saturating_sub(1);
    if joined > 2048 {
        causes.push(Cause::invalid(
            format!("{path}.searches"),
            &config["searches"],
            "must not have more than 2048 characters (including spaces) in the search list",
        ));
    }
    for (i, search) in searches.iter().enumerate() {
        // `AllowRelaxedDNSSearchValidation` is on: `.` alone, and underscores, are allowed.
        let search = search.as_str().unwrap_or_default();
        if search == "." {
            continue;
        }
        let trimmed = search.strip_suffix('.').unwrap_or(search);
        let masked = trimmed.replace('_', "a");
        if !is_dns1123_subdomain(&masked).is_empty() {
            causes.push(Cause::invalid_str(
                format!("{path}.searches[{i}]"),
                trimmed,
                &crate::rules::validation::regex_error(
                    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character",
                    "[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?(\\.[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?)*",
                    &["example.com"],
                ),
            ));
        }
    }
    for (i, option) in arr(config, "options").iter().enumerate() {
        if str_of(option, "name").is_empty() {
            causes.push(Cause::required(
                format!("{path}.options[{i}]"),
                "must not be empty",
            ));
        }
    }
    causes
}

/// `validateTopologySpreadConstraints`.
fn topology_spread(spec: &Value, path: &dyn Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let list = arr(spec, "topologySpreadConstraints");
    for (i, c) in list.iter().enumerate() {
        let at = FieldPath::index(&path, i);
        let skew = c["maxSkew"].as_i64().unwrap_or(0);
        if skew <= 0 {
            causes.push(Cause::invalid(
                format!("{at}.maxSkew"),
                &Value::from(skew),
                "must be greater than zero",
            ));
        }
        let key = str_of(c, "topologyKey");
        if key.is_empty() {
            causes.push(Cause::required(
                format!("{at}.topologyKey"),
                "can not be empty",
            ));
        }
        let action = str_of(c, "whenUnsatisfiable");
        if !matches!(action, "DoNotSchedule" | "ScheduleAnyway") {
            causes.push(Cause::not_supported(
                format!("{at}.whenUnsatisfiable"),
                &Value::from(action),
                &strings(&["DoNotSchedule", "ScheduleAnyway"]),
            ));
        }
        let repeated = list[i + 1..]
            .iter()
            .any(|o| str_of(o, "topologyKey") == key && str_of(o, "whenUnsatisfiable") == action);
        if repeated {
            causes.push(Cause::duplicate(
                format!("{at}.{{topologyKey, whenUnsatisfiable}}"),
                &Value::from(format!("{{{key}, {action}}}")),
            ));
        }
        if let Some(min) = c.get("minDomains").and_then(Value::as_i64) {
            if min <= 0 {
                causes.push(Cause::invalid(
                    format!("{at}.minDomains"),
                    &Value::from(min),
                    "must be greater than zero",
                ));
            }
            if action != "DoNotSchedule" {
                causes.push(Cause::invalid(
                    format!("{at}.minDomains"),
                    &Value::from(min),
                    &format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                    ),
                ));
            }
        }
        for f in ["nodeAffinityPolicy", "nodeTaintsPolicy"] {
            if let Some(p) = c.get(f).and_then(Value::as_str) {
                if !matches!(p, "Honor" | "Ignore") {
                    causes.push(Cause::not_supported(
                        format!("{at}.{f}"),
                        &Value::from(p),
                        &strings(&["Honor", "Ignore"]),
                    ));
                }
            }
        }
        if let Some(sel) = c.get("labelSelector").filter(|v| v.is_object()) {
            causes.extend(selector::causes(
                sel,
                &FieldPath::field(&at, "labelSelector").to_string(),
            ));
        }
    }
    causes
}

/// The pod-only checks of `validatePodMetadataAndSpec` and `ValidatePodCreate`: images without
/// surrounding whitespace; no ephemeral containers or node name with scheduling gates on create.
pub fn pod_only(spec: &Value, create: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    for list in ["containers", "initContainers"] {
        for (i, c) in arr(spec, list).iter().enumerate() {
            let image = str_of(c, "image");
            if image.trim() != image {
                causes.push(Cause::invalid_str(
                    format!("spec.{list}[{i}].image"),
                    image,
                    "must not have leading or trailing whitespace",
                ));
            }
        }
    }
    if create {
        if !arr(spec, "ephemeralContainers").is_empty() {
            causes.push(Cause::forbidden(
                "spec.ephemeralContainers",
                "cannot be set on create",
            ));
        }
        if !str_of(spec, "nodeName").is_empty() && !arr(spec, "schedulingGates").is_empty() {
            causes.push(Cause::forbidden(
                "spec.nodeName",
                "cannot be set until all schedulingGates have been cleared",
            ));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    //! Each case: a pod spec (defaults filled as the server fills them) and the errors a real
    //! server gives for it (`field: message`), from the upstream function named in the case.

    use rstest::rstest;
    use serde_json::{json, Value};

    use super::*;

    /// A valid container with `extra` merged in.
    fn container(extra: Value) -> Value {
        let mut c = json!({"name": "app", "image": "busybox", "imagePullPolicy": "Always",
            "terminationMessagePolicy": "File"});
        if let (Some(c), Some(extra)) = (c.as_object_mut(), extra.as_object()) {
            for (k, v) in extra {
                c.insert(k.clone(), v.clone());
            }
        }
        c
    }

    fn spec(containers: Vec<Value>, extra: Value) -> Value {
        let mut s = json!({"containers": containers, "restartPolicy": "Always",
            "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30});
        if let (Some(s), Some(extra)) = (s.as_object_mut(), extra.as_object()) {
            for (k, v) in extra {
                s.insert(k.clone(), v.clone());
            }
        }
        s
    }

    fn errors(spec: &Value) -> Vec<String> {
        let opts = PodOpts {
            is_pod: true,
            pod_name: Some("p"),
        };
        let mut causes = validate(spec, &"spec", opts);
        causes.extend(pod_only(spec, true));
        causes.iter().map(Cause::error_text).collect()
    }

    #[rstest]
    // validateContainers / validateContainerCommon
    #[case::valid(spec(vec![container(json!({}))], json!({})), vec![])]
    #[case::no_containers(spec(vec![], json!({})), vec!["spec.containers: Required value"])]
    #[case::duplicate_names(spec(vec![container(json!({})), container(json!({}))], json!({})),
        vec!["spec.containers[1].name: Duplicate value: \"app\""])]
    #[case::image_required(spec(vec![container(json!({"image": ""}))], json!({})),
        vec!["spec.containers[0].image: Required value"])]
    #[case::image_whitespace(spec(vec![container(json!({"image": " busybox"}))], json!({})),
        vec!["spec.containers[0].image: Invalid value: \" busybox\": must not have leading or trailing whitespace"])]
    #[case::bad_pull_policy(spec(vec![container(json!({"imagePullPolicy": "Sometimes"}))], json!({})),
        vec!["spec.containers[0].imagePullPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\""])]
    #[case::init_name_clash(spec(vec![container(json!({}))], json!({"initContainers": [container(json!({}))]})),
        vec!["spec.initContainers[0].name: Duplicate value: \"app\""])]
    #[case::init_probe(spec(vec![container(json!({}))], json!({"initContainers": [container(json!({"name": "init", "readinessProbe": {"exec": {"command": ["true"]}}}))]})),
        vec!["spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always"])]
    #[case::sidecar_probe_allowed(spec(vec![container(json!({}))], json!({"initContainers": [container(json!({"name": "side", "restartPolicy": "Always", "readinessProbe": {"exec": {"command": ["true"]}}}))]})), vec![])]
    #[case::restart_policy_on_regular_container(spec(vec![container(json!({"restartPolicy": "Always"}))], json!({})),
        vec!["spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"])]
    // validateContainerPorts
    #[case::port_required(spec(vec![container(json!({"ports": [{"protocol": "TCP"}]}))], json!({})),
        vec!["spec.containers[0].ports[0].containerPort: Required value"])]
    #[case::port_range(spec(vec![container(json!({"ports": [{"containerPort": 70000, "protocol": "TCP"}]}))], json!({})),
        vec!["spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"])]
    #[case::port_name(spec(vec![container(json!({"ports": [{"name": "HTTP", "containerPort": 80, "protocol": "TCP"}]}))], json!({})),
        vec!["spec.containers[0].ports[0].name: Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
             "spec.containers[0].ports[0].name: Invalid value: \"HTTP\": must contain at least one letter (a-z)"])]
    #[case::port_protocol(spec(vec![container(json!({"ports": [{"containerPort": 80, "protocol": "ICMP"}]}))], json!({})),
        vec!["spec.containers[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\""])]
    #[case::host_port_conflict(spec(vec![container(json!({"ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]})), container(json!({"name": "b", "ports": [{"containerPort": 81, "hostPort": 8080, "protocol": "TCP"}]}))], json!({})),
        vec!["spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//8080\""])]
    // ValidateEnv
    #[case::env_name_required(spec(vec![container(json!({"env": [{"value": "x"}]}))], json!({})),
        vec!["spec.containers[0].env[0].name: Required value"])]
    #[case::env_name_equals(spec(vec![container(json!({"env": [{"name": "A=B"}]}))], json!({})),
        vec!["spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '='"])]
    #[case::env_value_and_from(spec(vec![container(json!({"env": [{"name": "A", "value": "x", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}]}))], json!({})),
        vec!["spec.containers[0].env[0].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty"])]
    #[case::env_field_ref(spec(vec![container(json!({"env": [{"name": "A", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.schedulerName"}}}]}))], json!({})),
        vec!["spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: \"spec.schedulerName\": supported values: \"metadata.name\", \"metadata.namespace\", \"metadata.uid\", \"spec.nodeName\", \"spec.serviceAccountName\", \"status.hostIP\", \"status.hostIPs\", \"status.podIP\", \"status.podIPs\""])]
    #[case::env_field_ref_unknown(spec(vec![container(json!({"env": [{"name": "A", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.foo"}}}]}))], json!({})),
        vec!["spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Invalid value: \"spec.foo\": error converting fieldPath: field label not supported: spec.foo"])]
    #[case::env_from_empty(spec(vec![container(json!({"envFrom": [{}]}))], json!({})),
        vec!["spec.containers[0].envFrom: Invalid value: \"\": must specify one of: `configMapRef` or `secretRef`"])]
    // validateResourceRequirements
    #[case::request_over_limit(spec(vec![container(json!({"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}))], json!({})),
        vec!["spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1"])]
    #[case::request_over_limit_units(spec(vec![container(json!({"resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "1024Mi"}}}))], json!({})),
        vec!["spec.containers[0].resources.requests: Invalid value: \"2Gi\": must be less than or equal to memory limit of 1Gi"])]
    #[case::request_equal_limit(spec(vec![container(json!({"resources": {"requests": {"cpu": "1000m"}, "limits": {"cpu": "1"}}}))], json!({})), vec![])]
    #[case::negative(spec(vec![container(json!({"resources": {"requests": {"cpu": "-1"}}}))], json!({})),
        vec!["spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"])]
    #[case::unknown_resource(spec(vec![container(json!({"resources": {"limits": {"gpu": "1"}}}))], json!({})),
        vec!["spec.containers[0].resources.limits[gpu]: Invalid value: \"gpu\": must be a standard resource type or fully qualified",
             "spec.containers[0].resources.limits[gpu]: Invalid value: \"gpu\": must be a standard resource for containers"])]
    #[case::extended_needs_limit(spec(vec![container(json!({"resources": {"requests": {"example.com/gpu": "1"}}}))], json!({})),
        vec!["spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"])]
    #[case::extended_equal(spec(vec![container(json!({"resources": {"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "2"}}}))], json!({})),
        vec!["spec.containers[0].resources.requests: Invalid value: \"1\": must be equal to example.com/gpu limit of 2"])]
    // ValidateVolumes / ValidateVolumeMounts
    #[case::volume_without_source(spec(vec![container(json!({}))], json!({"volumes": [{"name": "v"}]})),
        vec!["spec.volumes[0]: Required value: must specify a volume type"])]
    #[case::volume_two_sources(spec(vec![container(json!({}))], json!({"volumes": [{"name": "v", "emptyDir": {}, "configMap": {"name": "c"}}]})),
        vec!["spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type"])]
    #[case::volume_sources_in_go_order(spec(vec![container(json!({}))], json!({"volumes": [{"name": "v", "projected": {"sources": []}, "secret": {"secretName": "s"}, "csi": {"driver": "d"}}]})),
        vec!["spec.volumes[0].projected: Forbidden: may not specify more than 1 volume type",
             "spec.volumes[0].csi: Forbidden: may not specify more than 1 volume type"])]
    #[case::volume_null_source(spec(vec![container(json!({}))], json!({"volumes": [{"name": "v", "hostPath": null, "emptyDir": {}}]})), vec![])]
    #[case::volume_duplicate(spec(vec![container(json!({}))], json!({"volumes": [{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}]})),
        vec!["spec.volumes[1].name: Duplicate value: \"v\""])]
    #[case::volume_name(spec(vec![container(json!({}))], json!({"volumes": [{"name": "V_1", "emptyDir": {}}]})),
        vec!["spec.volumes[0].name: Invalid value: \"V_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])]
    #[case::secret_name_required(spec(vec![container(json!({}))], json!({"volumes": [{"name": "v", "secret": {}}]})),
        vec!["spec.volumes[0].secret.secretName: Required value"])]
    #[case::mount_unknown_volume(spec(vec![container(json!({"volumeMounts": [{"name": "data", "mountPath": "/data"}]}))], json!({})),
        vec!["spec.containers[0].volumeMounts[0].name: Not found: \"data\""])]
    #[case::mount_path_unique(spec(vec![container(json!({"volumeMounts": [{"name": "v", "mountPath": "/d"}, {"name": "v", "mountPath": "/d"}]}))], json!({"volumes": [{"name": "v", "emptyDir": {}}]})),
        vec!["spec.containers[0].volumeMounts[1].mountPath: Invalid value: \"/d\": must be unique"])]
    #[case::mount_ok(spec(vec![container(json!({"volumeMounts": [{"name": "v", "mountPath": "/d"}]}))], json!({"volumes": [{"name": "v", "emptyDir": {}}]})), vec![])]
    // ValidateVolumeDevices
    #[case::device_ok(spec(vec![container(json!({"volumeDevices": [{"name": "v", "devicePath": "/dev/xvda"}]}))], json!({"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]})), vec![])]
    #[case::device_needs_a_block_volume(spec(vec![container(json!({"volumeDevices": [{"name": "v", "devicePath": "/dev/xvda"}]}))], json!({"volumes": [{"name": "v", "emptyDir": {}}]})),
        vec!["spec.containers[0].volumeDevices[0].name: Invalid value: \"v\": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"])]
    #[case::device_path_unique(spec(vec![container(json!({}))], json!({"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}, {"name": "w", "persistentVolumeClaim": {"claimName": "d"}}], "initContainers": [container(json!({"name": "init", "volumeDevices": [{"name": "v", "devicePath": "/dev/xvda"}, {"name": "w", "devicePath": "/dev/xvda"}]}))]})),
        vec!["spec.initContainers[0].volumeDevices[1].devicePath: Invalid value: \"/dev/xvda\": must be unique"])]
    // validateProbe / validateHandler
    #[case::probe_without_handler(spec(vec![container(json!({"livenessProbe": {"periodSeconds": 10}}))], json!({})),
        vec!["spec.containers[0].livenessProbe: Required value: must specify a handler type"])]
    #[case::probe_two_handlers(spec(vec![container(json!({"readinessProbe": {"exec": {"command": ["x"]}, "tcpSocket": {"port": 80}}}))], json!({})),
        vec!["spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type"])]
    #[case::liveness_success_threshold(spec(vec![container(json!({"livenessProbe": {"httpGet": {"path": "/", "port": 8080, "scheme": "HTTP"}, "successThreshold": 2}}))], json!({})),
        vec!["spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"])]
    #[case::probe_port(spec(vec![container(json!({"readinessProbe": {"tcpSocket": {"port": 0}}}))], json!({})),
        vec!["spec.containers[0].readinessProbe.tcpSocket.port: Invalid value: 0: must be between 1 and 65535, inclusive"])]
    #[case::probe_negative(spec(vec![container(json!({"readinessProbe": {"exec": {"command": ["x"]}, "periodSeconds": -1}}))], json!({})),
        vec!["spec.containers[0].readinessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0"])]
    // ValidatePodSpec's own fields
    #[case::dns_policy(spec(vec![container(json!({}))], json!({"dnsPolicy": "Google"})),
        vec!["spec.dnsPolicy: Unsupported value: \"Google\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\""])]
    #[case::dns_none_needs_config(spec(vec![container(json!({}))], json!({"dnsPolicy": "None"})),
        vec!["spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"])]
    #[case::node_selector(spec(vec![container(json!({}))], json!({"nodeSelector": {"a": "b c"}})),
        vec!["spec.nodeSelector: Invalid value: \"b c\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"])]
    #[case::service_account_name(spec(vec![container(json!({}))], json!({"serviceAccountName": "Bad"})),
        vec!["spec.serviceAccountName: Invalid value: \"Bad\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])]
    #[case::run_as_user(spec(vec![container(json!({"securityContext": {"runAsUser": -1}}))], json!({})),
        vec!["spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive"])]
    #[case::affinity_weight(spec(vec![container(json!({}))], json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]}}})),
        vec!["spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100"])]
    #[case::node_affinity_terms(spec(vec![container(json!({}))], json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}})),
        vec!["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term"])]
    #[case::spread_skew(spec(vec![container(json!({}))], json!({"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]})),
        vec!["spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"])]
    #[case::ephemeral_on_create(spec(vec![container(json!({}))], json!({"ephemeralContainers": [{"name": "e", "image": "x"}]})),
        vec!["spec.ephemeralContainers: Forbidden: cannot be set on create"])]
    fn pod_specs(#[case] spec: Value, #[case] expected: Vec<&str>) {
        assert_eq!(errors(&spec), expected);
    }

    /// The checks kept by map identity (`rules::known_maps`) answer for a map shared with one
    /// that passed as they would have, and never keep one that failed: a pod made from the
    /// same template twice (its maps shared) gets the same errors both times.
    #[rstest]
    #[case::valid(json!({"env": [{"name": "A", "value": "1"}],
        "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "500m"}}}), json!([]),
        projected(3607, "token"), true)]
    #[case::invalid_env(json!({"env": [{"name": "A", "valueFrom": {}}]}), json!([]), json!([]),
        false)]
    #[case::invalid_resources(json!({"resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}}),
        json!([]), json!([]), false)]
    #[case::invalid_toleration(json!({}), json!([{"key": "k", "operator": "Bad"}]), json!([]),
        false)]
    #[case::short_token(json!({}), json!([]), projected(60, "token"), false)]
    #[case::token_path(json!({}), json!([]), projected(3607, "../token"), false)]
    fn a_template_validated_twice_gives_the_same_errors(
        #[case] extra: Value,
        #[case] tolerations: Value,
        #[case] volumes: Value,
        #[case] valid: bool,
    ) {
        let template = spec(
            vec![container(extra)],
            json!({"tolerations": tolerations, "volumes": volumes}),
        );
        let first = errors(&template.clone());
        assert_eq!(first.is_empty(), valid, "{first:?}");
        assert_eq!(errors(&template.clone()), first);
        assert_eq!(errors(&template), first);
    }

    /// A projected volume of a service account token (lasting `seconds`, at `path`) and the
    /// namespace's downward API file, as the token volume every pod gets.
    fn projected(seconds: i64, path: &str) -> Value {
        json!([{"name": "api", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": seconds, "path": path}},
            {"downwardAPI": {"items": [{"path": "namespace",
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}])
    }
}
