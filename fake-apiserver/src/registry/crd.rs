//! CustomResourceDefinition handling: the status a real server gives a CRD once its names are
//! accepted and it is established. Its validation is [`crate::rules::crd_validation`].

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
    let storage: Vec<Value> = crd["spec"]["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .filter(|v| v["storage"].as_bool() == Some(true))
                .map(|v| v["name"].clone())
                .collect()
        })
        .unwrap_or_default();
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
    let status = json!({
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": keep_time("NamesAccepted")},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": keep_time("Established")}
        ],
        "acceptedNames": accepted,
        "storedVersions": stored_versions,
    });
    crd["status"] = status;
}

/// The status a CRD is created with, before the naming and establishing controllers ran: no
/// accepted names, no conditions, the storage version recorded.
pub fn set_initial_status(crd: &mut Value) {
    let storage: Vec<Value> = crd["spec"]["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .filter(|v| v["storage"].as_bool() == Some(true))
                .map(|v| v["name"].clone())
                .collect()
        })
        .unwrap_or_default();
    crd["status"] = json!({
        "conditions": null,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": storage,
    });
}

/// What the naming and establishing controllers do after a CRD is created: a status write that
/// accepts its names and marks it Established (a separate write, seen by watchers as MODIFIED).
pub(crate) fn establish(server: &crate::FakeApiServer, name: &str) {
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
    if let Err(e) = result {
        tracing::debug!(name, error = %e, "establishing controller: status write failed");
    }
}

const APIEXTENSIONS_GROUP: &str = "apiextensions.k8s.io";

#[cfg(test)]
mod tests {
    use super::*;

    fn crd() -> Value {
        json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true}]}})
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
