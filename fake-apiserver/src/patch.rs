//! Applying PATCH bodies the way a real API server does.
//!
//! Three patch types: JSON merge patch (RFC 7386, with the null pruning of the
//! `evanphx/json-patch` v4 library the server uses), JSON patch (RFC 6902, with that library's
//! quirks: `replace` of a missing object key adds it, a failed `test` is a 422), and strategic
//! merge patch for built-in kinds, driven by the `patchStrategy`/`patchMergeKey` tags of the
//! Kubernetes Go types (see [`strategy`] for the table). Errors carry the HTTP code and reason the
//! real server answers with.

pub mod go_json;

use serde_json::{Map, Value};

use crate::rules::validation::{go_format_float, go_quote, Cause};

/// Most operations one JSON patch may contain (`maxJSONPatchOperations`).
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

const DIRECTIVE_MARKER: &str = "$patch";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER: &str = "$setElementOrder";
const RETAIN_KEYS: &str = "$retainKeys";

/// Why a patch could not be applied, with the answer a real server gives.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// 400 BadRequest: the patch body is malformed.
    #[error("{0}")]
    BadRequest(String),
    /// 422 Invalid with the generic message (the library's error is kept for logs only). A
    /// failed `test`, a path that does not exist, an unknown op.
    #[error("the server rejected our request due to an error in our request")]
    Unprocessable(String),
    /// 500 with an empty reason (`StatusReasonUnknown`): an error the server does not classify.
    #[error("{0}")]
    Internal(String),
    /// 413 RequestEntityTooLarge: too many JSON patch operations.
    #[error("{0}")]
    TooLarge(String),
    /// 422 Invalid: the patched document cannot be decoded as an object (a JSON patch replaced
    /// the root with an array). Carries the field error on `patch`.
    #[error("{}", .0.message())]
    Invalid(crate::rules::validation::InvalidError),
    /// 415 UnsupportedMediaType: the patch type is not accepted for this resource.
    #[error("the body of the request was in an unknown format - accepted media types include: {}", .0.join(", "))]
    UnsupportedMediaType(Vec<String>),
}

impl PatchError {
    /// HTTP status code.
    pub fn code(&self) -> u16 {
        match self {
            PatchError::BadRequest(_) => 400,
            PatchError::Unprocessable(_) | PatchError::Invalid(_) => 422,
            PatchError::Internal(_) => 500,
            PatchError::TooLarge(_) => 413,
            PatchError::UnsupportedMediaType(_) => 415,
        }
    }

    /// `Status.reason` (empty for the unclassified 500).
    pub fn reason(&self) -> &'static str {
        match self {
            PatchError::BadRequest(_) => "BadRequest",
            PatchError::Unprocessable(_) | PatchError::Invalid(_) => "Invalid",
            PatchError::Internal(_) => "",
            PatchError::TooLarge(_) => "RequestEntityTooLarge",
            PatchError::UnsupportedMediaType(_) => "UnsupportedMediaType",
        }
    }

    /// `Status.details.causes`. The generic 422 has none: the server builds it with
    /// `NewGenericServerResponse(..., isUnexpectedResponse=false)`, so the library's text (kept
    /// in the variant for logs) never reaches the client.
    pub fn causes(&self) -> Vec<Cause> {
        match self {
            PatchError::Invalid(e) => e.causes.clone(),
            _ => Vec::new(),
        }
    }

    /// The library's own error text behind a generic 422 (for logs).
    pub fn detail(&self) -> Option<&str> {
        match self {
            PatchError::Unprocessable(detail) => Some(detail),
            _ => None,
        }
    }

    /// The whole `Status` object a real server sends for this error.
    pub fn to_status(&self) -> Value {
        let mut status = serde_json::json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.to_string(),
            "code": self.code(),
        });
        if !self.reason().is_empty() {
            status["reason"] = Value::String(self.reason().to_string());
        }
        if let PatchError::Invalid(e) = self {
            status["details"] = e.to_status()["details"].clone();
        }
        if let PatchError::Unprocessable(_) = self {
            status["details"] = serde_json::json!({});
        }
        status
    }
}

/// The patch content types the server understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json`
    Json,
    /// `application/merge-patch+json`
    Merge,
    /// `application/strategic-merge-patch+json`
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply; not handled in this module)
    Apply,
}

impl PatchType {
    /// The content type string.
    pub fn content_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }

    /// Parses a `Content-Type` header value (parameters such as `; charset=utf-8` are ignored).
    pub fn from_content_type(header: &str) -> Option<Self> {
        let base = header.split(';').next().unwrap_or_default().trim();
        [
            PatchType::Json,
            PatchType::Merge,
            PatchType::Strategic,
            PatchType::Apply,
        ]
        .into_iter()
        .find(|t| t.content_type().eq_ignore_ascii_case(base))
    }
}

/// Whether strategic merge patch is served: built-in kinds only. Custom resources have no Go
/// struct tags to drive it, so the real server answers 415 (see [`accepted_patch_types`]).
pub fn strategic_merge_supported(custom: bool) -> bool {
    !custom
}

/// The patch content types a resource accepts, in the order the 415 message lists them.
pub fn accepted_patch_types(custom: bool) -> Vec<&'static str> {
    let mut types = vec![
        PatchType::Json.content_type(),
        PatchType::Merge.content_type(),
    ];
    if strategic_merge_supported(custom) {
        types.push(PatchType::Strategic.content_type());
    }
    types.push(PatchType::Apply.content_type());
    types
}

/// Checks a content type against a resource: the 415 a real server answers when it is not
/// accepted (an unknown type, or strategic merge on a custom resource).
pub fn check_patch_type(header: &str, custom: bool) -> Result<PatchType, PatchError> {
    let unsupported = || {
        PatchError::UnsupportedMediaType(
            accepted_patch_types(custom)
                .into_iter()
                .map(str::to_string)
                .collect(),
        )
    };
    match PatchType::from_content_type(header) {
        Some(PatchType::Strategic) if !strategic_merge_supported(custom) => Err(unsupported()),
        Some(t) => Ok(t),
        None => Err(unsupported()),
    }
}

/// Parses a patch body into JSON and checks its outer shape, with the 400 a real server gives
/// for bodies it cannot decode (the server decodes patches in `fieldValidation=Warn` mode).
pub fn decode_patch(patch_type: PatchType, body: &[u8]) -> Result<Value, PatchError> {
    let value: Value = crate::store::json::from_slice(body).map_err(|e| {
        let message = go_json::syntax_error(body).unwrap_or_else(|| e.to_string());
        match patch_type {
            PatchType::Strategic => PatchError::BadRequest(message),
            _ => PatchError::BadRequest(format!("error decoding patch: {message}")),
        }
    })?;
    match patch_type {
        PatchType::Merge => {
            if !value.is_object() && !value.is_null() {
                return Err(PatchError::BadRequest(format!(
                    "error decoding patch: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    go_json_kind(&value)
                )));
            }
        }
        PatchType::Strategic => {
            if !value.is_object() && !value.is_null() {
                return Err(PatchError::BadRequest(format!(
                    "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    go_json_kind(&value)
                )));
            }
        }
        PatchType::Json => check_json_patch_shape(&value)?,
        PatchType::Apply => {}
    }
    Ok(value)
}

/// Applies a decoded patch of any non-apply type to `target`, which it takes: the patched
/// object, or the error (the caller keeps its own copy when it needs the original).
pub fn apply_patch(
    patch_type: PatchType,
    mut target: Value,
    patch: &Value,
    group: &str,
    kind: &str,
    custom: bool,
) -> Result<Value, PatchError> {
    match patch_type {
        PatchType::Json => json_patch(target, patch),
        PatchType::Merge => merge_patch(&mut target, patch).map(|()| target),
        PatchType::Strategic if strategic_merge_supported(custom) => {
            strategic_merge_patch(target, patch, group, kind)
        }
        PatchType::Strategic | PatchType::Apply => Err(PatchError::UnsupportedMediaType(
            accepted_patch_types(custom)
                .into_iter()
                .map(str::to_string)
                .collect(),
        )),
    }
}

/// The JSON kind name Go's decoder uses in "cannot unmarshal X into ..." messages.
fn go_json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

// ---------------------------------------------------------------------------------------------
// JSON merge patch (RFC 7386)
// ---------------------------------------------------------------------------------------------

/// Applies a JSON merge patch (RFC 7386): objects merge recursively, `null` deletes a key,
/// anything else replaces. As in the server's library, nulls inside newly added values are
/// dropped. The patch must be an object.
pub fn merge_patch(target: &mut Value, patch: &Value) -> Result<(), PatchError> {
    let patch_map = match patch {
        Value::Object(m) => m,
        Value::Null => return Err(PatchError::BadRequest("Invalid JSON Patch".to_string())),
        other => {
            return Err(PatchError::BadRequest(format!(
                "error decoding patch: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                go_json_kind(other)
            )))
        }
    };
    match target {
        Value::Object(doc) => {
            merge_docs(doc, patch_map);
            Ok(())
        }
        _ => Err(PatchError::Internal("invalid JSON document".to_string())),
    }
}

fn merge_docs(doc: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (k, v) in patch {
        if v.is_null() {
            doc.remove(k);
            continue;
        }
        match doc.get_mut(k) {
            Some(cur) if !cur.is_null() => merge_value(cur, v),
            _ => {
                doc.insert(k.clone(), pruned_nulls(v));
            }
        }
    }
}

fn merge_value(cur: &mut Value, patch: &Value) {
    match (cur.as_object_mut(), patch) {
        (Some(cur_doc), Value::Object(patch_doc)) => merge_docs(cur_doc, patch_doc),
        (Some(_), _) => *cur = patch.clone(),
        (None, _) => *cur = pruned_nulls(patch),
    }
}

/// Copy of `v` without null object members (recursively, also inside arrays).
pub(crate) fn pruned_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), pruned_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(pruned_nulls).collect()),
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// JSON patch (RFC 6902)
// ---------------------------------------------------------------------------------------------

fn check_json_patch_shape(patch: &Value) -> Result<(), PatchError> {
    let ops = match patch {
        Value::Array(ops) => ops,
        Value::Null => return Ok(()),
        other => {
            return Err(PatchError::BadRequest(format!(
                "error decoding patch: json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
                go_json_kind(other)
            )))
        }
    };
    for op in ops {
        let Some(fields) = op.as_object() else {
            if op.is_null() {
                continue;
            }
            return Err(PatchError::BadRequest(format!(
                "error decoding patch: json: cannot unmarshal {} into Go value of type handlers.jsonPatchOp",
                go_json_kind(op)
            )));
        };
        for key in ["op", "path", "from"] {
            if let Some(v) = fields.get(key) {
                if !v.is_string() && !v.is_null() {
                    return Err(PatchError::BadRequest(format!(
                        "error decoding patch: json: cannot unmarshal {} into Go struct field jsonPatchOp.{key} of type string",
                        go_json_kind(v)
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Applies a JSON patch (RFC 6902: add, remove, replace, move, copy, test) to `target`, which it
/// takes (no copy is made): the patched object, or the error.
pub fn json_patch(target: Value, patch: &Value) -> Result<Value, PatchError> {
    check_json_patch_shape(patch)?;
    let empty = Vec::new();
    let ops = patch.as_array().unwrap_or(&empty);
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(PatchError::TooLarge(format!(
            "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
            ops.len()
        )));
    }
    let mut doc = target;
    let no_fields = Map::new();
    for op in ops {
        let fields = op.as_object().unwrap_or(&no_fields);
        apply_op(&mut doc, fields).map_err(PatchError::Unprocessable)?;
    }
    if !doc.is_object() {
        let text = doc.to_string();
        return Err(PatchError::Invalid(
            crate::rules::validation::InvalidError::new(
                "",
                "",
                "",
                vec![Cause::invalid_str(
                    "patch",
                    &text,
                    &format!(
                        "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                        go_json_kind(&doc)
                    ),
                )],
            ),
        ));
    }
    Ok(doc)
}

const MISSING: &str = "missing value";
const INVALID_INDEX: &str = "invalid index referenced";

fn op_string<'a>(op: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    op.get(key).and_then(Value::as_str)
}

fn op_path(op: &Map<String, Value>) -> Result<&str, String> {
    op_string(op, "path").ok_or_else(|| format!("operation missing path field: {MISSING}"))
}

fn op_from(op: &Map<String, Value>) -> Result<&str, String> {
    op_string(op, "from").ok_or_else(|| format!("operation, missing from field: {MISSING}"))
}

fn op_value(op: &Map<String, Value>) -> Value {
    op.get("value").cloned().unwrap_or(Value::Null)
}

fn apply_op(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let kind = op_string(op, "op").unwrap_or("unknown");
    match kind {
        "add" => {
            let path = op_path(op)
                .map_err(|_| format!("add operation failed to decode path: {MISSING}"))?;
            let (con, key) = find_object(doc, path).ok_or_else(|| {
                format!("add operation does not apply: doc is missing path: \"{path}\": {MISSING}")
            })?;
            container_add(con, &key, op_value(op))
                .map_err(|e| format!("error in add for path: '{path}': {e}"))
        }
        "remove" => {
            let path = op_path(op)
                .map_err(|_| format!("remove operation failed to decode path: {MISSING}"))?;
            let (con, key) = find_object(doc, path).ok_or_else(|| {
                format!(
                    "remove operation does not apply: doc is missing path: \"{path}\": {MISSING}"
                )
            })?;
            container_remove(con, &key)
                .map(|_| ())
                .map_err(|e| format!("error in remove for path: '{path}': {e}"))
        }
        "replace" => {
            let path =
                op_path(op).map_err(|e| format!("replace operation failed to decode path: {e}"))?;
            if path.is_empty() {
                return match op.get("value") {
                    Some(v @ (Value::Object(_) | Value::Array(_))) => {
                        *doc = v.clone();
                        Ok(())
                    }
                    _ => Err(
                        "replace operation value must be object or array: %!w(<nil>)".to_string(),
                    ),
                };
            }
            let (con, key) = find_object(doc, path).ok_or_else(|| {
                format!("replace operation does not apply: doc is missing path: {path}: {MISSING}")
            })?;
            if container_get(con, &key).is_err() {
                return Err(format!(
                    "replace operation does not apply: doc is missing key: {path}: {MISSING}"
                ));
            }
            container_set(con, &key, op_value(op))
                .map_err(|e| format!("error in remove for path: '{path}': {e}"))
        }
        "move" => {
            let from =
                op_from(op).map_err(|e| format!("move operation failed to decode from: {e}"))?;
            let (con, key) = find_object(doc, from).ok_or_else(|| {
                format!(
                    "move operation does not apply: doc is missing from path: {from}: {MISSING}"
                )
            })?;
            container_get(con, &key)
                .map_err(|e| format!("error in move for path: '{key}': {e}"))?;
            let value = container_remove(con, &key)
                .map_err(|e| format!("error in move for path: '{key}': {e}"))?;
            let path =
                op_path(op).map_err(|e| format!("move operation failed to decode path: {e}"))?;
            let (con, key) = find_object(doc, path).ok_or_else(|| {
                format!("move operation does not apply: doc is missing destination path: {path}: {MISSING}")
            })?;
            container_add(con, &key, value)
                .map_err(|e| format!("error in move for path: '{path}': {e}"))
        }
        "test" => {
            let path =
                op_path(op).map_err(|e| format!("test operation failed to decode path: {e}"))?;
            let failed = || format!("testing value {path} failed: test failed");
            if path.is_empty() {
                return match op.get("value") {
                    Some(expected) if v4_equal(doc, expected) => Ok(()),
                    _ => Err(failed()),
                };
            }
            let (con, key) = find_object(doc, path).ok_or_else(|| {
                format!("test operation does not apply: is missing path: {path}: {MISSING}")
            })?;
            let current = container_get(con, &key)
                .map_err(|e| format!("error in test for path: '{path}': {e}"))?;
            match (current, op.get("value")) {
                (None, None | Some(Value::Null)) => Ok(()),
                (None, Some(_)) | (Some(_), None) => Err(failed()),
                (Some(cur), Some(expected)) if v4_equal(&cur, expected) => Ok(()),
                (Some(_), Some(_)) => Err(failed()),
            }
        }
        "copy" => {
            let from =
                op_from(op).map_err(|e| format!("copy operation failed to decode from: {e}"))?;
            let (con, key) = find_object(doc, from).ok_or_else(|| {
                format!(
                    "copy operation does not apply: doc is missing from path: {from}: {MISSING}"
                )
            })?;
            let value = container_get(con, &key)
                .map_err(|e| format!("error in copy for from: '{from}': {e}"))?
                .unwrap_or(Value::Null);
            let path = op_path(op)
                .map_err(|_| format!("copy operation failed to decode path: {MISSING}"))?;
            let (con, key) = find_object(doc, path).ok_or_else(|| {
                format!("copy operation does not apply: doc is missing destination path: {path}: {MISSING}")
            })?;
            container_add(con, &key, value)
                .map_err(|e| format!("error while adding value during copy: {e}"))
        }
        other => Err(format!("Unexpected kind: {other}")),
    }
}

/// RFC 6901 token decoding (`~1` then `~0`).
fn decode_pointer_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Go's `strconv.Atoi`, with its error text.
fn atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.Atoi: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {}: value out of range", go_quote(s)))
}

/// Finds the object or array holding the last token of `path`, and that token.
fn find_object<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let tokens: Vec<&str> = path.split('/').collect();
    if tokens.len() < 2 {
        return None;
    }
    let key = decode_pointer_token(tokens[tokens.len() - 1]);
    let mut cur = doc;
    if !(cur.is_object() || cur.is_array()) {
        return None;
    }
    for part in &tokens[1..tokens.len() - 1] {
        let part = decode_pointer_token(part);
        cur = match cur {
            Value::Object(m) => m.get_mut(&part)?,
            Value::Array(items) => {
                let idx = array_index(items.len(), atoi(&part).ok()?).ok()?;
                items.get_mut(idx)?
            }
            _ => return None,
        };
        if !(cur.is_object() || cur.is_array()) {
            return None;
        }
    }
    Some((cur, key))
}

fn invalid_index(idx: i64) -> String {
    format!("Unable to access invalid index: {idx}: {INVALID_INDEX}")
}

/// Resolves an index for get/set/remove: negative counts from the end.
fn array_index(len: usize, idx: i64) -> Result<usize, String> {
    let len = len as i64;
    let pos = if idx < 0 { idx + len } else { idx };
    if idx < -len || pos >= len {
        return Err(invalid_index(idx));
    }
    usize::try_from(pos).map_err(|_| invalid_index(idx))
}

/// Reads a member: a missing object key is `None` (not an error), as in the library.
fn container_get(con: &Value, key: &str) -> Result<Option<Value>, String> {
    match con {
        Value::Object(m) => Ok(m.get(key).cloned()),
        Value::Array(items) => {
            let idx = array_index(items.len(), atoi(key)?)?;
            Ok(items.get(idx).cloned())
        }
        _ => Err(MISSING.to_string()),
    }
}

fn container_set(con: &mut Value, key: &str, value: Value) -> Result<(), String> {
    match con {
        Value::Object(m) => {
            m.insert(key.to_string(), value);
            Ok(())
        }
        Value::Array(items) => {
            let idx = array_index(items.len(), atoi(key)?)?;
            if let Some(slot) = items.get_mut(idx) {
                *slot = value;
            }
            Ok(())
        }
        _ => Err(MISSING.to_string()),
    }
}

fn container_add(con: &mut Value, key: &str, value: Value) -> Result<(), String> {
    match con {
        Value::Object(m) => {
            m.insert(key.to_string(), value);
            Ok(())
        }
        Value::Array(items) => {
            if key == "-" {
                items.push(value);
                return Ok(());
            }
            let idx = atoi(key)
                .map_err(|e| format!("value was not a proper array index: '{key}': {e}"))?;
            let size = items.len() as i64 + 1;
            if idx >= size || idx < -size {
                return Err(invalid_index(idx));
            }
            let pos = if idx < 0 { idx + size } else { idx };
            items.insert(pos as usize, value);
            Ok(())
        }
        _ => Err(MISSING.to_string()),
    }
}

fn container_remove(con: &mut Value, key: &str) -> Result<Value, String> {
    match con {
        Value::Object(m) => m
            .remove(key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}: {MISSING}")),
        Value::Array(items) => {
            let idx = array_index(items.len(), atoi(key)?)?;
            Ok(items.remove(idx))
        }
        _ => Err(MISSING.to_string()),
    }
}

/// The library's equality for `test`: structural, objects with the same members, scalars by
/// their JSON text (so `1` and `1.0` differ).
fn v4_equal(doc: &Value, expected: &Value) -> bool {
    doc == expected
}

// ---------------------------------------------------------------------------------------------
// Strategic merge patch
// ---------------------------------------------------------------------------------------------

pub(crate) mod strategy {
    //! The `patchStrategy` / `patchMergeKey` tags of the built-in Go types, read from the tables
    //! generated from `k8s.io/api` ([`crate::rules::go_encoding`]), as
    //! `strategicpatch.PatchMetaFromStruct` reads them off the Go structs.

    use crate::rules::go_encoding::{self, PatchTag, Ty};

    /// How a field's value is patched.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Strategy {
        /// No tag: lists are replaced, maps merged key by key.
        Default,
        /// `patchStrategy:"merge"`: lists merged (by `merge key` for lists of objects; as a set
        /// for lists of scalars).
        Merge(Option<&'static str>),
        /// `patchStrategy:"replace"`: the patch value replaces the field.
        Replace,
    }

    /// The shape of a value: where its fields' tags come from.
    #[derive(Debug, Clone, Copy)]
    pub enum Shape {
        /// A Go struct, by index into the generated table.
        Struct(u16),
        /// A Go map: every key has the element's shape and no tag
        /// (`LookupPatchMetadataForStruct` on a map type).
        Map(&'static Ty),
        /// An object of a kind without a Go type here (a custom resource): only its `metadata`
        /// is known.
        MetadataOnly,
        /// Anything without tagged fields below it.
        Opaque,
    }

    impl Shape {
        /// The strategy and shape of `key` within this shape (for a list, the shape of its
        /// elements).
        pub fn lookup(self, key: &str) -> (Strategy, Shape) {
            match self {
                Shape::Struct(index) => match go_encoding::struct_field(index, key) {
                    Some((tag, ty)) => (strategy_of(tag), shape_of(ty)),
                    None => (Strategy::Default, Shape::Opaque),
                },
                Shape::Map(element) => (Strategy::Default, shape_of(*element)),
                Shape::MetadataOnly if key == "metadata" => (
                    Strategy::Default,
                    go_encoding::object_meta_struct().map_or(Shape::Opaque, Shape::Struct),
                ),
                Shape::MetadataOnly | Shape::Opaque => (Strategy::Default, Shape::Opaque),
            }
        }
    }

    fn strategy_of(tag: PatchTag) -> Strategy {
        match tag {
            PatchTag::None => Strategy::Default,
            PatchTag::Merge(key) => Strategy::Merge(key),
            PatchTag::Replace => Strategy::Replace,
        }
    }

    /// The shape of a value of type `ty` (pointers followed, a slice's elements).
    fn shape_of(ty: Ty) -> Shape {
        match ty {
            Ty::Ptr(inner) | Ty::Slice(inner) => shape_of(*inner),
            Ty::Map(element) => Shape::Map(element),
            Ty::Struct(index) => Shape::Struct(index),
            _ => Shape::Opaque,
        }
    }

    /// The root shape of a built-in kind (unknown kinds get the `metadata` rules only).
    pub fn root_shape(group: &str, kind: &str) -> Shape {
        go_encoding::kind_struct(group, kind).map_or(Shape::MetadataOnly, Shape::Struct)
    }
}

use strategy::{Shape, Strategy};

fn smp_bad_request(what: &str) -> PatchError {
    PatchError::BadRequest(what.to_string())
}

/// Go's type name of a decoded JSON value, as `reflect.TypeOf` prints it.
fn go_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of a decoded JSON value (`map[a:1 b:x]`, `[a b]`, `<nil>`).
fn go_fmt_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => go_format_float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(go_fmt_v).collect();
            format!("[{}]", inner.join(" "))
        }
        Value::Object(m) => go_fmt_map(m),
    }
}

fn go_fmt_map(m: &Map<String, Value>) -> String {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    let inner: Vec<String> = keys
        .iter()
        .map(|k| format!("{k}:{}", go_fmt_v(&m[k.as_str()])))
        .collect();
    format!("map[{}]", inner.join(" "))
}

fn err_no_merge_key(m: &Map<String, Value>, key: &str) -> PatchError {
    PatchError::Internal(format!(
        "map: {} does not contain declared merge key: {key}",
        go_fmt_map(m)
    ))
}

fn err_bad_arg_type(expected: &str, actual: &Value) -> PatchError {
    PatchError::Internal(format!(
        "expected a {expected}, but received a {}",
        go_type_name(actual)
    ))
}

fn err_bad_patch_type(directive: &Value, m: &Map<String, Value>) -> PatchError {
    let shown = match directive {
        Value::String(s) => s.clone(),
        other => format!("%!s({}={})", go_type_name(other), go_fmt_v(other)),
    };
    PatchError::Internal(format!(
        "unknown patch type: {shown} in map: {}",
        go_fmt_map(m)
    ))
}

/// Applies a strategic merge patch to a built-in object (`group`/`kind` select the field
/// strategies). Lists of objects tagged `merge` are merged by their merge key, lists of scalars
/// tagged `merge` as sets, other lists replaced; `null` deletes a key; the directives `$patch`
/// (`replace`/`delete` in maps; `replace`/`delete` in list items), `$deleteFromPrimitiveList/<f>`,
/// `$setElementOrder/<f>` and `$retainKeys` are honoured. `target` is taken (no copy is made):
/// the patched object, or the error.
pub fn strategic_merge_patch(
    target: Value,
    patch: &Value,
    group: &str,
    kind: &str,
) -> Result<Value, PatchError> {
    let patch_map = match patch {
        Value::Object(m) => m.clone(),
        Value::Null => Map::new(),
        other => {
            return Err(PatchError::BadRequest(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                go_json_kind(other)
            )))
        }
    };
    let Value::Object(original) = target else {
        return Err(smp_bad_request("invalid JSON document"));
    };
    let merged = merge_map(original, patch_map, strategy::root_shape(group, kind))?;
    Ok(Value::Object(merged))
}

/// A patch value taken as is into the result: directive keys and null members dropped (the
/// real server drops them when decoding into the typed object).
fn clean(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(k, v)| !k.starts_with('$') && !v.is_null())
                .map(|(k, v)| (k, clean(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(clean).collect()),
        other => other,
    }
}

fn extract_key(key: &str, prefix: &str, err: &str) -> Result<String, PatchError> {
    match key.split_once('/') {
        Some((p, rest)) if p == prefix => Ok(rest.to_string()),
        _ => Err(smp_bad_request(err)),
    }
}

const ERR_PRIMITIVE_LIST: &str = "invalid patch format of primitive list";
const ERR_RETAIN_KEYS: &str = "invalid patch format of retainKeys";
const ERR_SET_ELEMENT_ORDER: &str = "invalid patch format of setElementOrder list";

fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    shape: Shape,
) -> Result<Map<String, Value>, PatchError> {
    if let Some(directive) = patch.get(DIRECTIVE_MARKER) {
        return match directive.as_str() {
            Some("replace") => {
                patch.remove(DIRECTIVE_MARKER);
                match clean(Value::Object(patch)) {
                    Value::Object(m) => Ok(m),
                    _ => Ok(Map::new()),
                }
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(err_bad_patch_type(directive, &patch)),
        };
    }

    apply_retain_keys(&mut original, &mut patch)?;
    merge_set_element_order(&mut original, &mut patch, shape)?;

    for (key, patch_value) in patch {
        let (key, is_delete_list) = if key.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
            (
                extract_key(&key, DELETE_FROM_PRIMITIVE_LIST, ERR_PRIMITIVE_LIST)?,
                true,
            )
        } else if key.starts_with('$') {
            // An unknown directive key is no field of the type: the server drops it.
            continue;
        } else {
            (key, false)
        };
        if patch_value.is_null() {
            original.remove(&key);
            continue;
        }
        let Some(current) = original.get_mut(&key) else {
            // Upstream takes the patch value as is, even a deletion list for an absent list.
            original.insert(key, clean(patch_value));
            continue;
        };
        let (field_strategy, field_shape) = shape.lookup(&key);
        let merged = match (std::mem::take(current), patch_value) {
            (Value::Object(cur), Value::Object(p)) => {
                if field_strategy == Strategy::Replace {
                    clean(Value::Object(p))
                } else {
                    Value::Object(merge_map(cur, p, field_shape)?)
                }
            }
            (Value::Array(cur), Value::Array(p)) => match field_strategy {
                Strategy::Merge(merge_key) => {
                    Value::Array(merge_slice(cur, p, field_shape, merge_key, is_delete_list)?)
                }
                _ => clean(Value::Array(p)),
            },
            (_, p) => clean(p),
        };
        if let Some(slot) = original.get_mut(&key) {
            *slot = merged;
        }
    }
    Ok(original)
}

/// `$retainKeys`: keys of the original not listed are cleared; every patch key must be listed.
fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<(), PatchError> {
    let Some(retain) = patch.remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(list) = retain else {
        return Err(smp_bad_request(ERR_RETAIN_KEYS));
    };
    let listed = |k: &str| list.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null()
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            || k.starts_with(SET_ELEMENT_ORDER)
        {
            continue;
        }
        if !listed(k) {
            return Err(smp_bad_request(ERR_RETAIN_KEYS));
        }
    }
    original.retain(|k, _| listed(k));
    Ok(())
}

/// `$setElementOrder/<field>`: merges that list now and orders the result by the given order.
fn merge_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    shape: Shape,
) -> Result<(), PatchError> {
    let order_keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    for order_key in order_keys {
        let Some(order_value) = patch.remove(&order_key) else {
            continue;
        };
        let Value::Array(order) = order_value else {
            return Err(err_bad_arg_type("[]interface {}", &order_value));
        };
        let field = extract_key(&order_key, SET_ELEMENT_ORDER, ERR_SET_ELEMENT_ORDER)?;
        let original_list = match original.get(&field) {
            Some(Value::Array(items)) => Some(items.clone()),
            Some(other) => return Err(err_bad_arg_type("[]interface {}", other)),
            None => None,
        };
        let patch_list = match patch.get(&field) {
            Some(Value::Array(items)) => Some(items.clone()),
            Some(other) => return Err(err_bad_arg_type("[]interface {}", other)),
            None => None,
        };
        let (field_strategy, field_shape) = shape.lookup(&field);
        let merge_key = match field_strategy {
            Strategy::Merge(k) => k,
            _ => None,
        };
        validate_patch_with_set_order(patch_list.as_deref().unwrap_or(&[]), &order, merge_key)?;
        let original_items = original_list.clone().unwrap_or_default();
        let patch_items = patch_list.clone().unwrap_or_default();
        let merged = match (original_list, patch_list) {
            (Some(o), None) => o,
            (None, Some(p)) => p,
            (Some(o), Some(p)) => match field_strategy {
                Strategy::Merge(k) => merge_slice(o, p, field_shape, k, false)?,
                _ => p,
            },
            (None, None) => continue,
        };
        let (in_order, server_only) = partition(&merged, &order, merge_key)?;
        let kind = slice_element_kind(&[&original_items, &patch_items])?;
        let result = normalize_element_order(
            in_order,
            server_only,
            &order,
            &original_items,
            merge_key,
            kind == ElemKind::Map,
        )?;
        original.insert(field.clone(), clean(Value::Array(result)));
        patch.remove(&field);
    }
    Ok(())
}

fn validate_patch_with_set_order(
    patch_list: &[Value],
    order: &[Value],
    merge_key: Option<&str>,
) -> Result<(), PatchError> {
    if order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let non_delete: Vec<&Value> = match merge_key {
        Some(_) => {
            let mut kept = Vec::new();
            for item in patch_list {
                let Value::Object(m) = item else {
                    return Err(err_bad_arg_type("map[string]interface {}", item));
                };
                if m.get(DIRECTIVE_MARKER).and_then(Value::as_str) != Some("delete") {
                    kept.push(item);
                }
            }
            kept
        }
        None => patch_list.iter().collect(),
    };
    let (mut pi, mut oi) = (0, 0);
    while pi < non_delete.len() && oi < order.len() {
        if non_delete[pi]
            .as_object()
            .is_some_and(|m| m.contains_key(DIRECTIVE_MARKER))
        {
            pi += 1;
            continue;
        }
        if merge_key_value_equal(non_delete[pi], &order[oi], merge_key)? {
            pi += 1;
        }
        oi += 1;
    }
    if pi < non_delete.len() && oi >= order.len() {
        return Err(PatchError::Internal(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER} list:\n{}\n",
            go_fmt_v(&Value::Array(patch_list.to_vec())),
            go_fmt_v(&Value::Array(order.to_vec()))
        )));
    }
    Ok(())
}

fn merge_key_value_equal(
    left: &Value,
    right: &Value,
    merge_key: Option<&str>,
) -> Result<bool, PatchError> {
    let Some(key) = merge_key else {
        return Ok(left == right);
    };
    let l = left
        .as_object()
        .ok_or_else(|| err_bad_arg_type("map[string]interface {}", left))?;
    let r = right
        .as_object()
        .ok_or_else(|| err_bad_arg_type("map[string]interface {}", right))?;
    let lv = l.get(key).ok_or_else(|| err_no_merge_key(l, key))?;
    let rv = r.get(key).ok_or_else(|| err_no_merge_key(r, key))?;
    Ok(lv == rv)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ElemKind {
    Map,
    Scalar(&'static str),
}

/// `sliceElementType`: all elements of the lists must share one type; the first may not be a
/// list (later lists fail the same-type check, as upstream).
fn slice_element_kind(lists: &[&[Value]]) -> Result<ElemKind, PatchError> {
    let mut kind: Option<ElemKind> = None;
    for list in lists {
        for v in list.iter() {
            let this = match v {
                Value::Array(_) if kind.is_none() => {
                    return Err(PatchError::Unprocessable(
                        "lists of lists are not supported".to_string(),
                    ))
                }
                Value::Array(_) => ElemKind::Scalar("[]interface {}"),
                Value::Object(_) => ElemKind::Map,
                other => ElemKind::Scalar(go_type_name(other)),
            };
            match kind {
                None => kind = Some(this),
                Some(k) if k != this => {
                    let shown: Vec<String> = lists
                        .iter()
                        .map(|l| go_fmt_v(&Value::Array(l.to_vec())))
                        .collect();
                    return Err(PatchError::Internal(format!(
                        "list element types are not identical: [{}]",
                        shown.join(" ")
                    )));
                }
                Some(_) => {}
            }
        }
    }
    kind.ok_or_else(|| PatchError::Internal("no elements in any of the given slices".to_string()))
}

fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    elem_shape: Shape,
    merge_key: Option<&'static str>,
    is_delete_list: bool,
) -> Result<Vec<Value>, PatchError> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = slice_element_kind(&[&original, &patch])?;
    let (original, patch, merged) = if kind != ElemKind::Map {
        if is_delete_list {
            return Ok(original
                .into_iter()
                .filter(|v| !patch.contains(v))
                .collect());
        }
        let mut merged: Vec<Value> = Vec::new();
        for v in original.iter().chain(patch.iter()) {
            if !merged.contains(v) {
                merged.push(v.clone());
            }
        }
        (original, patch, merged)
    } else {
        let Some(key) = merge_key else {
            return Err(PatchError::Internal(
                "cannot merge lists without merge key for type string".to_string(),
            ));
        };
        let (original, patch) = merge_slice_special_elements(original, patch, key)?;
        let merged =
            merge_slice_without_special_elements(original.clone(), &patch, key, elem_shape)?;
        (original, patch, merged)
    };
    let key = if kind == ElemKind::Map {
        merge_key
    } else {
        None
    };
    let (patch_items, server_only) = partition(&merged, &patch, key)?;
    normalize_element_order(
        patch_items,
        server_only,
        &patch,
        &original,
        key,
        kind == ElemKind::Map,
    )
}

/// Handles `$patch` items of a merging list: `delete` removes matching entries, `replace`
/// makes the rest of the patch list the whole list.
fn merge_slice_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut plain = Vec::new();
    let mut replace = false;
    for item in patch {
        let Value::Object(m) = &item else {
            return Err(err_bad_arg_type("map[string]interface {}", &item));
        };
        match m.get(DIRECTIVE_MARKER) {
            None => plain.push(item),
            Some(Value::String(d)) if d == "delete" => {
                let value = m
                    .get(merge_key)
                    .ok_or_else(|| err_no_merge_key(m, merge_key))?;
                original.retain(|o| o.as_object().and_then(|om| om.get(merge_key)) != Some(value));
            }
            Some(Value::String(d)) if d == "replace" => replace = true,
            Some(Value::String(d)) if d == "merge" => {
                return Err(PatchError::Internal(
                    "merging lists cannot yet be specified in the patch".to_string(),
                ))
            }
            Some(other) => return Err(err_bad_patch_type(other, m)),
        }
    }
    if replace {
        Ok((plain.into_iter().map(clean).collect(), Vec::new()))
    } else {
        Ok((original, plain))
    }
}

fn merge_slice_without_special_elements(
    mut original: Vec<Value>,
    patch: &[Value],
    merge_key: &str,
    elem_shape: Shape,
) -> Result<Vec<Value>, PatchError> {
    for item in patch {
        let Value::Object(p) = item else {
            return Err(err_bad_arg_type("map[string]interface {}", item));
        };
        let value = p
            .get(merge_key)
            .ok_or_else(|| err_no_merge_key(p, merge_key))?;
        let found = original
            .iter()
            .position(|o| o.as_object().and_then(|om| om.get(merge_key)) == Some(value));
        match found {
            Some(idx) => {
                let current = match std::mem::take(&mut original[idx]) {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                original[idx] = Value::Object(merge_map(current, p.clone(), elem_shape)?);
            }
            None => original.push(clean(item.clone())),
        }
    }
    Ok(original)
}

/// Splits `merged` into the items present in `by` and the server-only rest.
fn partition(
    merged: &[Value],
    by: &[Value],
    merge_key: Option<&str>,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut present = Vec::new();
    let mut server_only = Vec::new();
    for item in merged {
        let found = match merge_key {
            None => by.contains(item),
            Some(key) => {
                let m = item
                    .as_object()
                    .ok_or_else(|| err_bad_arg_type("map[string]interface {}", item))?;
                let value = m.get(key).ok_or_else(|| err_no_merge_key(m, key))?;
                by.iter()
                    .any(|b| b.as_object().and_then(|bm| bm.get(key)) == Some(value))
            }
        };
        if found {
            present.push(item.clone());
        } else {
            server_only.push(item.clone());
        }
    }
    Ok((present, server_only))
}

fn index_in(list: &[Value], item: &Value, merge_key: Option<&str>) -> Option<usize> {
    match merge_key {
        None => list.iter().position(|v| v == item),
        Some(key) => {
            let wanted = item.as_object().and_then(|m| m.get(key));
            list.iter()
                .position(|v| v.as_object().and_then(|m| m.get(key)) == wanted)
        }
    }
}

/// Sorts `to_sort` by the order of `order` (items marked `$patch: delete` go last).
fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: Option<&str>,
    maps: bool,
) -> Result<Vec<Value>, PatchError> {
    let mut to_delete = Vec::new();
    let mut to_sort = to_sort;
    if maps {
        if let Some(key) = merge_key {
            for item in to_sort.iter().chain(order.iter()) {
                let m = item
                    .as_object()
                    .ok_or_else(|| err_bad_arg_type("map[string]interface {}", item))?;
                if !m.contains_key(key) {
                    return Err(err_no_merge_key(m, key));
                }
            }
        }
        let (deletes, kept): (Vec<Value>, Vec<Value>) = to_sort
            .into_iter()
            .partition(|v| v.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some("delete"));
        to_delete = deletes;
        to_sort = kept;
    }
    to_sort.sort_by_key(|v| index_in(order, v, merge_key).unwrap_or(usize::MAX));
    to_sort.extend(to_delete);
    Ok(to_sort)
}

/// Orders a merged list: patch items in patch order, server-only items in their old order,
/// interleaved so each keeps its place relative to the old list where both are known.
fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: Option<&str>,
    maps: bool,
) -> Result<Vec<Value>, PatchError> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, maps)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, maps)?;
    let mut out = Vec::with_capacity(patch.len() + server_only.len());
    let (mut i, mut j) = (0, 0);
    while i < server_only.len() || j < patch.len() {
        if i >= server_only.len() {
            out.push(patch[j].clone());
            j += 1;
        } else if j >= patch.len() {
            out.push(server_only[i].clone());
            i += 1;
        } else {
            let left = index_in(server_order, &server_only[i], merge_key);
            let right = index_in(server_order, &patch[j], merge_key);
            match (left, right) {
                (Some(l), Some(r)) if l < r => {
                    out.push(server_only[i].clone());
                    i += 1;
                }
                _ => {
                    out.push(patch[j].clone());
                    j += 1;
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    /// [`strategic_merge_patch`] in place, as the cases read best: `target` changes only when
    /// the patch applies.
    fn smp(target: &mut Value, patch: &Value, group: &str, kind: &str) -> Result<(), PatchError> {
        *target = strategic_merge_patch(target.clone(), patch, group, kind)?;
        Ok(())
    }

    /// [`json_patch`] in place (see [`smp`]).
    fn jp(target: &mut Value, patch: &Value) -> Result<(), PatchError> {
        *target = json_patch(target.clone(), patch)?;
        Ok(())
    }

    fn cm() -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cm", "labels": {"l1": "x"}},
               "data": {"a": "1", "b": "2"}})
    }

    // ---- strategic merge patch: the Go types' tags, for every served kind ----

    /// Lists the hand-written table of old did not know: each merged by its Go tag's key.
    #[rstest]
    #[case::cron_job_containers("batch", "CronJob",
        json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}}}}}),
        json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "z"}]}}}}}}),
        "/spec/jobTemplate/spec/template/spec/containers",
        json!([{"name": "a", "image": "x"}, {"name": "b", "image": "z"}]))]
    #[case::deployment_conditions("apps", "Deployment",
        json!({"status": {"conditions": [{"type": "Available", "status": "True"}, {"type": "Progressing", "status": "True"}]}}),
        json!({"status": {"conditions": [{"type": "Available", "status": "False"}]}}),
        "/status/conditions",
        json!([{"type": "Available", "status": "False"}, {"type": "Progressing", "status": "True"}]))]
    #[case::csi_node_drivers("storage.k8s.io", "CSINode",
        json!({"spec": {"drivers": [{"name": "a.io", "nodeID": "1"}, {"name": "b.io", "nodeID": "2"}]}}),
        json!({"spec": {"drivers": [{"name": "b.io", "allocatable": {"count": 3}}]}}),
        "/spec/drivers",
        json!([{"name": "a.io", "nodeID": "1"}, {"name": "b.io", "nodeID": "2", "allocatable": {"count": 3}}]))]
    #[case::webhooks("admissionregistration.k8s.io", "ValidatingWebhookConfiguration",
        json!({"webhooks": [{"name": "a.io", "timeoutSeconds": 1}, {"name": "b.io"}]}),
        json!({"webhooks": [{"name": "a.io", "timeoutSeconds": 5}]}),
        "/webhooks",
        json!([{"name": "a.io", "timeoutSeconds": 5}, {"name": "b.io"}]))]
    #[case::untagged_list_replaced("rbac.authorization.k8s.io", "ClusterRole",
        json!({"rules": [{"verbs": ["get"]}, {"verbs": ["list"]}]}),
        json!({"rules": [{"verbs": ["watch"]}]}),
        "/rules",
        json!([{"verbs": ["watch"]}]))]
    fn lists_merge_as_their_go_tags_say(
        #[case] group: &str,
        #[case] kind: &str,
        #[case] mut target: Value,
        #[case] patch: Value,
        #[case] at: &str,
        #[case] expected: Value,
    ) {
        smp(&mut target, &patch, group, kind).unwrap();
        assert_eq!(target.pointer(at), Some(&expected), "{target}");
    }

    #[test]
    fn a_custom_kind_merges_only_its_metadata_lists() {
        let mut target = json!({"metadata": {"finalizers": ["a"]}, "spec": {"items": [1, 2]}});
        smp(
            &mut target,
            &json!({"metadata": {"finalizers": ["b"]}, "spec": {"items": [3]}}),
            "example.com",
            "Widget",
        )
        .unwrap();
        assert_eq!(target["metadata"]["finalizers"], json!(["b", "a"]));
        assert_eq!(target["spec"]["items"], json!([3]));
    }

    // ---- merge patch ----

    #[test]
    fn merge_patch_adds_replaces_and_deletes() {
        let mut obj = cm();
        merge_patch(
            &mut obj,
            &json!({"data": {"a": "10", "b": null, "c": "3"}, "metadata": {"labels": {"l2": "y"}}}),
        )
        .unwrap();
        assert_eq!(obj["data"], json!({"a": "10", "c": "3"}));
        assert_eq!(obj["metadata"]["labels"], json!({"l1": "x", "l2": "y"}));
        merge_patch(&mut obj, &json!({"data": null})).unwrap();
        assert!(obj.get("data").is_none());
    }

    #[test]
    fn merge_patch_replaces_lists_and_prunes_nulls_in_new_values() {
        let mut obj = json!({"spec": {"list": [1, 2], "s": "x"}});
        merge_patch(
            &mut obj,
            &json!({"spec": {"list": [{"a": null, "b": 1}], "s": {"n": null, "k": 1}, "new": {"x": null}}}),
        )
        .unwrap();
        assert_eq!(
            obj,
            json!({"spec": {"list": [{"b": 1}], "s": {"k": 1}, "new": {}}})
        );
    }

    #[rstest]
    #[case::array(json!([1, 2, 3]), 400)]
    #[case::null(json!(null), 400)]
    #[case::string(json!("x"), 400)]
    fn merge_patch_rejects_non_objects(#[case] patch: Value, #[case] code: u16) {
        let mut obj = cm();
        let err = merge_patch(&mut obj, &patch).unwrap_err();
        assert_eq!(err.code(), code);
        assert_eq!(err.reason(), "BadRequest");
        assert_eq!(obj, cm());
    }

    // ---- JSON patch ----

    #[test]
    fn json_patch_applies_ops_in_order() {
        let mut obj = cm();
        jp(
            &mut obj,
            &json!([
                {"op": "test", "path": "/data/a", "value": "1"},
                {"op": "replace", "path": "/data/a", "value": "10"},
                {"op": "add", "path": "/data/c", "value": "3"},
                {"op": "remove", "path": "/data/b"},
                {"op": "add", "path": "/metadata/finalizers", "value": ["a.io/x"]},
                {"op": "add", "path": "/metadata/finalizers/-", "value": "b.io/y"},
                {"op": "add", "path": "/metadata/finalizers/0", "value": "c.io/z"},
                {"op": "copy", "from": "/data/a", "path": "/data/copied"},
                {"op": "move", "from": "/data/c", "path": "/data/moved"}
            ]),
        )
        .unwrap();
        assert_eq!(
            obj["data"],
            json!({"a": "10", "copied": "10", "moved": "3"})
        );
        assert_eq!(
            obj["metadata"]["finalizers"],
            json!(["c.io/z", "a.io/x", "b.io/y"])
        );
    }

    #[rstest]
    #[case::failing_test(json!([{"op": "test", "path": "/data/a", "value": "wrong"}, {"op": "replace", "path": "/data/a", "value": "never"}]), 422, "testing value /data/a failed: test failed")]
    #[case::remove_missing(json!([{"op": "remove", "path": "/data/nonexistent"}]), 422, "error in remove for path: '/data/nonexistent': Unable to remove nonexistent key: nonexistent: missing value")]
    #[case::unknown_op(json!([{"op": "frobnicate", "path": "/data/a"}]), 422, "Unexpected kind: frobnicate")]
    #[case::missing_op(json!([{"path": "/data/a"}]), 422, "Unexpected kind: unknown")]
    #[case::missing_parent(json!([{"op": "add", "path": "/nope/x", "value": 1}]), 422, "add operation does not apply: doc is missing path: \"/nope/x\": missing value")]
    #[case::bad_index(json!([{"op": "add", "path": "/metadata/labels/x", "value": 1}, {"op": "add", "path": "/list/5", "value": 1}]), 422, "add operation does not apply: doc is missing path: \"/list/5\": missing value")]
    #[case::index_out_of_range(json!([{"op": "add", "path": "/arr/5", "value": 1}]), 422, "error in add for path: '/arr/5': Unable to access invalid index: 5: invalid index referenced")]
    #[case::not_index(json!([{"op": "add", "path": "/arr/x", "value": 1}]), 422, "error in add for path: '/arr/x': value was not a proper array index: 'x': strconv.Atoi: parsing \"x\": invalid syntax")]
    #[case::root_path_scalar(json!([{"op": "replace", "path": "", "value": 1}]), 422, "replace operation value must be object or array: %!w(<nil>)")]
    #[case::no_slash(json!([{"op": "remove", "path": "data"}]), 422, "remove operation does not apply: doc is missing path: \"data\": missing value")]
    #[case::negative_out_of_range(json!([{"op": "remove", "path": "/arr/-2"}]), 422, "error in remove for path: '/arr/-2': Unable to access invalid index: -2: invalid index referenced")]
    #[case::no_path(json!([{"op": "add", "value": 1}]), 422, "add operation failed to decode path: missing value")]
    #[case::not_array(json!({"op": "add", "path": "/data/z", "value": "1"}), 400, "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp")]
    #[case::op_not_object(json!([1]), 400, "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp")]
    #[case::op_wrong_type(json!([{"op": 1}]), 400, "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string")]
    fn json_patch_errors(#[case] patch: Value, #[case] code: u16, #[case] detail: &str) {
        let mut obj = cm();
        obj["arr"] = json!([1]);
        let err = jp(&mut obj, &patch).unwrap_err();
        assert_eq!(err.code(), code);
        match &err {
            PatchError::Unprocessable(d) => {
                assert_eq!(d, detail);
                assert_eq!(err.reason(), "Invalid");
                assert_eq!(
                    err.to_string(),
                    "the server rejected our request due to an error in our request"
                );
                assert!(err.causes().is_empty());
                assert_eq!(err.detail(), Some(detail));
                assert_eq!(err.to_status()["details"], json!({}));
                assert_eq!(
                    err.to_status()["message"],
                    "the server rejected our request due to an error in our request"
                );
            }
            PatchError::BadRequest(m) => assert_eq!(m, detail),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn json_patch_replace_of_missing_object_key_adds_it() {
        let mut obj = cm();
        jp(
            &mut obj,
            &json!([{"op": "replace", "path": "/data/nonexistent", "value": "x"}]),
        )
        .unwrap();
        assert_eq!(obj["data"]["nonexistent"], "x");
    }

    #[rstest]
    #[case::equal(json!({"a": 1}), json!({"a": 1}), true)]
    #[case::extra_expected_member(json!({"a": 1}), json!({"a": 1, "b": 2}), false)]
    #[case::null_member(json!({"a": null}), json!({"a": null}), true)]
    #[case::missing_expected_member(json!({"a": 1, "b": 2}), json!({"a": 1}), false)]
    #[case::int_vs_float(json!(1), json!(1.0), false)]
    #[case::array_len(json!([1]), json!([1, 2]), false)]
    #[case::type_mismatch(json!("1"), json!(1), false)]
    fn json_patch_test_equality(#[case] doc: Value, #[case] expected: Value, #[case] ok: bool) {
        let mut obj = json!({"v": doc});
        let res = jp(
            &mut obj,
            &json!([{"op": "test", "path": "/v", "value": expected}]),
        );
        assert_eq!(res.is_ok(), ok);
    }

    #[test]
    fn json_patch_test_of_missing_key_against_null_passes() {
        let mut obj = cm();
        jp(
            &mut obj,
            &json!([{"op": "test", "path": "/data/zz", "value": null}]),
        )
        .unwrap();
        assert!(jp(
            &mut obj,
            &json!([{"op": "test", "path": "/data/zz", "value": "x"}])
        )
        .is_err());
    }

    #[test]
    fn json_patch_escaped_tokens_and_negative_index() {
        let mut obj =
            json!({"metadata": {"annotations": {"a/b": "1", "c~d": "2"}}, "l": [1, 2, 3]});
        jp(
            &mut obj,
            &json!([
                {"op": "remove", "path": "/metadata/annotations/a~1b"},
                {"op": "replace", "path": "/metadata/annotations/c~0d", "value": "3"},
                {"op": "remove", "path": "/l/-1"},
                {"op": "add", "path": "/l/-1", "value": 9}
            ]),
        )
        .unwrap();
        assert_eq!(obj["metadata"]["annotations"], json!({"c~d": "3"}));
        assert_eq!(obj["l"], json!([1, 2, 9]));
    }

    #[test]
    fn json_patch_root_replace_and_test() {
        let mut obj = cm();
        jp(&mut obj, &json!([{"op": "test", "path": "", "value": cm()}, {"op": "replace", "path": "", "value": {"kind": "X"}}])).unwrap();
        assert_eq!(obj, json!({"kind": "X"}));
        assert!(jp(
            &mut obj,
            &json!([{"op": "test", "path": "", "value": {"kind": "Y"}}])
        )
        .is_err());
        let mut arr = json!({"l": [1, 2, 3]});
        jp(&mut arr, &json!([{"op": "replace", "path": "/l/-1", "value": 9}, {"op": "test", "path": "/l/-3", "value": 1}])).unwrap();
        assert_eq!(arr["l"], json!([1, 2, 9]));
    }

    #[test]
    fn json_patch_result_must_stay_an_object() {
        let mut obj = cm();
        let err = jp(
            &mut obj,
            &json!([{"op": "replace", "path": "", "value": [1]}]),
        )
        .unwrap_err();
        assert_eq!((err.code(), err.reason()), (422, "Invalid"));
        assert_eq!(err.causes()[0].field, "patch");
        assert!(
            err.to_string()
                .starts_with(" \"\" is invalid: patch: Invalid value: \"[1]\""),
            "{err}"
        );
        assert_eq!(obj, cm());
    }

    #[test]
    fn json_patch_too_many_ops() {
        let ops: Vec<Value> = (0..=MAX_JSON_PATCH_OPERATIONS)
            .map(|_| json!({"op": "test", "path": "/a", "value": null}))
            .collect();
        let err = jp(&mut json!({}), &Value::Array(ops)).unwrap_err();
        assert_eq!(err.code(), 413);
        assert_eq!(err.reason(), "RequestEntityTooLarge");
    }

    // ---- strategic merge patch ----

    fn pod() -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [
                    {"name": "a", "image": "busybox:1", "env": [{"name": "E1", "value": "1"}]},
                    {"name": "b", "image": "busybox:1"}],
                    "tolerations": [{"key": "t1", "operator": "Exists"}]}})
    }

    fn names(list: &Value, key: &str) -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|v| go_fmt_v(&v[key]))
            .collect()
    }

    #[test]
    fn smp_merges_containers_by_name() {
        let mut obj = pod();
        smp(
            &mut obj,
            &json!({"spec": {"containers": [{"name": "a", "image": "busybox:2"}]}}),
            "",
            "Pod",
        )
        .unwrap();
        let cs = &obj["spec"]["containers"];
        assert_eq!(names(cs, "name"), ["a", "b"]);
        assert_eq!(names(cs, "image"), ["busybox:2", "busybox:1"]);
        assert_eq!(names(&cs[0]["env"], "name"), ["E1"]);
    }

    #[test]
    fn smp_new_items_come_first_and_delete_directive_removes() {
        let mut dep = json!({"spec": {"template": {"spec": {"containers": pod()["spec"]["containers"].clone()}}}});
        smp(
            &mut dep,
            &json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "env": [{"name": "E2", "value": "2"}]}]}}}}),
            "apps",
            "Deployment",
        )
        .unwrap();
        let cs = &dep["spec"]["template"]["spec"]["containers"];
        assert_eq!(names(&cs[0]["env"], "name"), ["E2", "E1"]);
        smp(
            &mut dep,
            &json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "env": [{"name": "E1", "$patch": "delete"}]}]}}}}),
            "apps",
            "Deployment",
        )
        .unwrap();
        let cs = &dep["spec"]["template"]["spec"]["containers"];
        assert_eq!(names(&cs[0]["env"], "name"), ["E2"]);
        smp(
            &mut dep,
            &json!({"spec": {"template": {"spec": {"containers": [{"name": "b", "$patch": "delete"}]}}}}),
            "apps",
            "Deployment",
        )
        .unwrap();
        assert_eq!(
            names(&dep["spec"]["template"]["spec"]["containers"], "name"),
            ["a"]
        );
        for port in [80, 81] {
            smp(
                &mut dep,
                &json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": port}]}]}}}}),
                "apps",
                "Deployment",
            )
            .unwrap();
        }
        assert_eq!(
            names(
                &dep["spec"]["template"]["spec"]["containers"][0]["ports"],
                "containerPort"
            ),
            ["81", "80"]
        );
    }

    #[test]
    fn smp_owner_references_merge_by_uid_and_keep_place() {
        let mut obj = cm();
        let owner = |name: &str, uid: &str| json!({"apiVersion": "v1", "kind": "X", "name": name, "uid": uid});
        for (n, u) in [("nc-a", "a"), ("nc-b", "b")] {
            smp(
                &mut obj,
                &json!({"metadata": {"ownerReferences": [owner(n, u)]}}),
                "",
                "ConfigMap",
            )
            .unwrap();
        }
        assert_eq!(
            names(&obj["metadata"]["ownerReferences"], "name"),
            ["nc-b", "nc-a"]
        );
        let mut again = owner("nc-a", "a");
        again["controller"] = json!(false);
        smp(
            &mut obj,
            &json!({"metadata": {"ownerReferences": [again]}}),
            "",
            "ConfigMap",
        )
        .unwrap();
        let refs = &obj["metadata"]["ownerReferences"];
        assert_eq!(names(refs, "name"), ["nc-b", "nc-a"]);
        assert_eq!(refs[1]["controller"], json!(false));
    }

    #[test]
    fn smp_finalizers_union_and_delete_from_primitive_list() {
        let mut node = json!({"metadata": {"name": "n", "finalizers": ["example.com/other"]}});
        smp(
            &mut node,
            &json!({"metadata": {"finalizers": ["karpenter.sh/termination"]}}),
            "",
            "Node",
        )
        .unwrap();
        assert_eq!(
            node["metadata"]["finalizers"],
            json!(["karpenter.sh/termination", "example.com/other"])
        );
        smp(
            &mut node,
            &json!({"metadata": {"finalizers": ["example.com/other"]}}),
            "",
            "Node",
        )
        .unwrap();
        assert_eq!(
            node["metadata"]["finalizers"],
            json!(["karpenter.sh/termination", "example.com/other"])
        );
        smp(
            &mut node,
            &json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["karpenter.sh/termination"]}}),
            "",
            "Node",
        )
        .unwrap();
        assert_eq!(node["metadata"]["finalizers"], json!(["example.com/other"]));
    }

    #[test]
    fn smp_lists_without_strategy_are_replaced() {
        let mut node = json!({"spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
                              "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        smp(
            &mut node,
            &json!({"spec": {"taints": [{"key": "example.com/startup", "effect": "NoSchedule"}]},
                    "status": {"conditions": [{"type": "MemoryPressure", "status": "False"}]}}),
            "",
            "Node",
        )
        .unwrap();
        assert_eq!(
            names(&node["spec"]["taints"], "key"),
            ["example.com/startup"]
        );
        assert_eq!(
            names(&node["status"]["conditions"], "type"),
            ["MemoryPressure", "Ready"]
        );
        smp(&mut node, &json!({"spec": {"taints": null}}), "", "Node").unwrap();
        assert!(node["spec"].get("taints").is_none());
        let mut p = pod();
        smp(
            &mut p,
            &json!({"spec": {"tolerations": [{"key": "t2"}]}}),
            "",
            "Pod",
        )
        .unwrap();
        assert_eq!(names(&p["spec"]["tolerations"], "key"), ["t2"]);
    }

    #[test]
    fn smp_list_replace_directive_and_map_directives() {
        let mut p = pod();
        smp(
            &mut p,
            &json!({"spec": {"containers": [{"name": "z", "image": "i"}, {"$patch": "replace"}]}}),
            "",
            "Pod",
        )
        .unwrap();
        assert_eq!(names(&p["spec"]["containers"], "name"), ["z"]);
        let mut c = cm();
        smp(
            &mut c,
            &json!({"data": {"$patch": "replace", "only": "1"}}),
            "",
            "ConfigMap",
        )
        .unwrap();
        assert_eq!(c["data"], json!({"only": "1"}));
        smp(
            &mut c,
            &json!({"data": {"$patch": "delete"}}),
            "",
            "ConfigMap",
        )
        .unwrap();
        assert_eq!(c["data"], json!({}));
        let err = smp(
            &mut c,
            &json!({"data": {"$patch": "merge"}}),
            "",
            "ConfigMap",
        )
        .unwrap_err();
        assert_eq!(err.code(), 500);
        assert_eq!(
            err.to_string(),
            "unknown patch type: merge in map: map[$patch:merge]"
        );
    }

    #[test]
    fn smp_set_element_order_orders_the_result() {
        let mut p = pod();
        smp(
            &mut p,
            &json!({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "c"}, {"name": "a"}],
                             "containers": [{"name": "c", "image": "new"}]}}),
            "",
            "Pod",
        )
        .unwrap();
        assert_eq!(names(&p["spec"]["containers"], "name"), ["b", "c", "a"]);
        let mut n = json!({"metadata": {"finalizers": ["x", "y"]}});
        smp(
            &mut n,
            &json!({"metadata": {"$setElementOrder/finalizers": ["y", "x"]}}),
            "",
            "Node",
        )
        .unwrap();
        assert_eq!(n["metadata"]["finalizers"], json!(["y", "x"]));
    }

    #[test]
    fn smp_retain_keys_clears_unlisted_fields() {
        let mut d = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
        smp(
            &mut d,
            &json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
            "apps",
            "Deployment",
        )
        .unwrap();
        assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
        let err = smp(
            &mut d,
            &json!({"spec": {"strategy": {"$retainKeys": ["type"], "other": 1}}}),
            "apps",
            "Deployment",
        )
        .unwrap_err();
        assert_eq!(
            (err.code(), err.to_string().as_str()),
            (400, "invalid patch format of retainKeys")
        );
    }

    #[test]
    fn smp_new_values_are_cleaned_of_directives_and_nulls() {
        let mut c = cm();
        smp(
            &mut c,
            &json!({"spec": {"containers": [{"name": "x", "$patch": "delete", "gone": null}]}}),
            "",
            "ConfigMap",
        )
        .unwrap();
        assert_eq!(c["spec"], json!({"containers": [{"name": "x"}]}));
    }

    #[rstest]
    #[case::no_merge_key(json!({"spec": {"containers": [{"image": "x"}]}}), 500, "map: map[image:x] does not contain declared merge key: name")]
    #[case::list_after_maps(json!({"spec": {"containers": [[1]]}}), 500, "list element types are not identical: [[map[env:[map[name:E1 value:1]] image:busybox:1 name:a] map[image:busybox:1 name:b]] [[1]]]")]
    #[case::mixed_types(json!({"spec": {"containers": ["x"]}}), 500, "list element types are not identical: [[map[env:[map[name:E1 value:1]] image:busybox:1 name:a] map[image:busybox:1 name:b]] [x]]")]
    #[case::bad_primitive_prefix(json!({"metadata": {"$deleteFromPrimitiveListfinalizers": ["x"]}}), 400, "invalid patch format of primitive list")]
    #[case::bad_set_order_prefix(json!({"spec": {"$setElementOrderX": []}}), 400, "invalid patch format of setElementOrder list")]
    #[case::set_order_not_list(json!({"spec": {"$setElementOrder/containers": "x"}}), 500, "expected a []interface {}, but received a string")]
    #[case::set_order_mismatch(json!({"spec": {"$setElementOrder/containers": [{"name": "a"}], "containers": [{"name": "b"}]}}), 500, "The order in patch list:\n[map[name:b]]\n doesn't match $setElementOrder list:\n[map[name:a]]\n")]
    #[case::merge_in_list(json!({"spec": {"containers": [{"name": "a", "$patch": "merge"}]}}), 500, "merging lists cannot yet be specified in the patch")]
    #[case::bad_list_directive(json!({"spec": {"containers": [{"name": "a", "$patch": 7}]}}), 500, "unknown patch type: %!s(int64=7) in map: map[$patch:7 name:a]")]
    #[case::not_object(json!([1]), 400, "json: cannot unmarshal array into Go value of type map[string]interface {}")]
    fn smp_errors(#[case] patch: Value, #[case] code: u16, #[case] message: &str) {
        let mut p = pod();
        let err = smp(&mut p, &patch, "", "Pod").unwrap_err();
        assert_eq!(err.code(), code, "{err:?}");
        assert_eq!(err.to_string(), message);
    }

    #[test]
    fn smp_list_of_lists_is_422() {
        let mut node = json!({"status": {"conditions": []}});
        let err = smp(
            &mut node,
            &json!({"status": {"conditions": [[1]]}}),
            "",
            "Node",
        )
        .unwrap_err();
        assert_eq!(err.code(), 422);
        assert_eq!(err.detail(), Some("lists of lists are not supported"));
    }

    #[test]
    fn smp_refused_for_custom_resources() {
        assert!(!strategic_merge_supported(true));
        let err = check_patch_type("application/strategic-merge-patch+json", true).unwrap_err();
        assert_eq!(err.code(), 415);
        assert_eq!(err.reason(), "UnsupportedMediaType");
        assert_eq!(
            err.to_string(),
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        );
        assert_eq!(
            check_patch_type(
                "application/strategic-merge-patch+json; charset=utf-8",
                false
            ),
            Ok(PatchType::Strategic)
        );
        assert_eq!(
            check_patch_type("text/plain", false).unwrap_err().code(),
            415
        );
        let err = apply_patch(
            PatchType::Strategic,
            json!({"spec": {"color": "red"}}),
            &json!({"spec": {"color": "blue"}}),
            "example.com",
            "Widget",
            true,
        )
        .unwrap_err();
        assert_eq!(err.code(), 415);
    }

    #[rstest]
    #[case::merge_malformed(PatchType::Merge, b"{bad".as_slice(), 400)]
    #[case::merge_array(PatchType::Merge, b"[1,2,3]".as_slice(), 400)]
    #[case::json_object(PatchType::Json, b"{}".as_slice(), 400)]
    #[case::json_malformed(PatchType::Json, b"[{".as_slice(), 400)]
    #[case::smp_string(PatchType::Strategic, b"\"x\"".as_slice(), 400)]
    #[case::empty(PatchType::Merge, b"".as_slice(), 400)]
    fn decode_rejects_malformed_bodies(
        #[case] t: PatchType,
        #[case] body: &[u8],
        #[case] code: u16,
    ) {
        let err = decode_patch(t, body).unwrap_err();
        assert_eq!(err.code(), code);
        assert_eq!(err.reason(), "BadRequest");
    }

    #[test]
    fn decode_errors_use_go_json_messages() {
        assert_eq!(
            decode_patch(PatchType::Merge, b"{bad").unwrap_err().to_string(),
            "error decoding patch: invalid character 'b' looking for beginning of object key string"
        );
        assert_eq!(
            decode_patch(PatchType::Strategic, b"")
                .unwrap_err()
                .to_string(),
            "unexpected end of JSON input"
        );
    }

    #[test]
    fn decode_accepts_good_bodies() {
        assert_eq!(
            decode_patch(PatchType::Merge, br#"{"a":1}"#).unwrap(),
            json!({"a": 1})
        );
        assert!(decode_patch(PatchType::Json, br#"[{"op":"add","path":"/a","value":1}]"#).is_ok());
        assert_eq!(
            PatchType::from_content_type("application/merge-patch+json"),
            Some(PatchType::Merge)
        );
        assert_eq!(accepted_patch_types(false).len(), 4);
    }

    #[test]
    fn garbage_never_panics() {
        let garbage = [
            json!(null),
            json!(1),
            json!("s"),
            json!([null, 1, "x", [], {}]),
            json!({"$patch": null}),
            json!({"spec": {"containers": [null]}}),
            json!({"spec": {"containers": {"$patch": "delete"}}}),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": "x", "$retainKeys": 5}}),
            json!({"spec": {"$setElementOrder/containers": [null, 1]}}),
            json!({"spec": {"$setElementOrder/tolerations": [], "tolerations": []}}),
            json!([{"op": "move", "from": "/spec", "path": "/spec/containers/0"}]),
            json!([{"op": "copy", "from": "/x/y", "path": "/a"}, {"op": "add", "path": "/spec/containers/-1/x", "value": 1}]),
            json!([{"op": "replace", "path": "/spec/containers/99", "value": 1}, {"op": "remove", "path": "/spec/containers/-9"}]),
        ];
        for patch in &garbage {
            for target in [pod(), json!(null), json!([1])] {
                let mut t = target.clone();
                let _ = smp(&mut t, patch, "", "Pod");
                let mut t = target.clone();
                let _ = merge_patch(&mut t, patch);
                let mut t = target.clone();
                let _ = jp(&mut t, patch);
            }
        }
    }
}
