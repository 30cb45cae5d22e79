//! kube-controller-manager's garbage collector and namespace controller as actors of the race
//! harness: every piece of work either does (one `attemptToDeleteItem`, one namespace sync) is a
//! step the schedule takes, so the seed decides when dependents go relative to everything else.
//! They are the fake server's own controllers ([`fake_apiserver::controllers`]), the same code
//! that runs inline beside a standalone server, driven one item at a time
//! ([`crate::world::World::kube_controller_manager`]).
//!
//! The world, in namespace `app` (all ConfigMaps):
//! - `owner`; `blocking` (owned by `owner`, `blockOwnerDeletion`, with its own finalizer
//!   `example.com/hold`); `grandchild` (owned by `blocking`, blocking); `loose` (owned by
//!   `owner`, not blocking); `shared` (owned by `owner` and by `other`, which stays);
//! - actor `replicator`, a controller that makes up to two more dependents of `owner`
//!   (`child-N`, blocking) while it reads `owner` as not being deleted — from a read that may be
//!   stale by the time its create lands, so a child may name an owner that is already gone;
//! - actor `releaser`, the owner of `example.com/hold`, which removes it from a ConfigMap being
//!   deleted (polling every second);
//! - a user who deletes `owner` once with the scenario's propagation policy, whenever the
//!   schedule says, and once `owner` is gone deletes namespace `app`.
//!
//! Invariants: a foreground-deleted owner outlives the blocking dependents it had
//! (`foregroundDeletion`); an orphaned dependent is not collected and loses its reference
//! (`orphan`); a dependent with another live owner is never collected; a namespace goes only once
//! it is empty. Goals: every dependent whose owners are all gone is collected, nothing stays
//! deleting, and a deleted namespace goes.
//!
//! A namespace deletion deletes its content with background propagation, which drops an owner's
//! `foregroundDeletion` and `orphan` finalizers (as the real namespace controller's
//! `deleteCollection` does): the policy invariants apply while the namespace is not terminating
//! (the user deletes it only once `owner` is gone, so they apply to the whole of its deletion).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::time::Duration;

use fake_apiserver::controllers::Controller;
use fake_apiserver::FakeApiServer;
use futures::FutureExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::ResourceExt;
use serde_json::{json, Value};

use super::{eno, eno_lifecycle};
use crate::scenario::Scenario;
use crate::world::World;

/// The namespace of the world.
pub const NAMESPACE: &str = "app";

/// The finalizer actor `releaser` owns.
pub const HOLD: &str = "example.com/hold";

/// How many dependents actor `replicator` makes at most.
const CHILDREN: usize = 2;

/// How the user deletes `owner`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `propagationPolicy=Foreground`.
    Foreground,
    /// `propagationPolicy=Background`.
    Background,
    /// `propagationPolicy=Orphan`.
    Orphan,
}

impl Policy {
    fn kube(self) -> PropagationPolicy {
        match self {
            Policy::Foreground => PropagationPolicy::Foreground,
            Policy::Background => PropagationPolicy::Background,
            Policy::Orphan => PropagationPolicy::Orphan,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Policy::Foreground => "foreground",
            Policy::Background => "background",
            Policy::Orphan => "orphan",
        }
    }
}

fn owner_ref(owner: &ConfigMap, block: bool) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap", "name": owner.name_any(),
        "uid": owner.uid().unwrap_or_default(), "blockOwnerDeletion": block,
    })
}

async fn create_cm(api: &Api<ConfigMap>, body: Value) -> Option<ConfigMap> {
    let cm: ConfigMap = serde_json::from_value(body).ok()?;
    api.create(&PostParams::default(), &cm).await.ok()
}

/// The objects of the world, straight against the server.
async fn setup(client: kube::Client) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = json!({"metadata": {"name": NAMESPACE}});
    if let Ok(ns) = serde_json::from_value::<Namespace>(ns) {
        let _ = namespaces.create(&PostParams::default(), &ns).await;
    }
    let api: Api<ConfigMap> = Api::namespaced(client, NAMESPACE);
    let Some(owner) = create_cm(&api, json!({"metadata": {"name": "owner"}})).await else {
        return;
    };
    let Some(other) = create_cm(&api, json!({"metadata": {"name": "other"}})).await else {
        return;
    };
    let blocking = create_cm(
        &api,
        json!({"metadata": {"name": "blocking", "finalizers": [HOLD],
            "ownerReferences": [owner_ref(&owner, true)]}}),
    )
    .await;
    if let Some(blocking) = blocking {
        create_cm(
            &api,
            json!({"metadata": {"name": "grandchild",
                "ownerReferences": [owner_ref(&blocking, true)]}}),
        )
        .await;
    }
    create_cm(
        &api,
        json!({"metadata": {"name": "loose", "ownerReferences": [owner_ref(&owner, false)]}}),
    )
    .await;
    create_cm(
        &api,
        json!({"metadata": {"name": "shared",
            "ownerReferences": [owner_ref(&owner, true), owner_ref(&other, false)]}}),
    )
    .await;
}

/// Actor `replicator`: a controller that keeps making dependents of `owner` (up to
/// [`CHILDREN`]) while its read says `owner` is not being deleted.
fn replicator(world: &mut World) {
    world.actor("replicator", |env| {
        async move {
            let api: Api<ConfigMap> = Api::namespaced(env.client, NAMESPACE);
            let mut made = 0;
            while made < CHILDREN {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let owner = match api.get_opt("owner").await {
                    Ok(Some(owner)) => owner,
                    Ok(None) => return,
                    Err(_) => continue,
                };
                if owner.metadata.deletion_timestamp.is_some() {
                    return;
                }
                let child = json!({"metadata": {"name": format!("child-{made}"),
                    "ownerReferences": [owner_ref(&owner, true)]}});
                let Ok(child) = serde_json::from_value::<ConfigMap>(child) else {
                    return;
                };
                match api.create(&PostParams::default(), &child).await {
                    Ok(_) => made += 1,
                    Err(kube::Error::Api(e)) if e.code == 409 => made += 1,
                    // A terminating namespace refuses new content for good.
                    Err(kube::Error::Api(e)) if e.code == 403 => return,
                    Err(_) => {}
                }
            }
        }
        .boxed()
    });
}

/// Actor `releaser`: removes [`HOLD`] from every ConfigMap being deleted.
fn releaser(world: &mut World) {
    world.actor("releaser", |env| {
        async move {
            let api: Api<ConfigMap> = Api::namespaced(env.client, NAMESPACE);
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let Ok(list) = api.list(&Default::default()).await else {
                    continue;
                };
                if list.items.is_empty() {
                    // The namespace has gone (or is going) empty: nothing will need releasing.
                    return;
                }
                for cm in list.items {
                    if cm.metadata.deletion_timestamp.is_none()
                        || !cm.finalizers().iter().any(|f| f == HOLD)
                    {
                        continue;
                    }
                    let rest: Vec<&String> =
                        cm.finalizers().iter().filter(|f| *f != HOLD).collect();
                    let patch = json!({"metadata": {"finalizers": rest,
                        "resourceVersion": cm.resource_version()}});
                    let _ = api
                        .patch(
                            &cm.name_any(),
                            &PatchParams::default(),
                            &Patch::Merge(&patch),
                        )
                        .await;
                }
            }
        }
        .boxed()
    });
}

/// The user's two deletions.
fn user(world: &mut World, policy: Policy) {
    world.deed(
        &format!("user deletes owner ({})", policy.name()),
        1,
        move |client| {
            async move {
                let api: Api<ConfigMap> = Api::namespaced(client, NAMESPACE);
                let params = DeleteParams {
                    propagation_policy: Some(policy.kube()),
                    ..DeleteParams::default()
                };
                let _ = api.delete("owner", &params).await;
            }
            .boxed()
        },
    );
    world.deed(
        "user deletes namespace app once owner is gone",
        1,
        |client| {
            async move {
                let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
                while !matches!(configmaps.get_opt("owner").await, Ok(None)) {
                    tokio::time::sleep(Duration::from_secs(2)).await;
                }
                let api: Api<Namespace> = Api::all(client);
                let _ = api.delete(NAMESPACE, &DeleteParams::default()).await;
            }
            .boxed()
        },
    );
}

fn configmaps(server: &FakeApiServer) -> Vec<Value> {
    server.list_objects("v1", "configmaps", Some(NAMESPACE)).1
}

fn uid(object: &Value) -> &str {
    object["metadata"]["uid"].as_str().unwrap_or_default()
}

fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn deleting(object: &Value) -> bool {
    object["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

fn has_finalizer(object: &Value, finalizer: &str) -> bool {
    object["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|x| x == finalizer))
}

/// `(uid, blockOwnerDeletion)` of each owner reference.
fn owners(object: &Value) -> Vec<(String, bool)> {
    object["metadata"]["ownerReferences"]
        .as_array()
        .map(|refs| {
            refs.iter()
                .map(|r| {
                    (
                        r["uid"].as_str().unwrap_or_default().to_string(),
                        r["blockOwnerDeletion"] == json!(true),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn namespace_terminating(server: &FakeApiServer) -> bool {
    server
        .get_object("v1", "namespaces", None, NAMESPACE)
        .is_none_or(|ns| deleting(&ns))
}

/// What the policy invariants remember between two checks: the owner's uid and the dependents
/// it had while its deletion with the policy's finalizer was under way.
#[derive(Default)]
struct Watched {
    owner_uid: String,
    dependents: BTreeSet<String>,
}

/// Where an object is: `(apiVersion, plural, namespace, name)`.
pub type At = (&'static str, &'static str, &'static str, &'static str);

/// The `foregroundDeletion` guarantee for the owner at `owner`: once it is gone, none of the
/// blocking dependents it was waiting for (objects of the `dependents` resources, as
/// `(apiVersion, plural)`, in its namespace) is left. Checked after every step that changed the
/// server, it remembers what it saw between two checks.
pub fn foreground_owner_outlives_blocking_dependents(
    owner: At,
    dependents: &'static [(&'static str, &'static str)],
) -> impl Fn(&FakeApiServer) -> Result<(), String> {
    let seen = RefCell::new(Watched::default());
    move |server| {
        let (api_version, plural, namespace, owner_name) = owner;
        let deps: Vec<Value> = dependents
            .iter()
            .flat_map(|(v, p)| server.list_objects(v, p, Some(namespace)).1)
            .collect();
        let mut seen = seen.borrow_mut();
        match server.get_object(api_version, plural, Some(namespace), owner_name) {
            Some(owner) if deleting(&owner) && has_finalizer(&owner, "foregroundDeletion") => {
                seen.owner_uid = uid(&owner).to_string();
                seen.dependents = deps
                    .iter()
                    .filter(|c| {
                        owners(c)
                            .iter()
                            .any(|(u, block)| *block && u == &seen.owner_uid)
                    })
                    .map(|c| uid(c).to_string())
                    .collect();
                Ok(())
            }
            Some(_) => Ok(()),
            None => {
                let left: Vec<&str> = deps
                    .iter()
                    .filter(|c| seen.dependents.contains(uid(c)))
                    .map(name)
                    .collect();
                if left.is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "{owner_name} went before its blocking dependents {left:?}"
                    ))
                }
            }
        }
    }
}

/// `orphan`: the dependents the owner had while being orphaned stay, without a reference to it.
fn orphan_invariant(server: &FakeApiServer, seen: &RefCell<Watched>) -> Result<(), String> {
    if namespace_terminating(server) {
        return Ok(());
    }
    let cms = configmaps(server);
    let mut seen = seen.borrow_mut();
    match cms.iter().find(|c| name(c) == "owner") {
        Some(owner) if deleting(owner) && has_finalizer(owner, "orphan") => {
            seen.owner_uid = uid(owner).to_string();
            let owner_uid = seen.owner_uid.clone();
            seen.dependents.extend(
                cms.iter()
                    .filter(|c| owners(c).iter().any(|(u, _)| *u == owner_uid))
                    .map(|c| uid(c).to_string()),
            );
            Ok(())
        }
        Some(_) => Ok(()),
        None if seen.owner_uid.is_empty() => Ok(()),
        None => {
            for dep in &seen.dependents {
                let Some(cm) = cms.iter().find(|c| uid(c) == dep) else {
                    return Err(format!("orphaned dependent {dep} was collected"));
                };
                if owners(cm).iter().any(|(u, _)| *u == seen.owner_uid) {
                    return Err(format!(
                        "{} still names its deleted owner after the orphaning",
                        name(cm)
                    ));
                }
            }
            Ok(())
        }
    }
}

/// `shared` has a live owner (`other`) all along: never collected.
fn shared_survives(server: &FakeApiServer) -> Result<(), String> {
    if namespace_terminating(server) {
        return Ok(());
    }
    let cms = configmaps(server);
    match cms.iter().find(|c| name(c) == "shared") {
        Some(cm) if !deleting(cm) => Ok(()),
        Some(_) => Err("shared is being deleted although other owns it".into()),
        None => Err("shared was collected although other owns it".into()),
    }
}

/// A namespace is gone only once nothing is left in it.
fn namespace_goes_empty(server: &FakeApiServer) -> Result<(), String> {
    if server.has_object("v1", "namespaces", None, NAMESPACE) {
        return Ok(());
    }
    let left: Vec<String> = configmaps(server)
        .iter()
        .map(|c| name(c).to_string())
        .collect();
    if left.is_empty() {
        Ok(())
    } else {
        Err(format!("namespace gone with {left:?} left in it"))
    }
}

/// Goal: every ConfigMap with owner references has a live owner, and nothing stays deleting.
fn collected(server: &FakeApiServer) -> Result<(), String> {
    let cms = configmaps(server);
    let live: BTreeSet<&str> = cms.iter().map(uid).collect();
    for cm in &cms {
        let refs = owners(cm);
        if !refs.is_empty() && !refs.iter().any(|(u, _)| live.contains(u.as_str())) {
            return Err(format!("{} outlives all its owners", name(cm)));
        }
        if deleting(cm) {
            return Err(format!("{} stays deleting", name(cm)));
        }
    }
    Ok(())
}

/// Goal: a deleted namespace goes.
fn namespace_settles(server: &FakeApiServer) -> Result<(), String> {
    match server.get_object("v1", "namespaces", None, NAMESPACE) {
        Some(ns) if deleting(&ns) => Err(format!(
            "namespace stays Terminating: {}",
            ns["status"]["conditions"]
        )),
        _ => Ok(()),
    }
}

/// Builds the world for `policy`.
pub fn world(world: &mut World, policy: Policy) {
    world.kube_controller_manager(&[Controller::GarbageCollector, Controller::Namespace]);
    world.setup(|client| setup(client).boxed());
    replicator(world);
    releaser(world);
    user(world, policy);
    match policy {
        Policy::Foreground => {
            let check = foreground_owner_outlives_blocking_dependents(
                ("v1", "configmaps", NAMESPACE, "owner"),
                &[("v1", "configmaps")],
            );
            world.server_invariant(
                "an owner deleted in the foreground outlives its blocking dependents",
                move |s| {
                    if namespace_terminating(s) {
                        return Ok(());
                    }
                    check(s)
                },
            );
        }
        Policy::Orphan => {
            let seen = RefCell::new(Watched::default());
            world.server_invariant(
                "orphaned dependents stay, without the reference",
                move |s| orphan_invariant(s, &seen),
            );
        }
        Policy::Background => {}
    }
    world.server_invariant(
        "a dependent with another live owner is never collected",
        shared_survives,
    );
    world.server_invariant("a namespace goes only once empty", namespace_goes_empty);
    world.eventually("every dependent of a gone owner is collected", collected);
    world.eventually("a deleted namespace goes", namespace_settles);
}

/// Eno's deletion world ([`eno_lifecycle::deletion_world`]: Eno, the kubelet stand-in, the
/// resource reconciler, a user who changes the composition's spec and then deletes it) with the
/// garbage collector scheduled, the composition deleted in the foreground: the collector deletes
/// its ResourceSlices (owned by it, `blockOwnerDeletion`) while Eno's own finalizer still holds
/// it and the reconciler still works from them, at whatever point the seed says.
pub fn eno_foreground_world(world: &mut World) {
    world.kube_controller_manager(&[Controller::GarbageCollector]);
    world.setup(|client| eno::setup(client).boxed());
    eno_lifecycle::eno_host(world, None);
    eno_lifecycle::kubelet(world, eno::synthesizer(), Duration::from_secs(1));
    eno_lifecycle::reconciler(world);
    eno_lifecycle::change_then_delete_with(world, " in the foreground", DeleteParams::foreground());
    eno_lifecycle::common_checks(world);
    world.server_invariant(
        "a composition deleted in the foreground outlives its slices",
        foreground_owner_outlives_blocking_dependents(
            ("eno.azure.io/v1", "compositions", "default", "comp"),
            &[("eno.azure.io/v1", "resourceslices")],
        ),
    );
    world.eventually("every composition converges", |s| {
        eno_lifecycle::converges(s, true)
    });
    world.eventually("no slice outlives its composition", |s| {
        let live: BTreeSet<String> = s
            .list_objects("eno.azure.io/v1", "compositions", Some("default"))
            .1
            .iter()
            .map(|c| uid(c).to_string())
            .collect();
        let (_, slices) = s.list_objects("eno.azure.io/v1", "resourceslices", Some("default"));
        match slices
            .iter()
            .find(|sl| !owners(sl).iter().any(|(u, _)| live.contains(u)))
        {
            Some(sl) => Err(format!("slice {} outlives its composition", name(sl))),
            None => Ok(()),
        }
    });
}

/// The scenarios of this module: one per propagation policy, and Eno's composition deleted in
/// the foreground.
pub fn scenarios() -> Vec<Scenario> {
    let mut all: Vec<Scenario> = [Policy::Foreground, Policy::Background, Policy::Orphan]
        .into_iter()
        .map(|policy| {
            Scenario::new(
                &format!("kube-controller-manager/{}-deletion", policy.name()),
                &format!(
                    "the garbage collector and the namespace controller as scheduled actors: an owner deleted with {} propagation, a controller making dependents from stale reads, the namespace deleted",
                    policy.name()
                ),
                move |w| world(w, policy),
            )
            .configure(|c| c.faults = crate::sim::Faults::all(3))
        })
        .collect();
    all.push(
        Scenario::new(
            "eno/foreground-deletion",
            "a composition deleted in the foreground: the garbage collector, scheduled, deletes its slices while Eno cleans up; it goes after both",
            eno_foreground_world,
        )
        .configure(|c| c.faults = crate::sim::Faults::all(3)),
    );
    all
}
