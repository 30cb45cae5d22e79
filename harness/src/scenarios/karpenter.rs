//! Karpenter's NodeClaim lifecycle under the harness, through its production wiring only.
//!
//! Host `karpenter` runs `controllers::karpenter::wiring::spawn` — the watches, the dispatcher,
//! the lifecycle and termination controllers — as the `controllers karpenter` binary does, with
//! the fake cloud provider. The cloud is the world's: it outlives a crash of the process.
//!
//! The launch cache (spec §4.1, §8.2) is removed by a test switch of the controller's own config
//! (a zero TTL: every lookup misses), the only honest way, since the cache is the process's
//! memory. Then a status patch that fails after the launch (any injected 409/429/500 or a
//! timeout) makes the next reconcile launch a second instance.

use std::sync::Arc;

use controllers::karpenter::cloudprovider::fake::FakeCloudProvider;
use controllers::karpenter::context::Config;
use controllers::karpenter::metrics::Metrics;
use controllers::karpenter::wiring::{self, new_stores, WiringOptions};
use controllers::karpenter::{Context, NodeClaim};
use controllers::operator::shutdown;
use fake_apiserver::FakeApiServer;
use futures::FutureExt;
use jiff::SignedDuration;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube::CustomResourceExt;

use crate::scenario::Scenario;
use crate::sim::Faults;
use crate::world::World;

/// Builds Karpenter's world; `launch_cache` false gives the launch cache a zero TTL.
pub fn world(world: &mut World, launch_cache: bool) {
    world.setup(|client| setup(client).boxed());
    let cloud = cloud();
    process(world, cloud.clone(), move |config| {
        if !launch_cache {
            config.launch_cache_ttl = SignedDuration::ZERO;
        }
    });
    world.invariant("one instance per NodeClaim", move |server| {
        no_leaked_instance(server, &cloud)
    });
    world.eventually("NodeClaim launched", launched);
}

/// The world's cloud: it outlives any crash of the controller process.
pub fn cloud() -> Arc<FakeCloudProvider> {
    Arc::new(FakeCloudProvider::new(Arc::new(
        controllers::ids::SeededIds::new(0),
    )))
}

/// Host `karpenter`: `wiring::spawn` (lifecycle and termination controllers) on `cloud`, with
/// the default configuration changed by `configure` (where a scenario sets a test switch).
pub fn process(
    world: &mut World,
    cloud: Arc<FakeCloudProvider>,
    configure: impl Fn(&mut Config) + Send + Sync + 'static,
) {
    world.host("karpenter", move |env| {
        let mut config = Config::default();
        configure(&mut config);
        let (stores, writers) = new_stores();
        let ctx = Arc::new(Context::new(
            env.client,
            stores,
            cloud.clone(),
            env.clock,
            env.ids,
            Metrics::new(),
            config,
        ));
        let options = WiringOptions {
            node_termination: false,
            ..WiringOptions::default()
        };
        async move {
            let running = wiring::spawn(ctx, writers, options, shutdown::never());
            // The process lives as long as this task; a crash drops (and so aborts) it.
            futures::future::pending::<()>().await;
            drop(running);
        }
        .boxed()
    });
}

/// The scenarios of this module.
pub fn scenarios() -> Vec<Scenario> {
    let request_faults = Faults {
        request_permille: 150,
        budget: 3,
        ..Faults::none()
    };
    vec![
        Scenario::new(
            "karpenter/launch-cache",
            "a launch whose status patch failed is remembered by UID: no second instance",
            |w| world(w, true),
        )
        .configure(|c| {
            c.faults = request_faults.clone();
            c.steps = 80;
        }),
        Scenario::new(
            "karpenter/without-launch-cache",
            "the launch cache off: a failed status patch after a launch leaks an instance",
            |w| world(w, false),
        )
        .configure(|c| {
            c.faults = request_faults.clone();
            c.steps = 80;
        }),
        Scenario::new(
            "karpenter/crash-after-launch",
            "spec §6.3, kept as upstream has it: a crash between the launch and the recorded status leaks an instance",
            |w| world(w, true),
        )
        .expecting_failure()
        .configure(|c| {
            c.faults = Faults {
                crashes: true,
                ..request_faults.clone()
            };
            c.steps = 80;
        }),
    ]
}

pub async fn setup(client: kube::Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    static CRD: std::sync::OnceLock<CustomResourceDefinition> = std::sync::OnceLock::new();
    if let Err(e) = crds
        .create(&PostParams::default(), CRD.get_or_init(NodeClaim::crd))
        .await
    {
        tracing::error!(error = %e, "the fake API server refused the NodeClaim CRD");
    }
    let mut nodeclaim = controllers::karpenter::demo::demo_nodeclaim("default");
    nodeclaim.metadata.generate_name = None;
    nodeclaim.metadata.name = Some("default-1".into());
    if let Err(e) = Api::<NodeClaim>::all(client)
        .create(&PostParams::default(), &nodeclaim)
        .await
    {
        tracing::error!(error = %e, "creating the NodeClaim");
    }
}

pub fn nodeclaims(server: &FakeApiServer) -> Vec<serde_json::Value> {
    server
        .list_objects("karpenter.sh/v1beta1", "nodeclaims", None)
        .1
}

/// Never more cloud instances than NodeClaims.
pub fn no_leaked_instance(server: &FakeApiServer, cloud: &FakeCloudProvider) -> Result<(), String> {
    let instances = cloud.instances().len();
    let claims = nodeclaims(server).len();
    if instances > claims {
        return Err(format!(
            "{instances} cloud instances for {claims} NodeClaim(s): an instance leaked"
        ));
    }
    Ok(())
}

/// The goal: every NodeClaim has `Launched=True` recorded.
pub fn launched(server: &FakeApiServer) -> Result<(), String> {
    for nc in nodeclaims(server) {
        let launched = nc["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Launched" && c["status"] == "True");
        if !launched {
            return Err(format!(
                "NodeClaim {} has no Launched=True",
                nc["metadata"]["name"].as_str().unwrap_or_default()
            ));
        }
    }
    Ok(())
}
