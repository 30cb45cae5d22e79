//! Eno's synthesis pod lifecycle, ported from Go (`internal/controllers/synthesis` at 44daacb4).
//!
//! For every Composition this keeps at most one live synthesizer Pod (plus at most one that is
//! terminating), gives each synthesis a UUID, backs off between failed attempts, deletes pods that
//! are done, superseded or timed out, and holds the `eno.azure.io/cleanup` finalizer until a
//! deleted composition has been reconciled. `shared/spec/eno-synthesis.md` is the behaviour
//! this follows, step by step.
//!
//! The parts, as DESIGN.md's "seam" cuts a controller:
//! - what it watches: [`wiring::pod_to_composition`] and [`wiring::pod_watch_config`];
//! - its reconcile: [`lifecycle::reconcile`] (and [`status_controller::reconcile`]);
//! - its context: [`context::Context`] (and [`status_controller::StatusContext`]).
//!
//! Two counterparts run beside it: [`rollout`] resynthesizes a Synthesizer's compositions one
//! per `rolloutCooldown` after it changes, and [`slice_cleanup`] deletes ResourceSlices no
//! composition references any more.
//!
//! [`wiring`] puts them into `kube::runtime::Controller` for production (failed reconciles are
//! retried with per-object backoff and reported as Warning Events); [`executor`] is the in-pod
//! `synthesize` program that completes a synthesis; [`kubelet_standin`] runs synthesizer pods
//! where there are no nodes (the fake API server); [`demo`] runs everything against an API
//! server and reports the synthesized composition; [`cli`] holds the `eno` and `synthesize`
//! subcommands.
//!
//! Deliberate changes from upstream, each commented where it is made: `isReconciling` with a nil
//! current synthesis, an unset `podTimeout`, pods matched by composition namespace *and* name,
//! deletion without a Synthesizer, the status controller releasing pods it cannot record, and
//! the executor running inside the pod.

pub mod cli;
pub mod context;
pub mod demo;
pub mod error;
pub mod executor;
pub mod kubelet_standin;
pub mod lifecycle;
pub mod metrics;
pub mod pod_template;
pub mod rollout;
pub mod should_delete;
pub mod slice_cleanup;
pub mod status_controller;
pub mod synthesis_state;
pub mod types;
pub mod wiring;

pub use context::{Config, Context};
pub use error::Error;
pub use types::{Composition, ResourceSlice, Synthesizer};

/// Finalizer on Compositions (held until deletion is reconciled) and on synthesizer Pods (held
/// until the status controller has recorded the attempt).
pub const FINALIZER: &str = "eno.azure.io/cleanup";
/// Pod label naming the pod's Composition.
pub const LABEL_COMPOSITION_NAME: &str = "eno.azure.io/composition-name";
/// Pod label naming the pod's Composition's namespace.
pub const LABEL_COMPOSITION_NAMESPACE: &str = "eno.azure.io/composition-namespace";
/// Pod label naming the synthesis the pod belongs to.
pub const LABEL_SYNTHESIS_UUID: &str = "eno.azure.io/synthesis-uuid";
/// The standard "managed by" label; the pod cache only holds pods where it is [`MANAGED_BY_ENO`].
pub const LABEL_MANAGED_BY: &str = "app.kubernetes.io/managed-by";
/// Value of [`LABEL_MANAGED_BY`] on synthesizer pods.
pub const MANAGED_BY_ENO: &str = "eno";
/// Pod annotation: the Composition generation the pod synthesizes.
pub const ANNOTATION_COMPOSITION_GENERATION: &str = "eno.azure.io/composition-generation";
/// Pod annotation: the Synthesizer generation the pod runs.
pub const ANNOTATION_SYNTHESIZER_GENERATION: &str = "eno.azure.io/synthesizer-generation";
