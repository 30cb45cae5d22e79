//! The RBAC in `deploy/` proven against a fake API server that authorizes as a real one does
//! (authentication on, `--authorization-mode RBAC`, the ServiceAccount admission on):
//!
//! - with exactly the manifests of `deploy/eno` and `deploy/karpenter` loaded, each controller
//!   runs through its production entry point (`controllers eno`, `controllers karpenter`:
//!   leader election included) with its ServiceAccount's token over TCP, and its whole job
//!   converges with no request refused; Eno's synthesizer pods run the real executor as the
//!   pod's own ServiceAccount (`eno-synthesizer`);
//! - for every rule of every Role and ClusterRole, the same run with that one rule removed is
//!   refused a request with the real 403 message naming the rule's verb and resource: every
//!   rule is needed;
//! - no rule grants a wildcard.

use crate::deploy_support;
use crate::eno_support;

use std::sync::Arc;
use std::time::Duration;

use controllers::clock::SharedClock;
use controllers::eno::executor::{
    spawned_synthesizer, synthesize_with, SynthesisRequest, SynthesizerRunner,
};
use controllers::eno::kubelet_standin::{KubeletStandIn, PodRunner};
use controllers::eno::types::{
    Binding, Composition, GoDuration, ResourceBinding, ResourceKind, ResourceSlice, Synthesizer,
    SynthesizerInputRef,
};
use controllers::operator::runner::OperatorArgs;
use deploy_support::*;
use fake_apiserver::FakeApiServer;
use futures::FutureExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::Client;
use rstest::rstest;
use serde_json::{json, Value};

/// Each step of a scenario gives up after this long.
const STEP: Duration = Duration::from_secs(30);

/// How a run ended.
#[derive(Debug)]
struct Outcome {
    /// `Ok` when every step converged, else the step that did not.
    converged: Result<(), String>,
    /// The messages of the requests the server refused with 403.
    denials: Vec<String>,
}

/// Waits until `probe` holds; gives up on timeout, or (with `stop_on_denial`) as soon as the
/// server refused a request.
async fn step<F, Fut>(
    server: &FakeApiServer,
    stop_on_denial: bool,
    what: &str,
    mut probe: F,
) -> Result<(), String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        if probe().await {
            return Ok(());
        }
        if stop_on_denial && !server.forbidden_requests().is_empty() {
            return Err(format!("{what}: a request was refused"));
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!("{what}: not reached within {STEP:?}"));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Eno

/// A runner for the kubelet stand-in that runs the real executor as the pod's ServiceAccount.
/// The first synthesis is overtaken: while its synthesizer runs, the cluster admin changes the
/// Composition, so the executor drops the output it wrote (deleting its slices), as it does when
/// a Composition changes under a running pod.
fn executor_as_pod_service_account(
    server: FakeApiServer,
    admin: Client,
    clock: SharedClock,
) -> PodRunner {
    let overtake_next = Arc::new(std::sync::atomic::AtomicBool::new(true));
    Arc::new(move |pod: Pod| {
        let server = server.clone();
        let clock = clock.clone();
        let overtake = overtake_next
            .swap(false, std::sync::atomic::Ordering::SeqCst)
            .then(|| admin.clone());
        async move {
            let namespace = pod.metadata.namespace.clone().unwrap_or_default();
            let account = pod
                .spec
                .as_ref()
                .and_then(|s| s.service_account_name.clone())
                .unwrap_or_else(|| "default".into());
            let Ok(client) = server.client_for_service_account(&namespace, &account) else {
                return false;
            };
            let Ok(request) = SynthesisRequest::from_pod(&pod) else {
                return false;
            };
            let spawned = spawned_synthesizer();
            let runner: SynthesizerRunner = match overtake {
                None => spawned,
                Some(admin) => {
                    let (namespace, name) = (
                        request.composition_namespace.clone(),
                        request.composition_name.clone(),
                    );
                    Arc::new(move |syn, input, timeout, env| {
                        let (spawned, admin) = (spawned.clone(), admin.clone());
                        let (namespace, name) = (namespace.clone(), name.clone());
                        async move {
                            let items = spawned(syn, input, timeout, env).await?;
                            overtake_composition(&admin, &namespace, &name).await;
                            Ok(items)
                        }
                        .boxed()
                    })
                }
            };
            synthesize_with(&client, &clock, &request, &runner)
                .await
                .is_ok()
        }
        .boxed()
    })
}

/// Changes the Composition's spec (a new generation) as the cluster admin.
async fn overtake_composition(admin: &Client, namespace: &str, name: &str) {
    let compositions = Api::<Composition>::namespaced(admin.clone(), namespace);
    let patch = json!({"spec": {"bindings": [
        {"key": "config", "resource": {"name": "input"}},
        {"key": "overtaken", "resource": {"name": "input"}},
    ]}});
    if let Err(e) = compositions
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        tracing::warn!(error = %e, "could not change the composition under its synthesis");
    }
}

/// Waits until the leader of `namespace` renewed its Lease (an `update` after the `create`).
async fn leader_renewed(
    server: &FakeApiServer,
    admin: &Client,
    stop_on_denial: bool,
    namespace: &str,
) -> Result<(), String> {
    let leases = Api::<Lease>::namespaced(admin.clone(), namespace);
    step(
        server,
        stop_on_denial,
        "the leader renewed its Lease",
        || {
            let leases = leases.clone();
            async move {
                leases.list(&ListParams::default()).await.is_ok_and(|l| {
                    l.items.iter().any(|lease| {
                        lease.spec.as_ref().is_some_and(|spec| {
                            spec.renew_time.is_some() && spec.renew_time != spec.acquire_time
                        })
                    })
                })
            }
        },
    )
    .await
}

fn eno_synthesizer(command_suffix: &str) -> Synthesizer {
    let mut syn = controllers::eno::demo::demo_synthesizer("syn");
    syn.spec.command[2].push_str(command_suffix);
    syn.spec.pod_timeout = Some(GoDuration::from_millis(10_000));
    syn.spec.rollout_cooldown = Some(GoDuration::from_millis(100));
    syn.spec.refs = vec![SynthesizerInputRef {
        key: "config".into(),
        resource: ResourceKind {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
        },
    }];
    syn
}

fn current_synthesis(comp: &Composition) -> Option<controllers::eno::types::Synthesis> {
    comp.status.as_ref()?.current_synthesis.clone()
}

/// Runs `controllers eno` as `eno-system/eno-controller` (and synthesizer pods as their own
/// ServiceAccount) against a server holding `docs`, through a Composition's whole life: first
/// synthesis, a Synthesizer rollout, a resynthesis with slice cleanup, deletion.
async fn run_eno(docs: Vec<Value>, stop_on_denial: bool) -> Outcome {
    let server = rbac_server(&docs);
    let admin = server.client();
    let (url, serving) = serve(&server).await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let kubeconfig =
        service_account_kubeconfig(&server, dir.path(), &url, "eno-system", "eno-controller");
    let controller = tokio::spawn(controllers::eno::cli::run_eno(
        controllers::eno::cli::EnoArgs {
            pod_namespace: "eno-system".into(),
            pod_service_account: Some("eno-synthesizer".into()),
            executor_image: "controllers:test".into(),
            simulate_kubelet: false,
            max_error_backoff_seconds: 1,
            operator: OperatorArgs {
                kubeconfig: Some(kubeconfig),
                http_address: free_address(),
                leader_elect: true,
                leader_election_namespace: None,
            },
        },
    ));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let clock = eno_support::clock();
    let mut kubelet = KubeletStandIn::new(
        admin.clone(),
        "eno-system",
        executor_as_pod_service_account(server.clone(), admin.clone(), clock.clone()),
        clock,
    );
    kubelet.termination_delay = Duration::from_millis(50);
    let kubelet = tokio::spawn(kubelet.run(controllers::operator::shutdown::on(async move {
        let _ = stopped.await;
    })));

    let converged = eno_scenario(&server, &admin, stop_on_denial).await;

    let _ = stop.send(());
    controller.abort();
    let _ = tokio::time::timeout(Duration::from_secs(5), kubelet).await;
    serving.abort();
    Outcome {
        converged,
        denials: server.forbidden_requests(),
    }
}

async fn eno_scenario(
    server: &FakeApiServer,
    admin: &Client,
    stop_on_denial: bool,
) -> Result<(), String> {
    let configmaps = Api::<ConfigMap>::namespaced(admin.clone(), "default");
    let input: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "input"}, "data": {"a": "1"}}))
            .map_err(|e| e.to_string())?;
    configmaps
        .create(&PostParams::default(), &input)
        .await
        .map_err(|e| e.to_string())?;
    let synthesizers = Api::<Synthesizer>::all(admin.clone());
    synthesizers
        .create(&PostParams::default(), &eno_synthesizer(""))
        .await
        .map_err(|e| e.to_string())?;
    let compositions = Api::<Composition>::namespaced(admin.clone(), "default");
    let mut comp = controllers::eno::demo::demo_composition("web", "default", "syn");
    comp.spec.bindings = vec![Binding {
        key: "config".into(),
        resource: ResourceBinding {
            name: "input".into(),
            namespace: String::new(),
        },
    }];
    compositions
        .create(&PostParams::default(), &comp)
        .await
        .map_err(|e| e.to_string())?;

    let synthesized_without_pods = |generation: i64| {
        let compositions = compositions.clone();
        let admin = admin.clone();
        move || {
            let compositions = compositions.clone();
            let admin = admin.clone();
            async move {
                let Ok(comp) = compositions.get("web").await else {
                    return false;
                };
                let done = current_synthesis(&comp).is_some_and(|s| {
                    s.synthesized.is_some() && s.observed_composition_generation >= generation
                });
                done && eno_support::pods_of(&admin, "eno-system", "default", "web")
                    .await
                    .is_empty()
            }
        }
    };
    step(
        server,
        stop_on_denial,
        "first synthesis",
        synthesized_without_pods(1),
    )
    .await?;

    // A deleted slice holding the cleanup finalizer (as the upstream executor writes them):
    // the controller releases the finalizer.
    let slices = Api::<ResourceSlice>::namespaced(admin.clone(), "default");
    let stray: ResourceSlice = serde_json::from_value(json!({
        "metadata": {"name": "stray", "finalizers": [controllers::eno::FINALIZER]},
        "spec": {"resources": []},
    }))
    .map_err(|e| e.to_string())?;
    slices
        .create(&PostParams::default(), &stray)
        .await
        .map_err(|e| e.to_string())?;
    slices
        .delete("stray", &DeleteParams::default())
        .await
        .map_err(|e| e.to_string())?;
    step(
        server,
        stop_on_denial,
        "finalizer of a deleted slice released",
        || {
            let slices = slices.clone();
            async move { matches!(slices.get_opt("stray").await, Ok(None)) }
        },
    )
    .await?;

    // A new Synthesizer generation: the rollout controller records it and resynthesizes.
    let mut syn = synthesizers.get("syn").await.map_err(|e| e.to_string())?;
    syn.spec = eno_synthesizer(" # v2").spec;
    let syn = synthesizers
        .replace("syn", &PostParams::default(), &syn)
        .await
        .map_err(|e| e.to_string())?;
    let syn_generation = syn.metadata.generation.unwrap_or_default();
    step(server, stop_on_denial, "rollout of the synthesizer", || {
        let synthesizers = synthesizers.clone();
        let compositions = compositions.clone();
        async move {
            let rolled_out = synthesizers.get("syn").await.is_ok_and(|s| {
                s.status
                    .is_some_and(|st| st.current_generation >= syn_generation)
            });
            let resynthesized = compositions.get("web").await.is_ok_and(|c| {
                current_synthesis(&c).is_some_and(|s| {
                    s.synthesized.is_some() && s.observed_synthesizer_generation >= syn_generation
                })
            });
            rolled_out && resynthesized
        }
    })
    .await?;

    // A new Composition generation: the first synthesis' slices are no longer referenced and
    // are cleaned up.
    let generation = eno_support::change_spec(admin, "default", "web", |comp| {
        comp.spec.bindings.push(Binding {
            key: "revision".into(),
            resource: ResourceBinding {
                name: "rev-1".into(),
                namespace: String::new(),
            },
        });
    })
    .await;
    let resynthesized = synthesized_without_pods(generation);
    step(
        server,
        stop_on_denial,
        "resynthesis and slice cleanup",
        || {
            let slices = slices.clone();
            let compositions = compositions.clone();
            let resynthesized = resynthesized.clone();
            async move {
                if !resynthesized().await {
                    return false;
                }
                let Ok(comp) = compositions.get("web").await else {
                    return false;
                };
                let status = comp.status.unwrap_or_default();
                let referenced: std::collections::BTreeSet<String> = status
                    .current_synthesis
                    .iter()
                    .chain(status.previous_synthesis.iter())
                    .flat_map(|s| s.resource_slices.iter().map(|r| r.name.clone()))
                    .collect();
                slices.list(&ListParams::default()).await.is_ok_and(|l| {
                    l.items
                        .iter()
                        .all(|s| referenced.contains(&s.metadata.name.clone().unwrap_or_default()))
                })
            }
        },
    )
    .await?;

    // Deletion: once reconciled, the composition and its slices go.
    eno_support::mark_reconciled(admin, "default", "web").await;
    compositions
        .delete("web", &DeleteParams::default())
        .await
        .map_err(|e| e.to_string())?;
    step(server, stop_on_denial, "deletion", || {
        let compositions = compositions.clone();
        let slices = slices.clone();
        async move {
            // The eno-reconciler's part: it reports the deleting slices' resources as deleted.
            for slice in slices
                .list(&ListParams::default())
                .await
                .map(|l| l.items)
                .unwrap_or_default()
            {
                let name = slice.metadata.name.clone().unwrap_or_default();
                let count = slice.spec.resources.len();
                if slice.metadata.deletion_timestamp.is_some() {
                    let status = json!({"status": {"resources": vec![json!({"deleted": true}); count]}});
                    let _ = slices
                        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
                        .await;
                }
            }
            // ... and marks the composition's current synthesis reconciled.
            if let Ok(Some(mut comp)) = compositions.get_opt("web").await {
                if let Some(current) = comp
                    .status
                    .as_mut()
                    .and_then(|s| s.current_synthesis.as_mut())
                    .filter(|c| c.synthesized.is_some() && c.reconciled.is_none())
                {
                    current.reconciled = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                        jiff::Timestamp::now(),
                    ));
                    let _ = compositions
                        .replace_status("web", &PostParams::default(), &comp)
                        .await;
                }
            }
            matches!(compositions.get_opt("web").await, Ok(None))
                && slices
                    .list(&ListParams::default())
                    .await
                    .is_ok_and(|l| l.items.is_empty())
        }
    })
    .await
    .map_err(|e| {
        let state = |api: &str, plural: &str| {
            serde_json::to_string(&server.list_objects(api, plural, Some("default")).1)
                .unwrap_or_default()
        };
        format!(
            "{e}; compositions: {}; slices: {}",
            state("eno.azure.io/v1", "compositions"),
            state("eno.azure.io/v1", "resourceslices")
        )
    })?;
    leader_renewed(server, admin, stop_on_denial, "eno-system").await
}

// ---------------------------------------------------------------------------------------------
// Karpenter

/// Runs `controllers karpenter` (kwok provider, kubelet stand-in, as `deploy/karpenter`
/// configures it) as `karpenter/karpenter` against a server holding `docs`: NodeClaims launched,
/// registered and initialized, then deleted with their Nodes.
async fn run_karpenter(docs: Vec<Value>, stop_on_denial: bool) -> Outcome {
    let server = rbac_server(&docs);
    let admin = server.client();
    let (url, serving) = serve(&server).await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let kubeconfig =
        service_account_kubeconfig(&server, dir.path(), &url, "karpenter", "karpenter");
    let controller = tokio::spawn(controllers::karpenter::cli::run(
        controllers::karpenter::cli::KarpenterArgs {
            cloud_provider: controllers::karpenter::cli::ProviderKind::Kwok,
            kubelet_standin: true,
            node_termination: true,
            kwok_max_instances: Some(2),
            namespace: "karpenter".into(),
            registration_ttl_seconds: 900,
            operator: OperatorArgs {
                kubeconfig: Some(kubeconfig),
                http_address: free_address(),
                leader_elect: true,
                leader_election_namespace: None,
            },
        },
    ));
    let converged = karpenter_scenario(&server, &admin, stop_on_denial).await;
    controller.abort();
    serving.abort();
    Outcome {
        converged,
        denials: server.forbidden_requests(),
    }
}

async fn karpenter_scenario(
    server: &FakeApiServer,
    admin: &Client,
    stop_on_denial: bool,
) -> Result<(), String> {
    use controllers::karpenter::types::NodeClaim;
    let nodeclaims = Api::<NodeClaim>::all(admin.clone());
    let nodes = Api::<Node>::all(admin.clone());
    for name in ["a", "b"] {
        let mut nc = controllers::karpenter::demo::demo_nodeclaim("default");
        nc.metadata.generate_name = None;
        nc.metadata.name = Some(name.into());
        nodeclaims
            .create(&PostParams::default(), &nc)
            .await
            .map_err(|e| e.to_string())?;
    }
    step(
        server,
        stop_on_denial,
        "NodeClaims Ready and Initialized",
        || {
            let nodeclaims = nodeclaims.clone();
            async move {
                nodeclaims
                    .list(&ListParams::default())
                    .await
                    .is_ok_and(|l| {
                        l.items.len() == 2
                            && l.items.iter().all(|nc| {
                                nc.condition_is_true("Ready") && nc.condition_is_true("Initialized")
                            })
                    })
            }
        },
    )
    .await?;
    // A third NodeClaim finds the kwok provider full (`--kwok-max-instances 2`): a launch
    // failure, published as an event, and the NodeClaim is deleted.
    let mut nc = controllers::karpenter::demo::demo_nodeclaim("default");
    nc.metadata.generate_name = None;
    nc.metadata.name = Some("c".into());
    nodeclaims
        .create(&PostParams::default(), &nc)
        .await
        .map_err(|e| e.to_string())?;
    let events = Api::<k8s_openapi::api::core::v1::Event>::namespaced(admin.clone(), "default");
    step(
        server,
        stop_on_denial,
        "insufficient capacity reported",
        || {
            let nodeclaims = nodeclaims.clone();
            let events = events.clone();
            async move {
                let gone = matches!(nodeclaims.get_opt("c").await, Ok(None));
                let reported = events.list(&ListParams::default()).await.is_ok_and(|l| {
                    l.items.iter().any(|e| {
                        e.reason.as_deref() == Some("InsufficientCapacityError")
                            && e.involved_object.name.as_deref() == Some("c")
                    })
                });
                gone && reported
            }
        },
    )
    .await?;
    for name in ["a", "b"] {
        nodeclaims
            .delete(name, &DeleteParams::default())
            .await
            .map_err(|e| e.to_string())?;
    }
    step(server, stop_on_denial, "NodeClaims and Nodes gone", || {
        let nodeclaims = nodeclaims.clone();
        let nodes = nodes.clone();
        async move {
            nodeclaims
                .list(&ListParams::default())
                .await
                .is_ok_and(|l| l.items.is_empty())
                && nodes
                    .list(&ListParams::default())
                    .await
                    .is_ok_and(|l| l.items.is_empty())
        }
    })
    .await?;
    leader_renewed(server, admin, stop_on_denial, "karpenter").await
}

// ---------------------------------------------------------------------------------------------
// The tests

async fn run(deploy: &str, docs: Vec<Value>, stop_on_denial: bool) -> Outcome {
    match deploy {
        "eno" => run_eno(docs, stop_on_denial).await,
        "karpenter" => run_karpenter(docs, stop_on_denial).await,
        other => panic!("no scenario for deploy/{other}"),
    }
}

#[rstest]
#[case("eno")]
#[case("karpenter")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deployed_rbac_is_enough(#[case] deploy: &str) {
    let outcome = run(deploy, manifests(deploy), false).await;
    assert!(
        outcome.denials.is_empty(),
        "deploy/{deploy}: requests refused: {:#?}",
        outcome.denials
    );
    outcome
        .converged
        .unwrap_or_else(|e| panic!("deploy/{deploy} did not converge: {e}"));
}

/// Every rule of `deploy/eno` and `deploy/karpenter`, by role and position; a test below checks
/// that this list is the manifests' (a new rule needs its case here).
const RULES: &[(&str, &str, &str, usize)] = &[
    ("eno", "ClusterRole", "eno-controller", 0),
    ("eno", "ClusterRole", "eno-controller", 1),
    ("eno", "ClusterRole", "eno-controller", 2),
    ("eno", "ClusterRole", "eno-controller", 3),
    ("eno", "ClusterRole", "eno-controller", 4),
    ("eno", "Role", "eno-controller", 0),
    ("eno", "Role", "eno-controller", 1),
    ("eno", "ClusterRole", "eno-synthesizer", 0),
    ("eno", "ClusterRole", "eno-synthesizer", 1),
    ("eno", "ClusterRole", "eno-synthesizer", 2),
    ("eno", "ClusterRole", "eno-synthesizer", 3),
    ("eno", "ClusterRole", "eno-synthesizer", 4),
    ("karpenter", "ClusterRole", "karpenter", 0),
    ("karpenter", "ClusterRole", "karpenter", 1),
    ("karpenter", "ClusterRole", "karpenter", 2),
    ("karpenter", "ClusterRole", "karpenter", 3),
    ("karpenter", "ClusterRole", "karpenter", 4),
    ("karpenter", "Role", "karpenter-leader-election", 0),
];

#[test]
fn every_rule_has_a_removal_case() {
    let mut listed: Vec<String> = RULES
        .iter()
        .map(|(d, k, r, i)| format!("{d} {k} {r} {i}"))
        .collect();
    let mut found: Vec<String> = ["eno", "karpenter"]
        .iter()
        .flat_map(|d| {
            rules(&manifests(d))
                .into_iter()
                .map(move |r| format!("{d} {} {} {}", r.kind, r.role, r.index))
        })
        .collect();
    listed.sort();
    found.sort();
    assert_eq!(listed, found, "RULES must list every rule of deploy/");
}

#[test]
fn no_rule_uses_a_wildcard() {
    for deploy in ["eno", "karpenter"] {
        for rule in rules(&manifests(deploy)) {
            let wildcard = ["verbs", "apiGroups", "resources", "nonResourceURLs"]
                .iter()
                .flat_map(|k| strings(&rule.rule[*k]))
                .find(|s| s.contains('*'));
            assert!(
                wildcard.is_none(),
                "deploy/{deploy}: {} grants a wildcard {wildcard:?}",
                rule.describe()
            );
        }
    }
}

#[rstest]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_rule_is_needed(
    #[values(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)] case: usize,
) {
    let (deploy, kind, role, index) = RULES[case];
    let docs = manifests(deploy);
    let rule = rules(&docs)
        .into_iter()
        .find(|r| r.kind == kind && r.role == role && r.index == index)
        .expect("the rule is in the manifests");
    let outcome = run(deploy, without(&docs, &rule), true).await;
    assert!(
        outcome.denials.iter().any(|m| rule.matches_denial(m)),
        "deploy/{deploy} without {}: no request was refused for it (is the rule needed?); converged: {:?}; refused: {:#?}",
        rule.describe(),
        outcome.converged,
        outcome.denials
    );
}

/// How many verbs the rules of `deploy/eno` and `deploy/karpenter` grant in all; one removal
/// case each below (a test checks the count).
const VERB_CASES: usize = 43;

/// The `case`th verb of all rules: `deploy/eno`'s first, then `deploy/karpenter`'s.
fn verb_case(case: usize) -> (&'static str, VerbRef) {
    ["eno", "karpenter"]
        .into_iter()
        .flat_map(|d| verbs(&manifests(d)).into_iter().map(move |v| (d, v)))
        .nth(case)
        .expect("a verb for every case")
}

#[test]
fn every_verb_has_a_removal_case() {
    let all: usize = ["eno", "karpenter"]
        .iter()
        .map(|d| verbs(&manifests(d)).len())
        .sum();
    assert_eq!(
        all, VERB_CASES,
        "each_verb_is_needed must have one case per verb granted in deploy/"
    );
}

#[rstest]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_verb_is_needed(
    #[values(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
        25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42
    )]
    case: usize,
) {
    let (deploy, verb) = verb_case(case);
    let docs = manifests(deploy);
    let outcome = run(deploy, without_verb(&docs, &verb), true).await;
    assert!(
        outcome
            .denials
            .iter()
            .any(|m| verb.rule.matches_denial_of(&verb.verb, m)),
        "deploy/{deploy} without {}: no request was refused for it (is the verb needed?); converged: {:?}; refused: {:#?}",
        verb.describe(),
        outcome.converged,
        outcome.denials
    );
}
