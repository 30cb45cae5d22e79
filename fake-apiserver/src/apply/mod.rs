//! Server-side apply and `metadata.managedFields`, as kube-apiserver's field manager
//! (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager`) and structured-merge-diff
//! (`merge/update.go`) do them.
//!
//! - Every write but apply ([`track_update`]) compares the object before and after: the writer's
//!   entry (operation `Update`) gains what it added or changed, every other manager loses it, and
//!   everyone loses what was removed. Entries left without fields are dropped.
//! - An apply ([`apply`]) merges the configuration into the live object along the kind's schema,
//!   makes the configuration's field set the applier's entry (operation `Apply`), removes what the
//!   applier applied last time and no longer does (unless someone else owns it), and refuses with
//!   409 a change to a field another manager owns, unless forced, which takes the field over.
//!
//! In both, fields a strategy resets (`status` on the main endpoint of a kind with a status
//! subresource, `spec` on `/status`) are nobody's, and the server-owned metadata (`name`,
//! `namespace`, `uid`, `resourceVersion`, `generation`, `creationTimestamp`, `managedFields`, ...)
//! is never recorded.

pub(crate) mod created;
pub mod fieldpath;
pub mod fingerprint;
pub mod managed;
pub mod schema;
mod schema_table;
pub mod typed;
mod written;

use serde_json::{Map, Value};

use crate::error::{ApiError, StatusCause};
use crate::resource::ResourceInfo;
use fieldpath::{path_string, Path, PathElement, Set};
use managed::{Entry, Identity, Operation};
use schema::TypeSchema;

/// The longest field manager name (`FieldManagerMaxLength`).
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// Where a write came in and who makes it.
#[derive(Debug, Clone, Copy)]
pub struct Writer<'a> {
    /// The served resource.
    pub info: &'a ResourceInfo,
    /// The field manager.
    pub manager: &'a str,
    /// `Some("status")` for the status subresource.
    pub subresource: Option<&'a str>,
    /// The server's current time (RFC 3339, seconds).
    pub now: &'a str,
}

impl Writer<'_> {
    /// Fields the endpoint's strategy resets, which nobody owns.
    fn ignored(&self) -> &'static Set {
        static SPEC: std::sync::OnceLock<Set> = std::sync::OnceLock::new();
        static STATUS: std::sync::OnceLock<Set> = std::sync::OnceLock::new();
        static NOTHING: std::sync::OnceLock<Set> = std::sync::OnceLock::new();
        let (cell, top) = match self.subresource {
            Some("status") => (&SPEC, Some("spec")),
            _ if self.info.has_status => (&STATUS, Some("status")),
            _ => (&NOTHING, None),
        };
        cell.get_or_init(|| {
            let mut set = Set::new();
            if let Some(top) = top {
                set.insert(&[field(top)]);
            }
            set
        })
    }

    fn identity(&self, operation: Operation) -> Identity {
        Identity::new(
            self.manager,
            operation,
            &self.info.api_version(),
            self.subresource,
        )
    }
}

fn field(name: &str) -> PathElement {
    PathElement::Field(name.into())
}

/// The server-owned fields stripped from every manager's set (`stripmeta.go`).
fn strip_set() -> &'static Set {
    static STRIP: std::sync::OnceLock<Set> = std::sync::OnceLock::new();
    STRIP.get_or_init(build_strip_set)
}

fn build_strip_set() -> Set {
    let mut set = Set::new();
    set.insert(&[field("apiVersion")]);
    set.insert(&[field("kind")]);
    set.insert(&[field("metadata")]);
    for name in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        set.insert(&[field("metadata"), field(name)]);
    }
    set
}

/// The object without `metadata.managedFields` (an absent object is `{}`).
fn without_managed_fields(object: Option<&Value>) -> Value {
    let mut v = object.cloned().unwrap_or_else(|| Value::Object(Map::new()));
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    v
}

/// Writes `entries` as `object`'s `managedFields` (none: the field goes); returns their sets as
/// written, to keep with the object.
fn set_managed_fields(object: &mut Value, entries: Vec<Entry>) -> Option<managed::Decoded> {
    let meta = object
        .as_object_mut()?
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()?;
    if entries.is_empty() {
        meta.remove("managedFields");
        return None;
    }
    let (list, decoded) = managed::encode_owned(entries);
    meta.insert("managedFields".into(), list);
    Some(decoded)
}

fn drop_empty(entries: &mut Vec<Entry>) {
    entries.retain(|e| !e.set().is_empty());
}

fn strip(entries: &mut Vec<Entry>) {
    let strip = strip_set();
    for e in entries.iter_mut() {
        e.remove(strip);
    }
    drop_empty(entries);
}

/// A field another manager owns that a write would change.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The owner.
    pub manager: Identity,
    /// The field.
    pub path: Path,
}

/// The 409 an apply gets for conflicts, with the real message and causes.
pub fn conflict_error(conflicts: &[Conflict]) -> ApiError {
    let causes: Vec<StatusCause> = conflicts
        .iter()
        .map(|c| StatusCause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with {}", c.manager.describe()),
            field: path_string(&c.path),
        })
        .collect();
    let message = match conflicts {
        [only] => format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            only.manager.describe(),
            path_string(&only.path)
        ),
        _ => {
            let mut managers: Vec<Identity> = Vec::new();
            for c in conflicts {
                if !managers.contains(&c.manager) {
                    managers.push(c.manager.clone());
                }
            }
            managed::sort_identities(&mut managers);
            let mut lines = Vec::new();
            for m in &managers {
                lines.push(format!("conflicts with {}:", m.describe()));
                for c in conflicts.iter().filter(|c| &c.manager == m) {
                    lines.push(format!("- {}", path_string(&c.path)));
                }
            }
            format!(
                "Apply failed with {} conflicts: {}",
                conflicts.len(),
                lines.join("\n")
            )
        }
    };
    let mut err = ApiError::new(409, "Conflict", message);
    err.causes = causes;
    err
}

/// structured-merge-diff's `update`: what `live` → `new` takes from the managers other than
/// `skip`. Conflicts (fields others own that changed) are an error unless `force`; otherwise
/// they, and every removed field, leave the other managers' sets.
fn take_over(
    schema: &TypeSchema,
    live: &Value,
    new: &Value,
    entries: &mut Vec<Entry>,
    skip: Option<&Identity>,
    ignored: &Set,
    force: bool,
) -> Result<typed::Comparison, Vec<Conflict>> {
    let mut cmp = typed::compare(schema, schema.root, live, new);
    cmp.exclude(ignored);
    settle(&cmp, entries, skip, force)?;
    Ok(cmp)
}

/// The end of [`take_over`] for a comparison already made: conflicts with the managers other
/// than `skip`, or (none, or `force`) their sets without what changed or went.
fn settle(
    cmp: &typed::Comparison,
    entries: &mut Vec<Entry>,
    skip: Option<&Identity>,
    force: bool,
) -> Result<(), Vec<Conflict>> {
    // A create, or an object only the writer manages: nobody else can lose anything.
    if entries.iter().all(|e| Some(&e.id) == skip) {
        drop_empty(entries);
        return Ok(());
    }
    // Forced, the conflicts would only be dropped: they are not looked for.
    if !force {
        let mut changed = cmp.modified.clone();
        changed.add(&cmp.added);
        let mut conflicts = Vec::new();
        for e in entries.iter().filter(|e| Some(&e.id) != skip) {
            let owned = e.set().intersection(&changed);
            for path in owned.paths() {
                conflicts.push(Conflict {
                    manager: e.id.clone(),
                    path,
                });
            }
        }
        if !conflicts.is_empty() {
            conflicts.sort_by(|a, b| a.manager.sort_key().cmp(&b.manager.sort_key()));
            return Err(conflicts);
        }
    }
    for e in entries.iter_mut().filter(|e| Some(&e.id) != skip) {
        e.remove(&cmp.modified);
        e.remove(&cmp.added);
        e.remove(&cmp.removed);
    }
    drop_empty(entries);
    Ok(())
}

/// The managed fields the live object starts from for an update: those the client sent (main
/// endpoint only), else the stored ones. `None` when the object is not tracked (it exists and has
/// none), as the real server's skip of untracked objects does. `sent` is what `new` carried;
/// `known` the stored object's decoded sets, if kept.
fn base_entries(
    writer: &Writer<'_>,
    live: Option<&Value>,
    sent: Option<Value>,
    known: Option<(&managed::Decoded, bool)>,
) -> Option<Vec<Entry>> {
    let stored = live.and_then(|l| l.pointer("/metadata/managedFields"));
    let known = known
        .zip(stored)
        .map(|((decoded, exact), list)| managed::Known {
            list,
            decoded,
            exact,
        });
    if writer.subresource.is_none() {
        if let Some(sent) = sent {
            if let Ok(entries) = managed::decode_known(sent, known) {
                if !entries.is_empty() {
                    return Some(entries);
                }
            }
        }
    }
    let stored = stored
        .map_or(Ok(Vec::new()), |list| {
            managed::decode_known(list.clone(), known)
        })
        .unwrap_or_default();
    if stored.is_empty() && live.is_some() {
        return None;
    }
    Some(stored)
}

/// Records a create, update or non-apply patch in `new`'s `managedFields` (`live` is the stored
/// object, `None` on create).
pub fn track_update(writer: &Writer<'_>, live: Option<&Value>, new: &mut Value) {
    track_update_known(writer, live, None, None, new);
}

/// [`track_update`] given the decoded sets of `live`'s `managedFields` when they were kept
/// (see [`managed::Decoded`]; with whether they are known to be exactly those of `live`'s
/// list, see [`managed::Known::exact`]) and, when the caller has them, `live`'s [`unchanged_members`]
/// in `new`; returns the sets of the `managedFields` written into `new`, which it leaves
/// Go-encoded when its kind is built in (`rules::go_encoding::encode_kind`).
pub fn track_update_known(
    writer: &Writer<'_>,
    live: Option<&Value>,
    known: Option<(&managed::Decoded, bool)>,
    unchanged: Option<&[&str]>,
    new: &mut Value,
) -> Option<managed::Decoded> {
    let sent = new
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.remove("managedFields"));
    // The real field manager sees both objects through the Go type
    // (`DefaultUnstructuredConverter.ToUnstructured`): an empty `omitempty` field is not there
    // (a sent `binaryData: {}` changes nothing and is owned by nobody), a field without
    // `omitempty` is there with its zero value, and a created object is compared with the
    // kind's zero value. The stored `live` object already reads that way. A built-in object
    // leaves Go-encoded whatever the outcome, as the store encodes it (a writer may tell the
    // store so: `store::Decision::encoded`).
    //
    // The members the write leaves as the stored object has them are neither encoded nor
    // compared again: `live` is stored, so Go-encoded, and encoding an equal value gives it back.
    let found;
    let unchanged = match unchanged {
        Some(unchanged) => unchanged,
        None => {
            found = unchanged_members(live, new);
            &found[..]
        }
    };
    let unchanged = |key: &str| unchanged.contains(&key);
    if !writer.info.custom {
        crate::rules::go_encoding::encode_kind_except(
            &writer.info.group,
            &writer.info.kind,
            new,
            unchanged,
        );
    }
    let Some(mut entries) = base_entries(writer, live, sent, known) else {
        return set_managed_fields(new, Vec::new());
    };
    let zero;
    let mut live = live;
    if !writer.info.custom && live.is_none() {
        zero = crate::rules::go_encoding::zero_object(&writer.info.group, &writer.info.kind);
        live = zero.as_ref();
    }
    let schema = schema::schema_for(writer.info);
    // As `take_over` on both objects without their managedFields, without copying them.
    let mut cmp = typed::compare_without_managed_fields(&schema, schema.root, live, new, unchanged);
    cmp.exclude(writer.ignored());
    // Everyone else loses what changed or went (forced: no conflicts are looked for, so this
    // cannot fail). The writer's own entry loses only what went: what it changed, it owns again
    // below, so taking it away first would only copy and re-encode its set.
    let id = writer.identity(Operation::Update);
    let _ = settle(&cmp, &mut entries, Some(&id), true);
    if let Some(own) = entries.iter_mut().find(|e| e.id == id) {
        own.remove(&cmp.removed);
    }
    let mut set = cmp.modified.union_owned(cmp.added);
    set.remove(strip_set());
    strip(&mut entries);
    if !set.is_empty() {
        match entries.iter_mut().find(|e| e.id == id) {
            Some(existing) => {
                existing.add(&set);
                existing.time = Some(writer.now.to_string());
                existing.api_version = writer.info.api_version();
            }
            None => entries.push(Entry::new(
                id,
                writer.info.api_version(),
                Some(writer.now.to_string()),
                set,
            )),
        }
    }
    set_managed_fields(new, entries)
}

/// The `managedFields` a create of `object` gets (`None`: none) and their sets, as
/// [`track_update_known`] of a copy of it without a live object gives them (`object` itself is
/// left as it is). For a built-in kind, an object with the same fields as one this thread
/// created before takes that create's set (`created.rs`); the client's own `managedFields` are
/// always read.
pub fn track_create(
    writer: &Writer<'_>,
    object: &Value,
) -> (Option<Value>, Option<managed::Decoded>) {
    let sent = object.pointer("/metadata/managedFields").is_some();
    let kept = !writer.info.custom && writer.subresource.is_none() && !sent;
    let track = || {
        let mut tracked = object.clone();
        let written = track_update_known(writer, None, None, None, &mut tracked);
        let managed = tracked
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .and_then(|meta| meta.remove("managedFields"));
        (managed, written)
    };
    if let Some(owned) = kept.then(|| created::find(writer.info, object)).flatten() {
        let found = created_entries(writer, owned);
        if cfg!(debug_assertions) {
            let (managed, _) = track();
            assert_eq!(found.0, managed, "a kept create's set is not the object's");
        }
        return found;
    }
    let (managed, written) = track();
    if kept {
        let fields = managed
            .as_ref()
            .and_then(|list| list.get(0)?.get("fieldsV1").cloned());
        let owned = match (written.as_ref().and_then(managed::Decoded::only), fields) {
            (Some((fingerprint, set)), Some(fields)) => {
                Some(Some((set.clone(), fields, fingerprint)))
            }
            (None, None) if written.is_none() => Some(None),
            _ => None,
        };
        if let Some(owned) = owned {
            created::keep(writer.info, object, owned);
        }
    }
    (managed, written)
}

/// The `managedFields` of a created object whose creator owns what a kept create gave.
fn created_entries(
    writer: &Writer<'_>,
    owned: created::Owned,
) -> (Option<Value>, Option<managed::Decoded>) {
    let Some((set, fields, fingerprint)) = owned else {
        return (None, None);
    };
    let entry = Entry::with_fields_v1(
        writer.identity(Operation::Update),
        writer.info.api_version(),
        Some(writer.now.to_string()),
        set,
        (fields, fingerprint),
    );
    let (list, decoded) = managed::encode_owned(vec![entry]);
    (Some(list), Some(decoded))
}

/// The top-level members other than `metadata` that `new` holds exactly as `live` does.
pub fn unchanged_members<'a>(live: Option<&'a Value>, new: &Value) -> Vec<&'a str> {
    let (Some(live), Some(new)) = (live.and_then(Value::as_object), new.as_object()) else {
        return Vec::new();
    };
    live.iter()
        .filter(|(key, value)| {
            key.as_str() != "metadata"
                && new
                    .get(key.as_str())
                    .is_some_and(|sent| crate::store::value_eq::equal(value, sent))
        })
        .map(|(key, _)| key.as_str())
        .collect()
}

/// What an apply produced.
#[derive(Debug)]
pub struct Applied {
    /// The object to write: the merged object with its new `managedFields` (the live object,
    /// with new `managedFields`, when the configuration changes nothing else).
    pub object: Value,
}

/// Applies `config` for `writer.manager` to `live` (`None`: the object does not exist yet).
///
/// The caller has checked the request (manager, kind, no `managedFields` in the configuration);
/// the result still goes through the kind's create or update rules.
pub fn apply(
    writer: &Writer<'_>,
    live: Option<&Value>,
    config: &Value,
    force: bool,
) -> Result<Applied, ApiError> {
    let schema = schema::schema_for(writer.info);
    let errors = typed::validate(&schema, schema.root, config);
    if !errors.is_empty() {
        let detail = match errors.as_slice() {
            [one] => one.clone(),
            many => format!(
                "errors:\n{}",
                many.iter()
                    .map(|e| format!("  {e}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        };
        return Err(ApiError::plain_500(format!(
            "failed to create typed patch object ({}): {detail}",
            object_gvknn(writer.info, config)
        )));
    }
    let mut entries = managed::decode(live.and_then(|l| l.pointer("/metadata/managedFields")))
        .map_err(|e| ApiError::plain_500(format!("failed to decode managed fields: {e}")))?;
    let live_v = without_managed_fields(live);
    let merged = typed::merge(&schema, schema.root, &live_v, config)
        .map_err(|e| ApiError::plain_500(format!("failed to merge config: {e}")))?;
    let id = writer.identity(Operation::Apply);
    let ignored = writer.ignored();
    let set = typed::to_field_set(&schema, schema.root, config).recursive_difference(ignored);
    let last = entries.iter().find(|e| e.id == id).map(|e| e.set().clone());
    let applied = Entry::new(
        id.clone(),
        writer.info.api_version(),
        entries
            .iter()
            .find(|e| e.id == id)
            .and_then(|e| e.time.clone()),
        set,
    );
    match entries.iter_mut().find(|e| e.id == id) {
        Some(e) => *e = applied,
        None => entries.push(applied),
    }
    let pruned = match &last {
        Some(last) if !last.is_empty() => prune(&schema, &merged, &entries, last),
        _ => merged,
    };
    take_over(
        &schema,
        &live_v,
        &pruned,
        &mut entries,
        Some(&id),
        ignored,
        force,
    )
    .map_err(|conflicts| conflict_error(&conflicts))?;
    let changed = pruned != live_v;
    strip(&mut entries);
    if changed {
        if let Some(e) = entries.iter_mut().find(|e| e.id == id) {
            e.time = Some(writer.now.to_string());
        }
    }
    let mut object = if changed { pruned } else { live_v };
    set_managed_fields(&mut object, entries);
    Ok(Applied { object })
}

/// Removes what the applier owned last time and no longer applies, unless another manager owns
/// it (structured-merge-diff's `prune`, `addBackOwnedItems`, `addBackDanglingItems`).
fn prune(schema: &TypeSchema, merged: &Value, entries: &[Entry], last: &Set) -> Value {
    let root = schema.root;
    let named = |s: &Set| typed::ensure_named_fields_are_members(schema, root, s);
    let last_named = named(last);
    let pruned = typed::remove_items(schema, root, merged, &last_named);
    // Add back what anyone (the applier's new configuration included) owns.
    let managed = entries.iter().fold(Set::new(), |acc, e| acc.union(e.set()));
    let merged_set = named(&typed::to_field_set(schema, root, merged));
    let pruned_set = named(&typed::to_field_set(schema, root, &pruned));
    let remove = merged_set.difference(&pruned_set.union(&named(&managed)));
    let pruned = typed::remove_items(schema, root, merged, &remove);
    // Only what the applier owned before may go.
    let pruned_set = named(&typed::to_field_set(schema, root, &pruned));
    let remove = merged_set.difference(&pruned_set).intersection(&last_named);
    typed::remove_items(schema, root, merged, &remove)
}

/// `group/version, Kind=kind namespace/name` of an object, as field manager errors name it.
fn object_gvknn(info: &ResourceInfo, object: &Value) -> String {
    let meta = |k: &str| {
        object
            .pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    format!(
        "{}/{}, Kind={} {}/{}",
        info.group,
        info.version,
        info.kind,
        meta("namespace"),
        meta("name")
    )
}

/// The manager of a write without `fieldManager`: the user agent up to its first `/`, without
/// unprintable characters, at most [`FIELD_MANAGER_MAX_LENGTH`] bytes.
pub fn manager_from_user_agent(user_agent: &str) -> String {
    let prefix = user_agent.split('/').next().unwrap_or_default();
    let mut out = String::new();
    for c in prefix.chars().filter(|c| is_printable(*c)) {
        if out.len() + c.len_utf8() > FIELD_MANAGER_MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    out
}

/// Go's `unicode.IsPrint` for the characters that matter here: no control characters, and the
/// only space allowed is U+0020.
fn is_printable(c: char) -> bool {
    !c.is_control() && (c == ' ' || !c.is_whitespace())
}

/// Checks a `fieldManager` (`ValidateFieldManager`): at most 128 bytes, printable. Returns the
/// causes of a 422.
pub fn validate_field_manager(manager: &str) -> Vec<StatusCause> {
    let mut causes = Vec::new();
    let quoted = crate::rules::validation::go_quote(manager);
    if manager.len() > FIELD_MANAGER_MAX_LENGTH {
        causes.push(StatusCause {
            reason: "FieldValueTooLong".into(),
            message: format!("Too long: may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"),
            field: "fieldManager".into(),
        });
    }
    for (i, c) in manager.char_indices() {
        if !is_printable(c) {
            causes.push(StatusCause {
                reason: "FieldValueInvalid".into(),
                message: format!(
                    "Invalid value: {quoted}: invalid character U+{:04X} (at position {i})",
                    c as u32
                ),
                field: "fieldManager".into(),
            });
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::builtin_resources;
    use serde_json::json;
    use std::sync::Arc;

    fn info(plural: &str) -> ResourceInfo {
        builtin_resources()
            .into_iter()
            .find(|r| r.plural == plural)
            .unwrap()
    }

    fn writer<'a>(info: &'a ResourceInfo, manager: &'a str, now: &'a str) -> Writer<'a> {
        Writer {
            info,
            manager,
            subresource: None,
            now,
        }
    }

    #[test]
    fn a_create_with_the_same_fields_takes_the_kept_set() {
        let info = info("configmaps");
        let writer = writer(&info, "m", "2026-01-01T00:00:00Z");
        let map = |name: &str, label: &str, key: &str| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"l": label}}, "data": {key: "1"}})
        };
        let set_of = |decoded: &Option<managed::Decoded>| {
            decoded
                .as_ref()
                .and_then(managed::Decoded::only)
                .map(|(_, set)| set.clone())
        };
        let (first, first_sets) = track_create(&writer, &map("a", "1", "x"));
        let (same, same_sets) = track_create(&writer, &map("b", "2", "x"));
        let (other, other_sets) = track_create(&writer, &map("c", "1", "y"));
        let (Some(first_set), Some(same_set), Some(other_set)) =
            (set_of(&first_sets), set_of(&same_sets), set_of(&other_sets))
        else {
            panic!("each create has one entry");
        };
        assert!(Arc::ptr_eq(&first_set, &same_set), "the kept set, shared");
        assert_eq!(same, first);
        assert!(!Arc::ptr_eq(&first_set, &other_set));
        assert_ne!(other, first);
        assert_eq!(
            other
                .as_ref()
                .map(|list| list[0]["fieldsV1"]["f:data"].clone()),
            Some(json!({".": {}, "f:y": {}}))
        );
    }

    /// The comparison without managedFields gives what comparing stripped copies gives.
    #[rstest::rstest]
    #[case::create(None, json!({"metadata": {"name": "a", "managedFields": [{"manager": "m"}]}, "data": {"x": "1"}}))]
    #[case::change(
        Some(json!({"metadata": {"name": "a", "managedFields": [{"manager": "m"}], "labels": {"l": "1"}}, "data": {"x": "1", "y": "2"}})),
        json!({"metadata": {"name": "a", "labels": {"l": "2", "n": "3"}}, "data": {"x": "1"}})
    )]
    #[case::only_managed_fields(
        Some(json!({"metadata": {"managedFields": [{"manager": "m"}]}, "data": {}})),
        json!({"metadata": {}, "data": {"x": "1"}})
    )]
    #[case::metadata_appears(
        Some(json!({"data": {"x": "1"}})),
        json!({"metadata": {"managedFields": []}, "data": {"x": "1"}})
    )]
    #[case::same(
        Some(json!({"metadata": {"name": "a", "managedFields": [{"manager": "m"}]}, "data": {"x": "1"}})),
        json!({"metadata": {"name": "a", "managedFields": [{"manager": "n"}]}, "data": {"x": "1"}})
    )]
    #[case::not_objects(Some(json!({})), json!({}))]
    fn comparing_without_managed_fields_equals_comparing_copies(
        #[case] live: Option<Value>,
        #[case] new: Value,
    ) {
        let info = info("configmaps");
        let schema = schema::schema_for(&info);
        let expected = typed::compare(
            &schema,
            schema.root,
            &without_managed_fields(live.as_ref()),
            &without_managed_fields(Some(&new)),
        );
        let actual = typed::compare_without_managed_fields(
            &schema,
            schema.root,
            live.as_ref(),
            &new,
            |_| false,
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn in_place_set_operations_equal_the_copying_ones() {
        let set = |paths: &[&[&str]]| {
            let mut s = Set::new();
            for p in paths {
                let p: Vec<PathElement> = p.iter().map(|f| field(f)).collect();
                s.insert(&p);
            }
            s
        };
        let a = set(&[&["a"], &["a", "b"], &["a", "c", "d"], &["e"], &["f", "g"]]);
        let b = set(&[&["a"], &["a", "c", "d"], &["f"], &["x", "y"]]);
        let mut removed = a.clone();
        removed.remove(&b);
        assert_eq!(removed, a.difference(&b));
        let mut removed = a.clone();
        removed.remove_recursive(&b);
        assert_eq!(removed, a.recursive_difference(&b));
        let mut added = a.clone();
        added.add(&b);
        assert_eq!(added, a.union(&b));
    }

    fn entries(object: &Value) -> Vec<(String, String, Value)> {
        object["metadata"]["managedFields"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|e| {
                (
                    e["manager"].as_str().unwrap().to_string(),
                    e["operation"].as_str().unwrap().to_string(),
                    e["fieldsV1"].clone(),
                )
            })
            .collect()
    }

    fn cm(data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d"}, "data": data})
    }

    #[test]
    fn create_and_update_track_what_each_writer_changed() {
        let cms = info("configmaps");
        let mut created = cm(json!({"a": "1"}));
        track_update(&writer(&cms, "kubectl-create", "t1"), None, &mut created);
        assert_eq!(
            entries(&created),
            vec![(
                "kubectl-create".into(),
                "Update".into(),
                json!({"f:data": {".": {}, "f:a": {}}})
            )]
        );
        assert_eq!(created["metadata"]["managedFields"][0]["time"], "t1");
        // Another manager changes `a` and adds a label: it takes `a` over.
        let mut labelled = created.clone();
        labelled["data"]["a"] = json!("2");
        labelled["metadata"]["labels"] = json!({"x": "y"});
        labelled["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        track_update(
            &writer(&cms, "kubectl-edit", "t2"),
            Some(&created),
            &mut labelled,
        );
        let e = entries(&labelled);
        assert_eq!(
            e[0].2,
            json!({"f:data": {}}),
            "kubectl-create keeps the map itself"
        );
        assert_eq!(
            e[1].2,
            json!({"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:x": {}}}})
        );
        // Removing the label leaves kubectl-label nothing; its entry goes.
        let mut label = labelled.clone();
        label["metadata"]["labels"]["z"] = json!("1");
        track_update(
            &writer(&cms, "kubectl-label", "t3"),
            Some(&labelled),
            &mut label,
        );
        assert_eq!(entries(&label).len(), 3);
        let mut unlabel = label.clone();
        unlabel["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("z");
        track_update(
            &writer(&cms, "kubectl-label", "t4"),
            Some(&label),
            &mut unlabel,
        );
        assert!(entries(&unlabel)
            .iter()
            .all(|(m, _, _)| m != "kubectl-label"));
    }

    /// A write that leaves a member of the stored pod as it was neither re-encodes nor compares
    /// it; a member it changes is still Go-encoded (its empty `omitempty` map dropped) and owned.
    #[test]
    fn unchanged_members_are_kept_and_changed_ones_encoded_and_owned() {
        let pods = info("pods");
        let mut live = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "d"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Running"}
        });
        track_update(&writer(&pods, "create", "t1"), None, &mut live);
        // Only an annotation: spec and status stay the stored ones, nobody gains them.
        let mut annotated = live.clone();
        annotated["metadata"]["annotations"] = json!({"a": "1"});
        track_update(
            &writer(&pods, "annotate", "t2"),
            Some(&live),
            &mut annotated,
        );
        assert_eq!(annotated["spec"], live["spec"]);
        assert_eq!(annotated["status"], live["status"]);
        let owned = |object: &Value, manager: &str| {
            entries(object)
                .into_iter()
                .find(|(m, _, _)| m == manager)
                .map(|(_, _, fields)| fields)
        };
        assert_eq!(
            owned(&annotated, "annotate"),
            Some(json!({"f:metadata": {"f:annotations": {".": {}, "f:a": {}}}}))
        );
        // The spec changes, with an empty map Go leaves out: encoded, and the change owned.
        let mut edited = annotated.clone();
        edited["spec"]["containers"][0]["image"] = json!("nginx:2");
        edited["spec"]["nodeSelector"] = json!({});
        track_update(&writer(&pods, "edit", "t3"), Some(&annotated), &mut edited);
        assert_eq!(edited["spec"].get("nodeSelector"), None);
        assert_eq!(edited["spec"]["containers"][0]["image"], "nginx:2");
        assert_eq!(edited["status"], live["status"]);
        assert_eq!(
            owned(&edited, "edit"),
            Some(json!({"f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {"f:image": {}}}}}))
        );
    }

    /// One write of `manager` at `now` from `live` to `new`, tracked with the sets kept from the
    /// previous write (`known`) and without: both give the same object; returns it and its sets.
    /// `exact`: `known` was kept for `live` itself (the sets are also taken unchecked, see
    /// [`managed::Known::exact`]; debug builds assert that they match).
    fn tracked_both_ways(
        manager: &str,
        now: &str,
        live: &Value,
        new: &Value,
        known: Option<&managed::Decoded>,
        exact: bool,
    ) -> (Value, Option<managed::Decoded>) {
        let cms = info("configmaps");
        let mut plain = new.clone();
        track_update(&writer(&cms, manager, now), Some(live), &mut plain);
        let mut decoded = None;
        for exact in [false, exact] {
            let mut kept = new.clone();
            decoded = track_update_known(
                &writer(&cms, manager, now),
                Some(live),
                known.map(|k| (k, exact)),
                None,
                &mut kept,
            );
            assert_eq!(kept, plain, "{manager} at {now}, exact: {exact}");
        }
        (plain, decoded)
    }

    /// A ConfigMap of `data` as `create` wrote it at `t1`, with the sets that write kept.
    fn created_with_sets(data: Value) -> (Value, Option<managed::Decoded>) {
        let cms = info("configmaps");
        let mut created = cm(data);
        let decoded = track_update_known(
            &writer(&cms, "create", "t1"),
            None,
            None,
            None,
            &mut created,
        );
        (created, decoded)
    }

    #[test]
    fn kept_sets_give_what_decoding_gives() {
        let (created, decoded) = created_with_sets(json!({"a": "1", "b": "1"}));
        assert_eq!(decoded.as_ref().map(managed::Decoded::len), Some(1));
        // A client sends back what it read with one change; another sends no managedFields.
        let mut edited = created.clone();
        edited["data"]["a"] = json!("2");
        let (edited, decoded) =
            tracked_both_ways("edit", "t2", &created, &edited, decoded.as_ref(), true);
        assert_eq!(entries(&edited).len(), 2);
        let mut bare = edited.clone();
        bare["data"]["b"] = json!("3");
        bare["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        let (bare, decoded) =
            tracked_both_ways("edit", "t3", &edited, &bare, decoded.as_ref(), true);
        assert_eq!(
            entries(&bare)[1].2,
            json!({"f:data": {"f:a": {}, "f:b": {}}})
        );
        // A client that rewrites an entry's fields: its own fields count, not the kept ones.
        let mut forged = bare.clone();
        forged["metadata"]["managedFields"][0]["fieldsV1"] = json!({"f:data": {"f:z": {}}});
        forged["data"]["c"] = json!("1");
        let (forged, _) = tracked_both_ways("edit", "t4", &bare, &forged, decoded.as_ref(), true);
        assert_eq!(entries(&forged)[0].2, json!({"f:data": {"f:z": {}}}));
        // The writer changes a field it owns again: it keeps it, with the new time.
        let mut again = forged.clone();
        again["data"]["c"] = json!("2");
        let (again, _) = tracked_both_ways("edit", "t6", &forged, &again, None, true);
        let own = &again["metadata"]["managedFields"][1];
        assert_eq!(own["time"], "t6");
        assert_eq!(
            own["fieldsV1"],
            json!({"f:data": {"f:a": {}, "f:b": {}, "f:c": {}}})
        );
        // Sets kept for another version of the object are not taken for this one (unless
        // said to be exact, which debug builds refuse: see the next test).
        let stale = decoded.as_ref();
        let mut again = created.clone();
        again["data"]["b"] = json!("9");
        tracked_both_ways("edit", "t5", &created, &again, stale, false);
    }

    /// Sets said to be exact for a list they were not encoded to are a bug in the caller, which
    /// debug builds (every test run) catch where the sets are taken.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "managedFields said to be exact differ from their sets")]
    fn sets_wrongly_said_to_be_exact_are_caught_in_debug_builds() {
        let (created, decoded) = created_with_sets(json!({"a": "1"}));
        let mut other = created.clone();
        other["metadata"]["managedFields"][0]["fieldsV1"] = json!({"f:data": {"f:z": {}}});
        let sent = other.clone();
        tracked_both_ways("edit", "t2", &other, &sent, decoded.as_ref(), true);
    }

    #[test]
    fn apply_conflicts_force_share_and_prune() {
        let cms = info("configmaps");
        let a1 = apply(
            &writer(&cms, "a", "t1"),
            None,
            &cm(json!({"x": "1", "y": "1"})),
            false,
        )
        .unwrap()
        .object;
        assert_eq!(a1["data"], json!({"x": "1", "y": "1"}));
        assert_eq!(
            entries(&a1),
            vec![(
                "a".into(),
                "Apply".into(),
                json!({"f:data": {"f:x": {}, "f:y": {}}})
            )]
        );
        // b applies x with another value: conflict.
        let err = apply(
            &writer(&cms, "b", "t2"),
            Some(&a1),
            &cm(json!({"x": "2"})),
            false,
        )
        .unwrap_err();
        assert_eq!(err.code, 409);
        assert_eq!(
            err.message,
            "Apply failed with 1 conflict: conflict with \"a\": .data.x"
        );
        assert_eq!(err.causes[0].reason, "FieldManagerConflict");
        assert_eq!(err.causes[0].field, ".data.x");
        assert_eq!(err.causes[0].message, "conflict with \"a\"");
        // The same value is shared.
        let shared = apply(
            &writer(&cms, "b", "t2"),
            Some(&a1),
            &cm(json!({"x": "1"})),
            false,
        )
        .unwrap()
        .object;
        assert_eq!(entries(&shared).len(), 2);
        // a drops x: b still owns it, so it stays; a drops y: nobody owns it, so it goes.
        let mut without_data = cm(json!({}));
        without_data.as_object_mut().unwrap().remove("data");
        let a2 = apply(
            &writer(&cms, "a", "t3"),
            Some(&shared),
            &without_data,
            false,
        )
        .unwrap()
        .object;
        assert_eq!(a2["data"], json!({"x": "1"}));
        // Force moves ownership.
        let forced = apply(
            &writer(&cms, "c", "t4"),
            Some(&a2),
            &cm(json!({"x": "9"})),
            true,
        )
        .unwrap()
        .object;
        assert_eq!(forced["data"]["x"], "9");
        let e = entries(&forced);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].0, "c");
    }

    #[test]
    fn reapplying_the_same_configuration_changes_nothing() {
        let deployments = info("deployments");
        let config = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "n", "labels": {"app": "x"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}},
                "template": {"metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}}}});
        let w = writer(&deployments, "m", "t1");
        let first = apply(&w, None, &config, false).unwrap().object;
        let w2 = writer(&deployments, "m", "t2");
        let second = apply(&w2, Some(&first), &config, false).unwrap().object;
        assert_eq!(first, second, "idempotent, time included");
    }

    #[test]
    fn multiple_conflicts_are_grouped_by_manager() {
        let conflicts = vec![
            Conflict {
                manager: Identity::new("z", Operation::Update, "v1", None),
                path: vec![field("data"), field("a")],
            },
            Conflict {
                manager: Identity::new("m", Operation::Apply, "v1", None),
                path: vec![field("data"), field("b")],
            },
        ];
        let err = conflict_error(&conflicts);
        assert_eq!(
            err.message,
            "Apply failed with 2 conflicts: conflicts with \"m\":\n- .data.b\nconflicts with \"z\" using v1:\n- .data.a"
        );
        assert_eq!(err.causes.len(), 2);
    }

    #[test]
    fn user_agents_become_managers() {
        assert_eq!(
            manager_from_user_agent("kubectl/v1.32.0 (linux/amd64)"),
            "kubectl"
        );
        assert_eq!(manager_from_user_agent("a\u{7}b/1"), "ab");
        assert_eq!(manager_from_user_agent(&"x".repeat(200)).len(), 128);
        assert!(validate_field_manager("ok").is_empty());
        assert_eq!(validate_field_manager(&"x".repeat(129)).len(), 1);
    }
}
