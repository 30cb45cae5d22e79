//! The ClusterRole aggregation controller (`pkg/controller/clusterroleaggregation`): a
//! ClusterRole with an `aggregationRule` gets as its `rules` the rules of every other ClusterRole
//! its selectors match, in name order, each rule once. It runs after every ClusterRole write, so
//! an aggregated role is up to date before the next request. A batch of ClusterRole writes made
//! by the server itself (the bootstrap policy) defers it ([`Deferred`]) and reconciles once after.

use serde_json::Value;

use super::rbac::RBAC_GROUP;
use crate::error::ApiError;
use crate::rules::selectors::LabelSelector;
use crate::store::{resource_key, Mutation};
use crate::FakeApiServer;

thread_local! {
    /// How many [`Deferred`] guards are alive on this thread.
    static DEFERRED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// While alive, [`reconcile`] does nothing on this thread: the holder writes several ClusterRoles
/// in a row and calls [`reconcile`] once when done (each call reads every ClusterRole).
#[must_use]
pub(crate) struct Deferred(());

impl Deferred {
    /// Defers aggregation on this thread until the guard is dropped.
    pub(crate) fn enter() -> Self {
        DEFERRED.with(|d| d.set(d.get() + 1));
        Deferred(())
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        DEFERRED.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Brings the rules of every aggregated ClusterRole up to date (unless [`Deferred`]). An
/// aggregated role may itself be aggregated (bootstrap `view` into `edit` into `admin`): on a
/// cluster the controller sees its own write as one more ClusterRole change and runs again, so
/// here passes repeat until one writes nothing.
pub fn reconcile(server: &FakeApiServer) {
    if DEFERRED.with(|d| d.get()) > 0 {
        return;
    }
    let key = resource_key(RBAC_GROUP, "clusterroles");
    let mut roles: Vec<Value> = server
        .shared
        .store
        .snapshot(&key, None)
        .items
        .iter()
        .filter_map(|(_, bytes)| serde_json::from_slice(bytes).ok())
        .collect();
    // The passes run on the roles in memory; each role that ends up changed is written once,
    // with its settled rules (what the controller's repeated runs end with).
    let mut changed = vec![false; roles.len()];
    let mut passes = 0;
    while aggregate_once(&mut roles, &mut changed) {
        passes += 1;
        if passes > MAX_PASSES {
            tracing::warn!("ClusterRole aggregation did not settle after {MAX_PASSES} passes");
            break;
        }
    }
    for (role, _) in roles.iter().zip(&changed).filter(|(_, c)| **c) {
        let name = role["metadata"]["name"].as_str().unwrap_or_default();
        let rules = role["rules"].clone();
        let written = server.shared.store.mutate(&key, "", name, |current| {
            let mut current = current
                .ok_or_else(|| ApiError::not_found(RBAC_GROUP, "clusterroles", name))?
                .clone();
            current["rules"] = rules;
            Ok(Mutation::Put(current))
        });
        if let Err(e) = written {
            tracing::warn!(role = name, error = %e.message, "cannot aggregate a ClusterRole");
        }
    }
}

/// More passes than any chain of aggregated roles is long.
const MAX_PASSES: usize = 64;

/// One pass over the ClusterRoles: each aggregating role takes the rules of the roles its
/// selectors match. Marks the roles it changed; whether it changed one.
fn aggregate_once(roles: &mut [Value], changed: &mut [bool]) -> bool {
    let mut any = false;
    for i in 0..roles.len() {
        let Some(selectors) = roles[i]["aggregationRule"]["clusterRoleSelectors"].as_array() else {
            continue;
        };
        let selectors: Vec<LabelSelector> = selectors
            .iter()
            .filter_map(|s| LabelSelector::from_label_selector_json(s).ok())
            .collect();
        let mut rules: Vec<Value> = Vec::new();
        for (j, other) in roles.iter().enumerate() {
            if j == i || other["metadata"]["name"] == roles[i]["metadata"]["name"] {
                continue;
            }
            let labels = other["metadata"]["labels"].as_object();
            if !selectors.iter().any(|s| s.matches(labels)) {
                continue;
            }
            for rule in other["rules"].as_array().into_iter().flatten() {
                if !rules.contains(rule) {
                    rules.push(rule.clone());
                }
            }
        }
        if roles[i]["rules"]
            .as_array()
            .map_or(rules.is_empty(), |r| *r == rules)
        {
            continue;
        }
        roles[i]["rules"] = Value::Array(rules);
        changed[i] = true;
        any = true;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules_of(server: &FakeApiServer, name: &str) -> Vec<Value> {
        let key = resource_key(RBAC_GROUP, "clusterroles");
        let bytes = server
            .shared
            .store
            .get(&key, "", name)
            .expect("the role exists");
        let role: Value = serde_json::from_slice(&bytes).expect("stored JSON");
        role["rules"].as_array().cloned().unwrap_or_default()
    }

    fn labelled_role(name: &str, label: &str, resource: &str) -> Value {
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name, "labels": {label: "true"}},
            "rules": [{"apiGroups": ["example.com"], "resources": [resource], "verbs": ["get"]}],
        })
    }

    /// `view` is aggregated into `edit`, and `edit` into `admin`, as the bootstrap policy has it.
    #[test]
    fn bootstrap_roles_aggregate_along_the_chain() {
        let server = FakeApiServer::new();
        let (view, edit, admin) = (
            rules_of(&server, "view"),
            rules_of(&server, "edit"),
            rules_of(&server, "admin"),
        );
        assert!(
            !view.is_empty(),
            "view has the rules of system:aggregate-to-view"
        );
        assert!(
            view.iter().all(|r| edit.contains(r)),
            "edit holds view's rules"
        );
        assert!(
            edit.iter().all(|r| admin.contains(r)),
            "admin holds edit's rules"
        );
        assert!(edit.len() > view.len() && admin.len() > edit.len());
    }

    /// A role labelled for `view` reaches `edit` and `admin` through the chain at once.
    #[test]
    fn a_new_labelled_role_reaches_every_role_up_the_chain() {
        let server = FakeApiServer::new();
        let role = labelled_role(
            "widgets-view",
            "rbac.authorization.k8s.io/aggregate-to-view",
            "widgets",
        );
        let rule = role["rules"][0].clone();
        server.apply_manifest(role).expect("created");
        for name in ["view", "edit", "admin"] {
            assert!(
                rules_of(&server, name).contains(&rule),
                "{name} lacks the rule"
            );
        }
    }

    /// While deferred, writes leave the aggregated roles alone; the holder's reconcile catches up.
    #[test]
    fn deferred_aggregation_waits_for_the_reconcile() {
        let server = FakeApiServer::new();
        let role = labelled_role(
            "gadgets-edit",
            "rbac.authorization.k8s.io/aggregate-to-edit",
            "gadgets",
        );
        let rule = role["rules"][0].clone();
        {
            let _deferred = Deferred::enter();
            server.apply_manifest(role).expect("created");
            assert!(!rules_of(&server, "edit").contains(&rule));
            reconcile(&server);
            assert!(!rules_of(&server, "edit").contains(&rule), "still deferred");
        }
        reconcile(&server);
        assert!(rules_of(&server, "edit").contains(&rule));
        assert!(rules_of(&server, "admin").contains(&rule));
        assert!(!rules_of(&server, "view").contains(&rule));
    }
}
