//! Defaults of the `batch/v1` kinds (`pkg/apis/batch/v1/defaults.go`): Jobs and CronJobs.

use serde_json::{json, Map, Value};

use super::{pod_spec, set_default};

/// The backoff limit of a Job that counts failures per index (`math.MaxInt32`).
const MAX_INT32: i64 = i32::MAX as i64;

/// `SetDefaults_Job`. Returns the template labels the Job's own labels default to (when it has
/// none), for the caller to set on the metadata.
pub fn job(spec: &mut Map<String, Value>) -> Option<Value> {
    let unset = |spec: &Map<String, Value>, k: &str| spec.get(k).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
        spec.insert("parallelism".into(), json!(1));
    }
    set_default(spec, "parallelism", json!(1));
    let backoff = if unset(spec, "backoffLimitPerIndex") {
        6
    } else {
        MAX_INT32
    };
    set_default(spec, "backoffLimit", json!(backoff));
    set_default(spec, "completionMode", json!("NonIndexed"));
    set_default(spec, "suspend", json!(false));
    let has_failure_policy = !unset(spec, "podFailurePolicy");
    if let Some(rules) = spec
        .get_mut("podFailurePolicy")
        .and_then(|p| p.get_mut("rules"))
        .and_then(Value::as_array_mut)
    {
        for rule in rules {
            if let Some(patterns) = rule
                .get_mut("onPodConditions")
                .and_then(Value::as_array_mut)
            {
                for p in patterns.iter_mut().filter_map(Value::as_object_mut) {
                    if p.get("status")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                    {
                        p.insert("status".into(), json!("True"));
                    }
                }
            }
        }
    }
    let replacement = if has_failure_policy {
        "Failed"
    } else {
        "TerminatingOrFailed"
    };
    set_default(spec, "podReplacementPolicy", json!(replacement));
    set_default(spec, "manualSelector", json!(false));
    let labels = spec
        .get("template")
        .and_then(|t| t.pointer("/metadata/labels"))
        .filter(|l| l.is_object())
        .cloned();
    if let Some(t) = spec.get_mut("template") {
        pod_spec::default_template(t);
    }
    labels
}

/// The Job strategy on create: unless the selector is manual, the template is labelled with the
/// Job's name and uid (legacy and prefixed keys) and the selector matches the uid.
pub fn generate_selector(job: &mut Value) {
    if job["spec"]["manualSelector"] == json!(true) {
        return;
    }
    let name = job["metadata"]["name"].clone();
    let uid = job["metadata"]["uid"].clone();
    let Some(spec) = job.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let template = spec.entry("template").or_insert_with(|| json!({}));
    if !template["metadata"].is_object() {
        template["metadata"] = json!({});
    }
    if !template["metadata"]["labels"].is_object() {
        template["metadata"]["labels"] = json!({});
    }
    if let Some(labels) = template["metadata"]["labels"].as_object_mut() {
        for key in ["job-name", "batch.kubernetes.io/job-name"] {
            labels.entry(key).or_insert_with(|| name.clone());
        }
        for key in ["controller-uid", "batch.kubernetes.io/controller-uid"] {
            labels.entry(key).or_insert_with(|| uid.clone());
        }
    }
    let selector = spec.entry("selector").or_insert_with(|| json!({}));
    if !selector["matchLabels"].is_object() {
        selector["matchLabels"] = json!({});
    }
    if let Some(m) = selector["matchLabels"].as_object_mut() {
        m.entry("batch.kubernetes.io/controller-uid")
            .or_insert_with(|| uid.clone());
    }
}

/// `SetDefaults_CronJob`: concurrent runs allowed, not suspended, three successful and one
/// failed Job kept; the Job template's pod template defaulted.
pub fn cron_job(spec: &mut Map<String, Value>) {
    set_default(spec, "concurrencyPolicy", json!("Allow"));
    set_default(spec, "suspend", json!(false));
    set_default(spec, "successfulJobsHistoryLimit", json!(3));
    set_default(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(t) = spec
        .get_mut("jobTemplate")
        .and_then(|j| j.pointer_mut("/spec/template"))
    {
        pod_spec::default_template(t);
    }
}
