//! The node lifecycle controller's `NoSchedule` tainting pass
//! (`pkg/controller/nodelifecycle`, `doNoScheduleTaintingPass`): a Node's taints follow its
//! conditions. `Ready=False` is `node.kubernetes.io/not-ready`, `Ready=Unknown`
//! `node.kubernetes.io/unreachable`, `MemoryPressure`, `DiskPressure`, `PIDPressure` and
//! `NetworkUnavailable` being `True` their `-pressure` / `network-unavailable` taints, and
//! `spec.unschedulable` `node.kubernetes.io/unschedulable`, all `NoSchedule`. Taints of those
//! keys the conditions do not call for go (the `not-ready` taint the `TaintNodesByCondition`
//! admission plugin put on a new Node goes once the Node reports `Ready=True`, or straight away
//! when it reports no `Ready` condition at all); missing ones are added with `timeAdded`. As
//! upstream (`SwapNodeControllerTaint`), additions are one write and removals another, each an
//! update of the Node as read (a concurrent write is a conflict).
//!
//! Not modelled: the health monitoring half (a Node whose heartbeats stop becomes
//! `Ready=Unknown` after the grace period) and the `NoExecute` taints and evictions that
//! follow from it.

use serde_json::{json, Value};

use super::objects::{self, uid_of};
use crate::context::FakeApiServer;
use crate::error::ApiError;
use crate::registry::semantics::UpdateTarget;

/// The taint a condition status calls for (`nodeConditionToTaintKeyStatusMap`).
const CONDITION_TAINTS: &[(&str, &str, &str)] = &[
    ("Ready", "False", "node.kubernetes.io/not-ready"),
    ("Ready", "Unknown", "node.kubernetes.io/unreachable"),
    (
        "MemoryPressure",
        "True",
        "node.kubernetes.io/memory-pressure",
    ),
    ("DiskPressure", "True", "node.kubernetes.io/disk-pressure"),
    (
        "NetworkUnavailable",
        "True",
        "node.kubernetes.io/network-unavailable",
    ),
    ("PIDPressure", "True", "node.kubernetes.io/pid-pressure"),
];

/// The taint of `spec.unschedulable` (`v1.TaintNodeUnschedulable`).
const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// The `NoSchedule` taint keys `node`'s conditions call for, in condition order.
fn wanted(node: &Value) -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|condition| {
            CONDITION_TAINTS
                .iter()
                .find(|(kind, status, _)| {
                    condition["type"] == *kind && condition["status"] == *status
                })
                .map(|(_, _, key)| *key)
        })
        .collect();
    if node["spec"]["unschedulable"].as_bool() == Some(true) {
        keys.push(UNSCHEDULABLE);
    }
    keys
}

/// Whether a taint is one this pass manages: `NoSchedule`, of a condition's key or the
/// unschedulable one (`taintKeyToNodeConditionMap`).
fn managed(taint: &Value) -> bool {
    taint["effect"] == "NoSchedule"
        && taint["key"].as_str().is_some_and(|key| {
            key == UNSCHEDULABLE || CONDITION_TAINTS.iter().any(|(_, _, k)| *k == key)
        })
}

/// The keys to add and the keys to remove (`TaintSetDiff`).
fn diff(node: &Value) -> (Vec<&'static str>, Vec<String>) {
    let present: Vec<&str> = node["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| managed(t))
        .filter_map(|t| t["key"].as_str())
        .collect();
    let wanted = wanted(node);
    let add = wanted
        .iter()
        .filter(|key| !present.contains(key))
        .copied()
        .collect();
    let remove = present
        .iter()
        .filter(|key| !wanted.contains(key))
        .map(|key| key.to_string())
        .collect();
    (add, remove)
}

/// Whether a write left `node` with taints its conditions do not match (what queues it here;
/// upstream queues every Node update and finds nothing to do for most).
pub(crate) fn needs_sync(node: &Value) -> bool {
    let (add, remove) = diff(node);
    !add.is_empty() || !remove.is_empty()
}

/// The tainting pass over one Node.
pub(crate) fn sync(server: &FakeApiServer, name: &str) -> Result<(), ApiError> {
    let Some(nodes) = objects::resource(server, "", "nodes") else {
        return Ok(());
    };
    let Some(node) = objects::get(server, &nodes, "", name) else {
        return Ok(());
    };
    let (add, remove) = diff(&node);
    let uid = uid_of(&node).to_string();
    if !add.is_empty() {
        let now = server.shared.now_string();
        edit_taints(server, &nodes, name, &uid, |taints| {
            for key in &add {
                let taint = json!({"key": key, "effect": "NoSchedule", "timeAdded": now});
                // `AddOrUpdateTaint`: one of the same key and effect is replaced in place.
                match taints
                    .iter_mut()
                    .find(|t| t["key"] == *key && t["effect"] == "NoSchedule")
                {
                    Some(existing) => *existing = taint,
                    None => taints.push(taint),
                }
            }
        })?;
    }
    if !remove.is_empty() {
        edit_taints(server, &nodes, name, &uid, |taints| {
            taints.retain(|t| {
                !(t["effect"] == "NoSchedule"
                    && t["key"]
                        .as_str()
                        .is_some_and(|k| remove.iter().any(|r| r == k)))
            });
        })?;
    }
    Ok(())
}

/// Rewrites the stored Node's taints, if it is still the Node read (same uid) and the edit
/// changes them; an emptied list is left out, as the real client's patch leaves it.
fn edit_taints(
    server: &FakeApiServer,
    nodes: &crate::resource::ResourceInfo,
    name: &str,
    uid: &str,
    edit: impl FnOnce(&mut Vec<Value>),
) -> Result<(), ApiError> {
    let result = objects::update(server, nodes, "", name, UpdateTarget::Main, |node| {
        if uid_of(node) != uid {
            return false;
        }
        let before = node["spec"]["taints"].clone();
        let mut taints = before.as_array().cloned().unwrap_or_default();
        edit(&mut taints);
        let Some(spec) = node["spec"].as_object_mut() else {
            return false;
        };
        if taints.is_empty() {
            spec.remove("taints");
        } else {
            spec.insert("taints".into(), Value::Array(taints));
        }
        node["spec"]["taints"] != before
    });
    match result {
        Err(e) if e.code == 404 => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn node(conditions: Value, taints: Value) -> Value {
        json!({"spec": {"taints": taints}, "status": {"conditions": conditions}})
    }

    #[rstest]
    #[case::ready_clears_not_ready(
        json!([{"type": "Ready", "status": "True"}]),
        json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]),
        vec![], vec!["node.kubernetes.io/not-ready"]
    )]
    #[case::no_conditions_clear_it_too(
        json!([]),
        json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]),
        vec![], vec!["node.kubernetes.io/not-ready"]
    )]
    #[case::not_ready_adds_it(
        json!([{"type": "Ready", "status": "False"}]),
        json!([]),
        vec!["node.kubernetes.io/not-ready"], vec![]
    )]
    #[case::unknown_swaps(
        json!([{"type": "Ready", "status": "Unknown"}, {"type": "DiskPressure", "status": "True"}]),
        json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]),
        vec!["node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure"],
        vec!["node.kubernetes.io/not-ready"]
    )]
    #[case::other_taints_and_effects_are_not_ours(
        json!([{"type": "Ready", "status": "True"}]),
        json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}, {"key": "example.com/gpu", "effect": "NoSchedule"}]),
        vec![], vec![]
    )]
    fn taints_follow_the_conditions(
        #[case] conditions: Value,
        #[case] taints: Value,
        #[case] add: Vec<&str>,
        #[case] remove: Vec<&str>,
    ) {
        let node = node(conditions, taints);
        let (added, removed) = diff(&node);
        assert_eq!(added, add);
        assert_eq!(removed, remove);
        assert_eq!(needs_sync(&node), !add.is_empty() || !remove.is_empty());
    }

    #[test]
    fn unschedulable_is_a_taint() {
        let mut node = node(json!([{"type": "Ready", "status": "True"}]), json!(null));
        node["spec"]["unschedulable"] = json!(true);
        assert_eq!(diff(&node).0, vec![UNSCHEDULABLE]);
    }
}
