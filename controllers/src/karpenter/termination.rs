//! The NodeClaim termination controller (spec §5, `nodeclaim/termination`): for a deleting
//! NodeClaim with the termination finalizer, delete its Nodes, wait until they are gone, delete
//! the instance, then drop the finalizer.
//!
//! As upstream: Nodes already deleting are not deleted again; the wait ends on Node delete events
//! (no polling); the cloud `Delete` runs only once no Node remains and only for a launched
//! NodeClaim, with NodeClaimNotFound ignored; the finalizer is removed with an **Update** carrying
//! the cached resourceVersion, because a JSON merge patch would replace the whole finalizer list
//! and race with other writers — a 409 requeues.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Node;
use kube::api::{DeleteParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use tracing::Instrument;

use super::context::Context;
use super::error::{is_conflict, is_not_found, Error};
use super::nodes::nodes_with_provider_id;
use super::types::{NodeClaim, TERMINATION_FINALIZER};

/// What a termination pass decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminationOutcome {
    /// Nothing to do, or waiting for Node delete events.
    Done,
    /// The finalizer update conflicted: retry (rate limited).
    Requeue,
}

/// The termination reconcile, for `kube::runtime::Controller` or any other scheduler.
pub async fn reconcile(nodeclaim: Arc<NodeClaim>, ctx: Arc<Context>) -> Result<Action, Error> {
    let key = nodeclaim.name_any();
    let span = tracing::info_span!(
        "nodeclaim.termination",
        nodeclaim = %key,
        node = %nodeclaim.status.as_ref().map(|s| s.node_name.as_str()).unwrap_or(""),
        provider_id = %nodeclaim.provider_id()
    );
    match finalize(&nodeclaim, &ctx).instrument(span).await? {
        TerminationOutcome::Done => {
            ctx.termination_rate_limiter.forget(&key);
            Ok(Action::await_change())
        }
        TerminationOutcome::Requeue => Ok(Action::requeue(ctx.termination_rate_limiter.when(&key))),
    }
}

/// Error policy: requeue after the rate limiter's delay.
pub fn error_policy(nodeclaim: Arc<NodeClaim>, error: &Error, ctx: Arc<Context>) -> Action {
    let key = nodeclaim.name_any();
    tracing::error!(nodeclaim = %key, error = %error, "termination reconciler error");
    Action::requeue(ctx.termination_rate_limiter.when(&key))
}

/// `Finalize`: one termination pass over a cached NodeClaim.
pub async fn finalize(nodeclaim: &NodeClaim, ctx: &Context) -> Result<TerminationOutcome, Error> {
    // Only deleting NodeClaims are finalized (the controller's Reconcile is a no-op).
    if !nodeclaim.is_deleting() || !nodeclaim.has_termination_finalizer() {
        return Ok(TerminationOutcome::Done);
    }
    let nodes = nodes_with_provider_id(&ctx.nodes, nodeclaim.provider_id());
    let node_api: Api<Node> = Api::all(ctx.client.clone());
    for node in &nodes {
        // Already terminating: no need to call Delete again.
        if node.metadata.deletion_timestamp.is_none() {
            match node_api
                .delete(&node.name_any(), &DeleteParams::default())
                .await
            {
                Ok(_) => {}
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(Error::api("deleting node", e)),
            }
        }
    }
    // Wait until every Node of this NodeClaim is gone; their delete events requeue us.
    // (`termination_skips_waiting_for_nodes` is a test switch that removes this guard.)
    if !nodes.is_empty() && !ctx.config.termination_skips_waiting_for_nodes {
        return Ok(TerminationOutcome::Done);
    }
    if !nodeclaim.provider_id().is_empty() {
        if let Err(e) = ctx.cloud_provider.delete(nodeclaim).await {
            if !e.is_nodeclaim_not_found() {
                return Err(Error::CloudProvider {
                    action: "terminating cloudprovider instance".into(),
                    source: e,
                });
            }
        }
    }
    let mut updated = nodeclaim.clone();
    if let Some(f) = updated.metadata.finalizers.as_mut() {
        f.retain(|x| x != TERMINATION_FINALIZER);
    }
    // Update, not a merge patch: the resourceVersion makes it fail instead of clobbering a
    // finalizer someone else added meanwhile.
    match Api::<NodeClaim>::all(ctx.client.clone())
        .replace(&nodeclaim.name_any(), &PostParams::default(), &updated)
        .await
    {
        Ok(_) => {
            tracing::info!("deleted nodeclaim");
            Ok(TerminationOutcome::Done)
        }
        Err(e) if is_conflict(&e) => Ok(TerminationOutcome::Requeue),
        Err(e) if is_not_found(&e) => Ok(TerminationOutcome::Done),
        Err(e) => Err(Error::api("removing termination finalizer", e)),
    }
}
