//! The `Warning` headers the kind strategies add to a successful write (`WarningsOnCreate`,
//! `WarningsOnUpdate`): the pod spec warnings of `pkg/api/pod/warnings.go`
//! (`warningsForPodSpecAndMeta`: deprecated node labels, annotations and volume plugins,
//! duplicated pull secrets, host aliases, env vars and ports, fractional byte quantities,
//! negative grace periods, null label selectors) for pods and every kind that embeds a pod
//! template, and the workloads' name warning (`metadata.name: this is used in Pod names and
//! hostnames ...`); the job spec's (`pkg/api/job/warnings.go`), a StatefulSet's, a CronJob's and
//! an Ingress's own strategy warnings; a Service's in [`service`].

use std::collections::BTreeSet;

use serde_json::Value;

use super::{str_of, Quantity};
use crate::resource::ResourceInfo;
use crate::rules::validation::{go_quote, is_dns1123_label};

mod service;

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Where a kind keeps its pod template (`None` for a Pod, whose spec is its own).
fn template_path(info: &ResourceInfo) -> Option<Option<&'static str>> {
    if info.custom {
        return None;
    }
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod") => Some(None),
        ("", "PodTemplate") => Some(Some("template")),
        ("", "ReplicationController")
        | ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
        | ("batch", "Job") => Some(Some("spec.template")),
        ("batch", "CronJob") => Some(Some("spec.jobTemplate.spec.template")),
        _ => None,
    }
}

fn at<'a>(obj: &'a Value, dotted: &str) -> &'a Value {
    dotted.split('.').fold(obj, |v, k| &v[k])
}

/// The warnings of creating `obj`.
pub fn on_create(info: &ResourceInfo, obj: &Value) -> Vec<String> {
    if info.is_builtin("", "Service") {
        return service::warnings(obj);
    }
    if let Some(warnings) = node_label_warnings(info, obj) {
        return warnings;
    }
    if info.is_builtin("networking.k8s.io", "Ingress") {
        return ingress_class_annotation(obj).into_iter().collect();
    }
    let Some(template) = template_path(info) else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    let workload = matches!(
        (info.group.as_str(), info.kind.as_str()),
        ("", "ReplicationController")
            | ("apps", "Deployment" | "ReplicaSet" | "DaemonSet")
            | ("batch", "Job" | "CronJob")
    );
    if workload {
        let name = str_of(&obj["metadata"], "name");
        let msgs = is_dns1123_label(name);
        if !msgs.is_empty() {
            warnings.push(format!(
                "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [{}]",
                msgs.join(" ")
            ));
        }
    }
    warnings.extend(job_spec_warnings(info, obj));
    warnings.extend(pod_warnings(obj, template));
    if info.is_builtin("apps", "StatefulSet") {
        warnings.extend(stateful_set_warnings(obj, ""));
    }
    warnings
}

/// Where a Job or CronJob keeps its job spec.
fn job_spec_path(info: &ResourceInfo) -> Option<&'static str> {
    if info.is_builtin("batch", "Job") {
        Some("spec")
    } else if info.is_builtin("batch", "CronJob") {
        Some("spec.jobTemplate.spec")
    } else {
        None
    }
}

/// `WarningsForJobSpec` beyond the pod template: an Indexed Job with more than 10^5
/// completions and a parallelism above 10^4.
fn job_spec_warnings(info: &ResourceInfo, obj: &Value) -> Option<String> {
    let path = job_spec_path(info)?;
    let spec = at(obj, path);
    let count = |key: &str| spec[key].as_i64().unwrap_or(0);
    (str_of(spec, "completionMode") == "Indexed"
        && count("completions") > 100_000
        && count("parallelism") > 10_000)
        .then(|| {
            format!("{path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail")
        })
}

/// The Ingress strategy's create warning: the class annotation without `spec.ingressClassName`.
fn ingress_class_annotation(ingress: &Value) -> Option<String> {
    const ANNOTATION: &str = "kubernetes.io/ingress.class";
    let annotated = ingress["metadata"]["annotations"].get(ANNOTATION).is_some();
    let class = ingress["spec"]
        .get("ingressClassName")
        .is_some_and(|v| !v.is_null());
    (annotated && !class).then(|| {
        format!(
            "annotation \"{ANNOTATION}\" is deprecated, please use 'spec.ingressClassName' instead"
        )
    })
}

/// What a StatefulSet warns about beyond its pod template, on create and on every update: its
/// claim templates' specs (at `spec.volumeClaimTemplates[i]`, then `claim_child`: the update
/// path names a `Spec` child, the create path none, as upstream writes them) and a negative
/// revision history limit.
fn stateful_set_warnings(set: &Value, claim_child: &str) -> Vec<String> {
    let spec = &set["spec"];
    let mut warnings: Vec<String> = arr(spec, "volumeClaimTemplates")
        .iter()
        .enumerate()
        .flat_map(|(i, claim)| {
            pvc_spec_warnings(
                &format!("spec.volumeClaimTemplates[{i}]{claim_child}"),
                &claim["spec"],
            )
        })
        .collect();
    if spec["revisionHistoryLimit"].as_i64().is_some_and(|n| n < 0) {
        warnings.push(
            "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended"
                .into(),
        );
    }
    warnings
}

/// The warnings of updating `old` into `new` (`WarningsOnUpdate`): a Service's always; a
/// template's (and a job spec's) when the object's generation moves, that is when its spec (a
/// PodTemplate's `template`) changed; a StatefulSet's claim templates and history limit and a
/// CronJob's time zone in the schedule always. A pod's update has none: its strategy skips
/// them, as humans seldom write pods and the path is a hot one.
pub fn on_update(info: &ResourceInfo, old: &Value, new: &Value) -> Vec<String> {
    if info.is_builtin("", "Service") {
        return service::warnings(new);
    }
    if let Some(warnings) = node_label_warnings(info, new) {
        return warnings;
    }
    let Some(Some(template)) = template_path(info) else {
        return Vec::new();
    };
    let spec_key = if info.kind == "PodTemplate" {
        "template"
    } else {
        "spec"
    };
    let mut warnings = Vec::new();
    // The strategies warn when the generation moved (or the spec changed): as the Go type sees
    // the spec, so `[]` for no list is no change.
    if !super::same_at(&info.group, &info.kind, &[spec_key], old, new) {
        warnings.extend(job_spec_warnings(info, new));
        warnings.extend(pod_warnings(new, Some(template)));
    }
    if info.is_builtin("batch", "CronJob") && str_of(&new["spec"], "schedule").contains("TZ") {
        // Upstream names the field `spec.spec.schedule`.
        warnings.push("cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details".into());
    }
    if info.is_builtin("apps", "StatefulSet") {
        warnings.extend(stateful_set_warnings(new, ".Spec"));
    }
    warnings
}

/// `api.SeccompPodAnnotationKey`, `api.SeccompContainerAnnotationKeyPrefix`,
/// `api.DeprecatedAppArmorAnnotationKeyPrefix`, and what is said of the first two.
const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";
const APP_ARMOR_ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";
const SECCOMP_MESSAGE: &str = "non-functional in v1.27+; use the \"seccompProfile\" field instead";

/// `{prefix}spec.{list}[{index}]`: a container's path, written out only for a warning.
#[derive(Clone, Copy)]
struct ContainerPath<'a> {
    prefix: &'a str,
    list: &'a str,
    index: usize,
}

impl std::fmt::Display for ContainerPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}spec.{}[{}]", self.prefix, self.list, self.index)
    }
}

/// A container's port's path (`...ports[index]`), written out only for a warning.
#[derive(Clone, Copy)]
struct PortPath<'a> {
    container: ContainerPath<'a>,
    index: usize,
}

impl std::fmt::Display for PortPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.ports[{}]", self.container, self.index)
    }
}

/// The `fractional byte value` warning of a memory or storage quantity that is not a whole
/// number of bytes (`MilliValue() % 1000 != 0`), shown in its canonical form.
fn fractional_bytes(path: &dyn std::fmt::Display, value: Option<&Value>) -> Option<String> {
    let quantity = value.and_then(|v| match v {
        Value::String(s) => Quantity::parse(s),
        Value::Number(n) => Quantity::parse(&n.to_string()),
        _ => None,
    })?;
    (!quantity.is_integer()).then(|| {
        format!(
            "{path}: fractional byte value {} is invalid, must be an integer",
            go_quote(&quantity.canonical())
        )
    })
}

/// `GetWarningsForPersistentVolumeClaimSpec`: fractional storage requests and limits of a claim
/// spec at `path`.
fn pvc_spec_warnings(path: &str, spec: &Value) -> Vec<String> {
    ["requests", "limits"]
        .into_iter()
        .filter_map(|kind| {
            fractional_bytes(
                &format_args!("{path}.resources.{kind}[storage]"),
                spec["resources"][kind].get("storage"),
            )
        })
        .collect()
}

fn pod_warnings(obj: &Value, template: Option<&str>) -> Vec<String> {
    let (holder, prefix) = match template {
        None => (obj, String::new()),
        Some(path) => (at(obj, path), format!("{path}.")),
    };
    spec_and_meta(&holder["spec"], &holder["metadata"], &prefix)
}

const DEPRECATED_NODE_LABELS: [(&str, &str); 5] = [
    (
        "beta.kubernetes.io/arch",
        "deprecated since v1.14; use \"kubernetes.io/arch\" instead",
    ),
    (
        "beta.kubernetes.io/os",
        "deprecated since v1.14; use \"kubernetes.io/os\" instead",
    ),
    (
        "failure-domain.beta.kubernetes.io/region",
        "deprecated since v1.17; use \"topology.kubernetes.io/region\" instead",
    ),
    (
        "failure-domain.beta.kubernetes.io/zone",
        "deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead",
    ),
    (
        "beta.kubernetes.io/instance-type",
        "deprecated since v1.17; use \"node.kubernetes.io/instance-type\" instead",
    ),
];

fn deprecated_node_label(key: &str) -> Option<&'static str> {
    DEPRECATED_NODE_LABELS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, m)| *m)
}

/// The warnings of the kinds whose strategies warn of deprecated node labels alone, on create
/// and update alike (`None` for other kinds): a StorageClass's allowed topologies
/// (`GetWarningsForStorageClass`), a RuntimeClass's scheduling node selector
/// (`GetWarningsForRuntimeClass`, which names the field, not the label), a CSIStorageCapacity's
/// node topology.
fn node_label_warnings(info: &ResourceInfo, obj: &Value) -> Option<Vec<String>> {
    if info.custom {
        return None;
    }
    let mut out = Vec::new();
    match (info.group.as_str(), info.kind.as_str()) {
        ("storage.k8s.io", "StorageClass") => {
            for (i, term) in arr(obj, "allowedTopologies").iter().enumerate() {
                for (j, req) in arr(term, "matchLabelExpressions").iter().enumerate() {
                    if let Some(msg) = deprecated_node_label(str_of(req, "key")) {
                        out.push(format!(
                            "allowedTopologies[{i}].matchLabelExpressions[{j}].key: {msg}"
                        ));
                    }
                }
            }
        }
        ("node.k8s.io", "RuntimeClass") => {
            let selector = obj["scheduling"]["nodeSelector"].as_object();
            for key in selector.into_iter().flatten().map(|(k, _)| k) {
                if let Some(msg) = deprecated_node_label(key) {
                    out.push(format!("scheduling.nodeSelector: {msg}"));
                }
            }
        }
        ("storage.k8s.io", "CSIStorageCapacity") => {
            out = super::storage::csi_storage_capacity::warnings(obj);
        }
        _ => return None,
    }
    Some(out)
}

/// `GetWarningsForNodeSelector`: deprecated node labels in a label selector's expressions, then
/// in its `matchLabels` (in key order; Go ranges over the map).
pub(crate) fn label_selector(selector: &Value, path: &str, out: &mut Vec<String>) {
    for (i, req) in arr(selector, "matchExpressions").iter().enumerate() {
        let key = str_of(req, "key");
        if let Some(msg) = deprecated_node_label(key) {
            out.push(format!("{path}.matchExpressions[{i}].key: {key} is {msg}"));
        }
    }
    for key in selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        if let Some(msg) = deprecated_node_label(key) {
            out.push(format!("{path}.matchLabels.{key}: {msg}"));
        }
    }
}

/// `GetWarningsForNodeSelectorTerm`.
fn node_selector_term(term: &Value, path: &str, out: &mut Vec<String>) {
    for (i, req) in arr(term, "matchExpressions").iter().enumerate() {
        let key = str_of(req, "key");
        if let Some(msg) = deprecated_node_label(key) {
            out.push(format!("{path}.matchExpressions[{i}].key: {key} is {msg}"));
        }
    }
}

/// The volume sources `GetWarningsForPodTemplate` warns about: the field, how the warning names
/// it, and the message, in the order upstream checks them.
const DEPRECATED_VOLUME_SOURCES: [(&str, &str, &str); 9] = [
    (
        "photonPersistentDisk",
        "photonPersistentDisk",
        "deprecated in v1.11, non-functional in v1.16+",
    ),
    ("gitRepo", "gitRepo", "deprecated in v1.11"),
    (
        "scaleIO",
        "scaleIO",
        "deprecated in v1.16, non-functional in v1.22+",
    ),
    (
        "flocker",
        "flocker",
        "deprecated in v1.22, non-functional in v1.25+",
    ),
    (
        "storageos",
        "storageOS",
        "deprecated in v1.22, non-functional in v1.25+",
    ),
    (
        "quobyte",
        "quobyte",
        "deprecated in v1.22, non-functional in v1.25+",
    ),
    (
        "glusterfs",
        "glusterfs",
        "deprecated in v1.25, non-functional in v1.26+",
    ),
    (
        "cephfs",
        "cephfs",
        "deprecated in v1.28, non-functional in v1.31+",
    ),
    (
        "rbd",
        "rbd",
        "deprecated in v1.28, non-functional in v1.31+",
    ),
];

/// `warningsForPodSpecAndMeta`.
fn spec_and_meta(spec: &Value, meta: &Value, p: &str) -> Vec<String> {
    let mut w = Vec::new();
    for key in spec["nodeSelector"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        if let Some(msg) = deprecated_node_label(key) {
            w.push(format!("{p}spec.nodeSelector[{key}]: {msg}"));
        }
    }
    let node_affinity = &spec["affinity"]["nodeAffinity"];
    for (i, term) in arr(
        &node_affinity["requiredDuringSchedulingIgnoredDuringExecution"],
        "nodeSelectorTerms",
    )
    .iter()
    .enumerate()
    {
        node_selector_term(
            term,
            &format!("{p}spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]"),
            &mut w,
        );
    }
    for (i, term) in arr(
        node_affinity,
        "preferredDuringSchedulingIgnoredDuringExecution",
    )
    .iter()
    .enumerate()
    {
        node_selector_term(
            &term["preference"],
            &format!("{p}spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference"),
            &mut w,
        );
    }
    for (i, c) in arr(spec, "topologySpreadConstraints").iter().enumerate() {
        let key = str_of(c, "topologyKey");
        if let Some(msg) = deprecated_node_label(key) {
            w.push(format!(
                "{p}spec.topologySpreadConstraints[{i}].topologyKey: {key} is {msg}"
            ));
        }
        if c.get("labelSelector").is_none_or(Value::is_null) {
            w.push(format!(
                "{p}spec.topologySpreadConstraints[{i}].labelSelector: a null labelSelector results in matching no pod"
            ));
        }
    }
    let annotations = meta["annotations"].as_object();
    for (key, message) in [
        (
            "scheduler.alpha.kubernetes.io/critical-pod",
            "non-functional in v1.16+; use the \"priorityClassName\" field instead",
        ),
        (
            "security.alpha.kubernetes.io/sysctls",
            "non-functional in v1.11+; use the \"sysctls\" field instead",
        ),
        (
            "security.alpha.kubernetes.io/unsafe-sysctls",
            "non-functional in v1.11+; use the \"sysctls\" field instead",
        ),
    ] {
        if annotations.is_some_and(|a| a.contains_key(key)) {
            w.push(format!("{p}metadata.annotations[{key}]: {message}"));
        }
    }
    for (i, v) in arr(spec, "volumes").iter().enumerate() {
        // A volume holds its name and (valid) one source: its few keys are looked up in the
        // table rather than the table's nine in it; the warnings keep the table's order.
        let mut deprecated: Vec<usize> = v
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, source)| !source.is_null())
            .filter_map(|(key, _)| {
                DEPRECATED_VOLUME_SOURCES
                    .iter()
                    .position(|(k, _, _)| *k == key.as_str())
            })
            .collect();
        deprecated.sort_unstable();
        for (_, shown, message) in deprecated.into_iter().map(|d| DEPRECATED_VOLUME_SOURCES[d]) {
            w.push(format!("{p}spec.volumes[{i}].{shown}: {message}"));
        }
        let claim = &v["ephemeral"]["volumeClaimTemplate"];
        if claim.is_object() {
            w.extend(pvc_spec_warnings(
                &format!("{p}spec.volumes[{i}].ephemeral.volumeClaimTemplate.spec"),
                &claim["spec"],
            ));
        }
    }
    let aliases = arr(spec, "hostAliases");
    if aliases.len() > 1 {
        let mut seen = BTreeSet::new();
        for (i, a) in aliases.iter().enumerate() {
            let ip = str_of(a, "ip");
            if !seen.insert(ip) {
                w.push(format!(
                    "{p}spec.hostAliases[{i}].ip: duplicate ip {}",
                    go_quote(ip)
                ));
            }
        }
    }
    let secrets = arr(spec, "imagePullSecrets");
    if secrets.len() > 1 {
        let mut seen = BTreeSet::new();
        for (i, s) in secrets.iter().enumerate() {
            let name = str_of(s, "name");
            if !seen.insert(name) {
                w.push(format!(
                    "{p}spec.imagePullSecrets[{i}].name: duplicate name {}",
                    go_quote(name)
                ));
            }
        }
    }
    for (i, s) in secrets.iter().enumerate() {
        if str_of(s, "name").is_empty() {
            w.push(format!(
                "{p}spec.imagePullSecrets[{i}].name: invalid empty name \"\""
            ));
        }
    }
    for res in ["memory", "ephemeral-storage"] {
        w.extend(fractional_bytes(
            &format_args!("{p}spec.overhead[{res}]"),
            spec["overhead"].get(res),
        ));
    }
    // Seccomp and AppArmor annotations without the fields that replaced them.
    let annotation = |key: &str| meta["annotations"].get(key).is_some();
    let pod_security = &spec["securityContext"];
    if pod_security
        .get("seccompProfile")
        .is_none_or(Value::is_null)
        && annotation(SECCOMP_POD_ANNOTATION)
    {
        w.push(format!(
            "{p}metadata.annotations[{SECCOMP_POD_ANNOTATION}]: {SECCOMP_MESSAGE}"
        ));
    }
    let pod_app_armor = pod_security
        .get("appArmorProfile")
        .is_some_and(|v| !v.is_null());
    let containers: Vec<(ContainerPath<'_>, &Value)> =
        ["initContainers", "containers", "ephemeralContainers"]
            .iter()
            .flat_map(|list| {
                arr(spec, list).iter().enumerate().map(move |(index, c)| {
                    let at = ContainerPath {
                        prefix: p,
                        list,
                        index,
                    };
                    (at, c)
                })
            })
            .collect();
    // A container's annotation keys are only written out when some annotation has the prefix.
    let annotated_with = |prefix: &str| {
        meta["annotations"]
            .as_object()
            .is_some_and(|a| a.keys().any(|k| k.starts_with(prefix)))
    };
    let seccomp_annotated = annotated_with(SECCOMP_CONTAINER_ANNOTATION_PREFIX);
    let app_armor_annotated = annotated_with(APP_ARMOR_ANNOTATION_PREFIX);
    for (cp, c) in &containers {
        let name = str_of(c, "name");
        let security = &c["securityContext"];
        if seccomp_annotated && security.get("seccompProfile").is_none_or(Value::is_null) {
            let seccomp_key = format!("{SECCOMP_CONTAINER_ANNOTATION_PREFIX}{name}");
            if annotation(&seccomp_key) {
                w.push(format!(
                    "{p}metadata.annotations[{seccomp_key}]: {SECCOMP_MESSAGE}"
                ));
            }
        }
        // Only templates: a pod's own annotations are reconciled with its fields on create
        // (`applyAppArmorVersionSkew`).
        let app_armor = pod_app_armor
            || security
                .get("appArmorProfile")
                .is_some_and(|v| !v.is_null());
        if app_armor_annotated && !p.is_empty() && !app_armor {
            let app_armor_key = format!("{APP_ARMOR_ANNOTATION_PREFIX}{name}");
            if annotation(&app_armor_key) {
                w.push(format!(
                    "{p}metadata.annotations[{app_armor_key}]: deprecated since v1.30; use the \"appArmorProfile\" field instead"
                ));
            }
        }
        let resources = &c["resources"];
        for kind in ["limits", "requests"] {
            let Some(list) = resources[kind].as_object() else {
                continue;
            };
            for res in ["memory", "ephemeral-storage"] {
                w.extend(fractional_bytes(
                    &format_args!("{cp}.resources.{kind}[{res}]"),
                    list.get(res),
                ));
            }
        }
        let env = arr(c, "env");
        if env.len() > 1 {
            let mut seen = BTreeSet::new();
            for (i, e) in env.iter().enumerate() {
                let name = str_of(e, "name");
                if seen.insert(name) {
                    continue;
                }
                let reference = format!("$({name})");
                let value = str_of(e, "value");
                let bad = e.get("valueFrom").is_some_and(|v| !v.is_null())
                    || value == reference
                    || !value.contains(&reference);
                if bad {
                    w.push(format!(
                        "{cp}.env[{i}]: hides previous definition of {}, which may be dropped when using apply",
                        go_quote(name)
                    ));
                }
            }
        }
    }
    // Ports across all containers, by container port and protocol.
    let mut all: Vec<(PortPath<'_>, &Value)> = Vec::new();
    for (cp, c) in &containers {
        for (i, port) in arr(c, "ports").iter().enumerate() {
            let here = PortPath {
                container: *cp,
                index: i,
            };
            let key = |p: &Value| {
                (
                    p["containerPort"].as_i64().unwrap_or(0),
                    str_of(p, "protocol").to_string(),
                )
            };
            let host_ip = str_of(port, "hostIP");
            let host_port = port["hostPort"].as_i64().unwrap_or(0);
            for (other_path, other) in all.iter().filter(|(_, o)| key(o) == key(port)) {
                let (other_ip, other_port) = (
                    str_of(other, "hostIP"),
                    other["hostPort"].as_i64().unwrap_or(0),
                );
                if host_ip == other_ip && host_port == other_port {
                    w.push(format!(
                        "{here}: duplicate port definition with {other_path}"
                    ));
                } else if host_port == 0 || other_port == 0 {
                    w.push(format!(
                        "{here}: overlapping port definition with {other_path}"
                    ));
                } else if host_port == other_port && (host_ip.is_empty() != other_ip.is_empty()) {
                    w.push(format!(
                        "{here}: dangerously ambiguous port definition with {other_path}"
                    ));
                }
            }
            all.push((here, port));
        }
    }
    if spec["terminationGracePeriodSeconds"]
        .as_i64()
        .is_some_and(|g| g < 0)
    {
        w.push(format!(
            "{p}spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"
        ));
    }
    for kind in ["podAffinity", "podAntiAffinity"] {
        let a = &spec["affinity"][kind];
        for (i, t) in arr(a, "requiredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            if t.get("labelSelector").is_none_or(Value::is_null) {
                w.push(format!("{p}spec.affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution[{i}].labelSelector: a null labelSelector results in matching no pod"));
            }
        }
        for (i, t) in arr(a, "preferredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            if t["podAffinityTerm"]
                .get("labelSelector")
                .is_none_or(Value::is_null)
            {
                w.push(format!("{p}spec.affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution[{i}].podAffinityTerm.labelSelector: a null labelSelector results in matching no pod"));
            }
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    use crate::resource::builtin_info as info;

    fn pod(spec: Value) -> Value {
        json!({"metadata": {"name": "p"}, "spec": spec})
    }

    #[rstest]
    #[case::none(pod(json!({"containers": [{"name": "c", "image": "i"}]})), vec![])]
    #[case::node_label(pod(json!({"nodeSelector": {"beta.kubernetes.io/os": "linux"}, "containers": []})),
        vec!["spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use \"kubernetes.io/os\" instead"])]
    #[case::env(pod(json!({"containers": [{"name": "c", "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]}]})),
        vec!["spec.containers[0].env[1]: hides previous definition of \"A\", which may be dropped when using apply"])]
    #[case::ports(pod(json!({"containers": [{"name": "c", "ports": [{"containerPort": 80, "protocol": "TCP"}]}, {"name": "d", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]})),
        vec!["spec.containers[1].ports[0]: duplicate port definition with spec.containers[0].ports[0]"])]
    #[case::fraction(pod(json!({"containers": [{"name": "c", "resources": {"limits": {"memory": "0.5"}}}]})),
        vec!["spec.containers[0].resources.limits[memory]: fractional byte value \"500m\" is invalid, must be an integer"])]
    #[case::grace(pod(json!({"terminationGracePeriodSeconds": -1, "containers": []})),
        vec!["spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"])]
    #[case::overhead(pod(json!({"overhead": {"memory": "0.5"}, "containers": []})),
        vec!["spec.overhead[memory]: fractional byte value \"500m\" is invalid, must be an integer"])]
    #[case::ephemeral_claim(pod(json!({"containers": [], "volumes": [{"name": "v", "ephemeral": {
            "volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "1.5"}}}}}}]})),
        vec!["spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]: fractional byte value \"1500m\" is invalid, must be an integer"])]
    #[case::git_repo(pod(json!({"containers": [], "volumes": [{"name": "v", "gitRepo": {"repository": "r"}}]})),
        vec!["spec.volumes[0].gitRepo: deprecated in v1.11"])]
    #[case::null_source(pod(json!({"containers": [], "volumes": [{"name": "v", "gitRepo": null}]})), vec![])]
    #[case::sources_in_upstream_order(pod(json!({"containers": [], "volumes": [{"name": "v", "configMap": {"name": "c"}},
            {"name": "w", "rbd": {}, "cephfs": {}, "storageos": {}}]})),
        vec!["spec.volumes[1].storageOS: deprecated in v1.22, non-functional in v1.25+",
            "spec.volumes[1].cephfs: deprecated in v1.28, non-functional in v1.31+",
            "spec.volumes[1].rbd: deprecated in v1.28, non-functional in v1.31+"])]
    #[case::seccomp_annotations(json!({"metadata": {"name": "p", "annotations": {
            "seccomp.security.alpha.kubernetes.io/pod": "runtime/default",
            "container.seccomp.security.alpha.kubernetes.io/c": "runtime/default",
            "container.seccomp.security.alpha.kubernetes.io/d": "runtime/default"}},
            "spec": {"containers": [{"name": "c"}, {"name": "d", "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}]}}),
        vec!["metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the \"seccompProfile\" field instead",
            "metadata.annotations[container.seccomp.security.alpha.kubernetes.io/c]: non-functional in v1.27+; use the \"seccompProfile\" field instead"])]
    #[case::seccomp_field(json!({"metadata": {"name": "p", "annotations": {
            "seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}},
            "spec": {"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}, "containers": []}}), vec![])]
    #[case::pod_app_armor_annotation(json!({"metadata": {"name": "p", "annotations": {
            "container.apparmor.security.beta.kubernetes.io/c": "runtime/default"}},
            "spec": {"containers": [{"name": "c"}]}}), vec![])]
    fn pods(#[case] obj: Value, #[case] expected: Vec<&str>) {
        assert_eq!(on_create(&info("", "Pod"), &obj), expected);
    }

    #[test]
    fn workloads_warn_about_their_name_and_template() {
        let d = json!({"metadata": {"name": "web.v1"}, "spec": {"template": {"spec": {
            "hostAliases": [{"ip": "1.2.3.4"}, {"ip": "1.2.3.4"}], "containers": []}}}});
        assert_eq!(
            on_create(&info("apps", "Deployment"), &d),
            vec![
                "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]".to_string(),
                "spec.template.spec.hostAliases[1].ip: duplicate ip \"1.2.3.4\"".to_string(),
            ]
        );
        // An update that leaves the spec alone warns about nothing.
        assert!(on_update(&info("apps", "Deployment"), &d, &d).is_empty());
    }

    #[test]
    fn templates_warn_about_app_armor_annotations_without_the_field() {
        let deployment = |security: Value| {
            json!({"metadata": {"name": "web"}, "spec": {"template": {
                "metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/c": "runtime/default"}},
                "spec": {"containers": [{"name": "c", "securityContext": security}]}}}})
        };
        assert_eq!(
            on_create(&info("apps", "Deployment"), &deployment(json!({}))),
            vec!["spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: deprecated since v1.30; use the \"appArmorProfile\" field instead"]
        );
        let with_field = deployment(json!({"appArmorProfile": {"type": "RuntimeDefault"}}));
        assert!(on_create(&info("apps", "Deployment"), &with_field).is_empty());
    }

    #[test]
    fn stateful_sets_warn_about_claim_templates_and_history_on_every_write() {
        let set = json!({"metadata": {"name": "db"}, "spec": {"revisionHistoryLimit": -1,
            "template": {"spec": {"containers": []}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                "spec": {"resources": {"requests": {"storage": "0.5Gi"}, "limits": {"storage": "1.5"}}}}]}});
        let history = "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended";
        let info = info("apps", "StatefulSet");
        assert_eq!(
            on_create(&info, &set),
            vec![
                "spec.volumeClaimTemplates[0].resources.limits[storage]: fractional byte value \"1500m\" is invalid, must be an integer",
                history,
            ]
        );
        // An update that changes nothing still warns, and names the claim's `Spec` as upstream does.
        assert_eq!(
            on_update(&info, &set, &set),
            vec![
                "spec.volumeClaimTemplates[0].Spec.resources.limits[storage]: fractional byte value \"1500m\" is invalid, must be an integer",
                history,
            ]
        );
    }

    #[test]
    fn jobs_warn_about_big_indexed_jobs_and_cron_jobs_about_their_name_and_time_zone() {
        let job_spec = json!({"completionMode": "Indexed", "completions": 200000, "parallelism": 20000,
            "template": {"spec": {"containers": []}}});
        let indexed = "In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail";
        let job = json!({"metadata": {"name": "j"}, "spec": job_spec});
        assert_eq!(
            on_create(&info("batch", "Job"), &job),
            vec![format!("spec: {indexed}")]
        );
        let cron = json!({"metadata": {"name": "nightly.run"}, "spec": {"schedule": "0 1 * * *",
            "jobTemplate": {"spec": job_spec}}});
        assert_eq!(
            on_create(&info("batch", "CronJob"), &cron),
            vec![
                "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]".to_string(),
                format!("spec.jobTemplate.spec: {indexed}"),
            ]
        );
        // An update keeping the spec warns only about a time zone in the schedule.
        let mut zoned = cron.clone();
        zoned["spec"]["schedule"] = json!("CRON_TZ=UTC 0 1 * * *");
        assert!(on_update(&info("batch", "CronJob"), &cron, &cron).is_empty());
        let warnings = on_update(&info("batch", "CronJob"), &zoned, &zoned);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("cannot use TZ or CRON_TZ in spec.spec.schedule"));
    }

    #[test]
    fn an_ingress_class_annotation_warns_on_create_only() {
        let info = info("networking.k8s.io", "Ingress");
        let annotated = json!({"metadata": {"name": "i", "annotations": {"kubernetes.io/ingress.class": "nginx"}}, "spec": {}});
        assert_eq!(
            on_create(&info, &annotated),
            vec!["annotation \"kubernetes.io/ingress.class\" is deprecated, please use 'spec.ingressClassName' instead"]
        );
        assert!(on_update(&info, &annotated, &annotated).is_empty());
        let mut with_class = annotated.clone();
        with_class["spec"]["ingressClassName"] = json!("nginx");
        assert!(on_create(&info, &with_class).is_empty());
    }

    /// `WarningsOnUpdate`: the pod strategy's returns nothing; a template holder's warns when its
    /// generation moves (the pod template, or a PodTemplate's `template`, changed).
    #[rstest]
    #[case::pod_spec_changed("", "Pod", "spec", true, None)]
    #[case::pod_spec_kept("", "Pod", "spec", false, None)]
    #[case::pod_template_changed(
        "",
        "PodTemplate",
        "template",
        true,
        Some("template.spec.nodeSelector[beta.kubernetes.io/os]")
    )]
    #[case::pod_template_kept("", "PodTemplate", "template", false, None)]
    #[case::deployment_changed(
        "apps",
        "Deployment",
        "spec.template",
        true,
        Some("spec.template.spec.nodeSelector[beta.kubernetes.io/os]")
    )]
    #[case::deployment_kept("apps", "Deployment", "spec.template", false, None)]
    fn updates_warn_as_the_kinds_strategy_does(
        #[case] group: &str,
        #[case] kind: &str,
        #[case] holder: &str,
        #[case] changed: bool,
        #[case] expected: Option<&str>,
    ) {
        let spec = |image: &str| {
            json!({"nodeSelector": {"beta.kubernetes.io/os": "linux"},
                "containers": [{"name": "c", "image": image}]})
        };
        let object = |image: &str| {
            let mut object = json!({"metadata": {"name": "x"}});
            let path: Vec<&str> = holder.split('.').collect();
            let mut at = &mut object;
            for key in &path {
                at = &mut at[*key];
            }
            if kind == "Pod" {
                *at = spec(image);
            } else {
                *at = json!({"spec": spec(image)});
            }
            object
        };
        let old = object("nginx:1");
        let new = object(if changed { "nginx:2" } else { "nginx:1" });
        let warnings = on_update(&info(group, kind), &old, &new);
        let expected: Vec<String> = expected
            .map(|field| {
                format!("{field}: deprecated since v1.14; use \"kubernetes.io/os\" instead")
            })
            .into_iter()
            .collect();
        assert_eq!(warnings, expected);
    }
}
