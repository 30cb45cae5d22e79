//! The status conditions the namespace controller keeps on a terminating namespace
//! (`status_condition_utils.go`): five condition types, each either a failure with its message
//! or the "all is well" variant, in a fixed order; a condition's transition time moves only when
//! its status does.

use serde_json::{json, Value};

/// The condition types, in the order the controller adds them.
pub const CONDITION_TYPES: [&str; 5] = [
    "NamespaceDeletionDiscoveryFailure",
    "NamespaceDeletionGroupVersionParsingFailure",
    "NamespaceDeletionContentFailure",
    "NamespaceContentRemaining",
    "NamespaceFinalizersRemaining",
];

/// The reason and message of a condition type when nothing is wrong.
fn ok_variant(condition_type: &str) -> (&'static str, &'static str) {
    match condition_type {
        "NamespaceDeletionDiscoveryFailure" => (
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        "NamespaceDeletionGroupVersionParsingFailure" => (
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
        "NamespaceDeletionContentFailure" => (
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization",
        ),
        _ => ("ContentRemoved", "All content successfully removed"),
    }
}

/// What one pass of content deletion found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentReport {
    /// `(resource.group, count)` of the kinds with objects left.
    pub remaining: Vec<(String, usize)>,
    /// `(finalizer, count)` of the finalizers on the objects left.
    pub finalizers: Vec<(String, usize)>,
    /// Errors deleting content, one per resource.
    pub errors: Vec<String>,
}

/// A failing condition: `(type, reason, message)`.
type Failure = (&'static str, &'static str, String);

fn failures(report: &ContentReport) -> Vec<Failure> {
    let mut out = Vec::new();
    if !report.errors.is_empty() {
        let mut messages = report.errors.clone();
        messages.sort();
        out.push((
            "NamespaceDeletionContentFailure",
            "ContentDeletionFailed",
            format!(
                "Failed to delete all resource types, {} remaining: {}",
                messages.len(),
                messages.join(", ")
            ),
        ));
    }
    if !report.remaining.is_empty() {
        let mut parts: Vec<String> = report
            .remaining
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(resource, n)| format!("{resource} has {n} resource instances"))
            .collect();
        parts.sort();
        out.push((
            "NamespaceContentRemaining",
            "SomeResourcesRemain",
            format!("Some resources are remaining: {}", parts.join(", ")),
        ));
    }
    if !report.finalizers.is_empty() {
        let mut parts: Vec<String> = report
            .finalizers
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(finalizer, n)| format!("{finalizer} in {n} resource instances"))
            .collect();
        parts.sort();
        out.push((
            "NamespaceFinalizersRemaining",
            "SomeFinalizersRemain",
            format!(
                "Some content in the namespace has finalizers remaining: {}",
                parts.join(", ")
            ),
        ));
    }
    out
}

/// Brings `status.conditions` of a namespace up to date with a report (`updateConditions`);
/// returns whether anything changed.
pub fn update(namespace: &mut Value, report: &ContentReport, now: &str) -> bool {
    let failing = failures(report);
    let mut conditions: Vec<Value> = namespace["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut changed = false;
    for condition_type in CONDITION_TYPES {
        let (status, reason, message) = match failing.iter().find(|f| f.0 == condition_type) {
            Some((_, reason, message)) => ("True", *reason, message.clone()),
            None => {
                let (reason, message) = ok_variant(condition_type);
                ("False", reason, message.to_string())
            }
        };
        match conditions.iter_mut().find(|c| c["type"] == condition_type) {
            None => {
                conditions.push(json!({
                    "type": condition_type,
                    "status": status,
                    "lastTransitionTime": now,
                    "reason": reason,
                    "message": message,
                }));
                changed = true;
            }
            Some(old) => {
                if old["status"] != status || old["reason"] != reason || old["message"] != message {
                    if old["status"] != status {
                        old["lastTransitionTime"] = json!(now);
                    }
                    old["status"] = json!(status);
                    old["reason"] = json!(reason);
                    old["message"] = json!(message);
                    changed = true;
                }
            }
        }
    }
    if changed {
        namespace["status"]["conditions"] = Value::Array(conditions);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_condition_is_set_with_its_ok_variant() {
        let mut ns = json!({"status": {"phase": "Terminating"}});
        assert!(update(&mut ns, &ContentReport::default(), "T0"));
        let conditions = ns["status"]["conditions"].as_array().unwrap();
        let types: Vec<&str> = conditions
            .iter()
            .map(|c| c["type"].as_str().unwrap())
            .collect();
        assert_eq!(types, CONDITION_TYPES);
        assert_eq!(conditions[3]["status"], "False");
        assert_eq!(conditions[3]["reason"], "ContentRemoved");
        assert!(!update(&mut ns, &ContentReport::default(), "T1"));
    }

    #[test]
    fn remaining_content_and_finalizers_are_named_and_sorted() {
        let mut ns = json!({"status": {"phase": "Terminating"}});
        update(&mut ns, &ContentReport::default(), "T0");
        let report = ContentReport {
            remaining: vec![("pods.".into(), 2), ("configmaps.".into(), 1)],
            finalizers: vec![("example.com/hold".into(), 3)],
            errors: vec![],
        };
        assert!(update(&mut ns, &report, "T1"));
        let c = &ns["status"]["conditions"];
        assert_eq!(
            c[3]["message"],
            "Some resources are remaining: configmaps. has 1 resource instances, pods. has 2 resource instances"
        );
        assert_eq!(c[3]["reason"], "SomeResourcesRemain");
        assert_eq!(c[3]["lastTransitionTime"], "T1");
        assert_eq!(
            c[4]["message"],
            "Some content in the namespace has finalizers remaining: example.com/hold in 3 resource instances"
        );
        assert_eq!(c[4]["reason"], "SomeFinalizersRemain");
        // Unchanged conditions keep their time.
        assert_eq!(c[0]["lastTransitionTime"], "T0");
    }
}
