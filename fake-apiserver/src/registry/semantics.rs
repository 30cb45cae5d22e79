//! The object lifecycle rules of the API server: what a create, an update (main endpoint or
//! `/status`) and a delete do to an object, given what is stored.
//!
//! These functions are pure: they take the current object and the request and return the next
//! state for the store to write (see [`crate::store::Mutation`]). The rules follow the real
//! server's `rest.BeforeCreate`/`BeforeUpdate`, the generic registry store and the per-kind
//! strategies, for the kinds this server serves.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::error::{ApiError, StatusCause};
use crate::registry::{crd, generation};
use crate::resource::ResourceInfo;
use crate::store::value_eq::{equal, maps_equal_where};
use crate::store::{resource_version_of, Mutation};

/// Facts about the request the rules need besides the objects.
#[derive(Debug, Clone)]
pub struct WriteContext<'a> {
    /// The served resource.
    pub info: &'a ResourceInfo,
    /// The server's current time, RFC 3339 with second precision.
    pub now: &'a str,
    /// The field manager recorded in `managedFields`.
    pub manager: &'a str,
    /// Warnings for the client (`Warning` headers), collected while the rules run.
    pub warnings: std::cell::RefCell<Vec<String>>,
    /// A server-side apply: the written object already carries its `managedFields`.
    pub applied: bool,
    /// What the store kept with the stored version and what this write derives for the next
    /// (see [`VersionMemos`]).
    pub memos: VersionMemos,
}

/// What the store keeps beside a stored version's parse for the next write to that object
/// (a [`crate::store::Derived`]): work derived from exactly those bytes that the next write
/// would otherwise do again.
#[derive(Debug, Default)]
pub struct VersionMemo {
    /// The decoded field sets of its `managedFields` ([`crate::apply::managed::Decoded`]).
    pub managed: Option<Arc<crate::apply::managed::Decoded>>,
    /// The stored `managedFields` are exactly those the sets were encoded to: the field
    /// manager's object was stored as it left it ([`crate::store::Decision::encoded`]), so a
    /// later write need not check the sets against the stored list.
    pub managed_exact: bool,
    /// For a pod: its spec passed `ValidatePodSpec` and the pod-only spec checks for its name
    /// (set when a create or spec write passed validation, carried over by writes that leave the
    /// spec as it was). Validation is a function of the spec and the name alone, so an update
    /// that leaves both unchanged would only find the same nothing again.
    pub pod_spec_valid: bool,
    /// It was written through the decode of its body: every part of it decodes cleanly (what
    /// the body held was checked, what the server's rules added is of the right types), so a
    /// later body's parts shared with it need no typed check
    /// ([`crate::http::typed_shape::Shape::check_against`]). A version loaded from saved
    /// state, or written by a path that did not decode, is not known so. (What a write copies
    /// from the stored version, a status write's spec, is taken as decodable too: a real
    /// server copies it from its own decode of the stored object, which is what a version
    /// written through the API holds.)
    pub decoded: bool,
    /// For a pod: its spec is what decoding makes of it, so decoding it again would accept it
    /// and change nothing (its defaults are filled, its quantities parse). Set when the spec
    /// was stored as this write's decode left it (the decode's defaulting is idempotent),
    /// whether the decode ran or was skipped for a spec shared with a version known so; a
    /// spec that a rule changed after the decode (admission's service account volume on a
    /// create, a webhook's container) is not, and the next write decodes it in full, as a
    /// real server decodes every write.
    pub pod_spec_decoded: bool,
    /// Its `metadata.labels` passed `ValidateLabels`: the write that stored this version
    /// checked them (or took them unchanged from a version known so) and stored them as they
    /// were checked. The check is a function of the map alone, so a later write that leaves the
    /// map as it is would only find the same nothing again.
    pub labels_valid: bool,
    /// Its `metadata.annotations` passed `ValidateAnnotations` (as `labels_valid`).
    pub annotations_valid: bool,
}

impl VersionMemo {
    /// The memo among what the store kept with a version (see [`crate::store::Derived`]).
    pub fn of(derived: Option<&crate::store::Derived>) -> Option<Arc<VersionMemo>> {
        derived
            .cloned()
            .and_then(|d| d.downcast::<VersionMemo>().ok())
    }
}

/// The [`VersionMemo`]s a write hands between the store and the rules: the stored version's,
/// set before the write's rules run, and what the rules derived for the version they write.
#[derive(Debug, Clone, Default)]
pub struct VersionMemos {
    /// The stored version's, when the store kept one.
    pub stored: std::cell::RefCell<Option<Arc<VersionMemo>>>,
    /// The written object's managed field sets, when tracked.
    pub written: std::cell::RefCell<Option<Arc<crate::apply::managed::Decoded>>>,
    /// Whether the written pod's spec is known valid (see [`VersionMemo::pod_spec_valid`]).
    written_pod_spec_valid: std::cell::Cell<bool>,
    /// Whether this write decoded its body (see [`VersionMemo::decoded`]).
    body_decoded: std::cell::Cell<bool>,
    /// A pod's spec as this write's decode left it (see [`VersionMemo::pod_spec_decoded`]).
    decoded_pod_spec: std::cell::RefCell<Option<Value>>,
    /// Whether the object about to be written is Go-encoded already (see
    /// [`crate::store::Decision::encoded`]).
    written_encoded: std::cell::Cell<bool>,
    /// The labels and annotations this write's metadata validation passed (sharing clones),
    /// until the written object is compared with them (see [`VersionMemo::labels_valid`]).
    validated_maps: std::cell::RefCell<Option<[Option<Value>; 2]>>,
}

/// Whether two objects' member is the same: both absent, or both there and equal.
fn same_member(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => equal(a, b),
        _ => false,
    }
}

/// The metadata maps whose validation a version's memo remembers, in [`VersionMemos`]' order.
const VALIDATED_MAPS: [&str; 2] = ["labels", "annotations"];

impl VersionMemos {
    /// Takes what the store kept with the current version.
    pub fn set_stored(&self, derived: Option<&crate::store::Derived>) {
        *self.stored.borrow_mut() = VersionMemo::of(derived);
    }

    /// What the store kept with the stored version, when it kept it.
    pub fn stored_memo(&self) -> Option<Arc<VersionMemo>> {
        self.stored.borrow().clone()
    }

    /// The stored version's decoded managed field sets, when kept, and whether they are exact
    /// ([`VersionMemo::managed_exact`]).
    pub fn stored_managed(&self) -> Option<(Arc<crate::apply::managed::Decoded>, bool)> {
        self.stored
            .borrow()
            .as_ref()
            .and_then(|m| Some((m.managed.clone()?, m.managed_exact)))
    }

    /// Records that this write's body was decoded, and a pod's spec as the decode left it.
    pub fn set_decoded(&self, pod_spec: Option<&Value>) {
        self.body_decoded.set(true);
        *self.decoded_pod_spec.borrow_mut() = pod_spec.cloned();
    }

    /// Records that `object`'s labels and annotations, as they are now, passed validation.
    pub fn set_validated_maps(&self, object: &Value) {
        let map = |key: &str| meta(object).get(key).cloned();
        *self.validated_maps.borrow_mut() = Some(VALIDATED_MAPS.map(map));
    }

    /// Which of `next`'s labels and annotations are the stored version's (`current`), known to
    /// have passed validation when it was written.
    pub fn known_valid_maps(&self, current: &Value, next: &Value) -> crate::rules::KnownValid {
        let stored = self.stored.borrow();
        let Some(memo) = stored.as_ref() else {
            return crate::rules::KnownValid::default();
        };
        let same = |key: &str| same_member(meta(current).get(key), meta(next).get(key));
        crate::rules::KnownValid {
            spec: false,
            labels: memo.labels_valid && same(VALIDATED_MAPS[0]),
            annotations: memo.annotations_valid && same(VALIDATED_MAPS[1]),
            old_annotations: memo.annotations_valid,
        }
    }

    /// Whether the stored version's pod spec is known valid.
    pub fn stored_pod_spec_valid(&self) -> bool {
        self.stored
            .borrow()
            .as_ref()
            .is_some_and(|m| m.pod_spec_valid)
    }

    /// What the store is to keep with the written version (nothing when nothing was derived);
    /// `encoded`: the written object is the field manager's, as it left it.
    /// `written`: the object about to be stored, when the write stores one.
    fn take_written(
        &self,
        encoded: bool,
        written: Option<&Value>,
    ) -> Option<crate::store::Derived> {
        // Stored exactly as decoded: encoded already (the store changes nothing), the spec
        // equal to the decode's (shared with it, unless a rule rebuilt an equal one).
        let decoded = self.decoded_pod_spec.take();
        let pod_spec_decoded = encoded
            && matches!(
                (decoded, written.and_then(|w| w.get("spec"))),
                (Some(decoded), Some(spec)) if equal(&decoded, spec)
            );
        // The maps validation passed, if they are the ones stored.
        let validated = self.validated_maps.take();
        let stored_as_validated = |i: usize| {
            let (Some(validated), Some(written)) = (&validated, written) else {
                return false;
            };
            same_member(validated[i].as_ref(), meta(written).get(VALIDATED_MAPS[i]))
        };
        let memo = VersionMemo {
            managed: self.written.borrow_mut().take(),
            managed_exact: encoded,
            pod_spec_valid: self.written_pod_spec_valid.replace(false),
            decoded: self.body_decoded.replace(false),
            pod_spec_decoded,
            labels_valid: stored_as_validated(0),
            annotations_valid: stored_as_validated(1),
        };
        (memo.managed.is_some()
            || memo.pod_spec_valid
            || memo.decoded
            || memo.labels_valid
            || memo.annotations_valid)
            .then(|| Arc::new(memo) as crate::store::Derived)
    }

    /// Records whether the object about to be written was Go-encoded last (by the field
    /// manager) and nothing changed it since.
    pub fn set_written_encoded(&self, encoded: bool) {
        self.written_encoded.set(encoded);
    }

    /// What the store is to be told of the written object: what was derived from it, and
    /// whether it is encoded already (both reset for the next write).
    pub fn take_decision(&self, mutation: crate::store::Mutation) -> crate::store::Decision {
        let encoded = self.written_encoded.replace(false);
        let written = match &mutation {
            crate::store::Mutation::Put(object) => Some(object),
            _ => None,
        };
        crate::store::Decision {
            derived: self.take_written(encoded, written),
            mutation,
            encoded,
        }
    }

    /// Records whether the pod about to be written has a spec known valid (see
    /// [`VersionMemo::pod_spec_valid`]).
    pub fn set_written_pod_spec_valid(&self, valid: bool) {
        self.written_pod_spec_valid.set(valid);
    }

    /// Records the sets of the object about to be written (none: nothing to keep).
    pub fn set_written(&self, decoded: Option<crate::apply::managed::Decoded>) {
        *self.written.borrow_mut() = decoded.map(Arc::new);
    }
}

impl<'a> WriteContext<'a> {
    /// A context with no warnings yet.
    pub fn new(info: &'a ResourceInfo, now: &'a str, manager: &'a str) -> Self {
        Self {
            info,
            now,
            manager,
            warnings: Default::default(),
            applied: false,
            memos: VersionMemos::default(),
        }
    }

    /// The field manager's view of this write.
    pub fn writer(&self, subresource: Option<&'a str>) -> crate::apply::Writer<'a> {
        crate::apply::Writer {
            info: self.info,
            manager: self.manager,
            subresource,
            now: self.now,
        }
    }
}

/// Options of a DELETE (from the body's DeleteOptions and the query).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeleteOptions {
    /// `gracePeriodSeconds`.
    pub grace_period_seconds: Option<i64>,
    /// `preconditions.uid`.
    pub precondition_uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub precondition_resource_version: Option<String>,
    /// `propagationPolicy`: `Orphan`, `Background` or `Foreground` (see [`crate::registry::gc_policy`]).
    pub propagation_policy: Option<String>,
    /// The deprecated `orphanDependents` (see [`crate::registry::gc_policy`]).
    pub orphan_dependents: Option<bool>,
    /// `dryRun`: empty, or `["All"]` for a dry run (other values are refused by
    /// [`crate::registry::gc_policy::validate`]).
    pub dry_run: Vec<String>,
}

impl DeleteOptions {
    /// Reads DeleteOptions from a JSON body (may be empty).
    pub fn from_body(body: &[u8]) -> Result<Self, ApiError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self::default());
        }
        let decoding = |e: &dyn std::fmt::Display| {
            ApiError::bad_request(format!("error decoding DeleteOptions: {e}"))
        };
        let v: Value = crate::store::json::from_slice(body).map_err(|e| decoding(&e))?;
        if !v.is_object() {
            return Err(decoding(&"expected an object"));
        }
        let dry_run = match &v["dryRun"] {
            Value::Null => Vec::new(),
            Value::Array(values) => values
                .iter()
                .map(|value| value.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()
                .ok_or_else(|| decoding(&"dryRun: expected a list of strings"))?,
            _ => return Err(decoding(&"dryRun: expected a list of strings")),
        };
        Ok(Self {
            grace_period_seconds: v["gracePeriodSeconds"].as_i64(),
            precondition_uid: v
                .pointer("/preconditions/uid")
                .and_then(Value::as_str)
                .map(str::to_string),
            precondition_resource_version: v
                .pointer("/preconditions/resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_string),
            propagation_policy: v["propagationPolicy"].as_str().map(str::to_string),
            orphan_dependents: v["orphanDependents"].as_bool(),
            dry_run,
        })
    }

    /// Whether this delete is a dry run (`dryrun.IsDryRun`; the values are validated first).
    pub fn is_dry_run(&self) -> bool {
        crate::rules::options::is_dry_run(&self.dry_run)
    }
}

fn meta(obj: &Value) -> &Value {
    &obj["metadata"]
}

fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let Value::Object(map) = obj else {
        unreachable!("made an object above")
    };
    let metadata = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    match metadata {
        Value::Object(m) => m,
        _ => unreachable!("made an object above"),
    }
}

/// `metadata.name`.
pub fn name_of(obj: &Value) -> &str {
    meta(obj)["name"].as_str().unwrap_or_default()
}

fn finalizers_of(obj: &Value) -> Vec<String> {
    meta(obj)["finalizers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn is_deleting(obj: &Value) -> bool {
    meta(obj)
        .get("deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// Checks `apiVersion`/`kind` of a request body against the URL's resource and fills them if
/// absent; checks that the body is an object.
pub fn check_type_meta(info: &ResourceInfo, body: &mut Value) -> Result<(), ApiError> {
    let Some(obj) = body.as_object_mut() else {
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {})",
            info.kind
        )));
    };
    let expected_api_version = info.api_version();
    match obj.get("apiVersion").and_then(Value::as_str) {
        None | Some("") => {}
        Some(v) if v == expected_api_version => {}
        Some(v) => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({expected_api_version})"
            )))
        }
    }
    match obj.get("kind").and_then(Value::as_str) {
        None | Some("") => {}
        Some(k) if k == info.kind => {}
        Some(k) => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                info.kind
            )))
        }
    }
    if !obj
        .get("metadata")
        .is_none_or(|m| m.is_object() || m.is_null())
    {
        return Err(ApiError::bad_request(
            "json: cannot unmarshal metadata into Go struct field of type v1.ObjectMeta",
        ));
    }
    // Set when absent or empty (a body that names them names them right, checked above).
    if obj.get("apiVersion").and_then(Value::as_str) != Some(expected_api_version.as_str()) {
        obj.insert("apiVersion".into(), json!(expected_api_version));
    }
    if obj.get("kind").and_then(Value::as_str) != Some(info.kind.as_str()) {
        obj.insert("kind".into(), json!(info.kind));
    }
    Ok(())
}

/// Checks the body's namespace against the URL's and sets it (cluster-scoped objects have none).
pub fn check_namespace(
    info: &ResourceInfo,
    url_namespace: Option<&str>,
    body: &mut Value,
) -> Result<(), ApiError> {
    let url_ns = url_namespace.unwrap_or_default();
    // A body that already reads right is left as it is (its metadata may be shared with
    // another version: changing it would copy it).
    let metadata = body.get("metadata").filter(|m| m.is_object());
    let in_body = metadata.and_then(|m| m.get("namespace"));
    if !info.namespaced {
        if metadata.is_none() || in_body.is_some() {
            meta_mut(body).remove("namespace");
        }
        return Ok(());
    }
    let written = in_body.and_then(Value::as_str);
    match written {
        None | Some("") => {}
        Some(ns) if ns == url_ns => {}
        Some(_) => return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
    }
    if metadata.is_none() || written != Some(url_ns) {
        meta_mut(body).insert("namespace".into(), json!(url_ns));
    }
    Ok(())
}

/// Storage's refusal of a create that carries a resourceVersion (etcd3's `Create`, the first
/// thing it checks, before it finds the key taken): only one the versioner reads as a number
/// other than 0, so `"0"` and a malformed one are let through (and replaced). A dry run never
/// reaches that storage.
pub fn check_create_resource_version(object: &Value) -> Result<(), ApiError> {
    let rv = resource_version_of(object);
    // Nearly every create sends none: no number to parse (and no parse error to format).
    if rv.is_empty() {
        return Ok(());
    }
    match crate::rules::strconv::parse_uint(&rv) {
        Ok(revision) if revision != 0 => Err(ApiError::plain_500(
            "resourceVersion should not be set on objects to be created",
        )),
        _ => Ok(()),
    }
}

/// Prepares an object for creation: server-owned metadata, generation, status, defaults.
///
/// `uid` is the new object's uid; the name (or generated name) must already be set.
pub fn prepare_create(ctx: &WriteContext<'_>, body: &mut Value, uid: &str) -> Result<(), ApiError> {
    let info = ctx.info;
    let m = meta_mut(body);
    m.insert("uid".into(), json!(uid));
    m.insert("creationTimestamp".into(), json!(ctx.now));
    for server_owned in [
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "resourceVersion",
    ] {
        m.remove(server_owned);
    }
    // Kinds that track generation start at 1; the others keep whatever the client sent.
    if info.tracks_generation {
        m.insert("generation".into(), json!(1));
    }
    normalize_metadata(m);
    dedup_owner_references(body, ctx, false);
    // Per-kind create strategy: status is not settable on create where a subresource owns it.
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod") | ("", "Namespace") | ("", "Node") => {}
        _ if info.has_status => {
            if let Some(obj) = body.as_object_mut() {
                obj.remove("status");
            }
            crate::rules::defaults::after_status_reset(info, body);
        }
        _ => {}
    }
    Ok(())
}

/// Drops empty metadata lists and maps, as Go's `omitempty` encoding does.
fn normalize_metadata(m: &mut Map<String, Value>) {
    for key in ["finalizers", "labels", "annotations", "ownerReferences"] {
        let empty = match m.get(key) {
            Some(Value::Array(a)) => a.is_empty(),
            Some(Value::Object(o)) => o.is_empty(),
            Some(Value::Null) => true,
            _ => false,
        };
        if empty {
            m.remove(key);
        }
    }
}

/// Removes duplicate owner references, as the real server does, with its warning.
fn dedup_owner_references(object: &mut Value, ctx: &WriteContext<'_>, after_admission: bool) {
    if let Some(warning) = crate::rules::validation::dedup_owner_references(object, after_admission)
    {
        ctx.warnings.borrow_mut().push(warning);
    }
}

/// Which endpoint an update came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateTarget {
    /// The main endpoint: everything but `status` (where a status subresource exists).
    Main,
    /// The `/status` subresource: only `status` (and, for pods, labels and annotations).
    Status,
    /// A namespace's `/finalize` subresource: metadata and `spec.finalizers`, never `status`.
    Finalize,
    /// A pod's `/ephemeralcontainers` subresource: only `spec.ephemeralContainers`.
    EphemeralContainers,
    /// A pod's `/resize` subresource: only the containers' `resources` and `resizePolicy`.
    Resize,
    /// A CertificateSigningRequest's `/approval` subresource: only `status.conditions` (and
    /// metadata).
    Approval,
}

/// What a write through `/status` keeps of the request, as each kind's status strategy decides
/// in `PrepareForUpdate`: custom resources and ValidatingAdmissionPolicies keep only the new
/// status (everything else is the stored object's); every other kind keeps the request's
/// metadata (labels, annotations, owner references, finalizers) and takes back only the stored
/// `spec`, a Deployment its stored labels too, a Pod its stored owner references, an
/// APIService and a VolumeAttachment their stored labels, annotations, finalizers and owner
/// references. Server-owned
/// metadata is restored after this for every endpoint.
fn status_update(info: &ResourceInfo, current: &Value, new: Value) -> Value {
    fn take_from(next: &mut Value, current: &Value, key: &str) {
        match current.get(key) {
            Some(value) => next[key] = value.clone(),
            None => {
                if let Some(object) = next.as_object_mut() {
                    object.remove(key);
                }
            }
        }
    }
    let only_status = info.custom
        || (info.group == "admissionregistration.k8s.io"
            && info.kind == "ValidatingAdmissionPolicy");
    if only_status {
        let mut next = current.clone();
        take_from(&mut next, &new, "status");
        return next;
    }
    let mut next = new;
    take_from(&mut next, current, "spec");
    let kept_metadata: &[&str] = match (info.group.as_str(), info.kind.as_str()) {
        ("apps", "Deployment") => &["labels"],
        ("", "Pod") => &["ownerReferences"],
        // `ResetObjectMetaForStatus` (the aggregator's and the VolumeAttachment status strategies).
        ("apiregistration.k8s.io", "APIService") | ("storage.k8s.io", "VolumeAttachment") => {
            &["labels", "annotations", "finalizers", "ownerReferences"]
        }
        _ => &[],
    };
    for key in kept_metadata {
        let stored = meta(current).get(*key).cloned();
        let m = meta_mut(&mut next);
        match stored {
            Some(value) => m.insert((*key).into(), value),
            None => m.remove(*key),
        };
    }
    next
}

/// The rules' view of an endpoint. `namespaces/finalize` checks its finalizers itself; like a
/// status write, it is held to the metadata update rules and none of the kind's spec rules.
fn rules_target(target: UpdateTarget) -> crate::rules::Target {
    match target {
        UpdateTarget::Main => crate::rules::Target::Main,
        UpdateTarget::Status | UpdateTarget::Finalize => crate::rules::Target::Status,
        UpdateTarget::EphemeralContainers => crate::rules::Target::EphemeralContainers,
        UpdateTarget::Resize => crate::rules::Target::Resize,
        UpdateTarget::Approval => crate::rules::Target::Approval,
    }
}

/// Computes the stored object after an update (PUT, or the result of applying a patch).
///
/// Checks the resourceVersion precondition, keeps server-owned metadata, applies the status
/// split, the generation rule and the finalizer rules, and removes an object whose deletion was
/// only waiting for its last finalizer.
pub fn prepare_update(
    ctx: &WriteContext<'_>,
    current: &Value,
    mut new: Value,
    target: UpdateTarget,
) -> Result<Mutation, ApiError> {
    let info = ctx.info;
    let name = name_of(current).to_string();
    let current_rv = resource_version_of(current);
    // An apply computed the managed fields already (for any endpoint).
    let applied_managed_fields = ctx
        .applied
        .then(|| meta(&new).get("managedFields").cloned());
    let new_rv = resource_version_of(&new);
    if new_rv.is_empty() {
        if !info.allow_unconditional_update {
            // The registry names the resource where the kind would go (`qualifiedKind` is
            // built from the group and the resource).
            return Err(ApiError::invalid(
                &info.group,
                &info.plural,
                &name,
                vec![StatusCause {
                    reason: "FieldValueInvalid".into(),
                    message: "Invalid value: 0: must be specified for an update".into(),
                    field: "metadata.resourceVersion".into(),
                }],
            ));
        }
    } else {
        // The registry's update reads both with the versioner's `ObjectResourceVersion`
        // (`strconv.ParseUint`, whose error it passes on: an unclassified 500) and compares the
        // numbers, so `007` is revision 7.
        let sent = crate::rules::strconv::parse_uint(&new_rv).map_err(ApiError::plain_500)?;
        if current_rv.parse::<u64>().ok() != Some(sent) {
            return Err(ApiError::conflict_modified(
                &info.group,
                &info.plural,
                &name,
            ));
        }
    }
    if let Some(uid) = meta(&new)["uid"].as_str().filter(|u| !u.is_empty()) {
        let current_uid = meta(current)["uid"].as_str().unwrap_or_default();
        if uid != current_uid {
            return Err(ApiError::conflict(
                &info.group,
                &info.plural,
                &name,
                &format!(
                    "Precondition failed: UID in precondition: {current_uid}, UID in object meta: {uid}"
                ),
            ));
        }
    }

    // Start from what the endpoint may change.
    let mut next = match target {
        UpdateTarget::Main => {
            if info.has_status {
                if let Some(obj) = new.as_object_mut() {
                    // The status stays as stored; clients mostly send back what they read, so
                    // compare before copying.
                    match current.get("status") {
                        Some(status) if obj.get("status").is_some_and(|s| equal(s, status)) => {}
                        Some(status) => {
                            obj.insert("status".into(), status.clone());
                        }
                        None => {
                            obj.remove("status");
                        }
                    }
                }
            }
            new
        }
        UpdateTarget::Status => status_update(info, current, new),
        UpdateTarget::EphemeralContainers => {
            // `dropNonEphemeralContainerUpdates`: the stored pod with the request's ephemeral
            // containers (its metadata reset as for a status write).
            let mut next = current.clone();
            match new["spec"].get("ephemeralContainers") {
                Some(list) => next["spec"]["ephemeralContainers"] = list.clone(),
                None => {
                    if let Some(spec) = next["spec"].as_object_mut() {
                        spec.remove("ephemeralContainers");
                    }
                }
            }
            next
        }
        UpdateTarget::Resize => crate::rules::core::drop_non_resize_updates(current, new),
        // The approval strategy keeps the request's metadata; the kind's rules
        // (`rules::prepare_update`) take back everything else.
        UpdateTarget::Approval => new,
        UpdateTarget::Finalize => {
            // The finalize strategy keeps the stored status; spec and metadata come from the
            // request.
            let mut next = new;
            match current.get("status") {
                Some(status) => next["status"] = status.clone(),
                None => {
                    if let Some(obj) = next.as_object_mut() {
                        obj.remove("status");
                    }
                }
            }
            crate::rules::validate_namespace_finalize(info, &next)?;
            next
        }
    };

    if target == UpdateTarget::Main && crd::is_crd(info) {
        crd::record_storage_version(&mut next);
    }

    // Server-owned metadata always comes from the stored object.
    {
        let current_meta = meta(current).as_object();
        let stored = |key: &str| current_meta.and_then(|m| m.get(key));
        let m = meta_mut(&mut next);
        for key in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "namespace",
            "name",
            "selfLink",
        ] {
            match stored(key) {
                Some(v) => m.insert(key.into(), v.clone()),
                None => m.remove(key),
            };
        }
        if let Some(mf) = stored("managedFields") {
            m.entry("managedFields").or_insert_with(|| mf.clone());
        }
    }
    if info.kind == "Namespace" && info.group.is_empty() && target != UpdateTarget::Finalize {
        // Only the finalize subresource changes a namespace's spec (its finalizers).
        match current.get("spec") {
            Some(spec) => next["spec"] = spec.clone(),
            None => {
                if let Some(obj) = next.as_object_mut() {
                    obj.remove("spec");
                }
            }
        }
    }
    check_immutable_data(info, current, &next)?;

    // Metadata rules of an update: label, annotation, finalizer and owner-reference syntax, and
    // no new finalizers on an object that is being deleted.
    if resource_version_of(&next).is_empty() {
        meta_mut(&mut next).insert("resourceVersion".into(), json!(current_rv));
    }
    let rules_target = rules_target(target);
    if target == UpdateTarget::Main && info.is_builtin("", "Pod") {
        crate::admission::priority::restore_on_update(current, &mut next);
    }
    crate::rules::prepare_update(info, current, &mut next, rules_target, ctx.now);
    // Whether the write changes the spec at all (everything outside metadata and status):
    // whether the generation rule below needs a closer look, and whether what is known of the
    // stored pod's spec holds for this one. Nothing after this point changes more than the
    // metadata.
    let pod = info.is_builtin("", "Pod");
    // The top-level members the write leaves as they are: found once, for the spec test here,
    // the field manager and the no-op test below.
    let unchanged = crate::apply::unchanged_members(Some(current), &next);
    let spec_differs = generation::spec_differs_given(info, current, &next, &unchanged);
    let pod_spec_valid = pod && !spec_differs && ctx.memos.stored_pod_spec_valid();
    let known = crate::rules::KnownValid {
        spec: pod_spec_valid,
        ..ctx.memos.known_valid_maps(current, &next)
    };
    crate::rules::validate_update(info, current, &next, rules_target, known)?;
    if crate::rules::meta::checks_labels_and_annotations(info) {
        ctx.memos.set_validated_maps(&next);
    }
    // What a later write may take as known of this version's spec: it passed the checks of a
    // spec write just now, or it is the stored spec that was known valid.
    ctx.memos.set_written_pod_spec_valid(
        pod_spec_valid || (pod && rules_target == crate::rules::Target::Main),
    );
    if rules_target == crate::rules::Target::Main {
        ctx.warnings
            .borrow_mut()
            .extend(crate::rules::warnings::on_update(info, current, &next));
    }
    normalize_metadata(meta_mut(&mut next));
    dedup_owner_references(&mut next, ctx, true);

    // The kind's strategy; a status-like subresource's never moves it.
    let strategy_runs = matches!(
        target,
        UpdateTarget::Main | UpdateTarget::EphemeralContainers | UpdateTarget::Resize
    );
    if strategy_runs && generation::bumps(info, current, &next, spec_differs) {
        let generation = meta(current)["generation"].as_i64().unwrap_or(0) + 1;
        meta_mut(&mut next).insert("generation".into(), json!(generation));
    }

    let subresource = match target {
        UpdateTarget::Main => None,
        UpdateTarget::Status => Some("status"),
        UpdateTarget::Finalize => Some("finalize"),
        UpdateTarget::EphemeralContainers => Some("ephemeralcontainers"),
        UpdateTarget::Resize => Some("resize"),
        UpdateTarget::Approval => Some("approval"),
    };
    match applied_managed_fields {
        Some(Some(managed_fields)) => {
            meta_mut(&mut next).insert("managedFields".into(), managed_fields);
        }
        Some(None) => {
            meta_mut(&mut next).remove("managedFields");
        }
        None => {
            let stored = ctx.memos.stored_managed();
            let written = crate::apply::track_update_known(
                &ctx.writer(subresource),
                Some(current),
                stored.as_ref().map(|(sets, exact)| (&**sets, *exact)),
                Some(&unchanged),
                &mut next,
            );
            ctx.memos.set_written(written);
            // The field manager left a built-in object Go-encoded, as the store would; nothing
            // below changes a `Put`'s object (a validating webhook's answer replacing it clears
            // this again).
            ctx.memos.set_written_encoded(!info.custom);
        }
    }
    if content_equal(info, current, &next, spec_differs, &unchanged) {
        return Ok(Mutation::Unchanged(current.clone()));
    }

    if is_deleting(&next) && finalizers_of(&next).is_empty() && deletion_complete(info, &next) {
        // The update is answered with the object as written, but the object goes: watchers get
        // a DELETED event carrying its last stored state.
        return Ok(Mutation::Finalize(next));
    }
    Ok(Mutation::Put(next))
}

/// Whether a deleting object without finalizers may go now. Pods bound to a node wait for the
/// kubelet (a delete with grace period 0); namespaces wait for their `spec.finalizers` too
/// (`ShouldDeleteNamespaceDuringUpdate`).
fn deletion_complete(info: &ResourceInfo, obj: &Value) -> bool {
    if info.group.is_empty() && info.kind == "Namespace" {
        return namespace_finalizers(obj).is_empty();
    }
    if info.group.is_empty() && info.kind == "Pod" {
        return meta(obj)["deletionGracePeriodSeconds"]
            .as_i64()
            .unwrap_or(0)
            == 0;
    }
    true
}

/// Whether two versions of an object differ outside `resourceVersion`. `spec_differs` is what
/// [`generation::spec_differs_as_json`] found for them: those keys need no second comparison;
/// nor do the members `unchanged` lists (found equal before the field manager encoded `b`:
/// encoding left them as they were). A member found unequal then is compared again, as
/// encoding may have made it equal.
fn content_equal(
    info: &ResourceInfo,
    a: &Value,
    b: &Value,
    spec_differs: bool,
    unchanged: &[&str],
) -> bool {
    if spec_differs {
        return false;
    }
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return equal(a, b);
    };
    let same_meta = |x: &Value, y: &Value| match (x.as_object(), y.as_object()) {
        (Some(x), Some(y)) => maps_equal_where(x, y, |k| k != "resourceVersion"),
        _ => equal(x, y),
    };
    let compared = |k: &str| k != "metadata" && !generation::is_spec_key(info, k);
    let known_equal = |m: &serde_json::Map<String, Value>| {
        m.keys()
            .filter(|k| compared(k))
            .all(|k| unchanged.contains(&k.as_str()))
    };
    ((known_equal(a) && known_equal(b)) || maps_equal_where(a, b, compared))
        && match (a.get("metadata"), b.get("metadata")) {
            (Some(x), Some(y)) => same_meta(x, y),
            (x, y) => x == y,
        }
}

/// ConfigMaps and Secrets marked `immutable` refuse changes to their data.
fn check_immutable_data(info: &ResourceInfo, old: &Value, new: &Value) -> Result<(), ApiError> {
    if !(info.group.is_empty() && matches!(info.kind.as_str(), "ConfigMap" | "Secret")) {
        return Ok(());
    }
    if old["immutable"] != json!(true) {
        return Ok(());
    }
    let mut causes = Vec::new();
    for field in ["data", "binaryData", "stringData"] {
        if old.get(field) != new.get(field) && field != "stringData" {
            causes.push(StatusCause {
                reason: "FieldValueForbidden".into(),
                message: "Forbidden: field is immutable when `immutable` is set".to_string(),
                field: field.into(),
            });
        }
    }
    if new["immutable"] != json!(true) {
        causes.push(StatusCause {
            reason: "FieldValueForbidden".into(),
            message: "Forbidden: field is immutable when `immutable` is set".into(),
            field: "immutable".into(),
        });
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            &info.group,
            &info.kind,
            name_of(old),
            causes,
        ))
    }
}

/// What a DELETE does to a stored object.
#[derive(Debug)]
pub struct DeleteDecision {
    /// The write to perform.
    pub mutation: Mutation,
    /// Whether the object is gone after it (rather than marked for deletion).
    pub gone: bool,
}

/// Whether `info` is the CustomResourceDefinition resource.
fn is_crd(info: &ResourceInfo) -> bool {
    info.group == "apiextensions.k8s.io" && info.kind == "CustomResourceDefinition"
}

/// A DELETE's preconditions against the stored object. The generic registry checks them in
/// `BeforeDelete` and answers a conflict on the object's kind (`Operation cannot be fulfilled
/// on ConfigMap "x": the UID in the precondition (a) does not match the UID in record (b). ...`);
/// the namespace and CRD registries check them in their own `Delete` first, in older words, on
/// their resource (`namespaces`, `customresourcedefinitions.apiextensions.k8s.io`).
fn check_delete_preconditions(
    info: &ResourceInfo,
    current: &Value,
    opts: &DeleteOptions,
) -> Result<(), ApiError> {
    let name = name_of(current);
    // The namespace and CRD registries check preconditions in their own `Delete`, first.
    let namespace_registry = (info.group.is_empty() && info.kind == "Namespace") || is_crd(info);
    let conflict = |why: String| {
        if namespace_registry {
            ApiError::conflict(&info.group, &info.plural, name, &why)
        } else {
            ApiError::conflict(&info.group, &info.kind, name, &why)
        }
    };
    if let Some(uid) = &opts.precondition_uid {
        let actual = meta(current)["uid"].as_str().unwrap_or_default();
        if uid != actual {
            return Err(conflict(if namespace_registry {
                format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                )
            } else {
                format!("the UID in the precondition ({uid}) does not match the UID in record ({actual}). The object might have been deleted and then recreated")
            }));
        }
    }
    if let Some(rv) = &opts.precondition_resource_version {
        let actual = resource_version_of(current);
        if *rv != actual {
            return Err(conflict(if namespace_registry {
                format!("Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}")
            } else {
                format!("the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified")
            }));
        }
    }
    Ok(())
}

/// Decides a DELETE: preconditions, graceful deletion of bound pods, finalizers.
pub fn decide_delete(
    info: &ResourceInfo,
    current: Value,
    opts: &DeleteOptions,
    now: jiff::Timestamp,
) -> Result<DeleteDecision, ApiError> {
    check_delete_preconditions(info, &current, opts)?;
    if info.group.is_empty() && info.kind == "Namespace" && !is_deleting(&current) {
        return Ok(start_namespace_termination(current, opts, now));
    }
    if is_crd(info) && !is_deleting(&current) {
        // The CRD registry's `Delete`: marked for the cleanup of its custom resources, which
        // the CRD finalizer then removes (`crate::http::crd_cleanup`).
        let mut next = current;
        crate::registry::crd::mark_for_deletion(&mut next, &format_time(now));
        return Ok(DeleteDecision {
            mutation: Mutation::Put(next),
            gone: false,
        });
    }
    if info.group.is_empty()
        && info.kind == "Namespace"
        && !namespace_finalizers(&current).is_empty()
    {
        // The namespace controller still has content to remove: the DELETE changes nothing.
        return Ok(DeleteDecision {
            mutation: Mutation::Unchanged(current),
            gone: false,
        });
    }
    let is_pod = info.group.is_empty() && info.kind == "Pod";
    let grace = if is_pod {
        pod_grace_period(&current, opts)
    } else {
        0
    };
    let finalizers = finalizers_of(&current);
    // The garbage collector's finalizers, as the request's propagation policy sets them.
    let gc_finalizers =
        crate::registry::gc_policy::finalizers_after_delete(info, &finalizers, opts);

    if is_deleting(&current) {
        let existing = meta(&current)["deletionGracePeriodSeconds"]
            .as_i64()
            .unwrap_or(0);
        if is_pod && existing > 0 {
            // A graceful deletion is pending: only a shorter grace period changes anything
            // (finalizers cannot be changed through DeleteOptions any more).
            if grace < existing {
                let has_finalizers = !finalizers.is_empty();
                let mut next = current;
                set_deletion(&mut next, now, grace);
                return Ok(DeleteDecision {
                    mutation: Mutation::Put(next),
                    gone: grace == 0 && !has_finalizers,
                });
            }
            return Ok(DeleteDecision {
                mutation: Mutation::Unchanged(current),
                gone: false,
            });
        }
        // Marked for deletion and only waiting for finalizers: a DELETE may still change the
        // garbage collector's finalizers; with none left the object goes now.
        let next_finalizers = gc_finalizers.unwrap_or_else(|| finalizers.clone());
        if next_finalizers.is_empty() {
            return Ok(DeleteDecision {
                mutation: Mutation::Delete(current),
                gone: true,
            });
        }
        if next_finalizers == finalizers {
            return Ok(DeleteDecision {
                mutation: Mutation::Unchanged(current),
                gone: false,
            });
        }
        let mut next = current;
        meta_mut(&mut next).insert("finalizers".into(), json!(next_finalizers));
        return Ok(DeleteDecision {
            mutation: Mutation::Put(next),
            gone: false,
        });
    }

    let next_finalizers = gc_finalizers.clone().unwrap_or_else(|| finalizers.clone());
    let has_finalizers = !next_finalizers.is_empty();
    if !has_finalizers && grace == 0 && !is_pod {
        return Ok(DeleteDecision {
            mutation: Mutation::Delete(current),
            gone: true,
        });
    }
    // Graceful: mark the object; it stays until its finalizers are gone (and, for a bound pod,
    // until the kubelet deletes it with grace period 0).
    let mut next = current;
    if gc_finalizers.is_some() {
        let m = meta_mut(&mut next);
        if next_finalizers.is_empty() {
            m.remove("finalizers");
        } else {
            m.insert("finalizers".into(), json!(next_finalizers));
        }
    }
    set_deletion(&mut next, now, grace);
    // `BeforeDelete` (graceful) and `markAsDeleting` (finalizers) alike: a new generation for
    // any object that has one, whether or not its kind maintains it.
    let generation = meta(&next)["generation"].as_i64().unwrap_or(0);
    if generation > 0 {
        meta_mut(&mut next).insert("generation".into(), json!(generation + 1));
    }
    let gone = !has_finalizers && grace == 0;
    Ok(DeleteDecision {
        mutation: Mutation::Put(next),
        gone,
    })
}

/// A namespace's `spec.finalizers` (the namespace controller's `kubernetes`, and any others).
pub fn namespace_finalizers(namespace: &Value) -> Vec<String> {
    namespace["spec"]["finalizers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The first DELETE of a namespace (the namespace storage's own `Delete`): the namespace is
/// marked (a deletion timestamp without a grace period) and `Terminating`, and keeps existing
/// until the namespace controller has emptied it and removed its `spec.finalizers`. The
/// garbage collector's metadata finalizers follow the request's policy.
fn start_namespace_termination(
    current: Value,
    opts: &DeleteOptions,
    now: jiff::Timestamp,
) -> DeleteDecision {
    let mut next = current;
    let finalizers = finalizers_of(&next);
    let has = |f: &str| finalizers.iter().any(|x| x == f);
    let orphan = match (opts.orphan_dependents, opts.propagation_policy.as_deref()) {
        (Some(orphan), _) => orphan,
        (None, Some(policy)) => policy == "Orphan",
        (None, None) => has(crate::registry::gc_policy::ORPHAN),
    };
    let foreground = match (opts.orphan_dependents, opts.propagation_policy.as_deref()) {
        (Some(orphan), _) => !orphan,
        (None, Some(policy)) => policy == "Foreground",
        (None, None) => has(crate::registry::gc_policy::FOREGROUND),
    };
    if orphan != has(crate::registry::gc_policy::ORPHAN)
        || foreground != has(crate::registry::gc_policy::FOREGROUND)
    {
        let mut next_finalizers: Vec<String> = finalizers
            .iter()
            .filter(|f| {
                f.as_str() != crate::registry::gc_policy::ORPHAN
                    && f.as_str() != crate::registry::gc_policy::FOREGROUND
            })
            .cloned()
            .collect();
        if orphan {
            next_finalizers.push(crate::registry::gc_policy::ORPHAN.into());
        }
        if foreground {
            next_finalizers.push(crate::registry::gc_policy::FOREGROUND.into());
        }
        let m = meta_mut(&mut next);
        if next_finalizers.is_empty() {
            m.remove("finalizers");
        } else {
            m.insert("finalizers".into(), json!(next_finalizers));
        }
    }
    meta_mut(&mut next).insert("deletionTimestamp".into(), json!(format_time(now)));
    next["status"]["phase"] = json!("Terminating");
    DeleteDecision {
        mutation: Mutation::Put(next),
        gone: false,
    }
}

fn set_deletion(obj: &mut Value, now: jiff::Timestamp, grace: i64) {
    let at = now
        .checked_add(jiff::SignedDuration::from_secs(grace))
        .unwrap_or(now);
    let m = meta_mut(obj);
    m.insert("deletionTimestamp".into(), json!(format_time(at)));
    m.insert("deletionGracePeriodSeconds".into(), json!(grace));
}

/// The grace period a pod deletion gets: 0 for pods not bound to a node or already finished;
/// otherwise the request's, else the pod's `terminationGracePeriodSeconds`, else 30.
fn pod_grace_period(pod: &Value, opts: &DeleteOptions) -> i64 {
    let bound = pod["spec"]["nodeName"]
        .as_str()
        .is_some_and(|n| !n.is_empty());
    let finished = matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    );
    if !bound || finished {
        return 0;
    }
    opts.grace_period_seconds
        .or_else(|| pod["spec"]["terminationGracePeriodSeconds"].as_i64())
        .unwrap_or(30)
        .max(0)
}

/// Formats a timestamp as `metav1.Time` does: RFC 3339, seconds, `Z`.
pub fn format_time(t: jiff::Timestamp) -> String {
    thread_local! {
        /// The second this thread formatted last, and its text: the writes of one second
        /// (every create and managed-fields entry stamps one) share it.
        static LAST: std::cell::RefCell<Option<(i64, String)>> = const { std::cell::RefCell::new(None) };
    }
    // 1970 to 9999 without jiff's strftime (whose first call alone costs a start ~25 µs).
    // (A time just before 1970 counts 0 whole seconds and negative nanoseconds: not that path.)
    let format = |t: jiff::Timestamp| {
        let written = if t.subsec_nanosecond() >= 0 {
            crate::rules::civil_time::format_second(t.as_second())
        } else {
            None
        };
        written.unwrap_or_else(|| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
    };
    // Before 1970 the whole seconds counted are not the second the text shows (they round
    // toward zero): formatted every time.
    let second = t.as_second();
    if second < 0 || t.subsec_nanosecond() < 0 {
        return format(t);
    }
    LAST.try_with(|last| {
        let mut last = last.borrow_mut();
        match &*last {
            Some((at, text)) if *at == second => text.clone(),
            _ => {
                let text = format(t);
                *last = Some((second, text.clone()));
                text
            }
        }
    })
    .unwrap_or_else(|_| format(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::builtin_resources;

    /// Each second is written as itself, whether the one before was the same second (kept),
    /// another, or one before 1970 (not kept).
    #[test]
    fn times_are_formatted_per_second() {
        let at = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
        for (time, text) in [
            ("2026-12-07T02:45:42.1Z", "2026-12-07T02:45:42Z"),
            ("2026-12-07T02:45:42.9Z", "2026-12-07T02:45:42Z"),
            ("2026-12-07T02:45:43Z", "2026-12-07T02:45:43Z"),
            ("1969-12-31T23:59:59.5Z", "1969-12-31T23:59:59Z"),
            ("1970-01-01T00:00:00.5Z", "1970-01-01T00:00:00Z"),
            ("1969-12-31T23:59:58.5Z", "1969-12-31T23:59:58Z"),
            ("2026-12-07T02:45:42Z", "2026-12-07T02:45:42Z"),
        ] {
            assert_eq!(format_time(at(time)), text, "{time}");
        }
    }

    fn builtin(plural: &str) -> ResourceInfo {
        builtin_resources()
            .into_iter()
            .find(|r| r.plural == plural)
            .unwrap()
    }

    fn custom() -> ResourceInfo {
        ResourceInfo {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            namespaced: true,
            has_status: true,
            custom: true,
            tracks_generation: true,
            ..Default::default()
        }
    }

    fn ctx(info: &ResourceInfo) -> WriteContext<'_> {
        WriteContext::new(info, "2024-01-01T00:00:00Z", "test")
    }

    fn stored(extra: Value) -> Value {
        let mut v = json!({"metadata": {"name": "w", "namespace": "ns", "uid": "u1", "resourceVersion": "5", "generation": 1, "creationTimestamp": "2024-01-01T00:00:00Z"}, "spec": {"a": 1}, "status": {"s": 1}});
        if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            for (k, x) in extra {
                v.insert(k.clone(), x.clone());
            }
        }
        v
    }

    fn put(m: Mutation) -> Value {
        match m {
            Mutation::Put(v) => v,
            other => panic!("expected a put, got {other:?}"),
        }
    }

    /// What the store is told to keep of a written pod: whether its body was decoded, and
    /// whether its spec is the decode's (only when stored exactly as the decode left it).
    #[rstest::rstest]
    #[case::as_decoded(true, false, true, (true, true))]
    #[case::changed_after_the_decode(true, true, true, (true, false))]
    #[case::encoded_by_the_store(true, false, false, (true, false))]
    #[case::not_decoded(false, false, true, (false, false))]
    fn the_version_memo_knows_what_the_decode_left(
        #[case] decoded: bool,
        #[case] changed_after: bool,
        #[case] encoded: bool,
        #[case] expected: (bool, bool),
    ) {
        let memos = VersionMemos::default();
        let spec = json!({"containers": [{"name": "c", "image": "i"}]});
        if decoded {
            memos.set_decoded(Some(&spec));
        }
        let mut written = json!({"metadata": {"name": "p"}, "spec": spec});
        if changed_after {
            // (An admission plugin's volume, added after the decode.)
            written["spec"]["volumes"] = json!([{"name": "v", "emptyDir": {}}]);
        }
        memos.set_written_encoded(encoded);
        let decision = memos.take_decision(Mutation::Put(written));
        let memo = decision
            .derived
            .and_then(|d| d.downcast::<VersionMemo>().ok());
        let known = memo.map_or((false, false), |m| (m.decoded, m.pod_spec_decoded));
        assert_eq!(known, expected);
        // Nothing carries over to the next write on the same context.
        let next = memos.take_decision(Mutation::Put(json!({"spec": {}})));
        assert!(next.derived.is_none());
    }

    /// A stored ConfigMap with `labels` and an annotation, and an update of its data.
    fn labelled_config_map_update(labels: Value) -> (Value, Value) {
        let current = json!({"metadata": {"name": "w", "namespace": "ns", "uid": "u",
            "resourceVersion": "3", "labels": labels, "annotations": {"a": "1"}},
            "data": {"a": "1"}});
        let mut new = current.clone();
        new["data"]["a"] = json!("2");
        (current, new)
    }

    /// Labels and annotations a stored version's memo says passed validation are not checked
    /// again while an update leaves them as they are; changed ones are. (The stored labels here
    /// are invalid and the memo says otherwise: whether the update is refused tells whether
    /// they were checked.)
    #[rstest::rstest]
    #[case::kept_and_known(true, false, false, None)]
    #[case::kept_not_known(false, false, false, Some("metadata.labels"))]
    #[case::changed_and_known(true, true, false, Some("metadata.labels"))]
    #[case::annotations_changed_labels_known(true, false, true, Some("metadata.annotations"))]
    fn metadata_maps_known_valid_are_not_checked_again(
        #[case] memo_says_valid: bool,
        #[case] change_labels: bool,
        #[case] break_annotations: bool,
        #[case] refused_for: Option<&str>,
    ) {
        let cm = builtin("configmaps");
        let (current, mut new) = labelled_config_map_update(json!({"bad key!": "v"}));
        if change_labels {
            new["metadata"]["labels"]["other"] = json!("x");
        }
        if break_annotations {
            new["metadata"]["annotations"] = json!({"bad key!": "1"});
        }
        let ctx = ctx(&cm);
        let memo = VersionMemo {
            labels_valid: memo_says_valid,
            annotations_valid: memo_says_valid,
            ..Default::default()
        };
        ctx.memos
            .set_stored(Some(&(Arc::new(memo) as crate::store::Derived)));
        let result = prepare_update(&ctx, &current, new, UpdateTarget::Main);
        match refused_for {
            None => {
                put(result.unwrap());
            }
            Some(field) => {
                let err = result.unwrap_err();
                assert_eq!(err.code, 422, "{err:?}");
                assert!(format!("{err:?}").contains(field), "{err:?}");
            }
        }
    }

    /// The memo of a written version says its labels and annotations passed validation only
    /// when they are stored as they were checked.
    #[rstest::rstest]
    #[case::stored_as_checked(false, (true, true))]
    #[case::labels_changed_after(true, (false, true))]
    fn the_version_memo_knows_which_metadata_maps_passed(
        #[case] change_labels_after: bool,
        #[case] expected: (bool, bool),
    ) {
        let cm = builtin("configmaps");
        let (current, new) = labelled_config_map_update(json!({"k": "v"}));
        let ctx = ctx(&cm);
        let mut next = put(prepare_update(&ctx, &current, new, UpdateTarget::Main).unwrap());
        if change_labels_after {
            next["metadata"]["labels"]["k"] = json!("other");
        }
        let decision = ctx.memos.take_decision(Mutation::Put(next));
        let memo = VersionMemo::of(decision.derived.as_ref()).unwrap();
        assert_eq!((memo.labels_valid, memo.annotations_valid), expected);
        // Nothing carries over to the next write on the same context.
        let again = ctx
            .memos
            .take_decision(Mutation::Put(json!({"metadata": {}})));
        assert!(VersionMemo::of(again.derived.as_ref()).is_none_or(|m| !m.labels_valid));
    }

    #[test]
    fn stale_resource_version_conflicts() {
        let info = custom();
        let mut new = stored(json!({}));
        new["metadata"]["resourceVersion"] = json!("4");
        new["spec"]["a"] = json!(2);
        let err =
            prepare_update(&ctx(&info), &stored(json!({})), new, UpdateTarget::Main).unwrap_err();
        assert_eq!(err.code, 409);
        assert_eq!(err.reason, "Conflict");
    }

    #[test]
    fn custom_resources_need_a_resource_version() {
        let info = custom();
        let mut new = stored(json!({}));
        meta_mut(&mut new).remove("resourceVersion");
        let err =
            prepare_update(&ctx(&info), &stored(json!({})), new, UpdateTarget::Main).unwrap_err();
        assert_eq!(err.code, 422);
        let cm = builtin("configmaps");
        let mut new = json!({"metadata": {"name": "w", "namespace": "ns"}, "data": {"a": "2"}});
        let current = json!({"metadata": {"name": "w", "namespace": "ns", "uid": "u", "resourceVersion": "3"}, "data": {"a": "1"}});
        let next =
            put(prepare_update(&ctx(&cm), &current, new.take(), UpdateTarget::Main).unwrap());
        assert_eq!(next["metadata"]["uid"], "u");
    }

    #[test]
    fn generation_moves_on_spec_changes_only() {
        let info = custom();
        let mut new = stored(json!({}));
        new["spec"]["a"] = json!(2);
        new["status"]["s"] = json!(9);
        let next =
            put(prepare_update(&ctx(&info), &stored(json!({})), new, UpdateTarget::Main).unwrap());
        assert_eq!(next["metadata"]["generation"], 2);
        assert_eq!(next["status"]["s"], 1, "main endpoint ignores status");

        let mut new = stored(json!({}));
        new["status"]["s"] = json!(9);
        new["spec"]["a"] = json!(7);
        let next = put(
            prepare_update(&ctx(&info), &stored(json!({})), new, UpdateTarget::Status).unwrap(),
        );
        assert_eq!(next["metadata"]["generation"], 1);
        assert_eq!(next["status"]["s"], 9);
        assert_eq!(next["spec"]["a"], 1, "status endpoint ignores spec");

        let mut new = stored(json!({}));
        new["metadata"]["labels"] = json!({"x": "y"});
        let next =
            put(prepare_update(&ctx(&info), &stored(json!({})), new, UpdateTarget::Main).unwrap());
        assert_eq!(next["metadata"]["generation"], 1);
    }

    #[test]
    fn no_op_update_is_unchanged() {
        let info = custom();
        let m = prepare_update(
            &ctx(&info),
            &stored(json!({})),
            stored(json!({})),
            UpdateTarget::Main,
        )
        .unwrap();
        assert!(matches!(m, Mutation::Unchanged(_)));
    }

    #[test]
    fn finalizers_hold_a_deletion_and_cannot_be_added_while_deleting() {
        let info = custom();
        let mut current = stored(json!({}));
        current["metadata"]["finalizers"] = json!(["a.io/x"]);
        let d = decide_delete(
            &info,
            current,
            &DeleteOptions::default(),
            jiff::Timestamp::UNIX_EPOCH,
        )
        .unwrap();
        assert!(!d.gone);
        let deleting = put(d.mutation);
        assert_eq!(deleting["metadata"]["generation"], 2);
        assert_eq!(deleting["metadata"]["deletionGracePeriodSeconds"], 0);

        let mut add = deleting.clone();
        add["metadata"]["finalizers"] = json!(["a.io/x", "b.io/y"]);
        let err = prepare_update(&ctx(&info), &deleting, add, UpdateTarget::Main).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(err.message.contains("no new finalizers can be added if the object is being deleted, found new finalizers []string{\"b.io/y\"}"), "{}", err.message);

        let mut remove = deleting.clone();
        remove["metadata"]["finalizers"] = json!([]);
        let m = prepare_update(&ctx(&info), &deleting, remove, UpdateTarget::Main).unwrap();
        assert!(matches!(m, Mutation::Finalize(_)));
    }

    #[test]
    fn bound_pods_are_deleted_gracefully() {
        let pods = builtin("pods");
        let pod = json!({"metadata": {"name": "p", "namespace": "ns", "uid": "u", "resourceVersion": "2", "generation": 1}, "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}});
        let d = decide_delete(
            &pods,
            pod.clone(),
            &DeleteOptions::default(),
            jiff::Timestamp::UNIX_EPOCH,
        )
        .unwrap();
        let marked = put(d.mutation);
        assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 30);
        let again = decide_delete(
            &pods,
            marked.clone(),
            &DeleteOptions {
                grace_period_seconds: Some(40),
                ..Default::default()
            },
            jiff::Timestamp::UNIX_EPOCH,
        )
        .unwrap();
        assert!(matches!(again.mutation, Mutation::Unchanged(_)));
        let now = decide_delete(
            &pods,
            marked,
            &DeleteOptions {
                grace_period_seconds: Some(0),
                ..Default::default()
            },
            jiff::Timestamp::UNIX_EPOCH,
        )
        .unwrap();
        assert!(now.gone && matches!(now.mutation, Mutation::Put(_)));

        let mut unbound = pod;
        unbound["spec"] = json!({});
        let d = decide_delete(
            &pods,
            unbound,
            &DeleteOptions::default(),
            jiff::Timestamp::UNIX_EPOCH,
        )
        .unwrap();
        assert!(d.gone, "an unbound pod goes at once");
    }

    #[test]
    fn preconditions_conflict() {
        let cm = builtin("configmaps");
        let current = json!({"metadata": {"name": "c", "uid": "u", "resourceVersion": "3"}});
        let opts = DeleteOptions {
            precondition_uid: Some("other".into()),
            ..Default::default()
        };
        assert_eq!(
            decide_delete(&cm, current.clone(), &opts, jiff::Timestamp::UNIX_EPOCH)
                .unwrap_err()
                .code,
            409
        );
        let opts = DeleteOptions {
            precondition_resource_version: Some("2".into()),
            ..Default::default()
        };
        assert_eq!(
            decide_delete(&cm, current, &opts, jiff::Timestamp::UNIX_EPOCH)
                .unwrap_err()
                .code,
            409
        );
    }

    /// The preconditions' conflicts as each registry words them: the generic `BeforeDelete` on
    /// the object's kind (group-qualified), the namespace registry on `namespaces`.
    #[rstest::rstest]
    #[case::uid("configmaps", Some("other"), None, "Operation cannot be fulfilled on ConfigMap \"c\": the UID in the precondition (other) does not match the UID in record (u). The object might have been deleted and then recreated", "ConfigMap", None)]
    #[case::resource_version("configmaps", None, Some("2"), "Operation cannot be fulfilled on ConfigMap \"c\": the ResourceVersion in the precondition (2) does not match the ResourceVersion in record (3). The object might have been modified", "ConfigMap", None)]
    #[case::grouped_kind("deployments", Some("other"), None, "Operation cannot be fulfilled on Deployment.apps \"c\": the UID in the precondition (other) does not match the UID in record (u). The object might have been deleted and then recreated", "Deployment", Some("apps"))]
    #[case::namespace_uid("namespaces", Some("other"), None, "Operation cannot be fulfilled on namespaces \"c\": Precondition failed: UID in precondition: other, UID in object meta: u", "namespaces", None)]
    #[case::namespace_resource_version("namespaces", None, Some("2"), "Operation cannot be fulfilled on namespaces \"c\": Precondition failed: ResourceVersion in precondition: 2, ResourceVersion in object meta: 3", "namespaces", None)]
    fn delete_preconditions_conflict_in_each_registrys_words(
        #[case] plural: &str,
        #[case] uid: Option<&str>,
        #[case] resource_version: Option<&str>,
        #[case] message: &str,
        #[case] details_kind: &str,
        #[case] details_group: Option<&str>,
    ) {
        let info = builtin(plural);
        let current = json!({"metadata": {"name": "c", "uid": "u", "resourceVersion": "3"}});
        let opts = DeleteOptions {
            precondition_uid: uid.map(str::to_string),
            precondition_resource_version: resource_version.map(str::to_string),
            ..Default::default()
        };
        let err = decide_delete(&info, current, &opts, jiff::Timestamp::UNIX_EPOCH).unwrap_err();
        assert_eq!(err.code, 409);
        assert_eq!(err.message, message);
        let status = err.to_status();
        assert_eq!(status["details"]["kind"], details_kind);
        assert_eq!(status["details"]["group"].as_str(), details_group);
    }

    #[test]
    fn a_custom_resource_conflicts_on_its_kind() {
        let info = custom();
        let opts = DeleteOptions {
            precondition_uid: Some("other".into()),
            ..Default::default()
        };
        let err = decide_delete(&info, stored(json!({})), &opts, jiff::Timestamp::UNIX_EPOCH)
            .unwrap_err();
        assert!(
            err.message
                .starts_with("Operation cannot be fulfilled on Widget.example.com \"w\": the UID in the precondition (other)"),
            "{}",
            err.message
        );
    }
}
