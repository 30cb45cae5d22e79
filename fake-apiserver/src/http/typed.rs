//! Decoding of built-in objects through their typed schema (the k8s-openapi types), as the real
//! server decodes into Go structs: a field of the wrong type is a 400, and unknown fields are
//! dropped with a warning, or refused with `fieldValidation=Strict`.

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::resource::ResourceInfo;

/// How unknown fields are treated (`fieldValidation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and warn (the default).
    #[default]
    Warn,
    /// Refuse the request.
    Strict,
}

impl FieldValidation {
    /// Reads the `fieldValidation` query parameter.
    pub fn from_query(value: Option<&str>) -> Result<Self, ApiError> {
        match value {
            None | Some("") | Some("Warn") => Ok(Self::Warn),
            Some("Ignore") => Ok(Self::Ignore),
            Some("Strict") => Ok(Self::Strict),
            Some(other) => Err(ApiError::bad_request(format!(
                "fieldValidation parameter unsupported: {other}"
            ))),
        }
    }
}

/// Decodes `object` as `T`. Returns the typed encoding only when the decoder skipped a field
/// (so the caller can tell which ones are unknown); `None` when every field was known, the
/// common case, which then costs one decode and no re-encoding.
fn through<T>(object: &Value) -> Result<Option<Value>, serde_json::Error>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let mut skipped = false;
    // Deserializing from a reference avoids copying the whole tree first.
    let typed: T = serde_ignored::deserialize(object, |_| skipped = true)?;
    if !skipped {
        return Ok(None);
    }
    serde_json::to_value(typed).map(Some)
}

/// A typed decode ([`through`] of one k8s-openapi type).
type Through = fn(&Value) -> Result<Option<Value>, serde_json::Error>;

/// The typed decode of a built-in kind (see [`through`]); `None` for kinds without a typed
/// schema here.
fn typed_decoder(info: &ResourceInfo) -> Option<Through> {
    use k8s_openapi::api::{
        admissionregistration::v1 as admission, apps::v1 as apps, autoscaling::v2 as autoscaling,
        batch::v1 as batch, certificates::v1 as certificates, coordination::v1 as coordination,
        core::v1 as core, discovery::v1 as discovery, events::v1 as events,
        networking::v1 as networking, node::v1 as node, policy::v1 as policy, rbac::v1 as rbac,
        scheduling::v1 as scheduling, storage::v1 as storage,
    };
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
    if info.custom {
        return None;
    }
    if crate::registry::conversion::is_builtin_view(info) {
        return Some(through::<k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler>);
    }
    let through: Through = match (info.group.as_str(), info.kind.as_str()) {
        ("", "Namespace") => through::<core::Namespace>,
        ("", "Pod") => through::<core::Pod>,
        ("", "Node") => through::<core::Node>,
        ("", "ConfigMap") => through::<core::ConfigMap>,
        ("", "Secret") => through::<core::Secret>,
        ("", "Event") => through::<core::Event>,
        ("", "ServiceAccount") => through::<core::ServiceAccount>,
        ("", "Service") => through::<core::Service>,
        ("", "Endpoints") => through::<core::Endpoints>,
        ("", "PersistentVolume") => through::<core::PersistentVolume>,
        ("", "PersistentVolumeClaim") => through::<core::PersistentVolumeClaim>,
        ("", "LimitRange") => through::<core::LimitRange>,
        ("", "ResourceQuota") => through::<core::ResourceQuota>,
        ("", "PodTemplate") => through::<core::PodTemplate>,
        ("", "ReplicationController") => through::<core::ReplicationController>,
        ("coordination.k8s.io", "Lease") => through::<coordination::Lease>,
        ("apps", "Deployment") => through::<apps::Deployment>,
        ("apps", "ReplicaSet") => through::<apps::ReplicaSet>,
        ("apps", "StatefulSet") => through::<apps::StatefulSet>,
        ("apps", "DaemonSet") => through::<apps::DaemonSet>,
        ("apps", "ControllerRevision") => through::<apps::ControllerRevision>,
        ("batch", "Job") => through::<batch::Job>,
        ("batch", "CronJob") => through::<batch::CronJob>,
        ("policy", "PodDisruptionBudget") => through::<policy::PodDisruptionBudget>,
        ("networking.k8s.io", "Ingress") => through::<networking::Ingress>,
        ("networking.k8s.io", "IngressClass") => through::<networking::IngressClass>,
        ("networking.k8s.io", "NetworkPolicy") => through::<networking::NetworkPolicy>,
        ("discovery.k8s.io", "EndpointSlice") => through::<discovery::EndpointSlice>,
        ("storage.k8s.io", "StorageClass") => through::<storage::StorageClass>,
        ("storage.k8s.io", "VolumeAttachment") => through::<storage::VolumeAttachment>,
        ("storage.k8s.io", "CSIDriver") => through::<storage::CSIDriver>,
        ("storage.k8s.io", "CSINode") => through::<storage::CSINode>,
        ("storage.k8s.io", "CSIStorageCapacity") => through::<storage::CSIStorageCapacity>,
        ("storage.k8s.io", "VolumeAttributesClass") => through::<storage::VolumeAttributesClass>,
        ("scheduling.k8s.io", "PriorityClass") => through::<scheduling::PriorityClass>,
        ("node.k8s.io", "RuntimeClass") => through::<node::RuntimeClass>,
        ("apiregistration.k8s.io", "APIService") => {
            through::<k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService>
        }
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            through::<certificates::CertificateSigningRequest>
        }
        ("autoscaling", "HorizontalPodAutoscaler") => {
            through::<autoscaling::HorizontalPodAutoscaler>
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            through::<admission::ValidatingWebhookConfiguration>
        }
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            through::<admission::MutatingWebhookConfiguration>
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => {
            through::<admission::ValidatingAdmissionPolicy>
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") => {
            through::<admission::ValidatingAdmissionPolicyBinding>
        }
        ("rbac.authorization.k8s.io", "Role") => through::<rbac::Role>,
        ("rbac.authorization.k8s.io", "ClusterRole") => through::<rbac::ClusterRole>,
        ("rbac.authorization.k8s.io", "RoleBinding") => through::<rbac::RoleBinding>,
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => through::<rbac::ClusterRoleBinding>,
        ("events.k8s.io", "Event") => through::<events::Event>,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            through::<apiextensions::CustomResourceDefinition>
        }
        _ => return None,
    };
    Some(through)
}

/// Decodes a built-in object through its schema. Returns the warnings for dropped unknown
/// fields; a wrong type, or an unknown field under `Strict`, is a 400.
///
/// `stored`: a version of the object the server stored, when the body is a changed copy of it
/// (a PATCH's result, or an UPDATE's body that took over the stored version's equal parts):
/// what the body shares with it decoded cleanly when it was written, and is not looked at
/// again (see [`super::typed_shape::Shape::check_against`]).
pub fn decode(
    info: &ResourceInfo,
    object: &mut Value,
    validation: FieldValidation,
    stored: Option<&Value>,
) -> Result<Vec<String>, ApiError> {
    let Some(through) = typed_decoder(info) else {
        return Ok(Vec::new());
    };
    // Most bodies decode cleanly: a walk over the parsed body says so far cheaper than the
    // decode; when it cannot tell, the decode gives the answer (see `typed_shape`).
    if super::typed_shape::enabled()
        && super::typed_shape::shape_for(info).is_some_and(|shape| {
            shape.check_against(object, stored) == super::typed_shape::Verdict::Clean
        })
    {
        return Ok(Vec::new());
    }
    let undecodable = |e: &dyn std::fmt::Display| {
        ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {e}",
            kind = info.kind,
            version = info.version
        ))
    };
    // `[]byte` fields are read by Go's base64 decoder, more lenient than the typed decode's.
    crate::rules::go_encoding::canonical_base64(&info.group, &info.kind, object)
        .map_err(|e| undecodable(&e))?;
    let typed = through(object).map_err(|e| undecodable(&e))?;
    let Some(typed) = typed else {
        return Ok(Vec::new());
    };
    let mut unknown = Vec::new();
    unknown_fields(object, &typed, "", &mut unknown);
    if unknown.is_empty() {
        return Ok(Vec::new());
    }
    let warnings: Vec<String> = unknown
        .iter()
        .map(|f| format!("unknown field {f:?}"))
        .collect();
    match validation {
        FieldValidation::Strict => Err(ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: strict decoding error: {}",
            warnings.join(", "),
            kind = info.kind,
            version = info.version
        ))),
        FieldValidation::Warn | FieldValidation::Ignore => {
            remove_fields(object, &typed);
            Ok(if validation == FieldValidation::Warn {
                warnings
            } else {
                Vec::new()
            })
        }
    }
}

/// Paths present (and not null) in `original` but absent from its typed encoding.
fn unknown_fields(original: &Value, typed: &Value, path: &str, out: &mut Vec<String>) {
    match (original, typed) {
        (Value::Object(o), Value::Object(t)) => {
            for (key, value) in o {
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match t.get(key) {
                    Some(tv) => unknown_fields(value, tv, &child, out),
                    None if !value.is_null() && !is_empty_container(value) => out.push(child),
                    None => {}
                }
            }
        }
        (Value::Array(o), Value::Array(t)) if o.len() == t.len() => {
            for (i, (ov, tv)) in o.iter().zip(t).enumerate() {
                unknown_fields(ov, tv, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

fn is_empty_container(v: &Value) -> bool {
    matches!(v, Value::Object(m) if m.is_empty()) || matches!(v, Value::Array(a) if a.is_empty())
}

/// Removes from `original` the keys its typed encoding does not have, keeping everything else as
/// the client wrote it.
fn remove_fields(original: &mut Value, typed: &Value) {
    match (original, typed) {
        (Value::Object(o), Value::Object(t)) => {
            let keep: Map<String, Value> = std::mem::take(o)
                .into_iter()
                .filter(|(k, v)| t.contains_key(k) || v.is_null() || is_empty_container(v))
                .collect();
            *o = keep;
            for (k, v) in o.iter_mut() {
                if let Some(tv) = t.get(k) {
                    remove_fields(v, tv);
                }
            }
        }
        (Value::Array(o), Value::Array(t)) if o.len() == t.len() => {
            for (ov, tv) in o.iter_mut().zip(t) {
                remove_fields(ov, tv);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::builtin_resources;
    use serde_json::json;

    fn configmaps() -> ResourceInfo {
        builtin_resources()
            .into_iter()
            .find(|r| r.plural == "configmaps")
            .unwrap()
    }

    #[test]
    fn unknown_fields_are_dropped_with_a_warning() {
        let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "bogus": 1}, "data": {"a": "1"}, "extra": true});
        let warnings = decode(&configmaps(), &mut cm, FieldValidation::Warn, None).unwrap();
        assert_eq!(
            warnings,
            // In key order (a real server reports them in the order of the request body).
            vec![
                "unknown field \"extra\"",
                "unknown field \"metadata.bogus\""
            ]
        );
        assert_eq!(
            cm,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"a": "1"}})
        );
    }

    #[test]
    fn strict_refuses_and_wrong_types_are_bad_requests() {
        let mut cm = json!({"metadata": {"name": "a"}, "bogus": 1});
        assert_eq!(
            decode(&configmaps(), &mut cm, FieldValidation::Strict, None)
                .unwrap_err()
                .code,
            400
        );
        let mut wrong = json!({"metadata": {"name": "a"}, "data": {"n": 5}});
        let err = decode(&configmaps(), &mut wrong, FieldValidation::Warn, None).unwrap_err();
        assert_eq!((err.code, err.reason.as_str()), (400, "BadRequest"));
        assert!(err
            .message
            .starts_with("ConfigMap in version \"v1\" cannot be handled as a ConfigMap"));
    }

    #[test]
    fn nulls_and_empties_are_not_unknown() {
        let mut cm = json!({"metadata": {"name": "a", "labels": {}}, "data": null});
        assert!(
            decode(&configmaps(), &mut cm, FieldValidation::Strict, None)
                .unwrap()
                .is_empty()
        );
    }
}
