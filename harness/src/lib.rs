//! A deterministic race harness for controllers.
//!
//! It runs controllers' real reconcile functions (the same code production drives through
//! `kube::runtime::Controller`) against the in-process fake API server, and decides from a seed
//! every ordering that matters: when each controller's informer cache sees each event
//! ([`cache::LaggingCache`]), which reconcile runs next, when virtual time moves. Each run is a
//! sequence of decisions ([`choices::Chooser`]); the same seed gives the same run, byte for byte,
//! a recorded run replays exactly, and a failing run shrinks to the shortest schedule that still
//! fails ([`engine`]).
//!
//! [`eno`] models Eno's synthesis pod lifecycle with its status controller, an executor and the
//! kubelet as harness actions, and checks the pod invariant of the spec after every step.
//! [`karpenter`] models the NodeClaim launch with a fault that fails the status patch after the
//! instance was created, and checks that no cloud instance leaks.

pub mod cache;
pub mod choices;
pub mod engine;
pub mod eno;
pub mod karpenter;
