//! The `Priority` admission plugin (`plugin/pkg/admission/priority`), on by default in every
//! real server: a new pod's `priority` and `preemptionPolicy` come from its PriorityClass (the
//! global default class when it names none, priority 0 and `PreemptLowerPriority` when there is
//! no default), a pod naming a class that does not exist is refused, and a pod that sets a
//! priority or policy other than its class's is refused; an update that leaves them out keeps
//! the stored ones. For PriorityClasses it keeps a single global default.
//!
//! The server also creates the two system classes at start, as the real server's
//! `scheduling/bootstrap-system-priority-classes` hook does ([`system_priority_classes`]).

use serde_json::{json, Value};

use crate::auth::attributes::forbidden_error;
use crate::context::Shared;
use crate::error::ApiError;
use crate::resource::ResourceInfo;

use super::admitted_name;

/// Where PriorityClasses are stored.
const PRIORITY_CLASSES: &str = "scheduling.k8s.io/priorityclasses";

/// The classes a real server creates at start (`scheduling/v1` `systemPriorityClasses`).
pub(crate) fn system_priority_classes() -> Vec<Value> {
    crate::rules::scheduling::SYSTEM_PRIORITY_CLASSES
        .iter()
        .map(|&(name, value, description)| {
            json!({
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
                "description": description,
                // (What `SetDefaults_PriorityClass` gives the real bootstrap's create.)
                "preemptionPolicy": "PreemptLowerPriority",
            })
        })
        .collect()
}

/// Admits the creation of `object`: a pod gets its class's priority and preemption policy; a
/// PriorityClass may not be a second global default.
pub(crate) fn admit_create(
    shared: &Shared,
    info: &ResourceInfo,
    object: &mut Value,
) -> Result<(), ApiError> {
    if info.custom {
        return Ok(());
    }
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod") => admit_pod(shared, object),
        ("scheduling.k8s.io", "PriorityClass") => {
            refuse_second_default(default_class_name(shared).as_deref(), object, true)
        }
        _ => Ok(()),
    }
}

/// The update half of the plugin for PriorityClasses: the global default is read before the
/// store is locked ([`prepare_update`]) and the written object, whether it came from a PUT, a
/// patch or an apply, is checked under the lock ([`UpdateCheck::check`]). (The pod half is
/// [`restore_on_update`], which needs no store.)
pub(crate) struct UpdateCheck {
    /// The name of the global default class when the write began.
    default: Option<String>,
}

/// Prepares the update check for a write to `info` through its main endpoint; `None` for every
/// kind but PriorityClass.
pub(crate) fn prepare_update(shared: &Shared, info: &ResourceInfo) -> Option<UpdateCheck> {
    if info.custom || info.group != "scheduling.k8s.io" || info.kind != "PriorityClass" {
        return None;
    }
    Some(UpdateCheck {
        default: default_class_name(shared),
    })
}

impl UpdateCheck {
    /// Refuses making `class` the global default while another class is.
    pub(crate) fn check(&self, class: &Value) -> Result<(), ApiError> {
        refuse_second_default(self.default.as_deref(), class, false)
    }
}

/// On a pod update through the main endpoint, a request without `priority` or
/// `preemptionPolicy` keeps the stored ones (validation refuses any other change to them).
pub fn restore_on_update(old: &Value, new: &mut Value) {
    let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for key in ["priority", "preemptionPolicy"] {
        if spec.get(key).is_none_or(Value::is_null) {
            if let Some(stored) = old["spec"].get(key).filter(|v| !v.is_null()) {
                spec.insert(key.into(), stored.clone());
            }
        }
    }
}

/// `admitPod` on create (`establishPriority`).
fn admit_pod(shared: &Shared, pod: &mut Value) -> Result<(), ApiError> {
    if !pod["spec"].is_object() {
        return Ok(());
    }
    let forbidden =
        |pod: &Value, why: String| forbidden_error("", "pods", admitted_name(pod), &why);
    let requested = pod["spec"]["priorityClassName"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let (class_name, priority, policy) = if requested.is_empty() {
        match default_class(shared) {
            Some(class) => (
                class["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                class["value"].as_i64().unwrap_or(0),
                class.get("preemptionPolicy").cloned(),
            ),
            None => (String::new(), 0, Some(json!("PreemptLowerPriority"))),
        }
    } else {
        let Some(class) = shared.store.get_value(PRIORITY_CLASSES, "", &requested) else {
            return Err(forbidden(
                pod,
                format!("no PriorityClass with name {requested} was found"),
            ));
        };
        (
            requested,
            class["value"].as_i64().unwrap_or(0),
            class.get("preemptionPolicy").cloned(),
        )
    };
    let spec = &pod["spec"];
    if let Some(set) = spec.get("priority").and_then(Value::as_i64) {
        if set != priority {
            return Err(forbidden(
                pod,
                format!("the integer value of priority ({set}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"),
            ));
        }
    }
    let policy = policy.filter(|p| p.is_string());
    if let (Some(set), Some(computed)) = (
        spec.get("preemptionPolicy").and_then(Value::as_str),
        policy.as_ref().and_then(Value::as_str),
    ) {
        if set != computed {
            return Err(forbidden(
                pod,
                format!("the string value of PreemptionPolicy ({set}) must not be provided in pod spec; priority admission controller computed {computed} from the given PriorityClass name"),
            ));
        }
    }
    let spec = &mut pod["spec"];
    if !class_name.is_empty() {
        spec["priorityClassName"] = json!(class_name);
    }
    spec["priority"] = json!(priority);
    if let Some(policy) = policy {
        spec["preemptionPolicy"] = policy;
    }
    Ok(())
}

/// The global default class: of several (a race can make more than one), the lowest value.
/// Runs on every pod create, so only the stored classes whose bytes mention a true
/// `globalDefault` (the store writes compact JSON) are decoded.
fn default_class(shared: &Shared) -> Option<Value> {
    static MARK: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"globalDefault\":true"));
    shared
        .store
        .matching(PRIORITY_CLASSES, |bytes| MARK.find(bytes).is_some())
        .iter()
        .filter_map(|bytes| crate::store::json::from_slice(bytes).ok())
        .filter(|c| c["globalDefault"].as_bool() == Some(true))
        .min_by_key(|c| c["value"].as_i64().unwrap_or(0))
}

/// The name of the global default class, if there is one.
fn default_class_name(shared: &Shared) -> Option<String> {
    default_class(shared).and_then(|c| c["metadata"]["name"].as_str().map(str::to_string))
}

/// `validatePriorityClass`: only one class may be the global default. `existing` is the
/// current default's name; a create may never add a second one, an update only keep its own.
fn refuse_second_default(
    existing: Option<&str>,
    class: &Value,
    create: bool,
) -> Result<(), ApiError> {
    if class["globalDefault"].as_bool() != Some(true) {
        return Ok(());
    }
    let Some(existing) = existing else {
        return Ok(());
    };
    let name = admitted_name(class);
    if create || existing != name {
        return Err(forbidden_error(
            "scheduling.k8s.io",
            "priorityclasses",
            name,
            &format!(
                "PriorityClass {existing} is already marked as default. Only one default can exist"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_without_priority_keeps_the_stored_one() {
        let old = json!({"spec": {"priority": 1000, "preemptionPolicy": "Never"}});
        let mut new = json!({"spec": {"containers": []}});
        restore_on_update(&old, &mut new);
        assert_eq!(new["spec"]["priority"], 1000);
        assert_eq!(new["spec"]["preemptionPolicy"], "Never");
        let mut changed = json!({"spec": {"priority": 5}});
        restore_on_update(&old, &mut changed);
        assert_eq!(
            changed["spec"]["priority"], 5,
            "validation refuses it later"
        );
    }
}
