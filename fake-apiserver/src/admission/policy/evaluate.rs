//! Running the matching policies' expressions on a request and turning their decisions into
//! the answer (`validating.dispatcher` and `validating.validator`).

use std::collections::HashMap;

use cel::common::types::{CelMap, CelMapKey};
use cel::common::value::Val;
use serde_json::{json, Value};

use super::{matching, name_of, Attributes, Prepared};
use crate::cel::authz::{CelAuthorizer, ResourceCheck};
use crate::cel::{json_to_val, ResultKind};
use crate::error::{ApiError, StatusCause};

/// The variables every policy expression may use.
const VARS: &[&str] = &[
    "object",
    "oldObject",
    "request",
    "params",
    "namespaceObject",
    "variables",
    "authorizer",
    "authorizer.requestResource",
];

/// `authorizer` (the server's authorizer, asking about the requesting user) and
/// `authorizer.requestResource` (a check of what the request writes).
struct AuthzVars {
    authorizer: CelAuthorizer,
    request_resource: ResourceCheck,
}

/// The inputs of one evaluation.
#[derive(Clone, Copy)]
struct Input<'a> {
    object: &'a Value,
    old: &'a Value,
    request: &'a Value,
    params: &'a Value,
    namespace: &'a Value,
    variables: &'a [(String, cel::Value)],
    authz: &'a AuthzVars,
}

impl<'a> Input<'a> {
    fn vars(&self) -> Vec<(&'static str, Box<dyn Val + 'a>)> {
        let mut variables: HashMap<CelMapKey<'a>, Box<dyn Val + 'a>> = HashMap::new();
        for (name, value) in self.variables {
            if let Ok(v) = Box::<dyn Val>::try_from(value.clone()) {
                variables.insert(CelMapKey::from(name.clone()), v);
            }
        }
        let mut vars: Vec<(&'static str, Box<dyn Val + 'a>)> = vec![
            ("object", json_to_val(self.object)),
            ("oldObject", json_to_val(self.old)),
            ("request", json_to_val(self.request)),
            ("params", json_to_val(self.params)),
            ("namespaceObject", json_to_val(self.namespace)),
            ("variables", Box::new(CelMap::from(variables))),
        ];
        vars.extend(crate::cel::authz::values(
            &self.authz.authorizer,
            &self.authz.request_resource,
        ));
        vars
    }
}

/// The result of one expression: its value, or the error as the filter words it.
fn run(expr: &str, kind: ResultKind, input: &Input<'_>) -> Result<cel::Value, String> {
    crate::cel::conditions::run(expr, VARS, kind, input.vars())
}

/// One validation's decision.
struct Decision {
    deny: bool,
    message: String,
    reason: Option<String>,
    /// An audit annotation's error: a denial whatever the binding's `validationActions`.
    whatever_actions: bool,
}

/// A refusal, with where it came from.
struct Denied {
    policy: String,
    binding: Option<String>,
    message: String,
    reason: Option<String>,
}

pub(super) fn dispatch(
    prepared: &Prepared,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
    old: Option<&Value>,
    warnings: &std::cell::RefCell<Vec<String>>,
) -> Result<(), ApiError> {
    let null = Value::Null;
    let request = request_of(attrs, object, old);
    let namespace = prepared.namespace.as_ref().map(namespace_object);
    let authorizer = CelAuthorizer::new(attrs.user.clone(), prepared.authorizer.clone());
    let authz = AuthzVars {
        request_resource: authorizer.request_resource(
            &attrs.info.group,
            &attrs.info.plural,
            attrs.subresource.unwrap_or_default(),
            attrs.namespace,
            attrs.name,
        ),
        authorizer,
    };
    let mut denied: Vec<Denied> = Vec::new();
    for hook in &prepared.hooks {
        let spec = &hook.policy["spec"];
        let policy = name_of(&hook.policy).to_string();
        let fail = spec["failurePolicy"].as_str() != Some("Ignore");
        let config_error = |denied: &mut Vec<Denied>, binding: Option<&str>, err: &str| {
            if fail {
                let what = if binding.is_some() {
                    "binding"
                } else {
                    "policy"
                };
                denied.push(Denied {
                    policy: policy.clone(),
                    binding: binding.map(str::to_string),
                    message: format!("failed to configure {what}: {err}"),
                    reason: None,
                });
            }
        };
        match matching::matches(
            spec.get("matchConstraints"),
            attrs,
            object,
            old,
            prepared.namespace.as_ref(),
            true,
        ) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                config_error(&mut denied, None, &e);
                continue;
            }
        }
        for bound in &hook.bindings {
            let binding = name_of(&bound.binding).to_string();
            let bspec = &bound.binding["spec"];
            match matching::matches(
                bspec.get("matchResources"),
                attrs,
                object,
                old,
                prepared.namespace.as_ref(),
                false,
            ) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    config_error(&mut denied, Some(&binding), &e);
                    continue;
                }
            }
            let params = match &bound.params {
                Ok(p) => p,
                Err(e) => {
                    config_error(&mut denied, Some(&binding), e);
                    continue;
                }
            };
            let actions: Vec<&str> = bspec["validationActions"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for param in params {
                let input = Input {
                    object: object.unwrap_or(&null),
                    old: old.unwrap_or(&null),
                    request: &request,
                    params: param.as_ref().unwrap_or(&null),
                    namespace: namespace.as_ref().unwrap_or(&null),
                    variables: &[],
                    authz: &authz,
                };
                for decision in validate(spec, fail, input) {
                    if !decision.deny {
                        continue;
                    }
                    let denial = || Denied {
                        policy: policy.clone(),
                        binding: Some(binding.clone()),
                        message: decision.message.clone(),
                        reason: decision.reason.clone(),
                    };
                    if decision.whatever_actions {
                        denied.push(denial());
                        continue;
                    }
                    for action in &actions {
                        match *action {
                            "Deny" => denied.push(denial()),
                            "Warn" => warnings.borrow_mut().push(format!(
                                "Validation failed for ValidatingAdmissionPolicy '{policy}' with binding '{binding}': {}",
                                decision.message
                            )),
                            // Audit: there is no audit log to annotate.
                            _ => {}
                        }
                    }
                }
            }
        }
    }
    match denied.into_iter().next() {
        None => Ok(()),
        Some(d) => Err(denial(attrs, object, d)),
    }
}

/// The decisions of one policy for one param (`validator.Validate`).
fn validate(spec: &Value, fail: bool, input: Input<'_>) -> Vec<Decision> {
    let error = |message: String| Decision {
        deny: fail,
        message,
        reason: None,
        whatever_actions: false,
    };
    // matchConditions: any false skips the policy; errors otherwise follow the failure policy.
    let mut errors = Vec::new();
    for condition in spec["matchConditions"].as_array().into_iter().flatten() {
        let expr = condition["expression"].as_str().unwrap_or_default();
        match run(expr, ResultKind::Bool, &input) {
            Ok(cel::Value::Bool(false)) => return Vec::new(),
            Ok(_) => {}
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return if fail {
            vec![error(crate::rules::validation::aggregate_message(&errors))]
        } else {
            Vec::new()
        };
    }
    // Variables, in order; a later one may use the earlier ones.
    let mut variables: Vec<(String, cel::Value)> = Vec::new();
    for variable in spec["variables"].as_array().into_iter().flatten() {
        let name = variable["name"].as_str().unwrap_or_default();
        let expr = variable["expression"].as_str().unwrap_or_default();
        let with_earlier = Input {
            variables: &variables,
            ..input
        };
        match run(expr, ResultKind::Any, &with_earlier) {
            Ok(v) => variables.push((name.to_string(), v)),
            Err(e) => tracing::debug!(variable = name, error = %e, "policy variable failed"),
        }
    }
    let input = Input {
        variables: &variables,
        ..input
    };
    let mut decisions = Vec::new();
    for validation in spec["validations"].as_array().into_iter().flatten() {
        let expr = validation["expression"].as_str().unwrap_or_default();
        let decision = match run(expr, ResultKind::Bool, &input) {
            Err(e) => error(e),
            Ok(cel::Value::Bool(true)) => Decision {
                deny: false,
                message: String::new(),
                reason: None,
                whatever_actions: false,
            },
            Ok(_) => Decision {
                deny: true,
                message: failure_message(validation, expr, &input),
                reason: Some(
                    validation["reason"]
                        .as_str()
                        .unwrap_or("Invalid")
                        .to_string(),
                ),
                whatever_actions: false,
            },
        };
        decisions.push(decision);
    }
    decisions.extend(audit_annotation_errors(spec, fail, &input));
    decisions
}

/// The policy's `auditAnnotations` (there is no audit log to write them to, but their errors
/// count): a `valueExpression` that fails to compile or run denies the request under
/// `failurePolicy: Fail`, and one that gives neither a string nor null denies it whatever the
/// failure policy, both whatever the binding's `validationActions` (the dispatcher's
/// `AuditAnnotationActionError`).
fn audit_annotation_errors(spec: &Value, fail: bool, input: &Input<'_>) -> Vec<Decision> {
    let deny = |message: String| Decision {
        deny: true,
        message,
        reason: None,
        whatever_actions: true,
    };
    let mut errors = Vec::new();
    for annotation in spec["auditAnnotations"].as_array().into_iter().flatten() {
        let expr = annotation["valueExpression"].as_str().unwrap_or_default();
        match run(expr, ResultKind::Any, input) {
            Ok(cel::Value::String(_) | cel::Value::Null) => {}
            Ok(other) => errors.push(deny(format!(
                "valueExpression '{expr}' resulted in unsupported return type: {}. Return type must be either string or null.",
                cel_type_name(&other)
            ))),
            Err(e) if fail => errors.push(deny(e)),
            Err(_) => {}
        }
    }
    errors
}

/// The name cel-go prints for a value's type (an opaque one's own, `kubernetes.Quantity`).
fn cel_type_name(value: &cel::Value) -> String {
    match value {
        cel::Value::Opaque(o) => o.runtime_type_name().to_string(),
        other => crate::cel::type_name(other).to_string(),
    }
}

/// The message of a failed validation: `messageExpression` when it gives a usable string, else
/// `message`, else `failed expression: EXPR`.
fn failure_message(validation: &Value, expr: &str, input: &Input<'_>) -> String {
    if let Some(message_expr) = validation["messageExpression"].as_str() {
        match run(message_expr, ResultKind::String, input) {
            Ok(cel::Value::String(m)) => {
                let m = m.trim();
                if !m.is_empty() && !m.contains('\n') && m.len() <= 5 * 1024 {
                    return m.to_string();
                }
            }
            Ok(_) => {}
            Err(e) => tracing::debug!(error = %e, "error while evaluating messageExpression"),
        }
    }
    match validation["message"].as_str().map(str::trim) {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => format!("failed expression: {}", expr.trim()),
    }
}

/// The code a validation's `reason` answers with (`reasonToCode`).
fn code_of(reason: &str) -> u16 {
    match reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    }
}

/// The refusal: `admission.NewForbidden` with the decision's reason and code.
fn denial(attrs: &Attributes<'_>, object: Option<&Value>, d: Denied) -> ApiError {
    let message = match &d.binding {
        Some(b) => format!(
            "ValidatingAdmissionPolicy '{}' with binding '{b}' denied request: {}",
            d.policy, d.message
        ),
        None => format!(
            "ValidatingAdmissionPolicy '{}' denied request: {}",
            d.policy, d.message
        ),
    };
    let name = if !attrs.name.is_empty() {
        attrs.name.to_string()
    } else {
        let meta = object.and_then(|o| o.get("metadata"));
        let get = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        get("name")
            .or_else(|| get("generateName"))
            .unwrap_or("Unknown")
            .to_string()
    };
    let (group, plural) = (&attrs.info.group, &attrs.info.plural);
    let reason = d.reason.unwrap_or_else(|| "Invalid".to_string());
    let mut err = ApiError::new(
        code_of(&reason),
        &reason,
        format!(
            "{} \"{name}\" is forbidden: {message}",
            crate::error::qualified(group, plural)
        ),
    )
    .with_details(group, plural, &name);
    err.causes.push(StatusCause {
        field: String::new(),
        reason: String::new(),
        message,
    });
    tracing::debug!(message = %err.message, "denied by a ValidatingAdmissionPolicy");
    err
}

/// The `request` variable: the AdmissionRequest of the write.
fn request_of(attrs: &Attributes<'_>, object: Option<&Value>, old: Option<&Value>) -> Value {
    let info = attrs.info;
    let name = if attrs.name.is_empty() {
        object
            .or(old)
            .and_then(|o| o.pointer("/metadata/name"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    } else {
        attrs.name
    };
    let kind = json!({"group": info.group, "version": info.version, "kind": info.kind});
    let resource = json!({"group": info.group, "version": info.version, "resource": info.plural});
    let mut request = json!({
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "name": name,
        "namespace": attrs.namespace,
        "operation": attrs.operation.as_str(),
        "userInfo": {
            "username": attrs.user.name,
            "uid": attrs.user.uid,
            "groups": attrs.user.groups,
            "extra": attrs.user.extra,
        },
        "dryRun": attrs.dry_run,
    });
    if let Some(sub) = attrs.subresource {
        request["subResource"] = json!(sub);
        request["requestSubResource"] = json!(sub);
    }
    request
}

/// The `namespaceObject` variable: the namespace without its managed fields.
fn namespace_object(ns: &Value) -> Value {
    let mut ns = ns.clone();
    if let Some(meta) = ns.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    ns["apiVersion"] = json!("v1");
    ns["kind"] = json!("Namespace");
    ns
}
