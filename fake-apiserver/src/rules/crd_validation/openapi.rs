//! The OpenAPI v3 rules on a CRD's schemas: `validateCustomResourceDefinitionValidation`,
//! `ValidateCustomResourceDefinitionOpenAPISchema`, `specStandardValidatorV3.validate` and
//! `validateMapListKeysMapSet` of `apiextensions/validation/validation.go`, plus the whole-schema
//! predicates (`SchemaHas` and friends) that decide which rules apply.
//!
//! Schema nodes are walked with their properties in key order (upstream walks a Go map, so its
//! order of errors for sibling properties is not fixed).

use serde_json::{Map, Value};

use super::{defaults, go_value, structural, Options, Path};
use crate::rules::validation::{Cause, FieldErrorType};

/// The OpenAPI v3 types a schema may name.
const OPENAPI_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// The properties of a resource (and of an embedded resource) that hold TypeMeta and ObjectMeta.
const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// The `JSONSchemaProps` fields, in the Go struct's order, with their JSON names.
const SCHEMA_FIELDS: [(&str, &str); 44] = [
    ("ID", "id"),
    ("Schema", "$schema"),
    ("Ref", "$ref"),
    ("Description", "description"),
    ("Type", "type"),
    ("Nullable", "nullable"),
    ("Format", "format"),
    ("Title", "title"),
    ("Default", "default"),
    ("Maximum", "maximum"),
    ("ExclusiveMaximum", "exclusiveMaximum"),
    ("Minimum", "minimum"),
    ("ExclusiveMinimum", "exclusiveMinimum"),
    ("MaxLength", "maxLength"),
    ("MinLength", "minLength"),
    ("Pattern", "pattern"),
    ("MaxItems", "maxItems"),
    ("MinItems", "minItems"),
    ("UniqueItems", "uniqueItems"),
    ("MultipleOf", "multipleOf"),
    ("Enum", "enum"),
    ("MaxProperties", "maxProperties"),
    ("MinProperties", "minProperties"),
    ("Required", "required"),
    ("Items", "items"),
    ("AllOf", "allOf"),
    ("OneOf", "oneOf"),
    ("AnyOf", "anyOf"),
    ("Not", "not"),
    ("Properties", "properties"),
    ("AdditionalProperties", "additionalProperties"),
    ("PatternProperties", "patternProperties"),
    ("Dependencies", "dependencies"),
    ("AdditionalItems", "additionalItems"),
    ("Definitions", "definitions"),
    ("ExternalDocs", "externalDocs"),
    ("Example", "example"),
    (
        "XPreserveUnknownFields",
        "x-kubernetes-preserve-unknown-fields",
    ),
    ("XEmbeddedResource", "x-kubernetes-embedded-resource"),
    ("XIntOrString", "x-kubernetes-int-or-string"),
    ("XListMapKeys", "x-kubernetes-list-map-keys"),
    ("XListType", "x-kubernetes-list-type"),
    ("XMapType", "x-kubernetes-map-type"),
    ("XValidations", "x-kubernetes-validations"),
];

/// The fields a root schema may have when the status subresource is enabled.
const ALLOWED_AT_ROOT: [&str; 22] = [
    "Description",
    "Type",
    "Format",
    "Title",
    "Maximum",
    "ExclusiveMaximum",
    "Minimum",
    "ExclusiveMinimum",
    "MaxLength",
    "MinLength",
    "Pattern",
    "MaxItems",
    "MinItems",
    "UniqueItems",
    "MultipleOf",
    "Required",
    "Items",
    "Properties",
    "ExternalDocs",
    "Example",
    "XPreserveUnknownFields",
    "XValidations",
];

/// The `reason`s an `x-kubernetes-validations` rule may give.
const VALIDATION_REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

pub(super) fn flag(s: &Value, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or(false)
}

pub(super) fn text<'a>(s: &'a Value, key: &str) -> &'a str {
    s.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// A field that is present and not null.
pub(super) fn present<'a>(s: &'a Value, key: &str) -> Option<&'a Value> {
    s.get(key).filter(|v| !v.is_null())
}

pub(super) fn props(s: &Value) -> Option<&Map<String, Value>> {
    s.get("properties").and_then(Value::as_object)
}

fn non_empty_map(s: &Value, key: &str) -> bool {
    s.get(key)
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty())
}

fn non_empty_list<'a>(s: &'a Value, key: &str) -> Option<&'a Vec<Value>> {
    s.get(key)
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
}

/// Whether a Go struct field is non-zero: a true bool, a non-empty string, any other set value.
fn is_set(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// `SchemaHas`: whether `pred` holds for `s` or any schema below it.
pub fn schema_has(s: &Value, pred: &dyn Fn(&Value) -> bool) -> bool {
    if !s.is_object() {
        return false;
    }
    if pred(s) {
        return true;
    }
    let sub = |v: Option<&Value>| v.is_some_and(|v| schema_has(v, pred));
    let each = |v: Option<&Value>| {
        v.and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|x| schema_has(x, pred)))
    };
    let each_value = |v: Option<&Value>| {
        v.and_then(Value::as_object)
            .is_some_and(|m| m.values().any(|x| schema_has(x, pred)))
    };
    match s.get("items") {
        Some(items @ Value::Array(_)) => {
            if each(Some(items)) {
                return true;
            }
        }
        other => {
            if sub(other) {
                return true;
            }
        }
    }
    each(s.get("allOf"))
        || each(s.get("anyOf"))
        || each(s.get("oneOf"))
        || sub(s.get("not"))
        || each_value(s.get("properties"))
        || sub(s.get("additionalProperties"))
        || each_value(s.get("patternProperties"))
        || sub(s.get("additionalItems"))
        || each_value(s.get("definitions"))
        || each_value(s.get("dependencies"))
}

/// Whether a schema node uses a Kubernetes extension that needs a structural schema.
pub fn has_kubernetes_extensions(s: &Value) -> bool {
    flag(s, "x-kubernetes-embedded-resource")
        || present(s, "x-kubernetes-preserve-unknown-fields").is_some()
        || flag(s, "x-kubernetes-int-or-string")
        || non_empty_list(s, "x-kubernetes-list-map-keys").is_some()
        || present(s, "x-kubernetes-list-type").is_some()
        || non_empty_list(s, "x-kubernetes-validations").is_some()
}

/// `SchemaHasInvalidTypes`.
pub fn has_invalid_types(s: &Value) -> bool {
    schema_has(s, &|n| {
        let t = text(n, "type");
        !t.is_empty() && !OPENAPI_TYPES.contains(&t)
    })
}

/// `hasNonAtomicSetType`.
pub fn has_non_atomic_set_type(s: &Value) -> bool {
    schema_has(s, &|n| {
        if text(n, "x-kubernetes-list-type") != "set" {
            return false;
        }
        let Some(items) = n.get("items").filter(|i| i.is_object()) else {
            return false;
        };
        match text(items, "type") {
            "array" => present(items, "x-kubernetes-list-type")
                .is_some_and(|t| t.as_str() != Some("atomic")),
            "object" => text(items, "x-kubernetes-map-type") != "atomic",
            _ => false,
        }
    })
}

/// `hasInvalidMapListKeysMapSet`.
pub fn has_invalid_map_list_keys(s: &Value) -> bool {
    schema_has(s, &|n| !map_list_keys_map_set(n, &Path::new("")).is_empty())
}

/// `specStandardValidatorV3`: where defaults are allowed and whether we are inside resource
/// metadata.
#[derive(Debug, Clone)]
struct StandardValidator {
    allow_defaults: bool,
    disallow_defaults_reason: String,
    inside_resource_meta: bool,
    require_valid_property_type: bool,
}

impl StandardValidator {
    fn with_forbidden_defaults(&self, reason: &str) -> Self {
        StandardValidator {
            allow_defaults: false,
            disallow_defaults_reason: reason.to_string(),
            ..self.clone()
        }
    }

    fn with_inside_resource_meta(&self) -> Self {
        StandardValidator {
            inside_resource_meta: true,
            ..self.clone()
        }
    }

    /// `specStandardValidatorV3.validate`.
    fn validate(&self, s: &Value, path: &Path) -> Vec<Cause> {
        let mut causes = Vec::new();
        let ty = text(s, "type");
        if self.require_valid_property_type && !ty.is_empty() && !OPENAPI_TYPES.contains(&ty) {
            let valid: Vec<String> = OPENAPI_TYPES.iter().map(|t| t.to_string()).collect();
            causes.push(Cause::not_supported(
                path.child("type"),
                &Value::String(ty.into()),
                &valid,
            ));
        }
        if present(s, "default").is_some() && !self.allow_defaults {
            let mut detail = "must not be set".to_string();
            if !self.disallow_defaults_reason.is_empty() {
                detail.push(' ');
                detail.push_str(&self.disallow_defaults_reason);
            }
            causes.push(Cause::forbidden(path.child("default"), &detail));
        }
        if !text(s, "id").is_empty() {
            causes.push(Cause::forbidden(path.child("id"), "id is not supported"));
        }
        if present(s, "additionalItems").is_some() {
            causes.push(Cause::forbidden(
                path.child("additionalItems"),
                "additionalItems is not supported",
            ));
        }
        if non_empty_map(s, "patternProperties") {
            causes.push(Cause::forbidden(
                path.child("patternProperties"),
                "patternProperties is not supported",
            ));
        }
        if non_empty_map(s, "definitions") {
            causes.push(Cause::forbidden(
                path.child("definitions"),
                "definitions is not supported",
            ));
        }
        if present(s, "dependencies").is_some() {
            causes.push(Cause::forbidden(
                path.child("dependencies"),
                "dependencies is not supported",
            ));
        }
        if present(s, "$ref").is_some() {
            causes.push(Cause::forbidden(
                path.child("$ref"),
                "$ref is not supported",
            ));
        }
        if ty == "null" {
            causes.push(Cause::forbidden(
                path.child("type"),
                "type cannot be set to null, use nullable as an alternative",
            ));
        }
        if non_empty_list(s, "items").is_some() {
            causes.push(Cause::forbidden(
                path.child("items"),
                "items must be a schema object and not an array",
            ));
        }
        if self.inside_resource_meta && flag(s, "x-kubernetes-embedded-resource") {
            causes.push(Cause::forbidden(
                path.child("x-kubernetes-embedded-resource"),
                "must not be used inside of resource meta",
            ));
        }
        causes
    }
}

/// `validateCustomResourceDefinitionValidation` of one `CustomResourceValidation` (a version's
/// `schema`, or the top-level `validation`) at `path`.
pub fn validate_validation(
    validation: Option<&Value>,
    status_enabled: bool,
    opts: &Options,
    path: &Path,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(schema) = validation.and_then(|v| present(v, "openAPIV3Schema")) else {
        return causes;
    };
    let schema_path = path.child("openAPIV3Schema");
    if status_enabled {
        for (go_name, json_name) in SCHEMA_FIELDS {
            if !is_set(schema.get(json_name)) {
                continue;
            }
            if go_name == "Type" {
                let ty = text(schema, "type");
                if ty != "object" {
                    causes.push(Cause::invalid_str(
                        path.child("openAPIV3Schema.type"),
                        ty,
                        "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
                    ));
                    break;
                }
                continue;
            }
            if !ALLOWED_AT_ROOT.contains(&go_name) {
                causes.push(Cause::new(
                    FieldErrorType::Invalid,
                    &schema_path,
                    Some(go_value::schema(schema)),
                    &format!(
                        "only [{}] fields are allowed at the root of the schema if the status subresource is enabled",
                        ALLOWED_AT_ROOT.join(" ")
                    ),
                ));
                break;
            }
        }
    }
    if flag(schema, "nullable") {
        causes.push(Cause::forbidden(
            path.child("openAPIV3Schema.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let ssv = StandardValidator {
        allow_defaults: true,
        disallow_defaults_reason: String::new(),
        inside_resource_meta: false,
        require_valid_property_type: opts.require_valid_property_type,
    };
    let mut held_back = Vec::new();
    if opts.require_structural {
        match structural::new_structural(schema) {
            Err(e) => held_back.push(Cause::invalid_str(&schema_path, "", &e)),
            Ok(()) => {
                let errs = structural::validate(&schema_path, schema);
                if !errs.is_empty() {
                    causes.extend(errs);
                } else {
                    causes.extend(defaults::validate(
                        &schema_path,
                        schema,
                        opts.require_pruned_defaults,
                    ));
                }
            }
        }
    }
    causes.extend(validate_schema(schema, &schema_path, &ssv, true, opts));
    if causes.is_empty() {
        // Structural conversion errors overlap the OpenAPI errors; they only show alone.
        causes.extend(held_back);
    }
    causes
}

/// `ValidateCustomResourceDefinitionOpenAPISchema` (without CEL compilation).
fn validate_schema(
    s: &Value,
    path: &Path,
    ssv: &StandardValidator,
    is_root: bool,
    opts: &Options,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    if !s.is_object() {
        return causes;
    }
    causes.extend(ssv.validate(s, path));
    if flag(s, "uniqueItems") {
        causes.push(Cause::forbidden(
            path.child("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let properties = props(s);
    let has_props = properties.is_some_and(|p| !p.is_empty());
    if let Some(additional) = present(s, "additionalProperties") {
        if has_props && (additional.as_bool() == Some(false) || additional.is_object()) {
            causes.push(Cause::forbidden(
                path.child("additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        let sub = if ssv.inside_resource_meta {
            ssv.with_forbidden_defaults("inside additionalProperties applying to object metadata")
        } else {
            ssv.clone()
        };
        causes.extend(validate_schema(
            additional,
            &path.child("additionalProperties"),
            &sub,
            false,
            opts,
        ));
    }
    if let Some(properties) = properties {
        let embedded = flag(s, "x-kubernetes-embedded-resource");
        let mut keys: Vec<&String> = properties.keys().collect();
        keys.sort();
        for key in keys {
            let mut sub = ssv.clone();
            if (is_root || embedded) && META_FIELDS.contains(&key.as_str()) {
                sub = sub.with_inside_resource_meta();
                if is_root {
                    sub = sub.with_forbidden_defaults(&format!("in top-level {key}"));
                }
            }
            causes.extend(validate_schema(
                &properties[key.as_str()],
                &path.child("properties").key(key),
                &sub,
                false,
                opts,
            ));
        }
    }
    if let Some(not) = present(s, "not") {
        causes.extend(validate_schema(not, &path.child("not"), ssv, false, opts));
    }
    for junctor in ["allOf", "oneOf", "anyOf"] {
        if let Some(list) = s.get(junctor).and_then(Value::as_array) {
            for (i, sub) in list.iter().enumerate() {
                causes.extend(validate_schema(
                    sub,
                    &path.child(junctor).index(i),
                    ssv,
                    false,
                    opts,
                ));
            }
        }
    }
    if let Some(definitions) = s.get("definitions").and_then(Value::as_object) {
        let mut keys: Vec<&String> = definitions.keys().collect();
        keys.sort();
        for key in keys {
            causes.extend(validate_schema(
                &definitions[key.as_str()],
                &path.child("definitions").key(key),
                ssv,
                false,
                opts,
            ));
        }
    }
    match present(s, "items") {
        Some(Value::Array(list)) => {
            for (i, sub) in list.iter().enumerate() {
                causes.extend(validate_schema(
                    sub,
                    &path.child("items").index(i),
                    ssv,
                    false,
                    opts,
                ));
            }
        }
        Some(items) => {
            causes.extend(validate_schema(
                items,
                &path.child("items"),
                ssv,
                false,
                opts,
            ));
        }
        None => {}
    }
    if let Some(dependencies) = s.get("dependencies").and_then(Value::as_object) {
        let mut keys: Vec<&String> = dependencies.keys().collect();
        keys.sort();
        for key in keys {
            let dep = &dependencies[key.as_str()];
            if dep.is_object() {
                causes.extend(validate_schema(
                    dep,
                    &path.child("dependencies").key(key),
                    ssv,
                    false,
                    opts,
                ));
            }
        }
    }
    causes.extend(extension_rules(s, path, opts));
    if opts.require_map_list_keys {
        causes.extend(map_list_keys_map_set(s, path));
    }
    causes.extend(validation_rules_shape(s, path));
    causes
}

/// The `x-kubernetes-preserve-unknown-fields`, `-map-type`, `-list-type` and `-list-map-keys`
/// rules of one node.
fn extension_rules(s: &Value, path: &Path, opts: &Options) -> Vec<Cause> {
    let mut causes = Vec::new();
    let ty = text(s, "type");
    if s.get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(false)
    {
        causes.push(Cause::invalid(
            path.child("x-kubernetes-preserve-unknown-fields"),
            &Value::Bool(false),
            "must be true or undefined",
        ));
    }
    let map_type = present(s, "x-kubernetes-map-type").map(|v| v.as_str().unwrap_or_default());
    if map_type.is_some() && ty != "object" {
        let detail = "must be object if x-kubernetes-map-type is specified";
        causes.push(if ty.is_empty() {
            Cause::required(path.child("type"), detail)
        } else {
            Cause::invalid_str(path.child("type"), ty, detail)
        });
    }
    if let Some(mt) = map_type.filter(|mt| !matches!(*mt, "atomic" | "granular")) {
        causes.push(Cause::not_supported(
            path.child("x-kubernetes-map-type"),
            &Value::String(mt.into()),
            &["atomic".to_string(), "granular".to_string()],
        ));
    }
    let list_type = present(s, "x-kubernetes-list-type").map(|v| v.as_str().unwrap_or_default());
    let items = s.get("items").filter(|i| i.is_object());
    if list_type.is_some() && ty != "array" {
        let detail = "must be array if x-kubernetes-list-type is specified";
        causes.push(if ty.is_empty() {
            Cause::required(path.child("type"), detail)
        } else {
            Cause::invalid_str(path.child("type"), ty, detail)
        });
    } else if opts.require_atomic_set_type && list_type == Some("set") {
        if let Some(items) = items {
            let items_list_type = present(items, "x-kubernetes-list-type");
            let rendered = items_list_type.map_or_else(|| "null".to_string(), go_value::go_json);
            let detail = "must be atomic as item of a list with x-kubernetes-list-type=set";
            match text(items, "type") {
                "array" if items_list_type.is_some_and(|t| t.as_str() != Some("atomic")) => {
                    causes.push(Cause::new(
                        FieldErrorType::Invalid,
                        path.child("items").child("x-kubernetes-list-type"),
                        Some(rendered),
                        detail,
                    ));
                }
                // Upstream reports the items' list type as the bad value here too.
                "object" if text(items, "x-kubernetes-map-type") != "atomic" => {
                    causes.push(Cause::new(
                        FieldErrorType::Invalid,
                        path.child("items").child("x-kubernetes-map-type"),
                        Some(rendered),
                        detail,
                    ));
                }
                _ => {}
            }
        }
    }
    if let Some(lt) = list_type.filter(|lt| !matches!(*lt, "atomic" | "set" | "map")) {
        causes.push(Cause::not_supported(
            path.child("x-kubernetes-list-type"),
            &Value::String(lt.into()),
            &["atomic".to_string(), "set".to_string(), "map".to_string()],
        ));
    }
    let keys = non_empty_list(s, "x-kubernetes-list-map-keys");
    if keys.is_some() {
        let detail = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => causes.push(Cause::required(
                path.child("x-kubernetes-list-type"),
                detail,
            )),
            Some(lt) if lt != "map" => causes.push(Cause::invalid_str(
                path.child("x-kubernetes-list-type"),
                lt,
                detail,
            )),
            Some(_) => {}
        }
    }
    if list_type == Some("map") {
        if keys.is_none() {
            causes.push(Cause::required(
                path.child("x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match present(s, "items") {
            None => causes.push(Cause::required(
                path.child("items"),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            Some(items @ Value::Array(_)) => causes.push(Cause::new(
                FieldErrorType::Invalid,
                path.child("items"),
                Some(go_value::schema_items(items)),
                "must only have a single schema if x-kubernetes-list-type is map",
            )),
            Some(items) => {
                let items_type = text(items, "type");
                if items_type != "object" {
                    causes.push(Cause::invalid_str(
                        path.child("items").child("type"),
                        items_type,
                        "must be object if parent array's x-kubernetes-list-type is map",
                    ));
                } else {
                    let key_list = s.get("x-kubernetes-list-map-keys");
                    let rendered = go_value::string_list(key_list);
                    let mut seen: Vec<&str> = Vec::new();
                    for key in keys.into_iter().flatten() {
                        let key = key.as_str().unwrap_or_default();
                        match props(items).and_then(|p| p.get(key)) {
                            Some(prop) => {
                                if matches!(text(prop, "type"), "array" | "object") {
                                    // Upstream reports the items' type as the bad value.
                                    causes.push(Cause::invalid_str(
                                        path.child("items").child("properties").key(key).child("type"),
                                        items_type,
                                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                                    ));
                                }
                            }
                            None => causes.push(Cause::new(
                                FieldErrorType::Invalid,
                                path.child("x-kubernetes-list-map-keys"),
                                Some(rendered.clone()),
                                "entries must all be names of item properties",
                            )),
                        }
                        if seen.contains(&key) {
                            causes.push(Cause::new(
                                FieldErrorType::Invalid,
                                path.child("x-kubernetes-list-map-keys"),
                                Some(rendered.clone()),
                                "must not contain duplicate entries",
                            ));
                        }
                        seen.push(key);
                    }
                }
            }
        }
    }
    causes
}

/// `validateMapListKeysMapSet`: items of set and map lists are not nullable, and map keys are
/// required or defaulted and not nullable.
fn map_list_keys_map_set(s: &Value, path: &Path) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(items) = s.get("items").filter(|i| i.is_object()) else {
        return causes;
    };
    let list_type = text(s, "x-kubernetes-list-type");
    if !matches!(list_type, "set" | "map") {
        return causes;
    }
    if flag(items, "nullable") {
        causes.push(Cause::forbidden(
            path.child("items").child("nullable"),
            &format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
        ));
    }
    if list_type == "map" {
        let required: Vec<&str> = items
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let keys = s
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for key in keys.iter().filter_map(Value::as_str) {
            let Some(prop) = props(items).and_then(|p| p.get(key)) else {
                continue;
            };
            let prop_path = path.child("items").child("properties").key(key);
            if !required.contains(&key) && present(prop, "default").is_none() {
                causes.push(Cause::required(
                    prop_path.child("default"),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                ));
            }
            if flag(prop, "nullable") {
                causes.push(Cause::forbidden(
                    prop_path.child("nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                ));
            }
        }
    }
    causes
}

fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// The shape rules of `x-kubernetes-validations` (the rules themselves are not compiled).
fn validation_rules_shape(s: &Value, path: &Path) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) else {
        return causes;
    };
    for (i, rule) in rules.iter().enumerate() {
        let rule_path = path.child("x-kubernetes-validations").index(i);
        let expr = text(rule, "rule");
        let message = text(rule, "message");
        let message_expr = text(rule, "messageExpression");
        let (trimmed_rule, trimmed_msg) = (expr.trim(), message.trim());
        if trimmed_rule.is_empty() {
            causes.push(Cause::required(
                rule_path.child("rule"),
                "rule is not specified",
            ));
        } else if !message.is_empty() && trimmed_msg.is_empty() {
            causes.push(Cause::invalid_str(
                rule_path.child("message"),
                message,
                "must be non-empty if specified",
            ));
        } else if has_newlines(trimmed_msg) {
            causes.push(Cause::invalid_str(
                rule_path.child("message"),
                message,
                "must not contain line breaks",
            ));
        } else if has_newlines(trimmed_rule) && trimmed_msg.is_empty() {
            causes.push(Cause::required(
                rule_path.child("message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        if !message_expr.is_empty() && message_expr.trim().is_empty() {
            causes.push(Cause::required(
                rule_path.child("messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = present(rule, "reason") {
            let r = reason.as_str().unwrap_or_default();
            if !VALIDATION_REASONS.contains(&r) {
                let valid: Vec<String> = VALIDATION_REASONS.iter().map(|v| v.to_string()).collect();
                causes.push(Cause::not_supported(
                    rule_path.child("reason"),
                    reason,
                    &valid,
                ));
            }
        }
        let field_path = text(rule, "fieldPath");
        if !field_path.is_empty() && field_path.trim().is_empty() {
            causes.push(Cause::invalid_str(
                rule_path.child("fieldPath"),
                field_path,
                "must be non-empty if specified",
            ));
        }
        if has_newlines(field_path) {
            causes.push(Cause::invalid_str(
                rule_path.child("fieldPath"),
                field_path,
                "must not contain line breaks",
            ));
        }
    }
    causes
}
