//! RBAC evaluation, as the real server's RBAC authorizer does it: the rules that apply to a user
//! come from every ClusterRoleBinding naming the user (or one of its groups, or its service
//! account), and in a namespace from that namespace's RoleBindings; a request is allowed when
//! one rule allows it. Rule matching follows `pkg/apis/rbac/v1/evaluation_helpers.go`: `*`
//! matches any verb, group or resource, `*/status` any resource's `status` subresource,
//! `resourceNames` only requests that name an object, non-resource URLs match exactly or by a
//! trailing `*` prefix.
//!
//! The stored objects are read into an [`RbacIndex`]; [`super::policy_cache`] keeps one up to
//! date between writes.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::attributes::Attributes;
use super::user::{split_service_account, UserInfo};
use crate::store::{resource_key, Store};

/// The RBAC API group.
pub const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// One rule of a Role or ClusterRole.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyRule {
    /// Verbs, `*` for all.
    pub verbs: Vec<String>,
    /// API groups, `*` for all, `""` for core.
    pub api_groups: Vec<String>,
    /// Resources (`pods`, `pods/status`, `*/status`, `*`).
    pub resources: Vec<String>,
    /// Object names the rule is limited to (none: every object).
    pub resource_names: Vec<String>,
    /// Non-resource URLs (`/healthz`, `/api/*`, `*`).
    pub non_resource_urls: Vec<String>,
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn has(items: &[String], item: &str) -> bool {
    items.iter().any(|i| i == item)
}

impl PolicyRule {
    /// A rule from its JSON form (`rbac.authorization.k8s.io/v1` `PolicyRule`).
    pub fn from_json(value: &Value) -> Self {
        Self {
            verbs: strings(&value["verbs"]),
            api_groups: strings(&value["apiGroups"]),
            resources: strings(&value["resources"]),
            resource_names: strings(&value["resourceNames"]),
            non_resource_urls: strings(&value["nonResourceURLs"]),
        }
    }

    /// The rule's JSON form (empty lists left out, as the API omits them).
    pub fn to_json(&self) -> Value {
        let mut rule = serde_json::Map::new();
        rule.insert("verbs".into(), json!(self.verbs));
        for (key, list) in [
            ("apiGroups", &self.api_groups),
            ("resources", &self.resources),
            ("resourceNames", &self.resource_names),
            ("nonResourceURLs", &self.non_resource_urls),
        ] {
            if !list.is_empty() {
                rule.insert(key.into(), json!(list));
            }
        }
        Value::Object(rule)
    }

    /// The rules of a Role or ClusterRole object.
    pub fn list_from(role: &Value) -> Vec<Self> {
        role["rules"]
            .as_array()
            .map(|rules| rules.iter().map(Self::from_json).collect())
            .unwrap_or_default()
    }

    fn verb_matches(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == "*" || v == verb)
    }

    fn group_matches(&self, group: &str) -> bool {
        self.api_groups.iter().any(|g| g == "*" || g == group)
    }

    fn resource_matches(&self, combined: &str, subresource: &str) -> bool {
        self.resources.iter().any(|r| {
            r == "*"
                || r == combined
                || (!subresource.is_empty()
                    && r.strip_prefix("*/").is_some_and(|sub| sub == subresource))
        })
    }

    fn name_matches(&self, name: &str) -> bool {
        self.resource_names.is_empty() || has(&self.resource_names, name)
    }

    fn url_matches(&self, path: &str) -> bool {
        self.non_resource_urls.iter().any(|u| {
            u == "*"
                || u == path
                || u.strip_suffix('*')
                    .is_some_and(|prefix| path.starts_with(prefix.trim_end_matches('*')))
        })
    }

    /// Whether this rule allows the request.
    pub fn allows(&self, attrs: &Attributes) -> bool {
        if !self.verb_matches(&attrs.verb) {
            return false;
        }
        if !attrs.resource_request {
            return self.url_matches(&attrs.path);
        }
        self.group_matches(&attrs.group)
            && self.resource_matches(&attrs.combined_resource(), &attrs.subresource)
            && self.name_matches(&attrs.name)
    }

    /// Whether any list of the rule holds a `*` (a wildcard grant).
    pub fn has_wildcard(&self) -> bool {
        [
            &self.verbs,
            &self.api_groups,
            &self.resources,
            &self.non_resource_urls,
        ]
        .iter()
        .any(|list| list.iter().any(|item| item.contains('*')))
    }
}

/// A binding's subject.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`.
    pub kind: String,
    /// Name.
    pub name: String,
    /// For service accounts: the namespace (empty: the binding's).
    pub namespace: String,
}

impl Subject {
    /// Whether the subject names this user, for a binding in `binding_namespace` (empty for a
    /// ClusterRoleBinding).
    pub fn applies_to(&self, user: &UserInfo, binding_namespace: &str) -> bool {
        match self.kind.as_str() {
            "User" => user.name == self.name,
            "Group" => user.in_group(&self.name),
            "ServiceAccount" => {
                let namespace = if self.namespace.is_empty() {
                    binding_namespace
                } else {
                    &self.namespace
                };
                !namespace.is_empty()
                    && split_service_account(&user.name) == Some((namespace, self.name.as_str()))
            }
            _ => false,
        }
    }

    /// How the real server names the subject in a reason: `User "alice"`, `ServiceAccount
    /// "name/ns"`.
    fn describe(&self, binding_namespace: &str) -> String {
        if self.kind == "ServiceAccount" {
            let namespace = if self.namespace.is_empty() {
                binding_namespace
            } else {
                &self.namespace
            };
            return format!("{} \"{}/{namespace}\"", self.kind, self.name);
        }
        format!("{} \"{}\"", self.kind, self.name)
    }
}

/// A RoleBinding or ClusterRoleBinding.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Binding {
    /// Name.
    pub name: String,
    /// Namespace (empty for a ClusterRoleBinding).
    pub namespace: String,
    /// `Role` or `ClusterRole`.
    pub role_kind: String,
    /// The role's name.
    pub role_name: String,
    /// Who is bound.
    pub subjects: Vec<Subject>,
}

impl Binding {
    /// A binding from its JSON form.
    pub fn from_json(value: &Value) -> Self {
        let subjects = value["subjects"]
            .as_array()
            .map(|subjects| {
                subjects
                    .iter()
                    .map(|s| Subject {
                        kind: s["kind"].as_str().unwrap_or_default().to_string(),
                        name: s["name"].as_str().unwrap_or_default().to_string(),
                        namespace: s["namespace"].as_str().unwrap_or_default().to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            name: value["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            namespace: value["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            role_kind: value["roleRef"]["kind"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            role_name: value["roleRef"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            subjects,
        }
    }

    fn describe(&self, subject: &Subject) -> String {
        if self.namespace.is_empty() {
            format!(
                "ClusterRoleBinding \"{}\" of {} \"{}\" to {}",
                self.name,
                self.role_kind,
                self.role_name,
                subject.describe("")
            )
        } else {
            format!(
                "RoleBinding \"{}/{}\" of {} \"{}\" to {}",
                self.name,
                self.namespace,
                self.role_kind,
                self.role_name,
                subject.describe(&self.namespace)
            )
        }
    }
}

/// Every Role, ClusterRole and binding, read from the store.
#[derive(Debug, Clone, Default)]
pub struct RbacIndex {
    cluster_roles: BTreeMap<String, Vec<PolicyRule>>,
    roles: BTreeMap<(String, String), Vec<PolicyRule>>,
    cluster_role_bindings: Vec<Binding>,
    role_bindings: BTreeMap<String, Vec<Binding>>,
}

/// The answer of the authorizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request is allowed.
    pub allowed: bool,
    /// Why (`RBAC: allowed by ...`), or the errors met while looking for a rule.
    pub reason: String,
}

fn objects(store: &Store, plural: &str) -> Vec<Value> {
    store
        .snapshot(&resource_key(RBAC_GROUP, plural), None)
        .items
        .iter()
        .filter_map(|(_, bytes)| crate::store::json::from_slice(bytes).ok())
        .collect()
}

impl RbacIndex {
    /// Reads every RBAC object from the store.
    pub fn load(store: &Store) -> Self {
        let mut index = Self::default();
        for role in objects(store, "clusterroles") {
            let name = role["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            index
                .cluster_roles
                .insert(name, PolicyRule::list_from(&role));
        }
        for role in objects(store, "roles") {
            let meta = &role["metadata"];
            let key = (
                meta["namespace"].as_str().unwrap_or_default().to_string(),
                meta["name"].as_str().unwrap_or_default().to_string(),
            );
            index.roles.insert(key, PolicyRule::list_from(&role));
        }
        index.cluster_role_bindings = objects(store, "clusterrolebindings")
            .iter()
            .map(Binding::from_json)
            .collect();
        for binding in objects(store, "rolebindings")
            .iter()
            .map(Binding::from_json)
        {
            index
                .role_bindings
                .entry(binding.namespace.clone())
                .or_default()
                .push(binding);
        }
        index
    }

    /// The rules a role reference grants in `namespace` (a Role there, or a ClusterRole), or
    /// the real server's not-found message.
    pub fn role_rules(
        &self,
        kind: &str,
        name: &str,
        namespace: &str,
    ) -> Result<&[PolicyRule], String> {
        match kind {
            "Role" => self
                .roles
                .get(&(namespace.to_string(), name.to_string()))
                .map(Vec::as_slice)
                .ok_or_else(|| format!("role.rbac.authorization.k8s.io \"{name}\" not found")),
            "ClusterRole" => self
                .cluster_roles
                .get(name)
                .map(Vec::as_slice)
                .ok_or_else(|| {
                    format!("clusterrole.rbac.authorization.k8s.io \"{name}\" not found")
                }),
            other => Err(format!("unsupported role reference kind: {other:?}")),
        }
    }

    /// Visits every rule that applies to `user` in `namespace` (cluster bindings first, then
    /// the namespace's bindings, each in name order), with a description of where it comes
    /// from; errors (a binding naming a missing role) go to `error`. Stops when `visit` returns
    /// false.
    fn visit(
        &self,
        user: &UserInfo,
        namespace: &str,
        visit: &mut dyn FnMut(&dyn Fn() -> String, &PolicyRule) -> bool,
        error: &mut dyn FnMut(String),
    ) {
        let local = if namespace.is_empty() {
            &[][..]
        } else {
            self.role_bindings
                .get(namespace)
                .map(Vec::as_slice)
                .unwrap_or_default()
        };
        for binding in self.cluster_role_bindings.iter().chain(local) {
            let Some(subject) = binding
                .subjects
                .iter()
                .find(|s| s.applies_to(user, &binding.namespace))
            else {
                continue;
            };
            let rules = match self.role_rules(&binding.role_kind, &binding.role_name, namespace) {
                Ok(rules) => rules,
                Err(e) => {
                    error(e);
                    continue;
                }
            };
            let source = || binding.describe(subject);
            for rule in rules {
                if !visit(&source, rule) {
                    return;
                }
            }
        }
    }

    /// Whether RBAC allows the request, with the real authorizer's reason.
    pub fn authorize(&self, attrs: &Attributes) -> Decision {
        let mut allowed_by = None;
        let mut errors = Vec::new();
        self.visit(
            &attrs.user,
            &attrs.namespace,
            &mut |source, rule| {
                if rule.allows(attrs) {
                    allowed_by = Some(source());
                    return false;
                }
                true
            },
            &mut |e| errors.push(e),
        );
        match allowed_by {
            Some(source) => Decision {
                allowed: true,
                reason: format!("RBAC: allowed by {source}"),
            },
            None => Decision {
                allowed: false,
                reason: if errors.is_empty() {
                    String::new()
                } else {
                    format!("RBAC: {}", aggregate(&errors))
                },
            },
        }
    }

    /// Every rule that applies to `user` in `namespace` (empty: cluster-wide only), and the
    /// errors met (a binding naming a missing role).
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        self.visit(
            user,
            namespace,
            &mut |_, rule| {
                rules.push(rule.clone());
                true
            },
            &mut |e| errors.push(e),
        );
        (rules, errors)
    }
}

/// Errors joined as Go's `utilerrors.NewAggregate` prints them: one alone, several in brackets.
pub fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn rule(value: Value) -> PolicyRule {
        PolicyRule::from_json(&value)
    }

    fn request(verb: &str, group: &str, resource: &str, sub: &str, name: &str) -> Attributes {
        let mut a = Attributes::resource(
            &UserInfo::authenticated("u", "", &[]),
            verb,
            group,
            resource,
            "ns",
            name,
        );
        a.subresource = sub.into();
        a
    }

    #[rstest]
    #[case(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}), "get", "", "pods", "", "p", true)]
    #[case(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}), "list", "", "pods", "", "", false)]
    #[case(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}), "get", "", "pods", "status", "p", false)]
    #[case(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/status"]}), "get", "", "pods", "status", "p", true)]
    #[case(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]}), "get", "", "nodes", "status", "n", true)]
    #[case(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]}), "get", "", "nodes", "", "n", false)]
    #[case(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}), "deletecollection", "x.io", "things", "", "", true)]
    #[case(json!({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]}), "get", "", "pods", "", "p", false)]
    #[case(json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}), "get", "", "pods", "", "a", true)]
    #[case(json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}), "get", "", "pods", "", "b", false)]
    #[case(json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}), "list", "", "pods", "", "", false)]
    fn resource_rules_match_as_the_real_server_matches_them(
        #[case] r: Value,
        #[case] verb: &str,
        #[case] group: &str,
        #[case] resource: &str,
        #[case] sub: &str,
        #[case] name: &str,
        #[case] allowed: bool,
    ) {
        assert_eq!(
            rule(r).allows(&request(verb, group, resource, sub, name)),
            allowed
        );
    }

    #[rstest]
    #[case("/healthz", "/healthz", true)]
    #[case("/api/*", "/api/v1", true)]
    #[case("/api/*", "/api", false)]
    #[case("*", "/anything", true)]
    #[case("/healthz", "/healthz/ping", false)]
    fn non_resource_urls(#[case] url: &str, #[case] path: &str, #[case] allowed: bool) {
        let r = rule(json!({"verbs": ["get"], "nonResourceURLs": [url]}));
        let a = Attributes::non_resource(&UserInfo::anonymous(), "get", path);
        assert_eq!(r.allows(&a), allowed);
    }

    #[test]
    fn service_account_subjects_default_to_the_binding_namespace() {
        let sa = UserInfo::service_account("ns", "sa", "");
        let subject = Subject {
            kind: "ServiceAccount".into(),
            name: "sa".into(),
            namespace: String::new(),
        };
        assert!(subject.applies_to(&sa, "ns"));
        assert!(!subject.applies_to(&sa, "other"));
        assert!(!subject.applies_to(&sa, ""));
    }
}
