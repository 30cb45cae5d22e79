//! A deterministic race harness for Kubernetes controllers.
//!
//! It runs controllers exactly as production runs them — their own wiring, kube-runtime's
//! `Controller`, watchers and reflectors — on a single-threaded tokio runtime with a paused
//! clock ([`rt`]), against the in-process fake API server, and takes control where the outside
//! world enters ([`net`]): every API request waits at a gate until the schedule lets it through
//! (so requests inside and across reconciles interleave as the schedule says), every watch event
//! waits until the schedule delivers it to the informer (informer lag, per watch), virtual time
//! moves when the schedule says, and faults (error answers, timeouts after the write, dropped
//! or expired watches, process crashes) happen when the schedule says ([`sim`]).
//!
//! A [`scenario::Scenario`] names a [`world::World`] (hosts running production entry points,
//! world actors, invariants, goals) and a schedule configuration. Every decision comes from a
//! [`choices::Chooser`]: the same seed gives the same run, byte for byte; a recorded run replays
//! exactly; a failing run shrinks to the shortest schedule that still fails ([`engine`]); and
//! [`show`] renders a run as a timeline. The `harness` binary puts all of it on the command line.

pub mod check;
pub mod choices;
pub mod engine;
pub mod exhaustive;
pub mod net;
pub mod race;
pub mod report;
pub mod rt;
pub mod scenario;
pub mod scenarios;
pub mod show;
pub mod sim;
pub mod strategy;
pub mod trace;
pub mod world;

/// The example of `harness/README.md`, compiled as a doctest so it cannot rot.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctest;
