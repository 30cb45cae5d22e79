//! Structural-schema handling for custom resources: defaulting, pruning and validation.
//!
//! Works on a CRD version's `openAPIV3Schema` as JSON, the way the apiextensions API server
//! treats a structural schema: only the structural part (`type`, `properties`, `items`,
//! `additionalProperties`, the `x-kubernetes-*` extensions) drives pruning and defaulting, and
//! validation reports the field errors (paths, cause types, messages) a real server returns.
//! `format` is checked by [`crate::rules::schema_format`]. CEL rules (`x-kubernetes-validations`)
//! are evaluated by [`crate::cel::crd_rules`].

use serde_json::{Map, Value};

use crate::rules::validation::{go_format_float, Cause};

fn flag(s: &Value, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn properties(s: &Value) -> Option<&Map<String, Value>> {
    s.get("properties").and_then(Value::as_object)
}

fn items(s: &Value) -> Option<&Value> {
    s.get("items").filter(|v| v.is_object())
}

/// What `additionalProperties` allows.
enum Additional<'a> {
    /// Absent or `false`: unknown keys are pruned.
    None,
    /// `true`: any key, any value.
    Any,
    /// A schema for every other key.
    Schema(&'a Value),
}

fn additional(s: &Value) -> Additional<'_> {
    match s.get("additionalProperties") {
        Some(Value::Bool(true)) => Additional::Any,
        Some(v @ Value::Object(_)) => Additional::Schema(v),
        _ => Additional::None,
    }
}

fn nullable(s: &Value) -> bool {
    flag(s, "nullable")
}

fn default_of(s: &Value) -> Option<&Value> {
    s.get("default")
}

/// Applies schema defaults: a property with a `default` that is missing (or null while not
/// `nullable`) gets it, in nested objects and array items, but only where the parent object
/// exists. Nulls of non-nullable properties without a default are dropped first, as upstream.
pub fn apply_defaults(schema: &Value, obj: &mut Value) {
    prune_non_nullable_nulls(obj, schema);
    default_value(obj, schema);
}

fn default_value(x: &mut Value, s: &Value) {
    match x {
        Value::Object(m) => {
            if let Some(props) = properties(s) {
                for (k, prop) in props {
                    let Some(d) = default_of(prop) else { continue };
                    let missing = match m.get(k) {
                        None => true,
                        Some(v) => v.is_null() && !nullable(prop),
                    };
                    if missing {
                        m.insert(k.clone(), d.clone());
                    }
                }
            }
            for (k, v) in m.iter_mut() {
                if let Some(prop) = properties(s).and_then(|p| p.get(k)) {
                    default_value(v, prop);
                } else if let Additional::Schema(ap) = additional(s) {
                    if v.is_null() && !nullable(ap) {
                        if let Some(d) = default_of(ap) {
                            *v = d.clone();
                        }
                    }
                    default_value(v, ap);
                }
            }
        }
        Value::Array(list) => {
            if let Some(item_schema) = items(s) {
                for v in list.iter_mut() {
                    if v.is_null() && !nullable(item_schema) {
                        if let Some(d) = default_of(item_schema) {
                            *v = d.clone();
                        }
                    }
                    default_value(v, item_schema);
                }
            }
        }
        _ => {}
    }
}

/// Drops `null` values of properties that are neither `nullable` nor defaulted.
pub fn prune_non_nullable_nulls(x: &mut Value, s: &Value) {
    match x {
        Value::Object(m) => {
            let props = properties(s);
            let extra = additional(s);
            m.retain(|k, v| {
                let field_schema = match (props.and_then(|p| p.get(k)), &extra) {
                    (Some(p), _) => Some(p),
                    (None, Additional::Schema(ap)) => Some(*ap),
                    _ => None,
                };
                match field_schema {
                    Some(fs) => !(v.is_null() && !nullable(fs) && default_of(fs).is_none()),
                    None => true,
                }
            });
            for (k, v) in m.iter_mut() {
                if let Some(prop) = props.and_then(|p| p.get(k)) {
                    prune_non_nullable_nulls(v, prop);
                } else if let Additional::Schema(ap) = &extra {
                    prune_non_nullable_nulls(v, ap);
                }
            }
        }
        Value::Array(list) => {
            if let Some(item_schema) = items(s) {
                for v in list.iter_mut() {
                    prune_non_nullable_nulls(v, item_schema);
                }
            }
        }
        _ => {}
    }
}

/// Drops fields the schema does not know, unless `x-kubernetes-preserve-unknown-fields: true`
/// (or `additionalProperties: true`) keeps them. `apiVersion`, `kind` and `metadata` are kept
/// at the root and in `x-kubernetes-embedded-resource` objects.
pub fn prune(schema: &Value, obj: &mut Value) {
    prune_value(obj, Some(schema), true);
}

/// Prunes `obj` against `schema` where `obj` is not necessarily a whole resource:
/// `resource_root` says whether its `apiVersion`, `kind` and `metadata` are kept as a
/// resource's are (for a default value of an embedded resource).
pub fn prune_at(schema: &Value, obj: &mut Value, resource_root: bool) {
    prune_value(obj, Some(schema), resource_root);
}

fn prune_value(x: &mut Value, s: Option<&Value>, resource_root: bool) {
    if let Some(s) = s {
        if flag(s, "x-kubernetes-preserve-unknown-fields") {
            skip_prune(x, Some(s), resource_root);
            return;
        }
    }
    match x {
        Value::Object(m) => {
            let Some(s) = s else {
                m.clear();
                return;
            };
            let embedded = resource_root || flag(s, "x-kubernetes-embedded-resource");
            let props = properties(s);
            let extra = additional(s);
            m.retain(|k, v| {
                if embedded {
                    match k.as_str() {
                        "apiVersion" | "kind" if v.is_string() => return true,
                        "metadata" if v.is_object() => return true,
                        _ => {}
                    }
                }
                props.is_some_and(|p| p.contains_key(k)) || !matches!(extra, Additional::None)
            });
            for (k, v) in m.iter_mut() {
                if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    if k == "metadata" {
                        prune_object_meta(v);
                    } else if let Some(prop) = props.and_then(|p| p.get(k)) {
                        prune_value(v, Some(prop), false);
                    }
                    continue;
                }
                if let Some(prop) = props.and_then(|p| p.get(k)) {
                    prune_value(v, Some(prop), false);
                } else if let Additional::Schema(ap) = &extra {
                    prune_value(v, Some(ap), false);
                }
            }
        }
        Value::Array(list) => {
            let item_schema = s.and_then(items);
            for v in list.iter_mut() {
                prune_value(v, item_schema, false);
            }
        }
        _ => {}
    }
}

/// The JSON fields of `metav1.ObjectMeta`; `metadata` of a resource keeps only these, as
/// decoding it into the typed ObjectMeta does.
const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

fn prune_object_meta(meta: &mut Value) {
    if let Value::Object(m) = meta {
        m.retain(|k, _| OBJECT_META_FIELDS.contains(&k.as_str()));
    }
}

/// Under `x-kubernetes-preserve-unknown-fields`: unknown fields stay, known ones are still
/// pruned below by their own schemas.
fn skip_prune(x: &mut Value, s: Option<&Value>, resource_root: bool) {
    let Some(s) = s else { return };
    match x {
        Value::Object(m) => {
            let embedded = resource_root || flag(s, "x-kubernetes-embedded-resource");
            for (k, v) in m.iter_mut() {
                if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    if k == "metadata" {
                        prune_object_meta(v);
                    }
                    continue;
                }
                if let Some(prop) = properties(s).and_then(|p| p.get(k)) {
                    prune_value(v, Some(prop), false);
                } else if let Additional::Schema(ap) = additional(s) {
                    prune_value(v, Some(ap), false);
                }
            }
        }
        Value::Array(list) => {
            for v in list.iter_mut() {
                skip_prune(v, items(s), false);
            }
        }
        _ => {}
    }
}

/// Validates an object against the schema: `type`, `nullable`, `required`, `enum`,
/// `minimum`/`maximum` (and exclusive), `multipleOf`, `minLength`/`maxLength`,
/// `minItems`/`maxItems`, `uniqueItems`, `minProperties`/`maxProperties`, `allOf`, recursively,
/// with the field paths and messages of a real server (`spec.replicas: Invalid value:
/// "string": spec.replicas in body must be of type integer: "string"`).
pub fn validate(schema: &Value, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    validate_value(obj, schema, "", true, old, &mut causes);
    // The list-type checks ratchet as a whole (the custom resource strategy's `ValidateUpdate`):
    // an update is held to them only if the object it replaces keeps them.
    let old_keeps_list_types = old.is_none_or(|old| {
        let mut old_causes = Vec::new();
        validate_list_types(old, schema, "", true, &mut old_causes);
        old_causes.is_empty()
    });
    if old_keeps_list_types {
        validate_list_types(obj, schema, "", true, &mut causes);
    }
    // Errors about the root itself have no field path: Go prints the nil path as `<nil>`.
    for cause in &mut causes {
        if cause.field.is_empty() {
            cause.field = "<nil>".to_string();
        }
    }
    causes
}

/// Validates a value that is not a resource (a default in a CRD schema) against its schema, as
/// `ValidateCustomResource` with a fresh validator does: field paths relative to the value
/// (empty for the value itself), no `apiVersion`/`kind`/`metadata` exemption, no list-type
/// checks.
pub fn validate_detached(schema: &Value, value: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    validate_value(value, schema, "", false, None, &mut causes);
    causes
}

/// `x-kubernetes-list-type`: `set` lists may not repeat a value, `map` lists may not repeat
/// the `x-kubernetes-list-map-keys` of an item (a missing key counts as its default).
fn validate_list_types(x: &Value, s: &Value, path: &str, root: bool, causes: &mut Vec<Cause>) {
    match x {
        Value::Object(m) => {
            for (k, v) in m {
                if root && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let child = join(path, k);
                if let Some(prop) = properties(s).and_then(|p| p.get(k)) {
                    validate_list_types(v, prop, &child, false, causes);
                } else if let Additional::Schema(ap) = additional(s) {
                    validate_list_types(v, ap, &child, false, causes);
                }
            }
        }
        Value::Array(list) => {
            match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => {
                    let mut seen: Vec<(&Value, usize)> = Vec::new();
                    for (i, v) in list.iter().enumerate() {
                        match seen.iter_mut().find(|(w, _)| json_equal(w, v)) {
                            Some((_, times)) => {
                                *times += 1;
                                if *times == 2 {
                                    causes.push(Cause::duplicate(format!("{path}[{i}]"), v));
                                }
                            }
                            None => seen.push((v, 1)),
                        }
                    }
                }
                Some("map") => validate_list_map(list, s, path, causes),
                _ => {}
            }
            if let Some(item_schema) = items(s) {
                for (i, v) in list.iter().enumerate() {
                    validate_list_types(v, item_schema, &format!("{path}[{i}]"), false, causes);
                }
            }
        }
        _ => {}
    }
}

fn validate_list_map(list: &[Value], s: &Value, path: &str, causes: &mut Vec<Cause>) {
    for (i, v) in list.iter().enumerate() {
        if !v.is_object() && !v.is_null() {
            causes.push(Cause::invalid(
                format!("{path}[{i}]"),
                v,
                "must be an object for an array of list-type map",
            ));
            return;
        }
    }
    let keys: Vec<&str> = s
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|ks| ks.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let item_props = items(s).and_then(properties);
    let mut seen: Vec<Map<String, Value>> = Vec::new();
    for (i, v) in list.iter().enumerate() {
        let Some(item) = v.as_object() else { continue };
        let mut key_values = Map::new();
        for key in &keys {
            let value = item
                .get(*key)
                .or_else(|| item_props.and_then(|p| p.get(*key)).and_then(default_of));
            if let Some(value) = value {
                key_values.insert((*key).to_string(), value.clone());
            }
        }
        if seen.iter().any(|k| {
            json_equal(
                &Value::Object(k.clone()),
                &Value::Object(key_values.clone()),
            )
        }) {
            causes.push(Cause::duplicate(
                format!("{path}[{i}]"),
                &Value::Object(key_values),
            ));
        } else {
            seen.push(key_values);
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The JSON-schema type name of a value as the validator infers it from the decoded JSON:
/// numbers written without a fraction or exponent are integers, all others numbers.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `x` satisfies `type: expected` (integers are numbers; a whole float is an integer).
fn type_matches(expected: &str, x: &Value) -> bool {
    let actual = type_name(x);
    expected == actual
        || (expected == "number" && actual == "integer")
        || (expected == "integer"
            && x.as_f64()
                .is_some_and(|f| actual == "number" && f.is_finite() && f == f.trunc()))
}

fn render_limit(v: &Value) -> String {
    match v {
        Value::Number(n) => crate::rules::validation::render_number(n),
        other => other.to_string(),
    }
}

fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// Validates `x` against `s`. `old` is the value this one had before an update, where the
/// two correlate (the same property, or the item with the same keys of a `map` list): the
/// apiextensions server ratchets (`CRDValidationRatcheting`), so a value equal to its old one
/// is not held to the schema (its errors are only warnings there, which the server does not
/// send), nor is anything inside it.
fn validate_value(
    x: &Value,
    s: &Value,
    path: &str,
    root: bool,
    old: Option<&Value>,
    causes: &mut Vec<Cause>,
) {
    if old.is_some_and(|old| json_equal(old, x)) {
        return;
    }
    let declared = s.get("type").and_then(Value::as_str);
    let int_or_string = flag(s, "x-kubernetes-int-or-string");
    let actual = type_name(x);
    if x.is_null() {
        if !nullable(s) && (declared.is_some() || int_or_string) {
            let expected = declared.unwrap_or("integer,string");
            causes.push(Cause::type_invalid(
                path,
                &Value::String("null".into()),
                &format!("{path} in body must be of type {expected}: \"null\""),
            ));
        }
        return;
    }
    if int_or_string {
        if !type_matches("integer", x) && actual != "string" {
            causes.push(Cause::type_invalid(
                path,
                &Value::String(actual.into()),
                &format!("{path} in body must be of type integer,string: \"{actual}\""),
            ));
            return;
        }
    } else if let Some(expected) = declared {
        if !type_matches(expected, x) {
            causes.push(Cause::type_invalid(
                path,
                &Value::String(actual.into()),
                &format!("{path} in body must be of type {expected}: \"{actual}\""),
            ));
            return;
        }
    }

    // The validator's order: composition, then string/format/number/array checks, then enum,
    // then object checks (properties before required).
    validate_composition(x, s, path, root, old, causes);
    match x {
        Value::String(text) => {
            validate_string(text, x, s, path, causes);
            if let Some(format) = s.get("format").and_then(Value::as_str) {
                if crate::rules::schema_format::check(format, text) == Some(false) {
                    causes.push(Cause::type_invalid(
                        path,
                        x,
                        &format!(
                            "{path} in body must be of type {format}: {}",
                            crate::rules::validation::go_quote(text)
                        ),
                    ));
                }
            }
        }
        Value::Number(n) => validate_number(n.as_f64().unwrap_or(0.0), x, s, path, causes),
        Value::Array(list) => validate_array(list, x, s, path, old, causes),
        _ => {}
    }
    if let Some(options) = s.get("enum").and_then(Value::as_array) {
        if !options.iter().any(|o| json_equal(o, x)) {
            let allowed: Vec<String> = options
                .iter()
                .map(|o| match o {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            causes.push(Cause::not_supported(path, x, &allowed));
        }
    }
    if let Value::Object(m) = x {
        validate_object(m, s, path, root, old, causes);
    }
}

/// kube-openapi's `stringValidator`: `maxLength`, `minLength`, then `pattern`, stopping at the
/// first that fails.
fn validate_string(text: &str, x: &Value, s: &Value, path: &str, causes: &mut Vec<Cause>) {
    let len = text.chars().count() as u64;
    if let Some(max) = s.get("maxLength").and_then(Value::as_u64) {
        if len > max {
            causes.push(Cause::too_long(path, max as i64));
            return;
        }
    }
    if let Some(min) = s.get("minLength").and_then(Value::as_u64) {
        if len < min {
            causes.push(Cause::invalid(
                path,
                x,
                &format!("{path} in body should be at least {min} chars long"),
            ));
            return;
        }
    }
    if let Some(pattern) = s
        .get("pattern")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
    {
        match pattern_rejects(pattern, text) {
            PatternCheck::Matches => {}
            PatternCheck::Rejects => causes.push(Cause::invalid(
                path,
                x,
                &format!("{path} in body should match '{pattern}'"),
            )),
            PatternCheck::Invalid(error) => causes.push(Cause::invalid(
                path,
                x,
                &format!(
                    "{path} in body should match '{pattern}, but pattern is invalid: {error}'"
                ),
            )),
        }
    }
}

/// What a schema's `pattern` says about a string.
enum PatternCheck {
    Matches,
    Rejects,
    /// Go cannot compile the pattern (its error text): kube-openapi's `Pattern` then fails
    /// every value, `..., but pattern is invalid: ...`. The CRD itself was accepted: its
    /// validation does not compile patterns.
    Invalid(String),
}

/// Whether `text` matches `pattern`, a Go regular expression read as Go reads it
/// ([`crate::rules::go_regexp`], compiled once). A pattern Go accepts but the `regex` crate
/// cannot run checks nothing.
fn pattern_rejects(pattern: &str, text: &str) -> PatternCheck {
    use crate::rules::go_regexp::{self, CompileError};
    match go_regexp::compiled(pattern) {
        Ok(r) if r.is_match(text) => PatternCheck::Matches,
        Ok(_) => PatternCheck::Rejects,
        Err(CompileError::Go(error)) => PatternCheck::Invalid(error),
        Err(CompileError::Unsupported(error)) => {
            tracing::debug!(
                pattern,
                error,
                "a schema pattern this server cannot run is not checked"
            );
            PatternCheck::Matches
        }
    }
}

/// kube-openapi's `schemaPropsValidator`: `anyOf`, `oneOf`, `allOf`, then `not`. A failed
/// composition adds its own error (which the apiextensions server reports against the root,
/// with the value `""`) to the errors of the failing alternatives: for `anyOf` and `oneOf` those
/// of the one that ran the most checks, for `allOf` every one's.
fn validate_composition(
    x: &Value,
    s: &Value,
    path: &str,
    root: bool,
    old: Option<&Value>,
    causes: &mut Vec<Cause>,
) {
    let composite = |message: String| Cause::invalid("", &Value::String(String::new()), &message);
    let quoted = crate::rules::validation::go_quote(path);
    let results = |key: &str| -> Option<Vec<Vec<Cause>>> {
        let alternatives = s.get(key)?.as_array()?;
        (!alternatives.is_empty()).then(|| {
            alternatives
                .iter()
                .map(|sub| {
                    let mut found = Vec::new();
                    validate_value(x, sub, path, root, old, &mut found);
                    found
                })
                .collect()
        })
    };
    // The validator keeps the errors of the failing alternative with the most checks run (its
    // `MatchCount`), the first of those on a tie.
    let closest = |key: &str, failures: Vec<Vec<Cause>>| -> Vec<Cause> {
        let mut best: Option<(usize, Vec<Cause>)> = None;
        for (i, failure) in failures.into_iter().enumerate() {
            if failure.is_empty() {
                continue;
            }
            let count = match_count(x, &s[key][i]);
            if best.as_ref().is_none_or(|(b, _)| count > *b) {
                best = Some((count, failure));
            }
        }
        best.map(|(_, f)| f).unwrap_or_default()
    };
    if let Some(any) = results("anyOf") {
        if !any.iter().any(Vec::is_empty) {
            causes.push(composite(format!(
                "{quoted} must validate at least one schema (anyOf)"
            )));
            causes.extend(closest("anyOf", any));
        }
    }
    if let Some(one) = results("oneOf") {
        match one.iter().filter(|r| r.is_empty()).count() {
            1 => {}
            0 => {
                causes.push(composite(format!(
                    "{quoted} must validate one and only one schema (oneOf). Found none valid"
                )));
                causes.extend(closest("oneOf", one));
            }
            n => causes.push(composite(format!(
                "{quoted} must validate one and only one schema (oneOf). Found {n} valid alternatives"
            ))),
        }
    }
    if let Some(all) = results("allOf") {
        let valid = all.iter().filter(|r| r.is_empty()).count();
        let count = all.len();
        for failures in all {
            causes.extend(failures);
        }
        if valid != count {
            let none = if valid == 0 { ". None validated" } else { "" };
            causes.push(composite(format!(
                "{quoted} must validate all the schemas (allOf){none}"
            )));
        }
    }
    if let Some(not) = s.get("not").filter(|n| n.is_object()) {
        let mut found = Vec::new();
        validate_value(x, not, path, root, old, &mut found);
        if found.is_empty() {
            causes.push(composite(format!(
                "{quoted} must not validate the schema (not)"
            )));
        }
    }
}

/// kube-openapi's `MatchCount` of validating `x` against `s`: how many checks the schema
/// validator ran on it, counted as `SchemaValidator.Validate` counts them (each validator that
/// applies counts once after its own count: type, composition, string, format, number, array
/// with its items, enum, object with its properties; and once more for the schema). An
/// `anyOf`/`oneOf` that fails reports the errors of its alternative with the highest count.
fn match_count(x: &Value, s: &Value) -> usize {
    if x.is_null() {
        // Only the type validator's own count, without the schema's.
        return usize::from(type_validator_passes(x, s));
    }
    let mut count = 0;
    let typed = s.get("type").is_some()
        || flag(s, "x-kubernetes-int-or-string")
        || s.get("format").is_some();
    if typed {
        count += usize::from(type_validator_passes(x, s)) + 1;
    }
    count += composition_count(x, s) + 1;
    match x {
        Value::String(text) => {
            count += 1;
            let format = s.get("format").and_then(Value::as_str).unwrap_or_default();
            if crate::rules::schema_format::check(format, text).is_some() {
                count += 1;
            }
        }
        Value::Number(_) => count += 2,
        Value::Array(list) => {
            let item_counts: usize = match items(s) {
                Some(item_schema) => list.iter().map(|v| match_count(v, item_schema)).sum(),
                None => 0,
            };
            count += item_counts + 2;
        }
        _ => {}
    }
    // The enum validator applies to every value.
    count += 1;
    if let Value::Object(map) = x {
        let props = properties(s);
        let field_counts: usize = map
            .iter()
            .map(
                |(k, v)| match (props.and_then(|p| p.get(k)), additional(s)) {
                    (Some(prop), _) => match_count(v, prop),
                    (None, Additional::Schema(a)) => match_count(v, a),
                    _ => 0,
                },
            )
            .sum();
        count += field_counts + 1;
    }
    count + 1
}

/// The composition validator's count: the chosen `anyOf` and `oneOf` alternative's (the
/// failing one with the highest count, else the first that passed), every `allOf` one's, and
/// its own.
fn composition_count(x: &Value, s: &Value) -> usize {
    let passes = |alternative: &Value| {
        let mut found = Vec::new();
        validate_value(x, alternative, "", false, None, &mut found);
        found.is_empty()
    };
    let alternatives = |key: &str| {
        s.get(key)
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
    };
    let mut count = 0;
    if let Some(any) = alternatives("anyOf") {
        let mut best: Option<usize> = None;
        let mut first_success = None;
        for alternative in any {
            let c = match_count(x, alternative);
            if passes(alternative) {
                best = None;
                first_success = Some(c);
                break;
            }
            if best.is_none_or(|b| c > b) {
                best = Some(c);
            }
        }
        count += best.or(first_success).unwrap_or(0);
    }
    if let Some(one) = alternatives("oneOf") {
        let (mut best, mut first_success, mut valid) = (None::<usize>, None, 0);
        for alternative in one {
            let c = match_count(x, alternative);
            if passes(alternative) {
                valid += 1;
                best = None;
                first_success.get_or_insert(c);
            } else if valid == 0 && best.is_none_or(|b| c > b) {
                best = Some(c);
            }
        }
        count += if valid == 1 {
            first_success.unwrap_or(0)
        } else {
            best.unwrap_or(0)
        };
    }
    if let Some(all) = alternatives("allOf") {
        count += all.iter().map(|a| match_count(x, a)).sum::<usize>();
    }
    count + 1
}

/// kube-openapi's type validator on `x` (`typeValidator.Validate`): the declared type
/// (`integer,string` for `x-kubernetes-int-or-string`; a whole number is an integer and an
/// integer a number), a string or array with a `format` and no numeric type passing.
fn type_validator_passes(x: &Value, s: &Value) -> bool {
    let types: Vec<&str> = if flag(s, "x-kubernetes-int-or-string") {
        vec!["integer", "string"]
    } else {
        s.get("type").and_then(Value::as_str).into_iter().collect()
    };
    let contains = |t: &str| types.contains(&t);
    if x.is_null() {
        return types.is_empty() || contains("null") || nullable(s);
    }
    let format = s.get("format").and_then(Value::as_str).unwrap_or_default();
    let actual = type_name(x);
    let float_int = actual == "number"
        && x.as_f64().is_some_and(|f| f.is_finite() && f == f.trunc())
        && contains("integer");
    let int_float = actual == "integer" && contains("number");
    // A format on a string or array is the format validator's business, unless a numeric type
    // is declared. (On other values the format check fails only where the type check fails
    // too: it does not change the outcome.)
    let string_or_array = matches!(x, Value::String(_) | Value::Array(_));
    if !format.is_empty() && string_or_array && !(contains("number") || contains("integer")) {
        return true;
    }
    contains(actual) || float_int || int_float
}

/// kube-openapi's `IsValueValidAgainstRange`, the number validator's first check: an integer
/// must fit its format (`int32`, `uint32`, `uint64`, else `int64`), a `float` number `float32`.
/// Its error is a plain one, which the apiextensions server reports against the root.
fn out_of_range(x: &serde_json::Number, s: &Value, path: &str) -> Option<Cause> {
    let declared = s.get("type").and_then(Value::as_str).unwrap_or_default();
    let format = s.get("format").and_then(Value::as_str).unwrap_or_default();
    // The value as the validator prints it before converting (a whole float prints as an
    // integer): here as an integer, when it is one.
    let whole: Option<i128> = x
        .as_i64()
        .map(i128::from)
        .or_else(|| x.as_u64().map(i128::from))
        .or_else(|| {
            x.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 1e30)
                .map(|f| f as i128)
        });
    let fits_in = |min: i128, max: i128| whole.is_some_and(|v| (min..=max).contains(&v));
    let fits = match (declared, format) {
        ("integer", "int32") => fits_in(i32::MIN.into(), i32::MAX.into()),
        ("integer", "uint32") => fits_in(0, u32::MAX.into()),
        ("integer", "uint64") => fits_in(0, u64::MAX.into()),
        ("integer", _) => fits_in(i64::MIN.into(), i64::MAX.into()),
        (_, "float" | "float32") => x.as_f64().is_some_and(|v| v.abs() <= f64::from(f32::MAX)),
        _ => true,
    };
    if fits {
        return None;
    }
    let kind = if declared.is_empty() {
        "number"
    } else {
        declared
    };
    let what = if format.is_empty() {
        format!("Checked value must be of type {kind} (default format) in {path}")
    } else {
        format!("Checked value must be of type {kind} with format {format} in {path}")
    };
    Some(Cause::invalid("", &Value::String(String::new()), &what))
}

fn validate_number(n: f64, x: &Value, s: &Value, path: &str, causes: &mut Vec<Cause>) {
    if let Some(cause) = x
        .as_number()
        .and_then(|number| out_of_range(number, s, path))
    {
        causes.push(cause);
    }
    if let Some(max_v) = s.get("maximum").filter(|v| v.is_number()) {
        let max = max_v.as_f64().unwrap_or(f64::MAX);
        let exclusive = flag(s, "exclusiveMaximum");
        if (exclusive && n >= max) || (!exclusive && n > max) {
            let rel = if exclusive {
                "less than"
            } else {
                "less than or equal to"
            };
            causes.push(Cause::invalid(
                path,
                x,
                &format!("{path} in body should be {rel} {}", render_limit(max_v)),
            ));
        }
    }
    if let Some(min_v) = s.get("minimum").filter(|v| v.is_number()) {
        let min = min_v.as_f64().unwrap_or(f64::MIN);
        let exclusive = flag(s, "exclusiveMinimum");
        if (exclusive && n <= min) || (!exclusive && n < min) {
            let rel = if exclusive {
                "greater than"
            } else {
                "greater than or equal to"
            };
            causes.push(Cause::invalid(
                path,
                x,
                &format!("{path} in body should be {rel} {}", render_limit(min_v)),
            ));
        }
    }
    if let Some(m) = s.get("multipleOf").and_then(Value::as_f64) {
        if m > 0.0 {
            let q = n / m;
            if (q - q.round()).abs() > 1e-9 {
                causes.push(Cause::invalid(
                    path,
                    x,
                    &format!(
                        "{path} in body should be a multiple of {}",
                        go_format_float(m)
                    ),
                ));
            }
        }
    }
}

fn validate_array(
    list: &[Value],
    x: &Value,
    s: &Value,
    path: &str,
    old: Option<&Value>,
    causes: &mut Vec<Cause>,
) {
    if let Some(item_schema) = items(s) {
        for (i, v) in list.iter().enumerate() {
            let old_item = old.and_then(|old| correlated_item(s, old, v));
            validate_value(
                v,
                item_schema,
                &format!("{path}[{i}]"),
                false,
                old_item,
                causes,
            );
        }
    }
    let len = list.len() as i64;
    if let Some(min) = s.get("minItems").and_then(Value::as_i64) {
        if len < min {
            causes.push(Cause::invalid(
                path,
                &Value::from(len),
                &format!("{path} in body should have at least {min} items"),
            ));
        }
    }
    if let Some(max) = s.get("maxItems").and_then(Value::as_i64) {
        if len > max {
            causes.push(Cause::too_many(path, len, max));
        }
    }
    if flag(s, "uniqueItems") {
        let dup = list
            .iter()
            .enumerate()
            .any(|(i, a)| list[..i].iter().any(|b| json_equal(a, b)));
        if dup {
            causes.push(Cause::invalid(
                path,
                x,
                &format!("{path} in body shouldn't contain duplicates"),
            ));
        }
    }
}

/// The old item an item of a list correlates with for ratcheting: only a `map` list's items
/// correlate, with the old item of the same keys (`CorrelatedObject.Index`); items of other
/// lists have no old value.
fn correlated_item<'o>(s: &Value, old: &'o Value, item: &Value) -> Option<&'o Value> {
    if s.get("x-kubernetes-list-type").and_then(Value::as_str) != Some("map") {
        return None;
    }
    let keys: Vec<&str> = s
        .get("x-kubernetes-list-map-keys")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    old.as_array()?
        .iter()
        .find(|candidate| keys.iter().all(|k| candidate.get(*k) == item.get(*k)))
}

fn validate_object(
    m: &Map<String, Value>,
    s: &Value,
    path: &str,
    root: bool,
    old: Option<&Value>,
    causes: &mut Vec<Cause>,
) {
    let old_of = |k: &str| old.and_then(|old| old.get(k));
    let count = m.len() as i64;
    if let Some(min) = s.get("minProperties").and_then(Value::as_i64) {
        if count < min {
            causes.push(Cause::invalid(
                path,
                &Value::from(min),
                &format!("{path} in body should have at least {min} properties"),
            ));
        }
    }
    if let Some(max) = s.get("maxProperties").and_then(Value::as_i64) {
        if count > max {
            causes.push(Cause::too_many(path, count, max));
        }
    }
    let props = properties(s);
    let skip = |k: &str| root && matches!(k, "apiVersion" | "kind" | "metadata");
    if let Additional::Schema(ap) = additional(s) {
        for (k, v) in m {
            if !skip(k) && !props.is_some_and(|p| p.contains_key(k)) {
                validate_value(v, ap, &join(path, k), false, old_of(k), causes);
            }
        }
    }
    if let Some(props) = props {
        for (k, prop) in props {
            if skip(k) {
                continue;
            }
            if let Some(v) = m.get(k) {
                validate_value(v, prop, &join(path, k), false, old_of(k), causes);
            }
        }
    }
    if let Some(required) = s.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if !m.contains_key(key) {
                causes.push(Cause::required(join(path, key), ""));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn widget_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["color"],
                    "properties": {
                        "color": {"type": "string", "enum": ["red", "green", "blue"], "maxLength": 5},
                        "size": {"type": "integer", "default": 3, "minimum": 1, "maximum": 10},
                        "ratio": {"type": "number", "exclusiveMaximum": true, "maximum": 1.5},
                        "name": {"type": "string", "minLength": 2},
                        "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
                        "ports": {"type": "array", "minItems": 1, "items": {
                            "type": "object",
                            "properties": {
                                "port": {"type": "integer"},
                                "protocol": {"type": "string", "default": "TCP"}
                            }
                        }},
                        "nested": {"type": "object", "properties": {
                            "inner": {"type": "object", "default": {}, "properties": {
                                "mode": {"type": "string", "default": "auto"}
                            }}
                        }},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                                 "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                     "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}},
                        "port": {"x-kubernetes-int-or-string": true},
                        "maybe": {"type": "string", "nullable": true},
                        "never": {"type": "string"}
                    }
                },
                "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
            }
        })
    }

    #[test]
    fn defaults_fill_missing_fields_where_the_parent_exists() {
        let schema = widget_schema();
        let mut obj = json!({"spec": {"color": "red", "ports": [{"port": 80}, {"port": 81, "protocol": "UDP"}], "nested": {}}});
        apply_defaults(&schema, &mut obj);
        assert_eq!(obj["spec"]["size"], 3);
        assert_eq!(obj["spec"]["ports"][0]["protocol"], "TCP");
        assert_eq!(obj["spec"]["ports"][1]["protocol"], "UDP");
        assert_eq!(obj["spec"]["nested"]["inner"], json!({"mode": "auto"}));
        let mut no_spec = json!({"metadata": {"name": "x"}});
        apply_defaults(&schema, &mut no_spec);
        assert_eq!(no_spec, json!({"metadata": {"name": "x"}}));
    }

    #[test]
    fn defaults_replace_non_nullable_nulls_and_drop_other_nulls() {
        let schema = widget_schema();
        let mut obj = json!({"spec": {"color": "red", "size": null, "maybe": null, "never": null}});
        apply_defaults(&schema, &mut obj);
        assert_eq!(obj["spec"]["size"], 3);
        assert!(obj["spec"]["maybe"].is_null() && obj["spec"].get("maybe").is_some());
        assert!(obj["spec"].get("never").is_none());
    }

    #[test]
    fn prune_drops_unknown_fields() {
        let schema = widget_schema();
        let mut obj = json!({
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "bogus": 1},
            "unknownTop": 1,
            "spec": {"color": "red", "unknown": true, "labels": {"a": "b"},
                     "ports": [{"port": 1, "junk": 2}],
                     "free": {"anything": {"goes": 1}, "known": {"a": "x", "b": "pruned"}},
                     "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "junk": true}, "spec": {"x": "1", "y": 2}, "other": 1}},
            "status": {"phase": "Ready", "extra": 1}
        });
        prune(&schema, &mut obj);
        assert_eq!(
            obj,
            json!({
                "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                "spec": {"color": "red", "labels": {"a": "b"},
                         "ports": [{"port": 1}],
                         "free": {"anything": {"goes": 1}, "known": {"a": "x"}},
                         "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": "1"}}},
                "status": {"phase": "Ready"}
            })
        );
    }

    #[test]
    fn prune_keeps_everything_under_root_preserve() {
        let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                            "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}});
        let mut obj = json!({"kind": "X", "metadata": {"name": "n", "x": 1}, "anything": 1, "spec": {"a": "1", "b": 2}});
        prune(&schema, &mut obj);
        assert_eq!(
            obj,
            json!({"kind": "X", "metadata": {"name": "n"}, "anything": 1, "spec": {"a": "1"}})
        );
    }

    fn single_cause(spec: Value) -> Cause {
        let causes = validate(&widget_schema(), &json!({"spec": spec}), None);
        assert_eq!(causes.len(), 1, "{causes:?}");
        causes.into_iter().next().unwrap()
    }

    #[rstest]
    #[case::type_string_for_int(json!({"color": "red", "size": "big"}), "spec.size", "FieldValueTypeInvalid",
        "Invalid value: \"string\": spec.size in body must be of type integer: \"string\"")]
    #[case::float_for_int(json!({"color": "red", "size": 1.5}), "spec.size", "FieldValueTypeInvalid",
        "Invalid value: \"number\": spec.size in body must be of type integer: \"number\"")]
    #[case::required(json!({"size": 2}), "spec.color", "FieldValueRequired", "Required value")]
    #[case::enumeration(json!({"color": "pink"}), "spec.color", "FieldValueNotSupported",
        "Unsupported value: \"pink\": supported values: \"red\", \"green\", \"blue\"")]
    #[case::maximum(json!({"color": "red", "size": 11}), "spec.size", "FieldValueInvalid",
        "Invalid value: 11: spec.size in body should be less than or equal to 10")]
    #[case::minimum(json!({"color": "red", "size": 0}), "spec.size", "FieldValueInvalid",
        "Invalid value: 0: spec.size in body should be greater than or equal to 1")]
    #[case::exclusive_max(json!({"color": "red", "ratio": 1.5}), "spec.ratio", "FieldValueInvalid",
        "Invalid value: 1.5: spec.ratio in body should be less than 1.5")]
    #[case::min_length(json!({"color": "red", "name": "a"}), "spec.name", "FieldValueInvalid",
        "Invalid value: \"a\": spec.name in body should be at least 2 chars long")]
    #[case::max_items(json!({"color": "red", "tags": ["a", "b", "c"]}), "spec.tags", "FieldValueTooMany",
        "Too many: 3: must have at most 2 items")]
    #[case::min_items(json!({"color": "red", "ports": []}), "spec.ports", "FieldValueInvalid",
        "Invalid value: 0: spec.ports in body should have at least 1 items")]
    #[case::item_type(json!({"color": "red", "tags": ["a", 1]}), "spec.tags[1]", "FieldValueTypeInvalid",
        "Invalid value: \"integer\": spec.tags[1] in body must be of type string: \"integer\"")]
    #[case::nested_item(json!({"color": "red", "ports": [{"port": "x"}]}), "spec.ports[0].port", "FieldValueTypeInvalid",
        "Invalid value: \"string\": spec.ports[0].port in body must be of type integer: \"string\"")]
    #[case::additional(json!({"color": "red", "labels": {"a": 1}}), "spec.labels.a", "FieldValueTypeInvalid",
        "Invalid value: \"integer\": spec.labels.a in body must be of type string: \"integer\"")]
    #[case::int_or_string(json!({"color": "red", "port": true}), "spec.port", "FieldValueTypeInvalid",
        "Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\"")]
    #[case::null(json!({"color": "red", "never": null}), "spec.never", "FieldValueTypeInvalid",
        "Invalid value: \"null\": spec.never in body must be of type string: \"null\"")]
    fn validation_errors(
        #[case] spec: Value,
        #[case] field: &str,
        #[case] reason: &str,
        #[case] message: &str,
    ) {
        let c = single_cause(spec);
        assert_eq!(
            (c.field.as_str(), c.reason.as_str(), c.message.as_str()),
            (field, reason, message)
        );
    }

    /// `pattern`, `format` and the compositions, with the causes the apiextensions server
    /// reports (kube-openapi's messages; a failed composition is reported against the root).
    #[rstest]
    #[case::pattern(json!({"code": "ab1"}), &[
        "spec.code FieldValueInvalid Invalid value: \"ab1\": spec.code in body should match '^[a-z]+$'"])]
    // Go's `\d` is ASCII: Arabic-Indic digits do not match it.
    #[case::pattern_ascii_digits(json!({"digits": "١٢"}), &[
        "spec.digits FieldValueInvalid Invalid value: \"١٢\": spec.digits in body should match '^\\d+$'"])]
    #[case::pattern_digits(json!({"digits": "12"}), &[])]
    // A pattern Go cannot compile fails every value (the CRD was accepted with it).
    #[case::pattern_invalid(json!({"broken": "a"}), &[
        "spec.broken FieldValueInvalid Invalid value: \"a\": spec.broken in body should match '(a, but pattern is invalid: error parsing regexp: missing closing ): `(a`'"])]
    #[case::pattern_after_length(json!({"code": "abcdefghijk"}), &[
        "spec.code FieldValueTooLong Too long: may not be more than 10 bytes"])]
    #[case::format(json!({"when": "yesterday"}), &[
        "spec.when FieldValueTypeInvalid Invalid value: \"yesterday\": spec.when in body must be of type date-time: \"yesterday\""])]
    #[case::format_valid(json!({"when": "2024-05-01T12:00:00Z", "ip": "10.1.2.3"}), &[])]
    #[case::int32_range(json!({"small": 3000000000i64}), &[
        "<nil> FieldValueInvalid Invalid value: \"\": Checked value must be of type integer with format int32 in spec.small"])]
    #[case::int32_fits(json!({"small": -2147483648i64}), &[])]
    #[case::unchecked_format(json!({"count": "12"}), &[])]
    #[case::any_of(json!({"size": "large"}), &[
        "<nil> FieldValueInvalid Invalid value: \"\": \"spec.size\" must validate at least one schema (anyOf)",
        "spec.size FieldValueNotSupported Unsupported value: \"large\": supported values: \"small\", \"medium\""])]
    // An alternative that declares its type runs one check more: its errors are the ones kept.
    #[case::any_of_typed(json!({"limit": "large"}), &[
        "<nil> FieldValueInvalid Invalid value: \"\": \"spec.limit\" must validate at least one schema (anyOf)",
        "spec.limit FieldValueInvalid Invalid value: \"large\": spec.limit in body should match '^[0-9]+$'"])]
    #[case::any_of_valid(json!({"size": "small"}), &[])]
    // The alternative that ran more checks (it knows both fields) is the one reported, though
    // it comes second.
    #[case::any_of_most_checks(json!({"pair": {"a": 1, "b": "x"}}), &[
        "<nil> FieldValueInvalid Invalid value: \"\": \"spec.pair\" must validate at least one schema (anyOf)",
        "spec.pair.y FieldValueRequired Required value"])]
    #[case::one_of_two(json!({"choice": "ab"}), &[
        "<nil> FieldValueInvalid Invalid value: \"\": \"spec.choice\" must validate one and only one schema (oneOf). Found 2 valid alternatives"])]
    #[case::one_of_one(json!({"choice": "abc"}), &[])]
    #[case::all_of(json!({"both": "x"}), &[
        "spec.both FieldValueInvalid Invalid value: \"x\": spec.both in body should be at least 2 chars long",
        "<nil> FieldValueInvalid Invalid value: \"\": \"spec.both\" must validate all the schemas (allOf)"])]
    #[case::not(json!({"other": "forbidden"}), &[
        "<nil> FieldValueInvalid Invalid value: \"\": \"spec.other\" must not validate the schema (not)"])]
    fn patterns_formats_and_compositions(#[case] spec: Value, #[case] expected: &[&str]) {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "code": {"type": "string", "maxLength": 10, "pattern": "^[a-z]+$"},
            "digits": {"type": "string", "pattern": "^\\d+$"},
            "broken": {"type": "string", "pattern": "(a"},
            "when": {"type": "string", "format": "date-time"},
            "ip": {"type": "string", "format": "ipv4"},
            "small": {"type": "integer", "format": "int32"},
            "count": {"type": "string", "format": "int32"},
            "size": {"type": "string", "anyOf": [{"enum": ["small", "medium"]}, {"pattern": "^[0-9]+(Mi|Gi)$"}]},
            "limit": {"type": "string", "anyOf": [{"enum": ["none"]}, {"type": "string", "pattern": "^[0-9]+$"}]},
            "choice": {"type": "string", "oneOf": [{"minLength": 2}, {"maxLength": 2}]},
            "both": {"type": "string", "allOf": [{"minLength": 2}, {"maxLength": 5}]},
            "other": {"type": "string", "not": {"enum": ["forbidden"]}},
            "pair": {"type": "object", "anyOf": [
                {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["z"]},
                {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["y"]}
            ]}
        }}}});
        let causes = validate(&schema, &json!({"spec": spec}), None);
        let got: Vec<String> = causes
            .iter()
            .map(|c| format!("{} {} {}", c.field, c.reason, c.message))
            .collect();
        assert_eq!(got, expected);
    }

    /// `CRDValidationRatcheting`: on update a value equal to the one it correlates with before
    /// (same property, same keys in a `map` list) is not held to the schema; a changed one is,
    /// and so is every item of a changed list of another type.
    #[test]
    fn unchanged_values_are_ratcheted_on_update() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "code": {"type": "string", "pattern": "^[a-z]+$"},
            "other": {"type": "string"},
            "keyed": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {
                          "name": {"type": "string"}, "value": {"type": "string", "pattern": "^[a-z]+$"}}}},
            "plain": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}}
        }}}});
        let old = json!({"spec": {"code": "BAD", "other": "a", "keyed": [{"name": "a", "value": "X"}], "plain": ["X"]}});
        let fields = |new: Value| -> Vec<String> {
            validate(&schema, &new, Some(&old))
                .into_iter()
                .map(|c| c.field)
                .collect()
        };
        assert!(fields(json!({"spec": {"code": "BAD", "other": "b", "keyed": [{"name": "a", "value": "X"}], "plain": ["X"]}})).is_empty());
        assert_eq!(
            fields(
                json!({"spec": {"code": "WORSE", "other": "a", "keyed": [{"name": "a", "value": "X"}], "plain": ["X"]}})
            ),
            ["spec.code"]
        );
        assert_eq!(
            fields(
                json!({"spec": {"code": "BAD", "keyed": [{"name": "b", "value": "Y"}, {"name": "a", "value": "X"}], "plain": ["X"]}})
            ),
            ["spec.keyed[0].value"]
        );
        assert_eq!(
            fields(
                json!({"spec": {"code": "BAD", "keyed": [{"name": "a", "value": "X"}], "plain": ["X", "y"]}})
            ),
            ["spec.plain[0]"]
        );
        // A create has nothing to ratchet against.
        assert_eq!(validate(&schema, &old, None).len(), 3);
    }

    #[test]
    fn list_types_reject_duplicates() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {"name": {"type": "string", "default": "http"}, "port": {"type": "integer"}}}}
        }}}});
        let obj = json!({"spec": {"tags": ["a", "b", "a", "a"], "ports": [{"name": "x", "port": 1}, {"port": 2}, {"name": "x", "port": 3}, {"name": "http"}]}});
        let causes = validate(&schema, &obj, None);
        let rendered: Vec<String> = causes.iter().map(Cause::error_text).collect();
        assert_eq!(
            rendered,
            vec![
                // Properties are checked in key order (the real server's order is a Go map's).
                "spec.ports[2]: Duplicate value: {\"name\":\"x\"}",
                "spec.ports[3]: Duplicate value: {\"name\":\"http\"}",
                "spec.tags[2]: Duplicate value: \"a\"",
            ]
        );
        assert_eq!(causes[0].reason, "FieldValueDuplicate");
        let bad = validate(&schema, &json!({"spec": {"ports": [1]}}), None);
        assert!(bad.iter().any(|c| c
            .message
            .ends_with("must be an object for an array of list-type map")));
    }

    /// On update the list-type checks ratchet as a whole: an object that already repeats a set
    /// item may be updated with any lists; one that keeps them may not start repeating.
    #[test]
    fn list_types_ratchet_on_the_whole_old_object() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "more": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
        }}}});
        let repeated = json!({"spec": {"tags": ["a", "a"]}});
        let clean = json!({"spec": {"tags": ["a"]}});
        let worse = json!({"spec": {"tags": ["a", "a"], "more": ["b", "b"]}});
        assert!(validate(&schema, &worse, Some(&repeated)).is_empty());
        let fields: Vec<String> = validate(&schema, &worse, Some(&clean))
            .iter()
            .map(|c| c.field.clone())
            .collect();
        assert_eq!(fields, ["spec.more[1]", "spec.tags[1]"]);
    }

    #[test]
    fn max_length_is_too_long() {
        let causes = validate(
            &widget_schema(),
            &json!({"spec": {"color": "redddd"}}),
            None,
        );
        let reasons: Vec<&str> = causes.iter().map(|c| c.reason.as_str()).collect();
        assert_eq!(reasons, ["FieldValueTooLong", "FieldValueNotSupported"]);
        let schema =
            json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}});
        let causes = validate(&schema, &json!({"s": "abcd"}), None);
        assert_eq!(causes[0].message, "Too long: may not be more than 3 bytes");
        assert_eq!(causes[0].reason, "FieldValueTooLong");
    }

    #[test]
    fn errors_come_in_the_validators_order() {
        let schema = json!({"type": "object", "required": ["b"], "minProperties": 3, "properties": {
            "a": {"type": "array", "minItems": 3, "items": {"type": "integer"}}}});
        let causes = validate(&schema, &json!({"a": ["x"]}), None);
        let fields: Vec<String> = causes.iter().map(Cause::error_text).collect();
        assert_eq!(
            fields,
            vec![
                "<nil>: Invalid value: 3:  in body should have at least 3 properties",
                "a[0]: Invalid value: \"string\": a[0] in body must be of type integer: \"string\"",
                "a: Invalid value: 1: a in body should have at least 3 items",
                "b: Required value",
            ]
        );
    }

    #[test]
    fn valid_objects_have_no_causes() {
        let obj = json!({"apiVersion": "x/v1", "kind": "Widget", "metadata": {"name": "w"},
                         "spec": {"color": "red", "size": 3, "ratio": 1.0, "port": "http", "maybe": null,
                                  "tags": ["a"], "ports": [{"port": 8080}], "labels": {"a": "b"}},
                         "status": {"phase": "x"}});
        assert!(validate(&widget_schema(), &obj, None).is_empty());
        assert!(validate(
            &widget_schema(),
            &json!({"spec": {"color": "red", "size": 2.0}}),
            None
        )
        .is_empty());
    }

    #[test]
    fn whole_message_renders_like_the_golden_run() {
        let causes = validate(
            &widget_schema(),
            &json!({"spec": {"color": "red", "size": "big"}}),
            None,
        );
        let err =
            crate::rules::validation::InvalidError::new("example.com", "Widget", "bad", causes);
        assert_eq!(
            err.message(),
            "Widget.example.com \"bad\" is invalid: spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\""
        );
        assert_eq!(err.causes[0].reason, "FieldValueTypeInvalid");
    }

    #[test]
    fn garbage_never_panics() {
        let schemas = [
            json!(null),
            json!(1),
            json!({"properties": 5, "items": [1], "required": "x", "enum": 3,
            "maximum": "x", "minLength": -1, "additionalProperties": "y", "allOf": [null, {"type": 7}]}),
            widget_schema(),
        ];
        let objects = [
            json!(null),
            json!([1, [2]]),
            json!({"spec": [1]}),
            json!({"spec": {"ports": "x", "nested": 1}}),
            json!("s"),
        ];
        for s in &schemas {
            for o in &objects {
                let mut x = o.clone();
                apply_defaults(s, &mut x);
                prune(s, &mut x);
                let _ = validate(s, &x, None);
            }
        }
    }
}
