//! A fast answer to "would this body decode cleanly into its typed struct?", without decoding.
//!
//! [`crate::http::typed::decode`] decodes a written built-in object into its k8s-openapi type, as the
//! real server decodes into Go structs, to refuse wrong types (400) and find unknown fields
//! (warnings). That decode builds and drops a whole typed tree, which costs more than the rest of
//! a write. Almost every body decodes cleanly, so this module first walks the parsed body along
//! the kind's shape and says [`Verdict::Clean`] only when the typed decode could not fail nor
//! skip a field; anything else is [`Verdict::Unsure`] and the caller runs the typed decode, whose
//! answer (error message, warnings) is then the only one a client sees. The check is therefore
//! never less strict than the decode: a false `Unsure` costs time, never a different answer.
//!
//! The shape is compiled from the same k8s-openapi schemas the server publishes
//! ([`crate::openapi::builtin_definitions_of`]), which k8s-openapi generates together with its
//! `Deserialize` impls. What the decode accepts, position by position:
//! - a struct: a JSON object whose every key is a field (any other key is skipped, i.e.
//!   unknown); every field is optional, so `null` is accepted for it; a resource type checks
//!   `apiVersion` and `kind`;
//! - a list or a map: each element decodes as its type, where `null` is accepted only by types
//!   that take it themselves;
//! - a leaf: decided by the leaf's own Rust type (`String`, `i32`, `Time`, `IntOrString`,
//!   `Quantity`, `ByteString`, ...), called on the value, so formats (timestamps, base64, ranges)
//!   are judged by the very code that decodes them;
//! - anything this module does not recognise is `Unsure`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::resource::ResourceInfo;

/// What the check concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The typed decode succeeds and skips nothing: it can be left out.
    Clean,
    /// The typed decode must run (it may refuse the body, or warn).
    Unsure,
}

/// Index of a node in a [`Shape`].
type NodeId = usize;

/// A leaf type: a JSON value decoded by one Rust type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaf {
    String,
    Bool,
    I32,
    I64,
    F64,
    /// `Time` and `MicroTime` (a `jiff::Timestamp`).
    Time,
    IntOrString,
    Quantity,
    /// Base64 bytes (`ByteString`).
    Bytes,
    /// Any JSON value (`RawExtension`, `FieldsV1`).
    Any,
}

#[derive(Debug, Clone)]
enum Node {
    /// Named optional fields. `resource`: the struct is a k8s-openapi resource type, whose
    /// decode checks `apiVersion` and `kind` (`Some` with their values at the root; `None`
    /// values for a nested resource, where any `apiVersion`/`kind` is left to the decode).
    Struct {
        /// Looked up once per key of every checked object: hashed with foldhash's fixed-seed
        /// hasher (no per-process randomness, several times faster than SipHash on short keys).
        fields: HashMap<String, NodeId, foldhash::fast::FixedState>,
        resource: Option<Option<(String, String)>>,
        /// Required fields whose type has no default (timestamps): the decode refuses a body
        /// without them.
        present: Vec<String>,
    },
    Array(NodeId),
    Map(NodeId),
    Leaf(Leaf),
    /// Not understood here: a value at this position is `Unsure`.
    Unknown,
}

/// The compiled shape of one kind.
#[derive(Debug)]
pub struct Shape {
    nodes: Vec<Node>,
    root: NodeId,
}

/// Resource types that k8s-openapi embeds inside other types (their decode checks a present
/// `apiVersion`/`kind` against their own).
const NESTED_RESOURCES: [&str; 3] = [
    "io.k8s.api.core.v1.PersistentVolumeClaim",
    "io.k8s.api.core.v1.ResourceClaim",
    "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup",
];

/// Named definitions decoded by a leaf type.
fn named_leaf(name: &str) -> Option<Leaf> {
    Some(match name {
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
        | "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => Leaf::Time,
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => Leaf::IntOrString,
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => Leaf::Quantity,
        "io.k8s.apimachinery.pkg.runtime.RawExtension"
        | "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1" => Leaf::Any,
        _ => return None,
    })
}

struct Builder<'a> {
    definitions: &'a Map<String, Value>,
    nodes: Vec<Node>,
    named: HashMap<String, NodeId>,
}

impl<'a> Builder<'a> {
    fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// The node of a named definition (built once; recursive definitions refer to themselves).
    fn named(&mut self, name: &str) -> NodeId {
        if let Some(id) = self.named.get(name) {
            return *id;
        }
        if let Some(leaf) = named_leaf(name) {
            let id = self.push(Node::Leaf(leaf));
            self.named.insert(name.to_string(), id);
            return id;
        }
        let id = self.push(Node::Unknown);
        self.named.insert(name.to_string(), id);
        let definitions = self.definitions;
        let node = match definitions.get(name) {
            Some(schema) => self.node(schema, Some(name)),
            None => Node::Unknown,
        };
        self.nodes[id] = node;
        id
    }

    fn id_of(&mut self, schema: &Value) -> NodeId {
        let schema = unwrap_all_of(schema);
        if let Some(name) = reference(schema) {
            return self.named(name);
        }
        let node = self.node(schema, None);
        self.push(node)
    }

    fn node(&mut self, schema: &Value, name: Option<&str>) -> Node {
        let Some(schema) = unwrap_all_of(schema).as_object() else {
            return Node::Unknown;
        };
        if let Some(name) = schema.get("$ref").and_then(Value::as_str) {
            let name = name.rsplit('/').next().unwrap_or(name);
            let id = self.named(name);
            return self.nodes[id].clone();
        }
        let format = schema.get("format").and_then(Value::as_str);
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => match format {
                None => Node::Leaf(Leaf::String),
                Some("byte") => Node::Leaf(Leaf::Bytes),
                Some("date-time") => Node::Leaf(Leaf::Time),
                Some(_) => Node::Unknown,
            },
            Some("boolean") if format.is_none() => Node::Leaf(Leaf::Bool),
            Some("integer") => match format {
                Some("int32") => Node::Leaf(Leaf::I32),
                Some("int64") => Node::Leaf(Leaf::I64),
                _ => Node::Unknown,
            },
            Some("number") if format == Some("double") => Node::Leaf(Leaf::F64),
            Some("array") => match schema.get("items") {
                Some(items) => Node::Array(self.id_of(items)),
                None => Node::Unknown,
            },
            Some("object") => {
                let properties = schema.get("properties").and_then(Value::as_object);
                let additional = schema.get("additionalProperties");
                match (properties, additional) {
                    (Some(properties), None) => {
                        let mut fields = HashMap::with_capacity_and_hasher(
                            properties.len(),
                            foldhash::fast::FixedState::default(),
                        );
                        for (field, schema) in properties {
                            let id = self.id_of(schema);
                            fields.insert(field.clone(), id);
                        }
                        let required = schema.get("required").and_then(Value::as_array);
                        let present = required
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .filter(|field| {
                                fields.get(*field).is_some_and(|id| {
                                    matches!(self.nodes[*id], Node::Leaf(Leaf::Time))
                                })
                            })
                            .map(str::to_string)
                            .collect();
                        let nested = name.is_some_and(|n| NESTED_RESOURCES.contains(&n));
                        Node::Struct {
                            fields,
                            resource: nested.then_some(None),
                            present,
                        }
                    }
                    (None, Some(elem)) if elem.is_object() => Node::Map(self.id_of(elem)),
                    _ => Node::Unknown,
                }
            }
            _ => Node::Unknown,
        }
    }
}

/// The one schema of an `allOf` with one element and nothing else that constrains (how
/// OpenAPI 3 puts a description next to a `$ref`); any other schema as it is.
fn unwrap_all_of(schema: &Value) -> &Value {
    match schema
        .get("allOf")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        Some([only]) if schema.get("type").is_none() && schema.get("properties").is_none() => only,
        _ => schema,
    }
}

/// The definition name a `{"$ref": ...}` schema points at.
fn reference(schema: &Value) -> Option<&str> {
    let name = schema.get("$ref")?.as_str()?;
    Some(name.rsplit('/').next().unwrap_or(name))
}

impl Shape {
    /// Compiles the shape of the definition `name` from `definitions`, for a resource whose
    /// decode requires `apiVersion` and `kind` to be these.
    fn compile(
        definitions: &Map<String, Value>,
        name: &str,
        api_version: &str,
        kind: &str,
    ) -> Shape {
        let mut builder = Builder {
            definitions,
            nodes: Vec::new(),
            named: HashMap::new(),
        };
        let defined = builder.named(name);
        // The root is a copy of the definition that also checks the type meta (the definition
        // itself may be referenced elsewhere without that check).
        let root = match builder.nodes[defined].clone() {
            Node::Struct {
                fields, present, ..
            } => builder.push(Node::Struct {
                fields,
                resource: Some(Some((api_version.to_string(), kind.to_string()))),
                present,
            }),
            _ => builder.push(Node::Unknown),
        };
        Shape {
            nodes: builder.nodes,
            root,
        }
    }

    /// Whether `object` decodes cleanly as this shape's root.
    #[cfg(test)]
    pub fn check(&self, object: &Value) -> Verdict {
        self.check_against(object, None)
    }

    /// [`Shape::check`] of a body that is a changed copy of `decoded`, an object that decodes
    /// cleanly (a version the server stored: every stored version went through the decode):
    /// a map the body shares with `decoded` at the same path (`Map::shares_entries`, the two
    /// hold the very same entries) is clean without a look, since whether a value decodes
    /// depends on nothing but the value and its position. A PATCH copies only the maps on its
    /// paths, so only those are walked.
    pub fn check_against(&self, object: &Value, decoded: Option<&Value>) -> Verdict {
        if self.clean(self.root, object, decoded) {
            Verdict::Clean
        } else {
            Verdict::Unsure
        }
    }

    /// Whether `value` decodes as node `id` without an error or a skipped field (`null`, where a
    /// struct field holds it, is handled by the caller); `decoded`: what a clean object holds at
    /// the same position, if anything (see [`Shape::check_against`]).
    fn clean(&self, id: NodeId, value: &Value, decoded: Option<&Value>) -> bool {
        // (Not the root: stored built-in objects leave out the type meta its check wants.)
        if let (Value::Object(map), Some(Value::Object(known))) = (value, decoded) {
            if id != self.root && map.shares_entries(known) {
                return true;
            }
        }
        let child = |key: &str| decoded.and_then(|d| d.get(key));
        match &self.nodes[id] {
            Node::Struct {
                fields,
                resource,
                present,
            } => {
                let Value::Object(map) = value else {
                    return false;
                };
                if present
                    .iter()
                    .any(|field| map.get(field).is_none_or(Value::is_null))
                {
                    return false;
                }
                for (key, value) in map {
                    if let Some(resource) = resource {
                        if key == "apiVersion" || key == "kind" {
                            let expected = resource.as_ref().map(|(api_version, kind)| {
                                if key == "apiVersion" {
                                    api_version
                                } else {
                                    kind
                                }
                            });
                            match (expected, value.as_str()) {
                                (Some(expected), Some(actual)) if expected == actual => continue,
                                _ => return false,
                            }
                        }
                    }
                    let Some(field) = fields.get(key.as_str()) else {
                        return false;
                    };
                    if !value.is_null() && !self.clean(*field, value, child(key)) {
                        return false;
                    }
                }
                true
            }
            Node::Array(elem) => match value {
                Value::Array(items) => items
                    .iter()
                    .enumerate()
                    .all(|(i, item)| self.clean(*elem, item, decoded.and_then(|d| d.get(i)))),
                _ => false,
            },
            Node::Map(elem) => match value {
                Value::Object(map) => map.iter().all(|(k, v)| self.clean(*elem, v, child(k))),
                _ => false,
            },
            Node::Leaf(leaf) => leaf_clean(*leaf, value),
            Node::Unknown => false,
        }
    }
}

/// Whether the leaf type decodes `value` (judged by that type's own `Deserialize`).
fn leaf_clean(leaf: Leaf, value: &Value) -> bool {
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    match (leaf, value) {
        (Leaf::String, Value::String(_)) | (Leaf::Bool, Value::Bool(_)) | (Leaf::Any, _) => true,
        (Leaf::String | Leaf::Bool, _) => false,
        (Leaf::I32, Value::Number(_)) => i32::deserialize(value).is_ok(),
        (Leaf::I64, Value::Number(_)) => i64::deserialize(value).is_ok(),
        (Leaf::F64, Value::Number(_)) => f64::deserialize(value).is_ok(),
        (Leaf::I32 | Leaf::I64 | Leaf::F64, _) => false,
        (Leaf::Time, Value::String(_)) => Time::deserialize(value).is_ok(),
        (Leaf::IntOrString, Value::String(_) | Value::Number(_)) => {
            IntOrString::deserialize(value).is_ok()
        }
        (Leaf::Quantity, Value::String(_) | Value::Number(_)) => {
            Quantity::deserialize(value).is_ok()
        }
        (Leaf::Bytes, Value::String(_) | Value::Null) => {
            k8s_openapi::ByteString::deserialize(value).is_ok()
        }
        (Leaf::Time | Leaf::IntOrString | Leaf::Quantity | Leaf::Bytes, _) => false,
    }
}

/// Whether the check is used: `FAKE_APISERVER_TYPED_DECODE=always` turns it off, so that every
/// body goes through the typed decode (to measure what the check saves, or to rule it out).
pub fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| {
        std::env::var("FAKE_APISERVER_TYPED_DECODE").map_or(true, |v| v != "always")
    })
}

/// The shape of a built-in kind (compiled on first use, then shared); `None` for kinds the
/// server has no typed schema for.
pub fn shape_for(info: &ResourceInfo) -> Option<Arc<Shape>> {
    // A CRD's `JSONSchemaProps` decodes by hand-written rules; CRD writes are rare anyway.
    if info.custom || info.group == "apiextensions.k8s.io" {
        return None;
    }
    // kind → the shapes of the kinds of that name (group, version, shape or none); looked up
    // without allocating, since this runs on every write.
    type Shapes = HashMap<String, Vec<(String, String, Option<Arc<Shape>>)>>;
    static SHAPES: OnceLock<Mutex<Shapes>> = OnceLock::new();
    let mut shapes = match SHAPES.get_or_init(Default::default).lock() {
        Ok(shapes) => shapes,
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some(known) = shapes.get(info.kind.as_str()).and_then(|versions| {
        versions.iter().find(|(group, version, _)| {
            crate::resource::same_group(group, &info.group) && *version == info.version
        })
    }) {
        return known.2.clone();
    }
    let shape = crate::openapi::builtin_definition_name(&info.group, &info.version, &info.kind)
        .and_then(|name| {
            let definitions = crate::openapi::builtin_definitions_of(name)?;
            Some(Arc::new(Shape::compile(
                definitions,
                name,
                &info.api_version(),
                &info.kind,
            )))
        });
    shapes.entry(info.kind.clone()).or_default().push((
        info.group.clone(),
        info.version.clone(),
        shape.clone(),
    ));
    shape
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::typed::FieldValidation;
    use crate::resource::builtin_resources;
    use rstest::rstest;
    use serde_json::json;

    fn info(plural: &str) -> ResourceInfo {
        builtin_resources()
            .into_iter()
            .find(|r| r.plural == plural)
            .unwrap()
    }

    fn pod() -> Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "b"},
                "creationTimestamp": "2024-01-01T00:00:00Z",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u", "controller": true}],
                "managedFields": [{"manager": "m", "operation": "Update", "apiVersion": "v1",
                    "time": "2024-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]},
            "spec": {"containers": [{"name": "c", "image": "i",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": 5}},
                "livenessProbe": {"httpGet": {"port": "http", "path": "/"}, "periodSeconds": 10}}],
                "terminationGracePeriodSeconds": 30, "nodeName": null},
            "status": {"phase": "Running", "startTime": "2024-01-01T00:00:00Z"}
        })
    }

    /// What the typed decode says: clean (no error, no warning) or not.
    fn decodes_cleanly(info: &ResourceInfo, object: &Value) -> bool {
        let mut object = object.clone();
        matches!(crate::http::typed::decode(info, &mut object, FieldValidation::Warn, None), Ok(w) if w.is_empty())
    }

    #[rstest]
    #[case::clean(json!({}), Verdict::Clean)]
    #[case::unknown_top(json!({"extra": 1}), Verdict::Unsure)]
    #[case::unknown_nested(json!({"spec": {"containers": [{"name": "c", "bogus": 1}]}}), Verdict::Unsure)]
    #[case::wrong_type(json!({"spec": {"terminationGracePeriodSeconds": "30"}}), Verdict::Unsure)]
    #[case::float_for_int(json!({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80.5}]}]}}), Verdict::Unsure)]
    #[case::int32_overflow(json!({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 3_000_000_000u64}]}]}}), Verdict::Unsure)]
    #[case::bad_time(json!({"metadata": {"creationTimestamp": "yesterday"}}), Verdict::Unsure)]
    #[case::null_field(json!({"spec": {"nodeName": null, "containers": null}}), Verdict::Clean)]
    #[case::null_in_list(json!({"spec": {"containers": [null]}}), Verdict::Unsure)]
    #[case::null_in_string_map(json!({"metadata": {"labels": {"a": null}}}), Verdict::Unsure)]
    #[case::wrong_kind(json!({"kind": "Service"}), Verdict::Unsure)]
    #[case::null_kind(json!({"kind": null}), Verdict::Unsure)]
    #[case::int_or_string_float(json!({"spec": {"containers": [{"name": "c", "livenessProbe": {"httpGet": {"port": 1.5}}}]}}), Verdict::Unsure)]
    #[case::quantity_number(json!({"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": 2}}}]}}), Verdict::Clean)]
    #[case::condition_without_time(json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}), Verdict::Clean)]
    #[case::any_under_fields_v1(json!({"metadata": {"managedFields": [{"fieldsV1": {"x": [1, null]}}]}}), Verdict::Clean)]
    fn the_check_agrees_with_the_typed_decode(#[case] patch: Value, #[case] expected: Verdict) {
        let pods = info("pods");
        let mut object = pod();
        json_patch::merge(&mut object, &patch);
        // `merge` drops nulls: put them back where the case has them.
        restore_nulls(&mut object, &patch);
        let shape = shape_for(&pods).unwrap();
        assert_eq!(shape.check(&object), expected, "{object}");
        if expected == Verdict::Clean {
            assert!(decodes_cleanly(&pods, &object), "{object}");
        }
    }

    fn restore_nulls(object: &mut Value, patch: &Value) {
        if let (Value::Object(o), Value::Object(p)) = (object, patch) {
            for (k, v) in p {
                if v.is_null() {
                    o.insert(k.clone(), Value::Null);
                } else if let Some(child) = o.get_mut(k) {
                    if v.is_object() {
                        restore_nulls(child, v);
                    } else {
                        *child = v.clone();
                    }
                }
            }
        }
    }

    #[test]
    fn maps_shared_with_the_decoded_version_are_not_walked() {
        let pods = info("pods");
        let shape = shape_for(&pods).unwrap();
        // A "decoded" version whose spec the walk itself would not pass (an unknown field):
        // only a skipped walk can find the changed copies below clean.
        let mut decoded = pod();
        decoded["spec"]["containers"][0]["bogus"] = json!(1);
        assert_eq!(shape.check(&decoded), Verdict::Unsure);
        // A copy changed in metadata only: the spec is the decoded version's own.
        let mut patched = decoded.clone();
        patched["metadata"]["annotations"] = json!({"a": "b"});
        assert_eq!(shape.check(&patched), Verdict::Unsure);
        assert_eq!(
            shape.check_against(&patched, Some(&decoded)),
            Verdict::Clean
        );
        // What the change brings is walked: a wrong type in the changed metadata.
        patched["metadata"]["annotations"] = json!({"a": 1});
        assert_eq!(
            shape.check_against(&patched, Some(&decoded)),
            Verdict::Unsure
        );
        // A change inside the spec copies the maps on its path (spec, the container), and
        // those are walked, finding the unknown field.
        let mut changed = decoded.clone();
        changed["spec"]["containers"][0]["image"] = json!("j");
        assert_eq!(
            shape.check_against(&changed, Some(&decoded)),
            Verdict::Unsure
        );
        // Equal but not shared (a body parsed afresh) is walked too.
        let parsed: Value = serde_json::from_str(&decoded.to_string()).unwrap();
        assert_eq!(
            shape.check_against(&parsed, Some(&decoded)),
            Verdict::Unsure
        );
        // A map shared with one at another position is no evidence: a container is not a
        // map of annotations.
        let clean = pod();
        let mut moved = clean.clone();
        moved["metadata"]["annotations"] = clean["spec"]["containers"][0].clone();
        assert_eq!(shape.check_against(&moved, Some(&clean)), Verdict::Unsure);
    }

    #[rstest]
    #[case::with_time(json!({"type": "DisruptionAllowed", "status": "True", "reason": "R", "message": "", "lastTransitionTime": "2024-01-01T00:00:00Z"}), Verdict::Clean)]
    #[case::without_time(json!({"type": "DisruptionAllowed", "status": "True", "reason": "R", "message": ""}), Verdict::Unsure)]
    #[case::null_time(json!({"type": "DisruptionAllowed", "status": "True", "lastTransitionTime": null}), Verdict::Unsure)]
    fn required_timestamps_must_be_there(#[case] condition: Value, #[case] expected: Verdict) {
        // meta/v1 Condition, as PodDisruptionBudget's status uses it, requires its time.
        let pdbs = info("poddisruptionbudgets");
        let shape = shape_for(&pdbs).unwrap();
        let object = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "status": {"conditions": [condition]}});
        assert_eq!(shape.check(&object), expected);
        assert_eq!(decodes_cleanly(&pdbs, &object), expected == Verdict::Clean);
    }

    #[test]
    fn secrets_bytes_and_nested_resources() {
        let secrets = info("secrets");
        let shape = shape_for(&secrets).unwrap();
        let ok = json!({"apiVersion": "v1", "kind": "Secret", "data": {"a": "aGk=", "b": null}});
        assert_eq!(shape.check(&ok), Verdict::Clean);
        assert!(decodes_cleanly(&secrets, &ok));
        let bad = json!({"apiVersion": "v1", "kind": "Secret", "data": {"a": "not base64!"}});
        assert_eq!(shape.check(&bad), Verdict::Unsure);
        assert!(!decodes_cleanly(&secrets, &bad));

        let sets = info("statefulsets");
        let shape = shape_for(&sets).unwrap();
        let template = |extra: Value| {
            let mut pvc =
                json!({"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}});
            json_patch::merge(&mut pvc, &extra);
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {"volumeClaimTemplates": [pvc]}})
        };
        assert_eq!(shape.check(&template(json!({}))), Verdict::Clean);
        // A nested resource's type meta is left to the decode.
        let with_kind = template(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim"}));
        assert_eq!(shape.check(&with_kind), Verdict::Unsure);
    }

    /// Every kind with a typed decode has a shape whose root is a struct, and each kind's
    /// minimal object is clean for both.
    #[test]
    fn every_typed_kind_has_a_shape() {
        for info in builtin_resources() {
            let object = json!({"apiVersion": info.api_version(), "kind": info.kind, "metadata": {"name": "x"}});
            let mut decoded = object.clone();
            let typed =
                crate::http::typed::decode(&info, &mut decoded, FieldValidation::Strict, None)
                    .is_ok();
            let Some(shape) = shape_for(&info) else {
                continue;
            };
            if shape.check(&object) == Verdict::Clean {
                assert!(typed, "{} is clean for the shape only", info.kind);
            }
        }
    }
}
