//! Per-kind rules of the built-in kinds that controllers and kubectl run into: what admission and
//! the kind's strategy add on create (node taints, secret folding) and what its validation refuses
//! (pods without containers or with a changed spec, malformed lease times, oversized config).

use base64::Engine;
use serde_json::{json, Value};

use crate::error::{ApiError, StatusCause};
use crate::resource::ResourceInfo;
use crate::value_eq::{equal, maps_equal_where};

/// The most data a ConfigMap or Secret may hold, as the real server counts it.
const MAX_DATA_BYTES: usize = 1024 * 1024;

fn is(info: &ResourceInfo, group: &str, kind: &str) -> bool {
    info.group == group && info.kind == kind
}

fn cause(reason: &str, field: &str, message: String) -> StatusCause {
    StatusCause {
        reason: reason.into(),
        message,
        field: field.into(),
    }
}

fn invalid(info: &ResourceInfo, object: &Value, causes: Vec<StatusCause>) -> Result<(), ApiError> {
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        &info.group,
        &info.kind,
        object["metadata"]["name"].as_str().unwrap_or_default(),
        causes,
    ))
}

/// What the kind's admission plugins and create strategy add to a new object.
pub fn on_create(info: &ResourceInfo, object: &mut Value) -> Result<(), ApiError> {
    if is(info, "policy", "PodDisruptionBudget") {
        // The strategy starts a budget with an empty status (its counters are not omitted).
        object["status"] = json!({
            "disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0
        });
    }
    if is(info, "", "Node") {
        // TaintNodesByCondition: a new node is not ready until its kubelet says so.
        let taints = object["spec"]["taints"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !taints
            .iter()
            .any(|t| t["key"] == "node.kubernetes.io/not-ready" && t["effect"] == "NoSchedule")
        {
            let mut taints = taints;
            taints.push(json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}));
            if !object["spec"].is_object() {
                object["spec"] = json!({});
            }
            object["spec"]["taints"] = Value::Array(taints);
        }
    }
    Ok(())
}

/// Decoding rules applied to every written object of the kind (the real server applies them when
/// it decodes the body, so a violation is a 400, not a 422).
pub fn on_decode(info: &ResourceInfo, object: &mut Value) -> Result<(), ApiError> {
    if is(info, "", "Secret") {
        fold_secret(info, object)?;
    }
    if is(info, "coordination.k8s.io", "Lease") {
        for field in ["acquireTime", "renewTime"] {
            if let Some(t) = object["spec"][field].as_str() {
                check_micro_time(info, t)?;
            }
        }
    }
    Ok(())
}

/// `stringData` is written into `data` (base64), `type` defaults to `Opaque`, and `data` must be
/// valid base64.
fn fold_secret(info: &ResourceInfo, object: &mut Value) -> Result<(), ApiError> {
    let engine = base64::engine::general_purpose::STANDARD;
    if let Some(data) = object["data"].as_object() {
        for (key, value) in data {
            let ok = value.as_str().is_some_and(|s| engine.decode(s).is_ok());
            if !ok {
                return Err(ApiError::bad_request(format!(
                    "{} in version \"v1\" cannot be handled as a {}: illegal base64 data at input byte 0 (data[{key:?}])",
                    info.kind, info.kind
                )));
            }
        }
    }
    if let Some(string_data) = object
        .as_object_mut()
        .and_then(|o| o.remove("stringData"))
        .and_then(|v| v.as_object().cloned())
    {
        if !object["data"].is_object() {
            object["data"] = json!({});
        }
        for (key, value) in string_data {
            let encoded = engine.encode(value.as_str().unwrap_or_default());
            object["data"][key] = json!(encoded);
        }
    }
    if object["type"].as_str().is_none_or(str::is_empty) {
        object["type"] = json!("Opaque");
    }
    Ok(())
}

/// `metav1.MicroTime` is parsed with exactly six fractional digits.
fn check_micro_time(info: &ResourceInfo, t: &str) -> Result<(), ApiError> {
    let bytes = t.as_bytes();
    let well_formed = bytes.len() >= 27
        && bytes[19] == b'.'
        && bytes[20..26].iter().all(u8::is_ascii_digit)
        && matches!(bytes[26], b'Z' | b'+' | b'-')
        && t.parse::<jiff::Timestamp>().is_ok();
    if well_formed {
        return Ok(());
    }
    let found = t.get(19..).unwrap_or_default();
    Err(ApiError::bad_request(format!(
        "{kind} in version \"{version}\" cannot be handled as a {kind}: parsing time {t:?} as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse {found:?} as \".000000\"",
        kind = info.kind,
        version = info.version,
    )))
}

/// Validation of a new object of the kind.
pub fn validate_create(info: &ResourceInfo, object: &Value) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    if is(info, "", "Pod") {
        if object["spec"]["containers"]
            .as_array()
            .is_none_or(|c| c.is_empty())
        {
            causes.push(cause(
                "FieldValueRequired",
                "spec.containers",
                "Required value".into(),
            ));
        }
        check_pod_status(object, &mut causes);
    }
    check_common(info, object, &mut causes);
    invalid(info, object, causes)
}

/// Validation of an update of the kind (`old` is what is stored).
pub fn validate_update(info: &ResourceInfo, old: &Value, new: &Value) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    if is(info, "", "Pod") {
        if !same_immutable_pod_spec(&old["spec"], &new["spec"]) {
            causes.push(cause(
                "FieldValueForbidden",
                "spec",
                "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)".into(),
            ));
        }
        check_pod_status(new, &mut causes);
    }
    check_common(info, new, &mut causes);
    invalid(info, new, causes)
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

fn check_pod_status(pod: &Value, causes: &mut Vec<StatusCause>) {
    if let Some(ip) = pod["status"]["podIP"].as_str() {
        if !ip.is_empty() && ip.parse::<std::net::IpAddr>().is_err() {
            causes.push(cause(
                "FieldValueInvalid",
                "status.podIP",
                format!("Invalid value: {ip:?}: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
            ));
        }
    }
}

fn check_common(info: &ResourceInfo, object: &Value, causes: &mut Vec<StatusCause>) {
    if is(info, "", "ConfigMap") || is(info, "", "Secret") {
        let size: usize = ["data", "binaryData"]
            .iter()
            .filter_map(|f| object[*f].as_object())
            .flat_map(|m| m.iter())
            .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
            .sum();
        if size > MAX_DATA_BYTES {
            causes.push(cause(
                "FieldValueTooLong",
                "[]",
                format!("Too long: may not be more than {MAX_DATA_BYTES} bytes"),
            ));
        }
    }
    if is(info, "coordination.k8s.io", "Lease") {
        if let Some(n) = object["spec"]["leaseTransitions"].as_i64() {
            if n < 0 {
                causes.push(cause(
                    "FieldValueInvalid",
                    "spec.leaseTransitions",
                    format!("Invalid value: {n}: must be greater than or equal to 0"),
                ));
            }
        }
        if let Some(n) = object["spec"]["leaseDurationSeconds"].as_i64() {
            if n <= 0 {
                causes.push(cause(
                    "FieldValueInvalid",
                    "spec.leaseDurationSeconds",
                    format!("Invalid value: {n}: must be greater than 0"),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::builtin_resources;

    fn info(plural: &str) -> ResourceInfo {
        builtin_resources()
            .into_iter()
            .find(|r| r.plural == plural)
            .unwrap()
    }

    #[test]
    fn pods_need_containers_and_keep_their_spec() {
        let pods = info("pods");
        let empty = json!({"metadata": {"name": "p"}, "spec": {}});
        assert_eq!(validate_create(&pods, &empty).unwrap_err().code, 422);
        let old = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "x:1", "env": [{"name": "E1"}]}]}});
        let mut image = old.clone();
        image["spec"]["containers"][0]["image"] = json!("x:2");
        validate_update(&pods, &old, &image).unwrap();
        let mut env = old.clone();
        env["spec"]["containers"][0]["env"] = json!([{"name": "E2"}]);
        assert_eq!(validate_update(&pods, &old, &env).unwrap_err().code, 422);
        let mut bad_ip = old.clone();
        bad_ip["status"] = json!({"podIP": "not-an-ip"});
        assert_eq!(validate_update(&pods, &old, &bad_ip).unwrap_err().code, 422);
    }

    #[test]
    fn lease_times_need_microseconds() {
        let leases = info("leases");
        let mut ok = json!({"spec": {"renewTime": "2026-01-01T00:00:00.000000Z"}});
        on_decode(&leases, &mut ok).unwrap();
        for bad in ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000Z"] {
            let mut l = json!({"spec": {"renewTime": bad}});
            let err = on_decode(&leases, &mut l).unwrap_err();
            assert_eq!(err.code, 400);
        }
        let negative = json!({"metadata": {"name": "l"}, "spec": {"leaseTransitions": -1}});
        assert_eq!(
            validate_create(&leases, &negative).unwrap_err().causes[0].field,
            "spec.leaseTransitions"
        );
    }

    #[test]
    fn secrets_fold_string_data() {
        let secrets = info("secrets");
        let mut s = json!({"stringData": {"a": "hi"}});
        on_decode(&secrets, &mut s).unwrap();
        assert_eq!(s, json!({"data": {"a": "aGk="}, "type": "Opaque"}));
        let mut bad = json!({"data": {"a": "!!"}});
        assert_eq!(on_decode(&secrets, &mut bad).unwrap_err().code, 400);
    }

    #[test]
    fn new_nodes_are_tainted_not_ready() {
        let nodes = info("nodes");
        let mut n = json!({"metadata": {"name": "n"}});
        on_create(&nodes, &mut n).unwrap();
        assert_eq!(
            n["spec"]["taints"][0]["key"],
            "node.kubernetes.io/not-ready"
        );
        on_create(&nodes, &mut n).unwrap();
        assert_eq!(n["spec"]["taints"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn oversized_configmaps_are_refused() {
        let cms = info("configmaps");
        let big =
            json!({"metadata": {"name": "big"}, "data": {"a": "x".repeat(MAX_DATA_BYTES + 1)}});
        assert_eq!(validate_create(&cms, &big).unwrap_err().code, 422);
    }
}
