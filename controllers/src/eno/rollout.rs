//! The rollout controller (upstream `rolloutController`, `internal/controllers/synthesis/rollout.go`
//! of spring 2024): when a Synthesizer changes, resynthesize the compositions that use it, one
//! composition per `rolloutCooldown`.
//!
//! One step of a rollout records `status.lastRolloutTime = now` on the Synthesizer (rv-checked
//! status update), then sets `spec.synthesizer.minGeneration = synthesizer.generation` on one
//! eligible composition (rv-checked whole-object update). The spec change bumps the
//! composition's generation, so the lifecycle controller swaps its synthesis and starts a pod
//! with the new Synthesizer. The next step waits until `lastRolloutTime + rolloutCooldown`.
//! When no composition is left, `status.currentGeneration = generation` marks the rollout done;
//! the cooldown only applies while `currentGeneration` lags the generation.
//!
//! Reads go through the context's reflector stores; the race harness drives
//! [`reconcile`] through [`RolloutContext`] and [`composition_to_synthesizer`].
//!
//! `lastRolloutTime` is a `metav1.Time`, which (in Go as here) is stored in whole seconds, so a
//! step taken on some other event may come up to a second before `cooldown` has fully passed;
//! the requeue after a step is the full cooldown.
//!
//! Deliberate changes from upstream, each commented where it is made: compositions are visited
//! in namespace/name order rather than upstream's broken shuffle, and a conflict on the
//! composition update is retried from the cache with upstream's `retry.DefaultBackoff` steps.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};
use tracing::{debug, info, info_span, Instrument};

use super::error::Error;
use super::types::{Composition, Synthesizer};
use crate::clock::SharedClock;
use crate::operator::index::Indexed;

/// The cooldown when a Synthesizer does not set `rolloutCooldown` (the CRD default, which a
/// server that does not apply CRD defaults leaves unset).
pub const DEFAULT_ROLLOUT_COOLDOWN: Duration = Duration::from_secs(30);

/// Waits between attempts of the composition update when it conflicts (client-go's
/// `retry.DefaultBackoff`: 10ms, ×5, 4 steps; without the 10% jitter).
pub const CONFLICT_RETRY_WAITS: [Duration; 3] = [
    Duration::from_millis(10),
    Duration::from_millis(50),
    Duration::from_millis(250),
];

/// What the rollout reconcile works with.
#[derive(Clone)]
pub struct RolloutContext {
    /// Writes.
    pub client: Client,
    /// Synthesizer cache.
    pub synthesizers: Store<Synthesizer>,
    /// Composition cache, indexed by [`composition_synthesizer_index`].
    pub compositions: Indexed<Composition>,
    /// The time source.
    pub clock: SharedClock,
}

/// The composition cache's index (upstream `IdxCompositionsBySynthesizer`, `.spec.synthesizer`):
/// the name of the Synthesizer the composition names.
pub fn composition_synthesizer_index(comp: &Composition) -> Vec<String> {
    vec![comp.spec.synthesizer.name.clone()]
}

/// Composition events map to the Synthesizer the composition names (upstream
/// `NewCompositionToSynthesizerHandler`); a composition naming none maps to nothing.
pub fn composition_to_synthesizer(comp: &Composition) -> Option<ObjectRef<Synthesizer>> {
    let name = comp.spec.synthesizer.name.as_str();
    (!name.is_empty()).then(|| ObjectRef::new(name))
}

/// The Synthesizer's rollout cooldown (`spec.rolloutCooldown`, default 30s).
pub fn cooldown(syn: &Synthesizer) -> Duration {
    syn.spec
        .rollout_cooldown
        .map(|d| d.0)
        .unwrap_or(DEFAULT_ROLLOUT_COOLDOWN)
}

/// How much of the cooldown is left before the next rollout step, if any: only while a rollout
/// is in progress (`lastRolloutTime` set and `currentGeneration ≠ generation`).
pub fn remaining_cooldown(syn: &Synthesizer, now: jiff::Timestamp) -> Option<Duration> {
    let status = syn.status.as_ref()?;
    let last = status.last_rollout_time.as_ref()?;
    if status.current_generation == syn.metadata.generation.unwrap_or(0) {
        return None;
    }
    remaining(last.0, cooldown(syn), now)
}

/// `cooldown − (now − since)` when positive. A `since` in the future counts as "just now".
fn remaining(since: jiff::Timestamp, cooldown: Duration, now: jiff::Timestamp) -> Option<Duration> {
    let elapsed = Duration::try_from(now.duration_since(since)).unwrap_or(Duration::ZERO);
    cooldown.checked_sub(elapsed).filter(|d| !d.is_zero())
}

/// Whether the composition should receive the Synthesizer's current generation now. Not when:
/// it is younger than the cooldown; it already asks for this or a newer generation; it has never
/// been synthesized (it will use the new Synthesizer anyway); it is being synthesized; it was
/// synthesized by this or a newer generation.
pub fn is_eligible(comp: &Composition, syn: &Synthesizer, now: jiff::Timestamp) -> bool {
    // The conditions are a conjunction; the rollout controller asks this of every composition
    // of its Synthesizer on each of their events, so the integer ones go first.
    let syn_generation = syn.metadata.generation.unwrap_or(0);
    let Some(current) = comp
        .status
        .as_ref()
        .and_then(|s| s.current_synthesis.as_ref())
    else {
        return false;
    };
    let young = || match comp.metadata.creation_timestamp.as_ref() {
        Some(created) => remaining(created.0, cooldown(syn), now).is_some(),
        None => false,
    };
    comp.spec.synthesizer.min_generation < syn_generation
        && current.synthesized.is_some()
        && current.observed_synthesizer_generation < syn_generation
        && !young()
}

/// The next composition of the rollout, if any.
///
/// Deliberate change: upstream "shuffles" the list with a swap function that copies instead of
/// swapping (`Items[i] = Items[j]`), so a pass may see some compositions twice and others not
/// at all, and uses the global random source. Visiting in namespace/name order is deterministic
/// and still reaches every composition, one per cooldown.
pub fn next_composition<'a>(
    comps: &'a [Arc<Composition>],
    syn: &Synthesizer,
    now: jiff::Timestamp,
) -> Option<&'a Arc<Composition>> {
    comps
        .iter()
        .filter(|comp| is_eligible(comp, syn, now))
        .min_by(|a, b| {
            let key = |c: &'a Composition| {
                (
                    c.metadata.namespace.as_deref(),
                    c.metadata.name.as_deref().unwrap_or_default(),
                )
            };
            key(a).cmp(&key(b))
        })
}

/// Reconcile one Synthesizer. `syn` names it; its content is read from the cache.
pub async fn reconcile(syn: Arc<Synthesizer>, ctx: Arc<RolloutContext>) -> Result<Action, Error> {
    let span = info_span!(
        "reconcile",
        controller = "rolloutController",
        synthesizerName = %syn.name_any(),
    );
    reconcile_synthesizer(ObjectRef::from_obj(syn.as_ref()), &ctx)
        .instrument(span)
        .await
}

async fn reconcile_synthesizer(
    key: ObjectRef<Synthesizer>,
    ctx: &RolloutContext,
) -> Result<Action, Error> {
    let Some(cached) = ctx.synthesizers.get(&key) else {
        return Ok(Action::await_change());
    };
    let mut syn = (*cached).clone();
    let syn_generation = syn.metadata.generation.unwrap_or(0);
    let now = ctx.clock.now();

    if let Some(wait) = remaining_cooldown(&syn, now) {
        debug!(
            synthesizerGeneration = syn_generation,
            wait_ms = wait.as_millis() as u64,
            "rollout cooling down"
        );
        return Ok(Action::requeue(wait));
    }

    // Upstream lists the cache by its `.spec.synthesizer` index, as this does.
    let comps = ctx.compositions.by_index(&key.name);
    let synthesizers: Api<Synthesizer> = Api::all(ctx.client.clone());

    if let Some(comp) = next_composition(&comps, &syn, now) {
        let comp_key = ObjectRef::from_obj(comp.as_ref());
        syn.status
            .get_or_insert_with(Default::default)
            .last_rollout_time = Some(Time(now));
        synthesizers
            .replace_status(&key.name, &PostParams::default(), &syn)
            .await
            .map_err(Error::api("advancing last rollout time"))?;

        let generation = set_min_generation(ctx, &comp_key, syn_generation).await?;
        info!(
            synthesizerGeneration = syn_generation,
            compositionName = %comp_key.name,
            compositionNamespace = %comp_key.namespace.as_deref().unwrap_or_default(),
            compositionGeneration = generation,
            "advancing synthesizer rollout process"
        );
        return Ok(Action::requeue(cooldown(&syn)));
    }

    // No composition left: the rollout of this generation is complete.
    let status = syn.status.get_or_insert_with(Default::default);
    if status.current_generation != syn_generation {
        let previous = status.last_rollout_time.clone();
        status.current_generation = syn_generation;
        synthesizers
            .replace_status(&key.name, &PostParams::default(), &syn)
            .await
            .map_err(Error::api("updating synthesizer's current generation"))?;
        // The log makes no sense if nothing was rolled out.
        if !comps.is_empty() {
            let latency_ms = previous.map(|t| now.duration_since(t.0).as_millis() as i64);
            info!(
                synthesizerGeneration = syn_generation,
                latency = latency_ms,
                "finished rolling out latest synthesizer version"
            );
        }
    }
    Ok(Action::await_change())
}

/// Set `spec.synthesizer.minGeneration` on the composition with an rv-checked whole-object
/// update of the cached copy; on a conflict, wait and retry with the cache's newer copy
/// (upstream's `RetryOnConflict(retry.DefaultBackoff, …)`). Returns the new generation.
async fn set_min_generation(
    ctx: &RolloutContext,
    comp_key: &ObjectRef<Composition>,
    syn_generation: i64,
) -> Result<i64, Error> {
    let namespace = comp_key
        .namespace
        .clone()
        .ok_or(Error::MissingMetadata("namespace"))?;
    let compositions: Api<Composition> = Api::namespaced(ctx.client.clone(), &namespace);
    let mut waits = CONFLICT_RETRY_WAITS.iter();
    loop {
        let Some(cached) = ctx.compositions.get(comp_key) else {
            // Gone since it was chosen: nothing to roll out to.
            return Ok(0);
        };
        let mut comp = (*cached).clone();
        comp.spec.synthesizer.min_generation = syn_generation;
        match compositions
            .replace(&comp_key.name, &PostParams::default(), &comp)
            .await
            .map_err(Error::api("swapping composition state"))
        {
            Ok(updated) => return Ok(updated.metadata.generation.unwrap_or(0)),
            Err(e) if e.is_conflict() => match waits.next() {
                Some(wait) => tokio::time::sleep(*wait).await,
                None => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eno::types::{
        CompositionSpec, CompositionStatus, GoDuration, Synthesis, SynthesizerSpec,
        SynthesizerStatus,
    };
    use rstest::rstest;

    fn at(second: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_700_000_000 + second).unwrap()
    }

    fn syn(generation: i64, cooldown_s: Option<u64>, status: Option<(i64, i64)>) -> Synthesizer {
        let mut syn = Synthesizer::new(
            "syn",
            SynthesizerSpec {
                image: "img".into(),
                rollout_cooldown: cooldown_s.map(|s| GoDuration(Duration::from_secs(s))),
                ..Default::default()
            },
        );
        syn.metadata.generation = Some(generation);
        syn.status = status.map(|(last, current)| SynthesizerStatus {
            last_rollout_time: Some(Time(at(last))),
            current_generation: current,
        });
        syn
    }

    /// A composition created at `created`, asking for `min_generation`, whose current synthesis
    /// (if any) is `(synthesized, observed synthesizer generation)`.
    fn comp(
        name: &str,
        created: i64,
        min_generation: i64,
        current: Option<(bool, i64)>,
    ) -> Arc<Composition> {
        let mut comp = Composition::new(name, CompositionSpec::default());
        comp.metadata.namespace = Some("default".into());
        comp.metadata.creation_timestamp = Some(Time(at(created)));
        comp.spec.synthesizer.name = "syn".into();
        comp.spec.synthesizer.min_generation = min_generation;
        comp.status = Some(CompositionStatus {
            current_synthesis: current.map(|(synthesized, observed)| Synthesis {
                synthesized: synthesized.then(|| Time(at(0))),
                observed_synthesizer_generation: observed,
                ..Default::default()
            }),
            previous_synthesis: None,
        });
        Arc::new(comp)
    }

    #[rstest]
    #[case::never_rolled_out(None, 100, None)]
    #[case::rollout_done(Some((100, 3)), 110, None)]
    #[case::in_progress_just_started(Some((100, 2)), 100, Some(30))]
    #[case::in_progress_partway(Some((100, 2)), 110, Some(20))]
    #[case::in_progress_exactly_over(Some((100, 2)), 130, None)]
    #[case::in_progress_long_over(Some((100, 2)), 500, None)]
    #[case::clock_behind_last_rollout(Some((100, 2)), 90, Some(30))]
    fn cooldown_applies_only_mid_rollout(
        #[case] status: Option<(i64, i64)>,
        #[case] now: i64,
        #[case] expected_s: Option<u64>,
    ) {
        let syn = syn(3, Some(30), status);
        assert_eq!(
            remaining_cooldown(&syn, at(now)),
            expected_s.map(Duration::from_secs)
        );
    }

    #[rstest]
    #[case::explicit(Some(5), 5)]
    #[case::crd_default(None, 30)]
    fn cooldown_defaults_to_30s(#[case] set: Option<u64>, #[case] expected: u64) {
        assert_eq!(cooldown(&syn(1, set, None)), Duration::from_secs(expected));
    }

    #[rstest]
    #[case::eligible(comp("c", 0, 0, Some((true, 1))), true)]
    #[case::younger_than_cooldown(comp("c", 90, 0, Some((true, 1))), false)]
    #[case::already_asks_for_it(comp("c", 0, 2, Some((true, 1))), false)]
    #[case::asks_for_newer(comp("c", 0, 5, Some((true, 1))), false)]
    #[case::never_synthesized(comp("c", 0, 0, None), false)]
    #[case::being_synthesized(comp("c", 0, 0, Some((false, 1))), false)]
    #[case::synthesized_by_this_generation(comp("c", 0, 0, Some((true, 2))), false)]
    #[case::synthesized_by_newer(comp("c", 0, 0, Some((true, 3))), false)]
    fn eligibility(#[case] comp: Arc<Composition>, #[case] expected: bool) {
        // Synthesizer at generation 2, cooldown 30s, now = 100s.
        assert_eq!(
            is_eligible(&comp, &syn(2, Some(30), None), at(100)),
            expected
        );
    }

    #[rstest]
    #[case::first_by_name(vec![comp("b", 0, 0, Some((true, 1))), comp("a", 0, 0, Some((true, 1)))], Some("a"))]
    #[case::skips_ineligible(vec![comp("a", 0, 2, Some((true, 1))), comp("b", 0, 0, Some((true, 1)))], Some("b"))]
    #[case::none_left(vec![comp("a", 0, 2, Some((true, 1))), comp("b", 0, 0, Some((true, 2)))], None)]
    #[case::empty(vec![], None)]
    fn next_composition_is_the_first_eligible(
        #[case] comps: Vec<Arc<Composition>>,
        #[case] expected: Option<&str>,
    ) {
        let syn = syn(2, Some(30), None);
        let next = next_composition(&comps, &syn, at(100)).map(|c| c.name_any());
        assert_eq!(next.as_deref(), expected);
    }

    #[rstest]
    #[case::named(Some("syn"), Some("syn"))]
    #[case::unnamed(None, None)]
    fn compositions_map_to_their_synthesizer(
        #[case] name: Option<&str>,
        #[case] expected: Option<&str>,
    ) {
        let mut comp = Composition::new("c", CompositionSpec::default());
        comp.spec.synthesizer.name = name.unwrap_or_default().into();
        assert_eq!(
            composition_to_synthesizer(&comp).map(|r| r.name),
            expected.map(String::from)
        );
    }
}
