//! Per-kind mutations of the built-in kinds that controllers and kubectl run into: what admission
//! adds on create (node taints, a Job's generated selector) and what decoding does (secret folding, lease times). Validation
//! lives in [`crate::rules`].

use base64::Engine;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::resource::ResourceInfo;

fn is(info: &ResourceInfo, group: &str, kind: &str) -> bool {
    info.group == group && info.kind == kind
}

/// What the kind's admission plugins and create strategy add to a new object.
pub fn on_create(info: &ResourceInfo, object: &mut Value) -> Result<(), ApiError> {
    // (A new PodDisruptionBudget's status, reset by its create strategy, reads with its zero
    // counters: they have no `omitempty`, see `rules::go_encoding`.)
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
    if !info.custom && !quantities_parse(info, object) {
        return Err(ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {}",
            crate::rules::QUANTITY_FORMAT_ERROR,
            kind = info.kind,
            version = info.version,
        )));
    }
    if is(info, "apps", "DaemonSet") {
        template_generation(info, object)?;
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

/// Whether every resource quantity of the object's pod spec (or claim) parses: the decoder
/// refuses a malformed `resource.Quantity` with a 400.
fn quantities_parse(info: &ResourceInfo, object: &Value) -> bool {
    let spec = match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod") => &object["spec"],
        ("", "PodTemplate") => &object["template"]["spec"],
        ("batch", "CronJob") => &object["spec"]["jobTemplate"]["spec"]["template"]["spec"],
        ("", "PersistentVolumeClaim") => {
            return ["requests", "limits"]
                .iter()
                .all(|k| quantity_map_parses(&object["spec"]["resources"][k]));
        }
        ("autoscaling", "HorizontalPodAutoscaler") => return hpa_quantities_parse(object),
        _ => &object["spec"]["template"]["spec"],
    };
    ["containers", "initContainers"].iter().all(|list| {
        spec[list].as_array().into_iter().flatten().all(|c| {
            ["requests", "limits"]
                .iter()
                .all(|k| quantity_map_parses(&c["resources"][k]))
        })
    }) && quantity_map_parses(&spec["overhead"])
}

/// The quantities of a (v2) HorizontalPodAutoscaler: metric targets, current values and the
/// scaling rules' tolerances.
fn hpa_quantities_parse(object: &Value) -> bool {
    const SOURCES: [&str; 5] = [
        "object",
        "pods",
        "resource",
        "containerResource",
        "external",
    ];
    let values = |list: &Value, part: &str| -> Vec<Value> {
        let mut out = Vec::new();
        for metric in list.as_array().into_iter().flatten() {
            for source in SOURCES {
                for field in ["value", "averageValue"] {
                    out.push(metric[source][part][field].clone());
                }
            }
        }
        out
    };
    let mut all = values(&object["spec"]["metrics"], "target");
    all.extend(values(&object["status"]["currentMetrics"], "current"));
    for direction in ["scaleUp", "scaleDown"] {
        all.push(object["spec"]["behavior"][direction]["tolerance"].clone());
    }
    all.iter().all(|v| match v {
        Value::String(s) => crate::rules::Quantity::parse(s).is_some(),
        _ => true,
    })
}

fn quantity_map_parses(map: &Value) -> bool {
    map.as_object().into_iter().flatten().all(|(_, v)| match v {
        Value::String(s) => crate::rules::Quantity::parse(s).is_some(),
        _ => true,
    })
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

/// A DaemonSet's template generation as decoded: the annotation's value, at least 1 (what the
/// create strategy starts it at; an update takes the stored one, `rules::prepare_update`).
fn template_generation(info: &ResourceInfo, object: &mut Value) -> Result<(), ApiError> {
    use crate::rules::apps::{set_template_generation, TEMPLATE_GENERATION};
    let sent = object["metadata"]["annotations"][TEMPLATE_GENERATION].as_str();
    let generation = match sent {
        None => 0,
        Some(text) => parse_int64(text).map_err(|e| {
            ApiError::bad_request(format!(
                "{kind} in version \"{version}\" cannot be handled as a {kind}: strconv.ParseInt: parsing {text:?}: {e}",
                kind = info.kind,
                version = info.version,
            ))
        })?,
    };
    set_template_generation(object, generation.max(1));
    Ok(())
}

/// `strconv.ParseInt(text, 10, 64)`, its error as Go words it.
fn parse_int64(text: &str) -> Result<i64, &'static str> {
    use std::num::IntErrorKind;
    text.parse::<i64>().map_err(|e| match e.kind() {
        IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => "value out of range",
        _ => "invalid syntax",
    })
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
    fn lease_times_need_microseconds() {
        let leases = info("leases");
        let mut ok = json!({"spec": {"renewTime": "2026-01-01T00:00:00.000000Z"}});
        on_decode(&leases, &mut ok).unwrap();
        for bad in ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000Z"] {
            let mut l = json!({"spec": {"renewTime": bad}});
            let err = on_decode(&leases, &mut l).unwrap_err();
            assert_eq!(err.code, 400);
        }
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
}
