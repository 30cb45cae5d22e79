//! Two replicas of each controller under leader election (`controllers::operator::leader`, the
//! elector the `controllers` binary runs), and the leader cut off from its Lease mid-work.
//!
//! Hosts `<controller>-a` and `<controller>-b` each run production's wiring inside
//! `LeaderElector::run_as_leader`, with client-go's timings (15s lease, 10s renew deadline, 2s
//! retry); a replica that loses leadership starts over as a candidate, as the restarted
//! container of a real Deployment would. At some point a deed cuts whichever replica holds the
//! Lease off from it: every Lease request of that host is answered 500 from then on (its other
//! requests still pass, so it keeps working until it notices). Crashes and request faults are on.
//!
//! Invariants: the controller's own ("nothing is done twice": one live synthesizer pod per
//! generation; one instance per NodeClaim) and the Lease's: a held lease is never taken over
//! before it expired. Goals: the controller's, and the cut-off leader replaced.
//!
//! - `eno/leader-election`, `karpenter/leader-election`: the elector as production runs it.
//! - `eno/without-leader-election-deadline`: the elector's test switch
//!   `LeaderElectionConfig::unbounded_renewals` — a renewal attempt is not bounded by the renew
//!   deadline, so a leader whose renewal hangs keeps acting after its lease expired and the
//!   other replica took over: two leaders at once.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use controllers::eno::context::Config as EnoConfig;
use controllers::karpenter::context::Config as KarpenterConfig;
use controllers::karpenter::NodeClaim;
use controllers::operator::leader::{LeaderElectionConfig, LeaderElector};
use controllers::operator::shutdown;
use fake_apiserver::FakeApiServer;
use futures::future::BoxFuture;
use futures::FutureExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

use super::{eno, karpenter_gc};
use crate::net::{Interceptor, Views};
use crate::scenario::Scenario;
use crate::sim::Faults;
use crate::world::{HostEnv, World};

/// Whose Lease requests are cut off (a host name), once the deed has happened.
type CutOff = Arc<Mutex<Option<String>>>;

/// A Lease: where it is and how the elector runs.
#[derive(Debug, Clone, Copy)]
struct LeaseSpec {
    name: &'static str,
    namespace: &'static str,
    unbounded_renewals: bool,
}

/// Runs `work` on `env` while leading `lease`, and becomes a candidate again whenever
/// leadership is lost (production's process exits and is restarted).
fn leader_elected(
    world: &mut World,
    host: &str,
    lease: LeaseSpec,
    work: impl Fn(HostEnv) -> BoxFuture<'static, ()> + Send + Sync + 'static,
) {
    let work = Arc::new(work);
    world.host(host, move |env| {
        let work = work.clone();
        async move {
            loop {
                let mut config = LeaderElectionConfig::new(
                    lease.name,
                    lease.namespace,
                    &format!("{}_{}", env.name, env.incarnation),
                );
                config.unbounded_renewals = lease.unbounded_renewals;
                let elector = LeaderElector::new(env.client.clone(), config, env.clock.clone());
                let outcome = elector
                    .run_as_leader(shutdown::never(), work(env.clone()))
                    .await;
                if outcome.is_ok() {
                    return;
                }
            }
        }
        .boxed()
    });
}

/// The deed: once a lease is held and `working` says the work is under way, whoever holds
/// the lease is cut off from it for the rest of the run.
fn cut_off_the_leader(
    world: &mut World,
    lease: LeaseSpec,
    cut_off: &CutOff,
    working: fn(kube::Client) -> BoxFuture<'static, bool>,
) {
    let cut_off = cut_off.clone();
    world.deed("the leader is cut off from its Lease", 1, move |client| {
        let cut_off = cut_off.clone();
        async move {
            let leases: Api<Lease> = Api::namespaced(client.clone(), lease.namespace);
            for _ in 0..120 {
                let busy = working(client.clone()).await;
                let holder = leases
                    .get(lease.name)
                    .await
                    .ok()
                    .and_then(|l| l.spec?.holder_identity);
                if let (true, Some(holder)) = (busy, holder) {
                    let host = holder.split('_').next().unwrap_or_default().to_string();
                    *cut_off.lock().unwrap_or_else(|e| e.into_inner()) = Some(host);
                    return;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        .boxed()
    });
}

/// Loses every Lease request of the cut-off host: they hang, as across a network partition.
struct DropLeaseRequests(CutOff);

impl Interceptor for DropLeaseRequests {
    fn intercept(
        &self,
        _host: &str,
        _method: &str,
        _target: &str,
        _body: &mut Bytes,
        _views: &Views,
        _server: &FakeApiServer,
    ) -> Option<http::Response<Body>> {
        None
    }

    fn partitioned(&self, host: &str, target: &str) -> bool {
        let cut = self.0.lock().unwrap_or_else(|e| e.into_inner());
        cut.as_deref() == Some(host) && target.contains("/leases")
    }
}

/// The Lease as the server has it: holder, acquire and renew times, duration.
fn lease_state(server: &FakeApiServer, lease: LeaseSpec) -> Option<(String, i64, i64, i64)> {
    let object = server.get_object(
        "coordination.k8s.io/v1",
        "leases",
        Some(lease.namespace),
        lease.name,
    )?;
    let spec = object.get("spec")?;
    let time = |field: &str| {
        spec.get(field)
            .and_then(|t| t.as_str())
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map(|t| t.as_millisecond())
            .unwrap_or(0)
    };
    Some((
        spec.get("holderIdentity")
            .and_then(|h| h.as_str())
            .unwrap_or_default()
            .to_string(),
        time("acquireTime"),
        time("renewTime"),
        spec.get("leaseDurationSeconds")
            .and_then(|d| d.as_i64())
            .unwrap_or(0)
            * 1000,
    ))
}

/// Invariant: a held lease changes hands only once it expired (renewed + duration), and the
/// goal that the cut-off replica no longer holds it.
fn lease_checks(world: &mut World, lease: LeaseSpec, cut_off: &CutOff) {
    let last = RefCell::new(None::<(String, i64, i64, i64)>);
    world.server_invariant(
        "a held lease is taken over only once expired",
        move |server| {
            let Some(now) = lease_state(server, lease) else {
                return Ok(());
            };
            let mut last = last.borrow_mut();
            if let Some((holder, _, renewed, duration)) = last.as_ref() {
                let (new_holder, acquired, _, _) = &now;
                if !holder.is_empty()
                    && !new_holder.is_empty()
                    && new_holder != holder
                    && *acquired < renewed + duration
                {
                    return Err(format!(
                    "{new_holder} took the lease at {acquired}ms, {}ms before {holder}'s expired",
                    renewed + duration - acquired
                ));
                }
            }
            *last = Some(now);
            Ok(())
        },
    );
    let cut_off = cut_off.clone();
    world.eventually("the cut-off leader is replaced", move |server| {
        let cut = cut_off.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let holder = lease_state(server, lease).map(|l| l.0).unwrap_or_default();
        match cut {
            Some(host) if holder.starts_with(&format!("{host}_")) => {
                Err(format!("{holder} still holds the lease"))
            }
            _ => Ok(()),
        }
    });
}

const ENO_LEASE: LeaseSpec = LeaseSpec {
    name: "eno-controller-lease",
    namespace: eno::POD_NAMESPACE,
    unbounded_renewals: false,
};

const KARPENTER_LEASE: LeaseSpec = LeaseSpec {
    name: "karpenter-leader-election",
    namespace: "kube-system",
    unbounded_renewals: false,
};

/// Eno's world with two leader-elected replicas.
fn eno_world(world: &mut World, lease: LeaseSpec) {
    let cut_off = CutOff::default();
    world.setup(|client| eno::setup(client).boxed());
    for host in ["eno-a", "eno-b"] {
        leader_elected(world, host, lease, |env| {
            eno::controllers(
                env,
                EnoConfig::new(eno::POD_NAMESPACE, "controllers:harness"),
            )
        });
    }
    eno::kubelet(world);
    eno::user_changes_spec(world, 3);
    cut_off_the_leader(world, lease, &cut_off, |client| {
        async move {
            let pods: Api<Pod> = Api::namespaced(client, eno::POD_NAMESPACE);
            pods.list(&Default::default())
                .await
                .is_ok_and(|l| !l.items.is_empty())
        }
        .boxed()
    });
    eno::checks(world);
    world.eventually("composition synthesized", eno::composition_synthesized);
    lease_checks(world, lease, &cut_off);
    world.intercept(Arc::new(DropLeaseRequests(cut_off)));
}

/// Karpenter's world (`karpenter_gc`'s) with two leader-elected replicas.
fn karpenter_world(world: &mut World, lease: LeaseSpec) {
    let cut_off = CutOff::default();
    let cloud = karpenter_gc::Cloud::default();
    karpenter_gc::setup_two_nodeclaims(world);
    for host in ["karpenter-a", "karpenter-b"] {
        let cloud = cloud.clone();
        leader_elected(world, host, lease, move |env| {
            karpenter_gc::controllers(env, &cloud, KarpenterConfig::default())
        });
    }
    karpenter_gc::kubelet(world);
    karpenter_gc::users_delete(world);
    cut_off_the_leader(world, lease, &cut_off, |client| {
        async move {
            let nodeclaims: Api<NodeClaim> = Api::all(client);
            nodeclaims.list(&Default::default()).await.is_ok_and(|l| {
                l.items.iter().any(|nc| {
                    nc.status
                        .as_ref()
                        .is_some_and(|s| !s.provider_id.is_empty())
                })
            })
        }
        .boxed()
    });
    karpenter_gc::checks(world, &cloud);
    lease_checks(world, lease, &cut_off);
    world.intercept(Arc::new(DropLeaseRequests(cut_off)));
}

fn configure(c: &mut crate::sim::Config) {
    c.faults = Faults::all(3);
    c.steps = 250;
}

/// The scenarios of this module.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "eno/leader-election",
            "two Eno replicas, the leader cut off from its Lease mid-work: the other takes over once it expired, nothing is done twice",
            |w| eno_world(w, ENO_LEASE),
        )
        .configure(configure),
        Scenario::new(
            "eno/without-leader-election-deadline",
            "renewals not bounded by the renew deadline: a leader whose renewal hangs acts on after the other took over",
            |w| {
                eno_world(
                    w,
                    LeaseSpec {
                        unbounded_renewals: true,
                        ..ENO_LEASE
                    },
                )
            },
        )
        // Both leaders must create a pod for the same generation inside the overlap: PCT's
        // shape finds it within ~50 seeds, a uniform walk within ~250.
        .configure(|c| {
            configure(c);
            c.strategy = crate::strategy::Strategy::Pct { depth: 3 };
        }),
        Scenario::new(
            "karpenter/leader-election",
            "two Karpenter replicas, the leader cut off from its Lease mid-work: the other takes over once it expired, no instance twice",
            |w| karpenter_world(w, KARPENTER_LEASE),
        )
        .configure(configure),
    ]
}
