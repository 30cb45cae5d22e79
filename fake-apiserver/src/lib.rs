//! A fake Kubernetes API server with the semantics controllers depend on.
//!
//! It runs in-process (a [`kube::Client`] wired straight to an axum router, no socket) or on a
//! loopback TCP port for `kubectl`:
//!
//! ```no_run
//! # async fn demo() {
//! let server = fake_apiserver::FakeApiServer::new();
//! let client = server.client(); // a kube::Client with no socket
//! # let _ = client;
//! # }
//! ```
//!
//! # Layers
//!
//! The source tree follows a request through the server; each layer imports only the layers
//! below it (`tests/layers.rs` checks this):
//!
//! - [`http`] — the router (`http::server`), request parsing and dispatch
//!   ([`http::request`], `http::handlers`), list and watch, discovery, the OpenAPI routes,
//!   Tables and encodings, `pods/log`/`exec`/`attach`/`portforward`, `pods/eviction`.
//! - [`registry`] — the served kinds ([`registry::Registry`]) and what a write means: the
//!   lifecycle rules in [`registry::semantics`], per-kind mutations, delete answers and
//!   garbage-collection finalizers, `scale` and other subresources, PodDisruptionBudgets, CRDs,
//!   the saved state file.
//! - [`rules`] — validation per API group, object metadata checks ([`rules::validation`]),
//!   defaulting, custom resources' schemas, CRD validation, label and field selectors.
//! - [`store`] — one [`store::Store`] keeps every object as JSON under a single global revision
//!   (as etcd does), with a bounded event history for watches; container log lines.
//!
//! Beside them: [`context`] defines the shared state ([`context::Shared`]) and the
//! [`FakeApiServer`] handle every layer may take; [`error`] (`metav1.Status` errors with the
//! real codes and reasons) and [`resource`] (what a served kind is) are used by all. [`auth`]
//! (authentication, authorization, admission) wraps the router; [`controllers`] (the garbage
//! collector, namespaces, service accounts) write through the same write path as requests;
//! `bootstrap` holds what a new server writes before it serves, recorded once and replayed;
//! [`apply`], [`patch`] and [`protobuf`] are the server-side apply, patch and protobuf codecs;
//! [`openapi`] builds the OpenAPI documents. Tests and the race harness get hooks ([`hooks`],
//! [`chaos`]): a request gate, fault rules, a subscription to the event log and a switch that
//! drops watches.

// `ApiError` carries a whole `metav1.Status` (message, details, causes); it is the answer to a
// failed request, not a hot path, so it is returned by value as kube-rs does with its errors.
#![allow(clippy::result_large_err)]

pub mod admission;
#[cfg(feature = "mimalloc")]
pub mod allocator;
pub mod apply;
pub mod auth;
mod bootstrap;
pub mod cel;
pub mod chaos;
pub mod context;
pub mod controllers;
mod conversion_webhook;
pub mod error;
pub mod hooks;
pub mod http;
pub mod kubeconfig;
pub mod listener;
pub mod manifest;
pub mod openapi;
pub mod patch;
pub mod protobuf;
pub mod registry;
pub mod resource;
pub mod rules;
pub mod store;
pub mod tls;

pub use context::{ClockFn, FakeApiServer};
pub use error::ApiError;
pub use http::server::{FakeApiServerBuilder, MAX_BODY_BYTES};

// The modules' paths before the layers (issue 10), so that code written against them still
// builds. Inside this crate use the new paths: `tests/layers.rs` refuses these.
pub use http::{discovery, encoding, list, request, table, typed};
#[allow(unused_imports)]
pub(crate) use http::{eviction, handlers, openapi_routes, pod_connect, server, watch};
#[allow(unused_imports)]
pub(crate) use registry::disruption;
pub use registry::{
    crd, delete_answer, gc_policy, kind_rules, scale, semantics, state, subresource,
};
pub use rules::{
    crd_validation, defaults, field_labels, schema, selectors as selector, validation,
};
pub use store::pod_logs;
#[allow(unused_imports)]
pub(crate) use store::value_eq;
