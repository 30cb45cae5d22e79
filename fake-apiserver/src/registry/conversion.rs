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
//! bytes as they are; only a read at another version parses and converts.

use std::borrow::Cow;

use bytes::Bytes;
use serde_json::Value;

use crate::resource::ResourceInfo;
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

/// The stored bytes of an object as served at `info`'s version: the same bytes when they are
/// at that version (or the resource is built-in), else the converted object, encoded.
pub fn served_bytes(info: &ResourceInfo, stored: &Bytes) -> Bytes {
    if !info.custom || bytes_at_version(info, stored) == Some(true) {
        return stored.clone();
    }
    let Ok(mut object) = serde_json::from_slice::<Value>(stored) else {
        return stored.clone();
    };
    to_served_in_place(info, &mut object);
    serde_json::to_vec(&object)
        .map(Bytes::from)
        .unwrap_or_else(|_| stored.clone())
}

/// A stored object as served at `info`'s version (borrowed when nothing changes).
pub fn to_served<'a>(info: &ResourceInfo, stored: &'a Value) -> Cow<'a, Value> {
    if !needs_conversion(info, stored, &info.api_version()) {
        return Cow::Borrowed(stored);
    }
    let mut object = stored.clone();
    to_served_in_place(info, &mut object);
    Cow::Owned(object)
}

/// Converts a stored object, in place, to the version `info` serves: defaults from the schema
/// of the version it was stored at, the new `apiVersion`, then pruning by the served version's
/// schema.
pub fn to_served_in_place(info: &ResourceInfo, object: &mut Value) {
    let target = info.api_version();
    if !needs_conversion(info, object, &target) {
        return;
    }
    if let Some(versions) = &info.versions {
        let stored_version = object["apiVersion"]
            .as_str()
            .and_then(|v| v.strip_prefix(&format!("{}/", info.group)))
            .and_then(|v| versions.schemas.get(v));
        if let Some(stored_schema) = stored_version {
            schema::apply_defaults(stored_schema, object);
        }
    }
    object["apiVersion"] = Value::String(target);
    if let Some(target_schema) = &info.schema {
        schema::prune(target_schema, object);
        schema::prune_non_nullable_nulls(object, target_schema);
    }
}

/// Converts an object written at `info`'s version, in place, to the CRD's storage version (the
/// `apiVersion` it is stored with), pruned by the storage version's schema.
pub fn to_storage(info: &ResourceInfo, object: &mut Value) {
    let Some(versions) = info.versions.as_ref().filter(|_| info.custom) else {
        return;
    };
    if versions.storage.is_empty() {
        return;
    }
    let target = versions.storage_api_version();
    if !needs_conversion(info, object, &target) {
        return;
    }
    object["apiVersion"] = Value::String(target);
    if let Some(storage_schema) = versions.schemas.get(&versions.storage) {
        schema::prune(storage_schema, object);
        schema::prune_non_nullable_nulls(object, storage_schema);
    }
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
        let served = to_served(&v1beta1, &stored);
        // `size` (v1's default) is added, then pruned: v1beta1 does not declare it.
        assert_eq!(
            *served,
            json!({"apiVersion": "ex.com/v1beta1", "kind": "Widget",
                "metadata": {"name": "w"}, "spec": {"color": "red"}})
        );
        let bytes = served_bytes(&v1beta1, &Bytes::from(serde_json::to_vec(&stored).unwrap()));
        assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap(), *served);
    }

    #[test]
    fn a_read_at_the_stored_version_is_the_stored_object() {
        let (v1, _) = infos();
        let stored = json!({"apiVersion": "ex.com/v1", "kind": "Widget", "spec": {"size": 3}});
        assert!(matches!(to_served(&v1, &stored), Cow::Borrowed(_)));
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
            *to_served(&v1, &stored),
            json!({"apiVersion": "ex.com/v1", "kind": "Widget", "spec": {"color": "red"}})
        );
    }

    #[test]
    fn writes_are_stored_at_the_storage_version_pruned_by_its_schema() {
        let (v1, v1beta1) = infos();
        let mut written = json!({"apiVersion": "ex.com/v1beta1", "kind": "Widget",
            "spec": {"replicas": 2, "color": "blue"}});
        to_storage(&v1beta1, &mut written);
        assert_eq!(
            written,
            json!({"apiVersion": "ex.com/v1", "kind": "Widget", "spec": {"color": "blue"}})
        );
        let mut at_storage = json!({"apiVersion": "ex.com/v1", "spec": {"size": 2}});
        to_storage(&v1, &mut at_storage);
        assert_eq!(
            at_storage,
            json!({"apiVersion": "ex.com/v1", "spec": {"size": 2}})
        );
    }
}
