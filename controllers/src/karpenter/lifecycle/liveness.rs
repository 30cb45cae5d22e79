//! Liveness (spec §4.4): delete NodeClaims whose Node has not registered within the TTL (15m),
//! measured from `Registered`'s last transition time on the injected clock. This also covers
//! failed launches: Registration sets `Registered=False NotLaunched` on the first pass.

use std::time::Duration;

use kube::api::DeleteParams;
use kube::{Api, ResourceExt};

use crate::karpenter::context::Context;
use crate::karpenter::error::{is_not_found, Error};
use crate::karpenter::metrics::TerminatedLabels;
use crate::karpenter::types::{condition_types::REGISTERED, NodeClaim, CAPACITY_TYPE_LABEL};

use super::Outcome;

/// Liveness's pass over the in-memory NodeClaim.
pub async fn reconcile(ctx: &Context, nodeclaim: &mut NodeClaim) -> Result<Outcome, Error> {
    let Some(registered) = nodeclaim.condition(REGISTERED) else {
        // No Registered condition yet: come back (rate limited).
        return Ok(Outcome::Requeue);
    };
    // Registered: nothing to watch.
    if registered.is_true() {
        return Ok(Outcome::Done);
    }
    let now = ctx.clock.now();
    let since = registered
        .last_transition_time
        .as_ref()
        .map(|t| now.duration_since(t.0))
        .unwrap_or_default();
    let ttl = ctx.config.registration_ttl;
    if since < ttl {
        // Not yet: come back when the TTL runs out.
        return Ok(Outcome::RequeueAfter(
            Duration::try_from(ttl - since).unwrap_or(Duration::ZERO),
        ));
    }
    // The Node never registered: delete the NodeClaim so the provisioner can try again.
    let name = nodeclaim.name_any();
    match Api::<NodeClaim>::all(ctx.client.clone())
        .delete(&name, &DeleteParams::default())
        .await
    {
        Ok(deleted) => {
            if let Some(obj) = deleted.left() {
                ctx.read_own_writes
                    .wrote(&name, obj.resource_version().as_deref());
            }
        }
        Err(e) if is_not_found(&e) => return Ok(Outcome::Done),
        Err(e) => return Err(Error::api("deleting nodeclaim after registration ttl", e)),
    }
    tracing::debug!(ttl = %ttl, "terminating due to registration ttl");
    ctx.metrics
        .terminated
        .get_or_create(&TerminatedLabels {
            reason: "liveness".into(),
            nodepool: nodeclaim.nodepool().into(),
            capacity_type: nodeclaim.label(CAPACITY_TYPE_LABEL).into(),
        })
        .inc();
    Ok(Outcome::Done)
}
