//! A self-contained demonstration: install the NodeClaim CRD, start the lifecycle, termination
//! and node termination controllers with the kwok-style provider and the kubelet stand-in, create
//! NodeClaims, and wait until every one is Ready (optionally delete them again and wait until the
//! Nodes, instances and NodeClaims are gone). Used by the binary's `demo` subcommand against the
//! in-process fake API server, and works against a real cluster as well.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::{DeleteParams, ListParams, ObjectMeta, PostParams};
use kube::{Api, Client, CustomResourceExt, ResourceExt};

use crate::clock::SharedClock;
use crate::ids::SharedIds;
use crate::operator::shutdown;

use super::cloudprovider::kwok::KwokCloudProvider;
use super::context::{Config, Context};
use super::kubelet::{self, KubeletContext};
use super::metrics::Metrics;
use super::taints::taint;
use super::types::{
    condition_types::READY, NodeClaim, NodeClaimSpec, NodeClassReference,
    NodeSelectorRequirementWithMinValues, CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, NODEPOOL_LABEL,
};
use super::wiring::{self, WiringOptions};

/// What the demo does.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// NodeClaims to create.
    pub count: usize,
    /// How long to wait for each phase.
    pub timeout: Duration,
    /// Delete the NodeClaims at the end and wait until everything is gone.
    pub delete_after: bool,
    /// Clock for the controllers.
    pub clock: SharedClock,
    /// Id source for the controllers and the provider.
    pub ids: SharedIds,
}

/// One NodeClaim as the demo saw it at the end of the launch phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoNodeClaim {
    /// NodeClaim name.
    pub name: String,
    /// Node it registered as.
    pub node: String,
    /// Instance type label.
    pub instance_type: String,
    /// Provider id.
    pub provider_id: String,
    /// Status of the Ready condition.
    pub ready: String,
}

/// What happened.
#[derive(Debug, Clone, Default)]
pub struct DemoReport {
    /// The NodeClaims once all were Ready.
    pub nodeclaims: Vec<DemoNodeClaim>,
    /// Live instances after the deletion phase (0 unless something leaked; the launch count when
    /// `delete_after` is false).
    pub instances_left: usize,
    /// Nodes left after the deletion phase.
    pub nodes_left: usize,
}

impl DemoReport {
    /// A `kubectl get`-like table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{:<16} {:<20} {:<20} {:<6} {}\n",
            "NAME", "NODE", "TYPE", "READY", "PROVIDER-ID"
        );
        for n in &self.nodeclaims {
            out.push_str(&format!(
                "{:<16} {:<20} {:<20} {:<6} {}\n",
                n.name, n.node, n.instance_type, n.ready, n.provider_id
            ));
        }
        out
    }
}

/// Why the demo failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// An API call failed.
    #[error("{0}: {1}")]
    Api(&'static str, #[source] kube::Error),
    /// Something did not happen in time.
    #[error("timed out waiting for {0}")]
    Timeout(&'static str),
}

/// Install the NodeClaim CRD (if missing) and wait until it is served.
pub async fn install_crd(client: &Client, timeout: Duration) -> Result<(), DemoError> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    match crds.create(&PostParams::default(), &NodeClaim::crd()).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.is_already_exists() => {}
        Err(e) => return Err(DemoError::Api("creating the NodeClaim CRD", e)),
    }
    let api: Api<NodeClaim> = Api::all(client.clone());
    wait_for(timeout, "the NodeClaim CRD to be served", || async {
        api.list(&ListParams::default().limit(1)).await.is_ok()
    })
    .await
}

/// A NodeClaim as a provisioner would create it: generateName `<nodepool>-`, an instance-type
/// requirement the kwok provider understands, a startup taint, a CPU request.
pub fn demo_nodeclaim(nodepool: &str) -> NodeClaim {
    let req = |key: &str, values: &[&str]| NodeSelectorRequirementWithMinValues {
        key: key.into(),
        operator: "In".into(),
        values: values.iter().map(|v| v.to_string()).collect(),
        min_values: None,
    };
    NodeClaim {
        metadata: ObjectMeta {
            generate_name: Some(format!("{nodepool}-")),
            labels: Some(BTreeMap::from([(
                NODEPOOL_LABEL.to_string(),
                nodepool.to_string(),
            )])),
            ..Default::default()
        },
        spec: NodeClaimSpec {
            startup_taints: vec![taint("example.com/agent-not-ready", None, "NoSchedule")],
            requirements: vec![
                req(
                    INSTANCE_TYPE_LABEL,
                    &["c-2x-amd64-linux", "s-2x-amd64-linux", "m-2x-amd64-linux"],
                ),
                req(CAPACITY_TYPE_LABEL, &["on-demand"]),
            ],
            resources: super::types::ResourceRequirements {
                requests: BTreeMap::from([("cpu".to_string(), Quantity("1".into()))]),
            },
            node_class_ref: Some(NodeClassReference {
                kind: "KWOKNodeClass".into(),
                name: "default".into(),
                api_version: String::new(),
            }),
            ..Default::default()
        },
        status: None,
    }
}

/// Run the demo on `client` (the in-process fake API server, or a cluster).
pub async fn run_demo(client: Client, options: DemoOptions) -> Result<DemoReport, DemoError> {
    install_crd(&client, options.timeout).await?;
    let provider = Arc::new(KwokCloudProvider::new(client.clone(), options.ids.clone()));
    let (stores, writers) = wiring::new_stores();
    let ctx = Arc::new(Context::new(
        client.clone(),
        stores,
        provider.clone(),
        options.clock.clone(),
        options.ids.clone(),
        Metrics::new(),
        Config::default(),
    ));
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let stop = shutdown::on(async move {
        let _ = stop_rx.await;
    });
    let running = wiring::spawn(ctx.clone(), writers, WiringOptions::default(), stop.clone());
    let kctx = Arc::new(KubeletContext::new(
        client.clone(),
        options.clock.clone(),
        Duration::from_millis(500),
    ));
    let standin = tokio::spawn(kubelet::run(kctx, Default::default(), stop.clone()));

    let result = demo_phases(&client, &options, provider.as_ref()).await;
    let _ = stop_tx.send(());
    running.shutdown().await;
    let _ = standin.await;
    result
}

async fn demo_phases(
    client: &Client,
    options: &DemoOptions,
    provider: &KwokCloudProvider,
) -> Result<DemoReport, DemoError> {
    let api: Api<NodeClaim> = Api::all(client.clone());
    let mut names = vec![];
    for _ in 0..options.count {
        let created = api
            .create(&PostParams::default(), &demo_nodeclaim("default"))
            .await
            .map_err(|e| DemoError::Api("creating a nodeclaim", e))?;
        tracing::info!(nodeclaim = %created.name_any(), "created nodeclaim");
        names.push(created.name_any());
    }
    let all_ready = || async {
        let mut ready = 0;
        for name in &names {
            if let Ok(nc) = api.get(name).await {
                ready += usize::from(nc.condition_is_true(READY));
            }
        }
        ready == names.len()
    };
    wait_for(
        options.timeout,
        "every NodeClaim to become Ready",
        all_ready,
    )
    .await?;
    let mut report = DemoReport::default();
    for name in &names {
        let nc = api
            .get(name)
            .await
            .map_err(|e| DemoError::Api("reading a nodeclaim", e))?;
        report.nodeclaims.push(DemoNodeClaim {
            name: name.clone(),
            node: nc
                .status
                .as_ref()
                .map(|s| s.node_name.clone())
                .unwrap_or_default(),
            instance_type: nc.label(INSTANCE_TYPE_LABEL).to_string(),
            provider_id: nc.provider_id().to_string(),
            ready: nc
                .condition(READY)
                .map(|c| c.status.clone())
                .unwrap_or_default(),
        });
    }
    if options.delete_after {
        for name in &names {
            match api.delete(name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.is_not_found() => {}
                Err(e) => return Err(DemoError::Api("deleting a nodeclaim", e)),
            }
        }
        let all_gone = || async {
            let mut left = 0;
            for name in &names {
                left += usize::from(api.get_opt(name).await.ok().flatten().is_some());
            }
            left == 0 && provider.instances().is_empty()
        };
        wait_for(
            options.timeout,
            "every NodeClaim, Node and instance to be gone",
            all_gone,
        )
        .await?;
    }
    report.instances_left = provider.instances().len();
    report.nodes_left = Api::<Node>::all(client.clone())
        .list(&ListParams::default())
        .await
        .map(|l| {
            l.items
                .iter()
                .filter(|n| super::kubelet::is_kwok_node(n))
                .count()
        })
        .unwrap_or(0);
    Ok(report)
}

async fn wait_for<F, Fut>(
    timeout: Duration,
    what: &'static str,
    mut check: F,
) -> Result<(), DemoError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if check().await {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(DemoError::Timeout(what));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
