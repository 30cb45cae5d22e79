//! What Karpenter's caches keep of each watched object (applied to the watch streams in
//! [`super::wiring::spawn`] and the kubelet stand-in's, before the reflector stores).
//!
//! Upstream's operator sets `cache.TransformStripManagedFields()` as its manager cache's default
//! transform; the Node cache here goes one step further and keeps, of a Node's status, only what
//! a reconcile reads:
//!
//! - **NodeClaim**: everything but `metadata.managedFields`. The [`NodeClaim`] type already
//!   models only the fields the controllers read or write (spec §2); the lifecycle computes its
//!   merge patches from the cached copy, and a field absent from both sides of the diff is never
//!   sent.
//! - **Node**: metadata without `managedFields`, the whole spec, and of the status only
//!   `conditions` (Ready: Initialization, NodeClaim garbage collection, the kubelet stand-in)
//!   and `allocatable` (Initialization's resource check). Registration's strategic patch is built
//!   from metadata and `spec.taints`; the node termination stand-in's update sends the cached
//!   Node back whole, and an update of a Node never writes its status (the status subresource
//!   does; the server keeps the stored status, `nodeStrategy.PrepareForUpdate`) nor drops its
//!   managedFields when the update carries none. The dropped parts — `images`, `nodeInfo`,
//!   `addresses`, `capacity`, `volumesAttached`, `daemonEndpoints`, ... — are most of a real
//!   Node's bytes.

use k8s_openapi::api::core::v1::{Node, NodeStatus};

use crate::operator::trim::strip_managed_fields;

use super::types::NodeClaim;

/// A NodeClaim as the caches keep it.
pub fn nodeclaim(nc: &mut NodeClaim) {
    strip_managed_fields(nc);
}

/// A Node as the caches keep it.
pub fn node(node: &mut Node) {
    strip_managed_fields(node);
    if let Some(status) = node.status.as_mut() {
        *status = NodeStatus {
            conditions: status.conditions.take(),
            allocatable: status.allocatable.take(),
            ..Default::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use jiff::SignedDuration;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
    use kube::runtime::reflector::ObjectRef;
    use kube::{Api, CustomResourceExt, ResourceExt};
    use serde_json::{json, Value};

    use super::*;
    use crate::clock::{Clock, ManualClock};
    use crate::ids::SeededIds;
    use crate::karpenter::cloudprovider::kwok::KwokCloudProvider;
    use crate::karpenter::context::{Config, Context};
    use crate::karpenter::demo::demo_nodeclaim;
    use crate::karpenter::metrics::Metrics;
    use crate::karpenter::wiring::{fill_cache, new_stores, Writers};
    use crate::karpenter::{lifecycle, node_termination, termination};

    /// What a real kubelet reports besides Ready: the parts the Node cache drops.
    fn kubelet_status() -> Value {
        json!({
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ready"},
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory"}
            ],
            "capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"},
            "allocatable": {"cpu": "2", "memory": "7Gi", "pods": "110"},
            "addresses": [{"type": "InternalIP", "address": "10.0.0.7"}, {"type": "Hostname", "address": "nc"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": "m", "systemUUID": "s", "bootID": "b", "kernelVersion": "6.1",
                "osImage": "Debian", "containerRuntimeVersion": "containerd://1.7",
                "kubeletVersion": "v1.31.0", "kubeProxyVersion": "", "operatingSystem": "linux",
                "architecture": "amd64"
            },
            "images": [
                {"names": ["registry.example/pause@sha256:0123", "registry.example/pause:3.9"], "sizeBytes": 1000},
                {"names": ["registry.example/agent:1.0"], "sizeBytes": 2000}
            ]
        })
    }

    /// Fill the caches from the server, trimmed or whole.
    async fn sync(client: &kube::Client, writers: &mut Writers, trimmed: bool) {
        let mut ncs = Api::<NodeClaim>::all(client.clone())
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        let mut nodes = Api::<Node>::all(client.clone())
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        assert!(
            nodes.iter().all(|n| n.metadata.managed_fields.is_some()),
            "the server keeps managedFields"
        );
        if trimmed {
            ncs.iter_mut().for_each(nodeclaim);
            nodes.iter_mut().for_each(node);
        }
        fill_cache(&mut writers.nodeclaims, ncs);
        fill_cache(&mut writers.nodes, nodes);
    }

    /// What the kubelet and its agents do: Ready with a full status, startup taints removed
    /// once the Node is registered.
    async fn kubelet(client: &kube::Client) {
        let api = Api::<Node>::all(client.clone());
        for n in api.list(&ListParams::default()).await.unwrap().items {
            if n.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let name = n.name_any();
            // Not yet reported: no conditions (a real server always shows `nodeInfo`, zeroed
            // until the kubelet fills it).
            if n.status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_none_or(|c| c.is_empty())
            {
                api.patch_status(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"status": kubelet_status()})),
                )
                .await
                .unwrap();
            }
            let registered = n
                .labels()
                .contains_key(crate::karpenter::types::NODE_REGISTERED_LABEL);
            let tainted = n
                .spec
                .as_ref()
                .and_then(|s| s.taints.as_ref())
                .is_some_and(|t| !t.is_empty());
            if registered && tainted {
                api.patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"taints": null}})),
                )
                .await
                .unwrap();
            }
        }
    }

    /// One NodeClaim's whole life — launch, registration, initialization, deletion, Node and
    /// instance gone — with every reconcile reading caches that hold trimmed or whole objects.
    /// Returns every write the server committed, without resourceVersions and managedFields.
    async fn life(trimmed: bool) -> Vec<Value> {
        let clock = ManualClock::default();
        let server_clock = clock.clone();
        let server = fake_apiserver::FakeApiServer::builder()
            .seed(7)
            .clock(move || server_clock.now())
            .build();
        let client = server.client();
        Api::<CustomResourceDefinition>::all(client.clone())
            .create(&PostParams::default(), &NodeClaim::crd())
            .await
            .unwrap();
        let mut events = server.subscribe();
        let ids = Arc::new(SeededIds::new(1));
        let kwok =
            KwokCloudProvider::new(client.clone(), ids.clone()).with_clock(Arc::new(clock.clone()));
        let (stores, mut writers) = new_stores();
        let ctx = Arc::new(Context::new(
            client.clone(),
            stores,
            Arc::new(kwok.clone()),
            Arc::new(clock.clone()),
            ids,
            Metrics::new(),
            Config::default(),
        ));
        let mut nc = demo_nodeclaim("default");
        nc.metadata.generate_name = None;
        nc.metadata.name = Some("nc".into());
        nc.metadata.annotations = Some(BTreeMap::from([("example.com/a".into(), "b".into())]));
        let api = Api::<NodeClaim>::all(client.clone());
        api.create(&PostParams::default(), &nc).await.unwrap();
        let key = ObjectRef::<NodeClaim>::new("nc");

        let mut trimmed_seen = false;
        for _ in 0..6 {
            sync(&client, &mut writers, trimmed).await;
            if let Some(n) = ctx.nodes.state().first() {
                trimmed_seen |= n.metadata.managed_fields.is_none()
                    && n.status.as_ref().is_some_and(|s| s.node_info.is_none());
            }
            let cached = ctx.nodeclaims.get(&key).unwrap();
            lifecycle::reconcile(cached, ctx.clone()).await.unwrap();
            kubelet(&client).await;
            clock.advance(SignedDuration::from_secs(2));
        }
        assert_eq!(trimmed_seen, trimmed, "the caches held what was asked");
        let ready = api.get("nc").await.unwrap();
        assert!(
            ready.condition_is_true(crate::karpenter::types::condition_types::READY),
            "the NodeClaim became Ready: {:?}",
            ready.status
        );

        api.delete("nc", &DeleteParams::default()).await.unwrap();
        for _ in 0..4 {
            sync(&client, &mut writers, trimmed).await;
            if let Some(cached) = ctx.nodeclaims.get(&key) {
                termination::reconcile(cached, ctx.clone()).await.unwrap();
            }
            sync(&client, &mut writers, trimmed).await;
            for n in ctx.nodes.state() {
                node_termination::reconcile(n, ctx.clone()).await.unwrap();
            }
            clock.advance(SignedDuration::from_secs(2));
        }
        assert!(
            api.get_opt("nc").await.unwrap().is_none(),
            "the NodeClaim is gone"
        );
        assert!(kwok.instances().is_empty(), "the instance is gone");

        let mut writes = vec![];
        while let Ok(event) = events.try_recv() {
            let mut object = event.object_value();
            if let Some(meta) = object["metadata"].as_object_mut() {
                meta.remove("resourceVersion");
                meta.remove("managedFields");
            }
            writes.push(json!({
                "type": format!("{:?}", event.event_type),
                "resource": &*event.resource,
                "object": object,
            }));
        }
        writes
    }

    /// Every field a reconcile reads survives the trimming: the lifecycle, termination and node
    /// termination reconciles send exactly the same writes whether their caches hold trimmed
    /// or whole objects — including the node termination stand-in's update of the whole cached
    /// Node, which leaves the Node's status (dropped from the cache) as it was.
    #[tokio::test]
    async fn reconciles_on_trimmed_caches_write_what_they_write_on_whole_objects() {
        let whole = life(false).await;
        let trimmed = life(true).await;
        assert!(whole.len() > 10, "a whole life: {} writes", whole.len());
        for (i, (w, t)) in whole.iter().zip(&trimmed).enumerate() {
            assert_eq!(w, t, "write {i} differs");
        }
        assert_eq!(whole.len(), trimmed.len());
        let node_writes: Vec<&Value> = trimmed
            .iter()
            .filter(|w| w["resource"] == "/nodes")
            .collect();
        let last = node_writes.last().unwrap();
        assert_eq!(last["type"], "Deleted");
        assert_eq!(
            last["object"]["status"]["nodeInfo"]["kubeletVersion"], "v1.31.0",
            "the update of the trimmed Node kept its status"
        );
    }

    #[test]
    fn node_keeps_metadata_spec_conditions_and_allocatable() {
        let mut n: Node = serde_json::from_value(json!({
            "metadata": {
                "name": "n", "resourceVersion": "5", "labels": {"a": "b"},
                "annotations": {"c": "d"}, "finalizers": ["karpenter.sh/termination"],
                "managedFields": [{"manager": "kubelet", "operation": "Update"}]
            },
            "spec": {"providerID": "kwok://n", "taints": [{"key": "k", "effect": "NoSchedule"}]},
            "status": kubelet_status()
        }))
        .unwrap();
        let before = n.clone();
        node(&mut n);
        assert_eq!(n.metadata.managed_fields, None);
        let mut want_meta = before.metadata.clone();
        want_meta.managed_fields = None;
        assert_eq!(n.metadata, want_meta);
        assert_eq!(n.spec, before.spec);
        let (s, b) = (n.status.unwrap(), before.status.unwrap());
        assert_eq!(s.conditions, b.conditions);
        assert_eq!(s.allocatable, b.allocatable);
        assert_eq!(
            (s.images, s.node_info, s.capacity, s.addresses),
            (None, None, None, None)
        );
    }
}
