//! The HTTP layer: everything between a request's bytes and the registry.
//!
//! The way of a request: `server` builds the axum router (discovery, version and health paths
//! answered there); every resource path goes to `handlers::dispatch`, which parses the path and
//! query ([`request`]), decodes the body ([`typed`], [`crate::protobuf`]), and calls the registry
//! layer for writes ([`crate::registry::semantics`]). Reads are [`list`] and `watch`, answered
//! as JSON or a Table ([`encoding`], [`table`]). Discovery documents ([`discovery`]), the OpenAPI
//! documents (`openapi_routes`), `pods/log`, `exec`, `attach`, `portforward` (`pod_connect`)
//! and `pods/eviction` (`eviction`) are served here too, and `componentstatuses`
//! (`component_status`), which nothing stores.

pub(crate) mod chain;
pub(crate) mod component_status;
pub(crate) mod continue_token;
pub(crate) mod converted;
pub(crate) mod crd_cleanup;
pub(crate) mod created_bodies;
pub mod discovery;
pub mod encoding;
pub(crate) mod eviction;
pub(crate) mod handlers;
pub mod list;
pub(crate) mod metadata_only;
pub mod negotiation;
pub(crate) mod openapi_routes;
pub mod options;
pub(crate) mod pod_connect;
pub mod pretty;
pub mod request;
pub(crate) mod server;
pub mod table;
pub mod typed;
mod typed_shape;
pub(crate) mod watch;
pub mod yaml;
