//! The `scale` subresource: an `autoscaling/v1` `Scale` view of a workload's replicas.
//!
//! Served for Deployments, ReplicaSets and StatefulSets (`pkg/registry/apps/*/storage`),
//! ReplicationControllers (`pkg/registry/core/replicationcontroller/storage`) and custom resources
//! whose CRD version declares `subresources.scale` (`apiextensions-apiserver`'s
//! `customresource` `ScaleREST`, with `specReplicasPath`, `statusReplicasPath` and
//! `labelSelectorPath`). Reading builds the `Scale` from the object; writing sets the replicas
//! field and runs the object's own update rules (resourceVersion precondition, generation,
//! schema) before answering with the new `Scale`.

use serde_json::{json, Value};

use crate::error::{ApiError, StatusCause};
use crate::resource::ResourceInfo;
use crate::rules::selectors::{LabelSelector, Operator};

/// Where a kind keeps what its `Scale` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleSpec {
    /// Dotted path of the desired replicas, e.g. `.spec.replicas`.
    pub spec_replicas_path: String,
    /// Dotted path of the observed replicas.
    pub status_replicas_path: String,
    /// Where the selector comes from.
    pub selector: SelectorSource,
    /// Whether this is a custom resource's scale (the CRD's paths, the CR's own errors).
    pub custom: bool,
}

/// Where a `Scale`'s `status.selector` comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectorSource {
    /// A `metav1.LabelSelector` at `spec.selector` (apps kinds).
    LabelSelector,
    /// A label map at `spec.selector` (ReplicationControllers).
    LabelMap,
    /// A string (already in selector syntax) at a dotted path (custom resources).
    Path(String),
    /// None declared.
    None,
}

impl ScaleSpec {
    /// The scale subresource of a resource, if it has one.
    pub fn of(info: &ResourceInfo) -> Option<ScaleSpec> {
        if info.custom {
            let paths = info.scale.as_ref()?;
            return Some(ScaleSpec {
                spec_replicas_path: paths.spec_replicas_path.clone(),
                status_replicas_path: paths.status_replicas_path.clone(),
                selector: match &paths.label_selector_path {
                    Some(p) => SelectorSource::Path(p.clone()),
                    None => SelectorSource::None,
                },
                custom: true,
            });
        }
        let selector = match (info.group.as_str(), info.kind.as_str()) {
            ("apps", "Deployment" | "ReplicaSet" | "StatefulSet") => SelectorSource::LabelSelector,
            ("", "ReplicationController") => SelectorSource::LabelMap,
            _ => return None,
        };
        Some(ScaleSpec {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            selector,
            custom: false,
        })
    }

    /// The desired replicas of `object`; `None` when the field is absent.
    pub fn spec_replicas(&self, object: &Value) -> Option<i64> {
        let value = lookup(object, &self.spec_replicas_path)?;
        match (value.as_i64(), self.custom) {
            (Some(n), _) => Some(n),
            // Built-in kinds default an absent `replicas` to 1.
            (None, false) if value.is_null() => Some(1),
            _ => None,
        }
    }

    /// The `autoscaling/v1` `Scale` of `object`.
    pub fn scale_of(&self, object: &Value) -> Result<Value, ApiError> {
        let meta = &object["metadata"];
        let mut metadata = serde_json::Map::new();
        for key in [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "creationTimestamp",
        ] {
            if let Some(v) = meta.get(key).filter(|v| !v.is_null()) {
                metadata.insert(key.into(), v.clone());
            }
        }
        let replicas = if self.custom {
            self.spec_replicas(object).unwrap_or(0)
        } else {
            lookup(object, &self.spec_replicas_path)
                .and_then(Value::as_i64)
                .unwrap_or(1)
        };
        let status_replicas = lookup(object, &self.status_replicas_path)
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let mut spec = serde_json::Map::new();
        if replicas != 0 {
            spec.insert("replicas".into(), json!(replicas));
        }
        let mut status = serde_json::Map::new();
        status.insert("replicas".into(), json!(status_replicas));
        let selector = self.selector_of(object)?;
        if !selector.is_empty() {
            status.insert("selector".into(), json!(selector));
        }
        Ok(json!({
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": Value::Object(metadata),
            "spec": Value::Object(spec),
            "status": Value::Object(status),
        }))
    }

    fn selector_of(&self, object: &Value) -> Result<String, ApiError> {
        match &self.selector {
            SelectorSource::LabelSelector => {
                let selector = LabelSelector::from_label_selector_json(&object["spec"]["selector"])
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
                Ok(selector_string(&selector))
            }
            SelectorSource::LabelMap => Ok(crate::rules::selector::format_label_set(
                &object["spec"]["selector"],
            )),
            SelectorSource::Path(path) => Ok(lookup(object, path)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()),
            SelectorSource::None => Ok(String::new()),
        }
    }

    /// `object` with its replicas set from `scale` (a decoded `Scale`), and the scale's
    /// `resourceVersion`, if it has one, as the write's precondition. Checks the scale as the
    /// real server does first.
    pub fn apply(
        &self,
        info: &ResourceInfo,
        object: &Value,
        scale: &Value,
    ) -> Result<Value, ApiError> {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let replicas = match &scale["spec"]["replicas"] {
            Value::Null => 0,
            v => v.as_i64().ok_or_else(|| {
                ApiError::bad_request(format!(
                    "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {} into Go struct field ScaleSpec.spec.replicas of type int32",
                    json_type(v)
                ))
            })?,
        };
        if !self.custom && replicas < 0 {
            return Err(ApiError::invalid(
                "autoscaling",
                "Scale",
                name,
                vec![StatusCause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {replicas}: must be greater than or equal to 0"
                    ),
                    field: "spec.replicas".into(),
                }],
            ));
        }
        if let Some(uid) = scale["metadata"]["uid"].as_str().filter(|u| !u.is_empty()) {
            let actual = object["metadata"]["uid"].as_str().unwrap_or_default();
            if uid != actual {
                return Err(ApiError::conflict(
                    &info.group,
                    &format!("{}/scale", info.plural),
                    name,
                    &format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                    ),
                ));
            }
        }
        let mut next = object.clone();
        set(&mut next, &self.spec_replicas_path, json!(replicas));
        if let Some(rv) = scale["metadata"]["resourceVersion"]
            .as_str()
            .filter(|rv| !rv.is_empty())
        {
            next["metadata"]["resourceVersion"] = json!(rv);
        }
        Ok(next)
    }
}

/// A custom resource's `specReplicasPath` checked on every write, as the apiextensions validator
/// does (`ValidateScaleSpec`).
pub fn validate_custom_replicas(info: &ResourceInfo, object: &Value) -> Vec<StatusCause> {
    let Some(spec) = ScaleSpec::of(info).filter(|s| s.custom) else {
        return Vec::new();
    };
    let Some(value) = lookup(object, &spec.spec_replicas_path) else {
        return Vec::new();
    };
    let invalid = |shown: String, why: &str| StatusCause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {shown}: {why}"),
        field: spec.spec_replicas_path.clone(),
    };
    match value.as_i64() {
        Some(n) if n < 0 => vec![invalid(n.to_string(), "should be a non-negative integer")],
        Some(n) if n > i64::from(i32::MAX) => vec![invalid(
            n.to_string(),
            &format!("should be less than or equal to {}", i32::MAX),
        )],
        Some(_) => Vec::new(),
        None => vec![invalid(
            "0".into(),
            &format!(
                "{} accessor error: {value} is of the type {}, expected int64",
                spec.spec_replicas_path.trim_start_matches('.'),
                json_type(value)
            ),
        )],
    }
}

/// `404` for the scale of a missing object, worded as each registry words it.
pub fn not_found(info: &ResourceInfo, name: &str) -> ApiError {
    if info.custom {
        return ApiError::not_found(&info.group, &info.plural, name);
    }
    let group = if info.group.is_empty() {
        "autoscaling"
    } else {
        info.group.as_str()
    };
    ApiError::not_found(group, &format!("{}/scale", info.plural), name)
}

/// A selector in the syntax `labels.Selector.String()` prints (requirements sorted by key).
pub fn selector_string(selector: &LabelSelector) -> String {
    selector
        .requirements
        .iter()
        .map(|r| {
            let values = r.values.join(",");
            match r.operator {
                Operator::In => format!("{} in ({values})", r.key),
                Operator::NotIn => format!("{} notin ({values})", r.key),
                Operator::Equals => format!("{}={values}", r.key),
                Operator::DoubleEquals => format!("{}=={values}", r.key),
                Operator::NotEquals => format!("{}!={values}", r.key),
                Operator::Exists => r.key.clone(),
                Operator::DoesNotExist => format!("!{}", r.key),
                Operator::GreaterThan => format!("{}>{values}", r.key),
                Operator::LessThan => format!("{}<{values}", r.key),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A JSON value's type as Go's decoder names it in its errors.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The value at a dotted path (`.spec.replicas`).
fn lookup<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    path.trim_start_matches('.')
        .split('.')
        .try_fold(object, |v, key| v.get(key))
}

/// Sets the value at a dotted path, making the objects on the way.
fn set(object: &mut Value, path: &str, value: Value) {
    let keys: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    let mut at = object;
    for key in &keys[..keys.len().saturating_sub(1)] {
        if !at[*key].is_object() {
            at[*key] = json!({});
        }
        at = &mut at[*key];
    }
    if let Some(last) = keys.last() {
        at[*last] = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::{builtin_resources, ScalePaths};

    fn builtin(kind: &str) -> ResourceInfo {
        builtin_resources()
            .into_iter()
            .find(|r| r.kind == kind)
            .unwrap()
    }

    fn custom() -> ResourceInfo {
        ResourceInfo {
            group: "example.com".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            custom: true,
            scale: Some(ScalePaths {
                spec_replicas_path: ".spec.size".into(),
                status_replicas_path: ".status.size".into(),
                label_selector_path: Some(".status.selector".into()),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_deployment_scale_shows_replicas_and_selector() {
        let deployment = json!({
            "metadata": {"name": "d", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                         "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"x": "y"}},
            "spec": {"replicas": 3, "selector": {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]},
                                     {"key": "canary", "operator": "DoesNotExist"}]}},
            "status": {"replicas": 2}
        });
        let scale = ScaleSpec::of(&builtin("Deployment"))
            .unwrap()
            .scale_of(&deployment)
            .unwrap();
        assert_eq!(
            scale,
            json!({
                "kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {"name": "d", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                             "creationTimestamp": "2026-01-01T00:00:00Z"},
                "spec": {"replicas": 3},
                "status": {"replicas": 2, "selector": "app=web,!canary,tier in (a,b)"}
            })
        );
    }

    #[test]
    fn a_replication_controller_selector_is_a_label_map() {
        let rc = json!({"metadata": {"name": "r"}, "spec": {"replicas": 0, "selector": {"b": "2", "a": "1"}}});
        let scale = ScaleSpec::of(&builtin("ReplicationController"))
            .unwrap()
            .scale_of(&rc)
            .unwrap();
        assert_eq!(scale["spec"], json!({}));
        assert_eq!(
            scale["status"],
            json!({"replicas": 0, "selector": "a=1,b=2"})
        );
    }

    #[test]
    fn custom_resources_use_the_crd_paths() {
        let info = custom();
        let spec = ScaleSpec::of(&info).unwrap();
        let cr = json!({"metadata": {"name": "w"}, "spec": {"size": 4},
                        "status": {"size": 1, "selector": "app=w"}});
        let scale = spec.scale_of(&cr).unwrap();
        assert_eq!(scale["spec"]["replicas"], 4);
        assert_eq!(scale["status"], json!({"replicas": 1, "selector": "app=w"}));
        let scaled = spec
            .apply(&info, &cr, &json!({"spec": {"replicas": 6}}))
            .unwrap();
        assert_eq!(scaled["spec"]["size"], 6);
    }

    #[test]
    fn negative_replicas_are_refused_by_each_validator() {
        let info = builtin("ReplicaSet");
        let err = ScaleSpec::of(&info)
            .unwrap()
            .apply(
                &info,
                &json!({"metadata": {"name": "r"}}),
                &json!({"spec": {"replicas": -1}}),
            )
            .unwrap_err();
        assert_eq!(err.code, 422);
        assert_eq!(
            err.message,
            "Scale.autoscaling \"r\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
        let causes = validate_custom_replicas(&custom(), &json!({"spec": {"size": -2}}));
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, ".spec.size");
        assert_eq!(
            causes[0].message,
            "Invalid value: -2: should be a non-negative integer"
        );
    }

    #[test]
    fn a_uid_precondition_must_match() {
        let info = builtin("StatefulSet");
        let err = ScaleSpec::of(&info)
            .unwrap()
            .apply(
                &info,
                &json!({"metadata": {"name": "s", "uid": "a"}}),
                &json!({"metadata": {"uid": "b"}, "spec": {"replicas": 1}}),
            )
            .unwrap_err();
        assert_eq!(err.code, 409);
        assert_eq!(
            err.message,
            "Operation cannot be fulfilled on statefulsets/scale.apps \"s\": Precondition failed: UID in precondition: b, UID in object meta: a"
        );
    }

    #[test]
    fn missing_objects_are_named_as_each_registry_names_them() {
        assert_eq!(
            not_found(&builtin("Deployment"), "d").message,
            "deployments/scale.apps \"d\" not found"
        );
        assert_eq!(
            not_found(&builtin("ReplicationController"), "r").message,
            "replicationcontrollers/scale.autoscaling \"r\" not found"
        );
        assert_eq!(
            not_found(&custom(), "w").message,
            "widgets.example.com \"w\" not found"
        );
    }
}
