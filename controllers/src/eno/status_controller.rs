//! The status controller (upstream `statusController`, spec §4): records each synthesizer pod
//! attempt on its Composition (`podCreation`, `observedSynthesizerGeneration`, `attempts`), then
//! removes the pod's finalizer.
//!
//! The pod finalizer lives exactly until the attempt is recorded, so a pod deleted within the
//! informer lag cannot vanish unseen and defeat the backoff (spec §7.6).

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};
use tracing::{debug, info, info_span, Instrument};

use super::context::label;
use super::error::{is_status, Error};
use super::should_delete::{annotation_i64, pod_composition_generation};
use super::types::{Composition, Synthesis};
use super::{
    ANNOTATION_SYNTHESIZER_GENERATION, FINALIZER, LABEL_COMPOSITION_NAME,
    LABEL_COMPOSITION_NAMESPACE,
};
use std::time::Duration;

/// How soon the status controller looks at a pod again after recording its attempt
/// (upstream's `Requeue: true`).
pub const REQUEUE_AFTER_RECORD: Duration = Duration::from_millis(100);

/// What the status reconcile works with.
#[derive(Clone)]
pub struct StatusContext {
    /// Writes.
    pub client: Client,
    /// Pod cache (pod namespace, `managed-by=eno`).
    pub pods: Store<Pod>,
    /// Composition cache.
    pub compositions: Store<Composition>,
}

/// Reconcile one synthesizer pod.
pub async fn reconcile(pod: Arc<Pod>, ctx: Arc<StatusContext>) -> Result<Action, Error> {
    let span = info_span!(
        "reconcile",
        controller = "statusController",
        podName = %pod.name_any(),
        podNamespace = %pod.namespace().unwrap_or_default(),
    );
    reconcile_pod(ObjectRef::from_obj(pod.as_ref()), &ctx)
        .instrument(span)
        .await
}

/// The decision for one pod.
#[derive(Debug, Clone, PartialEq)]
pub enum StatusDecision {
    /// Record the attempt: this is the new current synthesis.
    Record(Synthesis),
    /// The attempt is recorded (or cannot be): remove the pod finalizer.
    ReleasePod,
}

/// Whether to record this pod's attempt on the composition's current synthesis.
///
/// Upstream records when `current == nil || (observed gen == pod gen && (podCreation == nil ||
/// observedSynthesizerGeneration == 0 || podCreation != pod ctime))`, and then dereferences the
/// nil current synthesis. Deliberate change: with no current synthesis there is nothing to
/// record on, and the pod is released. A pod without a creation timestamp is released too (it
/// would otherwise be recorded again on every pass).
///
/// Second deliberate change: "podCreation ≠ pod ctime" records only a pod *newer* than the one
/// recorded. Upstream records whenever the two differ, so while two pods of one synthesis live
/// (one terminating, one new, as §7.5 allows) each pass records the other again: attempts grow
/// past the pods created and the status writes never stop (found by the race harness,
/// `eno/pod-creation-backoff` seed 200). An older pod's attempt was recorded before the newer
/// one's, or is superseded by it; it is released.
pub fn decide(comp: &Composition, pod: &Pod) -> StatusDecision {
    let Some(current) = comp
        .status
        .as_ref()
        .and_then(|s| s.current_synthesis.as_ref())
    else {
        return StatusDecision::ReleasePod;
    };
    let Some(created) = pod.metadata.creation_timestamp.clone() else {
        return StatusDecision::ReleasePod;
    };
    let pod_generation = pod_composition_generation(pod);
    let out_of_sync = current.observed_composition_generation == pod_generation
        && (current.pod_creation.is_none()
            || current.observed_synthesizer_generation == 0
            || current
                .pod_creation
                .as_ref()
                .is_some_and(|recorded| recorded.0 < created.0));
    if !out_of_sync {
        return StatusDecision::ReleasePod;
    }
    let mut recorded = current.clone();
    recorded.pod_creation = Some(created);
    recorded.observed_synthesizer_generation =
        annotation_i64(pod, ANNOTATION_SYNTHESIZER_GENERATION);
    recorded.attempts = recorded.attempts.saturating_add(1);
    StatusDecision::Record(recorded)
}

async fn reconcile_pod(key: ObjectRef<Pod>, ctx: &StatusContext) -> Result<Action, Error> {
    let Some(pod) = ctx.pods.get(&key) else {
        return Ok(Action::await_change());
    };
    let comp_name = label(&pod, LABEL_COMPOSITION_NAME).unwrap_or_default();
    let comp_namespace = label(&pod, LABEL_COMPOSITION_NAMESPACE).unwrap_or_default();
    if comp_name.is_empty() || comp_namespace.is_empty() {
        debug!("pod names no composition; releasing it");
        return release_pod(ctx, &pod).await;
    }
    let comp_key = ObjectRef::<Composition>::new(comp_name).within(comp_namespace);
    let Some(comp) = ctx.compositions.get(&comp_key) else {
        debug!(
            compositionName = comp_name,
            compositionNamespace = comp_namespace,
            "composition not found; releasing pod"
        );
        return release_pod(ctx, &pod).await;
    };
    match decide(&comp, &pod) {
        StatusDecision::Record(recorded) => {
            let mut updated = (*comp).clone();
            let attempts = recorded.attempts;
            if let Some(status) = updated.status.as_mut() {
                status.current_synthesis = Some(recorded);
            }
            Api::<Composition>::namespaced(ctx.client.clone(), comp_namespace)
                .replace_status(comp_name, &PostParams::default(), &updated)
                .await
                .map_err(Error::api("updating composition status"))?;
            info!(
                compositionName = comp_name,
                compositionNamespace = comp_namespace,
                attempts,
                "recorded synthesizer pod attempt"
            );
            Ok(Action::requeue(REQUEUE_AFTER_RECORD))
        }
        StatusDecision::ReleasePod => release_pod(ctx, &pod).await,
    }
}

/// Remove the pod finalizer with an rv-checked update; a pod already gone is fine.
async fn release_pod(ctx: &StatusContext, pod: &Pod) -> Result<Action, Error> {
    if !pod.finalizers().iter().any(|f| f == FINALIZER) {
        return Ok(Action::await_change());
    }
    let namespace = pod
        .metadata
        .namespace
        .as_deref()
        .ok_or(Error::MissingMetadata("namespace"))?;
    let mut updated = pod.clone();
    updated.finalizers_mut().retain(|f| f != FINALIZER);
    match Api::<Pod>::namespaced(ctx.client.clone(), namespace)
        .replace(&pod.name_any(), &PostParams::default(), &updated)
        .await
    {
        Ok(_) => {
            debug!("removed pod finalizer");
            Ok(Action::await_change())
        }
        Err(e) if is_status(&e, 404) => Ok(Action::await_change()),
        Err(e) => Err(Error::api("removing pod finalizer")(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eno::types::{CompositionSpec, CompositionStatus};
    use crate::eno::ANNOTATION_COMPOSITION_GENERATION;
    use jiff::Timestamp;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use rstest::rstest;

    fn time(s: i64) -> Time {
        Time(Timestamp::from_second(1_700_000_000 + s).unwrap())
    }

    fn pod(comp_gen: &str, syn_gen: &str, created: Option<i64>) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.creation_timestamp = created.map(time);
        pod.metadata.annotations = Some(
            [
                (
                    ANNOTATION_COMPOSITION_GENERATION.to_string(),
                    comp_gen.to_string(),
                ),
                (
                    ANNOTATION_SYNTHESIZER_GENERATION.to_string(),
                    syn_gen.to_string(),
                ),
            ]
            .into(),
        );
        pod
    }

    fn comp(current: Option<Synthesis>) -> Composition {
        let mut comp = Composition::new("c", CompositionSpec::default());
        comp.status = Some(CompositionStatus {
            current_synthesis: current,
            previous_synthesis: None,
        });
        comp
    }

    fn synthesis(
        observed: i64,
        pod_creation: Option<i64>,
        syn_gen: i64,
        attempts: i64,
    ) -> Synthesis {
        Synthesis {
            observed_composition_generation: observed,
            pod_creation: pod_creation.map(time),
            observed_synthesizer_generation: syn_gen,
            attempts,
            ..Synthesis::default()
        }
    }

    #[rstest]
    #[case::first_attempt(Some(synthesis(2, None, 0, 0)), pod("2", "5", Some(10)), Some(1))]
    #[case::next_attempt_new_pod(
        Some(synthesis(2, Some(5), 5, 1)),
        pod("2", "5", Some(10)),
        Some(2)
    )]
    #[case::already_recorded(Some(synthesis(2, Some(10), 5, 1)), pod("2", "5", Some(10)), None)]
    // A terminating older pod beside the newer recorded one: released, not recorded again
    // (upstream records it, and then the newer one, forever).
    #[case::older_pod_than_recorded(
        Some(synthesis(2, Some(10), 5, 2)),
        pod("2", "5", Some(5)),
        None
    )]
    #[case::synthesizer_generation_unknown(
        Some(synthesis(2, Some(10), 0, 1)),
        pod("2", "5", Some(10)),
        Some(2)
    )]
    #[case::pod_of_another_generation(
        Some(synthesis(3, None, 0, 0)),
        pod("2", "5", Some(10)),
        None
    )]
    #[case::no_current_synthesis(None, pod("2", "5", Some(10)), None)]
    #[case::garbage_annotations(Some(synthesis(2, None, 0, 0)), pod("two", "x", Some(10)), None)]
    #[case::no_creation_timestamp(Some(synthesis(2, None, 0, 0)), pod("2", "5", None), None)]
    fn decide_table(
        #[case] current: Option<Synthesis>,
        #[case] pod: Pod,
        #[case] attempts: Option<i64>,
    ) {
        match decide(&comp(current), &pod) {
            StatusDecision::Record(s) => {
                assert_eq!(Some(s.attempts), attempts);
                assert_eq!(s.pod_creation, pod.metadata.creation_timestamp);
                assert_eq!(s.observed_synthesizer_generation, 5);
            }
            StatusDecision::ReleasePod => assert_eq!(attempts, None),
        }
    }
}
