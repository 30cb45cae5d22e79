//! The PVC and PV protection controllers (`pkg/controller/volume/pvcprotection`,
//! `pkg/controller/volume/pvprotection`), the other half of the `StorageObjectInUseProtection`
//! admission plugin ([`crate::admission`] puts their finalizers on every new claim and volume).
//!
//! - A deleted PersistentVolumeClaim keeps `kubernetes.io/pvc-protection` while a scheduled pod
//!   in its namespace uses it (through `persistentVolumeClaim.claimName`, or as the generic
//!   ephemeral volume `<pod>-<volume>` it controls, unless that pod was shut down: deleted with
//!   a zero grace period); the finalizer goes once none does, and so does the claim. A pod's
//!   deletion, or its ending or not being scheduled, has its claims looked at again.
//! - A deleted PersistentVolume keeps `kubernetes.io/pv-protection` while it is `Bound`.
//! - A claim or volume that is not being deleted and lacks the finalizer (written before the
//!   plugin ran: loaded from manifests or saved state) gets it.

use serde_json::Value;

use super::objects::{self, has_finalizer, is_deleting};
use crate::context::FakeApiServer;
use crate::error::ApiError;
use crate::resource::ResourceInfo;

/// The finalizer that protects a claim in use.
pub const PVC_FINALIZER: &str = "kubernetes.io/pvc-protection";

/// The finalizer that protects a bound volume.
pub const PV_FINALIZER: &str = "kubernetes.io/pv-protection";

/// Whether a claim or volume is for its controller to look at (`pvcAddedUpdated`,
/// `pvAddedUpdated`): it lacks the finalizer without being deleted, or is being deleted with it
/// (`NeedToAddFinalizer`, `IsDeletionCandidate`).
pub(crate) fn needs_look(object: &Value, finalizer: &str) -> bool {
    is_deleting(object) == has_finalizer(object, finalizer)
}

/// The claims a pod write has looked at again (`enqueuePVCs`): those of a deleted pod, or of
/// one that ended or is not scheduled (a running, scheduled pod cannot free a claim).
pub(crate) fn claims_of_pod(pod: &Value, deleted: bool) -> Vec<String> {
    let scheduled = pod["spec"]["nodeName"]
        .as_str()
        .is_some_and(|n| !n.is_empty());
    let ended = matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    );
    if !deleted && !ended && scheduled {
        return Vec::new();
    }
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or_default();
    volumes(pod)
        .filter_map(|volume| {
            if let Some(claim) = volume["persistentVolumeClaim"]["claimName"].as_str() {
                return Some(claim.to_string());
            }
            volume
                .get("ephemeral")
                .filter(|e| !e.is_null())
                .map(|_| ephemeral_claim_name(pod_name, volume))
        })
        .collect()
}

fn volumes(pod: &Value) -> impl Iterator<Item = &Value> {
    pod["spec"]["volumes"].as_array().into_iter().flatten()
}

/// `ephemeral.VolumeClaimName`: `<pod>-<volume>`.
fn ephemeral_claim_name(pod_name: &str, volume: &Value) -> String {
    format!("{pod_name}-{}", volume["name"].as_str().unwrap_or_default())
}

/// `podIsShutDown`: deleted with a zero grace period (the kubelet is done with it, or it was
/// forced).
fn shut_down(pod: &Value) -> bool {
    is_deleting(pod) && pod["metadata"]["deletionGracePeriodSeconds"].as_i64() == Some(0)
}

/// `podUsesPVC`: only a scheduled pod uses a claim.
fn uses(pod: &Value, claim: &Value) -> bool {
    if pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty) {
        return false;
    }
    let claim_name = claim["metadata"]["name"].as_str().unwrap_or_default();
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or_default();
    volumes(pod).any(|volume| {
        volume["persistentVolumeClaim"]["claimName"].as_str() == Some(claim_name)
            || (!shut_down(pod)
                && volume.get("ephemeral").is_some_and(|e| !e.is_null())
                && ephemeral_claim_name(pod_name, volume) == claim_name
                && controlled_by(claim, objects::uid_of(pod)))
    })
}

/// `ephemeral.VolumeIsForPod`: the claim's controller is the pod.
fn controlled_by(object: &Value, uid: &str) -> bool {
    object["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| r["controller"] == true && r["uid"] == uid)
}

/// `processPVC`.
pub(crate) fn sync_claim(
    server: &FakeApiServer,
    namespace: &str,
    name: &str,
) -> Result<(), ApiError> {
    let Some(claims) = objects::resource(server, "", "persistentvolumeclaims") else {
        return Ok(());
    };
    let Some(claim) = objects::get(server, &claims, namespace, name) else {
        return Ok(());
    };
    if is_deleting(&claim) && has_finalizer(&claim, PVC_FINALIZER) {
        let in_use = objects::resource(server, "", "pods").is_some_and(|pods| {
            objects::list(server, &pods, Some(namespace))
                .iter()
                .any(|pod| uses(pod, &claim))
        });
        if !in_use {
            return set_finalizer(server, &claims, &claim, PVC_FINALIZER, false);
        }
    }
    if !is_deleting(&claim) && !has_finalizer(&claim, PVC_FINALIZER) {
        return set_finalizer(server, &claims, &claim, PVC_FINALIZER, true);
    }
    Ok(())
}

/// `processPV`.
pub(crate) fn sync_volume(server: &FakeApiServer, name: &str) -> Result<(), ApiError> {
    let Some(volumes) = objects::resource(server, "", "persistentvolumes") else {
        return Ok(());
    };
    let Some(volume) = objects::get(server, &volumes, "", name) else {
        return Ok(());
    };
    if is_deleting(&volume)
        && has_finalizer(&volume, PV_FINALIZER)
        && volume["status"]["phase"] != "Bound"
    {
        return set_finalizer(server, &volumes, &volume, PV_FINALIZER, false);
    }
    if !is_deleting(&volume) && !has_finalizer(&volume, PV_FINALIZER) {
        return set_finalizer(server, &volumes, &volume, PV_FINALIZER, true);
    }
    Ok(())
}

/// Adds or removes the finalizer on the object read (an update, whose conflict is the
/// controller's error).
fn set_finalizer(
    server: &FakeApiServer,
    info: &ResourceInfo,
    object: &Value,
    finalizer: &str,
    add: bool,
) -> Result<(), ApiError> {
    let text = |key: &str| object["metadata"][key].as_str().unwrap_or_default();
    objects::set_finalizer(
        server,
        info,
        text("namespace"),
        text("name"),
        objects::uid_of(object),
        finalizer,
        add,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn pod(node: Option<&str>, phase: &str, volumes: Value) -> Value {
        let mut pod = json!({"metadata": {"name": "web", "uid": "pod-uid"},
            "spec": {"volumes": volumes}, "status": {"phase": phase}});
        if let Some(node) = node {
            pod["spec"]["nodeName"] = json!(node);
        }
        pod
    }

    #[rstest]
    #[case::running_scheduled(Some("n1"), "Running", false, vec![])]
    #[case::deleted(Some("n1"), "Running", true, vec!["data", "web-scratch"])]
    #[case::ended(Some("n1"), "Succeeded", false, vec!["data", "web-scratch"])]
    #[case::unscheduled(None, "Pending", false, vec!["data", "web-scratch"])]
    fn a_pod_write_looks_again_at_its_claims_when_it_can_free_them(
        #[case] node: Option<&str>,
        #[case] phase: &str,
        #[case] deleted: bool,
        #[case] expected: Vec<&str>,
    ) {
        let p = pod(
            node,
            phase,
            json!([{"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
                   {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}},
                   {"name": "cfg", "configMap": {"name": "c"}}]),
        );
        assert_eq!(claims_of_pod(&p, deleted), expected);
    }

    #[test]
    fn only_a_scheduled_pod_uses_a_claim_and_a_shut_down_one_not_its_ephemeral_claim() {
        let claim = json!({"metadata": {"name": "data"}});
        let volumes = json!([{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]);
        assert!(uses(&pod(Some("n1"), "Succeeded", volumes.clone()), &claim));
        assert!(!uses(&pod(None, "Pending", volumes), &claim));

        let ephemeral = json!({"metadata": {"name": "web-scratch",
            "ownerReferences": [{"uid": "pod-uid", "controller": true}]}});
        let volumes = json!([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]);
        let mut p = pod(Some("n1"), "Running", volumes);
        assert!(uses(&p, &ephemeral));
        let foreign = json!({"metadata": {"name": "web-scratch"}});
        assert!(
            !uses(&p, &foreign),
            "a claim the pod does not control is not its own"
        );
        p["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        p["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        assert!(!uses(&p, &ephemeral));
    }

    #[rstest]
    #[case::fresh_without(json!({"metadata": {}}), true)]
    #[case::fresh_with(json!({"metadata": {"finalizers": [PVC_FINALIZER]}}), false)]
    #[case::deleting_with(json!({"metadata": {"deletionTimestamp": "t", "finalizers": [PVC_FINALIZER]}}), true)]
    #[case::deleting_without(json!({"metadata": {"deletionTimestamp": "t"}}), false)]
    fn a_claim_is_looked_at_when_its_finalizer_is_missing_or_may_go(
        #[case] claim: Value,
        #[case] expected: bool,
    ) {
        assert_eq!(needs_look(&claim, PVC_FINALIZER), expected);
    }
}
