//! What makes a schema structural: `schema.NewStructural` (which keywords a structural schema
//! cannot hold at all) and `schema.ValidateStructural` (`validateStructuralInvariants` and
//! `validateStructuralCompleteness` of `apiextensions-apiserver/pkg/apiserver/schema`).
//!
//! In a structural schema every node names its `type` (except under
//! `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields`), value validations
//! (`allOf`, `anyOf`, `oneOf`, `not`) hold no structure of their own, `metadata` at the root
//! may only restrict `name` and `generateName`, and `additionalProperties` never appears at the
//! root. Like upstream, the errors come back sorted by their text.

use serde_json::Value;

use super::openapi::{flag, present, props, text};
use super::Path;
use crate::rules::validation::Cause;

/// The level of a node in the structural tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// `schema.NewStructural`: the error (as its text) when the schema cannot be converted.
pub fn new_structural(s: &Value) -> Result<(), String> {
    convert(s)
}

fn unsupported_fields(s: &Value) -> Result<(), String> {
    let non_empty_str = |k: &str| !text(s, k).is_empty();
    let non_empty_map = |k: &str| {
        s.get(k)
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
    };
    if non_empty_str("id") {
        return Err("OpenAPIV3Schema 'id' is not supported".into());
    }
    if non_empty_str("$schema") {
        return Err("OpenAPIV3Schema 'schema' is not supported".into());
    }
    if non_empty_str("$ref") {
        return Err("OpenAPIV3Schema '$ref' is not supported".into());
    }
    if non_empty_map("patternProperties") {
        return Err("OpenAPIV3Schema 'patternProperties' is not supported".into());
    }
    if non_empty_map("dependencies") {
        return Err("OpenAPIV3Schema 'dependencies' is not supported".into());
    }
    if present(s, "additionalItems").is_some() {
        return Err("OpenAPIV3Schema 'additionalItems' is not supported".into());
    }
    if non_empty_map("definitions") {
        return Err("OpenAPIV3Schema 'definitions' is not supported".into());
    }
    Ok(())
}

fn convert(s: &Value) -> Result<(), String> {
    if !s.is_object() {
        return Ok(());
    }
    unsupported_fields(s)?;
    value_validation(s)?;
    if s.get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(false)
    {
        return Err(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                .into(),
        );
    }
    children(s)
}

fn value_validation(s: &Value) -> Result<(), String> {
    if let Some(not) = present(s, "not") {
        convert_nested(not)?;
    }
    for junctor in ["allOf", "anyOf", "oneOf"] {
        for clause in s
            .get(junctor)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            convert_nested(clause)?;
        }
    }
    Ok(())
}

fn convert_nested(s: &Value) -> Result<(), String> {
    if !s.is_object() {
        return Ok(());
    }
    unsupported_fields(s)?;
    value_validation(s)?;
    if s.get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(false)
    {
        return Err(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                .into(),
        );
    }
    children_with(s, convert_nested)
}

fn children(s: &Value) -> Result<(), String> {
    children_with(s, convert)
}

fn children_with(s: &Value, f: fn(&Value) -> Result<(), String>) -> Result<(), String> {
    match present(s, "items") {
        Some(Value::Array(list)) if !list.is_empty() => {
            return Err("OpenAPIV3Schema 'items' must be a schema, but is an array".into())
        }
        Some(items) => f(items)?,
        None => {}
    }
    for prop in props(s).into_iter().flat_map(|p| p.values()) {
        f(prop)?;
    }
    if let Some(additional) = present(s, "additionalProperties").filter(|a| a.is_object()) {
        f(additional)?;
    }
    Ok(())
}

/// Whether a schema is structural (converts, and validates without errors).
pub fn is_structural(s: &Value) -> bool {
    new_structural(s).is_ok() && validate(&Path::new(""), s).is_empty()
}

/// `ValidateStructural`: the invariants and the completeness of value validations, sorted.
pub fn validate(path: &Path, s: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    invariants(s, Level::Root, path, &mut causes);
    completeness(s, path, &mut causes);
    causes.sort_by_key(|c| c.error_text());
    causes
}

/// The two `x-kubernetes-int-or-string` shapes of value validation that may carry types:
/// `anyOf: [{type: integer}, {type: string}]`.
fn is_int_or_string_any_of(any_of: Option<&Value>) -> bool {
    let Some(list) = any_of.and_then(Value::as_array) else {
        return false;
    };
    let only_type = |v: &Value, ty: &str| {
        v.as_object()
            .is_some_and(|m| m.len() == 1 && m.get("type").and_then(Value::as_str) == Some(ty))
    };
    list.len() == 2 && only_type(&list[0], "integer") && only_type(&list[1], "string")
}

fn items_schema(s: &Value) -> Option<&Value> {
    present(s, "items").filter(|i| i.is_object())
}

fn invariants(s: &Value, level: Level, path: &Path, causes: &mut Vec<Cause>) {
    if !s.is_object() {
        return;
    }
    let ty = text(s, "type");
    let items = items_schema(s);
    if ty == "array" && items.is_none() {
        causes.push(Cause::required(path.child("items"), "must be specified"));
    }
    if let Some(items) = items {
        invariants(items, Level::Item, &path.child("items"), causes);
    }
    if let Some(properties) = props(s) {
        for (k, v) in properties {
            invariants(v, Level::Field, &path.child("properties").key(k), causes);
        }
    }
    let additional = present(s, "additionalProperties");
    if let Some(additional) = additional {
        if level == Level::Root {
            causes.push(Cause::forbidden(
                path.child("additionalProperties"),
                "must not be used at the root",
            ));
        }
        if additional.is_object() {
            invariants(
                additional,
                Level::Field,
                &path.child("additionalProperties"),
                causes,
            );
        }
    }

    let int_or_string = flag(s, "x-kubernetes-int-or-string");
    let preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
    let embedded = flag(s, "x-kubernetes-embedded-resource");
    if int_or_string && preserve {
        causes.push(Cause::invalid(
            path.child("x-kubernetes-preserve-unknown-fields"),
            &Value::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        causes.push(Cause::invalid(
            path.child("x-kubernetes-embedded-resource"),
            &Value::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }

    let skip_any_of = is_int_or_string_any_of(s.get("anyOf"));
    let skip_first_all_of_any_of = s
        .get("allOf")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .is_some_and(|first| is_int_or_string_any_of(first.get("anyOf")));
    value_validation_rules(
        s,
        skip_any_of,
        skip_first_all_of_any_of,
        level,
        path,
        causes,
    );

    let check_metadata = level == Level::Root || embedded;
    if embedded && ty != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        causes.push(if ty.is_empty() {
            Cause::required(path.child("type"), detail)
        } else {
            Cause::invalid_str(path.child("type"), ty, detail)
        });
    } else if ty.is_empty() && !int_or_string && !preserve {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        causes.push(Cause::required(path.child("type"), detail));
    }
    if embedded && additional.is_some() {
        causes.push(Cause::forbidden(
            path.child("additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        causes.push(Cause::invalid_str(
            path.child("type"),
            ty,
            "must be object at the root",
        ));
    }
    if check_metadata {
        for key in ["kind", "apiVersion"] {
            if let Some(prop) = props(s).and_then(|p| p.get(key)) {
                let prop_type = text(prop, "type");
                if prop_type != "string" {
                    causes.push(Cause::invalid_str(
                        path.child("properties").key(key).child("type"),
                        prop_type,
                        "must be string",
                    ));
                }
            }
        }
    }
    if let Some(metadata) = props(s).and_then(|p| p.get("metadata")) {
        metadata_invariants(
            metadata,
            check_metadata,
            level,
            &path.child("properties").key("metadata"),
            causes,
        );
    }
    if embedded && !preserve && props(s).is_none_or(|p| p.is_empty()) {
        causes.push(Cause::required(
            path.child("properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// `validateStructuralMetadataInvariants`.
fn metadata_invariants(
    s: &Value,
    check_metadata: bool,
    level: Level,
    path: &Path,
    causes: &mut Vec<Cause>,
) {
    let ty = text(s, "type");
    if check_metadata && ty != "object" {
        causes.push(Cause::invalid_str(path.child("type"), ty, "must be object"));
    }
    if level != Level::Root {
        return;
    }
    let Some(m) = s.as_object() else {
        return;
    };
    // Only `name` and `generateName` may be restricted; the type and a default do not count.
    let only_names = props(s).is_none_or(|p| p.keys().all(|k| k == "name" || k == "generateName"));
    let anything_else = m.iter().any(|(k, v)| match k.as_str() {
        "type" | "default" => false,
        "properties" => !only_names,
        _ => match v {
            Value::Null | Value::Bool(false) => false,
            Value::String(s) => !s.is_empty(),
            _ => true,
        },
    });
    if anything_else {
        causes.push(Cause::forbidden(
            path,
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
}

/// `validateValueValidation`: the junctors of a node hold no structure.
fn value_validation_rules(
    s: &Value,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    level: Level,
    path: &Path,
    causes: &mut Vec<Cause>,
) {
    if !skip_any_of {
        for (i, clause) in s
            .get("anyOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            nested(clause, false, level, &path.child("anyOf").index(i), causes);
        }
    }
    for (i, clause) in s
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let skip = skip_first_all_of_any_of && i == 0;
        nested(clause, skip, level, &path.child("allOf").index(i), causes);
    }
    for (i, clause) in s
        .get("oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        nested(clause, false, level, &path.child("oneOf").index(i), causes);
    }
    if let Some(not) = present(s, "not") {
        nested(not, false, level, &path.child("not"), causes);
    }
}

/// `validateNestedValueValidation`.
fn nested(v: &Value, skip_any_of: bool, level: Level, path: &Path, causes: &mut Vec<Cause>) {
    if !v.is_object() {
        return;
    }
    value_validation_rules(v, skip_any_of, false, level, path, causes);
    if let Some(items) = items_schema(v) {
        nested(items, false, level, &path.child("items"), causes);
    }
    if let Some(properties) = props(v) {
        for (k, p) in properties {
            nested(
                p,
                false,
                Level::Field,
                &path.child("properties").key(k),
                causes,
            );
        }
    }
    if !text(v, "type").is_empty() {
        causes.push(Cause::forbidden(
            path.child("type"),
            "must be empty to be structural",
        ));
    }
    match present(v, "additionalProperties") {
        Some(Value::Bool(false)) | None => {}
        Some(_) => causes.push(Cause::forbidden(
            path.child("additionalProperties"),
            "must be undefined to be structural",
        )),
    }
    if present(v, "default").is_some() {
        causes.push(Cause::forbidden(
            path.child("default"),
            "must be undefined to be structural",
        ));
    }
    if !text(v, "title").is_empty() {
        causes.push(Cause::forbidden(
            path.child("title"),
            "must be empty to be structural",
        ));
    }
    if !text(v, "description").is_empty() {
        causes.push(Cause::forbidden(
            path.child("description"),
            "must be empty to be structural",
        ));
    }
    for (key, detail) in [
        ("nullable", "must be false to be structural"),
        (
            "x-kubernetes-preserve-unknown-fields",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-embedded-resource",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-int-or-string",
            "must be false to be structural",
        ),
    ] {
        if flag(v, key) {
            causes.push(Cause::forbidden(path.child(key), detail));
        }
    }
    if v.get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        causes.push(Cause::forbidden(
            path.child("x-kubernetes-list-map-keys"),
            "must be empty to be structural",
        ));
    }
    for key in ["x-kubernetes-list-type", "x-kubernetes-map-type"] {
        if present(v, key).is_some() {
            causes.push(Cause::forbidden(
                path.child(key),
                "must be undefined to be structural",
            ));
        }
    }
    if v.get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        causes.push(Cause::forbidden(
            path.child("x-kubernetes-validations"),
            "must be empty to be structural",
        ));
    }
    if props(v).is_some_and(|p| p.contains_key("metadata")) {
        causes.push(Cause::forbidden(
            path.child("properties").key("metadata"),
            "must not be specified in a nested context",
        ));
    }
}

/// `validateStructuralCompleteness`: every property and item a value validation of the root
/// talks about is specified in the structure.
fn completeness(s: &Value, path: &Path, causes: &mut Vec<Cause>) {
    junctor_completeness(s, Some(s), path, path, causes);
}

fn junctor_completeness(
    v: &Value,
    s: Option<&Value>,
    s_path: &Path,
    v_path: &Path,
    causes: &mut Vec<Cause>,
) {
    if let Some(not) = present(v, "not") {
        nested_completeness(not, s, s_path, &v_path.child("not"), causes);
    }
    for junctor in ["allOf", "anyOf", "oneOf"] {
        for (i, clause) in v
            .get(junctor)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            nested_completeness(clause, s, s_path, &v_path.child(junctor).index(i), causes);
        }
    }
}

fn nested_completeness(
    v: &Value,
    s: Option<&Value>,
    s_path: &Path,
    v_path: &Path,
    causes: &mut Vec<Cause>,
) {
    if !v.is_object() {
        return;
    }
    let Some(s) = s else {
        causes.push(Cause::required(
            s_path,
            &format!("because it is defined in {v_path}"),
        ));
        return;
    };
    junctor_completeness(v, Some(s), s_path, v_path, causes);
    if let Some(items) = items_schema(v) {
        nested_completeness(
            items,
            items_schema(s),
            &s_path.child("items"),
            &v_path.child("items"),
            causes,
        );
    }
    if let Some(properties) = props(v) {
        for (k, p) in properties {
            let s_child = s_path.child("properties").key(k);
            let v_child = v_path.child("properties").key(k);
            match props(s).and_then(|sp| sp.get(k)) {
                None => causes.push(Cause::required(
                    &s_child,
                    &format!("because it is defined in {v_child}"),
                )),
                Some(sp) => nested_completeness(p, Some(sp), &s_child, &v_child, causes),
            }
        }
    }
}
