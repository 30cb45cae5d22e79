//! Custom resources across the versions of their CRD: objects are written at the storage
//! version and served at the version each request names.
//!
//! A real server keeps one copy of a custom resource in etcd, encoded at the CRD's storage
//! version when it was written (objects written before a storage version change keep the old
//! one), and converts it on every read and write (`crdConversionRESTOptionsGetter` and
//! `schemaCoercingConverter` in the apiextensions server's `customresource_handler.go`). With
//! `conversion.strategy: None` (the `nopConverter`) converting is setting `apiVersion`, after
//! which the target version's schema prunes what it does not declare. Reading from storage also
//! defaults with the schema of the version the object was stored at.
//!
//! Here the store's bytes carry the version they were written at as their `apiVersion`, so a
//! read at that same version (the common case, and every read of a one-version CRD) sends the
//! bytes as they are; only a read at another version parses and converts, and a read of an
//! object written before the schema of its version last changed decodes it with the present
//! one (see [`crate::registry::crd_storage`]).
//!
//! Built-in kinds served at more than one version are stored at one of them and converted by
//! hand-written rules: `autoscaling/v1` HorizontalPodAutoscalers are views of the stored
//! `autoscaling/v2` ones ([`crate::rules::autoscaling::v1_conversion`]). A body at the other
//! version is converted when it is decoded ([`from_builtin_view`]), so the kind's rules always
//! see the stored version; what is sent is converted last ([`to_builtin_view`]).

use std::borrow::Cow;

use bytes::Bytes;
use serde_json::Value;

use crate::error::ApiError;
use crate::resource::{ConversionWebhook, ResourceInfo};
use crate::rules::schema;

/// Whether stored bytes of a custom resource are at the version `info` serves, read from the
/// leading `apiVersion` the store's encoding puts first (sorted keys); bytes in another shape
/// are answered by parsing.
pub fn bytes_at_version(info: &ResourceInfo, stored: &[u8]) -> Option<bool> {
    const PREFIX: &[u8] = b"{\"apiVersion\":\"";
    let rest = stored.strip_prefix(PREFIX)?;
    let end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    if rest[end] == b'\\' {
        return None;
    }
    let stored_version = &rest[..end];
    let group = info.group.as_bytes();
    let version = info.version.as_bytes();
    Some(
        stored_version.len() == group.len() + 1 + version.len()
            && stored_version.starts_with(group)
            && stored_version[group.len()] == b'/'
            && stored_version.ends_with(version),
    )
}

/// The conversion webhook of a custom resource whose CRD converts through one.
pub fn webhook_of(info: &ResourceInfo) -> Option<&ConversionWebhook> {
    info.versions
        .as_ref()
        .filter(|_| info.custom)
        .and_then(|v| v.webhook.as_ref())
}

/// The stored bytes of an object as served at `info`'s version: the same bytes when they are
/// at that version (or the resource is built-in), else the converted object, encoded. Objects
/// of a CRD with a conversion webhook are left as stored: what carries them is converted after
/// the fact (see [`crate::conversion_webhook`]).
pub fn served_bytes(info: &ResourceInfo, stored: &Bytes) -> Bytes {
    if !info.custom {
        return stored.clone();
    }
    let schema_changed = info
        .versions
        .as_ref()
        .is_some_and(|v| v.epoch.any_schema_changed());
    if !schema_changed
        && (webhook_of(info).is_some() || bytes_at_version(info, stored) == Some(true))
    {
        return stored.clone();
    }
    let Ok(mut object) = crate::store::json::from_slice(stored) else {
        return stored.clone();
    };
    if !changes_on_read(info, &object) {
        return stored.clone();
    }
    to_served_in_place(info, &mut object);
    serde_json::to_vec(&object)
        .map(Bytes::from)
        .unwrap_or_else(|_| stored.clone())
}

/// A stored object as served at `info`'s version (borrowed when nothing changes), for a write
/// to decide on. Through a conversion webhook, the answer comes from the request's scope (a
/// missing one fails the attempt until it is there).
pub fn to_served<'a>(info: &ResourceInfo, stored: &'a Value) -> Result<Cow<'a, Value>, ApiError> {
    let target = info.api_version();
    if !needs_conversion(info, stored, &target) || outside_requests(info) {
        if !written_before_schema(info, stored) {
            return Ok(Cow::Borrowed(stored));
        }
        let mut object = stored.clone();
        before_conversion(info, &mut object);
        return Ok(Cow::Owned(object));
    }
    let mut object = stored.clone();
    before_conversion(info, &mut object);
    match webhook_of(info) {
        Some(webhook) => {
            object = first(crate::conversion_webhook::convert(
                webhook,
                &[object],
                &target,
            )?)?;
        }
        None => object["apiVersion"] = Value::String(target),
    }
    after_conversion(info, &mut object);
    Ok(Cow::Owned(object))
}

/// Stored objects as served at `info`'s version, for a read that builds its answer from them
/// (a Table): through a conversion webhook, all of them in one review answered in the
/// request's scope (a missing answer fails the attempt until it is there, as for a write).
pub fn to_served_all(info: &ResourceInfo, mut objects: Vec<Value>) -> Result<Vec<Value>, ApiError> {
    let target = info.api_version();
    let Some(webhook) = webhook_of(info).filter(|_| !outside_requests(info)) else {
        for object in &mut objects {
            to_served_in_place(info, object);
        }
        return Ok(objects);
    };
    // Those at the served version only need decoding with the present schema.
    for object in &mut objects {
        if !needs_conversion(info, object, &target) {
            to_served_in_place(info, object);
        }
    }
    let (stale, sent) = stale_for_conversion(info, &objects);
    if stale.is_empty() {
        return Ok(objects);
    }
    let converted = crate::conversion_webhook::convert(webhook, &sent, &target)?;
    put_converted(info, &mut objects, &stale, converted);
    Ok(objects)
}

/// The objects not at the version `info` serves, to be converted: their indices, and copies
/// with the defaults of the version each was stored at ([`before_conversion`]).
pub fn stale_for_conversion(info: &ResourceInfo, objects: &[Value]) -> (Vec<usize>, Vec<Value>) {
    let target = info.api_version();
    let stale: Vec<usize> = (0..objects.len())
        .filter(|&i| needs_conversion(info, &objects[i], &target))
        .collect();
    let sent = stale
        .iter()
        .map(|&i| {
            let mut object = objects[i].clone();
            before_conversion(info, &mut object);
            object
        })
        .collect();
    (stale, sent)
}

/// Puts the converted objects back at the indices [`stale_for_conversion`] gave, pruned by
/// the served version's schema ([`after_conversion`]).
pub fn put_converted(
    info: &ResourceInfo,
    objects: &mut [Value],
    stale: &[usize],
    converted: Vec<Value>,
) {
    for (&i, mut object) in stale.iter().zip(converted) {
        after_conversion(info, &mut object);
        objects[i] = object;
    }
}

/// Converts a stored object, in place, to the version `info` serves: defaults from the schema
/// of the version it was stored at, the new `apiVersion`, then pruning by the served version's
/// schema. (An object of a CRD with a conversion webhook is left as it is: see
/// [`served_bytes`].)
pub fn to_served_in_place(info: &ResourceInfo, object: &mut Value) {
    if !changes_on_read(info, object) {
        return;
    }
    before_conversion(info, object);
    let target = info.api_version();
    if needs_conversion(info, object, &target) {
        object["apiVersion"] = Value::String(target);
        after_conversion(info, object);
    }
}

/// Whether serving a stored object at `info`'s version changes it here: it is at another
/// version (converted here unless a webhook converts it after the fact), or was written before
/// the schema of the version it is at last changed (decoded again, see
/// [`crate::registry::crd_storage`]).
fn changes_on_read(info: &ResourceInfo, object: &Value) -> bool {
    if needs_conversion(info, object, &info.api_version()) {
        webhook_of(info).is_none()
    } else {
        written_before_schema(info, object)
    }
}

/// A stored custom resource as reading it decodes it at the version it is stored at: with the
/// present schema when it was written before that schema changed (unchanged otherwise).
pub fn decode_stale(info: &ResourceInfo, object: &mut Value) {
    if written_before_schema(info, object) {
        before_conversion(info, object);
    }
}

/// Whether a stored custom resource was written before the schema of the version it is stored
/// at last changed.
fn written_before_schema(info: &ResourceInfo, object: &Value) -> bool {
    let Some(versions) = info.versions.as_ref().filter(|_| info.custom) else {
        return false;
    };
    if !versions.epoch.any_schema_changed() {
        return false;
    }
    stored_version(info, object)
        .is_some_and(|version| versions.epoch.written_before_schema(version, object))
}

/// The version of its CRD a stored custom resource is at (from its `apiVersion`).
fn stored_version<'a>(info: &ResourceInfo, object: &'a Value) -> Option<&'a str> {
    object["apiVersion"]
        .as_str()?
        .strip_prefix(info.group.as_str())?
        .strip_prefix('/')
}

/// What reading a stored object does before converting it (`schemaCoercingDecoder`, then the
/// storage codec's `unstructuredDefaulter`): pruning by the schema of the version it was stored
/// at, then that schema's defaults. For an object written under that schema both change
/// nothing; for one written under an earlier schema this is what the present one reads.
pub fn before_conversion(info: &ResourceInfo, object: &mut Value) {
    let Some(versions) = &info.versions else {
        return;
    };
    let stored_schema = stored_version(info, object)
        .and_then(|v| versions.schemas.get(v))
        .cloned();
    if let Some(stored_schema) = stored_schema {
        schema::prune(&stored_schema, object);
        schema::apply_defaults(&stored_schema, object);
    }
}

/// What converting to the version `info` serves does after the conversion itself: pruning by
/// that version's schema (`schemaCoercingConverter`).
pub fn after_conversion(info: &ResourceInfo, object: &mut Value) {
    if let Some(target_schema) = &info.schema {
        schema::prune(target_schema, object);
        schema::prune_non_nullable_nulls(object, target_schema);
    }
}

/// Converts an object written at `info`'s version, in place, to the CRD's storage version (the
/// `apiVersion` it is stored with), pruned by the storage version's schema.
pub fn to_storage(info: &ResourceInfo, object: &mut Value) -> Result<(), ApiError> {
    let Some(versions) = info.versions.as_ref().filter(|_| info.custom) else {
        return Ok(());
    };
    if versions.storage.is_empty() {
        return Ok(());
    }
    let target = versions.storage_api_version();
    if !needs_conversion(info, object, &target) || outside_requests(info) {
        return Ok(());
    }
    match &versions.webhook {
        Some(webhook) => {
            *object = first(crate::conversion_webhook::convert(
                webhook,
                std::slice::from_ref(object),
                &target,
            )?)?;
        }
        None => object["apiVersion"] = Value::String(target),
    }
    if let Some(storage_schema) = versions.schemas.get(&versions.storage) {
        schema::prune(storage_schema, object);
        schema::prune_non_nullable_nulls(object, storage_schema);
    }
    Ok(())
}

/// Whether the server's own write (no request) is to leave a webhook-converted object as it
/// is stored: no webhook is called for it.
fn outside_requests(info: &ResourceInfo) -> bool {
    webhook_of(info).is_some() && !crate::conversion_webhook::in_request()
}

/// The one object of a one-object conversion.
fn first(objects: Vec<Value>) -> Result<Value, ApiError> {
    objects
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::internal("a conversion gave no object"))
}

/// Whether `info` is a built-in version that is a view of another, stored version.
pub fn is_builtin_view(info: &ResourceInfo) -> bool {
    is_hpa(info) && info.version == "v1"
}

/// A stored built-in object as the view version `info` serves it (unchanged for any other
/// resource).
pub fn to_builtin_view(info: &ResourceInfo, object: &mut Value) {
    if is_builtin_view(info) {
        *object = crate::rules::autoscaling::v1_conversion::to_v1(object);
    }
}

/// A decoded body at the view version `info` serves, as the stored version's object
/// (unchanged for any other resource).
pub fn from_builtin_view(info: &ResourceInfo, object: &mut Value) {
    if is_builtin_view(info) {
        *object = crate::rules::autoscaling::v1_conversion::from_v1(object);
    }
}

/// The stored version's object of an object at the view version `info` serves.
pub fn stored_of_builtin_view(info: &ResourceInfo, object: &Value) -> Value {
    let mut stored = object.clone();
    from_builtin_view(info, &mut stored);
    stored
}

/// An object as a write holds it for `info` (a custom resource at the request's version, a
/// built-in view's object at its stored version) in the shape of `version` of the same
/// resource: what an admission webhook registered for that version is sent (`matchPolicy:
/// Equivalent`). `apiVersion` and `kind` are the caller's to set. Through a conversion webhook
/// the shape is left as it is.
pub fn write_form_at_version(info: &ResourceInfo, object: &Value, version: &str) -> Value {
    if is_hpa(info) {
        return match version {
            "v1" => crate::rules::autoscaling::v1_conversion::to_v1(object),
            _ => object.clone(),
        };
    }
    let mut out = object.clone();
    if info.custom && version != info.version && webhook_of(info).is_none() {
        if let Some(schema) = info.versions.as_ref().and_then(|v| v.schemas.get(version)) {
            schema::prune(schema, &mut out);
        }
    }
    out
}

/// The other way: an object in the shape of `version` (a mutating webhook's patched object)
/// in the shape of the request's version, ready to be decoded as a request body is.
pub fn request_form_from_version(info: &ResourceInfo, object: Value, version: &str) -> Value {
    if is_hpa(info) {
        return match (version, info.version.as_str()) {
            ("v1", "v2") => crate::rules::autoscaling::v1_conversion::from_v1(&object),
            ("v2", "v1") => crate::rules::autoscaling::v1_conversion::to_v1(&object),
            _ => object,
        };
    }
    let mut out = object;
    if info.custom && version != info.version && webhook_of(info).is_none() {
        after_conversion(info, &mut out);
    }
    out
}

fn is_hpa(info: &ResourceInfo) -> bool {
    info.is_builtin("autoscaling", "HorizontalPodAutoscaler")
}

/// Whether an object of a custom resource is at another `apiVersion` than `target`.
fn needs_conversion(info: &ResourceInfo, object: &Value, target: &str) -> bool {
    info.custom && object.is_object() && object["apiVersion"].as_str() != Some(target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::resources_of_crd;
    use rstest::rstest;
    use serde_json::json;

    /// A CRD with `v1` (storage) and `v1beta1`, whose schemas differ: `v1` knows `spec.size`
    /// (default 1), `v1beta1` knows `spec.replicas`.
    fn infos() -> (ResourceInfo, ResourceInfo) {
        let object = |props: Value| {
            json!({"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": props}}}})
        };
        let crd = json!({"spec": {"group": "ex.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": object(json!({"size": {"type": "integer", "default": 1}, "color": {"type": "string"}}))},
                {"name": "v1beta1", "served": true, "storage": false,
                 "schema": object(json!({"replicas": {"type": "integer"}, "color": {"type": "string"}}))}]}});
        let mut infos = resources_of_crd(&crd).into_iter();
        (infos.next().unwrap(), infos.next().unwrap())
    }

    #[rstest]
    #[case::same_version(br#"{"apiVersion":"ex.com/v1","kind":"Widget"}"#, Some(true))]
    #[case::other_version(br#"{"apiVersion":"ex.com/v1beta1","kind":"Widget"}"#, Some(false))]
    #[case::longer_group(br#"{"apiVersion":"xex.com/v1","kind":"Widget"}"#, Some(false))]
    #[case::prefix_version(br#"{"apiVersion":"ex.com/v12","kind":"Widget"}"#, Some(false))]
    #[case::escaped(br#"{"apiVersion":"ex.com\/v1","kind":"Widget"}"#, None)]
    #[case::other_shape(br#"{"kind":"Widget","apiVersion":"ex.com/v1"}"#, None)]
    fn the_stored_version_is_read_from_the_leading_bytes(
        #[case] stored: &[u8],
        #[case] expected: Option<bool>,
    ) {
        let (v1, _) = infos();
        assert_eq!(bytes_at_version(&v1, stored), expected);
    }

    #[test]
    fn a_read_at_another_version_defaults_by_the_stored_schema_and_prunes_by_the_served_one() {
        let (_, v1beta1) = infos();
        let stored = json!({"apiVersion": "ex.com/v1", "kind": "Widget",
            "metadata": {"name": "w"}, "spec": {"color": "red"}});
        let served = to_served(&v1beta1, &stored).unwrap();
        // `size` (v1's default) is added, then pruned: v1beta1 does not declare it.
        assert_eq!(
            *served,
            json!({"apiVersion": "ex.com/v1beta1", "kind": "Widget",
                "metadata": {"name": "w"}, "spec": {"color": "red"}})
        );
        let bytes = served_bytes(&v1beta1, &Bytes::from(serde_json::to_vec(&stored).unwrap()));
        assert_eq!(crate::store::json::from_slice(&bytes).unwrap(), *served);
    }

    #[test]
    fn a_read_at_the_stored_version_is_the_stored_object() {
        let (v1, _) = infos();
        let stored = json!({"apiVersion": "ex.com/v1", "kind": "Widget", "spec": {"size": 3}});
        assert!(matches!(to_served(&v1, &stored).unwrap(), Cow::Borrowed(_)));
        let bytes = Bytes::from(serde_json::to_vec(&stored).unwrap());
        assert_eq!(served_bytes(&v1, &bytes).as_ptr(), bytes.as_ptr());
    }

    #[test]
    fn an_older_version_read_at_the_storage_version_gains_its_defaults() {
        let (v1, _) = infos();
        let stored = json!({"apiVersion": "ex.com/v1beta1", "kind": "Widget",
            "spec": {"replicas": 2, "color": "red"}});
        // Defaults come from the stored version's schema (v1beta1 has none); v1 prunes `replicas`.
        assert_eq!(
            *to_served(&v1, &stored).unwrap(),
            json!({"apiVersion": "ex.com/v1", "kind": "Widget", "spec": {"color": "red"}})
        );
    }

    #[test]
    fn writes_are_stored_at_the_storage_version_pruned_by_its_schema() {
        let (v1, v1beta1) = infos();
        let mut written = json!({"apiVersion": "ex.com/v1beta1", "kind": "Widget",
            "spec": {"replicas": 2, "color": "blue"}});
        to_storage(&v1beta1, &mut written).unwrap();
        assert_eq!(
            written,
            json!({"apiVersion": "ex.com/v1", "kind": "Widget", "spec": {"color": "blue"}})
        );
        let mut at_storage = json!({"apiVersion": "ex.com/v1", "spec": {"size": 2}});
        to_storage(&v1, &mut at_storage).unwrap();
        assert_eq!(
            at_storage,
            json!({"apiVersion": "ex.com/v1", "spec": {"size": 2}})
        );
    }
}
