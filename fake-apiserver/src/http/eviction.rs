//! The `pods/eviction` subresource (`pkg/registry/core/pod/storage/eviction.go`): a pod is
//! deleted with the eviction's delete options when no PodDisruptionBudget stands in the way, or
//! the eviction is refused with `429 TooManyRequests` and the real message when its budget allows
//! no disruption.
//!
//! The order of the real handler is kept: a pod that is terminal, pending or already being
//! deleted is deleted without looking at budgets; more than one budget is a `Failure` status; an
//! unready pod may go without using the budget (`unhealthyPodEvictionPolicy`); otherwise the
//! budget's `disruptionsAllowed` is checked and decremented, and the pod recorded in
//! `disruptedPods`, before the delete. The pod gets the `DisruptionTarget` condition first. The
//! budget's status itself is kept by [`crate::registry::disruption`].

use serde_json::{json, Value};

use crate::context::FakeApiServer;
use crate::error::{ApiError, StatusCause};
use crate::http::handlers::{after_write, delete_object};
use crate::registry::semantics::{format_time, DeleteOptions};
use crate::resource::ResourceInfo;
use crate::rules::selectors::LabelSelector;
use crate::store::{resource_key, resource_version_of, Mutation};

/// How many evictions may wait in a budget's `disruptedPods` before the handler refuses more.
const MAX_DISRUPTED_POD_SIZE: usize = 2000;

/// How often a conflicting write is retried (`EvictionsRetry.Steps`).
const RETRIES: usize = 20;

/// What the handler decided to tell the client: a `Status` (answered with `201 Created`).
pub(crate) type EvictionStatus = Value;

/// Evicts `namespace/name` as the eviction object `eviction` asks. `query_dry_run` is the
/// request's `dryRun=All`.
pub(crate) fn evict(
    server: &FakeApiServer,
    pods: &ResourceInfo,
    namespace: &str,
    name: &str,
    eviction: &Value,
    query_dry_run: bool,
) -> Result<EvictionStatus, ApiError> {
    check_type(eviction)?;
    if eviction["metadata"]["name"].as_str().unwrap_or_default() != name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let (options, dry_run) = delete_options(eviction, query_dry_run)?;
    let original_rv = options.precondition_resource_version.clone();

    // Pods that already caused their disruption (or never ran) go without a budget check.
    let mut pod = None;
    for attempt in 0..RETRIES {
        let current = server
            .shared
            .store
            .get_value("/pods", namespace, name)
            .ok_or_else(|| ApiError::not_found("", "pods", name))?;
        if !can_ignore_budget(&current) {
            pod = Some(current);
            break;
        }
        let mut options = options.clone();
        if enforces_resource_version(&current) && original_rv.is_none() {
            options.precondition_resource_version = Some(resource_version_of(&current));
        }
        match mark_and_delete(server, pods, namespace, name, options, dry_run) {
            Ok(()) => return Ok(success()),
            Err(e) if e.code == 409 && original_rv.is_none() && attempt + 1 < RETRIES => {}
            Err(e) => return Err(e),
        }
    }
    let Some(pod) = pod else {
        return Err(ApiError::new(
            504,
            "Timeout",
            format!("couldn't delete pod {name:?} due to conflicts"),
        ));
    };

    let budgets = budgets_of(server, namespace, &pod);
    if budgets.len() > 1 {
        return Ok(json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            "code": 500
        }));
    }
    let mut bypass_budget = false;
    let mut budget_name = String::new();
    if let Some(budget) = budgets.first() {
        budget_name = name_of(budget).to_string();
        let status = &budget["status"];
        let current_healthy = status["currentHealthy"].as_i64().unwrap_or(0);
        let desired_healthy = status["desiredHealthy"].as_i64().unwrap_or(0);
        if !crate::registry::disruption::is_ready(&pod) {
            let always_allow = budget["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow";
            if always_allow || (current_healthy >= desired_healthy && desired_healthy > 0) {
                // An unready pod does not count as healthy: it may go without using the budget.
                bypass_budget = true;
            }
        }
        if !bypass_budget {
            check_and_decrement(server, namespace, &budget_name, name, dry_run)?;
        }
    }

    let mut options = options;
    if bypass_budget {
        options.precondition_resource_version = Some(resource_version_of(&pod));
    }
    match mark_and_delete(server, pods, namespace, name, options, dry_run) {
        Ok(()) => Ok(success()),
        Err(e) if e.code == 409 && bypass_budget && original_rv.is_none() => {
            Err(still_processing(&budget_name))
        }
        Err(e) => Err(e),
    }
}

/// The answer to an eviction that went through.
fn success() -> EvictionStatus {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
}

/// The body must be an `Eviction` of `policy/v1` or `policy/v1beta1`; a body without `kind`
/// and `apiVersion` is taken as one (the decoder defaults them from the subresource, as kube-rs
/// relies on).
fn check_type(eviction: &Value) -> Result<(), ApiError> {
    let kind = eviction["kind"].as_str().unwrap_or("Eviction");
    let api_version = eviction["apiVersion"].as_str().unwrap_or("policy/v1");
    if kind != "Eviction" || !matches!(api_version, "policy/v1" | "policy/v1beta1") {
        return Err(ApiError::bad_request(format!(
            "no kind \"{kind}\" is registered for version \"{api_version}\" in the eviction subresource (it accepts policy/v1 and policy/v1beta1 Eviction)"
        )));
    }
    Ok(())
}

/// The eviction's delete options and whether it is a dry run (`propagateDryRun`).
fn delete_options(
    eviction: &Value,
    query_dry_run: bool,
) -> Result<(DeleteOptions, bool), ApiError> {
    let body = &eviction["deleteOptions"];
    let options = if body.is_object() {
        let bytes = serde_json::to_vec(body).map_err(|e| ApiError::internal(e.to_string()))?;
        DeleteOptions::from_body(&bytes)?
    } else {
        DeleteOptions::default()
    };
    let body_dry_run: Vec<&str> = options.dry_run.iter().map(String::as_str).collect();
    let query: Vec<&str> = if query_dry_run {
        vec!["All"]
    } else {
        Vec::new()
    };
    if !body_dry_run.is_empty() && !query.is_empty() && body_dry_run != query {
        return Err(ApiError::plain_500(format!(
            "Non-matching dry-run options in request and content: [{}] and [{}]",
            query.join(" "),
            body_dry_run.join(" ")
        )));
    }
    let mut options = options;
    if query_dry_run && options.dry_run.is_empty() {
        options.dry_run = vec![crate::rules::options::DRY_RUN_ALL.to_string()];
    }
    // Any value makes the eviction a dry run (`dryrun.IsDryRun`); the pod's delete then
    // refuses values other than `All`.
    let dry_run = options.is_dry_run();
    Ok((options, dry_run))
}

/// A pod that is terminal, pending or already being deleted (`canIgnorePDB`).
fn can_ignore_budget(pod: &Value) -> bool {
    matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed" | "Pending")
    ) || is_deleting(pod)
}

/// Whether the delete of a budget-free pod still pins the pod's resourceVersion (every pod but
/// terminal and deleting ones: a pending pod may turn ready meanwhile).
fn enforces_resource_version(pod: &Value) -> bool {
    !(matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    ) || is_deleting(pod))
}

/// The budgets of the pod's namespace whose selector matches it; an empty or malformed selector
/// matches nothing here (`getPodDisruptionBudgets`).
fn budgets_of(server: &FakeApiServer, namespace: &str, pod: &Value) -> Vec<Value> {
    server
        .shared
        .store
        .snapshot(
            &resource_key("policy", "poddisruptionbudgets"),
            Some(namespace),
        )
        .items
        .iter()
        .filter_map(|(_, bytes)| crate::store::json::from_slice(bytes).ok())
        .filter(|budget| {
            match LabelSelector::from_label_selector_json(&budget["spec"]["selector"]) {
                Ok(selector) => {
                    !selector.is_empty() && selector.matches(pod["metadata"]["labels"].as_object())
                }
                Err(_) => false,
            }
        })
        .collect()
}

/// Checks that the budget allows a disruption and uses one up (`checkAndDecrement`); the budget
/// is re-read and the check retried when its write conflicts.
fn check_and_decrement(
    server: &FakeApiServer,
    namespace: &str,
    budget_name: &str,
    pod_name: &str,
    dry_run: bool,
) -> Result<(), ApiError> {
    let key = resource_key("policy", "poddisruptionbudgets");
    let now = server.shared.now();
    let outcome = server.shared.store.mutate(&key, namespace, budget_name, |current| {
        let budget =
            current.ok_or_else(|| ApiError::not_found("policy", "poddisruptionbudgets", budget_name))?;
        let status = &budget["status"];
        let generation = budget["metadata"]["generation"].as_i64().unwrap_or(0);
        let observed = status["observedGeneration"].as_i64().unwrap_or(0);
        if observed < generation {
            return Err(still_processing(budget_name));
        }
        let allowed = status["disruptionsAllowed"].as_i64().unwrap_or(0);
        if allowed < 0 {
            return Err(forbidden(budget_name, "pdb disruptions allowed is negative"));
        }
        let disrupted = status["disruptedPods"].as_object().map_or(0, |m| m.len());
        if disrupted > MAX_DISRUPTED_POD_SIZE {
            return Err(forbidden(
                budget_name,
                "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            ));
        }
        if allowed == 0 {
            return Err(too_many_requests(
                0,
                format!(
                    "The disruption budget {budget_name} needs {} healthy pods and has {} currently",
                    status["desiredHealthy"].as_i64().unwrap_or(0),
                    status["currentHealthy"].as_i64().unwrap_or(0)
                ),
            ));
        }
        if dry_run {
            return Ok(Mutation::Unchanged(budget.clone()));
        }
        let mut next = budget.clone();
        next["status"]["disruptionsAllowed"] = json!(allowed - 1);
        if allowed - 1 == 0 {
            let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
            next["status"]["conditions"] = Value::Array(crate::registry::disruption::allowed_condition(
                conditions, 0, observed, now,
            ));
        }
        if !next["status"]["disruptedPods"].is_object() {
            next["status"]["disruptedPods"] = json!({});
        }
        next["status"]["disruptedPods"][pod_name] = json!(format_time(now));
        Ok(Mutation::Put(next))
    })?;
    if !dry_run {
        if let Some(info) = server
            .shared
            .registry
            .lookup_resource("policy", "poddisruptionbudgets")
        {
            after_write(server, &info, &outcome.object, outcome.event);
        }
    }
    Ok(())
}

/// Adds the `DisruptionTarget` condition to the pod (a status write, checked against the delete's
/// preconditions), then deletes it (`addConditionAndDeletePod`). A dry run only checks.
fn mark_and_delete(
    server: &FakeApiServer,
    pods: &ResourceInfo,
    namespace: &str,
    name: &str,
    mut options: DeleteOptions,
    dry_run: bool,
) -> Result<(), ApiError> {
    let now = format_time(server.shared.now());
    if dry_run {
        // The delete's own checks (`BeforeDelete`) run before anything is previewed.
        crate::registry::gc_policy::validate(&options)?;
        let decide = |current: Option<&Value>| {
            let current = current.ok_or_else(|| ApiError::not_found("", "pods", name))?;
            Ok(crate::registry::semantics::decide_delete(
                pods,
                current.clone(),
                &options,
                server.shared.now(),
            )?
            .mutation)
        };
        server
            .shared
            .store
            .preview("/pods", namespace, name, decide)?;
        return Ok(());
    }
    let marked = server
        .shared
        .store
        .mutate("/pods", namespace, name, |current| {
            let current = current.ok_or_else(|| ApiError::not_found("", "pods", name))?;
            check_preconditions(current, &options)?;
            let mut next = current.clone();
            add_disruption_condition(&mut next, &now);
            Ok(Mutation::Put(next))
        })?;
    after_write(server, pods, &marked.object, marked.event);
    if options.precondition_resource_version.is_some() {
        // The condition moved the resourceVersion: the delete pins the new one.
        options.precondition_resource_version = Some(resource_version_of(&marked.object));
    }
    // The delete checks its options after the condition is written, as `BeforeDelete` does.
    crate::registry::gc_policy::validate(&options)?;
    delete_object(server, pods, namespace, name, &options)?;
    Ok(())
}

/// The preconditions of the delete, checked before the condition is written.
fn check_preconditions(pod: &Value, options: &DeleteOptions) -> Result<(), ApiError> {
    let name = name_of(pod);
    if let Some(uid) = options
        .precondition_uid
        .as_deref()
        .filter(|u| !u.is_empty())
    {
        let actual = pod["metadata"]["uid"].as_str().unwrap_or_default();
        if uid != actual {
            return Err(ApiError::conflict("", "Pod", name, &format!(
                "the UID in the precondition ({uid}) does not match the UID in record ({actual}). The object might have been deleted and then recreated"
            )));
        }
    }
    if let Some(rv) = options
        .precondition_resource_version
        .as_deref()
        .filter(|r| !r.is_empty())
    {
        let actual = resource_version_of(pod);
        if rv != actual {
            return Err(ApiError::conflict("", "Pod", name, &format!(
                "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
            )));
        }
    }
    Ok(())
}

/// `UpdatePodCondition` with `DisruptionTarget=True` (reason `EvictionByEvictionAPI`).
fn add_disruption_condition(pod: &mut Value, now: &str) {
    let mut condition = json!({
        "type": "DisruptionTarget",
        "status": "True",
        "lastProbeTime": null,
        "lastTransitionTime": now,
        "reason": "EvictionByEvictionAPI",
        "message": "Eviction API: evicting",
    });
    if !pod["status"].is_object() {
        pod["status"] = json!({});
    }
    if !pod["status"]["conditions"].is_array() {
        pod["status"]["conditions"] = json!([]);
    }
    let Some(conditions) = pod["status"]["conditions"].as_array_mut() else {
        return;
    };
    match conditions
        .iter_mut()
        .find(|c| c["type"] == "DisruptionTarget")
    {
        Some(existing) => {
            if existing["status"] == "True" {
                condition["lastTransitionTime"] = existing["lastTransitionTime"].clone();
            }
            *existing = condition;
        }
        None => conditions.push(condition),
    }
}

/// `429` while the budget's status is behind its spec (or a bypass lost a race).
fn still_processing(budget: &str) -> ApiError {
    too_many_requests(
        10,
        format!("The disruption budget {budget} is still being processed by the server."),
    )
}

/// `429 TooManyRequests` with a `DisruptionBudget` cause.
fn too_many_requests(retry_after: u32, cause: String) -> ApiError {
    let mut error = ApiError::new(
        429,
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget.",
    );
    error.causes.push(StatusCause {
        reason: "DisruptionBudget".into(),
        message: cause,
        field: String::new(),
    });
    if retry_after > 0 {
        error.retry_after_seconds = Some(retry_after);
    }
    error
}

/// `403 Forbidden` on the budget (the singular resource name, as the handler words it).
fn forbidden(budget: &str, why: &str) -> ApiError {
    ApiError::new(
        403,
        "Forbidden",
        format!("poddisruptionbudget.policy \"{budget}\" is forbidden: {why}"),
    )
    .with_details("policy", "poddisruptionbudget", budget)
}

fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn is_deleting(pod: &Value) -> bool {
    pod["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_carry_the_budget_cause() {
        let status = too_many_requests(
            0,
            "The disruption budget b needs 2 healthy pods and has 2 currently".into(),
        )
        .to_status();
        assert_eq!(status["code"], 429);
        assert_eq!(status["reason"], "TooManyRequests");
        assert_eq!(
            status["message"],
            "Cannot evict pod as it would violate the pod's disruption budget."
        );
        assert_eq!(
            status["details"],
            json!({"causes": [{"reason": "DisruptionBudget",
                "message": "The disruption budget b needs 2 healthy pods and has 2 currently"}]})
        );
        assert_eq!(still_processing("b").retry_after_seconds, Some(10));
    }

    #[test]
    fn terminal_pending_and_deleting_pods_skip_the_budget() {
        for phase in ["Succeeded", "Failed", "Pending"] {
            assert!(can_ignore_budget(&json!({"status": {"phase": phase}})));
        }
        assert!(!can_ignore_budget(&json!({"status": {"phase": "Running"}})));
        assert!(can_ignore_budget(
            &json!({"metadata": {"deletionTimestamp": "t"}, "status": {"phase": "Running"}})
        ));
        assert!(enforces_resource_version(
            &json!({"status": {"phase": "Pending"}})
        ));
        assert!(!enforces_resource_version(
            &json!({"status": {"phase": "Failed"}})
        ));
    }

    #[test]
    fn dry_run_comes_from_the_query_or_the_body_and_must_agree() {
        let body = json!({"deleteOptions": {"dryRun": ["All"]}});
        assert!(delete_options(&body, false).unwrap().1);
        assert!(delete_options(&json!({}), true).unwrap().1);
        assert!(!delete_options(&json!({}), false).unwrap().1);
        let odd = json!({"deleteOptions": {"dryRun": ["Some"]}});
        assert_eq!(delete_options(&odd, true).unwrap_err().code, 500);
        // Alone, an odd value still makes a dry run; the pod's delete refuses it later.
        let (options, dry_run) = delete_options(&odd, false).unwrap();
        assert!(dry_run);
        assert_eq!(
            crate::registry::gc_policy::validate(&options)
                .unwrap_err()
                .code,
            422
        );
    }

    #[test]
    fn the_condition_is_added_once() {
        let mut pod = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        add_disruption_condition(&mut pod, "2026-01-01T00:00:00Z");
        add_disruption_condition(&mut pod, "2026-01-01T00:05:00Z");
        let conditions = pod["status"]["conditions"].as_array().unwrap();
        assert_eq!(conditions.len(), 2);
        assert_eq!(conditions[1]["reason"], "EvictionByEvictionAPI");
        assert_eq!(conditions[1]["lastTransitionTime"], "2026-01-01T00:00:00Z");
    }
}
