//! Rules of the core (`v1`) kinds, from `pkg/apis/core/validation/validation.go`: ConfigMap and
//! Secret keys and sizes, Secret types, the pod spec (containers, restart policy, deadlines,
//! tolerations) and what a pod update may change, node taints, pod CIDRs and provider ID,
//! namespace finalizers.

use base64::Engine;
use serde_json::Value;

use super::{go_encoding, nonnegative, same, same_values_at, str_of, Target};
use crate::rules::known_maps::{self, Check};
use crate::rules::validation::{
    is_label_value, is_qualified_name, max_len_error, regex_error, Cause,
};
use crate::store::value_eq::{equal, maps_equal_where};

mod more_kinds;
mod pod_resize;
pub(crate) mod pod_spec;
mod quota;
pub mod service;

pub use pod_resize::drop_non_resize_updates;

/// `core.MaxSecretSize`: the most data a ConfigMap or Secret holds.
pub const MAX_SECRET_SIZE: usize = 1024 * 1024;
const MAX_INT32: i64 = i32::MAX as i64;

/// The causes of creating a core object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "ConfigMap" => config_map(obj),
        "Secret" => secret(obj),
        "Pod" => pod_create(obj),
        "Node" => node(obj),
        "Namespace" => namespace_finalizers(obj),
        "Event" => super::events::create_causes_core_v1(obj),
        "Service" => service::create_causes(obj),
        other => more_kinds::create_causes(other, obj).unwrap_or_default(),
    }
}

/// The causes of updating a core object of `kind` (beyond metadata); `unchanged_valid_spec` as
/// in [`super::update_causes`].
pub fn update_causes(
    kind: &str,
    old: &Value,
    new: &Value,
    target: Target,
    unchanged_valid_spec: bool,
) -> Vec<Cause> {
    match (kind, target) {
        ("ConfigMap", _) => config_map(new),
        ("Secret", _) => {
            let mut causes = secret(new);
            if !same(old.get("type"), new.get("type")) {
                causes.push(Cause::invalid(
                    "type",
                    new.get("type").unwrap_or(&Value::Null),
                    "field is immutable",
                ));
            }
            causes
        }
        // `ValidatePodUpdate` beyond the metadata reads the spec and the name only, and with
        // the spec unchanged every update rule holds.
        ("Pod", Target::Main) if unchanged_valid_spec => Vec::new(),
        ("Pod", Target::Main) => pod_update(old, new),
        ("Pod", Target::Status) => pod_status_update(old, new),
        ("Pod", Target::EphemeralContainers) => pod_ephemeral_containers_update(old, new),
        ("Pod", Target::Resize) => pod_resize::validate(old, new),
        ("Node", Target::Main) => {
            let mut causes = node(new);
            causes.extend(node_update(old, new));
            causes
        }
        ("Node", Target::Status) => node_update(old, new),
        ("Event", _) => super::events::create_causes_core_v1(new),
        ("Service", Target::Main) => service::update_causes(old, new),
        ("Service", Target::Status) => service::status_causes(new),
        (other, target) => more_kinds::update_causes(other, old, new, target).unwrap_or_default(),
    }
}

const CONFIG_MAP_KEY_FMT: &str = "[-._a-zA-Z0-9]+";
const CONFIG_MAP_KEY_ERR_MSG: &str =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

/// `validation.IsConfigMapKey`: at most 253 bytes of `[-._a-zA-Z0-9]`, not `.`, `..` or `..x`.
pub fn is_config_map_key(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push(max_len_error(253));
    }
    let valid_chars = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    if !valid_chars {
        errs.push(regex_error(
            CONFIG_MAP_KEY_ERR_MSG,
            CONFIG_MAP_KEY_FMT,
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if key == "." {
        errs.push("must not be '.'".into());
    } else if key == ".." {
        errs.push("must not be '..'".into());
    } else if key.starts_with("..") {
        errs.push("must not start with '..'".into());
    }
    errs
}

/// The size of a `data`/`binaryData` value: base64-decoded bytes for binary maps.
fn value_len(v: &Value, binary: bool) -> usize {
    let s = v.as_str().unwrap_or_default();
    if binary {
        base64::engine::general_purpose::STANDARD
            .decode(s)
            .map_or(s.len(), |b| b.len())
    } else {
        s.len()
    }
}

/// `ValidateConfigMap`: keys, keys in both `data` and `binaryData`, total size of the values.
fn config_map(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut total = 0;
    let binary = obj["binaryData"].as_object();
    if let Some(data) = obj["data"].as_object() {
        for (key, value) in data {
            for msg in is_config_map_key(key) {
                causes.push(Cause::invalid_str(format!("data[{key}]"), key, &msg));
            }
            if binary.is_some_and(|b| b.contains_key(key)) {
                causes.push(Cause::invalid_str(
                    format!("data[{key}]"),
                    key,
                    "duplicate of key present in binaryData",
                ));
            }
            total += value_len(value, false);
        }
    }
    if let Some(binary) = binary {
        for (key, value) in binary {
            for msg in is_config_map_key(key) {
                causes.push(Cause::invalid_str(format!("binaryData[{key}]"), key, &msg));
            }
            total += value_len(value, true);
        }
    }
    if total > MAX_SECRET_SIZE {
        // `field.NewPath("")` prints as `[]`.
        causes.push(Cause::too_long("[]", MAX_SECRET_SIZE as i64));
    }
    causes
}

/// `ValidateSecret`: keys, total size, and the keys each secret type requires.
fn secret(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let data = obj["data"].as_object();
    let mut total = 0;
    for (key, value) in data.into_iter().flatten() {
        for msg in is_config_map_key(key) {
            causes.push(Cause::invalid_str(format!("data[{key}]"), key, &msg));
        }
        total += value_len(value, true);
    }
    if total > MAX_SECRET_SIZE {
        causes.push(Cause::too_long("data", MAX_SECRET_SIZE as i64));
    }
    let has = |k: &str| data.is_some_and(|d| d.contains_key(k));
    let required = |k: &str| Cause::required(format!("data[{k}]"), "");
    match str_of(obj, "type") {
        "kubernetes.io/service-account-token" => {
            let annotation = "kubernetes.io/service-account.name";
            if str_of(&obj["metadata"]["annotations"], annotation).is_empty() {
                causes.push(Cause::required(
                    format!("metadata.annotations[{annotation}]"),
                    "",
                ));
            }
        }
        "kubernetes.io/dockercfg" => docker_config(obj, ".dockercfg", &mut causes),
        "kubernetes.io/dockerconfigjson" => docker_config(obj, ".dockerconfigjson", &mut causes),
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            causes.push(required("username"));
            causes.push(required("password"));
        }
        "kubernetes.io/ssh-auth" if value_len(&obj["data"]["ssh-privatekey"], true) == 0 => {
            causes.push(required("ssh-privatekey"));
        }
        "kubernetes.io/tls" => {
            for key in ["tls.crt", "tls.key"] {
                if !has(key) {
                    causes.push(required(key));
                }
            }
        }
        _ => {}
    }
    causes
}

/// The docker config secret types need their key, holding a JSON object.
fn docker_config(obj: &Value, key: &str, causes: &mut Vec<Cause>) {
    let Some(encoded) = obj["data"].get(key) else {
        causes.push(Cause::required(format!("data[{key}]"), ""));
        return;
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded.as_str().unwrap_or_default())
        .unwrap_or_default();
    let detail = match crate::store::json::from_slice(&bytes) {
        Ok(Value::Object(_) | Value::Null) => return,
        Ok(other) => {
            let kind = match other {
                Value::Array(_) => "array",
                Value::String(_) => "string",
                Value::Number(_) => "number",
                _ => "bool",
            };
            format!("json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}")
        }
        Err(_) => crate::patch::go_json::syntax_error(&bytes)
            .unwrap_or_else(|| "unexpected end of JSON input".into()),
    };
    causes.push(Cause::invalid_str(
        format!("data[{key}]"),
        "<secret contents redacted>",
        &detail,
    ));
}

/// `ValidatePodSpec` of an embedded pod template's spec at `path` ([`pod_spec::validate`]).
pub fn pod_spec(spec: &Value, path: &str) -> Vec<Cause> {
    pod_spec::validate(spec, &path, pod_spec::PodOpts::default())
}

/// `ValidatePodCreate` without the metadata: the spec as a pod's, the pod-only checks, status.
fn pod_create(obj: &Value) -> Vec<Cause> {
    let opts = pod_spec::PodOpts {
        is_pod: true,
        pod_name: obj["metadata"]["name"].as_str(),
    };
    let mut causes = pod_spec::validate(&obj["spec"], &"spec", opts);
    causes.extend(pod_spec::pod_only(&obj["spec"], true));
    causes
}

/// `ValidateTolerations`.
pub fn tolerations(list: &Value, path: &dyn std::fmt::Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, t) in list.as_array().into_iter().flatten().enumerate() {
        let at = crate::rules::field_path::FieldPath::index(&path, i);
        // A toleration sharing its entries with one that passed (the default tolerations every
        // pod is given, a template's) passes: see `rules::known_maps`.
        causes.extend(known_maps::causes(Check::Toleration, t, || {
            toleration(t, &at)
        }));
    }
    causes
}

/// `ValidateTolerations` of one toleration, at `at`.
fn toleration(t: &Value, at: &dyn std::fmt::Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let key = str_of(t, "key");
    let operator = str_of(t, "operator");
    let value = str_of(t, "value");
    let effect = str_of(t, "effect");
    if !key.is_empty() {
        for msg in is_qualified_name(key) {
            causes.push(Cause::invalid_str(format!("{at}.key"), key, &msg));
        }
    }
    if key.is_empty() && operator != "Exists" {
        causes.push(Cause::invalid_str(
            format!("{at}.operator"),
            operator,
            "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
        ));
    }
    if t.get("tolerationSeconds").is_some_and(|v| !v.is_null()) && effect != "NoExecute" {
        causes.push(Cause::invalid_str(
            format!("{at}.effect"),
            effect,
            "effect must be 'NoExecute' when `tolerationSeconds` is set",
        ));
    }
    match operator {
        "Equal" | "" => {
            let errs = is_label_value(value);
            if !errs.is_empty() {
                causes.push(Cause::invalid_str(
                    format!("{at}.operator"),
                    value,
                    &errs.join(";"),
                ));
            }
        }
        "Exists" => {
            if !value.is_empty() {
                causes.push(Cause::invalid(
                    format!("{at}.operator"),
                    t,
                    "value must be empty when `operator` is 'Exists'",
                ));
            }
        }
        _ => causes.push(Cause::not_supported(
            format!("{at}.operator"),
            &Value::from(operator),
            &["Equal".into(), "Exists".into()],
        )),
    }
    if !effect.is_empty() {
        causes.extend(taint_effect(effect, &format!("{at}.effect")));
    }
    causes
}

/// `validateTaintEffect`.
fn taint_effect(effect: &str, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if effect.is_empty() {
        causes.push(Cause::required(path, ""));
    }
    if !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
        causes.push(Cause::not_supported(
            path,
            &Value::from(effect),
            &[
                "NoSchedule".into(),
                "PreferNoSchedule".into(),
                "NoExecute".into(),
            ],
        ));
    }
    causes
}

/// The IPs of `status.podIPs` (or `hostIPs`) as the conversion to the internal type leaves them
/// (`Convert_v1_PodStatus_To_core_PodStatus`): the single `podIP` (`hostIP`) replaces the list
/// when the list is absent or starts elsewhere.
fn status_ips<'a>(status: &'a Value, list: &str, single: &str) -> Vec<&'a str> {
    let listed: Vec<&str> = status[list]
        .as_array()
        .into_iter()
        .flatten()
        .map(|ip| str_of(ip, "ip"))
        .collect();
    let one = str_of(status, single);
    // When both are given and differ, the single field wins (for older clients).
    if one.is_empty() || listed.first() == Some(&one) {
        return listed;
    }
    vec![one]
}

/// `validatePodIPs` / `validateHostIPs`: valid addresses, at most one per family, no duplicates.
fn pod_ip_list(ips: &[&str], path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, ip) in ips.iter().enumerate() {
        if ip.parse::<std::net::IpAddr>().is_err() {
            causes.push(Cause::invalid_str(
                format!("{path}[{i}]"),
                ip,
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            ));
        }
    }
    if ips.len() > 1 {
        let v6 = ips.iter().filter(|ip| ip.contains(':')).count();
        if ips.len() > 2 || v6 != 1 {
            let listed: Vec<Value> = ips.iter().map(|ip| serde_json::json!({"ip": ip})).collect();
            causes.push(Cause::invalid(
                path,
                &Value::Array(listed),
                "may specify no more than one IP for each IP family",
            ));
        }
        for (i, ip) in ips.iter().enumerate() {
            if ips[..i].contains(ip) {
                causes.push(Cause::duplicate(
                    format!("{path}[{i}]"),
                    &serde_json::json!({"ip": ip}),
                ));
            }
        }
    }
    causes
}

/// `ValidatePodStatusUpdate`: custom condition types are qualified names (reported under
/// `metadata.conditions`, as upstream builds the path), the nominated node is a DNS subdomain,
/// the QoS class is fixed, terminated containers that may not restart stay terminated, and the
/// pod and host IPs are valid.
fn pod_status_update(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let status = &new["status"];
    for (i, condition) in status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let t = str_of(condition, "type");
        if matches!(t, "PodScheduled" | "Ready" | "Initialized") {
            continue;
        }
        for msg in is_qualified_name(t) {
            causes.push(Cause::invalid_str(
                format!("metadata.conditions[{i}].Type"),
                t,
                &msg,
            ));
        }
    }
    let nominated = str_of(status, "nominatedNodeName");
    if !nominated.is_empty() && nominated != str_of(&old["status"], "nominatedNodeName") {
        for msg in crate::rules::validation::is_dns1123_subdomain(nominated) {
            causes.push(Cause::invalid_str(
                "status.nominatedNodeName",
                nominated,
                &msg,
            ));
        }
    }
    // An empty class was backfilled from the stored one ([`super::prepare_update`]).
    let qos_given = status["qosClass"].as_str().is_some_and(|q| !q.is_empty());
    if qos_given && !same(old["status"].get("qosClass"), status.get("qosClass")) {
        causes.push(Cause::invalid(
            "status.qosClass",
            status.get("qosClass").unwrap_or(&Value::Null),
            "field is immutable",
        ));
    }
    // `ValidateContainerStateTransition` (regular and init containers).
    let restart = str_of(&old["spec"], "restartPolicy");
    if restart != "Always" {
        for list in ["containerStatuses", "initContainerStatuses"] {
            let news = status[list]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            for (i, o) in old["status"][list]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let terminated = &o["state"]["terminated"];
                if !terminated.is_object() {
                    continue;
                }
                let exit = terminated["exitCode"].as_i64().unwrap_or(0);
                if exit != 0 && restart == "OnFailure" {
                    continue;
                }
                if list == "initContainerStatuses" {
                    let sidecar = old["spec"]["initContainers"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|c| c["name"] == o["name"] && c["restartPolicy"] == "Always");
                    if sidecar {
                        continue;
                    }
                }
                let restarted = news
                    .iter()
                    .any(|n| n["name"] == o["name"] && !n["state"]["terminated"].is_object());
                if restarted {
                    causes.push(Cause::forbidden(
                        format!("status.{list}[{i}].state"),
                        "may not be transitioned to non-terminated state",
                    ));
                }
            }
        }
    }
    causes.extend(pod_ip_list(
        &status_ips(status, "podIPs", "podIP"),
        "status.podIPs",
    ));
    let host_ips = status_ips(status, "hostIPs", "hostIP");
    if let Some(first) = host_ips.first() {
        let host_ip = str_of(status, "hostIP");
        if host_ip != *first {
            causes.push(Cause::invalid_str(
                "status.hostIPs[0].ip",
                first,
                "must be equal to `hostIP`",
            ));
        }
        causes.extend(pod_ip_list(&host_ips, "status.hostIPs"));
    }
    causes
}

/// `ValidatePodUpdate`: the new spec is valid; containers may not be added or removed; images may
/// change but not be emptied; `activeDeadlineSeconds` may be set or lowered; tolerations only
/// added to; everything else in the spec stays.
/// `ValidatePodEphemeralContainersUpdate`: the whole pod is valid (its ephemeral containers
/// included); a static (mirror) pod takes none; the existing ephemeral containers stay, unchanged
/// (the real message goes on with a `cmp.Diff` of the change, left out here).
fn pod_ephemeral_containers_update(old: &Value, new: &Value) -> Vec<Cause> {
    if old["metadata"]["annotations"]
        .get("kubernetes.io/config.mirror")
        .is_some()
    {
        return vec![Cause::forbidden(
            "",
            "static pods do not support ephemeral containers",
        )];
    }
    let opts = pod_spec::PodOpts {
        is_pod: true,
        pod_name: new["metadata"]["name"].as_str(),
    };
    let mut causes = pod_spec::validate(&new["spec"], &"spec", opts);
    causes.extend(pod_spec::pod_only(&new["spec"], false));
    let new_containers = new["spec"]["ephemeralContainers"].as_array();
    let by_name =
        |name: &str| new_containers.and_then(|cs| cs.iter().find(|c| str_of(c, "name") == name));
    for existing in old["spec"]["ephemeralContainers"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let name = str_of(existing, "name");
        match by_name(name) {
            None => causes.push(Cause::forbidden(
                "spec.ephemeralContainers",
                &format!("existing ephemeral containers {name:?} may not be removed\n"),
            )),
            Some(now)
                if !same_values_at(
                    "",
                    "Pod",
                    &["spec", "ephemeralContainers", "[]"],
                    Some(existing),
                    Some(now),
                ) =>
            {
                causes.push(Cause::forbidden(
                    "spec.ephemeralContainers",
                    &format!("existing ephemeral containers {name:?} may not be changed\n"),
                ))
            }
            Some(_) => {}
        }
    }
    causes
}

fn pod_update(old: &Value, new: &Value) -> Vec<Cause> {
    let opts = pod_spec::PodOpts {
        is_pod: true,
        pod_name: new["metadata"]["name"].as_str(),
    };
    let mut causes = pod_spec::validate(&new["spec"], &"spec", opts);
    causes.extend(pod_spec::pod_only(&new["spec"], false));
    for list in ["containers", "initContainers"] {
        // `ValidateContainerUpdates`.
        let (o, n) = (old["spec"][list].as_array(), new["spec"][list].as_array());
        if o.map_or(0, Vec::len) != n.map_or(0, Vec::len) {
            causes.push(Cause::forbidden(
                format!("spec.{list}"),
                "pod updates may not add or remove containers",
            ));
            return causes;
        }
        for (i, c) in n.into_iter().flatten().enumerate() {
            let image = str_of(c, "image");
            if image.is_empty() {
                causes.push(Cause::required(format!("spec.{list}[{i}].image"), ""));
            }
            if image.trim() != image {
                causes.push(Cause::invalid_str(
                    format!("spec.{list}[{i}].image"),
                    image,
                    "must not have leading or trailing whitespace",
                ));
            }
        }
    }
    let (old_deadline, new_deadline) = (
        old["spec"]["activeDeadlineSeconds"].as_i64(),
        new["spec"]["activeDeadlineSeconds"].as_i64(),
    );
    match (old_deadline, new_deadline) {
        (_, Some(n)) if !(0..=MAX_INT32).contains(&n) => {
            causes.push(Cause::invalid(
                "spec.activeDeadlineSeconds",
                &Value::from(n),
                &format!("must be between 0 and {MAX_INT32}, inclusive"),
            ));
            return causes;
        }
        (Some(o), Some(n)) if o < n => {
            causes.push(Cause::invalid(
                "spec.activeDeadlineSeconds",
                &Value::from(n),
                "must be less than or equal to previous value",
            ));
            return causes;
        }
        (Some(_), None) => causes.push(Cause::invalid_str(
            "spec.activeDeadlineSeconds",
            "null",
            "must not update from a positive integer to nil value",
        )),
        _ => {}
    }
    causes.extend(only_added_tolerations(
        &old["spec"]["tolerations"],
        &new["spec"]["tolerations"],
    ));
    if !same_immutable_pod_spec(&old["spec"], &new["spec"]) {
        causes.push(Cause::forbidden(
            "spec",
            "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
        ));
    }
    causes
}

/// Whether two pod specs agree on every field a pod update may not change: compared in place as
/// JSON first (this runs on every pod write), then, when that finds a difference, as
/// `ValidatePodUpdate` does: `Semantic.DeepEqual` of the old spec and the new one with the
/// mutable fields and images taken from the old (so `env: []` for no `env`, or `1000m` for
/// `1`, changes nothing).
fn same_immutable_pod_spec(old: &Value, new: &Value) -> bool {
    same_immutable_pod_spec_as_json(old, new) || {
        let munged = munged_pod_spec(old, new);
        go_encoding::semantic::equal_at("", "Pod", &["spec"], Some(old), Some(&munged))
            .unwrap_or(false)
    }
}

/// The new pod spec with what an update may change taken from the old one
/// (`mungedPodSpec`).
fn munged_pod_spec(old: &Value, new: &Value) -> Value {
    let mut munged = new.clone();
    let Some(spec) = munged.as_object_mut() else {
        return munged;
    };
    for key in MUTABLE_POD_SPEC_FIELDS {
        match old.get(key) {
            Some(v) => spec.insert(key.to_string(), v.clone()),
            None => spec.remove(key),
        };
    }
    for list in ["containers", "initContainers"] {
        let old_list = old[list].as_array();
        if let Some(items) = spec.get_mut(list).and_then(Value::as_array_mut) {
            for (i, item) in items.iter_mut().enumerate() {
                let image = old_list.and_then(|l| l.get(i)).and_then(|c| c.get("image"));
                if let (Some(item), Some(image)) = (item.as_object_mut(), image) {
                    item.insert("image".into(), image.clone());
                }
            }
        }
    }
    munged
}

/// The pod spec fields an update may change (each within its own rules, checked apart).
const MUTABLE_POD_SPEC_FIELDS: [&str; 4] = [
    "activeDeadlineSeconds",
    "tolerations",
    "terminationGracePeriodSeconds",
    "schedulingGates",
];

/// [`same_immutable_pod_spec`] as JSON, in place.
fn same_immutable_pod_spec_as_json(old: &Value, new: &Value) -> bool {
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        return equal(old, new);
    };
    let containers = |k: &str| matches!(k, "containers" | "initContainers");
    maps_equal_where(old, new, |k| {
        !MUTABLE_POD_SPEC_FIELDS.contains(&k) && !containers(k)
    }) && ["containers", "initContainers"]
        .iter()
        .all(|k| match (old.get(*k), new.get(*k)) {
            (Some(v), Some(w)) => same_containers_but_image(v, w),
            (v, w) => v == w,
        })
}

/// Whether two container lists are equal apart from each container's `image`.
fn same_containers_but_image(old: &Value, new: &Value) -> bool {
    let (Some(old), Some(new)) = (old.as_array(), new.as_array()) else {
        return equal(old, new);
    };
    old.len() == new.len()
        && old
            .iter()
            .zip(new)
            .all(|(a, b)| match (a.as_object(), b.as_object()) {
                (Some(a), Some(b)) => maps_equal_where(a, b, |k| k != "image"),
                _ => equal(a, b),
            })
}

/// `validateOnlyAddedTolerations`: every old toleration is still there (its `tolerationSeconds`
/// may change), then `ValidateTolerations` of the new list.
fn only_added_tolerations(old: &Value, new: &Value) -> Vec<Cause> {
    let without_seconds = |t: &Value| {
        let mut t = t.clone();
        if let Some(m) = t.as_object_mut() {
            m.remove("tolerationSeconds");
            m.retain(|_, v| !v.is_null() && v.as_str() != Some(""));
        }
        t
    };
    let new_list: Vec<Value> = new
        .as_array()
        .into_iter()
        .flatten()
        .map(without_seconds)
        .collect();
    let all_kept = old
        .as_array()
        .into_iter()
        .flatten()
        .all(|o| new_list.contains(&without_seconds(o)));
    if !all_kept {
        return vec![Cause::forbidden(
            "spec.tolerations",
            "existing toleration can not be modified except its tolerationSeconds",
        )];
    }
    tolerations(new, &"spec.tolerations")
}

/// `ValidateNode`: taints (reported at `metadata.taints`, as upstream builds the path from the
/// metadata path) and pod CIDRs.
fn node(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (i, t) in obj["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("metadata.taints[{i}]");
        let key = str_of(t, "key");
        for msg in is_qualified_name(key) {
            causes.push(Cause::invalid_str(format!("{at}.key"), key, &msg));
        }
        let value = str_of(t, "value");
        let errs = is_label_value(value);
        if !errs.is_empty() {
            causes.push(Cause::invalid_str(
                format!("{at}.value"),
                value,
                &errs.join(";"),
            ));
        }
        let effect = str_of(t, "effect");
        causes.extend(taint_effect(effect, &format!("{at}.effect")));
        if seen.contains(&(effect, key)) {
            let mut dup = Cause::duplicate(at, t);
            dup.message
                .push_str(": taints must be unique by key and effect pair");
            causes.push(dup);
            continue;
        }
        seen.push((effect, key));
    }
    let cidrs = obj["spec"]["podCIDRs"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, c) in cidrs.iter().enumerate() {
        let c = c.as_str().unwrap_or_default();
        if !is_cidr(c) {
            causes.push(Cause::invalid_str(
                format!("spec.podCIDRs[{i}]"),
                c,
                "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            ));
        }
    }
    if cidrs.len() > 1 {
        let v6 = cidrs
            .iter()
            .filter(|c| c.as_str().is_some_and(|c| c.contains(':')))
            .count();
        if cidrs.len() > 2 || v6 != 1 {
            causes.push(Cause::invalid(
                "spec.podCIDRs",
                &obj["spec"]["podCIDRs"],
                "may specify no more than one CIDR for each IP family",
            ));
        }
    }
    causes
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match ip.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(_)) => bits <= 32,
        Ok(std::net::IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

/// `ValidateNodeUpdate`: pod CIDRs and provider ID may only be set once; no duplicate addresses.
fn node_update(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let old_cidrs = old["spec"]["podCIDRs"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let new_cidrs = new["spec"]["podCIDRs"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let message = "node updates may not change podCIDR except from \"\" to valid";
    if !old_cidrs.is_empty() {
        if old_cidrs.len() != new_cidrs.len() {
            causes.push(Cause::forbidden("spec.podCIDRs", message));
        } else {
            for (o, n) in old_cidrs.iter().zip(new_cidrs) {
                if o != n {
                    causes.push(Cause::forbidden("spec.podCIDRs", message));
                }
            }
        }
    }
    let old_provider = str_of(&old["spec"], "providerID");
    if !old_provider.is_empty() && old_provider != str_of(&new["spec"], "providerID") {
        causes.push(Cause::forbidden(
            "spec.providerID",
            "node updates may not change providerID except from \"\" to valid",
        ));
    }
    let addresses = new["status"]["addresses"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, a) in addresses.iter().enumerate() {
        if addresses[..i].contains(a) {
            causes.push(Cause::duplicate(format!("status.addresses[{i}]"), a));
        }
    }
    causes
}

/// `ValidateNamespace`: each of `spec.finalizers` is a qualified name, and a standard one when it
/// has no domain (`validateFinalizerName`, reported at `spec.finalizers`).
fn namespace_finalizers(obj: &Value) -> Vec<Cause> {
    obj["spec"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|f| namespace_finalizer_name(f, "spec.finalizers"))
        .collect()
}

/// `ValidateNamespaceFinalizeUpdate` (the `namespaces/finalize` subresource): the same check as
/// [`namespace_finalizers`], reported at each entry (`spec.finalizers[i]`).
pub fn namespace_finalize_causes(obj: &Value) -> Vec<Cause> {
    obj["spec"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .flat_map(|(i, f)| namespace_finalizer_name(f, &format!("spec.finalizers[{i}]")))
        .collect()
}

/// `validateFinalizerName` for a namespace finalizer at `path`.
fn namespace_finalizer_name(f: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let f = f.as_str().unwrap_or_default();
    for msg in is_qualified_name(f) {
        causes.push(Cause::invalid_str(path, f, &msg));
    }
    if !f.contains('/') && !["kubernetes", "orphan", "foregroundDeletion"].contains(&f) {
        causes.push(Cause::invalid_str(
            path,
            f,
            "name is neither a standard finalizer name nor is it fully qualified",
        ));
    }
    causes
}

/// `ValidateNonnegativeField` for a pod template's numeric fields, shared with the workload kinds.
pub(crate) fn nonnegative_fields(
    causes: &mut Vec<Cause>,
    obj: &Value,
    base: &str,
    fields: &[&str],
) {
    for f in fields {
        nonnegative(causes, obj.get(*f), &format!("{base}.{f}"));
    }
}

/// `ValidatePodTemplateSpec`: template labels and annotations, then the pod spec; a template
/// has no ephemeral containers.
pub fn pod_template(template: &Value, path: &str) -> Vec<Cause> {
    let mut causes = crate::rules::validation::validate_labels(
        template["metadata"].get("labels"),
        &format!("{path}.labels"),
    );
    causes.extend(crate::rules::validation::validate_annotations(
        template["metadata"].get("annotations"),
        &format!("{path}.annotations"),
    ));
    causes.extend(pod_spec(&template["spec"], &format!("{path}.spec")));
    if template["spec"]["ephemeralContainers"]
        .as_array()
        .is_some_and(|list| !list.is_empty())
    {
        causes.push(Cause::forbidden(
            format!("{path}.spec.ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    causes
}

#[cfg(test)]
mod tests;
