//! Launch (spec §4.1): create the instance exactly once and copy what the provider returned.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::DeleteParams;
use kube::{Api, ResourceExt};

use crate::karpenter::cloudprovider::CloudProviderError;
use crate::karpenter::conditions::{mark_false, mark_true};
use crate::karpenter::context::Context;
use crate::karpenter::error::{is_not_found, Error};
use crate::karpenter::events::truncate_message;
use crate::karpenter::metrics::{Metrics, TerminatedLabels};
use crate::karpenter::requirements::Requirements;
use crate::karpenter::types::{
    condition_types::LAUNCHED, NodeClaim, CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, ZONE_LABEL,
};

use super::Outcome;

/// Launch's pass over the in-memory NodeClaim.
pub async fn reconcile(ctx: &Context, nodeclaim: &mut NodeClaim) -> Result<Outcome, Error> {
    // Already launched: nothing to do.
    if nodeclaim.condition_is_true(LAUNCHED) {
        return Ok(Outcome::Done);
    }
    let Some(uid) = nodeclaim.uid() else {
        return Err(Error::InvalidObject(format!(
            "nodeclaim {} has no uid",
            nodeclaim.name_any()
        )));
    };
    // The instance may already be launched while the informer is stale or the status patch
    // failed: reuse the cached result rather than calling Create again (spec §8.2). Keyed by UID,
    // so a NodeClaim recreated under the same name launches again.
    let cache_key = if ctx.config.launch_cache_keyed_by_name {
        nodeclaim.name_any()
    } else {
        uid
    };
    let created = match ctx.launch_cache.get(&cache_key) {
        Some(created) => Some(created),
        None => match launch_nodeclaim(ctx, nodeclaim).await {
            Ok(created) => created,
            // NodeClassNotReady: LaunchFailed is set; requeue without an error.
            Err(Error::CloudProvider {
                source: CloudProviderError::NodeClassNotReady(_),
                ..
            }) => return Ok(Outcome::Requeue),
            Err(e) => return Err(e),
        },
    };
    // Insufficient capacity deleted the NodeClaim: no condition change.
    let Some(created) = created else {
        return Ok(Outcome::Done);
    };
    ctx.launch_cache.set_default(&cache_key, created.clone());
    populate_nodeclaim_details(
        nodeclaim,
        &created,
        &Requirements::new(&nodeclaim.spec.requirements).labels(ctx.ids.as_ref()),
    );
    mark_true(nodeclaim, LAUNCHED, ctx.clock.now());
    ctx.metrics
        .launched
        .get_or_create(&Metrics::pool(nodeclaim.nodepool()))
        .inc();
    Ok(Outcome::Done)
}

/// Calls the provider; `Ok(None)` when an insufficient-capacity error made us delete the NodeClaim.
async fn launch_nodeclaim(
    ctx: &Context,
    nodeclaim: &mut NodeClaim,
) -> Result<Option<NodeClaim>, Error> {
    match ctx.cloud_provider.create(nodeclaim).await {
        Ok(created) => {
            let labels = created.metadata.labels.clone().unwrap_or_default();
            let get = |k: &str| labels.get(k).cloned().unwrap_or_default();
            tracing::info!(
                provider_id = %created.provider_id(),
                instance_type = %get(INSTANCE_TYPE_LABEL),
                zone = %get(ZONE_LABEL),
                capacity_type = %get(CAPACITY_TYPE_LABEL),
                allocatable = ?created.status.as_ref().map(|s| &s.allocatable),
                "launched nodeclaim"
            );
            Ok(Some(created))
        }
        // Insufficient capacity: event, delete the NodeClaim, count it; the provisioner retries.
        Err(err @ CloudProviderError::InsufficientCapacity(_))
            if !ctx.config.insufficient_capacity_keeps_nodeclaim =>
        {
            ctx.recorder
                .insufficient_capacity(nodeclaim, &err.to_string())
                .await;
            tracing::error!(error = %err, "launching nodeclaim");
            let api: Api<NodeClaim> = Api::all(ctx.client.clone());
            match api
                .delete(&nodeclaim.name_any(), &DeleteParams::default())
                .await
            {
                Ok(deleted) => {
                    if let Some(obj) = deleted.left() {
                        ctx.read_own_writes
                            .wrote(&nodeclaim.name_any(), obj.resource_version().as_deref());
                    }
                    // Deleting now: the reconcile stops here (spec §6.9, upstream 814a7d3).
                    nodeclaim.metadata.deletion_timestamp = Some(Time(ctx.clock.now()));
                }
                Err(e) if is_not_found(&e) => {
                    nodeclaim.metadata.deletion_timestamp = Some(Time(ctx.clock.now()));
                    return Ok(None);
                }
                Err(e) => {
                    return Err(Error::api(
                        "deleting nodeclaim after insufficient capacity",
                        e,
                    ))
                }
            }
            ctx.metrics
                .terminated
                .get_or_create(&TerminatedLabels {
                    reason: "insufficient_capacity".into(),
                    nodepool: nodeclaim.nodepool().into(),
                    capacity_type: nodeclaim.label(CAPACITY_TYPE_LABEL).into(),
                })
                .inc();
            Ok(None)
        }
        // Node class not ready: event and LaunchFailed; the caller requeues.
        Err(err @ CloudProviderError::NodeClassNotReady(_)) => {
            ctx.recorder
                .node_class_not_ready(nodeclaim, &err.to_string())
                .await;
            mark_false(
                nodeclaim,
                LAUNCHED,
                "LaunchFailed",
                &truncate_message(&err.to_string()),
                ctx.clock.now(),
            );
            Err(Error::CloudProvider {
                action: "launching nodeclaim".into(),
                source: err,
            })
        }
        // Any other error: LaunchFailed and the error.
        Err(err) => {
            mark_false(
                nodeclaim,
                LAUNCHED,
                "LaunchFailed",
                &truncate_message(&err.to_string()),
                ctx.clock.now(),
            );
            Err(Error::CloudProvider {
                action: "launching nodeclaim".into(),
                source: err,
            })
        }
    }
}

/// `PopulateNodeClaimDetails`: labels = provider ⊕ requirement labels ⊕ NodeClaim (the user wins);
/// annotations = NodeClaim ⊕ provider (the provider wins); provider id, image id, allocatable and
/// capacity copied.
pub fn populate_nodeclaim_details(
    nodeclaim: &mut NodeClaim,
    created: &NodeClaim,
    requirement_labels: &std::collections::BTreeMap<String, String>,
) {
    let mut labels = created.metadata.labels.clone().unwrap_or_default();
    labels.extend(requirement_labels.clone());
    labels.extend(nodeclaim.metadata.labels.clone().unwrap_or_default());
    if !labels.is_empty() || nodeclaim.metadata.labels.is_some() {
        nodeclaim.metadata.labels = Some(labels);
    }
    let mut annotations = nodeclaim.metadata.annotations.clone().unwrap_or_default();
    annotations.extend(created.metadata.annotations.clone().unwrap_or_default());
    if !annotations.is_empty() || nodeclaim.metadata.annotations.is_some() {
        nodeclaim.metadata.annotations = Some(annotations);
    }
    let from = created.status.clone().unwrap_or_default();
    let status = nodeclaim.status.get_or_insert_with(Default::default);
    status.provider_id = from.provider_id;
    status.image_id = from.image_id;
    status.allocatable = from.allocatable;
    status.capacity = from.capacity;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karpenter::types::NodeClaimStatus;
    use std::collections::BTreeMap;

    fn map(kv: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
        Some(
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn user_labels_win_and_provider_annotations_win() {
        let mut nc = NodeClaim::new("a", Default::default());
        nc.metadata.labels = map(&[("team", "user"), ("only-user", "1")]);
        nc.metadata.annotations = map(&[("a", "user"), ("only-user", "1")]);
        let mut created = NodeClaim::new("a", Default::default());
        created.metadata.labels = map(&[("team", "provider"), ("zone", "z"), ("req", "provider")]);
        created.metadata.annotations = map(&[("a", "provider")]);
        created.status = Some(NodeClaimStatus {
            provider_id: "p".into(),
            image_id: "img".into(),
            ..Default::default()
        });
        let req = map(&[("req", "requirement"), ("team", "requirement")]).unwrap();
        populate_nodeclaim_details(&mut nc, &created, &req);
        let labels = nc.metadata.labels.unwrap();
        assert_eq!(labels["team"], "user");
        assert_eq!(labels["req"], "requirement");
        assert_eq!(labels["zone"], "z");
        let ann = nc.metadata.annotations.unwrap();
        assert_eq!(ann["a"], "provider");
        assert_eq!(ann["only-user"], "1");
        assert_eq!(nc.status.as_ref().unwrap().provider_id, "p");
        assert_eq!(nc.status.as_ref().unwrap().image_id, "img");
    }
}
