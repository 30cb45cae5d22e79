//! A minimal node termination controller, so deletion completes without upstream's full one.
//!
//! Registration puts `karpenter.sh/termination` on every Node it registers. Upstream's node
//! termination controller then owns deleting Nodes: it deletes the NodeClaims with the Node's
//! provider id, taints and drains the Node, and drops the finalizer. This stand-in does the first
//! and last steps — no tainting, no draining of pods — and removes the finalizer with an Update
//! carrying the cached resourceVersion (409 requeues).

use std::sync::Arc;

use k8s_openapi::api::core::v1::Node;
use kube::api::{DeleteParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};

use super::context::Context;
use super::error::{is_conflict, is_not_found, Error};
use super::nodes::node_provider_id;
use super::types::{NodeClaim, TERMINATION_FINALIZER};

fn key(node: &Node) -> String {
    format!("node/{}", node.name_any())
}

/// One pass over a cached Node.
pub async fn reconcile(node: Arc<Node>, ctx: Arc<Context>) -> Result<Action, Error> {
    let has_finalizer = node
        .metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|x| x == TERMINATION_FINALIZER));
    if node.metadata.deletion_timestamp.is_none() || !has_finalizer {
        return Ok(Action::await_change());
    }
    let provider_id = node_provider_id(&node);
    let nc_api: Api<NodeClaim> = Api::all(ctx.client.clone());
    if !provider_id.is_empty() {
        let mut nodeclaims = ctx
            .nodeclaims
            .state_filter(|nc| nc.provider_id() == provider_id && !nc.is_deleting());
        // Store order is random; a fixed order keeps runs reproducible.
        nodeclaims.sort_by_key(|nc| nc.name_any());
        for nc in nodeclaims {
            match nc_api
                .delete(&nc.name_any(), &DeleteParams::default())
                .await
            {
                Ok(_) => {}
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(Error::api("deleting nodeclaim of deleting node", e)),
            }
        }
    }
    let mut updated = (*node).clone();
    if let Some(f) = updated.metadata.finalizers.as_mut() {
        f.retain(|x| x != TERMINATION_FINALIZER);
    }
    match Api::<Node>::all(ctx.client.clone())
        .replace(&node.name_any(), &PostParams::default(), &updated)
        .await
    {
        Ok(_) => {
            tracing::info!(node = %node.name_any(), "deleted node");
            ctx.termination_rate_limiter.forget(&key(&node));
            Ok(Action::await_change())
        }
        Err(e) if is_conflict(&e) => Ok(Action::requeue(
            ctx.termination_rate_limiter.when(&key(&node)),
        )),
        Err(e) if is_not_found(&e) => Ok(Action::await_change()),
        Err(e) => Err(Error::api("removing node termination finalizer", e)),
    }
}

/// Error policy: requeue after the rate limiter's delay.
pub fn error_policy(node: Arc<Node>, error: &Error, ctx: Arc<Context>) -> Action {
    tracing::error!(node = %node.name_any(), error = %error, "node termination reconciler error");
    Action::requeue(ctx.termination_rate_limiter.when(&key(&node)))
}
