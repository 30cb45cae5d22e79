//! CustomResourceDefinition handling: the status a real server gives a CRD once its names are
//! accepted and it is established, and how a deleted CRD is marked for the cleanup of its
//! custom resources (the `customresourcecleanup.apiextensions.k8s.io` finalizer and the
//! `Terminating` condition). Its validation is [`crate::rules::crd_validation`].

use serde_json::{json, Value};

/// Sets the status a CRD has once served: accepted names, the conditions and stored versions.
pub fn set_established_status(crd: &mut Value, now: &str) {
    let names = &crd["spec"]["names"];
    let kind = names["kind"].as_str().unwrap_or_default().to_string();
    let mut accepted = names.clone();
    if accepted["singular"].as_str().is_none_or(str::is_empty) {
        accepted["singular"] = json!(kind.to_lowercase());
    }
    if accepted["listKind"].as_str().is_none_or(str::is_empty) {
        accepted["listKind"] = json!(format!("{kind}List"));
    }
    let storage: Vec<Value> = storage_versions(crd).collect();
    let mut stored_versions = crd["status"]["storedVersions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for v in storage {
        if !stored_versions.contains(&v) {
            stored_versions.push(v);
        }
    }
    let keep_time = |t: &str| -> String {
        crd["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == t))
            .and_then(|c| c["lastTransitionTime"].as_str())
            .unwrap_or(now)
            .to_string()
    };
    // The establishing controller establishes a CRD once, unless its conversion webhook's
    // `caBundle` cannot be used; an established CRD stays established.
    let (established, reason, message) =
        if !condition_is_true(crd, "Established") && conversion_ca_bundle_invalid(crd) {
            (
                "False",
                "InvalidCABundle",
                "The conversion webhook CABundle is invalid",
            )
        } else {
            (
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
            )
        };
    let established_since = match crd["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Established"))
    {
        Some(c) if c["status"] == established => keep_time("Established"),
        _ => now.to_string(),
    };
    let status = json!({
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": keep_time("NamesAccepted")},
            {"type": "Established", "status": established, "reason": reason,
             "message": message, "lastTransitionTime": established_since}
        ],
        "acceptedNames": accepted,
        "storedVersions": stored_versions,
    });
    crd["status"] = status;
}

/// Whether the CRD's conversion webhook has a `caBundle` that TLS cannot use
/// (`webhook.ValidateCABundle`; an empty one is usable).
fn conversion_ca_bundle_invalid(crd: &Value) -> bool {
    let bundle = crd
        .pointer("/spec/conversion/webhook/clientConfig/caBundle")
        .and_then(Value::as_str)
        .unwrap_or_default();
    !bundle.is_empty() && crate::rules::crd_validation::ca_bundle_error(bundle).is_some()
}

/// The CRD strategy's `PrepareForUpdate`: a new storage version joins `status.storedVersions`
/// (the status otherwise stays as stored), so that the objects it stores are known to exist.
pub fn record_storage_version(crd: &mut Value) {
    let storage: Vec<Value> = storage_versions(crd).collect();
    let Some(stored) = crd["status"]["storedVersions"].as_array_mut() else {
        if !storage.is_empty() {
            crd["status"]["storedVersions"] = Value::Array(storage);
        }
        return;
    };
    for v in storage {
        if !stored.contains(&v) {
            stored.push(v);
        }
    }
}

/// The names of the versions a CRD's spec marks `storage: true`.
fn storage_versions(crd: &Value) -> impl Iterator<Item = Value> + '_ {
    crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["storage"].as_bool() == Some(true))
        .map(|v| v["name"].clone())
}

/// Whether a resource is the CRDs themselves.
pub fn is_crd(info: &crate::resource::ResourceInfo) -> bool {
    info.group == APIEXTENSIONS_GROUP && info.kind == "CustomResourceDefinition"
}

/// The status a CRD is created with, before the naming and establishing controllers ran: no
/// accepted names, no conditions, the storage version recorded.
pub fn set_initial_status(crd: &mut Value) {
    let storage: Vec<Value> = storage_versions(crd).collect();
    crd["status"] = json!({
        "conditions": null,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": storage,
    });
}

/// What the naming and establishing controllers do after a CRD is created: a status write that
/// accepts its names and marks it Established (a separate write, seen by watchers as MODIFIED).
/// What was written, for the caller to give the effects of any CRD write.
pub(crate) fn establish(
    server: &crate::FakeApiServer,
    name: &str,
) -> Option<crate::store::Outcome> {
    let key = crate::store::resource_key(APIEXTENSIONS_GROUP, "customresourcedefinitions");
    let now = server.shared.now_string();
    let result = server.shared.store.mutate(&key, "", name, |current| {
        let Some(current) = current else {
            return Err(crate::ApiError::not_found(
                APIEXTENSIONS_GROUP,
                "customresourcedefinitions",
                name,
            ));
        };
        let mut next = current.clone();
        set_established_status(&mut next, &now);
        Ok(crate::store::Mutation::Put(next))
    });
    match result {
        Ok(outcome) => Some(outcome),
        Err(e) => {
            tracing::debug!(name, error = %e, "establishing controller: status write failed");
            None
        }
    }
}

const APIEXTENSIONS_GROUP: &str = "apiextensions.k8s.io";

/// The finalizer a deleted CRD keeps until its custom resources are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// `SetCRDCondition`: sets the condition of this type, moving its `lastTransitionTime` to `now`
/// only when it is new or its status changes.
pub fn set_condition(
    crd: &mut Value,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &str,
) {
    if !crd["status"].is_object() {
        crd["status"] = json!({});
    }
    if !crd["status"]["conditions"].is_array() {
        crd["status"]["conditions"] = json!([]);
    }
    let Some(conditions) = crd["status"]["conditions"].as_array_mut() else {
        return;
    };
    match conditions.iter_mut().find(|c| c["type"] == kind) {
        Some(existing) => {
            if existing["status"] != status || existing["lastTransitionTime"].is_null() {
                existing["lastTransitionTime"] = json!(now);
            }
            existing["status"] = json!(status);
            existing["reason"] = json!(reason);
            existing["message"] = json!(message);
        }
        None => conditions.push(json!({
            "type": kind, "status": status, "lastTransitionTime": now,
            "reason": reason, "message": message,
        })),
    }
}

/// Whether the CRD's condition of this type is `True`.
pub fn condition_is_true(crd: &Value, kind: &str) -> bool {
    crd["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == kind && c["status"] == "True")
    })
}

/// Whether the CRD waits for its custom resources to be cleaned up: deleted and still holding
/// the cleanup finalizer.
pub fn awaits_cleanup(crd: &Value) -> bool {
    crd["metadata"].get("deletionTimestamp").is_some()
        && crd["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|fs| fs.iter().any(|f| f == CLEANUP_FINALIZER))
}

/// What the CRD registry's `Delete` writes on the first delete of a CRD: the deletion timestamp
/// (no grace period), the cleanup finalizer added to any others, and `Terminating` pending.
pub fn mark_for_deletion(crd: &mut Value, now: &str) {
    if crd["metadata"].get("deletionTimestamp").is_none() {
        crd["metadata"]["deletionTimestamp"] = json!(now);
    }
    if !crd["metadata"]["finalizers"].is_array() {
        crd["metadata"]["finalizers"] = json!([]);
    }
    if let Some(finalizers) = crd["metadata"]["finalizers"].as_array_mut() {
        if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
            finalizers.push(json!(CLEANUP_FINALIZER));
        }
    }
    set_condition(
        crd,
        "Terminating",
        "True",
        "InstanceDeletionPending",
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        now,
    );
}

/// Removes the cleanup finalizer (the CRD finalizer's last step).
pub fn remove_cleanup_finalizer(crd: &mut Value) {
    if let Some(finalizers) = crd["metadata"]["finalizers"].as_array_mut() {
        finalizers.retain(|f| f != CLEANUP_FINALIZER);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd() -> Value {
        json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true}]}})
    }

    #[test]
    fn a_deleted_crd_is_marked_once_and_keeps_other_finalizers() {
        let mut c = crd();
        c["metadata"]["finalizers"] = json!(["example.com/keep"]);
        set_established_status(&mut c, "2024-01-01T00:00:00Z");
        mark_for_deletion(&mut c, "2024-01-02T00:00:00Z");
        assert_eq!(c["metadata"]["deletionTimestamp"], "2024-01-02T00:00:00Z");
        assert!(c["metadata"].get("deletionGracePeriodSeconds").is_none());
        assert_eq!(
            c["metadata"]["finalizers"],
            json!(["example.com/keep", CLEANUP_FINALIZER])
        );
        assert!(awaits_cleanup(&c));
        assert!(condition_is_true(&c, "Terminating"));
        assert!(condition_is_true(&c, "Established"));
        let terminating = &c["status"]["conditions"][2];
        assert_eq!(terminating["reason"], "InstanceDeletionPending");
        // Marking again changes nothing.
        let before = c.clone();
        mark_for_deletion(&mut c, "2024-01-03T00:00:00Z");
        assert_eq!(c, before);
        remove_cleanup_finalizer(&mut c);
        assert!(!awaits_cleanup(&c));
    }

    #[test]
    fn a_condition_moves_its_transition_time_only_when_its_status_changes() {
        let mut c = crd();
        set_condition(&mut c, "Terminating", "True", "A", "a", "t1");
        set_condition(&mut c, "Terminating", "True", "B", "b", "t2");
        assert_eq!(c["status"]["conditions"][0]["lastTransitionTime"], "t1");
        assert_eq!(c["status"]["conditions"][0]["reason"], "B");
        set_condition(&mut c, "Terminating", "False", "C", "c", "t3");
        assert_eq!(c["status"]["conditions"][0]["lastTransitionTime"], "t3");
        assert!(!condition_is_true(&c, "Terminating"));
    }

    /// The establishing controller leaves a CRD whose conversion `caBundle` cannot be used
    /// unestablished (`InvalidCABundle`), establishes it once the bundle is fixed, and never
    /// takes an established CRD back.
    #[test]
    fn an_invalid_conversion_ca_bundle_keeps_a_crd_from_being_established() {
        use base64::Engine;
        let bundle = |pem: &str| base64::engine::general_purpose::STANDARD.encode(pem);
        let mut c = crd();
        c["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {"clientConfig": {
            "url": "https://hooks.example.com", "caBundle": bundle("junk")}}});
        set_established_status(&mut c, "t1");
        let established = &c["status"]["conditions"][1];
        assert_eq!(
            (
                &established["status"],
                &established["reason"],
                &established["message"]
            ),
            (
                &json!("False"),
                &json!("InvalidCABundle"),
                &json!("The conversion webhook CABundle is invalid")
            )
        );
        c["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] =
            json!(bundle(crate::controllers::service_accounts::ROOT_CA_PEM));
        set_established_status(&mut c, "t2");
        assert!(condition_is_true(&c, "Established"));
        assert_eq!(c["status"]["conditions"][1]["lastTransitionTime"], "t2");
        c["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = json!(bundle("junk"));
        set_established_status(&mut c, "t3");
        assert!(condition_is_true(&c, "Established"));
        assert_eq!(c["status"]["conditions"][1]["lastTransitionTime"], "t2");
    }

    #[test]
    fn a_crd_is_established() {
        let mut c = crd();
        set_established_status(&mut c, "2024-01-01T00:00:00Z");
        assert_eq!(c["status"]["acceptedNames"]["listKind"], "WidgetList");
        assert_eq!(c["status"]["storedVersions"], json!(["v1"]));
        assert_eq!(c["status"]["conditions"][1]["type"], "Established");
    }
}
