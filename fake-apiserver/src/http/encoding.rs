//! How objects are kept and sent: built-in objects are stored without `apiVersion`/`kind` (a real
//! server's list items carry none) and get them back, cheaply, when sent alone.

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Map, Value};

use crate::resource::ResourceInfo;

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

/// Puts `apiVersion` and `kind` first in an object.
pub fn add_type_meta(info: &ResourceInfo, object: &mut Value) {
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
    if info.custom || stored.len() < 2 || stored[0] != b'{' {
        return stored.clone();
    }
    let prefix = format!(
        "{{\"apiVersion\":\"{}\",\"kind\":\"{}\"",
        info.api_version(),
        info.kind
    );
    let mut out = BytesMut::with_capacity(prefix.len() + stored.len() + 1);
    out.put_slice(prefix.as_bytes());
    let rest = &stored[1..];
    if rest.first() != Some(&b'}') {
        out.put_u8(b',');
    }
    out.put_slice(rest);
    out.freeze()
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
}
