//! A kwok-style cloud provider (karpenter `kwok/cloudprovider`): `Create` creates the Node object
//! itself, so the lifecycle runs end to end on any cluster, the fake API server included.
//!
//! The Node gets provider id `kwok://<node name>` (the name is random, from the injected id
//! source), the instance-type, zone and capacity-type labels plus the NodeClaim's labels,
//! `kubernetes.io/hostname` = the NodeClaim name, the annotation `kwok.x-k8s.io/node: fake`, the
//! NodeClaim's taints and startup taints (as a kubelet registers with them), the
//! instance type's capacity and allocatable, phase `Pending` and no `Ready` condition: something
//! else (kwok, or [`crate::karpenter::kubelet`]) plays the kubelet. The NodeClaim must carry an
//! instance-type requirement. `Delete` deletes the Node (the upstream fix 9fe41b8; before it, kwok
//! deleted the NodeClaim instead).
//!
//! The instance (the registry entry, stamped with its launch time from the provider's clock) is
//! recorded before its Node is created, as a cloud's VM exists before its kubelet registers: a
//! `Create` whose Node request fails, or succeeds without an answer, leaves an instance no
//! NodeClaim knows, as a real cloud would — instance garbage collection's case. Upstream's kwok
//! lists Nodes instead (the Node *is* the instance there); the separate registry is what lets a
//! test see an instance outlive its Node, or a Node its instance. Share one registry between
//! providers ([`KwokCloudProvider::with_instances`]) to let the cloud outlive a process.

use std::collections::BTreeMap;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Node, NodeSpec, NodeStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{DeleteParams, ObjectMeta, PostParams};
use kube::{Api, Client};

use crate::clock::{SharedClock, SystemClock};
use crate::ids::SharedIds;
use crate::karpenter::error::is_not_found;
use crate::karpenter::requirements::Requirements;
use crate::karpenter::taints;
use crate::karpenter::types::{
    NodeClaim, NodeClaimStatus, CAPACITY_TYPE_LABEL, HOSTNAME_LABEL, INSTANCE_TYPE_LABEL,
    ZONE_LABEL,
};

use super::catalog::{cheapest, instance_types};
use super::{CloudProvider, CloudProviderError, CloudResult, InstanceRegistry};

/// Provider id prefix.
pub const KWOK_PROVIDER_PREFIX: &str = "kwok://";
/// Annotation marking a Node as kwok-managed.
pub const KWOK_NODE_ANNOTATION: &str = "kwok.x-k8s.io/node";

/// The kwok-style provider. Clones share the instance registry.
#[derive(Clone)]
pub struct KwokCloudProvider {
    client: Client,
    ids: SharedIds,
    clock: SharedClock,
    instances: InstanceRegistry,
    max_instances: Option<usize>,
    registers_with_taints: bool,
}

impl std::fmt::Debug for KwokCloudProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KwokCloudProvider")
            .field("instances", &self.instances.len())
            .field("max_instances", &self.max_instances)
            .finish()
    }
}

impl KwokCloudProvider {
    /// A provider creating Nodes through `client`; launch times from the wall clock.
    pub fn new(client: Client, ids: SharedIds) -> Self {
        Self {
            client,
            ids,
            clock: std::sync::Arc::new(SystemClock),
            instances: InstanceRegistry::default(),
            max_instances: None,
            registers_with_taints: true,
        }
    }

    /// Stamp launch times (instances' `creationTimestamp`) from `clock`.
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// Keep instances in `instances` (shared with whoever else holds it: the cloud's state,
    /// which outlives a process that crashes and builds a new provider).
    pub fn with_instances(mut self, instances: InstanceRegistry) -> Self {
        self.instances = instances;
        self
    }

    /// Report insufficient capacity once `max` instances are live (a capacity-limited cloud).
    pub fn with_max_instances(mut self, max: Option<usize>) -> Self {
        self.max_instances = max;
        self
    }

    /// Create Nodes without the NodeClaim's taints, as a kubelet started without
    /// `--register-with-taints` registers: Registration then puts them on (writing the Node's
    /// taint list).
    pub fn without_registered_taints(mut self) -> Self {
        self.registers_with_taints = false;
        self
    }

    /// The live instances.
    pub fn instances(&self) -> &InstanceRegistry {
        &self.instances
    }

    /// The Node this provider would create for `nodeclaim` (no API call).
    pub fn to_node(&self, nodeclaim: &NodeClaim) -> CloudResult<Node> {
        let Some(it_req) = nodeclaim
            .spec
            .requirements
            .iter()
            .find(|r| r.key == INSTANCE_TYPE_LABEL)
        else {
            return Err(CloudProviderError::Other(
                "instance type requirement not found".into(),
            ));
        };
        let catalog = instance_types();
        let mut candidates = vec![];
        for name in &it_req.values {
            match catalog.iter().find(|it| &it.name == name) {
                Some(it) => candidates.push(it.clone()),
                None => {
                    return Err(CloudProviderError::Other(format!(
                        "instance type {name} not found"
                    )))
                }
            }
        }
        let reqs = Requirements::new(&nodeclaim.spec.requirements);
        let (it, offering) = cheapest(&candidates, &reqs, &nodeclaim.spec.resources.requests)
            .ok_or_else(|| CloudProviderError::Other("unable to determine instance type".into()))?;
        let name = format!("kwok-{}", &self.ids.uuid().simple().to_string()[..12]);
        let mut labels: BTreeMap<String, String> = it.labels();
        labels.insert(ZONE_LABEL.into(), offering.zone);
        labels.insert(CAPACITY_TYPE_LABEL.into(), offering.capacity_type);
        labels.extend(nodeclaim.metadata.labels.clone().unwrap_or_default());
        labels.insert(
            HOSTNAME_LABEL.into(),
            nodeclaim.metadata.name.clone().unwrap_or_default(),
        );
        let mut annotations = nodeclaim.metadata.annotations.clone().unwrap_or_default();
        annotations.insert(KWOK_NODE_ANNOTATION.into(), "fake".into());
        Ok(Node {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some(labels),
                annotations: Some(annotations),
                ..Default::default()
            },
            spec: Some(NodeSpec {
                provider_id: Some(format!("{KWOK_PROVIDER_PREFIX}{name}")),
                // The kubelet registers with the NodeClaim's taints and startup taints
                // (`--register-with-taints`), so they are there before anything can schedule.
                taints: Some(taints::merge(
                    &nodeclaim.spec.taints,
                    &nodeclaim.spec.startup_taints,
                ))
                .filter(|t| self.registers_with_taints && !t.is_empty()),
                ..Default::default()
            }),
            status: Some(NodeStatus {
                capacity: Some(it.capacity()),
                allocatable: Some(it.allocatable()),
                phase: Some("Pending".into()),
                ..Default::default()
            }),
        })
    }

    fn to_nodeclaim(node: &Node, nodeclaim: &NodeClaim, launched_at: &Time) -> NodeClaim {
        let status = node.status.clone().unwrap_or_default();
        NodeClaim {
            metadata: ObjectMeta {
                name: nodeclaim.metadata.name.clone(),
                labels: node.metadata.labels.clone(),
                annotations: node.metadata.annotations.clone(),
                creation_timestamp: Some(launched_at.clone()),
                ..Default::default()
            },
            spec: nodeclaim.spec.clone(),
            status: Some(NodeClaimStatus {
                provider_id: node
                    .spec
                    .as_ref()
                    .and_then(|s| s.provider_id.clone())
                    .unwrap_or_default(),
                capacity: status.capacity.unwrap_or_default(),
                allocatable: status.allocatable.unwrap_or_default(),
                ..Default::default()
            }),
        }
    }
}

impl CloudProvider for KwokCloudProvider {
    fn create<'a>(&'a self, nodeclaim: &'a NodeClaim) -> BoxFuture<'a, CloudResult<NodeClaim>> {
        Box::pin(async move {
            if let Some(max) = self.max_instances {
                if self.instances.len() >= max {
                    return Err(CloudProviderError::InsufficientCapacity(format!(
                        "all {max} kwok instances are in use"
                    )));
                }
            }
            let node = self.to_node(nodeclaim)?;
            // The instance runs from here on, whatever becomes of its Node.
            let launched_at = Time(self.clock.now());
            self.instances
                .insert(Self::to_nodeclaim(&node, nodeclaim, &launched_at));
            let created = Api::<Node>::all(self.client.clone())
                .create(&PostParams::default(), &node)
                .await
                .map_err(|e| CloudProviderError::Other(format!("creating node, {e}")))?;
            let launched = Self::to_nodeclaim(&created, nodeclaim, &launched_at);
            self.instances.insert(launched.clone());
            Ok(launched)
        })
    }

    fn delete<'a>(&'a self, nodeclaim: &'a NodeClaim) -> BoxFuture<'a, CloudResult<()>> {
        Box::pin(async move {
            let provider_id = nodeclaim.provider_id();
            // The instance is its Node: it goes from the registry only once the Node is gone,
            // so a delete that fails or is cut short (a crash, a lost answer) leaves the
            // instance listed, and garbage collection tries again.
            let node_name = provider_id.strip_prefix(KWOK_PROVIDER_PREFIX).unwrap_or("");
            let node_deleted = if node_name.is_empty() {
                false
            } else {
                match Api::<Node>::all(self.client.clone())
                    .delete(node_name, &DeleteParams::default())
                    .await
                {
                    Ok(_) => true,
                    Err(e) if is_not_found(&e) => false,
                    Err(e) => return Err(CloudProviderError::Other(format!("deleting node, {e}"))),
                }
            };
            let known = self.instances.remove(provider_id);
            if known || node_deleted {
                Ok(())
            } else {
                Err(CloudProviderError::NodeClaimNotFound(format!(
                    "no instance with provider id {provider_id:?}"
                )))
            }
        })
    }

    fn get<'a>(&'a self, provider_id: &'a str) -> BoxFuture<'a, CloudResult<NodeClaim>> {
        Box::pin(async move {
            self.instances.get(provider_id).ok_or_else(|| {
                CloudProviderError::NodeClaimNotFound(format!(
                    "no instance with provider id {provider_id:?}"
                ))
            })
        })
    }

    fn list(&self) -> BoxFuture<'_, CloudResult<Vec<NodeClaim>>> {
        Box::pin(async move { Ok(self.instances.list()) })
    }

    fn name(&self) -> &str {
        "kwok"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SeededIds;
    use crate::karpenter::taints::taint;
    use crate::karpenter::types::{NodeClaimSpec, NodeSelectorRequirementWithMinValues};
    use std::sync::Arc;

    fn nodeclaim(instance_types: Option<&[&str]>) -> NodeClaim {
        let mut spec = NodeClaimSpec {
            taints: vec![taint("dedicated", Some("x"), "NoSchedule")],
            startup_taints: vec![taint("agent", None, "NoSchedule")],
            ..Default::default()
        };
        if let Some(types) = instance_types {
            spec.requirements
                .push(NodeSelectorRequirementWithMinValues {
                    key: INSTANCE_TYPE_LABEL.into(),
                    operator: "In".into(),
                    values: types.iter().map(|s| s.to_string()).collect(),
                    min_values: None,
                });
        }
        NodeClaim::new("nc", spec)
    }

    #[tokio::test]
    async fn builds_a_kwok_node_from_the_cheapest_requested_type() {
        let client = fake_apiserver::FakeApiServer::new().client();
        let kwok = KwokCloudProvider::new(client, Arc::new(SeededIds::new(1)));
        let node = kwok
            .to_node(&nodeclaim(Some(&["m-2x-amd64-linux", "c-2x-amd64-linux"])))
            .unwrap();
        let labels = node.metadata.labels.clone().unwrap();
        assert_eq!(labels[INSTANCE_TYPE_LABEL], "c-2x-amd64-linux");
        assert_eq!(labels[HOSTNAME_LABEL], "nc");
        assert_eq!(
            node.metadata.annotations.clone().unwrap()[KWOK_NODE_ANNOTATION],
            "fake"
        );
        let spec = node.spec.clone().unwrap();
        let name = node.metadata.name.clone().unwrap();
        assert_eq!(spec.provider_id.unwrap(), format!("kwok://{name}"));
        assert_eq!(
            spec.taints.unwrap().len(),
            2,
            "registers with taints and startup taints"
        );
        let status = node.status.unwrap();
        assert_eq!(status.phase.as_deref(), Some("Pending"));
        assert!(
            status.conditions.is_none(),
            "no Ready until a kubelet says so"
        );
    }

    #[tokio::test]
    async fn rejects_missing_or_unknown_instance_types() {
        let client = fake_apiserver::FakeApiServer::new().client();
        let kwok = KwokCloudProvider::new(client, Arc::new(SeededIds::new(1)));
        let err = kwok.to_node(&nodeclaim(None)).unwrap_err();
        assert_eq!(err.to_string(), "instance type requirement not found");
        let err = kwok
            .to_node(&nodeclaim(Some(&["x-9x-amd64-linux"])))
            .unwrap_err();
        assert_eq!(err.to_string(), "instance type x-9x-amd64-linux not found");
    }

    #[tokio::test]
    async fn create_and_delete_track_instances_and_nodes() {
        let server = fake_apiserver::FakeApiServer::new();
        let kwok = KwokCloudProvider::new(server.client(), Arc::new(SeededIds::new(1)))
            .with_max_instances(Some(1));
        let created = kwok
            .create(&nodeclaim(Some(&["c-1x-amd64-linux"])))
            .await
            .unwrap();
        let name = created
            .provider_id()
            .strip_prefix(KWOK_PROVIDER_PREFIX)
            .unwrap()
            .to_string();
        assert!(server.get_object("v1", "nodes", None, &name).is_some());
        assert_eq!(kwok.list().await.unwrap().len(), 1);
        let full = kwok
            .create(&nodeclaim(Some(&["c-1x-amd64-linux"])))
            .await
            .unwrap_err();
        assert!(full.is_insufficient_capacity());
        kwok.delete(&created).await.unwrap();
        assert!(kwok.instances().is_empty());
        assert!(server.get_object("v1", "nodes", None, &name).is_none());
        assert!(kwok
            .delete(&created)
            .await
            .unwrap_err()
            .is_nodeclaim_not_found());
    }

    /// Found by the race harness (`karpenter/leader-election`): the instance left the registry
    /// before its Node was deleted, so a Node delete that failed (or was cut short by a lost
    /// leadership) left a Node no garbage collection would ever look at again.
    #[tokio::test]
    async fn a_failed_node_delete_keeps_the_instance_listed() {
        let server = fake_apiserver::FakeApiServer::new();
        let kwok = KwokCloudProvider::new(server.client(), Arc::new(SeededIds::new(1)));
        let created = kwok
            .create(&nodeclaim(Some(&["c-1x-amd64-linux"])))
            .await
            .unwrap();
        server.add_fault(fake_apiserver::hooks::FaultRule {
            matcher: fake_apiserver::hooks::RequestMatcher {
                verb: Some("delete".into()),
                resource: Some("nodes".into()),
                ..Default::default()
            },
            error: fake_apiserver::ApiError::internal("etcdserver: request timed out"),
            times: Some(1),
        });
        assert!(kwok.delete(&created).await.is_err());
        assert_eq!(kwok.list().await.unwrap().len(), 1, "still listed");
        kwok.delete(&created).await.unwrap();
        assert!(kwok.list().await.unwrap().is_empty());
    }
}
