//! Privilege escalation checks on writing RBAC objects (`pkg/registry/rbac/validation` and the
//! `policybased` storages): a Role or ClusterRole may only grant rules its writer holds, unless
//! the writer may `escalate` that role; a binding may only bind a role whose rules its writer
//! holds, unless the writer may `bind` it. `system:masters` skips both. An update that only
//! touches owner references or finalizers is not checked (the garbage collector must be able to
//! make it). A refusal is the real `403` with the missing rules listed.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use super::attributes::{forbidden_error, Attributes};
use super::rbac::{aggregate, PolicyRule, RbacIndex, RBAC_GROUP};
use super::user::{go_quote_list, UserInfo, MASTERS};
use super::AuthorizationMode;
use crate::context::Shared;
use crate::error::ApiError;
use crate::resource::ResourceInfo;

/// Checks writes of RBAC objects for one request. Prepared before the store is locked (it reads
/// the RBAC objects), applied to the object the write would store.
pub(crate) struct WriteGuard {
    user: UserInfo,
    /// `None`: nothing to check (not an RBAC kind, authorization off, or a privileged user).
    index: Option<Arc<RbacIndex>>,
}

fn is_rbac_kind(info: &ResourceInfo) -> bool {
    info.group == RBAC_GROUP
        && matches!(
            info.kind.as_str(),
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding"
        )
}

impl WriteGuard {
    /// The guard for `user` writing `info` objects.
    pub(crate) fn prepare(shared: &Shared, user: &UserInfo, info: &ResourceInfo) -> Self {
        let checked = is_rbac_kind(info)
            && shared.auth.config.authorization_mode == AuthorizationMode::Rbac
            && !user.in_group(MASTERS);
        Self {
            user: user.clone(),
            index: checked.then(|| super::rbac_index(shared)),
        }
    }

    /// Checks that writing `object` (replacing `old`, if any) grants nothing the user does not
    /// hold. `url_name` is the name in the request's URL (empty on create).
    pub(crate) fn check(
        &self,
        info: &ResourceInfo,
        url_name: &str,
        object: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let Some(index) = &self.index else {
            return Ok(());
        };
        if old.is_some_and(|old| only_gc_fields_change(old, object)) {
            return Ok(());
        }
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
        let forbidden = |why: &str| forbidden_error(RBAC_GROUP, &info.plural, name, why);
        let allowed = |attrs: &Attributes| index.authorize(attrs).allowed;
        match info.kind.as_str() {
            "Role" | "ClusterRole" => {
                let escalate = Attributes::resource(
                    &self.user,
                    "escalate",
                    RBAC_GROUP,
                    &info.plural,
                    namespace,
                    url_name,
                );
                if allowed(&escalate) {
                    return Ok(());
                }
                let rules = PolicyRule::list_from(object);
                confirm_no_escalation(index, &self.user, namespace, &rules)
                    .map_err(|why| forbidden(&why))?;
                if info.kind == "ClusterRole"
                    && object.get("aggregationRule").is_some_and(|a| !a.is_null())
                {
                    let full = [
                        PolicyRule {
                            verbs: vec!["*".into()],
                            api_groups: vec!["*".into()],
                            resources: vec!["*".into()],
                            ..Default::default()
                        },
                        PolicyRule {
                            verbs: vec!["*".into()],
                            non_resource_urls: vec!["*".into()],
                            ..Default::default()
                        },
                    ];
                    confirm_no_escalation(index, &self.user, namespace, &full).map_err(|_| {
                        forbidden("must have cluster-admin privileges to use the aggregationRule")
                    })?;
                }
                Ok(())
            }
            _ => {
                let role_ref = &object["roleRef"];
                let kind = role_ref["kind"].as_str().unwrap_or_default();
                let role_name = role_ref["name"].as_str().unwrap_or_default();
                let resource = match kind {
                    "ClusterRole" => "clusterroles",
                    "Role" => "roles",
                    _ => "",
                };
                if !resource.is_empty() {
                    let bind = Attributes::resource(
                        &self.user,
                        "bind",
                        role_ref["apiGroup"].as_str().unwrap_or_default(),
                        resource,
                        namespace,
                        role_name,
                    );
                    if allowed(&bind) {
                        return Ok(());
                    }
                }
                let rules = index
                    .role_rules(kind, role_name, namespace)
                    .map_err(|e| forbidden(&e))?;
                confirm_no_escalation(index, &self.user, namespace, rules)
                    .map_err(|why| forbidden(&why))
            }
        }
    }
}

/// Whether `new` differs from `old` only in owner references and finalizers.
fn only_gc_fields_change(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(meta) = v["metadata"].as_object_mut() {
            for key in [
                "ownerReferences",
                "finalizers",
                "resourceVersion",
                "managedFields",
                "generation",
            ] {
                meta.remove(key);
            }
        }
        if let Some(obj) = v.as_object_mut() {
            obj.remove("apiVersion");
            obj.remove("kind");
        }
        v
    };
    strip(old) == strip(new)
}

/// The real `ConfirmNoEscalation`: every rule in `rules` must be covered by a rule the user
/// holds in `namespace`; else the message listing what is missing.
pub fn confirm_no_escalation(
    index: &RbacIndex,
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), String> {
    let (owned, errors) = index.rules_for(user, namespace);
    let missing = uncovered(&owned, rules);
    if missing.is_empty() {
        return Ok(());
    }
    let descriptions: BTreeSet<String> = compact(&missing).iter().map(compact_string).collect();
    let mut message = format!(
        "user \"{}\" (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        user.name,
        user.groups_go_quoted(),
        descriptions.into_iter().collect::<Vec<_>>().join("\n")
    );
    if !errors.is_empty() {
        message.push_str(&format!("; resolution errors: [{}]", aggregate(&errors)));
    }
    Err(message)
}

/// The parts of `requested` (broken down to one group, resource, verb and name each) that no
/// rule of `owned` covers.
pub fn uncovered(owned: &[PolicyRule], requested: &[PolicyRule]) -> Vec<PolicyRule> {
    requested
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owned.iter().any(|owner| covers(owner, sub)))
        .collect()
}

/// One rule split into rules of one group × resource × verb (× name), and URL × verb.
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let one = |names: Vec<String>| PolicyRule {
                    verbs: vec![verb.clone()],
                    api_groups: vec![group.clone()],
                    resources: vec![resource.clone()],
                    resource_names: names,
                    non_resource_urls: Vec::new(),
                };
                if rule.resource_names.is_empty() {
                    out.push(one(Vec::new()));
                } else {
                    out.extend(rule.resource_names.iter().map(|n| one(vec![n.clone()])));
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                verbs: vec![verb.clone()],
                non_resource_urls: vec![url.clone()],
                ..Default::default()
            });
        }
    }
    out
}

fn has(items: &[String], item: &str) -> bool {
    items.iter().any(|i| i == item)
}

fn has_all(items: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| has(items, w))
}

/// Whether `owner` covers `sub` (the real `ruleCovers`).
fn covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &sub.api_groups);
    let resources = has(&owner.resources, "*")
        || has_all(&owner.resources, &sub.resources)
        || sub.resources.iter().all(|r| {
            has(&owner.resources, r)
                || r.split_once('/')
                    .is_some_and(|(_, s)| has(&owner.resources, &format!("*/{s}")))
        });
    let urls = sub.non_resource_urls.iter().all(|path| {
        owner.non_resource_urls.iter().any(|o| {
            o == path
                || o.strip_suffix('*')
                    .is_some_and(|p| path.starts_with(p.trim_end_matches('*')))
        })
    });
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs && groups && resources && urls && names
}

/// Merges simple rules (one group, one resource, no names, no URLs) that differ only in verbs
/// (the real `CompactRules`).
fn compact(rules: &[PolicyRule]) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::new();
    let mut simple: Vec<(String, String, usize)> = Vec::new();
    for rule in rules {
        let is_simple = rule.api_groups.len() == 1
            && rule.resources.len() == 1
            && rule.resource_names.is_empty()
            && rule.non_resource_urls.is_empty();
        if !is_simple {
            out.push(rule.clone());
            continue;
        }
        let key = (rule.api_groups[0].clone(), rule.resources[0].clone());
        match simple.iter().find(|(g, r, _)| (g, r) == (&key.0, &key.1)) {
            Some(&(_, _, at)) => {
                for verb in &rule.verbs {
                    if !has(&out[at].verbs, verb) {
                        out[at].verbs.push(verb.clone());
                    }
                }
            }
            None => {
                simple.push((key.0, key.1, out.len()));
                out.push(rule.clone());
            }
        }
    }
    out
}

/// The real `CompactString`: `{APIGroups:["g"], Resources:["r"], Verbs:["v"]}`.
fn compact_string(rule: &PolicyRule) -> String {
    let mut parts = Vec::new();
    for (label, list) in [
        ("APIGroups", &rule.api_groups),
        ("Resources", &rule.resources),
        ("NonResourceURLs", &rule.non_resource_urls),
        ("ResourceNames", &rule.resource_names),
        ("Verbs", &rule.verbs),
    ] {
        if !list.is_empty() {
            parts.push(format!("{label}:{}", go_quote_list(list)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(v: Value) -> PolicyRule {
        PolicyRule::from_json(&v)
    }

    #[test]
    fn coverage_follows_the_real_rules() {
        let owned = [
            rule(
                json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "*/status"]}),
            ),
            rule(json!({"verbs": ["get"], "nonResourceURLs": ["/api/*"]})),
        ];
        let fine = [
            rule(
                json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods", "nodes/status"], "resourceNames": ["a"]}),
            ),
            rule(json!({"verbs": ["get"], "nonResourceURLs": ["/api/v1"]})),
        ];
        assert!(uncovered(&owned, &fine).is_empty());
        let too_much = [rule(
            json!({"verbs": ["get", "delete", "watch"], "apiGroups": [""], "resources": ["pods"]}),
        )];
        let missing = compact(&uncovered(&owned, &too_much));
        assert_eq!(missing.len(), 1);
        assert_eq!(
            compact_string(&missing[0]),
            r#"{APIGroups:[""], Resources:["pods"], Verbs:["delete" "watch"]}"#
        );
    }
}
