//! Objects as a real server stores them, seen through the HTTP API: decoded into the internal
//! type and encoded back as Go writes the `v1` struct (`rules::go_encoding`).

use crate::http_support;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use http_support::json as call;
use serde_json::{json, Value};

fn server() -> FakeApiServer {
    FakeApiServer::builder().seed(1).build()
}

/// `podCIDR` and `podCIDRs` are one field in the internal `NodeSpec`: either one written reads
/// back as both, and an update that sends only `podCIDR` changes nothing.
#[tokio::test]
async fn a_nodes_pod_cidr_is_one_field() {
    let server = server();
    let (status, node) = call(
        &server,
        Method::POST,
        "/api/v1/nodes",
        // Registered NotReady, as a kubelet registers: the node lifecycle controller leaves the
        // admission's not-ready taint alone, so the revision below is still the latest.
        &json!({"metadata": {"name": "n"}, "spec": {"podCIDR": "10.0.0.0/24"},
            "status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{node}");
    assert_eq!(node["spec"]["podCIDRs"], json!(["10.0.0.0/24"]));

    // An older client's update: the single field only.
    let mut update = node.clone();
    update["spec"].as_object_mut().unwrap().remove("podCIDRs");
    let (status, updated) = call(&server, Method::PUT, "/api/v1/nodes/n", &update).await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(
        updated["metadata"]["resourceVersion"], node["metadata"]["resourceVersion"],
        "nothing changed"
    );

    // A different podCIDR is a change of podCIDRs, which may only be set once.
    let mut changed = updated.clone();
    changed["spec"]["podCIDR"] = json!("10.9.0.0/24");
    let (status, refusal) = call(&server, Method::PUT, "/api/v1/nodes/n", &changed).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refusal}");
    assert_eq!(refusal["details"]["causes"][0]["field"], "spec.podCIDRs");
}

/// Zero values a client leaves out come back; empty `omitempty` fields it sends do not, and a
/// re-sent object without them is no change.
#[tokio::test]
async fn zero_values_are_written_and_empty_fields_dropped() {
    let server = server();
    let (status, role) = call(
        &server,
        Method::POST,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        &json!({"metadata": {"name": "r", "labels": {}}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{role}");
    assert_eq!(role.get("rules"), Some(&Value::Null));
    assert!(role["metadata"].get("labels").is_none());

    let mut resent = role.clone();
    resent.as_object_mut().unwrap().remove("rules");
    let (status, same) = call(
        &server,
        Method::PUT,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/r",
        &resent,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{same}");
    assert_eq!(same, role, "the same object, same resourceVersion");

    let (_, set) = call(
        &server,
        Method::POST,
        "/apis/apps/v1/namespaces/default/statefulsets",
        &json!({"metadata": {"name": "s"}, "spec": {"selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
    )
    .await;
    assert_eq!(
        set["status"],
        json!({"replicas": 0, "availableReplicas": 0})
    );
    assert_eq!(set["spec"]["serviceName"], "");
}

/// `[]byte` fields are read by Go's base64 decoder: bits after the last symbol are ignored and
/// the value is written back canonical; a value it cannot read is its own error, offset
/// included.
#[rstest::rstest]
#[case::stray_bits("YR==", Ok("YQ=="))]
#[case::wrapped("aGVs\nbG8=", Ok("aGVsbG8="))]
#[case::bad_symbol(
    "ab.c",
    Err("Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 2")
)]
#[case::unpadded(
    "abc",
    Err("Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 0")
)]
#[tokio::test]
async fn secret_data_is_read_by_go_s_base64_decoder(
    #[case] sent: &str,
    #[case] expected: Result<&str, &str>,
) {
    let server = server();
    let (status, answer) = call(
        &server,
        Method::POST,
        "/api/v1/namespaces/default/secrets",
        &json!({"metadata": {"name": "s"}, "data": {"k": sent}}),
    )
    .await;
    match expected {
        Ok(stored) => {
            assert_eq!(status, StatusCode::CREATED, "{answer}");
            assert_eq!(answer["data"]["k"], stored);
        }
        Err(message) => {
            assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
            assert_eq!(answer["message"], message);
        }
    }
}

/// A `managedFields` entry is a Go `ManagedFieldsEntry`, all of whose fields are `omitempty`: a
/// writer without a manager name (no `fieldManager`, no `User-Agent`) leaves no `manager` key,
/// on a custom resource (whose entries the real server sets through that struct too) as on a
/// built-in object, on create and on update.
#[tokio::test]
async fn a_managed_fields_entry_without_a_manager_has_no_manager_key() {
    let server = server();
    let (status, answer) = call(
        &server,
        Method::POST,
        http_support::CRDS,
        &http_support::gizmo_crd(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let objects = [
        (
            "/apis/ex.com/v1/namespaces/default/gizmos",
            json!({"apiVersion": "ex.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}, "spec": {"a": 1}}),
        ),
        (
            "/api/v1/namespaces/default/configmaps",
            json!({"metadata": {"name": "g"}, "data": {"a": "1"}}),
        ),
    ];
    for (collection, object) in objects {
        let (status, created) = call(&server, Method::POST, collection, &object).await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        let mut changed = created.clone();
        if changed.get("spec").is_some() {
            changed["spec"]["b"] = json!(2);
        } else {
            changed["data"]["b"] = json!("2");
        }
        let (status, updated) =
            call(&server, Method::PUT, &format!("{collection}/g"), &changed).await;
        assert_eq!(status, StatusCode::OK, "{updated}");
        for written in [&created, &updated] {
            let entries = written["metadata"]["managedFields"].as_array().unwrap();
            assert!(!entries.is_empty(), "{written}");
            for entry in entries {
                assert!(entry.get("manager").is_none(), "{collection}: {entry}");
                assert_eq!(entry["operation"], "Update", "{entry}");
            }
        }
    }
}
