//! Karpenter end to end with Nodes: termination's wait for the Nodes (spec §8.8) and the garbage
//! collection that holds the split-write duplicate (§6.3).
//!
//! Host `karpenter` runs `controllers::karpenter::wiring::spawn` with the minimal node
//! termination controller and the instance and NodeClaim garbage collectors, on the kwok-style
//! provider (it creates each instance's Node). The provider's instance registry is the world's
//! cloud: it outlives a crash of the process, whose next incarnation builds a new provider over
//! it. Actor `kubelet` is Karpenter's kubelet stand-in (Ready, startup taints removed), so a
//! NodeClaim goes all the way to Ready. Of two NodeClaims, a user deletes one at any time and the
//! other once it is Registered (its Node then has to be drained).
//!
//! Both guards live in the controller's code, so both are removed by test switches of its
//! config (`termination_skips_waiting_for_nodes`, `garbage_collection_disabled`).
//!
//! What garbage collection guarantees, precisely. Through crashes, "never two instances for one
//! NodeClaim" does NOT hold (`karpenter/crash-after-launch` shows a crash between the launch and
//! the recorded providerID leaves a second instance), and garbage collection does not make it
//! hold: it removes the extra instance later. What holds at every step, crashes included, is the
//! bounded version [`LEAK_BOUND`]: no instance that no NodeClaim owns lives longer than the
//! grace period (30s) plus the slowest interval (2m) plus slack for the launch's own window. What
//! holds only eventually (once faults stop) is the exact version: the cloud's instances are
//! exactly the NodeClaims' providerIDs, no Node lacks a NodeClaim, every NodeClaim is Ready or
//! gone.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use controllers::clock::SharedClock;
use controllers::karpenter::cloudprovider::kwok::{KwokCloudProvider, KWOK_PROVIDER_PREFIX};
use controllers::karpenter::cloudprovider::InstanceRegistry;
use controllers::karpenter::context::Config;
use controllers::karpenter::garbage_collection::instance;
use controllers::karpenter::kubelet::{self, KubeletContext};
use controllers::karpenter::metrics::Metrics;
use controllers::karpenter::types::{condition_types::REGISTERED, TERMINATION_FINALIZER};
use controllers::karpenter::wiring::{self, new_stores, WiringOptions};
use controllers::karpenter::{Context, NodeClaim};
use controllers::operator::shutdown;
use fake_apiserver::FakeApiServer;
use futures::future::BoxFuture;
use futures::FutureExt;
use jiff::SignedDuration;
use kube::api::{Api, DeleteParams, PostParams};

use crate::scenario::Scenario;
use crate::sim::Faults;
use crate::world::{HostEnv, World};

use super::karpenter::{nodeclaims, setup};

/// Longest an instance no NodeClaim owns may live while instance garbage collection runs: the
/// grace period, the slowest interval between passes, and 30s for the launch's own window
/// (Create to the recorded providerID) and held requests.
pub const LEAK_BOUND: SignedDuration = SignedDuration::from_secs(
    instance::GRACE_PERIOD.as_secs() + instance::INTERVAL.as_secs() as i64 + 30,
);

/// The kubelet stand-in's heartbeat in these worlds.
pub const HEARTBEAT: Duration = Duration::from_secs(10);

/// Which guards the world lets work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guards {
    /// Termination deletes the instance only once the NodeClaim's Nodes are gone.
    pub termination_waits_for_nodes: bool,
    /// Instance and NodeClaim garbage collection run.
    pub garbage_collection: bool,
}

impl Default for Guards {
    fn default() -> Self {
        Self {
            termination_waits_for_nodes: true,
            garbage_collection: true,
        }
    }
}

/// The world's cloud and clock, shared by the processes and the checks of one run.
#[derive(Clone, Default)]
pub struct Cloud {
    /// The cloud's instances (the kwok providers of every incarnation keep them here).
    pub instances: InstanceRegistry,
    clock: Arc<Mutex<Option<SharedClock>>>,
}

impl Cloud {
    /// Virtual time, once a process has started.
    pub fn now(&self) -> Option<jiff::Timestamp> {
        self.clock
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|c| c.now())
    }

    fn saw(&self, clock: &SharedClock) {
        self.clock
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(|| clock.clone());
    }
}

/// Builds the world: [`setup`] and a second NodeClaim, [`process`], [`kubelet`], the user's
/// deletes (`default-1` at any time, `default-2` once Registered), [`checks`].
pub fn world(world: &mut World, guards: Guards) {
    setup_two_nodeclaims(world);
    let cloud = Cloud::default();
    process(world, cloud.clone(), move |config| {
        config.termination_skips_waiting_for_nodes = !guards.termination_waits_for_nodes;
        config.garbage_collection_disabled = !guards.garbage_collection;
    });
    kubelet(world);
    users_delete(world);
    checks(world, &cloud);
}

/// Setup: Karpenter's ([`setup`]) and a second NodeClaim, `default-2`.
pub fn setup_two_nodeclaims(world: &mut World) {
    world.setup(|client| {
        async move {
            setup(client.clone()).await;
            let mut second = controllers::karpenter::demo::demo_nodeclaim("default");
            second.metadata.generate_name = None;
            second.metadata.name = Some("default-2".into());
            if let Err(e) = Api::<NodeClaim>::all(client)
                .create(&PostParams::default(), &second)
                .await
            {
                tracing::error!(error = %e, "creating the second NodeClaim");
            }
        }
        .boxed()
    });
}

/// The user's deletes: `default-1` at any time, `default-2` once Registered.
pub fn users_delete(world: &mut World) {
    world.deed("user deletes NodeClaim default-1", 1, |client| {
        async move {
            let _ = Api::<NodeClaim>::all(client)
                .delete("default-1", &DeleteParams::default())
                .await;
        }
        .boxed()
    });
    world.deed(
        "user deletes NodeClaim default-2 once it is Registered",
        1,
        |client| {
            async move {
                let api = Api::<NodeClaim>::all(client);
                for _ in 0..60 {
                    if let Ok(nc) = api.get("default-2").await {
                        if nc.condition_is_true(REGISTERED) {
                            break;
                        }
                    }
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
                let _ = api.delete("default-2", &DeleteParams::default()).await;
            }
            .boxed()
        },
    );
}

/// Host `karpenter`: `wiring::spawn` with node termination (and garbage collection, unless the
/// configuration says otherwise) over a kwok provider on `cloud`'s instances and virtual time.
pub fn process(
    world: &mut World,
    cloud: Cloud,
    configure: impl Fn(&mut Config) + Send + Sync + 'static,
) {
    world.host("karpenter", move |env| {
        let mut config = Config::default();
        configure(&mut config);
        controllers(env, &cloud, config)
    });
}

/// Production's Karpenter wiring (`wiring::spawn`) with node termination, over a kwok provider
/// on `cloud`'s instances and virtual time, with `config`, in `env`.
pub fn controllers(env: HostEnv, cloud: &Cloud, config: Config) -> BoxFuture<'static, ()> {
    {
        cloud.saw(&env.clock);
        let provider = KwokCloudProvider::new(env.client.clone(), env.ids.clone())
            .with_clock(env.clock.clone())
            .with_instances(cloud.instances.clone());
        let (stores, writers) = new_stores();
        let ctx = Arc::new(Context::new(
            env.client,
            stores,
            Arc::new(provider),
            env.clock,
            env.ids,
            Metrics::new(),
            config,
        ));
        let options = WiringOptions {
            node_termination: true,
            ..WiringOptions::default()
        };
        async move {
            let running = wiring::spawn(ctx, writers, options, shutdown::never());
            // The process lives as long as this task; a crash drops (and so aborts) it.
            futures::future::pending::<()>().await;
            drop(running);
        }
        .boxed()
    }
}

/// Actor `kwok-kubelet`: Karpenter's kubelet stand-in (`controllers::karpenter::kubelet::run`).
pub fn kubelet(world: &mut World) {
    world.actor("kwok-kubelet", |env| {
        let ctx = Arc::new(KubeletContext::new(env.client, env.clock, HEARTBEAT));
        kubelet::run(ctx, Default::default(), shutdown::never()).boxed()
    });
}

/// The invariants and goals of these worlds.
pub fn checks(world: &mut World, cloud: &Cloud) {
    let c = cloud.clone();
    world.invariant("instance deleted only after its Nodes", move |server| {
        instance_deleted_only_after_its_nodes(server, &c.instances)
    });
    let c = cloud.clone();
    world.invariant(
        "a leaked instance is collected within 30s grace + 2m interval (+30s)",
        move |server| leaks_are_bounded(server, &c),
    );
    let c = cloud.clone();
    world.eventually("no leaked instance once quiet", move |server| {
        instances_are_the_nodeclaims(server, &c.instances)
    });
    world.eventually("no Node without a NodeClaim once quiet", every_node_owned);
    world.eventually("every NodeClaim Ready or gone", ready_or_gone);
}

/// The kwok Nodes on the server.
pub fn kwok_nodes(server: &FakeApiServer) -> Vec<serde_json::Value> {
    server
        .list_objects("v1", "nodes", None)
        .1
        .into_iter()
        .filter(|n| {
            n["spec"]["providerID"]
                .as_str()
                .is_some_and(|p| p.starts_with(KWOK_PROVIDER_PREFIX))
        })
        .collect()
}

fn name(o: &serde_json::Value) -> &str {
    o["metadata"]["name"].as_str().unwrap_or_default()
}

fn provider_ids(server: &FakeApiServer) -> BTreeSet<String> {
    nodeclaims(server)
        .iter()
        .filter_map(|nc| nc["status"]["providerID"].as_str())
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect()
}

/// Spec §8.8: while a NodeClaim still exists (termination has not dropped its finalizer), its
/// instance is gone only once its registered Nodes are: a Node that still carries
/// `karpenter.sh/termination` (upstream: not yet drained) keeps its instance.
///
/// Two deletions are outside this guard, and so outside the check: instance garbage collection's
/// (the providerID is on no NodeClaim; upstream deletes such an instance before its Node), and a
/// Node not yet registered (no finalizer: nothing for Karpenter to drain; termination's wait
/// reads the Node cache, which may not show a Node created a moment ago, and the kwok provider's
/// delete removes that Node itself).
pub fn instance_deleted_only_after_its_nodes(
    server: &FakeApiServer,
    instances: &InstanceRegistry,
) -> Result<(), String> {
    // The Nodes are read only when some NodeClaim's instance is gone (most checks: none is).
    let mut nodes: Option<Vec<serde_json::Value>> = None;
    for nc in nodeclaims(server) {
        let provider_id = nc["status"]["providerID"].as_str().unwrap_or_default();
        if provider_id.is_empty() || instances.get(provider_id).is_some() {
            continue;
        }
        let nodes = nodes.get_or_insert_with(|| kwok_nodes(server));
        let draining = nodes.iter().find(|n| {
            n["spec"]["providerID"].as_str() == Some(provider_id)
                && n["metadata"]["finalizers"]
                    .as_array()
                    .is_some_and(|f| f.iter().any(|x| x == TERMINATION_FINALIZER))
        });
        if let Some(node) = draining {
            return Err(format!(
                "NodeClaim {}'s instance {provider_id} is gone but its Node {} still carries {TERMINATION_FINALIZER} (not drained)",
                name(&nc),
                name(node),
            ));
        }
    }
    Ok(())
}

/// No instance that no NodeClaim owns is older than [`LEAK_BOUND`].
pub fn leaks_are_bounded(server: &FakeApiServer, cloud: &Cloud) -> Result<(), String> {
    let Some(now) = cloud.now() else {
        return Ok(());
    };
    let owned = provider_ids(server);
    for instance in cloud.instances.list() {
        if owned.contains(instance.provider_id()) {
            continue;
        }
        let Some(created) = instance.metadata.creation_timestamp.as_ref() else {
            continue;
        };
        let age = now.duration_since(created.0);
        if age > LEAK_BOUND {
            return Err(format!(
                "instance {} (launched for NodeClaim {}) has had no NodeClaim for {:#}",
                instance.provider_id(),
                instance.metadata.name.as_deref().unwrap_or_default(),
                age
            ));
        }
    }
    Ok(())
}

/// The cloud's instances are exactly the NodeClaims' providerIDs.
pub fn instances_are_the_nodeclaims(
    server: &FakeApiServer,
    instances: &InstanceRegistry,
) -> Result<(), String> {
    let owned = provider_ids(server);
    let live: BTreeSet<String> = instances
        .list()
        .iter()
        .map(|i| i.provider_id().to_string())
        .collect();
    if owned != live {
        return Err(format!(
            "cloud instances {live:?}, NodeClaims' providerIDs {owned:?}"
        ));
    }
    Ok(())
}

/// Every kwok Node's providerID is some NodeClaim's.
pub fn every_node_owned(server: &FakeApiServer) -> Result<(), String> {
    let owned = provider_ids(server);
    for node in kwok_nodes(server) {
        if !owned.contains(node["spec"]["providerID"].as_str().unwrap_or_default()) {
            return Err(format!("Node {} has no NodeClaim", name(&node)));
        }
    }
    Ok(())
}

/// Every NodeClaim has `Ready=True`, or is gone.
pub fn ready_or_gone(server: &FakeApiServer) -> Result<(), String> {
    for nc in nodeclaims(server) {
        let ready = nc["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        if !ready {
            return Err(format!("NodeClaim {} is not Ready", name(&nc)));
        }
    }
    Ok(())
}

/// The scenarios of this module.
pub fn scenarios() -> Vec<Scenario> {
    // No request faults: they are decided by a coin flip per request, which the shrinker lowers
    // one by one (hundreds of replays per flip); crashes and cut or expired watches are steps.
    let faults = Faults {
        crashes: true,
        watch_cuts: true,
        expired_watches: true,
        budget: 4,
        ..Faults::none()
    };
    let crashes = Faults {
        crashes: true,
        budget: 3,
        ..Faults::none()
    };
    let f = faults.clone();
    let c = crashes.clone();
    vec![
        Scenario::new(
            "karpenter/termination-waits-for-nodes",
            "spec §8.8: termination deletes the instance only once the NodeClaim's Nodes are gone",
            |w| world(w, Guards::default()),
        )
        .configure(move |cfg| {
            cfg.faults = f;
            cfg.steps = 120;
        }),
        Scenario::new(
            "karpenter/without-termination-waits-for-nodes",
            "termination deletes the instance right after asking for the Nodes' deletion: a Node still draining loses its instance",
            |w| {
                world(
                    w,
                    Guards {
                        termination_waits_for_nodes: false,
                        ..Guards::default()
                    },
                )
            },
        )
        .configure(move |cfg| {
            cfg.faults = faults;
            cfg.steps = 120;
        }),
        Scenario::new(
            "karpenter/garbage-collection",
            "spec §6.3 held: the instance a crash after the launch leaks is collected; once quiet, instances are exactly the NodeClaims'",
            |w| world(w, Guards::default()),
        )
        .configure(move |cfg| {
            cfg.faults = c;
            cfg.steps = 100;
        }),
        Scenario::new(
            "karpenter/without-garbage-collection",
            "garbage collection off: the instance a crash after the launch leaks is never collected",
            |w| {
                world(
                    w,
                    Guards {
                        garbage_collection: false,
                        ..Guards::default()
                    },
                )
            },
        )
        .configure(move |cfg| {
            cfg.faults = crashes;
            cfg.steps = 100;
        }),
    ]
}
