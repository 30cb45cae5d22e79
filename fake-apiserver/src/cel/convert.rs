//! JSON values as CEL values.
//!
//! Objects become maps with string keys, arrays lists, whole JSON numbers `int` and others
//! `double`, as Kubernetes converts unstructured content. With a structural schema
//! ([`schema_json_to_val`]), a `type: number` is always a `double`, property names that are not
//! CEL identifiers are escaped (`x-prop` → `x__dash__prop`), and at a resource's root
//! `metadata` holds only `name` and `generateName`, as for CRD rules.

use std::collections::HashMap;

use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt,
};
use cel::common::value::Val;
use serde_json::Value;

/// A JSON value as a CEL value (borrowing its strings).
pub fn json_to_val(v: &Value) -> Box<dyn Val + '_> {
    match v {
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(*b)),
        Value::Number(n) => number(n, false),
        Value::String(s) => Box::new(CelString::from(s.as_str())),
        Value::Array(items) => Box::new(CelList::from(
            items.iter().map(json_to_val).collect::<Vec<_>>(),
        )),
        Value::Object(m) => {
            let map: HashMap<CelMapKey<'_>, Box<dyn Val + '_>> = m
                .iter()
                .map(|(k, v)| (CelMapKey::from(k.as_str()), json_to_val(v)))
                .collect();
            Box::new(CelMap::from(map))
        }
    }
}

fn number(n: &serde_json::Number, double: bool) -> Box<dyn Val + 'static> {
    if !double {
        if let Some(i) = n.as_i64() {
            return Box::new(CelInt::from(i));
        }
        if let Some(u) = n.as_u64() {
            return Box::new(CelUInt::from(u));
        }
    }
    Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN)))
}

/// A value of a custom resource (or part of one) as CEL sees it through its structural schema
/// `schema`; `resource_root` for the root of a resource (or an embedded resource).
pub fn schema_json_to_val<'a>(
    v: &'a Value,
    schema: Option<&'a Value>,
    resource_root: bool,
) -> Box<dyn Val + 'a> {
    let Some(s) = schema else {
        return json_to_val(v);
    };
    match v {
        Value::Number(n) => number(n, s.get("type").and_then(Value::as_str) == Some("number")),
        Value::Array(items) => {
            let item_schema = s.get("items");
            Box::new(CelList::from(
                items
                    .iter()
                    .map(|i| schema_json_to_val(i, item_schema, embedded(item_schema)))
                    .collect::<Vec<_>>(),
            ))
        }
        Value::Object(m) => {
            let props = s.get("properties").and_then(Value::as_object);
            let additional = s.get("additionalProperties").filter(|a| a.is_object());
            let mut map: HashMap<CelMapKey<'a>, Box<dyn Val + 'a>> = HashMap::new();
            for (k, field) in m {
                if resource_root && k == "metadata" {
                    map.insert(CelMapKey::from("metadata"), root_metadata(field));
                    continue;
                }
                match props.and_then(|p| p.get(k)) {
                    Some(prop) => {
                        let Some(name) = escape(k) else { continue };
                        map.insert(
                            CelMapKey::from(name),
                            schema_json_to_val(field, Some(prop), embedded(Some(prop))),
                        );
                    }
                    None if additional.is_some() => {
                        map.insert(
                            CelMapKey::from(k.as_str()),
                            schema_json_to_val(field, additional, embedded(additional)),
                        );
                    }
                    None => {
                        map.insert(CelMapKey::from(k.as_str()), json_to_val(field));
                    }
                }
            }
            Box::new(CelMap::from(map))
        }
        other => json_to_val(other),
    }
}

fn embedded(s: Option<&Value>) -> bool {
    s.and_then(|s| s.get("x-kubernetes-embedded-resource"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// `metadata` at a resource root: only `name` and `generateName` are visible to rules.
fn root_metadata(meta: &Value) -> Box<dyn Val + '_> {
    let mut map: HashMap<CelMapKey<'_>, Box<dyn Val + '_>> = HashMap::new();
    for key in ["name", "generateName"] {
        if let Some(v) = meta.get(key) {
            map.insert(CelMapKey::from(key), json_to_val(v));
        }
    }
    Box::new(CelMap::from(map))
}

/// CEL's reserved words a property name is escaped from (`__in__`).
const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The name a property has in CEL (`Escape` of `k8s.io/apiserver/pkg/cel`): `None` when it
/// cannot be escaped (it then is not visible).
pub fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// The CEL type name of a value.
pub(crate) fn type_name(v: &cel::Value) -> &'static str {
    match v {
        cel::Value::List(_) => "list",
        cel::Value::Map(_) => "map",
        cel::Value::Int(_) => "int",
        cel::Value::UInt(_) => "uint",
        cel::Value::Float(_) => "double",
        cel::Value::String(_) => "string",
        cel::Value::Bytes(_) => "bytes",
        cel::Value::Bool(_) => "bool",
        cel::Value::Null => "null_type",
        cel::Value::Duration(_) => "google.protobuf.Duration",
        cel::Value::Timestamp(_) => "google.protobuf.Timestamp",
        _ => "dyn",
    }
}

/// A value as a message shows it.
pub(crate) fn display(v: &cel::Value) -> String {
    match v {
        cel::Value::Int(i) => i.to_string(),
        cel::Value::UInt(u) => u.to_string(),
        cel::Value::Float(f) => f.to_string(),
        cel::Value::String(s) => s.to_string(),
        cel::Value::Bool(b) => b.to_string(),
        other => format!("{other:?}"),
    }
}
