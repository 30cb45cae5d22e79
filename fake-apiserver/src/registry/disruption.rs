//! The disruption controller, in-process: it keeps every PodDisruptionBudget's `status` as
//! `pkg/controller/disruption/disruption.go` computes it, so that the eviction subresource
//! ([`crate::http::eviction`]) decides on the numbers a cluster would show.
//!
//! Like the server's other built-in behaviour (namespace termination, CRD serving) it runs
//! synchronously after the writes that can change a budget — a pod, a budget, or a workload whose
//! scale counts — so its status is current at once and runs stay deterministic. The real
//! controller lags behind by an informer round trip; the one lag-dependent answer of the eviction
//! handler (`observedGeneration` behind `generation`) therefore does not occur here unless a
//! budget's status is written by hand.
//!
//! What is computed, per budget: the pods its selector matches in its namespace; the expected
//! count and desired healthy count (`minAvailable` as a number counts the matched pods; a
//! percentage or `maxUnavailable` sums the scale of the pods' controllers); the healthy pods
//! (Ready, not being deleted, not recently approved for eviction); `disruptionsAllowed`; the
//! `DisruptionAllowed` condition. A failure (a pod whose controller cannot be found, a malformed
//! percentage) sets `disruptionsAllowed` to 0 with reason `SyncFailed`, as the controller's
//! fail-safe does. Entries of `disruptedPods` older than the controller's two-minute timeout are
//! dropped at the next sync (the fake has no timer to wake it).

use serde_json::{json, Map, Value};

use crate::context::FakeApiServer;
use crate::registry::semantics::format_time;
use crate::registry::split_api_version;
use crate::rules::selectors::LabelSelector;
use crate::store::{resource_key, Mutation};

/// Looks up a controller's scale: its selector and replicas, `None` when it has no scale.
type ScaleOf<'a> = dyn Fn(&ControllerRef) -> Result<Option<(String, i64)>, String> + 'a;

/// How long an eviction's entry in `disruptedPods` holds the pod out of the healthy count
/// (`DeletionTimeout`).
pub const DELETION_TIMEOUT_SECONDS: i64 = 120;

/// Store key of PodDisruptionBudgets.
const PDB_KEY: &str = "policy/poddisruptionbudgets";

/// The condition type the controller maintains and its reasons (`policy/v1`).
const DISRUPTION_ALLOWED: &str = "DisruptionAllowed";
const SUFFICIENT_PODS: &str = "SufficientPods";
const INSUFFICIENT_PODS: &str = "InsufficientPods";
const SYNC_FAILED: &str = "SyncFailed";

/// Whether a write of this kind can change a budget's status.
pub(crate) fn concerns(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("", "Pod")
            | ("policy", "PodDisruptionBudget")
            | ("", "ReplicationController")
            | ("apps", "ReplicaSet" | "Deployment" | "StatefulSet")
    )
}

/// Brings the status of every budget in `namespace` up to date.
pub(crate) fn sync_namespace(server: &FakeApiServer, namespace: &str) {
    let store = &server.shared.store;
    if store.count(PDB_KEY) == 0 {
        return;
    }
    let budgets = store.snapshot(PDB_KEY, Some(namespace)).items;
    if budgets.is_empty() {
        return;
    }
    let pods: Vec<Value> = store
        .snapshot("/pods", Some(namespace))
        .items
        .iter()
        .filter_map(|(_, bytes)| crate::store::json::from_slice(bytes).ok())
        .collect();
    let now = server.shared.now();
    for ((_, name), bytes) in budgets {
        let Ok(pdb) = crate::store::json::from_slice(&bytes) else {
            continue;
        };
        let status = desired_status(
            &pdb,
            &pods,
            &|r| controller_scale(server, namespace, r),
            now,
        );
        if status == pdb["status"] {
            continue;
        }
        let result = store.mutate(PDB_KEY, namespace, &name, |current| {
            let Some(current) = current else {
                return Err(crate::ApiError::not_found(
                    "policy",
                    "poddisruptionbudgets",
                    &name,
                ));
            };
            let mut next = current.clone();
            next["status"] = status;
            Ok(Mutation::Put(next))
        });
        if let Err(e) = result {
            tracing::debug!(namespace, name, error = %e, "disruption controller: status write failed");
        }
    }
}

/// A controller reference: what the scale of the pod's owner is looked up by.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ControllerRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
}

/// The owner reference with `controller: true`, if any (`metav1.GetControllerOf`).
pub(crate) fn controller_of(object: &Value) -> Option<ControllerRef> {
    object["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"].as_bool() == Some(true))
        .map(|r| ControllerRef {
            api_version: r["apiVersion"].as_str().unwrap_or_default().to_string(),
            kind: r["kind"].as_str().unwrap_or_default().to_string(),
            name: r["name"].as_str().unwrap_or_default().to_string(),
            uid: r["uid"].as_str().unwrap_or_default().to_string(),
        })
}

/// Finds the scale of a pod's controller, as the controller's finders do in turn (replication
/// controllers, a ReplicaSet's Deployment, ReplicaSets, StatefulSets, then any resource with a
/// scale subresource). `Ok(None)`: no controller with that uid; `Err`: the sync fails.
fn controller_scale(
    server: &FakeApiServer,
    namespace: &str,
    reference: &ControllerRef,
) -> Result<Option<(String, i64)>, String> {
    let (group, _) = split_api_version(&reference.api_version);
    let store = &server.shared.store;
    let get = |key: &str, name: &str| store.get_value(key, namespace, name);
    let uid_of = |o: &Value| {
        o["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let replicas = |o: &Value| o["spec"]["replicas"].as_i64().unwrap_or(1);
    let apps = matches!(group, "apps" | "extensions");
    if reference.kind == "ReplicaSet" && apps {
        if let Some(rs) = get("apps/replicasets", &reference.name) {
            if uid_of(&rs) == reference.uid {
                match controller_of(&rs) {
                    Some(owner) if owner.kind == "Deployment" => {
                        let (owner_group, _) = split_api_version(&owner.api_version);
                        if matches!(owner_group, "apps" | "extensions") {
                            if let Some(d) = get("apps/deployments", &owner.name) {
                                if uid_of(&d) == owner.uid {
                                    return Ok(Some((owner.uid, replicas(&d))));
                                }
                            }
                        }
                    }
                    _ => return Ok(Some((reference.uid.clone(), replicas(&rs)))),
                }
            }
        }
    }
    let direct = match (group, reference.kind.as_str()) {
        ("", "ReplicationController") => Some("/replicationcontrollers"),
        ("apps", "StatefulSet") => Some("apps/statefulsets"),
        _ => None,
    };
    if let Some(key) = direct {
        return Ok(get(key, &reference.name)
            .filter(|o| uid_of(o) == reference.uid)
            .map(|o| (reference.uid.clone(), replicas(&o))));
    }
    // Any other kind: through its scale subresource.
    let info = server
        .shared
        .registry
        .lookup_kind(&reference.api_version, &reference.kind)
        .ok_or_else(|| {
            format!(
                "no matches for kind {:?} in version {:?}",
                reference.kind, reference.api_version
            )
        })?;
    let Some(scale) = crate::registry::scale::ScaleSpec::of(&info) else {
        return Err(format!(
            "{} does not implement the scale subresource",
            crate::error::qualified(&info.group, &info.plural)
        ));
    };
    let key = resource_key(&info.group, &info.plural);
    Ok(get(&key, &reference.name)
        .filter(|o| uid_of(o) == reference.uid)
        .map(|o| (reference.uid.clone(), scale.spec_replicas(&o).unwrap_or(0))))
}

/// The status the controller would write for `pdb`, given the pods of its namespace.
pub(crate) fn desired_status(
    pdb: &Value,
    pods: &[Value],
    scale_of: &ScaleOf,
    now: jiff::Timestamp,
) -> Value {
    let old = &pdb["status"];
    let generation = pdb["metadata"]["generation"].as_i64().unwrap_or(0);
    let computed = selected_pods(pdb, pods).and_then(|selected| {
        let (expected, desired) = expected_and_desired(pdb, &selected, scale_of)?;
        Ok((selected, expected, desired))
    });
    let (selected, expected, desired) = match computed {
        Ok(found) => found,
        Err(message) => return fail_safe(old, &message, now),
    };
    let disrupted = disrupted_pods(old, &selected, now);
    let healthy = selected
        .iter()
        .filter(|p| !is_deleting(p))
        .filter(|p| !disrupted.contains_key(name_of(p)))
        .filter(|p| is_ready(p))
        .count() as i64;
    let mut allowed = healthy - desired;
    if expected <= 0 || allowed <= 0 {
        allowed = 0;
    }
    let mut status = Map::new();
    status.insert("observedGeneration".into(), json!(generation));
    if !disrupted.is_empty() {
        status.insert("disruptedPods".into(), Value::Object(disrupted));
    }
    status.insert("disruptionsAllowed".into(), json!(allowed));
    status.insert("currentHealthy".into(), json!(healthy));
    status.insert("desiredHealthy".into(), json!(desired));
    status.insert("expectedPods".into(), json!(expected));
    let conditions = old["conditions"].as_array().cloned().unwrap_or_default();
    status.insert(
        "conditions".into(),
        Value::Array(allowed_condition(conditions, allowed, generation, now)),
    );
    if generation == 0 {
        status.remove("observedGeneration");
    }
    Value::Object(status)
}

/// The pods the budget's selector matches; a malformed selector fails the sync.
fn selected_pods<'a>(pdb: &Value, pods: &'a [Value]) -> Result<Vec<&'a Value>, String> {
    let selector = LabelSelector::from_label_selector_json(&pdb["spec"]["selector"])
        .map_err(|e| e.to_string())?;
    Ok(pods
        .iter()
        .filter(|p| selector.matches(p["metadata"]["labels"].as_object()))
        .collect())
}

/// `(expectedPods, desiredHealthy)` (`getExpectedPodCount`).
fn expected_and_desired(
    pdb: &Value,
    selected: &[&Value],
    scale_of: &ScaleOf,
) -> Result<(i64, i64), String> {
    let spec = &pdb["spec"];
    if let Some(max_unavailable) = spec.get("maxUnavailable").filter(|v| !v.is_null()) {
        let expected = expected_scale(selected, scale_of)?;
        let unavailable = scaled_value(max_unavailable, expected)?;
        return Ok((expected, (expected - unavailable).max(0)));
    }
    match spec.get("minAvailable") {
        Some(Value::Number(n)) => Ok((selected.len() as i64, n.as_i64().unwrap_or(0))),
        Some(percent @ Value::String(_)) => {
            let expected = expected_scale(selected, scale_of)?;
            Ok((expected, scaled_value(percent, expected)?))
        }
        _ => Ok((0, 0)),
    }
}

/// The sum of the scales of the selected pods' controllers (`getExpectedScale`); pods without a
/// controller are left out.
fn expected_scale(selected: &[&Value], scale_of: &ScaleOf) -> Result<i64, String> {
    let mut scales: Vec<(String, i64)> = Vec::new();
    for pod in selected {
        let Some(reference) = controller_of(pod) else {
            continue;
        };
        if scales.iter().any(|(uid, _)| *uid == reference.uid) {
            continue;
        }
        match scale_of(&reference)? {
            Some(found) => scales.push(found),
            None => return Err(format!("found no controllers for pod {:?}", name_of(pod))),
        }
    }
    Ok(scales.iter().map(|(_, n)| n).sum())
}

/// `intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)`.
fn scaled_value(value: &Value, total: i64) -> Result<i64, String> {
    match value {
        Value::Number(n) => Ok(n.as_i64().unwrap_or(0)),
        Value::String(s) => {
            let Some(digits) = s.strip_suffix('%') else {
                return Err(
                    "invalid value for IntOrString: invalid type: string is not a percentage"
                        .to_string(),
                );
            };
            let percent: i64 = digits
                .parse()
                .map_err(|e| format!("invalid value {s:?}: {e}"))?;
            Ok((percent * total + 99).div_euclid(100))
        }
        _ => Err("invalid value for IntOrString: invalid type: neither int nor string".into()),
    }
}

/// The `disruptedPods` entries that still hold: pods selected, not yet being deleted, approved
/// less than [`DELETION_TIMEOUT_SECONDS`] ago.
fn disrupted_pods(old: &Value, selected: &[&Value], now: jiff::Timestamp) -> Map<String, Value> {
    let mut kept = Map::new();
    let Some(entries) = old["disruptedPods"].as_object() else {
        return kept;
    };
    for pod in selected.iter().filter(|p| !is_deleting(p)) {
        let name = name_of(pod);
        let Some(at) = entries.get(name) else {
            continue;
        };
        let expires = at
            .as_str()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .and_then(|t| {
                t.checked_add(jiff::SignedDuration::from_secs(DELETION_TIMEOUT_SECONDS))
                    .ok()
            });
        if expires.is_some_and(|e| e >= now) {
            kept.insert(name.to_string(), at.clone());
        }
    }
    kept
}

/// Sets the `DisruptionAllowed` condition (`UpdateDisruptionAllowedCondition`).
pub(crate) fn allowed_condition(
    conditions: Vec<Value>,
    allowed: i64,
    observed_generation: i64,
    now: jiff::Timestamp,
) -> Vec<Value> {
    let (status, reason) = if allowed > 0 {
        ("True", SUFFICIENT_PODS)
    } else {
        ("False", INSUFFICIENT_PODS)
    };
    set_condition(conditions, status, reason, "", observed_generation, now)
}

/// `meta.SetStatusCondition` for the `DisruptionAllowed` condition: the transition time moves
/// only when the status changes.
fn set_condition(
    mut conditions: Vec<Value>,
    status: &str,
    reason: &str,
    message: &str,
    observed_generation: i64,
    now: jiff::Timestamp,
) -> Vec<Value> {
    let mut condition = json!({
        "type": DISRUPTION_ALLOWED,
        "status": status,
        "lastTransitionTime": format_time(now),
        "reason": reason,
        "message": message,
    });
    if observed_generation != 0 {
        condition["observedGeneration"] = json!(observed_generation);
    }
    match conditions
        .iter_mut()
        .find(|c| c["type"] == DISRUPTION_ALLOWED)
    {
        Some(existing) => {
            if existing["status"] == status {
                condition["lastTransitionTime"] = existing["lastTransitionTime"].clone();
            }
            *existing = condition;
        }
        None => conditions.push(condition),
    }
    conditions
}

/// The controller's fail-safe: no disruption allowed, the reason why in the condition.
fn fail_safe(old: &Value, message: &str, now: jiff::Timestamp) -> Value {
    let mut status = old.as_object().cloned().unwrap_or_default();
    status.insert("disruptionsAllowed".into(), json!(0));
    for counter in ["currentHealthy", "desiredHealthy", "expectedPods"] {
        status.entry(counter).or_insert(json!(0));
    }
    let observed = old["observedGeneration"].as_i64().unwrap_or(0);
    let conditions = old["conditions"].as_array().cloned().unwrap_or_default();
    status.insert(
        "conditions".into(),
        Value::Array(set_condition(
            conditions,
            "False",
            SYNC_FAILED,
            message,
            observed,
            now,
        )),
    );
    Value::Object(status)
}

fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn is_deleting(pod: &Value) -> bool {
    pod["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// `podutil.IsPodReady`: the `Ready` condition is `True`.
pub(crate) fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn now() -> jiff::Timestamp {
        "2026-01-01T00:10:00Z".parse().unwrap()
    }

    fn pod(name: &str, ready: bool, owner: Option<&str>) -> Value {
        let mut pod = json!({
            "metadata": {"name": name, "labels": {"app": "web"}},
            "status": {"conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}]}
        });
        if let Some(uid) = owner {
            pod["metadata"]["ownerReferences"] = json!([{
                "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": uid,
                "controller": true
            }]);
        }
        pod
    }

    fn pdb(spec: Value) -> Value {
        let mut spec = spec;
        spec["selector"] = json!({"matchLabels": {"app": "web"}});
        json!({"metadata": {"name": "budget", "generation": 1}, "spec": spec})
    }

    fn no_controllers(_: &ControllerRef) -> Result<Option<(String, i64)>, String> {
        Ok(None)
    }

    fn rs_of_three(r: &ControllerRef) -> Result<Option<(String, i64)>, String> {
        Ok(Some((r.uid.clone(), 3)))
    }

    #[rstest]
    #[case::min_available_number(json!({"minAvailable": 2}), 3, 2, 3, 1)]
    #[case::min_available_all(json!({"minAvailable": 3}), 3, 3, 3, 0)]
    #[case::min_available_percent(json!({"minAvailable": "50%"}), 3, 2, 3, 1)]
    #[case::max_unavailable(json!({"maxUnavailable": 1}), 3, 2, 3, 1)]
    #[case::max_unavailable_percent(json!({"maxUnavailable": "34%"}), 3, 1, 3, 2)]
    #[case::max_unavailable_zero(json!({"maxUnavailable": 0}), 3, 3, 3, 0)]
    fn budgets_count_as_the_controller_does(
        #[case] spec: Value,
        #[case] healthy: i64,
        #[case] desired: i64,
        #[case] expected: i64,
        #[case] allowed: i64,
    ) {
        let pods: Vec<Value> = ["a", "b", "c"]
            .iter()
            .map(|n| pod(n, true, Some("rs-uid")))
            .collect();
        let status = desired_status(&pdb(spec), &pods, &rs_of_three, now());
        assert_eq!(status["currentHealthy"], healthy, "{status}");
        assert_eq!(status["desiredHealthy"], desired, "{status}");
        assert_eq!(status["expectedPods"], expected, "{status}");
        assert_eq!(status["disruptionsAllowed"], allowed, "{status}");
        assert_eq!(status["observedGeneration"], 1);
        let condition = &status["conditions"][0];
        assert_eq!(condition["type"], "DisruptionAllowed");
        assert_eq!(
            condition["reason"],
            if allowed > 0 {
                "SufficientPods"
            } else {
                "InsufficientPods"
            }
        );
    }

    #[test]
    fn unready_and_deleting_pods_are_not_healthy() {
        let mut deleting = pod("c", true, None);
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        let pods = vec![pod("a", true, None), pod("b", false, None), deleting];
        let status = desired_status(
            &pdb(json!({"minAvailable": 1})),
            &pods,
            &no_controllers,
            now(),
        );
        assert_eq!(status["currentHealthy"], 1);
        assert_eq!(status["expectedPods"], 3);
        assert_eq!(status["disruptionsAllowed"], 0);
    }

    #[test]
    fn recent_evictions_hold_pods_out_until_the_timeout() {
        let pods = vec![pod("a", true, None), pod("b", true, None)];
        let mut budget = pdb(json!({"minAvailable": 1}));
        budget["status"] = json!({"disruptedPods": {
            "a": "2026-01-01T00:09:00Z",
            "b": "2026-01-01T00:07:00Z"
        }});
        let status = desired_status(&budget, &pods, &no_controllers, now());
        assert_eq!(
            status["disruptedPods"],
            json!({"a": "2026-01-01T00:09:00Z"})
        );
        assert_eq!(status["currentHealthy"], 1);
        assert_eq!(status["disruptionsAllowed"], 0);
    }

    #[test]
    fn a_pod_without_a_found_controller_fails_safe() {
        let pods = vec![pod("a", true, Some("gone"))];
        let status = desired_status(
            &pdb(json!({"maxUnavailable": 1})),
            &pods,
            &no_controllers,
            now(),
        );
        assert_eq!(status["disruptionsAllowed"], 0);
        assert_eq!(status["conditions"][0]["reason"], "SyncFailed");
        assert_eq!(
            status["conditions"][0]["message"],
            "found no controllers for pod \"a\""
        );
    }

    #[test]
    fn unmanaged_pods_do_not_count_towards_the_scale() {
        let pods = vec![pod("a", true, None), pod("b", true, Some("rs-uid"))];
        let status = desired_status(
            &pdb(json!({"maxUnavailable": 1})),
            &pods,
            &rs_of_three,
            now(),
        );
        assert_eq!(status["expectedPods"], 3);
        assert_eq!(status["desiredHealthy"], 2);
        assert_eq!(status["disruptionsAllowed"], 0);
    }

    #[test]
    fn the_transition_time_moves_only_when_the_status_does() {
        let earlier: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let first = allowed_condition(Vec::new(), 1, 1, earlier);
        let same = allowed_condition(first.clone(), 2, 1, now());
        assert_eq!(same[0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
        let flipped = allowed_condition(same, 0, 1, now());
        assert_eq!(flipped[0]["lastTransitionTime"], "2026-01-01T00:10:00Z");
        assert_eq!(flipped[0]["status"], "False");
    }

    #[test]
    fn a_null_selector_matches_nothing() {
        let mut budget = pdb(json!({"minAvailable": 1}));
        budget["spec"]["selector"] = Value::Null;
        let status = desired_status(&budget, &[pod("a", true, None)], &no_controllers, now());
        assert_eq!(status["expectedPods"], 0);
        assert_eq!(status["currentHealthy"], 0);
    }
}
