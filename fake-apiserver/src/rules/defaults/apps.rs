//! Defaults of the `apps/v1` kinds (`pkg/apis/apps/v1/defaults.go`): Deployments, DaemonSets,
//! StatefulSets and ReplicaSets, each with its pod template defaulted.

use serde_json::{json, Map, Value};

use super::{pod_spec, set_default};

/// `SetDefaults_Deployment`: one replica, a 25%/25% rolling update, ten revisions kept, a
/// ten-minute progress deadline.
pub fn deployment(spec: &mut Map<String, Value>) {
    set_default(spec, "replicas", json!(1));
    let strategy = spec.entry("strategy").or_insert_with(|| json!({}));
    if let Some(strategy) = strategy.as_object_mut() {
        set_default(strategy, "type", json!("RollingUpdate"));
        if strategy["type"] == "RollingUpdate" {
            rolling(strategy, json!("25%"), json!("25%"));
        }
    }
    set_default(spec, "revisionHistoryLimit", json!(10));
    set_default(spec, "progressDeadlineSeconds", json!(600));
    template(spec);
}

/// `SetDefaults_DaemonSet`: a rolling update of one node at a time without surge.
pub fn daemon_set(spec: &mut Map<String, Value>) {
    let strategy = spec.entry("updateStrategy").or_insert_with(|| json!({}));
    if let Some(strategy) = strategy.as_object_mut() {
        set_default(strategy, "type", json!("RollingUpdate"));
        if strategy["type"] == "RollingUpdate" {
            rolling(strategy, json!(1), json!(0));
        }
    }
    set_default(spec, "revisionHistoryLimit", json!(10));
    template(spec);
}

/// `SetDefaults_StatefulSet`: ordered pod management, a rolling update from partition 0, claims
/// retained, one replica, ten revisions kept.
pub fn stateful_set(spec: &mut Map<String, Value>) {
    set_default(spec, "podManagementPolicy", json!("OrderedReady"));
    let strategy = spec.entry("updateStrategy").or_insert_with(|| json!({}));
    if let Some(strategy) = strategy.as_object_mut() {
        if strategy.get("type").is_none_or(Value::is_null) {
            strategy.insert("type".into(), json!("RollingUpdate"));
            set_default(strategy, "rollingUpdate", json!({}));
        }
        if strategy["type"] == "RollingUpdate" {
            if let Some(rolling) = strategy
                .get_mut("rollingUpdate")
                .and_then(Value::as_object_mut)
            {
                set_default(rolling, "partition", json!(0));
            }
        }
    }
    let retention = spec
        .entry("persistentVolumeClaimRetentionPolicy")
        .or_insert_with(|| json!({}));
    if let Some(retention) = retention.as_object_mut() {
        set_default(retention, "whenDeleted", json!("Retain"));
        set_default(retention, "whenScaled", json!("Retain"));
    }
    // The claim templates are claims: `SetDefaults_PersistentVolumeClaim` and its spec's
    // defaults, status phase included, as a real server shows them.
    let templates = spec
        .get_mut("volumeClaimTemplates")
        .and_then(Value::as_array_mut);
    for template in templates
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        super::core::persistent_volume_claim(template);
    }
    set_default(spec, "replicas", json!(1));
    set_default(spec, "revisionHistoryLimit", json!(10));
    template(spec);
}

/// `SetDefaults_ReplicaSet`: one replica.
pub fn replica_set(spec: &mut Map<String, Value>) {
    set_default(spec, "replicas", json!(1));
    template(spec);
}

fn rolling(strategy: &mut Map<String, Value>, max_unavailable: Value, max_surge: Value) {
    let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
    if let Some(rolling) = rolling.as_object_mut() {
        set_default(rolling, "maxUnavailable", max_unavailable);
        set_default(rolling, "maxSurge", max_surge);
    }
}

fn template(spec: &mut Map<String, Value>) {
    if let Some(t) = spec.get_mut("template") {
        pod_spec::default_template(t);
    }
}
