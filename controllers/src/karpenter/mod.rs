//! Karpenter's NodeClaim lifecycle controller, ported from Go (`shared/seeds/
//! karpenter-nodeclaim-lifecycle-controller.go`, as `shared/spec/karpenter-nodeclaim-lifecycle.md`
//! describes it), with the cloud-provider seam it needs and the termination path that completes
//! the life cycle.
//!
//! - what it watches: [`wiring`] (watch mappings, dispatcher, production `Controller`s);
//! - its reconciles: [`lifecycle::reconcile`], [`termination::reconcile`];
//! - its context: [`context::Context`].

pub mod cli;
pub mod cloudprovider;
pub mod conditions;
pub mod context;
pub mod demo;
pub mod error;
pub mod events;
pub mod garbage_collection;
pub mod kubelet;
pub mod launch_cache;
pub mod lifecycle;
pub mod metrics;
pub mod node_termination;
pub mod nodes;
pub mod patch;
pub mod rate_limit;
pub mod read_own_writes;
pub mod requirements;
pub mod resources;
pub mod taints;
pub mod termination;
pub mod trim;
pub mod types;
pub mod wiring;

pub use context::{Config, Context};
pub use error::Error;
pub use types::{NodeClaim, NodeClaimSpec, NodeClaimStatus};
