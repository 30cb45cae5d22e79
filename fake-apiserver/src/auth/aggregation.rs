//! The ClusterRole aggregation controller (`pkg/controller/clusterroleaggregation`): a
//! ClusterRole with an `aggregationRule` gets as its `rules` the rules of every other ClusterRole
//! its selectors match, in name order, each rule once. It runs after every ClusterRole write, so
//! an aggregated role is up to date before the next request. A batch of ClusterRole writes made
//! by the server itself (the bootstrap policy) defers it ([`Deferred`]) and reconciles once after.

use std::hash::{Hash, Hasher};

use serde::Deserialize;
use serde_json::{Map, Value};

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
    let mut roles: Vec<Role> = server
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
        let name = role.metadata.name.as_str();
        let rules = Value::Array(role.rules.clone().unwrap_or_default());
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

/// What aggregation reads of a stored ClusterRole. Decoding only these fields skips the rest
/// (`managedFields` above all): every ClusterRole write reads every ClusterRole.
#[derive(Deserialize)]
struct Role {
    metadata: RoleMeta,
    #[serde(rename = "aggregationRule", default)]
    aggregation_rule: Option<AggregationRule>,
    #[serde(default)]
    rules: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct RoleMeta {
    #[serde(default)]
    name: String,
    #[serde(default)]
    labels: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct AggregationRule {
    #[serde(rename = "clusterRoleSelectors", default)]
    cluster_role_selectors: Option<Vec<Value>>,
}

/// More passes than any chain of aggregated roles is long.
const MAX_PASSES: usize = 64;

/// One pass over the ClusterRoles: each aggregating role takes the rules of the roles its
/// selectors match. Marks the roles it changed; whether it changed one.
fn aggregate_once(roles: &mut [Role], changed: &mut [bool]) -> bool {
    let mut any = false;
    for i in 0..roles.len() {
        let Some(selectors) = roles[i]
            .aggregation_rule
            .as_ref()
            .and_then(|rule| rule.cluster_role_selectors.as_ref())
        else {
            continue;
        };
        let selectors: Vec<LabelSelector> = selectors
            .iter()
            .filter_map(|s| LabelSelector::from_label_selector_json(s).ok())
            .collect();
        let mut rules = DistinctRules::default();
        for (j, other) in roles.iter().enumerate() {
            if j == i || other.metadata.name == roles[i].metadata.name {
                continue;
            }
            if !selectors
                .iter()
                .any(|s| s.matches(other.metadata.labels.as_ref()))
            {
                continue;
            }
            for rule in other.rules.iter().flatten() {
                rules.add(rule);
            }
        }
        let rules = rules.in_order;
        let current = roles[i].rules.as_deref().unwrap_or_default();
        if current.len() == rules.len() && current.iter().zip(&rules).all(|(a, b)| a == *b) {
            continue;
        }
        roles[i].rules = Some(rules.into_iter().cloned().collect());
        changed[i] = true;
        any = true;
    }
    any
}

/// Rules in the order first added, each once (the controller's `ruleExists` check), found by
/// hash: `admin` gathers a few hundred rules, which a scan would compare pairwise.
#[derive(Default)]
struct DistinctRules<'a> {
    in_order: Vec<&'a Value>,
    /// Positions in `in_order` by the rule's hash.
    by_hash: std::collections::HashMap<u64, Vec<usize>>,
}

impl<'a> DistinctRules<'a> {
    fn add(&mut self, rule: &'a Value) {
        let mut hasher = std::hash::DefaultHasher::new();
        hash_value(rule, &mut hasher);
        let same_hash = self.by_hash.entry(hasher.finish()).or_default();
        if same_hash.iter().any(|&k| self.in_order[k] == rule) {
            return;
        }
        same_hash.push(self.in_order.len());
        self.in_order.push(rule);
    }
}

/// Feeds `value` to `state` so that equal values hash equally (an object's entries are combined
/// in an order-free way, so that this holds whatever order its map keeps).
fn hash_value(value: &Value, state: &mut impl Hasher) {
    match value {
        Value::Null => state.write_u8(0),
        Value::Bool(b) => {
            state.write_u8(1);
            b.hash(state);
        }
        Value::Number(n) => {
            state.write_u8(2);
            if let Some(u) = n.as_u64() {
                u.hash(state);
            } else if let Some(i) = n.as_i64() {
                i.hash(state);
            } else if let Some(f) = n.as_f64() {
                f.to_bits().hash(state);
            }
        }
        Value::String(s) => {
            state.write_u8(3);
            s.hash(state);
        }
        Value::Array(items) => {
            state.write_u8(4);
            state.write_usize(items.len());
            for item in items {
                hash_value(item, state);
            }
        }
        Value::Object(map) => {
            state.write_u8(5);
            state.write_usize(map.len());
            let mut entries = 0u64;
            for (key, item) in map {
                let mut entry = std::hash::DefaultHasher::new();
                key.hash(&mut entry);
                hash_value(item, &mut entry);
                entries = entries.wrapping_add(entry.finish());
            }
            state.write_u64(entries);
        }
    }
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
        let role: Value = crate::store::json::from_slice(&bytes).expect("stored JSON");
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

    /// Rules are kept once each, in the order first seen, whatever role repeats them.
    #[test]
    fn distinct_rules_keep_first_seen_order_and_drop_repeats() {
        let a = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]});
        let b = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]});
        let a_again = json!({"verbs": ["get"], "resources": ["pods"], "apiGroups": [""]});
        let c = json!({"nonResourceURLs": ["/healthz"], "verbs": ["get"]});
        let mut rules = DistinctRules::default();
        for rule in [&b, &a, &a_again, &c, &b] {
            rules.add(rule);
        }
        assert_eq!(rules.in_order, vec![&b, &a, &c]);
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
