//! The ClusterRole aggregation controller (`pkg/controller/clusterroleaggregation`): a
//! ClusterRole with an `aggregationRule` gets as its `rules` the rules of every other ClusterRole
//! its selectors match, in name order, each rule once. It runs after every ClusterRole write, so
//! an aggregated role is up to date before the next request.

use serde_json::{json, Value};

use super::rbac::RBAC_GROUP;
use crate::error::ApiError;
use crate::rules::selectors::LabelSelector;
use crate::store::{resource_key, Mutation};
use crate::FakeApiServer;

/// Brings the rules of every aggregated ClusterRole up to date.
pub fn reconcile(server: &FakeApiServer) {
    let key = resource_key(RBAC_GROUP, "clusterroles");
    let roles: Vec<Value> = server
        .shared
        .store
        .snapshot(&key, None)
        .items
        .iter()
        .filter_map(|(_, bytes)| serde_json::from_slice(bytes).ok())
        .collect();
    for role in &roles {
        let Some(selectors) = role["aggregationRule"]["clusterRoleSelectors"].as_array() else {
            continue;
        };
        let name = role["metadata"]["name"].as_str().unwrap_or_default();
        let selectors: Vec<LabelSelector> = selectors
            .iter()
            .filter_map(|s| LabelSelector::from_label_selector_json(s).ok())
            .collect();
        let mut rules: Vec<Value> = Vec::new();
        for other in &roles {
            if other["metadata"]["name"] == role["metadata"]["name"] {
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
        if role["rules"]
            .as_array()
            .map_or(rules.is_empty(), |r| *r == rules)
        {
            continue;
        }
        let written = server.shared.store.mutate(&key, "", name, |current| {
            let mut current = current
                .ok_or_else(|| ApiError::not_found(RBAC_GROUP, "clusterroles", name))?
                .clone();
            current["rules"] = json!(rules);
            Ok(Mutation::Put(current))
        });
        if let Err(e) = written {
            tracing::warn!(role = name, error = %e.message, "cannot aggregate a ClusterRole");
        }
    }
}
