//! Pure decisions about a Composition's synthesis status: the swap to a new synthesis, the
//! deletion-path predicates and the pod-creation backoff.
//!
//! These are free functions over plain data so they can be tested as tables and reused by the
//! race harness's invariant checks.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::types::{Composition, CompositionStatus, Synthesis};

/// The backoff unit between pod attempts: the wait is `BACKOFF_BASE × attempts` (linear, as
/// upstream).
pub const BACKOFF_BASE: Duration = Duration::from_millis(250);

/// The composition's `metadata.generation` (0 when the server did not set one).
pub fn generation(comp: &Composition) -> i64 {
    comp.metadata.generation.unwrap_or(0)
}

/// Whether the composition has a deletion timestamp.
pub fn is_deleting(comp: &Composition) -> bool {
    comp.metadata.deletion_timestamp.is_some()
}

/// The current synthesis, if any.
pub fn current(comp: &Composition) -> Option<&Synthesis> {
    comp.status.as_ref()?.current_synthesis.as_ref()
}

/// The previous synthesis, if any.
pub fn previous(comp: &Composition) -> Option<&Synthesis> {
    comp.status.as_ref()?.previous_synthesis.as_ref()
}

/// Step 9's precondition: no current synthesis, or one for another generation.
pub fn needs_swap(comp: &Composition) -> bool {
    current(comp).is_none_or(|c| c.observed_composition_generation != generation(comp))
}

/// `swapStates`: start a new synthesis for the composition's generation.
///
/// `previous := current` only when current is synthesized; otherwise previous is kept, so the
/// resources it produced are not orphaned. Attempts restart at 0: upstream's carry-over needs
/// the generations to be equal, but the swap only runs when they differ, so it never carries
/// anything (spec §5.6); it is kept here, as upstream has it, in case a caller swaps on equal
/// generations.
pub fn swap_states(comp: &mut Composition, synthesizer_generation: i64) {
    let generation = generation(comp);
    let status = comp.status.get_or_insert_with(CompositionStatus::default);
    let attempts = match &status.current_synthesis {
        Some(c)
            if c.synthesized.is_none()
                && c.observed_composition_generation == generation
                && c.observed_synthesizer_generation == synthesizer_generation =>
        {
            c.attempts
        }
        _ => 0,
    };
    if status
        .current_synthesis
        .as_ref()
        .is_some_and(|c| c.synthesized.is_some())
    {
        status.previous_synthesis = status.current_synthesis.take();
    }
    status.current_synthesis = Some(Synthesis {
        observed_composition_generation: generation,
        attempts,
        ..Synthesis::default()
    });
}

/// D1's precondition (`shouldRevertStateSwap`): a previous synthesis exists and the current one
/// never finished.
pub fn should_revert_state_swap(comp: &Composition) -> bool {
    previous(comp).is_some() && current(comp).is_none_or(|c| c.synthesized.is_none())
}

/// D2's precondition (`shouldUpdateDeletedCompositionStatus`): the current synthesis is for an
/// older generation (deletion bumped it) or is not synthesized.
pub fn should_update_deleted_composition_status(comp: &Composition) -> bool {
    current(comp).is_some_and(|c| {
        c.observed_composition_generation != generation(comp) || c.synthesized.is_none()
    })
}

/// D3's precondition: the eno-reconciler has not finished with the current synthesis.
///
/// Deliberate change from upstream: Go's `(cur≠nil && rec==nil) || cur.obsGen≠gen` dereferences
/// a nil current synthesis when the composition is deleted between getting its finalizer and its
/// first swap, crash-looping the process (spec §5.1). Here a missing current synthesis means
/// "nothing to reconcile": `cur≠nil && (rec==nil || cur.obsGen≠gen)`.
pub fn is_reconciling(comp: &Composition) -> bool {
    current(comp).is_some_and(|c| {
        c.reconciled.is_none() || c.observed_composition_generation != generation(comp)
    })
}

/// Step 13: how long to wait before the next pod attempt, if it is not yet due.
///
/// The wait is `250ms × attempts` after the last pod's creation; `None` when no attempt has been
/// recorded or the wait has passed. As upstream, the caller requeues after the full wait, not the
/// time remaining (spec §5.7).
pub fn pod_creation_backoff(current: &Synthesis, now: Timestamp) -> Option<Duration> {
    let pod_creation = current.pod_creation.as_ref()?;
    if current.attempts <= 0 {
        return None;
    }
    let attempts = u32::try_from(current.attempts).unwrap_or(u32::MAX);
    let wait = BACKOFF_BASE.saturating_mul(attempts);
    let due = SignedDuration::try_from(wait)
        .ok()
        .and_then(|w| pod_creation.0.checked_add(w).ok());
    match due {
        Some(due) if now >= due => None,
        _ => Some(wait),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eno::types::CompositionSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use rstest::rstest;

    fn ts(second: i64) -> Time {
        Time(Timestamp::from_second(1_700_000_000 + second).unwrap())
    }

    fn comp(
        generation: i64,
        current: Option<Synthesis>,
        previous: Option<Synthesis>,
    ) -> Composition {
        let mut comp = Composition::new("c", CompositionSpec::default());
        comp.metadata.generation = Some(generation);
        comp.status = Some(CompositionStatus {
            current_synthesis: current,
            previous_synthesis: previous,
        });
        comp
    }

    fn synthesis(observed: i64, synthesized: bool, reconciled: bool) -> Synthesis {
        Synthesis {
            uuid: format!("uuid-{observed}"),
            observed_composition_generation: observed,
            synthesized: synthesized.then(|| ts(1)),
            reconciled: reconciled.then(|| ts(2)),
            attempts: 4,
            ..Synthesis::default()
        }
    }

    #[rstest]
    #[case::first_synthesis(None, None, None)]
    #[case::synthesized_current_becomes_previous(
        Some(synthesis(1, true, true)),
        None,
        Some("uuid-1")
    )]
    #[case::unsynthesized_current_keeps_previous(
        Some(synthesis(2, false, false)),
        Some(synthesis(1, true, true)),
        Some("uuid-1")
    )]
    #[case::unsynthesized_current_without_previous(Some(synthesis(2, false, false)), None, None)]
    fn swap_states_moves_only_synthesized_current(
        #[case] current: Option<Synthesis>,
        #[case] previous: Option<Synthesis>,
        #[case] expected_previous_uuid: Option<&str>,
    ) {
        let mut c = comp(3, current, previous);
        swap_states(&mut c, 1);
        let status = c.status.unwrap();
        let new_current = status.current_synthesis.unwrap();
        assert_eq!(new_current.observed_composition_generation, 3);
        assert_eq!(new_current.attempts, 0, "the swap resets the backoff");
        assert_eq!(new_current.uuid, "");
        assert_eq!(
            status.previous_synthesis.map(|p| p.uuid),
            expected_previous_uuid.map(str::to_string)
        );
    }

    #[test]
    fn swap_states_keeps_attempts_only_for_the_same_generations() {
        let mut same = synthesis(3, false, false);
        same.observed_synthesizer_generation = 7;
        let mut c = comp(3, Some(same), None);
        swap_states(&mut c, 7);
        assert_eq!(current(&c).unwrap().attempts, 4);
        swap_states(&mut c, 8);
        assert_eq!(current(&c).unwrap().attempts, 0);
    }

    #[rstest]
    #[case::no_current(None, 5, false)]
    #[case::reconciled_current_generation(Some(synthesis(5, true, true)), 5, false)]
    #[case::not_reconciled(Some(synthesis(5, true, false)), 5, true)]
    #[case::older_generation(Some(synthesis(4, true, true)), 5, true)]
    fn is_reconciling_table(
        #[case] current_synthesis: Option<Synthesis>,
        #[case] generation: i64,
        #[case] expected: bool,
    ) {
        assert_eq!(
            is_reconciling(&comp(generation, current_synthesis, None)),
            expected
        );
    }

    /// Upstream's precedence, `(cur≠nil && rec==nil) || cur.obsGen≠gen`, written out with the
    /// nil dereference made explicit: it fails (panics in Go) on a nil current synthesis.
    fn upstream_is_reconciling(comp: &Composition) -> Result<bool, &'static str> {
        let cur = current(comp);
        if cur.is_some_and(|c| c.reconciled.is_none()) {
            return Ok(true);
        }
        let cur = cur.ok_or("nil pointer dereference")?;
        Ok(cur.observed_composition_generation != generation(comp))
    }

    #[test]
    fn is_reconciling_handles_a_composition_deleted_before_its_first_swap() {
        let c = comp(2, None, None);
        assert!(
            upstream_is_reconciling(&c).is_err(),
            "the seed dereferences nil here"
        );
        assert!(!is_reconciling(&c), "the port lets the finalizer go");
    }

    #[rstest]
    #[case::no_previous(None, Some(synthesis(1, false, false)), false)]
    #[case::previous_and_unsynthesized_current(
        Some(synthesis(1, true, true)),
        Some(synthesis(2, false, false)),
        true
    )]
    #[case::previous_and_no_current(Some(synthesis(1, true, true)), None, true)]
    #[case::previous_and_synthesized_current(
        Some(synthesis(1, true, true)),
        Some(synthesis(2, true, false)),
        false
    )]
    fn should_revert_state_swap_table(
        #[case] previous_synthesis: Option<Synthesis>,
        #[case] current_synthesis: Option<Synthesis>,
        #[case] expected: bool,
    ) {
        let c = comp(2, current_synthesis, previous_synthesis);
        assert_eq!(should_revert_state_swap(&c), expected);
    }

    #[rstest]
    #[case::no_current(None, false)]
    #[case::synthesized_same_generation(Some(synthesis(3, true, false)), false)]
    #[case::synthesized_older_generation(Some(synthesis(2, true, false)), true)]
    #[case::unsynthesized_same_generation(Some(synthesis(3, false, false)), true)]
    fn should_update_deleted_status_table(
        #[case] current_synthesis: Option<Synthesis>,
        #[case] expected: bool,
    ) {
        let c = comp(3, current_synthesis, None);
        assert_eq!(should_update_deleted_composition_status(&c), expected);
    }

    #[rstest]
    #[case::no_attempts(0, Some(0), 0, None)]
    #[case::no_pod_creation(3, None, 0, None)]
    #[case::one_attempt_waiting(1, Some(0), 100, Some(250))]
    #[case::one_attempt_due(1, Some(0), 250, None)]
    #[case::linear_three_attempts_waiting(3, Some(0), 700, Some(750))]
    #[case::linear_three_attempts_due(3, Some(0), 751, None)]
    #[case::garbage_negative_attempts(-4, Some(0), 0, None)]
    #[case::huge_attempts_do_not_overflow(i64::MAX, Some(0), 10_000, Some(u32::MAX as u64 * 250))]
    fn backoff_table(
        #[case] attempts: i64,
        #[case] pod_created_at_ms: Option<i64>,
        #[case] now_ms: i64,
        #[case] expected_wait_ms: Option<u64>,
    ) {
        let base = Timestamp::from_second(1_700_000_000).unwrap();
        let at = |ms: i64| base.checked_add(SignedDuration::from_millis(ms)).unwrap();
        let current = Synthesis {
            attempts,
            pod_creation: pod_created_at_ms.map(|ms| Time(at(ms))),
            ..Synthesis::default()
        };
        assert_eq!(
            pod_creation_backoff(&current, at(now_ms)),
            expected_wait_ms.map(Duration::from_millis)
        );
    }
}
