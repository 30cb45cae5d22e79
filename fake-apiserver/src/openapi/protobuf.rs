//! The Swagger 2.0 document in the protobuf encoding client-go asks for
//! (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`, answered as
//! `application/com.github.proto-openapi.spec.v2.v1.0+protobuf`): gnostic's `openapi.v2.Document`
//! message (`github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto`).
//!
//! kubectl fetches `/openapi/v2` only this way (`DiscoveryClient.OpenAPISchema`). It needs it for
//! client-side validation when the OpenAPI v3 document has nothing for a kind (a custom resource
//! whose CRD is in the same file, say: with no schema the object is not validated and kubectl goes
//! on to say the kind is unknown) and for `kubectl explain --output=plaintext-openapiv2`.
//!
//! The encoder converts the JSON document [`super::v2_document`] builds. It covers what that
//! document holds: info, paths with their operations and parameters, and definitions with every
//! Swagger 2.0 schema keyword. Vendor extensions (`x-…`) and values (`default`, `enum`, `example`)
//! travel as gnostic `Any` messages carrying the value as YAML (JSON is YAML), which is how
//! kube-openapi reads them back. Schema keywords Swagger 2.0 has no field for (`oneOf`, `anyOf`,
//! `not`, `nullable`) are left out, as kube-apiserver leaves them out of its v2 document.

use serde_json::{Map, Value};

/// The media type of this encoding, as responses carry it.
pub const CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The deprecated spelling client-go still asks for. It is not a valid media type (`@`), so
/// kube-apiserver answers it with [`CONTENT_TYPE`], and so does this server: Go's `mime` parser
/// rejects the `@` form in a `Content-Type`.
pub const CONTENT_TYPE_DEPRECATED: &str =
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// Encodes a Swagger 2.0 JSON document as a gnostic `openapi.v2.Document`.
pub fn encode_document(document: &Value) -> Vec<u8> {
    let mut out = Writer::default();
    out.string(1, str_of(document, "swagger"));
    if let Some(info) = document.get("info") {
        out.message(2, |w| {
            w.string(1, str_of(info, "title"));
            w.string(2, str_of(info, "version"));
        });
    }
    if let Some(Value::Object(paths)) = document.get("paths") {
        out.message(8, |w| {
            for (name, item) in paths {
                if name.starts_with("x-") {
                    w.message(1, |e| named_any(e, name, item));
                } else {
                    w.message(2, |e| {
                        e.string(1, name);
                        e.message(2, |p| path_item(p, item));
                    });
                }
            }
        });
    }
    if let Some(Value::Object(definitions)) = document.get("definitions") {
        out.message(9, |w| named_schemas(w, 1, definitions));
    }
    vendor_extensions(&mut out, 16, document);
    out.bytes
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// `PathItem`.
fn path_item(w: &mut Writer, item: &Value) {
    for (field, method) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (6, "options"),
        (7, "head"),
        (8, "patch"),
    ] {
        if let Some(op) = item.get(method) {
            w.message(field, |o| operation(o, op));
        }
    }
    parameters(w, 9, item);
    vendor_extensions(w, 10, item);
}

/// `Operation`.
fn operation(w: &mut Writer, op: &Value) {
    w.strings(1, op.get("tags"));
    w.string(2, str_of(op, "summary"));
    w.string(3, str_of(op, "description"));
    w.string(5, str_of(op, "operationId"));
    w.strings(6, op.get("produces"));
    w.strings(7, op.get("consumes"));
    parameters(w, 8, op);
    if let Some(Value::Object(responses)) = op.get("responses") {
        w.message(9, |r| {
            for (code, response) in responses {
                if code.starts_with("x-") {
                    r.message(2, |e| named_any(e, code, response));
                    continue;
                }
                // NamedResponseValue { name, ResponseValue { oneof response = 1 } }
                r.message(1, |named| {
                    named.string(1, code);
                    named.message(2, |value| {
                        value.message(1, |resp| {
                            resp.string(1, str_of(response, "description"));
                            if let Some(schema) = response.get("schema") {
                                // SchemaItem { oneof schema = 1 }
                                resp.message(2, |item| {
                                    item.message(1, |s| schema_message(s, schema))
                                });
                            }
                            vendor_extensions(resp, 5, response);
                        })
                    });
                });
            }
        });
    }
    w.bool(
        11,
        op.get("deprecated")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    );
    vendor_extensions(w, 13, op);
}

/// A repeated `ParametersItem` field from `holder.parameters`.
fn parameters(w: &mut Writer, field: u32, holder: &Value) {
    let Some(Value::Array(parameters)) = holder.get("parameters") else {
        return;
    };
    for parameter in parameters {
        // ParametersItem { oneof parameter = 1 (Parameter) | json_reference = 2 }
        w.message(field, |item| {
            if let Some(reference) = parameter.get("$ref").and_then(Value::as_str) {
                item.message(2, |r| r.string(1, reference));
                return;
            }
            item.message(1, |p| {
                let location = str_of(parameter, "in");
                if location == "body" {
                    // Parameter { oneof body_parameter = 1 }
                    p.message(1, |b| {
                        b.string(1, str_of(parameter, "description"));
                        b.string(2, str_of(parameter, "name"));
                        b.string(3, location);
                        b.bool(4, bool_of(parameter, "required"));
                        if let Some(schema) = parameter.get("schema") {
                            b.message(5, |s| schema_message(s, schema));
                        }
                        vendor_extensions(b, 6, parameter);
                    });
                } else {
                    // Parameter { oneof non_body_parameter = 2 }
                    p.message(2, |n| non_body_parameter(n, parameter, location));
                }
            });
        });
    }
}

fn bool_of(value: &Value, key: &str) -> bool {
    value.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// `NonBodyParameter`: one of the header (1), formData (2), query (3) and path (4) sub-schemas.
/// Their fields share one layout after `name`, offset by one where `allow_empty_value` exists.
fn non_body_parameter(w: &mut Writer, parameter: &Value, location: &str) {
    let (field, has_allow_empty) = match location {
        "header" => (1, false),
        "formData" => (2, true),
        "path" => (4, false),
        _ => (3, true),
    };
    w.message(field, |s| {
        s.bool(1, bool_of(parameter, "required"));
        s.string(2, location);
        s.string(3, str_of(parameter, "description"));
        s.string(4, str_of(parameter, "name"));
        let shift = u32::from(has_allow_empty);
        if has_allow_empty {
            s.bool(5, bool_of(parameter, "allowEmptyValue"));
        }
        s.string(5 + shift, str_of(parameter, "type"));
        s.string(6 + shift, str_of(parameter, "format"));
        s.string(8 + shift, str_of(parameter, "collectionFormat"));
        if let Some(default) = parameter.get("default") {
            s.message(9 + shift, |a| any(a, default));
        }
        s.bool(19 + shift, bool_of(parameter, "uniqueItems"));
        vendor_extensions(s, 22 + shift, parameter);
    });
}

/// `NamedSchema` entries (name = 1, value = 2) for every member of `schemas`.
fn named_schemas(w: &mut Writer, field: u32, schemas: &Map<String, Value>) {
    for (name, schema) in schemas {
        w.message(field, |n| {
            n.string(1, name);
            n.message(2, |s| schema_message(s, schema));
        });
    }
}

/// `Schema`.
fn schema_message(w: &mut Writer, schema: &Value) {
    let Value::Object(map) = schema else {
        return;
    };
    let text = |key: &str| map.get(key).and_then(Value::as_str).unwrap_or_default();
    let number = |key: &str| map.get(key).and_then(Value::as_f64);
    let integer = |key: &str| map.get(key).and_then(Value::as_i64);
    let flag = |key: &str| map.get(key).and_then(Value::as_bool).unwrap_or(false);
    w.string(1, text("$ref"));
    w.string(2, text("format"));
    w.string(3, text("title"));
    w.string(4, text("description"));
    if let Some(default) = map.get("default") {
        w.message(5, |a| any(a, default));
    }
    w.double(6, number("multipleOf"));
    w.double(7, number("maximum"));
    w.bool(8, flag("exclusiveMaximum"));
    w.double(9, number("minimum"));
    w.bool(10, flag("exclusiveMinimum"));
    w.int64(11, integer("maxLength"));
    w.int64(12, integer("minLength"));
    w.string(13, text("pattern"));
    w.int64(14, integer("maxItems"));
    w.int64(15, integer("minItems"));
    w.bool(16, flag("uniqueItems"));
    w.int64(17, integer("maxProperties"));
    w.int64(18, integer("minProperties"));
    w.strings(19, map.get("required"));
    if let Some(Value::Array(values)) = map.get("enum") {
        for value in values {
            w.message(20, |a| any(a, value));
        }
    }
    match map.get("additionalProperties") {
        // AdditionalPropertiesItem { oneof schema = 1 | boolean = 2 }
        Some(Value::Bool(allowed)) => w.message(21, |a| a.bool_always(2, *allowed)),
        Some(additional @ Value::Object(_)) => {
            w.message(21, |a| a.message(1, |s| schema_message(s, additional)))
        }
        _ => {}
    }
    match map.get("type") {
        Some(Value::String(kind)) => w.message(22, |t| t.string(1, kind)),
        Some(kinds @ Value::Array(_)) => w.message(22, |t| t.strings(1, Some(kinds))),
        _ => {}
    }
    match map.get("items") {
        Some(item @ Value::Object(_)) => {
            w.message(23, |i| i.message(1, |s| schema_message(s, item)))
        }
        Some(Value::Array(items)) => w.message(23, |i| {
            for item in items {
                i.message(1, |s| schema_message(s, item));
            }
        }),
        _ => {}
    }
    if let Some(Value::Array(all_of)) = map.get("allOf") {
        for part in all_of {
            w.message(24, |s| schema_message(s, part));
        }
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        w.message(25, |p| named_schemas(p, 1, properties));
    }
    w.string(26, text("discriminator"));
    w.bool(27, flag("readOnly"));
    if let Some(docs) = map.get("externalDocs") {
        w.message(29, |d| {
            d.string(1, str_of(docs, "description"));
            d.string(2, str_of(docs, "url"));
        });
    }
    if let Some(example) = map.get("example") {
        w.message(30, |a| any(a, example));
    }
    vendor_extensions(w, 31, schema);
}

/// A repeated `NamedAny` field with every `x-…` member of `holder`.
fn vendor_extensions(w: &mut Writer, field: u32, holder: &Value) {
    let Value::Object(map) = holder else {
        return;
    };
    for (name, value) in map.iter().filter(|(name, _)| name.starts_with("x-")) {
        w.message(field, |e| named_any(e, name, value));
    }
}

/// `NamedAny { name = 1, value = 2 }`.
fn named_any(w: &mut Writer, name: &str, value: &Value) {
    w.string(1, name);
    w.message(2, |a| any(a, value));
}

/// gnostic `Any`: the value as YAML text in field 2 (JSON is valid YAML).
fn any(w: &mut Writer, value: &Value) {
    w.string_always(2, &value.to_string());
}

/// A protobuf wire-format writer. Default (zero) scalar values are omitted, as proto3 does.
#[derive(Default)]
struct Writer {
    bytes: Vec<u8>,
}

impl Writer {
    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.bytes.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.bytes.push(value as u8);
    }

    fn key(&mut self, field: u32, wire_type: u8) {
        self.varint((u64::from(field) << 3) | u64::from(wire_type));
    }

    fn length_delimited(&mut self, field: u32, payload: &[u8]) {
        self.key(field, 2);
        self.varint(payload.len() as u64);
        self.bytes.extend_from_slice(payload);
    }

    fn string(&mut self, field: u32, value: &str) {
        if !value.is_empty() {
            self.string_always(field, value);
        }
    }

    fn string_always(&mut self, field: u32, value: &str) {
        self.length_delimited(field, value.as_bytes());
    }

    /// A repeated string field from a JSON array of strings (other entries are skipped).
    fn strings(&mut self, field: u32, values: Option<&Value>) {
        if let Some(Value::Array(values)) = values {
            for value in values.iter().filter_map(Value::as_str) {
                self.string_always(field, value);
            }
        }
    }

    fn bool(&mut self, field: u32, value: bool) {
        if value {
            self.bool_always(field, value);
        }
    }

    fn bool_always(&mut self, field: u32, value: bool) {
        self.key(field, 0);
        self.varint(u64::from(value));
    }

    fn int64(&mut self, field: u32, value: Option<i64>) {
        if let Some(value) = value.filter(|v| *v != 0) {
            self.key(field, 0);
            // Negative int64 values are ten-byte two's-complement varints.
            self.varint(value as u64);
        }
    }

    fn double(&mut self, field: u32, value: Option<f64>) {
        if let Some(value) = value.filter(|v| *v != 0.0) {
            self.key(field, 1);
            self.bytes.extend_from_slice(&value.to_le_bytes());
        }
    }

    /// An embedded message written by `build`.
    fn message(&mut self, field: u32, build: impl FnOnce(&mut Writer)) {
        let mut inner = Writer::default();
        build(&mut inner);
        self.length_delimited(field, &inner.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A decoded protobuf field.
    #[derive(Debug, Clone, PartialEq)]
    enum Field {
        Varint(u64),
        Fixed64(u64),
        Bytes(Vec<u8>),
    }

    /// Decodes one level of wire format into (field number, value) pairs.
    fn decode(mut bytes: &[u8]) -> Vec<(u32, Field)> {
        fn varint(bytes: &mut &[u8]) -> u64 {
            let mut value = 0u64;
            let mut shift = 0;
            loop {
                let byte = bytes[0];
                *bytes = &bytes[1..];
                value |= u64::from(byte & 0x7f) << shift;
                if byte < 0x80 {
                    return value;
                }
                shift += 7;
            }
        }
        let mut fields = Vec::new();
        while !bytes.is_empty() {
            let key = varint(&mut bytes);
            let field = (key >> 3) as u32;
            let value = match key & 7 {
                0 => Field::Varint(varint(&mut bytes)),
                1 => {
                    let v = u64::from_le_bytes(bytes[..8].try_into().unwrap());
                    bytes = &bytes[8..];
                    Field::Fixed64(v)
                }
                2 => {
                    let len = varint(&mut bytes) as usize;
                    let v = bytes[..len].to_vec();
                    bytes = &bytes[len..];
                    Field::Bytes(v)
                }
                other => panic!("unexpected wire type {other}"),
            };
            fields.push((field, value));
        }
        fields
    }

    fn bytes_of(fields: &[(u32, Field)], number: u32) -> Vec<Vec<u8>> {
        fields
            .iter()
            .filter(|(n, _)| *n == number)
            .map(|(_, f)| match f {
                Field::Bytes(b) => b.clone(),
                other => panic!("field {number} is {other:?}"),
            })
            .collect()
    }

    fn text(fields: &[(u32, Field)], number: u32) -> String {
        String::from_utf8(bytes_of(fields, number).pop().unwrap_or_default()).unwrap()
    }

    #[test]
    fn writer_uses_the_wire_format() {
        let mut w = Writer::default();
        w.string(1, "2.0");
        w.int64(11, Some(300));
        w.int64(12, Some(-1));
        w.double(7, Some(1.5));
        w.bool(4, true);
        w.bool(5, false);
        w.string(6, "");
        assert_eq!(
            decode(&w.bytes),
            vec![
                (1, Field::Bytes(b"2.0".to_vec())),
                (11, Field::Varint(300)),
                (12, Field::Varint(u64::MAX)),
                (7, Field::Fixed64(1.5f64.to_bits())),
                (4, Field::Varint(1)),
            ]
        );
    }

    #[test]
    fn document_fields_land_where_gnostic_reads_them() {
        let doc = json!({
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": "v1.36.2"},
            "paths": {
                "/api/v1/pods": {
                    "get": {
                        "operationId": "listCoreV1Pod",
                        "consumes": ["*/*"],
                        "parameters": [
                            {"name": "limit", "in": "query", "type": "integer", "uniqueItems": true},
                            {"name": "body", "in": "body", "required": true, "schema": {"$ref": "#/definitions/P"}}
                        ],
                        "responses": {"200": {"description": "OK", "schema": {"$ref": "#/definitions/P"}}},
                        "x-kubernetes-action": "list"
                    }
                }
            },
            "definitions": {
                "P": {
                    "type": "object",
                    "required": ["spec"],
                    "properties": {
                        "spec": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "mode": {"type": "string", "enum": ["A", "B"], "default": "A"}
                    },
                    "x-kubernetes-group-version-kind": [{"group": "", "kind": "P", "version": "v1"}]
                }
            }
        });
        let top = decode(&encode_document(&doc));
        assert_eq!(text(&top, 1), "2.0");
        let info = decode(&bytes_of(&top, 2)[0]);
        assert_eq!(text(&info, 1), "Kubernetes");
        assert_eq!(text(&info, 2), "v1.36.2");

        // Paths { path = 2: NamedPathItem { name, PathItem { get = 2: Operation } } }
        let paths = decode(&bytes_of(&top, 8)[0]);
        let named = decode(&bytes_of(&paths, 2)[0]);
        assert_eq!(text(&named, 1), "/api/v1/pods");
        let item = decode(&bytes_of(&named, 2)[0]);
        let get = decode(&bytes_of(&item, 2)[0]);
        assert_eq!(text(&get, 5), "listCoreV1Pod");
        assert_eq!(text(&get, 7), "*/*");
        let params = bytes_of(&get, 8);
        assert_eq!(params.len(), 2);
        // ParametersItem { parameter = 1: Parameter { non_body = 2: { query = 3 } } }
        let query = decode(
            &bytes_of(
                &decode(&bytes_of(&decode(&bytes_of(&decode(&params[0]), 1)[0]), 2)[0]),
                3,
            )[0],
        );
        assert_eq!(text(&query, 4), "limit");
        assert_eq!(text(&query, 6), "integer");
        assert!(query.contains(&(20, Field::Varint(1))));
        let body = decode(&bytes_of(&decode(&bytes_of(&decode(&params[1]), 1)[0]), 1)[0]);
        assert_eq!(text(&body, 2), "body");
        assert_eq!(text(&body, 3), "body");
        let body_schema = decode(&bytes_of(&body, 5)[0]);
        assert_eq!(text(&body_schema, 1), "#/definitions/P");
        // Responses { response_code = 1: { name, ResponseValue { response = 1: Response } } }
        let responses = decode(&bytes_of(&get, 9)[0]);
        let code = decode(&bytes_of(&responses, 1)[0]);
        assert_eq!(text(&code, 1), "200");
        let response = decode(&bytes_of(&decode(&bytes_of(&code, 2)[0]), 1)[0]);
        assert_eq!(text(&response, 1), "OK");
        let extension = decode(&bytes_of(&get, 13)[0]);
        assert_eq!(text(&extension, 1), "x-kubernetes-action");
        assert_eq!(text(&decode(&bytes_of(&extension, 2)[0]), 2), "\"list\"");

        // Definitions { NamedSchema { name, Schema } }
        let definitions = decode(&bytes_of(&top, 9)[0]);
        let p = decode(&bytes_of(&definitions, 1)[0]);
        assert_eq!(text(&p, 1), "P");
        let schema = decode(&bytes_of(&p, 2)[0]);
        assert_eq!(text(&schema, 19), "spec");
        assert_eq!(text(&decode(&bytes_of(&schema, 22)[0]), 1), "object");
        let gvk = decode(&bytes_of(&schema, 31)[0]);
        assert_eq!(text(&gvk, 1), "x-kubernetes-group-version-kind");
        let yaml = text(&decode(&bytes_of(&gvk, 2)[0]), 2);
        assert_eq!(
            serde_json::from_str::<Value>(&yaml).unwrap(),
            json!([{"group": "", "kind": "P", "version": "v1"}])
        );
        let properties = decode(&bytes_of(&schema, 25)[0]);
        let names: Vec<String> = bytes_of(&properties, 1)
            .iter()
            .map(|p| text(&decode(p), 1))
            .collect();
        // Properties come in key order.
        assert_eq!(names, ["labels", "mode", "spec"]);
        let property = |name: &str| {
            let at = names.iter().position(|n| n == name).unwrap();
            decode(&bytes_of(&decode(&bytes_of(&properties, 1)[at]), 2)[0])
        };
        let spec = property("spec");
        assert!(spec.contains(&(14, Field::Varint(3))));
        let items = decode(&bytes_of(&spec, 23)[0]);
        assert_eq!(bytes_of(&items, 1).len(), 1);
        let labels = property("labels");
        let additional = decode(&bytes_of(&labels, 21)[0]);
        assert_eq!(bytes_of(&additional, 1).len(), 1);
        let mode = property("mode");
        assert_eq!(bytes_of(&mode, 20).len(), 2);
        assert_eq!(text(&decode(&bytes_of(&mode, 5)[0]), 2), "\"A\"");
    }

    #[test]
    fn odd_input_does_not_panic() {
        for doc in [
            json!(null),
            json!([]),
            json!({"paths": {"/x": {"get": {"parameters": [1, {"in": 2}], "responses": {"200": 3}}}}}),
            json!({"definitions": {"A": {"type": 7, "items": "x", "additionalProperties": 3, "enum": 5}}}),
        ] {
            let _ = encode_document(&doc);
        }
    }
}
