//! The slice cleanup controller (upstream `sliceCleanupController`,
//! `internal/controllers/synthesis/slicecleanup.go` of spring 2024, spec §7.10): deletes
//! ResourceSlices their Composition no longer references, and releases the
//! `eno.azure.io/cleanup` finalizer of a deleting slice once its resources are gone.
//!
//! Informer lag is handled as upstream does: a slice newer than the cached composition's
//! observed generation is kept (the cache is behind), and a slice younger than a minute whose
//! composition is not in the cache is looked at again a minute later instead of deleted.
//!
//! Reads go through the context's reflector stores; the race harness drives [`reconcile`]
//! through [`SliceCleanupContext`] and [`slices_of_composition`]. The decisions are the pure
//! functions [`should_delete_slice`] and [`should_release_slice_finalizer`].
//!
//! Upstream's slices at this point also carry an `attempt`, and a slice of an earlier attempt
//! of the same synthesis is deleted; this port's ResourceSlice has no attempt (the executor
//! writes a synthesis's slices once), so that clause is left out.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};
use tracing::{debug, info, info_span, Instrument};

use super::error::{is_status, Error};
use super::types::{Composition, ResourceSlice, Synthesis};
use super::FINALIZER;
use crate::clock::SharedClock;
use crate::operator::index::Indexed;

/// A slice younger than this whose composition is missing from the cache is not deleted: the
/// cache may simply not show the composition yet.
pub const NEW_SLICE_GRACE: Duration = Duration::from_secs(60);

/// Composition annotation: `orphan` leaves the composition's resources in place on deletion.
pub const ANNOTATION_DELETION_STRATEGY: &str = "eno.azure.io/deletion-strategy";

/// What the slice cleanup reconcile works with.
#[derive(Clone)]
pub struct SliceCleanupContext {
    /// Writes.
    pub client: Client,
    /// ResourceSlice cache, indexed by [`slice_composition_index`].
    pub slices: Indexed<ResourceSlice>,
    /// Composition cache.
    pub compositions: Store<Composition>,
    /// The time source.
    pub clock: SharedClock,
}

/// The name of the Composition controlling the slice (its controller owner reference).
pub fn owner_composition(slice: &ResourceSlice) -> Option<&str> {
    slice
        .owner_references()
        .iter()
        .find(|o| o.controller == Some(true))
        .map(|o| o.name.as_str())
}

/// The slice cache's index (upstream `IdxResourceSlicesByComposition`, its `indexController`:
/// the controller owner's name, within the slice's namespace as controller-runtime's namespaced
/// indexes are): `namespace/owner`.
pub fn slice_composition_index(slice: &ResourceSlice) -> Vec<String> {
    owner_composition(slice)
        .map(|owner| vec![slice_index_value(slice.namespace().as_deref(), owner)])
        .unwrap_or_default()
}

fn slice_index_value(namespace: Option<&str>, composition: &str) -> String {
    format!("{}/{composition}", namespace.unwrap_or_default())
}

/// Composition events map to the cached slices it controls (upstream
/// `NewCompositionToResourceSliceHandler`), so a status change (a new synthesis, a deletion)
/// re-examines them. A lookup in the slice cache's index, not a scan of every slice.
pub fn slices_of_composition(
    comp: &Composition,
    slices: &Indexed<ResourceSlice>,
) -> Vec<ObjectRef<ResourceSlice>> {
    let value = slice_index_value(comp.namespace().as_deref(), &comp.name_any());
    let mut refs: Vec<ObjectRef<ResourceSlice>> = slices
        .by_index(&value)
        .iter()
        .map(|slice| ObjectRef::from_obj(slice.as_ref()))
        .collect();
    refs.sort_by(|a, b| a.name.cmp(&b.name));
    refs
}

/// Whether the synthesis lists the slice among its outputs.
pub fn synthesis_references_slice(synthesis: Option<&Synthesis>, slice: &ResourceSlice) -> bool {
    let name = slice.name_any();
    synthesis.is_some_and(|s| s.resource_slices.iter().any(|r| r.name == name))
}

fn current(comp: &Composition) -> Option<&Synthesis> {
    comp.status.as_ref()?.current_synthesis.as_ref()
}

fn previous(comp: &Composition) -> Option<&Synthesis> {
    comp.status.as_ref()?.previous_synthesis.as_ref()
}

/// Whether the cached composition is behind the slice: no current synthesis yet, or a slice
/// from a composition generation the cache has not observed.
fn cache_is_behind(comp: &Composition, slice: &ResourceSlice) -> bool {
    current(comp)
        .is_none_or(|c| slice.spec.composition_generation > c.observed_composition_generation)
}

/// Whether the slice can be deleted (upstream `shouldDeleteSlice`): the synthesis is complete
/// and the composition is deleting, or the slice comes from an older composition generation and
/// neither the current nor the previous synthesis references it. Never while the cache is behind.
pub fn should_delete_slice(comp: &Composition, slice: &ResourceSlice) -> bool {
    if cache_is_behind(comp, slice) {
        return false;
    }
    let Some(current) = current(comp) else {
        return false;
    };
    let referenced = synthesis_references_slice(Some(current), slice)
        || synthesis_references_slice(previous(comp), slice);
    let synthesized = current.synthesized.is_some();
    let comp_deleting = comp.metadata.deletion_timestamp.is_some();
    let from_old_composition =
        slice.spec.composition_generation < current.observed_composition_generation;
    (synthesized && comp_deleting) || (!referenced && from_old_composition)
}

/// Whether a deleting slice's finalizer can be released (upstream
/// `shouldReleaseSliceFinalizer`): once the synthesis is complete and either none of the slice's
/// resources remain or no synthesis references the slice. Never while the cache is behind.
pub fn should_release_slice_finalizer(comp: &Composition, slice: &ResourceSlice) -> bool {
    if cache_is_behind(comp, slice) {
        return false;
    }
    let synthesized = current(comp).is_some_and(|c| c.synthesized.is_some());
    let referenced = synthesis_references_slice(current(comp), slice)
        || synthesis_references_slice(previous(comp), slice);
    synthesized && (!resources_remain(comp, slice) || !referenced)
}

/// Whether any of the slice's resources may still exist: the reconciler has not written the
/// slice's status yet, or some resource is not deleted (unless the composition orphans them).
pub fn resources_remain(comp: &Composition, slice: &ResourceSlice) -> bool {
    let states = slice
        .status
        .as_ref()
        .map(|s| s.resources.as_slice())
        .unwrap_or_default();
    if states.is_empty() && !slice.spec.resources.is_empty() {
        return true; // the status lags behind
    }
    let orphan = comp
        .annotations()
        .get(ANNOTATION_DELETION_STRATEGY)
        .is_some_and(|v| v == "orphan");
    let deleted = |state: &serde_json::Value| {
        state
            .get("deleted")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false)
    };
    states.iter().any(|state| !deleted(state) && !orphan)
}

/// What the controller does with one slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SliceDecision {
    /// Leave it alone.
    Keep,
    /// The composition may just not be in the cache yet: look again after this long.
    RequeueAfter(Duration),
    /// Remove the cleanup finalizer (the slice is deleting, or has no owner).
    ReleaseFinalizer,
    /// Delete the slice.
    Delete,
}

/// Decide for `slice`, given its owning composition as the cache shows it (`None`: the slice
/// has an owner that the cache does not hold) and the current time.
pub fn decide(
    slice: &ResourceSlice,
    comp: Option<&Composition>,
    now: jiff::Timestamp,
) -> SliceDecision {
    let has_owner = owner_composition(slice).is_some();
    let (mut do_not_delete, mut hold_finalizer) = (false, false);
    if has_owner {
        match comp {
            None => {
                let age = slice
                    .creation_timestamp()
                    .map(|t| now.duration_since(t.0))
                    .and_then(|d| Duration::try_from(d).ok())
                    .unwrap_or(Duration::ZERO);
                if age < NEW_SLICE_GRACE {
                    return SliceDecision::RequeueAfter(NEW_SLICE_GRACE);
                }
            }
            Some(comp) => {
                do_not_delete = !should_delete_slice(comp, slice);
                hold_finalizer = !should_release_slice_finalizer(comp, slice);
            }
        }
    }
    // Release the finalizer once the current slices' resources are gone, so none is orphaned;
    // also when the slice has no owner, since control over it is lost anyway.
    if slice.metadata.deletion_timestamp.is_some() || !has_owner {
        if hold_finalizer || !slice.finalizers().iter().any(|f| f == FINALIZER) {
            return SliceDecision::Keep;
        }
        return SliceDecision::ReleaseFinalizer;
    }
    if do_not_delete {
        return SliceDecision::Keep;
    }
    SliceDecision::Delete
}

/// Reconcile one ResourceSlice. `slice` names it; its content is read from the cache.
pub async fn reconcile(
    slice: Arc<ResourceSlice>,
    ctx: Arc<SliceCleanupContext>,
) -> Result<Action, Error> {
    let span = info_span!(
        "reconcile",
        controller = "resourceSliceCleanupController",
        resourceSliceName = %slice.name_any(),
        resourceSliceNamespace = %slice.namespace().unwrap_or_default(),
    );
    reconcile_slice(ObjectRef::from_obj(slice.as_ref()), &ctx)
        .instrument(span)
        .await
}

async fn reconcile_slice(
    key: ObjectRef<ResourceSlice>,
    ctx: &SliceCleanupContext,
) -> Result<Action, Error> {
    let Some(cached) = ctx.slices.get(&key) else {
        return Ok(Action::await_change());
    };
    let namespace = key
        .namespace
        .clone()
        .ok_or(Error::MissingMetadata("namespace"))?;
    let comp = owner_composition(&cached).and_then(|owner| {
        ctx.compositions
            .get(&ObjectRef::new(owner).within(&namespace))
    });
    let slices: Api<ResourceSlice> = Api::namespaced(ctx.client.clone(), &namespace);
    match decide(&cached, comp.as_deref(), ctx.clock.now()) {
        SliceDecision::Keep => Ok(Action::await_change()),
        SliceDecision::RequeueAfter(wait) => {
            debug!(
                "didn't find a composition for this resource slice - ignoring because resource \
                 slice is new so informer may just be stale"
            );
            Ok(Action::requeue(wait))
        }
        SliceDecision::ReleaseFinalizer => {
            let mut slice = (*cached).clone();
            slice.finalizers_mut().retain(|f| f != FINALIZER);
            slices
                .replace(&key.name, &PostParams::default(), &slice)
                .await
                .map_err(Error::api("removing finalizer"))?;
            info!("released unused resource slice");
            Ok(Action::await_change())
        }
        SliceDecision::Delete => {
            match slices.delete(&key.name, &DeleteParams::default()).await {
                Ok(_) => {}
                // Already gone (the cache lags the deletion): nothing left to do.
                Err(e) if is_status(&e, 404) => return Ok(Action::await_change()),
                Err(e) => return Err(Error::api("deleting resource slice")(e)),
            }
            info!("deleted unused resource slice");
            Ok(Action::await_change())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eno::types::{
        CompositionSpec, CompositionStatus, Manifest, ResourceSliceRef, ResourceSliceSpec,
        ResourceSliceStatus,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
    use rstest::rstest;
    use serde_json::json;

    fn at(second: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_700_000_000 + second).unwrap()
    }

    /// The options of one case's composition.
    #[derive(Default, Clone)]
    struct C {
        deleting: bool,
        current: Option<S>,
        previous: Option<S>,
        orphan: bool,
    }

    /// A synthesis: observed generation, synthesized, referenced slice names.
    #[derive(Default, Clone)]
    struct S(i64, bool, &'static [&'static str]);

    impl S {
        fn build(&self) -> Synthesis {
            Synthesis {
                observed_composition_generation: self.0,
                synthesized: self.1.then(|| Time(at(0))),
                resource_slices: self
                    .2
                    .iter()
                    .map(|n| ResourceSliceRef {
                        name: n.to_string(),
                    })
                    .collect(),
                ..Default::default()
            }
        }
    }

    fn comp(c: C) -> Composition {
        let mut comp = Composition::new("comp", CompositionSpec::default());
        comp.metadata.namespace = Some("default".into());
        if c.deleting {
            comp.metadata.deletion_timestamp = Some(Time(at(0)));
        }
        if c.orphan {
            comp.annotations_mut()
                .insert(ANNOTATION_DELETION_STRATEGY.into(), "orphan".into());
        }
        comp.status = Some(CompositionStatus {
            current_synthesis: c.current.as_ref().map(S::build),
            previous_synthesis: c.previous.as_ref().map(S::build),
        });
        comp
    }

    fn slice(name: &str, generation: i64) -> ResourceSlice {
        let mut slice = ResourceSlice::new(
            name,
            ResourceSliceSpec {
                composition_generation: generation,
                ..Default::default()
            },
        );
        slice.metadata.namespace = Some("default".into());
        slice.metadata.creation_timestamp = Some(Time(at(0)));
        slice.metadata.owner_references = Some(vec![OwnerReference {
            api_version: "eno.azure.io/v1".into(),
            kind: "Composition".into(),
            name: "comp".into(),
            uid: "uid".into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]);
        slice
    }

    fn syn(observed: i64, synthesized: bool, refs: &'static [&'static str]) -> Option<S> {
        Some(S(observed, synthesized, refs))
    }

    // Upstream's TestShouldDeleteSlice cases (those without an `attempt`), plus the orphan case.
    #[rstest]
    #[case::no_current_synthesis(C::default(), 2, false)]
    #[case::cache_behind(C { current: syn(1, false, &[]), ..C::default() }, 2, false)]
    #[case::referenced_by_current(C { current: syn(2, true, &["s"]), ..C::default() }, 1, false)]
    #[case::referenced_by_previous(C { current: syn(2, true, &[]), previous: syn(1, true, &["s"]), ..C::default() }, 1, false)]
    #[case::synthesized_and_composition_deleting(C { deleting: true, current: syn(0, true, &["s"]), ..C::default() }, 0, true)]
    #[case::synthesized_same_generation_unreferenced(C { current: syn(0, true, &[]), ..C::default() }, 0, false)]
    #[case::synthesized_newer_generation_unreferenced(C { current: syn(2, true, &[]), ..C::default() }, 1, true)]
    #[case::in_progress_newer_generation_unreferenced(C { current: syn(2, false, &[]), ..C::default() }, 1, true)]
    #[case::slice_newer_than_cache(C { current: syn(1, true, &[]), ..C::default() }, 2, false)]
    #[case::deleting_but_not_synthesized(C { deleting: true, current: syn(1, false, &["s"]), ..C::default() }, 1, false)]
    fn which_slices_are_deleted(#[case] c: C, #[case] slice_gen: i64, #[case] expected: bool) {
        assert_eq!(
            should_delete_slice(&comp(c), &slice("s", slice_gen)),
            expected
        );
    }

    fn with_status(mut slice: ResourceSlice, resources: usize, deleted: &[bool]) -> ResourceSlice {
        slice.spec.resources = (0..resources)
            .map(|i| Manifest {
                manifest: format!("{{\"i\":{i}}}"),
                deleted: false,
            })
            .collect();
        slice.status = Some(ResourceSliceStatus {
            resources: deleted.iter().map(|d| json!({"deleted": d})).collect(),
        });
        slice
    }

    #[rstest]
    #[case::cache_behind(C { current: syn(0, true, &["s"]), ..C::default() }, 1, &[], false)]
    #[case::not_synthesized(C { current: syn(1, false, &[]), ..C::default() }, 1, &[], false)]
    #[case::status_lags(C { current: syn(1, true, &["s"]), ..C::default() }, 1, &[], false)]
    #[case::resource_left(C { current: syn(1, true, &["s"]), ..C::default() }, 1, &[false], false)]
    #[case::all_deleted(C { current: syn(1, true, &["s"]), ..C::default() }, 1, &[true], true)]
    #[case::orphaned_resources(C { current: syn(1, true, &["s"]), orphan: true, ..C::default() }, 1, &[false], true)]
    #[case::unreferenced_with_resources(C { current: syn(1, true, &[]), ..C::default() }, 1, &[false], true)]
    #[case::empty_slice(C { current: syn(1, true, &["s"]), ..C::default() }, 0, &[], true)]
    fn when_the_finalizer_is_released(
        #[case] c: C,
        #[case] resources: usize,
        #[case] deleted: &[bool],
        #[case] expected: bool,
    ) {
        let slice = with_status(slice("s", 1), resources, deleted);
        assert_eq!(should_release_slice_finalizer(&comp(c), &slice), expected);
    }

    #[rstest]
    // Composition missing from the cache: young slices wait a minute, old ones are deleted.
    #[case::missing_comp_young_slice(
        None,
        59,
        false,
        false,
        SliceDecision::RequeueAfter(NEW_SLICE_GRACE)
    )]
    #[case::missing_comp_old_slice(None, 60, false, false, SliceDecision::Delete)]
    #[case::orphaned_slice(Some(C { current: syn(1, true, &[]), ..C::default() }), 0, false, false, SliceDecision::Delete)]
    #[case::referenced_slice(Some(C { current: syn(1, true, &["s"]), ..C::default() }), 0, false, false, SliceDecision::Keep)]
    #[case::deleting_with_finalizer(Some(C { current: syn(1, true, &[]), ..C::default() }), 0, true, true, SliceDecision::ReleaseFinalizer)]
    #[case::deleting_without_finalizer(Some(C { current: syn(1, true, &[]), ..C::default() }), 0, true, false, SliceDecision::Keep)]
    #[case::deleting_held(Some(C { current: syn(1, false, &["s"]), ..C::default() }), 0, true, true, SliceDecision::Keep)]
    #[case::missing_comp_deleting_old(None, 120, true, true, SliceDecision::ReleaseFinalizer)]
    fn decisions(
        #[case] c: Option<C>,
        #[case] age_s: i64,
        #[case] deleting: bool,
        #[case] finalizer: bool,
        #[case] expected: SliceDecision,
    ) {
        let mut slice = slice("s", 0);
        if deleting {
            slice.metadata.deletion_timestamp = Some(Time(at(0)));
        }
        if finalizer {
            slice.metadata.finalizers = Some(vec![FINALIZER.into()]);
        }
        let comp = c.map(comp);
        assert_eq!(decide(&slice, comp.as_ref(), at(age_s)), expected);
    }

    #[test]
    fn composition_events_map_to_the_slices_it_controls() {
        use kube::runtime::watcher::Event;
        let (store, mut writer) = crate::operator::index::store(slice_composition_index);
        let mut other_owner = slice("b-other-owner", 0);
        other_owner.metadata.owner_references.as_mut().unwrap()[0].name = "other".into();
        let mut other_namespace = slice("c-other-namespace", 0);
        other_namespace.metadata.namespace = Some("elsewhere".into());
        let mut not_controller = slice("d-not-controller", 0);
        not_controller.metadata.owner_references.as_mut().unwrap()[0].controller = None;
        for s in [
            slice("z-ours", 0),
            slice("a-ours", 0),
            other_owner,
            other_namespace,
            not_controller,
        ] {
            writer.apply_watcher_event(&Event::Apply(s));
        }
        let names: Vec<String> = slices_of_composition(&comp(C::default()), &store)
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(names, ["a-ours", "z-ours"]);
    }

    #[rstest]
    #[case::with_finalizer(true, SliceDecision::ReleaseFinalizer)]
    #[case::without_finalizer(false, SliceDecision::Keep)]
    fn a_slice_without_owner_is_only_released(
        #[case] finalizer: bool,
        #[case] expected: SliceDecision,
    ) {
        let mut slice = slice("s", 0);
        slice.metadata.owner_references = None;
        if finalizer {
            slice.metadata.finalizers = Some(vec![FINALIZER.into()]);
        }
        assert_eq!(decide(&slice, None, at(3600)), expected);
    }
}
