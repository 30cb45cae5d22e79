//! CRD `x-kubernetes-validations`: compiled when a CRD is written (a rule that does not compile
//! refuses the CRD, as `ValidateCustomResourceDefinitionOpenAPISchema` does) and evaluated on
//! every write of a custom resource (`schema/cel.Validator`), with the real field errors:
//! `spec: Invalid value: "object": <message>` at the node the rule is on (or its `fieldPath`),
//! the `reason` choosing the cause type, `messageExpression` for the message, transition rules
//! (those using `oldSelf`) only on update unless `optionalOldSelf`, and ratcheting: on update
//! a failing rule that does not use `oldSelf` on a value that did not change is a warning.

use cel::common::types::CelOptional;
use cel::common::value::Val;
use serde_json::Value;

use super::{
    check_fields, compile, schema_json_to_val, CompileError, FieldSchema, Program, ResultKind,
};
use crate::rules::validation::{go_quote, Cause, FieldErrorType};

/// The variables a rule sees.
const VARS: &[&str] = &["self", "oldSelf"];

/// The rules of one schema node.
fn rules(s: &Value) -> &[Value] {
    s.get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn text<'a>(rule: &'a Value, key: &str) -> &'a str {
    rule.get(key).and_then(Value::as_str).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Compilation, when the CRD is written.
// ---------------------------------------------------------------------------------------------

/// The compilation errors of every rule in `schema` (the CRD's `openAPIV3Schema` at `path`), as
/// `field.Invalid(<path>.x-kubernetes-validations[i].rule, <the rule>, "compilation failed: ...")`.
pub fn compile_causes(schema: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    compile_node(schema, path, true, None, &mut causes);
    causes
}

fn compile_node(
    s: &Value,
    path: &str,
    resource_root: bool,
    uncorrelatable: Option<&str>,
    causes: &mut Vec<Cause>,
) {
    if !s.is_object() {
        return;
    }
    for (i, rule) in rules(s).iter().enumerate() {
        let rule_path = format!("{path}.x-kubernetes-validations[{i}]");
        let expr = text(rule, "rule");
        if expr.trim().is_empty() {
            continue;
        }
        let fields = FieldSchema {
            schema: s,
            resource_root,
        };
        let compiled = compile(expr, VARS, ResultKind::Bool).and_then(|p| {
            check_fields(&p, &fields).map_err(|e| CompileError {
                message: e.message,
                wrong_type: false,
                instantiation: false,
            })?;
            Ok(p)
        });
        let program = match compiled {
            Ok(p) => Some(p),
            Err(e) => {
                causes.push(Cause::new(
                    FieldErrorType::Invalid,
                    format!("{rule_path}.rule"),
                    Some(go_rule(rule)),
                    &e.detail(),
                ));
                None
            }
        };
        let message_expr = text(rule, "messageExpression");
        if !message_expr.trim().is_empty() {
            if let Err(e) = compile(message_expr, VARS, ResultKind::String) {
                let detail = if e.is_type_error() {
                    "messageExpression must evaluate to a string".to_string()
                } else if e.instantiation {
                    format!("messageExpression instantiation failed: {}", e.message)
                } else {
                    format!("messageExpression compilation failed: {}", e.message)
                };
                causes.push(Cause::new(
                    FieldErrorType::Invalid,
                    format!("{rule_path}.messageExpression"),
                    Some(go_rule(rule)),
                    &detail,
                ));
            }
        }
        let Some(program) = program else { continue };
        if program.uses("oldSelf") {
            if let Some(within) = uncorrelatable {
                causes.push(Cause::invalid_str(
                    format!("{rule_path}.rule"),
                    expr,
                    &format!(
                        "oldSelf cannot be used on the uncorrelatable portion of the schema within {within}"
                    ),
                ));
            }
        } else if let Some(optional) = rule.get("optionalOldSelf").and_then(Value::as_bool) {
            causes.push(Cause::invalid(
                format!("{rule_path}.optionalOldSelf"),
                &Value::Bool(optional),
                "may not be set if oldSelf is not used in rule",
            ));
        }
    }
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        let mut keys: Vec<&String> = props.keys().collect();
        keys.sort();
        for k in keys {
            let prop = &props[k.as_str()];
            compile_node(
                prop,
                &format!("{path}.properties[{k}]"),
                embedded(prop),
                uncorrelatable,
                causes,
            );
        }
    }
    if let Some(additional) = s.get("additionalProperties").filter(|a| a.is_object()) {
        compile_node(
            additional,
            &format!("{path}.additionalProperties"),
            embedded(additional),
            uncorrelatable,
            causes,
        );
    }
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        let within = if s.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map") {
            uncorrelatable.map(str::to_string)
        } else {
            Some(uncorrelatable.unwrap_or(path).to_string())
        };
        compile_node(
            items,
            &format!("{path}.items"),
            embedded(items),
            within.as_deref(),
            causes,
        );
    }
}

fn embedded(s: &Value) -> bool {
    s.get("x-kubernetes-embedded-resource")
        .and_then(Value::as_bool)
        == Some(true)
}

/// A rule as Go's `%#v` prints the internal `apiextensions.ValidationRule` in a field error.
/// Set pointers print as an address in Go; a fixed one stands in for it here.
fn go_rule(rule: &Value) -> String {
    let pointer = |key: &str, ty: &str| {
        if rule.get(key).is_some_and(|v| !v.is_null()) {
            format!("({ty})(0xc000000000)")
        } else {
            format!("({ty})(nil)")
        }
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
        go_quote(text(rule, "rule")),
        go_quote(text(rule, "message")),
        go_quote(text(rule, "messageExpression")),
        pointer("reason", "*apiextensions.FieldValueErrorReason"),
        go_quote(text(rule, "fieldPath")),
        pointer("optionalOldSelf", "*bool"),
    )
}

// ---------------------------------------------------------------------------------------------
// Evaluation, on every write of a custom resource.
// ---------------------------------------------------------------------------------------------

/// What the rules said about a write.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Field errors (the write is refused with 422 when there are any).
    pub causes: Vec<Cause>,
    /// Warnings: failures on values the update did not change (ratcheting).
    pub warnings: Vec<String>,
}

/// Whether a schema has rules anywhere.
pub fn has_rules(s: &Value) -> bool {
    if !rules(s).is_empty() {
        return true;
    }
    let children = s
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.values())
        .chain(s.get("additionalProperties").filter(|a| a.is_object()))
        .chain(s.get("items").filter(|i| i.is_object()));
    for child in children {
        if has_rules(child) {
            return true;
        }
    }
    false
}

/// Evaluates every rule of `schema` on `obj` (`old` on update).
pub fn validate(schema: &Value, obj: &Value, old: Option<&Value>) -> Outcome {
    let mut out = Outcome::default();
    let ratchet = old.is_some_and(|o| crate::store::value_eq::equal(o, obj));
    validate_node(schema, obj, old, "", true, ratchet, &mut out);
    out
}

fn field(path: &str) -> String {
    if path.is_empty() {
        "<nil>".to_string()
    } else {
        path.to_string()
    }
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn validate_node(
    s: &Value,
    obj: &Value,
    old: Option<&Value>,
    path: &str,
    resource_root: bool,
    ratchet: bool,
    out: &mut Outcome,
) {
    if obj.is_null() || !s.is_object() {
        return;
    }
    let old = old.filter(|o| !o.is_null());
    let ty = s.get("type").and_then(Value::as_str).unwrap_or_default();
    for rule in rules(s) {
        evaluate_rule(s, rule, obj, old, path, resource_root, ratchet, ty, out);
    }
    match obj {
        Value::Object(m) => {
            let props = s.get("properties").and_then(Value::as_object);
            let additional = s.get("additionalProperties").filter(|a| a.is_object());
            for (k, v) in m {
                let prop = props.and_then(|p| p.get(k));
                let (sub, sub_path) = match (prop, additional) {
                    (Some(p), _) => (p, child(path, k)),
                    (None, Some(a)) => (a, format!("{path}[{k}]")),
                    _ => continue,
                };
                let old_v = old.and_then(|o| o.get(k));
                let sub_ratchet = old_v.is_some_and(|o| crate::store::value_eq::equal(o, v));
                validate_node(sub, v, old_v, &sub_path, embedded(sub), sub_ratchet, out);
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = s.get("items").filter(|i| i.is_object()) else {
                return;
            };
            let keys: Vec<&str> =
                if s.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map") {
                    s.get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .map(|ks| ks.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default()
                } else {
                    Vec::new()
                };
            let old_items = old.and_then(Value::as_array);
            for (i, item) in items.iter().enumerate() {
                // Only the items of a map list correlate with old ones (by their keys).
                let old_item = if keys.is_empty() {
                    None
                } else {
                    old_items.and_then(|olds| {
                        olds.iter()
                            .find(|o| keys.iter().all(|k| o.get(*k) == item.get(*k)))
                    })
                };
                let item_ratchet = match old_item {
                    Some(o) => crate::store::value_eq::equal(o, item),
                    None if keys.is_empty() => ratchet,
                    None => false,
                };
                validate_node(
                    item_schema,
                    item,
                    old_item,
                    &format!("{path}[{i}]"),
                    embedded(item_schema),
                    item_ratchet,
                    out,
                );
            }
        }
        _ => {}
    }
}

#[allow(clippy::too_many_arguments)]
fn evaluate_rule(
    s: &Value,
    rule: &Value,
    obj: &Value,
    old: Option<&Value>,
    path: &str,
    resource_root: bool,
    ratchet: bool,
    ty: &str,
    out: &mut Outcome,
) {
    let expr = text(rule, "rule");
    if expr.trim().is_empty() {
        return;
    }
    let program = match compile(expr, VARS, ResultKind::Bool) {
        Ok(p) => p,
        Err(e) => {
            out.causes.push(Cause::invalid_str(
                field(path),
                ty,
                &format!("rule compile error: {}", e.detail()),
            ));
            return;
        }
    };
    let optional_old_self = rule.get("optionalOldSelf").and_then(Value::as_bool) == Some(true);
    let uses_old_self = program.uses("oldSelf");
    if uses_old_self && old.is_none() && !optional_old_self {
        // Transition rules run only when there is an old value to compare with.
        return;
    }
    let vars = activation(s, obj, old, resource_root, optional_old_self);
    let error_string = rule_error_string(rule);
    let result = program.eval_bool(vars);
    match result {
        Ok(true) => {}
        Ok(false) => {
            let mut at = path.to_string();
            let field_path = text(rule, "fieldPath");
            if !field_path.is_empty() {
                at = child(path, &normalize_field_path(field_path));
            }
            let detail = message_of(s, rule, obj, old, resource_root, optional_old_self);
            let cause = match rule.get("reason").and_then(Value::as_str) {
                Some("FieldValueForbidden") => Cause::forbidden(field(&at), &detail),
                Some("FieldValueRequired") => Cause::required(field(&at), &detail),
                Some("FieldValueDuplicate") => Cause::duplicate(field(&at), &Value::String(ty.into())),
                _ => Cause::invalid_str(field(&at), ty, &detail),
            };
            if !uses_old_self && ratchet {
                out.warnings.push(cause.error_text());
            } else {
                out.causes.push(cause);
            }
        }
        Err(e) if e.no_such_overload => out.causes.push(Cause::invalid_str(
            field(path),
            ty,
            &format!(
                "'{}': call arguments did not match a supported operator, function or macro signature for rule: {error_string}",
                e.message
            ),
        )),
        Err(e) => out.causes.push(Cause::invalid_str(
            field(path),
            ty,
            &format!("{} evaluating rule: {error_string}", e.message),
        )),
    }
}

fn activation<'a>(
    s: &'a Value,
    obj: &'a Value,
    old: Option<&'a Value>,
    resource_root: bool,
    optional_old_self: bool,
) -> Vec<(&'static str, Box<dyn Val + 'a>)> {
    let mut vars: Vec<(&'static str, Box<dyn Val + 'a>)> =
        vec![("self", schema_json_to_val(obj, Some(s), resource_root))];
    let old_val = old.map(|o| schema_json_to_val(o, Some(s), resource_root));
    match (optional_old_self, old_val) {
        (true, Some(v)) => vars.push(("oldSelf", Box::new(CelOptional::of(v)))),
        (true, None) => vars.push(("oldSelf", Box::new(CelOptional::none()))),
        (false, Some(v)) => vars.push(("oldSelf", v)),
        (false, None) => {}
    }
    vars
}

/// The message of a failed rule: its `messageExpression` when that evaluates to a usable
/// string, else `message`, else `failed rule: <rule>`.
fn message_of(
    s: &Value,
    rule: &Value,
    obj: &Value,
    old: Option<&Value>,
    resource_root: bool,
    optional_old_self: bool,
) -> String {
    let message_expr = text(rule, "messageExpression");
    if !message_expr.trim().is_empty() {
        if let Ok(program) = compile(message_expr, VARS, ResultKind::String) {
            let vars = activation(s, obj, old, resource_root, optional_old_self);
            match program.eval(vars) {
                Ok(cel::Value::String(m)) => {
                    let m = m.trim();
                    if !m.is_empty() && !m.contains('\n') && m.len() <= 5 * 1024 {
                        return m.to_string();
                    }
                    tracing::debug!("messageExpression gave an unusable message");
                }
                Ok(_) => tracing::debug!("messageExpression failed to convert to string"),
                Err(e) => tracing::debug!(error = %e, "messageExpression evaluation failed"),
            }
        }
    }
    let message = text(rule, "message");
    if message.is_empty() {
        format!("failed rule: {}", rule_error_string(rule))
    } else {
        message.trim().to_string()
    }
}

fn rule_error_string(rule: &Value) -> String {
    let message = text(rule, "message");
    if message.is_empty() {
        text(rule, "rule").trim().to_string()
    } else {
        message.trim().to_string()
    }
}

/// A rule's `fieldPath` as a field path relative to the rule's node: `.spec.a['x.y']` →
/// `spec.a[x.y]` (a map key in brackets, as `field.Path.Key` prints it). Named properties in
/// brackets print as children.
fn normalize_field_path(fp: &str) -> String {
    let mut out = String::new();
    let mut rest = fp;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&r[..end]);
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']").unwrap_or(r.len());
            let name = r[..end].replace("\\'", "'");
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&name);
            rest = r.get(end + 2..).unwrap_or_default();
        } else {
            out.push_str(rest);
            break;
        }
    }
    out
}

/// The compiled program of a rule (for tests and callers that want it).
pub fn program(rule: &str) -> Result<std::sync::Arc<Program>, CompileError> {
    compile(rule, VARS, ResultKind::Bool)
}

/// Cause types of schema errors that keep the rules from running
/// (`hasBlockingErr` of the custom resource strategy).
const BLOCKING: &[&str] = &[
    "FieldValueNotSupported",
    "FieldValueRequired",
    "FieldValueTooLong",
    "FieldValueTooMany",
    "FieldValueTypeInvalid",
];

/// The rules' part of a custom resource write, after its schema validation found `schema_causes`:
/// one "not checked" error when those block the rules, else the rules' errors; ratcheted
/// failures go to `warnings`.
pub fn after_schema(
    schema: &Value,
    object: &Value,
    old: Option<&Value>,
    schema_causes: &[Cause],
    warnings: &std::cell::RefCell<Vec<String>>,
) -> Vec<Cause> {
    if !has_rules(schema) {
        return Vec::new();
    }
    if schema_causes
        .iter()
        .any(|c| BLOCKING.contains(&c.reason.as_str()))
    {
        return vec![Cause::new(
            FieldErrorType::Invalid,
            "<nil>",
            Some("\"null\"".to_string()),
            "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
        )];
    }
    let outcome = validate(schema, object, old);
    warnings.borrow_mut().extend(outcome.warnings);
    outcome.causes
}
