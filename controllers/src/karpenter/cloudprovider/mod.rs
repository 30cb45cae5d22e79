//! The cloud-provider seam (spec §5): what the lifecycle asks of a cloud, the typed errors it
//! reacts to, and two implementations — a scriptable [`fake::FakeCloudProvider`] for tests and a
//! kwok-style [`kwok::KwokCloudProvider`] that creates the Node itself so the controllers run end
//! to end on any cluster.
//!
//! Both keep an [`InstanceRegistry`] of live instances so tests can count leaks.

pub mod catalog;
pub mod fake;
pub mod kwok;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::types::NodeClaim;

/// A cloud provider error; the first three are the typed errors the controllers branch on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CloudProviderError {
    /// The instance does not exist (ignored by termination).
    #[error("nodeclaim not found, {0}")]
    NodeClaimNotFound(String),
    /// No capacity for the request: Launch deletes the NodeClaim.
    #[error("insufficient capacity, {0}")]
    InsufficientCapacity(String),
    /// The node class is not ready yet: Launch marks LaunchFailed and requeues.
    #[error("NodeClassRef not ready, {0}")]
    NodeClassNotReady(String),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

impl CloudProviderError {
    /// `cloudprovider.IsNodeClaimNotFoundError`.
    pub fn is_nodeclaim_not_found(&self) -> bool {
        matches!(self, Self::NodeClaimNotFound(_))
    }
    /// `cloudprovider.IsInsufficientCapacityError`.
    pub fn is_insufficient_capacity(&self) -> bool {
        matches!(self, Self::InsufficientCapacity(_))
    }
    /// `cloudprovider.IsNodeClassNotReadyError`.
    pub fn is_node_class_not_ready(&self) -> bool {
        matches!(self, Self::NodeClassNotReady(_))
    }
}

/// Result of a cloud provider call.
pub type CloudResult<T> = Result<T, CloudProviderError>;

/// What the NodeClaim controllers need from a cloud.
pub trait CloudProvider: Send + Sync + std::fmt::Debug {
    /// Launch an instance for `nodeclaim`; the result is hydrated with labels, provider id,
    /// capacity, allocatable and image id.
    fn create<'a>(&'a self, nodeclaim: &'a NodeClaim) -> BoxFuture<'a, CloudResult<NodeClaim>>;
    /// Terminate the instance behind `nodeclaim.status.providerID`.
    fn delete<'a>(&'a self, nodeclaim: &'a NodeClaim) -> BoxFuture<'a, CloudResult<()>>;
    /// The instance with `provider_id`.
    fn get<'a>(&'a self, provider_id: &'a str) -> BoxFuture<'a, CloudResult<NodeClaim>>;
    /// Every live instance.
    fn list(&self) -> BoxFuture<'_, CloudResult<Vec<NodeClaim>>>;
    /// Provider name (`fake`, `kwok`).
    fn name(&self) -> &str;
}

/// Shared handle to a provider.
pub type SharedCloudProvider = Arc<dyn CloudProvider>;

/// Live instances by provider id: what a provider has created and not yet deleted.
#[derive(Debug, Clone, Default)]
pub struct InstanceRegistry {
    instances: Arc<Mutex<BTreeMap<String, NodeClaim>>>,
}

impl InstanceRegistry {
    /// Record a launched instance.
    pub fn insert(&self, created: NodeClaim) {
        let id = created.provider_id().to_string();
        self.lock().insert(id, created);
    }
    /// Remove an instance; false when it was not there.
    pub fn remove(&self, provider_id: &str) -> bool {
        self.lock().remove(provider_id).is_some()
    }
    /// The instance with `provider_id`.
    pub fn get(&self, provider_id: &str) -> Option<NodeClaim> {
        self.lock().get(provider_id).cloned()
    }
    /// Every live instance, ordered by provider id.
    pub fn list(&self) -> Vec<NodeClaim> {
        self.lock().values().cloned().collect()
    }
    /// Number of live instances (a leak check: should be 0 once every NodeClaim is gone).
    pub fn len(&self) -> usize {
        self.lock().len()
    }
    /// Whether no instance is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Drop every instance.
    pub fn clear(&self) {
        self.lock().clear();
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, NodeClaim>> {
        self.instances.lock().unwrap_or_else(|e| e.into_inner())
    }
}
