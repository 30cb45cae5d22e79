//! The namespace controller (`pkg/controller/namespace/deletion/namespaced_resources_deleter.go`):
//! empties a deleted namespace, then removes its `kubernetes` finalizer through the
//! `namespaces/{name}/finalize` subresource, and the namespace goes.
//!
//! A pass over a terminating namespace deletes every object of every namespaced resource in it
//! (a delete-collection with background propagation, so finalizers are honoured), then lists
//! what is left: objects held by finalizers (or pods still in their grace period) keep the
//! namespace `Terminating`, with the conditions of [`super::namespace_conditions`] saying what
//! remains. The pass runs again whenever something in the namespace changes.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::namespace_conditions::{self, ContentReport};
use super::objects::{self, is_deleting};
use crate::context::FakeApiServer;
use crate::error::ApiError;
use crate::registry::semantics::{namespace_finalizers, UpdateTarget};
use crate::resource::ResourceInfo;

/// The finalizer this controller owns on `spec.finalizers`.
pub const FINALIZER: &str = "kubernetes";

/// How long an object with finalizers is expected to take (`finalizerEstimateSeconds`).
const FINALIZER_ESTIMATE_SECONDS: i64 = 15;

/// Syncs one namespace (`namespacedResourcesDeleter.Delete`).
pub(crate) fn sync(server: &FakeApiServer, name: &str) -> Result<(), ApiError> {
    let Some(ns_info) = objects::resource(server, "", "namespaces") else {
        return Ok(());
    };
    let Some(namespace) = objects::get(server, &ns_info, "", name) else {
        return Ok(());
    };
    if !is_deleting(&namespace) {
        return Ok(());
    }
    if namespace["status"]["phase"] != "Terminating" {
        not_found_is_done(objects::update(
            server,
            &ns_info,
            "",
            name,
            UpdateTarget::Status,
            |ns| {
                ns["status"]["phase"] = json!("Terminating");
                true
            },
        ))?;
    }
    let Some(namespace) = objects::get(server, &ns_info, "", name) else {
        return Ok(());
    };
    if namespace_finalizers(&namespace).is_empty() {
        return Ok(());
    }
    let deleted_at = namespace["metadata"]["deletionTimestamp"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .unwrap_or_else(|| server.shared.now());
    let (estimate, report) = delete_all_content(server, name, deleted_at);
    let now = server.shared.now_string();
    if let Err(e) = objects::update(server, &ns_info, "", name, UpdateTarget::Status, |ns| {
        namespace_conditions::update(ns, &report, &now)
    }) {
        tracing::debug!(namespace = name, error = %e.message, "cannot update the namespace's conditions");
    }
    if !report.errors.is_empty() || estimate > 0 {
        // Content remains: the next change in the namespace brings the controller back.
        return Ok(());
    }
    not_found_is_done(objects::update(
        server,
        &ns_info,
        "",
        name,
        UpdateTarget::Finalize,
        |ns| {
            let remaining: BTreeSet<String> = namespace_finalizers(ns)
                .into_iter()
                .filter(|f| f != FINALIZER)
                .collect();
            let changed = remaining.len() != namespace_finalizers(ns).len();
            ns["spec"]["finalizers"] = json!(remaining.into_iter().collect::<Vec<_>>());
            changed
        },
    ))
}

fn not_found_is_done(result: Result<(), ApiError>) -> Result<(), ApiError> {
    match result {
        Err(e) if e.code == 404 => Ok(()),
        other => other,
    }
}

/// The namespaced resources to empty, one version per resource (the preferred one, as
/// discovery's preferred-resources list gives them), that can be deleted.
fn deletable_resources(server: &FakeApiServer) -> Vec<ResourceInfo> {
    let mut seen = BTreeSet::new();
    server
        .shared
        .registry
        .all()
        .into_iter()
        .filter(|r| r.namespaced && r.verbs().contains(&"delete"))
        .filter(|r| seen.insert((r.group.clone(), r.plural.clone())))
        .collect()
}

/// `deleteAllContent`: deletes every object in the namespace and reports what is left, with the
/// estimate (seconds) of how long the rest should take.
fn delete_all_content(
    server: &FakeApiServer,
    namespace: &str,
    deleted_at: jiff::Timestamp,
) -> (i64, ContentReport) {
    let mut estimate = 0i64;
    let mut report = ContentReport::default();
    let mut finalizer_totals: BTreeMap<String, usize> = BTreeMap::new();
    for info in deletable_resources(server) {
        let result = delete_resource_content(server, &info, namespace, deleted_at);
        estimate = estimate.max(result.estimate);
        if result.remaining > 0 {
            report
                .remaining
                .push((format!("{}.{}", info.plural, info.group), result.remaining));
            for (finalizer, n) in result.finalizers {
                *finalizer_totals.entry(finalizer).or_default() += n;
            }
        }
        if let Some(error) = result.error {
            report.errors.push(error);
        }
    }
    report.finalizers = finalizer_totals.into_iter().collect();
    (estimate, report)
}

/// What deleting one resource's content left (`gvrDeletionMetadata`).
#[derive(Debug, Default)]
struct ResourceResult {
    estimate: i64,
    remaining: usize,
    finalizers: BTreeMap<String, usize>,
    error: Option<String>,
}

/// `deleteAllContentForGroupVersionResource`.
fn delete_resource_content(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: &str,
    deleted_at: jiff::Timestamp,
) -> ResourceResult {
    let estimate = graceful_estimate(server, info, namespace, deleted_at);
    for object in objects::list(server, info, Some(namespace)) {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        match objects::delete(server, info, namespace, name, None, "Background") {
            Ok(()) => {}
            Err(e) if e.code == 404 => {}
            Err(e) => {
                return ResourceResult {
                    estimate,
                    error: Some(e.message),
                    ..Default::default()
                }
            }
        }
    }
    let left = objects::list(server, info, Some(namespace));
    if left.is_empty() {
        return ResourceResult::default();
    }
    let mut finalizers: BTreeMap<String, usize> = BTreeMap::new();
    for object in &left {
        for f in crate::registry::gc_policy::finalizers_of(object) {
            *finalizers.entry(f).or_default() += 1;
        }
    }
    let remaining = left.len();
    if estimate != 0 {
        return ResourceResult {
            estimate,
            remaining,
            finalizers,
            error: None,
        };
    }
    if !finalizers.is_empty() {
        return ResourceResult {
            estimate: FINALIZER_ESTIMATE_SECONDS,
            remaining,
            finalizers,
            error: None,
        };
    }
    ResourceResult {
        estimate,
        remaining,
        finalizers,
        error: Some(format!(
            "unexpected items still remain in namespace: {namespace} for gvr: {}/{}, Resource={}",
            info.group, info.version, info.plural
        )),
    }
}

/// `estimateGracefulTermination`: for pods, the longest grace period of the ones not finished,
/// unless that much time has passed since the namespace was deleted.
fn graceful_estimate(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: &str,
    deleted_at: jiff::Timestamp,
) -> i64 {
    if !(info.group.is_empty() && info.plural == "pods") {
        return 0;
    }
    let estimate = objects::list(server, info, Some(namespace))
        .iter()
        .filter(|pod| {
            !matches!(
                pod["status"]["phase"].as_str(),
                Some("Succeeded" | "Failed")
            )
        })
        .filter_map(|pod: &Value| pod["spec"]["terminationGracePeriodSeconds"].as_i64())
        .max()
        .unwrap_or(0);
    let elapsed = server.shared.now().duration_since(deleted_at).as_secs();
    if elapsed >= estimate {
        0
    } else {
        estimate
    }
}
