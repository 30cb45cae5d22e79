//! Rules of the `apps` workloads, from `pkg/apis/apps/validation/validation.go` and the kinds'
//! strategies (`pkg/registry/apps/*/strategy.go`): selectors required, valid, non-empty, matching
//! the template's labels and immutable in `apps/v1`; replicas and the other counts non-negative;
//! restart policy `Always`; what a StatefulSet update may change.

use serde_json::Value;

use super::core::{nonnegative_fields, pod_template};
use super::{same, same_at, same_values_at, selector, str_of, Target};
use crate::rules::validation::Cause;

/// The causes of creating an `apps` object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    let spec = &obj["spec"];
    match kind {
        "Deployment" => deployment_spec(spec),
        "ReplicaSet" => replica_set_spec(spec, "deployment"),
        "StatefulSet" => stateful_set_spec(spec),
        "DaemonSet" => daemon_set_spec(spec),
        "ControllerRevision" => {
            let mut causes = Vec::new();
            if obj.get("data").is_none_or(Value::is_null) {
                causes.push(Cause::required("data", "data is mandatory"));
            }
            super::nonnegative(&mut causes, obj.get("revision"), &"revision");
            causes
        }
        _ => Vec::new(),
    }
}

/// The causes of updating an `apps` object of `kind` (beyond metadata).
pub fn update_causes(kind: &str, old: &Value, new: &Value, target: Target) -> Vec<Cause> {
    if target == Target::Status {
        return status_causes(kind, &new["status"]);
    }
    let mut causes = create_causes(kind, new);
    match kind {
        // `ValidateDaemonSet(new)` then `ValidateDaemonSetUpdate`, which validates the spec again.
        "DaemonSet" => causes.extend(create_causes(kind, new)),
        "StatefulSet" => causes.extend(stateful_set_update(old, new)),
        "ControllerRevision" if !same(old.get("data"), new.get("data")) => {
            causes.push(Cause::invalid(
                "data",
                new.get("data").unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
        _ => {}
    }
    // The strategies of apps/v1 add the immutable selector (`ValidateImmutableField`); a
    // StatefulSet's selector is covered by its forbidden spec change.
    if matches!(kind, "Deployment" | "ReplicaSet" | "DaemonSet")
        && !same_at("apps", kind, &["spec", "selector"], old, new)
    {
        causes.push(Cause::invalid(
            "spec.selector",
            new["spec"].get("selector").unwrap_or(&Value::Null),
            "field is immutable",
        ));
    }
    causes
}

/// Selector required, valid, non-empty, parseable (`ValidateDeploymentSpec`,
/// `ValidateReplicaSetSpec`, `ValidateStatefulSetSpec`). `what` names the kind in the empty-selector
/// message (upstream's ReplicaSet says "deployment").
fn selector_causes(spec: &Value, what: &str, unparsable: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    match spec.get("selector").filter(|s| !s.is_null()) {
        None => causes.push(Cause::required("spec.selector", "")),
        Some(sel) => {
            causes.extend(selector::causes(sel, "spec.selector"));
            if selector::is_empty(sel) {
                causes.push(Cause::invalid(
                    "spec.selector",
                    sel,
                    &format!("empty selector is invalid for {what}"),
                ));
            }
            if !selector::parses(sel) {
                causes.push(Cause::invalid("spec.selector", sel, unparsable));
            }
        }
    }
    causes
}

/// `` `selector` does not match template `labels` `` at `spec.template.metadata.labels`.
fn template_match(spec: &Value) -> Vec<Cause> {
    let sel = &spec["selector"];
    let labels = &spec["template"]["metadata"]["labels"];
    if sel.is_object()
        && selector::parses(sel)
        && !selector::is_empty(sel)
        && !selector::matches(sel, labels)
    {
        return vec![Cause::invalid(
            "spec.template.metadata.labels",
            if labels.is_null() {
                &Value::Null
            } else {
                labels
            },
            "`selector` does not match template `labels`",
        )];
    }
    Vec::new()
}

/// A workload's pods must restart `Always` and have no active deadline
/// (`ValidatePodTemplateSpecForReplicaSet` and friends); `kind` names it in the message.
fn always_restart(spec: &Value, kind: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let pod = &spec["template"]["spec"];
    let restart = str_of(pod, "restartPolicy");
    if !restart.is_empty() && restart != "Always" {
        causes.push(Cause::not_supported(
            "spec.template.spec.restartPolicy",
            &Value::from(restart),
            &["Always".into()],
        ));
    }
    if pod
        .get("activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        causes.push(Cause::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            &format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
    causes
}

/// `ValidateReplicaSetSpec`.
fn replica_set_spec(spec: &Value, what: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    nonnegative_fields(&mut causes, spec, "spec", &["replicas", "minReadySeconds"]);
    causes.extend(selector_causes(spec, what, "invalid label selector"));
    causes.extend(template_match(spec));
    causes.extend(pod_template(&spec["template"], "spec.template"));
    causes.extend(always_restart(spec, "ReplicaSet"));
    causes
}

/// `ValidateDeploymentSpec`: the ReplicaSet rules plus strategy, history and deadlines.
fn deployment_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = replica_set_spec(spec, "deployment");
    let strategy = &spec["strategy"];
    match str_of(strategy, "type") {
        "Recreate" => {
            if strategy.get("rollingUpdate").is_some_and(|v| !v.is_null()) {
                causes.push(Cause::forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        // Absent: defaulted to RollingUpdate with 25%/25%.
        "" | "RollingUpdate" => {
            causes.extend(rolling_update_deployment(&strategy["rollingUpdate"]));
        }
        _ => causes.push(Cause::not_supported(
            "spec.strategy",
            strategy,
            &["Recreate".into(), "RollingUpdate".into()],
        )),
    }
    nonnegative_fields(
        &mut causes,
        spec,
        "spec",
        &["revisionHistoryLimit", "progressDeadlineSeconds"],
    );
    if let Some(deadline) = spec["progressDeadlineSeconds"].as_i64() {
        if deadline >= 0 && deadline <= spec["minReadySeconds"].as_i64().unwrap_or(0) {
            causes.push(Cause::invalid(
                "spec.progressDeadlineSeconds",
                &Value::from(deadline),
                "must be greater than minReadySeconds",
            ));
        }
    }
    causes
}

/// `ValidateRollingUpdateDeployment` (absent values are defaulted to 25%).
fn rolling_update_deployment(ru: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let at = "spec.strategy.rollingUpdate";
    let default = Value::from("25%");
    let max_unavailable = ru
        .get("maxUnavailable")
        .filter(|v| !v.is_null())
        .unwrap_or(&default);
    let max_surge = ru
        .get("maxSurge")
        .filter(|v| !v.is_null())
        .unwrap_or(&default);
    causes.extend(super::int_or_percent(
        max_unavailable,
        &format!("{at}.maxUnavailable"),
    ));
    causes.extend(super::int_or_percent(max_surge, &format!("{at}.maxSurge")));
    let is_zero = |v: &Value| match v {
        Value::String(s) => s.strip_suffix('%').and_then(|d| d.parse::<i64>().ok()) == Some(0),
        other => other.as_i64() == Some(0),
    };
    if is_zero(max_unavailable) && is_zero(max_surge) {
        causes.push(Cause::new(
            crate::rules::validation::FieldErrorType::Invalid,
            format!("{at}.maxUnavailable"),
            Some(match max_unavailable {
                Value::String(s) => format!(
                    "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
                    crate::rules::validation::go_quote(s)
                ),
                _ => "intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}".to_string(),
            }),
            "may not be 0 when `maxSurge` is 0",
        ));
    }
    causes.extend(super::not_more_than_100_percent(
        max_unavailable,
        &format!("{at}.maxUnavailable"),
    ));
    causes
}

/// `ValidateStatefulSetSpec` (policies default to `OrderedReady` and `RollingUpdate`).
fn stateful_set_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let policy = str_of(spec, "podManagementPolicy");
    if !matches!(policy, "" | "OrderedReady" | "Parallel") {
        causes.push(Cause::invalid_str(
            "spec.podManagementPolicy",
            policy,
            "must be 'OrderedReady' or 'Parallel'",
        ));
    }
    match str_of(&spec["updateStrategy"], "type") {
        "" | "RollingUpdate" => {}
        "OnDelete" => {
            if let Some(ru) = spec["updateStrategy"]
                .get("rollingUpdate")
                .filter(|v| !v.is_null())
            {
                causes.push(Cause::invalid(
                    "spec.updateStrategy.rollingUpdate",
                    ru,
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        _ => causes.push(Cause::invalid(
            "spec.updateStrategy",
            &spec["updateStrategy"],
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    nonnegative_fields(&mut causes, spec, "spec", &["replicas", "minReadySeconds"]);
    causes.extend(selector_causes(spec, "statefulset", ""));
    causes.extend(template_match(spec));
    causes.extend(crate::rules::validation::validate_labels(
        spec["template"]["metadata"].get("labels"),
        &"spec.template.labels",
    ));
    causes.extend(always_restart(spec, "StatefulSet"));
    causes
}

/// `ValidateDaemonSetSpec`: the selector may be absent, but if given must be valid and non-empty.
fn daemon_set_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let sel = spec.get("selector").filter(|s| !s.is_null());
    if let Some(sel) = sel {
        causes.extend(selector::causes(sel, "spec.selector"));
    }
    causes.extend(template_match(spec));
    if let Some(sel) = sel {
        if selector::is_empty(sel) {
            causes.push(Cause::invalid(
                "spec.selector",
                sel,
                "empty selector is invalid for daemonset",
            ));
        }
    }
    causes.extend(pod_template(&spec["template"], "spec.template"));
    causes.extend(always_restart(spec, "DaemonSet"));
    nonnegative_fields(
        &mut causes,
        spec,
        "spec",
        &[
            "minReadySeconds",
            "templateGeneration",
            "revisionHistoryLimit",
        ],
    );
    match str_of(&spec["updateStrategy"], "type") {
        "" | "RollingUpdate" => {
            causes.extend(rolling_update_daemon_set(
                &spec["updateStrategy"]["rollingUpdate"],
            ));
        }
        "OnDelete" => {}
        _ => causes.push(Cause::not_supported(
            "spec.updateStrategy",
            &spec["updateStrategy"],
            &["RollingUpdate".into(), "OnDelete".into()],
        )),
    }
    causes
}

/// `ValidateRollingUpdateDaemonSet` (absent values default to `maxUnavailable: 1`,
/// `maxSurge: 0`): exactly one of the two is non-zero.
fn rolling_update_daemon_set(ru: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let at = "spec.updateStrategy.rollingUpdate";
    let (one, zero) = (Value::from(1), Value::from(0));
    let max_unavailable = ru
        .get("maxUnavailable")
        .filter(|v| !v.is_null())
        .unwrap_or(&one);
    let max_surge = ru.get("maxSurge").filter(|v| !v.is_null()).unwrap_or(&zero);
    let unavailable_path = format!("{at}.maxUnavailable");
    let surge_path = format!("{at}.maxSurge");
    causes.extend(super::int_or_percent(max_unavailable, &unavailable_path));
    causes.extend(super::int_or_percent(max_surge, &surge_path));
    causes.extend(super::not_more_than_100_percent(
        max_unavailable,
        &unavailable_path,
    ));
    causes.extend(super::not_more_than_100_percent(max_surge, &surge_path));
    let non_zero = |v: &Value| match v {
        Value::String(s) => s.strip_suffix('%').and_then(|d| d.parse::<i64>().ok()) != Some(0),
        other => other.as_i64() != Some(0),
    };
    match (non_zero(max_unavailable), non_zero(max_surge)) {
        (true, true) => causes.push(Cause::new(
            crate::rules::validation::FieldErrorType::Invalid,
            surge_path,
            Some(match max_surge {
                Value::String(s) => format!(
                    "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
                    crate::rules::validation::go_quote(s)
                ),
                other => format!(
                    "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
                    other.as_i64().unwrap_or(0)
                ),
            }),
            "may not be set when maxUnavailable is non-zero",
        )),
        (false, false) => causes.push(Cause::required(
            unavailable_path,
            "cannot be 0 when maxSurge is 0",
        )),
        _ => {}
    }
    causes
}

/// `ValidateStatefulSetUpdate`: only replicas, ordinals, template, update strategy, retention
/// policy and minReadySeconds may change.
fn stateful_set_update(old: &Value, new: &Value) -> Vec<Cause> {
    const MUTABLE: [&str; 6] = [
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    ];
    let strip = |spec: &Value| {
        let mut spec = spec.clone();
        if let Some(m) = spec.as_object_mut() {
            m.retain(|k, v| !MUTABLE.contains(&k.as_str()) && !v.is_null());
        }
        spec
    };
    // `Semantic.DeepEqual` of the specs with the mutable fields set alike: a claim template's
    // `1Gi` and `1024Mi` are the same request.
    let (old_spec, new_spec) = (strip(&old["spec"]), strip(&new["spec"]));
    let same = same_values_at(
        "apps",
        "StatefulSet",
        &["spec"],
        Some(&old_spec),
        Some(&new_spec),
    );
    if !same {
        return vec![Cause::forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        )];
    }
    Vec::new()
}

/// The status rules of the workloads (`ValidateDeploymentStatus` and friends): counts are
/// non-negative and no count exceeds `status.replicas`.
fn status_causes(kind: &str, status: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let counts: &[&str] = match kind {
        "Deployment" => &[
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
            "collisionCount",
        ],
        "ReplicaSet" => &[
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
        ],
        "StatefulSet" => &[
            "replicas",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
            "observedGeneration",
            "collisionCount",
        ],
        _ => &[],
    };
    nonnegative_fields(&mut causes, status, "status", counts);
    let replicas = status["replicas"].as_i64().unwrap_or(0);
    for f in counts.iter().filter(|f| {
        matches!(
            **f,
            "updatedReplicas"
                | "readyReplicas"
                | "availableReplicas"
                | "fullyLabeledReplicas"
                | "currentReplicas"
        )
    }) {
        if let Some(n) = status[*f].as_i64() {
            if n > replicas {
                causes.push(Cause::invalid(
                    format!("status.{f}"),
                    &Value::from(n),
                    "cannot be greater than status.replicas",
                ));
            }
        }
    }
    causes
}

/// The annotation `v1` keeps a DaemonSet's internal `spec.templateGeneration` in: read back
/// into the field on decode (`Convert_v1_DaemonSet_To_apps_DaemonSet`, where a value that is
/// not an `int64` fails the decode) and always written out again
/// (`Convert_apps_DaemonSet_To_v1_DaemonSet`).
pub const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// The DaemonSet strategy's `PrepareForUpdate`: the template generation is the stored one,
/// one more when the main resource's update changes the template (`Semantic.DeepEqual`).
pub(crate) fn daemon_set_template_generation(old: &Value, new: &mut Value, target: Target) {
    let stored = old["metadata"]["annotations"][TEMPLATE_GENERATION]
        .as_str()
        .and_then(|t| t.parse::<i64>().ok())
        .unwrap_or(0);
    let changed =
        target == Target::Main && !same_at("apps", "DaemonSet", &["spec", "template"], old, new);
    set_template_generation(new, if changed { stored + 1 } else { stored });
}

/// Writes a DaemonSet's template generation into its annotation.
pub fn set_template_generation(object: &mut Value, generation: i64) {
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let annotations = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(Default::default()));
    if !annotations.is_object() {
        *annotations = Value::Object(Default::default());
    }
    annotations[TEMPLATE_GENERATION] = Value::String(generation.to_string());
}

#[cfg(test)]
mod tests;
