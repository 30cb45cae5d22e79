//! Rules of the core (`v1`) kinds, from `pkg/apis/core/validation/validation.go`: ConfigMap and
//! Secret keys and sizes, Secret types, the pod spec (containers, restart policy, deadlines,
//! tolerations) and what a pod update may change, node taints, pod CIDRs and provider ID,
//! namespace finalizers.

use base64::Engine;
use serde_json::Value;

use super::{nonnegative, same, str_of, Target};
use crate::rules::validation::{
    is_dns1123_label, is_dns1123_subdomain, is_label_value, is_qualified_name, max_len_error,
    regex_error, Cause,
};
use crate::store::value_eq::{equal, maps_equal_where};

/// `core.MaxSecretSize`: the most data a ConfigMap or Secret holds.
pub const MAX_SECRET_SIZE: usize = 1024 * 1024;
const MAX_INT32: i64 = i32::MAX as i64;

/// The causes of creating a core object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "ConfigMap" => config_map(obj),
        "Secret" => secret(obj),
        "Pod" => {
            let mut causes = pod_spec(&obj["spec"], "spec");
            causes.extend(pod_status(&obj["status"]));
            causes
        }
        "Node" => node(obj),
        "Namespace" => namespace_finalizers(obj),
        "Event" => super::events::create_causes_core_v1(obj),
        "Service" => service(obj),
        _ => Vec::new(),
    }
}

/// The causes of updating a core object of `kind` (beyond metadata).
pub fn update_causes(kind: &str, old: &Value, new: &Value, target: Target) -> Vec<Cause> {
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
        ("Pod", Target::Main) => pod_update(old, new),
        ("Pod", Target::Status) => pod_status(&new["status"]),
        ("Node", Target::Main) => {
            let mut causes = node(new);
            causes.extend(node_update(old, new));
            causes
        }
        ("Node", Target::Status) => node_update(old, new),
        ("Event", _) => super::events::create_causes_core_v1(new),
        ("Service", Target::Main) => service(new),
        _ => Vec::new(),
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
    let detail = match serde_json::from_slice::<Value>(&bytes) {
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

/// The part of `ValidatePodSpec` this server checks: containers (name, image, unique names),
/// restart policy, node name, active deadline, tolerations. `path` is the spec's path.
pub fn pod_spec(spec: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for list in ["initContainers", "containers"] {
        let containers = spec[list].as_array().map(Vec::as_slice).unwrap_or_default();
        if list == "containers" && containers.is_empty() {
            causes.push(Cause::required(format!("{path}.containers"), ""));
        }
        for (i, c) in containers.iter().enumerate() {
            let at = format!("{path}.{list}[{i}]");
            let name = str_of(c, "name");
            if name.is_empty() {
                causes.push(Cause::required(format!("{at}.name"), ""));
            } else {
                for msg in is_dns1123_label(name) {
                    causes.push(Cause::invalid_str(format!("{at}.name"), name, &msg));
                }
                if names.contains(&name) {
                    causes.push(Cause::duplicate(format!("{at}.name"), &Value::from(name)));
                }
                names.push(name);
            }
            if str_of(c, "image").is_empty() {
                causes.push(Cause::required(format!("{at}.image"), ""));
            }
        }
    }
    let restart = str_of(spec, "restartPolicy");
    if !matches!(restart, "" | "Always" | "OnFailure" | "Never") {
        causes.push(Cause::not_supported(
            format!("{path}.restartPolicy"),
            &Value::from(restart),
            &["Always".into(), "OnFailure".into(), "Never".into()],
        ));
    }
    let node_name = str_of(spec, "nodeName");
    if !node_name.is_empty() {
        for msg in is_dns1123_subdomain(node_name) {
            causes.push(Cause::invalid_str(
                format!("{path}.nodeName"),
                node_name,
                &msg,
            ));
        }
    }
    if let Some(n) = spec["activeDeadlineSeconds"].as_i64() {
        if !(1..=MAX_INT32).contains(&n) {
            causes.push(Cause::invalid(
                format!("{path}.activeDeadlineSeconds"),
                &Value::from(n),
                &format!("must be between 1 and {MAX_INT32}, inclusive"),
            ));
        }
    }
    causes.extend(tolerations(
        &spec["tolerations"],
        &format!("{path}.tolerations"),
    ));
    causes
}

/// `ValidateTolerations`.
pub fn tolerations(list: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, t) in list.as_array().into_iter().flatten().enumerate() {
        let at = format!("{path}[{i}]");
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

fn pod_status(status: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let ip = str_of(status, "podIP");
    if !ip.is_empty() && ip.parse::<std::net::IpAddr>().is_err() {
        causes.push(Cause::invalid_str(
            "status.podIP",
            ip,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        ));
    }
    causes
}

/// `ValidatePodUpdate`: the new spec is valid; containers may not be added or removed; images may
/// change but not be emptied; `activeDeadlineSeconds` may be set or lowered; tolerations only
/// added to; everything else in the spec stays.
fn pod_update(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = pod_spec(&new["spec"], "spec");
    for list in ["containers", "initContainers"] {
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
            if !image.is_empty() && image.trim() != image {
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

/// Whether two pod specs agree on every field a pod update may not change (compared in place:
/// this runs on every pod write).
fn same_immutable_pod_spec(old: &Value, new: &Value) -> bool {
    const MUTABLE: [&str; 4] = [
        "activeDeadlineSeconds",
        "tolerations",
        "terminationGracePeriodSeconds",
        "schedulingGates",
    ];
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        return equal(old, new);
    };
    let containers = |k: &str| matches!(k, "containers" | "initContainers");
    maps_equal_where(old, new, |k| !MUTABLE.contains(&k) && !containers(k))
        && ["containers", "initContainers"]
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
    tolerations(new, "spec.tolerations")
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

/// The part of `ValidateService` this server checks: a known type, ports (required unless
/// headless or `ExternalName`), each in range with a known protocol, named when there are
/// several, names unique.
fn service(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let spec = &obj["spec"];
    let kind = match str_of(spec, "type") {
        "" => "ClusterIP",
        other => other,
    };
    if !matches!(
        kind,
        "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName"
    ) {
        causes.push(Cause::not_supported(
            "spec.type",
            &Value::from(kind),
            &[
                "ClusterIP".into(),
                "ExternalName".into(),
                "LoadBalancer".into(),
                "NodePort".into(),
            ],
        ));
    }
    let ports = spec["ports"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let headless = str_of(spec, "clusterIP") == "None";
    if ports.is_empty() && !headless && kind != "ExternalName" {
        causes.push(Cause::required("spec.ports", ""));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let at = format!("spec.ports[{i}]");
        let name = str_of(port, "name");
        if ports.len() > 1 && name.is_empty() {
            causes.push(Cause::required(format!("{at}.name"), ""));
        } else if !name.is_empty() {
            for msg in is_dns1123_label(name) {
                causes.push(Cause::invalid_str(format!("{at}.name"), name, &msg));
            }
            if names.contains(&name) {
                causes.push(Cause::duplicate(format!("{at}.name"), &Value::from(name)));
            }
            names.push(name);
        }
        let number = port["port"].as_i64().unwrap_or(0);
        if !(1..=65535).contains(&number) {
            causes.push(Cause::invalid(
                format!("{at}.port"),
                &Value::from(number),
                "must be between 1 and 65535, inclusive",
            ));
        }
        let protocol = str_of(port, "protocol");
        if !matches!(protocol, "" | "TCP" | "UDP" | "SCTP") {
            causes.push(Cause::not_supported(
                format!("{at}.protocol"),
                &Value::from(protocol),
                &["SCTP".into(), "TCP".into(), "UDP".into()],
            ));
        }
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

/// `ValidatePodTemplateSpec`: template labels and annotations, then the pod spec.
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
    causes
}

#[cfg(test)]
mod tests;
