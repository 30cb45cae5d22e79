//! The garbage collector (`pkg/controller/garbagecollector`): deletes objects whose owners are
//! gone, orphans the dependents of an owner deleted with the `orphan` finalizer, and holds an
//! owner deleted in the foreground (`foregroundDeletion`) until its blocking dependents are gone.
//!
//! An owner reference is resolved as the real collector does (`isDangling`): its
//! `apiVersion`/`kind` name a served resource; a namespaced owner is looked up in the
//! dependent's own namespace, a cluster-scoped one cluster-wide; the object found must have the
//! reference's uid, else the owner counts as absent. A cluster-scoped dependent of a namespaced
//! kind is never collected. A dependent that names a namespaced owner living in another
//! namespace (or, for a cluster-scoped dependent, in any namespace) gets the
//! `OwnerRefInvalidNamespace` warning event, as from the real graph builder.
//!
//! The work items come from [`super::ControllerManager`]; the dependents of an owner are found in
//! the store's owner index ([`crate::store::Store::owned_by`]), as the real collector finds them
//! in its graph.

use std::sync::Arc;

use serde_json::Value;

use super::objects::{self, has_finalizer, is_deleting, uid_of, ObjectRef};
use super::ControllerManager;
use crate::context::FakeApiServer;
use crate::error::ApiError;
use crate::registry::gc_policy::{FOREGROUND, ORPHAN};
use crate::registry::semantics::UpdateTarget;
use crate::resource::ResourceInfo;

/// The component name on the collector's events.
pub const COMPONENT: &str = "garbage-collector-controller";

/// Resources the collector does not watch (`DefaultIgnoredResources`): events; and those
/// that store nothing (reviews, component statuses).
pub fn ignored(info: &ResourceInfo) -> bool {
    info.plural == "events" && (info.group.is_empty() || info.group == "events.k8s.io")
        || info.review
        || info.computed
}

/// One owner reference of a dependent.
#[derive(Debug, Clone)]
struct OwnerRef {
    api_version: String,
    kind: String,
    name: String,
    uid: String,
    block_owner_deletion: bool,
}

fn owner_refs(object: &Value) -> Vec<OwnerRef> {
    object["metadata"]["ownerReferences"]
        .as_array()
        .map(|refs| {
            refs.iter()
                .map(|r| {
                    let text = |k: &str| r[k].as_str().unwrap_or_default().to_string();
                    OwnerRef {
                        api_version: text("apiVersion"),
                        kind: text("kind"),
                        name: text("name"),
                        uid: text("uid"),
                        block_owner_deletion: r["blockOwnerDeletion"].as_bool() == Some(true),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// How an owner reference stands (`classifyReferences`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// The owner exists and is not waiting for its dependents.
    Solid,
    /// The owner does not exist (or another object has its name).
    Dangling,
    /// The owner is being deleted in the foreground.
    WaitingForDependents,
}

/// Why a reference cannot be resolved; the item is left alone.
#[derive(Debug)]
enum Unresolvable {
    /// The reference's apiVersion/kind is not served (the real collector retries).
    UnknownKind,
    /// A cluster-scoped object names a namespaced owner (never resolves).
    NamespacedOwnerOfClusterScopedObject,
}

/// `isDangling` and the owner's state.
fn classify(
    manager: &ControllerManager,
    server: &FakeApiServer,
    item_info: &ResourceInfo,
    item: &Value,
    reference: &OwnerRef,
) -> Result<Standing, Unresolvable> {
    let Some(owner_info) = server
        .shared
        .registry
        .lookup_kind(&reference.api_version, &reference.kind)
    else {
        return Err(Unresolvable::UnknownKind);
    };
    let item_namespace = item["metadata"]["namespace"].as_str().unwrap_or_default();
    if item_namespace.is_empty() && owner_info.namespaced {
        // The graph builder still reports it when the owner it names exists (in some
        // namespace, which cannot be the dependent's).
        report_invalid_namespace(manager, server, item_info, item, &owner_info, reference);
        return Err(Unresolvable::NamespacedOwnerOfClusterScopedObject);
    }
    let namespace = if owner_info.namespaced {
        item_namespace
    } else {
        ""
    };
    let owner = objects::get(server, &owner_info, namespace, &reference.name)
        .filter(|o| uid_of(o) == reference.uid);
    let Some(owner) = owner else {
        if owner_info.namespaced {
            report_invalid_namespace(manager, server, item_info, item, &owner_info, reference);
        }
        return Ok(Standing::Dangling);
    };
    if is_deleting(&owner) && has_finalizer(&owner, FOREGROUND) {
        Ok(Standing::WaitingForDependents)
    } else {
        Ok(Standing::Solid)
    }
}

/// The `OwnerRefInvalidNamespace` warning: a dependent names (by uid) a namespaced owner that
/// lives in another namespace than its own (for a cluster-scoped dependent: any namespace; the
/// event then goes to `default` and says `namespace ""`, as the real graph builder's).
fn report_invalid_namespace(
    manager: &ControllerManager,
    server: &FakeApiServer,
    item_info: &ResourceInfo,
    item: &Value,
    owner_info: &ResourceInfo,
    reference: &OwnerRef,
) {
    let item_namespace = item["metadata"]["namespace"].as_str().unwrap_or_default();
    let elsewhere = objects::list(server, owner_info, None)
        .into_iter()
        .any(|o| {
            uid_of(&o) == reference.uid
                && o["metadata"]["namespace"].as_str().unwrap_or_default() != item_namespace
        });
    if !elsewhere || !manager.first_report(uid_of(item), &reference.uid) {
        return;
    }
    let message = format!(
        "ownerRef [{}/{}, namespace: {item_namespace}, name: {}, uid: {}] does not exist in namespace {:?}",
        reference.api_version, reference.kind, reference.name, reference.uid, item_namespace
    );
    if let Err(e) = objects::record_event(
        server,
        COMPONENT,
        item_info,
        item,
        "Warning",
        "OwnerRefInvalidNamespace",
        &message,
    ) {
        tracing::debug!(error = %e.message, "cannot record the collector's event");
    }
}

/// `attemptToDeleteItem`: deletes an object whose owners are all gone, removes references to
/// absent owners from one that still has a live owner, and drives an owner that waits for its
/// dependents.
pub(crate) fn attempt_to_delete(
    manager: &ControllerManager,
    server: &FakeApiServer,
    item: &ObjectRef,
) -> Result<(), ApiError> {
    let Some((info, latest)) = objects::live(server, item) else {
        return Ok(());
    };
    let deleting_dependents = is_deleting(&latest) && has_finalizer(&latest, FOREGROUND);
    if is_deleting(&latest) && !deleting_dependents {
        // Being deleted: a one-way trip; its dependents are handled once it is gone.
        return Ok(());
    }
    if deleting_dependents {
        return process_deleting_dependents(manager, server, &info, &latest);
    }
    let references = owner_refs(&latest);
    if references.is_empty() {
        return Ok(());
    }
    let mut solid = Vec::new();
    let mut dangling = Vec::new();
    let mut waiting = Vec::new();
    for reference in &references {
        match classify(manager, server, &info, &latest, reference) {
            Ok(Standing::Solid) => solid.push(reference),
            Ok(Standing::Dangling) => dangling.push(reference),
            Ok(Standing::WaitingForDependents) => waiting.push(reference),
            Err(why) => {
                tracing::debug!(?why, item = ?item, "owner reference cannot be resolved");
                return Ok(());
            }
        }
    }
    let namespace = item.namespace.as_str();
    if !solid.is_empty() {
        if dangling.is_empty() && waiting.is_empty() {
            return Ok(());
        }
        // Keep the live owners; drop references to absent owners and to owners waiting for
        // their dependents (they would wait forever).
        let drop: Vec<String> = dangling
            .iter()
            .chain(waiting.iter())
            .map(|r| r.uid.clone())
            .collect();
        return remove_owner_references(server, &info, namespace, &item.name, &item.uid, &drop);
    }
    let has_dependents = !dependents_of(server, &item.uid).is_empty();
    if !waiting.is_empty() && has_dependents {
        let dependent_deleting_dependents = dependents_of(server, &item.uid)
            .iter()
            .any(|(_, d)| is_deleting(d) && has_finalizer(d, FOREGROUND));
        if dependent_deleting_dependents {
            // A possible cycle: make this item's references non-blocking first.
            unblock_owner_references(server, &info, namespace, &item.name)?;
        }
        return objects::delete(
            server,
            &info,
            namespace,
            &item.name,
            Some(&item.uid),
            "Foreground",
        );
    }
    let policy = if has_finalizer(&latest, ORPHAN) {
        "Orphan"
    } else if has_finalizer(&latest, FOREGROUND) {
        "Foreground"
    } else {
        "Background"
    };
    tracing::debug!(
        ?item,
        policy,
        "garbage collecting an object whose owners are gone"
    );
    objects::delete(
        server,
        &info,
        namespace,
        &item.name,
        Some(&item.uid),
        policy,
    )
}

/// `processDeletingDependentsItem`: an owner in foreground deletion loses its
/// `foregroundDeletion` finalizer once no dependent blocks it; until then its blocking
/// dependents are collected.
fn process_deleting_dependents(
    manager: &ControllerManager,
    server: &FakeApiServer,
    info: &ResourceInfo,
    owner: &Value,
) -> Result<(), ApiError> {
    let uid = uid_of(owner).to_string();
    let blocking: Vec<(Arc<ResourceInfo>, Value)> = dependents_of(server, &uid)
        .into_iter()
        .filter(|(_, d)| {
            owner_refs(d)
                .iter()
                .any(|r| r.uid == uid && r.block_owner_deletion)
        })
        .collect();
    if blocking.is_empty() {
        let namespace = owner["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = owner["metadata"]["name"].as_str().unwrap_or_default();
        return remove_finalizer(server, info, namespace, name, &uid, FOREGROUND);
    }
    for (dep_info, dep) in blocking {
        if !(is_deleting(&dep) && has_finalizer(&dep, FOREGROUND)) {
            manager.queue_collect(ObjectRef::of(&dep_info, &dep));
        }
    }
    Ok(())
}

/// `attemptToOrphan`: removes the owner from its dependents' references, then its `orphan`
/// finalizer.
pub(crate) fn attempt_to_orphan(server: &FakeApiServer, owner: &ObjectRef) -> Result<(), ApiError> {
    let Some((info, latest)) = objects::live(server, owner) else {
        return Ok(());
    };
    if !(is_deleting(&latest) && has_finalizer(&latest, ORPHAN)) {
        return Ok(());
    }
    for (dep_info, dep) in dependents_of(server, &owner.uid) {
        let meta = &dep["metadata"];
        let namespace = meta["namespace"].as_str().unwrap_or_default();
        let name = meta["name"].as_str().unwrap_or_default();
        match remove_owner_references(
            server,
            &dep_info,
            namespace,
            name,
            uid_of(&dep),
            std::slice::from_ref(&owner.uid),
        ) {
            Ok(()) => {}
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    remove_finalizer(
        server,
        &info,
        &owner.namespace,
        &owner.name,
        &owner.uid,
        ORPHAN,
    )
}

/// The dependents of a deleted object are looked at again (their owner is now absent).
pub(crate) fn owner_gone(server: &FakeApiServer, uid: &str, mut queue: impl FnMut(ObjectRef)) {
    for (info, dep) in dependents_of(server, uid) {
        queue(ObjectRef::of(&info, &dep));
    }
}

/// Every stored object with an owner reference to `uid`, in resource and key order: from the
/// store's owner index (the real collector's graph), not a read of every stored object.
fn dependents_of(server: &FakeApiServer, uid: &str) -> Vec<(Arc<ResourceInfo>, Value)> {
    if uid.is_empty() {
        return Vec::new();
    }
    let owned = server.shared.store.owned_by(uid);
    if owned.is_empty() {
        return Vec::new();
    }
    // Served, watched resources in the registry's order, as a scan of them would visit them.
    let mut found: Vec<(usize, Arc<ResourceInfo>, Value)> = Vec::new();
    let infos: Vec<(String, Arc<ResourceInfo>)> = server
        .shared
        .registry
        .all()
        .into_iter()
        .filter(|info| !ignored(info))
        .map(|info| {
            (
                crate::store::resource_key(&info.group, &info.plural),
                Arc::new(info),
            )
        })
        .collect();
    for (resource, _, bytes) in owned {
        // Every served version of the resource, as the scan visited each.
        let positions: Vec<usize> = (0..infos.len())
            .filter(|&i| infos[i].0 == resource)
            .collect();
        if positions.is_empty() {
            continue;
        }
        let Ok(object) = crate::store::json::from_slice(&bytes) else {
            continue;
        };
        if owner_refs(&object).iter().any(|r| r.uid == uid) {
            for position in positions {
                found.push((position, infos[position].1.clone(), object.clone()));
            }
        }
    }
    // Stable: within one resource the store gave key order.
    found.sort_by_key(|(position, _, _)| *position);
    found
        .into_iter()
        .map(|(_, info, object)| (info, object))
        .collect()
}

/// Removes the owner references with the given uids (the collector's delete-owner-reference
/// patch, with the dependent's uid as precondition).
fn remove_owner_references(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    uid: &str,
    owner_uids: &[String],
) -> Result<(), ApiError> {
    objects::update(
        server,
        info,
        namespace,
        name,
        UpdateTarget::Main,
        |object| {
            if uid_of(object) != uid {
                return false;
            }
            let Some(refs) = object["metadata"]["ownerReferences"].as_array_mut() else {
                return false;
            };
            let before = refs.len();
            refs.retain(|r| {
                !owner_uids
                    .iter()
                    .any(|u| r["uid"].as_str() == Some(u.as_str()))
            });
            before != refs.len()
        },
    )
}

/// Sets `blockOwnerDeletion` to false on every blocking owner reference.
fn unblock_owner_references(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
) -> Result<(), ApiError> {
    objects::update(
        server,
        info,
        namespace,
        name,
        UpdateTarget::Main,
        |object| {
            let mut changed = false;
            if let Some(refs) = object["metadata"]["ownerReferences"].as_array_mut() {
                for r in refs {
                    if r["blockOwnerDeletion"].as_bool() == Some(true) {
                        r["blockOwnerDeletion"] = Value::Bool(false);
                        changed = true;
                    }
                }
            }
            changed
        },
    )
}

/// Removes one of the collector's finalizers from an object (which then goes if it was the
/// last).
fn remove_finalizer(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    uid: &str,
    finalizer: &str,
) -> Result<(), ApiError> {
    objects::set_finalizer(server, info, namespace, name, uid, finalizer, false)
}
