//! The `PodSecurity` admission plugin, on by default in every real server: the Pod Security
//! Standards a namespace's `pod-security.kubernetes.io/` labels choose, applied to the pods
//! and pod templates written in it (upstream's `pod-security-admission/admission` with
//! kube-apiserver's `plugin/pkg/admission/security/podsecurity` around it).
//!
//! - **Pods** (create, update, and the `ephemeralcontainers` and `resize` subresources): a pod
//!   breaking the namespace's `enforce` level is a `403`, `pods "web" is forbidden: violates
//!   PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must
//!   set securityContext.allowPrivilegeEscalation=false), ...`; one breaking its `warn` level
//!   is admitted with the warning `would violate PodSecurity "baseline:latest": ...`. An update
//!   is looked at only when it changes what a check could object to that an update can change
//!   (a container's image, the number of containers, an ephemeral container added:
//!   `isSignificantPodUpdate`).
//! - **Workloads** (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs,
//!   ReplicationControllers, PodTemplates): never refused; their pod template breaking the
//!   `warn` level gives the same warning.
//! - **Namespaces**: a label value that does not parse is a `422` on create, and on update when
//!   the update changes the errors; an update making `enforce` stricter warns about the
//!   existing pods that would now be refused (`existing pods in namespace "ns" violate the new
//!   PodSecurity enforce level "restricted:latest"`, then `web (and 2 other pods):
//!   allowPrivilegeEscalation != false, ...`, grouped by their reasons).
//!
//! The configuration ([`config`]: the builder's `pod_security_configuration`, or the
//! `--admission-control-config-file` flag) sets the policy of namespaces without labels and
//! exempts users, namespaces and runtime classes; without one every mode is
//! `privileged:latest` and nothing is exempt. A namespace created or relabelled in an exempt
//! namespace with a policy of its own gets `namespace "ops" is exempt from Pod Security, and
//! the policy (enforce=restricted:latest) will be ignored`. The `audit` level is parsed (its
//! label is validated) but this server keeps no audit log to annotate. Where upstream walks an informer's pods in map
//! order and stops after a one-second budget, the namespace check here walks them by name and
//! checks up to the same 3000, so its warnings are the same on every run.

mod checks;
pub(crate) mod config;
mod helpers;
pub(crate) mod policy;
pub(crate) mod registry;

use std::cell::RefCell;

use serde_json::Value;

use crate::auth::attributes::forbidden_error;
use crate::context::Shared;
use crate::error::ApiError;
use crate::resource::ResourceInfo;

use policy::{labels_of, Level, LevelVersion, Policy};
use registry::evaluate_pod;

/// How many existing pods a namespace update checks at most (`defaultNamespaceMaxPodsToCheck`).
const NAMESPACE_MAX_PODS_TO_CHECK: usize = 3000;

/// Pod subresources the plugin does not look at (`ignoredPodSubresources`).
const IGNORED_POD_SUBRESOURCES: &[&str] = &[
    "exec",
    "attach",
    "binding",
    "eviction",
    "log",
    "portforward",
    "proxy",
    "status",
];

/// The resources the plugin looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Namespace,
    Pod,
    /// A resource with a pod template (`DefaultPodSpecExtractor`).
    PodController,
}

fn target_of(info: &ResourceInfo) -> Option<Target> {
    if info.custom {
        return None;
    }
    match (info.group.as_str(), info.plural.as_str()) {
        ("", "namespaces") => Some(Target::Namespace),
        ("", "pods") => Some(Target::Pod),
        ("", "replicationcontrollers" | "podtemplates")
        | ("apps", "replicasets" | "deployments" | "statefulsets" | "daemonsets")
        | ("batch", "jobs" | "cronjobs") => Some(Target::PodController),
        _ => None,
    }
}

/// The pod metadata and spec of an object of a pod controller's kind (`ExtractPodSpec`), `None`
/// when it has no template (a ReplicationController may leave it out).
fn extract_pod_spec<'a>(info: &ResourceInfo, object: &'a Value) -> Option<(&'a Value, &'a Value)> {
    let template = match info.plural.as_str() {
        "pods" => object,
        "podtemplates" => &object["template"],
        "cronjobs" => &object["spec"]["jobTemplate"]["spec"]["template"],
        _ => &object["spec"]["template"],
    };
    if template.is_null() {
        return None;
    }
    Some((&template["metadata"], &template["spec"]))
}

/// The namespace's policy and whether its labels had errors.
fn namespace_policy(shared: &Shared, namespace: &str) -> Option<(Policy, bool)> {
    let object = shared.store.get_parsed("/namespaces", "", namespace)?;
    let defaults = shared.admission.pod_security.defaults;
    let labelled = object["metadata"]["labels"]
        .as_object()
        .is_some_and(|labels| labels.keys().any(|k| k.starts_with(policy::LABEL_PREFIX)));
    if !labelled {
        return Some((defaults, false));
    }
    let (policy, errors) = Policy::from_labels(&labels_of(&object), defaults);
    Some((policy, !errors.is_empty()))
}

/// The plugin on a create of `object` (final: defaulted, its name generated) by `username`;
/// warnings go to `warnings`.
pub(crate) fn validate_create(
    shared: &Shared,
    info: &ResourceInfo,
    object: &Value,
    username: &str,
    warnings: &RefCell<Vec<String>>,
) -> Result<(), ApiError> {
    let Some(target) = target_of(info) else {
        return Ok(());
    };
    let config = &shared.admission.pod_security;
    if target == Target::Namespace {
        let labels = labels_of(object);
        let (policy, errors) = Policy::from_labels(&labels, config.defaults);
        if !errors.is_empty() {
            return Err(invalid_labels(object, errors));
        }
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        warnings
            .borrow_mut()
            .extend(exempt_namespace_warning(config, name, &policy, &labels));
        return Ok(());
    }
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    if config.exempt_namespace(namespace) || config.exempt_user(username) {
        return Ok(());
    }
    let Some(policy) = namespace_policy(shared, namespace) else {
        return Ok(());
    };
    admit_pod_or_template(config, info, target, policy, object, warnings)
}

/// What an update needs of the plugin, read before the store is locked.
pub(crate) struct UpdateCheck {
    config: config::PodSecurityConfiguration,
    kind: UpdateKind,
}

/// What is updated.
enum UpdateKind {
    /// A pod or pod controller: its namespace's policy.
    Workload {
        target: Target,
        policy: (Policy, bool),
    },
    /// A namespace: the pods in it, should its enforce level get stricter.
    Namespace { pods: Vec<Value> },
}

/// Prepares the update check of `namespace`/`name` by `username`; `None` when the plugin has
/// nothing to say (another kind, a subresource it ignores, an exemption).
pub(crate) fn prepare_update(
    shared: &Shared,
    info: &ResourceInfo,
    subresource: Option<&str>,
    namespace: &str,
    name: &str,
    username: &str,
) -> Option<UpdateCheck> {
    let target = target_of(info)?;
    let config = &shared.admission.pod_security;
    let kind = match (target, subresource) {
        (Target::Namespace, None) => UpdateKind::Namespace {
            pods: shared.store.snapshot_values("/pods", Some(name)).1,
        },
        (Target::Pod, Some(sub)) if IGNORED_POD_SUBRESOURCES.contains(&sub) => return None,
        (Target::Pod, _) | (Target::PodController, None) => {
            if config.exempt_namespace(namespace) || config.exempt_user(username) {
                return None;
            }
            let policy = namespace_policy(shared, namespace)?;
            // Nothing enforced, warned or audited: no check (the common case, and the cheap
            // one for the pod updates a cluster makes all the time).
            if nothing_to_check(target, policy) {
                return None;
            }
            UpdateKind::Workload { target, policy }
        }
        _ => return None,
    };
    Some(UpdateCheck {
        config: config.clone(),
        kind,
    })
}

impl UpdateCheck {
    /// Checks an update of `old` into `next`.
    pub(crate) fn check(
        &self,
        info: &ResourceInfo,
        old: &Value,
        next: &Value,
        warnings: &RefCell<Vec<String>>,
    ) -> Result<(), ApiError> {
        match &self.kind {
            UpdateKind::Workload { target, policy } => {
                if *target == Target::Pod && !is_significant_pod_update(next, old) {
                    return Ok(());
                }
                admit_pod_or_template(&self.config, info, *target, *policy, next, warnings)
            }
            UpdateKind::Namespace { pods } => {
                validate_namespace_update(&self.config, old, next, pods, warnings)
            }
        }
    }
}

/// A pod (`ValidatePod`) or a pod controller's template (`ValidatePodController`) against its
/// namespace's policy.
fn admit_pod_or_template(
    config: &config::PodSecurityConfiguration,
    info: &ResourceInfo,
    target: Target,
    (policy, had_errors): (Policy, bool),
    object: &Value,
    warnings: &RefCell<Vec<String>>,
) -> Result<(), ApiError> {
    let enforce = target == Target::Pod;
    if nothing_to_check(target, (policy, had_errors)) {
        return Ok(());
    }
    let Some((metadata, spec)) = extract_pod_spec(info, object) else {
        return Ok(());
    };
    if config.exempt_runtime_class(spec) {
        return Ok(());
    }
    let enforced = enforce.then(|| (policy.enforce, evaluate_pod(policy.enforce, metadata, spec)));
    if let Some((level, result)) = &enforced {
        if !result.allowed() {
            let why = format!(
                "violates PodSecurity \"{level}\": {}",
                result.forbidden_detail()
            );
            return Err(forbidden_error(
                "",
                &info.plural,
                super::admitted_name(object),
                &why,
            ));
        }
    }
    let warned = match &enforced {
        Some((level, result)) if *level == policy.warn => result.clone(),
        _ => evaluate_pod(policy.warn, metadata, spec),
    };
    if !warned.allowed() {
        warnings.borrow_mut().push(format!(
            "would violate PodSecurity \"{}\": {}",
            policy.warn,
            warned.forbidden_detail()
        ));
    }
    Ok(())
}

/// Whether the namespace's policy asks nothing of a pod (everything `privileged`) or of a
/// workload's template (warn and audit `privileged`), its labels having parsed.
fn nothing_to_check(target: Target, (policy, had_errors): (Policy, bool)) -> bool {
    let privileged = match target {
        Target::Pod => policy.fully_privileged(),
        _ => policy.warn.level == Level::Privileged && policy.audit.level == Level::Privileged,
    };
    !had_errors && privileged
}

/// `ValidateNamespace` on update.
fn validate_namespace_update(
    config: &config::PodSecurityConfiguration,
    old: &Value,
    next: &Value,
    pods: &[Value],
    warnings: &RefCell<Vec<String>>,
) -> Result<(), ApiError> {
    let labels = labels_of(next);
    let (new_policy, new_errors) = Policy::from_labels(&labels, config.defaults);
    let (old_policy, old_errors) = Policy::from_labels(&labels_of(old), config.defaults);
    // Labels that were already invalid may stay so; new errors are refused.
    if !new_errors.is_empty() && (old_errors.is_empty() || new_errors != old_errors) {
        return Err(invalid_labels(next, new_errors));
    }
    let (new, old) = (new_policy.enforce, old_policy.enforce);
    let relaxed_or_same = new == old
        || new.level == Level::Privileged
        || (new.version == old.version && new.level <= old.level);
    if relaxed_or_same {
        return Ok(());
    }
    let namespace = next["metadata"]["name"].as_str().unwrap_or_default();
    if config.exempt_namespace(namespace) {
        warnings.borrow_mut().extend(exempt_namespace_warning(
            config,
            namespace,
            &new_policy,
            &labels,
        ));
        return Ok(());
    }
    warnings
        .borrow_mut()
        .extend(evaluate_pods_in_namespace(config, namespace, new, pods));
    Ok(())
}

/// The warning for an exempt namespace given a policy of its own (`exemptNamespaceWarning`):
/// none when the namespace is not exempt, its policy is privileged or the default one.
fn exempt_namespace_warning(
    config: &config::PodSecurityConfiguration,
    namespace: &str,
    policy: &Policy,
    labels: &std::collections::BTreeMap<String, String>,
) -> Option<String> {
    if !config.exempt_namespace(namespace)
        || policy.fully_privileged()
        || policy.equivalent(&config.defaults)
    {
        return None;
    }
    let modes = [
        (
            "enforce",
            policy.enforce,
            policy::ENFORCE_LEVEL_LABEL,
            policy::ENFORCE_VERSION_LABEL,
        ),
        (
            "audit",
            policy.audit,
            policy::AUDIT_LEVEL_LABEL,
            policy::AUDIT_VERSION_LABEL,
        ),
        (
            "warn",
            policy.warn,
            policy::WARN_LEVEL_LABEL,
            policy::WARN_VERSION_LABEL,
        ),
    ];
    let set: Vec<String> = modes
        .iter()
        .filter(|(_, lv, level, version)| {
            lv.level != Level::Privileged
                && (labels.contains_key(*level) || labels.contains_key(*version))
        })
        .map(|(mode, lv, _, _)| format!("{mode}={lv}"))
        .collect();
    Some(format!(
        "namespace {} is exempt from Pod Security, and the policy ({}) will be ignored",
        crate::rules::validation::go_quote(namespace),
        set.join(", ")
    ))
}

/// The warnings about the existing `pods` of `namespace` under its new enforce level
/// (`EvaluatePodsInNamespace`).
fn evaluate_pods_in_namespace(
    config: &config::PodSecurityConfiguration,
    namespace: &str,
    enforce: LevelVersion,
    pods: &[Value],
) -> Vec<String> {
    let prioritized = prioritize_pods(config, pods);
    let total = prioritized.len();
    let checked = total.min(NAMESPACE_MAX_PODS_TO_CHECK);
    // Each distinct set of reasons, in the order first met, with the first pod name (by name)
    // and how many pods share it.
    let mut by_reason: Vec<(String, String, usize)> = Vec::new();
    for pod in &prioritized[..checked] {
        let result = evaluate_pod(enforce, &pod["metadata"], &pod["spec"]);
        if result.allowed() {
            continue;
        }
        let reason = result.forbidden_reason();
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        match by_reason.iter_mut().find(|(r, _, _)| *r == reason) {
            Some((_, first, count)) => {
                if name < first.as_str() {
                    *first = name.to_string();
                }
                *count += 1;
            }
            None => by_reason.push((reason, name.to_string(), 1)),
        }
    }
    let mut warnings = Vec::new();
    if checked < total {
        warnings.push(format!(
            "new PodSecurity enforce level only checked against the first {checked} of {total} existing pods"
        ));
    }
    if !by_reason.is_empty() {
        warnings.push(format!(
            "existing pods in namespace \"{namespace}\" violate the new PodSecurity enforce level \"{enforce}\""
        ));
    }
    let mut pod_warnings: Vec<String> = by_reason
        .into_iter()
        .map(|(reason, name, count)| match count {
            1 => format!("{name}: {reason}"),
            2 => format!("{name} (and 1 other pod): {reason}"),
            _ => format!("{name} (and {} other pods): {reason}", count - 1),
        })
        .collect();
    pod_warnings.sort();
    warnings.extend(pod_warnings);
    warnings
}

/// The pods in the order they are checked (`prioritizePods`): one pod of each controller and
/// the pods with none first, then the other pods of controllers already seen.
fn prioritize_pods<'a>(
    config: &config::PodSecurityConfiguration,
    pods: &'a [Value],
) -> Vec<&'a Value> {
    let mut prioritized = Vec::with_capacity(pods.len());
    let mut duplicates = Vec::new();
    let mut seen_controllers: Vec<&str> = Vec::new();
    for pod in pods {
        if config.exempt_runtime_class(&pod["spec"]) {
            continue;
        }
        let controller = pod["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|owner| owner["controller"].as_bool() == Some(true))
            .map(|owner| owner["uid"].as_str().unwrap_or_default());
        match controller {
            None => prioritized.push(pod),
            Some(uid) if seen_controllers.contains(&uid) => duplicates.push(pod),
            Some(uid) => {
                seen_controllers.push(uid);
                prioritized.push(pod);
            }
        }
    }
    prioritized.extend(duplicates);
    prioritized
}

/// Whether a pod update changes something the checks look at that an update can change
/// (`isSignificantPodUpdate`): the number of containers or init containers, an image, an
/// ephemeral container added or its image changed.
fn is_significant_pod_update(pod: &Value, old: &Value) -> bool {
    fn list<'a>(pod: &'a Value, field: &str) -> &'a [Value] {
        pod["spec"][field].as_array().map_or(&[], Vec::as_slice)
    }
    for field in ["containers", "initContainers"] {
        let (new, old) = (list(pod, field), list(old, field));
        if new.len() != old.len() || new.iter().zip(old).any(|(n, o)| n["image"] != o["image"]) {
            return true;
        }
    }
    let old_ephemeral = list(old, "ephemeralContainers");
    list(pod, "ephemeralContainers").iter().any(|container| {
        match old_ephemeral
            .iter()
            .find(|o| o["name"] == container["name"])
        {
            None => true,
            Some(old) => container["image"] != old["image"],
        }
    })
}

/// The `422` for a namespace's invalid labels (`invalidResponse`).
fn invalid_labels(namespace: &Value, errors: Vec<crate::error::StatusCause>) -> ApiError {
    let name = namespace["metadata"]["name"].as_str().unwrap_or_default();
    ApiError::invalid("", "Namespace", name, errors)
}
