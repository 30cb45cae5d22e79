//! kube-apiserver's CRD finalizer (apiextensions' `CRDFinalizer`): once a CRD is marked for
//! deletion (see [`crate::registry::crd::mark_for_deletion`]) it says so in the `Terminating`
//! condition, deletes the CRD's custom resources through their registry (their own finalizers
//! are honoured, no admission runs), and, once none is left, drops the cleanup finalizer, after
//! which the CRD is gone and its resources are no longer served. Until then the custom
//! resources stay readable and writable, but new ones cannot be created.
//!
//! It is part of the API server, so it runs even without kube-controller-manager's controllers:
//! right after the write that marked the CRD, and again after each deletion of one of its
//! custom resources (the real one polls every 5 s for a minute, then retries with backoff).

use std::cell::Cell;
use std::sync::Arc;

use serde_json::Value;

use crate::context::FakeApiServer;
use crate::error::ApiError;
use crate::http::handlers::{after_write, delete_object};
use crate::registry::crd::{
    awaits_cleanup, condition_is_true, remove_cleanup_finalizer, set_condition,
};
use crate::registry::semantics::DeleteOptions;
use crate::resource::ResourceInfo;
use crate::store::{resource_key, Mutation};

const GROUP: &str = "apiextensions.k8s.io";
const PLURAL: &str = "customresourcedefinitions";

thread_local! {
    /// Set while a cleanup runs on this thread: the writes it makes do not start another.
    static CLEANING: Cell<bool> = const { Cell::new(false) };
}

/// The CRD that serves a custom resource (`<plural>.<group>`).
fn crd_name_of(info: &ResourceInfo) -> String {
    format!("{}.{}", info.plural, info.group)
}

/// The stored CRD of this name, from the store's parse cache (every create and delete of a
/// custom resource asks, so it is not parsed again each time).
fn stored_crd(server: &FakeApiServer, name: &str) -> Option<Arc<Value>> {
    server
        .shared
        .store
        .get_parsed(&resource_key(GROUP, PLURAL), "", name)
}

/// A `POST` of a custom resource whose CRD is terminating is refused (`405`), as the custom
/// resource handler refuses it; updates, patches (an apply that creates included) and deletes
/// still work.
pub(crate) fn refuse_create_while_terminating(
    server: &FakeApiServer,
    info: &ResourceInfo,
) -> Result<(), ApiError> {
    if !info.custom {
        return Ok(());
    }
    let Some(crd) = stored_crd(server, &crd_name_of(info)) else {
        return Ok(());
    };
    if !condition_is_true(&crd, "Terminating") {
        return Ok(());
    }
    let mut refused = ApiError::new(
        405,
        "MethodNotAllowed",
        "create not allowed while custom resource definition is terminating",
    );
    refused.group = Some(info.group.clone());
    refused.kind = Some(info.plural.clone());
    Err(refused)
}

/// After a custom resource is deleted: if its CRD waits for the cleanup, look again.
pub(crate) fn after_custom_resource_deleted(server: &FakeApiServer, info: &ResourceInfo) {
    let name = crd_name_of(info);
    if stored_crd(server, &name).is_some_and(|crd| awaits_cleanup(&crd)) {
        sync(server, &name);
    }
}

/// The finalizer's `sync` of one CRD: nothing unless it is deleted and holds the cleanup
/// finalizer; else the condition, the deletes, and the finalizer dropped once nothing is left.
pub(crate) fn sync(server: &FakeApiServer, name: &str) {
    if CLEANING.with(Cell::get) {
        return;
    }
    CLEANING.with(|c| c.set(true));
    cleanup(server, name);
    CLEANING.with(|c| c.set(false));
}

fn cleanup(server: &FakeApiServer, name: &str) {
    let Some(crd) = stored_crd(server, name) else {
        return;
    };
    if !awaits_cleanup(&crd) {
        return;
    }
    let now = server.shared.now_string();
    write_crd(server, name, |crd| {
        set_condition(
            crd,
            "Terminating",
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
            &now,
        );
    });
    let (reason, message) = if condition_is_true(&crd, "Established") {
        if !delete_instances(server, name) {
            // Some are held by their finalizers: looked at again when one goes.
            return;
        }
        ("InstanceDeletionCompleted", "removed all instances")
    } else {
        ("NeverEstablished", "resource was never established")
    };
    write_crd(server, name, |crd| {
        set_condition(crd, "Terminating", "False", reason, message, &now);
        remove_cleanup_finalizer(crd);
    });
}

/// Deletes every custom resource of the CRD (as its registry's `DeleteCollection` with default
/// options would); true when none is left.
fn delete_instances(server: &FakeApiServer, crd_name: &str) -> bool {
    let Some(info) = served_resource(server, crd_name) else {
        return true;
    };
    let key = resource_key(&info.group, &info.plural);
    let options = DeleteOptions::default();
    for ((namespace, name), _) in server.shared.store.snapshot(&key, None).items {
        if let Err(e) = delete_object(server, &info, &namespace, &name, &options) {
            if e.code != 404 {
                tracing::debug!(crd = crd_name, %name, error = %e, "CRD finalizer: delete failed");
            }
        }
    }
    server.shared.store.snapshot(&key, None).items.is_empty()
}

/// One served version of the CRD's resource (every version shares the same objects).
fn served_resource(server: &FakeApiServer, crd_name: &str) -> Option<ResourceInfo> {
    let (plural, group) = crd_name.split_once('.')?;
    server
        .shared
        .registry
        .lookup_resource(group, plural)
        .map(|info| (*info).clone())
}

/// Writes the CRD as `change` makes it (a status write of the finalizer); the CRD is removed
/// when that leaves a deleted CRD without finalizers.
fn write_crd(server: &FakeApiServer, name: &str, change: impl FnOnce(&mut Value)) {
    let Some(info) = server.shared.registry.lookup_resource(GROUP, PLURAL) else {
        return;
    };
    let written = server
        .shared
        .store
        .mutate(&resource_key(GROUP, PLURAL), "", name, |current| {
            let current = current.ok_or_else(|| ApiError::not_found(GROUP, PLURAL, name))?;
            let mut next = current.clone();
            change(&mut next);
            let finalized = next["metadata"].get("deletionTimestamp").is_some()
                && next["metadata"]["finalizers"]
                    .as_array()
                    .is_none_or(Vec::is_empty);
            Ok(if finalized {
                Mutation::Delete(next)
            } else {
                Mutation::Put(next)
            })
        });
    match written {
        Ok(outcome) => after_write(server, &info, &outcome.object, outcome.event),
        Err(e) => tracing::debug!(crd = name, error = %e, "CRD finalizer: write failed"),
    }
}
