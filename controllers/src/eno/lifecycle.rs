//! The lifecycle reconcile (upstream `podLifecycleController.Reconcile`), spec §3 and §3.1.
//!
//! Reads go through the context's caches, which may lag; the pod existence check before a
//! create (step 14) goes to the API server. Every write is a whole-object update carrying the
//! cached `resourceVersion`: correctness relies on the 409 a stale copy gets (spec §5.8, §7.2),
//! so none of them may become a merge patch. Each write ends the reconcile; the watch event it
//! causes runs the next step.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::ResourceExt;
use tracing::{debug, field, info, info_span, Instrument, Span};

use super::context::Config;
use super::context::Context;
use super::error::{is_status, Error};
use super::pod_template::new_pod;
use super::should_delete::{should_delete_pod_allowing, DeleteReason, TerminatingPodAllowance};
use super::synthesis_state::{
    current, generation, is_deleting, is_reconciling, needs_swap, pod_creation_backoff,
    should_revert_state_swap, should_update_deleted_composition_status, swap_states,
};
use super::types::{Composition, Synthesizer};
use super::{FINALIZER, LABEL_SYNTHESIS_UUID};

/// The longest requeue this controller asks for. A user's `podTimeout` can be arbitrarily
/// large; the controller runtime's delay queue cannot hold years, so longer waits are split.
pub const MAX_REQUEUE: Duration = Duration::from_secs(24 * 3600);

/// Reconcile one Composition. `comp` names the composition; its content is read from the cache.
pub async fn reconcile(comp: Arc<Composition>, ctx: Arc<Context>) -> Result<Action, Error> {
    let span = info_span!(
        "reconcile",
        controller = "podLifecycleController",
        compositionName = %comp.name_any(),
        compositionNamespace = %comp.namespace().unwrap_or_default(),
        compositionGeneration = field::Empty,
        synthesizerName = field::Empty,
        synthesizerGeneration = field::Empty,
    );
    reconcile_composition(ObjectRef::from_obj(comp.as_ref()), &ctx)
        .instrument(span)
        .await
}

async fn reconcile_composition(
    key: ObjectRef<Composition>,
    ctx: &Context,
) -> Result<Action, Error> {
    // 1. The composition from the cache; gone means nothing to do.
    let Some(cached) = ctx.compositions.get(&key) else {
        return Ok(Action::await_change());
    };
    let mut comp = (*cached).clone();
    Span::current().record("compositionGeneration", generation(&comp));
    let namespace = key
        .namespace
        .clone()
        .ok_or(Error::MissingMetadata("namespace"))?;
    let compositions: Api<Composition> = Api::namespaced(ctx.client.clone(), &namespace);

    // 2. Finalizer first: slices must be cleaned up before the composition goes, since
    // reconciling them needs it (spec §7.1).
    // (Test switch `skip_composition_finalizer`: never add it.)
    if !ctx.config.skip_composition_finalizer
        && !is_deleting(&comp)
        && !comp.finalizers().iter().any(|f| f == FINALIZER)
    {
        comp.finalizers_mut().push(FINALIZER.to_string());
        compositions
            .replace(&key.name, &PostParams::default(), &comp)
            .await
            .map_err(Error::api("updating composition"))?;
        debug!("added cleanup finalizer to composition");
        return Ok(Action::await_change());
    }

    // 3. The composition's pods, from the cache (keyed by namespace and name, see `pods_of`).
    let pods = ctx.pods_of(&key);

    // 4. The Synthesizer, from the cache. Upstream returns any error here, NotFound included,
    // which also blocks deletion forever (spec §5.4). Deliberate change: a deleting composition
    // goes on without its Synthesizer (no pod timeout applies).
    let syn = lookup_synthesizer(ctx, &comp);
    let syn = match syn {
        Some(syn) => {
            Span::current().record("synthesizerName", syn.name_any());
            Span::current().record(
                "synthesizerGeneration",
                syn.metadata.generation.unwrap_or(0),
            );
            Some(syn)
        }
        None if is_deleting(&comp) => {
            debug!(synthesizerName = %comp.spec.synthesizer.name, "synthesizer not found; continuing the deletion without it");
            None
        }
        None => {
            return Err(Error::SynthesizerNotFound {
                name: comp.spec.synthesizer.name.clone(),
            })
        }
    };
    let pod_timeout = syn.as_ref().and_then(|s| s.spec.pod_timeout).map(|t| t.0);

    // 5. Which pod, if any, to delete; and whether one still exists.
    let decision = should_delete_pod_allowing(
        &comp,
        pod_timeout,
        &pods,
        ctx.clock.now(),
        terminating_pod_allowance(&ctx.config),
    );

    // 6. Delete it: no precondition, NotFound is fine. The delete event brings us back.
    if let Some((pod, reason)) = decision.to_delete {
        if reason == DeleteReason::Timeout {
            ctx.metrics.pod_recreations.inc();
        }
        delete_pod(ctx, &pod).await?;
        let latency = (reason == DeleteReason::Success)
            .then(|| current(&comp).and_then(|c| c.pod_creation.as_ref()))
            .flatten()
            .map(|created| ctx.clock.now().duration_since(created.0).as_millis());
        info!(podName = %pod.name_any(), %reason, latency, "deleted synthesizer pod");
        return Ok(Action::await_change());
    }

    // 7. A pod is still running: poll after a full podTimeout to check whether it has timed out.
    if decision.exists {
        return Ok(match pod_timeout {
            Some(timeout) => Action::requeue(timeout.min(MAX_REQUEUE)),
            None => Action::await_change(),
        });
    }

    // 8. Deleting, with no live pod and at most one terminating: the deletion path.
    if is_deleting(&comp) {
        return reconcile_deleted_composition(&compositions, &key, comp, ctx).await;
    }

    // From here on a Synthesizer exists (step 4 returned otherwise).
    let Some(syn) = syn else {
        return Ok(Action::await_change());
    };

    // 9. A new generation (or none yet): swap current into previous and start over.
    if needs_swap(&comp) {
        swap_states(&mut comp, syn.metadata.generation.unwrap_or(0));
        compositions
            .replace_status(&key.name, &PostParams::default(), &comp)
            .await
            .map_err(Error::api("swapping composition state"))?;
        info!("start to synthesize");
        return Ok(Action::await_change());
    }
    let Some(current_synthesis) = current(&comp).cloned() else {
        return Ok(Action::await_change());
    };

    // 10. Everything is in sync. (Upstream also tests `deleting` here: dead, step 8 returned.)
    if current_synthesis.synthesized.is_some() {
        return Ok(Action::await_change());
    }

    // 11. No synthesizer named: nothing to run (unreachable, step 4 fails first; kept as upstream).
    if comp.spec.synthesizer.name.is_empty() {
        return Ok(Action::await_change());
    }

    // 12. Write *something* before the first pod: the write conflicts if the synthesis has
    // already completed, so a pod-delete event that outruns the completion event cannot spawn a
    // pod (spec §7.3).
    // (Test switch `skip_uuid_write_before_first_pod`: mint the UUID, create the pod, and
    // write the UUID only after.)
    let mut uuid_written_after_pod = false;
    if current_synthesis.uuid.is_empty() {
        if let Some(status) = comp.status.as_mut() {
            if let Some(current) = status.current_synthesis.as_mut() {
                current.uuid = ctx.ids.uuid().to_string();
            }
        }
        if !ctx.config.skip_uuid_write_before_first_pod {
            compositions
                .replace_status(&key.name, &PostParams::default(), &comp)
                .await
                .map_err(Error::api("writing started timestamp to status"))?;
            return Ok(Action::await_change());
        }
        uuid_written_after_pod = true;
    }
    let Some(current_synthesis) = current(&comp).cloned() else {
        return Ok(Action::await_change());
    };

    // 13. Back off between attempts, so an impossible composition is not synthesized in a loop.
    // (Test switch `skip_pod_creation_backoff`: no wait.)
    let backoff = pod_creation_backoff(&current_synthesis, ctx.clock.now())
        .filter(|_| !ctx.config.skip_pod_creation_backoff);
    if let Some(wait) = backoff {
        debug!(
            latency = wait.as_millis() as u64,
            "backing off pod creation"
        );
        return Ok(Action::requeue(wait.min(MAX_REQUEUE)));
    }

    // 14. Ask the API server, not the cache, whether this synthesis already has a pod: the cache
    // may not show a pod created moments ago (spec §7.4).
    let live_pods: Api<Pod> = Api::namespaced(ctx.client.clone(), &ctx.config.pod_namespace);
    let selector = format!("{LABEL_SYNTHESIS_UUID}={}", current_synthesis.uuid);
    let existing = live_pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(Error::api("checking for existing pod"))?;
    if let Some(pod) = existing
        .items
        .iter()
        .find(|p| p.metadata.deletion_timestamp.is_none())
    {
        info!(
            podName = %pod.name_any(),
            "refusing to create new synthesizer pod because the pod already exists and has not been deleted"
        );
        return Ok(Action::await_change());
    }

    // 15. Safe to create the pod.
    let mut pod = new_pod(&ctx.config, &comp, &syn);
    if ctx.config.skip_pod_finalizer {
        // Test switch: the pod may go before the status controller records its attempt.
        pod.metadata.finalizers = None;
    }
    let created = live_pods
        .create(&PostParams::default(), &pod)
        .await
        .map_err(Error::api("creating pod"))?;
    info!(podName = %created.name_any(), "created synthesizer pod");
    ctx.metrics.syntheses.inc();
    if uuid_written_after_pod {
        // Test switch `skip_uuid_write_before_first_pod`: the UUID is written only now.
        compositions
            .replace_status(&key.name, &PostParams::default(), &comp)
            .await
            .map_err(Error::api("writing started timestamp to status"))?;
    }
    Ok(Action::await_change())
}

/// §3.1: the composition is deleting, no live pod remains and at most one is terminating.
async fn reconcile_deleted_composition(
    compositions: &Api<Composition>,
    key: &ObjectRef<Composition>,
    mut comp: Composition,
    ctx: &Context,
) -> Result<Action, Error> {
    let pp = PostParams::default();

    // D1. A synthesis in flight never finishes for a deleted composition: go back to the
    // previous one, which has resources to clean up.
    // (Test switch `skip_deletion_revert`: never.)
    if !ctx.config.skip_deletion_revert && should_revert_state_swap(&comp) {
        if let Some(status) = comp.status.as_mut() {
            status.current_synthesis = status.previous_synthesis.take();
        }
        compositions
            .replace_status(&key.name, &pp, &comp)
            .await
            .map_err(Error::api("reverting swapped status for deletion"))?;
        info!("reverted swapped status for deletion");
        return Ok(Action::await_change());
    }

    // D2. Deletion bumped the generation; the reconciler's cache invalidates only when the
    // synthesized generation changes, and a deleted composition never resynthesizes. Faking a
    // synthesis of the new generation breaks that deadlock.
    // (Test switch `skip_deleted_composition_status_update`: never.)
    if !ctx.config.skip_deleted_composition_status_update
        && should_update_deleted_composition_status(&comp)
    {
        let generation = generation(&comp);
        let now = Time(ctx.clock.now());
        if let Some(current) = comp
            .status
            .as_mut()
            .and_then(|s| s.current_synthesis.as_mut())
        {
            current.observed_composition_generation = generation;
            current.ready = None;
            current.reconciled = None;
            current.synthesized = Some(now);
        }
        compositions
            .replace_status(&key.name, &pp, &comp)
            .await
            .map_err(Error::api("updating current composition generation"))?;
        info!("updated composition status to reflect deletion");
        return Ok(Action::await_change());
    }

    // D3. The reconciler is still deleting resources; its status write brings us back.
    // (Test switch `skip_reconciling_check`: do not wait.)
    if !ctx.config.skip_reconciling_check && is_reconciling(&comp) {
        debug!("refusing to remove composition finalizer because it is still being reconciled");
        return Ok(Action::await_change());
    }

    // D4. Done: let the composition go. A terminating pod does not block this (since #103).
    let before = comp.finalizers().len();
    comp.finalizers_mut().retain(|f| f != FINALIZER);
    if comp.finalizers().len() != before {
        compositions
            .replace(&key.name, &pp, &comp)
            .await
            .map_err(Error::api("removing finalizer"))?;
        info!("removed finalizer from composition");
    }
    Ok(Action::await_change())
}

/// The terminating-pod allowance of step 5: one, as upstream, unless a test switch says
/// otherwise.
fn terminating_pod_allowance(config: &Config) -> TerminatingPodAllowance {
    if config.terminating_pod_blocks_creation {
        TerminatingPodAllowance::None
    } else if config.terminating_pods_never_block_creation {
        TerminatingPodAllowance::Unlimited
    } else {
        TerminatingPodAllowance::One
    }
}

/// The composition's Synthesizer from the cache.
fn lookup_synthesizer(ctx: &Context, comp: &Composition) -> Option<Arc<Synthesizer>> {
    let name = &comp.spec.synthesizer.name;
    if name.is_empty() {
        return None;
    }
    ctx.synthesizers.get(&ObjectRef::new(name))
}

/// Delete a synthesizer pod without preconditions; NotFound counts as done.
async fn delete_pod(ctx: &Context, pod: &Pod) -> Result<(), Error> {
    let namespace = pod
        .metadata
        .namespace
        .as_deref()
        .ok_or(Error::MissingMetadata("namespace"))?;
    let name = pod
        .metadata
        .name
        .as_deref()
        .ok_or(Error::MissingMetadata("name"))?;
    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), namespace);
    match pods.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(e) if is_status(&e, 404) => Ok(()),
        Err(e) => Err(Error::api("deleting pod")(e)),
    }
}
