//! How a bad value of a CRD field appears in a field error.
//!
//! `field.Error.ErrorBody` prints strings quoted, numbers and booleans plain, and every other
//! value as `encoding/json.Marshal` encodes it. The apiextensions *internal* types have no JSON
//! tags, so a version or a schema is encoded with Go's field names, every field present
//! (`{"Name":"v1","Served":true,...}`); free-form JSON (defaults, examples, enums) is encoded
//! compactly with sorted keys and `<`, `>`, `&` escaped, as Go does.

use serde_json::Value;

use super::InternalSpec;

pub use crate::rules::validation::go_json;

fn write_string(s: &str, out: &mut String) {
    out.push_str(&go_json(&Value::String(s.to_string())));
}

/// A `[]string` (`null` when missing).
pub fn string_list(items: Option<&Value>) -> String {
    match items.and_then(Value::as_array) {
        None => "null".to_string(),
        Some(list) => {
            let strings: Vec<Value> = list
                .iter()
                .map(|v| Value::String(v.as_str().unwrap_or_default().to_string()))
                .collect();
            go_json(&Value::Array(strings))
        }
    }
}

/// One field of a Go struct rendered as JSON with its Go name.
struct Fields(String);

impl Fields {
    fn new() -> Self {
        Fields(String::from("{"))
    }

    fn raw(mut self, name: &str, rendered: String) -> Self {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        self.0.push('"');
        self.0.push_str(name);
        self.0.push_str("\":");
        self.0.push_str(&rendered);
        self
    }

    /// A `string` field (empty when missing).
    fn string(self, name: &str, v: &Value, key: &str) -> Self {
        let s = v.get(key).and_then(Value::as_str).unwrap_or_default();
        self.raw(name, go_json(&Value::String(s.to_string())))
    }

    /// A `bool` field (false when missing).
    fn boolean(self, name: &str, v: &Value, key: &str) -> Self {
        let b = v.get(key).and_then(Value::as_bool).unwrap_or(false);
        self.raw(name, b.to_string())
    }

    /// A pointer or interface field (`null` when missing).
    fn json(self, name: &str, v: &Value, key: &str) -> Self {
        let rendered = v.get(key).map_or_else(|| "null".to_string(), go_json);
        self.raw(name, rendered)
    }

    /// An `int32`/`int64` field (0 when missing).
    fn int(self, name: &str, v: &Value, key: &str) -> Self {
        let n = v.get(key).and_then(Value::as_i64).unwrap_or(0);
        self.raw(name, n.to_string())
    }

    fn done(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

fn opt<F: Fn(&Value) -> String>(v: Option<&Value>, f: F) -> String {
    match v {
        None | Some(Value::Null) => "null".to_string(),
        Some(v) => f(v),
    }
}

fn list_of<F: Fn(&Value) -> String>(v: Option<&Value>, f: F) -> String {
    match v.and_then(Value::as_array) {
        None => "null".to_string(),
        Some(items) => {
            let inner: Vec<String> = items.iter().map(f).collect();
            format!("[{}]", inner.join(","))
        }
    }
}

fn map_of<F: Fn(&Value) -> String>(v: Option<&Value>, f: F) -> String {
    match v.and_then(Value::as_object) {
        None => "null".to_string(),
        Some(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .iter()
                .map(|k| {
                    let mut key = String::new();
                    write_string(k, &mut key);
                    format!("{key}:{}", f(&m[k.as_str()]))
                })
                .collect();
            format!("{{{}}}", inner.join(","))
        }
    }
}

/// An internal `JSONSchemaProps`.
pub fn schema(s: &Value) -> String {
    let items = |v: &Value| {
        // JSONSchemaPropsOrArray: a schema or a list of schemas.
        if v.is_array() {
            Fields::new()
                .raw("Schema", "null".into())
                .raw("JSONSchemas", list_of(Some(v), schema))
                .done()
        } else {
            Fields::new()
                .raw("Schema", schema(v))
                .raw("JSONSchemas", "null".into())
                .done()
        }
    };
    let or_bool = |v: &Value| match v {
        Value::Bool(b) => Fields::new()
            .raw("Allows", b.to_string())
            .raw("Schema", "null".into())
            .done(),
        other => Fields::new()
            .raw("Allows", "true".into())
            .raw("Schema", schema(other))
            .done(),
    };
    let dependency = |v: &Value| match v {
        Value::Array(_) => Fields::new()
            .raw("Schema", "null".into())
            .raw("Property", string_list(Some(v)))
            .done(),
        other => Fields::new()
            .raw("Schema", schema(other))
            .raw("Property", "null".into())
            .done(),
    };
    let docs = |v: &Value| {
        Fields::new()
            .string("Description", v, "description")
            .string("URL", v, "url")
            .done()
    };
    let rule = |v: &Value| {
        Fields::new()
            .string("Rule", v, "rule")
            .string("Message", v, "message")
            .string("MessageExpression", v, "messageExpression")
            .json("Reason", v, "reason")
            .string("FieldPath", v, "fieldPath")
            .json("OptionalOldSelf", v, "optionalOldSelf")
            .done()
    };
    Fields::new()
        .string("ID", s, "id")
        .string("Schema", s, "$schema")
        .json("Ref", s, "$ref")
        .string("Description", s, "description")
        .string("Type", s, "type")
        .boolean("Nullable", s, "nullable")
        .string("Format", s, "format")
        .string("Title", s, "title")
        .json("Default", s, "default")
        .json("Maximum", s, "maximum")
        .boolean("ExclusiveMaximum", s, "exclusiveMaximum")
        .json("Minimum", s, "minimum")
        .boolean("ExclusiveMinimum", s, "exclusiveMinimum")
        .json("MaxLength", s, "maxLength")
        .json("MinLength", s, "minLength")
        .string("Pattern", s, "pattern")
        .json("MaxItems", s, "maxItems")
        .json("MinItems", s, "minItems")
        .boolean("UniqueItems", s, "uniqueItems")
        .json("MultipleOf", s, "multipleOf")
        .json("Enum", s, "enum")
        .json("MaxProperties", s, "maxProperties")
        .json("MinProperties", s, "minProperties")
        .raw("Required", string_list(s.get("required")))
        .raw("Items", opt(s.get("items"), items))
        .raw("AllOf", list_of(s.get("allOf"), schema))
        .raw("OneOf", list_of(s.get("oneOf"), schema))
        .raw("AnyOf", list_of(s.get("anyOf"), schema))
        .raw("Not", opt(s.get("not"), schema))
        .raw("Properties", map_of(s.get("properties"), schema))
        .raw(
            "AdditionalProperties",
            opt(s.get("additionalProperties"), or_bool),
        )
        .raw(
            "PatternProperties",
            map_of(s.get("patternProperties"), schema),
        )
        .raw("Dependencies", map_of(s.get("dependencies"), dependency))
        .raw("AdditionalItems", opt(s.get("additionalItems"), or_bool))
        .raw("Definitions", map_of(s.get("definitions"), schema))
        .raw("ExternalDocs", opt(s.get("externalDocs"), docs))
        .json("Example", s, "example")
        .json(
            "XPreserveUnknownFields",
            s,
            "x-kubernetes-preserve-unknown-fields",
        )
        .boolean("XEmbeddedResource", s, "x-kubernetes-embedded-resource")
        .boolean("XIntOrString", s, "x-kubernetes-int-or-string")
        .raw(
            "XListMapKeys",
            string_list(s.get("x-kubernetes-list-map-keys")),
        )
        .json("XListType", s, "x-kubernetes-list-type")
        .json("XMapType", s, "x-kubernetes-map-type")
        .raw(
            "XValidations",
            list_of(s.get("x-kubernetes-validations"), rule),
        )
        .done()
}

/// An internal `JSONSchemaPropsOrArray` (the `items` of a schema).
pub fn schema_items(items: &Value) -> String {
    if items.is_array() {
        Fields::new()
            .raw("Schema", "null".into())
            .raw("JSONSchemas", list_of(Some(items), schema))
            .done()
    } else {
        Fields::new()
            .raw("Schema", schema(items))
            .raw("JSONSchemas", "null".into())
            .done()
    }
}

fn subresources(v: &Value) -> String {
    let scale = |s: &Value| {
        Fields::new()
            .string("SpecReplicasPath", s, "specReplicasPath")
            .string("StatusReplicasPath", s, "statusReplicasPath")
            .json("LabelSelectorPath", s, "labelSelectorPath")
            .done()
    };
    Fields::new()
        .raw("Status", opt(v.get("status"), |_| "{}".to_string()))
        .raw("Scale", opt(v.get("scale"), scale))
        .done()
}

fn column(c: &Value) -> String {
    Fields::new()
        .string("Name", c, "name")
        .string("Type", c, "type")
        .string("Format", c, "format")
        .string("Description", c, "description")
        .int("Priority", c, "priority")
        .string("JSONPath", c, "jsonPath")
        .done()
}

/// The internal `spec.versions`, as the version list errors print them.
pub fn versions(spec: &InternalSpec<'_>) -> String {
    let rendered: Vec<String> = spec
        .versions
        .iter()
        .map(|v| {
            let validation = |s: &Value| {
                Fields::new()
                    .raw("OpenAPIV3Schema", opt(s.get("openAPIV3Schema"), schema))
                    .done()
            };
            let selectable = |f: &Value| Fields::new().string("JSONPath", f, "jsonPath").done();
            Fields::new()
                .string("Name", v.raw, "name")
                .boolean("Served", v.raw, "served")
                .boolean("Storage", v.raw, "storage")
                .boolean("Deprecated", v.raw, "deprecated")
                .json("DeprecationWarning", v.raw, "deprecationWarning")
                .raw("Schema", opt(v.schema, validation))
                .raw("Subresources", opt(v.subresources, subresources))
                .raw("AdditionalPrinterColumns", list_of(v.columns, column))
                .raw("SelectableFields", list_of(v.selectable_fields, selectable))
                .done()
        })
        .collect();
    format!("[{}]", rendered.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn free_form_json_is_sorted_compact_and_html_escaped() {
        assert_eq!(
            go_json(&json!({"b": [1, 2.5], "a": "<&>"})),
            r#"{"a":"\u003c\u0026\u003e","b":[1,2.5]}"#
        );
        assert_eq!(string_list(None), "null");
        assert_eq!(string_list(Some(&json!(["a", "b"]))), r#"["a","b"]"#);
    }

    #[test]
    fn versions_render_with_go_field_names() {
        let spec = json!({"versions": [{"name": "v1", "served": true, "storage": false}]});
        let internal = InternalSpec::of(&spec);
        assert_eq!(
            versions(&internal),
            r#"[{"Name":"v1","Served":true,"Storage":false,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]"#
        );
    }

    #[test]
    fn schema_renders_every_field() {
        let s = schema(&json!({"type": "object"}));
        assert!(s.starts_with(
            r#"{"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","Nullable":false,"#
        ));
        assert!(s.ends_with(r#""XListType":null,"XMapType":null,"XValidations":null}"#));
    }
}
