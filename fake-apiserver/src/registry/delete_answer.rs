//! What a DELETE answers: the one rule for every kind, as the real server has it.
//!
//! - A delete that only marks the object (finalizers left, a bound pod's grace period, a
//!   namespace or CRD being cleaned up) answers the marked object.
//! - A delete that removes the object answers, for the registries that set
//!   `ReturnDeletedObject` (`genericregistry.Store.finalizeDelete`), the object as it was removed;
//!   for every other registry, custom resources included (the apiextensions `customresource`
//!   store does not set it), a `Status` with `status: Success` whose `details` name the object
//!   (`name`, `group`, `kind` — the resource's plural, as the real server fills it — and `uid`).
//! - The code is 200, or 202 when the object stays and the request asked for
//!   `orphanDependents: false` (`endpoints/handlers/delete.go`).
//! - A deletecollection answers the list of the objects it selected, as listed before they were
//!   deleted (`Store.DeleteCollection` returns its own list).

use axum::http::StatusCode;
use serde_json::{json, Value};

use crate::registry::semantics::DeleteOptions;
use crate::resource::ResourceInfo;

/// The built-in registries that answer an immediate delete with the deleted object
/// (`ReturnDeletedObject: true` in their `storage.go`): pods, namespaces, services, service
/// accounts, persistent volumes and claims, storage classes.
const RETURN_DELETED_OBJECT: &[(&str, &str)] = &[
    ("", "Pod"),
    ("", "Namespace"),
    ("", "Service"),
    ("", "ServiceAccount"),
    ("", "PersistentVolume"),
    ("", "PersistentVolumeClaim"),
    ("storage.k8s.io", "StorageClass"),
];

/// Whether the kind's registry answers an immediate delete with the deleted object.
pub fn returns_deleted_object(info: &ResourceInfo) -> bool {
    !info.custom
        && RETURN_DELETED_OBJECT
            .iter()
            .any(|(group, kind)| info.group == *group && info.kind == *kind)
}

/// The body of a DELETE's answer: `object` is the object's last state (typed), `gone` whether the
/// delete removed it.
pub fn body(info: &ResourceInfo, object: Value, gone: bool) -> Value {
    if !gone || returns_deleted_object(info) {
        return object;
    }
    let meta = &object["metadata"];
    let mut details = serde_json::Map::new();
    details.insert("name".into(), meta["name"].clone());
    if !info.group.is_empty() {
        details.insert("group".into(), json!(info.group));
    }
    details.insert("kind".into(), json!(info.plural));
    if let Some(uid) = meta["uid"].as_str() {
        details.insert("uid".into(), json!(uid));
    }
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": Value::Object(details),
    })
}

/// The HTTP code of a DELETE's answer.
pub fn code(gone: bool, opts: &DeleteOptions) -> StatusCode {
    if !gone && opts.orphan_dependents == Some(false) {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::builtin_resources;
    use rstest::rstest;

    fn builtin(group: &str, kind: &str) -> ResourceInfo {
        builtin_resources()
            .into_iter()
            .find(|r| r.group == group && r.kind == kind)
            .unwrap()
    }

    fn object() -> Value {
        json!({"kind": "X", "metadata": {"name": "a", "uid": "u-1"}})
    }

    #[rstest]
    #[case("", "Pod", true)]
    #[case("", "Namespace", true)]
    #[case("", "Service", true)]
    #[case("", "ServiceAccount", true)]
    #[case("", "PersistentVolume", true)]
    #[case("", "PersistentVolumeClaim", true)]
    #[case("storage.k8s.io", "StorageClass", true)]
    #[case("", "ConfigMap", false)]
    #[case("", "Secret", false)]
    #[case("", "Node", false)]
    #[case("apps", "Deployment", false)]
    #[case("batch", "Job", false)]
    #[case("policy", "PodDisruptionBudget", false)]
    #[case("coordination.k8s.io", "Lease", false)]
    fn immediate_delete_answers_by_registry(
        #[case] group: &str,
        #[case] kind: &str,
        #[case] returns_object: bool,
    ) {
        let info = builtin(group, kind);
        let answer = body(&info, object(), true);
        if returns_object {
            assert_eq!(answer, object());
        } else {
            assert_eq!(answer["kind"], "Status");
            assert_eq!(answer["status"], "Success");
            assert_eq!(answer["details"]["name"], "a");
            assert_eq!(answer["details"]["kind"], json!(info.plural));
            assert_eq!(answer["details"]["uid"], "u-1");
            assert_eq!(answer["details"].get("group").is_some(), !group.is_empty());
        }
    }

    #[test]
    fn custom_resources_answer_a_status_naming_the_object() {
        let info = ResourceInfo {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            custom: true,
            ..Default::default()
        };
        let answer = body(&info, object(), true);
        assert_eq!(
            answer["details"],
            json!({"name": "a", "group": "example.com", "kind": "widgets", "uid": "u-1"})
        );
    }

    #[test]
    fn a_marked_object_is_answered_as_is() {
        let info = builtin("", "ConfigMap");
        assert_eq!(body(&info, object(), false), object());
    }

    #[test]
    fn accepted_only_when_orphaning_is_refused_and_the_object_stays() {
        let refuse = DeleteOptions {
            orphan_dependents: Some(false),
            ..Default::default()
        };
        assert_eq!(code(false, &refuse), StatusCode::ACCEPTED);
        assert_eq!(code(true, &refuse), StatusCode::OK);
        assert_eq!(code(false, &DeleteOptions::default()), StatusCode::OK);
    }
}
