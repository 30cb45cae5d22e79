//! How the controllers read and write: an always-current view of the store (their informers
//! never lag), and writes through the server's own create, update and delete paths in the name
//! of [`super::MANAGER`].

use std::sync::Arc;

use serde_json::{json, Value};

use crate::context::FakeApiServer;
use crate::error::ApiError;
use crate::http::handlers::Trust;
use crate::registry::semantics::{DeleteOptions, UpdateTarget};
use crate::resource::ResourceInfo;
use crate::store::resource_key;

/// Which object a work item is about: its resource, namespace, name and uid (a uid that no
/// longer matches the stored object means the item is gone).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectRef {
    /// API group of the resource (empty for core).
    pub group: String,
    /// Resource plural.
    pub plural: String,
    /// Namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Uid.
    pub uid: String,
}

impl ObjectRef {
    /// The reference to a stored object of resource `info`.
    pub fn of(info: &ResourceInfo, object: &Value) -> Self {
        let meta = &object["metadata"];
        let text = |k: &str| meta[k].as_str().unwrap_or_default().to_string();
        Self {
            group: info.group.clone(),
            plural: info.plural.clone(),
            namespace: text("namespace"),
            name: text("name"),
            uid: text("uid"),
        }
    }
}

/// The served resource of `group`/`plural`.
pub(crate) fn resource(
    server: &FakeApiServer,
    group: &str,
    plural: &str,
) -> Option<Arc<ResourceInfo>> {
    server.shared.registry.lookup_resource(group, plural)
}

/// The stored object a reference names, if it is still the same object (same uid).
pub(crate) fn live(server: &FakeApiServer, item: &ObjectRef) -> Option<(Arc<ResourceInfo>, Value)> {
    let info = resource(server, &item.group, &item.plural)?;
    let object = get(server, &info, &item.namespace, &item.name)?;
    (uid_of(&object) == item.uid).then_some((info, object))
}

/// A stored object.
pub(crate) fn get(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
) -> Option<Value> {
    server
        .shared
        .store
        .get_value(&resource_key(&info.group, &info.plural), namespace, name)
}

/// Every stored object of a resource in a namespace (`None`: all namespaces), in key order.
pub(crate) fn list(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: Option<&str>,
) -> Vec<Value> {
    server
        .shared
        .store
        .snapshot(&resource_key(&info.group, &info.plural), namespace)
        .items
        .iter()
        .filter_map(|(_, bytes)| crate::store::json::from_slice(bytes).ok())
        .collect()
}

/// `metadata.uid`.
pub(crate) fn uid_of(object: &Value) -> &str {
    object["metadata"]["uid"].as_str().unwrap_or_default()
}

/// Whether the object has a deletion timestamp.
pub(crate) fn is_deleting(object: &Value) -> bool {
    object["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// Whether the object carries `finalizer`.
pub(crate) fn has_finalizer(object: &Value, finalizer: &str) -> bool {
    object["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|x| x.as_str() == Some(finalizer)))
}

/// Deletes an object as a client's DELETE would, with a propagation policy.
pub(crate) fn delete(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    uid: Option<&str>,
    policy: &str,
) -> Result<(), ApiError> {
    let opts = DeleteOptions {
        propagation_policy: Some(policy.to_string()),
        precondition_uid: uid.map(str::to_string),
        ..Default::default()
    };
    crate::http::handlers::delete_object(server, info, namespace, name, &opts).map(|_| ())
}

/// Updates an object as a client's read-modify-write would: `edit` changes a copy of what is
/// stored (with its resourceVersion, so a concurrent write is a conflict) and says whether it
/// changed anything.
pub(crate) fn update(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    target: UpdateTarget,
    edit: impl FnOnce(&mut Value) -> bool,
) -> Result<(), ApiError> {
    crate::http::handlers::update_object(
        server,
        info,
        namespace,
        name,
        target,
        super::MANAGER,
        edit,
    )
}

/// Adds or removes one finalizer with an update of the stored object, if it is still the object
/// with `uid` (one gone meanwhile is no error; a conflict is, as for a client's update).
pub(crate) fn set_finalizer(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    uid: &str,
    finalizer: &str,
    present: bool,
) -> Result<(), ApiError> {
    let result = update(
        server,
        info,
        namespace,
        name,
        UpdateTarget::Main,
        |object| {
            if uid_of(object) != uid {
                return false;
            }
            let meta = &mut object["metadata"];
            if present && !meta["finalizers"].is_array() {
                meta["finalizers"] = Value::Array(Vec::new());
            }
            let Some(list) = meta["finalizers"].as_array_mut() else {
                return false;
            };
            let has = list.iter().any(|f| f == finalizer);
            match (present, has) {
                (true, false) => list.push(Value::String(finalizer.to_string())),
                (false, true) => list.retain(|f| f.as_str() != Some(finalizer)),
                _ => return false,
            }
            true
        },
    );
    match result {
        Err(e) if e.code == 404 => Ok(()),
        other => other,
    }
}

/// Creates an object in a namespace; one that exists already is not an error. `trusted` is
/// [`Trust::Own`] for an object built from a fixed template (the `default` ServiceAccount, the
/// root CA ConfigMap), which skips the typed decode.
pub(crate) fn create(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: &str,
    object: Value,
    trusted: Trust,
) -> Result<(), ApiError> {
    let options = crate::http::handlers::CreateOptions {
        manager: super::MANAGER,
        dry_run: false,
        validation: crate::http::typed::FieldValidation::Ignore,
        applied: false,
        user: None,
        trusted,
        in_tree_admission: false,
    };
    match crate::http::handlers::create_object(server, info, Some(namespace), object, &options) {
        Ok(_) => Ok(()),
        Err(e) if e.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Records a core/v1 Event about `involved` (of resource `info`), as client-go's event recorder
/// does: named after the object and the time, in the object's namespace (`default` for a
/// cluster-scoped one).
pub(crate) fn record_event(
    server: &FakeApiServer,
    component: &str,
    info: &ResourceInfo,
    involved: &Value,
    event_type: &str,
    reason: &str,
    message: &str,
) -> Result<(), ApiError> {
    let Some(events) = resource(server, "", "events") else {
        return Ok(());
    };
    let meta = &involved["metadata"];
    let name = meta["name"].as_str().unwrap_or_default();
    let namespace = meta["namespace"]
        .as_str()
        .filter(|n| !n.is_empty())
        .unwrap_or("default");
    let now = server.shared.now();
    let stamp = crate::registry::semantics::format_time(now);
    let mut involved_object = json!({
        "kind": info.kind,
        "name": name,
        "uid": meta["uid"],
        "apiVersion": info.api_version(),
        "resourceVersion": meta["resourceVersion"],
    });
    if info.namespaced {
        involved_object["namespace"] = json!(namespace);
    }
    let event = json!({
        "metadata": {"name": format!("{name}.{:x}", now.as_nanosecond().max(0))},
        "involvedObject": involved_object,
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "type": event_type,
        "eventTime": null,
        "reportingComponent": component,
        "reportingInstance": "",
    });
    create(server, &events, namespace, event, Trust::Client)
}
