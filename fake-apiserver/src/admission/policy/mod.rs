//! ValidatingAdmissionPolicy (`admissionregistration.k8s.io/v1`): the validating admission
//! phase's CEL policies, as `plugin/policy/validating` runs them, after object validation and
//! before storage, on create, update (every subresource, patches and applies included) and
//! delete.
//!
//! - A policy's `matchConstraints` (resource rules with operations, groups, versions,
//!   resources and subresources, names and scope; excluded rules; `namespaceSelector`;
//!   `objectSelector`) and a binding's `matchResources` select requests; `matchPolicy` is taken
//!   as `Exact` (each kind is served in one version here, so `Equivalent` adds nothing).
//! - `matchConditions` are evaluated first: one `false` skips the policy; errors with none
//!   `false` follow the failure policy.
//! - `variables` (each may use the earlier ones as `variables.NAME`), then `validations`
//!   (`expression`, `message`, `messageExpression`, `reason`) with the variables `object`,
//!   `oldObject`, `request`, `params`, `namespaceObject`, `variables`, and `authorizer` with
//!   `authorizer.requestResource` (the server's authorizer asking about the requesting user;
//!   `crate::cel::authz`).
//! - `paramKind` + a binding's `paramRef` (`name` or `selector`, `namespace`,
//!   `parameterNotFoundAction`): params from any served kind, ConfigMaps and custom resources
//!   included; with a selector the validations run once per param.
//! - A binding's `validationActions`: `Deny` refuses with the real Status
//!   (`ValidatingAdmissionPolicy 'P' with binding 'B' denied request: MESSAGE`, 422 `Invalid`
//!   or the code of the validation's `reason`), `Warn` adds a `Warning` header
//!   (`Validation failed for ValidatingAdmissionPolicy 'P' with binding 'B': MESSAGE`), `Audit`
//!   is accepted (there is no audit log to write to).
//! - `failurePolicy` (`Fail` by default) decides what an evaluation error or a configuration
//!   error (a missing param) does. `auditAnnotations` are evaluated for their errors only
//!   (there is no audit log): one that fails denies under `Fail`, one that gives neither a
//!   string nor null denies always, whatever the binding's actions. The policy's
//!   `status.typeChecking` is not computed.
//!
//! The policies, bindings, params and the namespace are read from the store before the write
//! locks it ([`prepare`]); the expressions then run on the object the write is about to store
//! ([`Prepared::check`]), cached compiled by expression ([`crate::cel::compile`]).

mod evaluate;
mod matching;

use std::sync::Arc;

use serde_json::Value;

use crate::auth::UserInfo;
use crate::context::Shared;
use crate::error::ApiError;
use crate::resource::ResourceInfo;

/// The group of the policy kinds.
const GROUP: &str = "admissionregistration.k8s.io";

/// The operation a request performs, as admission names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    /// A create.
    Create,
    /// An update, patch or apply (of the object or a subresource).
    Update,
    /// A delete.
    Delete,
}

impl Operation {
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }
}

/// What admission knows of a request.
pub(crate) struct Attributes<'a> {
    /// The resource.
    pub info: &'a ResourceInfo,
    /// The operation.
    pub operation: Operation,
    /// The request's namespace (empty for cluster-scoped resources).
    pub namespace: &'a str,
    /// The object's name (empty for a create with `generateName`).
    pub name: &'a str,
    /// The subresource written, if any.
    pub subresource: Option<&'a str>,
    /// Who asks.
    pub user: &'a UserInfo,
    /// A server-side dry run.
    pub dry_run: bool,
}

/// A binding with the params it resolved to.
struct Bound {
    binding: Value,
    /// The params (`None` alone when the policy has no `paramKind`), or the configuration error.
    params: Result<Vec<Option<Value>>, String>,
}

/// A policy with its bindings.
struct Hook {
    policy: Value,
    bindings: Vec<Bound>,
}

/// The policies that may apply to a request, with everything they need from the store.
pub(crate) struct Prepared {
    hooks: Vec<Hook>,
    namespace: Option<Value>,
    /// The authorizer the expressions' `authorizer` asks (read before the write holds the
    /// store).
    authorizer: crate::auth::Authorizer,
}

/// The store's key of the bindings (`key("validatingadmissionpolicybindings")`), written out:
/// it is looked up on every write.
const BINDINGS_KEY: &str = "admissionregistration.k8s.io/validatingadmissionpolicybindings";

fn key(plural: &str) -> String {
    crate::store::resource_key(GROUP, plural)
}

fn parse_all(shared: &Shared, plural: &str) -> Vec<Value> {
    shared
        .store
        .snapshot(&key(plural), None)
        .items
        .into_iter()
        .filter_map(|(_, bytes)| crate::store::json::from_slice(&bytes).ok())
        .collect()
}

fn name_of(v: &Value) -> &str {
    v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Reads what the policies need for a request in `namespace`; `None` when no binding exists
/// (the common case: nothing more is done).
pub(crate) fn prepare(shared: &Shared, attrs: &Attributes<'_>) -> Option<Prepared> {
    let namespace = attrs.namespace;
    let is_namespace_kind = attrs.info.group.is_empty() && attrs.info.kind == "Namespace";
    if shared.store.count(BINDINGS_KEY) == 0 {
        return None;
    }
    let bindings = parse_all(shared, "validatingadmissionpolicybindings");
    let policies = parse_all(shared, "validatingadmissionpolicies");
    let mut hooks = Vec::new();
    for policy in policies {
        let mut bound: Vec<Bound> = bindings
            .iter()
            .filter(|b| {
                b.pointer("/spec/policyName").and_then(Value::as_str) == Some(name_of(&policy))
            })
            .map(|b| Bound {
                params: collect_params(shared, &policy, b, namespace),
                binding: b.clone(),
            })
            .collect();
        if bound.is_empty() {
            continue;
        }
        bound.sort_by(|a, b| name_of(&a.binding).cmp(name_of(&b.binding)));
        hooks.push(Hook {
            policy,
            bindings: bound,
        });
    }
    if hooks.is_empty() {
        return None;
    }
    let namespace = (!namespace.is_empty() && !is_namespace_kind)
        .then(|| shared.store.get_value("/namespaces", "", namespace))
        .flatten();
    Some(Prepared {
        hooks,
        namespace,
        authorizer: crate::auth::authorizer(shared),
    })
}

/// The params of a binding (`generic.CollectParams`).
fn collect_params(
    shared: &Shared,
    policy: &Value,
    binding: &Value,
    request_namespace: &str,
) -> Result<Vec<Option<Value>>, String> {
    let Some(param_kind) = policy.pointer("/spec/paramKind").filter(|p| p.is_object()) else {
        return Ok(vec![None]);
    };
    let Some(param_ref) = binding.pointer("/spec/paramRef").filter(|p| p.is_object()) else {
        return Err("paramKind is specified but paramRef is not".to_string());
    };
    let api_version = param_kind["apiVersion"].as_str().unwrap_or_default();
    let kind = param_kind["kind"].as_str().unwrap_or_default();
    let info: Arc<ResourceInfo> =
        shared
            .registry
            .lookup_kind(api_version, kind)
            .ok_or_else(|| {
                format!(
                    "failed to find resource referenced by paramKind: '{api_version}, Kind={kind}'"
                )
            })?;
    let store_key = crate::store::resource_key(&info.group, &info.plural);
    let mut namespace = param_ref["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if info.namespaced && namespace.is_empty() {
        if request_namespace.is_empty() {
            return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".to_string());
        }
        namespace = request_namespace.to_string();
    }
    let mut found = Vec::new();
    if let Some(name) = param_ref["name"].as_str().filter(|n| !n.is_empty()) {
        if let Some(mut p) = shared.store.get_value(&store_key, &namespace, name) {
            crate::http::encoding::add_type_meta(&info, &mut p);
            found.push(Some(p));
        }
    } else {
        let selector = crate::rules::selectors::LabelSelector::from_label_selector_json(
            param_ref.get("selector").unwrap_or(&Value::Null),
        )
        .map_err(|e| e.to_string())?;
        let ns = info.namespaced.then_some(namespace.as_str());
        for (_, bytes) in shared.store.snapshot(&store_key, ns).items {
            let Ok(mut p) = crate::store::json::from_slice(&bytes) else {
                continue;
            };
            if selector.matches(p.pointer("/metadata/labels").and_then(Value::as_object)) {
                crate::http::encoding::add_type_meta(&info, &mut p);
                found.push(Some(p));
            }
        }
    }
    if found.is_empty() {
        return match param_ref["parameterNotFoundAction"].as_str() {
            Some("Allow") => Ok(Vec::new()),
            _ => Err(
                "no params found for policy binding with Deny parameterNotFoundAction".to_string(),
            ),
        };
    }
    Ok(found)
}

impl Prepared {
    /// Runs every matching policy on the write of `object` (`None` for a delete) over `old`
    /// (`None` for a create). Warnings go to `warnings`; a denial is the error to answer.
    /// The objects may be stored ones, without `apiVersion` and `kind`: policies see them with.
    pub(crate) fn check(
        &self,
        attrs: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        warnings: &std::cell::RefCell<Vec<String>>,
    ) -> Result<(), ApiError> {
        let typed = |o: &Value| {
            let mut o = o.clone();
            crate::http::encoding::add_type_meta(attrs.info, &mut o);
            o
        };
        let object = object.map(typed);
        let old = old.map(typed);
        evaluate::dispatch(self, attrs, object.as_ref(), old.as_ref(), warnings)
    }
}

/// Runs the policies for a write whose objects are known before the store is locked (creates
/// and deletes): [`prepare`] then [`Prepared::check`].
pub(crate) fn admit(
    shared: &Shared,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
    old: Option<&Value>,
    warnings: &std::cell::RefCell<Vec<String>>,
) -> Result<(), ApiError> {
    match prepare(shared, attrs) {
        Some(prepared) => prepared.check(attrs, object, old, warnings),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bindings_key_is_the_stores_key_of_the_kind() {
        assert_eq!(BINDINGS_KEY, key("validatingadmissionpolicybindings"));
    }
}
