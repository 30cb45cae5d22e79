//! The `StorageObjectInUseProtection` admission plugin
//! (`plugin/pkg/admission/storage/storageobjectinuseprotection`), on by default in every real
//! server: every PersistentVolumeClaim and PersistentVolume created gets its protection
//! finalizer (`kubernetes.io/pvc-protection`, `kubernetes.io/pv-protection`), which the PVC
//! and PV protection controllers remove once the object is no longer used
//! ([`crate::controllers::volume_protection`]). Without those controllers (a bare API server)
//! a deleted claim or volume stays, `Terminating`, as it does on a real one.

use serde_json::Value;

use crate::controllers::volume_protection::{PVC_FINALIZER, PV_FINALIZER};
use crate::resource::ResourceInfo;

/// `Admit` on a create: the kind's protection finalizer, appended unless present.
pub(crate) fn admit_create(info: &ResourceInfo, object: &mut Value) {
    let finalizer = match (info.custom, info.group.as_str(), info.kind.as_str()) {
        (false, "", "PersistentVolumeClaim") => PVC_FINALIZER,
        (false, "", "PersistentVolume") => PV_FINALIZER,
        _ => return,
    };
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let finalizers = meta
        .entry("finalizers")
        .or_insert_with(|| Value::Array(Vec::new()));
    if finalizers.is_null() {
        *finalizers = Value::Array(Vec::new());
    }
    if let Some(list) = finalizers.as_array_mut() {
        if !list.iter().any(|f| f == finalizer) {
            list.push(Value::String(finalizer.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info(kind: &str) -> ResourceInfo {
        crate::resource::builtin_resources()
            .into_iter()
            .find(|r| r.group.is_empty() && r.kind == kind)
            .expect("a built-in kind")
    }

    #[test]
    fn claims_and_volumes_get_their_finalizer_once() {
        let mut claim = json!({"metadata": {"name": "data", "finalizers": ["example.com/keep"]}});
        admit_create(&info("PersistentVolumeClaim"), &mut claim);
        admit_create(&info("PersistentVolumeClaim"), &mut claim);
        assert_eq!(
            claim["metadata"]["finalizers"],
            json!(["example.com/keep", PVC_FINALIZER])
        );
        let mut volume = json!({"metadata": {"name": "pv1"}});
        admit_create(&info("PersistentVolume"), &mut volume);
        assert_eq!(volume["metadata"]["finalizers"], json!([PV_FINALIZER]));
        let mut config = json!({"metadata": {"name": "c"}});
        admit_create(&info("ConfigMap"), &mut config);
        assert!(config["metadata"].get("finalizers").is_none());
    }
}
