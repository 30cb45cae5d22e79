//! The `+default` markers of the volume plugin sources in `k8s.io/api/core/v1` (applied by the
//! generated defaulters wherever the types appear: a pod's or template's volumes, a persistent
//! volume's spec), and `SetDefaults_Volume`: a volume that names no source is an empty dir.
//!
//! A marker on a string field replaces the empty string (the zero value), one on a pointer field
//! an absent value.

use serde_json::{json, Map, Value};

use super::{set_default, set_if_empty};

/// `SetDefaults_Volume`, then the plugin sources' markers, for one pod volume.
pub(super) fn default_volume_source(volume: &mut Map<String, Value>) {
    let names_a_source = volume
        .iter()
        .any(|(key, value)| key != "name" && !value.is_null());
    if !names_a_source {
        volume.insert("emptyDir".into(), json!({}));
    }
    default_plugin_sources(volume);
}

/// The markers of the sources a pod volume and a persistent volume share: RBD (`pool`, `user`,
/// `keyring`), iSCSI (`iscsiInterface`), Azure disk (`cachingMode`, `fsType`, `readOnly`,
/// `kind`) and ScaleIO (`storageMode`, `fsType`).
pub(super) fn default_plugin_sources(source: &mut Map<String, Value>) {
    if let Some(rbd) = source.get_mut("rbd").and_then(Value::as_object_mut) {
        set_if_empty(rbd, "pool", json!("rbd"));
        set_if_empty(rbd, "user", json!("admin"));
        set_if_empty(rbd, "keyring", json!("/etc/ceph/keyring"));
    }
    if let Some(iscsi) = source.get_mut("iscsi").and_then(Value::as_object_mut) {
        set_if_empty(iscsi, "iscsiInterface", json!("default"));
    }
    if let Some(disk) = source.get_mut("azureDisk").and_then(Value::as_object_mut) {
        set_default(disk, "cachingMode", json!("ReadWrite"));
        set_default(disk, "fsType", json!("ext4"));
        set_default(disk, "readOnly", json!(false));
        set_default(disk, "kind", json!("Shared"));
    }
    if let Some(scale_io) = source.get_mut("scaleIO").and_then(Value::as_object_mut) {
        set_if_empty(scale_io, "storageMode", json!("ThinProvisioned"));
        set_if_empty(scale_io, "fsType", json!("xfs"));
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    fn defaulted(volume: Value) -> Value {
        let mut map = volume.as_object().cloned().unwrap_or_default();
        default_volume_source(&mut map);
        Value::Object(map)
    }

    #[rstest]
    #[case::no_source(json!({"name": "scratch"}), json!({"name": "scratch", "emptyDir": {}}))]
    #[case::null_source(json!({"name": "scratch", "secret": null}), json!({"name": "scratch", "secret": null, "emptyDir": {}}))]
    #[case::rbd(json!({"name": "v", "rbd": {"monitors": ["m"], "image": "i", "pool": ""}}),
        json!({"name": "v", "rbd": {"monitors": ["m"], "image": "i", "pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"}}))]
    #[case::iscsi(json!({"name": "v", "iscsi": {"targetPortal": "t", "iqn": "q", "lun": 0}}),
        json!({"name": "v", "iscsi": {"targetPortal": "t", "iqn": "q", "lun": 0, "iscsiInterface": "default"}}))]
    #[case::azure_disk(json!({"name": "v", "azureDisk": {"diskName": "d", "diskURI": "u", "readOnly": true}}),
        json!({"name": "v", "azureDisk": {"diskName": "d", "diskURI": "u", "readOnly": true, "cachingMode": "ReadWrite", "fsType": "ext4", "kind": "Shared"}}))]
    #[case::scale_io(json!({"name": "v", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "x"}}}),
        json!({"name": "v", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "x"}, "storageMode": "ThinProvisioned", "fsType": "xfs"}}))]
    #[case::set_values_kept(json!({"name": "v", "iscsi": {"iscsiInterface": "tcp"}}),
        json!({"name": "v", "iscsi": {"iscsiInterface": "tcp"}}))]
    fn volumes(#[case] volume: Value, #[case] expected: Value) {
        assert_eq!(defaulted(volume), expected);
    }
}
