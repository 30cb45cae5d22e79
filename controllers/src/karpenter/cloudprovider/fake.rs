//! A scriptable in-memory cloud provider for tests (karpenter `pkg/cloudprovider/fake`).
//!
//! Script it with [`FakeCloudProvider::set_next_create_err`] (one shot),
//! [`FakeCloudProvider::set_allowed_create_calls`], or [`FakeCloudProvider::set_error_on_every_call`];
//! inspect [`FakeCloudProvider::create_calls`], [`FakeCloudProvider::delete_calls`] and the
//! [`InstanceRegistry`] of live instances. `Create` picks the cheapest compatible instance type and
//! offering, and returns a random (injected) provider id. Given a clock
//! ([`FakeCloudProvider::with_clock`]), it stamps each instance's launch time as its
//! `creationTimestamp` (what instance garbage collection ages instances by); without one, like
//! upstream's fake, it reports none.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::ObjectMeta;

use crate::clock::SharedClock;
use crate::ids::SharedIds;
use crate::karpenter::requirements::Requirements;
use crate::karpenter::types::{NodeClaim, NodeClaimStatus, CAPACITY_TYPE_LABEL, ZONE_LABEL};

use super::catalog::{cheapest, instance_types};
use super::{CloudProvider, CloudProviderError, CloudResult, InstanceRegistry};

#[derive(Debug, Default)]
struct Script {
    next_create_err: Option<CloudProviderError>,
    allowed_create_calls: Option<usize>,
    error_on_every_call: Option<CloudProviderError>,
    create_calls: Vec<NodeClaim>,
    delete_calls: Vec<NodeClaim>,
}

/// The scriptable fake provider. Clones share state.
#[derive(Debug, Clone)]
pub struct FakeCloudProvider {
    ids: SharedIds,
    clock: Option<SharedClock>,
    script: Arc<Mutex<Script>>,
    instances: InstanceRegistry,
}

impl FakeCloudProvider {
    /// A provider with no script and no instances.
    pub fn new(ids: SharedIds) -> Self {
        Self {
            ids,
            clock: None,
            script: Arc::default(),
            instances: InstanceRegistry::default(),
        }
    }

    /// Stamp every launched instance's `creationTimestamp` (its launch time) from `clock`.
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = Some(clock);
        self
    }

    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `NextCreateErr`: the next `Create` fails with `err` (once).
    pub fn set_next_create_err(&self, err: CloudProviderError) {
        self.script().next_create_err = Some(err);
    }

    /// `AllowedCreateCalls`: after `n` recorded creates, `Create` fails.
    pub fn set_allowed_create_calls(&self, n: Option<usize>) {
        self.script().allowed_create_calls = n;
    }

    /// Every call (create, delete, get, list) fails with `err` until cleared with `None`.
    pub fn set_error_on_every_call(&self, err: Option<CloudProviderError>) {
        self.script().error_on_every_call = err;
    }

    /// `CreateCalls`: the NodeClaims `Create` was called with (including failed calls).
    pub fn create_calls(&self) -> Vec<NodeClaim> {
        self.script().create_calls.clone()
    }

    /// The NodeClaims `Delete` was called with.
    pub fn delete_calls(&self) -> Vec<NodeClaim> {
        self.script().delete_calls.clone()
    }

    /// `CreatedNodeClaims`: the live instances.
    pub fn instances(&self) -> &InstanceRegistry {
        &self.instances
    }

    /// `Reset()`: forget the script, the calls and the instances.
    pub fn reset(&self) {
        *self.script() = Script::default();
        self.instances.clear();
    }

    fn launch(&self, nodeclaim: &NodeClaim) -> CloudResult<NodeClaim> {
        {
            let mut script = self.script();
            script.create_calls.push(nodeclaim.clone());
            if let Some(err) = script.error_on_every_call.clone() {
                return Err(err);
            }
            if let Some(err) = script.next_create_err.take() {
                return Err(err);
            }
            if let Some(allowed) = script.allowed_create_calls {
                if script.create_calls.len() > allowed {
                    return Err(CloudProviderError::Other(
                        "erroring as number of AllowedCreateCalls has been exceeded".into(),
                    ));
                }
            }
        }
        let reqs = Requirements::new(&nodeclaim.spec.requirements);
        let catalog = instance_types();
        let (it, offering) = cheapest(&catalog, &reqs, &nodeclaim.spec.resources.requests)
            .ok_or_else(|| {
                CloudProviderError::InsufficientCapacity(
                    "no instance type satisfies the requirements and requests".into(),
                )
            })?;
        let mut labels: BTreeMap<String, String> = it.labels();
        labels.insert(ZONE_LABEL.into(), offering.zone);
        labels.insert(CAPACITY_TYPE_LABEL.into(), offering.capacity_type);
        labels.extend(nodeclaim.metadata.labels.clone().unwrap_or_default());
        let created = NodeClaim {
            metadata: ObjectMeta {
                name: nodeclaim.metadata.name.clone(),
                labels: Some(labels),
                annotations: nodeclaim.metadata.annotations.clone(),
                creation_timestamp: self.clock.as_ref().map(|c| Time(c.now())),
                ..Default::default()
            },
            spec: nodeclaim.spec.clone(),
            status: Some(NodeClaimStatus {
                provider_id: format!("fake:///{}", self.ids.uuid()),
                capacity: it.capacity(),
                allocatable: it.allocatable(),
                ..Default::default()
            }),
        };
        self.instances.insert(created.clone());
        Ok(created)
    }

    fn every_call_err(&self) -> CloudResult<()> {
        match self.script().error_on_every_call.clone() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl CloudProvider for FakeCloudProvider {
    fn create<'a>(&'a self, nodeclaim: &'a NodeClaim) -> BoxFuture<'a, CloudResult<NodeClaim>> {
        Box::pin(async move { self.launch(nodeclaim) })
    }

    fn delete<'a>(&'a self, nodeclaim: &'a NodeClaim) -> BoxFuture<'a, CloudResult<()>> {
        Box::pin(async move {
            self.script().delete_calls.push(nodeclaim.clone());
            self.every_call_err()?;
            if self.instances.remove(nodeclaim.provider_id()) {
                Ok(())
            } else {
                Err(CloudProviderError::NodeClaimNotFound(format!(
                    "no instance with provider id {:?}",
                    nodeclaim.provider_id()
                )))
            }
        })
    }

    fn get<'a>(&'a self, provider_id: &'a str) -> BoxFuture<'a, CloudResult<NodeClaim>> {
        Box::pin(async move {
            self.every_call_err()?;
            self.instances.get(provider_id).ok_or_else(|| {
                CloudProviderError::NodeClaimNotFound(format!(
                    "no instance with provider id {provider_id:?}"
                ))
            })
        })
    }

    fn list(&self) -> BoxFuture<'_, CloudResult<Vec<NodeClaim>>> {
        Box::pin(async move {
            self.every_call_err()?;
            Ok(self.instances.list())
        })
    }

    fn name(&self) -> &str {
        "fake"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SeededIds;
    use crate::karpenter::types::NodeClaimSpec;

    fn provider() -> FakeCloudProvider {
        FakeCloudProvider::new(Arc::new(SeededIds::new(1)))
    }

    fn nodeclaim() -> NodeClaim {
        NodeClaim::new("nc", NodeClaimSpec::default())
    }

    #[tokio::test]
    async fn create_records_calls_and_registers_instances() {
        let p = provider();
        let created = p.create(&nodeclaim()).await.unwrap();
        assert!(created.provider_id().starts_with("fake:///"));
        assert_eq!(p.create_calls().len(), 1);
        assert_eq!(
            p.get(created.provider_id()).await.unwrap().provider_id(),
            created.provider_id()
        );
        assert_eq!(p.list().await.unwrap().len(), 1);
        p.delete(&created).await.unwrap();
        assert!(p.instances().is_empty());
        assert!(p
            .delete(&created)
            .await
            .unwrap_err()
            .is_nodeclaim_not_found());
    }

    #[tokio::test]
    async fn next_create_err_is_one_shot() {
        let p = provider();
        p.set_next_create_err(CloudProviderError::InsufficientCapacity("x".into()));
        assert!(p
            .create(&nodeclaim())
            .await
            .unwrap_err()
            .is_insufficient_capacity());
        assert!(p.create(&nodeclaim()).await.is_ok());
    }

    #[tokio::test]
    async fn allowed_create_calls_and_every_call_errors() {
        let p = provider();
        p.set_allowed_create_calls(Some(0));
        assert!(p.create(&nodeclaim()).await.is_err());
        assert!(p.instances().is_empty());
        p.reset();
        p.set_error_on_every_call(Some(CloudProviderError::Other("down".into())));
        assert!(p.create(&nodeclaim()).await.is_err());
        assert!(p.list().await.is_err());
        assert!(p.get("x").await.is_err());
        assert!(p.delete(&nodeclaim()).await.is_err());
    }
}
