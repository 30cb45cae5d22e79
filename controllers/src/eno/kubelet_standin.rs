//! A kubelet stand-in for clusters without nodes (the in-process fake API server): it binds the
//! pods of one namespace to a pretend node, marks them Running, runs them (a caller-supplied
//! [`PodRunner`], e.g. [`executor_runner`] which runs the in-pod synthesis executor in-process),
//! records Succeeded or Failed, and removes pods after a graceful delete once their termination
//! delay has passed (a delete with grace period 0, as the real kubelet does).
//!
//! It is not used against real clusters, where the kubelet does this. The demo and the
//! end-to-end tests use it. Given a [`PodLogSink`] (the demo passes the embedded server's
//! `append_pod_log`), it writes each container's start and exit as log lines, so `kubectl logs`
//! shows them, as it would a real container's output.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStatus, Pod,
    PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Client, ResourceExt};
use tracing::{debug, info, warn};

use super::error::is_status;
use super::executor::{
    spawned_synthesizer, synthesize_with_options, ExecutorOptions, SynthesisRequest,
    SynthesizerRunner,
};
use crate::clock::SharedClock;
use crate::operator::shutdown::Shutdown;

/// Runs a pod's workload; `true` for success.
pub type PodRunner = Arc<dyn Fn(Pod) -> BoxFuture<'static, bool> + Send + Sync>;

/// Where the stand-in writes a container's log lines: `(pod, container, text)`.
pub type PodLogSink = Arc<dyn Fn(&Pod, &str, &str) + Send + Sync>;

/// The stand-in's settings.
#[derive(Clone)]
pub struct KubeletStandIn {
    /// API client.
    pub client: Client,
    /// Namespace whose pods it runs.
    pub namespace: String,
    /// Node name pods are bound to.
    pub node_name: String,
    /// How long a gracefully deleted pod stays Terminating before it is removed.
    pub termination_delay: Duration,
    /// What runs when a pod turns Running.
    pub runner: PodRunner,
    /// Time source for the status timestamps.
    pub clock: SharedClock,
    /// Set once the API server has refused the `binding` subresource.
    pub binding_unsupported: Arc<AtomicBool>,
    /// Where containers' log lines go (none: not written).
    pub logs: Option<PodLogSink>,
}

/// A runner that executes the Eno synthesis executor for the pod, as the pod's container would.
pub fn executor_runner(client: Client, clock: SharedClock) -> PodRunner {
    executor_runner_with(client, clock, spawned_synthesizer())
}

/// [`executor_runner`] with the synthesizer itself run by `synthesizer` (the race harness runs
/// one in-process).
pub fn executor_runner_with(
    client: Client,
    clock: SharedClock,
    synthesizer: SynthesizerRunner,
) -> PodRunner {
    executor_runner_with_options(client, clock, synthesizer, ExecutorOptions::default())
}

/// [`executor_runner_with`], with the executor's `options` (test switches).
pub fn executor_runner_with_options(
    client: Client,
    clock: SharedClock,
    synthesizer: SynthesizerRunner,
    options: ExecutorOptions,
) -> PodRunner {
    Arc::new(move |pod: Pod| {
        let client = client.clone();
        let clock = clock.clone();
        let synthesizer = synthesizer.clone();
        async move {
            let request = match SynthesisRequest::from_pod(&pod) {
                Ok(request) => request,
                Err(e) => {
                    warn!(podName = %pod.name_any(), error = %e, "pod is not a synthesizer pod");
                    return false;
                }
            };
            match synthesize_with_options(&client, &clock, &request, &synthesizer, options).await {
                Ok(outcome) => {
                    info!(podName = %pod.name_any(), ?outcome, "executor finished");
                    true
                }
                Err(e) => {
                    warn!(podName = %pod.name_any(), error = %e, "executor failed");
                    false
                }
            }
        }
        .boxed()
    })
}

impl KubeletStandIn {
    /// A stand-in for `namespace` on node `stand-in-node`, removing terminated pods after 1s.
    pub fn new(client: Client, namespace: &str, runner: PodRunner, clock: SharedClock) -> Self {
        Self {
            client,
            namespace: namespace.to_string(),
            node_name: "stand-in-node".into(),
            termination_delay: Duration::from_secs(1),
            runner,
            clock,
            binding_unsupported: Arc::default(),
            logs: None,
        }
    }

    /// Writes `text` to the log of every container of `pod`.
    fn log(&self, pod: &Pod, text: impl Fn(&str) -> String) {
        let Some(sink) = &self.logs else {
            return;
        };
        for container in pod.spec.iter().flat_map(|spec| spec.containers.iter()) {
            sink(pod, &container.name, &text(&container.name));
        }
    }

    /// Run until `shutdown` completes.
    pub async fn run(self, shutdown: Shutdown) {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        let started: Arc<Mutex<HashSet<String>>> = Arc::default();
        let terminating: Arc<Mutex<HashSet<String>>> = Arc::default();
        let events = watcher(pods.clone(), watcher::Config::default())
            .default_backoff()
            .applied_objects();
        let handle_all = events.for_each(|event| {
            let this = self.clone();
            let pods = pods.clone();
            let started = started.clone();
            let terminating = terminating.clone();
            async move {
                let Ok(pod) = event else {
                    return;
                };
                this.handle(&pods, pod, &started, &terminating).await;
            }
        });
        // Biased (no random branch choice in a seeded run); stopping wins.
        tokio::select! {
            biased;
            _ = shutdown => {}
            _ = handle_all => {}
        }
    }

    async fn handle(
        &self,
        pods: &Api<Pod>,
        pod: Pod,
        started: &Arc<Mutex<HashSet<String>>>,
        terminating: &Arc<Mutex<HashSet<String>>>,
    ) {
        let uid = pod.uid().unwrap_or_default();
        let name = pod.name_any();
        if pod.metadata.deletion_timestamp.is_some() {
            if !terminating
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(uid)
            {
                return;
            }
            let pods = pods.clone();
            let delay = self.termination_delay;
            // A kubelet keeps syncing a terminating pod until it is gone: a failed removal is
            // retried (backing off to 10s), or the pod would stay Terminating forever (found
            // by the race harness: two such pods block Eno's next pod, spec §7.5).
            tokio::spawn(async move {
                let mut wait = delay;
                loop {
                    tokio::time::sleep(wait).await;
                    match pods
                        .delete(&name, &DeleteParams::default().grace_period(0))
                        .await
                    {
                        Ok(_) => {
                            debug!(podName = %name, "kubelet removed terminated pod");
                            return;
                        }
                        Err(e) if is_status(&e, 404) => return,
                        Err(e) => {
                            warn!(podName = %name, error = %e, "kubelet could not remove pod; retrying")
                        }
                    }
                    wait = (wait * 2).clamp(Duration::from_millis(500), Duration::from_secs(10));
                }
            });
            return;
        }
        let bound = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_some_and(|n| !n.is_empty());
        if !bound && !self.binding_unsupported.load(Ordering::SeqCst) {
            // Bind as the scheduler does, through the `binding` subresource (a pod update may
            // not change `spec.nodeName`). Bound pods are deleted gracefully.
            match self.bind(pods, &name).await {
                Ok(()) => return,
                Err(e) if is_status(&e, 404) || is_status(&e, 405) => {
                    warn!(error = %e, "the API server cannot bind pods; running them unbound (deletions are immediate)");
                    self.binding_unsupported.store(true, Ordering::SeqCst);
                }
                Err(e) => {
                    debug!(podName = %name, error = %e, "binding pod failed; waiting for the next event");
                    return;
                }
            }
        }
        let phase = pod.status.as_ref().and_then(|s| s.phase.clone());
        if !matches!(phase.as_deref(), None | Some("Pending")) {
            return;
        }
        if !started
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(uid.clone())
        {
            return;
        }
        let mut running = pod.clone();
        running.status = Some(self.status(&pod, "Running", None));
        let running = match pods
            .replace_status(&name, &PostParams::default(), &running)
            .await
        {
            Ok(pod) => pod,
            Err(e) => {
                debug!(podName = %name, error = %e, "marking pod running failed; waiting for the next event");
                started
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&uid);
                return;
            }
        };
        let node = self.node_name.clone();
        self.log(&running, |container| {
            format!("stand-in kubelet: started container {container} on node {node}")
        });
        let this = self.clone();
        let pods = pods.clone();
        tokio::spawn(async move {
            let success = (this.runner)(running.clone()).await;
            let code = if success { 0 } else { 1 };
            this.log(&running, |container| {
                format!("stand-in kubelet: container {container} exited with code {code}")
            });
            this.finish(&pods, &name, success).await;
        });
    }

    /// Bind the pod to this stand-in's node (`POST pods/{name}/binding`).
    async fn bind(&self, pods: &Api<Pod>, name: &str) -> Result<(), kube::Error> {
        let binding = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name},
            "target": {"apiVersion": "v1", "kind": "Node", "name": self.node_name},
        });
        pods.create_subresource::<_, serde_json::Value>(
            "binding",
            name,
            &PostParams::default(),
            &binding,
        )
        .await
        .map(|_| ())
    }

    /// Record the pod's end (Succeeded or Failed), retrying on conflicts.
    async fn finish(&self, pods: &Api<Pod>, name: &str, success: bool) {
        for _ in 0..5 {
            let Ok(mut pod) = pods.get(name).await else {
                return;
            };
            let phase = if success { "Succeeded" } else { "Failed" };
            pod.status = Some(self.status(&pod, phase, Some(if success { 0 } else { 1 })));
            match pods
                .replace_status(name, &PostParams::default(), &pod)
                .await
            {
                Ok(_) => return,
                Err(e) if is_status(&e, 409) => continue,
                Err(_) => return,
            }
        }
    }

    /// A status with one container status per container of the pod.
    fn status(&self, pod: &Pod, phase: &str, exit_code: Option<i32>) -> PodStatus {
        let now = Time(self.clock.now());
        let state = match exit_code {
            None => ContainerState {
                running: Some(ContainerStateRunning {
                    started_at: Some(now.clone()),
                }),
                ..ContainerState::default()
            },
            Some(code) => ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: code,
                    finished_at: Some(now.clone()),
                    ..ContainerStateTerminated::default()
                }),
                ..ContainerState::default()
            },
        };
        PodStatus {
            phase: Some(phase.to_string()),
            start_time: Some(now),
            container_statuses: Some(
                pod.spec
                    .iter()
                    .flat_map(|spec| spec.containers.iter())
                    .map(|container| {
                        // A container the kubelet started has an ID; `pods/log` of a
                        // terminated container without one is refused.
                        let id = format!(
                            "standin://{}/{}",
                            pod.uid().unwrap_or_default(),
                            container.name
                        );
                        let mut state = state.clone();
                        if let Some(terminated) = state.terminated.as_mut() {
                            terminated.container_id = Some(id.clone());
                        }
                        ContainerStatus {
                            name: container.name.clone(),
                            container_id: Some(id),
                            image: container.image.clone().unwrap_or_default(),
                            ready: exit_code.is_none(),
                            state: Some(state),
                            ..ContainerStatus::default()
                        }
                    })
                    .collect(),
            ),
            ..PodStatus::default()
        }
    }
}
