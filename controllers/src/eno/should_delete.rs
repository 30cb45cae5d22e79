//! `shouldDeletePod` (spec §3 step 5): which of a composition's pods to delete, and whether a
//! pod still exists for it.
//!
//! The scan is order dependent, as upstream (spec §5.5): the caller passes the pods oldest first
//! so that the result is the same on every run.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;

use super::synthesis_state::{current, generation, is_deleting};
use super::types::Composition;
use super::ANNOTATION_COMPOSITION_GENERATION;

/// Why a pod is deleted; logged as `reason`, with upstream's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteReason {
    /// The composition is being deleted.
    CompositionDeleted,
    /// The pod synthesizes an older composition generation.
    Superseded,
    /// The current synthesis is done.
    Success,
    /// The pod outlived the Synthesizer's `podTimeout`.
    Timeout,
}

impl fmt::Display for DeleteReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::CompositionDeleted => "CompositionDeleted",
            Self::Superseded => "Superseded",
            Self::Success => "Success",
            Self::Timeout => "Timeout",
        })
    }
}

/// The outcome of the scan.
#[derive(Debug, Clone, PartialEq)]
pub struct PodDecision {
    /// The pod to delete and why.
    pub to_delete: Option<(Arc<Pod>, DeleteReason)>,
    /// Whether a pod (live, or a second terminating one) stands in the way of creating another.
    pub exists: bool,
}

impl PodDecision {
    fn nothing(exists: bool) -> Self {
        Self {
            to_delete: None,
            exists,
        }
    }
    fn delete(pod: &Arc<Pod>, reason: DeleteReason) -> Self {
        Self {
            to_delete: Some((pod.clone(), reason)),
            exists: true,
        }
    }
}

/// The composition generation a pod synthesizes: its annotation, with a missing or unparsable
/// value read as 0 (Go's `strconv.ParseInt` error is ignored upstream).
pub fn pod_composition_generation(pod: &Pod) -> i64 {
    annotation_i64(pod, ANNOTATION_COMPOSITION_GENERATION)
}

/// An integer annotation; missing or garbage reads as 0.
pub fn annotation_i64(pod: &Pod, key: &str) -> i64 {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// How long ago the pod was created. A pod without a creation timestamp counts as infinitely
/// old, as Go's zero time does upstream.
fn pod_age(pod: &Pod, now: Timestamp) -> SignedDuration {
    match &pod.metadata.creation_timestamp {
        Some(created) => now.duration_since(created.0),
        None => SignedDuration::MAX,
    }
}

/// How many terminating pods the scan lets a new pod start beside (spec §7.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TerminatingPodAllowance {
    /// Upstream: one; a second terminating pod counts as existing.
    #[default]
    One,
    /// Test only (`Config::terminating_pod_blocks_creation`): any terminating pod counts as
    /// existing.
    None,
    /// Test only (`Config::terminating_pods_never_block_creation`): terminating pods never
    /// count.
    Unlimited,
}

/// The scan of spec §3 step 5.
///
/// `pod_timeout` is the Synthesizer's `podTimeout`. Deliberate change from upstream, which
/// dereferences it unchecked (spec §5.2): `None` means "no timeout".
pub fn should_delete_pod(
    comp: &Composition,
    pod_timeout: Option<Duration>,
    pods: &[Arc<Pod>],
    now: Timestamp,
) -> PodDecision {
    should_delete_pod_allowing(comp, pod_timeout, pods, now, TerminatingPodAllowance::One)
}

/// [`should_delete_pod`] with the terminating-pod allowance given (tests remove the guard).
pub fn should_delete_pod_allowing(
    comp: &Composition,
    pod_timeout: Option<Duration>,
    pods: &[Arc<Pod>],
    now: Timestamp,
    allowance: TerminatingPodAllowance,
) -> PodDecision {
    if pods.is_empty() {
        return PodDecision::nothing(false);
    }
    let mut one_pod_deleting = false;
    for pod in pods {
        // Allow a single extra pod to be created while the previous one is terminating, to break
        // potential deadlocks while avoiding a thundering herd of pods.
        if pod.metadata.deletion_timestamp.is_some() {
            match allowance {
                TerminatingPodAllowance::One => {}
                TerminatingPodAllowance::None => return PodDecision::nothing(true),
                TerminatingPodAllowance::Unlimited => continue,
            }
            if one_pod_deleting {
                return PodDecision::nothing(true);
            }
            one_pod_deleting = true;
            continue;
        }
        if is_deleting(comp) {
            return PodDecision::delete(pod, DeleteReason::CompositionDeleted);
        }
        if pod_composition_generation(pod) != generation(comp) {
            return PodDecision::delete(pod, DeleteReason::Superseded);
        }
        if current(comp).is_some_and(|c| c.synthesized.is_some()) {
            return PodDecision::delete(pod, DeleteReason::Success);
        }
        // Time out eventually, in case the pod landed on a node that cannot run it.
        if let Some(timeout) = pod_timeout {
            let too_old = SignedDuration::try_from(timeout)
                .map(|timeout| pod_age(pod, now) > timeout)
                .unwrap_or(false);
            if too_old {
                return PodDecision::delete(pod, DeleteReason::Timeout);
            }
        }
        // This pod should still be running: no need to look at the others.
        return PodDecision::nothing(true);
    }
    PodDecision::nothing(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eno::types::{CompositionSpec, CompositionStatus, Synthesis};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use rstest::rstest;

    const NOW: i64 = 1_700_000_000;

    fn at(second_offset: i64) -> Time {
        Time(Timestamp::from_second(NOW + second_offset).unwrap())
    }

    fn pod(name: &str, comp_generation: Option<&str>, age_secs: i64, deleting: bool) -> Arc<Pod> {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.to_string());
        pod.metadata.creation_timestamp = Some(at(-age_secs));
        if let Some(generation) = comp_generation {
            pod.metadata.annotations = Some(
                [(
                    ANNOTATION_COMPOSITION_GENERATION.to_string(),
                    generation.to_string(),
                )]
                .into(),
            );
        }
        if deleting {
            pod.metadata.deletion_timestamp = Some(at(0));
        }
        Arc::new(pod)
    }

    fn comp(generation: i64, synthesized: bool, deleting: bool) -> Composition {
        let mut comp = Composition::new("c", CompositionSpec::default());
        comp.metadata.namespace = Some("default".into());
        comp.metadata.generation = Some(generation);
        if deleting {
            comp.metadata.deletion_timestamp = Some(at(0));
        }
        comp.status = Some(CompositionStatus {
            current_synthesis: Some(Synthesis {
                observed_composition_generation: generation,
                synthesized: synthesized.then(|| at(-1)),
                ..Synthesis::default()
            }),
            previous_synthesis: None,
        });
        comp
    }

    fn names(pods: &[Arc<Pod>], decision: &PodDecision) -> Option<(String, DeleteReason)> {
        let _ = pods;
        decision
            .to_delete
            .as_ref()
            .map(|(p, r)| (p.metadata.name.clone().unwrap_or_default(), *r))
    }

    const MIN: Option<Duration> = Some(Duration::from_secs(60));

    // Upstream's TestShouldDeletePod, case by case: (exists, deleted).
    #[rstest]
    #[case::no_pods(comp(1, false, false), vec![], MIN, false, None)]
    #[case::still_in_use(comp(1, false, false), vec![pod("a", Some("1"), 1, false)], MIN, true, None)]
    #[case::success(comp(1, true, false), vec![pod("a", Some("1"), 1, false)], MIN, true, Some(DeleteReason::Success))]
    #[case::success_and_wrong_gen(comp(2, true, false), vec![pod("a", Some("1"), 1, false)], MIN, true, Some(DeleteReason::Superseded))]
    #[case::pod_timeout(comp(1, false, false), vec![pod("a", Some("1"), 120, false)], MIN, true, Some(DeleteReason::Timeout))]
    #[case::composition_deleted(comp(1, false, true), vec![pod("a", Some("1"), 1, false)], MIN, true, Some(DeleteReason::CompositionDeleted))]
    #[case::composition_and_pod_deleted(comp(1, false, true), vec![pod("a", Some("1"), 1, true)], MIN, false, None)]
    #[case::one_pod_deleting(comp(1, false, false), vec![pod("a", Some("1"), 1, true)], MIN, false, None)]
    #[case::two_pods_deleting(comp(1, false, false), vec![pod("a", Some("1"), 1, true), pod("b", Some("1"), 1, true)], MIN, true, None)]
    #[case::three_pods_deleting(
        comp(1, false, false),
        vec![pod("a", Some("1"), 1, true), pod("b", Some("1"), 1, true), pod("c", Some("1"), 1, true)],
        MIN, true, None
    )]
    // Beyond upstream's table.
    #[case::missing_annotation_reads_as_generation_zero(comp(1, false, false), vec![pod("a", None, 1, false)], MIN, true, Some(DeleteReason::Superseded))]
    #[case::garbage_annotation_reads_as_generation_zero(comp(1, false, false), vec![pod("a", Some("x1"), 1, false)], MIN, true, Some(DeleteReason::Superseded))]
    #[case::no_pod_timeout_never_times_out(comp(1, false, false), vec![pod("a", Some("1"), 1_000_000, false)], None, true, None)]
    #[case::terminating_then_live_pod(comp(1, false, false), vec![pod("a", Some("1"), 1, true), pod("b", Some("1"), 1, false)], MIN, true, None)]
    #[case::live_current_pod_hides_superseded_pod_behind_it(
        comp(2, false, false),
        vec![pod("a", Some("2"), 1, false), pod("b", Some("1"), 1, false)],
        MIN, true, None
    )]
    fn should_delete_pod_table(
        #[case] comp: Composition,
        #[case] pods: Vec<Arc<Pod>>,
        #[case] pod_timeout: Option<Duration>,
        #[case] exists: bool,
        #[case] deleted: Option<DeleteReason>,
    ) {
        let now = Timestamp::from_second(NOW).unwrap();
        let decision = should_delete_pod(&comp, pod_timeout, &pods, now);
        assert_eq!(decision.exists, exists);
        assert_eq!(names(&pods, &decision).map(|(_, r)| r), deleted);
    }

    #[test]
    fn the_pod_deleted_is_the_one_scanned() {
        let now = Timestamp::from_second(NOW).unwrap();
        let pods = vec![
            pod("old", Some("1"), 1, true),
            pod("superseded", Some("1"), 1, false),
        ];
        let decision = should_delete_pod(&comp(2, false, false), MIN, &pods, now);
        assert_eq!(
            names(&pods, &decision),
            Some(("superseded".to_string(), DeleteReason::Superseded))
        );
    }
}
