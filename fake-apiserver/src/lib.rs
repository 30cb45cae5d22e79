//! A fake Kubernetes API server with the semantics controllers depend on.
//!
//! It runs in-process (a [`kube::Client`] wired straight to an axum router, no socket) or on a
//! loopback TCP port for `kubectl`.

pub mod discovery;
pub mod kubeconfig;
pub mod manifest;
pub mod openapi;
pub mod patch;
pub mod resource;
pub mod schema;
pub mod selector;
pub mod validation;
pub mod error;
pub mod store;
