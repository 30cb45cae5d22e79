//! How objects are kept and sent: built-in objects are stored without `apiVersion`/`kind` (a real
//! server's list items carry none) and get them back, cheaply, when sent alone; custom resources
//! keep theirs and are converted when a request names another version of their CRD (see
//! [`crate::registry::conversion`]).

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Map, Value};

use crate::registry::conversion;
use crate::resource::ResourceInfo;

/// Appends a stored object as a list item: built-in items carry no type fields, custom
/// resources are served at the list's version.
pub fn put_item(info: &ResourceInfo, stored: &Bytes, out: &mut BytesMut) {
    if info.custom {
        out.put_slice(&conversion::served_bytes(info, stored));
    } else if conversion::is_builtin_view(info) {
        match crate::store::json::from_slice(stored) {
            Ok(mut object) => {
                conversion::to_builtin_view(info, &mut object);
                out.put_slice(&serde_json::to_vec(&object).unwrap_or_default());
            }
            Err(_) => out.put_slice(stored),
        }
    } else {
        out.put_slice(stored);
    }
}

/// What [`typed_bytes`] does, on a parsed stored object: a custom resource converted to the
/// version `info` serves (as stored when a webhook converts it), a built-in object given its
/// type fields (and its view version's form).
pub fn type_in_place(info: &ResourceInfo, object: &mut Value) {
    if info.custom {
        conversion::to_served_in_place(info, object);
    } else {
        add_type_meta(info, object);
    }
}

/// The stored bytes of a built-in view version's object, converted and typed.
fn view_bytes(info: &ResourceInfo, stored: &Bytes) -> Bytes {
    let Ok(mut object) = crate::store::json::from_slice(stored) else {
        return stored.clone();
    };
    add_type_meta(info, &mut object);
    serde_json::to_vec(&object)
        .map(Bytes::from)
        .unwrap_or_else(|_| stored.clone())
}

/// Removes `apiVersion` and `kind` before storing a built-in object.
pub fn strip_type_meta(info: &ResourceInfo, object: &mut Value) {
    if info.custom {
        return;
    }
    if let Some(obj) = object.as_object_mut() {
        obj.remove("apiVersion");
        obj.remove("kind");
    }
}

/// Puts `apiVersion` and `kind` first in an object (a custom resource: converts it to the
/// version `info` serves).
pub fn add_type_meta(info: &ResourceInfo, object: &mut Value) {
    if info.custom {
        conversion::to_served_in_place(info, object);
    }
    conversion::to_builtin_view(info, object);
    let Some(obj) = object.as_object_mut() else {
        return;
    };
    let mut out = Map::with_capacity(obj.len() + 2);
    out.insert("apiVersion".into(), Value::String(info.api_version()));
    out.insert("kind".into(), Value::String(info.kind.clone()));
    for (k, v) in std::mem::take(obj) {
        if k != "apiVersion" && k != "kind" {
            out.insert(k, v);
        }
    }
    *obj = out;
}

/// The stored bytes of an object with `apiVersion` and `kind` (prefixed without re-encoding).
pub fn typed_bytes(info: &ResourceInfo, stored: &Bytes) -> Bytes {
    if info.custom {
        return conversion::served_bytes(info, stored);
    }
    if conversion::is_builtin_view(info) {
        return view_bytes(info, stored);
    }
    if !needs_type_meta(info, stored) {
        return stored.clone();
    }
    let mut out = BytesMut::with_capacity(stored.len() + 64);
    put_typed(info, stored, &mut out);
    out.freeze()
}

/// Appends the stored bytes of an object with `apiVersion` and `kind` to `out`, so that a
/// caller building a larger message (a watch event) copies the object once.
pub fn put_typed(info: &ResourceInfo, stored: &Bytes, out: &mut BytesMut) {
    if info.custom {
        out.put_slice(&conversion::served_bytes(info, stored));
        return;
    }
    if conversion::is_builtin_view(info) {
        out.put_slice(&view_bytes(info, stored));
        return;
    }
    if !needs_type_meta(info, stored) {
        out.put_slice(stored);
        return;
    }
    out.put_slice(b"{\"apiVersion\":\"");
    out.put_slice(info.api_version().as_bytes());
    out.put_slice(b"\",\"kind\":\"");
    out.put_slice(info.kind.as_bytes());
    out.put_u8(b'"');
    let rest = &stored[1..];
    if rest.first() != Some(&b'}') {
        out.put_u8(b',');
    }
    out.put_slice(rest);
}

/// Whether stored bytes lack the type fields a client gets: built-in kinds are stored without
/// them (custom resources keep theirs).
fn needs_type_meta(info: &ResourceInfo, stored: &[u8]) -> bool {
    !info.custom && stored.len() >= 2 && stored[0] == b'{'
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::builtin_resources;
    use serde_json::json;

    #[test]
    fn typed_bytes_round_trip() {
        let pods = builtin_resources()
            .into_iter()
            .find(|r| r.plural == "pods")
            .unwrap();
        let stored = Bytes::from_static(br#"{"metadata":{"name":"p"}}"#);
        let v: Value = serde_json::from_slice(&typed_bytes(&pods, &stored)).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
        );
        let empty: Value =
            serde_json::from_slice(&typed_bytes(&pods, &Bytes::from_static(b"{}"))).unwrap();
        assert_eq!(empty["kind"], "Pod");
        let mut obj = json!({"metadata": {}, "kind": "Pod"});
        add_type_meta(&pods, &mut obj);
        assert_eq!(
            obj.as_object().unwrap().keys().next().unwrap(),
            "apiVersion"
        );
        strip_type_meta(&pods, &mut obj);
        assert_eq!(obj, json!({"metadata": {}}));
    }

    #[test]
    fn put_typed_appends_what_typed_bytes_gives() {
        let resources = builtin_resources();
        let find = |plural: &str| resources.iter().find(|r| r.plural == plural).unwrap();
        let deployments = find("deployments");
        let stored = Bytes::from_static(br#"{"metadata":{"name":"d"},"spec":{}}"#);
        let mut out = BytesMut::from(&b"head:"[..]);
        put_typed(deployments, &stored, &mut out);
        assert_eq!(
            &out[..],
            &br#"head:{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{}}"#[..]
        );
        assert_eq!(&out[5..], &typed_bytes(deployments, &stored)[..]);
        let mut empty = BytesMut::new();
        put_typed(find("pods"), &Bytes::from_static(b"{}"), &mut empty);
        assert_eq!(&empty[..], br#"{"apiVersion":"v1","kind":"Pod"}"#);
        // A custom resource is stored with its type fields: copied as is at its version.
        let mut custom = deployments.clone();
        custom.custom = true;
        let stored = Bytes::from_static(br#"{"apiVersion":"apps/v1","metadata":{"name":"d"}}"#);
        let mut out = BytesMut::new();
        put_typed(&custom, &stored, &mut out);
        assert_eq!(&out[..], &stored[..]);
    }
}
