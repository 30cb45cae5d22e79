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
//! Inside, one [`store::Store`] keeps every object as JSON under a single global revision (as
//! etcd does), with a bounded event history for watches. Each HTTP verb is a thin handler over the
//! lifecycle rules in [`semantics`]; errors are `metav1.Status` bodies with the real codes and
//! reasons. Tests and the race harness get hooks ([`hooks`]): a request gate, fault rules, a
//! subscription to the event log and a switch that drops watches.

// `ApiError` carries a whole `metav1.Status` (message, details, causes); it is the answer to a
// failed request, not a hot path, so it is returned by value as kube-rs does with its errors.
#![allow(clippy::result_large_err)]

pub mod apply;
pub mod auth;
pub mod chaos;
pub mod controllers;
pub mod crd;
pub mod crd_validation;
pub mod defaults;
pub mod delete_answer;
pub mod discovery;
mod disruption;
pub mod encoding;
pub mod error;
mod eviction;
pub mod field_labels;
pub mod gc_policy;
pub(crate) mod handlers;
pub mod hooks;
pub mod kind_rules;
pub mod kubeconfig;
pub mod list;
pub mod manifest;
pub mod openapi;
mod openapi_routes;
pub mod patch;
mod pod_connect;
pub mod pod_logs;
pub mod protobuf;
pub mod registry;
pub mod request;
pub mod resource;
pub mod rules;
pub mod scale;
pub mod schema;
pub mod selector;
pub mod semantics;
mod server;
pub mod state;
pub mod store;
pub mod subresource;
pub mod table;
pub mod tls;
pub mod typed;
mod typed_shape;
pub mod validation;
mod value_eq;
mod watch;

pub use error::ApiError;
pub use server::{ClockFn, FakeApiServer, FakeApiServerBuilder, MAX_BODY_BYTES};
