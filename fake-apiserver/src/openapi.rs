//! OpenAPI documents for kubectl: `/openapi/v2` (Swagger 2.0 JSON), the `/openapi/v3` index and the
//! per group-version `/openapi/v3/api/v1`, `/openapi/v3/apis/{group}/{version}` documents.
//!
//! What kubectl 1.32 reads from them (client-go `openapi3`, cli-runtime
//! `query_param_verifier_v3.go`, kubectl `apply/patcher.go`, `explain`):
//!
//! - **Validation** (`--validate=strict`, the default, for `create`, `apply`, `replace`): kubectl
//!   looks in the group-version's v3 document for the `PATCH` operation carrying the kind's
//!   `x-kubernetes-group-version-kind` and a `fieldValidation` parameter. Found: it sends
//!   `?fieldValidation=Strict` and lets the server validate. Not found: it validates client-side
//!   against `/openapi/v2` fetched as *protobuf*, which this server does not speak, and fails. So
//!   every served kind, CRD kinds included, gets that operation here.
//! - **Client-side apply** (`apply/patcher.go`): if the `PATCH` operation lists
//!   `application/strategic-merge-patch+json`, kubectl computes the three-way strategic merge patch
//!   from the v3 *schemas*, which then need `x-kubernetes-patch-merge-key`/`-strategy` on every
//!   list. The schemas here come from k8s-openapi, which carries no patch metadata, so built-in
//!   `PATCH` operations do not list the strategic type: kubectl then computes the strategic merge
//!   patch from its compiled-in Go types (which have the metadata) and still sends it as a
//!   strategic merge patch. Custom resources never support strategic merge patch (as on a real
//!   server), so kubectl sends a JSON merge patch for them.
//! - **`kubectl explain`**: the kind's schema in `components.schemas`, found by its
//!   `x-kubernetes-group-version-kind`, with `$ref`s resolvable in the same document.
//!
//! Built-in kinds' schemas are generated once from k8s-openapi's `schemars` implementations (the
//! real Kubernetes schemas, under their real names such as `io.k8s.api.core.v1.Pod`); each document
//! carries only the definitions its kinds reach. Custom resources get their CRD's
//! `openAPIV3Schema` with `apiVersion`, `kind` and `metadata` added, as kube-apiserver does. Kinds
//! with neither get an object schema that keeps unknown fields.

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use serde_json::{json, Map, Value};

use crate::http::discovery::GIT_VERSION;
use crate::resource::compare_kube_versions;
use crate::resource::ResourceInfo;

mod library;
mod protobuf;

pub use protobuf::CONTENT_TYPE as V2_PROTOBUF_CONTENT_TYPE;

/// Where definitions live in an OpenAPI v3 document.
const V3_REF_PREFIX: &str = "#/components/schemas/";
/// Where definitions live in a Swagger 2.0 document.
const V2_REF_PREFIX: &str = "#/definitions/";

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";

/// Content types a `PATCH` accepts on every kind.
const PATCH_TYPES: [&str; 3] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

/// Content types responses come in.
const RESPONSE_TYPES: [&str; 2] = ["application/json", "application/yaml"];

/// Which OpenAPI dialect a document is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// Swagger 2.0 (`/openapi/v2`).
    V2,
    /// OpenAPI 3.0 (`/openapi/v3/...`).
    V3,
}

/// Whether an `Accept` header for `/openapi/v2` can be answered with JSON. Prefer
/// [`v2_encoding`], which also offers the protobuf encoding client-go asks for.
pub fn v2_accepts_json(accept: &str) -> bool {
    accept.trim().is_empty()
        || accept
            .split(',')
            .any(|range| v2_encoding(range) == Some(V2Encoding::Json))
}

/// How to encode `/openapi/v2` for a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V2Encoding {
    /// Swagger 2.0 JSON, `Content-Type: application/json` ([`v2_document`]).
    Json,
    /// gnostic protobuf, `Content-Type:` [`V2_PROTOBUF_CONTENT_TYPE`] ([`v2_protobuf`]); what
    /// client-go and kubectl ask for.
    Protobuf,
}

/// The encoding to answer `/openapi/v2` with: the first media range of `accept` this server can
/// produce (JSON when the header is empty), or `None` for `406 Not Acceptable`.
pub fn v2_encoding(accept: &str) -> Option<V2Encoding> {
    if accept.trim().is_empty() {
        return Some(V2Encoding::Json);
    }
    accept.split(',').find_map(|range| {
        let media_type = range.split(';').next().unwrap_or_default().trim();
        let is = |candidate: &str| media_type.eq_ignore_ascii_case(candidate);
        if is("application/json") || is("application/*") || is("*/*") {
            Some(V2Encoding::Json)
        } else if is(protobuf::CONTENT_TYPE) || is(protobuf::CONTENT_TYPE_DEPRECATED) {
            Some(V2Encoding::Protobuf)
        } else {
            None
        }
    })
}

/// The `/openapi/v2` document in gnostic protobuf (see [`V2Encoding::Protobuf`]).
pub fn v2_protobuf(resources: &[ResourceInfo]) -> Vec<u8> {
    protobuf::encode_document(&v2_document(resources))
}

/// The `/openapi/v2` document: every served kind with its paths and definitions.
pub fn v2_document(resources: &[ResourceInfo]) -> Value {
    let served: Vec<&ResourceInfo> = sorted_resources(resources.iter());
    let (paths, definitions) = paths_and_definitions(&served, Dialect::V2);
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": GIT_VERSION},
        "paths": paths,
        "definitions": definitions,
    })
}

/// Bump when the documents this module builds change shape for the same resources, so that the
/// hashes in the `/openapi/v3` index (which clients cache documents by) change with them.
const DOCUMENT_REVISION: u32 = 1;

/// The `/openapi/v3` index: one entry per served group version (`api/v1`, `apis/apps/v1`), each
/// pointing at its document with a content hash, as kube-apiserver's `OpenAPIV3Discovery`.
///
/// A document is a pure function of its group version's resources, so the hash is taken over
/// those (and [`DOCUMENT_REVISION`]) rather than over the document: the index stays cheap.
pub fn v3_index(resources: &[ResourceInfo]) -> Value {
    let mut paths = Map::new();
    for (group, version) in group_versions(resources) {
        let path = if group.is_empty() {
            format!("api/{version}")
        } else {
            format!("apis/{group}/{version}")
        };
        let served = sorted_resources(
            resources
                .iter()
                .filter(|r| r.group == group && r.version == version),
        );
        let fingerprint = format!(
            "{} {DOCUMENT_REVISION} {served:?}",
            env!("CARGO_PKG_VERSION")
        );
        let hash = fnv1a_hex(fingerprint.as_bytes());
        paths.insert(
            path.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}")}),
        );
    }
    json!({"paths": paths})
}

/// The OpenAPI v3 document of one group version. `path` is what follows `/openapi/v3/`:
/// `api/v1` for the core group, `apis/{group}/{version}` otherwise (a leading `/` and a query
/// string are ignored). `None` when that group version is not served.
pub fn v3_document(resources: &[ResourceInfo], path: &str) -> Option<Value> {
    let path = path.split('?').next().unwrap_or_default().trim_matches('/');
    let (group, version) = match path.split('/').collect::<Vec<_>>().as_slice() {
        ["api", version] => ("", *version),
        ["apis", group, version] if !group.is_empty() => (*group, *version),
        _ => return None,
    };
    let served = sorted_resources(
        resources
            .iter()
            .filter(|r| r.group == group && r.version == version),
    );
    if served.is_empty() {
        return None;
    }
    let (paths, schemas) = paths_and_definitions(&served, Dialect::V3);
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": GIT_VERSION},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

/// Served (group, version) pairs: core first, then groups by name, versions by preference.
fn group_versions(resources: &[ResourceInfo]) -> Vec<(&str, &str)> {
    let mut pairs: Vec<(&str, &str)> = resources
        .iter()
        .map(|r| (r.group.as_str(), r.version.as_str()))
        .collect();
    pairs.sort_by(|a, b| a.0.cmp(b.0).then_with(|| compare_kube_versions(a.1, b.1)));
    pairs.dedup();
    pairs
}

/// Resources ordered by group, version and plural, without duplicates.
fn sorted_resources<'a>(
    resources: impl Iterator<Item = &'a ResourceInfo>,
) -> Vec<&'a ResourceInfo> {
    let mut served: Vec<&ResourceInfo> = resources.collect();
    served.sort_by(|a, b| {
        (a.group.as_str(), a.version.as_str(), a.plural.as_str()).cmp(&(
            b.group.as_str(),
            b.version.as_str(),
            b.plural.as_str(),
        ))
    });
    served.dedup_by(|a, b| a.group == b.group && a.version == b.version && a.plural == b.plural);
    served
}

/// The paths of the given resources and the definitions they reach, in one dialect.
fn paths_and_definitions(served: &[&ResourceInfo], dialect: Dialect) -> (Value, Value) {
    let library = library::library();
    let mut extra = Map::new();
    let mut paths = Map::new();
    let mut roots: BTreeSet<String> = [STATUS, DELETE_OPTIONS, PATCH]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for info in served {
        let kind_name = definition_name(info);
        // A CRD's list definition is named after its `listKind` (`gvkToModelName` of it).
        let list_name = if info.custom {
            custom_model_name(info, &info.list_kind())
        } else {
            format!("{kind_name}List")
        };
        let gvk = json!([{"group": info.group, "kind": info.kind, "version": info.version}]);
        let list_gvk =
            json!([{"group": info.group, "kind": info.list_kind(), "version": info.version}]);
        let mut kind_schema = match library.get(&kind_name) {
            Some(schema) if !info.custom => schema.clone(),
            _ => custom_kind_schema(info),
        };
        if let Value::Object(map) = &mut kind_schema {
            map.insert("x-kubernetes-group-version-kind".into(), gvk);
        }
        let mut list_schema = list_kind_schema(info, &kind_name);
        if let Value::Object(map) = &mut list_schema {
            map.insert("x-kubernetes-group-version-kind".into(), list_gvk);
        }
        extra.insert(kind_name.clone(), kind_schema);
        extra.insert(list_name.clone(), list_schema);
        roots.insert(kind_name.clone());
        roots.insert(list_name.clone());
        for (path, item) in resource_paths(info, &kind_name, &list_name, dialect) {
            paths.insert(path, item);
        }
    }
    let mut definitions = Map::new();
    let mut pending: Vec<String> = roots.into_iter().collect();
    while let Some(name) = pending.pop() {
        if definitions.contains_key(&name) {
            continue;
        }
        let Some(schema) = extra.get(&name).or_else(|| library.get(&name)) else {
            continue;
        };
        collect_refs(schema, &mut pending);
        definitions.insert(name, schema.clone());
    }
    definitions.sort_keys();
    let (mut paths, mut definitions) = (Value::Object(paths), Value::Object(definitions));
    if dialect == Dialect::V2 {
        rewrite_refs(&mut paths, V3_REF_PREFIX, V2_REF_PREFIX);
        rewrite_refs(&mut definitions, V3_REF_PREFIX, V2_REF_PREFIX);
        to_swagger_schemas(&mut definitions);
    }
    (paths, definitions)
}

/// The definition name of a kind: the real one for built-ins (`io.k8s.api.core.v1.Pod`), the
/// reversed group for custom resources (`com.example.v1.Widget`) as kube-apiserver names them.
fn definition_name(info: &ResourceInfo) -> String {
    if !info.custom {
        if let Some(name) = library::definition_name(&info.group, &info.version, &info.kind) {
            return name.to_string();
        }
        let short_group = if info.group.is_empty() {
            "core"
        } else {
            info.group.split('.').next().unwrap_or("core")
        };
        return format!("io.k8s.api.{short_group}.{}.{}", info.version, info.kind);
    }
    custom_model_name(info, &info.kind)
}

/// The definition name of a custom resource's `kind` (its own or its list's) at the info's
/// group and version: the group reversed, as `gvkToModelName` writes it.
fn custom_model_name(info: &ResourceInfo, kind: &str) -> String {
    let reversed: Vec<&str> = info.group.split('.').rev().collect();
    format!("{}.{}.{kind}", reversed.join("."), info.version)
}

/// The schema of a custom (or otherwise untyped) kind: the CRD's schema, or an object keeping
/// unknown fields, with `apiVersion`, `kind` and `metadata` set as kube-apiserver adds them.
fn custom_kind_schema(info: &ResourceInfo) -> Value {
    let mut schema = match &info.schema {
        Some(Value::Object(map)) => map.clone(),
        _ => {
            let mut map = Map::new();
            map.insert("type".into(), json!("object"));
            map.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
            map
        }
    };
    schema.entry("type").or_insert_with(|| json!("object"));
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(properties) = properties {
        properties.insert("apiVersion".into(), api_version_property());
        properties.insert("kind".into(), kind_property());
        properties.insert("metadata".into(), metadata_property(OBJECT_META));
    }
    Value::Object(schema)
}

/// The schema of `{Kind}List`.
fn list_kind_schema(info: &ResourceInfo, kind_name: &str) -> Value {
    json!({
        "description": format!("{} is a list of {}", info.list_kind(), info.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": api_version_property(),
            "items": {
                "description": format!("List of {}.", info.plural),
                "type": "array",
                "items": {"$ref": format!("{V3_REF_PREFIX}{kind_name}")},
            },
            "kind": kind_property(),
            "metadata": metadata_property(LIST_META),
        },
    })
}

fn api_version_property() -> Value {
    json!({
        "description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
        "type": "string",
    })
}

fn kind_property() -> Value {
    json!({
        "description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
        "type": "string",
    })
}

fn metadata_property(definition: &str) -> Value {
    json!({
        "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
        "allOf": [{"$ref": format!("{V3_REF_PREFIX}{definition}")}],
    })
}

/// Adds every definition name `value` refers to (`$ref: #/components/schemas/NAME`) to `out`.
fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                // A schema may also have a *property* named `$ref` (JSONSchemaProps does).
                match child {
                    Value::String(reference) if key == "$ref" => {
                        if let Some(name) = reference.strip_prefix(V3_REF_PREFIX) {
                            out.push(name.to_string());
                        }
                    }
                    _ => collect_refs(child, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, out)),
        _ => {}
    }
}

/// Rewrites every `$ref` starting with `from` to start with `to`.
fn rewrite_refs(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                match child {
                    Value::String(reference) if key == "$ref" => {
                        if let Some(rest) = reference.strip_prefix(from) {
                            *reference = format!("{to}{rest}");
                        }
                    }
                    _ => rewrite_refs(child, from, to),
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| rewrite_refs(item, from, to)),
        _ => {}
    }
}

/// Rewrites OpenAPI 3 schema idioms the Swagger 2.0 readers (kube-openapi's `proto` package) do
/// not follow: `{allOf: [{$ref}], description}` becomes `{$ref, description}` (Swagger 2.0 allows
/// siblings of `$ref`, and kube-apiserver writes its v2 document that way), and an array without
/// `items` gets `items: {}` (those readers reject an array with no item schema).
fn to_swagger_schemas(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let single_ref = match map.get("allOf") {
                Some(Value::Array(parts)) if parts.len() == 1 && !map.contains_key("$ref") => {
                    match &parts[0] {
                        Value::Object(part) if part.len() == 1 => {
                            part.get("$ref").filter(|r| r.is_string()).cloned()
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(reference) = single_ref {
                map.remove("allOf");
                map.insert("$ref".into(), reference);
            }
            if map.get("type").and_then(Value::as_str) == Some("array")
                && !map.contains_key("items")
            {
                map.insert("items".into(), json!({}));
            }
            map.values_mut().for_each(to_swagger_schemas);
        }
        Value::Array(items) => items.iter_mut().for_each(to_swagger_schemas),
        _ => {}
    }
}

/// The URL prefix of a resource's group version: `/api/v1` or `/apis/{group}/{version}`.
fn url_prefix(info: &ResourceInfo) -> String {
    if info.group.is_empty() {
        format!("/api/{}", info.version)
    } else {
        format!("/apis/{}/{}", info.group, info.version)
    }
}

/// `CoreV1`, `AppsV1`, `RbacAuthorizationV1`, `ExampleComV1`: the group-version part of
/// operation ids.
fn operation_stem(info: &ResourceInfo) -> String {
    let group = if info.group.is_empty() {
        "core"
    } else {
        info.group.strip_suffix(".k8s.io").unwrap_or(&info.group)
    };
    group
        .split(['.', '-'])
        .chain(std::iter::once(info.version.as_str()))
        .map(capitalize)
        .collect()
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A parameter in the dialect's shape.
fn parameter(dialect: Dialect, name: &str, location: &str, kind: &str, description: &str) -> Value {
    let mut param = Map::new();
    param.insert("name".into(), json!(name));
    param.insert("in".into(), json!(location));
    param.insert("description".into(), json!(description));
    if location == "path" {
        param.insert("required".into(), json!(true));
    }
    match dialect {
        Dialect::V3 => {
            param.insert("schema".into(), json!({"type": kind, "uniqueItems": true}));
        }
        Dialect::V2 => {
            param.insert("type".into(), json!(kind));
            param.insert("uniqueItems".into(), json!(true));
        }
    }
    Value::Object(param)
}

/// What one operation does, before it is written in a dialect.
struct OperationSpec<'a> {
    /// `x-kubernetes-action`: get, list, post, put, patch, delete, deletecollection.
    action: &'a str,
    /// The operation id.
    id: String,
    description: String,
    /// Query parameters by name.
    query: &'a [&'a str],
    /// Request body content types and schema, if the operation takes a body.
    body: Option<(&'a [&'a str], &'a str)>,
    /// Response codes and the definition each returns.
    responses: &'a [(&'a str, &'a str)],
}

/// The description of a query parameter this server understands.
fn query_parameter(dialect: Dialect, name: &str) -> Value {
    let (kind, description) = match name {
        "allowWatchBookmarks" => ("boolean", "allowWatchBookmarks requests watch events with type \"BOOKMARK\"."),
        "continue" => ("string", "The continue option should be set when retrieving more results from the server."),
        "fieldSelector" => ("string", "A selector to restrict the list of returned objects by their fields. Defaults to everything."),
        "labelSelector" => ("string", "A selector to restrict the list of returned objects by their labels. Defaults to everything."),
        "limit" => ("integer", "limit is a maximum number of responses to return for a list call."),
        "resourceVersion" => ("string", "resourceVersion sets a constraint on what resource versions a request may be served from."),
        "resourceVersionMatch" => ("string", "resourceVersionMatch determines how resourceVersion is applied to list calls."),
        "sendInitialEvents" => ("boolean", "`sendInitialEvents=true` may be set together with `watch=true`."),
        "timeoutSeconds" => ("integer", "Timeout for the list/watch call."),
        "watch" => ("boolean", "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications."),
        "dryRun" => ("string", "When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed"),
        "fieldManager" => ("string", "fieldManager is a name associated with the actor or entity that is making these changes."),
        "fieldValidation" => ("string", "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict"),
        "force" => ("boolean", "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people."),
        "gracePeriodSeconds" => ("integer", "The duration in seconds before the object should be deleted."),
        "propagationPolicy" => ("string", "Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background', 'Foreground'."),
        _ => ("string", ""),
    };
    parameter(dialect, name, "query", kind, description)
}

/// One operation object with its Kubernetes extensions.
fn operation(info: &ResourceInfo, spec: &OperationSpec, dialect: Dialect, tag: &str) -> Value {
    let mut op = Map::new();
    op.insert("tags".into(), json!([tag]));
    op.insert("description".into(), json!(spec.description));
    op.insert("operationId".into(), json!(spec.id));
    let mut parameters: Vec<Value> = spec
        .query
        .iter()
        .map(|name| query_parameter(dialect, name))
        .collect();
    if let Some((content_types, schema)) = spec.body {
        let reference = json!({"$ref": format!("{V3_REF_PREFIX}{schema}")});
        match dialect {
            Dialect::V3 => {
                let content: Map<String, Value> = content_types
                    .iter()
                    .map(|ct| (ct.to_string(), json!({"schema": reference})))
                    .collect();
                op.insert(
                    "requestBody".into(),
                    json!({"content": content, "required": spec.action != "delete" && spec.action != "deletecollection"}),
                );
            }
            Dialect::V2 => {
                op.insert("consumes".into(), json!(content_types));
                parameters.insert(
                    0,
                    json!({"name": "body", "in": "body", "required": spec.action != "delete" && spec.action != "deletecollection", "schema": reference}),
                );
            }
        }
    }
    if !parameters.is_empty() {
        op.insert("parameters".into(), Value::Array(parameters));
    }
    if dialect == Dialect::V2 {
        op.insert("produces".into(), json!(RESPONSE_TYPES));
    }
    let mut responses = Map::new();
    for (code, schema) in spec.responses {
        let reference = json!({"$ref": format!("{V3_REF_PREFIX}{schema}")});
        let description = match *code {
            "201" => "Created",
            "202" => "Accepted",
            _ => "OK",
        };
        let response = match dialect {
            Dialect::V3 => {
                let content: Map<String, Value> = RESPONSE_TYPES
                    .iter()
                    .map(|ct| (ct.to_string(), json!({"schema": reference})))
                    .collect();
                json!({"description": description, "content": content})
            }
            Dialect::V2 => json!({"description": description, "schema": reference}),
        };
        responses.insert(code.to_string(), response);
    }
    responses.insert("401".into(), json!({"description": "Unauthorized"}));
    op.insert("responses".into(), Value::Object(responses));
    op.insert("x-kubernetes-action".into(), json!(spec.action));
    op.insert(
        "x-kubernetes-group-version-kind".into(),
        json!({"group": info.group, "kind": info.kind, "version": info.version}),
    );
    Value::Object(op)
}

/// The path items of one resource: its collection, its objects, its status subresource, and (for
/// namespaced resources) the list across namespaces.
fn resource_paths(
    info: &ResourceInfo,
    kind_name: &str,
    list_name: &str,
    dialect: Dialect,
) -> Vec<(String, Value)> {
    const LIST_QUERY: &[&str] = &[
        "allowWatchBookmarks",
        "continue",
        "fieldSelector",
        "labelSelector",
        "limit",
        "resourceVersion",
        "resourceVersionMatch",
        "sendInitialEvents",
        "timeoutSeconds",
        "watch",
    ];
    const WRITE_QUERY: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];
    const PATCH_QUERY: &[&str] = &["dryRun", "fieldManager", "fieldValidation", "force"];
    const DELETE_QUERY: &[&str] = &["dryRun", "gracePeriodSeconds", "propagationPolicy"];
    const DELETE_COLLECTION_QUERY: &[&str] = &[
        "continue",
        "dryRun",
        "fieldSelector",
        "gracePeriodSeconds",
        "labelSelector",
        "limit",
        "propagationPolicy",
        "resourceVersion",
        "resourceVersionMatch",
        "sendInitialEvents",
        "timeoutSeconds",
    ];
    let prefix = url_prefix(info);
    let stem = operation_stem(info);
    let scope = if info.namespaced { "Namespaced" } else { "" };
    let tag = format!(
        "{}_{}",
        if info.group.is_empty() {
            "core"
        } else {
            info.group.as_str()
        },
        info.version
    );
    let kind = &info.kind;
    let base = if info.namespaced {
        format!("{prefix}/namespaces/{{namespace}}/{}", info.plural)
    } else {
        format!("{prefix}/{}", info.plural)
    };
    let path_params = |with_name: bool| {
        let mut params = Vec::new();
        if with_name {
            params.push(parameter(
                dialect,
                "name",
                "path",
                "string",
                &format!("name of the {kind}"),
            ));
        }
        if info.namespaced {
            params.push(parameter(
                dialect,
                "namespace",
                "path",
                "string",
                "object name and auth scope, such as for teams and projects",
            ));
        }
        params.push(parameter(
            dialect,
            "pretty",
            "query",
            "string",
            "If 'true', then the output is pretty printed.",
        ));
        Value::Array(params)
    };
    // Only the operations of the verbs the resource serves (a review only creates, component
    // statuses are only read); a path left without operations is not listed (`Null`).
    let verbs = info.verbs();
    let item = |ops: Vec<(&str, OperationSpec)>, with_name: bool| {
        let mut path = Map::new();
        for (method, spec) in ops {
            let verb = match spec.action {
                "post" => "create",
                "put" => "update",
                action => action,
            };
            if verbs.contains(&verb) {
                path.insert(method.to_string(), operation(info, &spec, dialect, &tag));
            }
        }
        if path.is_empty() {
            return Value::Null;
        }
        path.insert("parameters".into(), path_params(with_name));
        Value::Object(path)
    };
    let patch_types: Vec<&str> = PATCH_TYPES.to_vec();
    let write_types: &[&str] = &["*/*"];
    let ok: &[(&str, &str)] = &[("200", kind_name)];
    let ok_or_created: &[(&str, &str)] = &[("200", kind_name), ("201", kind_name)];
    // read/replace/patch of an object or of its status: the same three operations, named and
    // described for what they address.
    let read_replace_patch = |suffix: &str, subject: &str| {
        vec![
            (
                "get",
                OperationSpec {
                    action: "get",
                    id: format!("read{stem}{scope}{kind}{suffix}"),
                    description: format!("read {subject} {kind}"),
                    query: &[],
                    body: None,
                    responses: ok,
                },
            ),
            (
                "put",
                OperationSpec {
                    action: "put",
                    id: format!("replace{stem}{scope}{kind}{suffix}"),
                    description: format!("replace {subject} {kind}"),
                    query: WRITE_QUERY,
                    body: Some((write_types, kind_name)),
                    responses: ok_or_created,
                },
            ),
            (
                "patch",
                OperationSpec {
                    action: "patch",
                    id: format!("patch{stem}{scope}{kind}{suffix}"),
                    description: format!("partially update {subject} {kind}"),
                    query: PATCH_QUERY,
                    body: Some((&patch_types, PATCH)),
                    responses: ok_or_created,
                },
            ),
        ]
    };
    let mut out = Vec::new();

    out.push((
        base.clone(),
        item(
            vec![
                (
                    "get",
                    OperationSpec {
                        action: "list",
                        id: format!("list{stem}{scope}{kind}"),
                        description: format!("list or watch objects of kind {kind}"),
                        query: LIST_QUERY,
                        body: None,
                        responses: &[("200", list_name)],
                    },
                ),
                (
                    "post",
                    OperationSpec {
                        action: "post",
                        id: format!("create{stem}{scope}{kind}"),
                        description: format!("create a {kind}"),
                        query: WRITE_QUERY,
                        body: Some((write_types, kind_name)),
                        responses: &[("200", kind_name), ("201", kind_name), ("202", kind_name)],
                    },
                ),
                (
                    "delete",
                    OperationSpec {
                        action: "deletecollection",
                        id: format!("deletecollection{stem}{scope}{kind}"),
                        description: format!("delete collection of {kind}"),
                        query: DELETE_COLLECTION_QUERY,
                        body: Some((write_types, DELETE_OPTIONS)),
                        responses: &[("200", STATUS)],
                    },
                ),
            ],
            false,
        ),
    ));
    let mut item_ops = read_replace_patch("", "the specified");
    item_ops.push((
        "delete",
        OperationSpec {
            action: "delete",
            id: format!("delete{stem}{scope}{kind}"),
            description: format!("delete a {kind}"),
            query: DELETE_QUERY,
            body: Some((write_types, DELETE_OPTIONS)),
            responses: &[("200", STATUS), ("202", STATUS)],
        },
    ));
    out.push((format!("{base}/{{name}}"), item(item_ops, true)));
    if info.has_status {
        out.push((
            format!("{base}/{{name}}/status"),
            item(
                read_replace_patch("Status", "status of the specified"),
                true,
            ),
        ));
    }
    if info.namespaced && verbs.contains(&"list") {
        let mut path = Map::new();
        path.insert(
            "get".into(),
            operation(
                info,
                &OperationSpec {
                    action: "list",
                    id: format!("list{stem}{kind}ForAllNamespaces"),
                    description: format!("list or watch objects of kind {kind}"),
                    query: LIST_QUERY,
                    body: None,
                    responses: &[("200", list_name)],
                },
                dialect,
                &tag,
            ),
        );
        path.insert(
            "parameters".into(),
            json!([parameter(
                dialect,
                "pretty",
                "query",
                "string",
                "If 'true', then the output is pretty printed."
            )]),
        );
        out.push((format!("{prefix}/{}", info.plural), Value::Object(path)));
    }
    out.retain(|(_, path)| !path.is_null());
    out
}

/// The Kubernetes extensions of the built-in definitions that k8s-openapi's schemas leave out:
/// `x-kubernetes-list-type`, `-list-map-keys`, `-map-type`, `-patch-strategy` and
/// `-patch-merge-key`, per definition (`"."`: on the definition itself) and property, taken from
/// the upstream OpenAPI v2 document (`api/openapi-spec/swagger.json`, Kubernetes 1.35), plus the
/// `default` of the `protocol` key of port lists that the upstream v3 document declares. Server-side
/// apply reads list and map topology from here ([`builtin_definitions`]); kubectl sees it too.
const KUBERNETES_EXTENSIONS: &str = include_str!("openapi/extensions.json");

/// [`KUBERNETES_EXTENSIONS`] indexed by definition name, each entry left as its JSON text. The
/// table holds one definition a line (`  "name": {...},`), so indexing it is splitting lines; a
/// test checks the index against the table decoded whole.
fn extension_index() -> &'static HashMap<&'static str, &'static str> {
    static INDEX: LazyLock<HashMap<&'static str, &'static str>> = LazyLock::new(|| {
        KUBERNETES_EXTENSIONS
            .lines()
            .filter_map(|line| {
                let line = line.trim();
                let line = line.strip_suffix(',').unwrap_or(line);
                let (name, entry) = line.strip_prefix('"')?.split_once("\": ")?;
                Some((name, entry))
            })
            .collect()
    });
    &INDEX
}

/// Merges [`KUBERNETES_EXTENSIONS`] into the generated definitions. Only the entries of the
/// definitions present are decoded (a kind's definitions are a small part of the table).
fn add_kubernetes_extensions(definitions: &mut Map<String, Value>) {
    let index = extension_index();
    for (definition, target) in definitions.iter_mut() {
        let (Some(entry), Value::Object(target)) = (index.get(definition.as_str()), target) else {
            continue;
        };
        let entries: Map<String, Value> = match serde_json::from_str(entry) {
            Ok(entries) => entries,
            Err(e) => {
                tracing::error!(%definition, error = %e, "an OpenAPI extension entry does not decode");
                continue;
            }
        };
        for (property, extensions) in entries {
            let Value::Object(extensions) = extensions else {
                continue;
            };
            let node = if property == "." {
                Some(&mut *target)
            } else {
                target
                    .get_mut("properties")
                    .and_then(|p| p.get_mut(&property))
                    .and_then(Value::as_object_mut)
            };
            if let Some(node) = node {
                node.extend(extensions);
            }
        }
    }
}

/// Every built-in definition (k8s-openapi's schemas with the Kubernetes extensions), by name, as
/// `#/components/schemas/` references them.
/// The whole library, generated on first call (milliseconds): prefer
/// [`builtin_definitions_of`] where one kind's definitions do.
pub fn builtin_definitions() -> &'static Map<String, Value> {
    library::library()
}

/// The definitions reached from the built-in kind or `ObjectMeta` whose definition is `name`
/// (itself included), generated on that name's first use; `None` for any other name.
pub fn builtin_definitions_of(name: &str) -> Option<&'static Map<String, Value>> {
    library::definitions_of(name)
}

/// The definition name of a built-in kind, e.g. `io.k8s.api.core.v1.Pod`.
pub fn builtin_definition_name(group: &str, version: &str, kind: &str) -> Option<&'static str> {
    library::definition_name(group, version, kind)
}

/// The definition names of every typed built-in kind, e.g. `io.k8s.api.core.v1.Pod`.
pub fn builtin_definition_names() -> impl Iterator<Item = &'static str> {
    library::typed_kinds().map(|(_, name)| name)
}

/// The definition name of `ObjectMeta`.
pub const OBJECT_META_DEFINITION: &str = OBJECT_META;

/// FNV-1a (64 bit) of `bytes` in upper-case hex: a stable content hash for the v3 index.
fn fnv1a_hex(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016X}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::discovery::fixtures;
    use crate::resource::builtin_resources;
    use rstest::rstest;

    /// The line index reads every entry of the extension table exactly as decoding the whole
    /// table does.
    #[test]
    fn the_extension_index_holds_the_whole_table() {
        let whole: Map<String, Value> =
            serde_json::from_str(KUBERNETES_EXTENSIONS).expect("the table decodes");
        let index = extension_index();
        assert_eq!(index.len(), whole.len());
        for (name, entries) in &whole {
            let indexed: Value =
                serde_json::from_str(index[name.as_str()]).expect("an entry decodes");
            assert_eq!(&indexed, entries, "{name}");
        }
    }

    fn widget() -> ResourceInfo {
        ResourceInfo {
            schema: Some(json!({
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {"color": {"type": "string"}, "size": {"type": "integer"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }
            })),
            ..fixtures::widget("v1")
        }
    }

    fn served() -> Vec<ResourceInfo> {
        let mut all = fixtures::builtin_subset();
        all.push(widget());
        all
    }

    /// Every `$ref` in `value`, as definition names (after `prefix`).
    fn refs(value: &Value, prefix: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(map) => {
                    for (k, child) in map {
                        match child {
                            Value::String(r) if k == "$ref" => out.push(
                                r.strip_prefix(prefix)
                                    .unwrap_or_else(|| panic!("foreign ref {r}"))
                                    .to_string(),
                            ),
                            _ => stack.push(child),
                        }
                    }
                }
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        out
    }

    /// The `PATCH` operation of the GVK, as query_param_verifier_v3.go finds it.
    fn patch_operation<'a>(doc: &'a Value, group: &str, version: &str, kind: &str) -> &'a Value {
        doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .filter_map(|p| p.get("patch"))
            .find(|op| {
                op["x-kubernetes-group-version-kind"]
                    == json!({"group": group, "version": version, "kind": kind})
            })
            .unwrap_or_else(|| panic!("no PATCH for {kind}"))
    }

    #[rstest]
    #[case(
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        Some(V2Encoding::Protobuf)
    )]
    #[case(
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
        Some(V2Encoding::Protobuf)
    )]
    #[case(
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json",
        Some(V2Encoding::Protobuf)
    )]
    #[case("application/json", Some(V2Encoding::Json))]
    #[case("application/json, */*", Some(V2Encoding::Json))]
    #[case("text/html, */*;q=0.8", Some(V2Encoding::Json))]
    #[case("*/*", Some(V2Encoding::Json))]
    #[case("", Some(V2Encoding::Json))]
    #[case("application/vnd.kubernetes.protobuf", None)]
    fn v2_content_negotiation(#[case] accept: &str, #[case] expected: Option<V2Encoding>) {
        assert_eq!(v2_encoding(accept), expected);
        assert_eq!(
            v2_accepts_json(accept),
            expected == Some(V2Encoding::Json) || accept.contains("json")
        );
    }

    #[test]
    fn v3_index_lists_every_group_version_with_a_content_hash() {
        let index = v3_index(&served());
        let paths = index["paths"].as_object().unwrap();
        let keys: Vec<&String> = paths.keys().collect();
        assert_eq!(
            keys,
            [
                "api/v1",
                "apis/apiextensions.k8s.io/v1",
                "apis/apps/v1",
                "apis/coordination.k8s.io/v1",
                "apis/events.k8s.io/v1",
                "apis/example.com/v1",
                "apis/rbac.authorization.k8s.io/v1"
            ]
        );
        for path in keys.iter() {
            assert!(
                v3_document(&served(), path).is_some(),
                "{path} has no document"
            );
        }
        let url = paths["apis/apps/v1"]["serverRelativeURL"].as_str().unwrap();
        assert!(url.starts_with("/openapi/v3/apis/apps/v1?hash="), "{url}");
        // The hash changes when the document does.
        let mut changed = served();
        changed.last_mut().unwrap().short_names = vec!["w".into()];
        changed.last_mut().unwrap().schema = None;
        let after = v3_index(&changed);
        assert_ne!(
            after["paths"]["apis/example.com/v1"],
            index["paths"]["apis/example.com/v1"]
        );
        assert_eq!(
            after["paths"]["apis/apps/v1"],
            index["paths"]["apis/apps/v1"]
        );
    }

    #[rstest]
    #[case("api/v2")]
    #[case("apis/apps/v2")]
    #[case("apis/nope.example.com/v1")]
    #[case("apis")]
    #[case("apis//v1")]
    #[case("")]
    fn unknown_documents_are_none(#[case] path: &str) {
        assert_eq!(v3_document(&served(), path), None);
    }

    #[rstest]
    #[case("api/v1", "", "v1", "Pod", "io.k8s.api.core.v1.Pod")]
    #[case(
        "apis/apps/v1",
        "apps",
        "v1",
        "Deployment",
        "io.k8s.api.apps.v1.Deployment"
    )]
    #[case(
        "/apis/coordination.k8s.io/v1?hash=X",
        "coordination.k8s.io",
        "v1",
        "Lease",
        "io.k8s.api.coordination.v1.Lease"
    )]
    #[case(
        "apis/example.com/v1",
        "example.com",
        "v1",
        "Widget",
        "com.example.v1.Widget"
    )]
    fn v3_documents_carry_what_kubectl_looks_for(
        #[case] path: &str,
        #[case] group: &str,
        #[case] version: &str,
        #[case] kind: &str,
        #[case] definition: &str,
    ) {
        let doc = v3_document(&served(), path).unwrap();
        assert_eq!(doc["openapi"], "3.0.0");
        // Validation: the PATCH operation of the GVK takes fieldValidation.
        let patch = patch_operation(&doc, group, version, kind);
        let params: Vec<&str> = patch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert!(params.contains(&"fieldValidation"));
        // Apply: strategic merge patch is never advertised (see the module comment).
        let content = patch["requestBody"]["content"].as_object().unwrap();
        assert!(content.contains_key("application/merge-patch+json"));
        assert!(!content.contains_key("application/strategic-merge-patch+json"));
        // Explain: the kind's schema is found by its GVK, and every $ref resolves.
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let schema = &schemas[definition];
        assert_eq!(
            schema["x-kubernetes-group-version-kind"],
            json!([{"group": group, "kind": kind, "version": version}])
        );
        assert_eq!(
            schemas[&format!("{definition}List")]["x-kubernetes-group-version-kind"][0]["kind"],
            format!("{kind}List")
        );
        for name in refs(&doc, V3_REF_PREFIX) {
            assert!(schemas.contains_key(&name), "{name} does not resolve");
        }
        assert!(schema["properties"]["metadata"].is_object());
    }

    #[test]
    fn core_document_has_the_real_pod_schema_and_paths() {
        let doc = v3_document(&served(), "api/v1").unwrap();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let containers = &schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(containers["type"], "array");
        assert!(schemas.contains_key("io.k8s.api.core.v1.Container"));
        assert!(!schemas.contains_key("io.k8s.api.apps.v1.Deployment"));
        let paths = doc["paths"].as_object().unwrap();
        for path in [
            "/api/v1/namespaces/{namespace}/pods",
            "/api/v1/namespaces/{namespace}/pods/{name}",
            "/api/v1/namespaces/{namespace}/pods/{name}/status",
            "/api/v1/pods",
            "/api/v1/nodes/{name}",
            "/api/v1/namespaces/{namespace}/configmaps/{name}",
        ] {
            assert!(paths.contains_key(path), "{path}");
        }
        assert!(!paths.contains_key("/api/v1/namespaces/{namespace}/configmaps/{name}/status"));
        let list = &paths["/api/v1/namespaces/{namespace}/pods"]["get"];
        assert_eq!(list["x-kubernetes-action"], "list");
        assert_eq!(list["operationId"], "listCoreV1NamespacedPod");
    }

    #[test]
    fn custom_kind_schema_keeps_the_crd_schema_and_adds_metadata() {
        let doc = v3_document(&served(), "apis/example.com/v1").unwrap();
        let schema = &doc["components"]["schemas"]["com.example.v1.Widget"];
        assert_eq!(
            schema["properties"]["spec"]["properties"]["color"]["type"],
            "string"
        );
        assert_eq!(schema["properties"]["apiVersion"]["type"], "string");
        assert_eq!(
            schema["properties"]["metadata"]["allOf"][0]["$ref"],
            format!("{V3_REF_PREFIX}{OBJECT_META}")
        );
    }

    #[test]
    fn custom_kind_without_schema_keeps_unknown_fields() {
        let mut info = widget();
        info.schema = None;
        let doc = v3_document(&[info], "apis/example.com/v1").unwrap();
        let schema = &doc["components"]["schemas"]["com.example.v1.Widget"];
        assert_eq!(schema["x-kubernetes-preserve-unknown-fields"], true);
    }

    #[test]
    fn v2_document_has_every_kind_and_local_refs() {
        let mut all = builtin_resources();
        all.push(widget());
        let doc = v2_document(&all);
        assert_eq!(doc["swagger"], "2.0");
        let definitions = doc["definitions"].as_object().unwrap();
        for info in all {
            let name = definition_name(&info);
            assert_eq!(
                definitions[&name]["x-kubernetes-group-version-kind"][0]["kind"], info.kind,
                "{name}"
            );
        }
        for name in refs(&doc, V2_REF_PREFIX) {
            assert!(definitions.contains_key(&name), "{name} does not resolve");
        }
        let patch =
            &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert_eq!(patch["consumes"], json!(PATCH_TYPES));
        assert_eq!(patch["parameters"][0]["in"], "body");
    }

    #[test]
    fn every_built_in_kind_has_its_real_schema() {
        for info in builtin_resources() {
            let typed = builtin_definition_name(&info.group, &info.version, &info.kind).is_some();
            assert!(
                typed,
                "{}/{} {} has no k8s-openapi schema: add it to the `typed!` table in openapi.rs",
                info.group, info.version, info.kind
            );
        }
    }

    #[test]
    fn v2_schemas_use_swagger_idioms() {
        let doc = v2_document(&served());
        let definitions = &doc["definitions"];
        let metadata = &definitions["io.k8s.api.core.v1.Pod"]["properties"]["metadata"];
        assert_eq!(
            metadata["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert!(metadata.get("allOf").is_none());
        let text = doc.to_string();
        assert!(!text.contains("#/components/schemas/"));
        // The protobuf encoding carries the same document.
        let encoded = v2_protobuf(&served());
        assert!(encoded.len() > 1000);
        assert!(encoded
            .windows(b"io.k8s.api.core.v1.Pod".len())
            .any(|w| w == b"io.k8s.api.core.v1.Pod"));
    }

    #[test]
    fn fnv_hash_is_stable() {
        assert_eq!(fnv1a_hex(b""), "CBF29CE484222325");
        assert_eq!(fnv1a_hex(b"a"), "AF63DC4C8601EC8C");
    }
}
