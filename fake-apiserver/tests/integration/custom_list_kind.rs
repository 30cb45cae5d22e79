//! A CRD's `names.listKind` is the kind of its list answers (the real server builds them from
//! `status.acceptedNames.listKind`), at every served version, for lists, collection deletes and
//! metadata-only lists alike; without one it is `<kind>List`.

use crate::http_support;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use http_support::json as call;
use rstest::rstest;
use serde_json::{json, Value};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn crd(list_kind: Option<&str>) -> Value {
    let mut names = json!({"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"});
    if let Some(list_kind) = list_kind {
        names["listKind"] = json!(list_kind);
    }
    let schema = json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.ex.com"},
        "spec": {"group": "ex.com", "scope": "Namespaced", "names": names,
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": schema},
                {"name": "v1beta1", "served": true, "storage": false, "schema": schema}
            ]}
    })
}

/// A GET asking for a metadata-only answer.
async fn metadata_only(server: &FakeApiServer, uri: &str) -> Value {
    let accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    let (status, answer) = http_support::get_accepting(server, uri, accept).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

#[rstest]
#[case::named(Some("GizmoCollection"), "GizmoCollection")]
#[case::defaulted(None, "GizmoList")]
#[tokio::test]
async fn list_answers_carry_the_crds_list_kind(
    #[case] list_kind: Option<&str>,
    #[case] expected: &str,
) {
    let server = FakeApiServer::new();
    let (status, created) = call(&server, Method::POST, CRDS, &crd(list_kind)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["spec"]["names"]["listKind"], expected);
    let (_, crd) = call(
        &server,
        Method::GET,
        &format!("{CRDS}/gizmos.ex.com"),
        &Value::Null,
    )
    .await;
    assert_eq!(crd["status"]["acceptedNames"]["listKind"], expected);
    for name in ["a", "b"] {
        let gizmo = json!({"apiVersion": "ex.com/v1", "kind": "Gizmo", "metadata": {"name": name}});
        let uri = "/apis/ex.com/v1/namespaces/default/gizmos";
        let (status, answer) = call(&server, Method::POST, uri, &gizmo).await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
    }
    for version in ["v1", "v1beta1"] {
        let uri = format!("/apis/ex.com/{version}/namespaces/default/gizmos");
        let (status, list) = call(&server, Method::GET, &uri, &Value::Null).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        assert_eq!(list["kind"], expected);
        assert_eq!(list["apiVersion"], format!("ex.com/{version}"));
        assert_eq!(list["items"][1]["kind"], "Gizmo");
        assert_eq!(list["items"][1]["apiVersion"], format!("ex.com/{version}"));
        let all = format!("/apis/ex.com/{version}/gizmos");
        let (status, list) = call(&server, Method::GET, &all, &Value::Null).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        assert_eq!(list["kind"], expected);
        let partial = metadata_only(&server, &uri).await;
        assert_eq!(partial["kind"], "PartialObjectMetadataList", "{partial}");
        assert_eq!(partial["items"][0]["kind"], "PartialObjectMetadata");
        assert_eq!(partial["items"].as_array().map(Vec::len), Some(2));
    }
    // The OpenAPI document names the list definition after it too (`gvkToModelName`).
    let (status, doc) = call(
        &server,
        Method::GET,
        "/openapi/v3/apis/ex.com/v1",
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let list = &doc["components"]["schemas"][format!("com.ex.v1.{expected}")];
    assert_eq!(
        list["x-kubernetes-group-version-kind"][0]["kind"], expected,
        "{}",
        doc["components"]["schemas"]
    );
    let uri = "/apis/ex.com/v1/namespaces/default/gizmos";
    let (status, deleted) = call(&server, Method::DELETE, uri, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{deleted}");
    assert_eq!(deleted["kind"], expected);
    assert_eq!(deleted["items"].as_array().map(Vec::len), Some(2));
}
