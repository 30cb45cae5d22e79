//! The NodeClaim lifecycle controller's reconcile (spec §4): finalizer first, then Launch →
//! Registration → Initialization → Liveness on one in-memory object, then a metadata patch and a
//! status patch, then the minimum requeue.
//!
//! Deviations from the seed, each a fix of a sharp edge in spec §6:
//! - no `time.Sleep(1s)`: the read-own-writes gate ([`super::read_own_writes`]) defers the next
//!   pass of this NodeClaim until the cache shows our write, without holding a worker;
//! - errors: only NotFound errors are dropped, not every error alongside one (§6.5);
//! - transition times come from the injected clock, the one the TTLs use (§6.4).
//!
//! - merge patches carry the resourceVersion they were computed from (upstream's later fix
//!   71f7aef, `MergeFromWithOptimisticLock`): a JSON merge patch replaces `finalizers` and
//!   `status.conditions` whole, so without it a finalizer or condition another writer added
//!   meanwhile is lost (§6.2, §8.6). A 409 requeues, as upstream.
//!
//! - after an insufficient-capacity delete the pass ends: the deleting object is not patched
//!   (§6.9; upstream ignores deleting NodeClaims from 814a7d3).
//!
//! Kept faithful: split metadata/status writes (§6.3). An empty patch is not sent (a no-op on
//! any API server).

pub mod initialization;
pub mod launch;
pub mod liveness;
pub mod registration;

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, ResourceExt};
use serde_json::json;
use tracing::Instrument;

use super::context::Context;
use super::error::{ignore_not_found, Error};
use super::patch::{merge_diff, pick, with_optimistic_lock};
use super::read_own_writes::Gate;
use super::types::{NodeClaim, TERMINATION_FINALIZER};

/// A sub-reconciler's `reconcile.Result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing more to do until an event.
    Done,
    /// Run again after the rate limiter's delay (`Requeue: true`).
    Requeue,
    /// Run again after this long (`RequeueAfter`).
    RequeueAfter(Duration),
}

impl Outcome {
    /// `result.Min`: the soonest requeue; a bare `Requeue` counts as zero, `Done` is ignored.
    pub fn min(results: impl IntoIterator<Item = Outcome>) -> Outcome {
        results
            .into_iter()
            .fold(Outcome::Done, |acc, r| match (acc, r) {
                (_, Outcome::Done) => acc,
                (Outcome::Done, r) => r,
                (Outcome::Requeue, _) | (_, Outcome::Requeue) => Outcome::Requeue,
                (Outcome::RequeueAfter(a), Outcome::RequeueAfter(b)) => {
                    Outcome::RequeueAfter(a.min(b))
                }
            })
    }
}

/// What a whole pass decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    Finished(Outcome),
    /// The cache has not seen our last write yet.
    Deferred(Duration),
}

/// The lifecycle reconcile, for `kube::runtime::Controller` or any other scheduler.
pub async fn reconcile(nodeclaim: Arc<NodeClaim>, ctx: Arc<Context>) -> Result<Action, Error> {
    let key = nodeclaim.name_any();
    let span = tracing::info_span!("nodeclaim.lifecycle", nodeclaim = %key);
    let pass = reconcile_pass(&nodeclaim, &ctx).instrument(span).await?;
    Ok(match pass {
        Pass::Deferred(wait) => Action::requeue(wait),
        Pass::Finished(Outcome::Done) => {
            ctx.lifecycle_rate_limiter.forget(&key);
            Action::await_change()
        }
        Pass::Finished(Outcome::RequeueAfter(d)) => {
            ctx.lifecycle_rate_limiter.forget(&key);
            Action::requeue(d)
        }
        Pass::Finished(Outcome::Requeue) => Action::requeue(ctx.lifecycle_rate_limiter.when(&key)),
    })
}

/// Error policy: requeue after the rate limiter's delay (controller-runtime's `AddRateLimited`).
pub fn error_policy(nodeclaim: Arc<NodeClaim>, error: &Error, ctx: Arc<Context>) -> Action {
    let key = nodeclaim.name_any();
    tracing::error!(nodeclaim = %key, error = %error, "reconciler error");
    Action::requeue(ctx.lifecycle_rate_limiter.when(&key))
}

async fn reconcile_pass(triggered: &NodeClaim, ctx: &Context) -> Result<Pass, Error> {
    let name = triggered.name_any();
    let key = ObjectRef::from_obj(triggered);
    let api: Api<NodeClaim> = Api::all(ctx.client.clone());
    let gate = if ctx.config.acts_on_stale_cache {
        Gate::Proceed
    } else {
        ctx.read_own_writes.gate_with(&name, || {
            let latest = ctx.nodeclaims.get(&key);
            latest.as_deref().unwrap_or(triggered).resource_version()
        })
    };
    // Like controller-runtime, work on the cache's copy as of now (it may be newer than the one
    // the trigger carried) — unless the cache is still behind our own last write.
    let latest: Option<Arc<NodeClaim>> = match gate {
        Gate::Wait(wait) => {
            tracing::debug!(?wait, "cache has not seen our last write; deferring");
            return Ok(Pass::Deferred(wait));
        }
        Gate::Proceed => ctx.nodeclaims.get(&key),
        Gate::ReadLive => match api.get_opt(&name).await {
            Ok(Some(live)) => Some(Arc::new(live)),
            Ok(None) => return Ok(Pass::Finished(Outcome::Done)),
            Err(e) => return Err(Error::api("getting nodeclaim", e)),
        },
    };
    let cached: &NodeClaim = latest.as_deref().unwrap_or(triggered);
    if cached.is_deleting() {
        return Ok(Pass::Finished(Outcome::Done));
    }
    let mut nodeclaim = cached.clone();

    // Add the finalizer immediately since we shouldn't launch if we don't yet have the finalizer.
    // Otherwise, we could leak resources.
    if !nodeclaim.has_termination_finalizer() && !ctx.config.launches_without_finalizer {
        let mut finalizers = nodeclaim.metadata.finalizers.clone().unwrap_or_default();
        finalizers.push(TERMINATION_FINALIZER.to_string());
        // The merge patch replaces the whole list: lock it to the version it was computed from.
        let body = json!({"metadata": {"finalizers": finalizers}});
        let body = lock(ctx, body, nodeclaim.resource_version());
        match patch(ctx, &api, &name, Target::Object, &body).await {
            Ok(patched) => nodeclaim = patched,
            Err(e) if e.is_conflict() => return Ok(Pass::Finished(Outcome::Requeue)),
            Err(e) => {
                return ignore_not_found(vec![e]).map_or(Ok(Pass::Finished(Outcome::Done)), Err)
            }
        }
    }

    let stored = nodeclaim.clone();
    let mut errors = vec![];
    let mut results = vec![];
    for step in [
        Step::Launch,
        Step::Registration,
        Step::Initialization,
        Step::Liveness,
    ] {
        let r = match step {
            Step::Launch => launch::reconcile(ctx, &mut nodeclaim).await,
            Step::Registration => registration::reconcile(ctx, &mut nodeclaim).await,
            Step::Initialization => initialization::reconcile(ctx, &mut nodeclaim).await,
            Step::Liveness => liveness::reconcile(ctx, &mut nodeclaim).await,
        };
        match r {
            Ok(o) => results.push(o),
            Err(e) => {
                results.push(Outcome::Done);
                errors.push(e);
            }
        }
        // Launch deleted the NodeClaim (insufficient capacity): termination takes it from here.
        // Upstream went on to patch the deleting object (spec §6.9, fixed in 814a7d3); with the
        // optimistic lock that patch conflicts, and its requeue would run the next pass on a
        // cache that may not show the deletion yet, launching the deleting NodeClaim again.
        if nodeclaim.is_deleting() {
            return Ok(Pass::Finished(Outcome::Done));
        }
    }

    if stored != nodeclaim {
        let stored_json = to_json(&stored)?;
        let new_json = to_json(&nodeclaim)?;
        // Metadata (and spec) first, then status: two writes, as upstream (spec §6.3). Each is
        // locked to the version it was computed from: `stored`'s, or, for the status patch after
        // a metadata patch, the version that patch returned (only our own write is in between).
        let mut version = stored.resource_version();
        for target in [Target::Object, Target::Status] {
            let fields = target.fields();
            let Some(body) = merge_diff(&pick(&stored_json, fields), &pick(&new_json, fields))
            else {
                continue;
            };
            let body = lock(ctx, body, version.clone());
            match patch(ctx, &api, &name, target, &body).await {
                Ok(patched) => version = patched.resource_version(),
                // Someone else wrote meanwhile: start over from their version (upstream 71f7aef).
                Err(e) if e.is_conflict() => return Ok(Pass::Finished(Outcome::Requeue)),
                Err(e) => {
                    errors.push(e);
                    return ignore_not_found(errors).map_or(Ok(Pass::Finished(Outcome::Done)), Err);
                }
            }
        }
    }
    match errors.len() {
        0 => Ok(Pass::Finished(Outcome::min(results))),
        1 => Err(errors.remove(0)),
        _ => Err(Error::Multiple(errors)),
    }
}

/// Which endpoint a NodeClaim patch goes to.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// The object: metadata and spec.
    Object,
    /// The status subresource.
    Status,
}

impl Target {
    fn fields(self) -> &'static [&'static str] {
        match self {
            Target::Object => &["metadata", "spec"],
            Target::Status => &["status"],
        }
    }
}

/// The optimistic lock on a patch computed from the object at `resource_version` (none under
/// the test switch [`super::context::Config::merge_patches_without_optimistic_lock`], as
/// upstream v0.36).
fn lock(
    ctx: &Context,
    body: serde_json::Value,
    resource_version: Option<String>,
) -> serde_json::Value {
    match resource_version {
        Some(rv) if !ctx.config.merge_patches_without_optimistic_lock => {
            with_optimistic_lock(body, &rv)
        }
        _ => body,
    }
}

/// A JSON merge patch whose returned version is recorded for the read-own-writes gate.
async fn patch(
    ctx: &Context,
    api: &Api<NodeClaim>,
    name: &str,
    target: Target,
    body: &serde_json::Value,
) -> Result<NodeClaim, Error> {
    let params = PatchParams::default();
    let patched = match target {
        Target::Object => api.patch(name, &params, &Patch::Merge(body)).await,
        Target::Status => api.patch_status(name, &params, &Patch::Merge(body)).await,
    };
    match patched {
        Ok(mut obj) => {
            ctx.read_own_writes
                .wrote(name, obj.resource_version().as_deref());
            // The answer becomes the pass's working copy (after the finalizer patch): trimmed as
            // the cache's copies are, so the pass never encodes managedFields only to diff them
            // away (found by heaptrack in `make bench-scale`: the largest share of a lifecycle
            // pass's memory, times up to 1000 passes at once).
            super::trim::nodeclaim(&mut obj);
            Ok(obj)
        }
        Err(e) => Err(Error::api(
            match target {
                Target::Object => "patching nodeclaim",
                Target::Status => "patching nodeclaim status",
            },
            e,
        )),
    }
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Launch,
    Registration,
    Initialization,
    Liveness,
}

fn to_json(nc: &NodeClaim) -> Result<serde_json::Value, Error> {
    serde_json::to_value(nc).map_err(|source| Error::Encode {
        what: format!("nodeclaim {}", nc.name_any()),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[rstest]
    #[case::all_done(vec![Outcome::Done, Outcome::Done], Outcome::Done)]
    #[case::smallest_after(vec![Outcome::RequeueAfter(S(900)), Outcome::Done, Outcome::RequeueAfter(S(5))], Outcome::RequeueAfter(S(5)))]
    #[case::bare_requeue_is_zero(vec![Outcome::RequeueAfter(S(5)), Outcome::Requeue], Outcome::Requeue)]
    #[case::empty(vec![], Outcome::Done)]
    fn min(#[case] results: Vec<Outcome>, #[case] want: Outcome) {
        assert_eq!(Outcome::min(results), want);
    }
}
