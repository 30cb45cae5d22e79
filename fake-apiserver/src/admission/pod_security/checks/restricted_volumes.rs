//! `restrictedVolumes` (restricted, 1.0+): a pod's inline volumes may only be of the kinds
//! that expose nothing of the node or of outside storage the pod should not reach directly:
//! `configMap`, `csi`, `downwardAPI`, `emptyDir`, `ephemeral`, `image`,
//! `persistentVolumeClaim`, `projected` and `secret`. Every other volume (`hostPath`, `nfs`,
//! the in-tree cloud disks, ... or none recognised) is refused. It replaces the baseline
//! `hostPathVolumes` check (`check_restrictedVolumes.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::{join_quote, pluralize, sorted_set};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// Allows only the listed volume sources, in place of `hostPathVolumes`
/// (`CheckRestrictedVolumes`).
pub(crate) const CHECK: Check = Check {
    id: "restrictedVolumes",
    level: Level::Restricted,
    versions: &[VersionedCheck {
        minimum_version: 0,
        check_pod: restricted_volumes_1_0,
        override_check_ids: &["hostPathVolumes"],
    }],
};

/// The volume sources the restricted level allows, by JSON field.
const ALLOWED_SOURCES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// The volume sources it refuses by name, by JSON field (which is also the name the message
/// gives), in the order upstream tests for them: a volume with several sources is named
/// after the first of these it sets.
const RESTRICTED_SOURCES: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];

/// Whether a volume sets a source: the field is present and not null (a non-nil pointer).
fn sets_source(volume: &Value, source: &str) -> bool {
    !volume[source].is_null()
}

fn restricted_volumes_1_0(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut bad_volumes = Vec::new();
    let mut bad_volume_types = Vec::new();
    for volume in spec["volumes"].as_array().into_iter().flatten() {
        if ALLOWED_SOURCES.iter().any(|s| sets_source(volume, s)) {
            continue;
        }
        bad_volumes.push(volume["name"].as_str().unwrap_or_default().to_string());
        let volume_type = RESTRICTED_SOURCES
            .iter()
            .find(|s| sets_source(volume, s))
            .copied()
            .unwrap_or("unknown");
        bad_volume_types.push(volume_type.to_string());
    }
    if bad_volumes.is_empty() {
        return CheckResult::allowed();
    }
    // The volumes in the pod's order, the types as a sorted set.
    let bad_volume_types = sorted_set(bad_volume_types);
    CheckResult::forbidden(
        "restricted volume types",
        format!(
            "{} {} {} {} {}",
            pluralize("volume", "volumes", bad_volumes.len()),
            join_quote(&bad_volumes),
            pluralize("uses", "use", bad_volumes.len()),
            pluralize(
                "restricted volume type",
                "restricted volume types",
                bad_volume_types.len()
            ),
            join_quote(&bad_volume_types),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn expect(detail: Option<&str>) -> CheckResult {
        match detail {
            Some(detail) => CheckResult::forbidden("restricted volume types", detail),
            None => CheckResult::allowed(),
        }
    }

    /// Upstream's unit test pod: every allowed source, every restricted one, and a volume
    /// with no source (the keys written out, not taken from the tables above).
    fn every_kind_of_volume() -> Value {
        json!({"volumes": [
            // allowed types
            {"name": "a1", "emptyDir": {}},
            {"name": "a2", "secret": {}},
            {"name": "a3", "persistentVolumeClaim": {}},
            {"name": "a4", "downwardAPI": {}},
            {"name": "a5", "configMap": {}},
            {"name": "a6", "projected": {}},
            {"name": "a7", "csi": {}},
            {"name": "a8", "ephemeral": {}},
            {"name": "a9", "image": {}},
            // known restricted types
            {"name": "b1", "hostPath": {}},
            {"name": "b2", "gcePersistentDisk": {}},
            {"name": "b3", "awsElasticBlockStore": {}},
            {"name": "b4", "gitRepo": {}},
            {"name": "b5", "nfs": {}},
            {"name": "b6", "iscsi": {}},
            {"name": "b7", "glusterfs": {}},
            {"name": "b8", "rbd": {}},
            {"name": "b9", "flexVolume": {}},
            {"name": "b10", "cinder": {}},
            {"name": "b11", "cephfs": {}},
            {"name": "b12", "flocker": {}},
            {"name": "b13", "fc": {}},
            {"name": "b14", "azureFile": {}},
            {"name": "b15", "vsphereVolume": {}},
            {"name": "b16", "quobyte": {}},
            {"name": "b17", "azureDisk": {}},
            {"name": "b18", "photonPersistentDisk": {}},
            {"name": "b19", "portworxVolume": {}},
            {"name": "b20", "scaleIO": {}},
            {"name": "b21", "storageos": {}},
            // unknown type
            {"name": "c1"},
        ]})
    }

    #[rstest]
    #[case::host_path_volumes(
        every_kind_of_volume(),
        Some(concat!(
            r#"volumes "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11", "b12", "b13", "b14", "b15", "b16", "b17", "b18", "b19", "b20", "b21", "c1""#,
            " use restricted volume types ",
            r#""awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "fc", "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "#,
            r#""hostPath", "iscsi", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "unknown", "vsphereVolume""#,
        ))
    )]
    // fixtures: the allowed kinds with realistic contents pass
    #[case::fixture_allowed_volumes(
        json!({"volumes": [
            {"name": "volume1", "emptyDir": {}},
            {"name": "volume2", "secret": {"secretName": "test"}},
            {"name": "volume3", "persistentVolumeClaim": {"claimName": "test"}},
            {"name": "volume4", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
            {"name": "volume5", "configMap": {"name": "test"}},
            {"name": "volume6", "projected": {"sources": []}},
            {"name": "volume7", "csi": {"driver": "inline.storage.kubernetes.io", "volumeAttributes": {"foo": "bar"}}},
            {"name": "volume8", "ephemeral": {"volumeClaimTemplate": null}},
            {"name": "volume9", "image": {"reference": "registry.example/data:1"}},
        ]}),
        None
    )]
    #[case::fixture_gce_persistent_disk(
        json!({"volumes": [{"name": "volume1", "gcePersistentDisk": {"pdName": "test"}}]}),
        Some(r#"volume "volume1" uses restricted volume type "gcePersistentDisk""#)
    )]
    #[case::fixture_host_path(
        json!({"volumes": [{"name": "volume1", "hostPath": {"path": "/dev/null"}}]}),
        Some(r#"volume "volume1" uses restricted volume type "hostPath""#)
    )]
    #[case::fixture_nfs(
        json!({"volumes": [{"name": "volume1", "nfs": {"server": "test", "path": "/test"}}]}),
        Some(r#"volume "volume1" uses restricted volume type "nfs""#)
    )]
    #[case::fixture_storageos(
        json!({"volumes": [{"name": "volume1", "storageos": {"volumeName": "test"}}]}),
        Some(r#"volume "volume1" uses restricted volume type "storageos""#)
    )]
    // Upstream's fixture counts on API defaulting to turn a sourceless volume into emptyDir;
    // the check itself calls it unknown.
    #[case::no_source_is_unknown(
        json!({"volumes": [{"name": "volume0"}]}),
        Some(r#"volume "volume0" uses restricted volume type "unknown""#)
    )]
    #[case::null_source_is_no_source(
        json!({"volumes": [{"name": "v", "emptyDir": null}]}),
        Some(r#"volume "v" uses restricted volume type "unknown""#)
    )]
    // several volumes of one type: the volumes in order (repeats kept), the type once
    #[case::one_type_many_volumes(
        json!({"volumes": [
            {"name": "z", "hostPath": {"path": "/"}},
            {"name": "ok", "secret": {}},
            {"name": "a", "hostPath": {"path": "/"}},
            {"name": "z", "hostPath": {"path": "/"}},
        ]}),
        Some(r#"volumes "z", "a", "z" use restricted volume type "hostPath""#)
    )]
    // one volume, two types: the one tested first names it
    #[case::first_restricted_source_wins(
        json!({"volumes": [{"name": "v", "nfs": {}, "hostPath": {}}]}),
        Some(r#"volume "v" uses restricted volume type "hostPath""#)
    )]
    #[case::allowed_source_wins(
        json!({"volumes": [{"name": "v", "hostPath": {}, "secret": {}}]}),
        None
    )]
    #[case::no_volumes(json!({"containers": [{"name": "c"}]}), None)]
    #[case::malformed(
        json!({"volumes": [3, {"hostPath": {}}]}),
        Some(r#"volumes "", "" use restricted volume types "hostPath", "unknown""#)
    )]
    fn only_the_allowed_volume_sources_pass(#[case] spec: Value, #[case] detail: Option<&str>) {
        assert_eq!(restricted_volumes_1_0(&json!({}), &spec), expect(detail));
    }

    #[test]
    fn it_replaces_host_path_volumes_from_1_0() {
        assert_eq!(
            (CHECK.id, CHECK.level),
            ("restrictedVolumes", Level::Restricted)
        );
        assert_eq!(CHECK.versions.len(), 1);
        assert_eq!(CHECK.versions[0].minimum_version, 0);
        assert_eq!(CHECK.versions[0].override_check_ids, ["hostPathVolumes"]);
    }
}
