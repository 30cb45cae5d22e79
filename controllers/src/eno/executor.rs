//! The in-pod synthesis executor (later upstream's model, 68ee694): run inside the synthesizer
//! pod as `controllers synthesize`, it checks that its synthesis is still current, runs the
//! Synthesizer's command (a KRM function: a `ResourceList` in on stdin, one out on stdout),
//! stores the output as ResourceSlices and writes `synthesized` with an rv-checked update, then
//! exits. The lifecycle controller then deletes the pod as `Success`.
//!
//! The same function runs in-process in tests, where a kubelet stand-in calls it when a pod
//! turns Running.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, FutureExt};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::api::{Api, DeleteParams, DynamicObject, GroupVersionKind, ObjectMeta, PostParams};
use kube::discovery::Scope;
use kube::{Client, Resource, ResourceExt};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tracing::{info, warn};

use super::error::is_status;
use super::pod_template::{env, SYNTHESIZER_CONTAINER};
use super::synthesis_state::{current, generation, is_deleting};
use super::types::{
    Composition, Manifest, ResourceSlice, ResourceSliceRef, ResourceSliceSpec, Synthesizer,
};
use crate::clock::SharedClock;

/// The largest ResourceSlice written, in bytes of manifest text (upstream: 512 KiB).
pub const MAX_SLICE_BYTES: usize = 512 * 1024;
/// `execTimeout` when the Synthesizer has none (the CRD default).
pub const DEFAULT_EXEC_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the final status write is retried on a 409.
pub const STATUS_WRITE_ATTEMPTS: usize = 5;

/// Which synthesis this executor runs: read from the pod's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthesisRequest {
    /// Composition name.
    pub composition_name: String,
    /// Composition namespace.
    pub composition_namespace: String,
    /// Composition generation the pod was created for.
    pub composition_generation: i64,
    /// The synthesis UUID the pod was created for.
    pub synthesis_uuid: String,
}

/// What the executor did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The output was recorded in these slices and the composition marked synthesized.
    Synthesized {
        /// Names of the ResourceSlices written.
        slices: Vec<String>,
    },
    /// Nothing to do, or the output was dropped: the synthesis is no longer current.
    Skipped(String),
}

/// Why the executor failed.
#[derive(Debug, thiserror::Error)]
pub enum ExecutorError {
    /// An environment variable is missing or malformed.
    #[error("environment variable {name}: {problem}")]
    Env {
        /// The variable.
        name: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// An API request failed.
    #[error("{action}: {source}")]
    Api {
        /// What the executor was doing.
        action: &'static str,
        /// The client's error.
        #[source]
        source: Box<kube::Error>,
    },
    /// A Synthesizer ref has no Composition binding.
    #[error("the composition binds nothing to the synthesizer's ref {0:?}")]
    MissingBinding(String),
    /// The Synthesizer has no command.
    #[error("synthesizer {0:?} has no command")]
    NoCommand(String),
    /// The command could not be started or awaited.
    #[error("running synthesizer command: {0}")]
    Spawn(#[from] std::io::Error),
    /// The command ran past `execTimeout`.
    #[error("synthesizer command timed out after {0:?}")]
    Timeout(Duration),
    /// The command exited with an error.
    #[error("synthesizer command failed ({status}): {stderr}")]
    CommandFailed {
        /// Exit status.
        status: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// The command's stdout is not a KRM ResourceList.
    #[error("synthesizer output is not a ResourceList: {0}")]
    BadOutput(String),
    /// Every status write attempt met a conflict.
    #[error("composition status kept changing; gave up after {0} attempts")]
    TooManyConflicts(usize),
}

fn api_error(action: &'static str) -> impl FnOnce(kube::Error) -> ExecutorError {
    move |source| ExecutorError::Api {
        action,
        source: Box::new(source),
    }
}

impl SynthesisRequest {
    /// Read the request from environment variables through `lookup` (`std::env::var` in the
    /// pod).
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ExecutorError> {
        let required = |name: &'static str| {
            lookup(name)
                .filter(|v| !v.is_empty())
                .ok_or(ExecutorError::Env {
                    name,
                    problem: "missing".into(),
                })
        };
        let generation_text = required(env::COMPOSITION_GENERATION)?;
        let composition_generation =
            generation_text
                .trim()
                .parse()
                .map_err(|_| ExecutorError::Env {
                    name: env::COMPOSITION_GENERATION,
                    problem: format!("not an integer: {generation_text:?}"),
                })?;
        Ok(Self {
            composition_name: required(env::COMPOSITION_NAME)?,
            composition_namespace: required(env::COMPOSITION_NAMESPACE)?,
            composition_generation,
            synthesis_uuid: required(env::SYNTHESIS_UUID)?,
        })
    }

    /// The pod environment the synthesizer command sees (set explicitly, so an in-process run
    /// matches a run in the pod).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            (env::COMPOSITION_NAME, self.composition_name.clone()),
            (
                env::COMPOSITION_NAMESPACE,
                self.composition_namespace.clone(),
            ),
            (
                env::COMPOSITION_GENERATION,
                self.composition_generation.to_string(),
            ),
            (env::SYNTHESIS_UUID, self.synthesis_uuid.clone()),
        ]
    }

    /// Read the request from the environment of a pod's synthesizer container (what the pod
    /// would see; used by in-process kubelet stand-ins).
    pub fn from_pod(pod: &Pod) -> Result<Self, ExecutorError> {
        let vars: BTreeMap<String, String> = pod
            .spec
            .as_ref()
            .and_then(|s| {
                s.containers
                    .iter()
                    .find(|c| c.name == SYNTHESIZER_CONTAINER)
            })
            .and_then(|c| c.env.as_ref())
            .map(|vars| {
                vars.iter()
                    .filter_map(|v| Some((v.name.clone(), v.value.clone()?)))
                    .collect()
            })
            .unwrap_or_default();
        Self::from_env(|name| vars.get(name).cloned())
    }
}

/// Why the synthesis is no longer worth running or recording, if it is not.
fn stale_reason(comp: &Composition, request: &SynthesisRequest) -> Option<String> {
    if is_deleting(comp) {
        return Some("composition is being deleted".into());
    }
    if generation(comp) > request.composition_generation {
        return Some(format!(
            "composition generation {} is newer than the pod's {}",
            generation(comp),
            request.composition_generation
        ));
    }
    match current(comp) {
        None => Some("composition has no current synthesis".into()),
        Some(c) if c.uuid != request.synthesis_uuid => Some(format!(
            "synthesis {:?} is no longer current",
            request.synthesis_uuid
        )),
        Some(c) if c.synthesized.is_some() => Some("synthesis is already complete".into()),
        Some(_) => None,
    }
}

/// How the synthesizer runs on its input (synthesizer, ResourceList input, exec timeout,
/// environment) and yields the output items. Production spawns the command
/// ([`spawned_synthesizer`]); the race harness passes an in-process stand-in, so that no real
/// process enters a deterministic run, and every other step of [`synthesize_with`] stays the
/// production code.
pub type SynthesizerRunner = Arc<
    dyn Fn(
            Synthesizer,
            Value,
            Duration,
            Vec<(&'static str, String)>,
        ) -> BoxFuture<'static, Result<Vec<Value>, ExecutorError>>
        + Send
        + Sync,
>;

/// The production runner: the Synthesizer's command as a child process ([`run_synthesizer`]).
pub fn spawned_synthesizer() -> SynthesizerRunner {
    Arc::new(|syn, input, timeout, env| {
        async move { run_synthesizer(&syn, &input, timeout, &env).await }.boxed()
    })
}

/// The executor's settings. Production (the `controllers synthesize` subcommand) uses the
/// default; only tests change it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecutorOptions {
    /// Test switch, off by default: record the output without checking again, right before the
    /// status write, that the synthesis is still current (spec §7.8), so that a gen-N pod
    /// finishing after the swap to N+1 marks the new synthesis synthesized with gen-N output
    /// (the stale output bug the harness must catch). Never set in production.
    pub keep_stale_output: bool,
}

/// Run one synthesis to completion (or skip it), as the pod does.
pub async fn synthesize(
    client: &Client,
    clock: &SharedClock,
    request: &SynthesisRequest,
) -> Result<Outcome, ExecutorError> {
    synthesize_with(client, clock, request, &spawned_synthesizer()).await
}

/// [`synthesize`], with the synthesizer run by `runner`.
pub async fn synthesize_with(
    client: &Client,
    clock: &SharedClock,
    request: &SynthesisRequest,
    runner: &SynthesizerRunner,
) -> Result<Outcome, ExecutorError> {
    synthesize_with_options(client, clock, request, runner, ExecutorOptions::default()).await
}

/// [`synthesize_with`], with the executor's `options`.
pub async fn synthesize_with_options(
    client: &Client,
    clock: &SharedClock,
    request: &SynthesisRequest,
    runner: &SynthesizerRunner,
    options: ExecutorOptions,
) -> Result<Outcome, ExecutorError> {
    let compositions: Api<Composition> =
        Api::namespaced(client.clone(), &request.composition_namespace);
    let comp = match compositions.get(&request.composition_name).await {
        Ok(comp) => comp,
        Err(e) if is_status(&e, 404) => {
            return Ok(Outcome::Skipped("composition not found".into()))
        }
        Err(e) => return Err(api_error("getting composition")(e)),
    };
    if let Some(reason) = stale_reason(&comp, request) {
        info!(%reason, "skipping synthesis");
        return Ok(Outcome::Skipped(reason));
    }
    let syn = Api::<Synthesizer>::all(client.clone())
        .get(&comp.spec.synthesizer.name)
        .await
        .map_err(api_error("getting synthesizer"))?;

    let input = build_input(client, &comp, &syn).await?;
    let exec_timeout = syn
        .spec
        .exec_timeout
        .map(|t| t.0)
        .unwrap_or(DEFAULT_EXEC_TIMEOUT);
    let items = runner(syn.clone(), input, exec_timeout, request.env()).await?;

    let slices = write_slices(client, &comp, request, &items).await?;
    let slice_names: Vec<String> = slices.iter().map(|s| s.name_any()).collect();
    match record_synthesized(&compositions, clock, request, &slice_names, options).await {
        Ok(None) => {
            info!(slices = slice_names.len(), "synthesis recorded");
            Ok(Outcome::Synthesized {
                slices: slice_names,
            })
        }
        Ok(Some(reason)) => {
            info!(%reason, "dropping synthesis output");
            delete_slices(client, &request.composition_namespace, &slice_names).await;
            Ok(Outcome::Skipped(reason))
        }
        Err(e) => {
            // The write may have taken effect although its answer was lost (a timeout): the
            // slices are then the composition's recorded output and must stay. When unsure,
            // they stay too; slice cleanup removes slices no composition records.
            if !records_any(&compositions, &request.composition_name, &slice_names).await {
                delete_slices(client, &request.composition_namespace, &slice_names).await;
            }
            Err(e)
        }
    }
}

/// Annotation marking which Synthesizer ref an input item satisfies.
pub const ANNOTATION_INPUT_KEY: &str = "eno.azure.io/input-key";

/// The ResourceList given to the synthesizer (upstream `buildPodInput`): for every ref of the
/// Synthesizer, the resource the Composition binds to that key, annotated with the key.
pub async fn build_input(
    client: &Client,
    comp: &Composition,
    syn: &Synthesizer,
) -> Result<Value, ExecutorError> {
    let namespace = comp.namespace().unwrap_or_default();
    let mut items = Vec::new();
    for input in &syn.spec.refs {
        let binding = comp
            .spec
            .bindings
            .iter()
            .find(|b| b.key == input.key)
            .ok_or_else(|| ExecutorError::MissingBinding(input.key.clone()))?;
        let gvk = GroupVersionKind::gvk(
            &input.resource.group,
            &input.resource.version,
            &input.resource.kind,
        );
        let (resource, capabilities) = kube::discovery::pinned_kind(client, &gvk)
            .await
            .map_err(api_error("discovering an input's resource"))?;
        let api: Api<DynamicObject> = match capabilities.scope {
            Scope::Namespaced => {
                let bound_namespace = if binding.resource.namespace.is_empty() {
                    namespace.as_str()
                } else {
                    binding.resource.namespace.as_str()
                };
                Api::namespaced_with(client.clone(), bound_namespace, &resource)
            }
            Scope::Cluster => Api::all_with(client.clone(), &resource),
        };
        let mut object = api
            .get(&binding.resource.name)
            .await
            .map_err(api_error("reading an input"))?;
        object
            .annotations_mut()
            .insert(ANNOTATION_INPUT_KEY.to_string(), input.key.clone());
        items.push(
            serde_json::to_value(&object).map_err(|e| ExecutorError::BadOutput(e.to_string()))?,
        );
    }
    Ok(json!({
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": items,
    }))
}

/// Run the Synthesizer's command with the ResourceList on stdin and `env` added to its
/// environment; return the output items.
pub async fn run_synthesizer(
    syn: &Synthesizer,
    input: &Value,
    exec_timeout: Duration,
    env: &[(&'static str, String)],
) -> Result<Vec<Value>, ExecutorError> {
    let mut command = syn.spec.command.clone();
    if command.is_empty() {
        // The CRD default.
        command.push("synthesize".into());
    }
    let (program, args) = command
        .split_first()
        .ok_or_else(|| ExecutorError::NoCommand(syn.name_any()))?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let input_bytes =
        serde_json::to_vec(input).map_err(|e| ExecutorError::BadOutput(e.to_string()))?;
    let mut stdin = child.stdin.take();
    let run = async move {
        if let Some(stdin) = stdin.as_mut() {
            // A command that ignores its input may close stdin early: not an error.
            let _ = stdin.write_all(&input_bytes).await;
        }
        drop(stdin);
        child.wait_with_output().await
    };
    let output = tokio::time::timeout(exec_timeout, run)
        .await
        .map_err(|_| ExecutorError::Timeout(exec_timeout))??;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: String = stderr
            .chars()
            .rev()
            .take(2000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        return Err(ExecutorError::CommandFailed {
            status: output.status.to_string(),
            stderr: tail,
        });
    }
    parse_resource_list(&output.stdout)
}

/// The `items` of a KRM ResourceList.
pub fn parse_resource_list(stdout: &[u8]) -> Result<Vec<Value>, ExecutorError> {
    let list: Value =
        serde_json::from_slice(stdout).map_err(|e| ExecutorError::BadOutput(e.to_string()))?;
    if list.get("kind").and_then(Value::as_str) != Some("ResourceList") {
        return Err(ExecutorError::BadOutput("kind is not ResourceList".into()));
    }
    match list.get("items") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => {
            if let Some(bad) = items.iter().find(|i| !i.is_object()) {
                return Err(ExecutorError::BadOutput(format!(
                    "item is not an object: {bad}"
                )));
            }
            Ok(items.clone())
        }
        Some(other) => Err(ExecutorError::BadOutput(format!(
            "items is not a list: {other}"
        ))),
    }
}

/// Split manifests into chunks of at most [`MAX_SLICE_BYTES`] (a larger single manifest gets a
/// chunk of its own).
pub fn chunk_manifests(items: &[Value]) -> Vec<Vec<Manifest>> {
    let mut chunks: Vec<Vec<Manifest>> = Vec::new();
    let mut current: Vec<Manifest> = Vec::new();
    let mut current_bytes = 0usize;
    for item in items {
        let manifest = item.to_string();
        if !current.is_empty() && current_bytes + manifest.len() > MAX_SLICE_BYTES {
            chunks.push(std::mem::take(&mut current));
            current_bytes = 0;
        }
        current_bytes += manifest.len();
        current.push(Manifest {
            manifest,
            deleted: false,
        });
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// Write the output as ResourceSlices owned by the composition.
async fn write_slices(
    client: &Client,
    comp: &Composition,
    request: &SynthesisRequest,
    items: &[Value],
) -> Result<Vec<ResourceSlice>, ExecutorError> {
    let slices: Api<ResourceSlice> =
        Api::namespaced(client.clone(), &request.composition_namespace);
    let owner = OwnerReference {
        api_version: Composition::api_version(&()).into_owned(),
        kind: Composition::kind(&()).into_owned(),
        name: comp.name_any(),
        uid: comp.uid().unwrap_or_default(),
        block_owner_deletion: Some(true),
        controller: Some(true),
    };
    let mut written = Vec::new();
    for chunk in chunk_manifests(items) {
        let slice = ResourceSlice {
            metadata: ObjectMeta {
                generate_name: Some(format!("{}-", request.composition_name)),
                namespace: Some(request.composition_namespace.clone()),
                owner_references: Some(vec![owner.clone()]),
                ..ObjectMeta::default()
            },
            spec: ResourceSliceSpec {
                composition_generation: request.composition_generation,
                synthesis_uuid: request.synthesis_uuid.clone(),
                resources: chunk,
            },
            status: None,
        };
        match slices.create(&PostParams::default(), &slice).await {
            Ok(created) => written.push(created),
            Err(e) => {
                let names: Vec<String> = written
                    .iter()
                    .map(|s: &ResourceSlice| s.name_any())
                    .collect();
                delete_slices(client, &request.composition_namespace, &names).await;
                return Err(api_error("creating resource slice")(e));
            }
        }
    }
    Ok(written)
}

/// Mark the synthesis done: re-read the composition, check it is still ours and unsynthesized,
/// and write `synthesized` + `resourceSlices` with its resourceVersion, retrying on 409.
/// `Ok(Some(reason))` when the output must be dropped.
async fn record_synthesized(
    compositions: &Api<Composition>,
    clock: &SharedClock,
    request: &SynthesisRequest,
    slice_names: &[String],
    options: ExecutorOptions,
) -> Result<Option<String>, ExecutorError> {
    for _ in 0..STATUS_WRITE_ATTEMPTS {
        let mut comp = match compositions.get(&request.composition_name).await {
            Ok(comp) => comp,
            Err(e) if is_status(&e, 404) => return Ok(Some("composition not found".into())),
            Err(e) => return Err(api_error("getting composition")(e)),
        };
        if let Some(reason) = stale_reason(&comp, request) {
            if !options.keep_stale_output {
                return Ok(Some(reason));
            }
        }
        let now = Time(clock.now());
        if let Some(current) = comp
            .status
            .as_mut()
            .and_then(|s| s.current_synthesis.as_mut())
        {
            current.synthesized = Some(now);
            current.resource_slices = slice_names
                .iter()
                .map(|name| ResourceSliceRef { name: name.clone() })
                .collect();
        }
        match compositions
            .replace_status(&request.composition_name, &PostParams::default(), &comp)
            .await
        {
            Ok(_) => return Ok(None),
            Err(e) if is_status(&e, 409) => continue,
            Err(e) => return Err(api_error("writing synthesized status")(e)),
        }
    }
    Err(ExecutorError::TooManyConflicts(STATUS_WRITE_ATTEMPTS))
}

/// Whether the composition records any of `slices` as the output of its current or previous
/// synthesis (`true` when it cannot be read: then nothing may be deleted).
async fn records_any(compositions: &Api<Composition>, name: &str, slices: &[String]) -> bool {
    match compositions.get(name).await {
        Ok(comp) => comp
            .status
            .iter()
            .flat_map(|s| [s.current_synthesis.as_ref(), s.previous_synthesis.as_ref()])
            .flatten()
            .any(|synthesis| {
                synthesis
                    .resource_slices
                    .iter()
                    .any(|r| slices.contains(&r.name))
            }),
        Err(e) if is_status(&e, 404) => false,
        Err(_) => true,
    }
}

/// Best-effort removal of slices whose synthesis was dropped.
async fn delete_slices(client: &Client, namespace: &str, names: &[String]) {
    let slices: Api<ResourceSlice> = Api::namespaced(client.clone(), namespace);
    for name in names {
        if let Err(e) = slices.delete(name, &DeleteParams::default()).await {
            if !is_status(&e, 404) {
                warn!(slice = %name, error = %e, "could not delete dropped resource slice");
            }
        }
    }
}

/// Copy this executable to `target` (the init container's job), executable by everyone.
pub fn install_executor(target: &std::path::Path) -> std::io::Result<()> {
    let source = std::env::current_exe()?;
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::copy(&source, target)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(target, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eno::types::SynthesizerSpec;
    use rstest::rstest;

    fn syn(command: &[&str]) -> Synthesizer {
        Synthesizer::new(
            "s",
            SynthesizerSpec {
                image: "i".into(),
                command: command.iter().map(|s| s.to_string()).collect(),
                ..SynthesizerSpec::default()
            },
        )
    }

    #[rstest]
    #[case(br#"{"kind":"ResourceList","items":[{"a":1},{"b":2}]}"#.as_slice(), Some(2))]
    #[case(br#"{"kind":"ResourceList"}"#.as_slice(), Some(0))]
    #[case(br#"{"kind":"ResourceList","items":[1]}"#.as_slice(), None)]
    #[case(br#"{"kind":"ConfigMap"}"#.as_slice(), None)]
    #[case(b"not json".as_slice(), None)]
    fn parses_resource_lists(#[case] stdout: &[u8], #[case] items: Option<usize>) {
        assert_eq!(parse_resource_list(stdout).ok().map(|v| v.len()), items);
    }

    #[test]
    fn chunks_stay_under_the_slice_limit() {
        let big = json!({"data": "x".repeat(200 * 1024)});
        let items = vec![
            big.clone(),
            big.clone(),
            big.clone(),
            json!({"small": true}),
        ];
        let chunks = chunk_manifests(&items);
        assert_eq!(chunks.iter().map(Vec::len).collect::<Vec<_>>(), vec![2, 2]);
        for chunk in &chunks {
            assert!(chunk.iter().map(|m| m.manifest.len()).sum::<usize>() <= MAX_SLICE_BYTES);
        }
        assert!(chunk_manifests(&[]).is_empty());
    }

    #[tokio::test]
    async fn runs_a_krm_function_through_sh() {
        let s = syn(&[
            "sh",
            "-c",
            r#"cat >/dev/null; echo '{"apiVersion":"config.kubernetes.io/v1","kind":"ResourceList","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"out"}}]}'"#,
        ]);
        let items = run_synthesizer(
            &s,
            &json!({"kind": "ResourceList", "items": []}),
            Duration::from_secs(5),
            &[],
        )
        .await
        .unwrap();
        assert_eq!(items[0]["metadata"]["name"], "out");
    }

    #[tokio::test]
    async fn the_command_sees_the_input_on_stdin() {
        let s = syn(&[
            "sh",
            "-c",
            r#"read line; printf '{"kind":"ResourceList","items":[%s,{"name":"%s"}]}' "$line" "$COMPOSITION_NAME""#,
        ]);
        let input = json!({"kind": "ResourceList", "items": []});
        let items = run_synthesizer(
            &s,
            &input,
            Duration::from_secs(5),
            &[("COMPOSITION_NAME", "c".into())],
        )
        .await
        .unwrap();
        assert_eq!(items[0], input);
        assert_eq!(
            items[1]["name"], "c",
            "the request's environment reaches the command"
        );
    }

    #[tokio::test]
    async fn failures_and_timeouts_are_errors() {
        let failing = syn(&["sh", "-c", "echo boom >&2; exit 3"]);
        let err = run_synthesizer(&failing, &json!({}), Duration::from_secs(5), &[])
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ExecutorError::CommandFailed { stderr, .. } if stderr.contains("boom")),
            "{err}"
        );
        let slow = syn(&["sh", "-c", "sleep 30"]);
        let err = run_synthesizer(&slow, &json!({}), Duration::from_millis(100), &[])
            .await
            .unwrap_err();
        assert!(matches!(err, ExecutorError::Timeout(_)));
        let missing = syn(&["/definitely/not/here"]);
        assert!(matches!(
            run_synthesizer(&missing, &json!({}), Duration::from_secs(1), &[]).await,
            Err(ExecutorError::Spawn(_))
        ));
    }

    #[test]
    fn installs_itself_as_an_executable() {
        let dir = std::env::temp_dir().join(format!("eno-install-test-{}", std::process::id()));
        let target = dir.join("bin/controllers");
        install_executor(&target).unwrap();
        let installed = std::fs::metadata(&target).unwrap();
        let source = std::fs::metadata(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(installed.len(), source.len());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(installed.permissions().mode() & 0o777, 0o755);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[rstest]
    #[case(&[("COMPOSITION_NAME", "c"), ("COMPOSITION_NAMESPACE", "n"), ("COMPOSITION_GENERATION", "3"), ("SYNTHESIS_UUID", "u")], true)]
    #[case(&[("COMPOSITION_NAME", "c"), ("COMPOSITION_NAMESPACE", "n"), ("COMPOSITION_GENERATION", "three"), ("SYNTHESIS_UUID", "u")], false)]
    #[case(&[("COMPOSITION_NAME", "c"), ("COMPOSITION_GENERATION", "3"), ("SYNTHESIS_UUID", "u")], false)]
    #[case(&[], false)]
    fn reads_the_request_from_env(#[case] vars: &[(&str, &str)], #[case] ok: bool) {
        let map: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let request = SynthesisRequest::from_env(|name| map.get(name).cloned());
        assert_eq!(request.is_ok(), ok);
        if let Ok(r) = request {
            assert_eq!(
                (r.composition_generation, r.synthesis_uuid.as_str()),
                (3, "u")
            );
        }
    }
}
